//! [`GramModel`]: the label-set estimators fitted on a precomputed input Gram
//! ([`GramRows`] with the [`Precomputed`] kernel), saved beside the
//! feature models as [`Model::Gram`](super::Model::Gram) (format 6; KDE,
//! Nystroem reduced rank and the trace norm appended in format 9). The
//! other output kinds on a Gram are [`GramOutputModel`](super::GramOutputModel)s.
//!
//! Such a model keeps no training features: the training rows it keeps are
//! rows of the training Gram, and predicting needs the block
//! `K(test, train)` `(n_test, n_train)` as test rows
//! ([`GramRows::test`], [`okr_kernels::read_test_gram`]).

use okr_kernels::{GramRows, KernelSpec, LabelSets, Precomputed};
use serde::{Deserialize, Serialize};

use super::OutputModel;
use super::{Invalid, Validate};
use crate::core::KernelExpansion;
use crate::{Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, SketchedIokr, TraceNorm};

/// A saved Gram model seen through its [`KernelExpansion`].
pub type SavedGramSurrogate =
    dyn KernelExpansion<GramRows, LabelSets, InputKernel = Precomputed, OutputKernel = KernelSpec>;

/// One variant per kernel-output estimator, fitted on a precomputed input
/// Gram: every one of them evaluates the input kernel on train x train and
/// test x train pairs only. Variants are encoded by their index: new ones
/// go at the end, with a format version bump.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum GramModel {
    /// IOKR.
    Iokr(Iokr<GramRows, LabelSets, Precomputed, KernelSpec>),
    /// Reduced-rank IOKR.
    ReducedRank(ReducedRankIokr<GramRows, LabelSets, Precomputed, KernelSpec>),
    /// SIOKR / ISOKR / SISOKR (sub-sampling input sketches look Gram columns up).
    Sketched(SketchedIokr<GramRows, LabelSets, Precomputed, KernelSpec>),
    /// Nystroem kernel ridge regression (anchors are training rows).
    Nystroem(Nystroem<GramRows, LabelSets, Precomputed, KernelSpec>),
    /// Kernel dependency estimation (format 9).
    Kde(Kde<GramRows, LabelSets, Precomputed, KernelSpec>),
    /// Nystroem reduced-rank IOKR (format 9; anchors and subset are training rows).
    NystroemReducedRank(NystroemReducedRank<GramRows, LabelSets, Precomputed, KernelSpec>),
    /// The trace-norm regularized surrogate (format 9).
    TraceNorm(TraceNorm<GramRows, LabelSets, Precomputed, KernelSpec>),
}

impl From<OutputModel<LabelSets, KernelSpec, GramRows, Precomputed>> for GramModel {
    /// The variant of the same estimator.
    fn from(m: OutputModel<LabelSets, KernelSpec, GramRows, Precomputed>) -> Self {
        match m {
            OutputModel::Iokr(m) => Self::Iokr(m),
            OutputModel::ReducedRank(m) => Self::ReducedRank(m),
            OutputModel::Kde(m) => Self::Kde(m),
            OutputModel::Sketched(m) => Self::Sketched(m),
            OutputModel::Nystroem(m) => Self::Nystroem(m),
            OutputModel::NystroemReducedRank(m) => Self::NystroemReducedRank(m),
            OutputModel::TraceNorm(m) => Self::TraceNorm(m),
        }
    }
}

impl GramModel {
    /// The estimator's name (as for feature models).
    pub fn name(&self) -> String {
        match self {
            Self::Iokr(_) => "iokr".into(),
            Self::ReducedRank(_) => "reduced-rank".into(),
            Self::Sketched(m) => m.method().into(),
            Self::Nystroem(_) => "nystroem".into(),
            Self::Kde(_) => "kde".into(),
            Self::NystroemReducedRank(_) => "nystroem-reduced-rank".into(),
            Self::TraceNorm(_) => "trace-norm".into(),
        }
    }

    /// The model as a kernel expansion (decoding, label scores).
    pub fn surrogate(&self) -> &SavedGramSurrogate {
        match self {
            Self::Iokr(m) => m,
            Self::ReducedRank(m) => m,
            Self::Sketched(m) => m,
            Self::Nystroem(m) => m,
            Self::Kde(m) => m,
            Self::NystroemReducedRank(m) => m,
            Self::TraceNorm(m) => m,
        }
    }

    /// Number of training samples: the columns a test x train block must have.
    pub fn n_train(&self) -> usize {
        self.surrogate().expansion_inputs().n_train()
    }

    /// The distinct training label sets (the default candidates).
    pub fn candidates(&self) -> &LabelSets {
        match self {
            Self::Iokr(m) => m.atoms(),
            Self::ReducedRank(m) => m.distinct_outputs(),
            Self::Sketched(m) => m.distinct_outputs(),
            Self::Nystroem(m) => m.distinct_outputs(),
            Self::Kde(m) => m.distinct_outputs(),
            Self::NystroemReducedRank(m) => m.distinct_outputs(),
            Self::TraceNorm(m) => m.distinct_outputs(),
        }
    }

    /// `(requested, used)` rank of the low-rank estimators; `None` for the others.
    pub fn ranks(&self) -> Option<(usize, usize)> {
        use crate::SurrogateModel;
        match self {
            Self::ReducedRank(m) => Some((m.requested_rank(), m.rank())),
            Self::Kde(m) => Some((m.requested_rank(), m.rank())),
            Self::TraceNorm(m) => Some((m.params_used().rank(), m.n_atoms())),
            Self::NystroemReducedRank(m) => Some((m.params_used().rank(), m.rank())),
            _ => None,
        }
    }
}

impl Validate for GramModel {
    fn validate(&self) -> Result<(), Invalid> {
        match self {
            Self::Iokr(m) => m.validate(),
            Self::ReducedRank(m) => m.validate(),
            Self::Sketched(m) => m.validate(),
            Self::Nystroem(m) => m.validate(),
            Self::Kde(m) => m.validate(),
            Self::NystroemReducedRank(m) => m.validate(),
            Self::TraceNorm(m) => m.validate(),
        }
    }
}
