//! The fail-safe: rigid impact zones (Provot 1997; Bridson, Fedkiw & Anderson 2002 §7.4;
//! Harmon et al. 2008), kept local.
//!
//! Where the solve left a collision in the step's motion — a pair of features that touch
//! on the straight path from the step's start to its end — the particles of the pair are
//! merged into a zone, and every zone moves rigidly: the rigid motion of its particles
//! from their start positions that keeps their linear and angular momentum over the step.
//! A rigid motion keeps every distance inside the zone, so a zone cannot collide with
//! itself and its edges keep the lengths they started the step with — the inextensibility
//! the solvers bought. Zones that still collide with each other or with the rest are
//! merged and moved again; zones only grow, so the loop ends.
//!
//! A zone grows by contacts (Harmon et al. 2008's clusters), not by the cloth around it:
//! the edges its rigid motion stretches at its border are taken back by projecting the
//! rest of the cloth with every zone a rigid body ([`super::project`]), where that does
//! not converge by growing it a bounded number of rings (never over a static particle), then by solving the rest of
//! the cloth again with the zones held (`World`), then by growing a zone free of static
//! particles over what is still stretched without that bound (it moves on, rigidly);
//! what a zone held by a static particle still leaves stretched is left to the next step
//! and reported; where those repairs would hold every particle that can move where the
//! step began, the step keeps the contacts' zones and leaves their borders stretched. A
//! zone held by static particles — in it, or at the other end of an edge its motion
//! stretched, which nothing else can take back — turns about them where they
//! lie on a point or a line ([`Pivot`]) and otherwise stays where it started; the rings
//! it may grow by before the re-solve are bounded, so it never freezes a cloth whose
//! contacts do not span it (docs/numerics.md, "Self-contact").

use glam::{DMat3, DQuat, DVec3};

use crate::sim::kernels;

/// Union–find over particles.
#[derive(Debug, Clone, Default)]
pub struct Zones {
    parent: Vec<u32>,
}

impl Zones {
    /// Every particle in a zone of its own.
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
    }

    /// The zone of particle `i`.
    pub fn find(&mut self, i: u32) -> u32 {
        let r = self.root(i);
        let mut i = i;
        while self.parent[i as usize] != r {
            let next = self.parent[i as usize];
            self.parent[i as usize] = r;
            i = next;
        }
        r
    }

    /// The zone of particle `i`, without shortening the paths ([`Zones::find`] does).
    pub fn root(&self, i: u32) -> u32 {
        let mut r = i;
        while self.parent[r as usize] != r {
            r = self.parent[r as usize];
        }
        r
    }

    /// Merge the zones of `a` and `b`; whether they were apart.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        self.parent[ra.max(rb) as usize] = ra.min(rb);
        true
    }

    /// The zones with more than one particle, as lists of particles.
    pub fn groups(&mut self) -> Vec<Vec<u32>> {
        let n = self.parent.len();
        let mut by_root: Vec<Vec<u32>> = vec![Vec::new(); n];
        for i in 0..n as u32 {
            let r = self.find(i);
            by_root[r as usize].push(i);
        }
        by_root.into_iter().filter(|g| g.len() > 1).collect()
    }
}

/// What holds a zone in place: the static particles in it, and those at the other end of
/// an edge its free rigid motion stretched ([`Pivot::of`]). A rigid motion that keeps
/// them where they are is a turn about the point or the line they lie on; three or more
/// not on a line (or one that moves, a scripted pin) leave only standing still.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pivot {
    /// Nothing holds it: the zone moves freely.
    Free,
    /// It turns about this point.
    Point(DVec3),
    /// It turns about the line through this point along this unit direction.
    Axis(DVec3, DVec3),
    /// It stays where the step began.
    Fixed,
}

