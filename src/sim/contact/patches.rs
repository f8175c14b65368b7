//! Patches: a hierarchy of adjacent triangles, built once per topology from the mesh
//! itself, refitted at every gather with each node's swept bounding box and swept normal
//! cone, and the guard under which a whole patch skips the pairs inside it.
//!
//! **Why.** A box-based broad phase pays for a mesh's own neighbours: their boxes always
//! touch, so every gather tested some 50 000 neighbour pairs of a 50×50 cloth with
//! nothing touching (docs/experiments.md, "The broad phase by relative motion"). A patch
//! whose normals stay within a cone narrower than a right angle is a height field over the
//! plane across the cone's axis, and cannot fold onto itself unless its contour does
//! (Volino and Magnenat-Thalmann 1994, "Efficient self-collision detection on smoothly
//! discretized surface animations using geometrical shape regularity"; Provot 1997; swept
//! cones over a step as Tang et al. 2009, "Interactive continuous collision detection
//! between deformable models using connectivity-based culling", bound the normals of a
//! triangle whose corners move linearly). That bounds intersection, not proximity: a cell
//! sheared flat brings a vertex onto its opposite diagonal without any curvature. So the
//! guard here bounds the distance itself.
//!
//! **The guard** ([`Patches::traverse`], distance `g`). A node is culled for the sweep from
//! `x0` to `x1` when
//! 1. it is a disk of triangles: connected, every edge on at most two of its triangles,
//!    every vertex's triangles one fan, Euler characteristic 1, each vertex on none or two
//!    of its contour's edges (derived once per topology);
//! 2. every triangle's normal over the sweep lies within the node's cone of half-angle
//!    α < 90° (here below 1.3 rad, where cos α still leaves altitudes worth culling) about
//!    axis `a`: a triangle's normal (unnormalised) is quadratic in time with
//!    Bernstein coefficients `n(0)`, `n(0) + ½(e₁ × ḋ₂ + ḋ₁ × e₂)` and `n(1)`, and every
//!    positive combination of them lies in any cone that holds the three;
//! 3. every triangle's altitude, projected on the plane across `a`, stays at least `g`:
//!    twice its projected area is `n(t)·a ≥ min |nₖ| cos α` and no side is longer than
//!    at the sweep's ends, so the bound is `h₃ cos α` with `h₃` the least
//!    `min |nₖ| / longest side` of its triangles;
//! 4. the contour's projected edges that share no vertex stay at least `g` apart over the
//!    sweep (`(d₀ + d₁ − r)/2` with `r` their ends' relative motion), and two that share one
//!    never lie on each other.
//!
//! Then the projection is one-to-one on the node at every moment of the sweep (positive
//! triangles over a disk whose contour is a simple curve: each point of the plane has as
//! many preimages as the contour winds round it, at most one), and any two of its features
//! that share no particle are at least `g` apart in the plane, so in space: from a vertex
//! `v`, a segment to the other feature either crosses the side opposite `v` of a triangle
//! at `v` (at least an altitude) or leaves the node and enters it again across the contour
//! (at least the contour's separation). The gather takes no pair inside a culled node, and
//! covers the motion with `g` at most ([`super::SelfContact`]). Two adjacent nodes that
//! share one path of edges form a disk whose contour is the edges on one of theirs only;
//! where that union passes the guard, no pair between them is tested either (Volino and
//! Magnenat-Thalmann's adjacency test), which is what leaves no seam between two culled
//! siblings whose parent's cone is too wide.

use std::borrow::Cow;

use glam::{DVec2, DVec3};
use rayon::prelude::*;

use super::broad::Aabb;
use super::surface::Surface;

/// Triangles a leaf holds at most: the traversal's pairs of leaves are tested element by
/// element.
pub const LEAF_TRIANGLES: usize = 8;

/// A node's normal cone wider than this half-angle (rad) is not culled: the projected
/// altitudes shrink with its cosine.
const WIDEST: f64 = 1.3;

/// A cone: unit axis and half-angle (rad); `angle ≥ π/2` stands for no cone.
#[derive(Debug, Clone, Copy)]
struct Cone {
    axis: DVec3,
    angle: f64,
}

impl Cone {
    const NONE: Cone = Cone {
        axis: DVec3::Z,
        angle: std::f64::consts::PI,
    };

    /// The narrowest cone about an axis between the two that holds both.
    fn merge(self, o: Cone) -> Cone {
        let half = std::f64::consts::FRAC_PI_2;
        if self.angle >= half || o.angle >= half {
            return Cone::NONE;
        }
        let phi = self.axis.dot(o.axis).clamp(-1.0, 1.0).acos();
        if phi + o.angle <= self.angle {
            return self;
        }
        if phi + self.angle <= o.angle {
            return o;
        }
        let angle = 0.5 * (phi + self.angle + o.angle);
        if angle >= half || phi < 1e-12 {
            return Cone::NONE;
        }
        // Turn the first axis towards the second by what widens it to `angle`.
        let s = (angle - self.angle) / phi;
        let axis = (self.axis * ((1.0 - s) * phi).sin() + o.axis * (s * phi).sin()) / phi.sin();
        let l = axis.length();
        if !above(l, 0.0) {
            return Cone::NONE;
        }
        // A little wider, for the round-off of the turn.
        Cone {
            axis: axis / l,
            angle: angle + 1e-9,
        }
    }
}

