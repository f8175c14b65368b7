//! The physics: impulse-based inextensible cloth (004 Bender, Bayer, Diziol), the SLE
//! method (004 §3.4.2, 001 §7) and the Verlet baseline (003).
//!
//! No Bevy here — glam, rayon and faer only — so everything can be tested and benchmarked
//! headless. A [`World`] owns the cloth and the parameters; a [`Solver`] owns only scratch
//! buffers (and, for the SLE, its factorisation), so solvers can be switched between steps.
//! A step runs the phases of [`Phase::ORDER`]; the Bevy plugin calls the same phases one
//! system at a time.

pub mod cloth;
pub mod collision;
pub mod contact;
pub mod dof;
pub mod drag;
pub mod error;
pub mod forces;
pub mod grab;
pub mod kernels;
pub mod kind;
pub mod mesh;
pub mod params;
pub mod scene;
pub mod solver;
pub mod sparse;
pub mod stats;
pub mod taut;

use std::time::Instant;

use glam::DVec3;

pub use cloth::{CacheKey, Cloth, GridShape, GridSpec, Orientation, Particles, Topology};
pub use dof::{Dof, Glider};
pub use drag::{Drag, DragScript};
pub use error::SimError;
pub use grab::{Grab, Reach};
pub use kind::SolverKind;
pub use params::{Ball, BallMotion, ImpulseDirection, SimParams, SpringParams, StrainLimits, Wind};
pub use scene::{PinSpec, ScenePreset, SceneSpec};
pub use solver::{ContactModel, Solver, StepCtx};
pub use stats::{PassCounts, Phase, PhaseTimings, StepStats};

/// The simulated world: cloth, parameters, colliders, time, and per-step scratch.
#[derive(Debug, Clone)]
pub struct World {
    /// The cloth.
    pub cloth: Cloth,
    /// Step parameters (the ball lives in `params.ball`).
    pub params: SimParams,
    /// Simulated time, s.
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    grab: Option<Grab>,
    /// The held particle's reach from the static particles ([`grab`]).
    reach: Reach,
    /// Where the held particle was last sent: the target projected onto its reach.
    grab_goal: Option<DVec3>,
    /// Inverse mass of the hand, set when a grab starts ([`grab::HAND_MASS_RATIO`]).
    hand_inv_mass: f64,
    /// Whether the fail-safe has held the held particle in a zone since the hand last
    /// caught up with its goal ([`World::hand_bound`]).
    hand_slowed: bool,
    /// Whether the held particle had a self-contact row in the last step
    /// ([`World::hand_bound`]).
    hand_rows: bool,
    gliders: Vec<Glider>,
    accel: Vec<DVec3>,
    scratch: Vec<DVec3>,
    /// What a step may change, as it was when the step began ([`World::begin_step`]).
    saved: Snapshot,
    ball_end: Option<Ball>,
    current: Option<StepStats>,
    /// Which call the step cycle expects next.
    stage: Stage,
    /// Particles made static because they lie inside a taut chain ([`taut`]).
    locked: Vec<usize>,
    /// The cloth's contacts with itself ([`contact`]).
    selfc: contact::SelfContact,
    /// Previews for self-contact detection (scratch).
    preview: Vec<DVec3>,
    /// Mesh edges torn so far ([`World::torn_edges`]).
    torn_edges: usize,
    /// Time the constraints' impulses have been summed over since tearing last looked at
    /// them, s ([`mesh::tear::TEAR_WINDOW`]).
    tear_window: f64,
    /// Every step of the window met its tolerance without the fail-safe.
    tear_window_clean: bool,
    /// How many halvings deep the step in progress is ([`SimParams::max_splits`]).
    split_depth: u32,
    /// The step in progress was taken again as two halves ([`World::split_step`]), their
    /// velocity passes included: the rest of the step only ends it.
    halved: bool,
    /// How many halvings deep the next step begins without an attempt of its own
    /// ([`World::split_step`]): the depth the last split step needed, one less after
    /// each step that needed no more.
    split_plan: u32,
    /// Deepest halving the fail-safe asked for in the step in progress (0: none).
    split_asked: u32,
    /// The step in progress is being taken again with the hand yielding
    /// ([`World::yield_hand`]): it does not yield a second time.
    yielding: bool,
    /// Sweeps a step of the hand's pull usually costs (a running mean over the steps in
    /// which it pulled, [`World::stop_a_pulling_hand`]); `None` until the first.
    hand_work: Option<f64>,
    /// The hand's last motion over a step in which it was sent farther than
    /// [`grab::BLOCKED`] spacings ([`World::hand_pulling`]); `None` until then.
    hand_moved: Option<DVec3>,
}

/// The state a step may change, kept by [`World::begin_step`] so that a failed step can be
/// undone: positions and velocities (every phase), inverse masses and the locked taut
/// chains (the forces phase), and the ball (the end of the step).
#[derive(Debug, Clone, Default)]
struct Snapshot {
    x: Vec<DVec3>,
    v: Vec<DVec3>,
    inv_mass: Vec<f64>,
    locked: Vec<usize>,
    ball: Option<Ball>,
    /// Topology and particle count of the cloth the step began with.
    topology: u64,
    len: usize,
}

/// Where a world is in its step cycle: [`World::begin_step`], then every phase of
/// [`Phase::ORDER`] once in order, then [`World::finish_step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No step in progress: `begin_step` comes next.
    Idle,
    /// The phase `Phase::ORDER[k]` comes next.
    Phase(usize),
    /// Every phase has run: `finish_step` comes next.
    Finish,
}

impl Stage {
    /// The call this stage expects, as named in errors.
    fn expected(self) -> &'static str {
        match self {
            Stage::Idle => "begin_step",
            Stage::Phase(k) => Phase::ORDER[k].name(),
            Stage::Finish => "finish_step",
        }
    }
}

/// Largest relative strain |d − L|/L a step may leave: 1000, a constraint stretched to
/// 1001 times its rest length (compression cannot pass 1). A diverging step passes it at
/// once on its way to overflow (measured: 4e3, 5e8, 7e22 on successive steps of a far
/// drag). The margin is wide on purpose: ordinary runs do leave large strains for a step or
/// two and recover — up to 2.9 on the drape scene (the ball projection), 5.0 with the
/// strain-limit solver on the paper scene, 10.6 with the SLE while a curtain ring is dragged
/// along its rod (measured on the presets, every solver) — and the benchmark's deliberately
/// under-resolved baselines stretch a 200×200 cloth steadily without diverging (500 steps of
/// the paper scene: iterative capped at 5 sweeps 290, Verlet with 5 passes 215, the
/// strain-limit solver with 10 substeps 255 at 100×100); undoing those would change their
/// results. A step beyond it is undone ([`SimError::Diverged`]).
pub const MAX_SANE_STRAIN: f64 = 1000.0;

/// Largest distance a particle may move in one step (its position at the end against the
/// start), in units of the cloth's size (its longer side at rest,
/// [`Topology::rest_extent`]): a thousand cloth lengths per step is 30 km/s for a 1 m
/// cloth at h = 1/30 s — beyond anything a drag, the wind or thousands of seconds of free
/// fall produce, and reached only by a step that has diverged. A step beyond it is undone
/// ([`SimError::Diverged`]).
///
/// Positions, not end-of-step velocities: a velocity pass that stops at its cap can leave
/// velocities of that size on a curtain whose rings are dragged along their rod, which the
/// next position pass takes out again while the cloth stays in place (measured: up to
/// 1e5 m/s on the curtain-rod scene with the SLE, strips or Newton).
pub const MAX_SANE_TRAVEL: f64 = 1e3;

impl World {
    /// A world from a cloth and parameters (validated).
    pub fn new(cloth: Cloth, params: SimParams) -> Result<World, SimError> {
        params.validate()?;
        Ok(World {
            cloth,
            params,
            time: 0.0,
            steps: 0,
            grab: None,
            reach: Reach::default(),
            grab_goal: None,
            hand_inv_mass: 0.0,
            hand_slowed: false,
            hand_rows: false,
            gliders: Vec::new(),
            accel: Vec::new(),
            scratch: Vec::new(),
            saved: Snapshot::default(),
            ball_end: None,
            current: None,
            stage: Stage::Idle,
            locked: Vec::new(),
            selfc: contact::SelfContact::default(),
            preview: Vec::new(),
            torn_edges: 0,
            tear_window: 0.0,
            tear_window_clean: true,
            split_depth: 0,
            halved: false,
            split_plan: 0,
            split_asked: 0,
            yielding: false,
            hand_work: None,
            hand_moved: None,
        })
    }

    /// The particle currently held, if any.
    pub fn grab(&self) -> Option<Grab> {
        self.grab
    }

    /// Where the held particle was sent in the last step: its target projected onto what
    /// the static particles let it reach ([`grab`]). It differs from the target when the
    /// user pulls beyond the cloth's reach.
    pub fn grab_goal(&self) -> Option<DVec3> {
        self.grab.and(self.grab_goal)
    }

