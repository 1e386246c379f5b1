//! The IOKR regularization path: one eigendecomposition of $K_x$ serves
//! every $\lambda$.
//!
//! With $K_x = V \operatorname{diag}(s) V^\top$,
//! $(K_x + n\lambda I)^{-1} = V \operatorname{diag}(1/(s_i + n\lambda)) V^\top$, so the
//! decoding scores of held-out inputs are
//! $$C_\lambda G = (K_{val,tr} V)\, \operatorname{diag}(w_\lambda)\, (V^\top G),
//! \qquad w_{\lambda,i} = \frac{1}{s_i + n\lambda}.$$
//! The two projected matrices are computed once per fold; each $\lambda$
//! costs one diagonal scaling and one GEMM.

use faer::{Mat, MatRef};

use crate::{Error, Result};

/// Eigendecomposition of a training Gram matrix, for sweeping $\lambda$.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_surrogate::IokrPath;
/// let x = Mat::from_fn(5, 2, |i, j| (i + 2 * j) as f64 / 5.0);
/// let k = &x * x.transpose();
/// let path = IokrPath::new(k.as_ref())?;
/// // Coefficients for lambda = 0.1: (K + n lambda I)^{-1} k_x, here for x = the training points.
/// let kv = path.project_inputs(k.as_ref());
/// let w = path.weights(0.1);
/// let coef = Mat::from_fn(5, 5, |i, j| kv[(i, j)] * w[j]) * path.eigenvectors().transpose();
/// let mut a = k.clone();
/// for i in 0..5 { a[(i, i)] += 0.5; }
/// assert!((&coef * &a - &k).norm_max() < 1e-10);
/// Ok::<(), okr_surrogate::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct IokrPath {
    values: Vec<f64>,
    vectors: Mat<f64>,
}

impl IokrPath {
    /// Decomposes the symmetric training Gram matrix `k_train` `(n, n)`.
    /// Eigenvalues below zero (rounding) are clamped to zero.
    ///
    /// # Errors
    /// [`Error::Empty`] for `n = 0`, [`Error::Linalg`] when the
    /// decomposition fails or `k_train` has non-finite entries.
    pub fn new(k_train: MatRef<'_, f64>) -> Result<Self> {
        let n = k_train.nrows();
        if n == 0 {
            return Err(Error::Empty { what: "training Gram matrix" });
        }
        if k_train.ncols() != n {
            return Err(Error::ShapeMismatch { what: "Gram matrix columns", expected: n, got: k_train.ncols() });
        }
        let (values, vectors) = okr_linalg::eigh(k_train)?.into_parts();
        let values = values.into_iter().map(|v| v.max(0.0)).collect();
        Ok(Self { values, vectors })
    }

    /// Number of training samples `n`.
    pub fn n_samples(&self) -> usize {
        self.values.len()
    }

    /// Eigenvalues $s$ of $K_x$, descending (order matches [`eigenvectors`](Self::eigenvectors)).
    pub fn eigenvalues(&self) -> &[f64] {
        &self.values
    }

    /// Eigenvectors $V$ `(n, n)`, one per column.
    pub fn eigenvectors(&self) -> MatRef<'_, f64> {
        self.vectors.as_ref()
    }

    /// $K_{other,tr} V$ `(m, n)` for a cross-kernel block `k_cross` `(m, n)`.
    ///
    /// # Panics
    /// If `k_cross.ncols() != n`.
    #[track_caller]
    pub fn project_inputs(&self, k_cross: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(k_cross.ncols(), self.n_samples(), "cross-kernel block must have n columns");
        k_cross * &self.vectors
    }

    /// $V^\top G$ `(n, n_c)` for atom products `g` `(n, n_c)`.
    ///
    /// # Panics
    /// If `g.nrows() != n`.
    #[track_caller]
    pub fn project_atoms(&self, g: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(g.nrows(), self.n_samples(), "atom products must have n rows");
        self.vectors.transpose() * g
    }

    /// Spectral weights $w_i = 1/(s_i + n\lambda)$.
    pub fn weights(&self, lambda: f64) -> Vec<f64> {
        let ridge = self.n_samples() as f64 * lambda;
        self.values.iter().map(|&s| 1.0 / (s + ridge)).collect()
    }

    /// Coefficients in the eigenbasis for `lambda`: `projected_inputs * diag(w)`,
    /// to be multiplied by [`project_atoms`](Self::project_atoms)' result.
    ///
    /// # Panics
    /// If `projected_inputs.ncols() != n`.
    #[track_caller]
    pub fn scaled_coefficients(&self, projected_inputs: MatRef<'_, f64>, lambda: f64) -> Mat<f64> {
        assert_eq!(projected_inputs.ncols(), self.n_samples());
        let w = self.weights(lambda);
        Mat::from_fn(projected_inputs.nrows(), projected_inputs.ncols(), |i, j| projected_inputs[(i, j)] * w[j])
    }
}