/// A node of the hierarchy: two children (none for a triangle), its triangles
/// `order[first..end]` and its contour `contour[c_first..c_end]`.
#[derive(Debug, Clone, Copy, Default)]
struct Node {
    children: Option<[u32; 2]>,
    first: u32,
    end: u32,
    c_first: u32,
    c_end: u32,
    /// A disk of triangles ([`Patches`]' condition 1).
    disk: bool,
    /// Traversed as a leaf: its pairs are tested element by element.
    leaf: bool,
}

/// What a gather reads of a node, refitted from the positions.
#[derive(Debug, Clone, Copy)]
struct Fit {
    bounds: Aabb,
    cone: Cone,
    /// The least `min |nₖ| / longest side` of its triangles (m).
    h3: f64,
}

/// The hierarchy of a surface's triangles ([`Patches::new`]), with the scratch of its
/// last refit.
#[derive(Debug, Clone, Default)]
pub struct Patches {
    topology: u64,
    particles: usize,
    /// Triangles first (node `t` is triangle `t`), then the merged nodes, each after its
    /// children; the last is the root.
    nodes: Vec<Node>,
    /// Triangles in the order that makes each node's a range.
    order: Vec<u32>,
    /// Every node's contour edges, by particle.
    contour: Vec<[u32; 2]>,
    /// The leaves, in the order of `order`.
    pub leaves: Vec<u32>,
    /// Each leaf's vertices and edges (indices into [`Surface::edges`]) it owns: each
    /// vertex and edge of the surface is owned by the leaf of its first triangle.
    /// Leaf `k`'s are `owned_vertices[vert_start[k]..vert_start[k + 1]]`.
    vert_start: Vec<u32>,
    owned_vertices: Vec<u32>,
    edge_start: Vec<u32>,
    owned_edges: Vec<u32>,
    /// Each node's index among the leaves (`u32::MAX`: not a leaf).
    leaf_index: Vec<u32>,
    /// Particles on no triangle.
    pub isolated: Vec<u32>,
    fits: Vec<Fit>,
}

/// `a > b`, false where either is NaN.
fn above(a: f64, b: f64) -> bool {
    a > b
}

/// `a ≥ b`, false where either is NaN.
fn at_least(a: f64, b: f64) -> bool {
    a >= b
}

/// Union–find root with path halving.
fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[parent[i as usize] as usize];
        parent[i as usize] = p;
        i = p;
    }
    i
}

impl Patches {
    /// Whether this hierarchy was built for `surface`.
    pub fn is_of(&self, surface: &Surface) -> bool {
        self.topology == surface.topology
            && self.particles == surface.particles
            && self.order.len() == surface.triangles.len()
    }

