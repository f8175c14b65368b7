//! The SLE method (004 §3.4.2): the impulses of all distance constraints at once from
//! A λ = b with A = J M⁻¹ Jᵀ — one row per constraint, A_ij ≠ 0 iff constraints i and j
//! share a particle, with the sign of 004's case table B_ij and the projection n_i·n_j.
//!
//! The sparsity pattern (lower triangle, compressed columns) and faer's symbolic Cholesky
//! analysis (nested-dissection order on the grid, `sparse::dissection`; elimination tree,
//! supernodes) are built once per topology and set of static particles; each step only
//! refills the values and runs the numeric factorisation (001 §7, Table 1), which is then
//! reused for every re-solve of the position pass and for the velocity pass.
//!
//! Directions come from the preview (see [`crate::sim::ImpulseDirection`]): the first
//! preview of the step gives J, so A is symmetric positive definite and one solve is a
//! Newton step on the previewed distances. The pass then previews again and re-solves with
//! the same factor (a chord iteration) until the largest previewed strain is within the
//! tolerance or `sle_max_solves` is reached; a step it leaves unconverged is finished by
//! the strips solver (002). Rows whose two particles are both static are
//! left out (001 §6). If the factorisation fails (a quad degenerated to a line, 004
//! §3.4.2) the step falls back to the iterative solver and says so in its statistics.

use glam::DVec3;

use super::iterative::{self, Scratch};
use super::strips::StripsSolver;
use super::{Solver, SolverKind, StepCtx, StepMark};
use crate::sim::cloth::{CacheKey, Cloth, ConstraintImpulses};
use crate::sim::kernels::{self, preview};
use crate::sim::sparse::dissection;
use crate::sim::sparse::factor::Factor;
use crate::sim::sparse::pattern::LowerPattern;

pub use crate::sim::sparse::{FillOrdering, SupernodalChoice};

/// Pattern of A for one topology and one set of static particles.
#[derive(Debug, Default)]
struct Pattern {
    /// Edge index of each row.
    rows: Vec<u32>,
    /// Lower triangle with the coupling behind each entry.
    lower: LowerPattern,
    /// The cloth (topology and static set) the pattern was built for.
    key: CacheKey,
}

impl Pattern {
    fn build(cloth: &Cloth) -> Pattern {
        let t = &cloth.topology;
        let k = &cloth.particles.inv_mass;
        let rows: Vec<u32> = (0..t.edges.len() as u32)
            .filter(|&e| {
                let [a, b] = t.edges[e as usize];
                k[a as usize] + k[b as usize] > 0.0
            })
            .collect();
        // A static particle couples nothing (its k is 0).
        let lower = LowerPattern::build(&t.edges, &rows, cloth.len(), |p| k[p as usize] > 0.0);
        Pattern {
            rows,
            lower,
            key: cloth.cache_key(),
        }
    }
}

/// Most numeric factorisations per position pass: one is the norm; more are done only
/// when the chord iteration stalls because the cloth turns a lot within one step.
pub const MAX_FACTORIZATIONS: u32 = 8;

/// Solves a position pass may undo (each made the previewed strains worse) before it
/// stops and lets strips finish. Measured on the 50×50 paper scene to 1e-6:
/// 1 → 8.8 ms/step, 2 → 14.1, 3 → 16.8, unlimited (all 8 factorisations) → 19.1; on the
/// sagging 10×10 scene to 1e-9 the steps strips had to finish were 7, 3, 2 and 1 of 30.
pub const MAX_UNDONE: u32 = 2;

