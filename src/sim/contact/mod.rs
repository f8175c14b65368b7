//! Self-contact: the cloth against itself, detected every step over the topology's
//! triangles and edges, solved inside every impulse solver's pass, and guaranteed by a
//! fail-safe.
//!
//! A step with self-collision on runs
//!
//! 1. **detection** ([`SelfContact::detect`]) when the collision phase begins and again in
//!    every contact round: the broad phase ([`patches`], a hierarchy of adjacent triangles
//!    built once per topology, refitted with swept boxes and swept normal cones from the
//!    step's start to a preview; a patch whose guard keeps its own features apart skips
//!    them whole) gives candidate vertex–triangle and edge–edge pairs that share no
//!    particle; the narrow
//!    phase ([`narrow`]) keeps a pair that is within 1.5 × the thickness at the start, at
//!    the preview, or at a moment in between where its four points are coplanar
//!    (continuous detection: Provot 1997, Bridson et al. 2002), and writes it as a row
//!    over four particles ([`set`]) with the geometry of that moment;
//! 2. **response inside the solve**: the rows are part of the contact set every impulse
//!    solver visits ([`crate::sim::collision::ContactSweep`]) — strips and the iterative
//!    method in every Gauss–Seidel sweep, the SLE in the strips sweeps that finish its pass
//!    when there is contact, Newton in strips sweeps that finish its pass when a row is
//!    short (its pattern and symbolic analysis stay those of the cloth alone) — with
//!    Coulomb friction;
//! 3. **the fail-safe** ([`SelfContact::fail_safe`], [`zones`]) after integration: any
//!    pair that still touches on the straight path from the step's start to its end is
//!    merged into a rigid impact zone, which keeps its edge lengths; a zone grows only by
//!    contacts: the rest of the cloth is projected back within its limits around the
//!    zones, each a rigid body of the projection ([`project`],
//!    [`SelfContact::project_around_zones`]), and only where that does not converge does
//!    a zone grow, by a bounded number of rings over the edges its rigid motion stretched
//!    ([`SelfContact::grow_over_stretched`]), with the rest of the cloth solved again
//!    around it where that does not do (`World`'s re-solve), so the cloth outside the
//!    contacts moves on;
//! 4. **the crossing count** ([`SelfContact::count_crossings`]) of the end state: (edge,
//!    triangle) pairs that pass through each other. A state that starts tangled (self
//!    collision turned on mid-fold) is untangled ([`SelfContact::untangle`]): the crossing
//!    pairs pushed apart within the tolerance, layers that lie on each other ordered, and
//!    pairs pressed flat left to the rows; where the fail-safe still needs zones, the
//!    tangled particles are left out of the rows and the fail-safe until the cloth is
//!    clean, so it neither blows up nor freezes.
//!
//! The thickness is the gap a row keeps ([`crate::sim::params::THICKNESS`]); it is capped at
//! half the shortest rest length, below the closest pair of features a grid has at rest
//! that shares no particle (√½ of the spacing), so a cloth at rest touches nothing.

pub mod bound;
pub mod broad;
pub mod forecast;
pub mod narrow;
pub mod patches;
pub mod project;
pub mod set;
pub mod surface;
mod untangle;
pub mod zones;

use std::collections::HashSet;

use glam::DVec3;
use rayon::prelude::*;

use super::cloth::Cloth;
use super::kernels;
use broad::{Aabb, HashGrid};
use narrow::{PairKind, Swept};
use patches::Patches;
pub use set::{SelfRow, SelfRows};
pub use surface::{Shared, Surface};
use zones::Zones;

/// How close (as a multiple of the thickness) a pair must come in a step to get a row.
pub const DETECT_REACH: f64 = 1.5;

/// How far apart (as a fraction of the gap) the two copies of a particle split by a cut
/// must be before the pairs they join are tested as features apart ([`Shared::Copies`]).
///
/// The lips of a cut or a tear start on each other, so the pairs between them start
/// touching: tested as any pair, each would be a contact of unknown normal and an impact
/// zone at once (that froze a whole cut sheet); never tested, a lip slid over the other
/// and through it in the step after a tear (up to 39 crossing pairs in the 30×30 tear
/// scene). So, between copies `a` and `b` closer than this at the step's start, every
/// edge at `a` and triangle at `b` ([`Surface::lips`]) gets a row over the two copies
/// alone (`n · (a − b) ≥` twice this), along the direction that keeps the edge out of the
/// triangle to first order ([`lip_normal`]), and the pairs they join get neither rows nor
/// the fail-safe; beyond it, a pair gets the rows and the fail-safe of any pair, with a
/// gap of half the copies' distance at the step's start (at most the thickness), so lips
/// that lie close are not pushed a thickness apart. An (edge, triangle)
/// pair of the lips that crosses anyway is found at the step's end
/// ([`SelfContact::check_lips`]) and left out of the rows and the fail-safe until it no
/// longer crosses, as a tangled particle is, but alone: the pairs around it that share
/// no copy stay guarded, so the crossing cannot spread beyond the lips.
pub const LIP_OPEN: f64 = 0.1;

/// Below this fraction of the gap at a step's start, a pair lies pressed on its other
/// feature: while untangling, ordered by layer and left to the rows.
pub const PRESSED: f64 = 0.1;

/// How far inside (barycentric, and along the edge) an edge of one lip must pass through a
/// triangle of the other for the fail-safe to take the pair into a zone
/// ([`SelfContact::fail_safe`]): a billionth, below which an edge through a triangle's
/// corner is decided by round-off. At a millionth, an edge of a fresh cut's lip ended
/// through the other lip beyond any doubt (a billionth of the scale, counted from
/// positions) in a hostile mesh session, and no zone took it.
pub const LIP_CROSSED: f64 = 1e-9;

/// Steps after a step whose fail-safe made zones in which the crossings are counted
/// ([`SelfContact::check_crossings`]): a zone leaves features at no distance, and a step
/// from there without a zone crossed 6 pairs in a hostile mesh session.
pub const COUNT_AFTER_ZONES: u32 = 3;

/// Distance at which the fail-safe counts two features as touching (m).
pub const TOUCH: f64 = 1e-7;

/// Steps between two crossing counts of a state known intersection-free (see
/// [`SelfContact::fail_safe`]).
pub const CHECK_EVERY: u32 = 30;

/// Times a step's fail-safe moves its zones out of the colliders, and grows them over the
/// edges they stretch, before it settles for what it has ([`crate::sim::World`]).
pub const MAX_REPAIRS: u32 = 2;

/// Rings a zone grows by over the edges its rigid motion stretched, per growth
/// ([`SelfContact::grow_over_stretched`]) before the re-solve around the zones. Bounded,
/// so that a zone does not spread over a cloth the re-solve can bring along; where that
/// cannot, one last growth has no bound ([`crate::sim::World`]), and what a zone held by a
/// static particle leaves stretched the next step's solve takes back.
pub const MAX_RINGS: u32 = 32;

/// Times a step's fail-safe projects the cloth around its zones, each a rigid body
/// ([`SelfContact::project_around_zones`]), before it grows them: each projection may
/// bring the cloth into new contacts, which merge zones, which the next projects again.
pub const MAX_PROJECTIONS: u32 = 8;

/// Times a step solves the cloth again around the zones where growing them would not do
/// ([`crate::sim::World`]).
pub const MAX_RESOLVES: u32 = 1;

/// Sweeps (of the iterative and strips solvers, and of the strips that finish Newton's
/// and the SLE's passes) a re-solve around the zones may take per pass.
pub const RESOLVE_SWEEPS: u32 = 1000;

/// Newton steps or SLE solves a re-solve around the zones may take per pass.
pub const RESOLVE_SOLVES: u32 = 10;

/// Pairs of leaves a thread of the gather tests at a time.
const GATHER_CHUNK: usize = 64;

/// A patch skips its own pairs in a gather only where it keeps them apart by this multiple
/// of the detection's reach over the step ([`patches`]): the candidates then still cover
/// the motion where the cloth strays from the gather's sweep by an eighth of the reach.
/// A grid's nearest features that share no particle are 0.7 of a spacing apart at rest,
/// about twice the reach at 50×50 and 3.5 times at 30×30.
pub const CULL_LEAST: f64 = 1.25;

/// The margin a whole gather takes, as a multiple of the detection's reach: its candidates
/// cover a motion that strays from the gather's sweep by (margin − 1)/2 of the reach. A
/// wider margin keeps the list through more of a step's rounds, but every round tests the
/// pairs it adds, and at the app's steps a frame the list rarely outlives its step. Under
/// `bench app`'s drag, 1.6 against 2 took 6–21 % of self-contact off the 50×50 scenes and
/// 10–15 % off the 30×30 drape and pile; 1.45 against 1.6 a few % more (results.md, "A
/// narrower gather margin").
pub const GATHER_MARGIN: f64 = 1.45;

/// Candidate pairs a thread tests at a time (the rows' and the fail-safe's continuous
/// tests).
const TEST_CHUNK: usize = 512;

/// What the fail-safe and its repairs read of the cloth and the step: the edges, their
/// rest lengths, the inverse masses, the step's length and the tolerance. The positions
/// and velocities they move are passed beside it.
#[derive(Debug, Clone, Copy)]
pub struct StepCloth<'a> {
    /// The distance constraints, by particle.
    pub edges: &'a [[u32; 2]],
    /// Their rest lengths.
    pub rest: &'a [f64],
    /// Each particle's inverse mass (0: static).
    pub inv_mass: &'a [f64],
    /// The step's length (s).
    pub h: f64,
    /// The strain tolerance.
    pub tolerance: f64,
}

/// What the fail-safe did in a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailSafe {
    /// Rigid impact zones (of more than one particle) at the end.
    pub zones: u32,
    /// Particles in them.
    pub particles: u32,
    /// Rounds of merges.
    pub rounds: u32,
}

/// The fail-safe's zones of a step and the state they were placed from, kept to go back
/// to ([`SelfContact::zone_state`]); the solve's end state the borders are held to is the
/// step's own and does not change within it.
#[derive(Debug, Clone, Default)]
pub struct ZoneState {
    zones: Zones,
    zoned: Vec<bool>,
    x_solver: Vec<DVec3>,
    v_solver: Vec<DVec3>,
}

/// A candidate pair: its kind, particles, key and distance at the step's start, and
/// whether it has a row this step.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    kind: PairKind,
    p: [u32; 4],
    key: u64,
    d0: f64,
    rowed: bool,
    /// Its features are joined by copies of one particle ([`Shared::Copies`]).
    lip: bool,
    /// It holds a particle of a crossing at the last count, or started the step pressed
    /// on its other feature ([`PRESSED`]) while the cloth is untangling
    /// ([`SelfContact::untangling`]): no fail-safe for it.
    tangled: bool,
}

impl Candidate {
    /// Where the candidate comes in the gather's list: vertex–triangle pairs (key
    /// `vertex << 32 | triangle`) by triangle, then vertex; then edge–edge pairs (key with
    /// the top bit set) by their edges.
    fn order(&self) -> u64 {
        if self.key >> 63 == 0 {
            self.key.rotate_right(32)
        } else {
            self.key
        }
    }
}

/// A candidate found within reach at a detection: when on its sweep, the gap its row
/// keeps, and whether it was the forecast's sweep ([`forecast`]) that brought it there.
#[derive(Debug, Clone, Copy)]
struct Hit {
    t: f64,
    gap: f64,
    forecast: bool,
}

