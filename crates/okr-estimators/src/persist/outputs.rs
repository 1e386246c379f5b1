//! [`OutputModel`]: the kernel-output estimators with outputs other than
//! label sets, one enum generic over the output rows `Y` and the output
//! kernel `KY`, saved beside the label-set models:
//!
//! | model variant | outputs | output kernel | format |
//! |---|---|---|---|
//! | [`Model::Vectors`](super::Model::Vectors) ([`VectorModel`]) | vectors in `R^p` ([`DenseRows`]) | any [`KernelSpec`] | 5 |
//! | [`Model::Graphs`](super::Model::Graphs) ([`GraphModel`]) | labelled graphs ([`Graphs`]) | WL subtree ([`WlSubtree`]) | 7 |
//! | [`Model::Rankings`](super::Model::Rankings) ([`RankingModel`]) | rankings ([`Rankings`]) | Kendall or Mallows ([`RankingKernel`]) | 7 |
//!
//! The same three kinds fitted on a precomputed input Gram ([`GramRows`]
//! with the [`Precomputed`] kernel, format 9) are
//! [`Model::GramVectors`](super::Model::GramVectors),
//! [`Model::GramGraphs`](super::Model::GramGraphs) and
//! [`Model::GramRankings`](super::Model::GramRankings): the enum is generic
//! over the input rows `X` and the input kernel `KX` too (default: feature
//! rows with a [`KernelSpec`]).
//!
//! The output kernel and its parameters are stored in the estimator's
//! parameters. The enum's encoding does not depend on `Y` and `KY` beyond
//! their own fields, so vector models of format 5 and 6 decode unchanged.

use okr_kernels::{
    DenseRows, Features, GramRows, Graphs, Kernel, KernelSpec, Precomputed, RankingKernel, Rankings, Rows, WlSubtree,
};
use serde::{Deserialize, Serialize};

use super::{Invalid, StoredKernel, Validate};
use crate::core::KernelExpansion;
use crate::{Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, SketchedIokr, TraceNorm};

/// A saved model with outputs `Y` (on inputs `X` with input kernel `KX`)
/// seen through its [`KernelExpansion`].
pub type SavedOutputSurrogate<Y, KY, X = Features, KX = KernelSpec> =
    dyn KernelExpansion<X, Y, InputKernel = KX, OutputKernel = KY>;

/// A saved vector-output model seen through its [`KernelExpansion`].
pub type SavedVectorSurrogate = SavedOutputSurrogate<DenseRows, KernelSpec>;

/// Vector outputs (`y_i` in `R^p`, e.g. the bottom halves of USPS digits).
pub type VectorModel = OutputModel<DenseRows, KernelSpec>;

/// Graph outputs with the Weisfeiler-Lehman subtree output kernel.
pub type GraphModel = OutputModel<Graphs, WlSubtree>;

/// Ranking outputs with the Kendall or Mallows output kernel.
pub type RankingModel = OutputModel<Rankings, RankingKernel>;

/// A model with outputs `Y` fitted on a precomputed input Gram: it keeps
/// rows of the training Gram, and its test inputs are `K(test, train)` rows.
pub type GramOutputModel<Y, KY> = OutputModel<Y, KY, GramRows, Precomputed>;

/// Vector outputs, fitted on a precomputed input Gram.
pub type GramVectorModel = GramOutputModel<DenseRows, KernelSpec>;

/// Graph outputs, fitted on a precomputed input Gram.
pub type GramGraphModel = GramOutputModel<Graphs, WlSubtree>;

/// Ranking outputs, fitted on a precomputed input Gram.
pub type GramRankingModel = GramOutputModel<Rankings, RankingKernel>;

/// One variant per kernel-output estimator, on input rows `X` (default:
/// dense or sparse [`Features`]) with input kernel `KX`, outputs `Y` and
/// output kernel `KY`. Variants are encoded by their index: new ones go at
/// the end, with a format version bump.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum OutputModel<Y, KY, X = Features, KX = KernelSpec> {
    /// IOKR.
    Iokr(Iokr<X, Y, KX, KY>),
    /// Reduced-rank IOKR.
    ReducedRank(ReducedRankIokr<X, Y, KX, KY>),
    /// Kernel dependency estimation.
    Kde(Kde<X, Y, KX, KY>),
    /// SIOKR / ISOKR / SISOKR.
    Sketched(SketchedIokr<X, Y, KX, KY>),
    /// Nystroem kernel ridge regression.
    Nystroem(Nystroem<X, Y, KX, KY>),
    /// Nystroem reduced-rank IOKR.
    NystroemReducedRank(NystroemReducedRank<X, Y, KX, KY>),
    /// Trace-norm regularized surrogate.
    TraceNorm(TraceNorm<X, Y, KX, KY>),
}

