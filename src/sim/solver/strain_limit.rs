//! Strain-limited impulses with contacts and user constraints inside one SPD system
//! (001, Ye, "Simulating inextensible cloth using impulses").
//!
//! Unlike the other solvers, the structural edges here are *springs* of moderate stiffness
//! that may stretch and shrink freely inside the strain limits [a, b] (001 §3; defaults
//! 10 % stretch, 2 % compression). Only when a spring is, or is about to be, outside its
//! limits does it generate an impulse, like a massless string of length b inside it
//! (001 Fig. 2). One step:
//!
//! 1. Every particle gets a constraint matrix C (001 §5, eq. 6; [`Dof`]): free, sliding on
//!    a contact (ndof 2: the ball or the ground, after the contact impulse has put its
//!    preview on the surface), on a glider (ndof 1), or pinned/held (ndof 0).
//! 2. The structural springs inside the limits act as ordinary springs, integrated with
//!    explicit Euler and applied as impulses filtered by C (like the shear and bend springs,
//!    004 §3.3; 001 uses backward Euler for them, which we do not need because the limits
//!    carry the load).
//! 3. For every spring, z of 001 §4 is chosen from its current length L(t₀) and predicted
//!    length L̃(t₀ + h): b − L or a − L outside the limits, 0 when it is inside but would
//!    leave them, and the unchanged in-line motion otherwise. Eq. 5 with eqs. 7–8 gives
//!    A_c s = b with (eqs. 9–10)
//!    a_pp = C_i x̂·x̂/m_i + C_j x̂·x̂/m_j and a_pq = ±C_j x̂_q·x̂_p/m_j for springs sharing
//!    node j — symmetric, and positive definite because sᵀA_c s = Σ m|δv_c|² (001 §6).
//!    Rows whose two nodes are both fully constrained are left out (001 §6), and so are
//!    rows that C leaves with nothing to move (a zero diagonal).
//! 4. faer's sparse Cholesky solves it: the fill-reducing order and symbolic factorisation depend
//!    only on which rows are in the system, so they are redone only when that set changes
//!    (a pin, a grab, a glider or a degenerate contact — 001 §7, Table 1); each step runs
//!    the numeric factorisation and one solve. The step's statistics say which happened.
//! 5. A contact is unilateral: a particle whose constraint impulse would pull it away from
//!    the surface is released (made free) and the system solved again, at most
//!    [`MAX_CONTACT_ROUNDS`] times.
//!
//! As 001 §4 warns, the linearisation (directions fixed at t₀) does not guarantee every
//! spring ends inside its limits; [`crate::sim::StepStats::limit_violations`] counts those
//! that do not, and the README reports the fraction measured on the benchmark scenes.

use glam::DVec3;

use super::{ContactModel, Solver, SolverKind, StepCtx, integrate_exact};
use crate::sim::cloth::{Cloth, ConstraintImpulses};
use crate::sim::collision::CONTACT_SKIN;
use crate::sim::dof::Dof;
use crate::sim::forces::DampedSpring;
use crate::sim::kernels;
use crate::sim::sparse::FillOrdering;
use crate::sim::sparse::dissection;
use crate::sim::sparse::factor::{Factor, SupernodalChoice};
use crate::sim::sparse::pattern::LowerPattern;

/// Most solves per step: the first, plus re-solves after releasing contacts that pulled.
pub const MAX_CONTACT_ROUNDS: u32 = 3;

/// Largest previewed displacement one solve may add to a particle, as a fraction of the
/// shortest rest length (see `apply_dv`).
pub const TRUST_RADIUS: f64 = 0.5;

/// Rows whose constrained diagonal is below this fraction of the unconstrained one are
/// left out: C leaves the spring (almost) nothing to change — a spring from a pinned
/// particle to a glider nearly perpendicular to the rod — and its impulse would be huge.
pub const MIN_DIAGONAL: f64 = 0.05;

/// Relative diagonal shift added to A_c: semi-definite corner cases (a glider between two
/// pins along its rod) become definite without changing any solvable answer measurably.
const REGULARISATION: f64 = 1e-10;

/// Lifetime counters of the symbolic reuse of 001 §7.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReuseCounts {
    /// Steps that solved a system.
    pub solved_steps: u64,
    /// Of those, steps that had to redo the ordering and symbolic factorisation.
    pub symbolic_analyses: u64,
}

