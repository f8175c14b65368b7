//! faer's sparse Cholesky behind a small interface: symbolic analysis (AMD ordering)
//! once per pattern, numeric LLᵀ per step into persistent buffers, and in-place solves
//! that reuse one factor (001 §7).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, LltRef, SymbolicCholesky, SymmetricOrdering,
    factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

/// Which factorisation kernel to use.
///
/// Measured on the benchmark machine (see README, `cargo bench --bench kernels`):
/// simplicial wins on small grids, supernodal from about 40×40 (≈ 3000 rows) up. `Auto`
/// applies that threshold; `Faer` leaves the choice to faer's flop-ratio heuristic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SupernodalChoice {
    /// Supernodal from [`SUPERNODAL_MIN_ROWS`] rows up, simplicial below.
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
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    factor_mem: MemBuffer,
    solve_mem: MemBuffer,
    valid: bool,
}

impl Factor {
    /// Symbolic analysis of the lower-triangle pattern (`col_ptr`, `row_idx`) of an n×n
    /// matrix. `None` if faer rejects it (out of memory).
    pub fn symbolic(
        n: usize,
        col_ptr: &[usize],
        row_idx: &[usize],
        choice: SupernodalChoice,
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
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, row_idx);
        let symbolic = factorize_symbolic_cholesky(
            pattern,
            Side::Lower,
            SymmetricOrdering::Amd,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: threshold,
                ..Default::default()
            },
        )
        .ok()?;
        let par = Par::Seq;
        let factor_mem =
            MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()));
        let solve_mem = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(1, par));
        let l_values = vec![0.0; symbolic.len_val()];
        Some(Factor {
            n,
            col_ptr: col_ptr.to_vec(),
            row_idx: row_idx.to_vec(),
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
        let pattern = SymbolicSparseColMatRef::new_checked(
            self.n,
            self.n,
            &self.col_ptr,
            None,
            &self.row_idx,
        );
        let a = SparseColMatRef::new(pattern, values);
        let r = self.symbolic.factorize_numeric_llt(
            &mut self.l_values,
            a,
            Side::Lower,
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
        let llt = LltRef::new(&self.symbolic, &self.l_values);
        let n = self.n;
        llt.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(b, n, 1),
            Par::Seq,
            MemStack::new(&mut self.solve_mem),
        );
    }
}

impl std::fmt::Debug for Factor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Factor")
            .field("n", &self.n)
            .field("nnz", &self.row_idx.len())
            .field("supernodal", &self.is_supernodal())
            .field("valid", &self.valid)
            .finish()
    }
}
