//! The egui panel (one function per section; every simulation parameter's slider built
//! from its [`Param`] description in `sim::params`), the live read-outs, the frame-time
//! overlay and the Record button.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use egui_plot::{Legend, Line, Plot};

use super::frame_times::{FrameTimes, frame_time};
use super::recording::Recorder;
use crate::app::budget::FrameBudget;
use crate::app::render::ViewSettings;
use crate::app::sim::SimState;
use crate::sim::mesh::ConstraintChoice;
use crate::sim::params::{self, Param, Scale};
use crate::sim::{Ball, BallMotion, PinSpec, ScenePreset, SceneSpec, SimParams, SolverKind};

/// Read-outs that say the tolerance holds.
const OK: egui::Color32 = egui::Color32::from_rgb(90, 200, 110);
/// Read-outs that say it does not.
const WARN: egui::Color32 = egui::Color32::from_rgb(235, 90, 70);

/// Panel-only state.
#[derive(Resource)]
pub struct PanelState {
    grid_w: usize,
    grid_h: usize,
    show_help: bool,
    show_overlay: bool,
    /// Steps per simulated frame (the fixed timestep is the frame time / substeps).
    pub substeps: u32,
    /// Whether the user set the substeps: a new cloth then keeps them, where otherwise it
    /// gets its solver's steps on it ([`crate::config::substeps`]: the strips' follow
    /// the spacing, so a finer grid takes more).
    substeps_chosen: bool,
}

impl Default for PanelState {
    fn default() -> Self {
        PanelState {
            grid_w: 30,
            grid_h: 30,
            show_help: false,
            show_overlay: true,
            // The launch's cloth sets them at startup (`sync_panel`).
            substeps: 1,
            substeps_chosen: false,
        }
    }
}

/// UI plugin.
pub struct UiPlugin;

impl Plugin for UiPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<FrameTimes>()
            .init_resource::<PanelState>()
            .add_systems(Startup, sync_panel)
            .add_systems(Update, frame_time)
            .add_systems(EguiPrimaryContextPass, (panel, overlay).chain());
    }
}

fn sync_panel(state: Res<SimState>, mut panel: ResMut<PanelState>) {
    if let Some(g) = state.world.cloth.topology.grid {
        panel.grid_w = g.width;
        panel.grid_h = g.height;
    }
    // The launch split the frame into the solver's steps on its cloth.
    panel.substeps = crate::config::substeps(state.kind, &state.world.cloth);
}

/// A slider that keeps a value it did not set: egui's default clamps the bound value to the
/// range every frame, so a tolerance of 1e-10 or a size of 20 m from the command line or a
/// preset would silently change the moment the panel is drawn. Dragging still stays in range.
fn slider<N: egui::emath::Numeric>(
    v: &mut N,
    range: std::ops::RangeInclusive<N>,
) -> egui::Slider<'_> {
    egui::Slider::new(v, range).clamping(egui::SliderClamping::Edits)
}

/// The slider of a described parameter: its span, scale and tooltip from `p`, `label`
/// beside it.
fn param_slider_as<N: egui::emath::Numeric>(
    ui: &mut egui::Ui,
    p: &Param,
    v: &mut N,
    label: &str,
) -> egui::Response {
    let (lo, hi) = p.slider;
    let s = slider(v, N::from_f64(lo)..=N::from_f64(hi))
        .logarithmic(p.scale == Scale::Log)
        .text(label);
    ui.add(s).on_hover_text(p.help)
}

/// [`param_slider_as`] with the parameter's own label.
fn param_slider<N: egui::emath::Numeric>(
    ui: &mut egui::Ui,
    p: &Param,
    v: &mut N,
) -> egui::Response {
    param_slider_as(ui, p, v, p.label)
}

/// Substeps and time step h = 1 / (rate × substeps) for the panel's two sliders, kept
/// inside h's valid range ([`params::DT`], 1e-4 to 0.1 s): past it every rebuild and
/// reset would be refused, so the substeps give way (240 Hz allows 41, not 50).
fn frame_step(hz: f64, substeps: u32) -> (u32, f64) {
    let (h_min, h_max) = (params::DT.min, params::DT.max);
    let most = ((1.0 / h_min) / hz).floor().max(1.0) as u32;
    let substeps = substeps.clamp(1, most);
    let dt = (1.0 / (hz * substeps as f64)).clamp(h_min, h_max);
    (substeps, dt)
}

