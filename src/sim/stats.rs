//! Per-step statistics: what each phase cost and how well the constraints were met.

use std::time::Duration;

use super::kind::SolverKind;

/// The phases of one step, in the canonical order (004 Algorithm 1, extended by forces and
/// collision). The order is written here once; [`crate::sim::World::step`] and the Bevy
/// plugin both follow [`Phase::ORDER`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Gravity, wind, grab, and shear/bend spring-dampers as impulses (004 §3.1, §3.3).
    Forces,
    /// Ball and ground contact impulses with friction.
    Collision,
    /// Position constraints: preview + impulses (004 §3.2 eq. 2, §3.4).
    Position,
    /// Integrate positions and velocities over h (004 §3.1).
    Integration,
    /// Velocity constraints (004 §3.2 eq. 3).
    Velocity,
}

impl Phase {
    /// The phases in the order a step runs them.
    pub const ORDER: [Phase; 5] = [
        Phase::Forces,
        Phase::Collision,
        Phase::Position,
        Phase::Integration,
        Phase::Velocity,
    ];

    /// Short name for tables and plots.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Forces => "forces",
            Phase::Collision => "collision",
            Phase::Position => "position",
            Phase::Integration => "integration",
            Phase::Velocity => "velocity",
        }
    }
}

/// Wall time of each phase of a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PhaseTimings {
    /// [`Phase::Forces`].
    pub forces: Duration,
    /// [`Phase::Collision`].
    pub collision: Duration,
    /// [`Phase::Position`].
    pub position: Duration,
    /// [`Phase::Integration`].
    pub integration: Duration,
    /// [`Phase::Velocity`].
    pub velocity: Duration,
}

impl PhaseTimings {
    /// Mutable slot of one phase.
    pub fn slot(&mut self, p: Phase) -> &mut Duration {
        match p {
            Phase::Forces => &mut self.forces,
            Phase::Collision => &mut self.collision,
            Phase::Position => &mut self.position,
            Phase::Integration => &mut self.integration,
            Phase::Velocity => &mut self.velocity,
        }
    }

    /// Time of one phase.
    pub fn get(&self, p: Phase) -> Duration {
        match p {
            Phase::Forces => self.forces,
            Phase::Collision => self.collision,
            Phase::Position => self.position,
            Phase::Integration => self.integration,
            Phase::Velocity => self.velocity,
        }
    }

    /// Sum over phases.
    pub fn total(&self) -> Duration {
        Phase::ORDER.iter().map(|&p| self.get(p)).sum()
    }
}

/// The counts of a position pass that add up over the passes of a step
/// ([`StepStats::take_pass_counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassCounts {
    /// [`StepStats::position_iterations`].
    pub position_iterations: u32,
    /// [`StepStats::linear_solves`].
    pub linear_solves: u32,
    /// [`StepStats::factorizations`].
    pub factorizations: u32,
    /// [`StepStats::polish_sweeps`].
    pub polish_sweeps: u32,
}

