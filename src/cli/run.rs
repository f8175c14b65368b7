//! `impulse-cloth run`: one headless simulation, exported as a JSON report and OBJ frames.

use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use glam::DVec3;
use serde::Serialize;

use super::check_flag;
use super::{BallArg, GridArg, Vec3Arg, non_negative, positive};
use crate::config;
use crate::output::{check_writable, write_atomic};
use crate::sim::mesh::ConstraintChoice;
use crate::sim::params;
use crate::sim::scene::MeshSource;
use crate::sim::{
    Ball, Drag, DragScript, PhaseTimings, PinSpec, ScenePreset, SceneSpec, SimError, SimParams,
    SolverKind, StepStats, World,
};

/// Flags of `run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Scene: hanging (004 §4 with `--slack 0`), curtain, drape (over a ball), flag (in the
    /// wind), curtain-rod, pile (dropped onto the ground), fold (a corner lifted across),
    /// tablecloth, flag-hole, skirt, square (meshes), tear (a sheet pulled until it rips).
    #[arg(long, default_value_t = config::SCENE)]
    pub scene: ScenePreset,
    /// Grid: N (N×N) or WxH particles.
    #[arg(long, default_value_t = GridArg::square(config::GRID))]
    pub grid: GridArg,
    /// Longer side of the cloth, m.
    #[arg(long, allow_hyphen_values = true, default_value_t = 1.0, value_parser = positive)]
    pub size: f64,
    /// Total mass, kg.
    #[arg(long, allow_hyphen_values = true, default_value_t = 0.2, value_parser = positive)]
    pub mass: f64,
    /// Solver: iterative, sle, verlet, strips, strain-limit, newton [default: the scene's,
    /// as in the app: strips on a grid, newton on a mesh].
    #[arg(long)]
    pub solver: Option<SolverKind>,
    /// Allowed relative strain |d−L|/L [default: 1e-4].
    #[arg(long, allow_hyphen_values = true, value_parser = positive)]
    pub tolerance: Option<f64>,
    /// Iteration cap per pass (0 = none; the safety cap still applies) [default: the
    /// solver's, as in the app: 0].
    #[arg(long, allow_negative_numbers = true)]
    pub max_iterations: Option<u32>,
    /// Verlet relaxation passes per step.
    #[arg(long, allow_negative_numbers = true, default_value_t = 10)]
    pub verlet_passes: u32,
    /// Strain-limit solver: largest stretch b, relative (001: 0.10).
    #[arg(long, allow_hyphen_values = true, default_value_t = 0.10, value_parser = positive)]
    pub limit_stretch: f64,
    /// Strain-limit solver: largest compression a, relative (001: 0.02).
    #[arg(long, allow_hyphen_values = true, default_value_t = 0.02, value_parser = positive)]
    pub limit_compress: f64,
    /// Strain-limit solver: linear solves per step (1 = 001 §4 exactly).
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::sim::StrainLimits::default().passes)]
    pub limit_passes: u32,
    /// SLE: solves per position pass.
    #[arg(long, allow_negative_numbers = true, default_value_t = SimParams::default().sle_max_solves)]
    pub max_solves: u32,
    /// Newton: Newton steps (one factorisation each) per position pass before strips
    /// finish it.
    #[arg(long, allow_negative_numbers = true, default_value_t = SimParams::default().newton_max_steps)]
    pub newton_steps: u32,
    /// Frame time, s: each step of the run is one frame of this length, split into
    /// `--substeps`.
    #[arg(long, allow_hyphen_values = true, default_value_t = config::FRAME, value_parser = positive)]
    pub dt: f64,
    /// Number of steps (frames of `--dt`), at most 10 000 000.
    #[arg(long, allow_negative_numbers = true, default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(0..=MAX_STEPS))]
    pub steps: u64,
    /// Split every step into this many substeps of dt/K (statistics are per step)
    /// [default: the solver's, as in the app: 1 for newton, 4 for strips, 10 otherwise].
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub substeps: Option<u32>,
    /// Random seed for the initial velocities.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (0 = all cores; at most 4 × the cores available).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub threads: usize,
    /// Pins: corners, top-edge, left-edge, none (any case), or row-major indices like 0,19.
    #[arg(long, value_parser = super::pins)]
    pub pin: Option<PinSpec>,
    /// Move the pins inward by this fraction of the edge (the cloth starts bent, unstretched)
    /// [default: the scene's, as in the app: 0.1 for hanging, 0 otherwise].
    #[arg(long, allow_hyphen_values = true, value_parser = non_negative)]
    pub slack: Option<f64>,
    /// Do not hold taut chains (rows or columns pulled straight between two pins at exactly
    /// their rest length) static; solve their particles like the others.
    #[arg(long)]
    pub no_taut_lock: bool,
    /// Gravity x,y,z in m/s².
    #[arg(long, default_value = "0,-9.81,0", allow_hyphen_values = true)]
    pub gravity: Vec3Arg,
    /// Self-collision on or off (`true`/`false`) [default: on, as in the app].
    #[arg(long, value_name = "BOOL")]
    pub self_collision: Option<bool>,
    /// Self-collision off until this step (of `--dt`), then on: the cloth switched on over
    /// what it did without it, as the panel's checkbox does (a fold laid through itself is
    /// untangled).
    #[arg(long, value_name = "STEP", conflicts_with = "self_collision")]
    pub self_collision_from: Option<u64>,
    /// Cloth thickness for self-contact, m (capped at half the shortest edge).
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::sim::params::DEFAULT_THICKNESS)]
    pub thickness: f64,
    /// How many times a step may be halved where self-contact's fail-safe would hold the
    /// whole cloth (0: never; at most 6).
    #[arg(long, value_name = "N", default_value_t = crate::sim::params::DEFAULT_MAX_SPLITS)]
    pub max_splits: u32,
    /// Coulomb friction coefficient of every contact (ball, ground, self).
    #[arg(long, allow_negative_numbers = true, default_value_t = SimParams::default().friction)]
    pub friction: f64,
    /// Tear strength, N/m: a constraint whose tension exceeds this times its rest length
    /// breaks and the cloth tears there [default: none — it never tears — except in the
    /// tear scene: 4].
    #[arg(long, allow_negative_numbers = true)]
    pub tear_strength: Option<f64>,
    /// Fraction of particles given a random initial velocity (default: the scene's).
    #[arg(long, allow_hyphen_values = true, value_parser = non_negative)]
    pub perturb: Option<f64>,
    /// Wind velocity x,y,z in m/s (turns wind on).
    #[arg(long, allow_hyphen_values = true)]
    pub wind: Option<Vec3Arg>,
    /// A still ball x,y,z,r (m).
    #[arg(long, allow_hyphen_values = true)]
    pub ball: Option<BallArg>,
    /// A scripted drag, `I:X,Y,Z:T0:T1[:T2]` (repeatable): at T0 s grab particle I (row-major),
    /// move its target on a line from where it is to the point X,Y,Z (m), arriving at T1,
    /// hold it there, let go at T2 (never if omitted) — what a mouse drag in the app does.
    #[arg(long, value_name = "I:X,Y,Z:T0:T1[:T2]", allow_hyphen_values = true)]
    pub drag: Vec<Drag>,
    /// Build the cloth on this triangle mesh (Wavefront OBJ) instead of the grid or the
    /// scene's own mesh: scaled so its longest side is `--size`, centred, its top at
    /// 1.2 × size (README, "Your own mesh").
    #[arg(long, value_name = "PATH")]
    pub mesh: Option<PathBuf>,
    /// Which edges of a mesh are distance constraints: `quads` (triangles paired into
    /// quads, their sides constrained, their diagonals shear springs) or `all-edges`
    /// (every edge: the mesh locks; kept to measure that).
    #[arg(long, default_value_t = ConstraintChoice::Quads, value_parser = super::constraint_choice)]
    pub constraints: ConstraintChoice,
    /// Write a JSON report here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Record positions and velocities every K steps into the report (and OBJ frames).
    #[arg(long, allow_negative_numbers = true, value_name = "K")]
    pub positions_every: Option<u64>,
    /// Write one OBJ file per recorded frame into this directory.
    #[arg(long, value_name = "DIR")]
    pub obj_dir: Option<PathBuf>,
    /// No summary table.
    #[arg(long)]
    pub quiet: bool,
}

