//! Uncentred kernel PCA, the baseline of the KAE paper and the reference of
//! the KPCA link (spec 2.2).

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Uncentred kernel PCA with `p` components: with the eigenpairs
/// $(\mu_k, u_k)$ of the training Gram $K$ (descending, $\sigma_k = \sqrt{\mu_k}$),
/// the training codes are $U_p \Sigma_p$ and a new point with cross Gram
/// row $k(x)$ gets $k(x)^\top U_p \Sigma_p^{-1}$ (its coordinates on the
/// principal directions $v_k = \sum_i u_{ik}\phi(x_i)/\sigma_k$).
///
/// Centre the Grams beforehand for the centred variant. Components with
/// $\mu_k \le 10^{-12}\mu_1$ are dropped.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::kae::Kpca;
/// let x = Mat::from_fn(10, 3, |i, j| ((i * 7 + j * 5) % 11) as f64);
/// let k = &x * x.transpose();
/// let kpca = Kpca::fit(k.as_ref(), 2)?;
/// let codes = kpca.transform(k.as_ref())?; // training points through the out-of-sample map
/// assert!((codes[(3, 1)] - kpca.train_codes()[(3, 1)]).abs() < 1e-8);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kpca {
    #[serde(with = "okr_linalg::serde_mat")]
    vectors: Mat<f64>,
    eigenvalues: Vec<f64>,
}

impl Kpca {
    /// Eigendecomposition of the training Gram `(n, n)`, keeping `p` components.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for a non-square Gram, [`Error::InvalidParameter`]
    /// for `p = 0`, [`Error::ZeroRank`] when the Gram is zero, [`Error::Linalg`]
    /// for non-finite entries.
    pub fn fit(gram: MatRef<'_, f64>, p: usize) -> Result<Self> {
        if gram.nrows() != gram.ncols() {
            return Err(Error::ShapeMismatch {
                what: "Gram matrix columns",
                expected: gram.nrows(),
                got: gram.ncols(),
            });
        }
        if p == 0 {
            return Err(Error::InvalidParameter { name: "p", value: "0".into(), expected: ">= 1" });
        }
        let e = okr_linalg::eigh(gram)?;
        let top = e.values().first().copied().unwrap_or(0.0);
        if top <= 0.0 {
            return Err(Error::ZeroRank { what: "KPCA Gram", tol: 1e-12 });
        }
        let keep = e.values().iter().take(p).take_while(|&&v| v > 1e-12 * top).count();
        let vectors = e.vectors().subcols(0, keep).to_owned();
        Ok(Self { vectors, eigenvalues: e.values()[..keep].to_vec() })
    }

    /// Number of kept components.
    pub fn n_components(&self) -> usize {
        self.eigenvalues.len()
    }
    /// Eigenvalues $\mu_1 \ge \dots \ge \mu_p$ of the training Gram.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }
    /// Eigenvectors $U_p$ `(n, p)`.
    pub fn vectors(&self) -> MatRef<'_, f64> {
        self.vectors.as_ref()
    }
    /// Training codes $U_p\Sigma_p$ `(n, p)`.
    pub fn train_codes(&self) -> Mat<f64> {
        Mat::from_fn(self.vectors.nrows(), self.n_components(), |i, k| {
            self.vectors[(i, k)] * self.eigenvalues[k].sqrt()
        })
    }
    /// Codes of new points from their cross Gram `(m, n)`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for a cross Gram of the wrong width.
    pub fn transform(&self, cross: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if cross.ncols() != self.vectors.nrows() {
            return Err(Error::ShapeMismatch {
                what: "cross Gram columns",
                expected: self.vectors.nrows(),
                got: cross.ncols(),
            });
        }
        let c = cross * &self.vectors;
        Ok(Mat::from_fn(c.nrows(), c.ncols(), |i, k| c[(i, k)] / self.eigenvalues[k].sqrt()))
    }
}

impl crate::persist::Validate for Kpca {
    fn validate(&self) -> std::result::Result<(), crate::persist::Invalid> {
        use crate::persist::{ensure, finite};
        let p = self.eigenvalues.len();
        ensure(p >= 1 && self.vectors.ncols() == p, || {
            format!("kernel PCA has {p} eigenvalues for {} vectors", self.vectors.ncols())
        })?;
        ensure(self.eigenvalues.iter().all(|v| v.is_finite() && *v > 0.0), || {
            "kernel PCA eigenvalues must be finite and > 0".into()
        })?;
        finite("kernel PCA vectors", self.vectors.as_ref())
    }
}
