//! The cloth: particles as separate arrays and the constraint topology of a grid
//! (004 §3.3, Figs. 1–2) or of a triangle mesh ([`super::mesh`]).

use std::sync::atomic::{AtomicU64, Ordering};

use glam::DVec3;

use super::error::SimError;
use super::kernels;

/// Source of [`fresh_identity`]: every value is handed out once per process.
static NEXT_IDENTITY: AtomicU64 = AtomicU64::new(1);

/// A value no earlier call in this process returned (never 0, so 0 can mean "nothing
/// cached yet"). Topologies take one when they are built and static sets every time they
/// change, so two different cloths can never share a solver's cache key ([`CacheKey`]).
pub(crate) fn fresh_identity() -> u64 {
    NEXT_IDENTITY.fetch_add(1, Ordering::Relaxed)
}

/// What a solver's cached data (patterns, symbolic factorisations, chains, warm starts)
/// depends on, besides its own settings: which topology, and which set of static particles.
///
/// Both parts are process-unique (`fresh_identity`, one global counter): a topology keeps
/// its identity for life and through clones (a clone has the same constraints), and the
/// static set draws a new version whenever it changes, so keys of two different cloths —
/// even of equal particle and constraint counts, or of two clones pinned differently —
/// never collide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CacheKey {
    /// [`Topology::id`] of the cloth.
    pub topology: u64,
    /// [`Cloth::static_version`] of the cloth.
    pub statics: u64,
}

/// Largest supported grid side. 256×256 is the promised minimum; beyond 1024 the
/// interactive tools are pointless and the memory for the SLE grows quickly.
pub const MAX_GRID_SIDE: usize = 1024;

/// Particle state in struct-of-arrays form (004 §3.1: mass, position, velocity).
///
/// Positions and velocities are open to change; which particles are static is not: the
/// solvers cache patterns per set of static particles, so inverse masses and pins change
/// only through [`Cloth::set_pinned`] and the world's grab and taut-chain handling, which
/// keep [`Cloth::static_version`] right.
#[derive(Debug, Clone, PartialEq)]
pub struct Particles {
    /// Positions, m.
    pub x: Vec<DVec3>,
    /// Velocities, m/s.
    pub v: Vec<DVec3>,
    /// Inverse mass used by the solvers (k of eq. 1): 0 for static particles.
    pub(crate) inv_mass: Vec<f64>,
    /// Inverse mass the particle has when it is neither pinned nor grabbed.
    pub(crate) base_inv_mass: Vec<f64>,
    /// Pinned by the user or the scene.
    pub(crate) pinned: Vec<bool>,
}

impl Particles {
    /// Inverse mass used by the solvers (k of eq. 1) of every particle: 0 for static
    /// (pinned, held or locked) particles.
    pub fn inv_mass(&self) -> &[f64] {
        &self.inv_mass
    }

    /// Inverse mass of every particle when it is neither pinned nor held.
    pub fn base_inv_mass(&self) -> &[f64] {
        &self.base_inv_mass
    }

    /// Whether each particle is pinned by the user or the scene.
    pub fn pinned(&self) -> &[bool] {
        &self.pinned
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no particles.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Total linear momentum of the dynamic particles, kg·m/s.
    pub fn linear_momentum(&self) -> DVec3 {
        let mut p = DVec3::ZERO;
        for i in 0..self.len() {
            if self.inv_mass[i] > 0.0 {
                p += self.v[i] / self.inv_mass[i];
            }
        }
        p
    }

    /// Total angular momentum about the origin of the dynamic particles, kg·m²/s.
    pub fn angular_momentum(&self) -> DVec3 {
        let mut l = DVec3::ZERO;
        for i in 0..self.len() {
            if self.inv_mass[i] > 0.0 {
                l += self.x[i].cross(self.v[i] / self.inv_mass[i]);
            }
        }
        l
    }
}

/// Kind of a spring-damper (004 §3.3, Fig. 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum SpringKind {
    /// Quad diagonal.
    Shear,
    /// Two particles apart along a row or a column.
    Bend,
}

/// A spring-damper between two particles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spring {
    /// First particle.
    pub a: u32,
    /// Second particle.
    pub b: u32,
    /// Rest length, m.
    pub rest: f64,
    /// Shear or bend.
    pub kind: SpringKind,
}