/// Self-contact state of a world: the surface, the step's rows, and scratch.
#[derive(Debug, Clone, Default)]
pub struct SelfContact {
    surface: Surface,
    shortest_rest: f64,
    tri_grid: HashGrid,
    /// The surface's patches: the gather's hierarchy ([`patches`]).
    patches: Patches,
    /// The gather's pairs of leaves (scratch).
    leaf_pairs: Vec<[u32; 2]>,
    /// The step's rows.
    pub rows: Vec<SelfRow>,
    keys: HashSet<u64>,
    candidates: Vec<Candidate>,
    /// Particles in a crossing at the end of the last step.
    tangled: Vec<bool>,
    crossings: usize,
    zones: Zones,
    /// Positions at the start of the step's position pass.
    x0: Vec<DVec3>,
    x_solver: Vec<DVec3>,
    v_solver: Vec<DVec3>,
    /// The solve's end state at the step's first fail-safe: the strains it left are
    /// what the zones' borders are held to.
    x_reference: Vec<DVec3>,
    /// The velocities of that state ([`SelfContact::solve_end`]).
    v_reference: Vec<DVec3>,
    /// The start and end positions the candidates were gathered for.
    reference0: Vec<DVec3>,
    reference: Vec<DVec3>,
    /// Each particle's margin: the gather's, or less where a culled patch holds the
    /// particle and keeps its pairs only that far apart ([`patches`]).
    margins: Vec<f64>,
    /// The culled patches of the last gather and the distance each keeps.
    culled: Vec<([u32; 2], f64)>,
    /// The margin of the last gather, before the culled patches' margins.
    margin: f64,
    /// The candidates' start distances are those of an earlier step.
    stale: bool,
    /// The reach of the step's detection: the least margin a gather takes.
    thickness_hint: f64,
    /// Steps since the crossings were last counted.
    since_count: u32,
    /// Steps left in which the crossings are counted after a step with zones
    /// ([`COUNT_AFTER_ZONES`]).
    after_zones: u32,
    /// Mean length of the surface's edges at the last gather (m).
    mean_edge: f64,
    /// Whether `candidates` (and the triangle grid) belong to this step.
    gathered: bool,
    /// Particles in a zone of the last fail-safe.
    zoned: Vec<bool>,
    /// Gathers since the step began.
    gathers: u32,
    /// Gathers of the pairs around the particles that strayed since the step began
    /// ([`SelfContact::gather_strayed`]).
    regathers: u32,
    /// The gap of the last detection (m): the capped thickness.
    gap: f64,
    /// The particles of each (edge, triangle) pair of the lips that crossed at the end of
    /// the last step ([`SelfContact::check_lips`]).
    lips_crossed: Vec<[u32; 5]>,
    /// Whether this step's rows between copies still together are made.
    lip_rows: bool,
    /// The crossing (edge, triangle) pairs of the last count.
    crossing_pairs: Vec<([u32; 2], [u32; 3])>,
    /// How the tangle is being parted ([`SelfContact::untangle`]).
    parting: untangle::Untangled,
    /// Tangled, or pressed flat since: layers ordered, crossings counted every step.
    untangling: bool,
    /// This step orders the layers ([`SelfContact::untangle`]).
    ordering: bool,
    /// The tangle was found at this step's start: it orders the layers but pushes
    /// nothing ([`SelfContact::untangle`]).
    ordering_only: bool,
    /// The untangling of this tangle needed the fail-safe's zones: given up until the
    /// cloth is clean again.
    untangle_failed: bool,
    /// Layers pressed on each other in a tangled state, as components of particles.
    layers: Zones,
    /// Per component root: which side of a triangle's winding the other layer lies on
    /// (+1, −1, or 0 where unknown).
    side: Vec<f64>,
    /// Where the solve took the last step's previews ([`forecast`]).
    forecast: forecast::Forecast,
    /// The next detection is the step's first, and gathers for the forecast first.
    forecast_first: bool,
}

impl SelfContact {
    /// The gap rows keep: `thickness` capped at half the shortest rest length.
    pub fn thickness(&self, thickness: f64) -> f64 {
        thickness.min(0.5 * self.shortest_rest)
    }

    /// The surface in use.
    pub fn surface(&self) -> &Surface {
        &self.surface
    }

    /// Broad-phase gathers of candidates since the step began.
    pub fn gathers(&self) -> u32 {
        self.gathers
    }

    /// Gathers of the pairs around a few strayed particles since the step began: each
    /// visits only the patches that hold one.
    pub fn regathers(&self) -> u32 {
        self.regathers
    }

    /// Crossing (edge, triangle) pairs at the end of the last step that counted them.
    pub fn crossings(&self) -> usize {
        self.crossings
    }

    /// Start a step: the surface of `cloth` (derived again if its topology changed), the
    /// start positions, no rows.
    pub fn begin(&mut self, cloth: &Cloth) {
        let n = cloth.len();
        if !self.surface.is_of(&cloth.topology, n) {
            self.surface = Surface::new(&cloth.topology, n);
            self.shortest_rest = cloth.topology.shortest_rest();
            self.tangled.clear();
            self.crossings = 0;
            self.since_count = CHECK_EVERY;
            self.gathered = false;
        }
        self.tangled.resize(n, false);
        self.x0.clone_from(&cloth.particles.x);
        if self.since_count >= CHECK_EVERY {
            // Not known clean (just turned on, a new surface): count at the start, so the
            // first step already knows its tangle.
            let x0 = std::mem::take(&mut self.x0);
            self.untangling = self.count_crossings(&x0) > 0 && !self.untangle_failed;
            self.x0 = x0;
            self.ordering_only = self.untangling;
            self.since_count = CHECK_EVERY;
        }
        self.ordering = false;
        self.gathers = 0;
        self.regathers = 0;
        self.rows.clear();
        self.keys.clear();
        self.stale = true;
        self.lip_rows = false;
    }

    /// The step's free-flight previews `free` of a step of `h` s, before its first
    /// detection: its first gather is made for them moved by what the last step's solve
    /// moved them ([`forecast`]).
    pub fn forecast(&mut self, free: &[DVec3], h: f64) {
        let most = forecast::FORECAST_MOST * DETECT_REACH * self.gap;
        self.forecast_first = self.forecast.plan(free, h, most);
    }

    /// The step's solved previews, for the next step's forecast ([`forecast`]).
    pub fn solved(&mut self, previews: &[DVec3], h: f64) {
        self.forecast.record(previews, h);
    }

    /// Forget the rows (self-collision off).
    pub fn clear(&mut self) {
        self.forecast.clear();
        self.forecast_first = false;
        self.lips_crossed.clear();
        self.rows.clear();
        self.zoned.clear();
        self.keys.clear();
        self.crossings = 0;
        // Off, the cloth may tangle: the first step with it on again counts.
        self.since_count = CHECK_EVERY;
        self.untangling = false;
        self.untangle_failed = false;
        self.parting = untangle::Untangled::Not;
        self.tangled.iter_mut().for_each(|t| *t = false);
    }