impl RunArgs {
    /// The run that `impulse-cloth run FLAGS` describes, read by the same parser (defaults,
    /// value checks and all): how another front end (`bench app`) sets up a run that `run`
    /// with the same flags reproduces exactly.
    pub fn from_flags<I, T>(flags: I) -> Result<RunArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::Parser;
        #[derive(Parser)]
        #[command(name = "impulse-cloth run")]
        struct Run {
            #[command(flatten)]
            args: RunArgs,
        }
        let argv = std::iter::once(std::ffi::OsString::from("run"))
            .chain(flags.into_iter().map(Into::into));
        Run::try_parse_from(argv).map(|r| r.args)
    }

    /// The tolerance: `--tolerance`, else the default ([`config::TOLERANCE`]).
    pub fn tolerance(&self) -> f64 {
        self.tolerance.unwrap_or(config::TOLERANCE)
    }

    /// The solver: `--solver`, else the scene's ([`config::solver`]).
    pub fn solver(&self) -> SolverKind {
        self.solver
            .unwrap_or(config::solver(self.scene, self.mesh.is_some()))
    }

    /// Substeps per step on `world`'s cloth: `--substeps`, else the solver's on it
    /// ([`config::substeps`]: the strips' follow the cloth's spacing).
    pub fn frame_steps(&self, world: &World) -> u32 {
        self.substeps
            .unwrap_or_else(|| config::substeps(self.solver(), &world.cloth))
    }

    /// Iteration cap: `--max-iterations`, else the solver's ([`config::iteration_cap`]).
    pub fn max_iterations(&self) -> u32 {
        self.max_iterations
            .unwrap_or(config::iteration_cap(self.solver()))
    }

    /// Slack: `--slack`, else the scene's ([`config::slack`]).
    pub fn slack(&self) -> f64 {
        self.slack.unwrap_or(config::slack(self.scene))
    }
}

/// How the strain-limit solver (001) kept its limits over a run.
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct LimitSummary {
    /// Largest relative stretch b.
    pub stretch: f64,
    /// Largest relative compression a.
    pub compress: f64,
    /// Linear solves allowed per step.
    pub passes: u32,
    /// Fraction of (spring, step) samples outside [a, b] by more than the tolerance.
    pub outside_fraction: f64,
    /// Largest distance beyond a limit, relative to the rest length.
    pub worst_excess: f64,
    /// Steps that solved a system.
    pub solved_steps: u64,
    /// Steps that redid the fill-reducing ordering and symbolic factorisation (001 §7).
    pub symbolic_analyses: u64,
}

