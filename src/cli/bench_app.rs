//! `impulse-cloth bench app`: the app's scenes as a user drives them — frames of 1/60 s,
//! each scene pulled beyond what the cloth can reach by a scripted drag — per solver and
//! tolerance, timed per frame, the unit the app has to fit into 16.7 ms.
//!
//! Every row is a `run`: its flags are put together as a command line, read by `run`'s own
//! parser ([`RunArgs::from_flags`]), built by [`build_world`] and stepped by
//! [`step_frame_observed`] (the stepping of [`super::run::step_frame`]), so
//! `impulse-cloth run` with the flags a row lists in bench.json (`run_flags`) reproduces its
//! strains and positions exactly. A benchmark with its own set-up code would measure
//! something `run` and the app do not do.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use glam::DVec3;
use plotters::prelude::*;
use serde::Serialize;

use super::bench_common::{BenchArgs, check_drags, check_grids, prepare_out, select};
use super::run::{RunArgs, TimeSummary, build_world, set_threads, step_frame_observed};
use crate::config;
use crate::output::{PlotResult, atomic_png, write_atomic};
use crate::sim::{Drag, DragScript, ScenePreset, SimError, SolverKind, World};

/// Simulated time of one app frame, s.
pub const FRAME: f64 = config::FRAME;

/// The scenes of the benchmark, in table order: the app's presets a user drags (the
/// curtain on its rod is drawn along the rod rather than pulled, so it has no drag here),
/// the grids' first, then the meshes' (run once each, at their own size, whatever
/// `--grids` says).
pub const SCENES: [ScenePreset; 10] = [
    ScenePreset::Hanging,
    ScenePreset::Curtain,
    ScenePreset::Drape,
    ScenePreset::Flag,
    ScenePreset::Pile,
    ScenePreset::Fold,
    ScenePreset::Tablecloth,
    ScenePreset::FlagHole,
    ScenePreset::Skirt,
    ScenePreset::Square,
];

/// One solver configuration of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AppConfig {
    /// Solver.
    pub solver: SolverKind,
    /// Tolerance; `None` for a baseline, run at `run`'s defaults ([`config::TOLERANCE`],
    /// `run`'s Verlet passes and strain limits).
    pub tolerance: Option<f64>,
}

const fn converging(solver: SolverKind, tolerance: f64) -> AppConfig {
    AppConfig {
        solver,
        tolerance: Some(tolerance),
    }
}

const fn baseline(solver: SolverKind) -> AppConfig {
    AppConfig {
        solver,
        tolerance: None,
    }
}

/// The configurations of `bench app`: the solvers that converge to a tolerance at two
/// tolerances, then the two that do not, as baselines.
pub const CONFIGS: [AppConfig; 10] = [
    converging(SolverKind::Iterative, 1e-4),
    converging(SolverKind::Iterative, 1e-6),
    converging(SolverKind::Strips, 1e-4),
    converging(SolverKind::Strips, 1e-6),
    converging(SolverKind::Sle, 1e-4),
    converging(SolverKind::Sle, 1e-6),
    converging(SolverKind::Newton, 1e-4),
    converging(SolverKind::Newton, 1e-6),
    baseline(SolverKind::Verlet),
    baseline(SolverKind::StrainLimit),
];

impl AppConfig {
    /// Label in tables, plots and `--only`: `strips 1e-4`, `verlet (baseline)`.
    pub fn label(&self) -> String {
        match self.tolerance {
            Some(t) => format!("{} {t:e}", self.solver),
            None => format!("{} (baseline)", self.solver),
        }
    }

    /// The tolerance the row runs at.
    pub fn tolerance(&self) -> f64 {
        self.tolerance.unwrap_or(config::TOLERANCE)
    }
}

/// What every row shares: frames, drags and the flags passed on to `run`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Frames of 1/60 s per row.
    pub frames: u64,
    /// Drags given with `--drag`, replacing the built-in one; empty for the built-in.
    pub drags: Vec<Drag>,
    /// `--no-taut-lock`.
    pub no_taut_lock: bool,
    /// `--threads`, passed on so the listed command is the same run.
    pub threads: usize,
    /// Self-collision of the row (`--self-collision`, spelled out in its flags).
    pub self_collision: bool,
    /// The far drag set (`--far`, [`FAR_DRAG_TIMES`]) instead of the built-in drags.
    pub far: bool,
    /// Steps per frame for every row (`--substeps`) instead of each solver's default.
    pub substeps: Option<u32>,
}

