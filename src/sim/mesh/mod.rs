//! Cloth of any shape: a triangle mesh (from an OBJ file, [`obj`], or built in code) made
//! into a cloth whose constraints do not lock.
//!
//! The grid is one mesh among others: its particles, triangles and constraints are what
//! this builder makes of the grid's own triangles (the test `square_from_obj` compares
//! them). What stays the grid's own are its fast paths, which need rows and columns
//! ([`super::cloth::GridShape`]): strips along rows and columns, nested dissection on the
//! lattice, taut chains.
//!
//! Constraint choice ([`ConstraintChoice`], measured in docs/numerics.md, "Meshes"):
//! triangles are paired into quads (`quads.rs`) whose sides are the distance constraints;
//! the quads' diagonals are shear springs and straight continuations through a particle
//! ([`paths::continuations`]) are bend springs, as on the grid (004 §3.3).

pub mod obj;
pub mod paths;
pub(crate) mod quads;
pub mod tear;

use glam::DVec3;
use thiserror::Error;

use super::cloth::{Cloth, MAX_GRID_SIDE, Spring, SpringKind, Topology};

/// Most particles a mesh may have: as many as the largest grid.
pub const MAX_MESH_PARTICLES: usize = MAX_GRID_SIDE * MAX_GRID_SIDE;

/// A triangle mesh: what a cloth is made of.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TriMesh {
    /// Vertex positions (the file's units).
    pub positions: Vec<DVec3>,
    /// Triangles, by vertex index, in the file's winding.
    pub triangles: Vec<[u32; 3]>,
    /// For each triangle, the polygon of the file it was cut from (the quad pairing keeps
    /// a file's quads together).
    pub faces: Vec<u32>,
    /// Vertex count of each polygon of the file.
    pub face_sizes: Vec<u32>,
    /// Named vertex groups (an OBJ `g`/`o` name and every vertex its elements use).
    pub groups: Vec<VertexGroup>,
}

/// A named set of vertices (pins by name: `--pin group:NAME`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VertexGroup {
    /// The group's name in the file.
    pub name: String,
    /// Its vertices, sorted, without repeats.
    pub vertices: Vec<u32>,
}

/// Why a file or mesh cannot be a cloth. One line each, naming the place.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MeshError {
    /// A line of the file is not OBJ as this reader knows it.
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// No triangles at all.
    #[error("the mesh has no triangles (an empty file, or no `f` lines)")]
    Empty,
    /// A face names a vertex the file does not have.
    #[error(
        "line {line}: vertex index {index} is out of range (the file has {count} vertices so far)"
    )]
    IndexOutOfRange {
        /// 1-based line number.
        line: usize,
        /// The index as written.
        index: i64,
        /// Vertices defined before that line.
        count: usize,
    },
    /// A coordinate is NaN or infinite.
    #[error("vertex {vertex} has a non-finite coordinate")]
    NonFinite {
        /// 0-based vertex index.
        vertex: usize,
    },
    /// A triangle has two equal vertices or (nearly) no area.
    #[error("triangle {triangle} (vertices {a}, {b}, {c}) is degenerate: {reason}")]
    Degenerate {
        /// 0-based triangle index.
        triangle: usize,
        /// Its vertices (0-based).
        a: u32,
        /// Second vertex.
        b: u32,
        /// Third vertex.
        c: u32,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// More than two triangles share an edge: not a surface.
    #[error(
        "edge between vertices {a} and {b} is shared by {count} triangles: a cloth must be a manifold surface (at most two per edge)"
    )]
    NonManifold {
        /// First vertex (0-based).
        a: u32,
        /// Second vertex.
        b: u32,
        /// Triangles sharing it.
        count: usize,
    },
    /// A vertex that no triangle uses would be a particle with no constraint.
    #[error("vertex {vertex} is used by no triangle: a loose particle cannot be cloth")]
    LooseVertex {
        /// 0-based vertex index.
        vertex: usize,
    },
    /// Too many vertices.
    #[error("the mesh has {count} vertices; at most {max} are supported")]
    TooLarge {
        /// Vertices in the mesh.
        count: usize,
        /// [`MAX_MESH_PARTICLES`].
        max: usize,
    },
    /// The mesh has no extent (all vertices at one point).
    #[error("the mesh has no extent: all its vertices are at one point")]
    NoExtent,
    /// `--pin group:NAME` names a group the file does not have.
    #[error("the mesh has no vertex group `{name}` (it has: {have})")]
    NoGroup {
        /// The name asked for.
        name: String,
        /// The groups the mesh has, comma-separated.
        have: String,
    },
    /// The file cannot be read.
    #[error("cannot read {path}: {reason}")]
    Io {
        /// The path as given.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
}

