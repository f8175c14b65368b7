//! Shared helpers for the integration tests.
#![allow(dead_code)]

use glam::DVec3;
use impulse_cloth::sim::{PinSpec, ScenePreset, SceneSpec, SimParams, SolverKind, Topology, World};

/// The 004 §4 scene at `n`×`n`, with pins moved inward by `slack`.
pub fn hanging(n: usize, slack: f64, params: SimParams) -> World {
    let mut spec = SceneSpec::new(ScenePreset::Hanging, n, n);
    spec.slack = slack;
    spec.build(params).expect("valid scene")
}

/// A free cloth (no pins, no gravity) with random velocities everywhere.
pub fn free_cloth(n: usize, params: SimParams, seed: u64) -> World {
    let mut spec = SceneSpec::new(ScenePreset::Hanging, n, n);
    spec.pins = PinSpec::None;
    spec.perturb = 1.0;
    spec.perturb_speed = 0.3;
    spec.seed = seed;
    let mut p = params;
    p.gravity = glam::DVec3::ZERO;
    p.shear.stiffness = 0.0;
    p.shear.damping = 0.0;
    p.bend.stiffness = 0.0;
    p.bend.damping = 0.0;
    spec.build(p).expect("valid scene")
}

/// Parameters with a solver's tolerance.
pub fn params(tol: f64) -> SimParams {
    SimParams {
        tolerance: tol,
        ..SimParams::default()
    }
}

/// Run `steps` steps, returning the statistics.
pub fn run(
    world: &mut World,
    kind: SolverKind,
    steps: usize,
) -> Vec<impulse_cloth::sim::StepStats> {
    let mut solver = kind.create();
    (0..steps)
        .map(|_| world.step(solver.as_mut()).expect("finite step"))
        .collect()
}

/// Largest distance between corresponding points of two position lists.
pub fn max_distance(a: &[glam::DVec3], b: &[glam::DVec3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| p.distance(*q))
        .fold(0.0, f64::max)
}

/// Largest relative strain |d − L|/L of the world's constraints, recomputed from the
/// positions (not the solver's own measure).
pub fn strain_from_positions(world: &World) -> f64 {
    let t = &world.cloth.topology;
    let x = &world.cloth.particles.x;
    t.edges
        .iter()
        .zip(&t.rest)
        .map(|(&[a, b], &l)| (x[a as usize].distance(x[b as usize]) - l).abs() / l)
        .fold(0.0, f64::max)
}

/// Assert that every step in `stats` ended with its largest strain within `tol` (with a
/// relative slack of 1e-9 for round-off).
pub fn assert_strain_within<'a>(
    stats: impl IntoIterator<Item = &'a impulse_cloth::sim::StepStats>,
    tol: f64,
) {
    for s in stats {
        assert!(
            s.max_strain <= tol * (1.0 + 1e-9),
            "tol {tol}: step {} strain {}",
            s.step,
            s.max_strain
        );
    }
}

/// Whether segment pq passes through triangle abc: its ends on either side of the plane by
/// more than round-off (1e-9 of the segment's length: an edge in the plane of a flat
/// region's triangle is no crossing) and the point where it meets the plane inside the
/// triangle (written apart from the crate's own test, on signed volumes).
pub fn crosses(p: DVec3, q: DVec3, a: DVec3, b: DVec3, c: DVec3) -> bool {
    crosses_by(p, q, a, b, c, 0.0)
}

/// [`crosses`] with the line's sides of the triangle's three edges, and the ends' sides of
/// its plane, compared against `margin` (relative, added to the plane test's 1e-9):
/// positive, the segment must pass through the plane and the triangle's interior by that
/// much (a crossing beyond doubt); negative, one that passes within it of the boundary or
/// ends within it of the plane counts too (a state clean beyond doubt has none).
/// A line through a triangle's edge is where round-off decides, and two counters may
/// decide it differently.
pub fn crosses_by(p: DVec3, q: DVec3, a: DVec3, b: DVec3, c: DVec3, margin: f64) -> bool {
    let vol = |u: DVec3, v: DVec3, w: DVec3, x: DVec3| (v - u).cross(w - u).dot(x - u);
    let scale = (b - a).cross(c - a).length() * p.distance(q);
    // What round-off may do to a volume: the coordinates' own (their magnitude times
    // f64's epsilon, a few times over) times two lengths. Far from the origin it is not
    // small: a cloth flung 800 m away, moved rigidly, changed a sliver triangle's volumes
    // (two corners 9e-7 m apart) by 1e-8 of their scale, and four "crossings" appeared.
    let magnitude = [p, q, a, b, c]
        .iter()
        .map(|v| v.abs().max_element())
        .fold(0.0, f64::max);
    let length = [b - a, c - a, q - p, p - a]
        .iter()
        .map(|v| v.length())
        .fold(0.0, f64::max);
    let noise = 64.0 * f64::EPSILON * magnitude * length * length;
    // Beyond doubt (margin > 0) a volume must clear the margin and the noise; clean beyond
    // doubt (margin < 0), one within either may count.
    let doubt = if margin > 0.0 { noise } else { -noise };
    let sp = vol(a, b, c, p);
    let sq = vol(a, b, c, q);
    // (Never below zero for the plane: an edge lying in a flat region's plane is no
    // crossing, or no cloth lying flat would ever be clean.)
    let eps = ((1e-9 + margin).max(0.0) * scale + doubt).max(0.0);
    if !((sp > eps && sq < -eps) || (sp < -eps && sq > eps)) {
        return false;
    }
    // The line pq against the three edges of the triangle: all of one sign.
    let s1 = vol(p, q, a, b);
    let s2 = vol(p, q, b, c);
    let s3 = vol(p, q, c, a);
    let m = margin * scale + doubt;
    (s1 >= m && s2 >= m && s3 >= m) || (s1 <= -m && s2 <= -m && s3 <= -m)
}

