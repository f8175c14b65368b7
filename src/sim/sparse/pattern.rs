//! The sparsity pattern of a constraint-space matrix A = J M⁻¹ Jᵀ over a set of distance
//! constraints (004 §3.4.2, 001 §4): one row per constraint, an entry wherever two
//! constraints share a particle. Stored as the lower triangle in compressed columns, the
//! form faer's sparse Cholesky analyses once and refactorises per step (001 §7), with the
//! coupling behind each entry so the values can be refilled without searching.

/// One stored off-diagonal entry (row > column): the particle the two constraints share and
/// the sign σ_row·σ_col (+1 if the particle is the first end of both constraints or the
/// second of both, −1 otherwise — 004 §3.4.2's case table, 001 eqs. 1–2).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Coupling {
    pub row: u32,
    pub col: u32,
    pub particle: u32,
    pub sign: f64,
}

/// Lower triangle of A in compressed columns; `entries[k]` is `None` for a diagonal.
#[derive(Debug, Default, Clone)]
pub(crate) struct LowerPattern {
    pub col_ptr: Vec<usize>,
    pub row_idx: Vec<usize>,
    pub entries: Vec<Option<Coupling>>,
}

impl LowerPattern {
    /// The pattern of the constraints `rows` (edge indices into `edges`) over
    /// `n_particles` particles; two rows are coupled through a shared particle `p` only if
    /// `couples(p)` (the SLE leaves static particles out: they couple nothing).
    pub fn build(
        edges: &[[u32; 2]],
        rows: &[u32],
        n_particles: usize,
        couples: impl Fn(u32) -> bool,
    ) -> LowerPattern {
        let mut incident: Vec<Vec<u32>> = vec![Vec::new(); n_particles];
        for (r, &e) in rows.iter().enumerate() {
            let [a, b] = edges[e as usize];
            incident[a as usize].push(r as u32);
            incident[b as usize].push(r as u32);
        }
        let mut out = LowerPattern::default();
        out.col_ptr.push(0);
        let mut col: Vec<(u32, Option<Coupling>)> = Vec::new();
        for (j, &ej) in rows.iter().enumerate() {
            col.clear();
            col.push((j as u32, None));
            let [ja, jb] = edges[ej as usize];
            for (role_j, pj) in [(0u8, ja), (1u8, jb)] {
                if !couples(pj) {
                    continue;
                }
                for &i in &incident[pj as usize] {
                    if (i as usize) <= j {
                        continue;
                    }
                    let [ia, _] = edges[rows[i as usize] as usize];
                    let role_i = u8::from(ia != pj);
                    col.push((
                        i,
                        Some(Coupling {
                            row: i,
                            col: j as u32,
                            particle: pj,
                            sign: if role_i == role_j { 1.0 } else { -1.0 },
                        }),
                    ));
                }
            }
            col.sort_by_key(|&(i, _)| i);
            for &(i, c) in &col {
                out.row_idx.push(i as usize);
                out.entries.push(c);
            }
            out.col_ptr.push(out.row_idx.len());
        }
        out
    }

    /// Number of rows (and columns).
    pub fn n(&self) -> usize {
        self.col_ptr.len().saturating_sub(1)
    }

    /// y = A x with A's lower-triangle `values` in this pattern.
    pub fn mul(&self, values: &[f64], x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for j in 0..self.n() {
            let range = self.col_ptr[j]..self.col_ptr[j + 1];
            for (&i, &a) in self.row_idx[range.clone()].iter().zip(&values[range]) {
                y[i] += a * x[j];
                if i != j {
                    y[j] += a * x[i];
                }
            }
        }
    }

    /// ‖A x − b‖ / ‖b‖ (‖A x − b‖ when b = 0) with A's lower-triangle `values`.
    pub fn relative_residual(&self, values: &[f64], x: &[f64], b: &[f64]) -> f64 {
        let mut y = vec![0.0; b.len()];
        self.mul(values, x, &mut y);
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for (yi, bi) in y.iter().zip(b) {
            num += (yi - bi) * (yi - bi);
            den += bi * bi;
        }
        if den > 0.0 {
            (num / den).sqrt()
        } else {
            num.sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_is_tridiagonal_with_alternating_roles() {
        // 0-1-2-3 as edges [0,1], [1,2], [2,3]: each row couples only to its neighbours,
        // through the shared particle, which is the second end of one and the first of the
        // other (sign −1).
        let edges = [[0, 1], [1, 2], [2, 3]];
        let p = LowerPattern::build(&edges, &[0, 1, 2], 4, |_| true);
        assert_eq!(p.col_ptr, vec![0, 2, 4, 5]);
        assert_eq!(p.row_idx, vec![0, 1, 1, 2, 2]);
        let c = p.entries[1].unwrap();
        assert_eq!((c.row, c.col, c.particle, c.sign), (1, 0, 1, -1.0));
        // Without coupling through particle 1 the first two rows are independent.
        let q = LowerPattern::build(&edges, &[0, 1, 2], 4, |v| v != 1);
        assert_eq!(q.col_ptr, vec![0, 1, 3, 4]);
        // y = A x on the symmetric matrix.
        let values = [2.0, -1.0, 2.0, -1.0, 2.0];
        let mut y = [0.0; 3];
        p.mul(&values, &[1.0, 1.0, 1.0], &mut y);
        assert_eq!(y, [1.0, 0.0, 1.0]);
    }
}
