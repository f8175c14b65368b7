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
//! the edges its rigid motion stretches at its border are taken back by growing it a
//! bounded number of rings (never over a static particle), then by solving the rest of
//! the cloth again with the zones held (`World`), and what is still stretched after that
//! is left to the next step and reported. A zone with a static particle — in a contact,
//! or at the other end of an edge the zone stretched, which nothing else can take back —
//! stays where it started; the rings it may grow by are bounded, so it never freezes a
//! cloth whose contacts do not span it (docs/numerics.md, "Self-contact").

use glam::{DMat3, DQuat, DVec3};

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
        let mut r = i;
        while self.parent[r as usize] != r {
            r = self.parent[r as usize];
        }
        let mut i = i;
        while self.parent[i as usize] != r {
            let next = self.parent[i as usize];
            self.parent[i as usize] = r;
            i = next;
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

/// Move the particles of `zone` rigidly from `x0` over a step of `h`: the centre of mass
/// goes where the solver sent it (`x_solver`), the zone turns with the angular momentum of
/// its motion from `x0` to `x_solver` (each particle's mean velocity over the step) and
/// ends with the linear momentum of the solver's end-of-step velocities `v`. A zone with a
/// static particle (inverse mass 0) stays at `x0`. Writes end positions to `x` and
/// end-of-step velocities to `v`.
pub fn move_rigidly(
    zone: &[u32],
    x0: &[DVec3],
    x_solver: &[DVec3],
    inv_mass: &[f64],
    h: f64,
    x: &mut [DVec3],
    v: &mut [DVec3],
) {
    let fixed = zone.iter().any(|&i| inv_mass[i as usize] == 0.0);
    if fixed {
        for &i in zone {
            let i = i as usize;
            x[i] = x0[i];
            v[i] = DVec3::ZERO;
        }
        return;
    }
    let mut m_sum = 0.0;
    let mut c = DVec3::ZERO;
    let mut shift = DVec3::ZERO;
    let mut p = DVec3::ZERO;
    for &i in zone {
        let i = i as usize;
        let m = 1.0 / inv_mass[i];
        m_sum += m;
        c += x0[i] * m;
        shift += (x_solver[i] - x0[i]) * m;
        p += v[i] * m;
    }
    c /= m_sum;
    // The centre of mass goes where the solver sent it, and the zone ends the step with
    // the solver's end-of-step momentum (with gravity the two differ by ½·g·h per step).
    let c1 = c + shift / m_sum;
    let vc = p / m_sum;
    let mut l = DVec3::ZERO;
    let mut inertia = DMat3::ZERO;
    for &i in zone {
        let i = i as usize;
        let m = 1.0 / inv_mass[i];
        let r = x0[i] - c;
        let u = (x_solver[i] - x0[i]) / h;
        l += r.cross(u) * m;
        inertia += (DMat3::IDENTITY * r.length_squared() - outer(r, r)) * m;
    }
    // A zone on a line has a singular inertia about that line: regularise by a tiny
    // fraction of its trace (the spin about the line is then ~0, which is what it carries).
    let trace = inertia.x_axis.x + inertia.y_axis.y + inertia.z_axis.z;
    let reg = inertia + DMat3::IDENTITY * (1e-9 * trace.max(1e-300));
    let omega = if reg.determinant().abs() > 0.0 {
        reg.inverse() * l
    } else {
        DVec3::ZERO
    };
    let angle = omega.length() * h;
    let rot = if angle > 0.0 {
        DQuat::from_axis_angle(omega / omega.length(), angle)
    } else {
        DQuat::IDENTITY
    };
    for &i in zone {
        let i = i as usize;
        let r = rot * (x0[i] - c);
        x[i] = c1 + r;
        v[i] = vc + omega.cross(r);
    }
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
        move_rigidly(&[0, 1, 2, 3], &x0, &xs, &k, h, &mut x, &mut v);
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
}
