//! The user's grab: a hand that yields.
//!
//! A kinematic grab — the held particle goes wherever the cursor goes — makes the distance
//! constraints infeasible as soon as the cursor leaves the region the pinned cloth can
//! reach, and every solver then stretches the cloth (measured on the app's hanging cloth,
//! docs/results.md: strains of 8 to 26 with the held particle dragged 2 m below the pins).
//! Inextensible cloth must stop the hand instead. Two parts do that:
//!
//! 1. **The target is projected onto the pins' reach.** No state that meets the distance
//!    constraints puts a particle farther from a static particle than the shortest path of
//!    constraint edges between them, at rest length (on the grid: the Manhattan distance in
//!    spacings — the bar net shears freely, so the straight rest distance is not a bound).
//!    These are the long-range attachments of Kim, Chentanez and Müller (2012), used here to
//!    bound the hand: the target is moved into the intersection of the balls around every
//!    static particle with those radii ([`Reach`]). Where several pins pull against each
//!    other (the hanging cloth's two corners) the balls over-estimate the reach; where the
//!    cloth then stops the hand, the radii of the pins it pulls against are cut to just
//!    inside where it stopped ([`Reach::learn`]), so the hand rests with the cloth slightly
//!    slack instead of pressing it taut every step (a taut chain between two fixed ends
//!    makes the constraint problem degenerate, see [`super::taut`]).
//!    Where the pins pull against each other around the hand (the skirt's waist, a ring
//!    of pins) the balls can let it go where the cloth only follows taut, or not at all;
//!    a step of the hand's pull whose passes jumped beyond [`HAND_WORK`] sweeps, or ran to
//!    their cap, marks a stop there: the goal stays behind the plane across that
//!    motion until the target comes back behind it ([`Reach::stop`]), and a capped step is
//!    taken again with the stop in place ([`crate::sim::World`]'s hand yield).
//! 2. **The held particle is a heavy hand, not a static one.** Its mass becomes
//!    [`HAND_MASS_RATIO`] times the cloth's and its velocity is set each step so that the
//!    preview lands on the target; the distance constraints are solved with it like with any
//!    other particle. Pins have infinite mass, the hand only a large one, so wherever the
//!    balls of part 1 over-estimate the reach (several pins whose paths interact, such as the
//!    hanging cloth's two corners), the constraints hold the hand back rather than stretch:
//!    every impulse solver's problem stays feasible. Where the target is within reach, the
//!    hand gets there up to the cloth's pull on it: the tension T that the rest of the cloth
//!    puts on it moves it by h²·T/M per step (M = 10⁴ × the cloth's mass: for T = the
//!    cloth's weight h²·g/10⁴, 0.03 µm at h = 1/60 s; a drag that accelerates the cloth
//!    pulls harder, measured up to 1.4 mm at h = 0.05 s with M = 100 × the cloth's mass).
//!
//! 3. **A hand in self-contact is slowed** to what a step's linearised self-contact rows
//!    can resolve (docs/numerics.md, "Self-contact"): at most [`ROW_TRAVEL`] thicknesses a
//!    step after a step in which the held particle had a row, and [`CONTACT_TRAVEL`] from
//!    the step in which the fail-safe held it in a rigid zone until the hand has caught up
//!    with its goal ([`crate::sim::World::hand_bound`]).
//!
//! Pinned particles stay static when grabbed: they follow the (projected) target
//! kinematically, which is how a pin is moved.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;

use super::cloth::{CacheKey, Cloth};

/// Mass of the hand as a multiple of the cloth's total mass: large enough that the cloth's
/// pull moves it by a negligible h²·T/M per step (100 left 1.4 mm while a drag accelerated
/// a 10×10 cloth at h = 0.05 s), finite so that a pin (infinite mass) still wins every
/// contest: the hand's inverse mass is 10⁶ to 10⁸ times smaller than a particle's, well
/// inside double precision.
pub const HAND_MASS_RATIO: f64 = 1e4;

