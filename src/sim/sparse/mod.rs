//! The sparse machinery shared by the direct solvers (the SLE, Newton and the strain-limit
//! solver): the pattern of a constraint-space matrix (`pattern`), the geometric
//! nested-dissection order of a grid cloth (`dissection`) and faer's sparse Cholesky
//! behind a small interface (`factor`).

pub(crate) mod dissection;
pub(crate) mod factor;
pub(crate) mod pattern;

pub use dissection::FillOrdering;
pub use factor::SupernodalChoice;