/// What happened in one step.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct StepStats {
    /// Index of this step (0 for the first).
    pub step: u64,
    /// Solver that ran the step.
    pub solver: SolverKind,
    /// Wall time per phase.
    pub timings: PhaseTimings,
    /// Sweeps (iterative, strips), solves (SLE, strain-limit), Newton steps (Newton) or
    /// relaxation passes (Verlet) of the position pass; for strips, plus Newton's steps
    /// where a stalled pass was handed to Newton ([`crate::sim::solver::strips::POSITION_STALL`]).
    pub position_iterations: u32,
    /// Position passes re-run because a preview ended inside a collider or off its rod
    /// ([`crate::sim::MAX_CONTACT_ROUNDS`]); 0 without contact.
    pub contact_rounds: u32,
    /// The contact rounds stopped early: a round's pass ran to its cap after a capped
    /// pass, or the rounds' passes (the last within the tolerance) cost more than
    /// [`crate::sim::ROUND_WORK`] times the step's own ([`crate::sim::World`]'s contact
    /// rounds).
    pub contact_rounds_cut: bool,
    /// Sweeps or solves of the velocity pass.
    pub velocity_iterations: u32,
    /// Largest relative strain |d − L|/L after the step.
    pub max_strain: f64,
    /// Mean relative strain after the step.
    pub mean_strain: f64,
    /// Largest previewed strain left when the position pass stopped.
    pub position_residual: f64,
    /// Direct solvers (SLE, Newton, strain-limit), and strips where its sweeps stall:
    /// linear solves with a sparse Cholesky factor this step (position + velocity passes).
    pub linear_solves: u32,
    /// SLE and strain-limit: largest relative residual ‖Aλ − b‖/‖b‖ of their solves.
    pub solve_residual: f64,
    /// Direct solvers: numeric factorisations this step (the SLE: 1 unless its chord
    /// iteration stalled; Newton: one per Newton step that did not reuse a factor; strips:
    /// Newton's, where a stalled position pass was handed to it).
    pub factorizations: u32,
    /// SLE and Newton: strips sweeps (002) that finished a position pass they left
    /// unconverged.
    pub polish_sweeps: u32,
    /// Particles held static this step because they lie inside a taut chain
    /// ([`crate::sim::taut`]).
    pub locked_particles: u32,
    /// Direct solvers: whether the symbolic analysis was redone this step (topology, pins
    /// or, for the strain-limit solver, the set of rows changed).
    pub symbolic_analysis: bool,
    /// The step met its tolerance in the state it ended in: the position pass converged
    /// and nothing after it (the contact projection, gliders) moved a constraint outside
    /// it ([`StepStats::ended_outside`]; set false by [`crate::sim::World::finish_step`]).
    pub converged: bool,
    /// The position pass stopped at the iteration cap without meeting the tolerance.
    pub capped: bool,
    /// The cap that stopped it was the safety cap ([`crate::sim::SimParams::hard_cap`]).
    pub hard_capped: bool,
    /// The velocity pass stopped at its cap.
    pub velocity_capped: bool,
    /// A direct solver could not do this step (a failed factorisation, a collapsed
    /// constraint) and a simpler one did it instead: Gauss–Seidel for the SLE, strips for
    /// Newton; the strain-limit solver skipped its impulses.
    pub fell_back: bool,
    /// Newton's pass ended on its answer before the obstacles' friction: the strips
    /// sweeps could not restore the distance constraints after it
    /// ([`super::solver::newton::RUB_POLISH`]).
    pub unrubbed: bool,
    /// Strain-limit solver (001): structural springs outside [a, b] after the step.
    pub limit_violations: u32,
    /// Strain-limit solver: largest relative distance of a spring beyond its limit.
    pub limit_excess: f64,
    /// Strain-limit solver: particles whose motion a constraint matrix restricted (001 §5:
    /// contacts, gliders; pinned and grabbed particles are not counted).
    pub constrained_particles: u32,
    /// Self-contact rows of the step ([`crate::sim::contact`]); 0 with self-collision off.
    pub self_contacts: u32,
    /// Rigid impact zones the fail-safe formed this step ([`crate::sim::contact::zones`]).
    pub impact_zones: u32,
    /// Particles in those zones.
    pub zone_particles: u32,
    /// Rounds of the fail-safe's merges, over all its calls in the step.
    pub zone_rounds: u32,
    /// Times the cloth was solved again around the zones (each a position pass, counted
    /// in the iterations too): where growing them would not do.
    pub zone_resolves: u32,
    /// Projections of the cloth around the zones, each zone a rigid body
    /// ([`crate::sim::contact::project`]): tried before any growth.
    pub zone_projections: u32,
    /// Newton iterations (factorisations) of those projections.
    pub zone_projection_iterations: u32,
    /// Those projections given up for an iteration that stalled
    /// ([`crate::sim::contact::project`]'s stall rule): the step was halved instead.
    pub zone_projections_stalled: u32,
    /// Neither growth nor a re-solve brought every edge at a zone's border back within the
    /// tolerance (the step's strain says by how much; the next step's solve takes it back).
    pub zone_cut_short: bool,
    /// The zones held every particle that can move: the whole cloth moved rigidly this
    /// step (a local fail-safe keeps this rare; docs/numerics.md, "The fail-safe stays
    /// local").
    pub zone_held_whole: bool,
    /// The zones by contact alone — before any growth over the edges their rigid motion
    /// stretched — held every particle that can move: the contacts span the cloth, and no
    /// rule that keeps a zone to its contacts could have held less.
    pub zone_contacts_whole: bool,
    /// The repairs would have held every particle that can move — zones grown over a
    /// cloth that began the step intersection-free, with halvings allowed
    /// ([`crate::sim::SimParams::max_splits`] > 0), or a cloth held where it began — and
    /// the step kept the contacts' zones from before the growth instead, their borders
    /// left stretched ([`StepStats::zone_cut_short`]; docs/numerics.md, "The fail-safe
    /// stays local", repair 8).
    pub zone_growth_undone: bool,
    /// Where the fail-safe's zones, halved as deep as the step may be, would still have held
    /// every particle that can move of a cloth that began the step intersection-free: each
    /// particle moved towards the solve's end within its displacement bound instead
    /// ([`crate::sim::contact::bound`]), and this many were cut short of it (their edges
    /// left stretched: [`StepStats::zone_cut_short`]). `None` where no step needed it.
    pub zone_bounded: Option<u32>,
    /// (Edge, triangle) pairs of the cloth passing through each other at the end of the
    /// step; counted only with self-collision on.
    pub crossings: u32,
    /// Broad-phase gathers of self-contact candidates this step
    /// ([`crate::sim::contact::SelfContact`]): 0 while the cloth stays within the margin of
    /// the last gather, one or more where its motion strays from it.
    pub self_gathers: u32,
    /// Gathers of only the pairs around a few particles that strayed beyond the last
    /// gather's margins ([`crate::sim::contact::SelfContact::regathers`]): each visits only
    /// the patches that hold one.
    pub self_regathers: u32,
    /// Wall time of self-contact's detection, fail-safe and crossing count (inside the
    /// collision, position and integration phases' timings): what self-collision adds
    /// besides the rows' share of the solve.
    pub self_contact_time: Duration,
    /// Constraints that broke at the end of the step, their tension over the tear strength
    /// ([`crate::sim::SimParams::tear_strength`], [`crate::sim::mesh::tear`]).
    pub torn: u32,
    /// Wall time of that tear: choosing the cuts and rebuilding the cloth (every solver
    /// cache follows at the next step).
    pub tear_time: Duration,
    /// Times this step, or a part of it, was undone and taken again as two steps of half
    /// its time because the fail-safe would have held the whole cloth
    /// ([`crate::sim::SimParams::max_splits`]), and again whole where the halves crossed;
    /// the work of every attempt undone is counted here too (at most 1 + 2 × splits
    /// attempts of one step). Planned halvings ([`StepStats::planned_splits`]) count too.
    pub splits: u32,
    /// Of [`StepStats::splits`], those taken without an attempt to undo: a step that
    /// follows one the fail-safe had to halve begins as deep as that one needed, one
    /// halving less after each step that needed none ([`crate::sim::World`]'s split plan).
    pub planned_splits: u32,
    /// Times this step was undone and taken again with the hand yielding: its position
    /// pass ran to its cap while the hand pulled the cloth, so the hand is sent back
    /// inside the reach the cloth showed ([`crate::sim::World`]'s hand yield); the undone
    /// attempt's work is counted here too.
    pub hand_yields: u32,
}