impl Pivot {
    /// The pivot of anchors at `start` that end the step at `end` (each static particle's
    /// positions): free without any, fixed where one moves or they span a plane, else the
    /// point or the line they lie on (within `eps` of it).
    pub fn of(start: &[DVec3], end: &[DVec3], eps: f64) -> Pivot {
        let Some(&p0) = start.first() else {
            return Pivot::Free;
        };
        if start.iter().zip(end).any(|(a, b)| a.distance(*b) > eps) {
            return Pivot::Fixed;
        }
        let far = start
            .iter()
            .copied()
            .max_by(|a, b| a.distance(p0).total_cmp(&b.distance(p0)))
            .unwrap_or(p0);
        if far.distance(p0) <= eps {
            return Pivot::Point(p0);
        }
        let axis = (far - p0).normalize();
        let on_line = start.iter().all(|&p| {
            let r = p - p0;
            (r - axis * r.dot(axis)).length() <= eps
        });
        if on_line {
            Pivot::Axis(p0, axis)
        } else {
            Pivot::Fixed
        }
    }
}

/// Move the particles of `zone` rigidly from `x0` over a step of `h`, as `pivot` lets it.
///
/// Free: the centre of mass goes where the solver sent it (`x_solver`), the zone turns
/// with the angular momentum of its motion from `x0` to `x_solver` (each particle's mean
/// velocity over the step) and ends with the linear momentum of the solver's end-of-step
/// velocities `v`. About a point or a line: it turns about it with the angular momentum
/// (about the point, or its component along the line) of the same motion, so every
/// distance to the anchors is kept with the zone's own — an edge to a pin is not
/// stretched by a zone that moved off it. Fixed: it stays at `x0`. Writes end positions
/// to `x` and end-of-step velocities to `v`.
#[allow(clippy::too_many_arguments)]
pub fn move_rigidly(
    zone: &[u32],
    pivot: Pivot,
    x0: &[DVec3],
    x_solver: &[DVec3],
    inv_mass: &[f64],
    h: f64,
    x: &mut [DVec3],
    v: &mut [DVec3],
) {
    // A static particle is an anchor: a zone that holds one and is called free stays.
    let fixed = pivot == Pivot::Fixed
        || (pivot == Pivot::Free && zone.iter().any(|&i| inv_mass[i as usize] == 0.0));
    if fixed {
        for &i in zone {
            let i = i as usize;
            x[i] = x0[i];
            v[i] = DVec3::ZERO;
        }
        return;
    }
    // A static particle in the zone has no mass to weigh; it stays where it is (it is an
    // anchor of the pivot). The hand keeps its own mass: it drives the zone it is in
    // (docs/experiments.md, "The hand in a zone weighed as a particle").
    let frame = Frame::of(zone, pivot, x0, inv_mass);
    if frame.mass <= 0.0 {
        return;
    }
    let mass = |i: usize| kernels::mass_of(inv_mass[i]);
    let mut shift = DVec3::ZERO;
    let mut p = DVec3::ZERO;
    let mut l = DVec3::ZERO;
    for &i in zone {
        let i = i as usize;
        let m = mass(i);
        shift += (x_solver[i] - x0[i]) * m;
        p += v[i] * m;
        let u = (x_solver[i] - x0[i]) / h;
        l += (x0[i] - frame.centre).cross(u) * m;
    }
    let (m_sum, c, centre) = (frame.mass, frame.centre_of_mass, frame.centre);
    let omega = frame.inv_inertia * l;
    let angle = omega.length() * h;
    let rot = if angle > 0.0 {
        DQuat::from_axis_angle(omega / omega.length(), angle)
    } else {
        DQuat::IDENTITY
    };
    // The centre of mass goes where the solver sent it, and the zone ends the step with
    // the solver's end-of-step momentum (with gravity the two differ by ½·g·h per step);
    // a pivoted zone's centre goes where the turn takes it.
    let (c1, vc) = match pivot {
        Pivot::Free => (c + shift / m_sum, p / m_sum),
        _ => (centre, DVec3::ZERO),
    };
    for &i in zone {
        let i = i as usize;
        if inv_mass[i] == 0.0 {
            continue;
        }
        let r = rot * (x0[i] - centre);
        x[i] = c1 + r;
        v[i] = vc + omega.cross(r);
    }
}

/// A zone's mass and the frame it turns in at positions `x`, as its pivot lets it.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Its mass (static particles weigh nothing).
    pub mass: f64,
    /// Its centre of mass.
    pub centre_of_mass: DVec3,
    /// The point it turns about: its centre of mass when free, else the pivot's.
    pub centre: DVec3,
    /// Its inverse inertia about `centre` (only along the line where it turns about one).
    pub inv_inertia: DMat3,
}

