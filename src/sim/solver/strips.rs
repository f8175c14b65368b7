//! Strips (002, Bender & Bayer; "Impulse-based dynamic simulation in linear time"): the
//! constraint mesh is covered by acyclic chains — for a grid, its rows and its columns; for
//! a mesh, paths along its straight continuations ([`crate::sim::mesh::paths`]). The
//! impulse system of one chain is tridiagonal (a constraint shares a particle only with its
//! neighbours in the chain), so a chain's linearised impulses are solved exactly in
//! O(length) with the Thomas algorithm. Chains that share particles are coupled by block
//! Gauss–Seidel over families of chains that share no particle: all rows (in parallel),
//! then all columns (a mesh's cover has a few more families), until
//! every previewed strain is within the tolerance or the cap. The position preview, the
//! impulse directions (from the preview) and the velocity pass are those of the iterative
//! solver (004 §3.2), but a pass whose sweeps stall — a cloth held taut between its pins
//! and the hand — is finished otherwise: a velocity pass by one exact solve
//! ([`VELOCITY_STALL`]), a position pass by Newton's method ([`POSITION_STALL`]).

use glam::DVec3;

use super::iterative;
use super::{Solver, SolverKind, StepCtx, StepMark};
use crate::sim::cloth::{Cloth, ConstraintImpulses};
use crate::sim::collision::ContactSweep;
use crate::sim::kernels::{self, StrainBand};

/// A chain: consecutive constraints (edge indices), each sharing its second particle with
/// the next one's first — the edge's own second particle, or its first where `flip` says
/// so (empty: none flipped).
#[derive(Debug, Clone, Default)]
struct Chain {
    edges: Vec<u32>,
    flip: Vec<bool>,
}

/// The chains of a cloth, in families whose chains share no particle: a grid's rows and
/// columns (its fast path), a mesh's cover by straight paths otherwise.
fn chains(cloth: &Cloth) -> Vec<Vec<Chain>> {
    let t = &cloth.topology;
    match t.grid {
        Some(g) if g.width * g.height == cloth.len() => grid_chains(cloth, g.width, g.height),
        _ => t
            .cover
            .iter()
            .map(|family| {
                family
                    .iter()
                    .map(|path| Chain {
                        edges: path.iter().map(|&(e, _)| e).collect(),
                        flip: path.iter().map(|&(_, r)| r).collect(),
                    })
                    .collect()
            })
            .collect(),
    }
}

/// Rows first, then columns: the two families of a grid's strips.
fn grid_chains(cloth: &Cloth, w: usize, h: usize) -> Vec<Vec<Chain>> {
    let t = &cloth.topology;
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
            rows.push(Chain {
                edges,
                flip: Vec::new(),
            });
        }
    }
    let mut cols = Vec::new();
    for c in 0..w {
        let edges: Vec<u32> = (0..h.saturating_sub(1))
            .filter_map(|r| lookup.get(&(idx(r, c), idx(r + 1, c))).copied())
            .collect();
        if !edges.is_empty() {
            cols.push(Chain {
                edges,
                flip: Vec::new(),
            });
        }
    }
    vec![rows, cols]
}

/// One constraint of a chain as a pass needs it, gathered once per pass in chain order:
/// its particles, their inverse masses (fixed within a pass) and its strain test.
#[derive(Debug, Clone, Copy)]
struct StripLink {
    a: u32,
    b: u32,
    /// The constraint's index (its impulses are recorded, [`Cloth::impulses`]).
    e: u32,
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
    /// Position pass: the largest strain of the chain's previewed links, for a chain that
    /// needs a solve ([`RELAX_STRAIN`]).
    worst: f64,
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
    relax: f64,
) {
    if prepare(links, v, target, h, sc) && thomas(links, sc) {
        emit(links, sc, relax);
    }
}

/// Two chains of one family (they share no particle) solved together: their Thomas
/// recurrences are serial, so running two side by side lets the processor overlap them.
/// The results are those of two [`solve_chain`] calls, bit for bit.
fn solve_chain_pair(
    links: [&[StripLink]; 2],
    v: &[DVec3],
    target: Target<'_>,
    h: f64,
    sc: &mut [ChainScratch; 2],
    relax: f64,
) {
    let [s0, s1] = sc;
    let p0 = prepare(links[0], v, target, h, s0);
    let p1 = prepare(links[1], v, target, h, s1);
    let (t0, t1) = match (p0, p1) {
        (true, true) if links[0].len() == links[1].len() => thomas_pair(links, [s0, s1]),
        _ => (p0 && thomas(links[0], s0), p1 && thomas(links[1], s1)),
    };
    if t0 {
        emit(links[0], s0, relax);
    }
    if t1 {
        emit(links[1], s1, relax);
    }
}