/// The `run` flags of a row, drags and the solver's own substeps aside (they follow the
/// cloth: [`setup`] spells them out once it is built).
pub fn row_flags(scene: ScenePreset, n: usize, cfg: &AppConfig, opts: &Options) -> Vec<String> {
    let cap = config::iteration_cap(cfg.solver);
    let mut f: Vec<String> = [
        "--scene",
        scene.name(),
        "--grid",
        &n.to_string(),
        "--solver",
        cfg.solver.name(),
        "--dt",
        &FRAME.to_string(),
        "--max-iterations",
        &cap.to_string(),
        "--steps",
        &opts.frames.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(k) = opts.substeps {
        f.extend(["--substeps".into(), k.to_string()]);
    }
    if let Some(t) = cfg.tolerance {
        f.extend(["--tolerance".into(), format!("{t:e}")]);
    }
    // Spelled out (they are `run`'s defaults too), so the listed command says what ran.
    f.extend(["--slack".into(), config::slack(scene).to_string()]);
    if opts.no_taut_lock {
        f.push("--no-taut-lock".into());
    }
    f.extend(["--self-collision".into(), opts.self_collision.to_string()]);
    if opts.threads > 0 {
        f.extend(["--threads".into(), opts.threads.to_string()]);
    }
    f
}

/// When the built-in drags act, as fractions of the row's simulated time T: grabbed at
/// T/4, at the target at T/2, held, let go at 7T/8. With the default 240 frames (4 s) that
/// is 1 s, 2 s and 3.5 s: a second of free motion, a second of pulling, a second and a half
/// held beyond reach, and half a second to recover. Fractions rather than fixed times, so a
/// shorter run (`--quick`, `--steps`) still drags.
pub const DRAG_TIMES: [f64; 3] = [0.25, 0.5, 0.875];

/// When the far drags (`bench app --far`) act: grabbed at T/8, at the target at 3T/8, let
/// go at 7T/8 — with 240 frames, 2 s held beyond reach instead of 1.5. Their offsets are
/// twice the built-in ones ([`scene_drag`]): the hanging cloth's hand goes ≈ 4.9 m from
/// pins it can be at most 1.5 m from, the curtain's 3.9 m from the edge it hangs 1 m
/// below, the flag's 5 m from a pole the cloth is 1 m wide from — each at least 2 m beyond
/// reach, where the bench's own drag is 1–2 m beyond. The fold keeps its script.
pub const FAR_DRAG_TIMES: [f64; 3] = [0.125, 0.375, 0.875];

/// The built-in drag of a scene: one particle, chosen and pulled relative to the grid and
/// the cloth as built (`world`, before any step), so it is the same motion at every grid
/// size, always beyond what the cloth can reach while pinned:
///
/// - hanging: the middle of the free edge (row-major (H−1)·W + W/2), pulled 2 m down and
///   1 m further out (+z, away from the pinned edge): ≈2.9 m from the pins, which it can be
///   at most 1.5 m from;
/// - curtain: the middle of the bottom edge, pulled 1.5 m out of the curtain's plane (+z)
///   and 1 m down: 2.5 m from the top edge it hangs 1 m below;
/// - drape: a corner (particle 0), pulled 2 m up and away from the cloth's centre; nothing
///   is pinned, so the cloth is carried off the ball;
/// - flag: the free top corner (W−1, the pole is column 0), pulled 2 m further from the
///   pole: 3 m from a pole the cloth is 1 m wide from;
/// - pile: the middle of the top row, lifted 2 m out of the heap it has fallen into;
/// - fold: its own script's corner across the sheet ([`ScenePreset::script`]), at the
///   bench's times.
///
/// With `far`, the far version of it ([`FAR_DRAG_TIMES`]).
pub fn scene_drag(scene: ScenePreset, world: &World, frames: u64, far: bool) -> Drag {
    let x = &world.cloth.particles.x;
    // A mesh has no rows: the same particles by place (lexicographic extremes of the rest
    // shape), which on a grid are the ones the indices name.
    let (w, h) = match world.cloth.topology.grid {
        Some(g) => (g.width, g.height),
        None => (0, 0),
    };
    let most = |key: &dyn Fn(DVec3) -> (f64, f64)| {
        (0..x.len())
            .max_by(|&a, &b| {
                let (ka, kb) = (key(x[a]), key(x[b]));
                ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
            })
            .unwrap_or(0)
    };
    let (particle, offset) = match scene {
        _ if w == 0 => match scene {
            // Rim of a tablecloth (or of a mesh draped over the ball): the particle farthest
            // out, carried up and away like the drape's corner.
            ScenePreset::Drape | ScenePreset::Tablecloth => {
                let i = most(&|p| (p.with_y(0.0).length(), -p.x));
                let centre = x.iter().copied().sum::<DVec3>() / x.len() as f64;
                let away = (x[i] - centre).with_y(0.0).normalize_or(DVec3::X);
                (i, (away + DVec3::Y).normalize() * 2.0)
            }
            // The free top corner: farthest from the pole, then highest.
            ScenePreset::Flag | ScenePreset::FlagHole => {
                let i = most(&|p| (p.x, p.y));
                (i, DVec3::X * 2.0)
            }
            // The skirt's hem, lifted out and up, beyond what its pinned waist lets it reach.
            ScenePreset::Skirt => (most(&|p| (-p.y, p.x)), DVec3::new(1.5, 1.0, 0.0)),
            ScenePreset::Pile => (most(&|p| (p.y, -p.x)), DVec3::new(0.0, 2.0, 0.0)),
            ScenePreset::Curtain => (most(&|p| (-p.y, -p.x.abs())), DVec3::new(0.0, -1.0, 1.5)),
            ScenePreset::Fold => {
                let d = scene.script(world).expect("the fold has a script");
                (d.particle, d.to - x[d.particle])
            }
            // The middle of the free (near) edge, pulled down and out.
            _ => (most(&|p| (p.z, -p.x.abs())), DVec3::new(0.0, -2.0, 1.0)),
        },
        ScenePreset::Drape => {
            let centre = x.iter().copied().sum::<DVec3>() / x.len() as f64;
            let away = (x[0] - centre).with_y(0.0).normalize_or(DVec3::X);
            (0, (away + DVec3::Y).normalize() * 2.0)
        }
        ScenePreset::Flag => {
            let along = (x[w - 1] - x[0]).normalize_or(DVec3::X);
            (w - 1, along * 2.0)
        }
        ScenePreset::Curtain => ((h - 1) * w + w / 2, DVec3::new(0.0, -1.0, 1.5)),
        ScenePreset::Pile => (w / 2, DVec3::new(0.0, 2.0, 0.0)),
        ScenePreset::Fold => {
            let d = scene.script(world).expect("the fold has a script");
            (d.particle, d.to - x[d.particle])
        }
        _ => ((h - 1) * w + w / 2, DVec3::new(0.0, -2.0, 1.0)),
    };
    let t = frames as f64 / 60.0;
    let (times, scale) = if far && scene != ScenePreset::Fold {
        (FAR_DRAG_TIMES, 2.0)
    } else {
        (DRAG_TIMES, 1.0)
    };
    Drag {
        particle,
        to: x[particle] + offset * scale,
        start: times[0] * t,
        arrive: times[1] * t,
        release: Some(times[2] * t),
    }
}

/// The complete flags of a row (drags and substeps included) and the run they describe,
/// read back through `run`'s parser. The built-in drag needs the cloth's start positions
/// and the solver's substeps its spacing, so the world is built once without them first.
pub fn setup(
    scene: ScenePreset,
    n: usize,
    cfg: &AppConfig,
    opts: &Options,
) -> Result<(Vec<String>, RunArgs), String> {
    let mut flags = row_flags(scene, n, cfg, opts);
    let parse = |f: &[String]| RunArgs::from_flags(f).map_err(|e| e.to_string());
    let first = parse(&flags)?;
    let world = build_world(&first)?;
    if opts.substeps.is_none() {
        let k = first.frame_steps(&world);
        flags.extend(["--substeps".into(), k.to_string()]);
    }
    let drags = if opts.drags.is_empty() {
        vec![scene_drag(scene, &world, opts.frames, opts.far)]
    } else {
        opts.drags.clone()
    };
    for d in drags {
        flags.extend(["--drag".into(), d.to_string()]);
    }
    let args = parse(&flags)?;
    Ok((flags, args))
}

/// How a row ended.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Status {
    /// Every frame ran.
    Completed,
    /// Stopped once its simulation time exceeded the budget times its frames (its mean is
    /// over budget whatever the remaining frames take); the figures are of the frames run.
    OverBudget {
        /// Frames run.
        after_frames: u64,
    },
    /// A step blew up (undone as diverged or non-finite): a result for a method pulled
    /// beyond reach, not a failure of the benchmark. The figures are of the frames before.
    Diverged {
        /// The frame (1-based) that failed.
        frame: u64,
        /// What the simulator said.
        error: String,
    },
    /// Anything else: the benchmark failed.
    Failed {
        /// The frame (1-based) that failed, 0 = before the first.
        frame: u64,
        /// The error.
        error: String,
    },
}