/// The SLE solver (004 §3.4.2).
#[derive(Debug, Default)]
pub struct SleSolver {
    pattern: Pattern,
    factor: Option<Factor>,
    /// Supernodal or simplicial factorisation (measured: see [`SupernodalChoice`]).
    pub choice: SupernodalChoice,
    /// Fill-reducing order (measured: see [`FillOrdering`]).
    pub ordering: FillOrdering,
    values: Vec<f64>,
    dirs: Vec<DVec3>,
    rhs: Vec<f64>,
    lambda: Vec<f64>,
    factored: bool,
    damping: f64,
    total: Vec<f64>,
    /// The rows (edges) `total` belongs to, and this solver's last position pass: the warm
    /// start is used only by the next step of the same cloth.
    total_rows: Vec<u32>,
    last_pass: Option<StepMark>,
    fallback: Scratch,
    polish: StripsSolver,
}

/// A velocity pass (004 eq. 3) that tries strips sweeps (002) first and, where they stall,
/// solves the velocity constraints exactly ([`SleSolver::velocity_exact`]), strips then
/// finishing what round-off left; sweeps that stalled are skipped for a few steps after,
/// since the scene that defeats them does so step after step. Newton's velocity pass and
/// the strips solver's (docs/numerics.md, "Newton's velocity pass" and "The strips'
/// passes: finished otherwise where their sweeps stall").
#[derive(Debug, Default)]
pub(crate) struct ExactVelocity {
    /// The exact solve (its own pattern and factor).
    pub sle: SleSolver,
    /// The step in which the sweeps last stalled.
    pub stalled: Option<StepMark>,
}

impl ExactVelocity {
    /// At most `sweeps` sweeps of `strips` unless they stalled within the last `retry`
    /// steps; where they do not meet the tolerance, the exact solve and sweeps after it.
    pub(crate) fn pass(
        &mut self,
        ctx: &mut StepCtx<'_>,
        strips: &mut StripsSolver,
        sweeps: u32,
        retry: u64,
    ) {
        let now = StepMark::of(ctx);
        let skip = self.stalled.is_some_and(|m| m.within(now, retry));
        let mut first = 0;
        if !skip {
            let capped = ctx.params.with_cap(sweeps);
            let (done, converged) = strips.sweeps(&mut ctx.reborrow(&capped, true), true);
            if converged {
                self.stalled = None;
                ctx.stats.set_velocity_outcome(done, true);
                return;
            }
            self.stalled = Some(now);
            first = done;
        }
        let solved = self.sle.velocity_exact(ctx.cloth);
        ctx.stats.linear_solves += u32::from(solved);
        let (more, converged) = strips.sweeps(ctx, true);
        ctx.stats
            .set_velocity_outcome(first + u32::from(solved) + more, converged);
    }
}

/// The damping [`SleSolver::velocity_exact`] adds where A is singular (dependent rows).
const VELOCITY_DAMPING: f64 = 1e-9;

impl SleSolver {
    /// A solver with an explicit factorisation choice.
    pub fn with_choice(choice: SupernodalChoice) -> Self {
        SleSolver {
            choice,
            ..Default::default()
        }
    }

    /// Rebuild the pattern and symbolic analysis if the topology or static set changed.
    /// Returns whether it did.
    fn ensure_pattern(&mut self, cloth: &Cloth) -> bool {
        if self.factor.is_some() && self.pattern.key == cloth.cache_key() {
            return false;
        }
        self.pattern = Pattern::build(cloth);
        self.factor = Factor::symbolic(
            self.pattern.rows.len(),
            &self.pattern.lower.col_ptr,
            &self.pattern.lower.row_idx,
            self.choice,
            dissection::edges_order(
                &cloth.topology,
                cloth.len(),
                &self.pattern.rows,
                self.ordering,
            ),
        );
        true
    }

