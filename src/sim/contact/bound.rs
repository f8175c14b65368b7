//! Per-vertex displacement bounds: the fail-safe's last resort where the contacts' own
//! impact zones would hold every particle of a cloth that began the step
//! intersection-free.
//!
//! Each particle may move at most a share of its distance, at the step's start, to the
//! nearest feature of the cloth it does not belong to (Chen et al. 2025, "Offset Geometric
//! Contact", §4; the same projection bounds VBD's cloth self-contact): a vertex–triangle or
//! edge–edge pair whose four particles each move at most [`SHARE`] of the pair's distance
//! `d` — every point of a feature moves by a convex combination of its corners' motions —
//! closes at most `2 · SHARE · d` of it, so a tenth of every gap stays and nothing crosses,
//! whatever the solve asked. A particle whose motion is longer than its bound goes that far
//! along it. Unlike a rigid zone, this holds no particle still that is not itself pressed on
//! another layer, and the cloth's outside moves on; the price is the strain the cut
//! motions leave, which the next step's solve takes back. Measured against the app's
//! moving scenes, such bounds would cut 70–87 % of the particles of a swinging or flapping
//! cloth (docs/experiments.md, "Per-vertex displacement bounds (OGC)"), which is why they
//! are a last resort and not the detection.

use glam::DVec3;

use super::broad::{Aabb, HashGrid};
use super::narrow::{PairKind, pair_distance};
use super::surface::Surface;

/// The share of a pair's distance at the step's start that each of its features may move.
pub const SHARE: f64 = 0.45;

/// Each particle's bound on its displacement from `x0` (the step's start) towards `x1`, or
/// `None` where a static particle's prescribed motion (`inv_mass` 0, from `x0` to `x1`)
/// alone could close a gap: no bound on the others keeps that pair apart. Pairs further
/// apart than `reach` at the start are not looked at; a moving particle with none closer
/// is bounded by `SHARE · reach`, and static particles that move further than that give
/// `None`. Static particles' bounds are infinite.
pub fn displacement_bounds(
    surface: &Surface,
    x0: &[DVec3],
    x1: &[DVec3],
    inv_mass: &[f64],
    reach: f64,
) -> Option<Vec<f64>> {
    let n = x0.len();
    if x1.len() != n || inv_mass.len() != n || surface.particles != n {
        return None;
    }
    let moved: Vec<f64> = x0.iter().zip(x1).map(|(a, b)| a.distance(*b)).collect();
    let fixed = |i: u32| inv_mass[i as usize] == 0.0;
    let furthest = moved.iter().copied().fold(0.0, f64::max);
    // Pairs beyond `furthest / SHARE` bound nothing that moves: their share is longer.
    let reach = reach.min(furthest / SHARE);
    if !(reach.is_finite() && reach >= 0.0) {
        return None;
    }
    if (0..n as u32).any(|i| fixed(i) && moved[i as usize] > SHARE * reach) {
        return None;
    }
    let mut bound: Vec<f64> = (0..n as u32)
        .map(|i| {
            if fixed(i) {
                f64::INFINITY
            } else {
                SHARE * reach
            }
        })
        .collect();
    // A pair at distance `d`: each moving particle in it at most `SHARE · d` less the
    // furthest its static particles move, so that each feature moves at most `SHARE · d`.
    let mut bound_pair = |kind: PairKind, p: [u32; 4]| -> bool {
        if p.iter().all(|&i| fixed(i)) {
            return true;
        }
        let d = pair_distance(kind, &p.map(|i| x0[i as usize]));
        if d >= reach {
            return true;
        }
        let prescribed = p
            .iter()
            .filter(|&&i| fixed(i))
            .map(|&i| moved[i as usize])
            .fold(0.0, f64::max);
        if prescribed > SHARE * d {
            return false;
        }
        for &i in p.iter().filter(|&&i| !fixed(i)) {
            let b = &mut bound[i as usize];
            *b = b.min(SHARE * d - prescribed);
        }
        true
    };
    let half = 0.5 * reach;
    let point_box = |i: u32| Aabb::EMPTY.grow(x0[i as usize]).inflate(half);
    let feature_box = |p: &[u32]| {
        p.iter()
            .fold(Aabb::EMPTY, |b, &i| b.grow(x0[i as usize]))
            .inflate(half)
    };
    let cell = reach.max(1e-9);
    let mut grid = HashGrid::default();
    grid.build((0..n as u32).map(point_box), cell);
    for t in &surface.triangles {
        let mut ok = true;
        grid.query(&feature_box(t), |v| {
            if ok && !t.contains(&v) {
                ok = bound_pair(PairKind::VertexTriangle, [v, t[0], t[1], t[2]]);
            }
        });
        if !ok {
            return None;
        }
    }
    grid.build(surface.edges.iter().map(|e| feature_box(e)), cell);
    for (k, e) in surface.edges.iter().enumerate() {
        let mut ok = true;
        grid.query(&feature_box(e), |f| {
            let o = surface.edges[f as usize];
            if ok && (f as usize) > k && !o.iter().any(|i| e.contains(i)) {
                ok = bound_pair(PairKind::EdgeEdge, [e[0], e[1], o[0], o[1]]);
            }
        });
        if !ok {
            return None;
        }
    }
    Some(bound)
}

