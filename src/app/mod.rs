//! The desktop app: a thin Bevy + egui layer over [`crate::sim`].
//!
//! - [`args`]: the app's flags ([`AppArgs`]); [`run`] checks them and opens the window.
//! - [`sim`]: the simulation resource and the FixedUpdate phase systems.
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

use crate::sim::{SceneSpec, SimParams};

pub mod args;
pub mod input;
pub mod render;
pub mod sim;
pub mod ui;

pub use args::AppArgs;
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

/// Substeps per 1/60 s frame in the app: at h = 1/600 s the gravity strain a step must
/// remove is 100× smaller than at 1/60 s, and 10 substeps of 20 sweeps stretch the 30×30
/// cloth far less than one step of 200 sweeps at the same cost (README).
pub const DEFAULT_SUBSTEPS: u32 = 10;

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
    if args.grid.width < 2 || args.grid.height < 2 {
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
    let dt = 1.0 / (60.0 * DEFAULT_SUBSTEPS as f64);
    let params = SimParams {
        dt,
        tolerance: args
            .tolerance
            .unwrap_or(args.solver.default_tolerance().max(1e-6)),
        max_iterations: 20,
        ..SimParams::default()
    };
    let mut scene = SceneSpec::new(args.scene, args.grid.width, args.grid.height);
    if args.scene == crate::sim::ScenePreset::Hanging {
        scene.slack = 0.1;
    }
    let state = match SimState::new(scene, params, args.solver) {
        Ok(s) => s,
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
            "grid": [state.world.cloth.topology.width, state.world.cloth.topology.height],
            "grabbed": state.ever_grabbed,
            "max_displacement": state.max_displacement,
            "grab_travel": state.grab_travel,
            "max_strain": last.map(|s| s.max_strain),
            "error": state.error,
        });
        println!("{summary}");
    }
}
