//! What the Python estimators need from a fitted kernel-output model, for
//! label-set and vector outputs alike: the model is an
//! [`okr_estimators::persist::Model`] (so that it pickles as okr's model
//! bytes), seen here through its kernel expansion and its candidates.

use faer::{Mat, Par};
use okr_decode::{CandidateDecoder, Decoded, Precision};
use okr_estimators::SurrogateModel;
use okr_estimators::core::KernelExpansion;
use okr_estimators::persist::{
    Model, OutputModel, SavedGramSurrogate, SavedOutputSurrogate, SavedSurrogate, SavedVectorSurrogate,
};
use okr_kernels::{DenseRows, Features, GramRows, KernelSpec, LabelSets, Precomputed, Rows};
use pyo3::PyResult;
use pyo3::exceptions::PyValueError;

use crate::errors::to_py;

/// Output containers the Python package fits on, and how their fitted
/// models are saved.
pub trait SavedOutputs: Rows + Sized + 'static {
    /// The output rows as a matrix `(n_rows, dim)` (label sets as 0/1 indicators).
    fn to_matrix(&self) -> Mat<f64>;
    /// The fitted estimator as a saved model.
    fn saved(m: OutputModel<Self, KernelSpec>) -> Model;
}

impl SavedOutputs for LabelSets {
    fn to_matrix(&self) -> Mat<f64> {
        self.to_indicator()
    }
    fn saved(m: OutputModel<Self, KernelSpec>) -> Model {
        Model::from(m)
    }
}

impl SavedOutputs for DenseRows {
    fn to_matrix(&self) -> Mat<f64> {
        self.as_mat().to_owned()
    }
    fn saved(m: OutputModel<Self, KernelSpec>) -> Model {
        Model::Vectors(m)
    }
}

/// A saved kernel-output model with its candidates (the distinct training
/// outputs, first-occurrence order).
pub enum Expansion<'a> {
    /// Label-set outputs.
    Labels(&'a SavedSurrogate, &'a LabelSets),
    /// Vector outputs.
    Vectors(&'a SavedVectorSurrogate, &'a DenseRows),
    /// Label sets, fitted on a precomputed Gram: inputs are rows of kernel
    /// values against the training samples (scikit-learn's
    /// `kernel="precomputed"`).
    Gram(&'a SavedGramSurrogate, &'a LabelSets, usize),
    /// Vectors, fitted on a precomputed Gram.
    GramVectors(&'a SavedOutputSurrogate<DenseRows, KernelSpec, GramRows, Precomputed>, &'a DenseRows, usize),
}

/// Rows of kernel values `K(test, train)` as a model fitted on a Gram reads
/// them (`x` as given to `predict`: a dense `(n_test, n_train)` array).
pub fn gram_rows(x: &Features, n_train: usize) -> PyResult<GramRows> {
    let Features::Dense(d) = x else {
        return Err(PyValueError::new_err(
            "a model fitted on a precomputed Gram takes a dense K(test, train) array, not a sparse matrix",
        ));
    };
    if d.n_features() != n_train {
        return Err(PyValueError::new_err(format!(
            "K(test, train) has {} columns, the model was fitted on a Gram of {n_train} training samples",
            d.n_features()
        )));
    }
    GramRows::test(d.as_mat().to_owned(), None).map_err(to_py)
}

impl<'a> Expansion<'a> {
    /// The expansion of a saved model; an error for models without one.
    pub fn of(model: &'a Model) -> PyResult<Self> {
        if let Model::Vectors(v) = model {
            return Ok(Self::Vectors(v.surrogate(), v.candidates()));
        }
        if let Model::Gram(g) = model {
            return Ok(Self::Gram(g.surrogate(), g.candidates(), g.n_train()));
        }
        if let Model::GramVectors(v) = model {
            return Ok(Self::GramVectors(v.surrogate(), v.candidates(), v.n_train()));
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
            Self::Gram(m, c, n) => decoder.decode(*m, &gram_rows(x, *n)?, *c),
            Self::GramVectors(m, c, n) => decoder.decode(*m, &gram_rows(x, *n)?, *c),
        }
        .map_err(to_py)
    }

    /// `h(x)` read with a linear output kernel: `C B Y` `(n_test, dim)`
    /// (label scores for label sets, the kernel ridge prediction for vectors).
    pub fn output_scores(&self, x: &Features) -> PyResult<Mat<f64>> {
        match self {
            Self::Labels(m, _) => linear_read(*m, x),
            Self::Vectors(m, _) => linear_read(*m, x),
            Self::Gram(m, _, n) => linear_read(*m, &gram_rows(x, *n)?),
            Self::GramVectors(m, _, n) => linear_read(*m, &gram_rows(x, *n)?),
        }
    }

    /// The candidates as a matrix `(n_candidates, dim)`.
    pub fn candidates(&self) -> Mat<f64> {
        match self {
            Self::Labels(_, c) => c.to_matrix(),
            Self::Vectors(_, c) => c.to_matrix(),
            Self::Gram(_, c, _) => c.to_matrix(),
            Self::GramVectors(_, c, _) => c.to_matrix(),
        }
    }

    /// Number of atoms (the width of the coefficients).
    pub fn n_atoms(&self) -> usize {
        match self {
            Self::Labels(m, _) => m.n_atoms(),
            Self::Vectors(m, _) => m.n_atoms(),
            Self::Gram(m, _, _) => m.n_atoms(),
            Self::GramVectors(m, _, _) => m.n_atoms(),
        }
    }
}

/// `C B Y` for a model whose atoms are `B` (`None`: identity) over outputs `Y`.
fn linear_read<M, X, Y>(m: &M, x: &X) -> PyResult<Mat<f64>>
where
    X: Rows,
    M: KernelExpansion<X, Y> + ?Sized,
    Y: SavedOutputs,
{
    let mut coef = Mat::zeros(x.n_rows(), m.n_atoms());
    m.coefficients_into(x, coef.as_mut(), Par::rayon(0)).map_err(to_py)?;
    let atoms = m.atoms();
    Ok(atoms.linear_read(coef.as_ref(), atoms.outputs.to_matrix().as_ref()))
}
