//! Strips (002, Bender & Bayer; "Impulse-based dynamic simulation in linear time"): the
//! constraint mesh is covered by acyclic chains — for a grid, its rows and its columns. The
//! impulse system of one chain is tridiagonal (a constraint shares a particle only with its
//! neighbours in the chain), so a chain's linearised impulses are solved exactly in
//! O(length) with the Thomas algorithm. Chains that share particles are coupled by block
//! Gauss–Seidel: all rows (in parallel — rows share no particle), then all columns, until
//! every previewed strain is within the tolerance or the cap. The position preview, the
//! impulse directions (from the preview) and the velocity pass are those of the iterative
//! solver (004 §3.2).

use glam::DVec3;
use rayon::prelude::*;

use super::iterative;
use super::{Solver, SolverKind, StepCtx};
use crate::sim::cloth::Cloth;
use crate::sim::kernels::preview;

/// A chain: consecutive constraints (edge indices), each sharing its second particle with
/// the next one's first.
#[derive(Debug, Clone, Default)]
struct Chain {
    edges: Vec<u32>,
}

/// Rows first, then columns: the two families of a grid's strips.
fn grid_chains(cloth: &Cloth) -> [Vec<Chain>; 2] {
    let t = &cloth.topology;
    let (w, h) = (t.width, t.height);
    let mut lookup = std::collections::HashMap::with_capacity(t.edges.len());
    for (e, &[a, b]) in t.edges.iter().enumerate() {
        lookup.insert((a, b), e as u32);
    }
    let idx = |r: usize, c: usize| (r * w + c) as u32;
    let mut rows = Vec::new();
    for r in 0..h {
        let edges: Vec<u32> = (0..w.saturating_sub(1))
            .filter_map(|c| lookup.get(&(idx(r, c), idx(r, c + 1))).copied())
            .collect();
        if !edges.is_empty() {
            rows.push(Chain { edges });
        }
    }
    let mut cols = Vec::new();
    for c in 0..w {
        let edges: Vec<u32> = (0..h.saturating_sub(1))
            .filter_map(|r| lookup.get(&(idx(r, c), idx(r + 1, c))).copied())
            .collect();
        if !edges.is_empty() {
            cols.push(Chain { edges });
        }
    }
    [rows, cols]
}

/// Reusable buffers of one chain solve (no allocation per chain per sweep).
#[derive(Debug, Default, Clone)]
struct ChainScratch {
    dirs: Vec<DVec3>,
    rhs: Vec<f64>,
    diag: Vec<f64>,
    off: Vec<f64>,
    c_prime: Vec<f64>,
    /// Velocity changes of the last solve: (particle, Δv).
    out: Vec<(u32, DVec3)>,
}

/// Solve one chain's linearised impulse system exactly (Thomas algorithm), leaving the
/// velocity changes in `sc.out` (empty if every constraint of the chain is within `tol`).
/// With `velocity` false this is the position pass (previewed distances, eq. 2); with
/// `velocity` true the velocity pass (relative velocity along the current directions, eq. 3,
/// measured as strain per step: |Δv·n|·h/L).
fn solve_chain(
    cloth: &Cloth,
    chain: &Chain,
    accel: &[DVec3],
    h: f64,
    tol: f64,
    velocity: bool,
    sc: &mut ChainScratch,
) {
    let t = &cloth.topology;
    let p = &cloth.particles;
    let m = chain.edges.len();
    sc.out.clear();
    sc.dirs.clear();
    sc.rhs.clear();
    let mut worst = 0.0f64;
    for &e in &chain.edges {
        let [a, b] = t.edges[e as usize];
        let (a, b) = (a as usize, b as usize);
        let l0 = t.rest[e as usize];
        let (dir, need, strain) = if velocity {
            let d = p.x[b] - p.x[a];
            let len = d.length();
            let n = if len > 1e-12 * l0 {
                d / len
            } else {
                DVec3::ZERO
            };
            let rel = (p.v[b] - p.v[a]).dot(n);
            (n, -rel, rel.abs() * h / l0)
        } else {
            let pa = preview(p.x[a], p.v[a], accel[a], h);
            let pb = preview(p.x[b], p.v[b], accel[b], h);
            let d = pb - pa;
            let len = d.length();
            let err = len - l0;
            (
                if len > 1e-12 * l0 {
                    d / len
                } else {
                    DVec3::ZERO
                },
                -err / h,
                err.abs() / l0,
            )
        };
        if p.inv_mass[a] + p.inv_mass[b] > 0.0 {
            worst = worst.max(strain);
        }
        sc.dirs.push(dir);
        sc.rhs.push(need);
    }
    if worst <= tol {
        return;
    }
    // Tridiagonal A = J M⁻¹ Jᵀ of the chain: diagonal k_a + k_b, off-diagonal
    // −k_shared n_i·n_{i+1} (the shared particle is the second of i and the first of i+1).
    sc.diag.clear();
    sc.off.clear();
    for i in 0..m {
        let [a, b] = t.edges[chain.edges[i] as usize];
        let d = p.inv_mass[a as usize] + p.inv_mass[b as usize];
        // A constraint between two static particles gets a unit row with zero right-hand
        // side: it takes no impulse, and its off-diagonals vanish by themselves (the
        // particles it shares with its neighbours are static, k = 0).
        sc.diag.push(if d > 0.0 { d } else { 1.0 });
        if d == 0.0 {
            sc.rhs[i] = 0.0;
        }
        if i + 1 < m {
            sc.off
                .push(-p.inv_mass[b as usize] * sc.dirs[i].dot(sc.dirs[i + 1]));
        }
    }
    // Thomas algorithm (A is SPD, so no pivoting is needed); the solution overwrites rhs.
    sc.c_prime.clear();
    sc.c_prime.resize(m, 0.0);
    for i in 0..m {
        let lower = if i > 0 { sc.off[i - 1] } else { 0.0 };
        let denom = sc.diag[i]
            - if i > 0 {
                lower * sc.c_prime[i - 1]
            } else {
                0.0
            };
        if denom.abs() < 1e-300 {
            return;
        }
        sc.c_prime[i] = if i + 1 < m { sc.off[i] / denom } else { 0.0 };
        let prev = if i > 0 { lower * sc.rhs[i - 1] } else { 0.0 };
        sc.rhs[i] = (sc.rhs[i] - prev) / denom;
    }
    for i in (0..m.saturating_sub(1)).rev() {
        let next = sc.rhs[i + 1];
        sc.rhs[i] -= sc.c_prime[i] * next;
    }
    for i in 0..m {
        let [a, b] = t.edges[chain.edges[i] as usize];
        let imp = sc.dirs[i] * sc.rhs[i];
        sc.out.push((a, -imp * p.inv_mass[a as usize]));
        sc.out.push((b, imp * p.inv_mass[b as usize]));
    }
}

