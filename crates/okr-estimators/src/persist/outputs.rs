//! [`VectorModel`]: the kernel-output estimators with dense vector outputs
//! (`y_i` in `R^p`, e.g. the bottom halves of USPS digits or a regression
//! target), saved beside the label-set models as [`Model::Vectors`](super::Model::Vectors).

use okr_kernels::{DenseRows, Features, KernelSpec, Rows};
use serde::{Deserialize, Serialize};

use super::{Invalid, Validate};
use crate::core::KernelExpansion;
use crate::{Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, SketchedIokr, TraceNorm};

/// A saved vector-output model seen through its [`KernelExpansion`].
pub type SavedVectorSurrogate =
    dyn KernelExpansion<Features, DenseRows, InputKernel = KernelSpec, OutputKernel = KernelSpec>;

/// One variant per kernel-output estimator, on dense or sparse input
/// [`Features`] with [`DenseRows`] outputs. Variants are encoded by their
/// index: new ones go at the end, with a format version bump.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum VectorModel {
    /// IOKR.
    Iokr(Iokr<Features, DenseRows, KernelSpec, KernelSpec>),
    /// Reduced-rank IOKR.
    ReducedRank(ReducedRankIokr<Features, DenseRows, KernelSpec, KernelSpec>),
    /// Kernel dependency estimation.
    Kde(Kde<Features, DenseRows, KernelSpec, KernelSpec>),
    /// SIOKR / ISOKR / SISOKR.
    Sketched(SketchedIokr<Features, DenseRows, KernelSpec, KernelSpec>),
    /// Nystroem kernel ridge regression.
    Nystroem(Nystroem<Features, DenseRows, KernelSpec, KernelSpec>),
    /// Nystroem reduced-rank IOKR.
    NystroemReducedRank(NystroemReducedRank<Features, DenseRows, KernelSpec, KernelSpec>),
    /// Trace-norm regularized surrogate.
    TraceNorm(TraceNorm<Features, DenseRows, KernelSpec, KernelSpec>),
}

impl VectorModel {
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
    pub fn surrogate(&self) -> &SavedVectorSurrogate {
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

    /// Dimension `p` of the output vectors.
    pub fn output_width(&self) -> usize {
        match self {
            Self::Iokr(m) => m.atoms().n_features(),
            Self::ReducedRank(m) => m.distinct_outputs().n_features(),
            Self::Kde(m) => m.distinct_outputs().n_features(),
            Self::Sketched(m) => m.distinct_outputs().n_features(),
            Self::Nystroem(m) => m.distinct_outputs().n_features(),
            Self::NystroemReducedRank(m) => m.distinct_outputs().n_features(),
            Self::TraceNorm(m) => m.distinct_outputs().n_features(),
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
    /// first-occurrence order.
    pub fn candidates(&self) -> &DenseRows {
        match self {
            Self::Iokr(m) => m.atoms(),
            Self::ReducedRank(m) => m.distinct_outputs(),
            Self::Kde(m) => m.distinct_outputs(),
            Self::Sketched(m) => m.distinct_outputs(),
            Self::Nystroem(m) => m.distinct_outputs(),
            Self::NystroemReducedRank(m) => m.distinct_outputs(),
            Self::TraceNorm(m) => m.distinct_outputs(),
        }
    }
}

impl Validate for VectorModel {
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
