//! The cloth's surface as contact sees it: the topology's triangles and the edges of those
//! triangles (the structural constraints and the triangulation's diagonals), with nothing
//! of the grid's rows and columns — any triangle mesh gives the same structure.

use glam::DVec3;

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
    /// its own): the two lips of a cut start on each other, and a pair of features joined
    /// only by copies of one particle ([`Shared::Copies`]) is tested by how far those
    /// copies have come apart ([`Surface::opening`]).
    pub root: Vec<u32>,
    /// Every (edge, triangle) pair joined only by copies of one particle ([`Shared::Copies`])
    /// once per copy they hold: what can cross where the lips of a cut part.
    pub lips: Vec<LipPair>,
}

/// An edge and a triangle on two lips of a cut ([`Surface::lips`]): the edge has copy `a`
/// of a particle of which the triangle's corner `b` is another copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LipPair {
    /// The edge.
    pub edge: [u32; 2],
    /// The triangle.
    pub tri: [u32; 3],
    /// The edge's end that is a copy.
    pub a: u32,
    /// The triangle's corner that is another copy of the same particle.
    pub b: u32,
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
        let mut surface = Surface {
            topology: topology.id(),
            particles,
            triangles: topology.triangles.clone(),
            edges,
            root: topology.origin.clone(),
            lips: Vec::new(),
        };
        surface.lips = surface.lip_pairs(topology);
        surface
    }

    /// The (edge, triangle) pairs on two lips ([`Surface::lips`]), in the order of the
    /// copies, their edges and the other copies' triangles in `topology`.
    fn lip_pairs(&self, topology: &Topology) -> Vec<LipPair> {
        if self.root.is_empty() {
            return Vec::new();
        }
        let n = self.particles;
        let tris_at = topology.fans(n);
        let mut copies: Vec<Vec<u32>> = vec![Vec::new(); n];
        for i in 0..n as u32 {
            let r = self.root_of(i) as usize;
            if r < n {
                copies[r].push(i);
            }
        }
        let mut edges_at: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (k, e) in self.edges.iter().enumerate() {
            for &i in e {
                edges_at[i as usize].push(k as u32);
            }
        }
        let mut out = Vec::new();
        for group in copies.iter().filter(|g| g.len() > 1) {
            for &a in group {
                for &b in group.iter().filter(|&&b| b != a) {
                    for &e in &edges_at[a as usize] {
                        let edge = self.edges[e as usize];
                        for &t in &tris_at[b as usize] {
                            let tri = self.triangles[t as usize];
                            if !edge.iter().any(|i| tri.contains(i)) {
                                out.push(LipPair { edge, tri, a, b });
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The particle of the uncut cloth particle `i` is (itself, if never cut).
    fn root_of(&self, i: u32) -> u32 {
        self.root.get(i as usize).copied().unwrap_or(i)
    }

    /// How features `a` and `b` (the particles of a vertex, an edge or a triangle) are
    /// joined: by a particle they share (a pair contact never tests), by copies of one
    /// particle of the uncut cloth only (the two lips of a cut, [`Shared::Copies`]), or
    /// not at all.
    pub fn shared(&self, a: &[u32], b: &[u32]) -> Shared {
        if a.iter().any(|i| b.contains(i)) {
            return Shared::Particle;
        }
        if self.root.is_empty() {
            return Shared::Nothing;
        }
        let copies = a
            .iter()
            .any(|&i| b.iter().any(|&k| self.root_of(i) == self.root_of(k)));
        if copies {
            Shared::Copies
        } else {
            Shared::Nothing
        }
    }

    /// How far apart at `x` the closest copies of one particle are that features `a` and
    /// `b` hold between them (infinite if they hold none): how far the lips of a cut
    /// have opened at the pair.
    pub fn opening(&self, a: &[u32], b: &[u32], x: &[DVec3]) -> f64 {
        let mut d = f64::INFINITY;
        for &i in a {
            for &k in b {
                if i != k && self.root_of(i) == self.root_of(k) {
                    d = d.min(x[i as usize].distance(x[k as usize]));
                }
            }
        }
        d
    }

    /// Whether this surface was derived from `topology`.
    pub fn is_of(&self, topology: &Topology, particles: usize) -> bool {
        self.topology == topology.id() && self.particles == particles
    }
}

/// How two features of a surface are joined ([`Surface::shared`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    /// By no particle.
    Nothing,
    /// By a particle: a pair contact never tests.
    Particle,
    /// Only by copies of one particle of the uncut cloth: the two lips of a cut.
    Copies,
}