impl StepStats {
    /// Record how a position pass ended: `residual` is the largest previewed strain left,
    /// `converged` whether it met the tolerance, `hard_cap` whether the cap that applied was
    /// the safety cap (so an unconverged pass hit it).
    pub fn set_position_outcome(&mut self, residual: f64, converged: bool, hard_cap: bool) {
        self.position_residual = residual;
        self.converged = converged;
        self.capped = !converged;
        self.hard_capped = !converged && hard_cap;
    }

    /// [`StepStats::set_position_outcome`] for a pass that ran under the iteration cap
    /// `cap` ([`crate::sim::SimParams::effective_cap`]): the cap that stopped an
    /// unconverged pass was the safety cap if `cap` is `hard_cap`.
    pub fn set_capped_position_outcome(
        &mut self,
        residual: f64,
        converged: bool,
        cap: u32,
        hard_cap: u32,
    ) {
        self.set_position_outcome(residual, converged, cap == hard_cap);
    }

    /// Sweeps of the step's position passes: strips' or the iterative method's own, and
    /// the strips sweeps that finished a direct solver's ([`StepStats::polish_sweeps`]).
    pub fn position_sweeps(&self) -> u32 {
        let own = match self.solver {
            SolverKind::Iterative | SolverKind::Strips => self.position_iterations,
            _ => 0,
        };
        own.saturating_add(self.polish_sweeps)
    }

