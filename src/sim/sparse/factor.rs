//! faer's sparse Cholesky behind a small interface: symbolic analysis (a fill-reducing
//! order — the caller's nested dissection on a grid cloth, [`super::dissection`], else
//! faer's AMD) once per pattern, numeric LLᵀ per step into persistent buffers, and
//! in-place solves that reuse one factor (001 §7).
//!
//! The permutation is applied here, not by faer: the permuted pattern and, for every
//! entry of the caller's matrix, its place in the permuted one are computed once with the
//! symbolic analysis, so a numeric factorisation starts with one gather instead of faer
//! re-permuting (and re-counting) the whole matrix every time — measured, that rebuild was
//! 6–7 % of a Newton time step at 50×50.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, LltRef, SymbolicCholesky, SymmetricOrdering,
    factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

/// Which factorisation kernel to use.
///
/// Measured on the benchmark machine (see README, `cargo bench --bench kernels`):
/// simplicial wins on small grids, supernodal from about 40×40 (≈ 3000 rows) up. `Auto`
/// applies that threshold; `Faer` leaves the choice to faer's flop-ratio heuristic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SupernodalChoice {
    /// Supernodal from `SUPERNODAL_MIN_ROWS` rows up, simplicial below.
    #[default]
    Auto,
    /// faer's own heuristic.
    Faer,
    /// Always simplicial.
    Simplicial,
    /// Always supernodal.
    Supernodal,
}

/// Rows from which [`SupernodalChoice::Auto`] picks the supernodal kernel.
pub const SUPERNODAL_MIN_ROWS: usize = 3000;

/// Numeric factorisation failed: A is not (numerically) positive definite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPositiveDefinite;

/// A symbolic factorisation with its numeric buffers.
pub struct Factor {
    n: usize,
    /// The permuted triangle that faer factorises (identity ordering), checked once here
    /// rather than at every numeric factorisation (measured: 0.6 % of a 50×50 Newton run).
    pattern: SymbolicSparseColMat<usize>,
    /// For each entry of the caller's pattern, its index in the permuted one.
    scatter: Vec<usize>,
    /// New index of each old unknown, and old index of each new one.
    new_of_old: Vec<usize>,
    old_of_new: Vec<usize>,
    /// Which triangle of the permuted matrix is stored (the one faer's kernel reads).
    side: Side,
    /// The permuted matrix values, and the permuted right-hand side of a solve.
    values: Vec<f64>,
    work: Vec<f64>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    factor_mem: MemBuffer,
    solve_mem: MemBuffer,
    valid: bool,
}

