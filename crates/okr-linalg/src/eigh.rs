//! Self-adjoint eigendecomposition $A = V \operatorname{diag}(w) V^\top$ with
//! eigenvalues sorted in **descending** order.
//!
//! faer returns eigenvalues in ascending order; okr's estimators (reduced-rank
//! IOKR, kernel PCA, trace-norm) keep the leading eigenpairs, so [`eigh`]
//! reverses faer's order once and every caller can take the first `r` columns.

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{ComputeEigenvectors, self_adjoint_evd, self_adjoint_evd_scratch};
use faer::{Mat, MatRef};

use crate::{Error, Result};

/// Eigendecomposition $A = V \operatorname{diag}(w) V^\top$ of a symmetric
/// matrix, eigenvalues $w_0 \ge w_1 \ge \dots \ge w_{n-1}$ (descending).
///
/// Column `j` of [`vectors`](Self::vectors) is a unit eigenvector for
/// `values()[j]`; the columns are orthonormal.
///
/// # Example
/// ```
/// use faer::{Mat, mat};
/// use okr_linalg::eigh;
/// let a = mat![[2.0, 1.0], [1.0, 2.0]];
/// let e = eigh(a.as_ref())?;
/// assert!((e.values()[0] - 3.0).abs() < 1e-12 && (e.values()[1] - 1.0).abs() < 1e-12);
/// let v = e.vectors();
/// let w = Mat::from_fn(2, 2, |i, j| if i == j { e.values()[i] } else { 0.0 });
/// assert!((v * &w * v.transpose() - &a).norm_max() < 1e-12);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SelfAdjointEigen {
    values: Vec<f64>,
    vectors: Mat<f64>,
}

impl SelfAdjointEigen {
    /// Eigenvalues $w$, in descending order.
    ///
    /// # Example
    /// ```
    /// use faer::mat;
    /// let e = okr_linalg::eigh(mat![[1.0, 0.0], [0.0, 5.0]].as_ref())?;
    /// assert_eq!(e.values(), &[5.0, 1.0]);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Eigenvectors $V$ (`n x n`, orthonormal columns), column `j` belonging
    /// to `values()[j]`.
    ///
    /// # Example
    /// ```
    /// use faer::mat;
    /// let e = okr_linalg::eigh(mat![[1.0, 0.0], [0.0, 5.0]].as_ref())?;
    /// // The leading eigenvector is +-e_1.
    /// assert_eq!(e.vectors()[(1, 0)].abs(), 1.0);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn vectors(&self) -> faer::MatRef<'_, f64> {
        self.vectors.as_ref()
    }

    /// Dimension `n` of the decomposed `n x n` matrix.
    ///
    /// # Example
    /// ```
    /// let e = okr_linalg::eigh(faer::Mat::<f64>::identity(3, 3).as_ref())?;
    /// assert_eq!(e.dim(), 3);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn dim(&self) -> usize {
        self.values.len()
    }

    /// Consumes the decomposition, returning `(values, vectors)`.
    ///
    /// # Example
    /// ```
    /// let e = okr_linalg::eigh(faer::Mat::<f64>::identity(2, 2).as_ref())?;
    /// let (w, v) = e.into_parts();
    /// assert_eq!((w.len(), v.ncols()), (2, 2));
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    pub fn into_parts(self) -> (Vec<f64>, Mat<f64>) {
        (self.values, self.vectors)
    }

    /// Number of eigenvalues $w_j > \mathrm{rtol} \cdot w_0$, where $w_0$ is the
    /// largest eigenvalue.
    ///
    /// Meant for positive semi-definite matrices (kernel matrices): negative
    /// eigenvalues never count, and the rank is 0 when $w_0 \le 0$ (or `n = 0`).
    /// A common choice is `rtol = n * f64::EPSILON` (numpy's `matrix_rank`).
    ///
    /// # Panics
    /// If `rtol` is negative or NaN.
    ///
    /// # Example
    /// ```
    /// use faer::mat;
    /// let e = okr_linalg::eigh(mat![[4.0, 0.0], [0.0, 1e-6]].as_ref())?;
    /// assert_eq!(e.numerical_rank(1e-3), 1);
    /// assert_eq!(e.numerical_rank(2.0 * f64::EPSILON), 2);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    #[track_caller]
    pub fn numerical_rank(&self, rtol: f64) -> usize {
        assert!(rtol >= 0.0, "numerical_rank needs rtol >= 0, got {rtol}");
        match self.values.first() {
            Some(&w0) if w0 > 0.0 => {
                let cutoff = rtol * w0;
                // Values are sorted descending: count the leading ones above the cutoff.
                self.values.partition_point(|&w| w > cutoff)
            }
            _ => 0,
        }
    }
}

