//! Dense linear algebra for okr, on top of [faer].
//!
//! Every O(n^3) step of okr's estimators goes through this crate:
//!
//! - [`chol`]: Cholesky factorization $A = L L^\top$ with a jitter retry
//!   ($A + \epsilon I$, $\epsilon$ growing tenfold) and a clear error naming the
//!   ridge `lambda` when the matrix still does not factor;
//! - [`serde_mat`]: a serde representation of faer matrices (faer has none).
//!
//! Shapes are checked with `#[track_caller]` assertions (programmer contracts);
//! numerical failures are returned as [`Error`].
#![warn(missing_docs)]

pub mod chol;
mod error;
pub mod serde_mat;

pub use chol::{Cholesky, JitterPolicy, SolveInfo};
pub use error::{Error, Result};
pub use faer::{Mat, MatMut, MatRef, Par};