/// Layout of the grid in space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Orientation {
    /// In the x–z plane, parallel to the floor (the 004 §4 scene). Row 0 is the far edge
    /// (smallest z).
    #[default]
    Horizontal,
    /// In the x–y plane, a curtain. Row 0 is the top edge.
    Vertical,
}

/// The shape of a grid cloth: particle (r, c) is number r·W + c, its constraints are the
/// grid's horizontal and vertical edges. What the grid's fast paths (strips along rows and
/// columns, nested dissection on the lattice, taut chains) need; a mesh has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct GridShape {
    /// Particles per row.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
}

/// Structural constraints, springs, triangles and the colouring used by the parallel
/// Gauss–Seidel sweep. Built once per cloth; never changes while the cloth lives.
///
/// Every topology built has a process-unique [`Topology::id`] (kept by clones) that the
/// solvers key their caches on: the structure (sides, edges) must not be changed after
/// construction — build a new cloth instead. Rest lengths may be adjusted (the curtain-rod
/// scene sews pleats): no cache depends on them.
#[derive(Debug, Clone)]
pub struct Topology {
    id: u64,
    /// The grid's shape for a grid cloth, `None` for a mesh: code that walks rows and
    /// columns must check it and fall back to the general graph without it.
    pub grid: Option<GridShape>,
    /// Size of the cloth at rest, m, for a mesh: the longest side of its bounding box as
    /// placed ([`Topology::rest_extent`]; a grid's follows its rest lengths).
    pub(crate) mesh_extent: f64,
    /// A mesh's constraints covered by straight acyclic paths, in families that share no
    /// particle ([`super::mesh::paths::strip_cover`], from the rest shape): its strips and
    /// the lines its taut chains are looked for on. Empty for a grid (its rows and columns).
    pub(crate) cover: Vec<Vec<super::mesh::paths::Path>>,
    /// For each particle, the particle of the uncut cloth it is a copy of (a cut,
    /// [`super::mesh::tear`], duplicates particles along its lips); empty: each is its
    /// own. Self-contact treats copies of one particle as one for the pairs it never
    /// tests, as it treats a particle and itself.
    pub(crate) origin: Vec<u32>,
    /// Structural distance constraints (004 §3.2): every horizontal and vertical grid edge,
    /// or the sides of a mesh's quads ([`super::mesh`]).
    pub edges: Vec<[u32; 2]>,
    /// d(0) of each constraint, m.
    pub rest: Vec<f64>,
    /// Shear and bend spring-dampers.
    pub springs: Vec<Spring>,
    /// Render/wind triangles, counter-clockwise seen from the front (+y or +z).
    pub triangles: Vec<[u32; 3]>,
    /// Edge indices grouped by colour: no two edges of one colour share a particle, so
    /// each colour can be solved in parallel (004 §3.4.1, last paragraph).
    pub colours: Vec<Vec<u32>>,
}

/// Equal content; the identity is not compared.
impl PartialEq for Topology {
    fn eq(&self, o: &Self) -> bool {
        self.grid == o.grid
            && self.mesh_extent == o.mesh_extent
            && self.edges == o.edges
            && self.rest == o.rest
            && self.springs == o.springs
            && self.triangles == o.triangles
            && self.colours == o.colours
    }
}

impl Topology {
    /// Process-unique identity of this topology (shared by its clones).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The cloth's size at rest, m: for a grid its longer side, (max(W, H) − 1) times the
    /// longest rest length (at least one rest length); for a mesh the longest side of its
    /// bounding box as built (at least its longest rest length). The scale of
    /// [`crate::sim::MAX_SANE_TRAVEL`].
    pub fn rest_extent(&self) -> f64 {
        match self.grid {
            Some(g) => {
                (g.width.max(g.height).saturating_sub(1)).max(1) as f64 * self.longest_rest()
            }
            None => self.mesh_extent.max(self.longest_rest()),
        }
    }

