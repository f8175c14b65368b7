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
use crate::sim::cloth::ConstraintImpulses;
use crate::sim::cloth::{Cloth, Topology};
use crate::sim::collision::ContactSweep;
use crate::sim::kernels::{self, StrainBand, position_impulse, velocity_impulse};
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
    /// Position pass: the largest previewed strain after the pass. Velocity pass: the
    /// largest relative velocity·h/L the last sweep corrected (0 when it corrected none).
    pub residual: f64,
}

type Delta = Option<(DVec3, DVec3, f64)>;

/// One constraint of the position pass, gathered once per pass in sweep (colour) order so
/// that a sweep reads one contiguous record instead of chasing edge, rest-length and
/// inverse-mass arrays. Constraints between two static particles are left out.
#[derive(Debug, Clone, Copy)]
struct PositionLink {
    a: u32,
    b: u32,
    /// The constraint's index (its impulses are recorded, [`Cloth::impulses`]).
    e: u32,
    ka: f64,
    kb: f64,
    band: StrainBand,
}

/// One constraint of the velocity pass (eq. 3). Positions do not change during the pass,
/// so the direction, the velocity tolerance and the strain scale are computed once.
#[derive(Debug, Clone, Copy)]
struct VelocityLink {
    a: u32,
    b: u32,
    e: u32,
    ka: f64,
    kb: f64,
    /// Unit direction b − a at t + h.
    n: DVec3,
    /// tolerance·L/h: the relative velocity that would produce the allowed strain in h.
    tol_v: f64,
    /// h/L: converts a relative velocity into the strain it produces in one step.
    scale: f64,
}

/// The correction one constraint asks for, given the velocities: (Δv_a, Δv_b, m), where m
/// is the size of the violation for a pass that tracks it per correction (the velocity
/// pass) and 0 for one that measures its residual afterwards (the position pass).
trait LinkKernel: Sync {
    type Link: Copy + Send + Sync;
    fn ends(link: &Self::Link) -> (usize, usize);
    /// The constraint's index and its ends' inverse masses.
    fn edge(link: &Self::Link) -> (usize, f64, f64);
    fn correction(&self, link: &Self::Link, v: &[DVec3]) -> Delta;
}

/// Eq. 2 on the previewed positions drift + v·h ([`kernels::drift`]), the impulse along
/// the preview direction ([`ImpulseDirection::Preview`]).
struct PositionKernel<'a> {
    drift: &'a [DVec3],
    h: f64,
}

impl PositionKernel<'_> {
    #[inline(always)]
    fn impulse(&self, l: &PositionLink, dir: Option<DVec3>, v: &[DVec3]) -> Delta {
        let (a, b) = (l.a as usize, l.b as usize);
        let pa = self.drift[a] + v[a] * self.h;
        let pb = self.drift[b] + v[b] * self.h;
        let (da, db) = position_impulse(pa, pb, dir, l.ka, l.kb, &l.band, self.h)?;
        // The position pass measures its residual after the sweeps, not per correction.
        Some((da, db, 0.0))
    }
}

impl LinkKernel for PositionKernel<'_> {
    type Link = PositionLink;

    #[inline(always)]
    fn ends(l: &PositionLink) -> (usize, usize) {
        (l.a as usize, l.b as usize)
    }

    #[inline(always)]
    fn edge(l: &PositionLink) -> (usize, f64, f64) {
        (l.e as usize, l.ka, l.kb)
    }

    #[inline(always)]
    fn correction(&self, l: &PositionLink, v: &[DVec3]) -> Delta {
        self.impulse(l, None, v)
    }
}

/// [`PositionKernel`] with the impulse along the current direction (eq. 2 as printed,
/// [`ImpulseDirection::Current`]), fixed for the pass.
struct CurrentDirectionKernel<'a>(PositionKernel<'a>);

impl LinkKernel for CurrentDirectionKernel<'_> {
    type Link = (PositionLink, DVec3);

    #[inline(always)]
    fn ends(l: &(PositionLink, DVec3)) -> (usize, usize) {
        (l.0.a as usize, l.0.b as usize)
    }

    #[inline(always)]
    fn edge(l: &(PositionLink, DVec3)) -> (usize, f64, f64) {
        (l.0.e as usize, l.0.ka, l.0.kb)
    }

    #[inline(always)]
    fn correction(&self, l: &(PositionLink, DVec3), v: &[DVec3]) -> Delta {
        self.0.impulse(&l.0, Some(l.1), v)
    }
}

/// Eq. 3 along the fixed directions of [`VelocityLink`].
struct VelocityKernel;

impl LinkKernel for VelocityKernel {
    type Link = VelocityLink;

    #[inline(always)]
    fn ends(l: &VelocityLink) -> (usize, usize) {
        (l.a as usize, l.b as usize)
    }

