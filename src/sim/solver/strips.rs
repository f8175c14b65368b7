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
use crate::sim::kernels::{self, StrainBand};

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

/// One constraint of a chain as a pass needs it, gathered once per pass in chain order:
/// its particles, their inverse masses (fixed within a pass) and its strain test.
#[derive(Debug, Clone, Copy)]
struct StripLink {
    a: u32,
    b: u32,
    ka: f64,
    kb: f64,
    band: StrainBand,
    /// Velocity pass only: the unit direction b − a at t + h (zero for coincident ends).
    n: DVec3,
}

/// What a pass solves for, per chain.
#[derive(Debug, Clone, Copy)]
enum Target<'a> {
    /// Position pass (eq. 2): previewed distances drift + v·h ([`kernels::drift`]).
    Position { drift: &'a [DVec3] },
    /// Velocity pass (eq. 3): relative velocities along the links' fixed directions,
    /// measured as the strain they make in one step, |Δv·n|·h/L.
    Velocity,
}

/// Reusable buffers of one chain solve (no allocation per chain per sweep).
#[derive(Debug, Default, Clone)]
struct ChainScratch {
    dirs: Vec<DVec3>,
    rhs: Vec<f64>,
    off: Vec<f64>,
    c_prime: Vec<f64>,
    /// Velocity changes of the last solve: (particle, Δv).
    out: Vec<(u32, DVec3)>,
}