    /// The hierarchy of `surface`'s triangles: clusters of adjacent triangles merged two by
    /// two, the pair that shares the most edges first (heavy-edge matching, as a
    /// multilevel partitioner coarsens a graph), until one is left; components that share
    /// no edge are paired last, and such a node is no disk.
    pub fn new(surface: &Surface) -> Patches {
        let tris = &surface.triangles;
        let n = surface.particles;
        let t_count = tris.len();
        let edge_index = |a: u32, b: u32| -> u32 {
            let e = [a.min(b), a.max(b)];
            surface
                .edges
                .binary_search(&e)
                .map_or(u32::MAX, |i| i as u32)
        };
        // Each edge's triangles.
        let mut edge_tris: Vec<Vec<u32>> = vec![Vec::new(); surface.edges.len()];
        for (t, tri) in tris.iter().enumerate() {
            for k in 0..3 {
                let e = edge_index(tri[k], tri[(k + 1) % 3]);
                if e != u32::MAX {
                    edge_tris[e as usize].push(t as u32);
                }
            }
        }
        // A triangle on an edge of more than two triangles, or at a vertex whose triangles
        // are not one fan, is in no disk.
        let mut bad_tri = vec![false; t_count];
        for ts in edge_tris.iter().filter(|ts| ts.len() > 2) {
            for &t in ts {
                bad_tri[t as usize] = true;
            }
        }
        let mut fans: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (t, tri) in tris.iter().enumerate() {
            for &v in tri {
                if (v as usize) < n {
                    fans[v as usize].push(t as u32);
                }
            }
        }
        let mut uf: Vec<u32> = (0..t_count as u32).collect();
        for (v, fan) in fans.iter().enumerate() {
            if fan.len() < 2 {
                continue;
            }
            for &t in fan {
                uf[t as usize] = t;
            }
            for (i, &t) in fan.iter().enumerate() {
                for &s in &fan[i + 1..] {
                    // Joined across an edge at v.
                    let (a, b) = (tris[t as usize], tris[s as usize]);
                    let joined = a
                        .iter()
                        .any(|&w| w != v as u32 && b.contains(&w) && a.contains(&(v as u32)));
                    if joined {
                        let (ra, rb) = (find(&mut uf, t), find(&mut uf, s));
                        if ra != rb {
                            uf[ra.max(rb) as usize] = ra.min(rb);
                        }
                    }
                }
            }
            let root = find(&mut uf, fan[0]);
            if fan.iter().any(|&t| find(&mut uf, t) != root) {
                for &t in fan {
                    bad_tri[t as usize] = true;
                }
            }
        }

        // Per node while building: size, vertices, edges, sorted contour, bad, connected.
        struct Build {
            size: u32,
            verts: u32,
            edges: u32,
            contour: Vec<[u32; 2]>,
            bad: bool,
            connected: bool,
        }
        let mut nodes: Vec<Node> = Vec::with_capacity(2 * t_count);
        let mut info: Vec<Build> = Vec::with_capacity(2 * t_count);
        for (t, tri) in tris.iter().enumerate() {
            let mut c: Vec<[u32; 2]> = (0..3)
                .map(|k| {
                    let (a, b) = (tri[k], tri[(k + 1) % 3]);
                    [a.min(b), a.max(b)]
                })
                .collect();
            c.sort_unstable();
            c.dedup();
            let degenerate = c.len() < 3 || tri.iter().any(|&v| v as usize >= n);
            nodes.push(Node::default());
            info.push(Build {
                size: 1,
                verts: 3,
                edges: 3,
                contour: c,
                bad: bad_tri[t] || degenerate,
                connected: true,
            });
        }
        let merge = |a: &Build, b: &Build, adjacent: bool| -> Build {
            // The contour: edges on one child's contour only (a shared edge is on both).
            let (contour, shared_edges) = symmetric_difference(&a.contour, &b.contour);
            let shared_edges = shared_edges as u32;
            // Vertices on both children are on both contours.
            let shared_verts = shared_vertices(&a.contour, &b.contour) as u32;
            Build {
                size: a.size + b.size,
                verts: a.verts + b.verts - shared_verts,
                edges: a.edges + b.edges - shared_edges,
                contour,
                bad: a.bad || b.bad,
                connected: a.connected && b.connected && adjacent,
            }
        };
        // Current clusters (node ids) and each triangle's cluster (its place among them).
        let mut clusters: Vec<u32> = (0..t_count as u32).collect();
        let mut cluster_of: Vec<u32> = (0..t_count as u32).collect();
        while clusters.len() > 1 {
            // Shared edges between clusters.
            let mut links: Vec<(u32, u32)> = Vec::new();
            for ts in edge_tris.iter().filter(|ts| ts.len() == 2) {
                let (a, b) = (cluster_of[ts[0] as usize], cluster_of[ts[1] as usize]);
                if a != b {
                    links.push((a.min(b), a.max(b)));
                    links.push((a.max(b), a.min(b)));
                }
            }
            links.sort_unstable();
            let mut next = Vec::with_capacity(clusters.len() / 2 + 1);
            let mut matched = vec![false; clusters.len()];
            // Smallest clusters first, so that none is left alone beside a grown one.
            let mut by_size: Vec<u32> = (0..clusters.len() as u32).collect();
            by_size.sort_by_key(|&c| (info[clusters[c as usize] as usize].size, c));
            let mut any = false;
            for &c in &by_size {
                if matched[c as usize] {
                    continue;
                }
                let lo = links.partition_point(|l| l.0 < c);
                let hi = links.partition_point(|l| l.0 <= c);
                let mut best: Option<(u32, u32)> = None;
                let mut k = lo;
                while k < hi {
                    let d = links[k].1;
                    let mut w = 0;
                    while k < hi && links[k].1 == d {
                        w += 1;
                        k += 1;
                    }
                    if matched[d as usize] {
                        continue;
                    }
                    let better = match best {
                        None => true,
                        Some((bd, bw)) => {
                            let (sd, sb) = (
                                info[clusters[d as usize] as usize].size,
                                info[clusters[bd as usize] as usize].size,
                            );
                            (w, std::cmp::Reverse(sd)) > (bw, std::cmp::Reverse(sb))
                        }
                    };
                    if better {
                        best = Some((d, w));
                    }
                }
                if let Some((d, _)) = best {
                    matched[c as usize] = true;
                    matched[d as usize] = true;
                    any = true;
                    let (a, b) = (clusters[c as usize], clusters[d as usize]);
                    let built = merge(&info[a as usize], &info[b as usize], true);
                    nodes.push(Node {
                        children: Some([a.min(b), a.max(b)]),
                        ..Node::default()
                    });
                    info.push(built);
                    next.push(nodes.len() as u32 - 1);
                }
            }
            if !any {
                // Components that share no edge: paired in order.
                for pair in clusters.chunks(2) {
                    if let [a, b] = *pair {
                        let built = merge(&info[a as usize], &info[b as usize], false);
                        nodes.push(Node {
                            children: Some([a, b]),
                            ..Node::default()
                        });
                        info.push(built);
                        next.push(nodes.len() as u32 - 1);
                    } else {
                        next.push(pair[0]);
                    }
                }
            } else {
                for (c, &m) in matched.iter().enumerate() {
                    if !m {
                        next.push(clusters[c]);
                    }
                }
            }
            clusters = next;
            // The triangles' clusters, from the new nodes down.
            for (ci, &c) in clusters.iter().enumerate() {
                let mut stack = vec![c];
                while let Some(k) = stack.pop() {
                    match nodes[k as usize].children {
                        Some([a, b]) if (k as usize) >= t_count => {
                            stack.push(a);
                            stack.push(b);
                        }
                        _ => cluster_of[k as usize] = ci as u32,
                    }
                }
            }
        }
        // Ranges in depth-first order, the contours flattened, the disks marked.
        let mut order = Vec::with_capacity(t_count);
        let mut contour = Vec::new();
        if let Some(&root) = clusters.first() {
            // Post-order: children's ranges before their parent's.
            let mut stack = vec![(root, false)];
            while let Some((k, done)) = stack.pop() {
                let node = nodes[k as usize];
                match (node.children, done) {
                    (Some([a, b]), false) => {
                        stack.push((k, true));
                        stack.push((b, false));
                        stack.push((a, false));
                    }
                    (Some([a, b]), true) => {
                        nodes[k as usize].first = nodes[a as usize].first;
                        nodes[k as usize].end = nodes[b as usize].end;
                        debug_assert_eq!(nodes[a as usize].end, nodes[b as usize].first);
                    }
                    (None, _) => {
                        nodes[k as usize].first = order.len() as u32;
                        order.push(k);
                        nodes[k as usize].end = order.len() as u32;
                    }
                }
            }
        }
        for (k, b) in info.iter().enumerate() {
            let chi = b.verts as i64 - b.edges as i64 + b.size as i64;
            let two_each = two_each(&b.contour);
            let node = &mut nodes[k];
            node.disk = !b.bad && b.connected && chi == 1 && two_each;
            node.c_first = contour.len() as u32;
            contour.extend_from_slice(&b.contour);
            node.c_end = contour.len() as u32;
        }
        // Leaves: the largest nodes of at most LEAF_TRIANGLES triangles.
        let mut leaves = Vec::new();
        let mut leaf_index = vec![u32::MAX; nodes.len()];
        if let Some(&root) = clusters.first() {
            let mut stack = vec![root];
            while let Some(k) = stack.pop() {
                let node = nodes[k as usize];
                match node.children {
                    Some([a, b]) if (node.end - node.first) as usize > LEAF_TRIANGLES => {
                        stack.push(b);
                        stack.push(a);
                    }
                    _ => {
                        nodes[k as usize].leaf = true;
                        leaf_index[k as usize] = leaves.len() as u32;
                        leaves.push(k);
                    }
                }
            }
        }
        // Ownership: each vertex and edge by the leaf of its first triangle in `order`.
        let mut vert_owner = vec![u32::MAX; n];
        let mut edge_owner = vec![u32::MAX; surface.edges.len()];
        let mut owned_v: Vec<Vec<u32>> = vec![Vec::new(); leaves.len()];
        let mut owned_e: Vec<Vec<u32>> = vec![Vec::new(); leaves.len()];
        for (li, &leaf) in leaves.iter().enumerate() {
            let node = nodes[leaf as usize];
            for &t in &order[node.first as usize..node.end as usize] {
                let tri = tris[t as usize];
                for k in 0..3 {
                    let v = tri[k] as usize;
                    if v < n && vert_owner[v] == u32::MAX {
                        vert_owner[v] = li as u32;
                        owned_v[li].push(v as u32);
                    }
                    let e = edge_index(tri[k], tri[(k + 1) % 3]);
                    if e != u32::MAX && edge_owner[e as usize] == u32::MAX {
                        edge_owner[e as usize] = li as u32;
                        owned_e[li].push(e);
                    }
                }
            }
        }
        let flatten = |lists: Vec<Vec<u32>>| {
            let mut start = vec![0u32];
            let mut all = Vec::new();
            for l in lists {
                all.extend(l);
                start.push(all.len() as u32);
            }
            (start, all)
        };
        let (vert_start, owned_vertices) = flatten(owned_v);
        let (edge_start, owned_edges) = flatten(owned_e);
        let isolated = (0..n as u32)
            .filter(|&v| vert_owner[v as usize] == u32::MAX)
            .collect();
        Patches {
            topology: surface.topology,
            particles: n,
            nodes,
            order,
            contour,
            leaves,
            vert_start,
            owned_vertices,
            edge_start,
            owned_edges,
            leaf_index,
            isolated,
            fits: Vec::new(),
        }
    }