impl Frame {
    /// The frame of `zone` at `x`, turning as `pivot` lets it.
    pub fn of(zone: &[u32], pivot: Pivot, x: &[DVec3], inv_mass: &[f64]) -> Frame {
        let mass = |i: u32| kernels::mass_of(inv_mass[i as usize]);
        let mut m_sum = 0.0;
        let mut c = DVec3::ZERO;
        for &i in zone {
            let m = mass(i);
            m_sum += m;
            c += x[i as usize] * m;
        }
        c /= m_sum;
        let centre = match pivot {
            Pivot::Point(s) | Pivot::Axis(s, _) => s,
            _ => c,
        };
        let inertia = inertia_of(zone.iter().map(|&i| (mass(i), x[i as usize] - centre)));
        Frame {
            mass: m_sum,
            centre_of_mass: c,
            centre,
            inv_inertia: inverse_inertia(inertia, pivot),
        }
    }
}

/// Move the particles of `zone` by the rigid motion from `x0` that best fits `target`
/// (mass-weighted least squares: the centres of mass matched, the rotation the rotational
/// part of the zone's deformation, found by Müller et al. 2016's iteration), writing
/// positions to `x` and adding each particle's displacement over `h` to `v`. Static
/// particles do not move (a zone with one is not fitted).
pub fn fit_rigidly(
    zone: &[u32],
    x0: &[DVec3],
    target: &[DVec3],
    inv_mass: &[f64],
    h: f64,
    x: &mut [DVec3],
    v: &mut [DVec3],
) {
    if zone.iter().any(|&i| inv_mass[i as usize] == 0.0) {
        return;
    }
    let (mut m_sum, mut c0, mut c1) = (0.0, DVec3::ZERO, DVec3::ZERO);
    for &i in zone {
        let (i, m) = (i as usize, 1.0 / inv_mass[i as usize]);
        m_sum += m;
        c0 += x0[i] * m;
        c1 += target[i] * m;
    }
    if m_sum <= 0.0 || !m_sum.is_finite() {
        return;
    }
    c0 /= m_sum;
    c1 /= m_sum;
    let mut a = DMat3::ZERO;
    for &i in zone {
        let (i, m) = (i as usize, 1.0 / inv_mass[i as usize]);
        a += outer(target[i] - c1, x0[i] - c0) * m;
    }
    let mut q = DQuat::IDENTITY;
    for _ in 0..FIT_ITERATIONS {
        let r = DMat3::from_quat(q);
        let num = r.x_axis.cross(a.x_axis) + r.y_axis.cross(a.y_axis) + r.z_axis.cross(a.z_axis);
        let den = (r.x_axis.dot(a.x_axis) + r.y_axis.dot(a.y_axis) + r.z_axis.dot(a.z_axis)).abs()
            + 1e-300;
        let w = num / den;
        let angle = w.length();
        // Converged, or not a number (a degenerate zone): stop.
        if angle.is_nan() || angle <= 1e-12 {
            break;
        }
        q = (DQuat::from_axis_angle(w / angle, angle) * q).normalize();
    }
    for &i in zone {
        let i = i as usize;
        let p = c1 + q * (x0[i] - c0);
        v[i] += (p - x[i]) / h;
        x[i] = p;
    }
}

/// Iterations of [`fit_rigidly`]'s rotation (Müller et al. 2016 report a few from a warm
/// start; a zone's turn over one step is well under one from the identity).
const FIT_ITERATIONS: u32 = 50;

/// The inverse of a zone's `inertia` (about its centre or its pivot) as `pivot` lets it
/// turn: about a line, only along it; else all of it, regularised by a tiny fraction of
/// its trace — a zone on a line has a singular inertia about that line, and turns about
/// it by ~0, which is what it carries.
fn inverse_inertia(inertia: DMat3, pivot: Pivot) -> DMat3 {
    match pivot {
        Pivot::Axis(_, a) => {
            let i_a = a.dot(inertia * a);
            if i_a > 0.0 {
                outer(a, a) / i_a
            } else {
                DMat3::ZERO
            }
        }
        _ => {
            let trace = inertia.x_axis.x + inertia.y_axis.y + inertia.z_axis.z;
            let reg = inertia + DMat3::IDENTITY * (1e-9 * trace.max(1e-300));
            if reg.determinant().abs() > 0.0 {
                reg.inverse()
            } else {
                DMat3::ZERO
            }
        }
    }
}