    /// Fill A's values from the directions in `self.dirs` (004 §3.4.2: diagonal k_a + k_b,
    /// off-diagonal ±k_shared · n_i·n_j).
    fn assemble(&mut self, cloth: &Cloth) {
        let t = &cloth.topology;
        let k = &cloth.particles.inv_mass;
        self.values.resize(self.pattern.lower.entries.len(), 0.0);
        for (j, &e) in self.pattern.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let diag = (k[a as usize] + k[b as usize]) * (1.0 + self.damping);
            for idx in self.pattern.lower.col_ptr[j]..self.pattern.lower.col_ptr[j + 1] {
                self.values[idx] = match self.pattern.lower.entries[idx] {
                    None => diag,
                    Some(c) => {
                        c.sign
                            * k[c.particle as usize]
                            * self.dirs[c.row as usize].dot(self.dirs[c.col as usize])
                    }
                };
            }
        }
    }

    /// Apply Δv = scale · M⁻¹ Jᵀ λ with the factorised directions.
    fn apply(&self, cloth: &mut Cloth, scale: f64) {
        let t = &cloth.topology;
        let log = &mut cloth.impulses;
        let p = &mut cloth.particles;
        for (r, &e) in self.pattern.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let imp = self.dirs[r] * (self.lambda[r] * scale);
            p.v[a] -= imp * p.inv_mass[a];
            p.v[b] += imp * p.inv_mass[b];
            log.record(e as usize, imp, p.x[a], p.x[b]);
        }
    }

    /// Solve A λ = rhs with the current factor; returns the relative residual. A factor
    /// can pass Cholesky and still be numerically singular — a chain pulled straight
    /// between two static or near-static ends (a pin and the heavy hand) has more
    /// constraints along its line than free coordinates — and its λ overflow; applied,
    /// even a pinned particle's velocity would become 0·∞ = NaN. Such a solve leaves
    /// λ = 0 (nothing applied) and returns an infinite residual.
    fn solve(&mut self) -> f64 {
        self.lambda.clone_from(&self.rhs);
        if let Some(f) = &mut self.factor {
            f.solve_in_place(&mut self.lambda);
        }
        let res = self
            .pattern
            .lower
            .relative_residual(&self.values, &self.lambda, &self.rhs);
        if res.is_finite() && self.lambda.iter().all(|l| l.is_finite()) {
            res
        } else {
            self.lambda.iter_mut().for_each(|l| *l = 0.0);
            f64::INFINITY
        }
    }

    /// Unit directions of every row from the preview; `false` if one has zero length.
    fn directions(&mut self, cloth: &Cloth, accel: &[DVec3], h: f64) -> bool {
        let t = &cloth.topology;
        let p = &cloth.particles;
        self.dirs.resize(self.pattern.rows.len(), DVec3::ZERO);
        for (r, &e) in self.pattern.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let pa = preview(p.x[a], p.v[a], accel[a], h);
            let pb = preview(p.x[b], p.v[b], accel[b], h);
            let d = pb - pa;
            let l = d.length();
            if kernels::is_degenerate(l, t.rest[e as usize]) {
                return false;
            }
            self.dirs[r] = d / l;
        }
        true
    }

    /// Numeric factorisation of the assembled values.
    fn factorize(&mut self) -> bool {
        let ok = match &mut self.factor {
            Some(f) => f.numeric(&self.values).is_ok(),
            None => false,
        };
        self.factored = ok;
        ok
    }

    /// Directions from the current preview, assemble A, numeric factorisation. `false` if
    /// a previewed constraint has zero length or A is not positive definite.
    fn refactor(&mut self, ctx: &mut StepCtx<'_>) -> bool {
        if !self.directions(ctx.cloth, ctx.accel, ctx.params.dt) {
            return false;
        }
        self.assemble(ctx.cloth);
        self.factorize()
    }

    /// One exact solve of the velocity constraints (004 eq. 3) at the cloth's current
    /// positions: A = J M⁻¹ Jᵀ assembled from the end-of-step directions and factorised,
    /// then Δv = M⁻¹ Jᵀ λ with A λ = −J v, which zeroes every constraint's relative
    /// velocity up to round-off. For a solver that has no constraint-space factor of its
    /// own (Newton): on a tensioned hanging cloth strips sweeps crawl here (measured in
    /// docs/numerics.md, "Newton's velocity pass"). Where A is singular (rows that depend
    /// on each other, as a torn cloth's twin lips from a pinned particle's copies) it is
    /// factorised again with a little damping. `false` (nothing changed) if a constraint
    /// has collapsed, A is not positive definite even then, or the solve is no better than
    /// none (relative residual ≥ 1, or overflowed: [`SleSolver::solve`]).
    pub(crate) fn velocity_exact(&mut self, cloth: &mut Cloth) -> bool {
        self.ensure_pattern(cloth);
        let t = &cloth.topology;
        let p = &cloth.particles;
        let rows = self.pattern.rows.len();
        self.dirs.resize(rows, DVec3::ZERO);
        self.rhs.resize(rows, 0.0);
        for (r, &e) in self.pattern.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let Some(n) = kernels::unit(p.x[a], p.x[b], t.rest[e as usize]) else {
                return false;
            };
            self.dirs[r] = n;
            self.rhs[r] = -(p.v[b] - p.v[a]).dot(n);
        }
        self.damping = 0.0;
        self.assemble(cloth);
        if !self.factorize() {
            // Rows that depend on each other make A singular: a torn cloth's two lips that
            // run from copies of one pinned particle to one particle are the same row twice
            // (measured: the 50×50 curtain tearing under its own weight failed here in 5
            // of 32 frames, and strips sweeps then ran to the safety cap, 2.4 s a frame).
            // A little damping, A + 1e-9·diag(A), splits the impulse between them.
            self.damping = VELOCITY_DAMPING;
            self.assemble(cloth);
            if !self.factorize() {
                return false;
            }
        }
        // A solve no better than λ = 0 (or one that overflowed) is not applied.
        if self.solve() >= 1.0 {
            return false;
        }
        self.apply(cloth, 1.0);
        true
    }

    /// Kernel entry point (benchmarks): pattern and symbolic analysis if needed, then the
    /// preview directions and a right-hand side. Returns the number of rows.
    pub fn kernel_prepare(&mut self, cloth: &Cloth, accel: &[DVec3], h: f64) -> usize {
        self.ensure_pattern(cloth);
        self.directions(cloth, accel, h);
        self.rhs.resize(self.pattern.rows.len(), 1e-3);
        self.pattern.rows.len()
    }

    /// Kernel entry point (benchmarks): assemble A's values into the fixed pattern.
    pub fn kernel_assemble(&mut self, cloth: &Cloth) {
        self.assemble(cloth);
    }

    /// Kernel entry point (benchmarks): numeric Cholesky factorisation; `false` if A is not
    /// positive definite.
    pub fn kernel_factorize(&mut self) -> bool {
        self.factorize()
    }

    /// Kernel entry point (benchmarks): one solve with the factor; returns the relative
    /// residual ‖Aλ − b‖/‖b‖.
    pub fn kernel_solve(&mut self) -> f64 {
        self.solve()
    }

    /// Previewed error of every row into `rhs` (= −e/h, the relative velocity change
    /// needed, 004 §3.4.2 Δv_i); returns the largest previewed strain and the sum of
    /// squared relative errors (the merit function of the damped Newton iteration).
    fn preview_errors(&mut self, ctx: &StepCtx<'_>) -> (f64, f64) {
        let h = ctx.params.dt;
        let t = &ctx.cloth.topology;
        let p = &ctx.cloth.particles;
        let mut worst = 0.0f64;
        let mut merit = 0.0;
        for (r, &e) in self.pattern.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let l0 = t.rest[e as usize];
            let err = kernels::preview_distance(&p.x, &p.v, ctx.accel, a, b, h) - l0;
            worst = worst.max(err.abs() / l0);
            merit += (err / l0) * (err / l0);
            self.rhs[r] = -err / h;
        }
        (worst, merit)
    }

    fn fall_back(&mut self, ctx: &mut StepCtx<'_>) {
        let cap = ctx.params.effective_cap();
        let contacts = ctx.contacts();
        let r = iterative::position_pass(
            ctx.cloth,
            ctx.params,
            ctx.accel,
            Some(&contacts),
            cap,
            &mut self.fallback,
        );
        ctx.stats.fell_back = true;
        ctx.stats.position_iterations = r.sweeps;
        ctx.stats
            .set_capped_position_outcome(r.residual, r.converged, cap, ctx.params.hard_cap);
    }
}