impl Status {
    fn describe(&self) -> String {
        match self {
            Status::Completed => "ok".into(),
            Status::OverBudget { after_frames } => {
                format!("over budget: stopped after {after_frames} frames")
            }
            Status::Diverged { frame, error } => format!("diverged in frame {frame}: {error}"),
            Status::Failed { frame, error } => format!("FAILED in frame {frame}: {error}"),
        }
    }
}

/// What a row measured.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// Frames that completed.
    pub frames_run: u64,
    /// World steps (substeps) that completed.
    pub steps: u64,
    /// ms per frame, simulation only: the sum of the phase timings of the frame's steps.
    pub ms: TimeSummary,
    /// The same over the frames that ended with the drag holding its particle.
    pub ms_held: TimeSummary,
    /// Position-pass iterations (sweeps, solves or passes) per frame, all substeps.
    pub iterations_per_frame: f64,
    /// Largest strain |d−L|/L at the end of any step, substeps included.
    pub max_strain: f64,
    /// Steps (substeps, not frames) that ended outside the tolerance (for the strain-limit
    /// solver: outside its limits by more than it).
    pub steps_outside: u64,
    /// Frames that ended with the drag holding its particle.
    pub held_frames: u64,
    /// ms per frame of self-contact's detection, fail-safe and crossing count (part of
    /// `ms`).
    pub self_contact_ms: f64,
    /// Most self-contact rows in a step.
    pub self_contacts: u32,
    /// Impact zones the fail-safe formed over the row.
    pub impact_zones: u64,
    /// Steps (substeps, not frames) in which the fail-safe formed an impact zone.
    pub zone_steps: u64,
    /// Of those, steps whose zones held every particle that can move: the whole cloth
    /// moved rigidly.
    pub whole_zone_steps: u64,
    /// Broad-phase gathers of self-contact candidates per frame (detection's unit of cost).
    pub gathers_per_frame: f64,
    /// Gathers of the pairs around a few strayed particles per frame (a part of a whole
    /// gather's cost).
    pub regathers_per_frame: f64,
    /// Frames that ended with the cloth passing through itself (counted with
    /// self-collision on).
    pub crossing_frames: u64,
    /// How the row ended.
    pub status: Status,
}

impl Measured {
    /// A row that could not start.
    fn failed(error: String) -> Measured {
        Measured {
            frames_run: 0,
            steps: 0,
            ms: TimeSummary::default(),
            ms_held: TimeSummary::default(),
            iterations_per_frame: 0.0,
            max_strain: 0.0,
            steps_outside: 0,
            held_frames: 0,
            self_contact_ms: 0.0,
            self_contacts: 0,
            impact_zones: 0,
            zone_steps: 0,
            whole_zone_steps: 0,
            gathers_per_frame: 0.0,
            regathers_per_frame: 0.0,
            crossing_frames: 0,
            status: Status::Failed { frame: 0, error },
        }
    }
}

