//! The step's self-contacts as rows over four particles: what every impulse solver visits.
//!
//! A row holds particles p₀…p₃, weights w₀…w₃ and a unit normal n fixed when the contact
//! was found; its constraint on the previews p̃ₖ = drift(k) + vₖ·h (004 §3.2) is
//!
//! ```text
//!     g = n · Σ wₖ p̃ₖ − gap ≥ 0
//! ```
//!
//! where the gap is the cloth's thickness, or less between the two lips of a cut that are
//! still opening ([`SelfRow::gap`]);
//! with w = (1, −β₀, −β₁, −β₂) for a vertex against a triangle's point of barycentric
//! weights β, and w = (1 − s, s, −(1 − t), −t) for the closest points of two edges. Linear in
//! the previews, it is met by one impulse along n (Bridson, Fedkiw & Anderson 2002 §7.2,
//! written in the preview form of 004): P = −g / (h Σ wₖ² mₖ⁻¹), Δvₖ = wₖ mₖ⁻¹ P n, equal and
//! opposite, so it keeps linear momentum. Coulomb friction then cuts the tangential relative
//! velocity Σ wₖ vₖ by at most μ times the normal change (the impulse bound |Pₜ| ≤ μ P of
//! the same row), which is also what the ball and ground contacts do
//! ([`crate::sim::collision::ContactSweep`]).

use glam::DVec3;

/// One self-contact (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfRow {
    /// The four particles: vertex and triangle, or edge and edge.
    pub p: [u32; 4],
    /// Their weights (the first positive, summing to zero).
    pub w: [f64; 4],
    /// Unit normal from the second feature towards the first.
    pub n: DVec3,
    /// The gap the row keeps, m: the thickness ([`SelfRows::thickness`]), or less for
    /// a pair on the two lips of a cut, which start on each other
    /// ([`crate::sim::contact::LIP_OPEN`]).
    pub gap: f64,
}

impl SelfRow {
    /// The row's effective inverse mass Σ wₖ² mₖ⁻¹ (0: all its particles static).
    #[inline(always)]
    fn inverse_mass(&self, inv_mass: &[f64]) -> f64 {
        (0..4)
            .map(|j| self.w[j] * self.w[j] * inv_mass[self.p[j] as usize])
            .sum()
    }
}

/// The step's self-contact rows with the gap they keep.
#[derive(Debug, Clone, Copy)]
pub struct SelfRows<'a> {
    /// The rows.
    pub rows: &'a [SelfRow],
    /// The cloth's thickness (m): the gap most rows keep.
    pub thickness: f64,
}

/// A row's own slop as a fraction of its gap: how short of the gap a previewed row may end
/// before it is corrected, at least the slop a visit is given. A row short of its gap by a tenth of
/// the thickness is still nine tenths of it apart, far from crossing; a row corrected closes
/// its whole gap, so this is a hysteresis band rather than a looser gap. The contact's
/// slop of the obstacles (the strain tolerance times the shortest edge, 3.4 µm at 30×30)
/// made the Gauss–Seidel between layers of rows and the chains crawl: thousands of strips
/// sweeps per step on a folded 30×30 drape, each correcting a few rows by micrometres.
pub const SLOP: f64 = 0.25;

