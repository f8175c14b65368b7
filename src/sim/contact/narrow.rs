//! Narrow phase: closest points, continuous collision over a step's linear motion, and the
//! segment–triangle test that counts crossings.
//!
//! Every test is written for one vertex and one triangle, or two edges — four particles —
//! so it serves any triangle mesh, not only grids. Closest points follow Ericson,
//! *Real-Time Collision Detection* (2005) §5.1.5 and §5.1.9; continuous detection is
//! Provot's (1997) coplanarity cubic, as Bridson, Fedkiw and Anderson (2002) use it: four
//! points moving linearly over the step are coplanar at the roots of a cubic in t, and a
//! root where the points also touch is a collision.

use glam::DVec3;

/// Closest point to `p` on triangle `abc` and its barycentric weights (Ericson §5.1.5).
pub fn closest_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> (DVec3, [f64; 3]) {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0]);
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, [1.0 - v, v, 0.0]);
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, [1.0 - w, 0.0, w]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, [0.0, 1.0 - w, w]);
    }
    let sum = va + vb + vc;
    if sum.abs() < f64::MIN_POSITIVE {
        // A collapsed triangle: its first corner stands for it.
        return (a, [1.0, 0.0, 0.0]);
    }
    let denom = 1.0 / sum;
    let v = vb * denom;
    let w = vc * denom;
    (a + ab * v + ac * w, [1.0 - v - w, v, w])
}

