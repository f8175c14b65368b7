//! The desktop app: a thin Bevy + egui layer over [`crate::sim`].
//!
//! - [`args`]: the app's flags ([`AppArgs`]); [`run`] checks them and opens the window.
//! - [`sim`]: the simulation resource and the FixedUpdate phase systems.
//! - [`budget`]: the wall time the fixed steps may take per rendered frame, and how fast
//!   simulated time runs against wall time.
//! - [`render`]: the cloth mesh (synced after the fixed loop), material, ball, ground.
//! - [`input`]: orbit camera, grab, pin, shortcuts.
//! - [`ui`]: the egui panel, the frame-time overlay and recording to files.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy::window::WindowResolution;
use bevy_egui::EguiPlugin;

use crate::config;
use crate::sim::{SceneSpec, SimParams};

pub mod args;
pub mod budget;
pub mod input;
pub mod render;
pub mod sim;
pub mod ui;

pub use args::AppArgs;
pub use budget::FrameBudget;
pub use sim::{SimPlugin, SimSet, SimState};

/// The controls (README table and the "?" panel).
pub const CONTROLS: &[(&str, &str)] = &[
    ("left-drag", "grab the cloth and drag it"),
    ("ctrl + click", "pin / unpin a particle"),
    ("right-drag", "rotate the camera"),
    ("middle-drag, shift + right-drag", "pan"),
    ("wheel", "zoom"),
    ("P", "pause / run"),
    ("Enter or N", "single step"),
    ("R", "reset the scene"),
    ("space", "throw the ball from the camera"),
    ("H", "strain heat-map"),
    ("W", "constraints wireframe"),
];

/// Command-line driven behaviour: screenshot, exit timer, summary.
#[derive(Resource)]
struct Launch {
    screenshot: Option<PathBuf>,
    frames: u32,
    frame: u32,
    shot_requested: bool,
    exit_after: Option<f64>,
    started: Instant,
    summary: bool,
    printed: bool,
}

