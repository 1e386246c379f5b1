//! Reduced-rank IOKR (Brogat-Motte et al., JMLR 2022, Eq. 8 and
//! Algorithms 1-2): the IOKR estimator projected on a learned rank-$p$
//! subspace of the output RKHS.
//!
//! $$x \mapsto \hat P_{\lambda_1} \hat h_{\lambda_2}(x),$$
//! with $\hat h_\lambda$ the IOKR ridge estimator and $\hat P_{\lambda_1}$ the
//! projection onto the top-$p$ eigenvectors of the **uncentred** covariance
//! of the fitted values $\frac1n\sum_i \hat h_{\lambda_1}(x_i)\otimes\hat h_{\lambda_1}(x_i)$.
//!
//! Kernelized (spec 1.3): with $W_\lambda = (K_x + n\lambda I)^{-1}$ and
//! $K_h = W_1 K_x K_y K_x W_1 = \sum_i \mu_i u_i u_i^\top$ (descending), the
//! directions $e_i = \sum_j (K_x W_1 \beta)_{ji}\,\psi(y_j)$, $\beta_{:,i} = u_i/\sqrt{\mu_i}$,
//! are orthonormal in $\mathcal H_Y$. The encoder $G = \beta^\top K_x W_1$ `(p, n)`
//! gives the coordinates $U\psi(c) = G\, k^y(c)$, and $U\hat h_{\lambda_2}(x) = M^\top k_x(x)$
//! with $M = W_2 K_y G^\top$ `(n, p)`.
//!
//! The [`SurrogateModel`](crate::SurrogateModel) atoms are the $p$ directions $e_j$: coefficients
//! $C = K_x(x, X) M$ `(n_test, p)`, atom products $G\, K_y(\text{train}, c)$
//! `(p, n_c)`, and an identity atom Gram. Decoding costs $O(n_{te}\, p\, n_c)$
//! once the candidates are projected, instead of IOKR's $O(n_{te}\, n\, n_c)$.
//! Duplicate training outputs are merged (columns of $G$ summed), so the
//! candidate projection runs against the distinct outputs only.
//!
//! Both ridge systems come from one eigendecomposition
//! $K_x = V \operatorname{diag}(s) V^\top$: $W_\lambda = V \operatorname{diag}(1/(s + n\lambda)) V^\top$.
//! The model at rank $q \le p$ is a prefix of the model at rank $p$
//! (see [`ReducedRankIokr::truncated`]), so one fit serves a whole sweep over $p$.

pub mod assumptions;
mod fit;
mod params;

use faer::{Mat, MatRef};
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

pub use params::{ReducedRankParams, ReducedRankValidParams};

use crate::core::{AtomGram, Atoms, InputMap, KernelExpansion};
use crate::persist::{self, Invalid, Validate};
use crate::{Error, Result};

/// A fitted reduced-rank IOKR model.
///
/// Keeps the training inputs, the distinct training outputs with the
/// sample-to-output map, the encoder $G$ `(p, n_distinct)`, the prediction
/// map $M = W_2 K_y G^\top$ `(n, p)` and the eigenvalues $\mu$ of $K_h$.
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_estimators::{ReducedRankIokr, SurrogateModel};
/// use okr_kernels::{DenseRows, Linear, Rows};
/// let x = DenseRows::new(Mat::from_fn(8, 3, |i, j| ((i * 7 + j * 3) % 5) as f64 / 5.0))?;
/// let y = DenseRows::new(Mat::from_fn(8, 4, |i, j| ((i + 2 * j) % 3) as f64))?;
/// let model = ReducedRankIokr::params(Linear, Linear).rank(2).lambda1(1e-2).fit(&x, &y)?;
/// assert_eq!((model.rank(), model.requested_rank()), (2, 2));
/// let c = model.coefficients(&x.select(&[0, 5]))?;
/// assert_eq!((c.nrows(), c.ncols()), (2, 2));
/// // The atoms are orthonormal directions of the output space.
/// assert!((model.atom_gram() - Mat::<f64>::identity(2, 2)).norm_max() < 1e-12);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReducedRankIokr<X, Y, KX, KY> {
    params: ReducedRankValidParams<KX, KY>,
    x_train: X,
    outputs: Y,
    output_of: Vec<usize>,
    #[serde(with = "okr_linalg::serde_mat")]
    encoder: Mat<f64>,
    #[serde(with = "okr_linalg::serde_mat")]
    predict_map: Mat<f64>,
    mu: Vec<f64>,
    numerical_rank: usize,
}

impl<KX, KY> ReducedRankIokr<(), (), KX, KY> {
    /// Default parameters (`rank = 64`, `lambda1 = lambda2 = 1e-3`) with the given kernels.
    pub fn params(input_kernel: KX, output_kernel: KY) -> ReducedRankParams<KX, KY> {
        ReducedRankParams::new(input_kernel, output_kernel)
    }
}