fn panel(
    mut contexts: EguiContexts,
    mut state: ResMut<SimState>,
    mut view: ResMut<ViewSettings>,
    mut panel: ResMut<PanelState>,
    mut recorder: ResMut<Recorder>,
    mut fixed: ResMut<Time<Fixed>>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let state = &mut *state;
    egui::Window::new("impulse-cloth")
        .default_pos([10.0, 10.0])
        .default_width(300.0)
        .resizable(false)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical()
                .max_height(720.0)
                .show(ui, |ui| {
                    controls(ui, state, &mut panel);
                    ui.separator();
                    solver_section(ui, state, &mut panel, &mut fixed);
                    ui.separator();
                    scene_section(ui, state, &mut panel, &mut fixed);
                    time_section(ui, state, &mut panel, &mut fixed);
                    ui.separator();
                    springs_section(ui, &mut state.world.params);
                    if state.kind == SolverKind::StrainLimit {
                        ui.separator();
                        strain_limits_section(ui, &mut state.world.params);
                    }
                    ui.separator();
                    wind_and_ball_section(ui, &mut state.world.params);
                    ui.separator();
                    self_contact_section(ui, state);
                    ui.separator();
                    tearing_section(ui, &mut state.world.params);
                    ui.separator();
                    view_section(ui, &mut view, &mut panel);
                    ui.separator();
                    readouts_section(ui, state);
                    ui.separator();
                    recording_section(ui, &mut recorder);
                });
        });
    if panel.show_help {
        help_window(ctx);
    }
    Ok(())
}

/// Run / pause, single step, reset, help.
fn controls(ui: &mut egui::Ui, state: &mut SimState, panel: &mut PanelState) {
    ui.horizontal(|ui| {
        let run = if state.paused {
            "▶ Run (P)"
        } else {
            "⏸ Pause (P)"
        };
        if ui.button(run).clicked() {
            state.paused = !state.paused;
        }
        if ui.button("Step (N)").clicked() {
            state.paused = true;
            state.step_once = true;
        }
        if ui.button("Reset (R)").clicked() {
            let scene = state.scene.clone();
            if let Err(e) = state.rebuild(scene) {
                state.error = Some(e.to_string());
            }
        }
        if ui.button("?").clicked() {
            panel.show_help = !panel.show_help;
        }
    });
}

/// The solver and its iteration settings. Switching solver also switches to its step
/// settings ([`crate::config::substeps`] on the cloth at the current frame rate,
/// [`crate::config::iteration_cap`]), the
/// ones `run` and `bench app` use for it.
fn solver_section(
    ui: &mut egui::Ui,
    state: &mut SimState,
    panel: &mut PanelState,
    fixed: &mut Time<Fixed>,
) {
    ui.heading("Solver");
    let mut kind = state.kind;
    egui::ComboBox::from_id_salt("solver")
        .selected_text(kind.label())
        .show_ui(ui, |ui| {
            for k in SolverKind::ALL {
                ui.selectable_value(&mut kind, k, k.label());
            }
        });
    if kind != state.kind {
        state.solver_chosen = true;
        switch_solver(state, panel, fixed, kind);
    }
    let p = &mut state.world.params;
    param_slider(ui, &params::TOLERANCE, &mut p.tolerance);
    param_slider(ui, &params::MAX_ITERATIONS, &mut p.max_iterations);
    param_slider(ui, &params::SLE_MAX_SOLVES, &mut p.sle_max_solves);
    param_slider(ui, &params::NEWTON_MAX_STEPS, &mut p.newton_max_steps);
    param_slider(ui, &params::VERLET_PASSES, &mut p.verlet_passes);
    ui.checkbox(&mut p.velocity_pass, "velocity pass (eq. 3)");
    ui.checkbox(&mut p.lock_taut_chains, "hold taut chains static")
        .on_hover_text(
            "a row or column pulled straight between two pins at exactly its rest \
             length can only stay where it is: hold its particles static (the exact \
             solution) instead of letting it sag within the tolerance, which makes \
             every solver crawl (not used by the strain-limit solver)",
        );
}

/// Switch to `kind` with its step settings on the cloth: its substeps at the current frame
/// rate ([`crate::config::substeps`]) and its cap ([`crate::config::iteration_cap`]).
fn switch_solver(
    state: &mut SimState,
    panel: &mut PanelState,
    fixed: &mut Time<Fixed>,
    kind: SolverKind,
) {
    state.set_solver(kind);
    state.world.params.max_iterations = crate::config::iteration_cap(kind);
    panel.substeps_chosen = false;
    follow_steps(state, panel, fixed);
}