    #[inline(always)]
    fn edge(l: &VelocityLink) -> (usize, f64, f64) {
        (l.e as usize, l.ka, l.kb)
    }

    #[inline(always)]
    fn correction(&self, l: &VelocityLink, v: &[DVec3]) -> Delta {
        let (a, b) = (l.a as usize, l.b as usize);
        let (da, db, rel) = velocity_impulse(v[a], v[b], l.n, l.ka, l.kb, l.tol_v)?;
        Some((da, db, rel.abs() * l.scale))
    }
}

/// Scratch buffers reused across sweeps and steps (no allocation once warm).
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    deltas: Vec<Delta>,
    drift: Vec<DVec3>,
    position_links: Vec<PositionLink>,
    current_links: Vec<(PositionLink, DVec3)>,
    velocity_links: Vec<VelocityLink>,
    /// End of each colour class in the link arrays.
    bounds: Vec<usize>,
}

/// Gather the links of every colour class in sweep order, recording where each class ends.
fn gather<L>(
    t: &Topology,
    inv_mass: &[f64],
    links: &mut Vec<L>,
    bounds: &mut Vec<usize>,
    make: impl Fn(usize, usize, usize, f64, f64) -> Option<L>,
) {
    links.clear();
    bounds.clear();
    for colour in &t.colours {
        for &e in colour {
            let [a, b] = t.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let (ka, kb) = (inv_mass[a], inv_mass[b]);
            if ka + kb > 0.0
                && let Some(link) = make(e as usize, a, b, ka, kb)
            {
                links.push(link);
            }
        }
        bounds.push(links.len());
    }
}

/// Where a sweep puts the corrections of a colour class solved in parallel, and where it
/// records the impulses it applies ([`Cloth::impulses`]): the log and the positions that
/// give each constraint's direction.
struct Impulses<'a> {
    deltas: &'a mut Vec<Delta>,
    log: &'a mut Option<Vec<f64>>,
    x: &'a [DVec3],
}

impl Impulses<'_> {
    /// The correction (Δv_a, Δv_b) = (−k_a·J, k_b·J) of link `l` as the impulse J on b.
    #[inline(always)]
    fn record<K: LinkKernel>(&mut self, l: &K::Link, a: usize, b: usize, da: DVec3, db: DVec3) {
        if self.log.is_some() {
            let (e, ka, kb) = K::edge(l);
            self.log
                .record_change(e, (da, db), (ka, kb), self.x[a], self.x[b]);
        }
    }
}