/// Most the hand moves a held particle per second, in cloth sizes
/// ([`crate::sim::cloth::Topology::rest_extent`]): a target the hand cannot reach in a step
/// is approached over several. Nothing bounds a free cloth's reach, and a free disc grabbed
/// 700 m away was carried there in one step and flew on at 42 km/s; every later step would
/// have travelled beyond the sane bound and was undone, the world stuck (tests/abuse.rs at
/// 400 sessions). 50 sizes a second is 0.8 of the cloth a step at 60 steps a second. The
/// app's drags move at most 5 m/s; the bench's drape, pile, tablecloth and skirt reach the
/// bound only where the hand catches up with a cursor that ran ahead while self-contact
/// bounded it ([`CONTACT_TRAVEL`]), 0.9–1.5 m in one step before, in 40–55 of 120 steps at
/// 30×30 (Newton steps a frame 13.0 → 13.3 on the drape, the others within 0.1).
pub const HAND_SPEED: f64 = 50.0;

/// Most the hand moves a held particle per step, in cloth thicknesses, from the step in
/// which the self-contact fail-safe holds it in a rigid zone until it has caught up with
/// its goal. Self-contact rows are linearised over the step and found by
/// continuous detection over its motion: a corner thrown at the sheet at 10 m/s (17 cm a
/// Newton step at 1/60 s, 40 thicknesses) left them short, and the fail-safe held 382 of
/// 400 particles as one rigid zone, pins included, in every step of the push — the cloth
/// froze while the hand pushed. Measured on that scene (tests/self_contact.rs): 2, 4 and 8
/// thicknesses a step carried the sheet down with no zone after the first contact step; 16
/// froze it again in 5 of the 8 steps that followed. 8 lets the hand move 1.9 m/s at 60
/// steps a second and the default 4 mm thickness; a row alone bounds it by [`ROW_TRAVEL`].
pub const CONTACT_TRAVEL: f64 = 8.0;

/// Most the hand moves a held particle in the step after one in which it had a
/// self-contact row, in cloth thicknesses: 2.9 m/s at 60 steps a second and the default
/// 4 mm. A hand pulling a wadded drape off the ball at 4–5 m/s pressed its layers into rows
/// and chains that fought for 25 Newton steps a frame. Measured (`bench app --far --only
/// "newton 1e-4" --steps 120`, self-collision on, interleaved in one binary): drape 30×30
/// 220 → 107 ms a frame (25.1 → 15.5 Newton steps), 50×50 1389 → 605; pile 30×30 82 → 73,
/// 50×50 662 → 611; the fold, hanging and curtain unchanged. 8 slowed the fold's corner
/// sliding over the sheet (10 → 42 ms at 30×30), 16 and 24 left the drape at 122–124 ms and
/// made the pile dearer (83–103 ms).
pub const ROW_TRAVEL: f64 = 12.0;

/// Relative shrink of the path lengths that bound the reach from outside. A goal on that
/// bound needs every edge of a path straight and taut — a bar net sheared flat, the
/// degenerate problem of the taut chains, where Gauss–Seidel and strips crawl and Newton
/// loses its quadratic rate — and a goal near it nearly so. Measured on the app's hanging
/// 30×30 with a drag 2 m beyond reach (240 frames of 1/60 s, tolerance 1e-4; margin
/// 1e-3 / 0.03 / 0.1 / 0.15 / 0.2): Newton 35 / 35 / 19 / 11 / 17 ms per frame, p95 213 /
/// 215 / 36 / 17 / 33 ms; strips capped in 108 / 108 / 27 / 0 / 0 frames. The hand stops
/// 4 cm higher with 0.15 than with 1e-3 (docs/numerics.md, "The grab yields").
pub const REACH_MARGIN: f64 = 0.15;

/// Relative shrink of the path lengths below which the hand never goes, whatever its
/// start: a particle that is farther than the [`REACH_MARGIN`] bound when it is grabbed
/// (a curtain's bottom row hangs straight below its pins, at its full path length) keeps
/// its distance as its bound, so the grab does not lift it, up to this margin (1 mm on a
/// 1 m curtain).
pub const STRAIGHT_MARGIN: f64 = 1e-3;

/// Relative set-back from where the cloth stopped the hand ([`Reach::learn`]): the hand
/// rests at 97 % of its distance from the pins it pulls against, where a chain of N edges
/// still sags by ≈ N·L·√(3·0.03/8) ≈ 10 % of its length and its tension stays finite.
/// Measured on the app's hanging 30×30 with a drag 2 m beyond reach (240 frames of 1/60 s,
/// tolerance 1e-4): a set-back of 1 % left strips capped at 20 000 sweeps in 28 frames
/// and Newton at 53 ms per frame; 3 % left 8 capped frames and 34 ms.
pub const SETBACK: f64 = 3e-2;