/// The solver's substeps on the cloth as it is now, at the current frame rate
/// ([`crate::config::substeps`]).
fn follow_steps(state: &mut SimState, panel: &mut PanelState, fixed: &mut Time<Fixed>) {
    let steps = crate::config::substeps(state.kind, &state.world.cloth);
    let p = &mut state.world.params;
    let hz = (1.0 / (p.dt * panel.substeps as f64)).round();
    (panel.substeps, p.dt) = frame_step(hz, steps);
    fixed.set_timestep_seconds(p.dt);
}

/// Preset, grid, size, mass and slack; a change rebuilds the scene. Until the user chooses
/// a solver, a new scene opens with its own ([`crate::config::solver`]).
fn scene_section(
    ui: &mut egui::Ui,
    state: &mut SimState,
    panel: &mut PanelState,
    fixed: &mut Time<Fixed>,
) {
    ui.heading("Scene");
    let mut preset = state.scene.preset;
    egui::ComboBox::from_id_salt("preset")
        .selected_text(preset.name())
        .show_ui(ui, |ui| {
            for s in ScenePreset::ALL {
                ui.selectable_value(&mut preset, s, s.name());
            }
        });
    // A mesh scene (or a mesh of the user's) has its own particles: no grid to size.
    let mut drop_mesh = false;
    let on_mesh = state.scene.mesh.is_some() || preset.is_mesh();
    if on_mesh {
        let name = match &state.scene.mesh {
            Some(m) => m.name.clone(),
            None => preset
                .shipped_mesh()
                .map(|(n, _)| n.to_string())
                .unwrap_or_default(),
        };
        let t = &state.world.cloth.topology;
        ui.label(format!(
            "mesh {name}: {} particles, {} constraints, {} triangles",
            state.world.cloth.len(),
            t.edges.len(),
            t.triangles.len()
        ));
        if state.scene.mesh.is_some() {
            drop_mesh = ui
                .button("Back to the grid")
                .on_hover_text("drop the loaded mesh and build the scene on the W×H grid")
                .clicked();
        }
    }
    let mut constraints = state.scene.constraints;
    if on_mesh {
        egui::ComboBox::from_id_salt("constraints")
            .selected_text(format!("constraints: {}", constraints.name()))
            .show_ui(ui, |ui| {
                for c in [ConstraintChoice::Quads, ConstraintChoice::AllEdges] {
                    ui.selectable_value(&mut constraints, c, c.name());
                }
            })
            .response
            .on_hover_text(
                "quads: triangles paired into quads, their sides constrained (folds like \
                 cloth); all-edges: every edge constrained (the mesh locks)",
            );
    }
    ui.add_enabled_ui(!on_mesh, |ui| {
        ui.horizontal(|ui| {
            // Edits stay within 2..=256 (a single row has no surface to draw or
            // grab); a larger grid given on the command line is kept as it is.
            ui.add(
                egui::DragValue::new(&mut panel.grid_w)
                    .range(2..=256)
                    .clamp_existing_to_range(false)
                    .prefix("W "),
            );
            ui.add(
                egui::DragValue::new(&mut panel.grid_h)
                    .range(2..=256)
                    .clamp_existing_to_range(false)
                    .prefix("H "),
            );
        })
    });
    let mut size = state.scene.size;
    let mut mass = state.scene.mass;
    let mut slack = state.scene.slack;
    param_slider(ui, &params::SCENE_SIZE, &mut size);
    param_slider(ui, &params::SCENE_MASS, &mut mass);
    param_slider(ui, &params::SCENE_SLACK, &mut slack);
    let changed = preset != state.scene.preset
        || size != state.scene.size
        || mass != state.scene.mass
        || slack != state.scene.slack
        || constraints != state.scene.constraints
        || drop_mesh;
    if changed || ui.button("Apply grid / rebuild").clicked() {
        let mut scene = SceneSpec::new(preset, panel.grid_w, panel.grid_h);
        // The user's mesh stays until they go back to the grid or pick a mesh scene.
        if !drop_mesh && !preset.is_mesh() && preset != ScenePreset::CurtainRod {
            scene.set_mesh(state.scene.mesh.clone());
        }
        scene.constraints = constraints;
        scene.size = size;
        scene.mass = mass;
        // A new preset comes with its own slack (the hanging cloth's 0.1, as at launch).
        scene.slack = if preset == state.scene.preset {
            slack
        } else {
            crate::config::slack(preset)
        };
        if preset == state.scene.preset && state.scene.pins != preset.default_pins() {
            scene.pins = match &state.scene.pins {
                PinSpec::Indices(_) => preset.default_pins(),
                other => other.clone(),
            };
        }
        match state.rebuild(scene) {
            Ok(()) => rebuilt(state, panel, fixed),
            Err(e) => state.error = Some(e.to_string()),
        }
    }
}