/// Build `args`'s world and step it through its frames as `run` does, stopping early once
/// the simulation time exceeds `budget_ms` per frame over all of them. `tick` is called
/// after each frame. Returns the figures and the world as the last completed step left it;
/// an error if the world cannot be built.
pub fn measure(
    args: &RunArgs,
    budget_ms: f64,
    tick: &mut dyn FnMut(),
) -> Result<(Measured, World), String> {
    let mut world = build_world(args)?;
    let mut script = DragScript::new(args.drag.clone(), world.cloth.len())
        .map_err(|e| format!("--drag: {e}"))?;
    let mut solver = args.solver().create();
    let substeps = args.frame_steps(&world);
    let tolerance = world.params.tolerance;
    // In f64 ms: a `Duration` of a huge `--budget-ms` times the frames would overflow.
    let budget = budget_ms * args.steps as f64;
    let mut spent = 0.0;
    let (mut times, mut held_times) = (Vec::new(), Vec::new());
    let (mut iterations, mut max_strain, mut outside) = (0u64, 0.0f64, 0u64);
    let (mut contact_ms, mut rows, mut zones, mut crossing_frames) = (0.0, 0u32, 0u64, 0u64);
    let (mut zone_steps, mut whole_zone_steps, mut gathers) = (0u64, 0u64, 0u64);
    let mut regathers = 0u64;
    let mut status = Status::Completed;
    for frame in 1..=args.steps {
        let mut count = |s: &crate::sim::StepStats| {
            outside += u64::from(s.ended_outside(tolerance));
            zone_steps += u64::from(s.impact_zones > 0);
            whole_zone_steps += u64::from(s.zone_held_whole);
        };
        let stats = match step_frame_observed(
            &mut world,
            solver.as_mut(),
            substeps,
            &mut script,
            &mut count,
        ) {
            Ok(s) => s,
            Err(e) => {
                let error = e.to_string();
                status = match e {
                    SimError::Diverged { .. } | SimError::NonFinite { .. } => {
                        Status::Diverged { frame, error }
                    }
                    _ => Status::Failed { frame, error },
                };
                break;
            }
        };
        let t = stats.timings.total();
        spent += t.as_secs_f64() * 1e3;
        times.push(t);
        if world.grab().is_some() {
            held_times.push(t);
        }
        iterations += u64::from(stats.position_iterations);
        max_strain = max_strain.max(stats.max_strain);
        contact_ms += stats.self_contact_time.as_secs_f64() * 1e3;
        rows = rows.max(stats.self_contacts);
        zones += u64::from(stats.impact_zones);
        gathers += u64::from(stats.self_gathers);
        regathers += u64::from(stats.self_regathers);
        crossing_frames += u64::from(stats.crossings > 0);
        tick();
        if frame < args.steps && spent > budget {
            status = Status::OverBudget {
                after_frames: frame,
            };
            break;
        }
    }
    let frames_run = times.len() as u64;
    let m = Measured {
        frames_run,
        steps: world.steps,
        ms: TimeSummary::of(&times),
        ms_held: TimeSummary::of(&held_times),
        iterations_per_frame: iterations as f64 / frames_run.max(1) as f64,
        max_strain,
        steps_outside: outside,
        held_frames: held_times.len() as u64,
        self_contact_ms: contact_ms / frames_run.max(1) as f64,
        self_contacts: rows,
        impact_zones: zones,
        zone_steps,
        whole_zone_steps,
        gathers_per_frame: gathers as f64 / frames_run.max(1) as f64,
        regathers_per_frame: regathers as f64 / frames_run.max(1) as f64,
        crossing_frames,
        status,
    };
    Ok((m, world))
}

/// One row of results.
#[derive(Debug, Clone, Serialize)]
pub struct AppRow {
    /// Scene.
    pub scene: ScenePreset,
    /// Grid side (n×n particles); 0 for a mesh scene.
    pub grid: usize,
    /// Particles of the cloth.
    pub particles: usize,
    /// Configuration label.
    pub config: String,
    /// Solver.
    pub solver: SolverKind,
    /// Tolerance.
    pub tolerance: f64,
    /// Run at `run`'s defaults for its solver, as a baseline.
    pub baseline: bool,
    /// Substeps per frame ([`config::substeps`]).
    pub substeps: u32,
    /// Iteration cap per pass (0 = none; [`config::iteration_cap`]).
    pub max_iterations: u32,
    /// Frames asked for.
    pub frames: u64,
    /// Self-collision on.
    pub self_collision: bool,
    /// The drags, as `--drag` takes them.
    pub drags: Vec<String>,
    /// What was measured.
    #[serde(flatten)]
    pub measured: Measured,
    /// The flags of `impulse-cloth run` that reproduce the row.
    pub run_flags: Vec<String>,
}

fn step_label(r: &AppRow) -> String {
    let cap = match r.max_iterations {
        0 => "no cap".to_string(),
        k => format!("cap {k}"),
    };
    if r.substeps == 1 {
        format!("1 × 1/60 s, {cap}")
    } else {
        format!("{} × 1/{} s, {cap}", r.substeps, 60 * r.substeps)
    }
}

