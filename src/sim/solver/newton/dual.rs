//! Experiment: Newton's step solved by conjugate gradients on the 3N system, preconditioned
//! with the constraint-space (dual) factor of its block-diagonal approximation.
//!
//! K = M + G + JᵀPJ (G the geometric stiffness, P the penalties). Keeping only G's
//! diagonal 3×3 blocks gives K̃ = M̃ + JᵀPJ with M̃ block diagonal, whose inverse is
//! M̃⁻¹ − M̃⁻¹Jᵀ S⁻¹ J M̃⁻¹ with S = P⁻¹ + J M̃⁻¹ Jᵀ: one unknown per edge, the SLE's
//! pattern, far less fill than K's (Andrews et al. 2017 lump the geometric stiffness the
//! same way).

use std::sync::atomic::{AtomicU64, Ordering};

use glam::{DMat3, DVec3};

use super::{NONE, NewtonSolver, Side};
use crate::sim::cloth::Cloth;
use crate::sim::dof::Glider;
use crate::sim::sparse::FillOrdering;
use crate::sim::sparse::dissection;
use crate::sim::sparse::factor::{Factor, SupernodalChoice};
use crate::sim::sparse::pattern::LowerPattern;

/// PCG iterations, Newton steps and dual factorisations since the start (experiment).
pub static PCG_ITERATIONS: AtomicU64 = AtomicU64::new(0);
pub static PCG_SOLVES: AtomicU64 = AtomicU64::new(0);
pub static PCG_FACTORS: AtomicU64 = AtomicU64::new(0);

/// Whether the experiment is switched on (`IMPULSE_DUAL_PCG` = the relative tolerance).
pub fn tolerance() -> Option<f64> {
    std::env::var("IMPULSE_DUAL_PCG").ok()?.parse().ok()
}

/// Whether the dual factor is refreshed at every Newton step (`IMPULSE_DUAL_REFRESH=1`) or
/// once per time step.
pub fn refresh_every_step() -> bool {
    std::env::var("IMPULSE_DUAL_REFRESH").is_ok_and(|v| v == "1")
}

