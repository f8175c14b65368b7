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
    /// 1 (19 at most against 16).
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
            return 0;
        }
        let adjacent = incident(n, &self.surface.edges);
        let gap = self.thickness(thickness);
        let mut push = vec![DVec3::ZERO; n];
        let mut pushes = vec![0u32; n];
        for &(e, tri) in &self.crossing_pairs {
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
        if moved > 0 {
            // The start positions changed: candidates and their distances with them.
            self.gathered = false;
        }
        moved
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

/// Each of `n` particles' neighbours over `edges`, with the edge's index.
fn incident(n: usize, edges: &[[u32; 2]]) -> Vec<Vec<(u32, usize)>> {
    let mut around: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
    for (e, &[a, b]) in edges.iter().enumerate() {
        around[a as usize].push((b, e));
        around[b as usize].push((a, e));
    }
    around
}
