//! External forces (gravity, wind) and the shear/bend spring-dampers (004 §3.1, §3.3; 003).

use glam::DVec3;

use super::cloth::{Cloth, SpringKind};
use super::params::{SimParams, SpringParams, Wind};

/// Per-particle acceleration from forces that are constant over the step (004 §3.1):
/// gravity and wind. Static particles get none.
pub fn external_accelerations(
    cloth: &Cloth,
    params: &SimParams,
    time: f64,
    accel: &mut Vec<DVec3>,
) {
    let p = &cloth.particles;
    accel.clear();
    accel.resize(p.len(), DVec3::ZERO);
    if params.wind.enabled && params.wind.drag > 0.0 {
        wind_forces(cloth, &params.wind, time, accel);
        for (a, &k) in accel.iter_mut().zip(&p.inv_mass) {
            *a *= k;
        }
    }
    for (a, &k) in accel.iter_mut().zip(&p.inv_mass) {
        if k > 0.0 {
            *a += params.gravity;
        } else {
            *a = DVec3::ZERO;
        }
    }
}

/// Gust factor of the wind at time `t` and position `x`: smooth in both, so that gusts
/// travel across the cloth instead of shaking it uniformly.
pub fn gust_factor(wind: &Wind, t: f64, x: DVec3) -> f64 {
    if wind.gust == 0.0 {
        return 1.0;
    }
    let w = std::f64::consts::TAU * wind.gust_frequency;
    let g = 0.6 * (w * t - 2.3 * x.x - 1.1 * x.z).sin()
        + 0.4 * (1.7 * w * t + 3.1 * x.y + 1.9 * x.x).sin();
    1.0 + wind.gust * g
}

/// Wind force (003): each triangle gets drag·area·((w − v̄)·n̂)·n̂, where w is the local
/// wind and v̄ the triangle's velocity; a third goes to each of its particles. Written
/// into `force` (N), which must be zeroed.
pub fn wind_forces(cloth: &Cloth, wind: &Wind, time: f64, force: &mut [DVec3]) {
    let x = &cloth.particles.x;
    let v = &cloth.particles.v;
    for &[a, b, c] in &cloth.topology.triangles {
        let (a, b, c) = (a as usize, b as usize, c as usize);
        let cross = (x[b] - x[a]).cross(x[c] - x[a]);
        let len = cross.length();
        if len < 1e-300 {
            continue;
        }
        let n = cross / len;
        let area = 0.5 * len;
        let centre = (x[a] + x[b] + x[c]) / 3.0;
        let w = wind.velocity * gust_factor(wind, time, centre);
        let rel = w - (v[a] + v[b] + v[c]) / 3.0;
        let f = n * (wind.drag * area * rel.dot(n) / 3.0);
        force[a] += f;
        force[b] += f;
        force[c] += f;
    }
}

/// Largest spring constant explicit Euler can take for a spring between particles with
/// inverse masses summing to `w` at step `h`: k·h²·w ≤ 0.25. With up to 8 springs per
/// particle this keeps the Jacobi update's spectral radius inside the stable range.
pub fn stable_stiffness(w: f64, h: f64) -> f64 {
    0.25 / (h * h * w)
}

/// Largest stable damping coefficient, c·h·w ≤ 0.2.
pub fn stable_damping(w: f64, h: f64) -> f64 {
    0.2 / (h * w)
}

/// A spring-damper integrated over one step with explicit Euler, its constants clamped to
/// [`stable_stiffness`] / [`stable_damping`] for the pair's inverse masses.
#[derive(Debug, Clone, Copy)]
pub struct DampedSpring {
    /// Spring constant, N/m.
    pub stiffness: f64,
    /// Damping along the spring, N·s/m.
    pub damping: f64,
    /// Step, s.
    pub h: f64,
}

impl DampedSpring {
    /// Impulse on the first particle (the second gets minus it) for `d` = x_b − x_a,
    /// `vrel` = v_b − v_a, `w` = k_a + k_b, and `extension(len)` the length change the spring
    /// acts on (len − rest for an ordinary spring). `None` for a static pair or coincident
    /// particles.
    pub fn impulse(
        &self,
        d: DVec3,
        vrel: DVec3,
        w: f64,
        extension: impl Fn(f64) -> f64,
    ) -> Option<DVec3> {
        let len = d.length();
        if w == 0.0 || len < 1e-300 {
            return None;
        }
        let n = d / len;
        let k = self.stiffness.min(stable_stiffness(w, self.h));
        let c = self.damping.min(stable_damping(w, self.h));
        let f = k * extension(len) + c * vrel.dot(n);
        Some(n * (f * self.h))
    }
}

/// Shear and bend spring-dampers (004 §3.3): forces from the state at the start of the
/// step, integrated with explicit Euler and applied as impulses to the velocities. All
/// springs read the same start-of-step state (Jacobi), so the result does not depend on
/// spring order. Explicit Euler is only conditionally stable, and at h = 1/30 s with a
/// 50×50 grid of 0.2 kg any useful stiffness is beyond the limit, so each spring's
/// constants are clamped to [`stable_stiffness`] / [`stable_damping`].
pub fn spring_impulses(cloth: &mut Cloth, params: &SimParams, scratch: &mut Vec<DVec3>) {
    let h = params.dt;
    let p = &cloth.particles;
    scratch.clear();
    scratch.resize(p.len(), DVec3::ZERO);
    let springs = &cloth.topology.springs;
    let active = |s: &SpringParams| s.stiffness > 0.0 || s.damping > 0.0;
    if !active(&params.shear) && !active(&params.bend) {
        return;
    }
    for s in springs {
        let sp = match s.kind {
            SpringKind::Shear => &params.shear,
            SpringKind::Bend => &params.bend,
        };
        let (a, b) = (s.a as usize, s.b as usize);
        let (ka, kb) = (p.inv_mass[a], p.inv_mass[b]);
        let spring = DampedSpring {
            stiffness: sp.stiffness,
            damping: sp.damping,
            h,
        };
        if let Some(imp) = spring.impulse(p.x[b] - p.x[a], p.v[b] - p.v[a], ka + kb, |len| {
            len - s.rest
        }) {
            scratch[a] += imp * ka;
            scratch[b] -= imp * kb;
        }
    }
    for (v, dv) in cloth.particles.v.iter_mut().zip(scratch.iter()) {
        *v += *dv;
    }
}
