//! Thin singular value decomposition $A = U \operatorname{diag}(s) V^\top$ of
//! an `m x n` matrix, `k = min(m, n)` singular values, non-increasing.

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::svd::{ComputeSvdVectors, svd, svd_scratch};
use faer::{Mat, MatRef};

use crate::{Error, Result};

/// Thin SVD $A = U \operatorname{diag}(s) V^\top$ of an `m x n` matrix, with
/// `k = min(m, n)`: $U$ is `m x k`, $V$ is `n x k`, both with orthonormal
/// columns, and $s_0 \ge s_1 \ge \dots \ge s_{k-1} \ge 0$.
///
/// # Example
/// ```
/// use faer::{Mat, mat};
/// use okr_linalg::thin_svd;
/// let a = mat![[3.0, 0.0, 0.0], [0.0, 0.0, -4.0]]; // 2 x 3
/// let svd = thin_svd(a.as_ref())?;
/// assert_eq!((svd.u().shape(), svd.v().shape()), ((2, 2), (3, 2)));
/// assert!((svd.s()[0] - 4.0).abs() < 1e-12 && (svd.s()[1] - 3.0).abs() < 1e-12);
/// let us = Mat::from_fn(2, 2, |i, j| svd.u()[(i, j)] * svd.s()[j]);
/// assert!((&us * svd.v().transpose() - &a).norm_max() < 1e-12);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ThinSvd {
    u: Mat<f64>,
    s: Vec<f64>,
    v: Mat<f64>,
}

impl ThinSvd {
    /// Left singular vectors $U$ (`m x k`, orthonormal columns).
    ///
    /// # Example
    /// ```
    /// let svd = okr_linalg::thin_svd(faer::Mat::<f64>::identity(4, 2).as_ref())?;
    /// assert_eq!(svd.u().shape(), (4, 2));
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn u(&self) -> MatRef<'_, f64> {
        self.u.as_ref()
    }

    /// Singular values $s$ (length `k = min(m, n)`), non-negative and
    /// non-increasing.
    ///
    /// # Example
    /// ```
    /// use faer::mat;
    /// let svd = okr_linalg::thin_svd(mat![[0.0, 1.0], [2.0, 0.0]].as_ref())?;
    /// assert!((svd.s()[0] - 2.0).abs() < 1e-15 && (svd.s()[1] - 1.0).abs() < 1e-15);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn s(&self) -> &[f64] {
        &self.s
    }

    /// Right singular vectors $V$ (`n x k`, orthonormal columns).
    ///
    /// # Example
    /// ```
    /// let svd = okr_linalg::thin_svd(faer::Mat::<f64>::identity(2, 5).as_ref())?;
    /// assert_eq!(svd.v().shape(), (5, 2));
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn v(&self) -> MatRef<'_, f64> {
        self.v.as_ref()
    }

    /// Shape `(m, n)` of the decomposed matrix.
    ///
    /// # Example
    /// ```
    /// let svd = okr_linalg::thin_svd(faer::Mat::<f64>::zeros(3, 7).as_ref())?;
    /// assert_eq!(svd.shape(), (3, 7));
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn shape(&self) -> (usize, usize) {
        (self.u.nrows(), self.v.nrows())
    }

    /// Consumes the decomposition, returning `(u, s, v)`.
    ///
    /// # Example
    /// ```
    /// let svd = okr_linalg::thin_svd(faer::Mat::<f64>::identity(3, 3).as_ref())?;
    /// let (u, s, v) = svd.into_parts();
    /// assert_eq!((u.ncols(), s.len(), v.ncols()), (3, 3, 3));
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn into_parts(self) -> (Mat<f64>, Vec<f64>, Mat<f64>) {
        (self.u, self.s, self.v)
    }

    /// Number of singular values $s_j > \mathrm{rtol} \cdot s_0$.
    ///
    /// `rtol = None` uses `max(m, n) * f64::EPSILON`, numpy's `matrix_rank`
    /// and `pinv` convention (see [`pinv`](crate::pinv())).
    ///
    /// # Panics
    /// If `rtol` is negative or NaN.
    ///
    /// # Example
    /// ```
    /// use faer::Mat;
    /// // Rank-one 3 x 4 matrix.
    /// let a = Mat::from_fn(3, 4, |i, j| ((i + 1) * (j + 1)) as f64);
    /// let svd = okr_linalg::thin_svd(a.as_ref())?;
    /// assert_eq!(svd.rank(None), 1);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    #[track_caller]
    pub fn rank(&self, rtol: Option<f64>) -> usize {
        let (m, n) = self.shape();
        let cutoff = cutoff(&self.s, m, n, rtol);
        self.s.partition_point(|&s| s > cutoff)
    }
}