/// After a rebuild: the scene's own solver until the user picked one, and the solver's steps
/// on the new cloth unless the user set the substeps (a finer grid, more strips steps).
fn rebuilt(state: &mut SimState, panel: &mut PanelState, fixed: &mut Time<Fixed>) {
    if let Some(kind) = state.scene_solver() {
        switch_solver(state, panel, fixed, kind);
    } else if !panel.substeps_chosen {
        follow_steps(state, panel, fixed);
    }
}

/// Frame rate and substeps (together they set h), and gravity.
fn time_section(
    ui: &mut egui::Ui,
    state: &mut SimState,
    panel: &mut PanelState,
    fixed: &mut Time<Fixed>,
) {
    let p = &mut state.world.params;
    let mut hz = (1.0 / (p.dt * panel.substeps as f64)).round();
    let a = ui
        .add(slider(&mut hz, 10.0..=240.0).text("frame rate (Hz)"))
        .on_hover_text("simulated frames per second; each frame is split into substeps");
    let b = ui
        .add(slider(&mut panel.substeps, 1..=50).text("substeps"))
        .on_hover_text("time step h = 1 / (rate × substeps): smaller steps stretch less per step");
    if b.changed() {
        panel.substeps_chosen = true;
    }
    if a.changed() || b.changed() {
        (panel.substeps, p.dt) = frame_step(hz, panel.substeps);
        fixed.set_timestep_seconds(p.dt);
    }
    ui.label(format!("h = {:.2} ms", p.dt * 1e3));
    let g = &params::GRAVITY;
    param_slider_as(
        ui,
        g,
        &mut p.gravity.y,
        &format!("{} y ({})", g.label, g.unit),
    );
}

/// Shear and bending springs.
fn springs_section(ui: &mut egui::Ui, p: &mut SimParams) {
    ui.heading("Springs (004 §3.3)");
    param_slider(ui, &params::SHEAR_STIFFNESS, &mut p.shear.stiffness);
    param_slider(ui, &params::SHEAR_DAMPING, &mut p.shear.damping);
    param_slider(ui, &params::BEND_STIFFNESS, &mut p.bend.stiffness);
    param_slider(ui, &params::BEND_DAMPING, &mut p.bend.damping);
}

/// The strain-limit solver's limits (shown only while it is the solver).
fn strain_limits_section(ui: &mut egui::Ui, p: &mut SimParams) {
    ui.heading("Strain limits (001)");
    let sl = &mut p.strain_limits;
    param_slider(ui, &params::LIMIT_STRETCH, &mut sl.stretch);
    param_slider(ui, &params::LIMIT_COMPRESS, &mut sl.compress);
    param_slider(ui, &params::LIMIT_STIFFNESS, &mut sl.stiffness);
    param_slider(ui, &params::LIMIT_PASSES, &mut sl.passes);
}

/// Wind, the ball and contact friction.
fn wind_and_ball_section(ui: &mut egui::Ui, p: &mut SimParams) {
    ui.heading("Wind and ball");
    ui.checkbox(&mut p.wind.enabled, "wind");
    let w = &params::WIND_VELOCITY;
    param_slider_as(
        ui,
        w,
        &mut p.wind.velocity.x,
        &format!("{} x ({})", w.label, w.unit),
    );
    param_slider_as(
        ui,
        w,
        &mut p.wind.velocity.z,
        &format!("{} z ({})", w.label, w.unit),
    );
    param_slider(ui, &params::GUST, &mut p.wind.gust);
    let mut has_ball = p.ball.is_some();
    if ui.checkbox(&mut has_ball, "ball").changed() {
        p.ball = has_ball.then(|| Ball::still(glam::DVec3::new(0.0, 0.6, 0.0), 0.2));
    }
    if let Some(b) = &mut p.ball {
        param_slider(ui, &params::BALL_RADIUS, &mut b.radius);
        let mut motion = match b.motion {
            BallMotion::Still => 0,
            BallMotion::Swing { .. } => 1,
            BallMotion::Thrown => 2,
        };
        let before = motion;
        ui.horizontal(|ui| {
            ui.radio_value(&mut motion, 0, "still");
            ui.radio_value(&mut motion, 1, "swinging");
            ui.radio_value(&mut motion, 2, "thrown (space)");
        });
        if motion != before {
            b.motion = match motion {
                0 => BallMotion::Still,
                1 => BallMotion::Swing {
                    anchor: b.center,
                    axis: glam::DVec3::new(0.0, 0.0, 0.4),
                    frequency: 0.3,
                },
                _ => BallMotion::Thrown,
            };
        }
    }
    param_slider(ui, &params::FRICTION, &mut p.friction);
}

