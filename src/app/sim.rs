//! The simulation inside Bevy: a resource holding the [`World`] and the active solver, and
//! FixedUpdate systems that run the phases of a step in chained [`SimSet`]s. Each system
//! calls one `src/sim` phase ([`World::run_phase`]), which records its own wall time; the
//! phase order comes from [`Phase::ORDER`], so the ECS-driven step is the same computation
//! as [`World::step`] (tested bit for bit in `tests/app.rs`).

use std::collections::VecDeque;

use bevy::ecs::schedule::{LogLevel, ScheduleBuildSettings};
use bevy::prelude::*;
use glam::DVec3;

use crate::sim::{
    DragScript, Phase, SceneSpec, SimError, SimParams, Solver, SolverKind, StepStats, World,
};

/// How many step statistics the overlay keeps.
pub const HISTORY: usize = 300;

/// The phases of a step as system sets, chained in [`Phase::ORDER`].
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimSet {
    /// Gravity, wind, grab, spring-dampers (004 §3.1, §3.3).
    Forces,
    /// Ball and ground contact.
    Collision,
    /// Position constraints (004 §3.2 eq. 2).
    Position,
    /// Integration (004 §3.1).
    Integration,
    /// Velocity constraints (eq. 3) and the end of the step.
    Velocity,
}

impl SimSet {
    /// The set of a phase.
    pub fn of(p: Phase) -> SimSet {
        match p {
            Phase::Forces => SimSet::Forces,
            Phase::Collision => SimSet::Collision,
            Phase::Position => SimSet::Position,
            Phase::Integration => SimSet::Integration,
            Phase::Velocity => SimSet::Velocity,
        }
    }
}

/// The simulation state shared by the systems, the UI and the input handling.
#[derive(Resource)]
pub struct SimState {
    /// The world (cloth, parameters, time).
    pub world: World,
    /// The active solver.
    pub solver: Box<dyn Solver>,
    /// Its kind.
    pub kind: SolverKind,
    /// The scene the world was built from (Reset rebuilds it).
    pub scene: SceneSpec,
    /// Paused: fixed steps do nothing unless `step_once` is set.
    pub paused: bool,
    /// Run exactly one step while paused.
    pub step_once: bool,
    /// A step is in progress (between the Forces and Velocity sets).
    pub in_step: bool,
    /// Positions before the last step, for interpolation.
    pub prev_x: Vec<DVec3>,
    /// Positions when the scene was built.
    pub initial_x: Vec<DVec3>,
    /// Statistics of the recent steps (newest last).
    pub history: VecDeque<StepStats>,
    /// The last error (a non-finite step, a rejected setting).
    pub error: Option<String>,
    /// Steps since launch.
    pub total_steps: u64,
    /// Whether anything was ever grabbed.
    pub ever_grabbed: bool,
    /// Largest distance any particle moved from its initial position.
    pub max_displacement: f64,
    /// Largest distance a drag moved its target from where the grab started.
    pub grab_travel: f64,
    /// Largest strain any step since launch ended with.
    pub worst_strain: f64,
    /// Steps since launch that ended outside their tolerance
    /// ([`StepStats::ended_outside`]).
    pub steps_over_tolerance: u64,
    /// The scene's own scripted drag ([`crate::sim::ScenePreset::script`]: the fold's
    /// corner), run until it ends or the user grabs the cloth.
    pub script: Option<DragScript>,
    /// Mesh edges cut since the scene was built (shift + drag, [`SimState::cut`]).
    pub cut_edges: usize,
    /// The user chose the solver (`--solver` or the panel): a new scene keeps it. Until
    /// then every scene opens with its own ([`crate::config::solver`]).
    pub solver_chosen: bool,
}

/// The scripted drag of the scene `world` was built from, if it has one.
fn scene_script(scene: &SceneSpec, world: &World) -> Option<DragScript> {
    let drag = scene.preset.script(world)?;
    DragScript::new(vec![drag], world.cloth.len()).ok()
}

impl SimState {
    /// Cut the cloth along `pairs` ([`World::cut`]) between two steps; the copies a cut
    /// makes start their interpolation where they are.
    pub fn cut(&mut self, pairs: &[[u32; 2]]) -> Result<(), SimError> {
        let report = self.world.cut(pairs)?;
        self.cut_edges += report.edges;
        let x = &self.world.cloth.particles.x;
        if self.prev_x.len() < x.len() {
            let from = self.prev_x.len();
            self.prev_x.extend_from_slice(&x[from..]);
        }
        Ok(())
    }