/// Percentile summary of per-step times, ms.
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct TimeSummary {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Maximum.
    pub max: f64,
}

impl TimeSummary {
    /// Summarise a list of durations.
    pub fn of(times: &[Duration]) -> TimeSummary {
        if times.is_empty() {
            return TimeSummary::default();
        }
        let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let pick = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
        TimeSummary {
            mean: ms.iter().sum::<f64>() / ms.len() as f64,
            p50: pick(0.5),
            p95: pick(0.95),
            max: *ms.last().unwrap(),
        }
    }
}

/// Mean wall time of each phase of a step, ms: where a step's time goes. Self-contact
/// ([`SelfSummary::ms_per_step`]) is part of `collision` (a step's first detection)
/// and `position` (the contact rounds' detections and the fail-safe).
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct PhaseMs {
    /// Forces: the hand, gravity, wind, springs.
    pub forces: f64,
    /// Collision: the ball's motion and the step's first self-contact detection.
    pub collision: f64,
    /// Position pass, with its contact rounds and the fail-safe.
    pub position: f64,
    /// Integration of the positions.
    pub integration: f64,
    /// Velocity pass.
    pub velocity: f64,
}

impl PhaseMs {
    /// The means of `timings`.
    pub fn of(timings: &[PhaseTimings]) -> PhaseMs {
        let n = timings.len().max(1) as f64;
        let mean = |f: fn(&PhaseTimings) -> Duration| {
            timings.iter().map(|t| f(t).as_secs_f64()).sum::<f64>() * 1e3 / n
        };
        PhaseMs {
            forces: mean(|t| t.forces),
            collision: mean(|t| t.collision),
            position: mean(|t| t.position),
            integration: mean(|t| t.integration),
            velocity: mean(|t| t.velocity),
        }
    }
}

/// Iteration summary.
#[derive(Debug, Clone, Copy, Serialize, Default)]
pub struct IterSummary {
    /// Mean position-pass iterations.
    pub mean: f64,
    /// Largest.
    pub max: u32,
}

/// One recorded frame.
#[derive(Debug, Clone, Serialize)]
pub struct Frame {
    /// Step index (0 = initial state).
    pub step: u64,
    /// Positions.
    pub positions: Vec<[f64; 3]>,
    /// Velocities.
    pub velocities: Vec<[f64; 3]>,
    /// The particle held (by a `--drag`) when the frame was recorded, if any.
    pub grabbed: Option<usize>,
    /// Where the held particle is being pulled, m, if one is held.
    pub grab_target: Option<[f64; 3]>,
    /// The cloth's topology, where it differs from the frame recorded before (a tear or a
    /// cut): what the positions of this frame and the next are to be read with.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyRecord>,
    /// The particles' inverse masses, where they differ from the frame recorded before
    /// (0 = static; the held particle is the hand's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inverse_masses: Option<Vec<f64>>,
}

/// A cloth's topology as a report gives it.
#[derive(Debug, Clone, Serialize)]
pub struct TopologyRecord {
    /// Particles.
    pub particles: usize,
    /// Triangles (particle triples).
    pub triangles: Vec<[u32; 3]>,
    /// Structural constraints as particle pairs.
    pub edges: Vec<[u32; 2]>,
    /// Their rest lengths.
    pub rest_lengths: Vec<f64>,
}

impl TopologyRecord {
    fn of(world: &World) -> TopologyRecord {
        let t = &world.cloth.topology;
        TopologyRecord {
            particles: world.cloth.len(),
            triangles: t.triangles.clone(),
            edges: t.edges.clone(),
            rest_lengths: t.rest.clone(),
        }
    }
}

/// What tearing did over a run ([`crate::sim::mesh::tear`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct TearSummary {
    /// Tear strength, N/m (null: the cloth never tears).
    pub strength: Option<f64>,
    /// Constraints broken.
    pub broken: u64,
    /// Mesh edges torn open.
    pub torn_edges: usize,
    /// Steps in which something broke.
    pub tear_steps: u64,
    /// Slowest tear (choosing the cuts and rebuilding the cloth), ms.
    pub max_tear_ms: f64,
    /// Particles at the end (the start's plus the copies the tears made).
    pub final_particles: usize,
    /// The topology at the end, if tears changed it (`final_positions` are read with it).
    pub final_topology: Option<TopologyRecord>,
    /// Inverse masses at the end, if tears changed the cloth.
    pub final_inverse_masses: Option<Vec<f64>>,
}