/// The 001 solver.
#[derive(Debug, Default)]
pub struct StrainLimitSolver {
    /// Faer kernel choice (same measured threshold as the SLE).
    pub choice: SupernodalChoice,
    rows: Vec<u32>,
    /// [`crate::sim::Topology::id`] the pattern of `rows` was built for.
    topology: u64,
    lower: LowerPattern,
    factor: Option<Factor>,
    dof: Vec<Dof>,
    candidate: Vec<u32>,
    dirs: Vec<DVec3>,
    values: Vec<f64>,
    rhs: Vec<f64>,
    s: Vec<f64>,
    dv: Vec<DVec3>,
    project_mask: Vec<f64>,
    counts: ReuseCounts,
}

/// Limits [a, b] of a spring of rest length `rest`.
fn limits(ctx: &StepCtx<'_>, rest: f64) -> (f64, f64) {
    let sl = &ctx.params.strain_limits;
    ((1.0 - sl.compress) * rest, (1.0 + sl.stretch) * rest)
}

impl StrainLimitSolver {
    /// How often the symbolic analysis was reused so far.
    pub fn reuse_counts(&self) -> ReuseCounts {
        self.counts
    }

    /// Benchmark entry point: redo the ordering and symbolic factorisation for every
    /// spring of `cloth` that is not between two static particles (what a step pays when
    /// its row set changed, 001 §7 Table 1). Returns the number of rows.
    pub fn kernel_symbolic(&mut self, cloth: &Cloth) -> usize {
        let k = &cloth.particles.inv_mass;
        self.candidate.clear();
        for (e, &[a, b]) in cloth.topology.edges.iter().enumerate() {
            if k[a as usize] + k[b as usize] > 0.0 {
                self.candidate.push(e as u32);
            }
        }
        self.factor = None;
        self.ensure_pattern(cloth);
        self.rows.len()
    }

    /// The constraint matrix of every particle for this step (001 §5).
    fn classify(&mut self, ctx: &StepCtx<'_>) {
        let p = &ctx.cloth.particles;
        let h = ctx.params.dt;
        self.dof.clear();
        self.dof.resize(p.len(), Dof::Free);
        for g in ctx.gliders {
            if let Some(d) = self.dof.get_mut(g.particle) {
                *d = Dof::Line(g.axis);
            }
        }
        for i in 0..p.len() {
            if p.inv_mass[i] == 0.0 {
                self.dof[i] = Dof::Fixed;
                continue;
            }
            if self.dof[i] != Dof::Free {
                continue; // the rod holds a glider; contacts do not constrain it further
            }
            let pv = kernels::preview(p.x[i], p.v[i], ctx.accel[i], h);
            if let Some(b) = ctx.ball_end {
                let d = pv - b.center;
                let l = d.length();
                if l > 1e-12 && l <= b.radius + CONTACT_SKIN + 1e-9 {
                    self.dof[i] = self.dof[i].prohibit(d / l);
                }
            }
            if let Some(g) = ctx.params.ground
                && pv.y <= g + CONTACT_SKIN + 1e-9
            {
                self.dof[i] = self.dof[i].prohibit(DVec3::Y);
            }
        }
    }