fn drag_summary(opts: &Options) -> String {
    if opts.drags.is_empty() {
        let t = opts.frames as f64 / 60.0;
        let (times, which) = if opts.far {
            (
                FAR_DRAG_TIMES,
                "far drag (--far: twice the built-in offset, the fold's own)",
            )
        } else {
            (DRAG_TIMES, "built-in drag")
        };
        // Rounded for reading; bench.json's `drags` have the exact times.
        let [a, b, c] = times.map(|f| {
            let s = format!("{:.3}", f * t);
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        });
        format!(
            "the scene's {which} beyond reach (see docs/results.md), grabbed at {a} s, \
             at its target at {b} s, let go at {c} s"
        )
    } else {
        let d: Vec<String> = opts.drags.iter().map(|d| format!("`{d}`")).collect();
        format!("--drag {}, replacing the built-in drags", d.join(", "))
    }
}

/// The row of `rows` that runs `r` without self-collision (same scene, grid, solver and
/// step settings), if `r` has it on and the run has both. Matched by its settings, not by
/// its label, which names self-collision.
fn without_self_collision<'a>(rows: &'a [AppRow], r: &AppRow) -> Option<&'a AppRow> {
    rows.iter().filter(|_| r.self_collision).find(|o| {
        !o.self_collision
            && o.scene == r.scene
            && o.grid == r.grid
            && o.solver == r.solver
            && o.tolerance == r.tolerance
            && o.baseline == r.baseline
            && o.substeps == r.substeps
            && o.max_iterations == r.max_iterations
    })
}

fn markdown(rows: &[AppRow], opts: &Options, skipped: &[String]) -> String {
    let mut s = format!(
        "App scenes, frames of 1/60 s, {} frames per row, {} threads. Drag: {}.\n\
         Times are simulation only (the phase timings of the frame's steps), ms per 1/60 s \
         frame; real time is 16.7 ms. Strains are the worst at the end of any step; a step \
         is a substep.\n\n",
        opts.frames,
        rayon::current_num_threads(),
        drag_summary(opts),
    );
    s.push_str(
        "| scene | grid | solver | tolerance | self-collision | step | ms/frame mean | p95 | \
         slowest | slowest ÷ median | iterations/frame | max strain | steps over tolerance | drag held | self-contact \
         ms/frame | gathers/frame (whole + partial) | rows | zone steps (whole cloth) | frames crossing | on ÷ off | status |\n",
    );
    s.push_str(
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let m = &r.measured;
        let (solver, tol) = if r.baseline {
            (r.config.clone(), format!("{:e} (default)", r.tolerance))
        } else {
            (r.solver.to_string(), format!("{:e}", r.tolerance))
        };
        let (self_ms, gathers, self_rows, zones, crossing) = if r.self_collision {
            (
                format!("{:.3}", m.self_contact_ms),
                format!("{:.2} + {:.2}", m.gathers_per_frame, m.regathers_per_frame),
                m.self_contacts.to_string(),
                format!("{} ({})", m.zone_steps, m.whole_zone_steps),
                m.crossing_frames.to_string(),
            )
        } else {
            let none = || "—".to_string();
            (none(), none(), none(), none(), none())
        };
        // How far the slowest frame stands out of the row's usual one.
        let over_median = if m.ms.p50 > 0.0 {
            format!("{:.1}", m.ms.max / m.ms.p50)
        } else {
            "—".to_string()
        };
        let ratio = without_self_collision(rows, r)
            .filter(|o| o.measured.ms.mean > 0.0)
            .map_or("—".to_string(), |o| {
                format!("{:.2}", m.ms.mean / o.measured.ms.mean)
            });
        s.push_str(&format!(
            "| {} | {} | {solver} | {tol} | {} | {} | {:.3} | {:.3} | {:.3} | {over_median} | {:.1} | \
             {:.2e} | {}/{} | \
             {}/{} frames | {self_ms} | {gathers} | {self_rows} | {zones} | {crossing} | {ratio} \
             | {} |\n",
            r.scene,
            if r.grid > 0 {
                format!("{}×{}", r.grid, r.grid)
            } else {
                format!("mesh, {}", r.particles)
            },
            if r.self_collision { "on" } else { "off" },
            step_label(r),
            m.ms.mean,
            m.ms.p95,
            m.ms.max,
            m.iterations_per_frame,
            m.max_strain,
            m.steps_outside,
            m.steps,
            m.held_frames,
            m.frames_run,
            m.status.describe().replace('|', "/"),
        ));
    }
    if !skipped.is_empty() {
        s.push_str("\nSkipped (a smaller grid of the same scene and configuration went over the budget, diverged or failed):\n\n");
        for k in skipped {
            s.push_str(&format!("- {k}\n"));
        }
    }
    s
}

/// The JSON of `bench app`.
#[derive(Serialize)]
struct Output<'a> {
    frame_s: f64,
    frames: u64,
    threads: usize,
    drag: String,
    rows: &'a [AppRow],
    skipped: &'a [String],
}