    /// Hold particle `i` and move it towards `target` (see [`World::set_grab_target`]).
    /// While held the particle is a heavy hand ([`grab::HAND_MASS_RATIO`] times the cloth's
    /// mass) sent to the target each step, which the constraints stop short where the
    /// cloth cannot reach; a pinned particle is moved kinematically ([`grab`]).
    pub fn start_grab(&mut self, i: usize, target: DVec3) -> Result<(), SimError> {
        if i >= self.cloth.len() {
            return Err(SimError::ParticleOutOfRange {
                index: i,
                count: self.cloth.len(),
            });
        }
        if !target.is_finite() {
            return Err(SimError::param("grab target", "must be finite"));
        }
        self.release_grab();
        self.grab = Some(Grab {
            particle: i,
            target,
        });
        self.grab_goal = None;
        self.hand_work = None;
        self.hand_moved = None;
        // Stops belong to the grab that found them (the same particle grabbed again keeps
        // its anchors' radii, which the cloth's shape bounds, but not where a pull stalled).
        self.reach.forget_stops();
        self.hand_inv_mass = 1.0 / (grab::HAND_MASS_RATIO * self.cloth.total_mass());
        self.cloth.hold(i, self.hand_inv_mass);
        Ok(())
    }

    /// The most the hand moves its particle in the next step, in cloth thicknesses, if
    /// self-contact bounds it: [`grab::CONTACT_TRAVEL`] from the step in which the
    /// fail-safe held the particle in a zone until the hand has caught up with its goal,
    /// else [`grab::ROW_TRAVEL`] after a step in which the particle had a self-contact row;
    /// `None` when nothing holds the hand back.
    pub fn hand_bound(&self) -> Option<f64> {
        if self.grab.is_none() || !self.params.self_collision {
            None
        } else if self.hand_slowed {
            Some(grab::CONTACT_TRAVEL)
        } else if self.hand_rows {
            Some(grab::ROW_TRAVEL)
        } else {
            None
        }
    }

    /// Move the held particle's target. Non-finite targets are ignored.
    pub fn set_grab_target(&mut self, target: DVec3) {
        if let Some(g) = &mut self.grab
            && target.is_finite()
        {
            g.target = target;
        }
    }

    /// Let go of the held particle: its mass is restored (unless it is pinned) and it keeps
    /// its velocity, so a drag can fling the cloth.
    pub fn release_grab(&mut self) {
        self.hand_slowed = false;
        self.hand_rows = false;
        if let Some(g) = self.grab.take()
            && g.particle < self.cloth.len()
        {
            self.cloth.let_go(g.particle);
        }
    }

    /// Cut the cloth along `pairs` of particles (edges of its triangles; others are
    /// ignored): the triangles on the two sides of a cut edge separate where the cut
    /// reaches the border or another cut, their shared particles duplicated with mass and
    /// momentum kept ([`mesh::tear`]). Between steps only. The hand lets go and taut
    /// chains are released (both are looked for again by the next step); every solver
    /// cache follows, since the cut cloth has a new topology. Returns what was cut
    /// (nothing: the cloth is unchanged).
    pub fn cut(&mut self, pairs: &[[u32; 2]]) -> Result<mesh::tear::Cut, SimError> {
        self.expect(Stage::Idle, "cut")?;
        Ok(self.replace_cut(pairs, false))
    }

    /// The cloth cut along `pairs`; with `keep_hand` the held particle stays held (a tear
    /// under the hand: indices stay valid, so it is the same material point).
    fn replace_cut(&mut self, pairs: &[[u32; 2]], keep_hand: bool) -> mesh::tear::Cut {
        // The cut cloth takes base inverse masses and pins, not the hand's or a lock's.
        let Some((cloth, report)) = mesh::tear::cut(&self.cloth, pairs) else {
            return mesh::tear::Cut::default();
        };
        let hand = if keep_hand { self.grab } else { None };
        if hand.is_none() {
            self.grab = None;
            self.grab_goal = None;
            self.hand_slowed = false;
            self.hand_rows = false;
        }
        self.cloth = cloth;
        if let Some(g) = hand {
            self.cloth.hold(g.particle, self.hand_inv_mass);
        }
        self.locked.clear();
        self.selfc = contact::SelfContact::default();
        self.saved = Snapshot::default();
        self.current = None;
        report
    }

    /// Break the constraints the last step overloaded ([`SimParams::tear_strength`]):
    /// what [`mesh::tear::tear_cuts`] chooses, cut with the hand kept. Returns the
    /// constraints broken.
    fn tear(&mut self) -> usize {
        let (Some(strength), Some(impulses)) = (self.params.tear_strength, &self.cloth.impulses)
        else {
            return 0;
        };
        // Tension is the impulse over a window of about TEAR_WINDOW: a solver's substeps
        // do not change when the cloth tears (an impulse over one short substep — a hand's
        // jerk — would read as a force ten times larger at ten substeps).
        self.tear_window += self.params.dt;
        let window = self.tear_window;
        if window < mesh::tear::TEAR_WINDOW * (1.0 - 1e-9) {
            return 0;
        }
        self.tear_window = 0.0;
        if !std::mem::replace(&mut self.tear_window_clean, true) {
            return 0;
        }
        let (pairs, broken) = mesh::tear::tear_cuts(&self.cloth, impulses, window, strength);
        if pairs.is_empty() {
            return 0;
        }
        let report = self.replace_cut(&pairs, true);
        self.torn_edges += report.edges;
        broken
    }

    /// Mesh edges torn since the world was made ([`SimParams::tear_strength`]); cuts made
    /// with [`World::cut`] are not counted.
    pub fn torn_edges(&self) -> usize {
        self.torn_edges
    }

    /// Particles currently static because they lie inside a taut chain ([`taut`]).
    pub fn locked_particles(&self) -> &[usize] {
        &self.locked
    }

    /// Lock the particles of the cloth's taut chains (static, at rest, at the places
    /// [`taut::taut_chain_particles`] gives) and release those no longer in one; with
    /// `enabled` false, release all. A held particle on a taut chain is locked with it; a
    /// held pin, which the hand moves, ends no chain.
    fn update_taut_chains(&mut self, enabled: bool) {
        let held = self.grab.map(|g| g.particle);
        let p = &self.cloth.particles;
        let moving_pin = held.filter(|&i| p.pinned.get(i).copied().unwrap_or(false));
        let chains = if enabled {
            taut::taut_chain_particles(&self.cloth, moving_pin, self.params.tolerance)
        } else {
            Vec::new()
        };
        let p = &mut self.cloth.particles;
        let same = chains.len() == self.locked.len()
            && chains.iter().zip(&self.locked).all(|(&(i, _), &j)| i == j);
        if !same {
            for &i in &self.locked {
                if i < p.len() && !p.pinned[i] && Some(i) != held {
                    p.inv_mass[i] = p.base_inv_mass[i];
                }
            }
            self.locked.clear();
            for &(i, at) in &chains {
                p.x[i] = at;
                self.locked.push(i);
            }
            self.cloth.statics_changed();
        }
        // Locked particles are static (the set changed above if they are new; otherwise
        // this only undoes an unpin of a locked particle since the last step).
        let p = &mut self.cloth.particles;
        for &i in &self.locked {
            p.inv_mass[i] = 0.0;
            p.v[i] = DVec3::ZERO;
        }
    }

    /// The cloth's self-contact state: its surface, the last step's rows and crossing
    /// count ([`contact`]).
    pub fn self_contact(&self) -> &contact::SelfContact {
        &self.selfc
    }

    /// Whether self-collision runs in a step with `solver`: on in the parameters, and a
    /// solver that solves contact inside its pass ([`ContactModel::Impulse`]: iterative,
    /// strips, SLE, Newton). Verlet and the strain-limit solver keep their simpler contact
    /// models and pass through themselves.
    pub fn self_collision_with(&self, solver: &dyn Solver) -> bool {
        self.params.self_collision && solver.contact_model() == ContactModel::Impulse
    }

    /// Particles on gliders (001 §5).
    pub fn gliders(&self) -> &[Glider] {
        &self.gliders
    }

    /// Put a particle on a glider: from now on it moves only along the rod. Replaces an
    /// earlier glider of the same particle. The particle is moved onto the rod and its
    /// velocity across the rod is removed.
    ///
    /// The strain-limit solver puts the glider inside its impulse system (001 §5, ndof 1);
    /// the other solvers treat the particle as free and project it back onto the rod after
    /// each step.
    pub fn add_glider(&mut self, glider: Glider) -> Result<(), SimError> {
        let n = self.cloth.len();
        if glider.particle >= n {
            return Err(SimError::ParticleOutOfRange {
                index: glider.particle,
                count: n,
            });
        }
        let axis_ok = (glider.axis.length() - 1.0).abs() < 1e-9;
        if !(glider.anchor.is_finite() && axis_ok) {
            return Err(SimError::param(
                "glider",
                "anchor must be finite and axis a unit vector",
            ));
        }
        self.gliders.retain(|g| g.particle != glider.particle);
        let i = glider.particle;
        let p = &mut self.cloth.particles;
        p.x[i] = glider.project(p.x[i]);
        p.v[i] = glider.along(p.v[i]);
        self.gliders.push(glider);
        Ok(())
    }

