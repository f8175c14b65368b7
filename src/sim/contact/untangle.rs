//! Untangling a cloth that passes through itself (docs/numerics.md, "Untangling"): the
//! layers that lie on each other ordered by a vote of their components, and the crossing
//! pairs pushed apart within the tolerance (Baraff, Witkin & Kass 2003, "Untangling
//! cloth", push the regions that cross apart; here each crossing pair, from the rings
//! around it). [`SelfContact::check_crossings`] decides when the cloth is untangling.

use std::collections::HashSet;

use glam::DVec3;

use super::narrow::{self, PairKind};
use super::{Candidate, SelfContact};

/// Times an untangling push is halved before it is given up ([`SelfContact::untangle`]).
const UNTANGLE_HALVINGS: u32 = 12;

impl SelfContact {
    /// The order of layers that lie on each other while the cloth is untangling: the
    /// vertex–triangle candidates within the gap at the step's start join their particles
    /// into components (an overlap of two layers each), and each component votes which
    /// side of a triangle's winding its vertices lie on, each pair weighed by how far off
    /// the plane it lies — pairs pressed flat, whose side is round-off, weigh nothing, and
    /// the pairs clearly apart decide for them ([`make_row`] turns their rows that way).
    pub(super) fn order_pressed_layers(&mut self, gap: f64) {
        let n = self.x0.len();
        self.layers.reset(n);
        let x0 = &self.x0;
        for c in &self.candidates {
            if c.kind == PairKind::VertexTriangle && c.d0 < gap && !c.lip {
                for k in 1..4 {
                    self.layers.union(c.p[0], c.p[k]);
                }
            }
        }
        self.side.clear();
        self.side.resize(n, 0.0);
        for c in &self.candidates {
            if c.kind != PairKind::VertexTriangle || c.d0 >= gap || c.lip {
                continue;
            }
            let r = self.layers.root(c.p[0]) as usize;
            self.side[r] += off_plane(x0, &c.p);
        }
        for s in self.side.iter_mut().filter(|s| **s != 0.0) {
            *s = s.signum();
        }
    }