/// Absolute cutoff `rtol * s_max` (default `rtol = max(m, n) * eps`).
#[track_caller]
pub(crate) fn cutoff(s: &[f64], m: usize, n: usize, rtol: Option<f64>) -> f64 {
    let rtol = rtol.unwrap_or(m.max(n) as f64 * f64::EPSILON);
    assert!(rtol >= 0.0, "rtol must be >= 0, got {rtol}");
    rtol * s.first().copied().unwrap_or(0.0)
}

/// Thin SVD of the `m x n` matrix `a`, for any shape (`m < n`, `m = n`, `m > n`,
/// and empty).
///
/// Runs with faer's global parallelism ([`faer::get_global_parallelism`]).
/// Tall matrices ($m \gg n$) are reduced by a QR factorization first, so the
/// cost is about $O(m n^2)$ for tall and $O(m^2 n)$ for wide inputs.
///
/// # Errors
/// - [`Error::NonFinite`] if `a` holds NaN or infinity;
/// - [`Error::NoConvergence`] if faer's bidiagonal SVD does not converge.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_linalg::thin_svd;
/// let a = Mat::from_fn(5, 3, |i, j| (i as f64 - j as f64).sin());
/// let svd = thin_svd(a.as_ref())?;
/// let us = Mat::from_fn(5, 3, |i, j| svd.u()[(i, j)] * svd.s()[j]);
/// assert!((&us * svd.v().transpose() - &a).norm_max() < 1e-12);
/// assert!(svd.s().windows(2).all(|w| w[0] >= w[1]));
/// Ok::<(), okr_linalg::Error>(())
/// ```
pub fn thin_svd(a: MatRef<'_, f64>) -> Result<ThinSvd> {
    let (m, n) = a.shape();
    for j in 0..n {
        if a.col(j).iter().any(|x| !x.is_finite()) {
            return Err(Error::NonFinite { what: "matrix to decompose (svd)" });
        }
    }
    let k = m.min(n);
    let par = faer::get_global_parallelism();
    let mut s = Diag::<f64>::zeros(k);
    let mut u = Mat::<f64>::zeros(m, k);
    let mut v = Mat::<f64>::zeros(n, k);
    let scratch = svd_scratch::<f64>(m, n, ComputeSvdVectors::Thin, ComputeSvdVectors::Thin, par, Default::default());
    svd(
        a,
        s.as_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        par,
        MemStack::new(&mut MemBuffer::new(scratch)),
        Default::default(),
    )
    .map_err(|_| Error::NoConvergence {
        what: "singular value decomposition",
        iterations: 0,
        residual: f64::NAN,
    })?;
    Ok(ThinSvd { u, s: s.column_vector().iter().copied().collect(), v })
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Par;

    fn check(a: &Mat<f64>) {
        let (m, n) = a.shape();
        let k = m.min(n);
        let svd = thin_svd(a.as_ref()).unwrap();
        assert_eq!(svd.shape(), (m, n));
        assert_eq!((svd.u().shape(), svd.s().len(), svd.v().shape()), ((m, k), k, (n, k)));
        assert!(svd.s().windows(2).all(|w| w[0] >= w[1]));
        assert!(svd.s().iter().all(|&s| s >= 0.0));
        let us = Mat::from_fn(m, k, |i, j| svd.u()[(i, j)] * svd.s()[j]);
        let rec = &us * svd.v().transpose();
        let tol = 1e2 * (m.max(n).max(1) as f64) * f64::EPSILON * a.norm_max().max(1.0);
        assert!((&rec - a).norm_max() <= tol, "{m} x {n}");
        let eye = Mat::<f64>::identity(k, k);
        assert!((svd.u().transpose() * svd.u() - &eye).norm_max() <= tol);
        assert!((svd.v().transpose() * svd.v() - &eye).norm_max() <= tol);
    }

    #[test]
    fn all_shapes() {
        faer::set_global_parallelism(Par::Seq);
        for (m, n) in [(0, 0), (0, 3), (3, 0), (1, 1), (1, 5), (5, 1), (4, 4), (7, 3), (3, 7), (40, 6), (6, 40)] {
            check(&Mat::from_fn(m, n, |i, j| ((3 * i + 7 * j) as f64).cos()));
        }
    }

    #[test]
    fn rank_deficient() {
        faer::set_global_parallelism(Par::Seq);
        let a = Mat::from_fn(6, 4, |i, j| ((i + 1) * (j + 2)) as f64 + (i * j % 2) as f64);
        check(&a);
        let svd = thin_svd(a.as_ref()).unwrap();
        assert_eq!(svd.rank(None), 2);
        assert_eq!(svd.rank(Some(1.0)), 0);
        assert_eq!(thin_svd(Mat::<f64>::zeros(3, 2).as_ref()).unwrap().rank(None), 0);
    }

    #[test]
    fn non_finite_is_rejected() {
        let mut a = Mat::<f64>::identity(3, 2);
        a[(0, 1)] = f64::NAN;
        assert!(matches!(thin_svd(a.as_ref()), Err(Error::NonFinite { .. })));
    }
}
