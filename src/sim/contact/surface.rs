//! The cloth's surface as contact sees it: the topology's triangles and the edges of those
//! triangles (the structural constraints and the triangulation's diagonals), with nothing
//! of the grid's rows and columns — any triangle mesh gives the same structure.

use super::super::cloth::Topology;

/// Triangles and their edges, derived once per topology ([`Topology::id`]).
#[derive(Debug, Clone, Default)]
pub struct Surface {
    /// The topology this surface was derived from.
    pub topology: u64,
    /// Particles.
    pub particles: usize,
    /// Triangles (the topology's).
    pub triangles: Vec<[u32; 3]>,
    /// Every edge of a triangle once, as (smaller, larger) particle index.
    pub edges: Vec<[u32; 2]>,
    /// Each particle's particle of the uncut cloth ([`Topology`]'s `origin`; empty: each
    /// its own): the pairs never tested are decided on these, so the two lips of a cut,
    /// which start on each other, are not taken for a contact or a crossing where they
    /// share a particle of the uncut cloth.
    pub root: Vec<u32>,
}

impl Surface {
    /// The surface of `topology` with `particles` particles.
    pub fn new(topology: &Topology, particles: usize) -> Surface {
        let mut edges: Vec<[u32; 2]> = topology
            .triangles
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        Surface {
            topology: topology.id(),
            particles,
            triangles: topology.triangles.clone(),
            edges,
            root: topology.origin.clone(),
        }
    }

    /// The particle of the uncut cloth particle `i` is (itself, if never cut).
    fn root_of(&self, i: u32) -> u32 {
        self.root.get(i as usize).copied().unwrap_or(i)
    }

    /// Whether vertex `p` is a corner of triangle `t` (a pair contact never tests), copies
    /// of one particle counting as one.
    pub fn vertex_in_triangle(&self, p: u32, t: [u32; 3]) -> bool {
        if self.root.is_empty() {
            return vertex_in_triangle(p, t);
        }
        let r = self.root_of(p);
        t.iter().any(|&k| self.root_of(k) == r)
    }

    /// Whether two edges share a particle (a pair contact never tests), copies counting as
    /// one.
    pub fn edges_share(&self, a: [u32; 2], b: [u32; 2]) -> bool {
        if self.root.is_empty() {
            return edges_share(a, b);
        }
        let (a, b) = (a.map(|i| self.root_of(i)), b.map(|i| self.root_of(i)));
        edges_share(a, b)
    }

    /// Whether edge `e` shares a particle with triangle `t`, copies counting as one.
    pub fn edge_touches_triangle(&self, e: [u32; 2], t: [u32; 3]) -> bool {
        if self.root.is_empty() {
            return edge_touches_triangle(e, t);
        }
        edge_touches_triangle(e.map(|i| self.root_of(i)), t.map(|i| self.root_of(i)))
    }

    /// Whether this surface was derived from `topology`.
    pub fn is_of(&self, topology: &Topology, particles: usize) -> bool {
        self.topology == topology.id() && self.particles == particles
    }
}

/// Whether vertex `p` is a corner of triangle `t` (a pair contact never tests).
pub fn vertex_in_triangle(p: u32, t: [u32; 3]) -> bool {
    t.contains(&p)
}

/// Whether two edges share a particle (a pair contact never tests).
pub fn edges_share(a: [u32; 2], b: [u32; 2]) -> bool {
    a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1]
}

/// Whether edge `e` shares a particle with triangle `t`.
pub fn edge_touches_triangle(e: [u32; 2], t: [u32; 3]) -> bool {
    t.contains(&e[0]) || t.contains(&e[1])
}