/// ms per frame against grid size, one panel per scene and one line per configuration
/// (the same colour in every panel), with the real-time line. Rows that stopped over budget
/// are drawn (their mean is a lower bound); rows that diverged or failed are not.
fn plot(path: &Path, rows: &[AppRow], scenes: &[ScenePreset], labels: &[String]) -> PlotResult {
    let real_time = 1000.0 * FRAME;
    let shown: Vec<&AppRow> = rows
        .iter()
        .filter(|r| {
            r.measured.frames_run > 0
                && matches!(
                    r.measured.status,
                    Status::Completed | Status::OverBudget { .. }
                )
        })
        .collect();
    let xmax = rows.iter().map(|r| r.grid).max().unwrap_or(50) as f64 * 1.05;
    let means = shown.iter().map(|r| r.measured.ms.mean.max(1e-3));
    let ymin = means.clone().fold(real_time, f64::min) / 2.0;
    let ymax = means.fold(real_time, f64::max) * 2.0;
    let root = BitMapBackend::new(path, (1400, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let cols = if scenes.len() > 1 { 2 } else { 1 };
    let panels = root.split_evenly((scenes.len().div_ceil(cols), cols));
    for (scene, panel) in scenes.iter().zip(&panels) {
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!("{scene}: ms per 1/60 s frame, dragged beyond reach"),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(65)
            .build_cartesian_2d(0.0..xmax, (ymin..ymax).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("grid side n (n×n particles)")
            .y_desc("ms per frame (log)")
            .draw()?;
        chart
            .draw_series(LineSeries::new(
                [(0.0, real_time), (xmax, real_time)],
                BLACK.stroke_width(2),
            ))?
            .label("real time (16.7 ms)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK));
        for (i, label) in labels.iter().enumerate() {
            let pts: Vec<(f64, f64)> = shown
                .iter()
                .filter(|r| r.scene == *scene && r.config == *label)
                .map(|r| (r.grid as f64, r.measured.ms.mean.max(1e-3)))
                .collect();
            if pts.is_empty() {
                continue;
            }
            let colour = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(("sans-serif", 12))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// A row's label: its configuration's, with ", self-collision" when that is on.
fn row_label(cfg: &AppConfig, self_collision: bool) -> String {
    if self_collision {
        format!("{}, self-collision", cfg.label())
    } else {
        cfg.label()
    }
}

/// The files `bench app` writes into `--out`.
const OUTPUTS: [&str; 3] = ["bench.md", "bench.json", "ms_per_frame.png"];

/// Entry point of `bench app`.
pub fn main(args: BenchArgs) -> ExitCode {
    let fail = |msg: String, code: u8| {
        eprintln!("error: {msg}");
        ExitCode::from(code)
    };
    if args.hard_cap.is_some() {
        return fail(
            "--hard-cap applies to `bench paper` only: `bench app` rows run with `run`'s \
             settings, which keep the default safety cap"
                .into(),
            2,
        );
    }
    let frames = args.steps.unwrap_or(if args.quick { 60 } else { 240 });
    if frames == 0 {
        return fail("--steps must be at least 1".into(), 2);
    }
    let grids = args.grids.clone().unwrap_or_else(|| {
        if args.quick {
            vec![30, 50]
        } else {
            vec![30, 50, 100]
        }
    });
    if let Err(e) = check_grids(&grids).and_then(|()| check_drags(&args.drag, &grids)) {
        return fail(e, 2);
    }
    if let Some(k) = args.substeps
        && !(1..=1000).contains(&k)
    {
        return fail(
            format!("--substeps {k}: steps per frame must be in 1..=1000"),
            2,
        );
    }
    let scenes = args.scenes.clone().unwrap_or(SCENES.to_vec());
    if let Some(bad) = scenes.iter().find(|s| !SCENES.contains(s)) {
        let names: Vec<&str> = SCENES.iter().map(|s| s.name()).collect();
        return fail(
            format!(
                "--scenes {bad}: `bench app` has no drag for it; the scenes are {}",
                names.join(", ")
            ),
            2,
        );
    }
    let labels: Vec<String> = CONFIGS.iter().map(AppConfig::label).collect();
    let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let configs: Vec<&AppConfig> = match select(args.only.as_deref(), &label_refs) {
        Ok(picked) => picked.into_iter().map(|k| &CONFIGS[k]).collect(),
        Err(e) => return fail(e, 2),
    };
    if let Err(e) = set_threads(args.threads) {
        return fail(e, 2);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("bench-app-out"));
    if let Err(e) = prepare_out(&out, &OUTPUTS) {
        return fail(e, 2);
    }
    let opts = Options {
        frames,
        drags: args.drag.clone(),
        no_taut_lock: args.no_taut_lock,
        far: args.far,
        substeps: args.substeps,
        threads: args.threads,
        self_collision: true,
    };
    let modes: &[bool] = match args.self_collision.as_str() {
        "on" => &[true],
        "off" => &[false],
        _ => &[true, false],
    };
    // Every row's flags are made and read back before the first row runs: a flag `run`
    // refuses is a bug found at once, not after an hour of measuring.
    let mut plan = Vec::new();
    for &scene in &scenes {
        for &cfg in &configs {
            let mut mode_plans = Vec::new();
            for &sc in modes {
                let opts = Options {
                    self_collision: sc,
                    ..opts.clone()
                };
                let mut row_plan = Vec::new();
                // A mesh has its own size: one row (built with the first grid's flag,
                // which it ignores).
                let sizes = if scene.is_mesh() {
                    grids.get(..1).unwrap_or(&[])
                } else {
                    &grids[..]
                };
                for &n in sizes {
                    match setup(scene, n, cfg, &opts) {
                        Ok(p) => row_plan.push((n, p)),
                        Err(e) => {
                            return fail(format!("{scene} {} at {n}×{n}: {e}", cfg.label()), 2);
                        }
                    }
                }
                mode_plans.push((sc, row_plan));
            }
            plan.push((scene, cfg, mode_plans));
        }
    }
    crate::output::register_font();
    let total = plan
        .iter()
        .flat_map(|(_, _, m)| m.iter().map(|(_, p)| p.len() as u64))
        .sum::<u64>()
        * frames;
    let pb = std::io::IsTerminal::is_terminal(&std::io::stderr()).then(|| {
        let pb = indicatif::ProgressBar::new(total);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} frames {elapsed}/{eta} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    });
    let say = |line: String| match &pb {
        Some(pb) => pb.println(line),
        None => eprintln!("{line}"),
    };
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for (scene, cfg, mode_plans) in plan {
        // The alternatives (self-collision on and off) interleaved grid by grid.
        let mut skips: Vec<Option<String>> = vec![None; mode_plans.len()];
        let mut rows_of: Vec<_> = mode_plans
            .into_iter()
            .map(|(sc, row_plan)| (sc, row_plan.into_iter()))
            .collect();
        let alternatives = rows_of.len();
        let queue = (0..grids.len()).flat_map(|_| 0..alternatives);
        for mi in queue {
            let (sc, row_plan) = &mut rows_of[mi];
            let sc = *sc;
            let Some((n, (flags, run_args))) = row_plan.next() else {
                continue;
            };
            let skip = &mut skips[mi];
            let label = row_label(cfg, sc);
            let name = format!("{scene} {label} at {n}×{n}");
            if let Some(why) = &*skip {
                say(format!("{name}: skipped ({why})"));
                skipped.push(format!("{name} ({why})"));
                if let Some(pb) = &pb {
                    pb.inc(frames);
                }
                continue;
            }
            if let Some(pb) = &pb {
                pb.set_message(name.clone());
            }
            let mut done = 0u64;
            let (m, particles) = measure(&run_args, args.budget_ms, &mut || {
                done += 1;
                if let Some(pb) = &pb {
                    pb.inc(1);
                }
            })
            .map_or_else(|e| (Measured::failed(e), 0), |(m, w)| (m, w.cloth.len()));
            if let Some(pb) = &pb {
                pb.inc(frames - done);
            }
            say(format!(
                "{name}: {:.3} ms/frame (p95 {:.3})  {:.1} it/frame  strain {:.2e}  over tol \
                 {}/{} steps  held {}/{} frames  {}",
                m.ms.mean,
                m.ms.p95,
                m.iterations_per_frame,
                m.max_strain,
                m.steps_outside,
                m.steps,
                m.held_frames,
                m.frames_run,
                m.status.describe()
            ));
            *skip = match &m.status {
                Status::Completed if m.ms.mean > args.budget_ms => Some(format!(
                    "{n}×{n} took {:.1} ms/frame, over the {} ms budget",
                    m.ms.mean,
                    crate::sim::params::shown(args.budget_ms)
                )),
                Status::Completed => None,
                Status::OverBudget { .. } => Some(format!("{n}×{n} went over the budget")),
                Status::Diverged { .. } => Some(format!("{n}×{n} diverged")),
                Status::Failed { error, .. } => {
                    failures.push(format!("{name}: {error}"));
                    Some(format!("{n}×{n} failed"))
                }
            };
            // `setup` spelled the row's substeps out.
            let substeps = run_args.substeps.unwrap_or(1);
            let max_iterations = run_args.max_iterations();
            rows.push(AppRow {
                scene,
                grid: if scene.is_mesh() { 0 } else { n },
                particles,
                config: label.clone(),
                solver: cfg.solver,
                tolerance: cfg.tolerance(),
                baseline: cfg.tolerance.is_none(),
                substeps,
                max_iterations,
                frames,
                self_collision: sc,
                drags: run_args.drag.iter().map(Drag::to_string).collect(),
                measured: m,
                run_flags: flags,
            });
        }
    }
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let md = markdown(&rows, &opts, &skipped);
    print!("{md}");
    let mut errors = Vec::new();
    let mut write = |name: &str, bytes: &[u8]| {
        if let Err(e) = write_atomic(&out.join(name), bytes) {
            errors.push(format!("{name}: {e}"));
        }
    };
    write("bench.md", md.as_bytes());
    let json = Output {
        frame_s: FRAME,
        frames,
        threads: rayon::current_num_threads(),
        drag: drag_summary(&opts),
        rows: &rows,
        skipped: &skipped,
    };
    match serde_json::to_vec_pretty(&json) {
        Ok(j) => write("bench.json", &j),
        Err(e) => errors.push(format!("bench.json: {e}")),
    }
    let picked: Vec<String> = configs
        .iter()
        .flat_map(|c| modes.iter().map(|&sc| row_label(c, sc)))
        .collect();
    // The chart plots cost against grid side: the mesh scenes, of one size each, are in
    // the table only.
    let grid_scenes: Vec<ScenePreset> = scenes.iter().copied().filter(|s| !s.is_mesh()).collect();
    if let Err(e) = atomic_png(&out.join("ms_per_frame.png"), |p| {
        plot(p, &rows, &grid_scenes, &picked)
    }) {
        errors.push(format!("ms_per_frame.png: {e}"));
    }
    if !errors.is_empty() {
        return fail(format!("could not write: {}", errors.join("; ")), 1);
    }
    if !failures.is_empty() {
        return fail(
            format!(
                "{} row(s) failed (all rows were written to {}): {}",
                failures.len(),
                out.display(),
                failures.join("; ")
            ),
            1,
        );
    }
    eprintln!(
        "wrote {}",
        out.join("bench.{md,json} and ms_per_frame.png").display()
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row with self-collision gets its frame over the same row's without it; a row
    /// without, or with no partner, gets none. Every row gets its slowest frame over its
    /// median one, where it has a median.
    #[test]
    fn the_table_divides_a_row_with_self_collision_by_its_row_without() {
        let row = |self_collision: bool, grid: usize, mean: f64| {
            let cfg = converging(SolverKind::Newton, 1e-4);
            let mut measured = Measured::failed(String::new());
            measured.ms.mean = mean;
            if grid == 30 {
                (measured.ms.p50, measured.ms.max) = (mean / 3.0, 1.5 * mean);
            }
            AppRow {
                scene: ScenePreset::Drape,
                grid,
                particles: grid * grid,
                config: row_label(&cfg, self_collision),
                solver: SolverKind::Newton,
                tolerance: 1e-4,
                baseline: false,
                substeps: 1,
                max_iterations: 0,
                frames: 1,
                self_collision,
                drags: Vec::new(),
                measured,
                run_flags: Vec::new(),
            }
        };
        let rows = [
            row(true, 30, 30.0),
            row(false, 30, 12.0),
            row(true, 50, 9.0),
        ];
        assert!(std::ptr::eq(
            without_self_collision(&rows, &rows[0]).unwrap(),
            &rows[1]
        ));
        assert!(without_self_collision(&rows, &rows[1]).is_none());
        assert!(without_self_collision(&rows, &rows[2]).is_none());
        let md = markdown(&rows, &Options::default(), &[]);
        let cells = |grid: &str| -> Vec<String> {
            let line = md.lines().find(|l| l.contains(grid)).unwrap();
            line.split('|').map(|c| c.trim().to_string()).collect()
        };
        // The ratio is the column before the status: 30 / 12.
        let on = cells("| 30×30 | newton | 1e-4 | on |");
        assert_eq!(on[on.len() - 3], "2.50", "{md}");
        let alone = cells("50×50");
        assert_eq!(alone[alone.len() - 3], "—", "{md}");
        // Slowest over median, after the p95 and the slowest frame: 45 / 10, and none
        // without a median.
        assert_eq!((on[9].as_str(), on[10].as_str()), ("45.000", "4.5"), "{md}");
        assert_eq!(alone[10], "—", "{md}");
    }

    /// A row is the `run` its flags describe: stepped by `run`'s own loop ([`simulate`]) the
    /// flags give the same positions and the same worst strain, bit for bit (one thread, so
    /// the order of every sum is fixed). The drag is held and beyond reach, so the
    /// comparison is of a run whose hand pulled the cloth against its pins.
    ///
    /// [`simulate`]: super::super::run::simulate
    #[test]
    fn a_row_is_the_run_its_flags_describe() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        pool.install(|| {
            for (scene, cfg) in [
                (ScenePreset::Hanging, converging(SolverKind::Strips, 1e-4)),
                (ScenePreset::Flag, converging(SolverKind::Iterative, 1e-4)),
            ] {
                let opts = Options {
                    frames: 12,
                    ..Options::default()
                };
                let (flags, args) = setup(scene, 8, &cfg, &opts).unwrap();
                let (m, world) = measure(&args, f64::INFINITY, &mut || {}).unwrap();
                assert!(matches!(m.status, Status::Completed), "{:?}", m.status);
                assert!(m.held_frames > 0, "{scene}: the drag never held");
                assert!(m.iterations_per_frame > 0.0, "{scene}: {m:?}");
                let again = RunArgs::from_flags(&flags).unwrap();
                let report =
                    super::super::run::simulate(&again, build_world(&again).unwrap(), None);
                assert_eq!(report.error, None);
                assert_eq!(report.max_strain, m.max_strain, "{scene}");
                let x: Vec<[f64; 3]> = world
                    .cloth
                    .particles
                    .x
                    .iter()
                    .map(|p| p.to_array())
                    .collect();
                assert_eq!(report.final_positions, x, "{scene}");
            }
        });
    }

    /// The built-in drags of the pinned scenes pull to a point the cloth cannot reach: at
    /// least half a metre farther from every pin than the particle can be with every
    /// constraint at its rest length (the shortest path along the grid's edges). They act
    /// at 1, 2 and 3.5 s of the default 4 s.
    #[test]
    fn built_in_drags_are_beyond_reach() {
        let cfg = converging(SolverKind::Strips, 1e-4);
        // The bench's drags at least 0.5 m beyond reach, the far set (`--far`) 2 m, and
        // held there 1.5 and 2 s of the 4.
        for (far, beyond, times) in [
            (false, 0.5, (1.0, 2.0, Some(3.5))),
            (true, 2.0, (0.5, 1.5, Some(3.5))),
        ] {
            let opts = Options {
                frames: 240,
                far,
                ..Options::default()
            };
            for scene in [
                ScenePreset::Hanging,
                ScenePreset::Curtain,
                ScenePreset::Flag,
            ] {
                for n in [5, 30, 100] {
                    let (_, args) = setup(scene, n, &cfg, &opts).unwrap();
                    let world = build_world(&args).unwrap();
                    let [d] = args.drag[..] else {
                        panic!("{scene}: one built-in drag, got {:?}", args.drag)
                    };
                    let p = &world.cloth.particles;
                    let spacing = world.cloth.topology.rest[0];
                    let pins: Vec<usize> = (0..p.len()).filter(|&i| p.inv_mass[i] == 0.0).collect();
                    assert!(!pins.is_empty(), "{scene}");
                    for &k in &pins {
                        let (a, b) = (k % n, k / n);
                        let (c, r) = (d.particle % n, d.particle / n);
                        let reach = (a.abs_diff(c) + b.abs_diff(r)) as f64 * spacing;
                        let dist = p.x[k].distance(d.to);
                        assert!(
                            dist > reach + beyond,
                            "{scene} {n}×{n} far {far}: pin {k} is {dist} m from the target, \
                             reach {reach}"
                        );
                    }
                    assert_eq!((d.start, d.arrive, d.release), times);
                }
            }
        }
    }
}