/// Closest points of segments `p0p1` and `q0q1`: parameters (s, t) in [0, 1] with the
/// points p0 + s(p1 − p0) and q0 + t(q1 − q0) (Ericson §5.1.9; parallel segments get one
/// of their closest pairs).
pub fn closest_segments(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (f64, f64) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    const EPS: f64 = 1e-30;
    if a <= EPS && e <= EPS {
        return (0.0, 0.0);
    }
    if a <= EPS {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= EPS {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let mut s = if denom > 1e-14 * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

/// The four points of a vertex–triangle (`[p, a, b, c]`) or edge–edge (`[p0, p1, q0, q1]`)
/// pair, at the start and the end of a step.
#[derive(Debug, Clone, Copy)]
pub struct Swept {
    /// Positions at the start of the step.
    pub x0: [DVec3; 4],
    /// Positions at the end of the step.
    pub x1: [DVec3; 4],
}

impl Swept {
    fn at(&self, t: f64) -> [DVec3; 4] {
        std::array::from_fn(|k| self.x0[k].lerp(self.x1[k], t))
    }
}

/// Which pair a [`Swept`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairKind {
    /// A vertex and a triangle: `[p, a, b, c]`.
    VertexTriangle,
    /// Two edges: `[p0, p1, q0, q1]`.
    EdgeEdge,
}

impl PairKind {
    /// How much the distance between the pair's features can shrink over a step in which
    /// its k-th point is displaced by `moved(k)`: the largest displacement of a point of
    /// the first feature plus that of the second (a point of a feature moves by a convex
    /// combination of its corners' displacements), both taken relative to the first
    /// point's. Distances do not change when all four points move together, so only the
    /// relative motion counts: a cloth carried fast by the hand keeps the bound of how it
    /// deforms, not of how far it travels (which sent every candidate of a drape pulled
    /// off the ball to the continuous test).
    pub fn motion_bound(self, moved: impl Fn(usize) -> DVec3) -> f64 {
        let base = moved(0);
        let rel = |k: usize| (moved(k) - base).length();
        match self {
            PairKind::VertexTriangle => rel(1).max(rel(2)).max(rel(3)),
            PairKind::EdgeEdge => rel(1) + rel(2).max(rel(3)),
        }
    }
}

/// Distance between the pair's two features at positions `x`.
pub fn pair_distance(kind: PairKind, x: &[DVec3; 4]) -> f64 {
    match kind {
        PairKind::VertexTriangle => {
            let (q, _) = closest_on_triangle(x[0], x[1], x[2], x[3]);
            x[0].distance(q)
        }
        PairKind::EdgeEdge => {
            let (s, t) = closest_segments(x[0], x[1], x[2], x[3]);
            x[0].lerp(x[1], s).distance(x[2].lerp(x[3], t))
        }
    }
}

/// Coefficients k0 + k1 t + k2 t² + k3 t³ of the coplanarity cubic
/// (x1 − x0)·((x2 − x0) × (x3 − x0)) at the points moving linearly from `x0` to `x1`.
fn coplanarity_cubic(s: &Swept) -> [f64; 4] {
    let rel = |x: &[DVec3; 4], k: usize| x[k] - x[0];
    // Vertex–triangle [p, a, b, c]: the triple product of (a − p, b − p, c − p); edge–edge
    // [p0, p1, q0, q1]: of (p1 − p0, q0 − p0, q1 − p0). Both vanish exactly when the four
    // points are coplanar.
    let (a0, b0, c0) = (rel(&s.x0, 1), rel(&s.x0, 2), rel(&s.x0, 3));
    let (a1, b1, c1) = (rel(&s.x1, 1), rel(&s.x1, 2), rel(&s.x1, 3));
    let (da, db, dc) = (a1 - a0, b1 - b0, c1 - c0);
    let k0 = a0.dot(b0.cross(c0));
    let k1 = da.dot(b0.cross(c0)) + a0.dot(db.cross(c0)) + a0.dot(b0.cross(dc));
    let k2 = a0.dot(db.cross(dc)) + da.dot(b0.cross(dc)) + da.dot(db.cross(c0));
    let k3 = da.dot(db.cross(dc));
    [k0, k1, k2, k3]
}

fn eval(k: &[f64; 4], t: f64) -> f64 {
    ((k[3] * t + k[2]) * t + k[1]) * t + k[0]
}

/// Roots of the cubic `k` in [0, 1], ascending, found on the intervals where it is
/// monotone (split at the roots of its derivative) by Newton's method kept inside a
/// bracket that shrinks every iteration (a bisection where Newton's step would leave it
/// or shrink it by less than half): bisection alone took about 40 halvings a root to reach
/// 1e-12, and the continuous tests of the fail-safe's rounds are most of a long step's
/// time. A root at a touching extremum (no sign change, |f| tiny) counts too.
fn cubic_roots_01(k: &[f64; 4], out: &mut Vec<f64>) {
    out.clear();
    let mut cuts = [0.0, 1.0, 1.0, 1.0];
    let mut n = 1;
    // Derivative 3k3 t² + 2k2 t + k1.
    let (qa, qb, qc) = (3.0 * k[3], 2.0 * k[2], k[1]);
    let mut push = |t: f64| {
        if t > 0.0 && t < 1.0 {
            cuts[n] = t;
            n += 1;
        }
    };
    if qa.abs() > 1e-300 {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let r = disc.sqrt();
            let (t1, t2) = ((-qb - r) / (2.0 * qa), (-qb + r) / (2.0 * qa));
            push(t1.min(t2));
            push(t1.max(t2));
        }
    } else if qb.abs() > 1e-300 {
        push(-qc / qb);
    }
    cuts[n] = 1.0;
    let cuts = &cuts[..=n];
    let scale = k.iter().map(|c| c.abs()).sum::<f64>().max(1e-300);
    let slope = |t: f64| (qa * t + qb) * t + qc;
    for w in cuts.windows(2) {
        let (mut lo, mut hi) = (w[0], w[1]);
        let (flo, fhi) = (eval(k, lo), eval(k, hi));
        if flo == 0.0 {
            out.push(lo);
            continue;
        }
        if flo.signum() == fhi.signum() {
            // No crossing inside; a grazing touch shows as a tiny value at the end.
            if fhi.abs() <= 1e-12 * scale {
                out.push(hi);
            }
            continue;
        }
        let side = flo.signum();
        let mut t = 0.5 * (lo + hi);
        let mut last_step = hi - lo;
        for _ in 0..100 {
            let f = eval(k, t);
            if f == 0.0 {
                (lo, hi) = (t, t);
                break;
            }
            if f.signum() == side {
                lo = t;
            } else {
                hi = t;
            }
            let step = f / slope(t);
            let newton = t - step;
            if newton > lo && newton < hi && step.abs() < 0.5 * last_step {
                // Newton's step, each less than half the last: it converges.
                last_step = step.abs();
                t = newton;
                if last_step < 1e-13 {
                    (lo, hi) = (t, t);
                    break;
                }
            } else {
                if hi - lo < 1e-12 {
                    break;
                }
                last_step = hi - lo;
                t = 0.5 * (lo + hi);
            }
        }
        out.push(0.5 * (lo + hi));
    }
    out.dedup_by(|a, b| (*a - *b).abs() < 1e-12);
}

/// First time in [0, 1] at which the pair's features come within `eps` of each other
/// while moving linearly over the step, if they do: the roots of the coplanarity cubic
/// where the features touch, and the step's end. Scratch `roots` avoids an allocation.
pub fn first_contact(kind: PairKind, s: &Swept, eps: f64, roots: &mut Vec<f64>) -> Option<f64> {
    cubic_roots_01(&coplanarity_cubic(s), roots);
    roots
        .iter()
        .copied()
        .find(|&t| pair_distance(kind, &s.at(t)) <= eps)
        .or_else(|| {
            (!apart_by_plane(kind, &s.x1, eps) && pair_distance(kind, &s.x1) <= eps).then_some(1.0)
        })
}

/// Whether the features at `x` are further than `eps` apart by the distance between the
/// vertex and the triangle's plane, or between the edges' lines — a lower bound on
/// [`pair_distance`] at the cost of one cross product, which spares the closest-point
/// search for most pairs at the step's end.
fn apart_by_plane(kind: PairKind, x: &[DVec3; 4], eps: f64) -> bool {
    let n = match kind {
        // [p, a, b, c]: the triangle's normal.
        PairKind::VertexTriangle => (x[2] - x[1]).cross(x[3] - x[1]),
        // [p0, p1, q0, q1]: normal to both edges.
        PairKind::EdgeEdge => (x[1] - x[0]).cross(x[3] - x[2]),
    };
    // det(a − p, b − p, c − p) = (a − p)·n; det(p1 − p0, q0 − p0, q1 − p0) = (q0 − p0)·n.
    let volume = match kind {
        PairKind::VertexTriangle => (x[1] - x[0]).dot(n),
        PairKind::EdgeEdge => (x[2] - x[0]).dot(n),
    };
    volume.abs() > eps * n.length() * (1.0 + 1e-9)
}

/// Whether segment `pq` passes through triangle `abc` (Möller–Trumbore): both end points on
/// either side of the plane by more than round-off — 1e-9 of the segment's length, so an
/// edge lying in the plane of a flat region's triangle is not a crossing however its
/// round-off falls — and the crossing point inside the triangle.
pub fn segment_crosses_triangle(p: DVec3, q: DVec3, a: DVec3, b: DVec3, c: DVec3) -> bool {
    segment_crosses_triangle_by(p, q, a, b, c, 0.0)
}

/// [`segment_crosses_triangle`] with the crossing point at least `margin` (barycentric,
/// and along the segment) inside the triangle and the segment: a crossing beyond doubt
/// where an end of the segment lies on a corner of the triangle (the two copies of a
/// particle on a cut's lips), which round-off alone would decide.
pub fn segment_crosses_triangle_by(
    p: DVec3,
    q: DVec3,
    a: DVec3,
    b: DVec3,
    c: DVec3,
    margin: f64,
) -> bool {
    let d = q - p;
    let e1 = b - a;
    let e2 = c - a;
    let n = e1.cross(e2);
    let (sp, sq) = (n.dot(p - a), n.dot(q - a));
    let eps = 1e-9 * n.length() * d.length();
    if !((sp > eps && sq < -eps) || (sp < -eps && sq > eps)) {
        return false;
    }
    let h = d.cross(e2);
    let det = e1.dot(h);
    if det.abs() < 1e-300 {
        return false;
    }
    let f = 1.0 / det;
    let s = p - a;
    let u = f * s.dot(h);
    if !(margin..=1.0 - margin).contains(&u) {
        return false;
    }
    let qv = s.cross(e1);
    let v = f * d.dot(qv);
    if v < margin || u + v > 1.0 - margin {
        return false;
    }
    let t = f * e2.dot(qv);
    t > margin && t < 1.0 - margin
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64, z: f64) -> DVec3 {
        DVec3::new(x, y, z)
    }

    #[test]
    fn closest_point_regions_and_weights_reproduce_the_point() {
        let (a, b, c) = (v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0));
        for p in [
            v(0.2, 0.2, 0.5),
            v(-1.0, -1.0, 0.3),
            v(2.0, -0.5, 0.0),
            v(0.7, 0.7, -0.2),
            v(-0.3, 0.5, 1.0),
        ] {
            let (q, w) = closest_on_triangle(p, a, b, c);
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(w.iter().all(|&x| x >= -1e-12));
            assert!(q.distance(a * w[0] + b * w[1] + c * w[2]) < 1e-12);
            // No point of the triangle on a fine lattice is closer.
            for i in 0..=20 {
                for j in 0..=(20 - i) {
                    let s = a + (b - a) * (i as f64 / 20.0) + (c - a) * (j as f64 / 20.0);
                    assert!(p.distance(q) <= p.distance(s) + 1e-12);
                }
            }
        }
    }

    #[test]
    fn closest_segment_points_are_closest() {
        let cases = [
            (
                v(0.0, 0.0, 0.0),
                v(1.0, 0.0, 0.0),
                v(0.5, -1.0, 1.0),
                v(0.5, 1.0, 1.0),
            ),
            (
                v(0.0, 0.0, 0.0),
                v(1.0, 0.0, 0.0),
                v(2.0, 1.0, 0.0),
                v(3.0, 1.0, 0.0),
            ),
            (
                v(0.0, 0.0, 0.0),
                v(1.0, 0.0, 0.0),
                v(0.0, 0.5, 0.0),
                v(1.0, 0.5, 0.0),
            ),
        ];
        for (p0, p1, q0, q1) in cases {
            let (s, t) = closest_segments(p0, p1, q0, q1);
            let d = p0.lerp(p1, s).distance(q0.lerp(q1, t));
            for i in 0..=20 {
                for j in 0..=20 {
                    let d2 = p0
                        .lerp(p1, i as f64 / 20.0)
                        .distance(q0.lerp(q1, j as f64 / 20.0));
                    assert!(d <= d2 + 1e-12);
                }
            }
        }
    }

    /// The roots of a cubic by bisection alone, to 1e-14: what Newton's method kept in
    /// its bracket must agree with.
    fn roots_by_bisection(k: &[f64; 4]) -> Vec<f64> {
        // Sign changes on a fine lattice, each narrowed by halving.
        let mut out = Vec::new();
        let m = 4096;
        for i in 0..m {
            let (mut lo, mut hi) = (i as f64 / m as f64, (i + 1) as f64 / m as f64);
            let flo = eval(k, lo);
            if flo == 0.0 {
                out.push(lo);
                continue;
            }
            if flo.signum() == eval(k, hi).signum() {
                continue;
            }
            while hi - lo > 1e-14 {
                let mid = 0.5 * (lo + hi);
                if eval(k, mid).signum() == flo.signum() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            out.push(0.5 * (lo + hi));
        }
        out
    }

    #[test]
    fn the_cubics_roots_are_those_bisection_finds() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut roots = Vec::new();
        let mut found = 0;
        for case in 0..20_000 {
            // c (t − r1)(t − r2)(t − r3), roots spread over and around [0, 1], some close
            // together, and a scale over many orders of magnitude.
            let mut r = [0.0; 3];
            for x in &mut r {
                *x = rng.random_range(-0.3..1.3);
            }
            if case % 4 == 0 {
                r[1] = r[0] + rng.random_range(1e-6..1e-3);
            }
            let c =
                10f64.powf(rng.random_range(-12.0..3.0)) * if case % 2 == 0 { 1.0 } else { -1.0 };
            let k = [
                -c * r[0] * r[1] * r[2],
                c * (r[0] * r[1] + r[1] * r[2] + r[0] * r[2]),
                -c * (r[0] + r[1] + r[2]),
                c,
            ];
            cubic_roots_01(&k, &mut roots);
            let want = roots_by_bisection(&k);
            // Every sign change is found (grazing roots, counted by the tolerance on |f|,
            // may add one).
            for w in &want {
                assert!(
                    roots.iter().any(|t| (t - w).abs() < 1e-9),
                    "case {case}: root {w} missed, got {roots:?} (k {k:?})"
                );
                found += 1;
            }
            for t in &roots {
                assert!((0.0..=1.0).contains(t), "case {case}: {t} outside [0, 1]");
            }
        }
        assert!(found > 10_000, "{found}");
    }

    #[test]
    fn the_planes_distance_never_rules_out_a_pair_within_reach() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut ruled_out = 0;
        for _ in 0..50_000 {
            let mut x = [DVec3::ZERO; 4];
            for p in &mut x {
                *p = DVec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-0.05..0.05),
                );
            }
            for kind in [PairKind::VertexTriangle, PairKind::EdgeEdge] {
                let d = pair_distance(kind, &x);
                for eps in [d * (1.0 - 1e-12), d, d * (1.0 + 1e-12), 0.5 * d, 2.0 * d] {
                    if apart_by_plane(kind, &x, eps) {
                        assert!(d > eps, "{kind:?} at {x:?}: distance {d} within {eps}");
                        ruled_out += 1;
                    }
                }
            }
        }
        // The bound rules out pairs that are far from their plane, or it is no saving.
        assert!(ruled_out > 10_000, "{ruled_out}");
    }

    #[test]
    fn a_vertex_thrown_through_a_triangle_is_caught_at_the_plane() {
        let tri = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
        let s = Swept {
            x0: [v(0.2, 0.2, 1.0), tri[0], tri[1], tri[2]],
            x1: [v(0.2, 0.2, -3.0), tri[0], tri[1], tri[2]],
        };
        let mut roots = Vec::new();
        let t = first_contact(PairKind::VertexTriangle, &s, 1e-9, &mut roots).unwrap();
        assert!((t - 0.25).abs() < 1e-9, "{t}");
        // Beside the triangle it passes the plane without touching.
        let miss = Swept {
            x0: [v(2.0, 2.0, 1.0), tri[0], tri[1], tri[2]],
            x1: [v(2.0, 2.0, -3.0), tri[0], tri[1], tri[2]],
        };
        assert!(first_contact(PairKind::VertexTriangle, &miss, 1e-9, &mut roots).is_none());
    }

    #[test]
    fn crossing_edges_are_caught_and_a_moving_triangle_too() {
        let s = Swept {
            x0: [
                v(0.0, 0.0, 1.0),
                v(1.0, 0.0, 1.0),
                v(0.5, -1.0, 0.0),
                v(0.5, 1.0, 0.0),
            ],
            x1: [
                v(0.0, 0.0, -1.0),
                v(1.0, 0.0, -1.0),
                v(0.5, -1.0, 0.0),
                v(0.5, 1.0, 0.0),
            ],
        };
        let mut roots = Vec::new();
        let t = first_contact(PairKind::EdgeEdge, &s, 1e-9, &mut roots).unwrap();
        assert!((t - 0.5).abs() < 1e-9);
        // The triangle moves through a still vertex, rotating on the way.
        let s = Swept {
            x0: [
                v(0.3, 0.3, 0.0),
                v(0.0, 0.0, 1.0),
                v(1.0, 0.0, 1.0),
                v(0.0, 1.0, 1.2),
            ],
            x1: [
                v(0.3, 0.3, 0.0),
                v(0.0, 0.0, -1.0),
                v(1.0, 0.0, -1.2),
                v(0.0, 1.0, -0.8),
            ],
        };
        assert!(first_contact(PairKind::VertexTriangle, &s, 1e-9, &mut roots).is_some());
    }

    #[test]
    fn segment_triangle_crossing() {
        let (a, b, c) = (v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0));
        assert!(segment_crosses_triangle(
            v(0.2, 0.2, 1.0),
            v(0.2, 0.2, -1.0),
            a,
            b,
            c
        ));
        assert!(!segment_crosses_triangle(
            v(0.2, 0.2, 1.0),
            v(0.2, 0.2, 0.5),
            a,
            b,
            c
        ));
        assert!(!segment_crosses_triangle(
            v(0.8, 0.8, 1.0),
            v(0.8, 0.8, -1.0),
            a,
            b,
            c
        ));
        // In the triangle's plane, whatever the round-off: not a crossing.
        assert!(!segment_crosses_triangle(
            v(0.2, -0.5, 1e-18),
            v(0.2, 0.5, -1e-18),
            a,
            b,
            c
        ));
    }

    /// A lip's edge through the other lip's triangle at the corner they share (the two
    /// copies of one particle) crosses or not by round-off; beyond a margin it does not,
    /// while one through the triangle's middle still does.
    #[test]
    fn a_crossing_at_a_shared_corner_is_not_beyond_doubt() {
        let (a, b, c) = (v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0));
        // Through the corner `a`, a hair inside the triangle.
        let (p, q) = (v(1e-12, 1e-12, 1.0), v(1e-12, 1e-12, -1.0));
        assert!(segment_crosses_triangle(p, q, a, b, c));
        assert!(!segment_crosses_triangle_by(p, q, a, b, c, 1e-6));
        let (p, q) = (v(0.2, 0.2, 1.0), v(0.2, 0.2, -1.0));
        assert!(segment_crosses_triangle_by(p, q, a, b, c, 1e-6));
        // Ending a hair beyond the plane: not beyond doubt either.
        let q = v(0.2, 0.2, -1e-7);
        assert!(segment_crosses_triangle(p, q, a, b, c));
        assert!(!segment_crosses_triangle_by(p, q, a, b, c, 1e-6));
    }
}
