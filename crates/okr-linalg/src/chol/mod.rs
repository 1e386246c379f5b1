//! Cholesky factorization $A = L L^\top$ of a symmetric positive definite
//! matrix, with a jitter retry, and solves with the factor.
//!
//! Kernel ridge systems $K + n\lambda I$ are positive definite in exact
//! arithmetic but can fail to factor in floating point when $\lambda$ is tiny
//! and $K$ is numerically rank deficient (duplicated inputs). [`Cholesky::factor`]
//! then retries with $A + \epsilon I$, $\epsilon$ starting at
//! `initial_jitter * mean(diag A)` and growing tenfold, and records the jitter
//! used in [`SolveInfo`]. When every attempt fails it returns
//! [`Error::NotPsd`](crate::Error::NotPsd) naming the caller's `lambda`.

mod factor;
mod solve;

pub use factor::{Cholesky, JitterPolicy, SolveInfo};