// `'static`: the surrogate is a `dyn` of the default object lifetime.
impl<Y, KY, X, KX> OutputModel<Y, KY, X, KX>
where
    Y: Rows + 'static,
    KY: Kernel<Y> + 'static,
    X: Rows + 'static,
    KX: Kernel<X> + 'static,
{
    /// The estimator's name (as for label-set models).
    pub fn name(&self) -> String {
        match self {
            Self::Iokr(_) => "iokr".into(),
            Self::ReducedRank(_) => "reduced-rank".into(),
            Self::Kde(_) => "kde".into(),
            Self::Sketched(m) => m.method().into(),
            Self::Nystroem(_) => "nystroem".into(),
            Self::NystroemReducedRank(_) => "nystroem-reduced-rank".into(),
            Self::TraceNorm(_) => "trace-norm".into(),
        }
    }

    /// The model as a kernel expansion (decoding, output scores).
    pub fn surrogate(&self) -> &SavedOutputSurrogate<Y, KY, X, KX> {
        match self {
            Self::Iokr(m) => m,
            Self::ReducedRank(m) => m,
            Self::Kde(m) => m,
            Self::Sketched(m) => m,
            Self::Nystroem(m) => m,
            Self::NystroemReducedRank(m) => m,
            Self::TraceNorm(m) => m,
        }
    }

    /// The output kernel, with its parameters.
    pub fn output_kernel(&self) -> &KY {
        self.surrogate().output_kernel()
    }

    /// Number of input features the model reads.
    pub fn input_width(&self) -> Option<usize> {
        match self {
            Self::Iokr(m) => m.x_train().feature_dim(),
            Self::ReducedRank(m) => m.x_train().feature_dim(),
            Self::Kde(m) => m.x_train().feature_dim(),
            Self::Sketched(m) => m.x_support().feature_dim(),
            Self::Nystroem(m) => m.anchors().feature_dim(),
            Self::NystroemReducedRank(m) => m.anchors().feature_dim(),
            Self::TraceNorm(m) => m.x_train().feature_dim(),
        }
    }

    /// `(requested, used)` rank of the low-rank estimators; `None` for the others.
    pub fn ranks(&self) -> Option<(usize, usize)> {
        use crate::SurrogateModel;
        Some(match self {
            Self::ReducedRank(m) => (m.requested_rank(), m.rank()),
            Self::Kde(m) => (m.requested_rank(), m.rank()),
            Self::TraceNorm(m) => (m.params_used().rank(), m.n_atoms()),
            Self::NystroemReducedRank(m) => (m.params_used().rank(), m.rank()),
            _ => return None,
        })
    }

    /// The distinct training outputs (the default candidates), in
    /// first-occurrence order. Graphs are never merged: a graph model's
    /// candidates are its training graphs, in training order.
    pub fn candidates(&self) -> &Y {
        self.surrogate().training_outputs()
    }
}

impl<Y: Rows + 'static, KY: Kernel<Y> + 'static> GramOutputModel<Y, KY> {
    /// Number of training samples: the columns a test x train block must have.
    pub fn n_train(&self) -> usize {
        self.surrogate().expansion_inputs().n_train()
    }
}

/// The model is the kernel expansion of its estimator (so it decodes as a
/// [`SurrogateModel`](crate::SurrogateModel) without naming the variant).
impl<Y, KY, X, KX> KernelExpansion<X, Y> for OutputModel<Y, KY, X, KX>
where
    Y: Rows + 'static,
    KY: Kernel<Y> + 'static,
    X: Rows + 'static,
    KX: Kernel<X> + 'static,
{
    type InputKernel = KX;
    type OutputKernel = KY;

    fn input_kernel(&self) -> &KX {
        self.surrogate().input_kernel()
    }
    fn output_kernel(&self) -> &KY {
        self.surrogate().output_kernel()
    }
    fn expansion_inputs(&self) -> &X {
        self.surrogate().expansion_inputs()
    }
    fn input_map(&self) -> crate::core::InputMap<'_> {
        self.surrogate().input_map()
    }
    fn atoms(&self) -> crate::core::Atoms<'_, Y> {
        self.surrogate().atoms()
    }
    fn training_outputs(&self) -> &Y {
        self.surrogate().training_outputs()
    }
}

impl<X: Rows + 'static, KX: Kernel<X> + 'static> OutputModel<DenseRows, KernelSpec, X, KX> {
    /// Dimension `p` of the output vectors.
    pub fn output_width(&self) -> usize {
        self.candidates().n_features()
    }
}

impl<Y: Rows, KY: StoredKernel<Y>, X: Rows, KX: StoredKernel<X>> Validate for OutputModel<Y, KY, X, KX> {
    fn validate(&self) -> Result<(), Invalid> {
        match self {
            Self::Iokr(m) => m.validate(),
            Self::ReducedRank(m) => m.validate(),
            Self::Kde(m) => m.validate(),
            Self::Sketched(m) => m.validate(),
            Self::Nystroem(m) => m.validate(),
            Self::NystroemReducedRank(m) => m.validate(),
            Self::TraceNorm(m) => m.validate(),
        }
    }
}