    /// Start a tangled step's untangling (Baraff, Witkin & Kass 2003, "Untangling cloth",
    /// pushes the regions that cross apart; here each crossing pair, from the rings around
    /// it): the end of each crossing edge that lies on the other side of the crossed
    /// triangle's plane from most of the edge's first two rings moves to their side, to
    /// half the gap past the plane and at most the gap, and the triangle's corners a
    /// quarter of the gap the other way. Each particle's push is halved until no
    /// constraint at it (`cloth_edges`) is longer than the tolerance allows or than it
    /// was, so a push never leaves a stretch the step's solve would have to take back;
    /// a particle in a zone of the last step is not pushed (a zone keeps the lengths it
    /// starts with). Moves `x` and the step's start positions alike; returns how many
    /// particles moved. The gap is `thickness` capped ([`SelfContact::thickness`]). Also
    /// decides whether this step orders pressed layers ([`SelfContact::untangling`]). The
    /// step whose tangle was found at its own start (self-collision just turned on) only
    /// orders them: pushed at once as well, the fold kept crossings for 4 steps instead of
    /// 1 (19 at most against 16). Once a step's pushes left as many crossings as they
    /// found, the clusters whose halves can be told apart are carried back instead
    /// (`SelfContact::separate_halves`) until the cloth is clean.
    pub fn untangle(
        &mut self,
        cloth_edges: (&[[u32; 2]], &[f64]),
        x: &mut [DVec3],
        inv_mass: &[f64],
        thickness: f64,
        tolerance: f64,
    ) -> usize {
        self.ordering = self.untangling;
        let first = std::mem::take(&mut self.ordering_only);
        let n = x.len();
        if !self.ordering
            || first
            || self.crossing_pairs.is_empty()
            || n != self.surface.particles
            || self.x0.len() != n
        {
            if self.crossing_pairs.is_empty() {
                self.parting = Untangled::Not;
            }
            return 0;
        }
        let adjacent = incident(n, &self.surface.edges);
        let gap = self.thickness(thickness);
        // The halves only once a step's pushes left as many crossings as they found, and
        // from then on until the cloth is clean: on the fold's flap, pressed on the sheet,
        // the pushes and the order part every pair in one step, and the halves first
        // took two.
        let count = self.crossing_pairs.len();
        self.parting = match self.parting {
            Untangled::Pushed(c) if count >= c => Untangled::Halves,
            Untangled::Halves => Untangled::Halves,
            _ => Untangled::Pushed(count),
        };
        let (separated, handled) = if self.parting == Untangled::Halves {
            self.separate_halves(&adjacent, x, inv_mass, gap)
        } else {
            (0, vec![false; n])
        };
        let mut push = vec![DVec3::ZERO; n];
        let mut pushes = vec![0u32; n];
        for &(e, tri) in &self.crossing_pairs {
            if handled[e[0] as usize] {
                continue;
            }
            let [a, b, c] = tri.map(|i| x[i as usize]);
            let normal = (b - a).cross(c - a).normalize_or_zero();
            if normal == DVec3::ZERO {
                continue;
            }
            // The edge's first two rings, the triangle's corners left out, vote its side.
            let mut seen: HashSet<u32> = e.iter().chain(&tri).copied().collect();
            let mut ring: Vec<u32> = e.to_vec();
            let mut front = ring.clone();
            for _ in 0..2 {
                let mut next = Vec::new();
                for &i in &front {
                    let around = adjacent[i as usize].iter().map(|&(j, _)| j);
                    next.extend(around.filter(|&j| seen.insert(j)));
                }
                ring.extend_from_slice(&next);
                front = next;
            }
            let vote: f64 = ring
                .iter()
                .map(|&j| (x[j as usize] - a).dot(normal).signum())
                .sum();
            if vote == 0.0 {
                continue;
            }
            let side = normal * vote.signum();
            for &p in &e {
                let off = (x[p as usize] - a).dot(side);
                if off < 0.5 * gap && inv_mass[p as usize] > 0.0 {
                    push[p as usize] += side * (0.5 * gap - off).min(gap);
                    pushes[p as usize] += 1;
                }
            }
            for &q in &tri {
                if inv_mass[q as usize] > 0.0 {
                    push[q as usize] -= side * (0.25 * gap);
                    pushes[q as usize] += 1;
                }
            }
        }
        let (edges, rest) = cloth_edges;
        let constraints = incident(n, edges);
        let mut moved = 0;
        for i in 0..n {
            if pushes[i] == 0 || self.zoned.get(i).copied().unwrap_or(false) {
                continue;
            }
            let fits = |d: DVec3| {
                constraints[i].iter().all(|&(j, e)| {
                    let l = rest[e];
                    let now = x[i].distance(x[j as usize]);
                    (x[i] + d).distance(x[j as usize]) <= (l * (1.0 + tolerance)).max(now)
                })
            };
            let mut d = push[i] / f64::from(pushes[i]);
            let mut halvings = 0;
            while !fits(d) && halvings < UNTANGLE_HALVINGS {
                d *= 0.5;
                halvings += 1;
            }
            if fits(d) {
                x[i] += d;
                self.x0[i] += d;
                moved += 1;
            }
        }
        moved += separated;
        if moved > 0 {
            // The start positions changed: candidates and their distances with them.
            self.gathered = false;
        }
        moved
    }