/// Open the app.
pub fn run(args: AppArgs) -> ExitCode {
    if args.mesh.is_none() && !args.scene.is_mesh() && (args.grid.width < 2 || args.grid.height < 2)
    {
        eprintln!(
            "error: the app needs a grid of at least 2×2 particles (a single row or column has \
             no surface to draw or grab); `impulse-cloth run` simulates it headless"
        );
        return ExitCode::from(2);
    }
    if let Some(p) = &args.screenshot
        && let Err(e) = check_screenshot_path(p)
    {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if let Some(t) = args.tolerance
        && let Err(e) = crate::cli::check_flag("--tolerance", &crate::sim::params::TOLERANCE, t)
    {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let (mut scene, params) = launch_setup(&args);
    if let Some(path) = &args.mesh {
        match crate::sim::mesh::obj::read(path) {
            Ok(mesh) => scene.set_mesh(Some(crate::sim::scene::MeshSource {
                name: path.display().to_string(),
                mesh: std::sync::Arc::new(mesh),
            })),
            Err(e) => {
                eprintln!("error: --mesh {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    let state = match SimState::new(scene, params, args.solver()) {
        Ok(mut s) => {
            s.solver_chosen = args.solver.is_some();
            config::set_frame_steps(&mut s.world, s.kind, config::FRAME, None);
            s
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(p) = &args.screenshot {
        // The app exits once the screenshot file exists, so an old one must go first.
        if p.exists()
            && let Err(e) = std::fs::remove_file(p)
        {
            eprintln!("error: cannot replace {}: {e}", p.display());
            return ExitCode::from(2);
        }
    }
    let dt = state.world.params.dt;
    let mut recorder = ui::Recorder::default();
    if let Some(p) = &args.record {
        recorder.start(p.clone(), 0);
        if !recorder.is_recording() {
            eprintln!("error: {}", recorder.status().unwrap_or("cannot record"));
            return ExitCode::from(2);
        }
    }
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "impulse-cloth".into(),
            resolution: WindowResolution::new(1280, 800),
            ..default()
        }),
        ..default()
    }))
    .add_plugins(EguiPlugin::default())
    .insert_resource(Time::<Fixed>::from_seconds(dt))
    .insert_resource(state)
    .insert_resource(recorder)
    .insert_resource(Launch {
        screenshot: args.screenshot.clone(),
        frames: args.frames.max(1),
        frame: 0,
        shot_requested: false,
        exit_after: args.exit_after,
        started: Instant::now(),
        summary: args.summary,
        printed: false,
    })
    .add_plugins((
        SimPlugin,
        render::RenderPlugin,
        input::InputPlugin,
        ui::UiPlugin,
    ))
    .add_systems(Update, (ui::recording::record_rows, launch_control))
    .add_systems(Last, on_exit);
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(_) => ExitCode::FAILURE,
    }
}

/// The scene and parameters the app opens with: the shared default ([`crate::config`]) for
/// what the flags leave out — the same as `impulse-cloth run` with the same scene, grid,
/// solver and tolerance (unit-tested below). The step is a whole frame until the cloth is
/// built and [`config::set_frame_steps`] splits it into the solver's steps on it.
pub fn launch_setup(args: &AppArgs) -> (SceneSpec, SimParams) {
    let params = SimParams {
        dt: config::FRAME,
        tolerance: args.tolerance.unwrap_or(config::TOLERANCE),
        max_iterations: config::iteration_cap(args.solver()),
        self_collision: args.self_collision.unwrap_or(config::SELF_COLLISION),
        tear_strength: args.tear_strength,
        ..SimParams::default()
    };
    let mut scene = SceneSpec::new(args.scene, args.grid.width, args.grid.height);
    scene.slack = config::slack(args.scene);
    scene.constraints = args.constraints;
    (scene, params)
}

/// A screenshot goes to a `.png` file in an existing, writable directory — checked before
/// the app opens (and before an old file of that name is removed), because Bevy reports a
/// failed save only in its log.
fn check_screenshot_path(p: &std::path::Path) -> Result<(), String> {
    let png = p
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !png {
        return Err(format!(
            "screenshot {}: the file name must end in .png",
            p.display()
        ));
    }
    crate::output::check_writable(p)
}

fn launch_control(
    mut commands: Commands,
    mut launch: ResMut<Launch>,
    mut exit: MessageWriter<AppExit>,
) {
    launch.frame += 1;
    if let Some(path) = launch.screenshot.clone() {
        if !launch.shot_requested && launch.frame >= launch.frames {
            commands
                .spawn(Screenshot::primary_window())
                .observe(save_to_disk(path.clone()));
            launch.shot_requested = true;
        } else if launch.shot_requested && path.exists() {
            exit.write(AppExit::Success);
        } else if launch.shot_requested && launch.frame > launch.frames + 600 {
            // Bevy only logs a failed save; the caller asked for a file and gets none.
            eprintln!(
                "error: the screenshot {} was not written within 600 frames",
                path.display()
            );
            exit.write(AppExit::error());
        }
    }
    if let Some(secs) = launch.exit_after
        && launch.started.elapsed().as_secs_f64() >= secs
    {
        exit.write(AppExit::Success);
    }
}

fn on_exit(
    mut exits: MessageReader<AppExit>,
    mut launch: ResMut<Launch>,
    state: Res<SimState>,
    mut recorder: ResMut<ui::Recorder>,
) {
    if exits.read().next().is_none() || launch.printed {
        return;
    }
    launch.printed = true;
    recorder.stop();
    if let Some(s) = recorder.status() {
        eprintln!("{s}");
    }
    if launch.summary {
        let last = state.last();
        let summary = serde_json::json!({
            "frames": launch.frame,
            "steps": state.total_steps,
            "solver": state.kind.name(),
            "grid": state.world.cloth.topology.grid.map(|g| [g.width, g.height]),
            "particles": state.world.cloth.len(),
            "cut_edges": state.cut_edges,
            "torn_edges": state.world.torn_edges(),
            "grabbed": state.ever_grabbed,
            "max_displacement": state.max_displacement,
            "grab_travel": state.grab_travel,
            "max_strain": last.map(|s| s.max_strain),
            "worst_strain": state.worst_strain,
            "tolerance": state.world.params.tolerance,
            "steps_over_tolerance": state.steps_over_tolerance,
            "error": state.error,
        });
        println!("{summary}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::run::{RunArgs, build_world};
    use crate::sim::{ScenePreset, SolverKind};

    /// The app at launch and `run` with the same scene, grid and solver (and otherwise
    /// defaults) build the same world: same parameters, same particles.
    #[test]
    fn the_app_launches_what_run_simulates() {
        let app = |flags: &[&str]| {
            use clap::Parser;
            #[derive(Parser)]
            struct A {
                #[command(flatten)]
                args: AppArgs,
            }
            let argv = std::iter::once("impulse-cloth").chain(flags.iter().copied());
            let args = A::parse_from(argv).args;
            let (scene, params) = launch_setup(&args);
            let mut w = scene.build(params).unwrap();
            config::set_frame_steps(&mut w, args.solver(), config::FRAME, None);
            w
        };
        let run = |flags: &[&str]| build_world(&RunArgs::from_flags(flags).unwrap()).unwrap();
        let same = |a: &crate::sim::World, b: &crate::sim::World, what: &str| {
            assert_eq!(a.params, b.params, "{what}");
            assert_eq!(a.cloth.particles.x, b.cloth.particles.x, "{what}");
            assert_eq!(
                a.cloth.particles.inv_mass(),
                b.cloth.particles.inv_mass(),
                "{what}"
            );
        };
        same(&app(&[]), &run(&[]), "defaults");
        for scene in ScenePreset::ALL {
            for solver in SolverKind::ALL {
                let flags = [
                    "--scene",
                    scene.name(),
                    "--grid",
                    "9x7",
                    "--solver",
                    solver.name(),
                ];
                same(&app(&flags), &run(&flags), &format!("{scene} {solver}"));
            }
        }
    }
}
