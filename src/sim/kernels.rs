//! Pure per-constraint and per-particle kernels. No model access: inputs in, corrections out.

use glam::DVec3;

/// Position after a step of size `h` under a constant acceleration (004 §3.1):
/// c(t+h) = c + v·h + ½·a·h². The preview and the integration both call this, so a
/// constraint found within tolerance by the preview is within it after integration, bit
/// for bit.
#[inline(always)]
pub fn preview(x: DVec3, v: DVec3, a: DVec3, h: f64) -> DVec3 {
    x + v * h + a * (0.5 * h * h)
}

/// Velocity after a step of size `h` under a constant acceleration (004 §3.1).
#[inline(always)]
pub fn advance_velocity(v: DVec3, a: DVec3, h: f64) -> DVec3 {
    v + a * h
}

/// Relative strain |d − L| / L.
#[inline(always)]
pub fn strain(d: f64, rest: f64) -> f64 {
    (d - rest).abs() / rest
}

/// Position impulse of one distance constraint (004 §3.2, eq. 2), as velocity changes
/// (Δv_a, Δv_b), or `None` if the previewed strain is within `tol`.
///
/// `pa`, `pb` are the previewed positions, `dir` the unit direction b − a the impulse
/// acts along (preview or current, see [`crate::sim::ImpulseDirection`]). The impulse
/// p = e / (h (k_a + k_b)) changes the relative velocity along `dir` by e/h; with `dir`
/// from the preview this makes the previewed distance exactly `rest`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // a pure kernel: scalars in, corrections out
pub fn position_impulse(
    pa: DVec3,
    pb: DVec3,
    dir: Option<DVec3>,
    ka: f64,
    kb: f64,
    rest: f64,
    tol: f64,
    h: f64,
) -> Option<(DVec3, DVec3, f64)> {
    let d = pb - pa;
    let len = d.length();
    let e = len - rest;
    let s = e.abs() / rest;
    if s <= tol {
        return None;
    }
    let w = ka + kb;
    if w == 0.0 {
        return None;
    }
    let n = match dir {
        Some(n) => n,
        None => {
            if len < 1e-12 * rest {
                return None;
            }
            d / len
        }
    };
    let p = e / (h * w);
    Some((n * (ka * p), n * (-kb * p), s))
}

/// Velocity impulse of one distance constraint (004 §3.2, eq. 3): removes the relative
/// velocity along the unit direction `n` if it exceeds `tol_v`; returns (Δv_a, Δv_b).
#[inline(always)]
pub fn velocity_impulse(
    va: DVec3,
    vb: DVec3,
    n: DVec3,
    ka: f64,
    kb: f64,
    tol_v: f64,
) -> Option<(DVec3, DVec3)> {
    let rel = (vb - va).dot(n);
    if rel.abs() <= tol_v {
        return None;
    }
    let w = ka + kb;
    if w == 0.0 {
        return None;
    }
    let p = rel / w;
    Some((n * (ka * p), n * (-kb * p)))
}

/// Unit vector from `a` to `b`, or `None` if they coincide.
#[inline(always)]
pub fn unit(a: DVec3, b: DVec3) -> Option<DVec3> {
    let d = b - a;
    let l = d.length();
    (l > 1e-300).then(|| d / l)
}
