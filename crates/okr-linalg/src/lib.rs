//! Dense linear algebra for okr, on top of [faer].
//!
//! Every O(n^3) step of okr's estimators goes through this crate:
//!
//! - [`chol`]: Cholesky factorization $A = L L^\top$ with a jitter retry
//!   ($A + \epsilon I$, $\epsilon$ growing tenfold) and a clear error naming the
//!   ridge `lambda` when the matrix still does not factor;
//! - [`eigh`](mod@eigh): self-adjoint eigendecomposition
//!   $A = V \operatorname{diag}(w) V^\top$, eigenvalues **descending**, with
//!   [`SelfAdjointEigen::numerical_rank`];
//! - [`svd`]: thin SVD $A = U \operatorname{diag}(s) V^\top$ of any shape,
//!   singular values non-increasing;
//! - [`pinv`](mod@pinv): pseudo-inverse $A^+$ dropping singular values
//!   $s_j \le \mathrm{rtol} \cdot s_0$ (default `rtol = max(m, n) * eps`);
//! - [`iterative`]: the matrix-free [`LinearOperator`] trait, conjugate gradient
//!   for SPD systems (with an optional [`Jacobi`] preconditioner) and
//!   trust-region Newton ([`tron`]) for smooth convex objectives;
//! - [`serde_mat`]: a serde representation of faer matrices (faer has none);
//! - [`profile`]: wall / CPU seconds and flops per named phase of a long
//!   computation, collected on request (`cargo xtask bench --scale`);
//! - [`threads`]: the thread count okr starts for a request (capped at the
//!   cores), shared by the CLI and the Python package.
//!
//! Shapes are checked with `#[track_caller]` assertions (programmer contracts);
//! numerical failures are returned as [`Error`]. The decompositions run with
//! faer's global parallelism ([`faer::set_global_parallelism`]).
#![warn(missing_docs)]

pub mod chol;
pub mod eigh;
mod error;
pub mod iterative;
pub mod pinv;
pub mod products;
pub mod profile;
pub mod serde_mat;
pub mod svd;
pub mod threads;

pub use chol::{Cholesky, JitterPolicy, SolveInfo};
pub use eigh::{SelfAdjointEigen, eigh};
pub use error::{Error, Result};
pub use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef, Par};
pub use iterative::{
    CgInfo, CgParams, Jacobi, LinearOperator, TronInfo, TronObjective, TronParams, conjugate_gradient,
    conjugate_gradient_in_place, preconditioned_conjugate_gradient, tron,
};
pub use pinv::pinv;
pub use products::crossprod;
pub use svd::{ThinSvd, thin_svd};

/// The crate README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