    /// The in-limit structural springs (001 §3), as impulses filtered by C.
    fn spring_impulses(&mut self, ctx: &mut StepCtx<'_>) {
        let sl = ctx.params.strain_limits;
        if sl.stiffness == 0.0 && sl.damping == 0.0 {
            return;
        }
        let h = ctx.params.dt;
        let t = &ctx.cloth.topology;
        let mut log = ctx.cloth.impulses.take();
        let p = &ctx.cloth.particles;
        self.dv.clear();
        self.dv.resize(p.len(), DVec3::ZERO);
        let spring = DampedSpring {
            stiffness: sl.stiffness,
            damping: sl.damping,
            h,
        };
        for (e, &[a, b]) in t.edges.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            let (ka, kb) = (p.inv_mass[a], p.inv_mass[b]);
            let (lo, hi) = limits(ctx, t.rest[e]);
            // Linear inside [a, b] (001 §3); beyond the limits the impulses take over.
            if let Some(imp) = spring.impulse(p.x[b] - p.x[a], p.v[b] - p.v[a], ka + kb, |len| {
                len.clamp(lo, hi) - t.rest[e]
            }) {
                self.dv[a] += self.dof[a].apply(imp * ka);
                self.dv[b] -= self.dof[b].apply(imp * kb);
                log.record(e, -imp, p.x[a], p.x[b]);
            }
        }
        ctx.cloth.impulses = log;
        for (v, dv) in ctx.cloth.particles.v.iter_mut().zip(&self.dv) {
            *v += *dv;
        }
    }

    /// Springs that can take part (not both ends fixed, not degenerate, something left to
    /// move), their directions x̂(t₀), and whether any needs an impulse.
    fn collect_rows(&mut self, ctx: &StepCtx<'_>) -> bool {
        let t = &ctx.cloth.topology;
        let p = &ctx.cloth.particles;
        let h = ctx.params.dt;
        self.candidate.clear();
        self.dirs.clear();
        self.rhs.clear();
        let mut any_active = false;
        for (e, &[a, b]) in t.edges.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            if self.dof[a] == Dof::Fixed && self.dof[b] == Dof::Fixed {
                continue; // 001 §6: a null row and column
            }
            let d = p.x[b] - p.x[a];
            let len0 = d.length();
            if kernels::is_degenerate(len0, t.rest[e]) {
                continue;
            }
            let n = d / len0;
            let diag = p.inv_mass[a] * self.dof[a].apply(n).dot(n)
                + p.inv_mass[b] * self.dof[b].apply(n).dot(n);
            if diag <= MIN_DIAGONAL * (p.inv_mass[a] + p.inv_mass[b]) {
                continue; // C leaves this spring (almost) nothing to change
            }
            let ua = p.v[a] + ctx.accel[a] * (0.5 * h);
            let ub = p.v[b] + ctx.accel[b] * (0.5 * h);
            let vrel = (ub - ua).dot(n);
            let predicted = (d + (ub - ua) * h).length();
            let (lo, hi) = limits(ctx, t.rest[e]);
            // 001 §4: the four cases for z.
            let z = if len0 > hi {
                hi - len0
            } else if len0 < lo {
                lo - len0
            } else if predicted > hi || predicted < lo {
                0.0
            } else {
                h * vrel
            };
            let r = vrel - z / h; // eq. 5's right-hand side
            any_active |= r != 0.0;
            self.candidate.push(e as u32);
            self.dirs.push(n);
            self.rhs.push(r);
        }
        any_active
    }

    /// Rebuild the lower-triangle pattern and the symbolic analysis if the row set changed.
    fn ensure_pattern(&mut self, cloth: &Cloth) -> bool {
        // The pattern depends on the topology and the row set only (every shared particle
        // couples, static or not).
        if self.factor.is_some()
            && self.topology == cloth.topology.id()
            && self.rows == self.candidate
        {
            return false;
        }
        self.rows.clone_from(&self.candidate);
        self.topology = cloth.topology.id();
        // Every shared particle couples: a fixed one contributes zeros (C = 0), which keeps
        // the pattern independent of which particles are held.
        self.lower = LowerPattern::build(&cloth.topology.edges, &self.rows, cloth.len(), |_| true);
        self.factor = Factor::symbolic(
            self.rows.len(),
            &self.lower.col_ptr,
            &self.lower.row_idx,
            self.choice,
            dissection::edges_order(&cloth.topology, cloth.len(), &self.rows, FillOrdering::Auto),
        );
        true
    }

    /// A_c's values (001 eqs. 9–10) for the current constraint matrices.
    fn assemble(&mut self, cloth: &Cloth, shift: f64) {
        let t = &cloth.topology;
        let k = &cloth.particles.inv_mass;
        self.values.resize(self.lower.entries.len(), 0.0);
        for (j, &e) in self.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let n = self.dirs[j];
            let diag = k[a] * self.dof[a].apply(n).dot(n) + k[b] * self.dof[b].apply(n).dot(n);
            for idx in self.lower.col_ptr[j]..self.lower.col_ptr[j + 1] {
                self.values[idx] = match self.lower.entries[idx] {
                    None => diag + shift * (k[a] + k[b]),
                    Some(c) => {
                        let m = c.particle as usize;
                        c.sign
                            * k[m]
                            * self.dof[m]
                                .apply(self.dirs[c.row as usize])
                                .dot(self.dirs[c.col as usize])
                    }
                };
            }
        }
    }

    /// The unconstrained velocity change of each particle from the impulses s (eqs. 1–2),
    /// into `self.dv`.
    fn unconstrained_dv(&mut self, cloth: &Cloth) {
        let t = &cloth.topology;
        let k = &cloth.particles.inv_mass;
        self.dv.clear();
        self.dv.resize(cloth.len(), DVec3::ZERO);
        for (j, &e) in self.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let imp = self.dirs[j] * self.s[j];
            self.dv[a as usize] += imp * k[a as usize];
            self.dv[b as usize] -= imp * k[b as usize];
        }
    }

    /// Pattern (if the rows changed), values, numeric factorisation and one solve; the
    /// unconstrained velocity changes land in `self.dv`. False if A_c could not be
    /// factorised even with a larger diagonal shift.
    fn factor_and_solve(&mut self, ctx: &mut StepCtx<'_>) -> bool {
        if self.ensure_pattern(ctx.cloth) {
            ctx.stats.symbolic_analysis = true;
        }
        let mut factored = false;
        for shift in [REGULARISATION, 1e-6] {
            self.assemble(ctx.cloth, shift);
            ctx.stats.factorizations += 1;
            if let Some(f) = self.factor.as_mut()
                && f.numeric(&self.values).is_ok()
            {
                factored = true;
                break;
            }
        }
        if !factored {
            return false;
        }
        self.s.clone_from(&self.rhs);
        if let Some(f) = self.factor.as_mut() {
            f.solve_in_place(&mut self.s);
        }
        ctx.stats.linear_solves += 1;
        ctx.stats.position_iterations += 1;
        let res = self
            .lower
            .relative_residual(&self.values, &self.s, &self.rhs);
        ctx.stats.solve_residual = ctx.stats.solve_residual.max(res);
        self.unconstrained_dv(ctx.cloth);
        true
    }

    /// v += C·δv (001 eqs. 7–8), scaled down if needed so that no particle's previewed
    /// position moves by more than [`TRUST_RADIUS`] of the shortest rest length. Returns
    /// the scale applied (1 = the full solution).
    ///
    /// The linearisation keeps the directions fixed; when a spring is nearly perpendicular
    /// to the motion its constraint matrix allows (a glider pulled sideways, a contact) or
    /// the cloth turns a lot within the step, the linear solution can be many spacings long
    /// and the next step's correction longer still — measured here, a quick drag in the app
    /// blew the cloth up. Shortening the step (a trust region on the previewed
    /// displacement) keeps it bounded; the remainder is corrected by the next pass or step.
    fn apply_dv(&mut self, ctx: &mut StepCtx<'_>) -> f64 {
        let h = ctx.params.dt;
        let shortest = ctx.cloth.topology.shortest_rest();
        let mut longest = 0.0f64;
        for (d, dv) in self.dof.iter().zip(&self.dv) {
            longest = longest.max(d.apply(*dv).length() * h);
        }
        let limit = TRUST_RADIUS * shortest;
        let scale = if longest > limit {
            limit / longest
        } else {
            1.0
        };
        let cloth = &mut *ctx.cloth;
        if cloth.impulses.is_some() {
            // The limits' impulses s along their rows (what `unconstrained_dv` spread).
            for (j, &e) in self.rows.iter().enumerate() {
                let [a, b] = cloth.topology.edges[e as usize];
                let (xa, xb) = (cloth.particles.x[a as usize], cloth.particles.x[b as usize]);
                let j_b = self.dirs[j] * (-self.s[j] * scale);
                cloth.impulses.record(e as usize, j_b, xa, xb);
            }
        }
        let p = &mut cloth.particles;
        for ((v, d), dv) in p.v.iter_mut().zip(&self.dof).zip(&self.dv) {
            *v += d.apply(*dv) * scale;
        }
        scale
    }

    /// Right-hand side and directions of a Newton pass: the same rows, directions from the
    /// preview, and for a spring previewed outside [a, b] the in-line velocity change that
    /// brings it back to the nearer limit; the others keep their previewed in-line motion.
    fn refine_rows(&mut self, ctx: &StepCtx<'_>) {
        let t = &ctx.cloth.topology;
        let p = &ctx.cloth.particles;
        let h = ctx.params.dt;
        for (j, &e) in self.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let pa = kernels::preview(p.x[a], p.v[a], ctx.accel[a], h);
            let pb = kernels::preview(p.x[b], p.v[b], ctx.accel[b], h);
            let d = pb - pa;
            let len = d.length();
            let (lo, hi) = limits(ctx, t.rest[e as usize]);
            if !kernels::is_degenerate(len, t.rest[e as usize]) {
                self.dirs[j] = d / len;
            }
            self.rhs[j] = if len > hi {
                (len - hi) / h
            } else if len < lo {
                (len - lo) / h
            } else {
                0.0
            };
        }
    }

    /// Largest amount by which a previewed spring length lies outside its limits, relative
    /// to the rest length.
    fn previewed_excess(ctx: &StepCtx<'_>) -> f64 {
        let t = &ctx.cloth.topology;
        let p = &ctx.cloth.particles;
        let h = ctx.params.dt;
        let sl = &ctx.params.strain_limits;
        let mut worst = 0.0f64;
        for (e, &[a, b]) in t.edges.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            let rel = kernels::preview_distance(&p.x, &p.v, ctx.accel, a, b, h) / t.rest[e] - 1.0;
            worst = worst.max(rel - sl.stretch).max(-sl.compress - rel);
        }
        worst
    }
}