    /// The triangles of leaf `k` (an index into [`Patches::leaves`]).
    pub fn leaf_triangles(&self, k: usize) -> &[u32] {
        let node = self.nodes[self.leaves[k] as usize];
        &self.order[node.first as usize..node.end as usize]
    }

    /// The triangles of node `k`.
    pub fn node_triangles(&self, k: usize) -> &[u32] {
        let node = self.nodes[k];
        &self.order[node.first as usize..node.end as usize]
    }

    /// The vertices leaf `k` owns.
    pub fn leaf_vertices(&self, k: usize) -> &[u32] {
        &self.owned_vertices[self.vert_start[k] as usize..self.vert_start[k + 1] as usize]
    }

    /// The edges (indices into [`Surface::edges`]) leaf `k` owns.
    pub fn leaf_edges(&self, k: usize) -> &[u32] {
        &self.owned_edges[self.edge_start[k] as usize..self.edge_start[k + 1] as usize]
    }

    /// The box of leaf `k` at the last refit.
    pub fn leaf_bounds(&self, k: usize) -> Aabb {
        self.fits[self.leaves[k] as usize].bounds
    }

    /// Refit the leaves and the nodes above them to the sweep from `x0` to `x1`: `tri_box(t)`
    /// is triangle `t`'s swept box as the gather takes it. A leaf's cone is its triangles'
    /// normals' (one arccosine a leaf); the leaves are refitted on the pool's threads.
    pub fn refit(
        &mut self,
        surface: &Surface,
        x0: &[DVec3],
        x1: &[DVec3],
        tri_box: impl Fn(usize) -> Aabb + Sync,
    ) {
        let (nodes, order) = (&self.nodes, &self.order);
        let leaf_fits: Vec<Fit> = self
            .leaves
            .par_iter()
            .with_min_len(32)
            .map(|&k| {
                let node = nodes[k as usize];
                let mut bounds = Aabb::EMPTY;
                let mut h3 = f64::INFINITY;
                let mut units = [DVec3::ZERO; 3 * LEAF_TRIANGLES];
                let mut count = 0;
                let mut sum = DVec3::ZERO;
                let mut degenerate = false;
                for &t in &order[node.first as usize..node.end as usize] {
                    let b = tri_box(t as usize);
                    bounds = Aabb {
                        min: bounds.min.min(b.min),
                        max: bounds.max.max(b.max),
                    };
                    let [a, b, c] = surface.triangles[t as usize].map(|i| i as usize);
                    let (e1, e2) = (x0[b] - x0[a], x0[c] - x0[a]);
                    let (f1, f2) = (x1[b] - x1[a], x1[c] - x1[a]);
                    let (d1, d2) = (f1 - e1, f2 - e2);
                    // The normal's Bernstein coefficients over the sweep.
                    let n0 = e1.cross(e2);
                    let n1 = f1.cross(f2);
                    let nm = n0 + 0.5 * (e1.cross(d2) + d1.cross(e2));
                    let longest = [e1, e2, e2 - e1, f1, f2, f2 - f1]
                        .iter()
                        .map(|e| e.length_squared())
                        .fold(0.0, f64::max)
                        .sqrt();
                    let mut least = f64::INFINITY;
                    for n in [n0, nm, n1] {
                        let l = n.length();
                        least = least.min(l);
                        if l > 0.0 && l.is_finite() && count < units.len() {
                            units[count] = n / l;
                            sum += units[count];
                            count += 1;
                        } else {
                            degenerate = true;
                        }
                    }
                    let h = least / longest;
                    h3 = h3.min(if h.is_finite() { h } else { 0.0 });
                }
                let l = sum.length();
                let cone = if degenerate || !above(l, 1e-12) {
                    Cone::NONE
                } else {
                    let axis = sum / l;
                    let cos = units[..count]
                        .iter()
                        .map(|u| u.dot(axis))
                        .fold(1.0, f64::min);
                    Cone {
                        axis,
                        // A little wider, for the round-off of the sums.
                        angle: cos.clamp(-1.0, 1.0).acos() + 1e-9,
                    }
                };
                Fit { bounds, cone, h3 }
            })
            .collect();
        self.fits.clear();
        self.fits.resize(
            self.nodes.len(),
            Fit {
                bounds: Aabb::EMPTY,
                cone: Cone::NONE,
                h3: 0.0,
            },
        );
        for (&k, fit) in self.leaves.iter().zip(leaf_fits) {
            self.fits[k as usize] = fit;
        }
        // The nodes above the leaves, each after its children.
        for k in 0..self.nodes.len() {
            let node = self.nodes[k];
            if node.leaf || (node.end - node.first) as usize <= LEAF_TRIANGLES {
                continue;
            }
            let [a, b] = node.children.expect("a node above the leaves has children");
            let (fa, fb) = (self.fits[a as usize], self.fits[b as usize]);
            self.fits[k] = Fit {
                bounds: Aabb {
                    min: fa.bounds.min.min(fb.bounds.min),
                    max: fa.bounds.max.max(fb.bounds.max),
                },
                cone: fa.cone.merge(fb.cone),
                h3: fa.h3.min(fb.h3),
            };
        }
    }

