//! Nystroem kernel ridge regression with an output kernel (Rudi et al.
//! 2015; reduced-rank spec 1.7): IOKR restricted to the span of `m` anchor
//! points, for `n` where the `n x n` Gram matrix does not fit.
//!
//! $$\hat h(x) = \sum_i \alpha_i(x)\psi(y_i),\qquad
//! \alpha(x) = K_{nm}(K_{nm}^\top K_{nm} + n\lambda K_{mm})^\dagger k_m(x).$$
//!
//! It equals SIOKR with a uniform sub-sampling input sketch on the same
//! anchors (the $\sqrt{n/m}$ scaling cancels). The [`SurrogateModel`](crate::SurrogateModel) atoms
//! are the distinct training outputs, as for IOKR.

mod fit;
mod params;
mod partition;

use faer::{Mat, MatRef};
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

pub use crate::stream::DEFAULT_CHUNK_ROWS;
pub use params::{Anchors, NystroemParams, NystroemValidParams};
pub use partition::NystroemPlan;

use crate::core::{AtomGram, Atoms, InputMap, KernelExpansion};
use crate::persist::{self, Invalid, Validate};

/// A fitted Nystroem KRR model: the anchors, the weights $W$
/// `(m, n_distinct)` and the distinct training outputs.
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_estimators::nystroem::Anchors;
/// use okr_estimators::{Nystroem, SurrogateModel};
/// use okr_kernels::{DenseRows, Gaussian, Rows};
/// let x = DenseRows::new(Mat::from_fn(30, 2, |i, j| ((i * 5 + j) % 7) as f64 / 7.0))?;
/// let y = DenseRows::new(Mat::from_fn(30, 1, |i, _| (i % 3) as f64))?;
/// let model = Nystroem::params(Gaussian::new(1.0)?, Gaussian::new(1.0)?)
///     .anchors(Anchors::Uniform(8))
///     .fit(&x, &y)?;
/// assert_eq!(model.anchor_indices().len(), 8);
/// let c = model.coefficients(&x.select(&[0, 1]))?;
/// assert_eq!((c.nrows(), c.ncols()), (2, model.distinct_outputs().n_rows()));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Nystroem<X, Y, KX, KY> {
    params: NystroemValidParams<KX, KY>,
    anchors: X,
    anchor_indices: Vec<usize>,
    #[serde(with = "okr_linalg::serde_mat")]
    weights: Mat<f64>,
    outputs: Y,
    output_of: Vec<usize>,
    rank: usize,
}

impl<KX, KY> Nystroem<(), (), KX, KY> {
    /// Default parameters (1000 uniform anchors, `lambda = 1e-3`) with the given kernels.
    pub fn params(input_kernel: KX, output_kernel: KY) -> NystroemParams<KX, KY> {
        NystroemParams::new(input_kernel, output_kernel)
    }
}

impl<X: Rows, Y: Rows, KX, KY> Nystroem<X, Y, KX, KY> {
    /// The parameters the model was fitted with.
    pub fn params_used(&self) -> &NystroemValidParams<KX, KY> {
        &self.params
    }
    /// Training indices of the anchors.
    pub fn anchor_indices(&self) -> &[usize] {
        &self.anchor_indices
    }
    /// The anchor inputs.
    pub fn anchors(&self) -> &X {
        &self.anchors
    }
    /// The weights $W$ `(m, n_distinct)`: $C = K(x, \text{anchors}) W$.
    pub fn weights(&self) -> MatRef<'_, f64> {
        self.weights.as_ref()
    }
    /// The distinct training outputs (the atoms), first-occurrence order.
    pub fn distinct_outputs(&self) -> &Y {
        &self.outputs
    }
    /// For every training sample, the index of its output in
    /// [`distinct_outputs`](Self::distinct_outputs).
    pub fn output_of_sample(&self) -> &[usize] {
        &self.output_of
    }
    /// Rank kept in the pseudo-inverse of the `m x m` system.
    pub fn rank(&self) -> usize {
        self.rank
    }
}

impl<X, Y, KX, KY> KernelExpansion<X, Y> for Nystroem<X, Y, KX, KY>
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
        InputMap::Linear(self.weights.as_ref())
    }
    fn atoms(&self) -> Atoms<'_, Y> {
        Atoms { outputs: &self.outputs, weights: None, gram: AtomGram::FromOutputs }
    }
    fn training_outputs(&self) -> &Y {
        &self.outputs
    }
}

impl<X: Rows, Y: Rows, KX: persist::StoredKernel<X>, KY: persist::StoredKernel<Y>> Validate for Nystroem<X, Y, KX, KY> {
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("Nystroem", &NystroemParams(self.params.clone()))?;
        let n = self.output_of.len();
        let m = self.anchors.n_rows();
        persist::ensure(n > 0 && m > 0, || "Nystroem model has no training samples or anchors".into())?;
        persist::rows("Nystroem anchors", &self.anchors, self.anchor_indices.len())?;
        persist::indices("Nystroem anchor indices", &self.anchor_indices, n)?;
        persist::grouping("Nystroem sample-to-output map", &self.output_of, n, self.outputs.n_rows())?;
        persist::matrix("Nystroem weights", self.weights.as_ref(), m, self.outputs.n_rows())?;
        persist::ensure(self.rank <= m, || format!("Nystroem rank {} above {m} anchors", self.rank))?;
        self.params.input_kernel.check_rows("Nystroem input kernel", &self.anchors)?;
        self.params.output_kernel.check_rows("Nystroem output kernel", &self.outputs)
    }
}
