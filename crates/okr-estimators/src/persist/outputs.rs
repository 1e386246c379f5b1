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
//! The output kernel and its parameters are stored in the estimator's
//! parameters. The enum's encoding does not depend on `Y` and `KY` beyond
//! their own fields, so vector models of format 5 and 6 decode unchanged.

use okr_kernels::{DenseRows, Features, Graphs, Kernel, KernelSpec, RankingKernel, Rankings, Rows, WlSubtree};
use serde::{Deserialize, Serialize};

use super::{Invalid, StoredKernel, Validate};
use crate::core::KernelExpansion;
use crate::{Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, SketchedIokr, TraceNorm};

/// A saved model with outputs `Y` seen through its [`KernelExpansion`].
pub type SavedOutputSurrogate<Y, KY> = dyn KernelExpansion<Features, Y, InputKernel = KernelSpec, OutputKernel = KY>;

/// A saved vector-output model seen through its [`KernelExpansion`].
pub type SavedVectorSurrogate = SavedOutputSurrogate<DenseRows, KernelSpec>;

/// Vector outputs (`y_i` in `R^p`, e.g. the bottom halves of USPS digits).
pub type VectorModel = OutputModel<DenseRows, KernelSpec>;

/// Graph outputs with the Weisfeiler-Lehman subtree output kernel.
pub type GraphModel = OutputModel<Graphs, WlSubtree>;

/// Ranking outputs with the Kendall or Mallows output kernel.
pub type RankingModel = OutputModel<Rankings, RankingKernel>;

/// One variant per kernel-output estimator, on dense or sparse input
/// [`Features`] with outputs `Y` and output kernel `KY`. Variants are
/// encoded by their index: new ones go at the end, with a format version bump.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum OutputModel<Y, KY> {
    /// IOKR.
    Iokr(Iokr<Features, Y, KernelSpec, KY>),
    /// Reduced-rank IOKR.
    ReducedRank(ReducedRankIokr<Features, Y, KernelSpec, KY>),
    /// Kernel dependency estimation.
    Kde(Kde<Features, Y, KernelSpec, KY>),
    /// SIOKR / ISOKR / SISOKR.
    Sketched(SketchedIokr<Features, Y, KernelSpec, KY>),
    /// Nystroem kernel ridge regression.
    Nystroem(Nystroem<Features, Y, KernelSpec, KY>),
    /// Nystroem reduced-rank IOKR.
    NystroemReducedRank(NystroemReducedRank<Features, Y, KernelSpec, KY>),
    /// Trace-norm regularized surrogate.
    TraceNorm(TraceNorm<Features, Y, KernelSpec, KY>),
}

// `'static`: the surrogate is a `dyn` of the default object lifetime.
impl<Y: Rows + 'static, KY: Kernel<Y> + 'static> OutputModel<Y, KY> {
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
    pub fn surrogate(&self) -> &SavedOutputSurrogate<Y, KY> {
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

/// The model is the kernel expansion of its estimator (so it decodes as a
/// [`SurrogateModel`](crate::SurrogateModel) without naming the variant).
impl<Y: Rows + 'static, KY: Kernel<Y> + 'static> KernelExpansion<Features, Y> for OutputModel<Y, KY> {
    type InputKernel = KernelSpec;
    type OutputKernel = KY;

    fn input_kernel(&self) -> &KernelSpec {
        self.surrogate().input_kernel()
    }
    fn output_kernel(&self) -> &KY {
        self.surrogate().output_kernel()
    }
    fn expansion_inputs(&self) -> &Features {
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

impl VectorModel {
    /// Dimension `p` of the output vectors.
    pub fn output_width(&self) -> usize {
        self.candidates().n_features()
    }
}

impl<Y: Rows, KY: StoredKernel<Y>> Validate for OutputModel<Y, KY> {
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