    /// A topology from its parts (the grid's and the mesh builder's way in): no grid shape
    /// (the grid builder sets its own), a fresh identity, the edges coloured for the
    /// parallel sweep.
    pub(crate) fn from_parts(
        n_particles: usize,
        mesh_extent: f64,
        cover: Vec<Vec<super::mesh::paths::Path>>,
        edges: Vec<[u32; 2]>,
        rest: Vec<f64>,
        springs: Vec<Spring>,
        triangles: Vec<[u32; 3]>,
    ) -> Topology {
        let colours = colour_edges(n_particles, &edges);
        Topology {
            id: fresh_identity(),
            grid: None,
            mesh_extent,
            cover,
            origin: Vec::new(),
            edges,
            rest,
            springs,
            triangles,
            colours,
        }
    }

    /// The triangles around each of `n` particles, as indices into `triangles` (what a
    /// cut splits, and what the lips of one face across it).
    pub(crate) fn fans(&self, n: usize) -> Vec<Vec<u32>> {
        let mut fans: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (k, tri) in self.triangles.iter().enumerate() {
            for &v in tri {
                fans[v as usize].push(k as u32);
            }
        }
        fans
    }

    /// The shortest rest length, m: the scale of the contact's tolerance
    /// ([`crate::sim::collision::contact_slop`]).
    pub fn shortest_rest(&self) -> f64 {
        self.rest.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// The longest rest length, m: the grid's spacing.
    pub fn longest_rest(&self) -> f64 {
        self.rest.iter().copied().fold(0.0, f64::max)
    }

    /// The median rest length, m: the cloth's spacing whatever its mesh (a grid's every
    /// constraint has it; an irregular mesh's few long or short edges do not move it).
    /// 0 for a cloth without constraints.
    pub fn median_rest(&self) -> f64 {
        let mut r: Vec<f64> = self
            .rest
            .iter()
            .copied()
            .filter(|l| l.is_finite())
            .collect();
        if r.is_empty() {
            return 0.0;
        }
        let mid = r.len() / 2;
        *r.select_nth_unstable_by(mid, f64::total_cmp).1
    }

    /// Number of structural constraints.
    pub fn constraint_count(&self) -> usize {
        self.edges.len()
    }
}

/// Greedy edge colouring: each edge gets the smallest colour not used at either of its
/// particles. A grid needs 4 colours. Deterministic (edge order), so the sweep order — and
/// hence the result — does not depend on the thread count.
pub fn colour_edges(n_particles: usize, edges: &[[u32; 2]]) -> Vec<Vec<u32>> {
    let mut used: Vec<u64> = vec![0; n_particles];
    let mut colours: Vec<Vec<u32>> = Vec::new();
    let mut overflow: Vec<u32> = Vec::new();
    for (e, &[a, b]) in edges.iter().enumerate() {
        let mask = used[a as usize] | used[b as usize];
        let c = (!mask).trailing_zeros() as usize;
        if c >= 64 {
            // More than 64 edges at one particle: put it in a sequential tail colour.
            overflow.push(e as u32);
            continue;
        }
        used[a as usize] |= 1 << c;
        used[b as usize] |= 1 << c;
        if colours.len() <= c {
            colours.resize_with(c + 1, Vec::new);
        }
        colours[c].push(e as u32);
    }
    // Overflow edges each get a colour of their own (correct, if slow; never happens on grids).
    for e in overflow {
        colours.push(vec![e]);
    }
    colours
}

/// Parameters of the grid builder.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GridSpec {
    /// Particles per row (W ≥ 1).
    pub width: usize,
    /// Rows (H ≥ 1, W·H ≥ 2).
    pub height: usize,
    /// Length of the longer side of the cloth, m (default 1 m, the benchmark scene).
    pub size: f64,
    /// Total mass, kg (default 0.2 kg, cotton-like for 1 m²).
    pub mass: f64,
    /// Horizontal (004 §4) or vertical (curtain).
    pub orientation: Orientation,
    /// Position of the centre of row 0, m.
    pub origin: DVec3,
}

impl Default for GridSpec {
    fn default() -> Self {
        GridSpec {
            width: 20,
            height: 20,
            size: 1.0,
            mass: 0.2,
            orientation: Orientation::Horizontal,
            origin: DVec3::new(0.0, 1.0, -0.5),
        }
    }
}

