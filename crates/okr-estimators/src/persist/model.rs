//! [`Model`]: one variant per estimator, as saved in a model file.

use okr_kernels::{Features, KernelSpec, LabelSets, Rows};
use serde::{Deserialize, Serialize};

use super::{
    GramGraphModel, GramModel, GramRankingModel, GramVectorModel, GraphModel, Invalid, RankingModel, Validate,
    VectorModel,
};
use crate::core::KernelExpansion;
use crate::kae::{K2aeOnRows, Kae, Kpca};
use crate::leml::{BinaryRelevance, Cplst, Leml};
use crate::trace_norm::SelfHs;
use crate::trace_norm::masked::MaskedTraceNorm;
use crate::{Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, ScoreModel, SketchedIokr, TraceNorm};

/// A saved kernel-output model seen through its [`KernelExpansion`] (and so
/// its [`SurrogateModel`](crate::SurrogateModel)): what decoders and label
/// scores need, whatever the estimator.
pub type SavedSurrogate = dyn KernelExpansion<Features, LabelSets, InputKernel = KernelSpec, OutputKernel = KernelSpec>;

/// What a model predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// Label sets, decoded from a surrogate in the output RKHS
    /// ([`SurrogateModel`](crate::SurrogateModel)).
    LabelSets,
    /// A score per label ([`ScoreModel`]), thresholded or ranked.
    LabelScores,
    /// Codes of the inputs (autoencoders, kernel PCA).
    Codes,
    /// A score per (user, task) pair (the ranking baselines).
    TaskScores,
    /// Vectors in `R^p`, decoded from a surrogate among candidate vectors.
    Vectors,
    /// Labelled graphs, decoded among candidate graphs.
    Graphs,
    /// Rankings of a fixed set of items, decoded among candidate rankings.
    Rankings,
}

/// Every fitted estimator okr can save, one variant each. The
/// kernel-output estimators are saved on dense or sparse input [`Features`]
/// with [`LabelSets`] outputs and [`KernelSpec`] kernels.
///
/// Variants are encoded by their index: new variants go at the end, and any
/// change bumps [`FORMAT_VERSION`](super::FORMAT_VERSION).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum Model {
    /// IOKR.
    Iokr(Iokr<Features, LabelSets, KernelSpec, KernelSpec>),
    /// Reduced-rank IOKR.
    ReducedRank(ReducedRankIokr<Features, LabelSets, KernelSpec, KernelSpec>),
    /// Kernel dependency estimation.
    Kde(Kde<Features, LabelSets, KernelSpec, KernelSpec>),
    /// SIOKR / ISOKR / SISOKR.
    Sketched(SketchedIokr<Features, LabelSets, KernelSpec, KernelSpec>),
    /// Nystroem kernel ridge regression.
    Nystroem(Nystroem<Features, LabelSets, KernelSpec, KernelSpec>),
    /// Nystroem reduced-rank IOKR.
    NystroemReducedRank(NystroemReducedRank<Features, LabelSets, KernelSpec, KernelSpec>),
    /// Trace-norm regularized surrogate (LR-SELF).
    TraceNorm(TraceNorm<Features, LabelSets, KernelSpec, KernelSpec>),
    /// LEML (sparse inputs).
    Leml(Leml),
    /// Binary relevance (sparse inputs).
    BinaryRelevance(BinaryRelevance),
    /// CPLST (sparse inputs).
    Cplst(Cplst),
    /// Finite kernel autoencoder (dense inputs).
    Kae(Kae),
    /// K2AE with its input kernel and training rows.
    K2ae(K2aeOnRows<Features, KernelSpec>),
    /// SELF + HS ranking baseline (dense user features).
    SelfHs(SelfHs),
    /// Masked multitask trace norm (dense user features).
    MaskedTraceNorm(MaskedTraceNorm),
    /// Uncentred kernel PCA (on Gram matrices).
    Kpca(Kpca),
    /// A kernel-output estimator with vector outputs (format 5).
    Vectors(VectorModel),
    /// A label-set estimator fitted on a precomputed input Gram (format 6):
    /// it keeps no training features, test inputs are test x train Grams.
    Gram(GramModel),
    /// A kernel-output estimator with graph outputs and the WL subtree
    /// output kernel (format 7).
    Graphs(GraphModel),
    /// A kernel-output estimator with ranking outputs and the Kendall or
    /// Mallows output kernel (format 7).
    Rankings(RankingModel),
    /// Vector outputs, fitted on a precomputed input Gram (format 9).
    GramVectors(GramVectorModel),
    /// Graph outputs, fitted on a precomputed input Gram (format 9).
    GramGraphs(GramGraphModel),
    /// Ranking outputs, fitted on a precomputed input Gram (format 9).
    GramRankings(GramRankingModel),
}