/// What self-contact did over a run ([`crate::sim::contact`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SelfSummary {
    /// Self-collision was on (`--self-collision`, else the scene's default), at least from
    /// `from_step` on.
    pub enabled: bool,
    /// The step it was switched on at (`--self-collision-from`), if it was.
    pub from_step: Option<u64>,
    /// Cloth thickness, m (before the cap at half the shortest edge).
    pub thickness: f64,
    /// Friction coefficient of every contact.
    pub friction: f64,
    /// Most self-contact rows in a step.
    pub max_contacts: u32,
    /// Steps in which the fail-safe formed an impact zone.
    pub zone_steps: u64,
    /// Impact zones over the run.
    pub zones: u64,
    /// Most particles in the zones of one step.
    pub max_zone_particles: u32,
    /// Steps in which the cloth was projected around the zones, each a rigid body.
    pub projection_steps: u64,
    /// Newton iterations of those projections over the run.
    pub projection_iterations: u64,
    /// Projections given up where their iteration stalled (the step was halved instead).
    pub stalled_projections: u64,
    /// Steps in which the cloth was solved again around the zones.
    pub resolve_steps: u64,
    /// Steps whose zones left an edge at their border beyond the tolerance.
    pub cut_short_steps: u64,
    /// Steps whose zones held every particle that can move (the whole cloth moved
    /// rigidly).
    pub whole_zone_steps: u64,
    /// Steps whose repairs would have held every particle that can move — grown over a
    /// cloth that began the step intersection-free (with halvings allowed), or held where
    /// it began — and that kept the contacts' zones instead, their borders left stretched.
    pub growth_undone_steps: u64,
    /// Steps in which the contacts' zones, halved as deep as allowed, would still have held
    /// every particle that can move of a clean cloth, and each particle moved within its
    /// displacement bound instead ([`crate::sim::StepStats::zone_bounded`]).
    pub bounded_steps: u64,
    /// Steps halved (at least once) because the fail-safe would have held the whole cloth
    /// ([`crate::sim::SimParams::max_splits`]), or begun halved after such a step.
    pub split_steps: u64,
    /// Of those, steps begun halved as deep as the step before them needed, without an
    /// attempt of their own to undo ([`crate::sim::StepStats::planned_splits`]).
    pub planned_split_steps: u64,
    /// Of the whole-cloth steps, those whose zones by contact alone, before any growth,
    /// held every particle that can move (the contacts span the cloth).
    pub whole_by_contact_steps: u64,
    /// Steps that ended with (edge, triangle) pairs passing through each other.
    pub crossing_steps: u64,
    /// Most such pairs at the end of a step.
    pub max_crossings: u32,
    /// Broad-phase gathers of candidates over the run (detection's unit of cost).
    pub gathers: u64,
    /// Gathers of only the pairs around a few strayed particles over the run.
    pub regathers: u64,
    /// Wall time of self-contact (detection, fail-safe, crossing count) per step, ms, mean.
    pub ms_per_step: f64,
}

/// Work a run did, summed over its steps (numbers that do not depend on the machine).
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkSummary {
    /// Numeric factorisations of the direct solvers.
    pub factorizations: u64,
    /// Strips sweeps that finished a direct solver's position pass.
    pub polish_sweeps: u64,
    /// Position passes re-run for contact.
    pub contact_rounds: u64,
    /// Steps whose contact rounds stopped after two passes in a row ran to their cap.
    pub contact_rounds_cut_steps: u64,
    /// Steps where Newton's pass ended without the obstacles' friction, which only a
    /// stretched cloth could have held (`newton::RUB_POLISH`).
    pub unrubbed_steps: u64,
}

/// The JSON report of `run`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Solver name.
    pub solver: SolverKind,
    /// Scene name.
    pub scene: ScenePreset,
    /// [W, H] of a grid cloth; null for a mesh.
    pub grid: Option<[usize; 2]>,
    /// The mesh the cloth was built on (a file name), if not a grid.
    pub mesh: Option<String>,
    /// Time step (frame), s.
    pub dt: f64,
    /// Substeps per step.
    pub substeps: u32,
    /// Steps completed.
    pub steps: u64,
    /// Tolerance used.
    pub tolerance: f64,
    /// Iteration cap (0 = none).
    pub max_iterations: u32,
    /// Worker threads.
    pub threads: usize,
    /// Seed.
    pub seed: u64,
    /// Particles.
    pub particles: usize,
    /// Structural distance constraints.
    pub constraints: usize,
    /// Shear + bend springs.
    pub springs: usize,
    /// Inverse masses at the start (0 = pinned).
    pub inverse_masses: Vec<f64>,
    /// Structural constraints as particle pairs.
    pub edges: Vec<[u32; 2]>,
    /// Their rest lengths.
    pub rest_lengths: Vec<f64>,
    /// The cloth's triangles (particle triples, counter-clockwise seen from the front): with
    /// `edges`, what a reader needs to count crossings from the positions.
    pub triangles: Vec<[u32; 3]>,
    /// Per-step wall time, ms.
    pub ms_per_step: TimeSummary,
    /// Per-step wall time of each phase, ms, mean.
    pub phase_ms: PhaseMs,
    /// Position-pass iterations.
    pub iterations: IterSummary,
    /// Largest |d−L|/L over the structural constraints after any step.
    pub max_strain: f64,
    /// Steps that ended with some constraint outside the tolerance.
    pub capped_steps: u64,
    /// SLE steps that fell back to the iterative solver.
    pub fallback_steps: u64,
    /// Work over the run, in units that do not depend on the machine.
    pub work: WorkSummary,
    /// Whether taut chains were held static (`--no-taut-lock` turns it off).
    pub taut_lock: bool,
    /// Self-contact: whether it was on, and what it found ([`SelfSummary`]).
    pub self_contact: SelfSummary,
    /// Tearing: the strength and what broke ([`TearSummary`]).
    pub tear: TearSummary,
    /// Most particles held static as part of a taut chain in any step.
    pub locked_particles: u32,
    /// Error that stopped the run, if any.
    pub error: Option<String>,
    /// Positions after the last completed step.
    pub final_positions: Vec<[f64; 3]>,
    /// Strain-limit solver only: how well the limits held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strain_limit: Option<LimitSummary>,
    /// Recorded frames (with `--positions-every`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<Vec<Frame>>,
}

fn arr(v: &[DVec3]) -> Vec<[f64; 3]> {
    v.iter().map(|p| p.to_array()).collect()
}