impl GridSpec {
    /// Check sizes; the messages name the offending value.
    pub fn validate(&self) -> Result<(), SimError> {
        let (w, h) = (self.width, self.height);
        let bad = |reason: String| SimError::InvalidGrid {
            width: w,
            height: h,
            reason,
        };
        if w == 0 || h == 0 {
            return Err(bad("both sides need at least one particle".into()));
        }
        if w * h < 2 {
            return Err(bad("a cloth needs at least two particles".into()));
        }
        if w > MAX_GRID_SIDE || h > MAX_GRID_SIDE {
            return Err(bad(format!(
                "sides larger than {MAX_GRID_SIDE} are not supported"
            )));
        }
        if !(self.size.is_finite() && self.size > 0.0) {
            return Err(SimError::param(
                "size",
                format!("{} must be a positive length", self.size),
            ));
        }
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(SimError::param(
                "mass",
                format!("{} must be a positive mass", self.mass),
            ));
        }
        if !self.origin.is_finite() {
            return Err(SimError::param("origin", "must be finite"));
        }
        Ok(())
    }

    /// Distance between neighbouring particles, m: the longer side spans `size`.
    pub fn spacing(&self) -> f64 {
        let segments = (self.width.max(self.height) - 1).max(1);
        self.size / segments as f64
    }
}

/// A cloth: particles plus topology. The solvers do not own it, so switching solvers
/// between two steps keeps the cloth exactly where it is.
#[derive(Debug, Clone)]
pub struct Cloth {
    /// Particle state.
    pub particles: Particles,
    /// Constraints and springs.
    pub topology: Topology,
    /// The impulse each distance constraint carried in the step in progress or last
    /// finished, N·s along the constraint, positive where it pulls its two ends together
    /// (its tension times h): what the solvers applied, summed over their passes
    /// ([`ConstraintImpulses::record`]). Kept only while tearing is on
    /// ([`crate::sim::SimParams::tear_strength`]); `None` otherwise, so a step without it
    /// does exactly what it did before.
    pub impulses: Option<Vec<f64>>,
    /// Version of the set of static particles: a fresh process-unique value
    /// ([`fresh_identity`]) whenever it changes (pin, unpin, grab, release, taut chains).
    static_version: u64,
}

/// Equal state (particles and topology); identities and versions are not compared.
impl PartialEq for Cloth {
    fn eq(&self, o: &Self) -> bool {
        self.particles == o.particles && self.topology == o.topology
    }
}

/// Recording the impulses of [`Cloth::impulses`].
pub trait ConstraintImpulses {
    /// Add an impulse `j_b` applied to constraint `e`'s second particle (and −`j_b` to
    /// its first), whose ends are at `xa` and `xb`: its component along b → a, the
    /// constraint's tension impulse. Nothing when impulses are not kept.
    fn record(&mut self, e: usize, j_b: DVec3, xa: DVec3, xb: DVec3);

    /// [`ConstraintImpulses::record`] for a correction given as the velocity changes it
    /// made, (Δv_a, Δv_b) = (−k_a·J, k_b·J) with the ends' inverse masses `ka`, `kb`: the
    /// impulse J = (Δv_b − Δv_a)/(k_a + k_b). Nothing for two static ends.
    fn record_change(
        &mut self,
        e: usize,
        (da, db): (DVec3, DVec3),
        (ka, kb): (f64, f64),
        xa: DVec3,
        xb: DVec3,
    ) {
        let w = ka + kb;
        if w > 0.0 {
            self.record(e, (db - da) / w, xa, xb);
        }
    }

    /// Add a tension impulse `j` (N·s, positive pulling the ends together) to constraint
    /// `e`. Nothing when impulses are not kept.
    fn record_tension(&mut self, e: usize, j: f64);
}

impl ConstraintImpulses for Option<Vec<f64>> {
    #[inline]
    fn record(&mut self, e: usize, j_b: DVec3, xa: DVec3, xb: DVec3) {
        if let Some(log) = self {
            log[e] -= j_b.dot((xb - xa).normalize_or_zero());
        }
    }

    #[inline]
    fn record_tension(&mut self, e: usize, j: f64) {
        if let Some(log) = self {
            log[e] += j;
        }
    }
}

impl Topology {
    /// The particle of the uncut cloth that particle `i` is a copy of (itself if it is no
    /// copy; [`crate::sim::mesh::tear`]).
    pub fn root(&self, i: u32) -> u32 {
        self.origin.get(i as usize).copied().unwrap_or(i)
    }
}

