//! Per-particle constraint matrices (001 §5, eq. 6, after Baraff and Witkin): what a
//! contact, a glider on a rod or a pin leaves of a particle's freedom to move.
//!
//! A constraint matrix C maps an unconstrained velocity change to the allowed one,
//! δv_c = C·δv. All four cases of eq. 6 are symmetric projections (Cᵀ = C, C² = C), which is
//! what makes the 001 impulse matrix symmetric positive (semi-)definite (eqs. 9–11).

use glam::DVec3;

/// A particle's degrees of freedom and its constraint matrix (001 eq. 6).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Dof {
    /// ndof 3: C = I.
    #[default]
    Free,
    /// ndof 2: may not move along the unit normal `n` (a contact: only sliding is
    /// allowed), C = I − n nᵀ.
    Slide(DVec3),
    /// ndof 1: may only move along the unit direction `axis` (a glider on a rod),
    /// C = axis axisᵀ.
    Line(DVec3),
    /// ndof 0: C = 0 (pinned or held by the user).
    Fixed,
}

impl Dof {
    /// C·u.
    #[inline]
    pub fn apply(self, u: DVec3) -> DVec3 {
        match self {
            Dof::Free => u,
            Dof::Slide(n) => u - n * n.dot(u),
            Dof::Line(a) => a * a.dot(u),
            Dof::Fixed => DVec3::ZERO,
        }
    }

    /// Degrees of freedom left (3, 2, 1 or 0).
    pub fn ndof(self) -> u8 {
        match self {
            Dof::Free => 3,
            Dof::Slide(_) => 2,
            Dof::Line(_) => 1,
            Dof::Fixed => 0,
        }
    }

    /// This constraint with one more prohibited direction `n` (unit): two contacts (ball and
    /// ground) leave the line along n₁ × n₂; a line survives only if it is perpendicular to `n`.
    pub fn prohibit(self, n: DVec3) -> Dof {
        match self {
            Dof::Free => Dof::Slide(n),
            Dof::Slide(m) => {
                let axis = m.cross(n);
                let len = axis.length();
                if len < 1e-6 {
                    Dof::Slide(m)
                } else {
                    Dof::Line(axis / len)
                }
            }
            Dof::Line(a) => {
                if a.dot(n).abs() < 1e-6 {
                    Dof::Line(a)
                } else {
                    Dof::Fixed
                }
            }
            Dof::Fixed => Dof::Fixed,
        }
    }
}

/// A particle fixed to a glider that runs along a straight rod (001 §5, the curtain
/// example): it may move only along `axis` through `anchor`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Glider {
    /// The particle.
    pub particle: usize,
    /// A point on the rod, m.
    pub anchor: DVec3,
    /// Unit direction of the rod.
    pub axis: DVec3,
}

impl Glider {
    /// A glider for `particle` at `anchor` along `axis` (normalised). `None` if the axis is
    /// zero or not finite.
    pub fn new(particle: usize, anchor: DVec3, axis: DVec3) -> Option<Glider> {
        let len = axis.length();
        (anchor.is_finite() && len.is_finite() && len > 1e-12).then(|| Glider {
            particle,
            anchor,
            axis: axis / len,
        })
    }

    /// The part of `u` along the rod (the glider's constraint matrix, 001 eq. 6, ndof 1).
    pub fn along(&self, u: DVec3) -> DVec3 {
        Dof::Line(self.axis).apply(u)
    }

    /// The closest point on the rod to `x`.
    pub fn project(&self, x: DVec3) -> DVec3 {
        self.anchor + self.along(x - self.anchor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_is_a_symmetric_projection() {
        let n = DVec3::new(1.0, 2.0, -0.5).normalize();
        let u = DVec3::new(0.3, -1.0, 2.0);
        let w = DVec3::new(-0.7, 0.4, 0.1);
        for c in [Dof::Free, Dof::Slide(n), Dof::Line(n), Dof::Fixed] {
            // 001 eq. 11 and the symmetry used for eq. 10.
            assert!((c.apply(u).dot(w) - c.apply(w).dot(u)).abs() < 1e-12);
            assert!((c.apply(c.apply(u)) - c.apply(u)).length() < 1e-12);
        }
        assert!(Dof::Slide(n).apply(u).dot(n).abs() < 1e-12);
        assert!(Dof::Line(n).apply(u).cross(n).length() < 1e-12);
    }

    #[test]
    fn two_contacts_leave_a_line() {
        let c = Dof::Free.prohibit(DVec3::Y).prohibit(DVec3::X);
        assert_eq!(c, Dof::Line(DVec3::new(0.0, 0.0, -1.0)));
        assert_eq!(Dof::Line(DVec3::X).prohibit(DVec3::Y), Dof::Line(DVec3::X));
        assert_eq!(
            Dof::Line(DVec3::X).prohibit(DVec3::new(1.0, 1.0, 0.0).normalize()),
            Dof::Fixed
        );
    }
}