    /// Build a scene with `params` and `kind`.
    pub fn new(
        scene: SceneSpec,
        params: SimParams,
        kind: SolverKind,
    ) -> Result<SimState, SimError> {
        let world = scene.build(params)?;
        let x = world.cloth.particles.x.clone();
        let script = scene_script(&scene, &world);
        Ok(SimState {
            world,
            solver: kind.create(),
            kind,
            scene,
            paused: false,
            step_once: false,
            in_step: false,
            prev_x: x.clone(),
            initial_x: x,
            history: VecDeque::with_capacity(HISTORY),
            error: None,
            total_steps: 0,
            ever_grabbed: false,
            max_displacement: 0.0,
            grab_travel: 0.0,
            worst_strain: 0.0,
            steps_over_tolerance: 0,
            script,
            cut_edges: 0,
            solver_chosen: false,
        })
    }

    /// The solver the current scene opens with ([`crate::config::solver`]), where the user
    /// has not chosen one and it is not the active one: what a rebuild switches to.
    pub fn scene_solver(&self) -> Option<SolverKind> {
        let k = crate::config::solver(self.scene.preset, self.scene.mesh.is_some());
        (!self.solver_chosen && k != self.kind).then_some(k)
    }

    /// Switch solver; the cloth keeps its state.
    pub fn set_solver(&mut self, kind: SolverKind) {
        if kind != self.kind {
            self.kind = kind;
            self.solver = kind.create();
        }
    }

    /// Rebuild the scene (new grid, preset or reset) keeping the current parameters
    /// (ball, ground and wind come from the preset). On error the old world stays.
    pub fn rebuild(&mut self, scene: SceneSpec) -> Result<(), SimError> {
        let mut params = self.world.params.clone();
        params.ball = None;
        params.ground = None;
        params.wind.enabled = false;
        // Tearing belongs to a scene as the wind does: another preset starts whole (the
        // tear scene sets its own strength); a reset or a new grid of the same one keeps it.
        if scene.preset != self.scene.preset {
            params.tear_strength = None;
        }
        // Self-collision is on in every scene by default ([`crate::config::SELF_COLLISION`]):
        // a switch the user turned off stays off across scenes, like the other parameters.
        let world = scene.build(params)?;
        self.script = scene_script(&scene, &world);
        self.prev_x = world.cloth.particles.x.clone();
        self.initial_x = self.prev_x.clone();
        self.world = world;
        self.scene = scene;
        self.solver = self.kind.create();
        self.in_step = false;
        self.error = None;
        self.cut_edges = 0;
        Ok(())
    }

    /// The latest step statistics.
    pub fn last(&self) -> Option<&StepStats> {
        self.history.back()
    }
}

/// Adds the FixedUpdate phase systems and the frame budget ([`super::budget`]: the fixed
/// steps of one rendered frame stop at [`super::budget::FRAME_BUDGET`] of wall time). Works
/// with `MinimalPlugins` (no window, no GPU). Insert a [`SimState`] resource before running
/// it.
pub struct SimPlugin;

impl Plugin for SimPlugin {
    fn build(&self, app: &mut App) {
        app.configure_sets(
            FixedUpdate,
            (
                SimSet::Forces,
                SimSet::Collision,
                SimSet::Position,
                SimSet::Integration,
                SimSet::Velocity,
            )
                .chain(),
        )
        .add_systems(FixedUpdate, begin_and_forces.in_set(SimSet::Forces))
        .add_systems(FixedUpdate, collision.in_set(SimSet::Collision))
        .add_systems(FixedUpdate, position.in_set(SimSet::Position))
        .add_systems(FixedUpdate, integration.in_set(SimSet::Integration))
        .add_systems(FixedUpdate, velocity_and_finish.in_set(SimSet::Velocity));
        super::budget::add_systems(app);
        // Unordered systems that conflict are an error, not a silent race.
        app.edit_schedule(FixedUpdate, |s| {
            s.set_build_settings(ScheduleBuildSettings {
                ambiguity_detection: LogLevel::Error,
                ..default()
            });
        });
    }
}

fn run(state: &mut SimState, phase: Phase) {
    if !state.in_step {
        return;
    }
    let SimState { world, solver, .. } = state;
    if let Err(e) = world.run_phase(phase, solver.as_mut()) {
        abandon_step(state, e);
    }
}

/// A step that could not go on: undo it, show the error and pause.
fn abandon_step(state: &mut SimState, e: SimError) {
    state.world.abort_step();
    state.in_step = false;
    state.error = Some(e.to_string());
    state.paused = true;
}