impl<X: Rows, Y: Rows, KX, KY> ReducedRankIokr<X, Y, KX, KY> {
    /// The parameters the model was fitted with (the requested rank included).
    pub fn params_used(&self) -> &ReducedRankValidParams<KX, KY> {
        &self.params
    }
    /// Training inputs.
    pub fn x_train(&self) -> &X {
        &self.x_train
    }
    /// The distinct training outputs, in first-occurrence order: the
    /// columns of [`encoder`](Self::encoder).
    pub fn distinct_outputs(&self) -> &Y {
        &self.outputs
    }
    /// For every training sample, the index of its output in
    /// [`distinct_outputs`](Self::distinct_outputs).
    pub fn output_of_sample(&self) -> &[usize] {
        &self.output_of
    }
    /// The training outputs, rebuilt from the distinct outputs.
    pub fn y_train(&self) -> Y {
        self.outputs.select(&self.output_of)
    }
    /// Number of training samples `n`.
    pub fn n_samples(&self) -> usize {
        self.x_train.n_rows()
    }
    /// The rank $p$ used: the requested rank capped at
    /// [`numerical_rank`](Self::numerical_rank).
    pub fn rank(&self) -> usize {
        self.encoder.nrows()
    }
    /// The rank requested in the parameters.
    pub fn requested_rank(&self) -> usize {
        self.params.rank
    }
    /// Number of eigenvalues of $K_h$ above `rank_tolerance * mu[0]`.
    pub fn numerical_rank(&self) -> usize {
        self.numerical_rank
    }
    /// All eigenvalues $\mu$ of $K_h = W_1 K_x K_y K_x W_1$, descending; the
    /// fitted-value covariance has eigenvalues $\mu_i / n$.
    pub fn mu(&self) -> &[f64] {
        &self.mu
    }
    /// The encoder $G$ `(p, n_distinct)`: $U\psi(c) = G\, K_y(\text{distinct outputs}, c)$.
    pub fn encoder(&self) -> MatRef<'_, f64> {
        self.encoder.as_ref()
    }
    /// The prediction map $M = W_2 K_y G^\top$ `(n, p)`: $U \hat h_{\lambda_2}(x) = M^\top k_x(x)$.
    pub fn predict_map(&self) -> MatRef<'_, f64> {
        self.predict_map.as_ref()
    }
}

impl<X: Rows, Y: Rows, KX: Clone, KY: Clone> ReducedRankIokr<X, Y, KX, KY> {
    /// The model at rank `q`: the first `q` directions (nested prefixes of one
    /// eigendecomposition), equal to refitting with `rank(q)`. The requested
    /// rank of the result is `q`; `q` above [`rank`](Self::rank) is capped.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for `q = 0`.
    pub fn truncated(&self, q: usize) -> Result<Self> {
        if q == 0 {
            return Err(Error::InvalidParameter { name: "rank", value: "0".into(), expected: "an integer >= 1" });
        }
        let r = q.min(self.rank());
        let mut params = self.params.clone();
        params.rank = q;
        Ok(Self {
            params,
            x_train: self.x_train.clone(),
            outputs: self.outputs.clone(),
            output_of: self.output_of.clone(),
            encoder: self.encoder.subrows(0, r).to_owned(),
            predict_map: self.predict_map.subcols(0, r).to_owned(),
            mu: self.mu.clone(),
            numerical_rank: self.numerical_rank,
        })
    }
}

impl<X, Y, KX, KY> KernelExpansion<X, Y> for ReducedRankIokr<X, Y, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X>,
    KY: Kernel<Y>,
{
    type InputKernel = KX;
    type OutputKernel = KY;

    fn input_kernel(&self) -> &KX {
        &self.params.input_kernel
    }
    fn output_kernel(&self) -> &KY {
        &self.params.output_kernel
    }
    fn expansion_inputs(&self) -> &X {
        &self.x_train
    }
    fn input_map(&self) -> InputMap<'_> {
        InputMap::Linear(self.predict_map.as_ref())
    }
    fn atoms(&self) -> Atoms<'_, Y> {
        Atoms { outputs: &self.outputs, weights: Some(self.encoder.as_ref()), gram: AtomGram::Identity }
    }
    fn training_outputs(&self) -> &Y {
        &self.outputs
    }
}

impl<X: Rows, Y: Rows, KX: persist::StoredKernel<X>, KY: persist::StoredKernel<Y>> Validate
    for ReducedRankIokr<X, Y, KX, KY>
{
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("reduced-rank", &ReducedRankParams(self.params.clone()))?;
        let n = self.x_train.n_rows();
        persist::ensure(n > 0, || "reduced-rank model has no training samples".into())?;
        persist::grouping("reduced-rank sample-to-output map", &self.output_of, n, self.outputs.n_rows())?;
        let p = self.encoder.nrows();
        persist::ensure(p >= 1 && p <= self.params.rank && p <= self.numerical_rank, || {
            format!(
                "reduced-rank model has rank {p} (requested {}, numerical {})",
                self.params.rank, self.numerical_rank
            )
        })?;
        persist::ensure(self.numerical_rank <= self.mu.len(), || {
            "reduced-rank numerical rank above the spectrum".into()
        })?;
        persist::finite_slice("reduced-rank spectrum", &self.mu)?;
        persist::matrix("reduced-rank encoder", self.encoder.as_ref(), p, self.outputs.n_rows())?;
        persist::matrix("reduced-rank prediction map", self.predict_map.as_ref(), n, p)?;
        self.params.input_kernel.check_rows("reduced-rank input kernel", &self.x_train)?;
        self.params.output_kernel.check_rows("reduced-rank output kernel", &self.outputs)
    }
}