    /// Baraff, Witkin and Kass's global intersection analysis (2003, "Untangling cloth"),
    /// for crossings that no closed path bounds: the particles of the crossing pairs split
    /// into clusters of two halves — an edge and the triangle it passes through lie on
    /// opposite halves — and each half is carried back to its own side of the surface the
    /// two cross on. A pleat folded past itself (the drape's corners: two mirror-image
    /// flaps whose hems cross like scissors, the intersection running from a hem to the
    /// crease, so it closes no region) is the case: the halves, spread three rings over the
    /// surface beyond the pairs, lie apart in their right order there, and their crossing
    /// lies on a plane between them — fitted through the points where the edges pierce
    /// the triangles, its normal the nearest to the line between the two halves' outer
    /// rings. Every particle of a half within those rings that lies on the other half's
    /// side, or within half the gap of the plane, moves to half the gap on its own side
    /// (at most a rest length a step; not a particle of a zone), in `x` and the step's
    /// start alike, and the solve takes the stretch back — where that parts crossings and
    /// makes none (below). A cluster whose pairs do not split into two halves, or whose
    /// halves' outer rings do not lie a gap apart across the plane (layers pressed flat:
    /// the order handles those, [`SelfContact::order_pressed_layers`]), or whose moves
    /// would make a crossing, is left to the pushes of each pair. The particles moved,
    /// and which particles' clusters were handled.
    fn separate_halves(
        &mut self,
        adjacent: &[Vec<(u32, usize)>],
        x: &mut [DVec3],
        inv_mass: &[f64],
        gap: f64,
    ) -> (usize, Vec<bool>) {
        let n = x.len();
        let mut halves = Halves::new(n);
        let mut paired = vec![false; n];
        for &(e, tri) in &self.crossing_pairs {
            halves.join(e[0], e[1], false);
            halves.join(tri[0], tri[1], false);
            halves.join(tri[0], tri[2], false);
            halves.join(e[0], tri[0], true);
            for &i in e.iter().chain(&tri) {
                paired[i as usize] = true;
            }
        }
        let mut clusters: Vec<(u32, Vec<u32>)> = Vec::new();
        for i in (0..n as u32).filter(|&i| paired[i as usize]) {
            let (root, _) = halves.find(i);
            match clusters.iter_mut().find(|(r, _)| *r == root) {
                Some((_, members)) => members.push(i),
                None => clusters.push((root, vec![i])),
            }
        }
        let reach = self.shortest_rest.max(self.mean_edge);
        // Each cluster's particles and the moves that carry its halves back.
        let mut plans: Vec<Plan> = Vec::new();
        for (root, members) in clusters {
            if halves.split_badly.contains(&root) {
                continue;
            }
            // Each particle's half, spread three rings beyond the pairs.
            let mut half: Vec<Option<bool>> = vec![None; n];
            for &i in &members {
                half[i as usize] = Some(halves.find(i).1);
            }
            let mut front = members.clone();
            let mut reached = members.clone();
            let mut outer = [DVec3::ZERO; 2];
            let mut count = [0usize; 2];
            for ring in 0..RINGS {
                let mut next = Vec::new();
                for &i in &front {
                    for &(j, _) in &adjacent[i as usize] {
                        if half[j as usize].is_none() && !paired[j as usize] {
                            half[j as usize] = half[i as usize];
                            next.push(j);
                            if ring + 1 == RINGS {
                                let h = usize::from(half[i as usize] == Some(true));
                                outer[h] += x[j as usize];
                                count[h] += 1;
                            }
                        }
                    }
                }
                reached.extend_from_slice(&next);
                front = next;
            }
            if count[0] == 0 || count[1] == 0 {
                continue;
            }
            let towards = outer[1] / count[1] as f64 - outer[0] / count[0] as f64;
            let pierced: Vec<DVec3> = self
                .crossing_pairs
                .iter()
                .filter(|(e, _)| halves.find(e[0]).0 == root)
                .filter_map(|&(e, tri)| pierce_point(x, e, tri))
                .collect();
            let Some((centre, normal)) = plane_through(&pierced, towards) else {
                continue;
            };
            if towards.dot(normal) < gap {
                continue;
            }
            let mut moves = Vec::new();
            for &i in &reached {
                let i = i as usize;
                if inv_mass[i] == 0.0 || self.zoned.get(i).copied().unwrap_or(false) {
                    continue;
                }
                let side = if half[i] == Some(true) { 1.0 } else { -1.0 };
                let off = (x[i] - centre).dot(normal) * side;
                if off < 0.5 * gap {
                    moves.push((i, normal * side * (0.5 * gap - off).min(reach)));
                }
            }
            plans.push((members, moves));
        }
        // A move is kept only where it parts crossings and makes none: the crossing pairs
        // after it a proper subset of those before. All clusters at once, else each on its
        // own (at most `SEPARATE_TRIES`). Counted as a crossing and not beyond doubt, a
        // pair of layers lying flat can look tangled to the library and clean to an
        // independent count; moved a rest length, such a cloth crossed itself for real in
        // a hostile session.
        let mut y = x.to_vec();
        let mut now = self.crossing_pairs.clone();
        let mut handled = vec![false; n];
        let mut found = Vec::new();
        let mut keep = |this: &mut Self, y: &mut Vec<DVec3>, plans: &[&Plan]| {
            let mut z = y.clone();
            for (_, moves) in plans {
                for &(i, d) in moves {
                    z[i] += d;
                }
            }
            this.find_crossings(&z, &mut found);
            let before: HashSet<_> = now.iter().copied().collect();
            let kept = found.len() < now.len() && found.iter().all(|p| before.contains(p));
            if kept {
                *y = z;
                std::mem::swap(&mut now, &mut found);
                for (members, _) in plans {
                    for &i in members {
                        handled[i as usize] = true;
                    }
                }
            }
            kept
        };
        let all: Vec<_> = plans.iter().collect();
        if !all.is_empty() && !keep(self, &mut y, &all) {
            for plan in all.iter().take(SEPARATE_TRIES) {
                keep(self, &mut y, &[*plan]);
            }
        }
        let mut moved = 0;
        for i in 0..n {
            let d = y[i] - x[i];
            if d != DVec3::ZERO {
                x[i] = y[i];
                self.x0[i] += d;
                moved += 1;
            }
        }
        (moved, handled)
    }

