//! Newton's method on the step's constraint problem, with geometric stiffness.
//!
//! The preview formulation of 004 §3.2 asks, every step, for impulses along the constraint
//! directions such that every previewed distance equals its rest length. Written in the
//! end-of-step positions x (x̃ the unconstrained preview, x = x̃ + h·M⁻¹·Δp), that is the
//! system
//!
//! ```text
//!     M (x − x̃) + J(x)ᵀ μ = 0        (impulses hJᵀμ, equal and opposite, along the
//!     C(x) = 0                         constraint directions at t + h; 004 eq. 2)
//! ```
//!
//! The SLE solver (004 §3.4.2) iterates on it with A = J M⁻¹ Jᵀ, which is Newton's method
//! without the constraints' curvature Σ μ_k ∇²C_k (the "geometric stiffness"). At the 004
//! §4 scene's h = 1/30 s that term dominates the particle masses — the tension a hanging
//! cloth carries, times h², over a 2 cm spacing, is 25× the particle mass at 50×50 and
//! grows with n² — so that iteration converges only linearly, and not at all on a cloth
//! whose top edge is pulled straight between its two pins (measured: README, Numerics).
//!
//! This solver keeps the term. Each iteration is one Newton step on the KKT system above,
//! with the constraint rows regularised by a tiny compliance ε (1/ε = [`PENALTY`] × the
//! constraint's effective mass):
//!
//! ```text
//!     (M + Σ g_k ∇²C_k + Σ ∇C_kᵀ∇C_k / ε_k) Δx = −(M (x − x̃) + Jᵀ(λ + C/ε))
//!     Δλ = (J Δx + C) / ε                       (J, C at the old iterate)
//! ```
//!
//! which is the Newton step of [M+G Jᵀ; J −ε] eliminated onto the 3N particle
//! coordinates. g_k = λ_k/len_k, except that a compressed constraint's negative curvature
//! is floored at −m/16 of its lighter particle (a particle has at most four structural
//! constraints, so the matrix stays positive definite and faer's sparse Cholesky
//! factorises it; symbolic analysis once per topology and static set, numeric once per
//! Newton step, 001 §7). Full steps, no line search: measured, a backtracking search on
//! the augmented Lagrangian only slowed convergence. The multipliers are warm-started from
//! the previous step — a hanging cloth needs much the same impulses every step — and x
//! from a few strips sweeps (002) on the preview shifted by last step's net impulses,
//! which take out much of the step's rotation for a fraction of a factorisation.
//!
//! At the fixed point C = 0 and M(x − x̃) = −Jᵀλ: the velocity change (x − x̃)/h is an
//! impulse along each constraint's end-of-step direction, equal and opposite on its two
//! particles — what 004's preview iteration converges to — so linear momentum is kept
//! exactly and angular momentum up to the tolerance.
//!
//! Convergence is quadratic once the cloth can sag. On a row held straight between two
//! pins at exactly its rest length (the 004 §4 scene) the constraint Jacobian is rank
//! deficient along the row (LICQ fails: the row's lengths can only change to second
//! order), so there Newton too converges linearly, by a factor of about 3–5 per
//! iteration — still far fewer iterations than the SLE's linear rate. By default the
//! world holds such a row static ([`crate::sim::taut`], its exact solution), which
//! restores quadratic convergence: 50×50 at 1e-6 in about 2 Newton steps a time step
//! instead of 7. A step that has not
//! met the tolerance after `newton_max_steps` Newton steps is finished by strips (002), and
//! one whose factorisation fails (a collapsed constraint) is done by strips alone and
//! flagged `fell_back`.
//!
//! Contact and gliders are constraints of the same system (Bender & Schmitt 2006, the
//! contact model `002` and `004` cite; 001 §5 for the rods): a particle whose iterate lies
//! inside the ball or the ground gets the row φ(x) = 0 — φ its signed distance to the
//! collider's skin, ∇φ the outward normal — which stays active while its multiplier
//! pushes (an inequality by active set: a row whose multiplier would pull is dropped, a
//! particle that enters a collider is added), and a glider's particle gets the rows
//! P(x − anchor) = 0, P the projection across its rod. Each adds only to its particle's
//! diagonal 3×3 block (penalty·∇φ∇φᵀ; the surfaces' own curvature is left out, the ball's
//! radius being many spacings), so the pattern and its symbolic analysis do not change.
//! Their multipliers warm-start like the distance constraints'. Friction comes from those
//! multipliers: after the pass each ball or ground row cuts its particle's tangential
//! velocity by at most μ times the normal velocity change it made, and strips sweeps
//! restore the distance constraints where that moved a preview off them (besides the
//! impulse the world applies before the pass from the preview's penetration,
//! [`crate::sim::collision`]).
//!
//! Self-contacts ([`crate::sim::contact`]) couple four particles and are not rows of this
//! system, so its pattern, ordering and symbolic analysis stay those of the cloth alone:
//! where the pass leaves a self-contact row short, strips sweeps — which visit those rows
//! with the distance constraints — finish it from Newton's answer.
//!
//! A numeric factorisation costs about six solves with its factor (50×50: 4.9 against
//! 0.8 ms), so a Newton step may reuse the last factor instead (a lagged step): the KKT
//! system [K₀ J₀ᵀ; J₀ −ε] of the factor's iterate is applied to the residual of the
//! current one, with J₀ in the penalty's and the multipliers' update and the current J in
//! Jᵀλ. Its error is of the order of how far the directions turned since — not 1/ε times
//! that, as with the eliminated matrix alone, whose chord steps diverged (docs/numerics.md).
//! The first step of a time step reuses last step's factor when the predictor starts near
//! an answer; a later step reuses this pass's factor while the iteration shrinks the strain
//! by [`LAGGED_RATE`] a step. A lagged step that makes the strain worse is undone (the first
//! one: more than [`LAGGED_FIRST_UNDO`] times worse), and one with last step's factor ends a
//! pass only if it also balanced the impulses to the tolerance. Measured on the app's
//! hanging cloth with a far drag: 2.62 → 1.84 factorisations per frame at 30×30, 4.04 →
//! 3.40 at 50×50 (`refactor_every_step` keeps plain Newton for tests/agreement.rs).
//!
//! The velocity constraints (004 eq. 3) are linear. Up to [`VELOCITY_SWEEPS`] strips
//! sweeps (002) solve them where they converge fast (the paper's scene: 0.3–0.5 ms at
//! 50×50); where they do not — a tensioned hanging cloth, 150–450 sweeps a frame — one
//! exact SLE solve at the end-of-step directions does, with a factorisation of its own
//! (measured on the app's hanging cloth with a far drag: the velocity pass 4.8 → 0.9 ms per
//! frame at 30×30, 32 → 2.8 ms at 50×50). Sweeps that failed are skipped for the next
//! [`VELOCITY_RETRY`] steps (they fail step after step where they fail: 0.9 → 0.65 ms at
//! 30×30, 2.6 → 2.0 ms at 50×50).

