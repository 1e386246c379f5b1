//! The map-reduce Nystroem fit for `okr.dask` (see
//! `okr_estimators::nystroem::NystroemStats`): the driver draws the anchors
//! (`nystroem_anchor_indices`), every partition computes its statistics
//! (`nystroem_partition_stats`, bytes), statistics merge by summing
//! (`nystroem_merge`), and the driver finalizes (`nystroem_finalize`, a
//! fitted `Model`). Statistics travel as postcard bytes and are validated
//! when read back. Every computation releases the GIL.

use okr_estimators::ParamGuard;
use okr_estimators::nystroem::{Anchors, ConcatRows, NystroemStats, NystroemValidParams};
use okr_estimators::persist::{ModelInfo, SavedModel};
use okr_estimators::{Nystroem, persist::Model as SavedEstimator};
use okr_kernels::{DenseRows, Features, KernelSpec, LabelSets};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::convert::{self, Outputs};
use crate::errors::to_py;
use crate::model::Model;
use crate::params::{KernelChoice, Params};
use crate::surrogate::SavedOutputs;
use crate::threads;

/// The validated Nystroem parameters of the Python estimator's `params`
/// (kernel widths must be given: the single-machine defaults look at all
/// of X or Y at once). `n` caps the anchors as the single-machine fit does.
fn nystroem_params(
    p: &Params<'_, '_>,
    x_like: &Features,
    y: &Outputs,
    n: usize,
) -> PyResult<NystroemValidParams<KernelSpec, KernelSpec>> {
    let kx = KernelChoice::input(p)?;
    let ky = KernelChoice::output(p)?;
    if p.f64("gamma")?.is_none() || p.f64("output_gamma")?.is_none() {
        return Err(PyValueError::new_err(
            "okr.dask needs gamma and output_gamma (their defaults are medians over the whole data)",
        ));
    }
    let anchors = Anchors::Uniform(p.usize_or("n_components", 1000)?.min(n.max(1)));
    Nystroem::params(kx.build_input(x_like)?, ky.build_output(y)?)
        .lambda(p.f64_or("lam", 1e-3)?)
        .anchors(anchors)
        .seed(p.seed()?)
        .check()
        .map_err(to_py)
}

fn to_bytes<T: Serialize>(py: Python<'_>, v: &T) -> PyResult<Py<PyBytes>> {
    let b = postcard::to_stdvec(v).map_err(|e| PyValueError::new_err(format!("cannot encode statistics: {e}")))?;
    Ok(PyBytes::new(py, &b).unbind())
}

fn from_bytes<Y: DeserializeOwned + ConcatRows>(b: &[u8]) -> PyResult<NystroemStats<Y>> {
    let s: NystroemStats<Y> =
        postcard::from_bytes(b).map_err(|e| PyValueError::new_err(format!("corrupt okr statistics: {e}")))?;
    s.validate().map_err(to_py)?;
    Ok(s)
}

/// The anchors' row indices among `n` rows (the single-machine draw).
#[pyfunction]
pub fn nystroem_anchor_indices(params: &Bound<'_, PyDict>, n: usize) -> PyResult<Vec<usize>> {
    let p = Params(params);
    let m = p.usize_or("n_components", 1000)?.min(n.max(1));
    let v = Nystroem::params(KernelSpec::from(okr_kernels::Linear), KernelSpec::from(okr_kernels::Linear))
        .anchors(Anchors::Uniform(m))
        .seed(p.seed()?)
        .check()
        .map_err(to_py)?;
    v.anchor_indices(n).map_err(to_py)
}