    /// Take every particle off its glider.
    pub fn clear_gliders(&mut self) {
        self.gliders.clear();
    }

    /// Statistics of the step in progress (between [`World::begin_step`] and
    /// [`World::finish_step`]).
    pub fn current_stats(&self) -> Option<&StepStats> {
        self.current.as_ref()
    }

    /// Whether a step is in progress: begun and not yet finished or aborted.
    pub fn in_step(&self) -> bool {
        self.stage != Stage::Idle
    }

    /// Start a step with `solver`: check the parameters ([`SimParams::validate`]; fields
    /// written directly are checked here) and that the state is finite, snapshot what the
    /// step may change (restored if it fails) and reset the statistics. Then run every
    /// phase of [`Phase::ORDER`] in order ([`World::run_phase`]) and end with
    /// [`World::finish_step`]; anything else is [`SimError::PhaseOutOfOrder`].
    pub fn begin_step(&mut self, solver: SolverKind) -> Result<(), SimError> {
        self.expect(Stage::Idle, "begin_step")?;
        self.params.validate()?;
        let p = &self.cloth.particles;
        if let Some((what, particle)) = first_non_finite(p) {
            return Err(SimError::NonFiniteState { what, particle });
        }
        let s = &mut self.saved;
        s.x.clone_from(&p.x);
        s.v.clone_from(&p.v);
        s.inv_mass.clone_from(&p.inv_mass);
        s.locked.clone_from(&self.locked);
        s.ball = self.params.ball;
        s.topology = self.cloth.topology.id();
        s.len = self.cloth.len();
        // The constraints' impulses are recorded only where they can tear the cloth, and
        // summed over a window of mesh::tear::TEAR_WINDOW.
        let edges = self.cloth.topology.edges.len();
        match (&mut self.cloth.impulses, self.params.tear_strength) {
            (_, None) => {
                self.cloth.impulses = None;
                self.tear_window = 0.0;
            }
            (Some(log), Some(_)) if log.len() == edges => {
                if self.tear_window == 0.0 {
                    log.iter_mut().for_each(|j| *j = 0.0);
                }
            }
            (log, Some(_)) => {
                *log = Some(vec![0.0; edges]);
                self.tear_window = 0.0;
            }
        }
        self.current = Some(StepStats::new(self.steps, solver));
        self.stage = Stage::Phase(0);
        self.halved = false;
        if self.split_depth == 0 {
            self.split_asked = 0;
        }
        Ok(())
    }

    /// Abandon the step in progress, if any, and put back the state it began with (when
    /// the cloth is still the one it began with). The next call is [`World::begin_step`].
    pub fn abort_step(&mut self) {
        if self.stage != Stage::Idle && self.same_cloth_as_saved() {
            self.restore();
        }
        self.stage = Stage::Idle;
        self.current = None;
        self.ball_end = None;
    }

    /// `Ok` if the step cycle expects `stage`; otherwise which call it expected instead.
    fn expect(&self, stage: Stage, got: &'static str) -> Result<(), SimError> {
        if self.stage == stage {
            Ok(())
        } else {
            Err(SimError::PhaseOutOfOrder {
                expected: self.stage.expected(),
                got,
            })
        }
    }

    fn same_cloth_as_saved(&self) -> bool {
        self.saved.topology == self.cloth.topology.id() && self.saved.len == self.cloth.len()
    }

    /// Put back the state snapshotted by [`World::begin_step`] and drop the ball's
    /// end-of-step position the failed step computed.
    fn restore(&mut self) {
        self.ball_end = None;
        // What the failed step recorded is not what the cloth carried: the window starts
        // again.
        self.tear_window = 0.0;
        let s = &self.saved;
        let p = &mut self.cloth.particles;
        p.x.clone_from(&s.x);
        p.v.clone_from(&s.v);
        if p.inv_mass != s.inv_mass || self.locked != s.locked {
            p.inv_mass.clone_from(&s.inv_mass);
            self.locked.clone_from(&s.locked);
            // The static set is the one from before the step again; what a solver cached
            // for the failed step's must not be taken for it.
            self.cloth.statics_changed();
        }
        self.params.ball = s.ball;
    }

    /// Run one phase of the step in progress with `solver`, and record its wall time.
    /// The phases must come in the order of [`Phase::ORDER`], after
    /// [`World::begin_step`], with a solver of the kind the step began with, on the cloth
    /// it began with.
    ///
    /// The phase runs on a thread of rayon's pool (the caller waits): its parallel parts
    /// then fork from a worker, whose partner steals half the work while the worker goes
    /// on with the other, instead of parking the caller and waking both for every loop.
    /// Measured on `run --grid 50 --steps 60 --threads 2` with a drag: 10.9 / 10.3 s →
    /// 9.4 / 9.8 s, interleaved.
    pub fn run_phase(&mut self, phase: Phase, solver: &mut dyn Solver) -> Result<(), SimError> {
        rayon::scope(|_| self.run_phase_here(phase, solver))
    }

