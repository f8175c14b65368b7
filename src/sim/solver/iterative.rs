//! The iterative method of 004 §3.4.1 (Algorithm 1): Gauss–Seidel over the distance
//! constraints, each one previewing the step and applying the impulse of eq. 2, until
//! every previewed strain is within the tolerance; then integration; then the velocity
//! constraints of eq. 3 the same way.
//!
//! Constraints that share no particle are independent (004 §3.4.1, last paragraph): the
//! sweep visits the colour classes of [`crate::sim::cloth::colour_edges`] in order and
//! solves each class in parallel with rayon. Within a class no two constraints touch the
//! same particle, so the result is bit-identical for any thread count.

use glam::DVec3;
use rayon::prelude::*;

use super::{Solver, SolverKind, StepCtx};
use crate::sim::cloth::Cloth;
use crate::sim::kernels::{self, position_impulse, preview, velocity_impulse};
use crate::sim::params::{ImpulseDirection, SimParams};

/// Colour classes smaller than this are solved on the calling thread: rayon's fork/join
/// overhead (a few µs) exceeds the work below a few thousand constraints.
pub const PAR_MIN_CONSTRAINTS: usize = 4096;

/// Result of one pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassResult {
    /// Sweeps done (the last one found nothing to correct if converged).
    pub sweeps: u32,
    /// Every constraint was within tolerance.
    pub converged: bool,
    /// Largest strain (position pass) or relative velocity / (L/h) (velocity pass) seen in
    /// the last sweep, before its corrections.
    pub residual: f64,
}

type Delta = Option<(DVec3, DVec3, f64)>;

/// Scratch buffer reused across sweeps (one slot per constraint of a colour).
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    deltas: Vec<Delta>,
}

fn sweep_colours<F>(cloth: &mut Cloth, scratch: &mut Scratch, compute: F) -> (bool, f64)
where
    F: Fn(&Cloth, usize) -> Delta + Sync,
{
    let mut any = false;
    let mut worst = 0.0f64;
    let parallel = rayon::current_num_threads() > 1;
    for ci in 0..cloth.topology.colours.len() {
        let n = cloth.topology.colours[ci].len();
        if parallel && n >= PAR_MIN_CONSTRAINTS {
            scratch.deltas.resize(n, None);
            {
                let c: &Cloth = cloth;
                let colour = &c.topology.colours[ci];
                scratch
                    .deltas
                    .par_iter_mut()
                    .zip(colour.par_iter())
                    .for_each(|(slot, &e)| *slot = compute(c, e as usize));
            }
            for k in 0..n {
                if let Some((da, db, s)) = scratch.deltas[k] {
                    let [a, b] = cloth.topology.edges[cloth.topology.colours[ci][k] as usize];
                    cloth.particles.v[a as usize] += da;
                    cloth.particles.v[b as usize] += db;
                    any = true;
                    worst = worst.max(s);
                }
            }
        } else {
            for k in 0..n {
                let e = cloth.topology.colours[ci][k] as usize;
                if let Some((da, db, s)) = compute(cloth, e) {
                    let [a, b] = cloth.topology.edges[e];
                    cloth.particles.v[a as usize] += da;
                    cloth.particles.v[b as usize] += db;
                    any = true;
                    worst = worst.max(s);
                }
            }
        }
    }
    (any, worst)
}

/// Largest previewed strain over all constraints.
pub fn preview_max_strain(cloth: &Cloth, accel: &[DVec3], h: f64) -> f64 {
    let p = &cloth.particles;
    let t = &cloth.topology;
    t.edges
        .iter()
        .zip(&t.rest)
        .filter(|(e, _)| p.inv_mass[e[0] as usize] + p.inv_mass[e[1] as usize] > 0.0)
        .map(|(&[a, b], &l)| {
            let (a, b) = (a as usize, b as usize);
            let pa = preview(p.x[a], p.v[a], accel[a], h);
            let pb = preview(p.x[b], p.v[b], accel[b], h);
            kernels::strain(pa.distance(pb), l)
        })
        .fold(0.0, f64::max)
}

