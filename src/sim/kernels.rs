//! Pure per-constraint and per-particle kernels. No model access: inputs in, corrections out.

use glam::DVec3;

/// Length, as a fraction of its rest length, below which a constraint has no usable
/// direction ([`is_degenerate`]): every solver treats such a constraint alike (no impulse,
/// or a fallback for the direct solvers, whose matrices need every direction).
///
/// Why 1e-9: a constraint that short has collapsed — its ends coincide to within
/// round-off of a step that should have kept them a rest length apart — so its direction
/// is noise, and a direction from it would turn an impulse of ordinary size into an
/// arbitrary one. Yet it is far above where the direction's arithmetic itself fails
/// (d/|d| underflows near 1e-300 m): for a 2 cm spacing it is 2e-11 m, thousands of ulps of
/// a coordinate near 1 m. No constraint of a step that is not already degenerate comes
/// near it (the strain would be 1 − 1e-9), so the choice changes no ordinary result; the
/// solvers used to test 1e-300 m, 1e-12·L, 1e-9·L and an exact zero for the same thing.
pub const DEGENERATE_LENGTH: f64 = 1e-9;

/// Whether a constraint of rest length `rest` at length `len` is too short to have a
/// direction ([`DEGENERATE_LENGTH`]); also true for a NaN length.
#[inline(always)]
pub fn is_degenerate(len: f64, rest: f64) -> bool {
    len.is_nan() || len <= DEGENERATE_LENGTH * rest
}

/// Position after a step of size `h` under a constant acceleration (004 §3.1):
/// c(t+h) = c + v·h + ½·a·h². The preview and the integration both call this, so a
/// constraint found within tolerance by the preview is within it after integration, bit
/// for bit. Evaluated as [`drift`] + v·h, so that a sweep which only changes velocities
/// can compute the drift once per pass and still get exactly this value.
#[inline(always)]
pub fn preview(x: DVec3, v: DVec3, a: DVec3, h: f64) -> DVec3 {
    drift(x, a, h) + v * h
}

/// The part of [`preview`] that does not depend on the velocity: c + ½·a·h².
#[inline(always)]
pub fn drift(x: DVec3, a: DVec3, h: f64) -> DVec3 {
    x + a * (0.5 * h * h)
}

/// Distance between particles `a` and `b` at the end of a step of size `h` if nothing
/// but the accelerations `accel` acted ([`preview`] of both): what the position pass
/// drives to the rest length (004 §3.2, eq. 2).
#[inline(always)]
pub fn preview_distance(
    x: &[DVec3],
    v: &[DVec3],
    accel: &[DVec3],
    a: usize,
    b: usize,
    h: f64,
) -> f64 {
    preview(x[a], v[a], accel[a], h).distance(preview(x[b], v[b], accel[b], h))
}

/// Velocity after a step of size `h` under a constant acceleration (004 §3.1).
#[inline(always)]
pub fn advance_velocity(v: DVec3, a: DVec3, h: f64) -> DVec3 {
    v + a * h
}

/// A particle's mass from its inverse mass: a static particle (inverse mass 0) weighs
/// nothing where masses are summed.
pub fn mass_of(inv_mass: f64) -> f64 {
    if inv_mass > 0.0 { 1.0 / inv_mass } else { 0.0 }
}

/// Relative strain |d − L| / L.
#[inline(always)]
pub fn strain(d: f64, rest: f64) -> f64 {
    (d - rest).abs() / rest
}

/// The strain test |d − L|/L ≤ tol of one constraint, decided from the squared distance.
///
/// A sweep is bound by the latency of the square root and divisions of its strain tests,
/// and most constraints of a sweep are far inside or far outside the tolerance. Squared
/// lengths strictly inside `inner` are within the tolerance and those outside `outer`
/// beyond it, whatever the round-off: both bands are a margin δ = 1e-12·L(1 + tol) away
/// from the exact bounds L(1 ∓ tol), while the squares and the exact test disagree by a
/// few ulps. Only lengths in the two slivers between them take the exact test, so
/// [`StrainBand::exceeded`] decides exactly as [`strain`]` > tol` does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrainBand {
    /// Rest length L.
    pub rest: f64,
    /// The tolerance the band was built for.
    pub tol: f64,
    inner: (f64, f64),
    outer: (f64, f64),
}

impl StrainBand {
    /// The band of a constraint of rest length `rest` at relative tolerance `tol`.
    pub fn new(rest: f64, tol: f64) -> Self {
        let lo = rest * (1.0 - tol).max(0.0);
        let hi = rest * (1.0 + tol);
        let delta = 1e-12 * hi;
        let sq = |x: f64| x * x;
        StrainBand {
            rest,
            tol,
            inner: (sq(lo + delta), sq(hi - delta)),
            // Below lo − δ only when that is a length at all.
            outer: (
                if lo > delta { sq(lo - delta) } else { -1.0 },
                sq(hi + delta),
            ),
        }
    }

    /// For a squared distance `len2`: `Some(len)` if its strain exceeds the tolerance,
    /// `None` if it is within.
    #[inline(always)]
    pub fn exceeded(&self, len2: f64) -> Option<f64> {
        if len2 > self.inner.0 && len2 < self.inner.1 {
            return None;
        }
        let len = len2.sqrt();
        let sliver = len2 > self.outer.0 && len2 < self.outer.1;
        if sliver && strain(len, self.rest) <= self.tol {
            return None;
        }
        Some(len)
    }
}