    /// [`World::run_phase`] on the calling thread.
    fn run_phase_here(&mut self, phase: Phase, solver: &mut dyn Solver) -> Result<(), SimError> {
        let k = Phase::ORDER
            .iter()
            .position(|&p| p == phase)
            .expect("every phase is in Phase::ORDER");
        self.expect(Stage::Phase(k), phase.name())?;
        let began = self.current.as_ref().expect("step in progress").solver;
        if began != solver.kind() {
            return Err(SimError::SolverMismatch {
                began,
                got: solver.kind(),
            });
        }
        if !self.same_cloth_as_saved() {
            self.abort_step();
            return Err(SimError::ClothReplaced);
        }
        if self.halved {
            // Taken as two halves already, their velocity passes included: the rest of
            // the step only ends it.
            self.stage = Self::after(k);
            return Ok(());
        }
        if phase == Phase::Forces
            // The step before needed halves this deep: the attempt they would undo is
            // skipped (measured on `bench app`'s 30×30 pile: its mean step 252 → 137 ms).
            && self.split_depth < self.split_plan
            && self.self_collision_with(solver)
            && self.can_split()
        {
            self.split_step(solver, false)?;
            self.stage = Self::after(k);
            return Ok(());
        }
        let start = Instant::now();
        let h = self.params.dt;
        match phase {
            Phase::Forces => {
                let lock = self.params.lock_taut_chains && solver.kind().is_inextensible();
                self.update_taut_chains(lock);
                let stats = self.current.as_mut().expect("step in progress");
                stats.locked_particles = self.locked.len() as u32;
                if self.grab.is_some_and(|g| g.particle >= self.cloth.len()) {
                    self.grab = None; // left over from a replaced cloth
                }
                if let Some(g) = self.grab
                    && self.locked.binary_search(&g.particle).is_ok()
                {
                    // Held on a taut chain: it cannot move, and the hand keeps it there.
                    self.grab_goal = Some(self.cloth.particles.x[g.particle]);
                } else if let Some(g) = self.grab {
                    let i = g.particle;
                    self.reach.update(&self.cloth, i);
                    if let Some(goal) = self.grab_goal {
                        self.reach.learn(goal, &self.cloth.particles.x, i, h);
                    }
                    // The hand's mass since `start_grab` (which changed the static set);
                    // this only restores it after a pin or unpin of the held particle,
                    // which changed the set itself.
                    self.cloth.keep_held(i, self.hand_inv_mass);
                    self.reach.release_stops(g.target);
                    let spacing = self.cloth.topology.longest_rest();
                    let bound = self.hand_bound();
                    let p = &mut self.cloth.particles;
                    let mut goal = self.reach.project(&p.x, p.x[i], g.target);
                    let most = grab::HAND_SPEED * self.cloth.topology.rest_extent() * h;
                    goal = p.x[i] + (goal - p.x[i]).clamp_length_max(most);
                    if let Some(travel) = bound {
                        let cap = travel * self.selfc.thickness(self.params.thickness);
                        let d = goal - p.x[i];
                        if d.length() <= cap {
                            // Caught up with the target: the hand is free again.
                            self.hand_slowed = false;
                        }
                        goal = p.x[i] + d.clamp_length_max(cap);
                    }
                    self.grab_goal = Some(goal);
                    if goal.distance(p.x[i]) > grab::BLOCKED * spacing {
                        self.hand_moved = Some(goal - p.x[i]);
                    }
                    p.v[i] = (goal - p.x[i]) / h;
                }
                forces::external_accelerations(
                    &self.cloth,
                    &self.params,
                    self.time,
                    &mut self.accel,
                );
                if let Some(g) = self.grab {
                    // The hand carries the particle's weight and the wind on it, so that
                    // its preview lands on the goal.
                    self.accel[g.particle] = DVec3::ZERO;
                }
                forces::spring_impulses(&mut self.cloth, &self.params, &mut self.scratch);
                hold_on_rods(
                    &self.gliders,
                    &mut self.cloth.particles,
                    Some(&mut self.accel),
                    None,
                );
            }
            Phase::Collision => {
                if self.self_collision_with(solver) {
                    // Rows for what the unconstrained previews bring close; the contact
                    // rounds add what the solved previews do.
                    self.selfc.begin(&self.cloth);
                    // A tangled cloth's crossing pairs pushed apart, within the tolerance.
                    let t = &self.cloth.topology;
                    let p = &mut self.cloth.particles;
                    self.selfc.untangle(
                        (&t.edges, &t.rest),
                        &mut p.x,
                        &p.inv_mass,
                        self.params.thickness,
                        self.params.tolerance,
                    );
                    self.detect_self_contacts(true);
                } else {
                    self.selfc.clear();
                    // Nothing of self-contact holds the hand back any more.
                    self.hand_slowed = false;
                    self.hand_rows = false;
                }
                self.ball_end = self.params.ball.map(|mut b| {
                    collision::advance_ball(
                        &mut b,
                        self.time,
                        h,
                        self.params.gravity,
                        self.params.ground,
                    );
                    b
                });
                if solver.contact_model() != ContactModel::Projection {
                    let contacts = collision::ContactSweep {
                        params: &self.params,
                        ball: self.ball_end.as_ref(),
                        gliders: &[],
                        slop: 0.0,
                        selfs: self
                            .params
                            .self_collision
                            .then(|| self.selfc.rows(self.params.thickness)),
                    };
                    let p = &mut self.cloth.particles;
                    let a = &self.accel;
                    contacts.visit(|i| kernels::drift(p.x[i], a[i], h), &mut p.v, &p.inv_mass);
                    hold_on_rods(&self.gliders, &mut self.cloth.particles, None, None);
                }
            }
            Phase::Position => {
                let self_on = self.self_collision_with(solver);
                let mut ctx = self.ctx(self_on);
                solver.position_pass(&mut ctx);
                if solver.contact_model() == ContactModel::Impulse {
                    self.contact_rounds(solver, self_on);
                }
                if self_on {
                    // Where the solve took the previews: the next step's first detection
                    // gathers for it.
                    self.fill_previews();
                    self.selfc.solved(&self.preview, self.params.dt);
                }
                let stats = self.current.as_mut().expect("step in progress");
                stats.self_contacts = self.selfc.rows.len() as u32;
                if let Some((from, motion)) = self.hand_must_yield() {
                    let stats = self.current.as_mut().expect("step in progress");
                    stats.timings.position += start.elapsed();
                    self.yield_hand(solver, from, motion)?;
                    self.stage = Self::after(k);
                    return Ok(());
                }
                self.stop_a_pulling_hand();
            }
            Phase::Integration | Phase::Velocity => {
                let self_on = self.self_collision_with(solver);
                let mut ctx = self.ctx(self_on);
                match phase {
                    Phase::Integration => integrate(solver, &mut ctx),
                    _ => {
                        if ctx.params.velocity_pass || !solver.solves_velocity_constraints() {
                            solver.velocity_pass(&mut ctx);
                        }
                    }
                }
                if phase == Phase::Integration && self_on && self.self_contact_guarantee(solver) {
                    let stats = self.current.as_mut().expect("step in progress");
                    stats.timings.integration += start.elapsed();
                    self.split_asked = self.split_asked.max(self.split_depth + 1);
                    self.split_step(solver, true)?;
                    self.stage = Self::after(k);
                    return Ok(());
                }
            }
        }
        let stats = self.current.as_mut().expect("step in progress");
        *stats.timings.slot(phase) += start.elapsed();
        self.stage = Self::after(k);
        Ok(())
    }

    /// The stage after phase `k` of [`Phase::ORDER`].
    fn after(k: usize) -> Stage {
        if k + 1 < Phase::ORDER.len() {
            Stage::Phase(k + 1)
        } else {
            Stage::Finish
        }
    }

    /// End the step: undo it if it went non-finite ([`SimError::NonFinite`]) or diverged
    /// ([`SimError::Diverged`]: a strain beyond [`MAX_SANE_STRAIN`] or a particle that
    /// travelled further than [`MAX_SANE_TRAVEL`] cloth sizes), restoring the state it
    /// began with; else advance time, move the ball and return the statistics. Either way
    /// the next call is [`World::begin_step`], and a world whose step failed steps on
    /// normally from the restored state.
    pub fn finish_step(&mut self) -> Result<StepStats, SimError> {
        self.expect(Stage::Finish, "finish_step")?;
        self.stage = Stage::Idle;
        let mut stats = self
            .current
            .take()
            .expect("a step in progress has statistics");
        let (max, mean) = match self.end_state_check() {
            Ok(strain) => strain,
            Err(e) => {
                self.restore();
                return Err(e);
            }
        };
        if let Some(b) = self.ball_end.take() {
            self.params.ball = Some(b);
        }
        stats.max_strain = max;
        stats.mean_strain = mean;
        // "Tolerance met" is a statement about the state the step ends in: the contact
        // projection and the gliders move particles after the position pass has converged.
        if stats.ended_outside(self.params.tolerance) {
            stats.converged = false;
        }
        self.time += self.params.dt;
        self.steps += 1;
        if self.split_depth == 0 {
            // The next step begins as deep as this one needed, or one less (what this one
            // asked for is cleared by the next `begin_step`, which an aborted step needs too).
            self.split_plan = match self.split_asked {
                0 => self.split_plan.saturating_sub(1),
                asked => asked,
            };
        }
        // A half of a split step tears nothing: the step it belongs to had zones, and a
        // tear would replace the cloth under the step in progress.
        if self.params.tear_strength.is_some() && self.split_depth == 0 {
            let start = Instant::now();
            // Impulses of a step that did not meet its tolerance, or that the fail-safe
            // moved rigidly in part, are not the tension the cloth carries (measured: a
            // pass that fought a self-contact pressed by the hand for 40 000 sweeps, then
            // an impact zone, read 1e10 N and broke eight constraints at once): its window
            // tears nothing.
            self.tear_window_clean &= stats.converged && stats.impact_zones == 0;
            stats.torn = self.tear() as u32;
            if stats.torn > 0 {
                // The figures are the torn cloth's, the one the step leaves: a cut quad's
                // diagonal whose ends all but coincide keeps its spring's rest length
                // ([`mesh::tear::MIN_DIAGONAL`]) and starts far from it.
                (stats.max_strain, stats.mean_strain) = self.cloth.strain_stats();
                if stats.ended_outside(self.params.tolerance) {
                    stats.converged = false;
                }
            }
            stats.tear_time = start.elapsed();
        }
        Ok(stats)
    }

    /// Whether the step in progress may be split in two ([`World::split_step`]): less
    /// than [`SimParams::max_splits`] deep, and half its time still a valid step.
    fn can_split(&self) -> bool {
        let half = self.params.dt / 2.0;
        self.split_depth < self.params.max_splits && params::DT.check(half).is_ok()
    }

    /// The hand's motion in the step in progress, where it pulls the cloth by itself: its
    /// particle's start and where it was sent from there, if it is held, not static, sent
    /// farther than [`grab::BLOCKED`] spacings, and neither in a self-contact row of this
    /// step nor held back by the fail-safe ([`World::hand_bound`]) — a pass that crawls
    /// while the hand presses layers together is the contacts', and the hand must carry
    /// them (a corner pushed into a sheet at 10 m/s, tests/self_contact.rs). With `held`,
    /// a hand that holds its goal still counts too, with the last motion it made (strips
    /// on the skirt: the hem reached its goal with the cloth taut, and every later step
    /// ran to its cap at 0.057 with the hand still). Only for the solvers whose passes on
    /// a slack cloth end in a bounded number of sweeps or solves (Newton, the SLE,
    /// strips): Gauss–Seidel runs to its cap on the app's cloths wherever the hand is, and
    /// Verlet and the strain limits run fixed passes, so their caps say nothing of the
    /// hand.
    fn hand_pulling(&self, held: bool) -> Option<(DVec3, DVec3)> {
        let solver = self.current.as_ref()?.solver;
        if !matches!(
            solver,
            SolverKind::Newton | SolverKind::Sle | SolverKind::Strips
        ) {
            return None;
        }
        let (g, goal) = (self.grab?, self.grab_goal?);
        let i = g.particle;
        let from = *self.saved.x.get(i)?;
        if self.cloth.particles.inv_mass[i] <= 0.0
            || self.hand_slowed
            || (self.params.self_collision && self.selfc.in_row(i as u32))
        {
            return None;
        }
        if goal.distance(from) > grab::BLOCKED * self.cloth.topology.longest_rest() {
            Some((from, goal - from))
        } else if held {
            self.hand_moved.map(|m| (from, m))
        } else {
            None
        }
    }