    /// The rows with the gap they keep.
    pub fn rows(&self, thickness: f64) -> SelfRows<'_> {
        let thickness = self.thickness(thickness);
        SelfRows {
            rows: &self.rows,
            thickness,
        }
    }

    /// Whether the candidates gathered this step hold every pair that comes within
    /// `reach` on the way from the start to `x`: each particle strays from the positions
    /// they were gathered for by δ, and reach + 2δ fits in its margin.
    fn covers(&self, x: &[DVec3], reach: f64) -> bool {
        self.covers_by(x, reach, |i| self.margins[i])
    }

    /// [`SelfContact::covers`] with each particle's margin `margin(i)`.
    fn covers_by(&self, x: &[DVec3], reach: f64, margin: impl Fn(usize) -> f64) -> bool {
        let n = x.len();
        if !self.gathered || n != self.reference.len() || self.margins.len() != n {
            return false;
        }
        let (shift0, shift1) = (
            mean_displacement(&self.x0, &self.reference0),
            mean_displacement(x, &self.reference),
        );
        (0..n).all(|i| {
            let d0 = (self.x0[i] - self.reference0[i] - shift0).length();
            let d1 = (x[i] - self.reference[i] - shift1).length();
            reach + 2.0 * d0.max(d1) <= margin(i)
        })
    }

    /// Whether the candidates still hold every pair that comes within `reach` on the way
    /// from the start to `x` where they no longer cover it with the culled patches'
    /// margins ([`SelfContact::covers`]): every particle within what the gather's whole
    /// margin covers, and every culled patch still keeping its own pairs `reach` apart on
    /// this sweep (refitted to it). A cloth at rest in a pile drifts past the culled
    /// patches' small margins step by step; checked again, they hold, and the list is kept
    /// (a gather every two steps instead of one in twenty-five, measured).
    fn culled_still_apart(&mut self, x: &[DVec3], reach: f64) -> bool {
        if self.culled.is_empty() || !self.covers_by(x, reach, |_| self.margin) {
            return false;
        }
        let x0 = &self.x0;
        self.patches.refit(&self.surface, x0, x, |_| Aabb::EMPTY);
        self.patches.still_apart(&self.culled, x0, x, reach)
    }

    /// How far each particle strays at `x` from the positions this step's candidates were
    /// gathered for, the mean motion taken out ([`SelfContact::covers`]); `None` where
    /// there are no such candidates (none gathered, stale, or gathered from another
    /// start).
    fn strays(&self, x: &[DVec3]) -> Option<Vec<f64>> {
        let n = x.len();
        if !self.gathered
            || self.stale
            || n != self.reference.len()
            || self.margins.len() != n
            || self.x0 != self.reference0
        {
            return None;
        }
        let shift = mean_displacement(x, &self.reference);
        Some(
            (0..n)
                .map(|i| (x[i] - self.reference[i] - shift).length())
                .collect(),
        )
    }

    /// The particles whose `strays` ([`SelfContact::strays`]) take them beyond what this
    /// step's candidates cover with `reach`, if they are few (a quarter of the particles at
    /// most): the candidates still hold every pair of the others.
    fn strayed_of(&self, strays: &[f64], reach: f64) -> Option<Vec<bool>> {
        let mask: Vec<bool> = strays
            .iter()
            .zip(&self.margins)
            .map(|(&e, &m)| 2.0 * e > m - reach)
            .collect();
        (mask.iter().filter(|&&m| m).count() <= strays.len() / 4).then_some(mask)
    }

    /// [`SelfContact::strayed_of`] at `x`.
    fn strayed(&self, x: &[DVec3], reach: f64) -> Option<Vec<bool>> {
        self.strayed_of(&self.strays(x)?, reach)
    }

    /// Make the candidates cover the motion from the step's start to `x1` with `reach`:
    /// those of an earlier step where they still do (their start distances refreshed),
    /// else those of this step with the pairs around the few particles that strayed
    /// gathered afresh ([`SelfContact::gather_strayed`]), else gathered anew with a margin
    /// of [`GATHER_MARGIN`] × `reach`. A spare margin for
    /// the steps that follow (a quarter of the mean edge, kept while Newton took one step
    /// a frame) gathers less often but tests more candidates every round, and at four
    /// steps a frame it costs more than it saves: results.md, "The gather without a spare
    /// margin".
    fn ensure_candidates(&mut self, x1: &[DVec3], inv_mass: &[f64], reach: f64) {
        let margin = GATHER_MARGIN * reach.max(self.thickness_hint);
        if self.covers(x1, reach) || self.culled_still_apart(x1, reach) {
            if self.stale {
                let x0 = &self.x0;
                let pressed = self.pressed();
                let tangled = &self.tangled;
                for c in &mut self.candidates {
                    let x: [DVec3; 4] = c.p.map(|i| x0[i as usize]);
                    c.d0 = narrow::pair_distance(c.kind, &x);
                    c.rowed = false;
                    c.tangled = out_of_fail_safe(tangled, &c.p, c.d0, pressed);
                }
                self.stale = false;
            }
            return;
        }
        if margin != self.margin || !self.gather_strayed(x1, inv_mass, reach) {
            self.gather(x1, inv_mass, margin);
        }
        self.stale = false;
        // Gathered again within a step: the pairs that have rows keep them, the others
        // are tested again (a pair of lips still on each other among them).
        let keys = &self.keys;
        for c in &mut self.candidates {
            c.rowed = keys.contains(&c.key);
        }
    }

    /// Candidate pairs whose swept bounds from the step's start to `x1` come within
    /// `margin` of each other and whose distance at the start, less their motion bound,
    /// is within it too, leaving out pairs that share a particle, that are all static, or
    /// that hold a tangled particle; with their distances at the start.
    fn gather(&mut self, x1: &[DVec3], inv_mass: &[f64], margin: f64) {
        self.gathered = true;
        self.gathers += 1;
        self.reference.clear();
        self.reference.extend_from_slice(x1);
        self.reference0.clone_from(&self.x0);
        let mut out = std::mem::take(&mut self.candidates);
        out.clear();
        let mut culled = std::mem::take(&mut self.culled);
        if !self.find_pairs(x1, inv_mass, margin, None, &mut out, &mut culled) {
            self.gathered = false;
        }
        self.candidates = out;
        // The culled patches' pairs stay only as far apart as each keeps on this sweep:
        // their particles' margins.
        self.margins.clear();
        self.margins.resize(x1.len(), margin);
        self.margin = margin;
        self.lower_margins(&culled);
        self.culled = culled;
    }

    /// Lower the margins of the particles of `culled`'s patches to the distance each keeps.
    fn lower_margins(&mut self, culled: &[([u32; 2], f64)]) {
        for &(nodes, g) in culled {
            for k in nodes {
                for &t in self.patches.node_triangles(k as usize) {
                    for &i in &self.surface.triangles[t as usize] {
                        let m = &mut self.margins[i as usize];
                        *m = m.min(g);
                    }
                }
            }
        }
    }

    /// Where only a few particles stray at `x1` beyond what the candidates cover
    /// ([`SelfContact::strayed`]), gather the pairs that hold one of them afresh and keep
    /// the others': the second gather of a step — after the solve, whose end strays from
    /// the free-flight preview the first was made for where the hand pulls or the cloth
    /// presses on itself — then visits only the patches that hold a strayed particle.
    /// Returns false, with nothing changed, where too many strayed.
    ///
    /// Why the rest still holds: a kept particle `i` strayed by `eᵢ` from the positions
    /// it was gathered for (less the mean motion) with `reach + 2eᵢ` within its margin
    /// `mᵢ`. Measured from `x1` instead, a later position that strays by `d` from it
    /// strays by at most `d + eᵢ` from the old one, so its pairs are covered while
    /// `reach' + 2d ≤ mᵢ − 2eᵢ`: that is its new margin. The strayed particles take the
    /// gather's margin, less where a culled patch keeps theirs closer. The list is the
    /// whole gather's but for pairs that stay beyond reach either way, so the rows, made
    /// in the candidates' order, are the same.
    fn gather_strayed(&mut self, x1: &[DVec3], inv_mass: &[f64], reach: f64) -> bool {
        let Some(strays) = self.strays(x1) else {
            return false;
        };
        let Some(mask) = self.strayed_of(&strays, reach) else {
            return false;
        };
        let mut fresh = Vec::new();
        let mut culled = Vec::new();
        if !self.find_pairs(
            x1,
            inv_mass,
            self.margin,
            Some(&mask),
            &mut fresh,
            &mut culled,
        ) {
            return false;
        }
        self.regathers += 1;
        for ((m, &e), &strayed) in self.margins.iter_mut().zip(&strays).zip(&mask) {
            *m = if strayed { self.margin } else { *m - 2.0 * e };
        }
        self.lower_margins(&culled);
        self.reference.clear();
        self.reference.extend_from_slice(x1);
        // The whole gather's culled patches no longer say which pairs the list lacks.
        self.culled.clear();
        self.candidates
            .retain(|c| !c.p.iter().any(|&i| mask[i as usize]));
        self.candidates.extend(fresh);
        self.candidates.sort_unstable_by_key(Candidate::order);
        true
    }

    /// The pairs [`SelfContact::gather`] finds, into `out`; with `near`, only those with a
    /// particle it marks. Whether the cloth has a surface to find them on.
    fn find_pairs(
        &mut self,
        x1: &[DVec3],
        inv_mass: &[f64],
        margin: f64,
        near: Option<&[bool]>,
        out: &mut Vec<Candidate>,
        culled: &mut Vec<([u32; 2], f64)>,
    ) -> bool {
        // Items and queries each grow by half the margin: two boxes overlap exactly when
        // the swept bounds come within the margin.
        let inflate = 0.5 * margin;
        if !self.patches.is_of(&self.surface) {
            self.patches = Patches::new(&self.surface);
        }
        let x0 = &self.x0;
        let s = &self.surface;
        if x0.len() != x1.len() || s.triangles.is_empty() {
            return false;
        }
        // The swept bounds in the frame that moves with the mean displacement: subtracting
        // a motion common to all particles (linear in time, as each particle's is) changes
        // no distance at any moment of the step, and keeps the boxes of a cloth the hand
        // carries fast as small as those of one at rest.
        let shift = mean_displacement(x1, x0);
        let merge = |a: Aabb, b: Aabb| Aabb {
            min: a.min.min(b.min),
            max: a.max.max(b.max),
        };
        // Each particle's, edge's and triangle's box made once a gather: a pair of leaves
        // asks for each of theirs a few dozen times.
        let swept: Vec<Aabb> = x0
            .iter()
            .zip(x1)
            .map(|(&a, &b)| Aabb::EMPTY.grow(a).grow(b - shift))
            .collect();
        let tri_boxes: Vec<Aabb> = s
            .triangles
            .iter()
            .map(|t| {
                merge(
                    merge(swept[t[0] as usize], swept[t[1] as usize]),
                    swept[t[2] as usize],
                )
            })
            .collect();
        let edge_boxes: Vec<Aabb> = s
            .edges
            .iter()
            .map(|e| merge(swept[e[0] as usize], swept[e[1] as usize]).inflate(inflate))
            .collect();
        let vert_boxes: Vec<Aabb> = swept.iter().map(|b| b.inflate(inflate)).collect();
        let tri_grown: Vec<Aabb> = tri_boxes.iter().map(|b| b.inflate(inflate)).collect();
        if near.is_none() {
            self.mean_edge = s
                .edges
                .iter()
                .map(|e| x0[e[0] as usize].distance(x0[e[1] as usize]))
                .sum::<f64>()
                / s.edges.len().max(1) as f64;
        }
        // The pairs of leaves of the surface's patches that may hold such a pair; a patch
        // that keeps its own features apart over the step by more than the detection's
        // reach is skipped whole ([`patches`]), and its particles' candidates then cover
        // the motion with what it keeps, measured up to the margin: no particle's may
        // exceed it.
        let culling = (margin.min(CULL_LEAST * self.thickness_hint), margin);
        self.patches.refit(s, x0, x1, |t| tri_boxes[t]);
        let mut leaf_pairs = std::mem::take(&mut self.leaf_pairs);
        // Around a few particles, only the patches that hold one.
        let marked = near.map(|m| self.patches.marked_nodes(s, m));
        self.patches.traverse(
            x0,
            x1,
            inflate,
            culling,
            marked.as_deref(),
            &mut leaf_pairs,
            culled,
        );
        // Whether an item holds a particle `near` marks (every item without `near`).
        let holds_marked = |p: &[u32]| near.is_none_or(|m| p.iter().any(|&i| m[i as usize]));
        let tangled = &self.tangled;
        let static_all = |p: &[u32; 4]| p.iter().all(|&i| inv_mass[i as usize] == 0.0);
        let any_tangled = |p: &[u32; 4]| p.iter().any(|&i| tangled[i as usize]);
        // The pair's distance at the start, if its motion to `x1` may bring it within the
        // margin: it moves by at most its motion bound relative to its first point, so a
        // pair that stays beyond the margin on the way to `x1` stays beyond `reach` on any
        // motion `covers` accepts — the same argument as for the boxes.
        let ordering = self.ordering;
        let pressed = self.pressed();
        let within = |kind: PairKind, p: &[u32; 4]| {
            if static_all(p) || (any_tangled(p) && !ordering) {
                return None;
            }
            let x: [DVec3; 4] = p.map(|i| x0[i as usize]);
            let bound = kind.motion_bound(|k| {
                let i = p[k] as usize;
                x1[i] - x0[i]
            });
            let d0 = narrow::pair_distance(kind, &x);
            (d0 - bound <= margin).then_some(d0)
        };
        // A candidate for the pair of features `a` and `b` over particles `p`, unless they
        // share a particle or stay beyond the margin.
        let pair = |kind: PairKind, a: &[u32], b: &[u32], p: [u32; 4], key: u64| {
            let lip = match s.shared(a, b) {
                Shared::Particle => return None,
                Shared::Copies => true,
                Shared::Nothing => false,
            };
            within(kind, &p).map(|d0| Candidate {
                tangled: out_of_fail_safe(tangled, &p, d0, pressed),
                kind,
                p,
                key,
                d0,
                rowed: false,
                lip,
            })
        };
        // Vertex `v` against triangle `t`, whose box (grown) is `tri_bounds`.
        let vertex_triangle = |v: u32, t: u32, tri_bounds: &Aabb, found: &mut Vec<Candidate>| {
            let tri = &s.triangles[t as usize];
            if !(holds_marked(&[v]) || holds_marked(tri))
                || !vert_boxes[v as usize].overlaps(tri_bounds)
            {
                return;
            }
            let p = [v, tri[0], tri[1], tri[2]];
            let key = (u64::from(v) << 32) | u64::from(t);
            found.extend(pair(PairKind::VertexTriangle, &[v], tri, p, key));
        };
        // Vertices `vs` against triangles `ts`, each triangle's box made once.
        let vertices_triangles = |vs: &[u32], ts: &[u32], found: &mut Vec<Candidate>| {
            for &t in ts {
                let bounds = &tri_grown[t as usize];
                for &v in vs {
                    vertex_triangle(v, t, bounds, found);
                }
            }
        };
        let edge_edge = |i: u32, j: u32, found: &mut Vec<Candidate>| {
            let (i, j) = (i.min(j), i.max(j));
            let (lo, hi) = (s.edges[i as usize], s.edges[j as usize]);
            if !(holds_marked(&lo) || holds_marked(&hi))
                || !edge_boxes[i as usize].overlaps(&edge_boxes[j as usize])
            {
                return;
            }
            // The lower edge first: the motion bound and the distance are taken from the
            // first point.
            let p = [lo[0], lo[1], hi[0], hi[1]];
            let key = (1 << 63) | (u64::from(i) << 32) | u64::from(j);
            found.extend(pair(PairKind::EdgeEdge, &lo, &hi, p, key));
        };
        let patches = &self.patches;
        // A leaf's elements whose boxes reach into the other leaf's box (grown): only
        // those can be near any of its elements. Two neighbouring leaves overlap along
        // their border, and most of their elements are not there.
        let reaching = |items: &[u32], boxes: &[Aabb], other: &Aabb, into: &mut Vec<u32>| {
            into.clear();
            into.extend(
                items
                    .iter()
                    .copied()
                    .filter(|&i| boxes[i as usize].overlaps(other)),
            );
        };
        gather_in_order(&leaf_pairs, out, |_, &[a, b], found, [vs, ts, ea, eb]| {
            let (a, b) = (a as usize, b as usize);
            if a == b {
                vertices_triangles(patches.leaf_vertices(a), patches.leaf_triangles(a), found);
                let edges = patches.leaf_edges(a);
                for (k, &e) in edges.iter().enumerate() {
                    for &f in &edges[k + 1..] {
                        edge_edge(e, f, found);
                    }
                }
            } else {
                let bounds = [a, b].map(|k| patches.leaf_bounds(k).inflate(inflate));
                for (p, q, bp, bq) in [
                    (a, b, &bounds[0], &bounds[1]),
                    (b, a, &bounds[1], &bounds[0]),
                ] {
                    reaching(patches.leaf_vertices(p), &vert_boxes, bq, vs);
                    if vs.is_empty() {
                        continue;
                    }
                    reaching(patches.leaf_triangles(q), &tri_grown, bp, ts);
                    vertices_triangles(vs, ts, found);
                }
                reaching(patches.leaf_edges(a), &edge_boxes, &bounds[1], ea);
                reaching(patches.leaf_edges(b), &edge_boxes, &bounds[0], eb);
                for &e in ea.iter() {
                    for &f in eb.iter() {
                        edge_edge(e, f, found);
                    }
                }
            }
        });
        // Particles on no triangle, against the triangles near them.
        let mut near_leaves = Vec::new();
        for &v in &patches.isolated {
            patches.leaves_near(&vert_boxes[v as usize], inflate, &mut near_leaves);
            for &k in &near_leaves {
                vertices_triangles(&[v], patches.leaf_triangles(k as usize), out);
            }
        }
        self.leaf_pairs = leaf_pairs;
        // In one order whatever the hierarchy and the threads — vertex–triangle pairs by
        // triangle, then by vertex; edge–edge pairs by their edges — the order the hash
        // gave them in: the rows are made and swept in it.
        out.sort_unstable_by_key(Candidate::order);
        true
    }

    /// Add a row for every pair that comes within [`DETECT_REACH`] × the gap on its way
    /// from the step's start to `x1` (a preview) and has none yet; returns how many were
    /// added.
    pub fn detect(&mut self, x1: &[DVec3], inv_mass: &[f64], thickness: f64) -> usize {
        let gap = self.thickness(thickness);
        self.gap = gap;
        let reach = DETECT_REACH * gap;
        self.thickness_hint = reach;
        // The step's first detection gathers for the forecast previews ([`forecast`]) and
        // makes rows for the pairs that the free flight `x1` or the forecast brings within
        // reach: the solve's end lies near the forecast, and a forecast that misses (the
        // hand stopped, an impact) still has the free flight's rows among its candidates.
        let fc = std::mem::take(&mut self.forecast);
        let alt = std::mem::take(&mut self.forecast_first).then(|| fc.target());
        self.ensure_candidates(alt.unwrap_or(x1), inv_mass, reach);
        let ordering = self.ordering;
        if ordering {
            self.order_pressed_layers(gap);
        }
        let mut added = 0;
        if !self.lip_rows {
            self.lip_rows = true;
            added += self.lip_rows(inv_mass, gap);
        }
        // The tests run in parallel, each pair on its own; the rows are made in the
        // candidates' order, as a serial loop would.
        let this = &*self;
        let found: Vec<(usize, Option<Hit>)> = (0..this.candidates.len())
            .into_par_iter()
            .with_min_len(TEST_CHUNK)
            .map_init(Vec::new, |roots, ci| {
                let c = this.candidates[ci];
                if c.rowed {
                    return None;
                }
                // A pair on the two lips of a cut keeps at most half the distance its
                // copies have come apart ([`LIP_OPEN`]).
                let (gap, reach) = if c.lip {
                    let Some(opening) = this.lips_apart(&c, gap) else {
                        return Some((ci, None));
                    };
                    let g = gap.min(0.5 * opening);
                    (g, DETECT_REACH * g)
                } else {
                    (gap, reach)
                };
                if c.d0 > reach
                    && c.d0 - this.motion_bound(&c, x1) > reach
                    && alt.is_none_or(|a| c.d0 - this.motion_bound(&c, a) > reach)
                {
                    // Too far apart for the step's motion to bring them within reach.
                    return None;
                }
                let at = if c.d0 <= reach {
                    Some((0.0, false))
                } else {
                    narrow::first_contact(c.kind, &this.swept(&c.p, x1), reach, roots)
                        .map(|t| (t, false))
                        .or_else(|| {
                            alt.and_then(|a| {
                                narrow::first_contact(c.kind, &this.swept(&c.p, a), reach, roots)
                            })
                            .map(|t| (t, true))
                        })
                };
                at.map(|(t, forecast)| (ci, Some(Hit { t, gap, forecast })))
            })
            .flatten()
            .collect();
        for (ci, hit) in found {
            let c = self.candidates[ci];
            let Some(Hit { t, gap, forecast }) = hit else {
                // Lips still on each other, or crossed: no row.
                self.candidates[ci].rowed = true;
                continue;
            };
            let s = self.swept(&c.p, if forecast { alt.unwrap_or(x1) } else { x1 });
            // Found once a step: a pair that needs no row is not tested again.
            self.keys.insert(c.key);
            self.candidates[ci].rowed = true;
            let side = if ordering && !c.lip {
                let r = self.layers.root(c.p[0]) as usize;
                Some(self.side[r]).filter(|s| *s != 0.0)
            } else {
                None
            };
            if ordering && side.is_none() && c.p.iter().any(|&i| self.tangled[i as usize]) {
                continue;
            }
            if let Some(row) = make_row(c.kind, c.p, &s, t, gap, c.lip, side) {
                self.rows.push(row);
                added += 1;
            }
        }
        self.forecast = fc;
        added
    }

    /// How far apart at the step's start the copies are that join a lip pair's features
    /// ([`Surface::opening`]).
    fn opening(&self, c: &Candidate) -> f64 {
        let (a, b) = match c.kind {
            PairKind::VertexTriangle => c.p.split_at(1),
            PairKind::EdgeEdge => c.p.split_at(2),
        };
        self.surface.opening(a, b, &self.x0)
    }

    /// How far apart a lip pair's copies are ([`SelfContact::opening`]), where they have
    /// come apart by [`LIP_OPEN`] of `gap` and its lips did not cross at the last step's
    /// end; `None` where the pair is left to the lips' rows.
    fn lips_apart(&self, c: &Candidate, gap: f64) -> Option<f64> {
        let opening = self.opening(c);
        if opening < LIP_OPEN * gap || self.lip_crossed(&c.p) {
            None
        } else {
            Some(opening)
        }
    }

    /// Rows between the copies of a particle still together at the step's start
    /// ([`LIP_OPEN`]): for each edge at one and triangle at the other that do not cross,
    /// `n · (a − b) ≥ 2 × LIP_OPEN × gap` with `n` from [`lip_normal`] at the step's
    /// start. Returns how many were added.
    fn lip_rows(&mut self, inv_mass: &[f64], gap: f64) -> usize {
        let together = LIP_OPEN * gap;
        let x0 = &self.x0;
        let mut added = 0;
        for l in &self.surface.lips {
            let (a, b) = (l.a as usize, l.b as usize);
            if x0[a].distance(x0[b]) >= together || inv_mass[a] + inv_mass[b] == 0.0 {
                continue;
            }
            if self.lips_crossed.contains(&lip_particles(l)) {
                continue;
            }
            let q = if l.edge[0] == l.a {
                l.edge[1]
            } else {
                l.edge[0]
            };
            let k = l.tri.iter().position(|&i| i == l.b).unwrap_or(0);
            let (r, t) = (l.tri[(k + 1) % 3], l.tri[(k + 2) % 3]);
            let at = |i: u32| x0[i as usize] - x0[b];
            let Some(n) = lip_normal(x0[q as usize] - x0[a], at(r), at(t)) else {
                continue;
            };
            self.rows.push(SelfRow {
                p: [l.a, l.b, l.b, l.b],
                w: [1.0, -1.0, 0.0, 0.0],
                n,
                gap: 2.0 * together,
            });
            added += 1;
        }
        added
    }

    /// Whether a lip pair's particles all belong to an (edge, triangle) pair of the lips
    /// that crossed at the end of the last step.
    fn lip_crossed(&self, p: &[u32; 4]) -> bool {
        self.lips_crossed
            .iter()
            .any(|set| p.iter().all(|i| set.contains(i)))
    }

    /// Find the (edge, triangle) pairs of the lips that cross at `x`, the step's end,
    /// among those the fail-safe did not guard — their copies together at the step's
    /// start — and those that crossed before ([`LIP_OPEN`]); returns how many cross.
    pub fn check_lips(&mut self, x: &[DVec3]) -> usize {
        self.lips_crossed = self.crossing_lips(x, 0.0);
        self.lips_crossed.len()
    }

    /// The (edge, triangle) pairs of the lips that cross at `x` among those the fail-safe
    /// does not guard ([`SelfContact::check_lips`]), as particle sets.
    fn crossing_lips(&self, x: &[DVec3], margin: f64) -> Vec<[u32; 5]> {
        let together = LIP_OPEN * self.gap;
        let mut crossed: Vec<[u32; 5]> = Vec::new();
        let s = &self.surface;
        if x.len() != s.particles || self.x0.len() != x.len() {
            return crossed;
        }
        for l in &s.lips {
            let set = lip_particles(l);
            let unguarded = self.x0[l.a as usize].distance(self.x0[l.b as usize]) < together
                || self.lips_crossed.contains(&set);
            if !unguarded || crossed.contains(&set) {
                continue;
            }
            let [a, b, c] = l.tri.map(|i| x[i as usize]);
            let (p, q) = (x[l.edge[0] as usize], x[l.edge[1] as usize]);
            if narrow::segment_crosses_triangle_by(p, q, a, b, c, margin) {
                crossed.push(set);
            }
        }
        crossed
    }

    /// Whether a pair of the lips whose copies lie apart ([`lips_counted_apart`]) crosses
    /// at `x`: the lips are few, so they are looked at every step, and where one crossed
    /// the crossings are counted. Such a pair has the fail-safe of any pair from a clean
    /// start, but from features that met at no distance a step can pass one lip through
    /// the other where every other pair holds (a cut mesh on itself in a hostile session:
    /// two lip pairs crossed, and no count looked for 30 steps).
    fn lips_crossed_apart(&self, x: &[DVec3]) -> bool {
        let s = &self.surface;
        if x.len() != s.particles {
            return false;
        }
        let together = LIP_OPEN * self.gap;
        let x0 = (self.x0.len() == x.len()).then_some(&self.x0[..]);
        s.lips.iter().any(|l| {
            lips_counted_apart(s, x, x0, together, &self.lips_crossed, &l.edge, &l.tri) && {
                let [a, b, c] = l.tri.map(|i| x[i as usize]);
                let (p, q) = (x[l.edge[0] as usize], x[l.edge[1] as usize]);
                narrow::segment_crosses_triangle(p, q, a, b, c)
            }
        })
    }

    /// [`PairKind::motion_bound`] of a candidate moving from the step's start to `x1`.
    fn motion_bound(&self, c: &Candidate, x1: &[DVec3]) -> f64 {
        c.kind.motion_bound(|k| {
            let i = c.p[k] as usize;
            x1[i] - self.x0[i]
        })
    }

    fn swept(&self, p: &[u32; 4], x1: &[DVec3]) -> Swept {
        Swept {
            x0: p.map(|i| self.x0[i as usize]),
            x1: p.map(|i| x1[i as usize]),
        }
    }

    /// The fail-safe after integration ([`zones`]): every pair that touches on the way
    /// from the step's start to `x` merges its particles into a rigid impact zone, and
    /// every zone moves rigidly in `x` and `v`. Here a zone grows only by contacts and by
    /// an edge that its motion stretches beyond its limit (the tolerance, or the length
    /// the solve left or the step began with if longer) whose other end cannot follow —
    /// another zone or a static particle — so it stays as small as the contacts that need
    /// it; the edges at its border to the rest of the cloth are the caller's
    /// ([`SelfContact::border_stretched`], [`SelfContact::grow_over_stretched`]).
    ///
    /// `keep` keeps the zones of the last call in this step (after they were moved out of a
    /// collider, grown, or the rest of the cloth solved again around them, `x` holds them
    /// where they are). Rounds: a
    /// round checks the pairs with a particle that moved in the last one (all in the
    /// first), merges those that touch, and places every zone afresh from the solver's end
    /// state. Zones only grow, so the rounds end — at worst with every particle in contact
    /// in one zone; a cloth whose contacts do not span it is never frozen whole.
    pub fn fail_safe(
        &mut self,
        cloth: StepCloth,
        x: &mut [DVec3],
        v: &mut [DVec3],
        keep: bool,
    ) -> FailSafe {
        let StepCloth {
            edges,
            rest,
            inv_mass,
            h: _,
            tolerance,
        } = cloth;
        let n = x.len();
        if !keep || self.zoned.len() != n || self.x_reference.len() != n {
            self.zones.reset(n);
            // The solve's end state: what its strains may be measured against.
            self.x_reference.clear();
            self.x_reference.extend_from_slice(x);
            self.v_reference.clear();
            self.v_reference.extend_from_slice(v);
        }
        self.x_solver.clear();
        self.x_solver.extend_from_slice(x);
        self.v_solver.clear();
        self.v_solver.extend_from_slice(v);
        // Particles in a zone (of more than one particle) after the last round's moves.
        let mut in_zone = vec![false; n];
        let mut groups = self.zones.groups();
        for g in &groups {
            for &i in g {
                in_zone[i as usize] = true;
            }
        }
        // Particles whose position the last round changed (every particle before the
        // first): only pairs with one of them can have come into touch.
        let mut changed = vec![true; n];
        let mut last = x.to_vec();
        let ordering = self.ordering && self.side.len() == n;
        let mut rounds = 0;
        let mut local = Vec::new();
        loop {
            // Where a round moved only a few particles beyond what the candidates cover,
            // the pairs they are in are found afresh and the rest of the list kept.
            let near = if self.covers(x, TOUCH) {
                None
            } else {
                self.strayed(x, TOUCH)
            };
            local.clear();
            match &near {
                None => self.ensure_candidates(x, inv_mass, TOUCH),
                Some(m) => {
                    self.find_pairs(x, inv_mass, TOUCH, Some(m), &mut local, &mut Vec::new());
                }
            }
            let kept = self.candidates.len();
            let mut merged = false;
            // Each pair tested on its own, in parallel; merges do not depend on their
            // order (a zone's root is its least particle).
            let this = &*self;
            let xs = &*x;
            let touching: Vec<[u32; 4]> = (0..kept + local.len())
                .into_par_iter()
                .with_min_len(TEST_CHUNK)
                .map_init(Vec::new, |roots, ci| {
                    let c = if ci < kept {
                        let c = this.candidates[ci];
                        if near
                            .as_ref()
                            .is_some_and(|m| c.p.iter().any(|&i| m[i as usize]))
                        {
                            return None;
                        }
                        c
                    } else {
                        local[ci - kept]
                    };
                    if c.tangled || !c.p.iter().any(|&i| changed[i as usize]) {
                        return None;
                    }
                    if ordering && this.ordered_through(&c) {
                        return None;
                    }
                    if c.lip && this.lips_apart(&c, this.gap).is_none() {
                        // Lips still on each other, or crossed: [`LIP_OPEN`].
                        return None;
                    }
                    if c.d0 - this.motion_bound(&c, xs) > TOUCH {
                        return None;
                    }
                    let s = this.swept(&c.p, xs);
                    narrow::first_contact(c.kind, &s, TOUCH, roots).map(|_| c.p)
                })
                .flatten()
                .collect();
            for p in touching {
                for k in 1..4 {
                    merged |= self.zones.union(p[0], p[k]);
                }
                // Already in one zone, they still touch: only possible where the zone's
                // own start touched; nothing a merge can do.
            }
            // The lips of a cut lie on each other and are kept apart by their rows, not by
            // the fail-safe ([`LIP_OPEN`]); the rows hold to first order, and a zone's
            // rigid motion is not the solve's, so an edge of one lip can still end through
            // a triangle of the other. That pair joins a zone, which moves rigidly from
            // where it did not cross. Only beyond doubt ([`LIP_CROSSED`]): lips on each
            // other cross and uncross at their shared corners by round-off.
            // On a tangled cloth, as the other crossing pairs, only where a zone carried it.
            let tangled = self.untangling || self.tangled.iter().any(|&t| t);
            for set in self.crossing_lips(x, LIP_CROSSED) {
                let carried = set.iter().any(|&i| in_zone[i as usize]);
                if !self.lips_crossed.contains(&set) && (carried || !tangled) {
                    for k in 1..set.len() {
                        merged |= self.zones.union(set[0], set[k]);
                    }
                }
            }
            if rounds > 0 || merged || keep {
                // An edge a zone left stretched whose other end cannot follow it: in
                // another zone (moved apart by this call's merges or, with `keep`, by the
                // repair before it), or static, where a contact merged in this call (the
                // zone then holds the static particle); after a repair alone the zone
                // turns about the static particles it stretched ([`SelfContact::place_zones`])
                // — merged, a zone held by three pins would stay whole where it began.
                for (e, &[a, b]) in edges.iter().enumerate() {
                    let (za, zb) = (in_zone[a as usize], in_zone[b as usize]);
                    let fixed = |i: u32| inv_mass[i as usize] == 0.0;
                    let to_static = (za && fixed(b)) || (zb && fixed(a));
                    let held = (za && zb) || (to_static && (rounds > 0 || merged));
                    if !held || self.zones.find(a) == self.zones.find(b) {
                        continue;
                    }
                    if self.beyond_limit(x, [a, b], rest[e], tolerance) {
                        merged |= self.zones.union(a, b);
                    }
                }
            }
            if !merged {
                break;
            }
            rounds += 1;
            groups = self.place_zones(cloth, x, v, &mut in_zone);
            for i in 0..n {
                changed[i] = x[i] != last[i];
            }
            last.copy_from_slice(x);
        }
        self.zoned = in_zone;
        FailSafe {
            zones: groups.len() as u32,
            particles: groups.iter().map(|g| g.len() as u32).sum(),
            rounds,
        }
    }

    /// Whether an edge at the border of the last fail-safe's zones is left stretched at
    /// `x` beyond its limit (the tolerance, or the length the solve left or the step
    /// began with if longer): the rest of the cloth has to be solved again around the
    /// zones.
    pub fn border_stretched(
        &self,
        cloth_edges: (&[[u32; 2]], &[f64]),
        x: &[DVec3],
        tolerance: f64,
    ) -> bool {
        let (edges, rest) = cloth_edges;
        let z = &self.zoned;
        if z.len() != x.len() || self.x_reference.len() != x.len() {
            return false;
        }
        edges.iter().zip(rest).any(|(&[a, b], &l)| {
            self.across_zones(a, b) && self.beyond_limit(x, [a, b], l, tolerance)
        })
    }

    /// Whether the edge `a`–`b` crosses the border of the last fail-safe's zones: one end
    /// in a zone and the other out of it, or each in a zone of its own.
    fn across_zones(&self, a: u32, b: u32) -> bool {
        match (self.zoned[a as usize], self.zoned[b as usize]) {
            (true, true) => self.zones.root(a) != self.zones.root(b),
            (za, zb) => za != zb,
        }
    }

    /// Whether edge `e` (rest length `rest`) is stretched at `x` beyond `tolerance`, or
    /// beyond what the step's solve left it at or the step began with if more (up to
    /// round-off): the limit every zone border is held to. A zone keeps the lengths its
    /// edges began the step with; its border may keep them too. Without the start, a zone
    /// in a cloth left stretched (a capped solver, a switch from one that stretches) took
    /// ring after ring of edges that were as long before the step, and kept their strain
    /// by moving them rigidly: 1 of 36 hostile sessions on grids stayed stretched after
    /// 20 Newton steps (docs/numerics.md, "Self-contact").
    fn beyond_limit(&self, x: &[DVec3], e: [u32; 2], rest: f64, tolerance: f64) -> bool {
        strain_of(x, e, rest) > self.border_limit(e, rest, tolerance) * (1.0 + 1e-9)
    }

    /// The strain edge `e` (rest length `rest`) is held to at a zone's border
    /// ([`SelfContact::beyond_limit`]): `tolerance`, or what the step's solve left it at
    /// or the step began with if more.
    fn border_limit(&self, e: [u32; 2], rest: f64, tolerance: f64) -> f64 {
        tolerance
            .max(strain_of(&self.x_reference, e, rest))
            .max(strain_of(&self.x0, e, rest))
    }

    /// The pivot of the static particles `anchors` of a zone, from the step's start to
    /// `end` ([`zones::Pivot::of`], within a billionth of the shortest edge).
    fn pivot_of(&self, anchors: &[u32], end: &[DVec3]) -> zones::Pivot {
        let eps = 1e-9 * self.shortest_rest.max(1e-300);
        let start: Vec<DVec3> = anchors.iter().map(|&i| self.x0[i as usize]).collect();
        let end: Vec<DVec3> = anchors.iter().map(|&i| end[i as usize]).collect();
        zones::Pivot::of(&start, &end, eps)
    }

    /// Gather the candidates afresh next time: the static set they left out changed (the
    /// world's re-solve around the zones held their particles static for a pass).
    pub fn forget_candidates(&mut self) {
        self.gathered = false;
    }

    /// The last fail-safe's zones (of more than one particle).
    pub fn zone_groups(&mut self) -> Vec<Vec<u32>> {
        self.zones.groups()
    }

    /// Where a zone's rigid motion stretched an edge at its border: merge the two ends of
    /// every such edge and move the grown zones rigidly from the positions the last
    /// [`SelfContact::fail_safe`] started from, ring by ring, until no border edge is
    /// stretched or `rings` rings are grown. A zone with a static particle does not
    /// grow, nor does any zone over one. Zones so grow only as far as their rigid motion
    /// strains the cloth; the next [`SelfContact::fail_safe`] (with `keep`) checks what the
    /// grown zones now touch. Whether anything merged.
    pub fn grow_over_stretched(
        &mut self,
        cloth: StepCloth,
        x: &mut [DVec3],
        v: &mut [DVec3],
        rings: u32,
    ) -> bool {
        let StepCloth {
            edges,
            rest,
            inv_mass,
            h: _,
            tolerance,
        } = cloth;
        let n = x.len();
        if self.zoned.len() != n || self.x_reference.len() != n || self.x_solver.len() != n {
            return false;
        }
        let mut any = false;
        for _ in 0..rings {
            // A zone with a static particle stays where the step began: grown, it would
            // hold back ring after ring of a cloth that moved on. Neither it nor a static
            // particle grows; the re-solve takes its border back.
            let mut fixed = vec![false; n];
            for i in 0..n as u32 {
                if inv_mass[i as usize] == 0.0 {
                    let r = self.zones.find(i);
                    fixed[r as usize] = true;
                }
            }
            let mut merged = false;
            for (&[a, b], &l) in edges.iter().zip(rest) {
                if !self.across_zones(a, b) {
                    continue;
                }
                let (ra, rb) = (self.zones.find(a), self.zones.find(b));
                if fixed[ra as usize] || fixed[rb as usize] {
                    continue;
                }
                if self.beyond_limit(x, [a, b], l, tolerance) {
                    merged |= self.zones.union(a, b);
                }
            }
            if !merged {
                return any;
            }
            any = true;
            let mut zoned = std::mem::take(&mut self.zoned);
            self.place_zones(cloth, x, v, &mut zoned);
            self.zoned = zoned;
        }
        any
    }

    /// Bring every edge back within its limit (the fail-safe's border limit: the
    /// tolerance, or the length the solve left or the step began with if longer) around
    /// the last fail-safe's zones, each zone one rigid body ([`project::project`]): free
    /// (fitted first to the solve's end state, [`zones::fit_rigidly`]), turning about the
    /// point or line its static particles lie on, or held where static particles on a
    /// plane hold it. Not on a tangled cloth, and not kept where it leaves a cut's lips
    /// through each other (both are left to the growth). The rest of the cloth
    /// follows the zones, and the zones move where it lets them, instead of growing over
    /// it. Positions and velocities are those of the projection's last iterate; the
    /// caller keeps them only where it converged. At most `most_iterations` Newton
    /// iterations (what is left of the step's [`project::PROJECT_ITERATIONS`]), fewer with
    /// `give_up_on_stall` where the iteration stalls.
    pub fn project_around_zones(
        &mut self,
        cloth: StepCloth,
        x: &mut [DVec3],
        v: &mut [DVec3],
        most_iterations: u32,
        give_up_on_stall: bool,
    ) -> project::Projection {
        let StepCloth {
            edges,
            rest,
            inv_mass,
            h,
            tolerance,
        } = cloth;
        let n = x.len();
        if self.zoned.len() != n || self.x_reference.len() != n || self.x0.len() != n {
            return project::Projection::default();
        }
        // On a tangled cloth the fail-safe leaves the crossing pairs out, and a projection
        // that moves their particles freely let a tangle spread (a hostile session's 15
        // crossings grew to 157 in three steps): there the zones grow as before.
        if self.untangling || self.tangled.iter().any(|&t| t) {
            return project::Projection::default();
        }
        let mut fixed = vec![false; n];
        let mut bodies = Vec::new();
        for g in self.zones.groups() {
            let anchors: Vec<u32> = g
                .iter()
                .copied()
                .filter(|&i| inv_mass[i as usize] == 0.0)
                .collect();
            let pivot = self.pivot_of(&anchors, x);
            match pivot {
                zones::Pivot::Fixed => g.iter().for_each(|&i| fixed[i as usize] = true),
                zones::Pivot::Free => {
                    zones::fit_rigidly(&g, &self.x0, &self.x_solver, inv_mass, h, x, v);
                    bodies.push((g, pivot));
                }
                _ => bodies.push((g, pivot)),
            }
        }
        let limit: Vec<f64> = edges
            .iter()
            .zip(rest)
            .map(|(&e, &l)| self.border_limit(e, l, tolerance))
            .collect();
        let mut done = project::project(
            edges,
            rest,
            &limit,
            &bodies,
            &fixed,
            inv_mass,
            h,
            x,
            v,
            most_iterations,
            give_up_on_stall,
        );
        // The lips of a cut that lie on each other are kept apart by their rows, not by
        // the fail-safe ([`LIP_OPEN`]): a projection that leaves one through the other
        // (where it was not at the step's start) is not kept, the growth takes it in.
        if done.converged
            && self
                .crossing_lips(x, 0.0)
                .iter()
                .any(|l| !self.lips_crossed.contains(l))
        {
            done.converged = false;
        }
        done
    }

    /// Put every particle back where the solve left it and move every zone rigidly from
    /// the step's start ([`zones::move_rigidly`]) about what anchors it: its static
    /// particles, and each static particle at the other end of an edge its motion
    /// stretched beyond the limit ([`SelfContact::beyond_limit`]) — found zone by zone
    /// after its free motion and again after each turn about the anchors so far, until none
    /// is added ([`zones::Pivot`]). Marks the zones' particles in `in_zone` and returns the
    /// zones.
    fn place_zones(
        &mut self,
        cloth: StepCloth,
        x: &mut [DVec3],
        v: &mut [DVec3],
        in_zone: &mut [bool],
    ) -> Vec<Vec<u32>> {
        let StepCloth {
            edges,
            rest,
            inv_mass,
            h,
            tolerance,
        } = cloth;
        x.copy_from_slice(&self.x_solver);
        v.copy_from_slice(&self.v_solver);
        let groups = self.zones.groups();
        in_zone.iter_mut().for_each(|z| *z = false);
        // Each particle's zone, and the edges from a zone to a static particle outside it.
        let mut zone_of = vec![u32::MAX; x.len()];
        for (k, g) in groups.iter().enumerate() {
            for &i in g {
                zone_of[i as usize] = k as u32;
            }
        }
        let mut to_static: Vec<Vec<(usize, u32)>> = vec![Vec::new(); groups.len()];
        for (e, &[a, b]) in edges.iter().enumerate() {
            for (p, q) in [(a, b), (b, a)] {
                let k = zone_of[p as usize];
                if k != u32::MAX && zone_of[q as usize] != k && inv_mass[q as usize] == 0.0 {
                    to_static[k as usize].push((e, q));
                }
            }
        }
        for (k, g) in groups.iter().enumerate() {
            let mut anchors: Vec<u32> = g
                .iter()
                .copied()
                .filter(|&i| inv_mass[i as usize] == 0.0)
                .collect();
            let own = anchors.len();
            let mut last = zones::Pivot::Free;
            loop {
                let mut pivot = self.pivot_of(&anchors, &self.x_solver);
                let settle = pivot == zones::Pivot::Fixed;
                if settle && anchors.len() > own {
                    // Anchors found over edges that no turn keeps all: the last turn that
                    // kept some, the rest left to the step's repairs — a zone frozen by the
                    // edges around it would stop a cloth whose contacts do not span it.
                    pivot = last;
                }
                zones::move_rigidly(g, pivot, &self.x0, &self.x_solver, inv_mass, h, x, v);
                if settle {
                    break;
                }
                last = pivot;
                let before = anchors.len();
                for &(e, q) in &to_static[k] {
                    if !anchors.contains(&q) && self.beyond_limit(x, edges[e], rest[e], tolerance) {
                        anchors.push(q);
                    }
                }
                if anchors.len() == before {
                    break;
                }
            }
            for &i in g {
                in_zone[i as usize] = true;
            }
        }
        groups
    }

    /// The zones as they stand, to come back to ([`SelfContact::restore_zone_state`]).
    pub fn zone_state(&self) -> ZoneState {
        ZoneState {
            zones: self.zones.clone(),
            zoned: self.zoned.clone(),
            x_solver: self.x_solver.clone(),
            v_solver: self.v_solver.clone(),
        }
    }

    /// Go back to zones kept by [`SelfContact::zone_state`] in this step.
    pub fn restore_zone_state(&mut self, state: ZoneState) {
        self.zones = state.zones;
        self.zoned = state.zoned;
        self.x_solver = state.x_solver;
        self.v_solver = state.v_solver;
    }

    /// The solve's end state the step's fail-safe began from: positions and velocities.
    pub fn solve_end(&self) -> (&[DVec3], &[DVec3]) {
        (&self.x_reference, &self.v_reference)
    }

    /// Forget the last fail-safe's zones: the step moved its particles within their
    /// displacement bounds instead ([`bound`]).
    pub fn drop_zones(&mut self) {
        self.zones.reset(self.zoned.len());
        self.zoned.iter_mut().for_each(|z| *z = false);
    }

    /// Whether the last fail-safe held every dynamic particle in its zones.
    pub fn held_whole(&self, inv_mass: &[f64]) -> bool {
        self.zoned.len() == inv_mass.len()
            && !self.zoned.is_empty()
            && self
                .zoned
                .iter()
                .zip(inv_mass)
                .all(|(&z, &k)| z || k == 0.0)
    }

    /// The particles in the last fail-safe's zones.
    pub fn zone_mask(&self) -> &[bool] {
        &self.zoned
    }

    /// Count the crossings of the end state where that is needed, and return them: a step
    /// that starts intersection-free and whose every touching pair the fail-safe merged
    /// ends intersection-free (continuous detection over the whole step), so the count is
    /// needed only where the state was not known clean — tangled, just turned on, a new
    /// cloth — and every [`CHECK_EVERY`] steps as a check of that reasoning; and with
    /// `zoned`, a step whose fail-safe made zones or moved the cloth within bounds, and the
    /// [`COUNT_AFTER_ZONES`] steps after it: there features met at no distance, where
    /// continuous detection is decided by round-off (a cut cloth pressed on itself on the
    /// ground in a hostile session crossed its lips two steps later, and the count, left to
    /// [`CHECK_EVERY`], said nothing).
    pub fn check_crossings(&mut self, x: &[DVec3], zoned: bool) -> usize {
        self.since_count += 1;
        let after_zones = self.after_zones > 0;
        self.after_zones = if zoned {
            COUNT_AFTER_ZONES
        } else {
            self.after_zones.saturating_sub(1)
        };
        let crossings = if zoned
            || after_zones
            || self.lips_crossed_apart(x)
            || self.crossings > 0
            || self.untangling
            || self.since_count >= CHECK_EVERY
        {
            self.count_crossings(x)
        } else {
            0
        };
        self.crossings = crossings;
        if self.ordering && self.zoned.iter().any(|&z| z) {
            self.untangle_failed = true;
        }
        if crossings == 0 {
            self.untangle_failed = false;
        }
        if self.untangle_failed {
            self.untangling = false;
        } else if crossings > 0 {
            self.untangling = true;
        } else if self.untangling {
            // Untangled: ordered on while layers still lie pressed flat.
            let gap = self.gap;
            self.untangling = self
                .candidates
                .iter()
                .any(|c| c.d0 < PRESSED * gap && !c.lip);
        }
        crossings
    }

    /// Below what start distance a pair is pressed this step ([`PRESSED`] × the gap while
    /// the layers are ordered, else none): left to the rows, out of the fail-safe.
    fn pressed(&self) -> f64 {
        if self.ordering {
            PRESSED * self.gap
        } else {
            0.0
        }
    }

    /// Whether the cloth is being untangled: crossings at the last count, or layers still
    /// pressed flat since.
    pub fn untangling(&self) -> bool {
        self.untangling
    }

    /// Whether particle `i` is in one of the step's rows.
    pub fn in_row(&self, i: u32) -> bool {
        self.rows.iter().any(|r| r.p.contains(&i))
    }

    /// Whether particle `i` was in one of the last fail-safe's zones.
    pub fn zoned(&self, i: u32) -> bool {
        self.zoned.get(i as usize).copied().unwrap_or(false)
    }

    /// Count the (edge, triangle) pairs of the surface that pass through each other at `x`
    /// (sharing no particle), and mark their particles as tangled for the next step.
    pub fn count_crossings(&mut self, x: &[DVec3]) -> usize {
        self.since_count = 0;
        self.tangled.clear();
        self.tangled.resize(x.len(), false);
        let mut pairs = std::mem::take(&mut self.crossing_pairs);
        self.find_crossings(x, &mut pairs);
        for (e, tri) in &pairs {
            for &i in e.iter().chain(tri) {
                self.tangled[i as usize] = true;
            }
        }
        let count = pairs.len();
        if count > 0 || self.crossings > 0 {
            // The tangled particles changed: the candidates left out the old ones.
            self.gathered = false;
        }
        self.crossings = count;
        self.crossing_pairs = pairs;
        count
    }

    /// The (edge, triangle) pairs of the surface that pass through each other at `x`
    /// (sharing no particle), into `out`, in the order of the surface's edges. A pair on
    /// the two lips of a cut counts here where its copies are not at one point at `x`,
    /// unless the lips' own count takes it ([`SelfContact::check_lips`]: copies together
    /// at the step's start, [`LIP_OPEN`], or among the lips that crossed): lips that
    /// passed through each other apart — while a solver without self-contact ran, or
    /// self-collision was off — are a tangle like any other, and are untangled as one.
    fn find_crossings(&mut self, x: &[DVec3], out: &mut Vec<([u32; 2], [u32; 3])>) {
        out.clear();
        let together = LIP_OPEN * self.gap;
        let x0 = (self.x0.len() == x.len()).then_some(&self.x0[..]);
        let lips_crossed = &self.lips_crossed;
        let s = &self.surface;
        let apart = |e: &[u32; 2], tri: &[u32; 3]| {
            lips_counted_apart(s, x, x0, together, lips_crossed, e, tri)
        };
        if s.triangles.is_empty() || x.len() != s.particles {
            return;
        }
        let mut extent = 0.0;
        let boxes: Vec<Aabb> = s
            .triangles
            .iter()
            .map(|t| {
                let b = t.iter().fold(Aabb::EMPTY, |b, &i| b.grow(x[i as usize]));
                extent += (b.max - b.min).max_element();
                b
            })
            .collect();
        self.tri_grid
            .build(boxes, (extent / s.triangles.len() as f64).max(1e-6));
        for e in &s.edges {
            let (p, q) = (x[e[0] as usize], x[e[1] as usize]);
            let b = Aabb::EMPTY.grow(p).grow(q);
            self.tri_grid.query(&b, |t| {
                let tri = s.triangles[t as usize];
                match s.shared(e, &tri) {
                    Shared::Nothing => {}
                    Shared::Copies if apart(e, &tri) => {}
                    _ => return,
                }
                let [a, b, c] = tri.map(|i| x[i as usize]);
                if narrow::segment_crosses_triangle(p, q, a, b, c) {
                    out.push((*e, tri));
                }
            });
        }
    }
}