impl SelfRows<'_> {
    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// One Gauss–Seidel visit of every row — or, given `active`, of the rows it lists
    /// (indices into `rows`, [`SelfRows::near`]): a row whose previewed gap is short by
    /// more than `slop` (or the rows' own, if wider) gets the normal impulse that closes it
    /// and Coulomb friction of coefficient `mu`. Returns how many rows were corrected.
    #[allow(clippy::too_many_arguments)]
    pub fn visit(
        &self,
        active: Option<&[u32]>,
        drift: &impl Fn(usize) -> DVec3,
        v: &mut [DVec3],
        inv_mass: &[f64],
        h: f64,
        slop: f64,
        mu: f64,
    ) -> usize {
        match active {
            Some(a) => {
                let rows = a.iter().filter_map(|&i| self.rows.get(i as usize));
                self.visit_rows(rows, drift, v, inv_mass, h, slop, mu)
            }
            None => self.visit_rows(self.rows.iter(), drift, v, inv_mass, h, slop, mu),
        }
    }

    /// The rows whose previewed gap is less than `band` beyond the thickness — those a
    /// few sweeps may correct — as indices into `rows`, in `out`.
    pub fn near(
        &self,
        drift: &impl Fn(usize) -> DVec3,
        v: &[DVec3],
        inv_mass: &[f64],
        h: f64,
        band: f64,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        out.extend(
            self.rows
                .iter()
                .enumerate()
                .filter(|(_, r)| self.below(r, drift, v, inv_mass, h, band))
                .map(|(i, _)| i as u32),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn visit_rows<'r>(
        &self,
        rows: impl Iterator<Item = &'r SelfRow>,
        drift: &impl Fn(usize) -> DVec3,
        v: &mut [DVec3],
        inv_mass: &[f64],
        h: f64,
        slop: f64,
        mu: f64,
    ) -> usize {
        let mut any = 0;
        for r in rows {
            let idx = r.p.map(|i| i as usize);
            let k = idx.map(|i| inv_mass[i]);
            let wsum = r.inverse_mass(inv_mass);
            if wsum <= 0.0 {
                continue;
            }
            let gap = self.gap(r, drift, v, h);
            if gap >= -slop.max(SLOP * r.gap) {
                continue;
            }
            any += 1;
            let dun = -gap / h;
            let push = dun / wsum;
            for j in 0..4 {
                v[idx[j]] += r.n * (r.w[j] * k[j] * push);
            }
            if mu > 0.0 {
                let rel: DVec3 = (0..4).map(|j| v[idx[j]] * r.w[j]).sum();
                let vt = rel - r.n * rel.dot(r.n);
                let len = vt.length();
                if len > 0.0 {
                    let cut = vt * ((mu * dun).min(len) / len / wsum);
                    for j in 0..4 {
                        v[idx[j]] -= cut * (r.w[j] * k[j]);
                    }
                }
            }
        }
        any
    }

    /// Whether some row's previewed gap is short by more than `slop`.
    pub fn violated(
        &self,
        drift: &impl Fn(usize) -> DVec3,
        v: &[DVec3],
        inv_mass: &[f64],
        h: f64,
        slop: f64,
    ) -> bool {
        self.rows.iter().any(|r| {
            let limit = -slop.max(SLOP * r.gap);
            self.below(r, drift, v, inv_mass, h, limit)
        })
    }

    /// Whether a row with a dynamic particle has a previewed gap (less its own) below
    /// `limit`.
    #[inline(always)]
    fn below(
        &self,
        r: &SelfRow,
        drift: &impl Fn(usize) -> DVec3,
        v: &[DVec3],
        inv_mass: &[f64],
        h: f64,
        limit: f64,
    ) -> bool {
        r.inverse_mass(inv_mass) > 0.0 && self.gap(r, drift, v, h) < limit
    }

    /// The row's previewed gap less its own: n · Σ wₖ (drift(k) + vₖ·h) − gap (summed
    /// from −gap, as the visit always has).
    #[inline(always)]
    fn gap(&self, r: &SelfRow, drift: &impl Fn(usize) -> DVec3, v: &[DVec3], h: f64) -> f64 {
        (0..4).fold(-r.gap, |gap, j| {
            let i = r.p[j] as usize;
            gap + r.w[j] * r.n.dot(drift(i) + v[i] * h)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vertex falling onto a triangle stops at the thickness; momentum is kept.
    #[test]
    fn a_row_closes_its_gap_and_keeps_momentum() {
        let x = [
            DVec3::new(0.2, 0.01, 0.2),
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(0.0, 0.0, 1.0),
        ];
        let mut v = vec![
            DVec3::new(0.3, -2.0, 0.0),
            DVec3::ZERO,
            DVec3::ZERO,
            DVec3::ZERO,
        ];
        let k = [1.0, 2.0, 2.0, 2.0];
        let row = SelfRow {
            p: [0, 1, 2, 3],
            w: [1.0, -0.6, -0.2, -0.2],
            n: DVec3::Y,
            gap: 0.004,
        };
        let rows = SelfRows {
            rows: &[row],
            thickness: 0.004,
        };
        let h = 0.01;
        let m0: DVec3 = (0..4).map(|i| v[i] / k[i]).sum();
        let drift = |i: usize| x[i];
        assert_eq!(rows.visit(None, &drift, &mut v, &k, h, 0.0, 0.3), 1);
        let gap: f64 = (0..4).map(|j| row.w[j] * (x[j] + v[j] * h).y).sum::<f64>() - 0.004;
        assert!(gap.abs() < 1e-12, "{gap}");
        let m1: DVec3 = (0..4).map(|i| v[i] / k[i]).sum();
        assert!((m1 - m0).length() < 1e-12);
        // Friction slowed the sliding, by at most μ times the normal change.
        let rel: DVec3 = (0..4).map(|j| v[j] * row.w[j]).sum();
        assert!(rel.x < 0.3 && rel.x >= 0.0);
        assert!(!rows.violated(&drift, &v, &k, h, 1e-12));
    }
}