/// Which edges of the mesh are distance constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConstraintChoice {
    /// Triangles paired into quads; the quads' sides are constraints, their diagonals
    /// shear springs (`quads.rs`). Does not lock.
    #[default]
    Quads,
    /// Every edge a constraint, no shear springs: locks (kept to measure it).
    AllEdges,
}

impl ConstraintChoice {
    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            ConstraintChoice::Quads => "quads",
            ConstraintChoice::AllEdges => "all-edges",
        }
    }
}

impl std::fmt::Display for ConstraintChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ConstraintChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        super::kind::parse_named(
            &[ConstraintChoice::Quads, ConstraintChoice::AllEdges],
            ConstraintChoice::name,
            "constraints",
            s,
        )
    }
}

/// How the cloth's mass is spread over the particles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MassRule {
    /// Each particle a third of the area of its triangles (uniform areal density).
    #[default]
    Area,
    /// The same mass at every particle, as on the grid (004 §3.3).
    Even,
}

/// What the builder made of a mesh, for the panel, `run`'s report and the docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct MeshBuild {
    /// Triangles in the mesh.
    pub triangles: usize,
    /// Quads the triangles were paired into.
    pub quads: usize,
    /// Triangles left unpaired (all three sides constraints).
    pub unpaired: usize,
    /// Distance constraints.
    pub constraints: usize,
    /// Shear springs (both diagonals of each quad).
    pub shear: usize,
    /// Bend springs (straight continuations).
    pub bend: usize,
}

impl TriMesh {
    /// Refuse what cannot be a cloth: no triangles, too many vertices, non-finite
    /// coordinates, indices out of range, loose vertices, degenerate triangles (a
    /// repeated vertex, or an area below 1e-10 of its longest side squared), edges shared
    /// by more than two triangles.
    pub fn validate(&self) -> Result<(), MeshError> {
        if self.triangles.is_empty() {
            return Err(MeshError::Empty);
        }
        let n = self.positions.len();
        if n > MAX_MESH_PARTICLES {
            return Err(MeshError::TooLarge {
                count: n,
                max: MAX_MESH_PARTICLES,
            });
        }
        if let Some(v) = self.positions.iter().position(|p| !p.is_finite()) {
            return Err(MeshError::NonFinite { vertex: v });
        }
        let mut used = vec![false; n];
        for (t, &[a, b, c]) in self.triangles.iter().enumerate() {
            let bad = |reason| MeshError::Degenerate {
                triangle: t,
                a,
                b,
                c,
                reason,
            };
            if [a, b, c].iter().any(|&i| i as usize >= n) {
                return Err(MeshError::IndexOutOfRange {
                    line: 0,
                    index: a.max(b).max(c) as i64,
                    count: n,
                });
            }
            if a == b || b == c || a == c {
                return Err(bad("a vertex is repeated"));
            }
            let [pa, pb, pc] = [a, b, c].map(|i| self.positions[i as usize]);
            let longest = (pb - pa)
                .length_squared()
                .max((pc - pb).length_squared())
                .max((pa - pc).length_squared());
            let area2 = (pb - pa).cross(pc - pa).length();
            if area2.is_nan() || area2 <= 1e-10 * longest {
                return Err(bad("its area is zero"));
            }
            for i in [a, b, c] {
                used[i as usize] = true;
            }
        }
        if let Some(v) = used.iter().position(|&u| !u) {
            return Err(MeshError::LooseVertex { vertex: v });
        }
        let mut shared: Vec<((u32, u32), usize)> = quads::edge_map(&self.triangles)
            .into_iter()
            .filter(|(_, ts)| ts.len() > 2)
            .map(|(k, ts)| (k, ts.len()))
            .collect();
        shared.sort();
        if let Some(&((a, b), count)) = shared.first() {
            return Err(MeshError::NonManifold { a, b, count });
        }
        Ok(())
    }