/// Whether a pair of the lips of a cut, edge `e` and triangle `tri`, is counted with the
/// crossings of any pair ([`SelfContact::find_crossings`]) rather than by the lips' own
/// count ([`SelfContact::check_lips`]): its copies not at one point at `x`, apart by
/// `together` ([`LIP_OPEN`] of the gap) at the step's start `x0`, and not among the lips
/// that crossed (`lips_crossed`).
fn lips_counted_apart(
    s: &Surface,
    x: &[DVec3],
    x0: Option<&[DVec3]>,
    together: f64,
    lips_crossed: &[[u32; 5]],
    e: &[u32; 2],
    tri: &[u32; 3],
) -> bool {
    let mut set = [e[0], e[1], tri[0], tri[1], tri[2]];
    set.sort_unstable();
    s.opening(e, tri, x) > 0.0
        && x0.is_none_or(|x0| s.opening(e, tri, x0) >= together)
        && !lips_crossed.contains(&set)
}

/// Append to `out` the candidates `find(index, item, found, scratch)` finds for each of
/// `items`, run on the pool's threads in chunks of [`GATHER_CHUNK`] (each with its own
/// scratch lists) and joined in item order, so the list (and every row made from it) is
/// the same on any number of threads.
fn gather_in_order<T: Sync>(
    items: &[T],
    out: &mut Vec<Candidate>,
    find: impl Fn(usize, &T, &mut Vec<Candidate>, &mut [Vec<u32>; 4]) + Sync,
) {
    let chunks: Vec<Vec<Candidate>> = items
        .par_chunks(GATHER_CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut found = Vec::new();
            let mut scratch = Default::default();
            for (k, item) in chunk.iter().enumerate() {
                find(c * GATHER_CHUNK + k, item, &mut found, &mut scratch);
            }
            found
        })
        .collect();
    for c in chunks {
        out.extend(c);
    }
}