    /// Whether the layer order moves a pair through itself: a vertex–triangle pair within
    /// the gap that starts on the other side of its triangle from the one its component
    /// voted for ([`SelfContact::order_pressed_layers`]). Its row takes it through on
    /// purpose; the fail-safe would hold it where it is.
    pub(super) fn ordered_through(&self, c: &Candidate) -> bool {
        if c.d0 >= self.gap || c.lip {
            return false;
        }
        let side = self.side[self.layers.root(c.p[0]) as usize];
        if side == 0.0 {
            return false;
        }
        c.kind == PairKind::VertexTriangle && off_plane(&self.x0, &c.p) * side <= 0.0
    }
}

/// How far the vertex of a vertex–triangle pair `p` lies off its triangle's plane at `x`,
/// along the triangle's unit normal (its winding), measured from its closest point.
fn off_plane(x: &[DVec3], p: &[u32; 4]) -> f64 {
    let [v, a, b, t] = p.map(|i| x[i as usize]);
    let normal = (b - a).cross(t - a).normalize_or_zero();
    let (q, _) = narrow::closest_on_triangle(v, a, b, t);
    (v - q).dot(normal)
}

/// How a tangled cloth's crossing pairs are being parted ([`SelfContact::untangle`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Untangled {
    /// Not yet this tangle.
    #[default]
    Not,
    /// By each pair's push, the last step's with this many crossings at its start.
    Pushed(usize),
    /// By carrying the halves back ([`SelfContact::separate_halves`]), since the pushes
    /// of a step left as many crossings as they found.
    Halves,
}

/// A crossing cluster's particles, and the moves that carry its halves back.
type Plan = (Vec<u32>, Vec<(usize, DVec3)>);

/// Clusters of crossing pairs whose halves are tried one by one where carrying all of
/// them back at once would make a crossing ([`SelfContact::separate_halves`]): each try
/// counts the crossings of the whole surface once.
const SEPARATE_TRIES: usize = 8;

/// Rings over the surface a half of a crossing cluster is spread beyond its pairs
/// ([`SelfContact::separate_halves`]): its outer ring tells the halves' order.
const RINGS: usize = 3;

/// The crossing pairs' particles, joined into clusters by union–find with each particle's
/// half relative to its root (Baraff, Witkin and Kass's two sides of an intersection).
struct Halves {
    parent: Vec<u32>,
    /// Whether a particle lies on the other half from its parent.
    flip: Vec<bool>,
    /// Roots of clusters whose pairs asked for a particle on both halves.
    split_badly: Vec<u32>,
}

impl Halves {
    fn new(n: usize) -> Halves {
        Halves {
            parent: (0..n as u32).collect(),
            flip: vec![false; n],
            split_badly: Vec::new(),
        }
    }

    /// The root of `i` and whether `i` lies on the other half from it.
    fn find(&mut self, i: u32) -> (u32, bool) {
        let mut path = Vec::new();
        let mut r = i;
        while self.parent[r as usize] != r {
            path.push(r);
            r = self.parent[r as usize];
        }
        // Compress from the root down, each flip then relative to the root.
        let mut flip = false;
        for &j in path.iter().rev() {
            flip ^= self.flip[j as usize];
            self.flip[j as usize] = flip;
            self.parent[j as usize] = r;
        }
        (r, self.flip[i as usize] && i != r)
    }

    /// `a` and `b` on opposite halves where `apart`, else on one.
    fn join(&mut self, a: u32, b: u32, apart: bool) {
        let (ra, fa) = self.find(a);
        let (rb, fb) = self.find(b);
        if ra == rb {
            if fa ^ fb != apart && !self.split_badly.contains(&ra) {
                self.split_badly.push(ra);
            }
            return;
        }
        let bad = [ra, rb].iter().any(|r| self.split_badly.contains(r));
        self.parent[ra as usize] = rb;
        self.flip[ra as usize] = fa ^ fb ^ apart;
        if bad && !self.split_badly.contains(&rb) {
            self.split_badly.push(rb);
        }
    }
}

