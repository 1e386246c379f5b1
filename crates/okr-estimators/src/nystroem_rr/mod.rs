//! Nystroem reduced-rank IOKR (Brogat-Motte et al. 2022, Bookmarks; spec
//! reduced-rank 1.7): the ridge part is Nystroem KRR on `m` anchors, the
//! output projection $\hat P$ of rank $p$ is learned by Algorithm 1 on a
//! subset $S$ of the training set, for `n` where neither `n x n` nor `n x m`
//! fits in memory.
//!
//! $$U\hat h(x) = M^\top k_m(x),\qquad
//! M = (K_{mn}K_{nm} + n\lambda_2 K_{mm})^\dagger K_{mn}\, UY,\qquad
//! UY = K_y(Y, Y_S)\, G_S^\top,$$
//! with the encoder $G_S$ `(p, n_distinct(S))` of Algorithm 1 on $S$ (ridge
//! $\lambda_1$): $U\psi(c) = G_S\, k^y_S(c)$, and the directions are
//! orthonormal in $\mathcal H_Y$ ($G_S K_{y,S} G_S^\top = I_p$).
//!
//! The [`SurrogateModel`](crate::SurrogateModel) atoms are the $p$ directions, as for
//! [`ReducedRankIokr`](crate::ReducedRankIokr): coefficients
//! $C = K_x(x, \text{anchors})\, M$ `(n_test, p)`, atom products
//! $G_S K_y(Y_S, c)$ `(p, n_c)`, identity atom Gram; decoding costs
//! $O(n_{te}\, p\, n_c)$.
//!
//! Algorithm 1 on the subset is computed without an $|S| \times |S|$
//! eigendecomposition: $K_y = P K_u P^\top$ over the distinct outputs, so
//! the nonzero spectrum of $K_h$ is that of an $n_u \times n_u$ matrix (one
//! Cholesky solve of $K_S + |S|\lambda_1 I$ and two $n_u \times n_u$
//! eigendecompositions).

mod fit;
mod params;
mod partition;

use faer::{Mat, MatRef};
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

pub use params::{NystroemReducedRankParams, NystroemReducedRankValidParams};
pub use partition::NystroemReducedRankPlan;

use crate::core::{AtomGram, Atoms, InputMap, KernelExpansion};
use crate::persist::{self, Invalid, Validate};
use crate::{Error, Result};

/// A fitted Nystroem reduced-rank model: the anchors, the prediction map
/// $M$ `(m, p)`, the subset's distinct outputs and the encoder $G_S$ `(p, n_u)`.
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_estimators::nystroem::Anchors;
/// use okr_estimators::{NystroemReducedRank, SurrogateModel};
/// use okr_kernels::{DenseRows, Gaussian, Rows};
/// let x = DenseRows::new(Mat::from_fn(40, 2, |i, j| ((i * 5 + j * 3) % 11) as f64 / 11.0))?;
/// let y = DenseRows::new(Mat::from_fn(40, 3, |i, j| ((i + j) % 4) as f64))?;
/// let model = NystroemReducedRank::params(Gaussian::new(1.0)?, Gaussian::new(0.5)?)
///     .anchors(Anchors::Uniform(10))
///     .subset(Anchors::Uniform(20))
///     .rank(2)
///     .fit(&x, &y)?;
/// let c = model.coefficients(&x.select(&[0, 1]))?;
/// assert_eq!((c.nrows(), c.ncols()), (2, 2));
/// assert!((model.atom_gram() - Mat::<f64>::identity(2, 2)).norm_max() < 1e-12);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NystroemReducedRank<X, Y, KX, KY> {
    params: NystroemReducedRankValidParams<KX, KY>,
    anchors: X,
    anchor_indices: Vec<usize>,
    subset_indices: Vec<usize>,
    outputs: Y,
    #[serde(with = "okr_linalg::serde_mat")]
    encoder: Mat<f64>,
    #[serde(with = "okr_linalg::serde_mat")]
    predict_map: Mat<f64>,
    mu: Vec<f64>,
    numerical_rank: usize,
    nystroem_rank: usize,
}

impl<KX, KY> NystroemReducedRank<(), (), KX, KY> {
    /// Default parameters (see [`NystroemReducedRankValidParams`]) with the given kernels.
    pub fn params(input_kernel: KX, output_kernel: KY) -> NystroemReducedRankParams<KX, KY> {
        NystroemReducedRankParams::new(input_kernel, output_kernel)
    }
}