/// Self-collision: the switch, the thickness, and whether the solver does it.
fn self_contact_section(ui: &mut egui::Ui, state: &mut SimState) {
    ui.heading("Self-collision");
    let impulse = state.solver.contact_model() == crate::sim::ContactModel::Impulse;
    let p = &mut state.world.params;
    ui.checkbox(&mut p.self_collision, "self-collision")
        .on_hover_text(
            "vertex–triangle and edge–edge contact of the cloth with itself, solved with \
             the distance constraints, with a rigid-impact-zone fail-safe (iterative, \
             strips, SLE, Newton; Verlet and the strain limits pass through themselves)",
        );
    if p.self_collision {
        param_slider(ui, &params::THICKNESS, &mut p.thickness);
        param_slider(ui, &params::MAX_SPLITS, &mut p.max_splits);
        if !impulse {
            ui.colored_label(WARN, "this solver does not do self-collision");
        }
    }
}

/// Tearing: the switch and the strength ([`crate::sim::mesh::tear`]).
fn tearing_section(ui: &mut egui::Ui, p: &mut SimParams) {
    ui.heading("Tearing");
    let mut on = p.tear_strength.is_some();
    if ui
        .checkbox(&mut on, "tears")
        .on_hover_text(
            "a constraint whose tension (its impulses over a 1/60 s window) exceeds the \
             strength times its rest length breaks, and the cloth opens there",
        )
        .changed()
    {
        p.tear_strength = on.then_some(crate::sim::scene::TEAR_SCENE_STRENGTH);
    }
    if let Some(t) = &mut p.tear_strength {
        param_slider(ui, &params::TEAR_STRENGTH, t);
    }
}

/// Heat-map, wireframe and overlay switches.
fn view_section(ui: &mut egui::Ui, view: &mut ViewSettings, panel: &mut PanelState) {
    ui.heading("View");
    ui.checkbox(&mut view.heatmap, "strain heat-map (H)");
    if view.heatmap {
        ui.add(
            slider(&mut view.strain_scale, 1e-6..=1.0)
                .logarithmic(true)
                .text("red at strain"),
        )
        .on_hover_text("strain shown as full red");
        ui.label(format!(
            "blue 0 → green {:.1e} → red {:.1e}",
            view.strain_scale / 2.0,
            view.strain_scale
        ));
    }
    ui.checkbox(&mut view.wireframe, "constraints wireframe (W)");
    ui.checkbox(&mut panel.show_overlay, "frame-time overlay");
}