/// Eigendecomposition of the symmetric matrix `a`, eigenvalues descending.
///
/// Only the lower triangle of `a` is read (the upper triangle may hold
/// anything). Runs with faer's global parallelism
/// ([`faer::get_global_parallelism`]). Costs about $9 n^3$ flops.
///
/// # Errors
/// - [`Error::NonFinite`] if the lower triangle holds NaN or infinity;
/// - [`Error::NoConvergence`] if faer's tridiagonal QR iteration does not converge.
///
/// # Panics
/// If `a` is not square.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_linalg::eigh;
/// // A rank-one PSD matrix x x^T has one nonzero eigenvalue ||x||^2.
/// let x = Mat::from_fn(4, 1, |i, _| i as f64);
/// let a = &x * x.transpose();
/// let e = eigh(a.as_ref())?;
/// assert!((e.values()[0] - 14.0).abs() < 1e-12);
/// assert_eq!(e.numerical_rank(4.0 * f64::EPSILON), 1);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[track_caller]
pub fn eigh(a: MatRef<'_, f64>) -> Result<SelfAdjointEigen> {
    assert_eq!(a.nrows(), a.ncols(), "eigh needs a square matrix, got {} x {}", a.nrows(), a.ncols());
    let n = a.nrows();
    for j in 0..n {
        if a.col(j).subrows(j, n - j).iter().any(|x| !x.is_finite()) {
            return Err(Error::NonFinite { what: "matrix to decompose (eigh)" });
        }
    }
    if n == 0 {
        // faer 0.24.4's self_adjoint_evd_scratch underflows (`n - 1`) for n = 0.
        return Ok(SelfAdjointEigen { values: Vec::new(), vectors: Mat::zeros(0, 0) });
    }
    let par = faer::get_global_parallelism();
    let mut s = Diag::<f64>::zeros(n);
    let mut u = Mat::<f64>::zeros(n, n);
    let scratch = self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::Yes, par, Default::default());
    self_adjoint_evd(
        a,
        s.as_mut(),
        Some(u.as_mut()),
        par,
        MemStack::new(&mut MemBuffer::new(scratch)),
        Default::default(),
    )
    .map_err(|_| Error::NoConvergence {
        what: "self-adjoint eigendecomposition",
        iterations: 0,
        residual: f64::NAN,
    })?;

    // faer sorts ascending; reverse values and columns in place.
    let mut values: Vec<f64> = s.column_vector().iter().copied().collect();
    values.reverse();
    for j in 0..n / 2 {
        faer::perm::swap_cols_idx(u.as_mut(), j, n - 1 - j);
    }
    Ok(SelfAdjointEigen { values, vectors: u })
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Par;

    fn sym(n: usize) -> Mat<f64> {
        // Deterministic symmetric matrix with distinct eigenvalues.
        Mat::from_fn(n, n, |i, j| if i == j { (i + 1) as f64 } else { 1.0 / (1.0 + (i + j) as f64) })
    }

    #[test]
    fn reconstruction_and_order() {
        faer::set_global_parallelism(Par::Seq);
        for n in [0usize, 1, 2, 5, 17, 40] {
            let a = sym(n);
            let e = eigh(a.as_ref()).unwrap();
            assert_eq!(e.dim(), n);
            assert!(e.values().windows(2).all(|w| w[0] >= w[1]), "{:?}", e.values());
            let v = e.vectors();
            let vw = Mat::from_fn(n, n, |i, j| v[(i, j)] * e.values()[j]);
            let rec = &vw * v.transpose();
            let tol = 1e2 * (n.max(1) as f64) * f64::EPSILON * a.norm_max().max(1.0);
            assert!((&rec - &a).norm_max() <= tol, "n = {n}");
            let vtv = v.transpose() * v;
            assert!((&vtv - Mat::<f64>::identity(n, n)).norm_max() <= tol, "n = {n}");
        }
    }

    #[test]
    fn reads_lower_triangle_only() {
        faer::set_global_parallelism(Par::Seq);
        let a = sym(6);
        let mut garbage = a.clone();
        for j in 1..6 {
            for i in 0..j {
                garbage[(i, j)] = f64::NAN;
            }
        }
        let e1 = eigh(a.as_ref()).unwrap();
        let e2 = eigh(garbage.as_ref()).unwrap();
        assert_eq!(e1.values(), e2.values());
    }

    #[test]
    fn non_finite_is_rejected() {
        let mut a = sym(3);
        a[(2, 0)] = f64::INFINITY;
        assert!(matches!(eigh(a.as_ref()), Err(Error::NonFinite { .. })));
        a[(2, 0)] = f64::NAN;
        assert!(matches!(eigh(a.as_ref()), Err(Error::NonFinite { .. })));
    }

    #[test]
    fn numerical_rank_counts_above_cutoff() {
        let e = SelfAdjointEigen { values: vec![10.0, 1.0, 1e-3, 0.0, -5.0], vectors: Mat::zeros(5, 5) };
        assert_eq!(e.numerical_rank(0.0), 3);
        assert_eq!(e.numerical_rank(1e-5), 3);
        assert_eq!(e.numerical_rank(1e-3), 2);
        assert_eq!(e.numerical_rank(1.0), 0);
        let neg = SelfAdjointEigen { values: vec![-1.0, -2.0], vectors: Mat::zeros(2, 2) };
        assert_eq!(neg.numerical_rank(0.0), 0);
        let empty = SelfAdjointEigen { values: vec![], vectors: Mat::zeros(0, 0) };
        assert_eq!(empty.numerical_rank(1e-8), 0);
    }

    #[test]
    #[should_panic(expected = "square")]
    fn rectangular_panics() {
        let _ = eigh(Mat::<f64>::zeros(2, 3).as_ref());
    }
}