    /// How far apart node `k` keeps every two of its features that share no particle over
    /// the refitted sweep (the module's guard), if at least `least`; contour edges are
    /// measured up to `most`, and the distance is at most that.
    fn guard(&self, k: usize, x0: &[DVec3], x1: &[DVec3], least: f64, most: f64) -> Option<f64> {
        let node = self.nodes[k];
        let fit = self.fits[k];
        if !node.disk {
            return None;
        }
        let contour = &self.contour[node.c_first as usize..node.c_end as usize];
        kept_apart(
            fit.cone,
            fit.h3,
            || Some(Cow::Borrowed(contour)),
            (x0, x1),
            least,
            most,
        )
    }

    /// [`Patches::guard`] of the union of nodes `a` and `b`, two disks that share one path
    /// of edges: a disk whose contour is the edges on one of theirs only.
    fn union_guard(
        &self,
        a: usize,
        b: usize,
        x0: &[DVec3],
        x1: &[DVec3],
        least: f64,
        most: f64,
    ) -> Option<f64> {
        let (na, nb) = (self.nodes[a], self.nodes[b]);
        let (fa, fb) = (self.fits[a], self.fits[b]);
        if !na.disk || !nb.disk {
            return None;
        }
        // The merged cone is at least as wide as the wider of the two (`Cone::merge`), so
        // where that one already fails the cheap tests, the union does too: no merge (an
        // arccosine and three sines) and no contour.
        let (wider, h3) = (fa.cone.angle.max(fb.cone.angle), fa.h3.min(fb.h3));
        if wider >= WIDEST || !at_least(h3 * wider.cos(), least) {
            return None;
        }
        let ca = &self.contour[na.c_first as usize..na.c_end as usize];
        let cb = &self.contour[nb.c_first as usize..nb.c_end as usize];
        // Two nodes that share no edge form no disk: told by one walk of their sorted
        // contours, before the cones are merged and the union's contour built (most pairs
        // of overlapping boxes a traversal meets are not neighbours).
        if !share_an_edge(ca, cb) {
            return None;
        }
        let union = || {
            let (contour, shared_edges) = symmetric_difference(ca, cb);
            // One path in common (they share an edge, above): the union's Euler
            // characteristic is 1 + 1 − 1.
            (shared_vertices(ca, cb) == shared_edges + 1 && two_each(&contour))
                .then_some(Cow::Owned(contour))
        };
        kept_apart(fa.cone.merge(fb.cone), h3, union, (x0, x1), least, most)
    }