    /// The hand's start and motion if the step in progress must be taken again with the
    /// hand yielding ([`World::yield_hand`]): its position pass ran to its cap without
    /// meeting the tolerance while the hand pulled ([`World::hand_pulling`]), and it is not
    /// itself such a retake.
    fn hand_must_yield(&self) -> Option<(DVec3, DVec3)> {
        let s = self.current.as_ref()?;
        if self.yielding || !s.capped || s.converged {
            return None;
        }
        self.hand_pulling(true)
    }

    /// After a position pass that met its tolerance while the hand pulled: where it cost
    /// more than [`grab::HAND_WORK`] sweeps and [`grab::HAND_WORK_GROWTH`] times what the
    /// hand's steps have cost so far, the hand stops where this step began, for the steps
    /// after it ([`grab::Reach::stop`]) — the edge of what the cloth can follow is near,
    /// and the next steps would crawl to their cap.
    fn stop_a_pulling_hand(&mut self) {
        let Some(s) = self.current.as_ref() else {
            return;
        };
        if self.yielding {
            return;
        }
        let sweeps = f64::from(s.position_sweeps());
        let Some((from, motion)) = self.hand_pulling(false) else {
            return;
        };
        let usual = *self.hand_work.get_or_insert(sweeps);
        if sweeps >= f64::from(grab::HAND_WORK) && sweeps >= grab::HAND_WORK_GROWTH * usual {
            self.reach.stop(&self.cloth.particles.x, from, motion, 0.0);
        } else {
            self.hand_work = Some(usual + (sweeps - usual) / 8.0);
        }
    }

    /// Undo the step in progress and take it again whole, the hand yielding. The pass
    /// that ran to its cap was pulling the cloth taut between the hand and its pins: the
    /// balls of [`grab::Reach`] bound the reach from outside, and where several pins pull
    /// against each other (the skirt's ring of pins at its waist, its hem pulled out and
    /// up) they let the hand go where no state meets the constraints, or only a taut,
    /// degenerate one on which every solver crawls ([`taut`]). The heavy hand then stays
    /// where it was sent, and the cloth is left stretched step after step (measured on
    /// the skirt: 18 of 75 steps capped at 0.079, 2.3 s each, the hand on its goal). The
    /// step is taken again from its start with a stop [`grab::SETBACK`] behind `from`
    /// across `motion` ([`grab::Reach::stop`]), so the hand steps back and the cloth goes
    /// slack. The attempt's work is counted in the step's ([`StepStats::hand_yields`]); on
    /// an error the state the step began with is restored.
    fn yield_hand(
        &mut self,
        solver: &mut dyn Solver,
        from: DVec3,
        motion: DVec3,
    ) -> Result<(), SimError> {
        self.reach
            .stop(&self.cloth.particles.x, from, motion, grab::SETBACK);
        let attempt = self.current.take().expect("step in progress");
        let outer = self.saved.clone();
        self.restore();
        let (time, steps, stage) = (self.time, self.steps, self.stage);
        self.yielding = true;
        let taken = self.substeps(solver, 1, None);
        self.yielding = false;
        (self.time, self.steps, self.stage) = (time, steps, stage);
        self.saved = outer;
        self.adopt_retake(taken, &attempt, steps, |m| m.hand_yields += 1)
    }

    /// End a step taken again ([`World::split_step`], [`World::yield_hand`]): its
    /// statistics are the retake's with the undone attempt's work added, numbered `steps`
    /// and marked by `mark`; on an error the state the step began with is restored and the
    /// attempt's statistics kept. The rest of the step's phases only end it.
    fn adopt_retake(
        &mut self,
        taken: Result<StepStats, SimError>,
        attempt: &StepStats,
        steps: u64,
        mark: impl FnOnce(&mut StepStats),
    ) -> Result<(), SimError> {
        let result = match taken {
            Ok(mut merged) => {
                // The undone attempt's outcome is not the step's; its work is.
                merged.add_work(attempt);
                merged.step = steps;
                mark(&mut merged);
                self.current = Some(merged);
                Ok(())
            }
            Err(e) => {
                self.restore();
                self.current = Some(*attempt);
                Err(e)
            }
        };
        self.halved = true;
        result
    }

    /// Undo the step in progress and take it again as two steps of half its time, each
    /// every phase from [`World::begin_step`] to [`World::finish_step`] (and split again
    /// where it too would hold the whole cloth, down to [`SimParams::max_splits`]); the
    /// hand goes halfway to its target in the first. Where the fail-safe would hold the
    /// whole cloth, the step's motion outran its contact rows — they are linearised at the
    /// step's start and its features slid or turned past them — and over half the motion
    /// they hold what the whole did not (Bridson et al. 2002 §7: a smaller step where the
    /// fail-safe would act; docs/numerics.md, "The fail-safe stays local"). `asked`: the
    /// fail-safe asked for it after an attempt; otherwise the step was planned so by the
    /// step before it (`split_plan`) and nothing of it has run yet. The step's statistics
    /// are the halves' merged ([`StepStats::absorb`]) with the undone attempt's work added;
    /// on an error the state the step began with is restored.
    fn split_step(&mut self, solver: &mut dyn Solver, asked: bool) -> Result<(), SimError> {
        let attempt = self.current.take().expect("step in progress");
        let outer = self.saved.clone();
        self.restore();
        let clean = self.selfc.count_crossings(&self.cloth.particles.x) == 0;
        let (time, steps, depth, stage) = (self.time, self.steps, self.split_depth, self.stage);
        let hand = self
            .grab
            .map(|g| (g.target, self.cloth.particles.x[g.particle]));
        // Self-contact's state at the step's start (its count, tangle, lips crossed): the
        // halves' end changes it, and a step taken whole again starts from this.
        let selfc_start = clean.then(|| self.selfc.clone());
        let mut taken = self.substeps(solver, 2, hand);
        if clean && taken.is_ok() && self.selfc.count_crossings(&self.cloth.particles.x) > 0 {
            // The halves crossed where the step began clean (a fail-safe that held in
            // the whole step can miss at a shorter one): the step is taken whole instead,
            // its zones grown as without the split.
            let halves = taken.expect("checked");
            (self.time, self.steps) = (time, steps);
            self.saved = outer.clone();
            self.restore();
            // What the halves' end tangled or found crossed on the lips is not the
            // start's: left in place, a tangle marked at their end took pressed pairs out
            // of the fail-safe of the whole step, which crossed 29 pairs in a hostile
            // session.
            if let Some(start) = selfc_start {
                self.selfc = start;
            }
            self.split_depth = self.params.max_splits;
            taken = self.substeps(solver, 1, hand).map(|mut whole| {
                whole.add_work(&halves);
                whole.splits += 1;
                whole
            });
            self.split_depth = depth;
        }
        (self.time, self.steps, self.stage) = (time, steps, stage);
        self.saved = outer;
        if let Some((target, _)) = hand {
            self.set_grab_target(target);
        }
        self.adopt_retake(taken, &attempt, steps, |m| {
            m.splits += 1;
            m.planned_splits += u32::from(!asked);
        })
    }