/// Relative strain of edge `e` with rest length `rest` at `x`.
fn strain_of(x: &[DVec3], e: [u32; 2], rest: f64) -> f64 {
    kernels::strain(x[e[0] as usize].distance(x[e[1] as usize]), rest)
}

/// The mean of `x − reference` over the particles: the motion common to the whole cloth.
fn mean_displacement(x: &[DVec3], reference: &[DVec3]) -> DVec3 {
    x.iter().zip(reference).map(|(a, b)| *a - *b).sum::<DVec3>() / x.len().max(1) as f64
}

/// The particles of an (edge, triangle) pair of the lips, sorted.
fn lip_particles(l: &surface::LipPair) -> [u32; 5] {
    let mut p = [l.edge[0], l.edge[1], l.tri[0], l.tri[1], l.tri[2]];
    p.sort_unstable();
    p
}

/// The direction `n` along which moving an edge's end away from a triangle's corner
/// (the two copies of a particle, [`LIP_OPEN`]) keeps the edge out of the triangle to
/// first order: the edge leaves the end along `u`, the triangle the corner along `v` and
/// `w`, and the edge passes through the triangle exactly when the end's offset from the
/// corner lies in the cone of `v`, `w` and `−u`. The `n` that best separates that cone
/// (n·u ≥ m, n·v ≤ −m, n·w ≤ −m, m largest) is the direction of the point of the triangle
/// (u, −v, −w) nearest the origin; where that is the origin — the edge along one of the
/// triangle's sides, as between the two lips of one cut edge — the separating direction
/// with m = 0 square to that side, if there is one.
pub fn lip_normal(u: DVec3, v: DVec3, w: DVec3) -> Option<DVec3> {
    let g = [
        u.normalize_or_zero(),
        -v.normalize_or_zero(),
        -w.normalize_or_zero(),
    ];
    if g.contains(&DVec3::ZERO) {
        return None;
    }
    let margin = |n: DVec3| g.iter().map(|x| n.dot(*x)).fold(f64::INFINITY, f64::min);
    let (c, _) = narrow::closest_on_triangle(DVec3::ZERO, g[0], g[1], g[2]);
    if c.is_finite() && c.length() > 1e-6 {
        return Some(c.normalize());
    }
    let mut best: Option<(f64, DVec3)> = None;
    for i in 0..3 {
        for k in 0..3 {
            if k == i {
                continue;
            }
            let n = (g[k] - g[i] * g[k].dot(g[i])).normalize_or_zero();
            let m = margin(n);
            if n != DVec3::ZERO && m >= -1e-9 && best.is_none_or(|(b, _)| m > b) {
                best = Some((m, n));
            }
        }
    }
    best.map(|(_, n)| n)
}