    /// Which nodes hold a triangle with a particle `particles` marks: a pair of nodes
    /// neither of which does holds no pair with a marked particle.
    pub fn marked_nodes(&self, surface: &Surface, particles: &[bool]) -> Vec<bool> {
        let mut marked = vec![false; self.nodes.len()];
        for k in 0..self.nodes.len() {
            marked[k] = match self.nodes[k].children {
                Some([a, b]) => marked[a as usize] || marked[b as usize],
                None => surface.triangles.get(k).is_none_or(|t| {
                    t.iter()
                        .any(|&i| particles.get(i as usize).copied().unwrap_or(true))
                }),
            };
        }
        marked
    }

    /// The pairs of leaves (indices into [`Patches::leaves`], the first not after the
    /// second) whose elements must be tested: every pair of leaves whose boxes, each grown by
    /// `inflate`, overlap and that no culled node holds both of; with `marked` (from
    /// [`Patches::marked_nodes`]), only the pairs with a marked node — the rest is never
    /// visited. A node is culled where its guard keeps its features at least `least` apart
    /// (measured up to `most`): the culled nodes, with the distance each keeps, into
    /// `culled` (a node as `[k, k]`, two culled together as both).
    ///
    /// Depth first, each node's pairs across its children, then its first child's own
    /// pairs, then its second's: one order on every run. A node of [`PAR_TRIANGLES`] or
    /// more walks the three on the pool's threads and joins their lists in that order.
    #[allow(clippy::too_many_arguments)]
    pub fn traverse(
        &self,
        x0: &[DVec3],
        x1: &[DVec3],
        inflate: f64,
        (least, most): (f64, f64),
        marked: Option<&[bool]>,
        out: &mut Vec<[u32; 2]>,
        culled: &mut Vec<([u32; 2], f64)>,
    ) {
        out.clear();
        culled.clear();
        let Some(root) = self.fitted_root() else {
            return;
        };
        let walk = Walk {
            patches: self,
            x0,
            x1,
            inflate,
            least,
            most,
            marked,
        };
        walk.node(root, &mut Found { out, culled });
    }

    /// Whether every node (or two together) of `culled`, from a traversal, still keeps its
    /// features at least `least` apart over the sweep of the last refit.
    pub fn still_apart(
        &self,
        culled: &[([u32; 2], f64)],
        x0: &[DVec3],
        x1: &[DVec3],
        least: f64,
    ) -> bool {
        self.fits.len() == self.nodes.len()
            && culled.iter().all(|&([a, b], _)| {
                let (a, b) = (a as usize, b as usize);
                if a == b {
                    self.guard(a, x0, x1, least, least).is_some()
                } else {
                    self.union_guard(a, b, x0, x1, least, least).is_some()
                }
            })
    }

    /// The root, if there is one and the nodes are refitted.
    fn fitted_root(&self) -> Option<u32> {
        let root = self.nodes.len().checked_sub(1)?;
        (self.fits.len() == self.nodes.len()).then_some(root as u32)
    }

    /// The leaves (indices) whose boxes, grown by `inflate`, overlap `query`.
    pub fn leaves_near(&self, query: &Aabb, inflate: f64, out: &mut Vec<u32>) {
        out.clear();
        let Some(root) = self.fitted_root() else {
            return;
        };
        let mut stack = vec![root];
        while let Some(k) = stack.pop() {
            let node = self.nodes[k as usize];
            if !self.fits[k as usize]
                .bounds
                .inflate(inflate)
                .overlaps(query)
            {
                continue;
            }
            if node.leaf {
                out.push(self.leaf_index[k as usize]);
            } else if let Some([a, b]) = node.children {
                stack.push(b);
                stack.push(a);
            }
        }
    }
}

/// Nodes of at least this many triangles walk their three parts on the pool's threads
/// ([`Patches::traverse`]).
pub const PAR_TRIANGLES: u32 = 256;

/// What a traversal finds: pairs of leaves, and the culled nodes with their distances.
struct Found<'o> {
    out: &'o mut Vec<[u32; 2]>,
    culled: &'o mut Vec<([u32; 2], f64)>,
}

/// One traversal's inputs ([`Patches::traverse`]).
struct Walk<'a> {
    patches: &'a Patches,
    x0: &'a [DVec3],
    x1: &'a [DVec3],
    inflate: f64,
    least: f64,
    most: f64,
    marked: Option<&'a [bool]>,
}