fn lump() -> f64 {
    std::env::var("IMPULSE_DUAL_LUMP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0)
}

fn pen_scale() -> f64 {
    std::env::var("IMPULSE_DUAL_PEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0)
}

#[derive(Debug, Default)]
pub struct Dual {
    key: Option<crate::sim::cloth::CacheKey>,
    lower: LowerPattern,
    factor: Option<Factor>,
    values: Vec<f64>,
    minv: Vec<DMat3>,
    dirs: Vec<DVec3>,
    x: Vec<f64>,
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
    t: Vec<f64>,
}

fn block(v: &[f64], b: usize) -> DVec3 {
    DVec3::new(v[3 * b], v[3 * b + 1], v[3 * b + 2])
}

fn add_block(v: &mut [f64], b: usize, d: DVec3) {
    v[3 * b] += d.x;
    v[3 * b + 1] += d.y;
    v[3 * b + 2] += d.z;
}

impl Dual {
    /// M̃ per block and S, factorised. `false` if S is not positive definite.
    pub fn refresh(&mut self, s: &NewtonSolver, cloth: &Cloth, gliders: &[Glider]) -> bool {
        let pat = &s.pattern;
        let t = &cloth.topology;
        let k = &cloth.particles.inv_mass;
        if self.key != Some(pat.key) || self.factor.is_none() {
            self.lower =
                LowerPattern::build(&t.edges, &pat.rows, cloth.len(), |p| k[p as usize] > 0.0);
            self.factor = Factor::symbolic(
                pat.rows.len(),
                &self.lower.col_ptr,
                &self.lower.row_idx,
                SupernodalChoice::default(),
                dissection::edges_order(t, cloth.len(), &pat.rows, FillOrdering::default()),
            );
            self.key = Some(pat.key);
        }
        // M̃: mass, the geometric stiffness's diagonal blocks, side rows' penalties.
        let nb = pat.particle.len();
        let mut m: Vec<DMat3> = pat
            .particle
            .iter()
            .map(|&p| DMat3::from_diagonal(DVec3::splat(1.0 / k[p as usize])))
            .collect();
        for (r, &e) in pat.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let n = s.dirs0[r];
            let len = s.c[r] + t.rest[e as usize];
            let m_light = 1.0 / k[a as usize].max(k[b as usize]);
            let geo = (s.lambda[r] / len).max(-m_light * super::COMPRESSION_FLOOR);
            let g = (DMat3::IDENTITY - outer(n, n)) * (geo * lump());
            for q in [a, b] {
                let blk = pat.block[q as usize];
                if blk != NONE {
                    m[blk as usize] += g;
                }
            }
        }
        for row in &s.sides {
            let pen = NewtonSolver::side_penalty(cloth, row.particle);
            let blk = pat.block[row.particle as usize] as usize;
            let proj = match row.side {
                Side::Rod(_) => DMat3::from_cols(
                    NewtonSolver::side_projector(row, gliders, DVec3::X),
                    NewtonSolver::side_projector(row, gliders, DVec3::Y),
                    NewtonSolver::side_projector(row, gliders, DVec3::Z),
                ),
                _ => outer(row.n0, row.n0),
            };
            m[blk] += proj * pen;
        }
        if std::env::var("IMPULSE_DUAL_DEBUG").is_ok() {
            let bad = m
                .iter()
                .filter(|b| b.determinant() <= 0.0 || !b.determinant().is_finite())
                .count();
            let gmax = s.lambda.iter().fold(0.0f64, |a, &l| a.max(l.abs()));
            let lmin = s.lambda.iter().fold(0.0f64, |a, &l| a.min(l));
            eprintln!(
                "refresh: bad blocks {bad}, |lambda| max {gmax:e}, min {lmin:e}, sides {}",
                s.sides.len()
            );
        }
        self.dirs.clone_from(&s.dirs0);
        self.minv.clear();
        self.minv.extend(m.iter().map(|b| b.inverse()));
        debug_assert_eq!(self.minv.len(), nb);
        // S = P⁻¹ + J M̃⁻¹ Jᵀ.
        let minv_of = |q: u32| {
            let blk = pat.block[q as usize];
            (blk != NONE).then(|| self.minv[blk as usize])
        };
        self.values.clear();
        self.values.resize(self.lower.entries.len(), 0.0);
        for (j, &e) in pat.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let n = s.dirs0[j];
            let mut diag = 1.0 / (s.penalty[j] * pen_scale());
            for q in [a, b] {
                if let Some(mi) = minv_of(q) {
                    diag += n.dot(mi * n);
                }
            }
            for idx in self.lower.col_ptr[j]..self.lower.col_ptr[j + 1] {
                self.values[idx] = match self.lower.entries[idx] {
                    None => diag,
                    Some(c) => {
                        let mi = minv_of(c.particle).unwrap_or(DMat3::ZERO);
                        c.sign * s.dirs0[c.row as usize].dot(mi * s.dirs0[c.col as usize])
                    }
                };
            }
        }
        PCG_FACTORS.fetch_add(1, Ordering::Relaxed);
        self.factor
            .as_mut()
            .is_some_and(|f| f.numeric(&self.values).is_ok())
    }

    /// z = K̃⁻¹ r.
    fn precondition(&mut self, s: &NewtonSolver, cloth: &Cloth) {
        let pat = &s.pattern;
        let t = &cloth.topology;
        let nb = pat.particle.len();
        for b in 0..nb {
            let u = self.minv[b] * block(&self.r, b);
            self.z[3 * b..3 * b + 3].copy_from_slice(&u.to_array());
        }
        let zb = |z: &[f64], q: u32| {
            let blk = pat.block[q as usize];
            if blk == NONE {
                DVec3::ZERO
            } else {
                block(z, blk as usize)
            }
        };
        self.t.clear();
        for (r, &e) in pat.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            self.t
                .push(self.dirs[r].dot(zb(&self.z, b) - zb(&self.z, a)));
        }
        let rhs_t = if std::env::var("IMPULSE_DUAL_DEBUG").is_ok() {
            Some(self.t.clone())
        } else {
            None
        };
        if let Some(f) = self.factor.as_mut() {
            f.solve_in_place(&mut self.t);
        }
        if let Some(b) = rhs_t {
            eprintln!(
                "S residual {:e}",
                self.lower.relative_residual(&self.values, &self.t, &b)
            );
        }
        // z −= M̃⁻¹ Jᵀ s.
        self.ap.iter_mut().for_each(|v| *v = 0.0);
        for (r, &e) in pat.rows.iter().enumerate() {
            let [a, b] = t.edges[e as usize];
            let f = self.dirs[r] * self.t[r];
            for (q, sign) in [(a, -1.0), (b, 1.0)] {
                let blk = pat.block[q as usize];
                if blk != NONE {
                    add_block(&mut self.ap, blk as usize, f * sign);
                }
            }
        }
        for b in 0..nb {
            let u = self.minv[b] * block(&self.ap, b);
            add_block(&mut self.z, b, -u);
        }
    }

    /// y = K v from the primal lower triangle in `s.values`.
    fn apply_k(s: &NewtonSolver, v: &[f64], y: &mut [f64]) {
        let pat = &s.pattern;
        y.iter_mut().for_each(|e| *e = 0.0);
        for j in 0..v.len() {
            for idx in pat.col_ptr[j]..pat.col_ptr[j + 1] {
                let i = pat.row_idx[idx];
                let a = s.values[idx];
                y[i] += a * v[j];
                if i != j {
                    y[j] += a * v[i];
                }
            }
        }
    }

    /// Solve K Δx = `s.rhs` in place by PCG to relative tolerance `eta` (in K̃⁻¹'s norm).
    pub fn solve(&mut self, s: &mut NewtonSolver, cloth: &Cloth, eta: f64) {
        let n = s.rhs.len();
        self.x.clear();
        self.x.resize(n, 0.0);
        self.r.clone_from(&s.rhs);
        self.z.resize(n, 0.0);
        self.ap.resize(n, 0.0);
        self.precondition(s, cloth);
        self.p.clone_from(&self.z);
        let mut rz: f64 = self.r.iter().zip(&self.z).map(|(a, b)| a * b).sum();
        let rz0 = rz;
        if std::env::var("IMPULSE_DUAL_DEBUG").is_ok() {
            let rr: f64 = self.r.iter().map(|a| a * a).sum();
            let zz: f64 = self.z.iter().map(|a| a * a).sum();
            eprintln!(
                "rz0 {rz0:e} rr {rr:e} zz {zz:e} n {n} minv0 {:?}",
                self.minv.first()
            );
        }
        let mut it = 0;
        let zmax = |z: &[f64]| z.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        while it < 500 && zmax(&self.z) > eta && rz > 0.0 {
            it += 1;
            let mut ap = std::mem::take(&mut self.ap);
            Self::apply_k(s, &self.p, &mut ap);
            let pap: f64 = self.p.iter().zip(&ap).map(|(a, b)| a * b).sum();
            let alpha = rz / pap;
            for i in 0..n {
                self.x[i] += alpha * self.p[i];
                self.r[i] -= alpha * ap[i];
            }
            self.ap = ap;
            self.precondition(s, cloth);
            let rz_new: f64 = self.r.iter().zip(&self.z).map(|(a, b)| a * b).sum();
            let beta = rz_new / rz;
            rz = rz_new;
            for i in 0..n {
                self.p[i] = self.z[i] + beta * self.p[i];
            }
        }
        if std::env::var("IMPULSE_DUAL_DEBUG").is_ok() {
            let mut y = vec![0.0; n];
            Self::apply_k(s, &self.x, &mut y);
            let num: f64 = y.iter().zip(&s.rhs).map(|(a, b)| (a - b) * (a - b)).sum();
            let den: f64 = s.rhs.iter().map(|b| b * b).sum();
            let xm = zmax(&self.x);
            eprintln!(
                "pcg it {it} rz/rz0 {:e} true rel res {:e} |dx| {xm:e}",
                rz / rz0,
                (num / den).sqrt()
            );
        }
        PCG_ITERATIONS.fetch_add(it, Ordering::Relaxed);
        PCG_SOLVES.fetch_add(1, Ordering::Relaxed);
        s.rhs.clone_from(&self.x);
    }
}

fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}