/// One Gauss–Seidel sweep over the gathered links, colour class by colour class: returns
/// whether anything was corrected and the largest strain corrected.
fn sweep<K: LinkKernel>(
    kernel: &K,
    links: &[K::Link],
    bounds: &[usize],
    v: &mut [DVec3],
    log: &mut Impulses<'_>,
) -> (bool, f64) {
    let mut any = false;
    let mut worst = 0.0f64;
    let parallel = rayon::current_num_threads() > 1;
    let mut start = 0;
    for &end in bounds {
        let class = &links[start..end];
        start = end;
        if parallel && class.len() >= PAR_MIN_CONSTRAINTS {
            let deltas = &mut *log.deltas;
            deltas.resize(class.len(), None);
            {
                let v: &[DVec3] = v;
                deltas
                    .par_iter_mut()
                    .zip(class.par_iter())
                    .for_each(|(slot, l)| *slot = kernel.correction(l, v));
            }
            for (l, k) in class.iter().zip(0..) {
                let delta = log.deltas[k];
                if let Some((da, db, s)) = delta {
                    let (a, b) = K::ends(l);
                    v[a] += da;
                    v[b] += db;
                    any = true;
                    worst = worst.max(s);
                    log.record::<K>(l, a, b, da, db);
                }
            }
        } else {
            for l in class {
                if let Some((da, db, s)) = kernel.correction(l, v) {
                    let (a, b) = K::ends(l);
                    v[a] += da;
                    v[b] += db;
                    any = true;
                    worst = worst.max(s);
                    log.record::<K>(l, a, b, da, db);
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
            let d = kernels::preview_distance(&p.x, &p.v, accel, a as usize, b as usize, h);
            kernels::strain(d, l)
        })
        .fold(0.0, f64::max)
}

/// Sweeps of `kernel` until one corrects nothing or `cap` sweeps; returns the sweeps done,
/// whether the last one corrected nothing, and the largest violation it corrected
/// ([`LinkKernel::correction`]'s third value; 0 when it corrected none).
fn sweep_until_quiet<K: LinkKernel>(
    kernel: &K,
    links: &[K::Link],
    bounds: &[usize],
    v: &mut [DVec3],
    log: &mut Impulses<'_>,
    cap: u32,
    after: &mut dyn FnMut(&mut [DVec3]) -> bool,
) -> (u32, bool, f64) {
    let mut sweeps = 0;
    let mut worst = 0.0;
    while sweeps < cap {
        sweeps += 1;
        let (mut any, w) = sweep(kernel, links, bounds, v, log);
        any |= after(v);
        if !any {
            return (sweeps, true, 0.0);
        }
        worst = w;
    }
    (sweeps, false, worst)
}

/// Position pass of Algorithm 1: sweeps until a sweep finds every previewed strain
/// ≤ `params.tolerance` (and, given `contacts`, every preview outside the colliders and on
/// the rods: the contact set is visited after each sweep, in the same Gauss–Seidel loop),
/// or `cap` sweeps.
pub fn position_pass(
    cloth: &mut Cloth,
    params: &SimParams,
    accel: &[DVec3],
    contacts: Option<&ContactSweep<'_>>,
    cap: u32,
    scratch: &mut Scratch,
) -> PassResult {
    let h = params.dt;
    let tol = params.tolerance;
    let x = &cloth.particles.x;
    let rest = &cloth.topology.rest;
    let link = |e: usize, a: usize, b: usize, ka, kb| PositionLink {
        a: a as u32,
        b: b as u32,
        e: e as u32,
        ka,
        kb,
        band: StrainBand::new(rest[e], tol),
    };
    scratch.drift.clear();
    scratch
        .drift
        .extend(x.iter().zip(accel).map(|(&x, &a)| kernels::drift(x, a, h)));
    let kernel = PositionKernel {
        drift: &scratch.drift,
        h,
    };
    let inv_mass = &cloth.particles.inv_mass;
    let drift = &scratch.drift;
    let mut after =
        |v: &mut [DVec3]| contacts.is_some_and(|c| c.visit(|i| drift[i], v, inv_mass) > 0);
    let v = &mut cloth.particles.v;
    let mut log = Impulses {
        deltas: &mut scratch.deltas,
        log: &mut cloth.impulses,
        x,
    };
    let (sweeps, quiet, _) = match params.direction {
        ImpulseDirection::Preview => {
            gather(
                &cloth.topology,
                &cloth.particles.inv_mass,
                &mut scratch.position_links,
                &mut scratch.bounds,
                |e, a, b, ka, kb| Some(link(e, a, b, ka, kb)),
            );
            sweep_until_quiet(
                &kernel,
                &scratch.position_links,
                &scratch.bounds,
                v,
                &mut log,
                cap,
                &mut after,
            )
        }
        ImpulseDirection::Current => {
            gather(
                &cloth.topology,
                &cloth.particles.inv_mass,
                &mut scratch.current_links,
                &mut scratch.bounds,
                |e, a, b, ka, kb| {
                    Some((link(e, a, b, ka, kb), kernels::unit(x[a], x[b], rest[e])?))
                },
            );
            sweep_until_quiet(
                &CurrentDirectionKernel(kernel),
                &scratch.current_links,
                &scratch.bounds,
                v,
                &mut log,
                cap,
                &mut after,
            )
        }
    };
    let residual = preview_max_strain(cloth, accel, h);
    PassResult {
        sweeps,
        converged: quiet || residual <= tol,
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
    let x = &cloth.particles.x;
    let rest = &cloth.topology.rest;
    gather(
        &cloth.topology,
        &cloth.particles.inv_mass,
        &mut scratch.velocity_links,
        &mut scratch.bounds,
        |e, a, b, ka, kb| {
            Some(VelocityLink {
                a: a as u32,
                b: b as u32,
                e: e as u32,
                ka,
                kb,
                n: kernels::unit(x[a], x[b], rest[e])?,
                tol_v: kernels::velocity_tolerance(tol, rest[e], h),
                scale: h / rest[e],
            })
        },
    );
    let (sweeps, converged, residual) = sweep_until_quiet(
        &VelocityKernel,
        &scratch.velocity_links,
        &scratch.bounds,
        &mut cloth.particles.v,
        &mut Impulses {
            deltas: &mut scratch.deltas,
            log: &mut cloth.impulses,
            x: &cloth.particles.x,
        },
        cap,
        &mut |_| false,
    );
    PassResult {
        sweeps,
        converged,
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
        let contacts = ctx.contacts();
        let r = position_pass(
            ctx.cloth,
            ctx.params,
            ctx.accel,
            Some(&contacts),
            cap,
            &mut self.scratch,
        );
        ctx.stats.position_iterations = r.sweeps;
        ctx.stats
            .set_capped_position_outcome(r.residual, r.converged, cap, ctx.params.hard_cap);
    }

    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let r = velocity_pass(
            ctx.cloth,
            ctx.params,
            ctx.params.effective_cap(),
            &mut self.scratch,
        );
        ctx.stats.set_velocity_outcome(r.sweeps, r.converged);
    }
}