impl Cloth {
    /// Build a W×H grid (004 §3.3): structural constraints on every horizontal and vertical
    /// edge (2WH − W − H), shear springs on both diagonals of each quad and bend springs to
    /// (i±2, j), (i, j±2) (Fig. 2 links a particle to *all* its diagonal neighbours; 004 §4's
    /// count 3(n−1)² − 2 corresponds to one diagonal per quad). Mass is spread evenly.
    pub fn grid(spec: &GridSpec) -> Result<Cloth, SimError> {
        spec.validate()?;
        let (w, h) = (spec.width, spec.height);
        let s = spec.spacing();
        let n = w * h;
        let half = (w as f64 - 1.0) * s * 0.5;
        let mut x = Vec::with_capacity(n);
        for r in 0..h {
            for c in 0..w {
                let along = c as f64 * s - half;
                let across = r as f64 * s;
                let p = match spec.orientation {
                    Orientation::Horizontal => DVec3::new(along, 0.0, across),
                    Orientation::Vertical => DVec3::new(along, -across, 0.0),
                };
                x.push(spec.origin + p);
            }
        }
        let inv_m = n as f64 / spec.mass;
        let idx = |r: usize, c: usize| (r * w + c) as u32;
        let mut edges = Vec::with_capacity(2 * n);
        for r in 0..h {
            for c in 0..w {
                if c + 1 < w {
                    edges.push([idx(r, c), idx(r, c + 1)]);
                }
                if r + 1 < h {
                    edges.push([idx(r, c), idx(r + 1, c)]);
                }
            }
        }
        let rest = edges
            .iter()
            .map(|&[a, b]| x[a as usize].distance(x[b as usize]))
            .collect();
        let mut springs = Vec::new();
        let mut spring = |a: u32, b: u32, kind| {
            springs.push(Spring {
                a,
                b,
                rest: x[a as usize].distance(x[b as usize]),
                kind,
            })
        };
        for r in 0..h {
            for c in 0..w {
                if r + 1 < h && c + 1 < w {
                    spring(idx(r, c), idx(r + 1, c + 1), SpringKind::Shear);
                    spring(idx(r, c + 1), idx(r + 1, c), SpringKind::Shear);
                }
                if c + 2 < w {
                    spring(idx(r, c), idx(r, c + 2), SpringKind::Bend);
                }
                if r + 2 < h {
                    spring(idx(r, c), idx(r + 2, c), SpringKind::Bend);
                }
            }
        }
        let mut triangles = Vec::new();
        for r in 0..h.saturating_sub(1) {
            for c in 0..w.saturating_sub(1) {
                triangles.push([idx(r, c), idx(r + 1, c), idx(r, c + 1)]);
                triangles.push([idx(r, c + 1), idx(r + 1, c), idx(r + 1, c + 1)]);
            }
        }
        let mut topology =
            Topology::from_parts(n, 0.0, Vec::new(), edges, rest, springs, triangles);
        topology.grid = Some(GridShape {
            width: w,
            height: h,
        });
        Ok(Cloth::from_topology(x, vec![inv_m; n], topology))
    }

    /// A cloth of particles at `x` with inverse masses `inv_mass` (all positive) on
    /// `topology`, at rest, nothing pinned: the builders' way in.
    pub(crate) fn from_topology(x: Vec<DVec3>, inv_mass: Vec<f64>, topology: Topology) -> Cloth {
        let n = x.len();
        Cloth {
            particles: Particles {
                v: vec![DVec3::ZERO; n],
                base_inv_mass: inv_mass.clone(),
                inv_mass,
                pinned: vec![false; n],
                x,
            },
            topology,
            impulses: None,
            static_version: fresh_identity(),
        }
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.particles.len()
    }

    /// Version of the set of static particles: changes (to a value never used before in
    /// this process) whenever a particle becomes static or dynamic.
    pub fn static_version(&self) -> u64 {
        self.static_version
    }

    /// The key of the solver caches for this cloth as it is now.
    pub fn cache_key(&self) -> CacheKey {
        CacheKey {
            topology: self.topology.id,
            statics: self.static_version,
        }
    }