use glam::DVec3;

use super::strips::StripsSolver;
use super::{Solver, SolverKind, StepCtx, StepMark, iterative};
use crate::sim::cloth::{CacheKey, Cloth, ConstraintImpulses};
use crate::sim::collision::CONTACT_SKIN;
use crate::sim::dof::Glider;
use crate::sim::kernels::{self, preview};
use crate::sim::params::Ball;
use crate::sim::sparse::dissection;
use crate::sim::sparse::factor::{Factor, SupernodalChoice};

/// Inverse compliance per unit of a constraint's effective mass (1/ε_k = PENALTY /
/// (k_a + k_b)). Measured on the 50×50 paper scene at 1e-4: 1e8 needs ~12 Newton steps per
/// time step, 1e10–1e14 ~7; 1e12 sits in the middle of the good range.
pub const PENALTY: f64 = 1e12;

/// Strips sweeps that compute Newton's starting point (`NewtonSolver::predict`).
pub const PREDICTOR_SWEEPS: u32 = 10;

/// Strips sweeps the velocity pass tries before it solves the velocity constraints exactly
/// (`NewtonSolver::velocity_pass`).
pub const VELOCITY_SWEEPS: u32 = 8;

/// A Newton step taken with an old factor (a lagged step) must shrink the largest
/// constraint error by this factor, or the next step factorises afresh.
pub const LAGGED_RATE: f64 = 0.25;

/// Largest strain at the predictor's iterate for which the first Newton step of a time
/// step reuses last step's factor: beyond it the step is far from the last one's answer (a
/// grab that starts or jumps: 0.25 to 1.7 where a drag starts on the hanging 50×50, against
/// 5e-4 to 9e-3 in steady frames) and a lagged step does harm.
pub const LAGGED_START: f64 = 1e-2;

/// A lagged first step of a time step (last step's factor) that leaves the largest
/// constraint error more than this many times larger (or not finite) is undone. That step
/// often grows the strain while it brings the impulses into balance (5e-4 → 3.5e-3 on the
/// hanging 50×50; a fresh factor too: 5e-4 → 1.2e-3), and the fresh step after it
/// converges from there. A later lagged step is undone if it grows the error at all.
pub const LAGGED_FIRST_UNDO: f64 = 10.0;

/// Steps for which the velocity pass goes straight to its exact solve after its sweeps
/// failed: on the hanging cloth they fail in 239 of 240 frames and cost 0.8 ms per frame at
/// 50×50 (of 2.6 for the pass).
pub const VELOCITY_RETRY: u64 = 16;

/// Smallest (most negative) geometric stiffness a compressed constraint contributes, as
/// a fraction of its lighter end's mass: a particle has at most four structural
/// constraints, so M + Σ λ∇²C stays positive definite.
const COMPRESSION_FLOOR: f64 = 0.0625;

const NONE: u32 = u32::MAX;

/// Most alternations of strips sweeps on short self-contact rows with a Newton pass, per
/// position pass (`NewtonSolver::self_round`); a pass still short after them is finished by
/// strips sweeps to the tolerance.
const SELF_ROUNDS: u32 = 3;

/// Most alternations of the obstacle rows' friction with the strips sweeps that restore
/// the distance constraints after it, per position pass (docs/numerics.md, "Friction
/// inside the solve").
const FRICTION_ROUNDS: u32 = 4;

/// Most strips sweeps that restore the distance constraints after the obstacle rows'
/// friction moved particles in contact. Where the sweeps cannot within them — the skirt
/// wrapped round the ball with its hem in the hand, pulled taut between the waist and the
/// hand, where 002's linear rate crawls (the reason a stalled strips pass is handed to
/// Newton, [`super::strips::POSITION_STALL`]) — the pass ends on Newton's own answer,
/// within the tolerance, without that friction: static friction that only a stretched cloth
/// could hold is not held. Before, such a step ran four polishes to the safety cap (80 000
/// sweeps, 2–5 s) and ended 5–72 % stretched, and the next steps began from there
/// (docs/results.md, "Friction that only a stretched cloth could hold").
pub const RUB_POLISH: u32 = super::strips::POSITION_STALL;

/// What a side row holds its particle to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    /// Outside the ball (with the contact skin).
    Ball,
    /// Above the ground (with the contact skin).
    Ground,
    /// On the rod of glider `k` of the step's gliders.
    Rod(usize),
}

/// A constraint on one particle solved with the distance constraints: contact or rod (see
/// the module documentation).
#[derive(Debug, Clone, Copy)]
struct SideRow {
    particle: u32,
    side: Side,
    /// Multiplier: along the normal for contact (negative while it pushes), across the rod
    /// for a glider.
    lambda: DVec3,
    /// Constraint value at the iterate: φ·n for contact, P(x − anchor) for a rod.
    c: DVec3,
    /// Outward normal at the iterate (contact); unused for rods.
    n: DVec3,
    /// The normal the factor was assembled with (contact).
    n0: DVec3,
    /// A ground row let go and needed again in this pass: kept while it pulls by less than
    /// gravity moves its particle in a step (`NewtonSolver::measure_sides`). A flag of the
    /// row rather than a look-up in `released`, so that an undone lagged step restores it
    /// with the rows it saved.
    sticky: bool,
}

/// The colliders and rods of a step, as side rows see them.
#[derive(Clone, Copy)]
struct Surfaces<'a> {
    ball: Option<&'a Ball>,
    ground: Option<f64>,
    gliders: &'a [Glider],
}

impl Surfaces<'_> {
    /// Signed distance to the skin of `side` and its outward normal at `x` (contact only).
    fn contact(&self, side: Side, x: DVec3) -> Option<(f64, DVec3)> {
        match side {
            Side::Ball => self.ball.map(|b| {
                let d = x - b.center;
                let len = d.length();
                let n = if len > 1e-12 { d / len } else { DVec3::Y };
                (len - b.radius - CONTACT_SKIN, n)
            }),
            Side::Ground => self.ground.map(|g| (x.y - g - CONTACT_SKIN, DVec3::Y)),
            Side::Rod(_) => None,
        }
    }
}