    /// The step in progress, undone, taken as `n` (1 or 2) steps of 1/n of its time, each
    /// from [`World::begin_step`] to [`World::finish_step`], one level deeper in splits;
    /// `hand` is the hand's target and its particle's start, which it reaches in the last.
    /// Their statistics merged; time and the step count are left advanced.
    fn substeps(
        &mut self,
        solver: &mut dyn Solver,
        n: u32,
        hand: Option<(DVec3, DVec3)>,
    ) -> Result<StepStats, SimError> {
        let dt = self.params.dt;
        self.params.dt = dt / n as f64;
        self.split_depth += 1;
        let mut merged: Option<StepStats> = None;
        let mut result = Ok(());
        for k in 1..=n {
            if let Some((target, from)) = hand {
                self.set_grab_target(from.lerp(target, k as f64 / n as f64));
            }
            self.stage = Stage::Idle;
            match self.step(solver) {
                Ok(s) => match &mut merged {
                    Some(m) => m.absorb(&s),
                    None => merged = Some(s),
                },
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.split_depth -= 1;
        self.params.dt = dt;
        result.map(|()| merged.expect("at least one step"))
    }

    /// Why the state a step ended in must be undone, if it must: non-finite, or diverged
    /// (see [`World::finish_step`]); else its largest and mean strain.
    fn end_state_check(&self) -> Result<(f64, f64), SimError> {
        let step = self.steps;
        let p = &self.cloth.particles;
        if let Some((what, particle)) = first_non_finite(p) {
            return Err(SimError::NonFinite {
                step,
                what,
                particle,
            });
        }
        let (max, mean) = self.cloth.strain_stats();
        let travel = MAX_SANE_TRAVEL * self.cloth.topology.rest_extent();
        let furthest =
            p.x.iter()
                .zip(&self.saved.x)
                .map(|(x, x0)| x.distance(*x0))
                .fold(0.0, f64::max);
        let diverged = if max > MAX_SANE_STRAIN {
            Some(("strain", max, MAX_SANE_STRAIN))
        } else if furthest > travel {
            Some(("distance travelled in one step (m)", furthest, travel))
        } else {
            None
        };
        match diverged {
            Some((what, value, limit)) => Err(SimError::Diverged {
                step,
                what,
                value,
                limit,
            }),
            None => Ok((max, mean)),
        }
    }

    /// One full step: [`World::begin_step`], every phase of [`Phase::ORDER`] with
    /// `solver`, [`World::finish_step`]. Refused while a step run phase by phase is in
    /// progress ([`World::abort_step`] abandons it).
    pub fn step(&mut self, solver: &mut dyn Solver) -> Result<StepStats, SimError> {
        self.begin_step(solver.kind())?;
        for phase in Phase::ORDER {
            if let Err(e) = self.run_phase(phase, solver) {
                self.abort_step();
                return Err(e);
            }
        }
        self.finish_step()
    }

    /// Replace the parameters after validating them; on error the old ones stay.
    pub fn set_params(&mut self, params: SimParams) -> Result<(), SimError> {
        params.validate()?;
        self.params = params;
        Ok(())
    }
}

/// The first particle whose value in `values` is not finite, named `what`.
/// The first non-finite position, else the first non-finite velocity: what and where.
fn first_non_finite(p: &Particles) -> Option<(&'static str, usize)> {
    let first = |values: &[DVec3], what| {
        values
            .iter()
            .position(|x| !x.is_finite())
            .map(|i| (what, i))
    };
    first(&p.x, "position").or_else(|| first(&p.v, "velocity"))
}

/// Below this share of the reach of the displacement bounds, a particle's cut motion is
/// none ([`World::move_within_bounds`]): layers at no distance bound it to round-off.
const STILL: f64 = 1e-9;

/// Most position passes a step re-runs for contact (`contact_rounds`): the safety net for
/// a pass that left a preview inside a collider or off its rod, which the solvers' own
/// contact handling makes rare (none on the drape and curtain-rod scenes; docs/numerics.md,
/// "Contact inside the solve"). Each round is a whole pass, so they are few.
pub const MAX_CONTACT_ROUNDS: u32 = 16;

/// Most position work (Newton steps, SLE solves or sweeps) a step's contact rounds may take
/// together, as a multiple of the work of the pass before them (`contact_rounds`), once two
/// rounds have run and the last met the tolerance: a round re-runs a whole pass, and on
/// layers pressed through each other (self-collision switched on over a fold made without
/// it) every round ran 45–60 Newton steps and 2 200 polish sweeps to the 16-round cap, 7 s
/// a step at 30×30. Where contact rounds resolve what they are for, two cost less than this
/// (docs/numerics.md, "Contact rounds: a bound on their work").
pub const ROUND_WORK: u32 = 2;

impl World {
    /// What a solver phase of the step in progress sees; `self_on` gives it the
    /// self-contact rows.
    fn ctx(&mut self, self_on: bool) -> StepCtx<'_> {
        StepCtx {
            cloth: &mut self.cloth,
            params: &self.params,
            accel: &self.accel,
            ball_end: self.ball_end.as_ref(),
            gliders: &self.gliders,
            selfs: self_on.then(|| self.selfc.rows(self.params.thickness)),
            stats: self.current.as_mut().expect("step in progress"),
        }
    }

    /// The guarantee after integration: what still touches on the step's path moves
    /// rigidly ([`contact::SelfContact::fail_safe`]), zones are moved out of the ball and
    /// the ground, and where a zone's rigid motion stretched an edge at its border the rest
    /// of the cloth is projected back within its limits with every zone a rigid body
    /// ([`contact::SelfContact::project_around_zones`]); where that does not converge, the
    /// contacts' zones grow over the stretched edges ring by ring, a bounded number of
    /// rings ([`contact::SelfContact::grow_over_stretched`]), or the rest of the cloth is
    /// solved again around them, each change checked again for contact. Where that would hold
    /// every particle that can move where the step began, or would hold every one of them
    /// grown over a cloth that began the step intersection-free (with halvings allowed),
    /// the contacts' zones from before the growth are kept instead, their borders left
    /// stretched (docs/numerics.md, "The fail-safe stays local", repair 8). Then the
    /// crossings of the end state are counted.
    /// Before any growth, and where the zones would hold every particle that can move, a
    /// step that may still be halved ([`SimParams::max_splits`]) asks to be instead
    /// ([`World::split_step`]) and the rest is left undone. Whether it asks.
    fn self_contact_guarantee(&mut self, solver: &mut dyn Solver) -> bool {
        let t0 = Instant::now();
        let (mut pushes, mut grows, mut resolves, mut rounds) = (0, 0, 0, 0);
        let mut projections = 0;
        let mut projection_iterations = 0;
        let mut projecting = true;
        let mut cut_short = false;
        let mut keep = false;
        let mut last_growth = false;
        // The contacts' zones before the repairs that grow them, intersection-free and out
        // of the colliders: where the repairs would hold the whole cloth still, the step
        // keeps these instead.
        let mut before_growth: Option<(Vec<DVec3>, Vec<DVec3>, contact::ZoneState, _)> = None;
        // Whether the contacts' zones, before any growth, held every particle that can move.
        let mut contacts_whole = None;
        let mut fs = loop {
            let fs = self.with_self_contact(|s, cloth, x, v| s.fail_safe(cloth, x, v, keep));
            keep = true;
            rounds += fs.rounds;
            if fs.zones == 0 {
                break fs;
            }
            if pushes < contact::MAX_REPAIRS && self.push_zones_out() {
                // Moved out of the ball or the ground: what they now touch joins them.
                pushes += 1;
                continue;
            }
            let t = &self.cloth.topology;
            let x = &self.cloth.particles.x;
            if !self
                .selfc
                .border_stretched((&t.edges, &t.rest), x, self.params.tolerance)
            {
                break fs;
            }
            if before_growth.is_none() {
                let p = &self.cloth.particles;
                let zones = self.selfc.zone_state();
                contacts_whole = Some(self.selfc.held_whole(&p.inv_mass));
                before_growth = Some((p.x.clone(), p.v.clone(), zones, fs));
            }
            if projecting {
                if projections < contact::MAX_PROJECTIONS
                    && projection_iterations < contact::project::PROJECT_ITERATIONS
                    && self.project_around_zones(&mut projection_iterations)
                {
                    // The rest of the cloth follows the zones as rigid bodies.
                    projections += 1;
                    continue;
                }
                projecting = false;
                if self.can_split() {
                    // The growth would take the zones over the cloth around them: half
                    // the step instead (World::split_step).
                    return self.want_split(t0, rounds);
                }
                if let Some((x, v, zones, _)) = before_growth.clone().filter(|_| projections > 0) {
                    // The projections did not settle: back to the contacts' zones, which
                    // the growth and the re-solve take from there.
                    let p = &mut self.cloth.particles;
                    p.x = x;
                    p.v = v;
                    self.selfc.restore_zone_state(zones);
                }
            }
            if grows < contact::MAX_REPAIRS && self.grow_zones(contact::MAX_RINGS) {
                grows += 1;
                continue;
            }
            if resolves < contact::MAX_RESOLVES {
                // Grown as far as a zone may: the rest of the cloth follows the zones.
                resolves += 1;
                self.resolve_around_zones(solver);
                continue;
            }
            if !last_growth {
                // The re-solve could not take the border back: a zone free of static
                // particles grows over what is still stretched, without the bound on
                // rings — it moves on rigidly instead of leaving the cloth stretched.
                last_growth = true;
                if self.grow_zones(self.cloth.len() as u32) {
                    continue;
                }
            }
            cut_short = true;
            break fs;
        };
        let mut growth_undone = false;
        if let Some((x, v, zones, kept)) = before_growth
            && self.selfc.held_whole(&self.cloth.particles.inv_mass)
            && (self.cloth.particles.x == self.saved.x
                || (contacts_whole == Some(false)
                    && self.selfc.crossings() == 0
                    && self.params.max_splits > 0))
        {
            // Every particle that can move held where the step began (the grown zones
            // froze the cloth), or grown over the whole of a cloth that began the step
            // intersection-free and was halved as deep as it may be: the contacts' zones
            // move rigidly and the rest of the cloth as the solve left it; their borders
            // stay stretched for the next step's solve. Without halvings
            // (`max_splits` 0, the behaviour before them) the growth stays: every step
            // that would have been halved would end stretched instead (the app's 30×30
            // pile at a strain of 3.2).
            let p = &mut self.cloth.particles;
            p.x = x;
            p.v = v;
            self.selfc.restore_zone_state(zones);
            fs = kept;
            cut_short = true;
            growth_undone = true;
        }
        let mut held_whole = fs.zones > 0 && self.selfc.held_whole(&self.cloth.particles.inv_mass);
        if held_whole && self.can_split() {
            // The contacts' zones span the cloth: half the step's motion may not.
            return self.want_split(t0, rounds);
        }
        let mut bounded = None;
        if held_whole && contacts_whole.unwrap_or(true) && self.selfc.crossings() == 0 {
            // Halved as deep as it may be, the contacts' own zones would still hold every
            // particle of a cloth that began the step intersection-free: each particle
            // moves towards the solve's end within its bound instead, where static
            // particles allow it. (A growth over the whole cloth, kept only without
            // halvings, stays: bounded there, the app's 30×30 pile ended its frame 40 at
            // a strain of 0.21.)
            bounded = self.move_within_bounds();
            if bounded.is_some() {
                (fs.zones, fs.particles) = (0, 0);
                held_whole = false;
                cut_short = true;
            }
        }
        let x = &self.cloth.particles.x;
        let zoned = fs.zones > 0 || bounded.is_some();
        let crossings = self.selfc.check_crossings(x, zoned) + self.selfc.check_lips(x);
        let held = self.grab.map(|g| g.particle as u32);
        self.hand_slowed |= held.is_some_and(|i| self.selfc.zoned(i));
        self.hand_rows = held.is_some_and(|i| self.selfc.in_row(i));
        let stats = self.current.as_mut().expect("step in progress");
        stats.impact_zones = fs.zones;
        stats.zone_particles = fs.particles;
        stats.zone_rounds = rounds;
        stats.zone_resolves = resolves;
        stats.zone_cut_short = cut_short;
        stats.zone_held_whole = held_whole;
        stats.zone_growth_undone = growth_undone;
        stats.zone_contacts_whole = held_whole && contacts_whole.unwrap_or(true);
        stats.zone_bounded = bounded;
        stats.crossings = crossings as u32;
        stats.self_gathers = self.selfc.gathers();
        stats.self_regathers = self.selfc.regathers();
        stats.self_contact_time += t0.elapsed();
        false
    }

    /// Move every particle from the step's start towards the solve's end state the
    /// fail-safe began from ([`contact::SelfContact::solve_end`]) by at most its
    /// displacement bound
    /// ([`contact::bound::displacement_bounds`], pairs looked at within twice the longest
    /// rest length), shortened where the straight path enters the ball, and forget the
    /// fail-safe's zones; the particles cut. `None`, and nothing changed, where a static
    /// particle's prescribed motion alone could close a gap, or where the bounds would
    /// hold the whole cloth still (no particle moving [`STILL`] times the reach).
    fn move_within_bounds(&mut self) -> Option<u32> {
        let t = &self.cloth.topology;
        let reach = 2.0 * t.rest.iter().copied().fold(0.0, f64::max);
        let p = &self.cloth.particles;
        let (x0, inv_mass) = (&self.saved.x, &p.inv_mass);
        let surface = self.selfc.surface();
        let (x1, v1) = self.selfc.solve_end();
        let bound = contact::bound::displacement_bounds(surface, x0, x1, inv_mass, reach)?;
        let (mut x, mut v) = (x1.to_vec(), v1.to_vec());
        let ball = self.ball_end;
        let entry = |a, b, t: f64| {
            ball.and_then(|ball| collision::ball_entry(&ball, a, b))
                .map_or(t, |e| t.min(e))
        };
        let cut = contact::bound::move_within(x0, &mut x, &mut v, &bound, self.params.dt, entry);
        let furthest = x
            .iter()
            .zip(x0)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f64::max);
        if furthest <= STILL * reach {
            // Layers that lie on each other at no distance (a cloth flattened into one
            // plane) bound every particle to nothing: a rigid zone at least moves.
            return None;
        }
        let p = &mut self.cloth.particles;
        (p.x, p.v) = (x, v);
        self.selfc.drop_zones();
        Some(cut)
    }