/// Families with fewer constraints than this are solved on the calling thread (rayon's
/// fork/join costs more than the work below a few thousand constraints). Chains of one
/// family share no particle, so both paths give identical results.
pub const PAR_MIN_FAMILY: usize = 4096;

/// The strips solver (002).
#[derive(Debug, Default)]
pub struct StripsSolver {
    chains: [Vec<Chain>; 2],
    key: (usize, usize),
    scratch: ChainScratch,
    deltas: Vec<Vec<(u32, DVec3)>>,
}

impl StripsSolver {
    fn ensure_chains(&mut self, cloth: &Cloth) {
        let key = (cloth.topology.edges.len(), cloth.len());
        if self.key != key || self.chains[0].is_empty() && self.chains[1].is_empty() {
            self.chains = grid_chains(cloth);
            self.key = key;
        }
    }

    /// Block Gauss–Seidel over the two strip families; returns (sweeps, converged).
    pub(crate) fn sweeps(&mut self, ctx: &mut StepCtx<'_>, velocity: bool) -> (u32, bool) {
        self.ensure_chains(ctx.cloth);
        let h = ctx.params.dt;
        let tol = ctx.params.tolerance;
        let cap = ctx.params.effective_cap();
        let mut sweeps = 0;
        while sweeps < cap {
            sweeps += 1;
            let mut any = false;
            for family in &self.chains {
                let cloth: &Cloth = ctx.cloth;
                let accel = ctx.accel;
                let size: usize = family.iter().map(|c| c.edges.len()).sum();
                if size >= PAR_MIN_FAMILY && rayon::current_num_threads() > 1 {
                    family
                        .par_iter()
                        .map_init(ChainScratch::default, |sc, c| {
                            solve_chain(cloth, c, accel, h, tol, velocity, sc);
                            std::mem::take(&mut sc.out)
                        })
                        .collect_into_vec(&mut self.deltas);
                    for delta in &self.deltas {
                        any |= !delta.is_empty();
                        for &(i, dv) in delta {
                            ctx.cloth.particles.v[i as usize] += dv;
                        }
                    }
                } else {
                    for c in family {
                        solve_chain(ctx.cloth, c, accel, h, tol, velocity, &mut self.scratch);
                        any |= !self.scratch.out.is_empty();
                        for &(i, dv) in &self.scratch.out {
                            ctx.cloth.particles.v[i as usize] += dv;
                        }
                    }
                }
            }
            if !any {
                return (sweeps, true);
            }
        }
        (sweeps, false)
    }
}

impl StripsSolver {
    /// Finish a direct solver's unconverged position pass with strips sweeps: record the
    /// sweeps as `polish_sweeps` and the outcome from the previewed strain they leave.
    /// Used by the SLE and Newton solvers.
    pub(crate) fn finish_position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let cap = ctx.params.effective_cap();
        let (sweeps, _) = self.sweeps(ctx, false);
        let residual = iterative::preview_max_strain(ctx.cloth, ctx.accel, ctx.params.dt);
        ctx.stats.polish_sweeps = sweeps;
        ctx.stats.set_position_outcome(
            residual,
            residual <= ctx.params.tolerance,
            cap == ctx.params.hard_cap,
        );
    }
}

impl Solver for StripsSolver {
    fn kind(&self) -> SolverKind {
        SolverKind::Strips
    }

    fn position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let (sweeps, converged) = self.sweeps(ctx, false);
        let cap = ctx.params.effective_cap();
        let residual = iterative::preview_max_strain(ctx.cloth, ctx.accel, ctx.params.dt);
        let converged = converged || residual <= ctx.params.tolerance;
        ctx.stats.position_iterations = sweeps;
        ctx.stats
            .set_position_outcome(residual, converged, cap == ctx.params.hard_cap);
    }

    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>) {
        if !ctx.params.velocity_pass {
            return;
        }
        let (sweeps, converged) = self.sweeps(ctx, true);
        ctx.stats.velocity_iterations = sweeps;
        ctx.stats.velocity_capped = !converged;
    }
}