/// The block pattern of the 3N×3N Newton matrix for one topology and static set.
#[derive(Debug, Default)]
struct BlockPattern {
    /// The cloth (topology and static set) it was built for.
    key: CacheKey,
    /// Block (unknown triple) of each particle; [`NONE`] for a static particle.
    block: Vec<u32>,
    /// Particle of each block.
    particle: Vec<u32>,
    /// Edges with at least one dynamic end.
    rows: Vec<u32>,
    /// Lower triangle, compressed columns.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Index of entry (j, j) for every column j; the rest of the diagonal block's column
    /// follows it.
    diag: Vec<usize>,
    /// For each row with two dynamic ends: index of entry (3·hi, 3·lo + c), c = 0..3; the
    /// entries (3·hi + r, 3·lo + c) follow it. `usize::MAX` if an end is static.
    off: Vec<[usize; 3]>,
}

impl BlockPattern {
    // `c` is a coordinate (0..3) that indexes the column, `diag` and every row's `off`.
    #[allow(clippy::needless_range_loop)]
    fn build(cloth: &Cloth) -> BlockPattern {
        let k = &cloth.particles.inv_mass;
        let edges = &cloth.topology.edges;
        let mut block = vec![NONE; cloth.len()];
        let mut particle = Vec::new();
        for (p, &kp) in k.iter().enumerate() {
            if kp > 0.0 {
                block[p] = particle.len() as u32;
                particle.push(p as u32);
            }
        }
        let rows: Vec<u32> = (0..edges.len() as u32)
            .filter(|&e| {
                let [a, b] = edges[e as usize];
                k[a as usize] + k[b as usize] > 0.0
            })
            .collect();
        // Upper neighbours of every block, with the rows that couple them.
        let nb = particle.len();
        let mut upper: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nb];
        for (r, &e) in rows.iter().enumerate() {
            let [a, b] = edges[e as usize];
            let (ba, bb) = (block[a as usize], block[b as usize]);
            if ba != NONE && bb != NONE && ba != bb {
                upper[ba.min(bb) as usize].push((ba.max(bb), r as u32));
            }
        }
        let mut col_ptr = Vec::with_capacity(3 * nb + 1);
        let mut row_idx = Vec::new();
        let mut diag = vec![0; 3 * nb];
        let mut off = vec![[usize::MAX; 3]; rows.len()];
        col_ptr.push(0);
        for (lo, list) in upper.iter_mut().enumerate() {
            list.sort_unstable();
            for c in 0..3 {
                let j = 3 * lo + c;
                diag[j] = row_idx.len();
                row_idx.extend(j..3 * lo + 3);
                let mut last = NONE;
                let mut start = 0;
                for &(hi, r) in list.iter() {
                    if hi != last {
                        start = row_idx.len();
                        row_idx.extend(3 * hi as usize..3 * hi as usize + 3);
                        last = hi;
                    }
                    off[r as usize][c] = start;
                }
                col_ptr.push(row_idx.len());
            }
        }
        BlockPattern {
            key: cloth.cache_key(),
            block,
            particle,
            rows,
            col_ptr,
            row_idx,
            diag,
            off,
        }
    }
}

/// Newton's method with geometric stiffness (see the module documentation).
#[derive(Debug, Default)]
pub struct NewtonSolver {
    /// Solve the velocity constraints with strips sweeps alone, never with the exact SLE
    /// solve (`NewtonSolver::velocity_pass`): the method before that acceleration, kept
    /// to check that the two agree (tests/agreement.rs).
    pub sweeps_only_velocity: bool,
    /// Factorise the Newton matrix at every Newton step (plain Newton), never reuse a
    /// factor (`NewtonSolver::position_pass`): the method before the lagged factor, kept
    /// to check that the two agree (tests/agreement.rs).
    pub refactor_every_step: bool,
    /// Fill-reducing order of the Newton matrix and of the velocity pass's SLE: nested
    /// dissection on a grid, AMD otherwise ([`super::sle::FillOrdering::Auto`]), or AMD always (to
    /// compare a grid with the same cloth read as a mesh, tests/meshes.rs).
    pub ordering: super::sle::FillOrdering,
    /// Per side row: the tangential velocity change its friction may still make in this
    /// pass (μ·k·|λ|/h in all, shared by the rounds of `FRICTION_ROUNDS`).
    friction_left: Vec<f64>,
    /// The velocities of the pass's answer before friction ([`RUB_POLISH`]), kept by the
    /// first round of friction where it changes one.
    v_solved: Vec<DVec3>,
    pattern: BlockPattern,
    factor: Option<Factor>,
    values: Vec<f64>,
    /// Multipliers per row (position-level impulses h·μ), kept from step to step as a
    /// warm start: a hanging cloth needs much the same impulses every step.
    lambda: Vec<f64>,
    /// 1/ε per row.
    penalty: Vec<f64>,
    /// Unconstrained preview of every particle.
    target: Vec<DVec3>,
    /// Current iterate of every particle's end-of-step position.
    x: Vec<DVec3>,
    /// Constraint error C = |x_b − x_a| − L per row at `x`.
    c: Vec<f64>,
    /// Unit direction of every row at `x` (J's rows).
    dirs: Vec<DVec3>,
    /// The directions the factor was assembled with (J₀'s rows).
    dirs0: Vec<DVec3>,
    /// The iterate, multipliers and side rows before a lagged step, to undo it.
    saved_x: Vec<DVec3>,
    saved_lambda: Vec<f64>,
    saved_sides: Vec<SideRow>,
    /// The side rows (particle, side) the factor was assembled with; `None` when there is
    /// no factor to reuse (a new pattern, a failed factorisation, a fallback).
    factored_sides: Option<Vec<(u32, Side)>>,
    /// Negative gradient, then the Newton step.
    rhs: Vec<f64>,
    /// The cloth's velocities while the predictor runs.
    saved_v: Vec<DVec3>,
    /// Last step's position change x − x̃ of each particle (zero for static ones): the net
    /// effect of its constraint impulses, the predictor's starting guess for this step's.
    last_shift: Vec<DVec3>,
    /// The step `last_shift` belongs to: it is used only by the step right after it.
    last_step: Option<StepMark>,
    /// This solver's last position pass: the multipliers (and the factor) are a warm start
    /// only for the next step of the same cloth, or another pass of this one.
    last_pass: Option<StepMark>,
    /// Active contact and rod rows.
    sides: Vec<SideRow>,
    /// Per particle, which contact rows it has (scratch of `measure_sides`).
    has_side: Vec<u8>,
    /// Per particle, whether its ground row was let go in this pass (`measure_sides`).
    released: Vec<bool>,
    /// How far a sticky row may pull its particle (m): gravity's h²·|g|.
    sticky_pull: f64,
    /// The velocity pass's sweeps and exact solve (its own pattern and factor), and the
    /// step in which its sweeps last failed to converge.
    velocity: super::sle::ExactVelocity,
    polish: StripsSolver,
    /// Self-contact alternations of the pass in progress (`NewtonSolver::self_round`).
    self_rounds: u32,
}