/// A step whose hand ends farther than this from its goal, relative to the cloth's
/// spacing, was stopped by the cloth (the pull of a reachable goal moves it by h²·T/M,
/// micrometres at most): its end position marks the edge of the reach ([`Reach::learn`]).
pub const BLOCKED: f64 = 1e-2;

/// Sweeps of a step's position passes ([`crate::sim::StepStats::position_sweeps`]) from
/// which a step of the hand's pull that also cost [`HAND_WORK_GROWTH`] times its usual is
/// taken to have pulled the cloth taut: the hand stops there ([`Reach::stop`]). Where the
/// balls let the hand go further than the cloth can follow, the passes get dearer step
/// after step as it nears that edge before they run to their cap — on the skirt's hem
/// pulled up to its waist, Newton's finishing sweeps went 150–240 a step, then 2 130,
/// 52 210 and the cap.
pub const HAND_WORK: u32 = 1_000;

/// How many times its usual cost (a running mean over the hand's steps) a step of the
/// hand's pull must cost to stop the hand ([`HAND_WORK`]): the iterative method needs
/// thousands of sweeps a step wherever it is, and only a jump tells the edge.
pub const HAND_WORK_GROWTH: f64 = 8.0;

/// How fast a learned radius grows back towards its path length, relative per second: a
/// hand that stopped pressing on the cloth probes again, a few percent at a time.
pub const RELAX_RATE: f64 = 0.1;

/// Rounds of cyclic projection onto the balls; what is left outside after them (the balls'
/// intersection is thin where two pins pull against each other) is for the hand's mass to
/// resolve.
const PROJECTION_ROUNDS: usize = 64;

/// A particle held by the user (001 §5 treats user-held nodes as constrained nodes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grab {
    /// The particle.
    pub particle: usize,
    /// Where the user wants it, m (the cursor). Where it is sent is this point projected
    /// onto the pins' reach ([`Reach::project`]).
    pub target: DVec3,
}

/// How far the held particle may be from each static particle: the length of the shortest
/// path of constraint edges between them at rest, and what the cloth has shown it allows.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// The cloth and particle the radii are for.
    key: Option<(CacheKey, usize)>,
    /// Static particles connected to the held one (the others do not bound it).
    anchors: Vec<Anchor>,
    /// The cloth's spacing (longest rest length), m: the scale of [`BLOCKED`].
    spacing: f64,
    /// Where the cloth stopped the hand in a direction the balls allow ([`Reach::stop`]),
    /// oldest first, at most [`MAX_STOPS`].
    stops: Vec<Stop>,
}

/// A half-space the hand is kept in: the cloth stopped it at `at` moving along `dir`
/// (unit), and the goal stays `depth` behind the plane through `at` across `dir`.
#[derive(Debug, Clone, Copy)]
struct Stop {
    at: DVec3,
    dir: DVec3,
    depth: f64,
}

impl Stop {
    /// How far `q` is beyond the allowed side, m (≤ 0 inside).
    fn excess(&self, q: DVec3) -> f64 {
        (q - self.at).dot(self.dir) + self.depth
    }
}

/// Most stops a hand remembers; the oldest is forgotten first.
pub const MAX_STOPS: usize = 8;

/// A static particle and how far from it the hand may go.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    particle: usize,
    /// Shortest path of constraint edges to the held particle at rest, m.
    path: f64,
    /// The radius the hand is kept within, m: [`Anchor::limit`], or less where the cloth
    /// stopped the hand ([`Reach::learn`]).
    radius: f64,
    /// The largest radius: the path × (1 − [`REACH_MARGIN`]), or the hand's distance when
    /// the radii were computed if that is more (at most the path × (1 −
    /// [`STRAIGHT_MARGIN`])).
    limit: f64,
}

