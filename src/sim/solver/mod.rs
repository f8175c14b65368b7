//! The solvers. One trait, [`Solver`]; the cloth state lives in [`crate::sim::World`], not
//! in a solver, so switching solvers between two steps keeps the cloth where it is.

use glam::DVec3;

use super::cloth::Cloth;
use super::collision::{self, ContactSweep};
use super::contact::SelfRows;
use super::dof::Glider;
use super::kernels;
use super::params::{Ball, SimParams};
use super::stats::StepStats;

pub use super::kind::SolverKind;

pub mod iterative;
pub mod newton;
pub mod sle;
pub mod strain_limit;
pub mod strips;
pub mod verlet;

pub use iterative::IterativeSolver;
pub use newton::NewtonSolver;
pub use sle::{FillOrdering, SleSolver, SupernodalChoice};
pub use strain_limit::StrainLimitSolver;
pub use strips::StripsSolver;
pub use verlet::VerletSolver;

/// Everything a solver phase may read or change.
pub struct StepCtx<'a> {
    /// The cloth (positions, velocities, inverse masses, topology).
    pub cloth: &'a mut Cloth,
    /// Parameters of this step.
    pub params: &'a SimParams,
    /// Constant acceleration of each particle over the step (gravity, wind; 0 for static).
    pub accel: &'a [DVec3],
    /// The ball at the end of the step, if any.
    pub ball_end: Option<&'a Ball>,
    /// Particles on gliders (001 §5).
    pub gliders: &'a [Glider],
    /// The cloth's contacts with itself this step ([`crate::sim::contact`]), if
    /// self-collision is on.
    pub selfs: Option<SelfRows<'a>>,
    /// Statistics of the step being run.
    pub stats: &'a mut StepStats,
}

/// Which step of which cloth something a solver keeps from one step to the next belongs
/// to: a warm start, a factor, what a pass learnt. It holds only for the same cloth (its
/// topology) a step or a few later — not after a solver switch, a rebuilt world or a
/// replaced cloth, whose steps are not the ones it was made in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepMark {
    topology: u64,
    step: u64,
}

impl StepMark {
    /// The step `ctx` runs.
    pub fn of(ctx: &StepCtx<'_>) -> StepMark {
        StepMark {
            topology: ctx.cloth.topology.id(),
            step: ctx.stats.step,
        }
    }

    /// Whether `now` is this step or one of the `steps − 1` after it, on the same cloth.
    pub fn within(self, now: StepMark, steps: u64) -> bool {
        self.topology == now.topology && now.step >= self.step && now.step - self.step < steps
    }

    /// Whether `now` is the step right after this one, on the same cloth.
    pub fn precedes(self, now: StepMark) -> bool {
        self.topology == now.topology && self.step.wrapping_add(1) == now.step
    }
}

impl<'a> StepCtx<'a> {
    /// This step's context for a pass run with other parameters (`params`: a pass capped
    /// short of the step's own cap) and, without `selfs`, blind to the self-contact rows.
    pub fn reborrow<'b>(&'b mut self, params: &'b SimParams, selfs: bool) -> StepCtx<'b>
    where
        'a: 'b,
    {
        StepCtx {
            cloth: &mut *self.cloth,
            params,
            accel: self.accel,
            ball_end: self.ball_end,
            gliders: self.gliders,
            selfs: if selfs { self.selfs } else { None },
            stats: &mut *self.stats,
        }
    }

    /// The step's contact set — ball, ground, gliders, self-contacts — with the contact's tolerance
    /// ([`collision::contact_slop`], a pass over the rest lengths, so only when there is
    /// contact: every strips pass asks, also Newton's predictor and velocity pass).
    pub fn contacts(&self) -> ContactSweep<'a> {
        let mut c = self.contact_set();
        if !c.is_empty() {
            c.slop = collision::contact_slop(self.cloth, self.params);
        }
        c
    }

    /// Whether the step has a ball, ground, rod or self-contact (without the contact's tolerance, which
    /// costs a pass over the rest lengths).
    pub fn has_contacts(&self) -> bool {
        !self.contact_set().is_empty()
    }

    /// The contact set with a zero tolerance.
    fn contact_set(&self) -> ContactSweep<'a> {
        ContactSweep {
            params: self.params,
            ball: self.ball_end,
            gliders: self.gliders,
            slop: 0.0,
            selfs: self.selfs,
        }
    }
}