impl NewtonSolver {
    fn ensure_pattern(&mut self, cloth: &Cloth) -> bool {
        if self.factor.is_some() && self.pattern.key == cloth.cache_key() {
            return false;
        }
        self.pattern = BlockPattern::build(cloth);
        let n = 3 * self.pattern.particle.len();
        self.factor = Factor::symbolic(
            n,
            &self.pattern.col_ptr,
            &self.pattern.row_idx,
            // Measured: the 3×3-block pattern favours the supernodal kernel at every size
            // (20×20: 1.7 against 2.8 ms/step; 30×30: 4.8 against 9.9), unlike the SLE's.
            SupernodalChoice::Supernodal,
            match self.ordering {
                super::sle::FillOrdering::Auto => dissection::particles_order(
                    &cloth.topology,
                    cloth.len(),
                    &self.pattern.particle,
                    3,
                ),
                super::sle::FillOrdering::Amd => None,
            },
        );
        self.lambda.clear();
        self.factored_sides = None;
        true
    }

    /// Start x from a few strips sweeps (002) on the preview shifted by last step's net
    /// constraint impulses (`last_shift`). A hanging or swinging cloth needs much the same
    /// impulses every step, so the shifted preview is already close to the answer (the
    /// plain preview lets the whole cloth fall by ½gh², 27 % of the spacing at 50×50);
    /// the exact chain solves then take out most of what remains for a fraction of a
    /// factorisation. Measured on the 004 §4 scene at 1e-4 (README): 5.4 Newton steps per
    /// time step from the strips-on-preview start, 3.1 from this one. The cloth's
    /// velocities are left as they were: only the starting point changes.
    fn predict(&mut self, ctx: &mut StepCtx<'_>) {
        self.saved_v.clone_from(&ctx.cloth.particles.v);
        // The predictor's sweeps only find a starting point, undone with the velocities:
        // they record no impulses.
        let log = ctx.cloth.impulses.take();
        let now = StepMark::of(ctx);
        let next = self.last_step.is_some_and(|m| m.precedes(now));
        if next && self.last_shift.len() == ctx.cloth.len() {
            let h = ctx.params.dt;
            let p = &mut ctx.cloth.particles;
            for ((v, d), &k) in p.v.iter_mut().zip(&self.last_shift).zip(&p.inv_mass) {
                if k > 0.0 {
                    *v += *d / h;
                }
            }
        }
        self.capped_sweeps(ctx, PREDICTOR_SWEEPS, false);
        let p = &mut ctx.cloth.particles;
        let h = ctx.params.dt;
        self.x.clear();
        self.x
            .extend((0..p.x.len()).map(|i| preview(p.x[i], p.v[i], ctx.accel[i], h)));
        p.v.clone_from(&self.saved_v);
        ctx.cloth.impulses = log;
    }

    /// One alternation for self-contact rows left short by a converged pass: strips
    /// sweeps (which visit those rows with the chains) until a sweep corrects no row, then
    /// this pass again from the velocities they leave. The rows' slop
    /// ([`crate::sim::contact::set::SLOP`]) is far wider than what the pass then moves a
    /// particle by to meet the tolerance (the strain times the spacing), so the second pass
    /// mostly ends with every row met. Strips sweeps run to the tolerance instead crawl
    /// (002's linear rate on a tensioned cloth): measured on the 30×30 drape pulled off the
    /// ball, hundreds of sweeps a step after the rows had settled in the first hundred.
    /// Iteration counts add up over the rounds.
    fn self_round(&mut self, ctx: &mut StepCtx<'_>) {
        let (sweeps, _) = self.polish.contact_sweeps(ctx);
        let mut before = ctx.stats.take_pass_counts();
        before.polish_sweeps += sweeps;
        self.self_rounds += 1;
        self.position_pass(ctx);
        self.self_rounds -= 1;
        ctx.stats.add_pass_counts(before);
    }

    /// At most `sweeps` strips sweeps (and the step's own cap) of the position pass or,
    /// with `velocity`, of the velocity pass: (sweeps done, converged).
    fn capped_sweeps(&mut self, ctx: &mut StepCtx<'_>, sweeps: u32, velocity: bool) -> (u32, bool) {
        let params = ctx.params.with_cap(sweeps);
        self.polish
            .sweeps(&mut ctx.reborrow(&params, true), velocity)
    }