/// Check every numeric flag of `run` before a world is built, so an error names the flag
/// and the value the user gave (not a field of [`SimParams`], not dt/substeps).
fn check_flags(args: &RunArgs) -> Result<(), String> {
    check_flag("--size", &params::SCENE_SIZE, args.size)?;
    check_flag("--mass", &params::SCENE_MASS, args.mass)?;
    check_flag("--slack", &params::SCENE_SLACK, args.slack())?;
    check_flag("--thickness", &params::THICKNESS, args.thickness)?;
    check_flag("--max-splits", &params::MAX_SPLITS, args.max_splits as f64)?;
    check_flag("--friction", &params::FRICTION, args.friction)?;
    if let Some(t) = args.tear_strength {
        check_flag("--tear-strength", &params::TEAR_STRENGTH, t)?;
    }
    if let Some(t) = args.tolerance {
        check_flag("--tolerance", &params::TOLERANCE, t)?;
    }
    check_flag(
        "--max-iterations",
        &params::MAX_ITERATIONS,
        args.max_iterations().into(),
    )?;
    check_flag(
        "--verlet-passes",
        &params::VERLET_PASSES,
        args.verlet_passes.into(),
    )?;
    check_flag(
        "--limit-stretch",
        &params::LIMIT_STRETCH,
        args.limit_stretch,
    )?;
    check_flag(
        "--limit-compress",
        &params::LIMIT_COMPRESS,
        args.limit_compress,
    )?;
    check_flag(
        "--limit-passes",
        &params::LIMIT_PASSES,
        args.limit_passes.into(),
    )?;
    check_flag(
        "--max-solves",
        &params::SLE_MAX_SOLVES,
        args.max_solves.into(),
    )?;
    check_flag(
        "--newton-steps",
        &params::NEWTON_MAX_STEPS,
        args.newton_steps.into(),
    )?;
    for c in args.gravity.0.to_array() {
        check_flag("--gravity component", &params::GRAVITY, c)?;
    }
    if let Some(w) = args.wind {
        for c in w.0.to_array() {
            check_flag("--wind component", &params::WIND_VELOCITY, c)?;
        }
    }
    if let Some(b) = args.ball {
        check_flag("--ball radius", &params::BALL_RADIUS, b.radius)?;
    }
    // The step the solver takes is dt/substeps; the solver's own substeps are known once
    // the cloth is built (`build_world`).
    if let Some(n) = args.substeps {
        check_step(args, n)?;
    }
    Ok(())
}

/// Whether `--dt` over `substeps` steps is a valid step; the error gives the values the
/// user typed.
fn check_step(args: &RunArgs, substeps: u32) -> Result<(), String> {
    let h = args.dt / substeps as f64;
    if params::DT.reason(h).is_some() {
        let (lo, hi) = (params::shown(params::DT.min), params::shown(params::DT.max));
        return Err(if substeps == 1 {
            format!(
                "--dt {}: the time step must be in [{lo}, {hi}] s",
                params::shown(args.dt)
            )
        } else if args.substeps.is_none() {
            format!(
                "--dt {}: the {} solver takes {} steps a frame on this cloth, so each \
                 would be {} s, but dt/substeps must be in [{lo}, {hi}] s (give --substeps)",
                params::shown(args.dt),
                args.solver(),
                substeps,
                params::shown(h)
            )
        } else {
            format!(
                "--dt {} with --substeps {}: each substep would be {} s, but dt/substeps \
                 must be in [{lo}, {hi}] s",
                params::shown(args.dt),
                substeps,
                params::shown(h)
            )
        });
    }
    Ok(())
}

/// Build the world a `run` describes. Every flag is checked first
/// and errors name the flag; what only the built scene can tell (an index in `--pin`, a
/// preset's ball at a tiny `--size`) is reported with the flag where one applies.
pub fn build_world(args: &RunArgs) -> Result<World, String> {
    check_flags(args)?;
    let mut params = SimParams {
        // A valid step until the cloth is built and its steps are known (set below).
        dt: (args.dt / args.substeps.unwrap_or(1) as f64).clamp(params::DT.min, params::DT.max),
        gravity: args.gravity.0,
        tolerance: args.tolerance(),
        max_iterations: args.max_iterations(),
        verlet_passes: args.verlet_passes,
        sle_max_solves: args.max_solves,
        newton_max_steps: args.newton_steps,
        lock_taut_chains: !args.no_taut_lock,
        self_collision: match args.self_collision_from {
            Some(from) => from == 0,
            None => args.self_collision.unwrap_or(config::SELF_COLLISION),
        },
        thickness: args.thickness,
        max_splits: args.max_splits,
        friction: args.friction,
        tear_strength: args.tear_strength,
        ..SimParams::default()
    };
    params.strain_limits.stretch = args.limit_stretch;
    params.strain_limits.compress = args.limit_compress;
    params.strain_limits.passes = args.limit_passes;
    if let Some(w) = args.wind {
        params.wind.enabled = true;
        params.wind.velocity = w.0;
    }
    if let Some(b) = args.ball {
        params.ball = Some(Ball::still(b.center, b.radius));
    }
    let mut spec = SceneSpec::new(args.scene, args.grid.width, args.grid.height);
    if let Some(path) = &args.mesh {
        if args.slack.is_some_and(|s| s > 0.0) {
            return Err(
                "--slack bends a grid's rows; a mesh is built as its file shapes it (drop --slack or --mesh)"
                    .into(),
            );
        }
        let mesh = crate::sim::mesh::obj::read(path)
            .map_err(|e| format!("--mesh {}: {e}", path.display()))?;
        spec.set_mesh(Some(MeshSource {
            name: path.display().to_string(),
            mesh: std::sync::Arc::new(mesh),
        }));
    }
    spec.constraints = args.constraints;
    spec.size = args.size;
    spec.mass = args.mass;
    spec.slack = args.slack();
    spec.seed = args.seed;
    if let Some(p) = &args.pin {
        spec.pins = p.clone();
    }
    if let Some(p) = args.perturb {
        spec.perturb = p;
    }
    let mut world = spec.build(params).map_err(|e| match &e {
        // The drape preset's ball is sized from --size when no --ball was given.
        SimError::InvalidParameter { name, reason }
            if name.starts_with("ball") && args.ball.is_none() =>
        {
            format!(
                "--size {}: the radius of the {} scene's ball (0.25 × size): {reason}",
                params::shown(args.size),
                args.scene
            )
        }
        // Every other flag was checked against its description by `check_flags`; only
        // `--perturb`'s upper bound is the scene's own.
        SimError::InvalidParameter { name, reason } if *name == "perturb" => {
            format!("--perturb: {reason}")
        }
        SimError::ParticleOutOfRange { .. } => format!("--pin: {e}"),
        SimError::Mesh(crate::sim::mesh::MeshError::NoGroup { .. }) => format!("--pin: {e}"),
        SimError::InvalidParameter { name, .. } if *name == "pin" => format!("--pin: {e}"),
        _ => e.to_string(),
    })?;
    let substeps = args.frame_steps(&world);
    if args.substeps.is_none() {
        // `check_flags` checked the steps given; the solver's are known only now.
        check_step(args, substeps)?;
    }
    config::set_frame_steps(&mut world, args.solver(), args.dt, Some(substeps));
    for d in &args.drag {
        d.validate(world.cloth.len())
            .map_err(|e| format!("--drag {d}: {e}"))?;
    }
    Ok(world)
}