    /// Zero the pass counts (iterations, linear solves, factorisations, polish sweeps)
    /// for a position pass run again in the same step — a contact round, Newton's
    /// self-contact alternation — which sets its own as if alone; returns them for
    /// [`StepStats::add_pass_counts`] once it has run, so the step reports the sum.
    pub fn take_pass_counts(&mut self) -> PassCounts {
        let c = PassCounts {
            position_iterations: self.position_iterations,
            linear_solves: self.linear_solves,
            factorizations: self.factorizations,
            polish_sweeps: self.polish_sweeps,
        };
        (
            self.position_iterations,
            self.linear_solves,
            self.factorizations,
            self.polish_sweeps,
        ) = (0, 0, 0, 0);
        c
    }

    /// Add the counts [`StepStats::take_pass_counts`] took before a pass.
    pub fn add_pass_counts(&mut self, c: PassCounts) {
        self.position_iterations += c.position_iterations;
        self.linear_solves += c.linear_solves;
        self.factorizations += c.factorizations;
        self.polish_sweeps += c.polish_sweeps;
    }

    /// Record how a velocity pass ended: its sweeps or solves, and whether it met the
    /// tolerance (else it stopped at its cap).
    pub fn set_velocity_outcome(&mut self, iterations: u32, converged: bool) {
        self.velocity_iterations = iterations;
        self.velocity_capped = !converged;
    }

    /// Whether the step ended outside its goal: for the strain-limit solver (001) a spring
    /// outside its limits, for the others a structural strain above `tolerance` (with a
    /// relative slack of 1e-9 for round-off).
    pub fn ended_outside(&self, tolerance: f64) -> bool {
        if self.solver == SolverKind::StrainLimit {
            self.limit_violations > 0
        } else {
            self.max_strain > tolerance * (1.0 + 1e-9)
        }
    }

    /// Add the work of `other` — times, iterations, solves, rounds, projections, gathers —
    /// to this step's: a substep of the same frame, or an attempt that was undone and
    /// taken again in parts ([`StepStats::splits`]).
    pub fn add_work(&mut self, other: &StepStats) {
        for p in Phase::ORDER {
            *self.timings.slot(p) += other.timings.get(p);
        }
        self.position_iterations += other.position_iterations;
        self.contact_rounds += other.contact_rounds;
        self.velocity_iterations += other.velocity_iterations;
        self.linear_solves += other.linear_solves;
        self.factorizations += other.factorizations;
        self.polish_sweeps += other.polish_sweeps;
        self.zone_rounds += other.zone_rounds;
        self.zone_resolves += other.zone_resolves;
        self.zone_projections += other.zone_projections;
        self.zone_projection_iterations += other.zone_projection_iterations;
        self.zone_projections_stalled += other.zone_projections_stalled;
        self.self_gathers += other.self_gathers;
        self.self_regathers += other.self_regathers;
        self.self_contact_time += other.self_contact_time;
        self.tear_time += other.tear_time;
        self.splits += other.splits;
        self.planned_splits += other.planned_splits;
        self.hand_yields += other.hand_yields;
    }