/// (Structural edge, triangle) pairs sharing no particle that pass through each other.
pub fn crossings(world: &World) -> usize {
    let t = &world.cloth.topology;
    count_crossings(world, &t.edges, 0.0)
}

/// (Edge, triangle) pairs sharing no particle that pass through each other, over every
/// edge of the mesh's triangles (the structural constraints and the diagonals), with
/// [`crosses_by`]'s `margin`.
pub fn crossings_by(world: &World, margin: f64) -> usize {
    count_crossings(world, &triangle_edges(world), margin)
}

/// Every edge of the mesh's triangles once, as (smaller, larger) particle index.
fn triangle_edges(world: &World) -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = world
        .cloth
        .topology
        .triangles
        .iter()
        .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// [`crossings`] over pairs that share no point of the uncut cloth either: an edge and a
/// triangle on the two lips of a tear whose ends are copies of one particle are left out
/// (`Topology::root`), as self-contact leaves them out.
pub fn crossings_apart(world: &World) -> usize {
    let t = &world.cloth.topology;
    count_crossings_where(world, &t.edges, 0.0, |e, tri| apart(t, e, tri))
}

/// [`crossings_by`] over pairs that share no point of the uncut cloth either (as
/// [`crossings_apart`]).
pub fn crossings_apart_by(world: &World, margin: f64) -> usize {
    let t = &world.cloth.topology;
    count_crossings_where(world, &triangle_edges(world), margin, |e, tri| {
        apart(t, e, tri)
    })
}

/// Whether edge `e` and triangle `tri` share no particle of the uncut cloth
/// (`Topology::root`).
fn apart(t: &Topology, e: &[u32; 2], tri: &[u32; 3]) -> bool {
    let roots = tri.map(|i| t.root(i));
    !e.iter().any(|&i| roots.contains(&t.root(i)))
}

/// The pairs of `edges` and the mesh's triangles that pass through each other.
fn count_crossings(world: &World, edges: &[[u32; 2]], margin: f64) -> usize {
    count_crossings_where(world, edges, margin, |_, _| true)
}

/// [`count_crossings`] over the pairs `keep` accepts.
fn count_crossings_where(
    world: &World,
    edges: &[[u32; 2]],
    margin: f64,
    keep: impl Fn(&[u32; 2], &[u32; 3]) -> bool,
) -> usize {
    let x = &world.cloth.particles.x;
    let t = &world.cloth.topology;
    let boxes: Vec<(DVec3, DVec3)> = t
        .triangles
        .iter()
        .map(|tri| {
            let [a, b, c] = tri.map(|i| x[i as usize]);
            (a.min(b).min(c), a.max(b).max(c))
        })
        .collect();
    let mut n = 0;
    for e in edges {
        let (p, q) = (x[e[0] as usize], x[e[1] as usize]);
        let (lo, hi) = (p.min(q), p.max(q));
        for (k, tri) in t.triangles.iter().enumerate() {
            let (blo, bhi) = boxes[k];
            if lo.cmpgt(bhi).any() || blo.cmpgt(hi).any() {
                continue;
            }
            if tri.contains(&e[0]) || tri.contains(&e[1]) || !keep(e, tri) {
                continue;
            }
            let [a, b, c] = tri.map(|i| x[i as usize]);
            if crosses_by(p, q, a, b, c, margin) {
                n += 1;
            }
        }
    }
    n
}

/// [`crossings_by`] with copies of one particle at one place counted as one point: a pair
/// whose edge and triangle share a particle, or copies of one particle of the uncut cloth
/// (`Topology::root`) within a billionth of the longest rest length of each other, is
/// left out; every other pair counts, the two lips of a cut or a tear included once their
/// copies have parted.
pub fn crossings_by_points(world: &World, margin: f64) -> usize {
    let t = &world.cloth.topology;
    let x = &world.cloth.particles.x;
    let eps = 1e-9 * t.rest.iter().copied().fold(0.0, f64::max);
    let mut by_root: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for i in 0..x.len() as u32 {
        by_root.entry(t.root(i)).or_default().push(i);
    }
    let point: Vec<u32> = (0..x.len() as u32)
        .map(|i| {
            by_root[&t.root(i)]
                .iter()
                .copied()
                .find(|&j| x[j as usize].distance(x[i as usize]) <= eps)
                .unwrap_or(i)
        })
        .collect();
    count_crossings_where(world, &triangle_edges(world), margin, |e, tri| {
        let corners = tri.map(|i| point[i as usize]);
        !e.iter().any(|&i| corners.contains(&point[i as usize]))
    })
}

/// `f` run on a pool of `threads` threads of its own: results that must not depend on the
/// thread count are compared across calls.
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}