impl Walk<'_> {
    fn visits(&self, k: u32) -> bool {
        self.marked.is_none_or(|m| m[k as usize])
    }

    /// Node `k`'s own pairs: none where its guard culls it, itself where it is a leaf,
    /// else those across its children and each child's own. Recursive only over nodes of
    /// [`PAR_TRIANGLES`] or more (the hierarchy's depth there is bounded by the triangles
    /// over that); below, one loop with a stack of its own.
    fn node(&self, k: u32, found: &mut Found<'_>) {
        let p = self.patches;
        let node = p.nodes[k as usize];
        if node.end - node.first < PAR_TRIANGLES || rayon::current_num_threads() < 2 {
            self.serial(k, found);
            return;
        }
        if !self.visits(k) {
            return;
        }
        if let Some(g) = p.guard(k as usize, self.x0, self.x1, self.least, self.most) {
            found.culled.push(([k, k], g));
            return;
        }
        let [a, b] = node.children.expect("a node above the leaves has children");
        let part = |f: &(dyn Fn(&mut Found<'_>) + Sync)| {
            let (mut out, mut culled) = (Vec::new(), Vec::new());
            f(&mut Found {
                out: &mut out,
                culled: &mut culled,
            });
            (out, culled)
        };
        let (across, (first, second)) = rayon::join(
            || part(&|f| self.across(a, b, f, &mut Vec::new())),
            || rayon::join(|| part(&|f| self.node(a, f)), || part(&|f| self.node(b, f))),
        );
        for (mut out, mut culled) in [across, first, second] {
            found.out.append(&mut out);
            found.culled.append(&mut culled);
        }
    }

    /// [`Walk::node`] on one thread, depth first with a stack: the same order.
    fn serial(&self, root: u32, found: &mut Found<'_>) {
        let p = self.patches;
        let mut selfs = vec![root];
        let mut pairs = Vec::new();
        while let Some(k) = selfs.pop() {
            if !self.visits(k) {
                continue;
            }
            let node = p.nodes[k as usize];
            if let Some(g) = p.guard(k as usize, self.x0, self.x1, self.least, self.most) {
                found.culled.push(([k, k], g));
                continue;
            }
            if node.leaf {
                let li = p.leaf_index[k as usize];
                found.out.push([li, li]);
                continue;
            }
            let [a, b] = node.children.expect("a node above the leaves has children");
            self.across(a, b, found, &mut pairs);
            selfs.push(b);
            selfs.push(a);
        }
    }

    /// The pairs across nodes `a` and `b`, siblings whose parent its guard did not cull:
    /// pairs of nodes whose grown boxes overlap, split down to the leaves, the larger
    /// first, unless they join into one the guard passes. The two siblings' own union is
    /// their parent, with the same cone, altitudes and contour, so it is not tried again.
    fn across(&self, a: u32, b: u32, found: &mut Found<'_>, pairs: &mut Vec<[u32; 2]>) {
        let p = self.patches;
        let (x0, x1, inflate) = (self.x0, self.x1, self.inflate);
        pairs.clear();
        pairs.push([a, b]);
        while let Some([q, r]) = pairs.pop() {
            let siblings = [q, r] == [a, b];
            if !self.visits(q) && !self.visits(r) {
                continue;
            }
            let (nq, nr) = (p.nodes[q as usize], p.nodes[r as usize]);
            let (bq, br) = (p.fits[q as usize].bounds, p.fits[r as usize].bounds);
            if !bq.inflate(inflate).overlaps(&br.inflate(inflate)) {
                continue;
            }
            // Two patches that join into one the guard passes: none of their pairs
            // across (Volino and Magnenat-Thalmann's adjacency test).
            if !siblings
                && let Some(g) =
                    p.union_guard(q as usize, r as usize, x0, x1, self.least, self.most)
            {
                found.culled.push(([q, r], g));
                continue;
            }
            match (nq.leaf, nr.leaf) {
                (true, true) => {
                    let (lq, lr) = (p.leaf_index[q as usize], p.leaf_index[r as usize]);
                    found.out.push([lq.min(lr), lq.max(lr)]);
                }
                (false, true) => {
                    let [c, d] = nq.children.expect("children");
                    pairs.push([d, r]);
                    pairs.push([c, r]);
                }
                (true, false) => {
                    let [c, d] = nr.children.expect("children");
                    pairs.push([q, d]);
                    pairs.push([q, c]);
                }
                (false, false) => {
                    // The larger one split.
                    if nq.end - nq.first >= nr.end - nr.first {
                        let [c, d] = nq.children.expect("children");
                        pairs.push([d, r]);
                        pairs.push([c, r]);
                    } else {
                        let [c, d] = nr.children.expect("children");
                        pairs.push([q, d]);
                        pairs.push([q, c]);
                    }
                }
            }
        }
    }
}