/// The drags of a run: `--drag`, else the scene's own script ([`ScenePreset::script`]).
pub fn run_drags(args: &RunArgs, world: &World) -> Vec<Drag> {
    if args.drag.is_empty() {
        args.scene.script(world).into_iter().collect()
    } else {
        args.drag.clone()
    }
}

/// Most steps `run` and `bench` accept (a per-step record is kept for each: 10⁷ steps of
/// 1/30 s are 3.8 days of simulated time).
pub const MAX_STEPS: u64 = 10_000_000;

/// Where `--obj-dir` gets the frame of `step`.
fn obj_path(dir: &Path, step: u64) -> PathBuf {
    dir.join(format!("frame_{step:06}.obj"))
}

fn write_obj(dir: &Path, step: u64, world: &World) -> std::io::Result<()> {
    let body = crate::sim::mesh::obj::write(
        &world.cloth.particles.x,
        &world.cloth.topology.triangles,
        &[],
    );
    let s = format!("# impulse-cloth step {step}\n{body}");
    write_atomic(&obj_path(dir, step), s.as_bytes())
}

/// The name `run`'s report gives the cloth's mesh: the `--mesh` path, else the scene's own
/// mesh file, else none (a grid).
fn mesh_name(args: &RunArgs) -> Option<String> {
    match &args.mesh {
        Some(p) => Some(p.display().to_string()),
        None => args.scene.shipped_mesh().map(|(name, _)| name.to_string()),
    }
}

/// One frame of `substeps` world steps, with statistics merged over the substeps: times and
/// iterations add up, strains and flags are the worst of any substep.
pub fn step_frame(
    world: &mut World,
    solver: &mut dyn crate::sim::Solver,
    substeps: u32,
    drags: &mut DragScript,
) -> Result<StepStats, crate::sim::SimError> {
    step_frame_observed(world, solver, substeps, drags, &mut |_| {})
}

/// [`step_frame`], handing the statistics of every completed substep to `each` before they
/// are merged: what the merged figures cannot tell, such as how many substeps ended outside
/// the tolerance (`bench app`).
pub fn step_frame_observed(
    world: &mut World,
    solver: &mut dyn crate::sim::Solver,
    substeps: u32,
    drags: &mut DragScript,
    each: &mut dyn FnMut(&StepStats),
) -> Result<StepStats, crate::sim::SimError> {
    drags.before_step(world)?;
    let mut total = world.step(solver)?;
    each(&total);
    for _ in 1..substeps {
        drags.before_step(world)?;
        let s = world.step(solver)?;
        each(&s);
        total.absorb(&s);
    }
    Ok(total)
}

