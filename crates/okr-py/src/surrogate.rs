//! What the Python estimators need from a fitted kernel-output model, for
//! label-set and vector outputs alike: the model is an
//! [`okr_estimators::persist::Model`] (so that it pickles as okr's model
//! bytes), seen here through its kernel expansion and its candidates.

use faer::{Mat, Par};
use okr_decode::{CandidateDecoder, Decoded, Precision};
use okr_estimators::core::KernelExpansion;
use okr_estimators::persist::{Model, SavedSurrogate, SavedVectorSurrogate, VectorModel};
use okr_estimators::{
    Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNorm,
};
use okr_kernels::{DenseRows, Features, KernelSpec, LabelSets, Rows};
use pyo3::PyResult;
use pyo3::exceptions::PyValueError;

use crate::errors::to_py;

/// Output containers the Python package fits on, and how their fitted
/// models are saved.
pub trait SavedOutputs: Rows + Sized + 'static {
    /// The output rows as a matrix `(n_rows, dim)` (label sets as 0/1 indicators).
    fn to_matrix(&self) -> Mat<f64>;
    /// IOKR as a saved model.
    fn iokr(m: Iokr<Features, Self, KernelSpec, KernelSpec>) -> Model;
    /// Reduced-rank IOKR as a saved model.
    fn reduced_rank(m: ReducedRankIokr<Features, Self, KernelSpec, KernelSpec>) -> Model;
    /// KDE as a saved model.
    fn kde(m: Kde<Features, Self, KernelSpec, KernelSpec>) -> Model;
    /// The sketched estimators as a saved model.
    fn sketched(m: SketchedIokr<Features, Self, KernelSpec, KernelSpec>) -> Model;
    /// Nystroem KRR as a saved model.
    fn nystroem(m: Nystroem<Features, Self, KernelSpec, KernelSpec>) -> Model;
    /// Nystroem reduced rank as a saved model.
    fn nystroem_rr(m: NystroemReducedRank<Features, Self, KernelSpec, KernelSpec>) -> Model;
    /// The trace-norm surrogate as a saved model.
    fn trace_norm(m: TraceNorm<Features, Self, KernelSpec, KernelSpec>) -> Model;
}

impl SavedOutputs for LabelSets {
    fn to_matrix(&self) -> Mat<f64> {
        self.to_indicator()
    }
    fn iokr(m: Iokr<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Iokr(m)
    }
    fn reduced_rank(m: ReducedRankIokr<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::ReducedRank(m)
    }
    fn kde(m: Kde<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Kde(m)
    }
    fn sketched(m: SketchedIokr<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Sketched(m)
    }
    fn nystroem(m: Nystroem<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Nystroem(m)
    }
    fn nystroem_rr(m: NystroemReducedRank<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::NystroemReducedRank(m)
    }
    fn trace_norm(m: TraceNorm<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::TraceNorm(m)
    }
}

impl SavedOutputs for DenseRows {
    fn to_matrix(&self) -> Mat<f64> {
        self.as_mat().to_owned()
    }
    fn iokr(m: Iokr<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Vectors(VectorModel::Iokr(m))
    }
    fn reduced_rank(m: ReducedRankIokr<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Vectors(VectorModel::ReducedRank(m))
    }
    fn kde(m: Kde<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Vectors(VectorModel::Kde(m))
    }
    fn sketched(m: SketchedIokr<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Vectors(VectorModel::Sketched(m))
    }
    fn nystroem(m: Nystroem<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Vectors(VectorModel::Nystroem(m))
    }
    fn nystroem_rr(m: NystroemReducedRank<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Vectors(VectorModel::NystroemReducedRank(m))
    }
    fn trace_norm(m: TraceNorm<Features, Self, KernelSpec, KernelSpec>) -> Model {
        Model::Vectors(VectorModel::TraceNorm(m))
    }
}

/// A saved kernel-output model with its candidates (the distinct training
/// outputs, first-occurrence order).
pub enum Expansion<'a> {
    /// Label-set outputs.
    Labels(&'a SavedSurrogate, &'a LabelSets),
    /// Vector outputs.
    Vectors(&'a SavedVectorSurrogate, &'a DenseRows),
}

impl<'a> Expansion<'a> {
    /// The expansion of a saved model; an error for models without one.
    pub fn of(model: &'a Model) -> PyResult<Self> {
        if let Model::Vectors(v) = model {
            return Ok(Self::Vectors(v.surrogate(), v.candidates()));
        }
        match (model.surrogate(), model.label_candidates()) {
            (Some(s), Some(c)) => Ok(Self::Labels(s, c)),
            _ => Err(PyValueError::new_err(format!("a {} model has no candidates to decode", model.name()))),
        }
    }

    /// Top-`k` candidates per test row (best first) with their scores
    /// `k(c, c) - 2 <h(x), psi(c)>` (lower is better).
    pub fn decode(&self, x: &Features, k: usize, precision: Precision) -> PyResult<Decoded> {
        let decoder = CandidateDecoder::new().top_k(k).precision(precision);
        match self {
            Self::Labels(m, c) => decoder.decode(*m, x, *c),
            Self::Vectors(m, c) => decoder.decode(*m, x, *c),
        }
        .map_err(to_py)
    }

    /// `h(x)` read with a linear output kernel: `C B Y` `(n_test, dim)`
    /// (label scores for label sets, the kernel ridge prediction for vectors).
    pub fn output_scores(&self, x: &Features) -> PyResult<Mat<f64>> {
        match self {
            Self::Labels(m, _) => linear_read(*m, x),
            Self::Vectors(m, _) => linear_read(*m, x),
        }
    }

    /// The candidates as a matrix `(n_candidates, dim)`.
    pub fn candidates(&self) -> Mat<f64> {
        match self {
            Self::Labels(_, c) => c.to_matrix(),
            Self::Vectors(_, c) => c.to_matrix(),
        }
    }

    /// Number of atoms (the width of the coefficients).
    pub fn n_atoms(&self) -> usize {
        match self {
            Self::Labels(m, _) => m.n_atoms(),
            Self::Vectors(m, _) => m.n_atoms(),
        }
    }
}

/// `C B Y` for a model whose atoms are `B` (`None`: identity) over outputs `Y`.
fn linear_read<M, Y>(m: &M, x: &Features) -> PyResult<Mat<f64>>
where
    M: KernelExpansion<Features, Y> + ?Sized,
    Y: SavedOutputs,
{
    let mut coef = Mat::zeros(x.n_rows(), m.n_atoms());
    m.coefficients_into(x, coef.as_mut(), Par::rayon(0)).map_err(to_py)?;
    let atoms = m.atoms();
    let outputs = atoms.outputs.to_matrix();
    Ok(match atoms.weights {
        None => &coef * &outputs,
        Some(b) => &coef * (b * &outputs),
    })
}