impl<X: Rows, Y: Rows, KX, KY> NystroemReducedRank<X, Y, KX, KY> {
    /// The parameters the model was fitted with.
    pub fn params_used(&self) -> &NystroemReducedRankValidParams<KX, KY> {
        &self.params
    }
    /// The anchor inputs.
    pub fn anchors(&self) -> &X {
        &self.anchors
    }
    /// Training indices of the anchors.
    pub fn anchor_indices(&self) -> &[usize] {
        &self.anchor_indices
    }
    /// Training indices of the subset the projection was learned on.
    pub fn subset_indices(&self) -> &[usize] {
        &self.subset_indices
    }
    /// The subset's distinct outputs (first-occurrence order): the columns of
    /// [`encoder`](Self::encoder).
    pub fn distinct_outputs(&self) -> &Y {
        &self.outputs
    }
    /// The rank $p$ used (requested rank capped at the numerical rank of $K_h$).
    pub fn rank(&self) -> usize {
        self.encoder.nrows()
    }
    /// Number of eigenvalues of the subset's $K_h$ above `rank_tolerance * mu[0]`.
    pub fn numerical_rank(&self) -> usize {
        self.numerical_rank
    }
    /// Nonzero-spectrum eigenvalues $\mu$ of the subset's $K_h$, descending.
    pub fn mu(&self) -> &[f64] {
        &self.mu
    }
    /// Rank kept in the Nystroem system.
    pub fn nystroem_rank(&self) -> usize {
        self.nystroem_rank
    }
    /// The encoder $G_S$ `(p, n_u)`.
    pub fn encoder(&self) -> MatRef<'_, f64> {
        self.encoder.as_ref()
    }
    /// The prediction map $M$ `(m, p)`.
    pub fn predict_map(&self) -> MatRef<'_, f64> {
        self.predict_map.as_ref()
    }
}

impl<X: Rows, Y: Rows, KX: Clone, KY: Clone> NystroemReducedRank<X, Y, KX, KY> {
    /// The model at rank `q`: the first `q` directions, equal to refitting
    /// with `rank(q)` (nested prefixes). `q` above [`rank`](Self::rank) is capped.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for `q = 0`.
    pub fn truncated(&self, q: usize) -> Result<Self> {
        if q == 0 {
            return Err(Error::InvalidParameter { name: "rank", value: "0".into(), expected: "an integer >= 1" });
        }
        let r = q.min(self.rank());
        let mut m = self.clone();
        m.params.rank = q;
        m.encoder = self.encoder.subrows(0, r).to_owned();
        m.predict_map = self.predict_map.subcols(0, r).to_owned();
        Ok(m)
    }
}

impl<X, Y, KX, KY> KernelExpansion<X, Y> for NystroemReducedRank<X, Y, KX, KY>
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
        &self.anchors
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
    for NystroemReducedRank<X, Y, KX, KY>
{
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("Nystroem reduced-rank", &NystroemReducedRankParams(self.params.clone()))?;
        let m = self.anchors.n_rows();
        persist::ensure(m > 0 && self.outputs.n_rows() > 0, || {
            "Nystroem reduced-rank model has no anchors or outputs".into()
        })?;
        persist::rows("Nystroem reduced-rank anchors", &self.anchors, self.anchor_indices.len())?;
        let p = self.encoder.nrows();
        persist::ensure(p >= 1 && p <= self.params.rank && p <= self.numerical_rank, || {
            format!(
                "Nystroem reduced-rank model has rank {p} (requested {}, numerical {})",
                self.params.rank, self.numerical_rank
            )
        })?;
        persist::ensure(self.numerical_rank <= self.mu.len(), || "numerical rank above the spectrum".into())?;
        persist::ensure(self.nystroem_rank <= m, || "Nystroem rank above the anchors".into())?;
        persist::finite_slice("Nystroem reduced-rank spectrum", &self.mu)?;
        persist::matrix("Nystroem reduced-rank encoder", self.encoder.as_ref(), p, self.outputs.n_rows())?;
        persist::matrix("Nystroem reduced-rank prediction map", self.predict_map.as_ref(), m, p)?;
        self.params.input_kernel.check_rows("Nystroem reduced-rank input kernel", &self.anchors)?;
        self.params.output_kernel.check_rows("Nystroem reduced-rank output kernel", &self.outputs)
    }
}
