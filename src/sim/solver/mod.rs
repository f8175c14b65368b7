//! The solvers. One trait, [`Solver`]; the cloth state lives in [`crate::sim::World`], not
//! in a solver, so switching solvers between two steps keeps the cloth where it is.

use glam::DVec3;

use super::cloth::Cloth;
use super::collision::{self, ContactSweep};
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
    /// Statistics of the step being run.
    pub stats: &'a mut StepStats,
}

impl<'a> StepCtx<'a> {
    /// The step's contact set — ball, ground, gliders — with the contact's tolerance
    /// ([`collision::contact_slop`], a pass over the rest lengths, so only when there is
    /// contact: every strips pass asks, also Newton's predictor and velocity pass).
    pub fn contacts(&self) -> ContactSweep<'a> {
        let mut c = ContactSweep {
            params: self.params,
            ball: self.ball_end,
            gliders: self.gliders,
            slop: 0.0,
        };
        if !c.is_empty() {
            c.slop = collision::contact_slop(self.cloth, self.params);
        }
        c
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
