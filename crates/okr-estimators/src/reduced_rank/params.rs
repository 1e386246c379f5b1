use serde::{Deserialize, Serialize};

use crate::core::checks;
use crate::{Error, ParamGuard, Result};

/// Validated reduced-rank IOKR hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `rank` | `64` | requested rank $p$ of the projection $\hat P_{\lambda_1}$ | `[1, inf)`, capped at the numerical rank of $K_h$ |
/// | `lambda1` | `1e-3` | ridge of the estimator whose fitted values define $\hat P$ | `(0, inf)` |
/// | `lambda2` | `lambda1` | ridge of the projected estimator $\hat h_{\lambda_2}$ | `(0, inf)` |
/// | `rank_tolerance` | `1e-10` | eigenvalues $\mu_i \le \mathrm{tol}\cdot\mu_0$ of $K_h$ are dropped | `[0, 1)` |
/// | `input_kernel` | (given) | kernel on inputs $k_x$ | |
/// | `output_kernel` | (given) | kernel on outputs $k_y$ | |
///
/// The estimator is $x \mapsto \hat P_{\lambda_1} \hat h_{\lambda_2}(x)$
/// (Brogat-Motte et al. 2022, Eq. 8), with $\hat h_\lambda$ the IOKR ridge
/// estimator solving $(K_x + n\lambda I)$ (scikit-learn's
/// `KernelRidge(alpha = n * lambda)`) and $\hat P_{\lambda_1}$ the projection
/// onto the top-$p$ eigenvectors of the uncentred covariance of the fitted
/// values $\frac1n \sum_i \hat h_{\lambda_1}(x_i) \otimes \hat h_{\lambda_1}(x_i)$.
/// The paper's structured-prediction experiments use $\lambda_1 = \lambda_2$ and $p = 64$.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducedRankValidParams<KX, KY> {
    pub(crate) rank: usize,
    pub(crate) lambda1: f64,
    pub(crate) lambda2: Option<f64>,
    pub(crate) rank_tolerance: f64,
    pub(crate) input_kernel: KX,
    pub(crate) output_kernel: KY,
}

impl<KX, KY> ReducedRankValidParams<KX, KY> {
    /// Requested rank $p$ (the fitted model may use fewer, see
    /// [`ReducedRankIokr::rank`](super::ReducedRankIokr::rank)).
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Ridge $\lambda_1$ of the fitted values that define the projection.
    pub fn lambda1(&self) -> f64 {
        self.lambda1
    }
    /// Ridge $\lambda_2$ of the projected estimator (`lambda1` when unset).
    pub fn lambda2(&self) -> f64 {
        self.lambda2.unwrap_or(self.lambda1)
    }
    /// Relative tolerance of the numerical rank of $K_h$.
    pub fn rank_tolerance(&self) -> f64 {
        self.rank_tolerance
    }
    /// Input kernel.
    pub fn input_kernel(&self) -> &KX {
        &self.input_kernel
    }
    /// Output kernel.
    pub fn output_kernel(&self) -> &KY {
        &self.output_kernel
    }
}

/// Reduced-rank IOKR hyper-parameters (builder; setters store,
/// [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::{ParamGuard, ReducedRankIokr};
/// use okr_kernels::Linear;
/// let params = ReducedRankIokr::params(Linear, Linear).rank(8).lambda1(1e-2);
/// let checked = params.check_ref()?;
/// assert_eq!((checked.rank(), checked.lambda2()), (8, 1e-2));
/// assert!(ReducedRankIokr::params(Linear, Linear).rank(0).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducedRankParams<KX, KY>(pub(crate) ReducedRankValidParams<KX, KY>);

impl<KX, KY> ReducedRankParams<KX, KY> {
    /// Parameters with the given kernels, `rank = 64`, `lambda1 = 1e-3`,
    /// `lambda2` unset (equal to `lambda1`) and `rank_tolerance = 1e-10`.
    pub fn new(input_kernel: KX, output_kernel: KY) -> Self {
        Self(ReducedRankValidParams {
            rank: 64,
            lambda1: 1e-3,
            lambda2: None,
            rank_tolerance: 1e-10,
            input_kernel,
            output_kernel,
        })
    }
    /// Sets the requested rank $p$.
    pub fn rank(mut self, p: usize) -> Self {
        self.0.rank = p;
        self
    }
    /// Sets $\lambda_1$ (system $K_x + n\lambda_1 I$ of the fitted values).
    pub fn lambda1(mut self, lambda: f64) -> Self {
        self.0.lambda1 = lambda;
        self
    }
    /// Sets $\lambda_2$ (system $K_x + n\lambda_2 I$ of the projected estimator).
    pub fn lambda2(mut self, lambda: f64) -> Self {
        self.0.lambda2 = Some(lambda);
        self
    }
    /// Sets the relative tolerance of the numerical rank of $K_h$.
    pub fn rank_tolerance(mut self, tol: f64) -> Self {
        self.0.rank_tolerance = tol;
        self
    }
    /// Sets the input kernel.
    pub fn input_kernel(mut self, k: KX) -> Self {
        self.0.input_kernel = k;
        self
    }
    /// Sets the output kernel.
    pub fn output_kernel(mut self, k: KY) -> Self {
        self.0.output_kernel = k;
        self
    }
}

impl<KX, KY> ParamGuard for ReducedRankParams<KX, KY> {
    type Checked = ReducedRankValidParams<KX, KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        let p = &self.0;
        checks::at_least_one("rank", p.rank)?;
        checks::positive("lambda1", p.lambda1)?;
        if let Some(l2) = p.lambda2 {
            checks::positive("lambda2", l2)?;
        }
        checks::fraction("rank_tolerance", p.rank_tolerance)?;
        Ok(&self.0)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