    /// Merge `later`, a step that followed this one within the same frame or step, into
    /// this one: work adds up ([`StepStats::add_work`]), strains, rows and zone sizes are
    /// the worst of either, flags say whether either raised them, and the mean strain is
    /// the later's.
    pub fn absorb(&mut self, later: &StepStats) {
        self.add_work(later);
        self.contact_rounds_cut |= later.contact_rounds_cut;
        self.locked_particles = self.locked_particles.max(later.locked_particles);
        self.max_strain = self.max_strain.max(later.max_strain);
        self.mean_strain = later.mean_strain;
        self.position_residual = self.position_residual.max(later.position_residual);
        self.solve_residual = self.solve_residual.max(later.solve_residual);
        self.converged &= later.converged;
        self.capped |= later.capped;
        self.hard_capped |= later.hard_capped;
        self.velocity_capped |= later.velocity_capped;
        self.fell_back |= later.fell_back;
        self.unrubbed |= later.unrubbed;
        self.symbolic_analysis |= later.symbolic_analysis;
        self.limit_violations = self.limit_violations.max(later.limit_violations);
        self.limit_excess = self.limit_excess.max(later.limit_excess);
        self.constrained_particles = self.constrained_particles.max(later.constrained_particles);
        self.self_contacts = self.self_contacts.max(later.self_contacts);
        self.impact_zones += later.impact_zones;
        self.zone_particles = self.zone_particles.max(later.zone_particles);
        self.zone_cut_short |= later.zone_cut_short;
        self.zone_held_whole |= later.zone_held_whole;
        self.zone_contacts_whole |= later.zone_contacts_whole;
        self.zone_growth_undone |= later.zone_growth_undone;
        self.zone_bounded = match (self.zone_bounded, later.zone_bounded) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.crossings = self.crossings.max(later.crossings);
        self.torn += later.torn;
    }

    /// Empty statistics for a step about to run.
    pub fn new(step: u64, solver: SolverKind) -> Self {
        StepStats {
            step,
            solver,
            timings: PhaseTimings::default(),
            position_iterations: 0,
            contact_rounds: 0,
            velocity_iterations: 0,
            max_strain: 0.0,
            mean_strain: 0.0,
            position_residual: 0.0,
            linear_solves: 0,
            solve_residual: 0.0,
            factorizations: 0,
            locked_particles: 0,
            polish_sweeps: 0,
            symbolic_analysis: false,
            converged: false,
            capped: false,
            hard_capped: false,
            velocity_capped: false,
            fell_back: false,
            unrubbed: false,
            limit_violations: 0,
            limit_excess: 0.0,
            constrained_particles: 0,
            self_contacts: 0,
            impact_zones: 0,
            zone_particles: 0,
            contact_rounds_cut: false,
            zone_rounds: 0,
            zone_resolves: 0,
            zone_projections: 0,
            zone_projection_iterations: 0,
            zone_projections_stalled: 0,
            zone_cut_short: false,
            zone_held_whole: false,
            zone_contacts_whole: false,
            zone_growth_undone: false,
            zone_bounded: None,
            crossings: 0,
            self_gathers: 0,
            self_regathers: 0,
            self_contact_time: Duration::ZERO,
            torn: 0,
            tear_time: Duration::ZERO,
            splits: 0,
            planned_splits: 0,
            hand_yields: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two steps merged: work adds up, the worst strain and the flags of either stay, the
    /// mean strain is the later's — a split step's figures are its halves'.
    #[test]
    fn absorb_adds_work_and_keeps_the_worst() {
        // A step's (iterations, projection iterations, max strain, mean strain, ms).
        let step = |k: u64, (its, proj, max, mean, ms): (u32, u32, f64, f64, u64)| {
            let mut s = StepStats::new(k, SolverKind::Newton);
            (s.position_iterations, s.zone_projection_iterations) = (its, proj);
            (s.max_strain, s.mean_strain) = (max, mean);
            s.timings.position = Duration::from_millis(ms);
            s
        };
        let mut a = step(3, (4, 10, 2e-4, 1e-5, 5));
        (a.converged, a.zone_held_whole) = (true, true);
        let mut b = step(4, (6, 1, 1e-4, 3e-5, 7));
        (b.splits, b.planned_splits, b.zone_projections_stalled) = (2, 1, 1);
        a.absorb(&b);
        assert_eq!(a.step, 3);
        assert_eq!(a.position_iterations, 10);
        assert_eq!(a.zone_projection_iterations, 11);
        assert_eq!((a.splits, a.planned_splits), (2, 1));
        assert_eq!(a.zone_projections_stalled, 1);
        assert_eq!(a.max_strain, 2e-4);
        assert_eq!(a.mean_strain, 3e-5);
        assert!(!a.converged && a.zone_held_whole);
        assert_eq!(a.timings.position, Duration::from_millis(12));
    }
}