/// Run a simulation to completion (or to a non-finite step). Returns the report.
pub fn simulate(
    args: &RunArgs,
    mut world: World,
    progress: Option<&indicatif::ProgressBar>,
) -> Report {
    let mut solver = args.solver().create();
    let mut drags = DragScript::new(run_drags(args, &world), world.cloth.len())
        .expect("build_world checked the drags");
    let substeps = args.frame_steps(&world);
    let topo = &world.cloth.topology;
    let mut report = Report {
        solver: args.solver(),
        scene: args.scene,
        grid: topo.grid.map(|g| [g.width, g.height]),
        mesh: mesh_name(args),
        triangles: topo.triangles.clone(),
        dt: world.params.dt * substeps as f64,
        substeps,
        steps: 0,
        tolerance: world.params.tolerance,
        max_iterations: world.params.max_iterations,
        threads: rayon::current_num_threads(),
        seed: args.seed,
        particles: world.cloth.len(),
        constraints: topo.edges.len(),
        springs: topo.springs.len(),
        inverse_masses: world.cloth.particles.inv_mass().to_vec(),
        edges: topo.edges.clone(),
        rest_lengths: topo.rest.clone(),
        ms_per_step: TimeSummary::default(),
        phase_ms: PhaseMs::default(),
        iterations: IterSummary::default(),
        max_strain: 0.0,
        capped_steps: 0,
        work: WorkSummary::default(),
        fallback_steps: 0,
        taut_lock: world.params.lock_taut_chains,
        self_contact: SelfSummary {
            enabled: world.params.self_collision || args.self_collision_from.is_some(),
            from_step: args.self_collision_from,
            thickness: world.params.thickness,
            friction: world.params.friction,
            ..SelfSummary::default()
        },
        tear: TearSummary {
            strength: world.params.tear_strength,
            ..TearSummary::default()
        },
        locked_particles: 0,
        error: None,
        final_positions: vec![],
        strain_limit: (args.solver() == SolverKind::StrainLimit).then(|| LimitSummary {
            stretch: world.params.strain_limits.stretch,
            compress: world.params.strain_limits.compress,
            passes: world.params.strain_limits.passes,
            ..LimitSummary::default()
        }),
        frames: args.positions_every.map(|_| Vec::new()),
    };
    let mut outside = 0u64;
    let start_topology = world.cloth.topology.id();
    let every = args.positions_every.filter(|&k| k > 0);
    // The topology and inverse masses the last recorded frame was read with.
    let mut seen_topology = world.cloth.topology.id();
    let mut seen_inv_mass = world.cloth.particles.inv_mass().to_vec();
    let mut record = |world: &World, report: &mut Report| {
        if let Some(frames) = &mut report.frames {
            let id = world.cloth.topology.id();
            let topology = (id != seen_topology).then(|| TopologyRecord::of(world));
            seen_topology = id;
            let k = world.cloth.particles.inv_mass();
            let inverse_masses = (k != seen_inv_mass.as_slice()).then(|| k.to_vec());
            if inverse_masses.is_some() {
                seen_inv_mass = k.to_vec();
            }
            frames.push(Frame {
                step: report.steps,
                positions: arr(&world.cloth.particles.x),
                velocities: arr(&world.cloth.particles.v),
                grabbed: world.grab().map(|g| g.particle),
                grab_target: world.grab().map(|g| g.target.to_array()),
                topology,
                inverse_masses,
            });
        }
        if let Some(dir) = &args.obj_dir
            && let Err(e) = write_obj(dir, report.steps, world)
        {
            report.error.get_or_insert(format!("writing OBJ: {e}"));
        }
    };
    if every.is_some() || args.obj_dir.is_some() {
        record(&world, &mut report);
    }
    let mut phases = Vec::with_capacity(args.steps.min(1 << 16) as usize);
    let mut self_ms = 0.0;
    let mut iters: Vec<u32> = Vec::with_capacity(args.steps.min(1 << 16) as usize);
    for step in 0..args.steps {
        if args.self_collision_from == Some(step) {
            world.params.self_collision = true;
        }
        let stats: StepStats = match step_frame(&mut world, solver.as_mut(), substeps, &mut drags) {
            Ok(s) => s,
            Err(e) => {
                report.error = Some(e.to_string());
                break;
            }
        };
        phases.push(stats.timings);
        iters.push(stats.position_iterations);
        report.max_strain = report.max_strain.max(stats.max_strain);
        if let Some(l) = &mut report.strain_limit {
            outside += stats.limit_violations as u64;
            l.worst_excess = l.worst_excess.max(stats.limit_excess);
            l.solved_steps += u64::from(stats.linear_solves > 0);
            l.symbolic_analyses += u64::from(stats.symbolic_analysis);
        }
        report.capped_steps += u64::from(stats.ended_outside(world.params.tolerance));
        report.fallback_steps += stats.fell_back as u64;
        report.work.factorizations += u64::from(stats.factorizations);
        report.work.polish_sweeps += u64::from(stats.polish_sweeps);
        report.work.contact_rounds += u64::from(stats.contact_rounds);
        report.work.contact_rounds_cut_steps += u64::from(stats.contact_rounds_cut);
        report.work.unrubbed_steps += u64::from(stats.unrubbed);
        report.locked_particles = report.locked_particles.max(stats.locked_particles);
        let sc = &mut report.self_contact;
        sc.max_contacts = sc.max_contacts.max(stats.self_contacts);
        sc.zones += u64::from(stats.impact_zones);
        sc.zone_steps += u64::from(stats.impact_zones > 0);
        sc.max_zone_particles = sc.max_zone_particles.max(stats.zone_particles);
        sc.projection_steps += u64::from(stats.zone_projections > 0);
        sc.projection_iterations += u64::from(stats.zone_projection_iterations);
        sc.stalled_projections += u64::from(stats.zone_projections_stalled);
        sc.resolve_steps += u64::from(stats.zone_resolves > 0);
        sc.cut_short_steps += u64::from(stats.zone_cut_short);
        sc.whole_zone_steps += u64::from(stats.zone_held_whole);
        sc.growth_undone_steps += u64::from(stats.zone_growth_undone);
        sc.bounded_steps += u64::from(stats.zone_bounded.is_some());
        sc.split_steps += u64::from(stats.splits > 0);
        sc.planned_split_steps += u64::from(stats.planned_splits > 0);
        sc.whole_by_contact_steps += u64::from(stats.zone_contacts_whole);
        sc.crossing_steps += u64::from(stats.crossings > 0);
        sc.max_crossings = sc.max_crossings.max(stats.crossings);
        sc.gathers += u64::from(stats.self_gathers);
        sc.regathers += u64::from(stats.self_regathers);
        report.tear.broken += u64::from(stats.torn);
        report.tear.tear_steps += u64::from(stats.torn > 0);
        report.tear.max_tear_ms = report
            .tear
            .max_tear_ms
            .max(stats.tear_time.as_secs_f64() * 1e3);
        self_ms += stats.self_contact_time.as_secs_f64() * 1e3;
        report.steps += 1;
        if let Some(k) = every.or(args.obj_dir.as_ref().map(|_| 1))
            && report.steps.is_multiple_of(k)
        {
            record(&world, &mut report);
        }
        if let Some(pb) = progress {
            pb.inc(1);
        }
    }
    if let Some(l) = &mut report.strain_limit {
        let samples = report.steps.max(1) * report.constraints.max(1) as u64;
        l.outside_fraction = outside as f64 / samples as f64;
    }
    let times: Vec<Duration> = phases.iter().map(PhaseTimings::total).collect();
    report.ms_per_step = TimeSummary::of(&times);
    report.phase_ms = PhaseMs::of(&phases);
    report.self_contact.ms_per_step = self_ms / report.steps.max(1) as f64;
    report.iterations = IterSummary {
        mean: iters.iter().map(|&i| i as f64).sum::<f64>() / iters.len().max(1) as f64,
        max: iters.iter().copied().max().unwrap_or(0),
    };
    report.final_positions = arr(&world.cloth.particles.x);
    report.tear.torn_edges = world.torn_edges();
    report.tear.final_particles = world.cloth.len();
    if world.cloth.topology.id() != start_topology {
        report.tear.final_topology = Some(TopologyRecord::of(&world));
        report.tear.final_inverse_masses = Some(world.cloth.particles.inv_mass().to_vec());
    }
    report
}