/// One partition's statistics: `anchors` (rows), `anchor_indices`, the
/// partition `x`, `y` (`y_kind` labels or vectors), `n` the total rows.
#[pyfunction]
#[pyo3(signature = (params, anchors, anchor_indices, x, y, y_kind, n, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub fn nystroem_partition_stats(
    py: Python<'_>,
    params: &Bound<'_, PyDict>,
    anchors: &Bound<'_, PyAny>,
    anchor_indices: Vec<usize>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    y_kind: &str,
    n: usize,
    n_jobs: Option<i64>,
) -> PyResult<Py<PyBytes>> {
    let anchors = convert::inputs(anchors)?;
    let x = convert::inputs(x)?;
    let y = convert::outputs(y, y_kind)?;
    let p = params_of(params, &anchors, &y, n)?;
    match &y {
        Outputs::Labels(y) => {
            let s = py.detach(|| threads::run(n_jobs, || p.partition_stats(&anchors, &anchor_indices, &x, y)))?;
            to_bytes(py, &s.map_err(to_py)?)
        }
        Outputs::Vectors(y) => {
            let s = py.detach(|| threads::run(n_jobs, || p.partition_stats(&anchors, &anchor_indices, &x, y)))?;
            to_bytes(py, &s.map_err(to_py)?)
        }
    }
}

fn params_of(
    params: &Bound<'_, PyDict>,
    anchors: &Features,
    y: &Outputs,
    n: usize,
) -> PyResult<NystroemValidParams<KernelSpec, KernelSpec>> {
    nystroem_params(&Params(params), anchors, y, n)
}

fn merge_typed<Y: DeserializeOwned + Serialize + ConcatRows>(
    py: Python<'_>,
    a: &[u8],
    b: &[u8],
) -> PyResult<Py<PyBytes>> {
    let (a, b) = (from_bytes::<Y>(a)?, from_bytes::<Y>(b)?);
    let merged = py.detach(|| a.merge(b)).map_err(to_py)?;
    to_bytes(py, &merged)
}

/// Two statistics summed (`b`'s rows after `a`'s).
#[pyfunction]
pub fn nystroem_merge(py: Python<'_>, a: &[u8], b: &[u8], y_kind: &str) -> PyResult<Py<PyBytes>> {
    match y_kind {
        "labels" => merge_typed::<LabelSets>(py, a, b),
        "vectors" => merge_typed::<DenseRows>(py, a, b),
        other => Err(PyValueError::new_err(format!("unknown output kind {other:?}"))),
    }
}

fn finalize_typed<Y>(
    py: Python<'_>,
    p: &NystroemValidParams<KernelSpec, KernelSpec>,
    anchors: Features,
    stats: &[u8],
    n_jobs: Option<i64>,
    seed: u64,
    output_dim: usize,
) -> PyResult<Model>
where
    Y: DeserializeOwned + ConcatRows + SavedOutputs,
{
    let stats = from_bytes::<Y>(stats)?;
    let n_features = anchors.n_features();
    let start = std::time::Instant::now();
    let fitted = py.detach(|| threads::run(n_jobs, || p.finalize(anchors, stats)))?.map_err(to_py)?;
    let mut info = ModelInfo::new(n_features, output_dim);
    info.seed = seed;
    info.fit_seconds = start.elapsed().as_secs_f64();
    let model: SavedEstimator = Y::nystroem(fitted);
    Model::new(SavedModel::new(model, info).map_err(to_py)?)
}

/// The fitted model from merged statistics.
#[pyfunction]
#[pyo3(signature = (params, anchors, stats, y_kind, output_dim, n, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub fn nystroem_finalize(
    py: Python<'_>,
    params: &Bound<'_, PyDict>,
    anchors: &Bound<'_, PyAny>,
    stats: &[u8],
    y_kind: &str,
    output_dim: usize,
    n: usize,
    n_jobs: Option<i64>,
) -> PyResult<Model> {
    let anchors = convert::inputs(anchors)?;
    let seed = Params(params).seed()?;
    // The output kernel needs only its width here (given).
    let y = match y_kind {
        "labels" => Outputs::Labels(LabelSets::new(output_dim, vec![Vec::new()]).map_err(to_py)?),
        "vectors" => Outputs::Vectors(DenseRows::new(faer::Mat::zeros(1, output_dim)).map_err(to_py)?),
        other => return Err(PyValueError::new_err(format!("unknown output kind {other:?}"))),
    };
    let p = params_of(params, &anchors, &y, n)?;
    match y_kind {
        "labels" => finalize_typed::<LabelSets>(py, &p, anchors, stats, n_jobs, seed, output_dim),
        _ => finalize_typed::<DenseRows>(py, &p, anchors, stats, n_jobs, seed, output_dim),
    }
}
