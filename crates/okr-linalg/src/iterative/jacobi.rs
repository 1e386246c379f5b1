use faer::{Col, ColMut, ColRef, MatRef};

use super::LinearOperator;
use crate::{Error, Result};

/// Jacobi (diagonal) preconditioner $M^{-1} = \operatorname{diag}(d)^{-1}$,
/// applied as $x \mapsto (x_i / d_i)_i$.
///
/// For an SPD matrix $A$, `d = diag(A)` is positive. It helps when the rows of
/// $A$ have very different scales (features of different magnitudes, a
/// Hessian $X^\top D X + \lambda I$ with a skewed $D$); it costs one
/// division per entry and iteration. Pass it to
/// [`preconditioned_conjugate_gradient`](crate::preconditioned_conjugate_gradient).
///
/// # Example
/// ```
/// use faer::{Col, Mat};
/// use okr_linalg::{CgParams, Jacobi, conjugate_gradient, preconditioned_conjugate_gradient};
/// // Badly scaled SPD matrix: S (I + 0.1 * ones) S with S = diag(10^k).
/// let n = 30;
/// let s = |i: usize| 10f64.powi((i % 3) as i32);
/// let a = Mat::from_fn(n, n, |i, j| s(i) * s(j) * (if i == j { 1.0 } else { 0.1 }));
/// let b = Col::from_fn(n, |i| 1.0 + i as f64);
/// let jacobi = Jacobi::from_matrix(a.as_ref())?;
/// let params = CgParams::default().tol(1e-8);
/// let (_, plain) = conjugate_gradient(&a, b.as_ref(), None, params.max_iter(10_000))?;
/// let (x, pre) = preconditioned_conjugate_gradient(&a, &jacobi, b.as_ref(), None, params)?;
/// assert!(pre.iterations < plain.iterations);
/// assert!((&a * &x - &b).norm_l2() <= 1e-8 * b.norm_l2());
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Jacobi {
    inv_diag: Col<f64>,
}

impl Jacobi {
    /// The preconditioner $\operatorname{diag}(d)^{-1}$ for the given diagonal `d`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a NaN or infinite entry,
    /// [`Error::NotPositiveDefinite`] for an entry $d_i \le 0$.
    ///
    /// # Example
    /// ```
    /// use faer::Col;
    /// use okr_linalg::Jacobi;
    /// let m = Jacobi::new(Col::from_fn(3, |i| (i + 1) as f64).as_ref())?;
    /// assert_eq!(m.inverse_diagonal()[2], 1.0 / 3.0);
    /// assert!(Jacobi::new(Col::from_fn(2, |i| i as f64).as_ref()).is_err()); // d_0 = 0
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn new(d: ColRef<'_, f64>) -> Result<Self> {
        let mut inv_diag = Col::zeros(d.nrows());
        for (i, &di) in d.iter().enumerate() {
            if !di.is_finite() {
                return Err(Error::NonFinite { what: "Jacobi preconditioner diagonal" });
            }
            if di <= 0.0 {
                return Err(Error::NotPositiveDefinite { what: "Jacobi preconditioner diagonal", value: di });
            }
            inv_diag[i] = 1.0 / di;
        }
        Ok(Self { inv_diag })
    }

    /// The preconditioner built from the diagonal of the square matrix `a`.
    ///
    /// # Errors
    /// As [`Jacobi::new`].
    ///
    /// # Panics
    /// If `a` is not square.
    ///
    /// # Example
    /// ```
    /// use faer::mat;
    /// let m = okr_linalg::Jacobi::from_matrix(mat![[4.0, 1.0], [1.0, 2.0]].as_ref())?;
    /// assert_eq!(m.inverse_diagonal()[0], 0.25);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    #[track_caller]
    pub fn from_matrix(a: MatRef<'_, f64>) -> Result<Self> {
        assert_eq!(a.nrows(), a.ncols(), "Jacobi::from_matrix needs a square matrix");
        Self::new(a.diagonal().column_vector())
    }

    /// The entries $1 / d_i$ applied by the preconditioner.
    ///
    /// # Example
    /// ```
    /// let m = okr_linalg::Jacobi::new(faer::Col::from_fn(2, |_| 2.0).as_ref())?;
    /// assert_eq!(m.inverse_diagonal().nrows(), 2);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn inverse_diagonal(&self) -> ColRef<'_, f64> {
        self.inv_diag.as_ref()
    }
}

impl LinearOperator for Jacobi {
    fn dim(&self) -> usize {
        self.inv_diag.nrows()
    }

    #[track_caller]
    fn apply(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        faer::zip!(out, x, self.inv_diag.as_ref()).for_each(|faer::unzip!(o, x, d)| *o = *x * *d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_diagonals() {
        let nan = Col::from_fn(2, |i| if i == 1 { f64::NAN } else { 1.0 });
        assert!(matches!(Jacobi::new(nan.as_ref()), Err(Error::NonFinite { .. })));
        let neg = Col::from_fn(2, |i| if i == 1 { -3.0 } else { 1.0 });
        assert!(matches!(Jacobi::new(neg.as_ref()), Err(Error::NotPositiveDefinite { value, .. }) if value == -3.0));
    }

    #[test]
    fn applies_inverse_diagonal() {
        let m = Jacobi::new(Col::from_fn(3, |i| [2.0, 4.0, 0.5][i]).as_ref()).unwrap();
        let mut y = Col::zeros(3);
        m.apply(Col::from_fn(3, |_| 1.0).as_ref(), y.as_mut());
        assert_eq!(y, Col::from_fn(3, |i| [0.5, 0.25, 2.0][i]));
    }
}