impl Solver for SleSolver {
    fn kind(&self) -> SolverKind {
        SolverKind::Sle
    }

    fn position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        self.factored = false;
        ctx.stats.symbolic_analysis = self.ensure_pattern(ctx.cloth);
        let now = StepMark::of(ctx);
        let continues = self.last_pass.is_some_and(|m| m.precedes(now));
        self.last_pass = Some(now);
        let tol = ctx.params.tolerance;
        let nrows = self.pattern.rows.len();
        if nrows == 0 {
            ctx.stats.converged = true;
            return;
        }
        self.rhs.resize(nrows, 0.0);
        self.dirs.resize(nrows, DVec3::ZERO);
        self.damping = 0.0;
        if !self.refactor(ctx) {
            self.fall_back(ctx);
            return;
        }
        // Warm start: a cloth hanging or sliding needs much the same impulses every step,
        // so start the nonlinear solve from last step's accumulated impulses (along this
        // step's directions). Kept only if it lowers the merit function.
        if continues && self.total_rows == self.pattern.rows && ctx.params.velocity_pass {
            let (_, cold) = self.preview_errors(ctx);
            std::mem::swap(&mut self.lambda, &mut self.total);
            self.apply(ctx.cloth, 1.0);
            let (_, warm) = self.preview_errors(ctx);
            if warm > cold {
                self.apply(ctx.cloth, -1.0);
                self.lambda.iter_mut().for_each(|l| *l = 0.0);
            }
            std::mem::swap(&mut self.lambda, &mut self.total);
        } else {
            self.total.clear();
            self.total.resize(nrows, 0.0);
            self.total_rows.clone_from(&self.pattern.rows);
        }
        let mut factorizations = 1;
        let max_solves = ctx.params.capped(ctx.params.sle_max_solves);
        let mut solves = 0;
        let mut prev_worst = f64::INFINITY;
        let mut prev_merit = f64::INFINITY;
        let mut stale = false;
        let mut undone = 0;
        let mut worst;
        loop {
            let merit;
            (worst, merit) = self.preview_errors(ctx);
            if merit > prev_merit && !stale {
                // The last solve made things worse: the linearisation is poor (large
                // rotations within the step, or A ill-conditioned as the cloth hangs
                // taut). Undo it.
                self.apply(ctx.cloth, -1.0);
                for (t, l) in self.total.iter_mut().zip(&self.lambda) {
                    *t -= l;
                }
                undone += 1;
                if undone >= MAX_UNDONE {
                    // Twice worse: the iteration has stalled — the cloth turns a lot within
                    // the step and the pendulum-like modes of a hanging cloth, which only
                    // its tension holds, are free to first order (README, Numerics). Let
                    // strips finish rather than spend the remaining factorisations.
                    worst = prev_worst;
                    break;
                }
                // Refactorise at the current preview with Levenberg–Marquardt damping
                // A + μ·diag(A), raising μ until a step helps.
                self.damping = if self.damping == 0.0 {
                    1e-3
                } else {
                    (self.damping * 10.0).min(1e3)
                };
                stale = true;
                continue;
            }
            if solves > 0 && merit <= prev_merit && !stale {
                self.damping = if self.damping < 1e-6 {
                    0.0
                } else {
                    self.damping * 0.1
                };
            }
            if worst <= tol || solves >= max_solves {
                break;
            }
            if solves > 0 && worst > 0.25 * prev_worst {
                // The chord iteration (same factor) converges slowly: take a Newton step.
                stale = true;
            }
            if stale {
                if factorizations >= MAX_FACTORIZATIONS || !self.refactor(ctx) {
                    break;
                }
                factorizations += 1;
                stale = false;
            }
            prev_worst = worst;
            prev_merit = merit;
            let res = self.solve();
            ctx.stats.solve_residual = ctx.stats.solve_residual.max(res);
            self.apply(ctx.cloth, 1.0);
            for (t, l) in self.total.iter_mut().zip(&self.lambda) {
                *t += l;
            }
            solves += 1;
        }
        let s = &mut *ctx.stats;
        s.position_iterations = solves;
        s.linear_solves += solves;
        s.factorizations = factorizations;
        s.set_position_outcome(worst, worst <= tol, false);
        if !s.converged || ctx.has_contacts() {
            // The damped Newton iteration did not reach the tolerance (strongly nonlinear
            // step): finish with strips (002), whose chain solves are exact and whose block
            // Gauss–Seidel cannot diverge, so an unconverged SLE step never leaves more error
            // than the strips solver would. With contact or rods, strips also solve them
            // with the distance constraints (their sweeps visit the contact set), which the
            // SLE's system does not hold; a sweep that finds nothing to correct ends it.
            self.polish.finish_position_pass(ctx, true);
        }
    }

    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>) {
        if !self.factored {
            // The step fell back (or had no rows): the iterative velocity pass matches.
            let r = iterative::velocity_pass(
                ctx.cloth,
                ctx.params,
                ctx.params.effective_cap(),
                &mut self.fallback,
            );
            ctx.stats.set_velocity_outcome(r.sweeps, r.converged);
            return;
        }
        if ctx.stats.polish_sweeps > 0 {
            // Strips finished the position pass, so the factor's directions are those of an
            // iterate that stalled far from the end of the step: chord solves with it
            // converge slowly (50×50 paper scene: 3.2 ms for the velocity pass against
            // 0.8 ms for strips sweeps alone).
            self.polish.velocity_sweeps_pass(ctx);
            return;
        }
        let h = ctx.params.dt;
        let tol = ctx.params.tolerance;
        let max_solves = ctx.params.capped(ctx.params.sle_max_solves);
        let mut solves = 0;
        let mut prev_worst = f64::INFINITY;
        loop {
            // Relative velocity along each constraint at t + h (eq. 3), measured along the
            // current directions; impulses act along the factorised ones.
            let mut worst = 0.0f64;
            {
                let t = &ctx.cloth.topology;
                let p = &ctx.cloth.particles;
                for (r, &e) in self.pattern.rows.iter().enumerate() {
                    let [a, b] = t.edges[e as usize];
                    let (a, b) = (a as usize, b as usize);
                    let n =
                        kernels::unit(p.x[a], p.x[b], t.rest[e as usize]).unwrap_or(DVec3::ZERO);
                    let rel = (p.v[b] - p.v[a]).dot(n);
                    worst = worst.max(rel.abs() * h / t.rest[e as usize]);
                    self.rhs[r] = -rel;
                }
            }
            if solves > 0 && worst >= prev_worst {
                self.apply(ctx.cloth, -1.0);
                break;
            }
            if worst <= tol || solves >= max_solves {
                break;
            }
            prev_worst = worst;
            let res = self.solve();
            ctx.stats.solve_residual = ctx.stats.solve_residual.max(res);
            self.apply(ctx.cloth, 1.0);
            solves += 1;
        }
        ctx.stats.linear_solves += solves;
        // Whatever the stale factor left, strips finish (usually 0–1 sweeps).
        let (sweeps, converged) = self.polish.sweeps(ctx, true);
        ctx.stats.set_velocity_outcome(solves + sweeps, converged);
    }
}