    /// The fail-safe's answer where the step in progress is to be split
    /// ([`World::split_step`]): `true`, the work of the fail-safe that began at `began`
    /// with `rounds` merge rounds kept in the step's statistics.
    fn want_split(&mut self, began: Instant, rounds: u32) -> bool {
        let stats = self.current.as_mut().expect("step in progress");
        stats.zone_rounds += rounds;
        stats.self_contact_time += began.elapsed();
        true
    }

    /// Grow the fail-safe's zones by at most `rings` rings over the edges their rigid
    /// motion stretched ([`contact::SelfContact::grow_over_stretched`]); whether any grew.
    fn grow_zones(&mut self, rings: u32) -> bool {
        self.with_self_contact(|s, cloth, x, v| s.grow_over_stretched(cloth, x, v, rings))
    }

    /// `f` on the cloth's self-contact, what its fail-safe reads of the cloth and the step
    /// ([`contact::StepCloth`]), and the positions and velocities it moves.
    fn with_self_contact<R>(
        &mut self,
        f: impl FnOnce(&mut contact::SelfContact, contact::StepCloth, &mut [DVec3], &mut [DVec3]) -> R,
    ) -> R {
        let t = &self.cloth.topology;
        let p = &mut self.cloth.particles;
        let cloth = contact::StepCloth {
            edges: &t.edges,
            rest: &t.rest,
            inv_mass: &p.inv_mass,
            h: self.params.dt,
            tolerance: self.params.tolerance,
        };
        f(&mut self.selfc, cloth, &mut p.x, &mut p.v)
    }

    /// Bring the cloth around the fail-safe's zones back within its limits, each zone a
    /// rigid body ([`contact::SelfContact::project_around_zones`]); whether it did. Where
    /// the projection did not converge, the positions and velocities are left as they were.
    /// At most what is left of the step's [`contact::project::PROJECT_ITERATIONS`] Newton
    /// iterations after the `spent` ones; those it took are added to `spent`. Where the
    /// step can still be halved twice, a projection that stalls gives up
    /// ([`contact::project`]'s stall rule): the fail-safe halves the step after a failed
    /// projection, and a stalled one had run to the step's last iteration before failing.
    /// Deeper, a projection that converges late spares the halves a halving they may not
    /// have: given up wherever the step could be halved, the hostile sessions' whole-cloth
    /// steps on clean grids went from 6 to 10; with two halvings left, to 7
    /// (docs/experiments.md, "Projections that stall").
    fn project_around_zones(&mut self, spent: &mut u32) -> bool {
        let most_iterations = contact::project::PROJECT_ITERATIONS.saturating_sub(*spent);
        let give_up_on_stall = self.can_split() && self.split_depth + 1 < self.params.max_splits;
        let p = &self.cloth.particles;
        let (x, v) = (p.x.clone(), p.v.clone());
        let done = self.with_self_contact(|s, cloth, x, v| {
            s.project_around_zones(cloth, x, v, most_iterations, give_up_on_stall)
        });
        *spent += done.iterations;
        if !done.converged {
            let p = &mut self.cloth.particles;
            p.x = x;
            p.v = v;
        }
        let stats = self.current.as_mut().expect("step in progress");
        // A projection refused outright (a tangled cloth) has no rows and did nothing.
        stats.zone_projections += u32::from(done.rows > 0 || done.converged);
        stats.zone_projection_iterations += done.iterations;
        stats.zone_projections_stalled += u32::from(done.stalled);
        done.converged
    }

    /// Solve the step again with the fail-safe's zones held where their rigid motion put
    /// them: their particles static for the pass, moving from the step's start to their
    /// end positions, every other particle starting again from the velocities it ends the
    /// step with less what the accelerations add (a warm start: only the zones' borders
    /// are out of tolerance). The rest of the cloth follows the zones within the tolerance
    /// instead of being merged into them; the zones keep their rigid motion and end
    /// velocities. Bounded ([`contact::RESOLVE_SWEEPS`], [`contact::RESOLVE_SOLVES`]): a
    /// re-solve costs about one position pass, and changes the static set twice (the
    /// solvers' caches follow it).
    fn resolve_around_zones(&mut self, solver: &mut dyn Solver) {
        let h = self.params.dt;
        let mask = self.selfc.zone_mask().to_vec();
        let n = self.cloth.len();
        if mask.len() != n || self.saved.x.len() != n {
            return;
        }
        let zone: Vec<usize> = (0..n).filter(|&i| mask[i]).collect();
        let p = &mut self.cloth.particles;
        let rigid: Vec<(DVec3, DVec3, f64, DVec3)> = zone
            .iter()
            .map(|&i| (p.x[i], p.v[i], p.inv_mass[i], self.accel[i]))
            .collect();
        for i in 0..n {
            // The pass's velocity: integration added a·h to it.
            p.v[i] -= self.accel[i] * h;
        }
        for (k, &i) in zone.iter().enumerate() {
            p.inv_mass[i] = 0.0;
            self.accel[i] = DVec3::ZERO;
            p.v[i] = (rigid[k].0 - self.saved.x[i]) / h;
        }
        p.x.clone_from(&self.saved.x);
        self.cloth.statics_changed();
        let params = self.params.clone();
        let cap = |c: u32, most: u32| if c == 0 { most } else { c.min(most) };
        self.params.max_iterations = cap(params.max_iterations, contact::RESOLVE_SWEEPS);
        self.params.hard_cap = cap(params.hard_cap, contact::RESOLVE_SWEEPS);
        self.params.newton_max_steps = cap(params.newton_max_steps, contact::RESOLVE_SOLVES);
        self.params.sle_max_solves = cap(params.sle_max_solves, contact::RESOLVE_SOLVES);
        let mut ctx = self.ctx(true);
        solver.position_pass(&mut ctx);
        if solver.contact_model() == ContactModel::Impulse {
            self.contact_rounds(solver, true);
        }
        let mut ctx = self.ctx(true);
        integrate(solver, &mut ctx);
        self.params = params;
        let p = &mut self.cloth.particles;
        for (k, &i) in zone.iter().enumerate() {
            let (x, v, inv_mass, a) = rigid[k];
            p.x[i] = x;
            p.v[i] = v;
            p.inv_mass[i] = inv_mass;
            self.accel[i] = a;
        }
        self.cloth.statics_changed();
        // Gathered while the zones were static, the candidates left out their pairs.
        self.selfc.forget_candidates();
    }