    /// Constraint errors, directions and the largest relative strain at `x`; `None` if a
    /// constraint has collapsed to zero length.
    fn measure(&mut self, cloth: &Cloth) -> Option<f64> {
        let t = &cloth.topology;
        let mut worst = 0.0f64;
        for (r, &e) in self.pattern.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let l0 = t.rest[e as usize];
            let d = self.x[b as usize] - self.x[a as usize];
            let len = d.length();
            if kernels::is_degenerate(len, l0) {
                return None;
            }
            self.c[r] = len - l0;
            self.dirs[r] = d / len;
            worst = worst.max((len - l0).abs() / l0);
        }
        Some(worst)
    }

    /// [`Self::measure`] and [`Self::measure_sides`]: the largest error of any row at `x`.
    fn measure_all(
        &mut self,
        cloth: &Cloth,
        surfaces: &Surfaces<'_>,
        shortest: f64,
    ) -> Option<f64> {
        self.measure(cloth)
            .map(|w| w.max(self.measure_sides(surfaces, shortest, &cloth.particles.inv_mass)))
    }

    /// Whether the side rows are the ones the factor was assembled with.
    fn sides_factored(&self) -> bool {
        self.factored_sides.as_ref().is_some_and(|f| {
            f.len() == self.sides.len()
                && f.iter()
                    .zip(&self.sides)
                    .all(|(&(p, s), r)| p == r.particle && s == r.side)
        })
    }

    /// Bring the side rows up to date at `x` and return their largest violation relative to
    /// `shortest` (a rest length): drop a contact row whose multiplier pulls and whose
    /// particle is outside (it is free to leave), or whose collider is gone; add a row for
    /// every dynamic particle inside a collider without one; evaluate every row.
    fn measure_sides(&mut self, surfaces: &Surfaces<'_>, shortest: f64, inv_mass: &[f64]) -> f64 {
        let x = &self.x;
        // A row of a collider that is gone (the ball or ground removed since the rows were
        // made) goes too, whatever its multiplier.
        //
        // A ground row let go and needed again in the same pass is kept while it pulls its
        // particle by less than gravity moves it in a step (h²·|g|; its multiplier times
        // the inverse mass is that pull). Without that, rows of particles resting on the
        // ground under a pile were let go with a pull of a fraction of that, the particle
        // ended the next Newton step 2 mm under the ground (gravity's h²·g in the preview),
        // got its row back, and so on: 50 Newton steps, the pass's cap, in most steps of
        // the 50×50 pile once it had landed. A row that pulls harder is let go as before:
        // kept whatever it pulled, rows glued the drape to the ball under the hand. Ball
        // rows are let go as before too: a dragged drape took more Newton steps with them
        // sticky (docs/experiments.md, "Ground rows that come and go").
        let released = &mut self.released;
        released.resize(x.len(), false);
        let limit = self.sticky_pull;
        self.sides.retain(|r| {
            let keep = match r.side {
                Side::Rod(_) => true,
                _ => surfaces
                    .contact(r.side, x[r.particle as usize])
                    .is_some_and(|(phi, _)| {
                        r.lambda.x < 0.0
                            || phi < 0.0
                            || (r.sticky && r.lambda.x * inv_mass[r.particle as usize] <= limit)
                    }),
            };
            if !keep && r.side == Side::Ground {
                released[r.particle as usize] = true;
            }
            keep
        });
        let mut worst = 0.0f64;
        // Which particles have a ball (bit 0) or ground (bit 1) row already.
        let bit = |side| if side == Side::Ball { 1u8 } else { 2u8 };
        self.has_side.clear();
        self.has_side.resize(x.len(), 0);
        for r in &self.sides {
            if !matches!(r.side, Side::Rod(_)) {
                self.has_side[r.particle as usize] |= bit(r.side);
            }
        }
        for &p in &self.pattern.particle {
            for side in [Side::Ball, Side::Ground] {
                if let Some((phi, _)) = surfaces.contact(side, x[p as usize])
                    && phi < 0.0
                    && self.has_side[p as usize] & bit(side) == 0
                {
                    self.sides.push(SideRow {
                        particle: p,
                        side,
                        lambda: DVec3::ZERO,
                        c: DVec3::ZERO,
                        n: DVec3::Y,
                        n0: DVec3::Y,
                        sticky: side == Side::Ground && self.released[p as usize],
                    });
                }
            }
        }
        for r in &mut self.sides {
            let xp = x[r.particle as usize];
            match r.side {
                Side::Rod(k) => {
                    let g = &surfaces.gliders[k];
                    r.c = (xp - g.anchor) - g.along(xp - g.anchor);
                    worst = worst.max(r.c.length());
                }
                side => {
                    let (phi, n) = surfaces.contact(side, xp).unwrap_or((0.0, DVec3::Y));
                    r.c = n * phi;
                    r.n = n;
                    // Outside with a multiplier that still pushes: that is the violation
                    // (the row then lets go); inside: the depth.
                    worst = worst.max(phi.abs());
                }
            }
        }
        worst / shortest
    }

    /// Rows for the rods of the step's gliders (dynamic particles only), keeping the
    /// multipliers of rows that carry over; contact rows are kept only when `keep`.
    fn begin_sides(&mut self, gliders: &[Glider], keep: bool) {
        self.released.iter_mut().for_each(|r| *r = false);
        let old = std::mem::take(&mut self.sides);
        let carried = |particle: u32, side: Side| {
            old.iter()
                .find(|r| r.particle == particle && r.side == side)
                .map_or(DVec3::ZERO, |r| r.lambda)
        };
        for (k, g) in gliders.iter().enumerate() {
            let p = g.particle as u32;
            if self
                .pattern
                .block
                .get(g.particle)
                .is_some_and(|&b| b != NONE)
            {
                let lambda = if keep {
                    carried(p, Side::Rod(k))
                } else {
                    DVec3::ZERO
                };
                self.sides.push(SideRow {
                    particle: p,
                    side: Side::Rod(k),
                    lambda,
                    c: DVec3::ZERO,
                    n: DVec3::Y,
                    n0: DVec3::Y,
                    sticky: false,
                });
            }
        }
        if keep {
            self.sides.extend(
                old.iter()
                    .filter(|r| {
                        !matches!(r.side, Side::Rod(_))
                            && self
                                .pattern
                                .block
                                .get(r.particle as usize)
                                .is_some_and(|&b| b != NONE)
                    })
                    .map(|r| SideRow {
                        sticky: false,
                        ..*r
                    }),
            );
        }
    }

    /// The penalty of a side row on particle `p`: [`PENALTY`] times its mass.
    fn side_penalty(cloth: &Cloth, p: u32) -> f64 {
        PENALTY / cloth.particles.inv_mass[p as usize]
    }

    /// The projector of a side row: nnᵀ for contact, I − aaᵀ across a rod.
    fn side_projector(r: &SideRow, gliders: &[Glider], u: DVec3) -> DVec3 {
        match r.side {
            Side::Rod(k) => u - gliders[k].along(u),
            _ => r.n * r.n.dot(u),
        }
    }

    /// How far the iterate is from balancing its impulses: the largest distance between a
    /// particle and where its multipliers put it, |x − x̃ + M⁻¹Jᵀλ| (side rows included),
    /// in metres — the gradient without the penalty's term, scaled by M⁻¹ (it overwrites
    /// `rhs`). Zero at the answer of the step; after a fresh Newton step it is of second
    /// order, after a lagged one of first order in how far the directions moved.
    fn imbalance(&mut self, cloth: &Cloth) -> f64 {
        self.residual(cloth, false);
        let k = &cloth.particles.inv_mass;
        (self.pattern.particle.iter().enumerate())
            .map(|(b, &p)| {
                let r = DVec3::from_slice(&self.rhs[3 * b..3 * b + 3]);
                r.length() * k[p as usize]
            })
            .fold(0.0, f64::max)
    }

    /// The negative gradient −(M(x − x̃) + Jᵀ(λ + C/ε)) into `rhs`.
    fn gradient(&mut self, cloth: &Cloth) {
        self.residual(cloth, true);
    }

    /// −(M(x − x̃) + Jᵀλ), plus −JᵀC/ε with the `penalty`'s term, into `rhs`.
    fn residual(&mut self, cloth: &Cloth, penalty: bool) {
        let pat = &self.pattern;
        let t = &cloth.topology;
        let k = &cloth.particles.inv_mass;
        self.rhs.clear();
        self.rhs.resize(3 * pat.particle.len(), 0.0);
        for (b, &p) in pat.particle.iter().enumerate() {
            let g = (self.x[p as usize] - self.target[p as usize]) / k[p as usize];
            for c in 0..3 {
                self.rhs[3 * b + c] = -g[c];
            }
        }
        for (r, &e) in pat.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            // Jᵀλ at the iterate, the penalty's J₀ᵀC/ε with the factor's directions (the
            // same thing right after a factorisation).
            let pen = if penalty { self.penalty[r] } else { 0.0 };
            let f = self.dirs[r] * self.lambda[r] + self.dirs0[r] * (pen * self.c[r]);
            // ∇_a C = −n, ∇_b C = n.
            for (q, sign) in [(a, 1.0), (b, -1.0)] {
                let blk = pat.block[q as usize];
                if blk != NONE {
                    let i = 3 * blk as usize;
                    for c in 0..3 {
                        self.rhs[i + c] += sign * f[c];
                    }
                }
            }
        }
        for r in &self.sides {
            let pen = if penalty {
                Self::side_penalty(cloth, r.particle)
            } else {
                0.0
            };
            let f = match r.side {
                Side::Rod(_) => r.lambda + r.c * pen,
                _ => r.n * r.lambda.x + r.n0 * (r.c.dot(r.n) * pen),
            };
            let i = 3 * pat.block[r.particle as usize] as usize;
            for c in 0..3 {
                self.rhs[i + c] -= f[c];
            }
        }
    }

    /// The Newton matrix M + Σ λ_k ∇²C_k + Σ ∇C_kᵀ∇C_k / ε_k at `x` (lower triangle).
    fn assemble(&mut self, cloth: &Cloth, gliders: &[Glider]) {
        let pat = &self.pattern;
        let t = &cloth.topology;
        let k = &cloth.particles.inv_mass;
        self.values.clear();
        self.values.resize(pat.row_idx.len(), 0.0);
        for (b, &p) in pat.particle.iter().enumerate() {
            let m = 1.0 / k[p as usize];
            for c in 0..3 {
                self.values[pat.diag[3 * b + c]] += m;
            }
        }
        for (r, &e) in pat.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let n = self.dirs[r];
            let len = self.c[r] + t.rest[e as usize];
            let m_light = 1.0 / k[a as usize].max(k[b as usize]);
            let geo = (self.lambda[r] / len).max(-m_light * COMPRESSION_FLOOR);
            // Block B = λ/len (I − nnᵀ) + (1/ε) nnᵀ; +B on both diagonal blocks, −B off.
            let axial = self.penalty[r] - geo;
            let bmat = |i: usize, j: usize| axial * n[i] * n[j] + if i == j { geo } else { 0.0 };
            let (ba, bb) = (pat.block[a as usize], pat.block[b as usize]);
            for blk in [ba, bb] {
                if blk == NONE {
                    continue;
                }
                for c in 0..3 {
                    let start = pat.diag[3 * blk as usize + c];
                    for rr in c..3 {
                        self.values[start + rr - c] += bmat(rr, c);
                    }
                }
            }
            if ba != NONE && bb != NONE {
                for c in 0..3 {
                    let start = pat.off[r][c];
                    for rr in 0..3 {
                        self.values[start + rr] -= bmat(rr, c);
                    }
                }
            }
        }
        // Side rows: penalty × their projector on the particle's diagonal block.
        for r in &self.sides {
            let pen = Self::side_penalty(cloth, r.particle);
            let blk = pat.block[r.particle as usize] as usize;
            for c in 0..3 {
                let col = Self::side_projector(r, gliders, DVec3::AXES[c]);
                let start = pat.diag[3 * blk + c];
                for rr in c..3 {
                    self.values[start + rr - c] += pen * col[rr];
                }
            }
        }
    }

    /// Take the step in `rhs`: the multipliers move to the linearised constraints'
    /// (Δλ = (J Δx + C)/ε, with J and C at the old iterate), then x += Δx.
    fn take_step(&mut self, cloth: &Cloth, gliders: &[Glider]) {
        let pat = &self.pattern;
        let t = &cloth.topology;
        let dx = |q: u32| {
            let blk = pat.block[q as usize];
            if blk == NONE {
                DVec3::ZERO
            } else {
                let i = 3 * blk as usize;
                DVec3::new(self.rhs[i], self.rhs[i + 1], self.rhs[i + 2])
            }
        };
        for (r, &e) in pat.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let jdx = self.dirs0[r].dot(dx(b) - dx(a));
            self.lambda[r] += self.penalty[r] * (jdx + self.c[r]);
        }
        for r in &mut self.sides {
            let pen = Self::side_penalty(cloth, r.particle);
            let d = dx(r.particle);
            match r.side {
                Side::Rod(_) => r.lambda += (Self::side_projector(r, gliders, d) + r.c) * pen,
                _ => r.lambda.x += pen * (r.n0.dot(d) + r.c.dot(r.n)),
            }
        }
        for &p in &pat.particle {
            self.x[p as usize] += dx(p);
        }
    }
}