/// Whether a candidate `p` with start distance `d0` is left out of the fail-safe
/// ([`Candidate::tangled`]): it holds a particle of a crossing at the last count, or it
/// starts pressed on its other feature (closer than `pressed`, which is 0 unless the
/// layers are ordered, [`SelfContact::pressed`]).
fn out_of_fail_safe(tangled: &[bool], p: &[u32; 4], d0: f64, pressed: f64) -> bool {
    p.iter().any(|&i| tangled[i as usize]) || d0 < pressed
}

/// The row of a pair found at time `t` of its swept motion `s`: the closest points of the
/// two features at the step's start and the direction between them (Bridson et al. 2002's
/// proximity normal: a separating direction of the state the step starts from, which is
/// intersection-free), so a row never asks a vertex to pass to the other side of a sheet
/// it has not crossed. Only where the features touch at the start does the row take the
/// normal of the plane the four points share at `t`, turned to the side the first feature
/// started on.
///
/// `lip`: a pair of the lips of a cut ([`LIP_OPEN`]) gets an edge–edge row wherever its
/// closest points lie, since the vertex–triangle pair that would keep it apart may be one
/// of copies still together, which has none.
///
/// `side`: the side of the triangle's winding its layer lies on, while the cloth is
/// untangling ([`SelfContact::order_pressed_layers`]). A vertex over the triangle's inside
/// and nearer its plane than the gap, or one pressed flat on it anywhere (within
/// [`PRESSED`] × the gap), gets its row along the triangle's normal on that side — the
/// closest points of layers pressed flat give a direction of round-off, which pointed half
/// of a fold's flap down through the sheet; an edge–edge pair pressed flat gets no row
/// (the vertex–triangle rows of two coplanar layers keep them apart).
fn make_row(
    kind: PairKind,
    p: [u32; 4],
    s: &Swept,
    t: f64,
    gap: f64,
    lip: bool,
    side: Option<f64>,
) -> Option<SelfRow> {
    let x0 = &s.x0;
    let weights = |x: &[DVec3; 4]| match kind {
        PairKind::VertexTriangle => {
            let (_, beta) = narrow::closest_on_triangle(x[0], x[1], x[2], x[3]);
            [1.0, -beta[0], -beta[1], -beta[2]]
        }
        PairKind::EdgeEdge => {
            let (s1, t1) = narrow::closest_segments(x[0], x[1], x[2], x[3]);
            [1.0 - s1, s1, -(1.0 - t1), -t1]
        }
    };
    let sep = |w: &[f64; 4], x: &[DVec3; 4]| -> DVec3 { (0..4).map(|k| x[k] * w[k]).sum() };
    let w = weights(x0);
    let d = sep(&w, x0);
    if let Some(side) = side {
        let pressed = d.length() < PRESSED * gap;
        if kind == PairKind::EdgeEdge {
            if pressed {
                return None;
            }
        } else {
            let normal = (x0[2] - x0[1]).cross(x0[3] - x0[1]).normalize_or_zero();
            let inside = w[1..].iter().all(|&b| b < -1e-3);
            if normal != DVec3::ZERO && ((inside && d.dot(normal).abs() < gap) || pressed) {
                return Some(SelfRow {
                    p,
                    w,
                    n: normal * side,
                    gap,
                });
            }
        }
    }
    if kind == PairKind::EdgeEdge && d.length() > 1e-9 && w.contains(&0.0) && !lip {
        // The closest points are an end of an edge: that particle is at least as close to
        // a triangle the other edge bounds, whose vertex–triangle row keeps the pair
        // apart. Only edges whose closest points lie inside both (edges crossing at an
        // angle) need an edge–edge row — in layers pressed together the others were most
        // rows.
        return None;
    }
    if d.length() > 1e-9 {
        let n = d.normalize();
        return n.is_finite().then_some(SelfRow { p, w, n, gap });
    }
    let at: [DVec3; 4] = std::array::from_fn(|k| x0[k].lerp(s.x1[k], t));
    let plane = match kind {
        PairKind::VertexTriangle => (at[2] - at[1]).cross(at[3] - at[1]),
        PairKind::EdgeEdge => (at[1] - at[0]).cross(at[3] - at[2]),
    };
    let n = plane.normalize_or_zero();
    let n = if n.dot(d) < 0.0 { -n } else { n };
    (n != DVec3::ZERO && n.is_finite()).then_some(SelfRow { p, w, n, gap })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn still(x: [DVec3; 4]) -> Swept {
        Swept { x0: x, x1: x }
    }

    /// An `n`×`n` grid folded in two, the far half 3 mm over the near one.
    fn folded_grid(n: usize) -> Cloth {
        use crate::sim::cloth::GridSpec;
        let mut cloth = Cloth::grid(&GridSpec {
            width: n,
            height: n,
            ..GridSpec::default()
        })
        .unwrap();
        let xs: Vec<f64> = cloth.particles.x.iter().map(|p| p.x).collect();
        let mid = 0.5
            * (xs.iter().cloned().fold(f64::MAX, f64::min)
                + xs.iter().cloned().fold(f64::MIN, f64::max));
        for (i, p) in cloth.particles.x.iter_mut().enumerate() {
            if i % n >= n / 2 {
                p.x = 2.0 * mid - p.x + 0.01;
                p.y += 0.003;
            }
        }
        cloth
    }

    /// The pairs found around a few particles that strayed (the fail-safe's rounds that
    /// moved only the particles they merged) are exactly the pairs a whole gather finds
    /// that hold one of them: none missed, none extra, each with the same key and start
    /// distance.
    #[test]
    fn pairs_found_around_strayed_particles_are_the_whole_gathers_own() {
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        let cloth = folded_grid(12);
        let mut sc = SelfContact::default();
        sc.begin(&cloth);
        let n = cloth.len();
        let mut rng = ChaCha8Rng::seed_from_u64(0x1234_5678);
        let mut rand = || rng.random::<f64>();
        let x1: Vec<DVec3> = cloth
            .particles
            .x
            .iter()
            .map(|p| *p + DVec3::new(rand() - 0.5, rand() - 0.5, rand() - 0.5) * 0.02)
            .collect();
        let near: Vec<bool> = (0..n).map(|_| rand() < 0.1).collect();
        let inv_mass = cloth.particles.inv_mass.clone();
        let margin = 0.02;
        let mut all = Vec::new();
        assert!(sc.find_pairs(&x1, &inv_mass, margin, None, &mut all, &mut Vec::new()));
        let mut some = Vec::new();
        assert!(sc.find_pairs(
            &x1,
            &inv_mass,
            margin,
            Some(&near),
            &mut some,
            &mut Vec::new()
        ));
        let key_of = |c: &Candidate| (c.key, c.d0.to_bits());
        let mut want: Vec<_> = all
            .iter()
            .filter(|c| c.p.iter().any(|&i| near[i as usize]))
            .map(key_of)
            .collect();
        let mut got: Vec<_> = some.iter().map(key_of).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert!(
            want.len() > 100,
            "the fold gives pairs to find: {}",
            want.len()
        );
        assert!(
            all.len() > 2 * want.len(),
            "the marked are a part: {}",
            all.len()
        );
        let missing: Vec<_> = want.iter().filter(|k| !got.contains(k)).collect();
        let extra: Vec<_> = got.iter().filter(|k| !want.contains(k)).collect();
        assert!(
            missing.is_empty() && extra.is_empty() && got.len() == want.len(),
            "{} found of {}: missing {:?}, extra {:?}",
            got.len(),
            want.len(),
            &missing[..missing.len().min(5)],
            &extra[..extra.len().min(5)]
        );
    }

    /// A second detection in a step, where a few particles strayed beyond what the first
    /// gather covers, gathers only the pairs around them ([`SelfContact::gather_strayed`])
    /// and makes exactly the rows a whole gather makes; so does a third that strays
    /// within the margins it left.
    #[test]
    fn a_gather_around_strayed_particles_makes_the_rows_of_a_whole_one() {
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        let cloth = folded_grid(16);
        let n = cloth.len();
        let inv_mass = cloth.particles.inv_mass.clone();
        let thickness = 0.004;
        let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
        let mut rand = || rng.random::<f64>();
        let mut sc = SelfContact::default();
        sc.begin(&cloth);
        let x1: Vec<DVec3> = cloth
            .particles
            .x
            .iter()
            .map(|p| *p + DVec3::new(rand() - 0.5, rand() - 0.5, rand() - 0.5) * 1e-3)
            .collect();
        sc.detect(&x1, &inv_mass, thickness);
        assert_eq!((sc.gathers(), sc.regathers()), (1, 0));
        // A tenth of the particles slide 2 cm along the sheet, half one way and half the
        // other, over triangles of the other layer their first gather did not pair them
        // with; the others stay (nearly still in the frame of the mean motion, which the
        // gather takes out).
        let moved: Vec<bool> = (0..n).map(|_| rand() < 0.1).collect();
        let mut sign = 1.0;
        let x2: Vec<DVec3> = (0..n)
            .map(|i| {
                if !moved[i] {
                    return x1[i];
                }
                sign = -sign;
                x1[i] + sign * DVec3::new(0.02, 0.0, 0.01)
            })
            .collect();
        let x3: Vec<DVec3> = x2
            .iter()
            .map(|p| *p + DVec3::new(rand() - 0.5, rand() - 0.5, rand() - 0.5) * 1e-4)
            .collect();
        let mut whole = sc.clone();
        let added = sc.detect(&x2, &inv_mass, thickness);
        assert_eq!(
            (sc.gathers(), sc.regathers()),
            (1, 1),
            "only around the strayed"
        );
        whole.forget_candidates();
        assert_eq!(whole.detect(&x2, &inv_mass, thickness), added);
        assert_eq!(whole.gathers(), 2);
        assert!(
            added > 10,
            "the slide brings new pairs within reach: {added}"
        );
        assert_eq!(sc.rows, whole.rows);
        // Within the margins the gather around the strayed left: no gather at all.
        sc.detect(&x3, &inv_mass, thickness);
        assert_eq!((sc.gathers(), sc.regathers()), (1, 1));
        whole.forget_candidates();
        whole.detect(&x3, &inv_mass, thickness);
        assert_eq!(sc.rows, whole.rows);
    }

    /// The least distance of a pair over the straight sweep from `x0` to `x1`, sampled.
    fn sweep_distance(kind: PairKind, p: &[u32; 4], x0: &[DVec3], x1: &[DVec3]) -> f64 {
        (0..=64)
            .map(|k| {
                let t = f64::from(k) / 64.0;
                let x = p.map(|i| x0[i as usize].lerp(x1[i as usize], t));
                narrow::pair_distance(kind, &x)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Every pair of features (sharing no particle) that comes within the margin the gather
    /// reports on its sweep is a candidate, with the patches culled: on a flat sheet, a
    /// bent one, a fold, a sheet sheared and squashed flat over the step (where a vertex
    /// comes onto its opposite diagonal without any curvature), and a cut sheet whose lips
    /// part. Where the patches cull, the gather finds fewer pairs than without them.
    #[test]
    fn the_patches_never_cull_a_pair_that_comes_within_the_margin() {
        use crate::sim::cloth::GridSpec;
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        let (w, h) = (14, 14);
        let grid = Cloth::grid(&GridSpec {
            width: w,
            height: h,
            size: 0.25,
            ..GridSpec::default()
        })
        .unwrap();
        let spacing = 0.25 / (w - 1) as f64;
        let rest = grid.particles.x.clone();
        // From the sheet's edge into it: the nodes that hold the slit are disks.
        let cut_pairs: Vec<[u32; 2]> = (0..8)
            .map(|r| [(r * w + 7) as u32, ((r + 1) * w + 7) as u32])
            .collect();
        let (cut, _) = crate::sim::mesh::tear::cut(&grid, &cut_pairs).expect("a cut");
        let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
        let mut jitter = |amount: f64| {
            DVec3::new(rng.random(), rng.random(), rng.random()) * amount
                - DVec3::splat(0.5 * amount)
        };
        type Shape = Box<dyn Fn(usize, DVec3) -> DVec3>;
        let lo = rest.iter().fold(DVec3::MAX, |a, b| a.min(*b));
        // Rolled about an axis along x, by `turn` over the sheet (in the x–z plane).
        let bend = move |turn: f64| -> Shape {
            Box::new(move |_, p: DVec3| {
                let r = 0.25 / turn;
                let a = (p.z - lo.z) / r;
                DVec3::new(p.x, p.y + r * (1.0 - a.cos()), lo.z + r * a.sin())
            })
        };
        let (bent, bent_more) = (bend(0.6), bend(0.7));
        let fold: Shape = Box::new(move |i, p: DVec3| {
            if i % w >= w / 2 {
                let mid = lo.x + 0.125;
                DVec3::new(2.0 * mid - p.x + 0.003, p.y + 0.004, p.z)
            } else {
                p
            }
        });
        let shear: Shape = Box::new(move |_, p: DVec3| {
            DVec3::new(p.x + 1.2 * (p.z - lo.z), p.y, lo.z + 0.25 * (p.z - lo.z))
        });
        let flat: Shape = Box::new(|_, p| p);
        // (cloth, start shape, end shape, jitter, whether the patches must cull)
        let cases: Vec<(&str, &Cloth, &Shape, &Shape, f64, bool)> = vec![
            ("flat", &grid, &flat, &flat, 0.05 * spacing, true),
            ("bent", &grid, &bent, &bent_more, 0.05 * spacing, true),
            ("fold", &grid, &fold, &fold, 0.2 * spacing, false),
            ("sheared flat", &grid, &flat, &shear, 0.0, false),
            ("cut", &cut, &flat, &flat, 0.02 * spacing, false),
        ];
        for (name, cloth, start, end, amount, culls) in cases {
            let mut cloth = cloth.clone();
            for (i, p) in cloth.particles.x.iter_mut().enumerate() {
                *p = start(i, *p);
            }
            let x1: Vec<DVec3> = cloth
                .particles
                .x
                .iter()
                .enumerate()
                .map(|(i, p)| end(i, *p) - start(i, *p) + *p + jitter(amount))
                .collect();
            let inv_mass = cloth.particles.inv_mass.clone();
            let margin = 0.02;
            let mut sc = SelfContact::default();
            sc.begin(&cloth);
            // Without the detection's reach the patches cull nothing: the whole list.
            let mut unculled = 0;
            for hint in [0.0, 0.006] {
                sc.thickness_hint = hint;
                sc.gather(&x1, &inv_mass, margin);
                if hint == 0.0 {
                    unculled = sc.candidates.len();
                    assert!(sc.margins.iter().all(|&m| m == margin));
                }
                let margins = sc.margins.clone();
                let least = margins.iter().copied().fold(margin, f64::min);
                assert!(hint == 0.0 || least >= CULL_LEAST * hint, "{name}: {least}");
                let keys: HashSet<u64> = sc.candidates.iter().map(|c| c.key).collect();
                let x0 = &cloth.particles.x;
                let s = sc.surface.clone();
                let mut within = 0;
                let mut missed = Vec::new();
                let mut check = |kind: PairKind, p: [u32; 4], key: u64| {
                    if p.iter().all(|&i| inv_mass[i as usize] == 0.0) {
                        return;
                    }
                    // A pair closer than the margin of one of its particles is a candidate.
                    let covered = p.iter().map(|&i| margins[i as usize]).fold(0.0, f64::max);
                    if sweep_distance(kind, &p, x0, &x1) <= covered {
                        within += 1;
                        if !keys.contains(&key) {
                            missed.push(p);
                        }
                    }
                };
                for v in 0..cloth.len() as u32 {
                    for (t, tri) in s.triangles.iter().enumerate() {
                        if s.shared(&[v], tri) != Shared::Particle {
                            let key = (u64::from(v) << 32) | t as u64;
                            check(PairKind::VertexTriangle, [v, tri[0], tri[1], tri[2]], key);
                        }
                    }
                }
                for i in 0..s.edges.len() {
                    for j in i + 1..s.edges.len() {
                        let (e, f) = (s.edges[i], s.edges[j]);
                        if s.shared(&e, &f) != Shared::Particle {
                            let key = (1 << 63) | ((i as u64) << 32) | j as u64;
                            check(PairKind::EdgeEdge, [e[0], e[1], f[0], f[1]], key);
                        }
                    }
                }
                assert!(
                    missed.is_empty(),
                    "{name}: {} of {within} pairs within their margins missed: {:?}",
                    missed.len(),
                    &missed[..missed.len().min(5)]
                );
                if culls && hint > 0.0 {
                    assert!(
                        2 * sc.candidates.len() < unculled && least < margin,
                        "{name}: the patches cull: {} of {unculled}",
                        sc.candidates.len()
                    );
                } else {
                    assert!(within > 0, "{name}: pairs come within the margin");
                }
            }
        }
    }

    /// The row of four particles at rest at `x`, with a 4 mm gap.
    fn row_of(kind: PairKind, x: [DVec3; 4], lip: bool) -> Option<SelfRow> {
        make_row(kind, [0, 1, 2, 3], &still(x), 0.0, 0.004, lip, None)
    }

    /// Two edges crossing at an angle 3 mm apart get an edge–edge row along the line
    /// between them; one whose closest point is an end of an edge gets none (the vertex
    /// there is as close to a triangle the other edge bounds).
    #[test]
    fn edge_edge_rows_only_where_the_closest_points_are_inside_both_edges() {
        let v = DVec3::new;
        let crossing = [
            v(-1.0, 0.003, 0.0),
            v(1.0, 0.003, 0.0),
            v(0.0, 0.0, -1.0),
            v(0.0, 0.0, 1.0),
        ];
        let row = row_of(PairKind::EdgeEdge, crossing, false).expect("crossing edges get a row");
        assert!((row.n - DVec3::Y).length() < 1e-12);
        assert!(row.w.iter().all(|&w| w != 0.0));
        assert!(row.w.iter().sum::<f64>().abs() < 1e-12);
        let end_on = [
            v(0.0, 0.003, 0.0),
            v(1.0, 0.003, 0.0),
            v(0.0, 0.0, -1.0),
            v(0.0, 0.0, 1.0),
        ];
        // Its end (0, 0.003, 0) is the closest point: no edge–edge row.
        assert!(row_of(PairKind::EdgeEdge, end_on, false).is_none());
        // A vertex over a triangle keeps its row.
        let over = [
            v(0.2, 0.003, 0.2),
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.0, 0.0, 1.0),
        ];
        assert!(row_of(PairKind::VertexTriangle, over, false).is_some());
        // Between the lips of a cut, the end-on pair gets its row.
        assert!(row_of(PairKind::EdgeEdge, end_on, true).is_some());
    }

    /// Whether the segment from `a + d` along `u` passes through the triangle at `b = 0`
    /// spanned by `v` and `w` (the test's own check, by sampling the segment near its
    /// start against the triangle's plane and sides).
    fn pierces(d: DVec3, u: DVec3, v: DVec3, w: DVec3) -> bool {
        let (p, q) = (d, d + u);
        narrow::segment_crosses_triangle(p, q, DVec3::ZERO, v, w)
    }

    /// The direction that opens two copies keeps an edge out of a triangle: an offset
    /// along it (and any offset within a right angle of it, for an edge leaving at an
    /// angle) never makes the edge pass through the triangle, while the opposite offset
    /// does where the edge folds over the triangle; for the two lips of one edge it is
    /// square to that edge, in the triangle's plane, away from the triangle.
    #[test]
    fn the_lip_normal_opens_the_copies_without_a_crossing() {
        let v = DVec3::new;
        // Flat: the edge leaves upwards, the triangle lies below the cut.
        let (u, a, b) = (v(0.0, 1.0, 0.0), v(1.0, -1.0, 0.0), v(0.0, -1.0, 0.0));
        let n = lip_normal(u, a, b).unwrap();
        assert!(n.dot(u) > 0.5 && n.dot(a) < 0.0 && n.dot(b) < 0.0, "{n}");
        // Folded: the edge lies over the triangle, a little above its plane.
        let u = v(0.3, -1.0, 0.05);
        let n = lip_normal(u, a, b).unwrap();
        assert!(n.dot(u) > 0.0 && n.dot(a) < 0.0 && n.dot(b) < 0.0, "{n}");
        assert!(
            n.z > 0.9,
            "the fold opens out of the plane, to the edge's side: {n}"
        );
        for k in 1..=4 {
            let d = 1e-3 * k as f64;
            assert!(!pierces(n * d, u, a, b), "along n by {d}");
        }
        assert!(
            pierces(-n * 1e-3, u, a, b),
            "the other way the edge passes through"
        );
        // The two lips of one edge: the edge runs along the triangle's side.
        let (side, below) = (v(1.0, 0.0, 0.0), v(0.5, -1.0, 0.0));
        let n = lip_normal(side, side, below).unwrap();
        assert!((n - v(0.0, 1.0, 0.0)).length() < 1e-12, "{n}");
        // No direction separates an edge that lies inside the triangle's wedge from it.
        assert!(lip_normal(v(0.5, -1.0, 0.0), a, b).is_none());
    }
}