fn begin_and_forces(mut state: ResMut<SimState>) {
    let state = &mut *state;
    if state.paused && !state.step_once {
        return;
    }
    state.step_once = false;
    if state.ever_grabbed {
        // The user's hand replaces the scene's.
        state.script = None;
    }
    if let Some(script) = &mut state.script
        && let Err(e) = script.before_step(&mut state.world)
    {
        state.error = Some(e.to_string());
        state.script = None;
    }
    state.prev_x.clone_from(&state.world.cloth.particles.x);
    if let Err(e) = state.world.begin_step(state.kind) {
        abandon_step(state, e);
        return;
    }
    state.in_step = true;
    run(state, Phase::Forces);
}

fn collision(mut state: ResMut<SimState>) {
    run(&mut state, Phase::Collision);
}

fn position(mut state: ResMut<SimState>) {
    run(&mut state, Phase::Position);
}

fn integration(mut state: ResMut<SimState>) {
    run(&mut state, Phase::Integration);
}

fn velocity_and_finish(mut state: ResMut<SimState>) {
    let state = &mut *state;
    if !state.in_step {
        return;
    }
    run(state, Phase::Velocity);
    if !state.in_step {
        return;
    }
    state.in_step = false;
    match state.world.finish_step() {
        Ok(stats) => {
            if state.history.len() == HISTORY {
                state.history.pop_front();
            }
            state.worst_strain = state.worst_strain.max(stats.max_strain);
            let over = stats.ended_outside(state.world.params.tolerance);
            state.steps_over_tolerance += u64::from(over);
            state.history.push_back(stats);
            state.total_steps += 1;
            let d = state
                .world
                .cloth
                .particles
                .x
                .iter()
                .zip(&state.initial_x)
                .map(|(a, b)| a.distance(*b))
                .fold(0.0, f64::max);
            state.max_displacement = state.max_displacement.max(d);
        }
        Err(e) => {
            state.error = Some(e.to_string());
            state.paused = true;
            state.prev_x.clone_from(&state.world.cloth.particles.x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::ScenePreset;
    use crate::sim::scene::TEAR_SCENE_STRENGTH;

    /// Tearing goes with the scene: the tear scene brings its strength, another preset
    /// starts whole, and a reset of the same preset keeps what the user set.
    #[test]
    fn the_tear_strength_follows_the_scene() {
        let spec = |p| SceneSpec::new(p, 8, 8);
        let mut s = SimState::new(
            spec(ScenePreset::Tear),
            SimParams::default(),
            SolverKind::Newton,
        )
        .unwrap();
        assert_eq!(s.world.params.tear_strength, Some(TEAR_SCENE_STRENGTH));
        s.world.params.tear_strength = Some(10.0);
        s.rebuild(spec(ScenePreset::Tear)).unwrap();
        assert_eq!(s.world.params.tear_strength, Some(10.0), "a reset keeps it");
        s.rebuild(spec(ScenePreset::Hanging)).unwrap();
        assert_eq!(
            s.world.params.tear_strength, None,
            "another scene starts whole"
        );
        s.world.params.tear_strength = Some(3.0);
        s.rebuild(spec(ScenePreset::Hanging)).unwrap();
        assert_eq!(s.world.params.tear_strength, Some(3.0));
        s.rebuild(spec(ScenePreset::Tear)).unwrap();
        assert_eq!(s.world.params.tear_strength, Some(TEAR_SCENE_STRENGTH));
    }

    /// Until the user chooses a solver, a new scene asks for its own: strips on a grid,
    /// Newton on a mesh; once chosen, the choice stays across scenes.
    #[test]
    fn a_new_scene_opens_with_its_solver_until_one_is_chosen() {
        let spec = |p| SceneSpec::new(p, 8, 8);
        let mut s = SimState::new(
            spec(ScenePreset::Hanging),
            SimParams::default(),
            crate::config::solver(ScenePreset::Hanging, false),
        )
        .unwrap();
        assert_eq!(s.scene_solver(), None);
        s.rebuild(spec(ScenePreset::Tablecloth)).unwrap();
        assert_eq!(s.scene_solver(), Some(SolverKind::Newton));
        s.set_solver(SolverKind::Newton);
        s.rebuild(spec(ScenePreset::Drape)).unwrap();
        assert_eq!(s.scene_solver(), Some(SolverKind::Strips));
        s.solver_chosen = true;
        s.rebuild(spec(ScenePreset::Skirt)).unwrap();
        s.rebuild(spec(ScenePreset::Flag)).unwrap();
        assert_eq!(s.scene_solver(), None, "the user's choice stays");
    }
}