impl Factor {
    /// Symbolic analysis of the lower-triangle pattern (`col_ptr`, `row_idx`) of an n×n
    /// matrix, in the fill-reducing order `old_of_new` (the unknown numbered k-th is
    /// `old_of_new[k]`; a permutation of 0..n) or, if `None`, faer's AMD order. `None` if
    /// faer rejects it (out of memory) or the order is not a permutation.
    pub fn symbolic(
        n: usize,
        col_ptr: &[usize],
        row_idx: &[usize],
        choice: SupernodalChoice,
        order: Option<Vec<usize>>,
    ) -> Option<Factor> {
        if n == 0 {
            return None;
        }
        let threshold = match choice {
            SupernodalChoice::Auto if n >= SUPERNODAL_MIN_ROWS => {
                SupernodalThreshold::FORCE_SUPERNODAL
            }
            SupernodalChoice::Auto => SupernodalThreshold::FORCE_SIMPLICIAL,
            SupernodalChoice::Faer => SupernodalThreshold::AUTO,
            SupernodalChoice::Simplicial => SupernodalThreshold::FORCE_SIMPLICIAL,
            SupernodalChoice::Supernodal => SupernodalThreshold::FORCE_SUPERNODAL,
        };
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: threshold,
            ..Default::default()
        };
        let old_of_new: Vec<usize> = match order {
            Some(order) => order,
            None => {
                let pattern = SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, row_idx);
                // The AMD ordering alone (no numeric work follows from this analysis).
                let ordered = factorize_symbolic_cholesky(
                    pattern,
                    Side::Lower,
                    SymmetricOrdering::Amd,
                    params,
                )
                .ok()?;
                match ordered.perm() {
                    Some(perm) => perm.arrays().0.to_vec(),
                    None => (0..n).collect(),
                }
            }
        };
        if old_of_new.len() != n {
            return None;
        }
        let mut new_of_old = vec![usize::MAX; n];
        for (new, &old) in old_of_new.iter().enumerate() {
            if old >= n || new_of_old[old] != usize::MAX {
                return None;
            }
            new_of_old[old] = new;
        }
        // faer's analysis with the identity ordering reads the upper triangle; its
        // supernodal numeric kernel reads the lower one, its simplicial kernel the upper.
        let (u_col_ptr, u_row_idx, u_scatter) =
            permute_triangle(n, col_ptr, row_idx, &new_of_old, Side::Upper);
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &u_col_ptr, None, &u_row_idx);
        let symbolic =
            factorize_symbolic_cholesky(pattern, Side::Upper, SymmetricOrdering::Identity, params)
                .ok()?;
        let side = match symbolic.raw() {
            faer::sparse::linalg::cholesky::SymbolicCholeskyRaw::Supernodal(_) => Side::Lower,
            faer::sparse::linalg::cholesky::SymbolicCholeskyRaw::Simplicial(_) => Side::Upper,
        };
        let (p_col_ptr, p_row_idx, scatter) = match side {
            Side::Upper => (u_col_ptr, u_row_idx, u_scatter),
            Side::Lower => permute_triangle(n, col_ptr, row_idx, &new_of_old, Side::Lower),
        };
        let par = Par::Seq;
        let factor_mem =
            MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()));
        let solve_mem = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(1, par));
        let l_values = vec![0.0; symbolic.len_val()];
        Some(Factor {
            n,
            values: vec![0.0; p_row_idx.len()],
            pattern: SymbolicSparseColMat::new_checked(n, n, p_col_ptr, None, p_row_idx),
            work: vec![0.0; n],
            scatter,
            side,
            new_of_old,
            old_of_new,
            symbolic,
            l_values,
            factor_mem,
            solve_mem,
            valid: false,
        })
    }

    /// Whether the supernodal kernel was chosen.
    pub fn is_supernodal(&self) -> bool {
        matches!(
            self.symbolic.raw(),
            faer::sparse::linalg::cholesky::SymbolicCholeskyRaw::Supernodal(_)
        )
    }

    /// Numeric LLᵀ factorisation of the matrix with the analysed pattern and these values.
    pub fn numeric(&mut self, values: &[f64]) -> Result<(), NotPositiveDefinite> {
        self.valid = false;
        if values.iter().any(|v| !v.is_finite()) {
            return Err(NotPositiveDefinite);
        }
        for (&v, &to) in values.iter().zip(&self.scatter) {
            self.values[to] = v;
        }
        let a = SparseColMatRef::new(self.pattern.as_ref(), &self.values);
        let r = self.symbolic.factorize_numeric_llt(
            &mut self.l_values,
            a,
            self.side,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut self.factor_mem),
            Default::default(),
        );
        self.valid = r.is_ok();
        r.map(|_| ()).map_err(|_| NotPositiveDefinite)
    }

    /// Solve A x = b in place (b in, x out) with the last successful factorisation.
    pub fn solve_in_place(&mut self, b: &mut [f64]) {
        if !self.valid {
            return;
        }
        for (w, &old) in self.work.iter_mut().zip(&self.old_of_new) {
            *w = b[old];
        }
        let llt = LltRef::new(&self.symbolic, &self.l_values);
        let n = self.n;
        llt.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut self.work, n, 1),
            Par::Seq,
            MemStack::new(&mut self.solve_mem),
        );
        for (x, &new) in b.iter_mut().zip(&self.new_of_old) {
            *x = self.work[new];
        }
    }
}

/// One triangle (`side`) of P A Pᵀ (`new_of_old` maps old to new indices) in compressed
/// columns with sorted rows, and for every entry of the given triangle of A its index
/// there.
fn permute_triangle(
    n: usize,
    col_ptr: &[usize],
    row_idx: &[usize],
    new_of_old: &[usize],
    side: Side,
) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    // (new column, new row, old entry) for every entry, each kept in the lower triangle.
    let mut entries: Vec<(usize, usize, usize)> = Vec::with_capacity(row_idx.len());
    for j in 0..n {
        for (k, &i) in row_idx
            .iter()
            .enumerate()
            .take(col_ptr[j + 1])
            .skip(col_ptr[j])
        {
            let (a, b) = (new_of_old[i], new_of_old[j]);
            let (lo, hi) = (a.min(b), a.max(b));
            entries.push(match side {
                Side::Lower => (lo, hi, k),
                Side::Upper => (hi, lo, k),
            });
        }
    }
    entries.sort_unstable();
    let mut p_col_ptr = vec![0; n + 1];
    let mut p_row_idx = Vec::with_capacity(entries.len());
    let mut scatter = vec![0; entries.len()];
    for (at, &(col, row, k)) in entries.iter().enumerate() {
        p_col_ptr[col + 1] += 1;
        p_row_idx.push(row);
        scatter[k] = at;
    }
    for j in 0..n {
        p_col_ptr[j + 1] += p_col_ptr[j];
    }
    (p_col_ptr, p_row_idx, scatter)
}

impl std::fmt::Debug for Factor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Factor")
            .field("n", &self.n)
            .field("nnz", &self.pattern.row_idx().len())
            .field("supernodal", &self.is_supernodal())
            .field("valid", &self.valid)
            .finish()
    }
}