/// How far apart the contour's edges, projected on the plane across `axis`, stay over the
/// sweep from `x0` to `x1` where they share no vertex (measured up to `g`: pairs whose boxes
/// stay `g` apart are not measured), if those that share one never lie on each other (the
/// module's condition 4).
fn contour_apart(
    contour: &[[u32; 2]],
    axis: DVec3,
    x0: &[DVec3],
    x1: &[DVec3],
    g: f64,
) -> Option<f64> {
    let u = axis.any_orthonormal_vector();
    let w = axis.cross(u);
    let p2 = |p: DVec3| DVec2::new(p.dot(u), p.dot(w));
    struct Seg {
        e: [u32; 2],
        a0: DVec2,
        b0: DVec2,
        a1: DVec2,
        b1: DVec2,
        lo: DVec2,
        hi: DVec2,
    }
    let mut segs: Vec<Seg> = contour
        .iter()
        .map(|&e| {
            let (a0, b0) = (p2(x0[e[0] as usize]), p2(x0[e[1] as usize]));
            let (a1, b1) = (p2(x1[e[0] as usize]), p2(x1[e[1] as usize]));
            let lo = a0.min(b0).min(a1).min(b1) - DVec2::splat(0.5 * g);
            let hi = a0.max(b0).max(a1).max(b1) + DVec2::splat(0.5 * g);
            Seg {
                e,
                a0,
                b0,
                a1,
                b1,
                lo,
                hi,
            }
        })
        .collect();
    segs.sort_by(|a, b| a.lo.x.total_cmp(&b.lo.x));
    let mut apart = g;
    for i in 0..segs.len() {
        let s = &segs[i];
        for o in &segs[i + 1..] {
            if o.lo.x > s.hi.x {
                break;
            }
            if o.lo.y > s.hi.y || s.lo.y > o.hi.y {
                continue;
            }
            if let Some(&v) = s.e.iter().find(|v| o.e.contains(v)) {
                // Two contour edges at one vertex must never lie on each other: the far
                // end of each stays off the other over the sweep.
                let far = |e: [u32; 2], a: DVec2, b: DVec2| if e[0] == v { b } else { a };
                let (p0, p1) = (far(s.e, s.a0, s.b0), far(s.e, s.a1, s.b1));
                let (q0, q1) = (far(o.e, o.a0, o.b0), far(o.e, o.a1, o.b1));
                let off = |p0: DVec2, p1: DVec2, (a0, b0, a1, b1): (DVec2, DVec2, DVec2, DVec2)| {
                    let d0 = point_segment(p0, a0, b0);
                    let d1 = point_segment(p1, a1, b1);
                    let m = p1 - p0;
                    let rel = (m - (a1 - a0)).length().max((m - (b1 - b0)).length());
                    least_over_sweep(d0, d1, rel) > 0.0
                };
                if !off(p0, p1, (o.a0, o.b0, o.a1, o.b1)) || !off(q0, q1, (s.a0, s.b0, s.a1, s.b1))
                {
                    return None;
                }
                continue;
            }
            let d0 = segment_segment(s.a0, s.b0, o.a0, o.b0);
            let d1 = segment_segment(s.a1, s.b1, o.a1, o.b1);
            let (ms, mo) = ([s.a1 - s.a0, s.b1 - s.b0], [o.a1 - o.a0, o.b1 - o.b0]);
            let mut rel: f64 = 0.0;
            for m in ms {
                for n in mo {
                    rel = rel.max((m - n).length());
                }
            }
            apart = apart.min(least_over_sweep(d0, d1, rel));
            if !above(apart, 0.0) {
                return None;
            }
        }
    }
    Some(apart)
}

/// The guard's distance for a disk with cone `cone`, least `h₃` of its triangles `h3`, and
/// the contour `contour` gives (none: no disk), if at least `least` ([`Patches::guard`]):
/// the cheap tests first, the contour last.
fn kept_apart<'a>(
    cone: Cone,
    h3: f64,
    contour: impl FnOnce() -> Option<Cow<'a, [[u32; 2]]>>,
    (x0, x1): (&[DVec3], &[DVec3]),
    least: f64,
    most: f64,
) -> Option<f64> {
    if cone.angle >= WIDEST || !above(least, 0.0) {
        return None;
    }
    let altitude = h3 * cone.angle.cos();
    if !at_least(altitude, least) {
        return None;
    }
    let apart = contour_apart(&contour()?, cone.axis, x0, x1, most)?;
    let g = altitude.min(apart).min(most);
    (g >= least).then_some(g)
}

/// Whether the sorted contours `a` and `b` have an edge in common.
fn share_an_edge(a: &[[u32; 2]], b: &[[u32; 2]]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// How many vertices the contours `a` and `b` share.
fn shared_vertices(a: &[[u32; 2]], b: &[[u32; 2]]) -> usize {
    let vertices = |c: &[[u32; 2]]| {
        let mut v: Vec<u32> = c.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (va, vb) = (vertices(a), vertices(b));
    va.iter().filter(|v| vb.binary_search(v).is_ok()).count()
}

/// The edges of sorted lists `a` and `b` that are on one only, sorted, and how many are on
/// both.
fn symmetric_difference(a: &[[u32; 2]], b: &[[u32; 2]]) -> (Vec<[u32; 2]>, usize) {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut shared = 0;
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] < b[j]) {
            out.push(a[i]);
            i += 1;
        } else if i == a.len() || b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            shared += 1;
            i += 1;
            j += 1;
        }
    }
    (out, shared)
}

/// Whether every vertex of a (nonempty) contour is on exactly two of its edges.
fn two_each(contour: &[[u32; 2]]) -> bool {
    let mut degree: Vec<u32> = contour.iter().flatten().copied().collect();
    degree.sort_unstable();
    !degree.is_empty() && degree.chunk_by(|a, b| a == b).all(|run| run.len() == 2)
}

/// A lower bound on a distance over a sweep that is `d0` at its start and `d1` at its end,
/// between points whose relative motion over it is at most `rel`: `d(t) ≥ d₀ − t·rel` and
/// `d(t) ≥ d₁ − (1 − t)·rel`.
fn least_over_sweep(d0: f64, d1: f64, rel: f64) -> f64 {
    if rel <= (d0 - d1).abs() {
        d0.min(d1)
    } else {
        0.5 * (d0 + d1 - rel)
    }
}

/// Distance from `p` to the segment `ab` in the plane.
fn point_segment(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    let ab = b - a;
    let l = ab.length_squared();
    let t = if l > 0.0 {
        ((p - a).dot(ab) / l).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + ab * t)
}

/// Distance between segments `ab` and `cd` in the plane (0 where they cross).
fn segment_segment(a: DVec2, b: DVec2, c: DVec2, d: DVec2) -> f64 {
    let orient = |p: DVec2, q: DVec2, r: DVec2| (q - p).perp_dot(r - p);
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    if o1 * o2 < 0.0 && o3 * o4 < 0.0 {
        return 0.0;
    }
    point_segment(a, c, d)
        .min(point_segment(b, c, d))
        .min(point_segment(c, a, b))
        .min(point_segment(d, a, b))
}