impl Solver for StrainLimitSolver {
    fn kind(&self) -> SolverKind {
        SolverKind::StrainLimit
    }

    fn contact_model(&self) -> ContactModel {
        ContactModel::Constraint
    }

    fn solves_velocity_constraints(&self) -> bool {
        false
    }

    fn position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        self.classify(ctx);
        self.spring_impulses(ctx);
        ctx.stats.constrained_particles = self
            .dof
            .iter()
            .zip(&ctx.cloth.particles.inv_mass)
            .filter(|&(d, &k)| k > 0.0 && d.ndof() < 3)
            .count() as u32;
        let mut fell_back = false;
        // 001 §4: one linearised solve with directions at t₀ (re-solved only when a
        // contact had to be released).
        for round in 0..MAX_CONTACT_ROUNDS {
            if !self.collect_rows(ctx) {
                break; // 001 §6: nothing needs an impulse, nothing is assembled
            }
            if !self.factor_and_solve(ctx) {
                fell_back = true;
                break;
            }
            // A contact only pushes: release those the impulses would pull off the
            // surface, and solve again without them.
            let mut released = false;
            if round + 1 < MAX_CONTACT_ROUNDS {
                for (d, dv) in self.dof.iter_mut().zip(&self.dv) {
                    if let Dof::Slide(n) = *d
                        && n.dot(*dv) > 0.0
                    {
                        *d = Dof::Free;
                        released = true;
                    }
                }
            }
            if !released {
                self.apply_dv(ctx);
                break;
            }
        }
        // Our refinement (001 §8 asks for one): Newton passes on the nonlinear system of
        // 001 §3 with directions and lengths from the preview.
        let passes = ctx.params.strain_limits.passes.max(1);
        let mut excess = Self::previewed_excess(ctx);
        let mut pass = 1;
        while !fell_back
            && pass < passes
            && excess > ctx.params.tolerance
            && ctx.stats.linear_solves > 0
        {
            self.refine_rows(ctx);
            if !self.factor_and_solve(ctx) {
                fell_back = true;
                break;
            }
            self.apply_dv(ctx);
            excess = Self::previewed_excess(ctx);
            pass += 1;
        }
        if ctx.stats.linear_solves > 0 {
            self.counts.solved_steps += 1;
            self.counts.symbolic_analyses += u64::from(ctx.stats.symbolic_analysis);
        }
        ctx.stats.fell_back = fell_back;
        ctx.stats
            .set_position_outcome(excess.max(0.0), excess <= ctx.params.tolerance, false);
    }

    /// Exact integration; particles held on a surface by their constraint matrix stay on
    /// it by construction, the others are projected out of colliders as a safety net.
    fn integrate(&mut self, ctx: &mut StepCtx<'_>) {
        integrate_exact(ctx.cloth, ctx.accel, ctx.params.dt);
        if ctx.ball_end.is_none() && ctx.params.ground.is_none() {
            return;
        }
        let p = &mut ctx.cloth.particles;
        self.project_mask.clone_from(&p.inv_mass);
        for (m, d) in self.project_mask.iter_mut().zip(&self.dof) {
            if matches!(d, Dof::Slide(_) | Dof::Line(_)) {
                *m = 0.0;
            }
        }
        crate::sim::collision::project_out(
            &mut p.x,
            &mut p.v,
            &self.project_mask,
            ctx.params,
            ctx.ball_end,
            true,
            0.0,
        );
    }

    /// 001 has no separate velocity pass (the impulses act on velocities already); this
    /// phase measures how many springs ended outside their limits.
    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let t = &ctx.cloth.topology;
        let p = &ctx.cloth.particles;
        let sl = &ctx.params.strain_limits;
        let mut count = 0u32;
        let mut worst = 0.0f64;
        for (e, &[a, b]) in t.edges.iter().enumerate() {
            let rel = p.x[a as usize].distance(p.x[b as usize]) / t.rest[e] - 1.0;
            let excess = (rel - sl.stretch).max(-sl.compress - rel);
            if excess > ctx.params.tolerance {
                count += 1;
            }
            worst = worst.max(excess);
        }
        ctx.stats.limit_violations = count;
        ctx.stats.limit_excess = worst.max(0.0);
    }
}