/// Move each particle from `x0` towards `x1` by at most its `bound`: `x` and `v` hold the
/// solve's end state and are cut where it went further, the velocity then the cut
/// motion over the step `h`. `limit(x0, x1, t)` may shorten a particle's share `t` of its
/// motion from `x0` to `x1` further (a collider the straight path enters). The particles
/// cut.
pub fn move_within(
    x0: &[DVec3],
    x: &mut [DVec3],
    v: &mut [DVec3],
    bound: &[f64],
    h: f64,
    limit: impl Fn(DVec3, DVec3, f64) -> f64,
) -> u32 {
    let mut cut = 0;
    for i in 0..x.len() {
        let d = x[i] - x0[i];
        let l = d.length();
        if l <= bound[i] {
            continue;
        }
        let t = limit(x0[i], x[i], bound[i] / l).clamp(0.0, 1.0);
        x[i] = x0[i] + d * t;
        v[i] = d * t / h;
        cut += 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::contact::narrow::segment_crosses_triangle;

    /// Sheets of `k`×`k` particles 5 cm apart at the heights `ys`, and their surface.
    fn sheets(k: u32, ys: &[f64]) -> (Surface, Vec<DVec3>) {
        let mut s = Surface::default();
        let mut x = Vec::new();
        for (l, &y) in ys.iter().enumerate() {
            let at = |i: u32, j: u32| l as u32 * k * k + i * k + j;
            for i in 0..k {
                for j in 0..k {
                    x.push(DVec3::new(0.05 * j as f64, y, 0.05 * i as f64));
                }
            }
            for i in 0..k - 1 {
                for j in 0..k - 1 {
                    let (a, b, c, d) = (at(i, j), at(i, j + 1), at(i + 1, j), at(i + 1, j + 1));
                    s.triangles.push([a, b, d]);
                    s.triangles.push([a, d, c]);
                    s.edges.extend([[a, b], [a, c], [a, d]]);
                }
                s.edges.push([at(i, k - 1), at(i + 1, k - 1)]);
                s.edges.push([at(k - 1, i), at(k - 1, i + 1)]);
            }
        }
        s.particles = x.len();
        (s, x)
    }

    /// Two sheets 1 cm apart, and a motion that takes the lower's middle through the
    /// upper: bounded, each particle of it is cut, keeps a tenth of the gap, and no edge
    /// crosses a triangle; the cut motion is the velocity.
    #[test]
    fn bounded_motion_keeps_a_tenth_of_every_gap() {
        let (surface, x0) = sheets(4, &[0.0, 0.01]);
        let n = 16;
        // The lower sheet's inner particles rise 3 cm, through the upper.
        let inner = [5, 6, 9, 10];
        let mut x1 = x0.clone();
        for i in inner {
            x1[i] += DVec3::Y * 0.03;
        }
        let inv_mass = vec![1.0; 2 * n];
        let bound = displacement_bounds(&surface, &x0, &x1, &inv_mass, 0.05).expect("bounds");
        let mut x = x1.clone();
        let mut v = vec![DVec3::ZERO; 2 * n];
        let cut = move_within(&x0, &mut x, &mut v, &bound, 0.01, |_, _, t| t);
        assert_eq!(cut, 4, "every inner particle is cut");
        for i in inner {
            let rise = x[i].y - x0[i].y;
            assert!(rise > 0.0 && rise <= SHARE * 0.01 + 1e-12, "rise {rise}");
            assert!((v[i].y - rise / 0.01).abs() < 1e-9);
            assert!(x[i + n].y - x[i].y >= (1.0 - 2.0 * SHARE) * 0.01 - 1e-12);
        }
        for &[a, b] in &surface.edges {
            for tri in &surface.triangles {
                if tri.contains(&a) || tri.contains(&b) {
                    continue;
                }
                let [p, q, r] = tri.map(|i| x[i as usize]);
                let crossed = segment_crosses_triangle(x[a as usize], x[b as usize], p, q, r);
                assert!(!crossed, "edge {a}-{b} through {tri:?}");
            }
        }
        // Unbounded, the same motion crosses: the test can fail.
        let crossed = surface.edges.iter().any(|&[a, b]| {
            surface.triangles.iter().any(|t| {
                !t.contains(&a) && !t.contains(&b) && {
                    let [p, q, r] = t.map(|i| x1[i as usize]);
                    segment_crosses_triangle(x1[a as usize], x1[b as usize], p, q, r)
                }
            })
        });
        assert!(crossed);
    }

    /// Bounds are local: a sheet far from the other moves its whole way, less than the
    /// share of its own features' distances (3.5 cm on this grid); the other sheet, pushed
    /// through the first, is cut.
    #[test]
    fn a_particle_with_nothing_near_moves_on() {
        let (surface, x0) = sheets(3, &[0.0, 0.01, 1.0]);
        let mut x1 = x0.clone();
        for p in &mut x1[18..] {
            *p += DVec3::X * 0.01;
        }
        x1[4] += DVec3::Y * 0.02;
        let inv_mass = vec![1.0; 27];
        let bound = displacement_bounds(&surface, &x0, &x1, &inv_mass, 0.1).expect("bounds");
        let (mut x, mut v) = (x1.clone(), vec![DVec3::ZERO; 27]);
        assert_eq!(
            move_within(&x0, &mut x, &mut v, &bound, 0.01, |_, _, t| t),
            1
        );
        assert_eq!(x[18..], x1[18..]);
        assert!(x[4].y < 0.01 * SHARE + 1e-12);
    }

    /// A static particle whose prescribed motion alone closes a gap: no bound on the
    /// others keeps the pair apart, and none is given; moved less, the particles near it
    /// are bounded by their share less its motion.
    #[test]
    fn a_static_particle_pushed_through_gives_no_bounds() {
        let (surface, x0) = sheets(3, &[0.0, 0.01]);
        let mut x1 = x0.clone();
        let mut inv_mass = vec![1.0; 18];
        inv_mass[13] = 0.0;
        x1[13] -= DVec3::Y * 0.02;
        assert!(displacement_bounds(&surface, &x0, &x1, &inv_mass, 0.05).is_none());
        x1[13] = x0[13] - DVec3::Y * 0.003;
        // Something moves far, so that pairs 1 cm apart are looked at.
        x1[0] += DVec3::X * 0.03;
        let bound = displacement_bounds(&surface, &x0, &x1, &inv_mass, 0.05).expect("bounds");
        assert!(bound[13].is_infinite());
        assert!(
            (bound[4] - (SHARE * 0.01 - 0.003)).abs() < 1e-9,
            "{}",
            bound[4]
        );
    }
}
