//! [`GramModel`]: the label-set estimators fitted on a precomputed input Gram
//! ([`GramRows`] with the [`Precomputed`] kernel), saved beside the
//! feature models as [`Model::Gram`](super::Model::Gram) (format 6).
//!
//! Such a model keeps no training features: the training rows it keeps are
//! rows of the training Gram, and predicting needs the block
//! `K(test, train)` `(n_test, n_train)` as test rows
//! ([`GramRows::test`], [`okr_kernels::read_test_gram`]).

use okr_kernels::{GramRows, KernelSpec, LabelSets, Precomputed};
use serde::{Deserialize, Serialize};

use super::{Invalid, Validate};
use crate::core::KernelExpansion;
use crate::{Iokr, Nystroem, ReducedRankIokr, SketchedIokr};

/// A saved Gram model seen through its [`KernelExpansion`].
pub type SavedGramSurrogate =
    dyn KernelExpansion<GramRows, LabelSets, InputKernel = Precomputed, OutputKernel = KernelSpec>;

/// One variant per estimator that takes a precomputed input Gram: those
/// that evaluate the input kernel on train x train and test x train pairs
/// only. Variants are encoded by their index: new ones go at the end, with
/// a format version bump.
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
}

impl GramModel {
    /// The estimator's name (as for feature models).
    pub fn name(&self) -> String {
        match self {
            Self::Iokr(_) => "iokr".into(),
            Self::ReducedRank(_) => "reduced-rank".into(),
            Self::Sketched(m) => m.method().into(),
            Self::Nystroem(_) => "nystroem".into(),
        }
    }

    /// The model as a kernel expansion (decoding, label scores).
    pub fn surrogate(&self) -> &SavedGramSurrogate {
        match self {
            Self::Iokr(m) => m,
            Self::ReducedRank(m) => m,
            Self::Sketched(m) => m,
            Self::Nystroem(m) => m,
        }
    }

    /// Number of training samples: the columns a test x train block must have.
    pub fn n_train(&self) -> usize {
        let rows = match self {
            Self::Iokr(m) => m.x_train(),
            Self::ReducedRank(m) => m.x_train(),
            Self::Sketched(m) => m.x_support(),
            Self::Nystroem(m) => m.anchors(),
        };
        rows.n_train()
    }

    /// The distinct training label sets (the default candidates).
    pub fn candidates(&self) -> &LabelSets {
        match self {
            Self::Iokr(m) => m.atoms(),
            Self::ReducedRank(m) => m.distinct_outputs(),
            Self::Sketched(m) => m.distinct_outputs(),
            Self::Nystroem(m) => m.distinct_outputs(),
        }
    }

    /// `(requested, used)` rank of reduced rank; `None` for the others.
    pub fn ranks(&self) -> Option<(usize, usize)> {
        match self {
            Self::ReducedRank(m) => Some((m.requested_rank(), m.rank())),
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
        }
    }
}
