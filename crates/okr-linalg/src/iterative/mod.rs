//! Iterative solvers on matrix-free operators.
//!
//! An operator is anything that computes $y = A x$ for a square $A$
//! ([`LinearOperator`]): a dense matrix, a kernel matrix plus ridge applied
//! in blocks, or the Hessian-vector product of a LEML/TRON objective. On top
//! of it:
//!
//! - [`conjugate_gradient`] (and [`preconditioned_conjugate_gradient`],
//!   [`conjugate_gradient_in_place`]): solves $A x = b$ for a symmetric
//!   positive definite $A$ up to a relative residual
//!   $\lVert b - A x \rVert_2 \le \mathrm{tol} \, \lVert b \rVert_2$;
//! - [`Jacobi`]: the diagonal preconditioner $M^{-1} = \operatorname{diag}(A)^{-1}$;
//! - [`tron`]: trust-region Newton with Steihaug CG (LIBLINEAR's TRON) for a
//!   smooth convex [`TronObjective`] given by value, gradient and
//!   Hessian-vector product.
//!
//! okr does not use faer's `matrix_free::conjugate_gradient`: in faer 0.24.4
//! its `InitialGuessStatus::Zero` path leaves the residual uninitialised.

mod cg;
mod jacobi;
mod tron;

pub use cg::{CgInfo, CgParams, conjugate_gradient, conjugate_gradient_in_place, preconditioned_conjugate_gradient};
pub use jacobi::Jacobi;
pub use tron::{TronInfo, TronObjective, TronParams, tron};

use faer::linalg::matmul::matmul;
use faer::{Accum, ColMut, ColRef, Mat, MatRef};

/// A square linear operator $x \mapsto A x$ on $\mathbb{R}^n$, given only
/// through its action on vectors.
///
/// Implemented for dense matrices ([`MatRef`], [`Mat`]), for references to any
/// operator, and by [`Jacobi`]. Implement it for structured operators (a
/// Gram matrix plus ridge, a Hessian-vector product) to use them with
/// [`conjugate_gradient`]. The trait is dyn-compatible.
///
/// # Example
/// A diagonal-plus-rank-one operator $A = D + u u^\top$, never formed:
/// ```
/// use faer::{Col, ColMut, ColRef};
/// use okr_linalg::{CgParams, LinearOperator, conjugate_gradient};
///
/// struct DiagPlusRankOne { d: Col<f64>, u: Col<f64> }
///
/// impl LinearOperator for DiagPlusRankOne {
///     fn dim(&self) -> usize { self.d.nrows() }
///     fn apply(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
///         let ux: f64 = (0..self.dim()).map(|i| self.u[i] * x[i]).sum();
///         for i in 0..self.dim() {
///             out[i] = self.d[i] * x[i] + self.u[i] * ux;
///         }
///     }
/// }
///
/// let op = DiagPlusRankOne { d: Col::from_fn(50, |i| 1.0 + i as f64), u: Col::from_fn(50, |i| (i as f64).cos()) };
/// let b = Col::from_fn(50, |i| (i % 3) as f64);
/// let (x, info) = conjugate_gradient(&op, b.as_ref(), None, CgParams::default())?;
/// let mut ax = Col::zeros(50);
/// op.apply(x.as_ref(), ax.as_mut());
/// assert!((&ax - &b).norm_l2() <= 1e-10 * b.norm_l2() * 1.0001);
/// assert!(info.iterations <= 50);
/// Ok::<(), okr_linalg::Error>(())
/// ```
pub trait LinearOperator {
    /// Dimension $n$: the operator maps $\mathbb{R}^n \to \mathbb{R}^n$.
    fn dim(&self) -> usize;

    /// Writes $A x$ into `out`, overwriting it. Both have length [`dim`](Self::dim).
    fn apply(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>);
}

impl<T: LinearOperator + ?Sized> LinearOperator for &T {
    fn dim(&self) -> usize {
        (**self).dim()
    }

    fn apply(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        (**self).apply(x, out)
    }
}

/// A dense square matrix as an operator; `apply` is a GEMV run with faer's
/// global parallelism.
///
/// # Panics
/// `dim` and `apply` panic if the matrix is not square.
impl LinearOperator for MatRef<'_, f64> {
    #[track_caller]
    fn dim(&self) -> usize {
        assert_eq!(self.nrows(), self.ncols(), "a matrix operator must be square");
        self.nrows()
    }

    #[track_caller]
    fn apply(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        assert_eq!(self.nrows(), self.ncols(), "a matrix operator must be square");
        matmul(out.as_mat_mut(), Accum::Replace, *self, x.as_mat(), 1.0, faer::get_global_parallelism());
    }
}

/// As for [`MatRef`].
impl LinearOperator for Mat<f64> {
    #[track_caller]
    fn dim(&self) -> usize {
        self.as_ref().dim()
    }

    #[track_caller]
    fn apply(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.as_ref().apply(x, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Col;

    #[test]
    fn dense_operator_matches_product() {
        let a = Mat::from_fn(4, 4, |i, j| (i * 4 + j) as f64);
        let x = Col::from_fn(4, |i| 1.0 - i as f64);
        let mut y = Col::from_fn(4, |_| f64::NAN); // overwritten, not accumulated
        a.apply(x.as_ref(), y.as_mut());
        assert_eq!(y, &a * &x);
        let dyn_op: &dyn LinearOperator = &a;
        assert_eq!((&dyn_op).dim(), 4);
    }

    #[test]
    #[should_panic(expected = "square")]
    fn rectangular_operator_panics() {
        let _ = Mat::<f64>::zeros(2, 3).dim();
    }
}