impl NewtonSolver {
    /// Strips sweeps to the tolerance after a pass left it unmet, with the self-contact
    /// rows given their normal impulse only: their friction comes from the contact visits
    /// before the pass and between its rounds, and from the alternation's sweeps
    /// (`NewtonSolver::self_round`), whose next Newton pass restores the chains
    /// (`StripsSolver::finish_position_pass`).
    fn finish_to_tolerance(&mut self, ctx: &mut StepCtx<'_>) {
        self.polish.finish_position_pass(ctx, false);
    }

    /// [`NewtonSolver::finish_to_tolerance`] after friction. Where the pass's answer
    /// before friction (largest strain `solved`) met the tolerance, the sweeps get at most
    /// [`RUB_POLISH`], and if they do not meet it the pass ends on that answer: returns
    /// false then, true where the pass goes on. An answer over the tolerance is finished
    /// as it would be without friction.
    fn finish_rubbed(&mut self, ctx: &mut StepCtx<'_>, solved: f64) -> bool {
        if solved > ctx.params.tolerance {
            self.finish_to_tolerance(ctx);
            return true;
        }
        let capped = ctx.params.with_cap(RUB_POLISH);
        let selfs = ctx.selfs.is_some();
        self.polish
            .finish_position_pass(&mut ctx.reborrow(&capped, selfs), false);
        if ctx.stats.converged {
            return true;
        }
        ctx.cloth.particles.v.clone_from(&self.v_solved);
        ctx.stats.unrubbed = true;
        ctx.stats.set_position_outcome(solved, true, false);
        false
    }