/// Counts, the last step's statistics and the last error.
fn readouts_section(ui: &mut egui::Ui, state: &SimState) {
    ui.heading("Read-outs");
    let c = &state.world.cloth;
    ui.label(format!(
        "{} particles, {} constraints, {} springs",
        c.len(),
        c.topology.edges.len(),
        c.topology.springs.len()
    ));
    if state.cut_edges > 0 {
        ui.label(format!(
            "cut: {} edges (shift + drag; R restores the cloth)",
            state.cut_edges
        ));
    }
    if state.world.torn_edges() > 0 {
        ui.label(format!(
            "torn: {} edges (R restores the cloth)",
            state.world.torn_edges()
        ));
    }
    if let Some(s) = state.history.back() {
        ui.label(format!(
            "step {}: {:.2} ms ({} / {} iterations)",
            s.step,
            s.timings.total().as_secs_f64() * 1e3,
            s.position_iterations,
            s.velocity_iterations
        ));
        ui.label(format!(
            "max strain {:.2e}, mean {:.2e}",
            s.max_strain, s.mean_strain
        ));
        if s.locked_particles > 0 {
            ui.label(format!(
                "{} particles held static in taut chains",
                s.locked_particles
            ));
        }
        if state.world.params.self_collision {
            ui.label(format!(
                "self-contact: {} rows, fail-safe {} zones ({} particles{})",
                s.self_contacts,
                s.impact_zones,
                s.zone_particles,
                if s.zone_contacts_whole {
                    ", the whole cloth: its contacts span it"
                } else if s.zone_held_whole {
                    ", the whole cloth: grown over what it stretched"
                } else {
                    ""
                }
            ));
            if s.splits > s.planned_splits {
                ui.label(format!(
                    "step halved {} time(s): the whole cloth would have been one zone",
                    s.splits - s.planned_splits
                ));
            }
            if s.planned_splits > 0 {
                ui.label(format!(
                    "step begun halved {} time(s), as deep as the last one needed",
                    s.planned_splits
                ));
            }
            if s.zone_projections > 0 {
                ui.label(format!(
                    "the cloth projected around them as rigid bodies: {} time(s), {} iterations{}",
                    s.zone_projections,
                    s.zone_projection_iterations,
                    if s.zone_projections_stalled > 0 {
                        format!(
                            ", {} given up where they stalled",
                            s.zone_projections_stalled
                        )
                    } else {
                        String::new()
                    }
                ));
            }
            if s.zone_growth_undone {
                ui.label(
                    "the zones' growth would have held the whole cloth: the contacts' zones \
                     kept, their borders left stretched for the next step",
                );
            }
            if let Some(cut) = s.zone_bounded {
                ui.label(format!(
                    "the contacts' zones would have held the whole cloth: each particle moved \
                     within its displacement bound instead, {cut} cut short"
                ));
            }
            if s.zone_resolves > 0 || s.zone_cut_short {
                ui.label(format!(
                    "the cloth solved again around the zones{}",
                    if s.zone_cut_short {
                        "; a zone's border left stretched for the next step"
                    } else {
                        ""
                    }
                ));
            }
        }
        // A cap that cut the pass short is what leaves the cloth stretched: say so loudly.
        let (colour, text) = if s.converged {
            (OK, "tolerance met".to_string())
        } else if s.hard_capped {
            (WARN, "safety cap hit: tolerance NOT met".to_string())
        } else if s.capped {
            (
                WARN,
                "iteration cap hit: tolerance NOT met (raise or clear the cap)".to_string(),
            )
        } else {
            (
                WARN,
                "tolerance missed after the solve (contact or gliders moved particles)".to_string(),
            )
        };
        ui.colored_label(colour, text);
        if s.solver == SolverKind::StrainLimit {
            ui.label(format!(
                "{} springs outside [a, b] (worst by {:.1e}), {} constrained particles, {} solves{}{}",
                s.limit_violations,
                s.limit_excess,
                s.constrained_particles,
                s.linear_solves,
                if s.symbolic_analysis { ", new symbolic analysis" } else { "" },
                if s.fell_back { ", NOT FACTORISED" } else { "" }
            ));
        }
        if s.solver == SolverKind::Sle {
            ui.label(format!(
                "SLE: {} solves, {} factorisations, residual {:.1e}{}",
                s.linear_solves,
                s.factorizations,
                s.solve_residual,
                if s.fell_back { ", FELL BACK" } else { "" }
            ));
        }
        if s.solver == SolverKind::Newton {
            ui.label(format!(
                "Newton: {} steps, {} factorisations, {} strips sweeps to finish{}{}",
                s.position_iterations,
                s.factorizations,
                s.polish_sweeps,
                if s.symbolic_analysis {
                    ", new symbolic analysis"
                } else {
                    ""
                },
                if s.fell_back {
                    ", FELL BACK to strips"
                } else {
                    ""
                }
            ));
        }
    }
    if let Some(e) = &state.error {
        ui.colored_label(egui::Color32::LIGHT_RED, e);
    }
}

/// The Record / Stop button and the recorder's status.
fn recording_section(ui: &mut egui::Ui, recorder: &mut Recorder) {
    ui.horizontal(|ui| {
        if recorder.is_recording() {
            if ui.button("⏹ Stop recording").clicked() {
                recorder.stop();
            }
        } else if ui.button("⏺ Record").clicked() {
            recorder.start_default();
        }
    });
    if let Some(msg) = recorder.status() {
        ui.label(msg);
    }
}

/// The controls table ("?").
fn help_window(ctx: &egui::Context) {
    egui::Window::new("Controls")
        .default_pos([330.0, 10.0])
        .show(ctx, |ui| {
            egui::Grid::new("controls").show(ui, |ui| {
                for (k, v) in crate::app::CONTROLS {
                    ui.label(*k);
                    ui.label(*v);
                    ui.end_row();
                }
            });
        });
}

