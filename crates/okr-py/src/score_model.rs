//! LEML (Yu et al. 2014), a label-score model: `okr._okr.fit_leml` and the
//! fitted `ScoreModel`. LEML's design matrix is sparse (CSR, with its
//! transpose): dense inputs are compressed into one CSR copy, at fit and at
//! prediction.

use okr_estimators::ScoreModel as _;
use okr_estimators::leml::Leml;
use okr_estimators::persist::{Model, ModelInfo, SavedModel};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert;
use crate::errors::{guard, to_py};
use crate::threads::{self, NJobs};

/// A fitted LEML model.
#[pyclass(module = "okr._okr", name = "ScoreModel", frozen)]
pub struct ScoreModel {
    saved: SavedModel,
}

impl ScoreModel {
    /// A checked LEML model.
    fn new(saved: SavedModel) -> PyResult<Self> {
        match &saved.model {
            Model::Leml(_) => Ok(Self { saved }),
            other => Err(PyValueError::new_err(format!("expected a LEML model, got a {} model", other.name()))),
        }
    }

    fn leml(&self) -> &Leml {
        match &self.saved.model {
            Model::Leml(m) => m,
            _ => unreachable!("checked in ScoreModel::new"),
        }
    }
}

/// Fits the LEML `recipe` (JSON, built by the Python layer from
/// `get_params`; okr's recipe layer resolves every default) on `x` and the
/// CSR label indicator `y`. Returns the model and the library's warnings (a
/// rank capped at the label count).
#[pyfunction]
/// `previous` (a LEML model fitted on data of the same shape) is continued
/// for the recipe's `max_iter` more iterations (`warm_start`).
/// `verbose` logs the iterations (see `progress`).
#[pyo3(signature = (recipe, x, y, n_jobs=None, previous=None, verbose=0))]
pub fn fit_leml(
    py: Python<'_>,
    recipe: &str,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    n_jobs: Option<NJobs>,
    previous: Option<PyRef<'_, ScoreModel>>,
    verbose: usize,
) -> PyResult<(ScoreModel, Vec<String>)> {
    let previous = previous.as_deref().map(|m| &m.saved.model);
    let observer = crate::progress::logger(py, verbose)?;
    guard(|| {
        let recipe = okr::Recipe::from_json(recipe).map_err(to_py)?;
        let x = convert::inputs(x)?;
        let y = convert::label_sets(y)?;
        let fitted = threads::run(py, n_jobs, || {
            let y = okr::TrainOutputs::Labels(&y);
            crate::progress::observe(observer, || match previous {
                Some(p) => okr::fit_from(&recipe, p, &x, &y),
                None => okr::fit(&recipe, &x, &y),
            })
        })?
        .map_err(to_py)?;
        let warnings = fitted.warnings.clone();
        let saved = fitted.into_saved(ModelInfo::new(x.n_features(), y.n_labels())).map_err(to_py)?;
        Ok((ScoreModel::new(saved)?, warnings))
    })
}

#[pymethods]
impl ScoreModel {
    /// Label scores `(n, n_labels)`.
    #[pyo3(signature = (x, n_jobs=None))]
    fn scores<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<NJobs>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
        guard(|| {
            let x = convert::inputs(x)?;
            let s = threads::run(py, n_jobs, || -> PyResult<_> {
                self.leml().scores(x.sparse_rows().map_err(to_py)?.as_ref()).map_err(to_py)
            })??;
            Ok(convert::to_numpy(py, s.as_ref()))
        })
    }

    /// Scores above it predict the label (the midpoint of the training encoding).
    #[getter]
    fn threshold(&self) -> PyResult<f64> {
        guard(|| Ok(self.leml().decision_threshold()))
    }

    /// The recipe the model was fitted from (JSON), or `None` (kernel PCA,
    /// models of earlier versions).
    #[getter]
    fn recipe(&self) -> Option<String> {
        self.saved.recipe().map(str::to_string)
    }

    /// Number of input features.
    #[getter]
    fn n_features(&self) -> PyResult<usize> {
        guard(|| Ok(self.saved.info.n_features))
    }

    /// Number of labels.
    #[getter]
    fn n_labels(&self) -> PyResult<usize> {
        guard(|| Ok(self.saved.info.n_labels))
    }

    /// okr's model bytes (versioned, checksummed); what pickling stores.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            let bytes = py.detach(|| self.saved.to_bytes()).map_err(to_py)?;
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// A LEML model from okr's model bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        guard(|| {
            let saved = py.detach(|| SavedModel::from_bytes(data)).map_err(to_py)?;
            Self::new(saved)
        })
    }

    /// Number of alternating iterations run.
    #[getter]
    fn n_iter(&self) -> PyResult<usize> {
        guard(|| Ok(self.leml().history().len()))
    }

    /// The rank of the factorization.
    #[getter]
    fn rank(&self) -> PyResult<usize> {
        guard(|| Ok(self.leml().fitted_params().rank()))
    }
}