impl Model {
    /// The estimator's name, as in result records and `okr fit --estimator`
    /// (`iokr`, `reduced-rank`, `sisokr`, `leml-sq`, ...).
    pub fn name(&self) -> String {
        match self {
            Self::Iokr(_) => "iokr".into(),
            Self::ReducedRank(_) => "reduced-rank".into(),
            Self::Kde(_) => "kde".into(),
            Self::Sketched(m) => m.method().into(),
            Self::Nystroem(_) => "nystroem".into(),
            Self::NystroemReducedRank(_) => "nystroem-reduced-rank".into(),
            Self::TraceNorm(_) => "trace-norm".into(),
            Self::Leml(m) => format!("leml-{}", m.fitted_params().loss().name()),
            Self::BinaryRelevance(_) => "br".into(),
            Self::Cplst(_) => "cplst".into(),
            Self::Kae(_) => "kae".into(),
            Self::K2ae(_) => "k2ae".into(),
            Self::SelfHs(_) => "self-hs".into(),
            Self::MaskedTraceNorm(_) => "masked-trace-norm".into(),
            Self::Kpca(_) => "kpca".into(),
            Self::Vectors(m) => m.name(),
            Self::Graphs(m) => m.name(),
            Self::Rankings(m) => m.name(),
            Self::Gram(m) => m.name(),
            Self::GramVectors(m) => m.name(),
            Self::GramGraphs(m) => m.name(),
            Self::GramRankings(m) => m.name(),
        }
    }

    /// Number of training samples of a model fitted on a precomputed input
    /// Gram (the columns its test x train blocks must have); `None` for
    /// models fitted on features.
    pub fn gram_n_train(&self) -> Option<usize> {
        match self {
            Self::Gram(m) => Some(m.n_train()),
            Self::GramVectors(m) => Some(m.n_train()),
            Self::GramGraphs(m) => Some(m.n_train()),
            Self::GramRankings(m) => Some(m.n_train()),
            _ => None,
        }
    }

    /// The model as a kernel expansion, for the models that predict label
    /// sets through a surrogate ([`OutputKind::LabelSets`]).
    pub fn surrogate(&self) -> Option<&SavedSurrogate> {
        Some(match self {
            Self::Iokr(m) => m,
            Self::ReducedRank(m) => m,
            Self::Kde(m) => m,
            Self::Sketched(m) => m,
            Self::Nystroem(m) => m,
            Self::NystroemReducedRank(m) => m,
            Self::TraceNorm(m) => m,
            _ => return None,
        })
    }

    /// The distinct training label sets of a label-set model (first-occurrence
    /// order): the default candidates of decoding.
    pub fn label_candidates(&self) -> Option<&LabelSets> {
        Some(match self {
            Self::Iokr(m) => m.atoms(),
            Self::ReducedRank(m) => m.distinct_outputs(),
            Self::Kde(m) => m.distinct_outputs(),
            Self::Sketched(m) => m.distinct_outputs(),
            Self::Nystroem(m) => m.distinct_outputs(),
            Self::NystroemReducedRank(m) => m.distinct_outputs(),
            Self::TraceNorm(m) => m.distinct_outputs(),
            Self::Gram(m) => m.candidates(),
            _ => return None,
        })
    }

    /// The model as a kernel expansion on test x train Gram rows, for
    /// models fitted on a precomputed input Gram ([`Model::Gram`]).
    pub fn gram_surrogate(&self) -> Option<&super::SavedGramSurrogate> {
        match self {
            Self::Gram(m) => Some(m.surrogate()),
            _ => None,
        }
    }

    /// `(requested, used)` rank of the low-rank estimators (the used rank is
    /// capped at the numerical rank); `None` for the others.
    pub fn ranks(&self) -> Option<(usize, usize)> {
        use crate::SurrogateModel;
        Some(match self {
            Self::ReducedRank(m) => (m.requested_rank(), m.rank()),
            Self::Kde(m) => (m.requested_rank(), m.rank()),
            Self::Leml(m) => (m.fitted_params().rank(), m.fitted_params().rank()),
            Self::TraceNorm(m) => (m.params_used().rank(), m.n_atoms()),
            Self::NystroemReducedRank(m) => (m.params_used().rank(), m.rank()),
            Self::Vectors(v) => return v.ranks(),
            Self::Graphs(m) => return m.ranks(),
            Self::Rankings(m) => return m.ranks(),
            Self::Gram(m) => return m.ranks(),
            Self::GramVectors(m) => return m.ranks(),
            Self::GramGraphs(m) => return m.ranks(),
            Self::GramRankings(m) => return m.ranks(),
            _ => return None,
        })
    }

    /// What the model predicts.
    pub fn output_kind(&self) -> OutputKind {
        match self {
            Self::Iokr(_)
            | Self::ReducedRank(_)
            | Self::Kde(_)
            | Self::Sketched(_)
            | Self::Nystroem(_)
            | Self::NystroemReducedRank(_)
            | Self::TraceNorm(_)
            | Self::Gram(_) => OutputKind::LabelSets,
            Self::Leml(_) | Self::BinaryRelevance(_) | Self::Cplst(_) => OutputKind::LabelScores,
            Self::Kae(_) | Self::K2ae(_) | Self::Kpca(_) => OutputKind::Codes,
            Self::SelfHs(_) | Self::MaskedTraceNorm(_) => OutputKind::TaskScores,
            Self::Vectors(_) | Self::GramVectors(_) => OutputKind::Vectors,
            Self::Graphs(_) | Self::GramGraphs(_) => OutputKind::Graphs,
            Self::Rankings(_) | Self::GramRankings(_) => OutputKind::Rankings,
        }
    }