/// A link's previewed `b − a` from `at` (a particle's previewed position), taking its first
/// end's from `carry` where the link before it ended there, and leaving its second end's
/// there for the next.
#[inline(always)]
fn link_delta(l: &StripLink, carry: &mut Option<(u32, DVec3)>, at: impl Fn(u32) -> DVec3) -> DVec3 {
    let pa = match *carry {
        Some((i, p)) if i == l.a => p,
        _ => at(l.a),
    };
    let pb = at(l.b);
    *carry = Some((l.b, pb));
    pb - pa
}

/// Previewed (position pass) or relative-velocity (velocity pass) errors of a chain into
/// `sc`: unit directions, right-hand sides and off-diagonals of its tridiagonal system.
/// Returns whether any of its constraints is beyond the tolerance (if none, `sc` holds
/// only partial data and the chain needs no solve). Clears `sc.out`.
fn prepare(
    links: &[StripLink],
    v: &[DVec3],
    target: Target<'_>,
    h: f64,
    sc: &mut ChainScratch,
) -> bool {
    sc.out.clear();
    sc.dirs.clear();
    sc.rhs.clear();
    match target {
        Target::Position { drift } => {
            // The previewed position of a link's end, carried from one link to the next
            // where they share it (a chain's links run end to end): the same sums as each
            // link's own, bit for bit, half the loads.
            let at = |i: u32| drift[i as usize] + v[i as usize] * h;
            // Most chains of a sweep near convergence are within the tolerance: tested
            // first with no stores, and only a chain that needs a solve builds its system.
            let mut carry = None;
            let mut violated = false;
            for l in links {
                let d = link_delta(l, &mut carry, at);
                let moving = l.ka + l.kb > 0.0;
                if moving && l.band.exceeded(d.length_squared()).is_some() {
                    violated = true;
                    break;
                }
            }
            if !violated {
                return false;
            }
            let mut worst: f64 = 0.0;
            let mut carry = None;
            for l in links {
                let d = link_delta(l, &mut carry, at);
                let len = d.length_squared().sqrt();
                worst = worst.max((len - l.band.rest).abs() / l.band.rest);
                sc.dirs.push(if !kernels::is_degenerate(len, l.band.rest) {
                    d * (1.0 / len)
                } else {
                    DVec3::ZERO
                });
                sc.rhs.push(-(len - l.band.rest) / h);
            }
            sc.worst = worst;
        }
        Target::Velocity => {
            let rel = |l: &StripLink| (v[l.b as usize] - v[l.a as usize]).dot(l.n);
            // As for positions: tested first, built only for a chain that needs a solve.
            let violated = links.iter().any(|l| {
                let tol_v = kernels::velocity_tolerance(l.band.tol, l.band.rest, h);
                l.ka + l.kb > 0.0 && rel(l).abs() > tol_v
            });
            if !violated {
                return false;
            }
            for l in links {
                sc.dirs.push(l.n);
                sc.rhs.push(-rel(l));
            }
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
    true
}

/// The recurrences' state after one row of the Thomas forward sweep.
#[derive(Clone, Copy, Default)]
struct ThomasCarry {
    c: f64,
    x: f64,
    lower: f64,
}

/// One row of the Thomas forward sweep (A is SPD, so no pivoting is needed); `None` if the
/// pivot vanishes. The previous row's values come in `carry` (registers), not from the
/// buffers just written: both recurrences are serial, and a store-to-load round trip would
/// sit on the critical path of every row.
#[inline(always)]
fn thomas_row(
    links: &[StripLink],
    sc: &mut ChainScratch,
    i: usize,
    carry: &mut ThomasCarry,
) -> Option<()> {
    let l = &links[i];
    let w = l.ka + l.kb;
    let (diag, rhs) = if w > 0.0 { (w, sc.rhs[i]) } else { (1.0, 0.0) };
    let denom = diag - carry.lower * carry.c;
    if denom.abs() < 1e-300 {
        return None;
    }
    let inv = 1.0 / denom;
    let upper = if i + 1 < links.len() { sc.off[i] } else { 0.0 };
    carry.c = upper * inv;
    carry.x = (rhs - carry.lower * carry.x) * inv;
    sc.c_prime[i] = carry.c;
    sc.rhs[i] = carry.x;
    carry.lower = upper;
    Some(())
}

/// Back substitution of the Thomas algorithm from the last row's value.
#[inline(always)]
fn thomas_back(sc: &mut ChainScratch, last: f64) {
    let mut next = last;
    for (x, c) in sc.rhs.iter_mut().zip(&sc.c_prime).rev().skip(1) {
        next = *x - c * next;
        *x = next;
    }
}

/// Solve the prepared tridiagonal system in place (the impulses overwrite `sc.rhs`);
/// `false` if it is singular.
fn thomas(links: &[StripLink], sc: &mut ChainScratch) -> bool {
    sc.c_prime.clear();
    sc.c_prime.resize(links.len(), 0.0);
    let mut carry = ThomasCarry::default();
    for i in 0..links.len() {
        if thomas_row(links, sc, i, &mut carry).is_none() {
            return false;
        }
    }
    thomas_back(sc, carry.x);
    solved(sc)
}

/// Whether a chain's impulses are finite. A pivot that passes the test of [`thomas_row`]
/// can still be tiny against the rest of its row — a chain pulled straight between a pin
/// and the heavy hand is singular up to the hand's 10⁻⁴-fold inverse mass — and its
/// impulses overflow; applied, they would make even a pinned end's velocity 0·∞ = NaN.
/// Such a chain is left alone this sweep, as a singular one is.
fn solved(sc: &ChainScratch) -> bool {
    sc.rhs.iter().all(|x| x.is_finite())
}

/// [`thomas`] on two prepared chains of equal length, row by row side by side.
fn thomas_pair(links: [&[StripLink]; 2], sc: [&mut ChainScratch; 2]) -> (bool, bool) {
    let [s0, s1] = sc;
    let m = links[0].len();
    s0.c_prime.clear();
    s0.c_prime.resize(m, 0.0);
    s1.c_prime.clear();
    s1.c_prime.resize(m, 0.0);
    let (mut c0, mut c1) = (ThomasCarry::default(), ThomasCarry::default());
    let (mut ok0, mut ok1) = (true, true);
    for i in 0..m {
        ok0 = ok0 && thomas_row(links[0], s0, i, &mut c0).is_some();
        ok1 = ok1 && thomas_row(links[1], s1, i, &mut c1).is_some();
    }
    if ok0 {
        thomas_back(s0, c0.x);
    }
    if ok1 {
        thomas_back(s1, c1.x);
    }
    (ok0 && solved(s0), ok1 && solved(s1))
}

/// The velocity changes ω M⁻¹ Jᵀ λ of a solved chain into `sc.out` (ω = `relax`, 1 but
/// where the sweeps over-relax, [`RELAX`]).
fn emit(links: &[StripLink], sc: &mut ChainScratch, relax: f64) {
    for (l, (d, x)) in links.iter().zip(sc.dirs.iter().zip(&sc.rhs)) {
        let imp = *d * (*x * relax);
        sc.out.push((l.a, -imp * l.ka));
        sc.out.push((l.b, imp * l.kb));
    }
}

/// Record a chain's impulses ([`Cloth::impulses`]) from the velocity changes [`emit`]
/// made of them: two per link, (a, −k_a·J) then (b, k_b·J). Nothing for a chain left
/// unsolved (no changes) or when impulses are not kept.
fn record(log: &mut Option<Vec<f64>>, links: &[StripLink], out: &[(u32, DVec3)], x: &[DVec3]) {
    if log.is_none() || out.len() != 2 * links.len() {
        return;
    }
    for (l, d) in links.iter().zip(out.chunks_exact(2)) {
        let (xa, xb) = (x[l.a as usize], x[l.b as usize]);
        log.record_change(l.e as usize, (d[0].1, d[1].1), (l.ka, l.kb), xa, xb);
    }
}

/// Families with fewer constraints than this are solved on the calling thread; larger
/// ones in two halves, one a thread (`HalfFamily`). Chains of one family share no
/// particle, so both paths give identical results.
///
/// Why 4 096 (a grid of 65×65 and more). A family's half takes tens of microseconds at
/// 30×30 to 50×50 once each chain tests its strains before it builds its system, about
/// what the join's wake-up of the pool's other thread costs on this 2-core VM: with 512,
/// the 50×50 frames beside self-contact were slower on two threads than on one (0.74–0.83×
/// under the bench's drags). `bench app --grids 50 --steps 120 --only "strips 1e-4"`, two
/// threads, 512 against one thread's sweeps, A B B A, ms a frame: hanging 85.1, 74.5 →
/// 76.6, 73.6; pile 107.3, 113.0 → 102.3, 108.7; drape 138.4, 129.4 → 126.7, 123.6; at
/// 30×30 the same within the noise. At 100×100 (9 900 links a family, no self-collision,
/// a drag, `run --steps 40`) the halves still pay: 826, 914 against 951, 1 066 ms a step
/// (docs/results.md, "The strips' halves only where they pay").
pub const PAR_MIN_FAMILY: usize = 4_096;

/// Chains of a family solved together — the whole family, or one half of it on its own
/// thread ([`PAR_MIN_FAMILY`]): their changes one after the other in `out`, and where each
/// chain's end.
#[derive(Debug, Default)]
struct HalfFamily {
    scratch: [ChainScratch; 2],
    /// The largest strain of the chains the last solve changed (position pass).
    worst: f64,
    out: Vec<(u32, DVec3)>,
    ends: Vec<usize>,
}

impl HalfFamily {
    /// Solve the chains `spans` of `links` against `v`, two at a time as the serial path.
    fn solve(
        &mut self,
        spans: &[std::ops::Range<usize>],
        links: &[StripLink],
        v: &[DVec3],
        target: Target<'_>,
        h: f64,
        relax: f64,
    ) {
        self.out.clear();
        self.ends.clear();
        self.worst = 0.0;
        for pair in spans.chunks(2) {
            if let [r0, r1] = pair {
                let pair_links = [&links[r0.clone()], &links[r1.clone()]];
                solve_chain_pair(pair_links, v, target, h, &mut self.scratch, relax);
            } else {
                let sc = &mut self.scratch[0];
                solve_chain(&links[pair[0].clone()], v, target, h, sc, relax);
            }
            for sc in &self.scratch[..pair.len()] {
                if !sc.out.is_empty() {
                    self.worst = self.worst.max(sc.worst);
                }
                self.out.extend_from_slice(&sc.out);
                self.ends.push(self.out.len());
            }
        }
    }
}

/// The strips solver (002).
#[derive(Debug, Default)]
pub struct StripsSolver {
    chains: Vec<Vec<Chain>>,
    /// [`crate::sim::Topology::id`] the chains were built for (0: none yet).
    topology: u64,
    /// Every chain's links for the pass in progress, rows then columns, chain by chain.
    links: Vec<StripLink>,
    /// Each family's chains as ranges of `links`.
    spans: Vec<Vec<std::ops::Range<usize>>>,
    drift: Vec<DVec3>,
    /// A family's chains solved, in one half or, on two threads, two.
    halves: [HalfFamily; 2],
    /// The self-contact rows the position sweeps visit (`SelfRows::near`).
    active: Vec<u32>,
    /// Each particle's clearance from the ball and the ground for the pass in progress
    /// (`ContactSweep::clearances`).
    clear: Vec<f64>,
    /// Solve the velocity constraints with sweeps alone, never with the exact solve
    /// ([`VELOCITY_STALL`]): 002's velocity pass, kept to check that the two agree
    /// (tests/agreement.rs).
    pub sweeps_only_velocity: bool,
    /// The exact solve of a velocity pass whose sweeps stall (its own pattern and factor),
    /// and the step in which they last stalled.
    exact: Option<Box<super::sle::ExactVelocity>>,
    /// The step of this solver's last velocity pass: what it learnt of its sweeps holds
    /// only for the steps that follow it without a break (not after a solver switch).
    last_velocity: Option<StepMark>,
    /// Run the position pass with sweeps alone to the cap, never handing a stalled one to
    /// Newton ([`POSITION_STALL`]): 002's position pass, kept to compare the two
    /// (tests/agreement.rs).
    pub sweeps_only_position: bool,
    /// Newton's method, which finishes a position pass whose sweeps stall
    /// ([`POSITION_STALL`]).
    direct: Option<Box<super::newton::NewtonSolver>>,
    /// Run the position sweeps as 002 does, never over-relaxed ([`RELAX`]): kept to
    /// compare the two (tests/agreement.rs).
    pub unrelaxed: bool,
}

/// The over-relaxation factor ω of the position sweeps where they converge slowly: each
/// chain's exact solve is applied ω times (successive over-relaxation of the block
/// Gauss–Seidel the sweeps are). Where the hand pulls the cloth taut, or layers press on
/// the ball, the error left after a few sweeps is a smooth mode over the whole cloth that
/// each family's solve undoes only in part (the rows' and the columns' corrections nearly
/// cancel), and plain sweeps shrink it by a few per cent a sweep; over-relaxed, the app's
/// dragged scenes take about half the sweeps (30×30 under the bench's drag: the drape 497
/// → 255 a frame, the hanging cloth 253 → 134, the pile 360 → 170; docs/results.md,
/// "Over-relaxed strips sweeps"). Where the sweeps already converge fast — the paper's
/// scene, whose passes end in 3–25 sweeps — ω > 1 overshoots what plain sweeps would
/// have settled (their rate becomes ω − 1; over-relaxed from the first sweep, 23.6 → 31.9
/// sweeps a step at 50×50). So a pass over-relaxes only once its own sweeps show the slow
/// rate ([`SLOW_RATIO`], [`SLOW_SWEEPS`]) in the near-linear regime ([`RELAX_STRAIN`]);
/// the paper's scene runs 002's sweeps as before, to within a few tenths of a sweep. The
/// sweeps still stop only where every chain is within the tolerance, so the guarantee is
/// the same, and the impulses stay equal and opposite, so momentum is kept.
pub const RELAX: f64 = 1.6;

/// A position sweep is slow when the squared velocity changes it made are at least this
/// fraction of the sweep's before it (the error shrinks by less than √½ a sweep).
pub const SLOW_RATIO: f64 = 0.5;

/// Slow sweeps in a row after which a position pass over-relaxes ([`RELAX`]).
pub const SLOW_SWEEPS: u32 = 2;

/// A slow sweep counts only while every chain it solved is within this strain: the
/// linearised chain solves are then nearly exact, and over-relaxing them accelerates the
/// smooth error instead of overshooting a nonlinear one (the paper's scene at h = 1/30 s
/// bounces between 7 % and 87 % strain in its first sweeps).
pub const RELAX_STRAIN: f64 = 1e-2;

/// Position sweeps after which a pass that has not converged is finished by Newton's
/// method ([`super::newton::NewtonSolver`], its ball and ground rows in its system, the
/// self rows left out as the sweeps leave them after [`SELF_SWEEPS`]). Where the chains are
/// pulled taut between pins and the hand — the skirt's waist ring and its hem in the
/// hand, a pile yanked out of its heap — 002's linear rate crawls to the safety cap
/// (20 000 sweeps, seconds a step) and ends over the tolerance; a few Newton steps end it
/// within. A pass of the app's default regime rarely gets this far (one of 480 on the
/// 30×30 fold under the bench's drag), so what the sweeps converge on is 002's answer:
/// handed over after 200 or 500 sweeps instead, the 30×30 drape's p95 frame was a fifth
/// slower (docs/experiments.md, "A stalled strips position pass handed to Newton").
pub const POSITION_STALL: u32 = 2_000;

/// Velocity sweeps after which a pass that has not converged is solved exactly instead
/// (one SLE solve at the end-of-step directions, [`super::sle::SleSolver`], as Newton's
/// velocity pass does), and strips finish what round-off left. The velocity constraints
/// (004 eq. 3) are linear, so the exact solve meets them at once; where the cloth is held
/// taut between a pin and the hand the sweeps crawl instead — 100–780 a step in the frames
/// where the bench's drag grabs the default hanging cloth (docs/results.md, "The velocity
/// pass solved exactly where its sweeps stall"). A sweep costs about a fiftieth of the
/// factorisation at 30×30, so the sweeps go first: where they converge (the paper's scene,
/// a cloth at rest) nothing changes.
pub const VELOCITY_STALL: u32 = 32;

/// Steps for which a velocity pass goes straight to its exact solve after its sweeps
/// stalled: the scene that defeats them does so step after step (as for Newton's,
/// [`super::newton::VELOCITY_RETRY`]).
pub const VELOCITY_STALL_RETRY: u64 = 16;

/// Position sweeps of one pass that visit the self-contact rows; later sweeps solve the
/// chains (and the obstacles) alone. Measured on the flag at 50×50 pulled beyond reach: a
/// step whose rows and chains could not both be met ran 480 000 sweeps (the safety cap,
/// 71 s) and ended 52 % stretched; a pass that converges with its rows takes tens to a few
/// hundred.
pub const SELF_SWEEPS: u32 = 500;

/// Self-contact rows whose previewed gap exceeds the thickness by less than this fraction
/// of it are visited by every position sweep; the others only by the visit that confirms a
/// quiet sweep (`StripsSolver::sweeps`).
pub const ACTIVE_BAND: f64 = 0.0;

impl StripsSolver {
    fn ensure_chains(&mut self, cloth: &Cloth) {
        // The chains depend on the topology alone, not on which particles are static.
        if self.topology != cloth.topology.id() {
            self.chains = chains(cloth);
            self.spans = vec![Vec::new(); self.chains.len()];
            self.topology = cloth.topology.id();
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
                self.links
                    .extend(chain.edges.iter().enumerate().map(|(k, &e)| {
                        let [a, b] = t.edges[e as usize];
                        let (a, b) = if chain.flip.get(k) == Some(&true) {
                            (b, a)
                        } else {
                            (a, b)
                        };
                        let rest = t.rest[e as usize];
                        let n = if velocity {
                            let d = p.x[b as usize] - p.x[a as usize];
                            let len = d.length();
                            if !kernels::is_degenerate(len, rest) {
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
                            e,
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
        self.run_sweeps(ctx, velocity, false, true, false)
    }

    /// Position sweeps that stop as soon as one visits no contact short of its slop (the
    /// chains may still be over the tolerance); returns (sweeps, contacts quiet). What
    /// Newton alternates with its own pass where a self-contact is short.
    pub(crate) fn contact_sweeps(&mut self, ctx: &mut StepCtx<'_>) -> (u32, bool) {
        self.run_sweeps(ctx, false, true, true, false)
    }

    fn run_sweeps(
        &mut self,
        ctx: &mut StepCtx<'_>,
        velocity: bool,
        until_contacts_quiet: bool,
        self_friction: bool,
        relaxed: bool,
    ) -> (u32, bool) {
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
        // Position sweeps visit the contact set after each family (Bender & Schmitt 2006):
        // contact is solved in the same Gauss–Seidel loop as the chains.
        let contacts = ctx.contacts();
        let mut contacts = (!velocity && !contacts.is_empty()).then_some(contacts);
        // How far each preview may move before the ball or the ground can hold it: the
        // particles whose velocities stay short of it are skipped by every visit of the
        // pass (the drift is fixed while it runs), the same visits bit for bit.
        let clear = contacts.map(|c| {
            let drift = &self.drift;
            c.clearances(|i| drift[i], drift.len(), &mut self.clear);
            self.clear.as_slice()
        });
        let cloth = &mut *ctx.cloth;
        let log = &mut cloth.impulses;
        let p = &mut cloth.particles;
        let (v, inv_mass, x) = (&mut p.v, &p.inv_mass, &p.x);
        // Self-contact rows come by the thousand where the cloth lies in layers, and few
        // of them are ever short (measured on the 30×30 drape pulled off the ball: 2 957
        // of 40 151 rows corrected in a step): the sweeps visit those whose previewed gap
        // is less than the thickness plus ACTIVE_BAND of it, and a sweep that corrects
        // nothing is confirmed by a visit of every row before the pass ends — so it ends
        // exactly where visiting every row each sweep would.
        let mut selfs = contacts.and_then(|c| c.selfs).filter(|s| !s.is_empty());
        let mut active_stale = true;
        let mut sweeps = 0;
        // Over-relaxation (this solver's own position passes only, [`RELAX`]): ω, and what
        // decides it — the last sweep's squared changes and the slow sweeps in a row.
        let mut omega = 1.0;
        let watch = relaxed && !velocity;
        let (mut last_change, mut slow) = (0.0, 0);
        while sweeps < cap {
            sweeps += 1;
            if sweeps > SELF_SWEEPS && selfs.is_some() {
                // Rows that the chains keep undoing ask for something the distance
                // constraints do not allow (layers pressed between a pin and the hand):
                // the chains finish alone, inextensible, and the fail-safe keeps the layers
                // apart where the rows are left short.
                selfs = None;
                contacts = contacts.map(|c| ContactSweep { selfs: None, ..c });
            }
            if let Some(s) = &selfs
                && active_stale
            {
                let drift = &self.drift;
                let band = ACTIVE_BAND * s.thickness;
                s.near(&|i| drift[i], v, inv_mass, h, band, &mut self.active);
                active_stale = false;
            }
            let active = selfs.is_some().then_some(self.active.as_slice());
            let mut any = false;
            let mut contact_any = false;
            // What decides ω is measured only until it is decided.
            let measure = watch && omega == 1.0;
            let (mut change, mut worst) = (0.0, 0.0_f64);
            for spans in &self.spans {
                let size: usize = spans.iter().map(|r| r.len()).sum();
                // Chains of a family share no particle, so each reads the velocities it
                // would have read had the chains before it been applied first: solved two
                // at a time, and from [`PAR_MIN_FAMILY`] links in two halves on two
                // threads, their changes applied afterwards in chain order give the
                // one-by-one result, bit for bit.
                let (first, second) = if size >= PAR_MIN_FAMILY && rayon::current_num_threads() > 1
                {
                    let mut acc = 0;
                    let cut = spans
                        .iter()
                        .position(|r| {
                            acc += r.len();
                            2 * acc >= size
                        })
                        .map_or(spans.len(), |k| k + 1);
                    spans.split_at(cut)
                } else {
                    (&spans[..], &[][..])
                };
                let vr: &[DVec3] = v;
                let [h0, h1] = &mut self.halves;
                if second.is_empty() {
                    h0.solve(first, links, vr, target, h, omega);
                } else {
                    rayon::join(
                        || h0.solve(first, links, vr, target, h, omega),
                        || h1.solve(second, links, vr, target, h, omega),
                    );
                    worst = worst.max(h1.worst);
                }
                worst = worst.max(h0.worst);
                for (half, part) in [(&self.halves[0], first), (&self.halves[1], second)] {
                    let mut start = 0;
                    for (&end, r) in half.ends.iter().zip(part) {
                        let delta = &half.out[start..end];
                        any |= !delta.is_empty();
                        for &(i, dv) in delta {
                            v[i as usize] += dv;
                            if measure {
                                change += dv.length_squared();
                            }
                        }
                        record(log, &links[r.clone()], delta, x);
                        start = end;
                    }
                }
                if let Some(c) = &contacts {
                    let drift = &self.drift;
                    contact_any |=
                        c.visit_with(|i| drift[i], v, inv_mass, active, self_friction, clear) > 0;
                }
            }
            if measure {
                let slow_sweep = last_change > 0.0
                    && change >= SLOW_RATIO * last_change
                    && worst <= RELAX_STRAIN;
                slow = if slow_sweep { slow + 1 } else { 0 };
                if slow >= SLOW_SWEEPS {
                    omega = RELAX;
                }
                last_change = change;
            }
            let quiet = !contact_any && (until_contacts_quiet || !any);
            if quiet && let (Some(c), Some(_)) = (&contacts, &selfs) {
                // Confirm with every row; one corrected makes a new active set.
                let drift = &self.drift;
                if c.visit_with(|i| drift[i], v, inv_mass, None, self_friction, clear) > 0 {
                    active_stale = true;
                    continue;
                }
            }
            if quiet {
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
    ///
    /// Without `self_friction` the sweeps give self-contact rows their normal impulse only
    /// (Newton's finish to the tolerance). The rows' friction then comes from the visits of
    /// the contact set before and between the passes (the collision phase and the contact
    /// rounds, [`crate::sim::World`]), which push a resting layer out by what gravity
    /// previewed into it — its weight over the step, the normal impulse static friction is
    /// bounded by — once a step. Visited with friction by every sweep instead, a row cut
    /// again, by μ times that sweep's push, the relative sliding the chains had just asked
    /// for, and the chains crawled back: on the fold lying on the ground (30×30, Newton, the
    /// app's defaults, 300 frames) 590 strips sweeps a step finished Newton's passes,
    /// against 69 this way and 24 with self-collision off (docs/experiments.md, "Self-contact
    /// friction in the polish sweeps").
    pub(crate) fn finish_position_pass(&mut self, ctx: &mut StepCtx<'_>, self_friction: bool) {
        let cap = ctx.params.effective_cap();
        let (sweeps, _) = self.run_sweeps(ctx, false, false, self_friction, false);
        let residual = iterative::preview_max_strain(ctx.cloth, ctx.accel, ctx.params.dt);
        ctx.stats.polish_sweeps += sweeps;
        ctx.stats.set_capped_position_outcome(
            residual,
            residual <= ctx.params.tolerance,
            cap,
            ctx.params.hard_cap,
        );
    }

    /// The velocity pass as strips sweeps alone (002): what the SLE's pass falls back on,
    /// and Newton's with `sweeps_only_velocity`.
    pub(crate) fn velocity_sweeps_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let (sweeps, converged) = self.sweeps(ctx, true);
        ctx.stats.set_velocity_outcome(sweeps, converged);
    }
}

impl Solver for StripsSolver {
    fn kind(&self) -> SolverKind {
        SolverKind::Strips
    }

    fn position_pass(&mut self, ctx: &mut StepCtx<'_>) {
        let cap = ctx.params.effective_cap();
        let stall = !self.sweeps_only_position && cap > POSITION_STALL;
        let relax = !self.unrelaxed;
        let (sweeps, converged) = if stall {
            let capped = ctx.params.with_cap(POSITION_STALL);
            self.run_sweeps(&mut ctx.reborrow(&capped, true), false, false, true, relax)
        } else {
            self.run_sweeps(ctx, false, false, true, relax)
        };
        if stall && !converged {
            // Newton finishes the pass from the velocities the sweeps left.
            let params = ctx.params;
            let direct = self.direct.get_or_insert_with(Default::default);
            direct.position_pass(&mut ctx.reborrow(params, false));
            ctx.stats.position_iterations += sweeps;
            return;
        }
        let residual = iterative::preview_max_strain(ctx.cloth, ctx.accel, ctx.params.dt);
        let converged = converged || residual <= ctx.params.tolerance;
        ctx.stats.position_iterations = sweeps;
        ctx.stats
            .set_capped_position_outcome(residual, converged, cap, ctx.params.hard_cap);
    }

    /// The velocity pass (eq. 3) as strips sweeps, solved exactly where they stall
    /// ([`VELOCITY_STALL`]).
    fn velocity_pass(&mut self, ctx: &mut StepCtx<'_>) {
        if self.sweeps_only_velocity || ctx.params.effective_cap() <= VELOCITY_STALL {
            self.velocity_sweeps_pass(ctx);
            return;
        }
        let now = StepMark::of(ctx);
        let mut exact = self.exact.take().unwrap_or_default();
        if !self
            .last_velocity
            .is_some_and(|m| m == now || m.precedes(now))
        {
            // What the sweeps did before a break in this solver's steps does not hold.
            exact.stalled = None;
        }
        self.last_velocity = Some(now);
        exact.pass(ctx, self, VELOCITY_STALL, VELOCITY_STALL_RETRY);
        self.exact = Some(exact);
    }
}
#[cfg(test)]
mod cover_tests {
    use super::*;

    /// The general cover of a grid's constraints is the grid's own strips: its rows, then
    /// its columns, in order and unflipped (so a grid read as a mesh solves the same
    /// chains).
    #[test]
    fn a_grids_cover_is_its_rows_and_columns() {
        let g = Cloth::grid(&crate::sim::GridSpec {
            width: 30,
            height: 30,
            ..Default::default()
        })
        .unwrap();
        let a = grid_chains(&g, 30, 30);
        let b: Vec<Vec<Chain>> =
            crate::sim::mesh::paths::strip_cover(&g.particles.x, &g.topology.edges)
                .into_iter()
                .map(|f| {
                    f.into_iter()
                        .map(|p| Chain {
                            edges: p.iter().map(|x| x.0).collect(),
                            flip: p.iter().map(|x| x.1).collect(),
                        })
                        .collect()
                })
                .collect();
        assert_eq!(a.len(), b.len());
        for (fa, fb) in a.iter().zip(&b) {
            assert_eq!(fa.len(), fb.len());
            for (ca, cb) in fa.iter().zip(fb) {
                assert_eq!(ca.edges, cb.edges);
                assert!(cb.flip.iter().all(|f| !f));
            }
        }
    }
}