/// Most worker threads `--threads` accepts: 4 × the cores available (more only adds
/// start-up time and contention: 10 000 threads took 52 s to run two steps).
pub fn max_threads() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Configure rayon's global pool (0 = all cores). Errors if called twice with another size,
/// or for more than [`max_threads`].
pub fn set_threads(threads: usize) -> Result<(), String> {
    if threads == 0 {
        return Ok(());
    }
    let most = max_threads();
    if threads > most {
        return Err(format!(
            "--threads {threads}: at most {most} (4 × the {} cores available; 0 = all cores)",
            most / 4
        ));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .map_err(|e| format!("--threads {threads}: cannot set up the threads: {e}"))
}

/// Check every output before the run: `--json` and `--obj-dir` must not name the same path,
/// the report must be writable (not a directory, not a path ending in `/`, in an existing
/// writable directory) and the OBJ directory must exist or be creatable and take files.
fn check_outputs(args: &RunArgs) -> Result<(), String> {
    if let (Some(j), Some(d)) = (&args.json, &args.obj_dir) {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        if abs(j) == abs(d) {
            return Err(format!(
                "--json {} and --obj-dir {} name the same path",
                j.display(),
                d.display()
            ));
        }
    }
    if let Some(p) = &args.json {
        check_writable(p).map_err(|e| format!("--json: {e}"))?;
    }
    if let Some(d) = &args.obj_dir {
        fs::create_dir_all(d)
            .map_err(|e| format!("--obj-dir: cannot create {}: {e}", d.display()))?;
        check_writable(&obj_path(d, 0)).map_err(|e| format!("--obj-dir: {e}"))?;
        // Created just now, the directory may be what --json named by another spelling.
        if let Some(p) = &args.json {
            check_writable(p).map_err(|e| format!("--json: {e}"))?;
        }
    }
    Ok(())
}

/// Entry point of `run`.
pub fn main(args: RunArgs) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("error: {msg}");
        ExitCode::from(2)
    };
    if args.positions_every == Some(0) {
        return fail("--positions-every must be at least 1".into());
    }
    let world = match build_world(&args) {
        Ok(w) => w,
        Err(e) => return fail(e),
    };
    if let Err(e) = set_threads(args.threads) {
        return fail(e);
    }
    if let Err(e) = check_outputs(&args) {
        return fail(e);
    }
    let pb = std::io::stderr().is_terminal().then(|| {
        let pb = indicatif::ProgressBar::new(args.steps);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} steps {elapsed}/{eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    });
    let report = simulate(&args, world, pb.as_ref());
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    if !args.quiet {
        println!(
            "| solver | grid | steps | ms/step mean | p95 | iterations mean | max | max strain | capped | fallbacks |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|");
        println!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.1} | {} | {:.3e} | {} | {} |",
            report.solver,
            match report.grid {
                Some([w, h]) => format!("{w}x{h}"),
                None => format!("{} particles", report.particles),
            },
            report.steps,
            report.ms_per_step.mean,
            report.ms_per_step.p95,
            report.iterations.mean,
            report.iterations.max,
            report.max_strain,
            report.capped_steps,
            report.fallback_steps
        );
    }
    if let Some(p) = &args.json {
        let json = match serde_json::to_vec_pretty(&report) {
            Ok(j) => j,
            Err(e) => return fail(format!("cannot encode the report: {e}")),
        };
        if let Err(e) = write_atomic(p, &json) {
            eprintln!("error: cannot write {}: {e}", p.display());
            return ExitCode::from(1);
        }
    }
    if let Some(e) = &report.error {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
