//! LEML (Yu et al. 2014), a label-score model: `okr._okr.fit_leml` and the
//! fitted `ScoreModel`. LEML's design matrix is sparse (CSR, with its
//! transpose): dense inputs are compressed into one CSR copy, at fit and at
//! prediction.

use std::borrow::Cow;

use okr_estimators::Fit;
use okr_estimators::ScoreModel as _;
use okr_estimators::leml::{Leml, Loss, Targets};
use okr_kernels::CsrRows;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{self, Inputs};
use crate::errors::to_py;
use crate::params::Params;
use crate::surrogate::FromInputs;
use crate::threads;

/// A fitted LEML model.
#[pyclass(module = "okr._okr", name = "ScoreModel", frozen)]
pub struct ScoreModel {
    model: Leml,
    n_features: usize,
    n_labels: usize,
}

fn sparse(x: &Inputs) -> PyResult<Cow<'_, CsrRows>> {
    CsrRows::from_inputs(x)
}

/// Fits LEML (`rank`, `lam`, `loss` in sq / lr / sh, `max_iter`, `seed`) on
/// `x` and the CSR label indicator `y`.
#[pyfunction]
#[pyo3(signature = (params, x, y, n_jobs=None))]
pub fn fit_leml(
    py: Python<'_>,
    params: &Bound<'_, PyDict>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    n_jobs: Option<i64>,
) -> PyResult<ScoreModel> {
    let p = Params(params);
    let loss_name = p.string("loss")?.unwrap_or_else(|| "sq".into());
    let loss = Loss::from_name(&loss_name).ok_or_else(|| {
        PyValueError::new_err(format!("invalid parameter loss = {loss_name:?}: expected sq, lr or sh"))
    })?;
    let params = Leml::params()
        .rank(p.usize_or("rank", 10)?)
        .lambda(p.f64_or("lam", 1.0)?)
        .loss(loss)
        .max_iter(p.usize_or("max_iter", 10)?)
        .seed(p.seed()?);
    let x = convert::inputs(x)?;
    let y = convert::label_sets(y)?;
    let n_features = x.n_features();
    let model = py.detach(|| {
        threads::run(n_jobs, || -> PyResult<Leml> {
            params.fit(sparse(&x)?.as_ref(), Targets::Full(&y)).map_err(to_py)
        })
    })??;
    Ok(ScoreModel { model, n_features, n_labels: y.n_labels() })
}

#[pymethods]
impl ScoreModel {
    /// Label scores `(n, n_labels)`.
    #[pyo3(signature = (x, n_jobs=None))]
    fn scores<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
        let x = convert::inputs(x)?;
        let s = py.detach(|| {
            threads::run(n_jobs, || -> PyResult<_> { self.model.scores(sparse(&x)?.as_ref()).map_err(to_py) })
        })??;
        Ok(convert::to_numpy(py, s.as_ref()))
    }

    /// Scores above it predict the label (the midpoint of the training encoding).
    #[getter]
    fn threshold(&self) -> f64 {
        self.model.decision_threshold()
    }

    /// Number of input features.
    #[getter]
    fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of labels.
    #[getter]
    fn n_labels(&self) -> usize {
        self.n_labels
    }

    /// Number of alternating iterations run.
    #[getter]
    fn n_iter(&self) -> usize {
        self.model.history().len()
    }

    /// The rank of the factorization.
    #[getter]
    fn rank(&self) -> usize {
        self.model.fitted_params().rank()
    }
}