/// How a solver handles contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactModel {
    /// Contact impulses before the position pass, projection after integration.
    Impulse,
    /// Positions projected out of colliders inside the solver's own position pass.
    Projection,
    /// Contact impulses before the position pass; the solver keeps particles in contact on
    /// the surface with constraint matrices (001 §5) and projects only the others out.
    Constraint,
}

/// A cloth solver: the position pass, integration and velocity pass of 004 Algorithm 1.
pub trait Solver: Send + Sync {
    /// Which solver this is.
    fn kind(&self) -> SolverKind;

    /// How contact is handled; decides whether the collision phase applies impulses.
    fn contact_model(&self) -> ContactModel {
        ContactModel::Impulse
    }

    /// Position constraints: impulses at time t computed from a preview of t + h.
    fn position_pass(&mut self, ctx: &mut StepCtx<'_>);

    /// Integrate positions and velocities to t + h. The default is 004 §3.1's exact
    /// integration under constant forces.
    fn integrate(&mut self, ctx: &mut StepCtx<'_>) {
        integrate_exact(ctx.cloth, ctx.accel, ctx.params.dt);
    }

    /// Velocity constraints at t + h (eq. 3).
    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>);

    /// Whether [`Solver::velocity_pass`] solves the velocity constraints of eq. 3, so that
    /// the world skips it when [`SimParams::velocity_pass`] is off. The strain-limit
    /// solver's only measures the limits (and Verlet's is empty): they always run.
    fn solves_velocity_constraints(&self) -> bool {
        true
    }
}

/// 004 §3.1: c += v·h + ½·a·h², v += a·h for every particle (static ones have v = a = 0).
pub fn integrate_exact(cloth: &mut Cloth, accel: &[DVec3], h: f64) {
    let p = &mut cloth.particles;
    for ((x, v), &a) in p.x.iter_mut().zip(p.v.iter_mut()).zip(accel) {
        *x = kernels::preview(*x, *v, a, h);
        *v = kernels::advance_velocity(*v, a, h);
    }
}

impl SolverKind {
    /// A fresh solver of this kind.
    pub fn create(self) -> Box<dyn Solver> {
        match self {
            SolverKind::Iterative => Box::new(IterativeSolver::default()),
            SolverKind::Sle => Box::new(SleSolver::default()),
            SolverKind::Verlet => Box::new(VerletSolver::default()),
            SolverKind::Strips => Box::new(StripsSolver::default()),
            SolverKind::StrainLimit => Box::new(StrainLimitSolver::default()),
            SolverKind::Newton => Box::new(NewtonSolver::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StepMark;

    fn mark(topology: u64, step: u64) -> StepMark {
        StepMark { topology, step }
    }

    /// A mark holds for the steps after it on its own cloth only: never for an earlier
    /// step (a world rebuilt with the same cloth starts counting again), never for another
    /// cloth, and `precedes` for the next step alone.
    #[test]
    fn a_step_mark_holds_for_the_next_steps_of_its_own_cloth() {
        let m = mark(7, 10);
        assert!(m.precedes(mark(7, 11)));
        assert!(!m.precedes(mark(7, 10)) && !m.precedes(mark(7, 12)));
        assert!(!m.precedes(mark(8, 11)));
        assert!(m.within(mark(7, 10), 1) && !m.within(mark(7, 11), 1));
        assert!(m.within(mark(7, 25), 16) && !m.within(mark(7, 26), 16));
        assert!(!m.within(mark(7, 9), 16) && !m.within(mark(8, 10), 16));
        assert!(mark(7, u64::MAX).precedes(mark(7, 0)));
    }
}