/// Solve one chain's linearised impulse system exactly (Thomas algorithm), leaving the
/// velocity changes in `sc.out` (empty if every constraint of the chain is within the
/// tolerance). Most chains of a sweep near convergence are: their strain tests are
/// settled from squared lengths ([`StrainBand`]) before any square root.
fn solve_chain(
    links: &[StripLink],
    v: &[DVec3],
    target: Target<'_>,
    h: f64,
    sc: &mut ChainScratch,
) {
    let m = links.len();
    sc.out.clear();
    sc.dirs.clear();
    sc.rhs.clear();
    let mut violated = false;
    for l in links {
        let (a, b) = (l.a as usize, l.b as usize);
        let moving = l.ka + l.kb > 0.0;
        match target {
            Target::Position { drift } => {
                let d = (drift[b] + v[b] * h) - (drift[a] + v[a] * h);
                let len2 = d.length_squared();
                violated |= moving && l.band.exceeded(len2).is_some();
                // Kept unnormalised with its squared length until a solve needs them.
                sc.dirs.push(d);
                sc.rhs.push(len2);
            }
            Target::Velocity => {
                let rel = (v[b] - v[a]).dot(l.n);
                violated |= moving && rel.abs() > l.band.tol * l.band.rest / h;
                sc.dirs.push(l.n);
                sc.rhs.push(-rel);
            }
        }
    }
    if !violated {
        return;
    }
    if let Target::Position { .. } = target {
        for (l, (d, r)) in links.iter().zip(sc.dirs.iter_mut().zip(sc.rhs.iter_mut())) {
            let len = r.sqrt();
            *d = if len > 1e-12 * l.band.rest {
                *d * (1.0 / len)
            } else {
                DVec3::ZERO
            };
            *r = -(len - l.band.rest) / h;
        }
    }
    // Tridiagonal A = J M⁻¹ Jᵀ of the chain: diagonal k_a + k_b, off-diagonal
    // −k_shared n_i·n_{i+1} (the shared particle is the second of i and the first of i+1).
    // A constraint between two static particles gets a unit row with zero right-hand
    // side: it takes no impulse, and its off-diagonals vanish by themselves (the particles
    // it shares with its neighbours are static, k = 0).
    sc.off.clear();
    sc.off.extend(
        links
            .iter()
            .zip(sc.dirs.windows(2))
            .map(|(l, n)| -l.kb * n[0].dot(n[1])),
    );
    // Thomas algorithm (A is SPD, so no pivoting is needed); the solution overwrites rhs.
    // Both recurrences are serial, so the previous row's values are carried in registers
    // rather than re-read from the buffers just written (a store-to-load round trip on
    // the critical path of every row).
    sc.c_prime.clear();
    sc.c_prime.resize(m, 0.0);
    let (mut prev_c, mut prev_x, mut lower) = (0.0, 0.0, 0.0);
    for (i, l) in links.iter().enumerate() {
        let w = l.ka + l.kb;
        let (diag, rhs) = if w > 0.0 { (w, sc.rhs[i]) } else { (1.0, 0.0) };
        let denom = diag - lower * prev_c;
        if denom.abs() < 1e-300 {
            sc.out.clear();
            return;
        }
        let inv = 1.0 / denom;
        let upper = if i + 1 < m { sc.off[i] } else { 0.0 };
        prev_c = upper * inv;
        prev_x = (rhs - lower * prev_x) * inv;
        sc.c_prime[i] = prev_c;
        sc.rhs[i] = prev_x;
        lower = upper;
    }
    let mut next = prev_x;
    for (x, c) in sc.rhs.iter_mut().zip(&sc.c_prime).rev().skip(1) {
        next = *x - c * next;
        *x = next;
    }
    for (l, (d, x)) in links.iter().zip(sc.dirs.iter().zip(&sc.rhs)) {
        let imp = *d * *x;
        sc.out.push((l.a, -imp * l.ka));
        sc.out.push((l.b, imp * l.kb));
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
    /// Every chain's links for the pass in progress, rows then columns, chain by chain.
    links: Vec<StripLink>,
    /// Each family's chains as ranges of `links`.
    spans: [Vec<std::ops::Range<usize>>; 2],
    drift: Vec<DVec3>,
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

    /// Gather the chains' links for one pass (inverse masses, strain bands and, for the
    /// velocity pass, directions are fixed while it runs).
    fn gather(&mut self, cloth: &Cloth, tol: f64, velocity: bool) {
        let t = &cloth.topology;
        let p = &cloth.particles;
        self.links.clear();
        for (family, spans) in self.chains.iter().zip(self.spans.iter_mut()) {
            spans.clear();
            for chain in family {
                let start = self.links.len();
                self.links.extend(chain.edges.iter().map(|&e| {
                    let [a, b] = t.edges[e as usize];
                    let rest = t.rest[e as usize];
                    let n = if velocity {
                        let d = p.x[b as usize] - p.x[a as usize];
                        let len = d.length();
                        if len > 1e-12 * rest {
                            d * (1.0 / len)
                        } else {
                            DVec3::ZERO
                        }
                    } else {
                        DVec3::ZERO
                    };
                    StripLink {
                        a,
                        b,
                        ka: p.inv_mass[a as usize],
                        kb: p.inv_mass[b as usize],
                        band: StrainBand::new(rest, tol),
                        n,
                    }
                }));
                spans.push(start..self.links.len());
            }
        }
    }

    /// Block Gauss–Seidel over the two strip families; returns (sweeps, converged).
    pub(crate) fn sweeps(&mut self, ctx: &mut StepCtx<'_>, velocity: bool) -> (u32, bool) {
        self.ensure_chains(ctx.cloth);
        let h = ctx.params.dt;
        let cap = ctx.params.effective_cap();
        self.gather(ctx.cloth, ctx.params.tolerance, velocity);
        if !velocity {
            let x = &ctx.cloth.particles.x;
            self.drift.clear();
            self.drift.extend(
                x.iter()
                    .zip(ctx.accel)
                    .map(|(&x, &a)| kernels::drift(x, a, h)),
            );
        }
        let target = if velocity {
            Target::Velocity
        } else {
            Target::Position { drift: &self.drift }
        };
        let links = &self.links;
        let v = &mut ctx.cloth.particles.v;
        let mut sweeps = 0;
        while sweeps < cap {
            sweeps += 1;
            let mut any = false;
            for spans in &self.spans {
                let size: usize = spans.iter().map(|r| r.len()).sum();
                if size >= PAR_MIN_FAMILY && rayon::current_num_threads() > 1 {
                    let vr: &[DVec3] = v;
                    spans
                        .par_iter()
                        .map_init(ChainScratch::default, |sc, r| {
                            solve_chain(&links[r.clone()], vr, target, h, sc);
                            std::mem::take(&mut sc.out)
                        })
                        .collect_into_vec(&mut self.deltas);
                    for delta in &self.deltas {
                        any |= !delta.is_empty();
                        for &(i, dv) in delta {
                            v[i as usize] += dv;
                        }
                    }
                } else {
                    for r in spans {
                        solve_chain(&links[r.clone()], v, target, h, &mut self.scratch);
                        any |= !self.scratch.out.is_empty();
                        for &(i, dv) in &self.scratch.out {
                            v[i as usize] += dv;
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
