//! Position Verlet with iterative constraint relaxation — Mosegaard's cloth (003), the
//! classic baseline.
//!
//! Verlet has its own phases inside the common step: the collision phase does nothing
//! (contact is a projection, 003), the *position pass* is the Verlet move
//! x' = x + (1 − damping)·v·h + a·h² (with x_prev = x − v·h, so the cloth state stays
//! (x, v) and solvers can be switched between steps) followed by up to `verlet_passes`
//! relaxation passes that move both ends of each violated constraint, mass-weighted, and
//! the collider projection; *integration* derives v = (x' − x)/h; the velocity pass is
//! empty. The relaxation stops early once a pass finds every strain within tolerance.

use glam::DVec3;

use super::{ContactModel, Solver, SolverKind, StepCtx, StepMark};
use crate::sim::cloth::{Cloth, ConstraintImpulses};
use crate::sim::collision::project_out;
use crate::sim::kernels;

/// The Verlet baseline (003).
#[derive(Debug, Default, Clone)]
pub struct VerletSolver {
    x_old: Vec<DVec3>,
    /// The step whose position pass filled `x_old`.
    x_old_of: Option<StepMark>,
}

/// One relaxation pass (003's `satisfyConstraint`, mass-weighted, 004's strain measure):
/// returns whether anything was corrected and the largest strain seen before correction.
/// A correction that moves the ends by Δx is the impulse m·Δx/h each ([`Cloth::impulses`],
/// with the step `h`).
pub fn relax_pass(cloth: &mut Cloth, tol: f64, h: f64) -> (bool, f64) {
    let t = &cloth.topology;
    let log = &mut cloth.impulses;
    let p = &mut cloth.particles;
    let mut any = false;
    let mut worst = 0.0f64;
    for colour in &t.colours {
        for &e in colour {
            let e = e as usize;
            let [a, b] = t.edges[e];
            let (a, b) = (a as usize, b as usize);
            let (ka, kb) = (p.inv_mass[a], p.inv_mass[b]);
            let w = ka + kb;
            if w == 0.0 {
                continue;
            }
            let d = p.x[b] - p.x[a];
            let len = d.length();
            let l = t.rest[e];
            let s = (len - l).abs() / l;
            if s <= tol || kernels::is_degenerate(len, l) {
                continue;
            }
            worst = worst.max(s);
            any = true;
            let corr = d * ((len - l) / (len * w));
            p.x[a] += corr * ka;
            p.x[b] -= corr * kb;
            log.record_tension(e, (len - l) / (w * h));
        }
    }
    (any, worst)
}

impl Solver for VerletSolver {
    fn kind(&self) -> SolverKind {
        SolverKind::Verlet
    }

    fn contact_model(&self) -> ContactModel {
        ContactModel::Projection
    }

    fn solves_velocity_constraints(&self) -> bool {
        false
    }

    fn position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let h = ctx.params.dt;
        let keep = 1.0 - ctx.params.verlet_damping;
        self.x_old_of = Some(StepMark::of(ctx));
        let p = &mut ctx.cloth.particles;
        self.x_old.clear();
        self.x_old.extend_from_slice(&p.x);
        for i in 0..p.x.len() {
            // Static (pinned or grabbed) particles follow their velocity undamped, so a
            // grabbed particle lands exactly on its target.
            let damp = if p.inv_mass[i] > 0.0 { keep } else { 1.0 };
            p.x[i] += p.v[i] * (damp * h) + ctx.accel[i] * (h * h);
        }
        let passes = ctx.params.verlet_passes.min(ctx.params.hard_cap);
        let tol = ctx.params.tolerance;
        let mut done = 0;
        let mut converged = false;
        while done < passes {
            let (any, _) = relax_pass(ctx.cloth, tol, h);
            if !any {
                converged = true;
                break;
            }
            done += 1;
        }
        let p = &mut ctx.cloth.particles;
        project_out(
            &mut p.x,
            &mut p.v,
            &p.inv_mass,
            ctx.params,
            ctx.ball_end,
            false,
            0.0,
        );
        let (max, _) = ctx.cloth.strain_stats();
        ctx.stats.position_iterations = done;
        ctx.stats
            .set_position_outcome(max, converged || max <= tol, false);
    }

    fn integrate(&mut self, ctx: &mut StepCtx<'_>) {
        let h = ctx.params.dt;
        // Only the positions this solver's own position pass of this step saved.
        if self.x_old_of != Some(StepMark::of(ctx)) {
            return;
        }
        let p = &mut ctx.cloth.particles;
        for i in 0..p.len() {
            p.v[i] = (p.x[i] - self.x_old[i]) / h;
        }
    }

    fn velocity_pass(&mut self, _ctx: &mut StepCtx<'_>) {}
}