    /// Axis-aligned bounds (min, max) of the vertices.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        bounds(&self.positions)
    }

    /// The vertices placed as a scene places a cloth: scaled uniformly so the longest side
    /// of the bounding box is `size`, centred on x = 0 and z = 0, its highest point at
    /// height `top`. (The grid's own placement, 1.2 × size above the floor, is the same
    /// rule.) The file's axes are kept: y is up.
    pub fn placed(&self, size: f64, top: f64) -> Result<Vec<DVec3>, MeshError> {
        let (lo, hi) = self.bounds();
        let extent = (hi - lo).max_element();
        if !(extent.is_finite() && extent > 0.0) {
            return Err(MeshError::NoExtent);
        }
        let s = size / extent;
        let centre = DVec3::new(0.5 * (lo.x + hi.x), hi.y, 0.5 * (lo.z + hi.z));
        Ok(self
            .positions
            .iter()
            .map(|&p| (p - centre) * s + DVec3::new(0.0, top, 0.0))
            .collect())
    }

    /// Vertices of the group `name`.
    pub fn group(&self, name: &str) -> Result<&[u32], MeshError> {
        self.groups
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.vertices.as_slice())
            .ok_or_else(|| MeshError::NoGroup {
                name: name.to_string(),
                have: if self.groups.is_empty() {
                    "none".into()
                } else {
                    self.groups
                        .iter()
                        .map(|g| g.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })
    }

    /// The cloth's own mesh: its particles and triangles (a grid's square as a mesh).
    pub fn of_cloth(cloth: &Cloth) -> TriMesh {
        let nt = cloth.topology.triangles.len();
        TriMesh {
            positions: cloth.particles.x.clone(),
            triangles: cloth.topology.triangles.clone(),
            faces: (0..nt as u32).collect(),
            face_sizes: vec![3; nt],
            groups: Vec::new(),
        }
    }
}

/// Axis-aligned bounds (min, max) of the points `x` (infinite, inverted, if none).
pub fn bounds(x: &[DVec3]) -> (DVec3, DVec3) {
    x.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), &p| (lo.min(p), hi.max(p)),
    )
}