fn stats_line(name: &str, v: &[f64]) -> String {
    if v.is_empty() {
        return format!("{name}: –");
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let p95 = s[((s.len() - 1) as f64 * 0.95) as usize];
    format!("{name}: min {:.2} mean {:.2} p95 {:.2} ms", s[0], mean, p95)
}

/// How fast simulated time runs against wall time; below 1× (in red) when steps cost more
/// than the frame budget allows and owed time was dropped ([`crate::app::budget`]).
fn speed_line(ui: &mut egui::Ui, budget: &FrameBudget, paused: bool) {
    match budget.speed() {
        _ if paused => {
            ui.label("simulation paused");
        }
        None => {}
        Some(r) if budget.cut_recently() > 0 => {
            ui.colored_label(
                WARN,
                format!(
                    "simulation {r:.2}× real time: steps cost more than the {:.0} ms a \
                     frame may spend on them",
                    budget.budget.as_secs_f64() * 1e3
                ),
            );
        }
        Some(r) if budget.slowed_recently() > 0 => {
            // The steps fit their budget; frames came so far apart that the clock let the
            // time beyond its largest delta go (a slow renderer, e.g. software Vulkan).
            ui.colored_label(
                WARN,
                format!(
                    "simulation {r:.2}× real time: rendering is slow (a frame took {:.0} ms; \
                     the clock catches up at most {:.0} ms a frame)",
                    budget.longest_frame() * 1e3,
                    budget.max_delta() * 1e3
                ),
            );
        }
        Some(r) => {
            ui.colored_label(OK, format!("simulation {r:.2}× real time"));
        }
    }
}

fn overlay(
    mut contexts: EguiContexts,
    state: Res<SimState>,
    ft: Res<FrameTimes>,
    budget: Res<FrameBudget>,
    panel: Res<PanelState>,
) -> Result {
    if !panel.show_overlay {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    egui::Window::new("Frame times")
        .anchor(egui::Align2::RIGHT_BOTTOM, [-10.0, -10.0])
        .default_width(420.0)
        .show(ctx, |ui| {
            let frames: Vec<f64> = ft.frames.iter().copied().collect();
            let step: Vec<f64> = state
                .history
                .iter()
                .map(|s| s.timings.total().as_secs_f64() * 1e3)
                .collect();
            let phase = |p: crate::sim::Phase| -> Vec<f64> {
                state
                    .history
                    .iter()
                    .map(|s| s.timings.get(p).as_secs_f64() * 1e3)
                    .collect()
            };
            ui.label(stats_line("frame", &frames));
            ui.label(stats_line("step", &step));
            speed_line(ui, &budget, state.paused);
            if let Some(s) = state.history.back() {
                let tol = state.world.params.tolerance;
                let h = &state.history;
                let over = h.iter().filter(|s| s.ended_outside(tol)).count();
                ui.colored_label(
                    if over == 0 { OK } else { WARN },
                    format!(
                        "max strain {:.2e}, tolerance {tol:.0e}: {over} of the last {} steps over",
                        s.max_strain,
                        h.len()
                    ),
                );
                if state.world.params.self_collision {
                    let zones: u32 = h.iter().map(|s| s.impact_zones).sum();
                    let (colour, text) = if s.crossings == 0 {
                        (OK, "intersection-free".to_string())
                    } else if state.world.self_contact().untangling() {
                        (
                            WARN,
                            format!("{} crossings (tangled, untangling)", s.crossings),
                        )
                    } else {
                        (WARN, format!("{} crossings (tangled)", s.crossings))
                    };
                    ui.colored_label(
                        colour,
                        format!(
                            "{text}; fail-safe zones in the last {} steps: {zones}",
                            h.len()
                        ),
                    );
                    if let Some(travel) = state.world.hand_bound() {
                        ui.label(format!(
                            "hand in self-contact: it moves at most {travel} thicknesses a \
                             step"
                        ));
                    }
                } else {
                    ui.label("self-collision off");
                }
            }
            let pts = |v: &[f64]| {
                v.iter()
                    .enumerate()
                    .map(|(i, &y)| [i as f64, y])
                    .collect::<Vec<_>>()
            };
            Plot::new("times")
                .height(140.0)
                .legend(Legend::default())
                .show(ui, |p| {
                    p.line(Line::new("frame ms", pts(&frames)));
                    p.line(Line::new("step ms", pts(&step)));
                    for ph in crate::sim::Phase::ORDER {
                        p.line(Line::new(format!("{} ms", ph.name()), pts(&phase(ph))));
                    }
                });
            let strain: Vec<f64> = state.history.iter().map(|s| s.max_strain).collect();
            let iters: Vec<f64> = state
                .history
                .iter()
                .map(|s| s.position_iterations as f64)
                .collect();
            Plot::new("strain")
                .height(90.0)
                .legend(Legend::default())
                .show(ui, |p| {
                    p.line(Line::new("max strain", pts(&strain)));
                });
            Plot::new("iterations")
                .height(90.0)
                .include_y(0.0)
                .legend(Legend::default())
                .show(ui, |p| {
                    p.line(Line::new("iterations", pts(&iters)));
                });
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_substeps_keep_the_time_step_valid() {
        for hz in [10.0, 60.0, 120.0, 240.0] {
            for sub in [0, 1, 10, 41, 42, 50] {
                let (s, dt) = frame_step(hz, sub);
                let p = crate::sim::SimParams {
                    dt,
                    ..Default::default()
                };
                assert!(p.validate().is_ok(), "{hz} Hz × {sub}: h = {dt}");
                assert!(s >= 1 && s <= sub.max(1));
                if s == sub {
                    assert!((dt - 1.0 / (hz * sub as f64)).abs() < 1e-15);
                }
            }
        }
        assert_eq!(frame_step(240.0, 50).0, 41);
        assert_eq!(frame_step(60.0, 50).0, 50);
    }

    /// A grid rebuilt finer takes the strips' steps on it, at the frame rate the user has,
    /// and back on the coarser one; substeps the user set stay through a rebuild until a
    /// solver is picked.
    #[test]
    fn a_rebuilt_cloth_takes_its_solvers_steps_unless_the_user_set_them() {
        use crate::sim::{SceneSpec, SimParams};
        let scene = |n| SceneSpec::new(crate::config::SCENE, n, n);
        let params = SimParams {
            dt: crate::config::FRAME,
            ..SimParams::default()
        };
        let mut state = SimState::new(scene(30), params, SolverKind::Strips).unwrap();
        crate::config::set_frame_steps(&mut state.world, state.kind, crate::config::FRAME, None);
        let mut panel = PanelState {
            substeps: 4,
            ..PanelState::default()
        };
        let mut fixed = Time::<Fixed>::from_seconds(state.world.params.dt);
        let frame =
            |state: &SimState, panel: &PanelState| state.world.params.dt * panel.substeps as f64;
        let want = |state: &SimState| crate::config::substeps(state.kind, &state.world.cloth);
        for n in [50, 40, 30] {
            state.rebuild(scene(n)).unwrap();
            rebuilt(&mut state, &mut panel, &mut fixed);
            assert_eq!(panel.substeps, want(&state), "{n}×{n}");
            assert!((frame(&state, &panel) - crate::config::FRAME).abs() < 1e-12);
            // Bevy keeps the timestep in whole nanoseconds.
            assert!((fixed.timestep().as_secs_f64() - state.world.params.dt).abs() < 1e-9);
        }
        assert_eq!(panel.substeps, 4);
        // At 120 Hz the frame rate stays and the steps follow the cloth.
        (panel.substeps, state.world.params.dt) = frame_step(120.0, panel.substeps);
        state.rebuild(scene(50)).unwrap();
        rebuilt(&mut state, &mut panel, &mut fixed);
        assert_eq!(panel.substeps, 7);
        assert!((frame(&state, &panel) - 1.0 / 120.0).abs() < 1e-12);
        // Substeps the user set stay on a rebuilt cloth.
        panel.substeps_chosen = true;
        (panel.substeps, state.world.params.dt) = frame_step(60.0, 3);
        state.rebuild(scene(30)).unwrap();
        rebuilt(&mut state, &mut panel, &mut fixed);
        assert_eq!(panel.substeps, 3);
        assert!((frame(&state, &panel) - crate::config::FRAME).abs() < 1e-12);
        // Picking a solver takes its steps again.
        switch_solver(&mut state, &mut panel, &mut fixed, SolverKind::Newton);
        assert_eq!((panel.substeps, panel.substeps_chosen), (1, false));
        switch_solver(&mut state, &mut panel, &mut fixed, SolverKind::Strips);
        assert_eq!(panel.substeps, 4);
    }
}