    /// Coulomb friction of the ball and ground rows, from their multipliers: a row that
    /// pushed its particle out by k·|λ| (a velocity change k·|λ|/h along its normal —
    /// gravity and the cloth's tension pressing it in) cuts the particle's tangential
    /// velocity over the step (v + ½·a·h) relative to the surface by at most μ times that. The obstacles' friction
    /// before the pass ([`crate::sim::collision::ContactSweep`]) sees only the preview's
    /// penetration, not the tension a draped cloth presses on the ball with, and a cloth
    /// slid off it (docs/numerics.md, "Friction inside the solve"). Returns whether a
    /// velocity changed (the previews then need the distance constraints again).
    fn friction(&mut self, ctx: &mut StepCtx<'_>, first: bool) -> bool {
        let mu = ctx.params.friction;
        if mu == 0.0 {
            return false;
        }
        if first {
            self.friction_left.clear();
            self.friction_left.resize(self.sides.len(), f64::INFINITY);
        }
        let h = ctx.params.dt;
        let ball_v = ctx.ball_end.map_or(DVec3::ZERO, |b| b.velocity);
        let p = &mut ctx.cloth.particles;
        let mut rubbed = false;
        for (r, left) in self.sides.iter().zip(&mut self.friction_left) {
            let surface_v = match r.side {
                Side::Ball => ball_v,
                Side::Ground => DVec3::ZERO,
                Side::Rod(_) => continue,
            };
            let push = -r.lambda.x;
            let i = r.particle as usize;
            let k = p.inv_mass[i];
            if push <= 0.0 || k == 0.0 {
                continue;
            }
            let dvn = k * push / h;
            if left.is_infinite() {
                *left = mu * dvn;
            }
            // The step moves the particle by v·h + ½·a·h²: static friction must stop that
            // motion, so it acts on the mean velocity over the step (cutting v alone let
            // gravity's tangential part slip ½·g·h a step down the ball's sides).
            let rel = p.v[i] + ctx.accel[i] * (0.5 * h) - surface_v;
            let vt = rel - r.n * rel.dot(r.n);
            let len = vt.length();
            let cut = left.min(len);
            if cut > 0.0 {
                if first && !rubbed {
                    // The answer before friction, for a pass that cannot restore it.
                    self.v_solved.clone_from(&p.v);
                }
                p.v[i] -= vt * (cut / len);
                *left -= cut;
                rubbed = true;
            }
        }
        rubbed
    }
}

impl Solver for NewtonSolver {
    fn kind(&self) -> SolverKind {
        SolverKind::Newton
    }