    /// Translate every zone of the fail-safe free of static particles out of the ball and
    /// the ground ([`collision::push_group_out`]); whether one moved.
    fn push_zones_out(&mut self) -> bool {
        if self.ball_end.is_none() && self.params.ground.is_none() {
            return false;
        }
        let slop = collision::contact_slop(&self.cloth, &self.params);
        let mut moved = false;
        for g in self.selfc.zone_groups() {
            // A zone that holds a static particle stays where its pins keep it: translated,
            // it carried them (a pinned ring of the curtain rod 0.22 m in one step). Its
            // particles that the ball or the ground hold are the next step's contacts.
            let inv_mass = &self.cloth.particles.inv_mass;
            if g.iter().any(|&i| inv_mass[i as usize] == 0.0) {
                continue;
            }
            moved |= collision::push_group_out(
                &g,
                &mut self.cloth.particles.x,
                &self.params,
                self.ball_end.as_ref(),
                slop,
            );
        }
        moved
    }

    /// The previews `drift + v·h` of the particles' velocities, into `preview`.
    fn fill_previews(&mut self) {
        let h = self.params.dt;
        let p = &self.cloth.particles;
        self.preview.clear();
        self.preview
            .extend((0..p.len()).map(|i| kernels::preview(p.x[i], p.v[i], self.accel[i], h)));
    }

    /// Self-contact rows for the pairs the previews `drift + v·h` bring within reach
    /// ([`contact::SelfContact::detect`]), timed into the step's statistics. The step's
    /// `first` detection, before any solve, gathers for the previews shifted by what the
    /// last step's solve moved them ([`contact::forecast`]).
    fn detect_self_contacts(&mut self, first: bool) {
        let t0 = Instant::now();
        self.fill_previews();
        if first {
            self.selfc.forecast(&self.preview, self.params.dt);
        }
        let p = &self.cloth.particles;
        self.selfc
            .detect(&self.preview, &p.inv_mass, self.params.thickness);
        let stats = self.current.as_mut().expect("step in progress");
        stats.self_contact_time += t0.elapsed();
    }

    /// The safety net of contact for the [`ContactModel::Impulse`] solvers, which solve
    /// contact inside their own passes (strips and the iterative method visit the contact
    /// set in every sweep, Newton holds the obstacles as rows of its system and finishes
    /// with strips where a self-contact is short): with self-collision on, pairs the solved
    /// previews bring close get rows first (`self_on`, [`contact::SelfContact::detect`]);
    /// then if a pass still left a preview inside the ball or the ground, off its rod, or
    /// short of a self-contact's gap by more than [`collision::contact_slop`] (a capped
    /// pass, a new row), the contact set is visited once
    /// ([`collision::ContactSweep::visit`]: normal impulse with Coulomb friction, a ring
    /// put back on its rod) and the pass runs again from there — a block Gauss–Seidel
    /// between the contact set and the distance constraints, at most
    /// [`MAX_CONTACT_ROUNDS`] times, and no more once a round's pass ran to its cap after
    /// a capped pass, or once two rounds, the last within the tolerance, have cost more
    /// than [`ROUND_WORK`] times the work before them ([`StepStats::contact_rounds_cut`]):
    /// a step's work stays within about two capped passes. The solvers keep their caches
    /// across the rounds of one step; iteration counts add up over the rounds.
    fn contact_rounds(&mut self, solver: &mut dyn Solver, self_on: bool) {
        // The step's position work before the rounds (Newton steps, SLE solves or sweeps).
        let first = self.current.as_ref().map_or(0, |s| s.position_iterations);
        if self_on
            && self.selfc.crossings() > 0
            && self.selfc.held_whole(&self.cloth.particles.inv_mass)
        {
            // Tangled, and the last fail-safe held the whole cloth: rounds cannot take a
            // crossing back, and the fail-safe holds it whole again — on the fold switched
            // on over its tangle, one zone of every particle each step with rounds or
            // without, 1.3 s a step with them and 0.3–0.5 s without.
            return;
        }
        for _ in 0..MAX_CONTACT_ROUNDS {
            if self_on {
                self.detect_self_contacts(false);
            }
            let mut ctx = self.ctx(self_on);
            if !ctx.has_contacts() {
                return;
            }
            // The rounds stop here if the contacts still ask for one where two passes in a
            // row ran to their cap (a third would too), or where the rounds have cost the
            // step's own pass twice over and the last one met the tolerance (one that did
            // not goes on). The layers left pressed are the fail-safe's to hold, and the
            // colliders' projection after integration holds the obstacles.
            let s = &*ctx.stats;
            let capped = s.capped || s.hard_capped;
            let capped_twice = capped && s.contact_rounds > 0;
            let spent = s.contact_rounds >= 2
                && s.converged
                && s.position_iterations.saturating_sub(first) > ROUND_WORK * first.max(1);
            let contacts = ctx.contacts();
            let h = ctx.params.dt;
            let p = &mut ctx.cloth.particles;
            let a = ctx.accel;
            // Where the rounds stop after a pass that met the tolerance, the visit's
            // impulses are undone: they break the distance constraints that pass met, and
            // no pass follows to take them back (kept, they left steps of the 30×30 tear
            // scene 1.6–6 % stretched). After passes that ran to their cap they are kept:
            // the constraints are not met either way, and undone, the fail-safe met the
            // rows they had closed and held the whole cloth in 14 of the hostile
            // sessions' 560 guarded steps, against 2.
            let saved = spent.then(|| p.v.clone());
            if contacts.visit(|i| kernels::drift(p.x[i], a[i], h), &mut p.v, &p.inv_mass) == 0 {
                return;
            }
            if capped_twice || spent {
                if let Some(v) = saved {
                    p.v = v;
                }
                ctx.stats.contact_rounds_cut = true;
                return;
            }
            let s = &mut *ctx.stats;
            s.contact_rounds += 1;
            let before = s.take_pass_counts();
            solver.position_pass(&mut ctx);
            let s = &mut *ctx.stats;
            s.add_pass_counts(before);
            s.capped |= capped && !s.converged;
        }
    }
}

/// The integration phase of `solver` with the contact projection and the rods after it:
/// impulse solvers leave particles within the contact's tolerance of the colliders' skin
/// and of the rods; only what is farther is moved.
fn integrate(solver: &mut dyn Solver, ctx: &mut StepCtx<'_>) {
    solver.integrate(ctx);
    let impulse = solver.contact_model() == ContactModel::Impulse;
    let slop = if impulse { ctx.contacts().slop } else { 0.0 };
    if impulse {
        let p = &mut ctx.cloth.particles;
        collision::project_out(
            &mut p.x,
            &mut p.v,
            &p.inv_mass,
            ctx.params,
            ctx.ball_end,
            true,
            slop,
        );
    }
    hold_on_rods(ctx.gliders, &mut ctx.cloth.particles, None, Some(slop));
}

/// Keep dynamic glider particles on their rods: remove velocity (and, given `accel`,
/// acceleration) across the rod and, given `project`, put those farther than it from the
/// rod back onto it. Pinned or held particles are left alone, and so are gliders left over
/// from a replaced cloth.
fn hold_on_rods(
    gliders: &[Glider],
    p: &mut Particles,
    mut accel: Option<&mut Vec<DVec3>>,
    project: Option<f64>,
) {
    for g in gliders {
        let i = g.particle;
        if p.inv_mass.get(i).is_none_or(|&k| k == 0.0) {
            continue;
        }
        p.v[i] = g.along(p.v[i]);
        if let Some(a) = accel.as_mut().and_then(|a| a.get_mut(i)) {
            *a = g.along(*a);
        }
        if let Some(slop) = project {
            let on = g.project(p.x[i]);
            if on.distance(p.x[i]) > slop {
                p.x[i] = on;
            }
        }
    }
}
