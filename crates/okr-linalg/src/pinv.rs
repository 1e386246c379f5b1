//! Moore–Penrose pseudo-inverse with a relative tolerance,
//! $A^+ = V_r \operatorname{diag}(s_r)^{-1} U_r^\top$ over the singular values
//! $s_j > \mathrm{rtol} \cdot s_0$.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef};

use crate::Result;
use crate::svd::{ThinSvd, thin_svd};

impl ThinSvd {
    /// Pseudo-inverse (`n x m`) of the decomposed `m x n` matrix, dropping the
    /// singular values $s_j \le \mathrm{rtol} \cdot s_0$; `rtol = None` means
    /// `max(m, n) * f64::EPSILON`. See [`pinv`].
    ///
    /// Useful when the same decomposition serves several tolerances or also
    /// gives the rank.
    ///
    /// # Panics
    /// If `rtol` is negative or NaN.
    ///
    /// # Example
    /// ```
    /// use faer::mat;
    /// let svd = okr_linalg::thin_svd(mat![[2.0, 0.0], [0.0, 1e-9]].as_ref())?;
    /// let p = svd.pinv(Some(1e-6)); // drops 1e-9
    /// assert!((p[(0, 0)] - 0.5).abs() < 1e-15 && p[(1, 1)] == 0.0);
    /// let p = svd.pinv(None); // keeps it
    /// assert!((p[(1, 1)] - 1e9).abs() < 1e-3);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    #[track_caller]
    pub fn pinv(&self, rtol: Option<f64>) -> Mat<f64> {
        let (m, n) = self.shape();
        let r = self.rank(rtol);
        let u = self.u().subcols(0, r);
        // V_r diag(1/s_r), then one GEMM with U_r^T.
        let vs = Mat::from_fn(n, r, |i, j| self.v()[(i, j)] / self.s()[j]);
        let mut out = Mat::<f64>::zeros(n, m);
        matmul(out.as_mut(), Accum::Replace, vs.as_ref(), u.transpose(), 1.0, faer::get_global_parallelism());
        out
    }
}

/// Moore–Penrose pseudo-inverse $A^+$ (`n x m`) of the `m x n` matrix `a`.
///
/// Computed from the thin SVD $A = U \operatorname{diag}(s) V^\top$ as
/// $A^+ = \sum_{j : s_j > \mathrm{rtol} \cdot s_0} s_j^{-1} v_j u_j^\top$: singular
/// values at or below `rtol` times the largest one are treated as zero.
///
/// The default `rtol = None` is `max(m, n) * f64::EPSILON`: the convention of
/// `numpy.linalg.pinv(a, rtol=None)` (numpy >= 2.0, the array-API default),
/// `numpy.linalg.matrix_rank` and `scipy.linalg.pinv` (scikit-learn's choice).
/// Note that plain `numpy.linalg.pinv(a)` still uses a fixed `rcond = 1e-15`
/// (about `4.5 * f64::EPSILON`, so it keeps more singular values than ours once
/// `max(m, n) >= 5`); pass `Some(1e-15)` to match it. Kept singular values are those strictly above the cutoff, as in numpy.
/// For a kernel matrix that is rank deficient in exact arithmetic, pass a
/// larger `rtol` (e.g. `1e-10`) so that rounding-level singular values
/// (about $\epsilon \, s_0$ each) are dropped for sure.
///
/// The result satisfies $A A^+ A = A$ up to the dropped singular values:
/// $\lVert A A^+ A - A \rVert_2 \le \mathrm{rtol} \cdot s_0$ plus rounding.
/// Prefer a solve ([`Cholesky`](crate::Cholesky)) when $A$ is square and
/// well-conditioned.
///
/// # Errors
/// As [`thin_svd`]: [`Error::NonFinite`](crate::Error::NonFinite) and
/// [`Error::NoConvergence`](crate::Error::NoConvergence).
///
/// # Panics
/// If `rtol` is negative or NaN.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_linalg::pinv;
/// // Rank-one 3 x 2 matrix x y^T: pinv = y x^T / (|x|^2 |y|^2).
/// let a = Mat::from_fn(3, 2, |i, j| ((i + 1) * (j + 1)) as f64);
/// let p = pinv(a.as_ref(), None)?;
/// assert_eq!(p.shape(), (2, 3));
/// assert!((&a * &p * &a - &a).norm_max() < 1e-12);
/// assert!((p[(1, 2)] - 6.0 / (14.0 * 5.0)).abs() < 1e-14);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[track_caller]
pub fn pinv(a: MatRef<'_, f64>, rtol: Option<f64>) -> Result<Mat<f64>> {
    if let Some(rtol) = rtol {
        assert!(rtol >= 0.0, "pinv needs rtol >= 0, got {rtol}");
    }
    Ok(thin_svd(a)?.pinv(rtol))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use faer::Par;

    #[test]
    fn penrose_conditions() {
        faer::set_global_parallelism(Par::Seq);
        for (m, n) in [(1, 1), (3, 3), (5, 2), (2, 5), (9, 9), (30, 11)] {
            let a = Mat::from_fn(m, n, |i, j| ((2 * i + 5 * j + 1) as f64).sin());
            let p = pinv(a.as_ref(), None).unwrap();
            assert_eq!(p.shape(), (n, m));
            let tol = 1e-10;
            assert!((&a * &p * &a - &a).norm_max() < tol);
            assert!((&p * &a * &p - &p).norm_max() < tol * p.norm_max().max(1.0));
            let ap = &a * &p;
            assert!((&ap - ap.transpose()).norm_max() < tol);
            let pa = &p * &a;
            assert!((&pa - pa.transpose()).norm_max() < tol);
        }
    }

    #[test]
    fn zero_and_empty() {
        assert_eq!(pinv(Mat::<f64>::zeros(3, 2).as_ref(), None).unwrap(), Mat::<f64>::zeros(2, 3));
        assert_eq!(pinv(Mat::<f64>::zeros(0, 4).as_ref(), None).unwrap().shape(), (4, 0));
    }

    #[test]
    fn tolerance_drops_small_singular_values() {
        let a = Mat::from_fn(3, 3, |i, j| if i == j { [1.0, 1e-3, 1e-12][i] } else { 0.0 });
        let p = pinv(a.as_ref(), None).unwrap();
        assert!((p[(2, 2)] - 1e12).abs() < 1e-2);
        let p = pinv(a.as_ref(), Some(1e-6)).unwrap();
        assert_eq!(p[(2, 2)], 0.0);
        assert!((p[(1, 1)] - 1e3).abs() < 1e-9);
        let p = pinv(a.as_ref(), Some(1e-2)).unwrap();
        assert_eq!((p[(1, 1)], p[(2, 2)]), (0.0, 0.0));
    }

    #[test]
    fn non_finite_is_rejected() {
        let mut a = Mat::<f64>::identity(2, 2);
        a[(1, 0)] = f64::NEG_INFINITY;
        assert!(matches!(pinv(a.as_ref(), None), Err(Error::NonFinite { .. })));
    }

    #[test]
    #[should_panic(expected = "rtol")]
    fn negative_rtol_panics() {
        let _ = pinv(Mat::<f64>::identity(2, 2).as_ref(), Some(-1.0));
    }
}