    fn position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        ctx.stats.symbolic_analysis = self.ensure_pattern(ctx.cloth);
        // Multipliers carry over from the last step, and from an earlier pass of this step
        // (a contact round re-runs the pass: the multipliers it found are the best start).
        let now = StepMark::of(ctx);
        let continues = self.last_pass.is_some_and(|m| m == now || m.precedes(now));
        self.last_pass = Some(now);
        if !continues {
            // What the velocity pass learnt of an earlier run does not hold for this one.
            self.velocity.stalled = None;
        }
        let h = ctx.params.dt;
        let tol = ctx.params.tolerance;
        let nrows = self.pattern.rows.len();
        if nrows == 0 {
            ctx.stats.converged = true;
            return;
        }
        if self.factor.is_none() {
            ctx.stats.fell_back = true;
            self.polish.finish_position_pass(ctx, true);
            return;
        }
        {
            let p = &ctx.cloth.particles;
            self.target.clear();
            self.target
                .extend((0..p.x.len()).map(|i| preview(p.x[i], p.v[i], ctx.accel[i], h)));
        }
        self.predict(ctx);
        let surfaces = Surfaces {
            ball: ctx.ball_end,
            ground: ctx.params.ground,
            gliders: ctx.gliders,
        };
        // The side rows' scale, needed (and a pass over the rest lengths spent) only with
        // contact or rods.
        let shortest = if ctx.has_contacts() {
            ctx.cloth.topology.shortest_rest()
        } else {
            f64::INFINITY
        };
        self.begin_sides(ctx.gliders, continues);
        self.sticky_pull = h * h * ctx.params.gravity.length();
        self.c.resize(nrows, 0.0);
        self.dirs.resize(nrows, DVec3::ZERO);
        if !continues || self.lambda.len() != nrows || !ctx.params.velocity_pass {
            self.lambda.clear();
            self.lambda.resize(nrows, 0.0);
        }
        {
            let k = &ctx.cloth.particles.inv_mass;
            let t = &ctx.cloth.topology;
            self.penalty.clear();
            self.penalty.extend(self.pattern.rows.iter().map(|&e| {
                let [a, b] = t.edges[e as usize];
                // The constraint's effective mass 1/(k_a + k_b), as on A's diagonal.
                PENALTY / (k[a as usize] + k[b as usize])
            }));
        }
        let max_solves = ctx.params.capped(ctx.params.newton_max_steps);
        let mut solves = 0;
        let mut factorizations = 0;
        let mut worst = self.measure_all(ctx.cloth, &surfaces, shortest);
        let start = worst.unwrap_or(f64::INFINITY);
        let mut ok = true;
        // The first Newton step reuses the last step's factor, if this solver made it for
        // this cloth in the step before (or an earlier pass of this one).
        let mut refactor =
            self.refactor_every_step || !continues || worst.is_none_or(|w| w > LAGGED_START);
        // Whether a Newton step has been kept, whether this pass has factorised, and whether
        // the last step kept was a lagged one with last time step's factor.
        let (mut kept, mut fresh, mut last_stale) = (false, false, false);
        while let Some(w) = worst {
            // At least one Newton step, even when the predictor alone met the tolerance: it
            // brings the multipliers up to date, and a step that skipped it left the next
            // one 15–20 Newton steps from stale multipliers (measured). A step with this
            // pass's factor right after it was made is a chord step of Newton's own
            // iteration; one with last step's factor ends the pass only if it also balanced
            // the impulses to the tolerance: the strains alone do not tell its answer from
            // the step's own.
            let done = w <= tol
                && kept
                && (!last_stale
                    || self.imbalance(ctx.cloth) <= tol * ctx.cloth.topology.shortest_rest());
            if done || solves >= max_solves {
                break;
            }
            if w <= tol && kept {
                // Converged but for a lagged step's imbalance: a fresh Newton step.
                refactor = true;
            }
            let lagged = !refactor && self.dirs0.len() == nrows && self.sides_factored();
            if lagged {
                // The last factor, applied to the KKT residual at this iterate (see the
                // module documentation); undone if it blows the iterate up.
                self.saved_x.clone_from(&self.x);
                self.saved_lambda.clone_from(&self.lambda);
                self.saved_sides.clone_from(&self.sides);
            } else {
                // A Newton step proper: the matrix at this iterate.
                self.dirs0.clone_from(&self.dirs);
                self.sides.iter_mut().for_each(|r| r.n0 = r.n);
                self.assemble(ctx.cloth, ctx.gliders);
                factorizations += 1;
                // `factor` is Some here: a failed symbolic analysis returned above.
                let Some(f) = self.factor.as_mut() else { break };
                if f.numeric(&self.values).is_err() {
                    self.factored_sides = None;
                    ok = false;
                    break;
                }
                self.factored_sides =
                    Some(self.sides.iter().map(|r| (r.particle, r.side)).collect());
                fresh = true;
            }
            self.gradient(ctx.cloth);
            let Some(f) = self.factor.as_mut() else { break };
            f.solve_in_place(&mut self.rhs);
            self.take_step(ctx.cloth, ctx.gliders);
            solves += 1;
            worst = self.measure_all(ctx.cloth, &surfaces, shortest);
            // The factor serves the next step only while the iteration shrinks the error by
            // LAGGED_RATE a step: far from the answer a lagged step does harm (a grab that
            // jumps 0.37 m alternated fresh and lagged steps without converging in 50).
            refactor = self.refactor_every_step || worst.is_none_or(|w2| w2 > LAGGED_RATE * w);
            let undo = if solves == 1 { LAGGED_FIRST_UNDO } else { 1.0 };
            if lagged && worst.is_none_or(|w2| w2 > undo * w) {
                std::mem::swap(&mut self.x, &mut self.saved_x);
                std::mem::swap(&mut self.lambda, &mut self.saved_lambda);
                std::mem::swap(&mut self.sides, &mut self.saved_sides);
                worst = self.measure_all(ctx.cloth, &surfaces, shortest);
            } else {
                kept = true;
                last_stale = lagged && !fresh;
            }
        }
        let s = &mut *ctx.stats;
        s.position_iterations = solves;
        s.factorizations = factorizations;
        s.linear_solves = solves;
        let Some(worst) = worst.filter(|&w| ok && w.is_finite() && w <= start.max(tol)) else {
            // A collapsed constraint, a matrix that lost definiteness, or Newton steps that
            // left the preview worse than they found it: keep the preview, let strips do the
            // step; the multipliers are not to be trusted next step either.
            s.fell_back = true;
            self.factored_sides = None;
            self.lambda.iter_mut().for_each(|l| *l = 0.0);
            self.last_shift.clear();
            self.polish.finish_position_pass(ctx, true);
            return;
        };
        // The velocity change that takes the preview to x (an impulse per particle): at the
        // balance M(x − x̃) = −Jᵀλ, the impulse −λ_r/h along row r's direction on its
        // second particle.
        if ctx.cloth.impulses.is_some() {
            let cloth = &mut *ctx.cloth;
            for (r, &e) in self.pattern.rows.iter().enumerate() {
                let [a, b] = cloth.topology.edges[e as usize];
                let (xa, xb) = (cloth.particles.x[a as usize], cloth.particles.x[b as usize]);
                let j_b = self.dirs[r] * (-self.lambda[r] / h);
                cloth.impulses.record(e as usize, j_b, xa, xb);
            }
        }
        let p = &mut ctx.cloth.particles;
        self.last_shift.clear();
        self.last_shift.resize(p.len(), DVec3::ZERO);
        self.last_step = Some(now);
        for &q in &self.pattern.particle {
            let q = q as usize;
            let shift = self.x[q] - self.target[q];
            p.v[q] += shift / h;
            self.last_shift[q] = shift;
        }
        let solved = worst;
        let rubbed = self.friction(ctx, true);
        let worst = if rubbed {
            iterative::preview_max_strain(ctx.cloth, ctx.accel, h)
        } else {
            worst
        };
        ctx.stats.set_position_outcome(worst, worst <= tol, false);
        // Self-contacts are not rows of this system (they couple four particles, which the
        // cloth's pattern does not): where one is short, strips sweeps — which visit them
        // with the distance constraints — finish the pass from Newton's answer.
        let selfs_short = {
            let p = &ctx.cloth.particles;
            let a = ctx.accel;
            ctx.contacts()
                .self_violated(|i| kernels::drift(p.x[i], a[i], h), &p.v, &p.inv_mass)
        };
        if selfs_short && ctx.stats.converged && self.self_rounds < SELF_ROUNDS {
            self.self_round(ctx);
            return;
        }
        if !ctx.stats.converged || selfs_short {
            if !rubbed {
                self.finish_to_tolerance(ctx);
            } else if !self.finish_rubbed(ctx, solved) {
                return;
            }
        }
        // The sweeps that restored the constraints after friction moved particles in
        // contact along the surface again: friction and sweeps alternate, a block
        // Gauss–Seidel between them.
        let mut rounds = 1;
        while rubbed && rounds < FRICTION_ROUNDS && self.friction(ctx, false) {
            rounds += 1;
            let worst = iterative::preview_max_strain(ctx.cloth, ctx.accel, h);
            if worst <= tol {
                break;
            }
            if !self.finish_rubbed(ctx, solved) {
                return;
            }
        }
    }

    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>) {
        // A few strips sweeps (002) first: where they meet the tolerance (the paper's
        // scene: 0.3–0.5 ms at 50×50) they are cheaper than a factorisation. Where they do
        // not — a tensioned hanging cloth, where they crawl (150–450 sweeps, 5 ms at
        // 30×30 and 32 ms at 50×50 per frame) — one exact SLE solve at the end-of-step
        // directions (0.6 / 2.0 ms), and strips finish what round-off left.
        if self.sweeps_only_velocity {
            self.polish.velocity_sweeps_pass(ctx);
            return;
        }
        // Sweeps that failed within the last VELOCITY_RETRY steps of this cloth are
        // skipped: the scene that defeats them does so step after step.
        self.velocity.sle.ordering = self.ordering;
        self.velocity
            .pass(ctx, &mut self.polish, VELOCITY_SWEEPS, VELOCITY_RETRY);
    }
}
