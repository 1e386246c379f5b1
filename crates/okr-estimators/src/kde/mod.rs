//! KDE, kernel dependency estimation (Weston et al. 2003), the baseline of
//! Brogat-Motte et al. 2022 (spec 1.6): kernel PCA of the outputs with $p$
//! directions, then kernel ridge regression onto each direction's coordinate.
//!
//! With the eigenpairs $(\nu_i, v_i)$ of $K_y$ (or of $H K_y H$, $H = I - 11^\top/n$,
//! when centred), the directions $e_i = \sum_j (H v_i)_j \psi(y_j) / \sqrt{\nu_i}$
//! are orthonormal, the encoder is $G = \operatorname{diag}(\nu^{-1/2}) V_p^\top H$
//! `(p, n)`, and because ridge regression is linear in its targets the $p$
//! independent regressions give $U\hat h(x) = M^\top k_x(x)$ with
//! $M = W K_y G^\top$: KDE is $P_{out}\hat h_\lambda$, the IOKR estimator
//! projected on the top-$p$ output KPCA subspace. The reduced-rank estimator
//! ([`ReducedRankIokr`](crate::ReducedRankIokr)) instead projects on the top
//! directions of the fitted values.
//!
//! Decoding uses $k(c, c)$ for the candidate norm (the same rule as the other
//! estimators), not Weston's $\|\Pi\psi(c)\|^2$.

mod fit;
mod params;

use faer::{Mat, MatRef};
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

pub use params::{KdeParams, KdeValidParams};

use crate::core::{AtomGram, Atoms, InputMap, KernelExpansion};
use crate::persist::{self, Invalid, Validate};

/// A fitted KDE model: the same surrogate structure as
/// [`ReducedRankIokr`](crate::ReducedRankIokr) (orthonormal atoms, encoder
/// $G$ over the distinct training outputs, prediction map $M$).
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_estimators::{Kde, SurrogateModel};
/// use okr_kernels::{DenseRows, Linear, Rows};
/// let x = DenseRows::new(Mat::from_fn(8, 3, |i, j| ((i * 7 + j * 3) % 5) as f64 / 5.0))?;
/// let y = DenseRows::new(Mat::from_fn(8, 4, |i, j| ((i + 2 * j) % 3) as f64))?;
/// let model = Kde::params(Linear, Linear).rank(2).fit(&x, &y)?;
/// assert_eq!(model.coefficients(&x)?.ncols(), 2);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kde<X, Y, KX, KY> {
    params: KdeValidParams<KX, KY>,
    x_train: X,
    outputs: Y,
    output_of: Vec<usize>,
    #[serde(with = "okr_linalg::serde_mat")]
    encoder: Mat<f64>,
    #[serde(with = "okr_linalg::serde_mat")]
    predict_map: Mat<f64>,
    nu: Vec<f64>,
    numerical_rank: usize,
}

impl<KX, KY> Kde<(), (), KX, KY> {
    /// Default parameters (`rank = 64`, `lambda = 1e-3`, uncentred) with the given kernels.
    pub fn params(input_kernel: KX, output_kernel: KY) -> KdeParams<KX, KY> {
        KdeParams::new(input_kernel, output_kernel)
    }
}

impl<X: Rows, Y: Rows, KX, KY> Kde<X, Y, KX, KY> {
    /// The parameters the model was fitted with.
    pub fn params_used(&self) -> &KdeValidParams<KX, KY> {
        &self.params
    }
    /// The distinct training outputs (columns of [`encoder`](Self::encoder)).
    pub fn distinct_outputs(&self) -> &Y {
        &self.outputs
    }
    /// Training inputs.
    pub fn x_train(&self) -> &X {
        &self.x_train
    }
    /// Number of training samples `n`.
    pub fn n_samples(&self) -> usize {
        self.x_train.n_rows()
    }
    /// The number of directions used: the requested rank capped at
    /// [`numerical_rank`](Self::numerical_rank).
    pub fn rank(&self) -> usize {
        self.encoder.nrows()
    }
    /// The rank requested in the parameters.
    pub fn requested_rank(&self) -> usize {
        self.params.rank
    }
    /// Number of eigenvalues of the (centred) $K_y$ above `rank_tolerance * nu[0]`.
    pub fn numerical_rank(&self) -> usize {
        self.numerical_rank
    }
    /// Eigenvalues $\nu$ of $K_y$ (or $H K_y H$), descending.
    pub fn nu(&self) -> &[f64] {
        &self.nu
    }
    /// The encoder $G$ `(p, n_distinct)`.
    pub fn encoder(&self) -> MatRef<'_, f64> {
        self.encoder.as_ref()
    }
}

impl<X, Y, KX, KY> KernelExpansion<X, Y> for Kde<X, Y, KX, KY>
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

impl<X: Rows, Y: Rows, KX: persist::StoredKernel<X>, KY: persist::StoredKernel<Y>> Validate for Kde<X, Y, KX, KY> {
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("KDE", &KdeParams(self.params.clone()))?;
        let n = self.x_train.n_rows();
        persist::ensure(n > 0, || "KDE model has no training samples".into())?;
        persist::grouping("KDE sample-to-output map", &self.output_of, n, self.outputs.n_rows())?;
        let p = self.encoder.nrows();
        persist::ensure(p >= 1 && p <= self.params.rank && p <= self.numerical_rank, || {
            format!("KDE model has rank {p} (requested {}, numerical {})", self.params.rank, self.numerical_rank)
        })?;
        persist::ensure(self.numerical_rank <= self.nu.len(), || "KDE numerical rank above the spectrum".into())?;
        persist::finite_slice("KDE spectrum", &self.nu)?;
        persist::matrix("KDE encoder", self.encoder.as_ref(), p, self.outputs.n_rows())?;
        persist::matrix("KDE prediction map", self.predict_map.as_ref(), n, p)?;
        self.params.input_kernel.check_rows("KDE input kernel", &self.x_train)?;
        self.params.output_kernel.check_rows("KDE output kernel", &self.outputs)
    }
}