impl Reach {
    /// Recompute the path lengths if the cloth's topology or static set or the held
    /// particle changed since the last call (the hand's distances from the anchors are
    /// taken at that moment, see [`STRAIGHT_MARGIN`]).
    pub fn update(&mut self, cloth: &Cloth, held: usize) {
        let key = (cloth.cache_key(), held);
        if self.key == Some(key) {
            return;
        }
        self.key = Some(key);
        self.spacing = cloth.topology.longest_rest();
        self.anchors.clear();
        self.stops.clear();
        let dist = path_lengths(cloth, held);
        let k = cloth.particles.inv_mass();
        let x = &cloth.particles.x;
        for (i, &d) in dist.iter().enumerate() {
            if i != held && k[i] == 0.0 && d.is_finite() {
                let now = x[held].distance(x[i]).min(d * (1.0 - STRAIGHT_MARGIN));
                let limit = (d * (1.0 - REACH_MARGIN)).max(now);
                self.anchors.push(Anchor {
                    particle: i,
                    path: d,
                    radius: limit,
                    limit,
                });
            }
        }
    }

    /// Static particles and their path lengths from the held particle, m.
    pub fn anchors(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.anchors.iter().map(|a| (a.particle, a.path))
    }

    /// The balls bound the reach from outside; where several pins pull against each other
    /// the true reach is smaller, and a goal between the two makes the hand press the cloth
    /// taut against the pins: feasible, but the degenerate problem the solvers crawl on
    /// ([`super::taut`]; measured: strips capped at 20 000 sweeps in every such step on
    /// the app's hanging cloth). So when the last step ended with the hand (at `x_end`)
    /// short of its goal by more than [`BLOCKED`] spacings, every anchor the hand was
    /// pulling away from has its radius cut to the hand's distance from it, less
    /// [`SETBACK`]: the hand then rests just inside the reach, the cloth slack by the
    /// margin, instead of pressing on it every step. Radii grow back by [`RELAX_RATE`] per
    /// second, so a held hand probes the edge again now and then. `x` holds the positions,
    /// `h` is the step that just ended.
    pub fn learn(&mut self, goal: DVec3, x: &[DVec3], held: usize, h: f64) {
        let grow = 1.0 + RELAX_RATE * h;
        for a in &mut self.anchors {
            a.radius = (a.radius * grow).min(a.limit);
        }
        let x_end = x[held];
        let short = goal - x_end;
        let gap = short.length();
        if gap.is_nan() || gap <= BLOCKED * self.spacing {
            return;
        }
        for a in &mut self.anchors {
            let out = x_end - x[a.particle];
            if short.dot(out) > 0.0 {
                a.radius = a.radius.min(out.length() * (1.0 - SETBACK));
            }
        }
    }

    /// Remember that the cloth stopped the hand at `at` (the held particle's position, the
    /// anchors' in `x`) when it was sent along `motion`: until the target comes back
    /// behind that plane, the goal stays `setback` times the hand's distance from its
    /// nearest anchor behind it — 0 where the passes only grew dear (the hand holds),
    /// [`SETBACK`] where they ran to their cap (the cloth is taut, and must go slack: a
    /// 3 % set-back after a pass that only grew dear left the flag's next step capped at
    /// 2.8e-3, its fold pressed by the hand's jump back). The balls cannot say this where
    /// the pins pull against each other around the hand (the skirt's waist, a ring of pins, with its hem pulled
    /// up to the waist's height: no pin's distance grows as it rises, and the cloth is
    /// still taut). Nothing is remembered without anchors (a free cloth cannot stop the
    /// hand) or without a motion.
    pub fn stop(&mut self, x: &[DVec3], at: DVec3, motion: DVec3, setback: f64) {
        let near = self
            .anchors
            .iter()
            .map(|a| at.distance(x[a.particle]))
            .fold(f64::INFINITY, f64::min);
        let len = motion.length();
        if !(near.is_finite() && len > 0.0 && len.is_finite()) {
            return;
        }
        if self.stops.len() == MAX_STOPS {
            self.stops.remove(0);
        }
        self.stops.push(Stop {
            at,
            dir: motion / len,
            depth: setback * near,
        });
    }

    /// Forget the stops the target has come back behind: the user pulled the hand back,
    /// and it may go as far again.
    pub fn release_stops(&mut self, target: DVec3) {
        self.stops.retain(|s| s.excess(target) > 0.0);
    }

    /// Forget every stop: a new grab starts from what the balls allow.
    pub fn forget_stops(&mut self) {
        self.stops.clear();
    }