/// Build a cloth of total mass `mass` on `mesh` with its vertices at `x` (placed, one per
/// vertex): constraints as `choice` says, springs as on the grid, triangles as in the mesh.
/// The mesh must be valid ([`TriMesh::validate`] is called).
///
/// Edges are numbered in (smaller particle, larger particle) order — the grid's own order
/// — and springs in the grid's order too, so a grid's mesh gives the grid's constraints
/// and springs in the grid's order.
pub fn build_cloth(
    mesh: &TriMesh,
    x: Vec<DVec3>,
    mass: f64,
    choice: ConstraintChoice,
    rule: MassRule,
) -> Result<(Cloth, MeshBuild), MeshError> {
    mesh.validate()?;
    if x.len() != mesh.positions.len() || x.iter().any(|p| !p.is_finite()) {
        return Err(MeshError::NoExtent);
    }
    let n = x.len();
    let map = quads::edge_map(&mesh.triangles);
    let quads = match choice {
        ConstraintChoice::Quads => {
            quads::pair(&x, &mesh.triangles, &mesh.faces, &mesh.face_sizes, &map)
        }
        ConstraintChoice::AllEdges => Vec::new(),
    };
    let mut diagonal: std::collections::HashSet<(u32, u32)> =
        std::collections::HashSet::with_capacity(quads.len());
    for q in &quads {
        diagonal.insert((q.diagonal[0], q.diagonal[1]));
    }
    let mut edges: Vec<[u32; 2]> = map
        .keys()
        .filter(|k| !diagonal.contains(k))
        .map(|&(a, b)| [a, b])
        .collect();
    edges.sort_unstable();
    let rest: Vec<f64> = edges
        .iter()
        .map(|&[a, b]| x[a as usize].distance(x[b as usize]))
        .collect();
    let spring = |a: u32, b: u32, kind| Spring {
        a: a.min(b),
        b: a.max(b),
        rest: x[a as usize].distance(x[b as usize]),
        kind,
    };
    // Springs in the grid's order: particle by particle (by the smallest particle of a
    // quad, or of a bend spring), a quad's diagonal through that particle first, then its
    // other diagonal, then the bend springs from it — so a grid's mesh sums the spring
    // forces in the grid's order (the square from OBJ follows the grid bit for bit).
    let mut keyed: Vec<((u32, u32, u32), Spring)> = Vec::new();
    for q in &quads {
        let m = q.diagonal[0].min(q.cross[0]);
        let (first, second) = if q.diagonal[0] == m {
            (q.diagonal, q.cross)
        } else {
            (q.cross, q.diagonal)
        };
        keyed.push(((m, 0, 0), spring(first[0], first[1], SpringKind::Shear)));
        keyed.push(((m, 0, 1), spring(second[0], second[1], SpringKind::Shear)));
    }
    let continued = paths::continuations(&x, &edges);
    for &(v, e1, e2) in &continued {
        let o = |e: u32| {
            let [a, b] = edges[e as usize];
            if a == v { b } else { a }
        };
        let s = spring(o(e1), o(e2), SpringKind::Bend);
        keyed.push(((s.a, 1, s.b), s));
    }
    keyed.sort_by_key(|&(k, _)| k);
    let mut seen = std::collections::HashSet::with_capacity(keyed.len());
    let springs: Vec<Spring> = keyed
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| seen.insert((s.a, s.b)))
        .collect();
    let shear = springs
        .iter()
        .filter(|s| s.kind == SpringKind::Shear)
        .count();
    let build = MeshBuild {
        triangles: mesh.triangles.len(),
        quads: quads.len(),
        unpaired: mesh.triangles.len() - 2 * quads.len(),
        constraints: edges.len(),
        shear,
        bend: springs.len() - shear,
    };
    let inv_mass = match rule {
        MassRule::Even => vec![n as f64 / mass; n],
        MassRule::Area => {
            let mut share = vec![0.0; n];
            let mut total = 0.0;
            for &[a, b, c] in &mesh.triangles {
                let [pa, pb, pc] = [a, b, c].map(|i| x[i as usize]);
                let area = 0.5 * (pb - pa).cross(pc - pa).length();
                total += area;
                for i in [a, b, c] {
                    share[i as usize] += area / 3.0;
                }
            }
            share.iter().map(|&s| total / (mass * s)).collect()
        }
    };
    let (lo, hi) = bounds(&x);
    let cover = paths::strip_cover_along(n, &edges, &continued);
    let topology = Topology::from_parts(
        n,
        (hi - lo).max_element(),
        cover,
        edges,
        rest,
        springs,
        mesh.triangles.clone(),
    );
    Ok((Cloth::from_topology(x, inv_mass, topology), build))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::cloth::GridSpec;

    /// A W×H grid, and the cloth the mesh builder makes of its own triangles.
    fn grid_and_its_mesh(
        width: usize,
        height: usize,
        choice: ConstraintChoice,
        rule: MassRule,
    ) -> (Cloth, Cloth, MeshBuild) {
        let grid = Cloth::grid(&GridSpec {
            width,
            height,
            ..GridSpec::default()
        })
        .unwrap();
        let mesh = TriMesh::of_cloth(&grid);
        let (c, b) = build_cloth(&mesh, grid.particles.x.clone(), 0.2, choice, rule).unwrap();
        (grid, c, b)
    }

    #[test]
    fn a_grids_mesh_gives_the_grids_constraints() {
        let (grid, c, b) = grid_and_its_mesh(7, 5, ConstraintChoice::Quads, MassRule::Even);
        assert_eq!(b.quads, 24);
        assert_eq!(b.unpaired, 0);
        assert_eq!(
            c.topology.edges, grid.topology.edges,
            "same constraints, same order"
        );
        assert_eq!(c.topology.rest, grid.topology.rest);
        let key = |s: &Spring| (s.a.min(s.b), s.a.max(s.b), s.kind);
        let want: Vec<_> = grid.topology.springs.iter().map(key).collect();
        let got: Vec<_> = c.topology.springs.iter().map(key).collect();
        assert_eq!(got, want, "the grid's shear and bend springs, in its order");
        assert_eq!(c.particles.inv_mass(), grid.particles.inv_mass());
    }

    #[test]
    fn every_edge_constrained_when_asked() {
        let (_, c, b) = grid_and_its_mesh(4, 4, ConstraintChoice::AllEdges, MassRule::Area);
        assert_eq!(b.quads, 0);
        assert_eq!(c.topology.edges.len(), 24 + 9, "sides and diagonals");
        let total: f64 = c.particles.inv_mass().iter().map(|k| 1.0 / k).sum();
        assert!((total - 0.2).abs() < 1e-12, "mass kept: {total}");
    }
}

#[cfg(test)]
mod shipped_tests {
    use super::*;
    use crate::sim::ScenePreset;

    /// Every shipped mesh pairs into quads completely: no triangle keeps three
    /// constraints (docs/numerics.md, "Meshes: which edges are constraints").
    #[test]
    fn the_shipped_meshes_pair_completely() {
        for preset in ScenePreset::ALL {
            let Some((name, text)) = preset.shipped_mesh() else {
                continue;
            };
            let m = obj::parse(text).unwrap();
            let (_, b) = build_cloth(
                &m,
                m.positions.clone(),
                0.2,
                ConstraintChoice::Quads,
                MassRule::Area,
            )
            .unwrap();
            eprintln!("{name}: {b:?}");
            assert_eq!(b.unpaired, 0, "{name}: {b:?}");
        }
    }
}