/// Position pass of Algorithm 1: sweeps until a sweep finds every previewed strain
/// ≤ `params.tolerance`, or `cap` sweeps.
pub fn position_pass(
    cloth: &mut Cloth,
    params: &SimParams,
    accel: &[DVec3],
    cap: u32,
    scratch: &mut Scratch,
) -> PassResult {
    let h = params.dt;
    let tol = params.tolerance;
    let mode = params.direction;
    let compute = |c: &Cloth, e: usize| -> Delta {
        let [a, b] = c.topology.edges[e];
        let (a, b) = (a as usize, b as usize);
        let p = &c.particles;
        let (ka, kb) = (p.inv_mass[a], p.inv_mass[b]);
        if ka + kb == 0.0 {
            return None;
        }
        let pa = preview(p.x[a], p.v[a], accel[a], h);
        let pb = preview(p.x[b], p.v[b], accel[b], h);
        let dir = match mode {
            ImpulseDirection::Preview => None,
            ImpulseDirection::Current => Some(kernels::unit(p.x[a], p.x[b])?),
        };
        position_impulse(pa, pb, dir, ka, kb, c.topology.rest[e], tol, h)
    };
    let mut sweeps = 0;
    while sweeps < cap {
        sweeps += 1;
        let (any, _) = sweep_colours(cloth, scratch, compute);
        if !any {
            return PassResult {
                sweeps,
                converged: true,
                residual: preview_max_strain(cloth, accel, h),
            };
        }
    }
    let residual = preview_max_strain(cloth, accel, h);
    PassResult {
        sweeps,
        converged: residual <= tol,
        residual,
    }
}

/// Velocity pass (eq. 3): sweeps until the relative velocity along every constraint is
/// ≤ tolerance·L/h — the velocity that would produce the allowed strain in one step.
pub fn velocity_pass(
    cloth: &mut Cloth,
    params: &SimParams,
    cap: u32,
    scratch: &mut Scratch,
) -> PassResult {
    let h = params.dt;
    let tol = params.tolerance;
    let compute = |c: &Cloth, e: usize| -> Delta {
        let [a, b] = c.topology.edges[e];
        let (a, b) = (a as usize, b as usize);
        let p = &c.particles;
        let (ka, kb) = (p.inv_mass[a], p.inv_mass[b]);
        if ka + kb == 0.0 {
            return None;
        }
        let n = kernels::unit(p.x[a], p.x[b])?;
        let l = c.topology.rest[e];
        let (da, db) = velocity_impulse(p.v[a], p.v[b], n, ka, kb, tol * l / h)?;
        Some((da, db, (p.v[b] - p.v[a]).dot(n).abs() * h / l))
    };
    let mut sweeps = 0;
    let mut residual = 0.0;
    while sweeps < cap {
        sweeps += 1;
        let (any, worst) = sweep_colours(cloth, scratch, compute);
        if !any {
            return PassResult {
                sweeps,
                converged: true,
                residual: 0.0,
            };
        }
        residual = worst;
    }
    PassResult {
        sweeps,
        converged: false,
        residual,
    }
}

/// The iterative impulse solver (004 §3.4.1).
#[derive(Debug, Default, Clone)]
pub struct IterativeSolver {
    scratch: Scratch,
}

impl Solver for IterativeSolver {
    fn kind(&self) -> SolverKind {
        SolverKind::Iterative
    }

    fn position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let cap = ctx.params.effective_cap();
        let r = position_pass(ctx.cloth, ctx.params, ctx.accel, cap, &mut self.scratch);
        ctx.stats.position_iterations = r.sweeps;
        ctx.stats
            .set_position_outcome(r.residual, r.converged, cap == ctx.params.hard_cap);
    }

    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>) {
        if !ctx.params.velocity_pass {
            return;
        }
        let r = velocity_pass(
            ctx.cloth,
            ctx.params,
            ctx.params.effective_cap(),
            &mut self.scratch,
        );
        ctx.stats.velocity_iterations = r.sweeps;
        ctx.stats.velocity_capped = !r.converged;
    }
}