    /// Stops remembered ([`Reach::stop`]).
    pub fn stops(&self) -> usize {
        self.stops.len()
    }

    /// `target` moved into the intersection of the balls around every anchor (at its
    /// position in `x`) and behind every stop ([`Reach::stop`]), by cyclic projection.
    /// Unchanged when it is inside already. Where the balls barely meet or not at all — a
    /// particle on a chain pulled straight between two static ones, whose radii, cut by the margins, sum to less than the distance
    /// between their centres — the projection ends outside one of them; the goal is then
    /// the farthest point towards it from `from` (the held particle's position) that
    /// takes the hand no farther from any anchor than its radius or than it already is.
    /// A held pin, moved kinematically, would otherwise be put beyond the cloth's reach,
    /// stretching it where no solver can shorten it.
    pub fn project(&self, x: &[DVec3], from: DVec3, target: DVec3) -> DVec3 {
        let mut p = target;
        for _ in 0..PROJECTION_ROUNDS {
            let mut moved = false;
            for a in &self.anchors {
                let c = x[a.particle];
                let off = p - c;
                let len = off.length();
                if len > a.radius {
                    p = c + off * (a.radius / len);
                    moved = true;
                }
            }
            for s in &self.stops {
                let e = s.excess(p);
                if e > 0.0 {
                    p -= s.dir * e;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        let allowed = |q: DVec3| {
            self.anchors.iter().all(|a| {
                let c = x[a.particle];
                q.distance(c) <= a.radius.max(from.distance(c)) * (1.0 + 1e-12)
            }) && self
                .stops
                .iter()
                .all(|s| s.excess(q) <= s.excess(from).max(0.0) + 1e-12 * s.depth)
        };
        if allowed(p) || !allowed(from) {
            return p;
        }
        // Each anchor allows an interval of the segment that holds `from` (the distance
        // to a point is convex along a line), so the allowed part is [from, from + t·d].
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..48 {
            let mid = 0.5 * (lo + hi);
            if allowed(from.lerp(p, mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        from.lerp(p, lo)
    }
}

/// Length of the shortest path of constraint edges (at rest length) from `from` to every
/// particle; infinite where there is none. Paths do not pass through static particles: a
/// pin bounds what lies beyond it by itself.
pub fn path_lengths(cloth: &Cloth, from: usize) -> Vec<f64> {
    let t = &cloth.topology;
    let n = cloth.len();
    let k = cloth.particles.inv_mass();
    // Adjacency in compressed rows.
    let mut start = vec![0u32; n + 1];
    for e in &t.edges {
        start[e[0] as usize + 1] += 1;
        start[e[1] as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![(0u32, 0.0f64); 2 * t.edges.len()];
    for (e, &[a, b]) in t.edges.iter().enumerate() {
        let r = t.rest[e];
        adj[fill[a as usize] as usize] = (b, r);
        fill[a as usize] += 1;
        adj[fill[b as usize] as usize] = (a, r);
        fill[b as usize] += 1;
    }
    let mut dist = vec![f64::INFINITY; n];
    let mut heap = BinaryHeap::new();
    dist[from] = 0.0;
    heap.push(Entry(0.0, from));
    while let Some(Entry(d, i)) = heap.pop() {
        if d > dist[i] || (i != from && k[i] == 0.0) {
            continue;
        }
        for &(j, r) in &adj[start[i] as usize..start[i + 1] as usize] {
            let j = j as usize;
            let nd = d + r;
            if nd < dist[j] {
                dist[j] = nd;
                heap.push(Entry(nd, j));
            }
        }
    }
    dist
}

/// A heap entry ordered by smallest distance first.
#[derive(PartialEq)]
struct Entry(f64, usize);

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::cloth::GridSpec;

    fn grid(w: usize, h: usize) -> Cloth {
        Cloth::grid(&GridSpec {
            width: w,
            height: h,
            ..GridSpec::default()
        })
        .unwrap()
    }

    #[test]
    fn path_lengths_are_manhattan_on_the_grid() {
        let mut c = grid(7, 5);
        let l = c.topology.rest[0];
        let d = path_lengths(&c, 0);
        for r in 0..5 {
            for col in 0..7 {
                let want = (r + col) as f64 * l;
                assert!((d[r * 7 + col] - want).abs() < 1e-12 * want.max(1.0));
            }
        }
        // A static particle blocks paths through it: with the whole column 3 pinned, the
        // far side is unreachable except through the pins themselves.
        for r in 0..5 {
            c.set_pinned(r * 7 + 3, true).unwrap();
        }
        let d = path_lengths(&c, 0);
        assert!(d[3].is_finite() && d[4].is_infinite());
    }

    /// A 10×10 grid pinned at its two top corners, its bottom row's middle held.
    fn two_pins() -> (Cloth, Reach, usize) {
        let mut c = grid(10, 10);
        c.set_pinned(0, true).unwrap();
        c.set_pinned(9, true).unwrap();
        let held = 95;
        let mut reach = Reach::default();
        reach.update(&c, held);
        (c, reach, held)
    }

    #[test]
    fn projection_lands_inside_every_ball_and_keeps_reachable_targets() {
        let (c, reach, held) = two_pins();
        assert_eq!(reach.anchors().count(), 2);
        let x = &c.particles.x;
        let near = x[held] + DVec3::new(0.0, 0.0, 0.01);
        assert_eq!(reach.project(x, x[held], near), near);
        let far = x[held] + DVec3::new(0.0, -5.0, 3.0);
        let p = reach.project(x, x[held], far);
        for (i, d) in reach.anchors() {
            assert!(p.distance(x[i]) <= d * (1.0 - REACH_MARGIN) * (1.0 + 1e-9));
        }
        assert!(p.distance(far) > 4.0);
    }

    #[test]
    fn a_stop_keeps_the_goal_behind_it_until_the_target_comes_back() {
        let (c, mut reach, held) = two_pins();
        let x = &c.particles.x;
        let at = x[held];
        let up = DVec3::new(0.0, 0.05, 0.0);
        let near = at.distance(x[0]).min(at.distance(x[9]));
        reach.stop(x, at, up, SETBACK);
        assert_eq!(reach.stops(), 1);
        // A target straight on along the stopped motion ends SETBACK × the nearest
        // anchor's distance behind where the hand stopped; sideways it may slide.
        let on = reach.project(x, at, at + 2.0 * up);
        assert!(
            (on - at).dot(up.normalize()) <= -SETBACK * near * (1.0 - 1e-9),
            "{on} not behind {at}"
        );
        let side = DVec3::new(0.05, -0.1, 0.0);
        let p = reach.project(x, at, at + side);
        assert!((p - (at + side)).length() < 1e-12, "{p}");
        // Still pulling: the stop stays. Brought back behind it: forgotten.
        reach.release_stops(at + up);
        assert_eq!(reach.stops(), 1);
        reach.release_stops(at - up);
        assert_eq!(reach.stops(), 0);
        reach.stop(x, at, up, SETBACK);
        reach.forget_stops();
        assert_eq!(reach.stops(), 0);
        // No motion, or a free cloth: nothing is remembered.
        reach.stop(x, at, DVec3::ZERO, SETBACK);
        assert_eq!(reach.stops(), 0);
        let mut free = Reach::default();
        free.update(&grid(4, 4), 5);
        free.stop(&grid(4, 4).particles.x, at, up, SETBACK);
        assert_eq!(free.stops(), 0);
    }

    #[test]
    fn a_particle_grabbed_at_its_full_reach_is_not_lifted() {
        // Column 0 of a flat grid is a straight chain below its pin: particle 90 is at its
        // full path length from it, beyond the REACH_MARGIN bound.
        let mut c = grid(10, 10);
        c.set_pinned(0, true).unwrap();
        let held = 90;
        let mut reach = Reach::default();
        reach.update(&c, held);
        let x = &c.particles.x;
        let path = reach.anchors().next().unwrap().1;
        assert!((x[held].distance(x[0]) - path).abs() < 1e-12);
        let moved = reach.project(x, x[held], x[held]).distance(x[held]);
        assert!(
            moved <= path * STRAIGHT_MARGIN * (1.0 + 1e-9),
            "lifted by {moved}"
        );
        // Pulled farther, it stays at that distance.
        let p = reach.project(x, x[held], x[held] + (x[held] - x[0]));
        assert!(p.distance(x[0]) <= path * (1.0 - STRAIGHT_MARGIN) * (1.0 + 1e-9));
    }
}