/// Where edge `e` passes through the plane of triangle `tri` at `x`, if it does.
fn pierce_point(x: &[DVec3], e: [u32; 2], tri: [u32; 3]) -> Option<DVec3> {
    let (p, q) = (x[e[0] as usize], x[e[1] as usize]);
    let [a, b, c] = tri.map(|i| x[i as usize]);
    let normal = (b - a).cross(c - a).normalize_or_zero();
    let (dp, dq) = ((p - a).dot(normal), (q - a).dot(normal));
    (normal != DVec3::ZERO && dp != dq).then(|| p + (q - p) * (dp / (dp - dq)))
}

/// The plane through `points` (their mean, and the normal of least spread), its normal
/// the nearest to `towards` where the points leave it free (on a line, one point) and
/// turned its way: inverse iteration from `towards` on the points' scatter matrix.
fn plane_through(points: &[DVec3], towards: DVec3) -> Option<(DVec3, DVec3)> {
    let start = towards.normalize_or_zero();
    if points.is_empty() || start == DVec3::ZERO {
        return None;
    }
    let centre = points.iter().copied().sum::<DVec3>() / points.len() as f64;
    let mut scatter = glam::DMat3::ZERO;
    for p in points {
        let d = *p - centre;
        scatter += glam::DMat3::from_cols(d * d.x, d * d.y, d * d.z);
    }
    let trace = scatter.x_axis.x + scatter.y_axis.y + scatter.z_axis.z;
    let inverse = (scatter + glam::DMat3::IDENTITY * (1e-9 * trace + 1e-300)).inverse();
    let mut normal = start;
    for _ in 0..50 {
        normal = (inverse * normal).normalize_or_zero();
    }
    if !normal.is_finite() || normal == DVec3::ZERO {
        return None;
    }
    Some((centre, normal * normal.dot(start).signum()))
}

/// Each of `n` particles' neighbours over `edges`, with the edge's index.
fn incident(n: usize, edges: &[[u32; 2]]) -> Vec<Vec<(u32, usize)>> {
    let mut around: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
    for (e, &[a, b]) in edges.iter().enumerate() {
        around[a as usize].push((b, e));
        around[b as usize].push((a, e));
    }
    around
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An edge and the triangle it crosses lie on opposite halves; a particle asked to
    /// lie on both marks its cluster as split badly, and that mark survives later joins.
    #[test]
    fn crossing_pairs_split_into_two_halves() {
        let mut h = Halves::new(8);
        // Edge 0–1 through triangle 2–3–4.
        h.join(0, 1, false);
        h.join(2, 3, false);
        h.join(2, 4, false);
        h.join(0, 2, true);
        let (r, f0) = h.find(0);
        for (i, other) in [(1, false), (2, true), (3, true), (4, true)] {
            let (ri, fi) = h.find(i);
            assert_eq!(ri, r);
            assert_eq!(fi ^ f0, other, "particle {i}");
        }
        assert!(h.split_badly.is_empty());
        // Particle 1 also a corner of a triangle that particle 0's edge crosses.
        h.join(0, 1, true);
        assert_eq!(h.split_badly, vec![r]);
        h.join(5, 6, true);
        h.join(6, 0, false);
        let (root, _) = h.find(5);
        assert!(h.split_badly.contains(&root));
    }

    /// Points on a line leave the plane's normal free about it: the one nearest the
    /// direction asked for, turned its way; points off a plane fix it.
    #[test]
    fn the_plane_through_pierce_points_turns_towards_the_halves() {
        let line: Vec<DVec3> = (0..5).map(|k| DVec3::new(k as f64, 0.0, 0.0)).collect();
        let (centre, n) = plane_through(&line, DVec3::new(0.3, 1.0, 0.0)).unwrap();
        assert!((centre - DVec3::new(2.0, 0.0, 0.0)).length() < 1e-12);
        assert!(n.x.abs() < 1e-6 && n.y > 0.99, "{n:?}");
        let plane: Vec<DVec3> = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
            .iter()
            .map(|&(a, b)| DVec3::new(a, b, 0.0))
            .collect();
        let (_, n) = plane_through(&plane, DVec3::new(1.0, 0.0, -0.1)).unwrap();
        assert!((n - DVec3::NEG_Z).length() < 1e-6, "{n:?}");
        assert!(plane_through(&[], DVec3::X).is_none());
    }
}