    /// Number of input features the model reads; `None` for kernel PCA (on
    /// Gram matrices). A model fitted on a Gram ([`Model::Gram`],
    /// [`Model::GramVectors`], ...) reads test x train Gram rows: its width
    /// is the number of training samples.
    pub fn input_width(&self) -> Option<usize> {
        match self {
            Self::Iokr(m) => m.x_train().feature_dim(),
            Self::ReducedRank(m) => m.x_train().feature_dim(),
            Self::Kde(m) => m.x_train().feature_dim(),
            Self::Sketched(m) => m.x_support().feature_dim(),
            Self::Nystroem(m) => m.anchors().feature_dim(),
            Self::NystroemReducedRank(m) => m.anchors().feature_dim(),
            Self::TraceNorm(m) => m.x_train().feature_dim(),
            Self::Leml(m) => Some(m.w().nrows()),
            Self::BinaryRelevance(m) => Some(m.w().nrows()),
            Self::Cplst(m) => Some(m.z().nrows()),
            Self::Kae(m) => Some(m.n_features()),
            Self::K2ae(m) => m.x_train().feature_dim(),
            Self::SelfHs(m) => Some(m.weights().nrows()),
            Self::MaskedTraceNorm(m) => Some(m.a().nrows()),
            Self::Kpca(_) => None,
            Self::Vectors(m) => m.input_width(),
            Self::Graphs(m) => m.input_width(),
            Self::Rankings(m) => m.input_width(),
            Self::Gram(m) => Some(m.n_train()),
            Self::GramVectors(m) => Some(m.n_train()),
            Self::GramGraphs(m) => Some(m.n_train()),
            Self::GramRankings(m) => Some(m.n_train()),
        }
    }

    /// Number of labels (tasks for the ranking baselines, ranked items for
    /// ranking outputs) the model predicts; `None` for the models that
    /// predict codes or graphs.
    pub fn output_width(&self) -> Option<usize> {
        match self {
            Self::Iokr(m) => Some(m.atoms().n_labels()),
            Self::ReducedRank(m) => Some(m.distinct_outputs().n_labels()),
            Self::Kde(m) => Some(m.distinct_outputs().n_labels()),
            Self::Sketched(m) => Some(m.distinct_outputs().n_labels()),
            Self::Nystroem(m) => Some(m.distinct_outputs().n_labels()),
            Self::NystroemReducedRank(m) => Some(m.distinct_outputs().n_labels()),
            Self::TraceNorm(m) => Some(m.distinct_outputs().n_labels()),
            Self::Leml(m) => Some(m.n_labels()),
            Self::BinaryRelevance(m) => Some(m.n_labels()),
            Self::Cplst(m) => Some(m.n_labels()),
            Self::Kae(_) | Self::K2ae(_) | Self::Kpca(_) => None,
            Self::SelfHs(m) => Some(m.weights().ncols()),
            Self::MaskedTraceNorm(m) => Some(m.b().nrows()),
            Self::Vectors(m) => Some(m.output_width()),
            Self::Graphs(_) => None,
            Self::Rankings(m) => Some(m.candidates().n_items()),
            Self::Gram(m) => Some(m.candidates().n_labels()),
            Self::GramVectors(m) => Some(m.output_width()),
            Self::GramGraphs(_) => None,
            Self::GramRankings(m) => Some(m.candidates().n_items()),
        }
    }
}

impl Validate for Model {
    fn validate(&self) -> Result<(), Invalid> {
        match self {
            Self::Iokr(m) => m.validate(),
            Self::ReducedRank(m) => m.validate(),
            Self::Kde(m) => m.validate(),
            Self::Sketched(m) => m.validate(),
            Self::Nystroem(m) => m.validate(),
            Self::NystroemReducedRank(m) => m.validate(),
            Self::TraceNorm(m) => m.validate(),
            Self::Leml(m) => m.validate(),
            Self::BinaryRelevance(m) => m.validate(),
            Self::Cplst(m) => m.validate(),
            Self::Kae(m) => m.validate(),
            Self::K2ae(m) => m.validate(),
            Self::SelfHs(m) => m.validate(),
            Self::MaskedTraceNorm(m) => m.validate(),
            Self::Kpca(m) => m.validate(),
            Self::Vectors(m) => m.validate(),
            Self::Graphs(m) => m.validate(),
            Self::Rankings(m) => m.validate(),
            Self::Gram(m) => m.validate(),
            Self::GramVectors(m) => m.validate(),
            Self::GramGraphs(m) => m.validate(),
            Self::GramRankings(m) => m.validate(),
        }
    }
}