/// The inertia tensor of point masses `m` at offsets `r`: Σ m (|r|² I − r rᵀ).
fn inertia_of(masses: impl Iterator<Item = (f64, DVec3)>) -> DMat3 {
    masses.fold(DMat3::ZERO, |i, (m, r)| {
        i + (DMat3::IDENTITY * r.length_squared() - outer(r, r)) * m
    })
}

fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rigid_zone_keeps_its_distances_and_momentum() {
        let x0 = vec![
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(0.0, 1.0, 0.0),
            DVec3::new(0.3, 0.2, 0.5),
        ];
        let h = 0.1;
        let xs: Vec<DVec3> = vec![
            DVec3::new(0.1, 0.0, 0.0),
            DVec3::new(1.0, 0.3, 0.0),
            DVec3::new(-0.2, 1.0, 0.1),
            DVec3::new(0.3, 0.2, 0.2),
        ];
        let k = vec![1.0, 0.5, 2.0, 1.0];
        let mut x = xs.clone();
        let mut v: Vec<DVec3> = (0..4).map(|i| (xs[i] - x0[i]) / h).collect();
        move_rigidly(&[0, 1, 2, 3], Pivot::Free, &x0, &xs, &k, h, &mut x, &mut v);
        for i in 0..4 {
            for j in 0..4 {
                assert!((x[i].distance(x[j]) - x0[i].distance(x0[j])).abs() < 1e-12);
            }
        }
        let p_solver: DVec3 = (0..4).map(|i| (xs[i] - x0[i]) / h / k[i]).sum();
        let p_zone: DVec3 = (0..4).map(|i| v[i] / k[i]).sum();
        assert!((p_solver - p_zone).length() < 1e-9);
        let mut z = Zones::default();
        z.reset(5);
        assert!(z.union(3, 1));
        assert!(!z.union(1, 3));
        z.union(4, 3);
        assert_eq!(z.groups(), vec![vec![1, 3, 4]]);
    }

    /// The fit of a rigid motion: a zone sent by the target on an exact rigid motion is
    /// placed exactly there; sent on a deformation, it keeps every distance, its centre
    /// of mass goes where the target's went, and its velocities carry the displacement.
    #[test]
    fn a_zone_fitted_to_a_rigid_motion_lands_on_it() {
        let v = DVec3::new;
        let x0 = vec![
            v(0.0, 0.0, 0.0),
            v(0.1, 0.0, 0.0),
            v(0.0, 0.1, 0.0),
            v(0.1, 0.1, 0.02),
            v(0.05, 0.05, -0.03),
        ];
        let k = vec![1.0, 2.0, 1.0, 0.5, 1.0];
        let zone = [0, 1, 2, 3, 4];
        let rot = DQuat::from_axis_angle(v(0.3, -1.0, 0.5).normalize(), 0.7);
        let shift = v(0.2, -0.1, 0.05);
        let rigid: Vec<DVec3> = x0.iter().map(|&p| rot * p + shift).collect();
        let (mut x, mut vel) = (x0.clone(), vec![DVec3::ZERO; 5]);
        fit_rigidly(&zone, &x0, &rigid, &k, 0.01, &mut x, &mut vel);
        for i in 0..5 {
            assert!(x[i].distance(rigid[i]) < 1e-9, "{i}: {} {}", x[i], rigid[i]);
            assert!((vel[i] * 0.01 - (x[i] - x0[i])).length() < 1e-12);
        }
        // A deformed target: distances kept, centre of mass matched.
        let bent: Vec<DVec3> = rigid
            .iter()
            .enumerate()
            .map(|(i, &p)| p + v(0.0, 0.01 * i as f64, -0.005 * (i % 2) as f64))
            .collect();
        let mut x = x0.clone();
        fit_rigidly(&zone, &x0, &bent, &k, 0.01, &mut x, &mut vel);
        let centre = |p: &[DVec3]| -> DVec3 {
            let m: f64 = k.iter().map(|k| 1.0 / k).sum();
            p.iter().zip(&k).map(|(p, k)| *p / *k).sum::<DVec3>() / m
        };
        assert!(centre(&x).distance(centre(&bent)) < 1e-12);
        for i in 0..5 {
            for j in 0..5 {
                assert!((x[i].distance(x[j]) - x0[i].distance(x0[j])).abs() < 1e-12);
            }
        }
    }

    /// A zone next to pins turns about them: about the line two pins lie on (a flag's
    /// pole), every distance to them is kept and the zone still moves, with the angular
    /// momentum about that line of the solver's motion; with three pins not on a line it
    /// stays; a pin that moves (a scripted one) leaves it standing too.
    #[test]
    fn a_zone_held_by_pins_turns_about_them() {
        let v = DVec3::new;
        // Pins 4 and 5 on the y axis; the zone (0..4) beside them, sent off by the solver
        // along +x and +z (away from the pole and round it).
        let x0 = vec![
            v(0.1, 0.0, 0.0),
            v(0.2, 0.0, 0.0),
            v(0.1, 0.1, 0.0),
            v(0.2, 0.1, 0.0),
            v(0.0, 0.0, 0.0),
            v(0.0, 0.1, 0.0),
        ];
        let h = 0.01;
        let xs: Vec<DVec3> = x0
            .iter()
            .enumerate()
            .map(|(i, &p)| if i < 4 { p + v(0.05, -0.01, 0.02) } else { p })
            .collect();
        let k = vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0];
        let pins = [x0[4], x0[5]];
        let pivot = Pivot::of(&pins, &pins, 1e-12);
        assert_eq!(pivot, Pivot::Axis(x0[4], v(0.0, 1.0, 0.0)));
        let mut x = xs.clone();
        let mut vel = vec![DVec3::ZERO; 6];
        move_rigidly(&[0, 1, 2, 3], pivot, &x0, &xs, &k, h, &mut x, &mut vel);
        for i in 0..6 {
            for j in 0..6 {
                let (d, d0) = (x[i].distance(x[j]), x0[i].distance(x0[j]));
                assert!((d - d0).abs() < 1e-12, "{i}-{j}: {d} against {d0}");
            }
        }
        // It turned about the pole, the way the solver sent it (round +z from +x: about
        // −y), and each particle's velocity is the turn's.
        assert!(x[1].z > 1e-3, "{}", x[1]);
        for i in 0..4 {
            assert!(vel[i].dot(DVec3::Y).abs() < 1e-12);
            assert!(vel[i].dot(x[i] - x0[4]).abs() < 1e-12);
        }
        // The momentum about the pole the solver gave it is what it turns with.
        let l_axis = |p: &[DVec3], q: &dyn Fn(usize) -> DVec3| -> f64 {
            (0..4).map(|i| (p[i] - x0[4]).cross(q(i)).y).sum()
        };
        let l_solver = l_axis(&x0, &|i| (xs[i] - x0[i]) / h);
        let l_zone = l_axis(&x, &|i| vel[i]);
        assert!(
            (l_solver - l_zone).abs() < 1e-3 * l_solver.abs(),
            "{l_solver} {l_zone}"
        );
        // Three pins not on a line, or one that moves: it stays.
        let plane = [x0[4], x0[5], v(0.0, 0.0, 0.1)];
        assert_eq!(Pivot::of(&plane, &plane, 1e-12), Pivot::Fixed);
        let moved = [x0[4] + v(1e-3, 0.0, 0.0), x0[5]];
        assert_eq!(Pivot::of(&pins, &moved, 1e-12), Pivot::Fixed);
        assert_eq!(Pivot::of(&[x0[4]], &[x0[4]], 1e-12), Pivot::Point(x0[4]));
        assert_eq!(Pivot::of(&[], &[], 1e-12), Pivot::Free);
        move_rigidly(
            &[0, 1, 2, 3],
            Pivot::Fixed,
            &x0,
            &xs,
            &k,
            h,
            &mut x,
            &mut vel,
        );
        assert!((0..4).all(|i| x[i] == x0[i] && vel[i] == DVec3::ZERO));
    }
}