/// Position impulse of one distance constraint (004 §3.2, eq. 2), as velocity changes
/// (Δv_a, Δv_b), or `None` if the previewed strain is within the band's tolerance.
///
/// `pa`, `pb` are the previewed positions, `dir` the unit direction b − a the impulse
/// acts along (preview or current, see [`crate::sim::ImpulseDirection`]). The impulse
/// p = e / (h (k_a + k_b)) changes the relative velocity along `dir` by e/h; with `dir`
/// from the preview this makes the previewed distance exactly `rest`.
#[inline(always)]
pub fn position_impulse(
    pa: DVec3,
    pb: DVec3,
    dir: Option<DVec3>,
    ka: f64,
    kb: f64,
    band: &StrainBand,
    h: f64,
) -> Option<(DVec3, DVec3)> {
    let d = pb - pa;
    let len = band.exceeded(d.length_squared())?;
    let e = len - band.rest;
    let w = ka + kb;
    if w == 0.0 {
        return None;
    }
    // One division for the direction and the impulse together: with the preview
    // direction n = d/len, Δv_a = n·k_a·e/(h·w) = d·k_a·q with q = e/(h·w·len).
    let (n, q) = match dir {
        Some(n) => (n, e / (h * w)),
        None => {
            if is_degenerate(len, band.rest) {
                return None;
            }
            (d, e / (h * w * len))
        }
    };
    Some((n * (ka * q), n * (-kb * q)))
}

/// The velocity tolerance of eq. 3 for a strain tolerance `tol`: tol·L/h, the relative
/// velocity along a constraint of rest length `rest` that would produce the allowed strain
/// in one step of size `h`.
#[inline(always)]
pub fn velocity_tolerance(tol: f64, rest: f64, h: f64) -> f64 {
    tol * rest / h
}

/// Velocity impulse of one distance constraint (004 §3.2, eq. 3): removes the relative
/// velocity along the unit direction `n` if it exceeds `tol_v`; returns (Δv_a, Δv_b) and
/// the relative velocity removed.
#[inline(always)]
pub fn velocity_impulse(
    va: DVec3,
    vb: DVec3,
    n: DVec3,
    ka: f64,
    kb: f64,
    tol_v: f64,
) -> Option<(DVec3, DVec3, f64)> {
    let rel = (vb - va).dot(n);
    if rel.abs() <= tol_v {
        return None;
    }
    let w = ka + kb;
    if w == 0.0 {
        return None;
    }
    let p = rel / w;
    Some((n * (ka * p), n * (-kb * p), rel))
}

/// Unit vector from `a` to `b` of a constraint of rest length `rest`, or `None` if it is
/// degenerate ([`is_degenerate`]).
#[inline(always)]
pub fn unit(a: DVec3, b: DVec3, rest: f64) -> Option<DVec3> {
    let d = b - a;
    let l = d.length();
    (!is_degenerate(l, rest)).then(|| d * (1.0 / l))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lengths at and a few ulps around both bounds L(1 ∓ tol), and within the margin.
    fn probes(rest: f64, tol: f64) -> Vec<f64> {
        let mut out = Vec::new();
        for bound in [rest * (1.0 - tol), rest * (1.0 + tol), rest] {
            let mut x = bound;
            for _ in 0..64 {
                x = x.next_up();
                out.push(x);
            }
            x = bound;
            for _ in 0..64 {
                x = x.next_down();
                out.push(x);
            }
            out.push(bound);
            for k in [1e-14, 1e-13, 1e-12, 2e-12, 1e-11, 1e-6, 1e-2] {
                out.push(bound * (1.0 + k));
                out.push(bound * (1.0 - k));
            }
        }
        out.extend([0.0, 1e-300, rest * 0.5, rest * 10.0, rest * 1e6]);
        out
    }

    #[test]
    fn strain_band_decides_exactly_as_the_strain() {
        let mut checked = 0;
        for rest in [0.02, 1.0 / 49.0, 1.0, 3.7e-3, 123.0] {
            for tol in [1e-12, 1e-9, 1e-6, 1e-4, 1e-2, 0.1, 0.5] {
                let band = StrainBand::new(rest, tol);
                for len in probes(rest, tol) {
                    // The squared length as a sweep computes it, from a difference vector.
                    let d = DVec3::new(len * 0.6, len * 0.8, 0.0);
                    let len2 = d.length_squared();
                    let exact = strain(len2.sqrt(), rest) > tol;
                    assert_eq!(
                        band.exceeded(len2).is_some(),
                        exact,
                        "rest {rest}, tol {tol}, len {len:e}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 8000);
    }

    #[test]
    fn a_preview_direction_impulse_restores_the_rest_length() {
        let band = StrainBand::new(0.02, 1e-6);
        let (pa, pb) = (DVec3::ZERO, DVec3::new(0.021, 0.003, -0.001));
        let (ka, kb, h) = (2.0, 0.5, 1.0 / 30.0);
        let (da, db) = position_impulse(pa, pb, None, ka, kb, &band, h).expect("stretched");
        let (pa2, pb2) = (pa + da * h, pb + db * h);
        assert!((pa2.distance(pb2) - 0.02).abs() < 1e-15);
        // Equal and opposite impulses (eq. 2): Δv_a/k_a = −Δv_b/k_b.
        assert!((da / ka + db / kb).length() < 1e-15);
        assert!(position_impulse(pa2, pb2, None, ka, kb, &band, h).is_none());
    }
}