    /// Record that the set of static particles (may have) changed: solvers rebuild what
    /// they cached for the old one.
    pub(crate) fn statics_changed(&mut self) {
        self.static_version = fresh_identity();
    }

    /// Give particle `i` the inverse mass `inv_mass` while it is held by the user: 0 (static)
    /// for a pinned particle, the hand's for any other ([`super::grab`]).
    pub(crate) fn hold(&mut self, i: usize, inv_mass: f64) {
        self.keep_held(i, inv_mass);
        self.statics_changed();
    }

    /// Give held particle `i` its inverse mass again (0 if pinned, else `inv_mass`) without
    /// a change of the static set: for a set that [`Cloth::hold`] or a pin change already
    /// announced.
    pub(crate) fn keep_held(&mut self, i: usize, inv_mass: f64) {
        let p = &mut self.particles;
        p.inv_mass[i] = if p.pinned[i] { 0.0 } else { inv_mass };
    }

    /// Total mass of the cloth, kg: every particle's own mass, pinned or not.
    pub fn total_mass(&self) -> f64 {
        self.particles
            .base_inv_mass
            .iter()
            .map(|&k| kernels::mass_of(k))
            .sum()
    }

    /// Let go of particle `i`: a pinned particle stays static and stops, any other gets its
    /// inverse mass back and keeps its velocity.
    pub(crate) fn let_go(&mut self, i: usize) {
        let p = &mut self.particles;
        if p.pinned[i] {
            p.v[i] = DVec3::ZERO;
        } else {
            p.inv_mass[i] = p.base_inv_mass[i];
        }
        self.statics_changed();
    }

    /// Whether the cloth has no particles (never true for a built grid).
    pub fn is_empty(&self) -> bool {
        self.particles.is_empty()
    }

    /// Relative strain |d − L|/L of every structural constraint.
    pub fn strains(&self) -> impl Iterator<Item = f64> + '_ {
        let x = &self.particles.x;
        self.topology
            .edges
            .iter()
            .zip(&self.topology.rest)
            .map(move |(&[a, b], &l)| kernels::strain(x[a as usize].distance(x[b as usize]), l))
    }

    /// (max, mean) relative strain over the structural constraints.
    pub fn strain_stats(&self) -> (f64, f64) {
        let mut max = 0.0f64;
        let mut sum = 0.0;
        let mut n = 0usize;
        for s in self.strains() {
            max = max.max(s);
            sum += s;
            n += 1;
        }
        (max, if n > 0 { sum / n as f64 } else { 0.0 })
    }

    /// Largest strain of the constraints touching each particle (for the heat-map).
    pub fn particle_strains(&self, out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.len(), 0.0);
        for (s, &[a, b]) in self.strains().zip(&self.topology.edges) {
            out[a as usize] = out[a as usize].max(s);
            out[b as usize] = out[b as usize].max(s);
        }
    }

    fn check_index(&self, i: usize) -> Result<(), SimError> {
        if i >= self.len() {
            return Err(SimError::ParticleOutOfRange {
                index: i,
                count: self.len(),
            });
        }
        Ok(())
    }

    /// Pin (`true`) or unpin particle `i`: its inverse mass becomes 0 (static, 004 §3.1)
    /// or its original value. A pinned particle's velocity is zeroed.
    pub fn set_pinned(&mut self, i: usize, pinned: bool) -> Result<(), SimError> {
        self.check_index(i)?;
        if self.particles.pinned[i] != pinned {
            self.particles.pinned[i] = pinned;
            self.statics_changed();
        }
        let p = &mut self.particles;
        if pinned {
            p.inv_mass[i] = 0.0;
            p.v[i] = DVec3::ZERO;
        } else {
            p.inv_mass[i] = p.base_inv_mass[i];
        }
        Ok(())
    }

    /// Indices of the pinned particles.
    pub fn pinned_indices(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.particles.pinned[i])
            .collect()
    }

    /// Index of the particle nearest to `p`.
    pub fn nearest_particle(&self, p: DVec3) -> usize {
        let mut best = (f64::INFINITY, 0);
        for (i, x) in self.particles.x.iter().enumerate() {
            let d = x.distance_squared(p);
            if d < best.0 {
                best = (d, i);
            }
        }
        best.1
    }
}
