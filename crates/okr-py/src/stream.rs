//! The row-partitioned fits for `okr.dask` (see `okr_estimators::partition`):
//! Nystroem KRR (`nystroem`), Nystroem reduced rank (`nystroem_rr`) and
//! SIOKR / SISOKR (`sketched` with an input sketch). The driver lists the rows the plan needs (`stream_plan_rows`),
//! gathers them and builds the plan (`stream_plan`, bytes shipped to the
//! workers once); every partition computes its statistics
//! (`stream_statistics`, bytes); statistics merge by summing
//! (`stream_merge`); the driver finalizes (`stream_finalize`, a fitted
//! `Model`). Plans and statistics travel as postcard bytes and are validated
//! when read back. Every computation releases the GIL.
//!
//! The bytes are handed to Python as `numpy.uint8` arrays, not `bytes`:
//! pickle protocol 5 ships an array's memory out of band, so Dask moves
//! plans and statistics (`m^2` doubles) without the in-band copies it makes
//! of a `bytes` object.

use numpy::{PyArray1, PyReadonlyArray1};
use okr_estimators::partition::{
    ConcatRows, NystroemPlan, NystroemReducedRankPlan, PartitionPlan, PartitionStats, PlanRows, SampledRows,
    SketchedPlan,
};
use okr_estimators::persist::{EstimatorSpec, Model as SavedEstimator, ModelInfo, OutputModel, SavedModel};
use okr_estimators::{Nystroem, NystroemReducedRank, ParamGuard, SketchedIokr};
use okr_kernels::{DenseRows, Features, Kernel, KernelSpec, LabelSets};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::convert::{self, Outputs};
use crate::errors::{guard, to_py};
use crate::model::Model;
use crate::surrogate::SavedOutputs;
use crate::threads::{self, NJobs};

/// A plan of either estimator, with what the fitted model records.
#[derive(Serialize, Deserialize)]
#[serde(bound(serialize = "Y: Serialize", deserialize = "Y: DeserializeOwned"))]
struct Plan<Y> {
    estimator: AnyPlan<Y>,
    n_features: usize,
    output_dim: usize,
    seed: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(bound(serialize = "Y: Serialize", deserialize = "Y: DeserializeOwned"))]
#[allow(clippy::large_enum_variant)] // one plan per fit
enum AnyPlan<Y> {
    Nystroem(NystroemPlan<Features, KernelSpec, KernelSpec>),
    Sketched(SketchedPlan<Features, Y, KernelSpec, KernelSpec>),
    NystroemReducedRank(NystroemReducedRankPlan<Features, Y, KernelSpec, KernelSpec>),
}

/// Output containers the partitioned fits take.
trait StreamOutputs: SavedOutputs + ConcatRows + Serialize + DeserializeOwned {}
impl StreamOutputs for LabelSets {}
impl StreamOutputs for DenseRows {}

fn bad_kind(kind: &str) -> PyErr {
    PyValueError::new_err(format!("unknown output kind {kind:?}: expected labels or vectors"))
}

/// Encoded bytes of okr's plans and statistics as seen from Python.
type Encoded = Py<PyArray1<u8>>;

fn encode<T: Serialize>(py: Python<'_>, v: &T) -> PyResult<Encoded> {
    let b = postcard::to_stdvec(v).map_err(|e| PyValueError::new_err(format!("cannot encode: {e}")))?;
    Ok(PyArray1::from_vec(py, b).unbind())
}

/// The bytes of an encoded plan or statistics (a contiguous `uint8` array).
fn bytes_of<'a>(a: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    a.as_slice().map_err(|_| PyValueError::new_err("okr plans and statistics are contiguous uint8 arrays"))
}

fn decode_plan<Y: StreamOutputs>(b: &[u8]) -> PyResult<Plan<Y>> {
    let p: Plan<Y> = postcard::from_bytes(b).map_err(|e| PyValueError::new_err(format!("corrupt okr plan: {e}")))?;
    match &p.estimator {
        AnyPlan::Nystroem(n) => n.validate(),
        AnyPlan::Sketched(s) => s.validate(),
        AnyPlan::NystroemReducedRank(r) => r.validate(),
    }
    .map_err(to_py)?;
    Ok(p)
}

fn decode_stats<Y: StreamOutputs>(b: &[u8]) -> PyResult<PartitionStats<Y>> {
    let s: PartitionStats<Y> =
        postcard::from_bytes(b).map_err(|e| PyValueError::new_err(format!("corrupt okr statistics: {e}")))?;
    s.validate().map_err(to_py)?;
    Ok(s)
}

/// Validated parameters of one of the estimators (kernels built on the
/// gathered rows: the widths must be given).
enum Params2 {
    Nystroem(okr_estimators::NystroemValidParams<KernelSpec, KernelSpec>),
    Sketched(okr_estimators::SketchedIokrValidParams<KernelSpec, KernelSpec>),
    NystroemReducedRank(okr_estimators::NystroemReducedRankValidParams<KernelSpec, KernelSpec>),
}

/// The validated parameters of `recipe` (JSON from the Python layer; every
/// default, cap and check is okr's recipe layer's) for `n` rows. The kernels
/// are built on the gathered rows only, so their widths must be given.
fn params_for(recipe: &str, x: &Features, y: &Outputs, n: usize) -> PyResult<Params2> {
    let recipe = okr::Recipe::from_json(recipe).map_err(to_py)?;
    recipe.check().map_err(to_py)?;
    let okr::InputRecipe::Features { kernel, .. } = &recipe.input else {
        return Err(PyValueError::new_err("okr.dask fits feature inputs with one input kernel"));
    };
    let output = recipe.output.kernel_or_default();
    let missing = |k: &okr::KernelRecipe| k.has_gaussian_width() && k.gamma.is_none() && k.sigma2.is_none();
    if missing(kernel) || missing(&output) {
        return Err(PyValueError::new_err(
            "okr.dask needs gamma and output_gamma (their defaults are medians over the whole data)",
        ));
    }
    let unset = || f64::NAN;
    let (kx, _) = okr::resolve::vector_kernel(kernel, x.n_features(), unset).map_err(to_py)?;
    let output_dim = match y {
        Outputs::Labels(y) => y.n_labels(),
        Outputs::Vectors(y) => y.n_features(),
    };
    let (ky, _) = okr::resolve::vector_kernel(&output, output_dim, unset).map_err(to_py)?;
    let lambda = recipe.estimator.lambda.unwrap_or(okr::defaults::LAMBDA);
    let (spec, _warnings) = okr::resolve::estimator_spec(&recipe, n.max(1), lambda).map_err(to_py)?;
    Ok(match spec {
        EstimatorSpec::Nystroem { lambda, anchors, seed } => Params2::Nystroem(
            Nystroem::params(kx, ky).lambda(lambda).anchors(anchors).seed(seed).check().map_err(to_py)?,
        ),
        EstimatorSpec::Sketched { lambda, input_sketch: Some(input_sketch), output_sketch, seed } => Params2::Sketched(
            SketchedIokr::params(kx, ky)
                .lambda(lambda)
                .input_sketch(Some(input_sketch))
                .output_sketch(output_sketch)
                .seed(seed)
                .check()
                .map_err(to_py)?,
        ),
        EstimatorSpec::NystroemReducedRank { rank, lambda1, lambda2, anchors, subset, seed } => {
            Params2::NystroemReducedRank(
                NystroemReducedRank::params(kx, ky)
                    .rank(rank)
                    .lambda1(lambda1)
                    .lambda2(lambda2)
                    .anchors(anchors)
                    .subset(subset)
                    .seed(seed)
                    .check()
                    .map_err(to_py)?,
            )
        }
        _ => {
            return Err(PyValueError::new_err(format!(
                "okr.dask fits nystroem, nystroem-reduced-rank and input-sketched (siokr, sisokr) estimators, not {}",
                recipe.estimator.name
            )));
        }
    })
}

/// Placeholder outputs of the right kind and width (the kernels only read
/// their width when the widths are given).
fn empty_outputs(y_kind: &str, output_dim: usize) -> PyResult<Outputs> {
    convert::check_width("outputs", output_dim)?;
    match y_kind {
        "labels" => Ok(Outputs::Labels(LabelSets::new(output_dim, vec![Vec::new()]).map_err(to_py)?)),
        "vectors" => Ok(Outputs::Vectors(DenseRows::new(faer::Mat::zeros(1, output_dim)).map_err(to_py)?)),
        other => Err(bad_kind(other)),
    }
}

/// The global row indices `(x_rows, y_rows)` the plan needs among `n`
/// (sorted, distinct): gather `X[x_rows]` and `Y[y_rows]` for `stream_plan`.
#[pyfunction]
#[pyo3(signature = (recipe, n, n_features, y_kind, output_dim))]
pub fn stream_plan_rows(
    recipe: &str,
    n: usize,
    n_features: usize,
    y_kind: &str,
    output_dim: usize,
) -> PyResult<(Vec<usize>, Vec<usize>)> {
    guard(|| {
        convert::check_width("columns", n_features)?;
        let x = Features::Dense(DenseRows::new(faer::Mat::zeros(1, n_features)).map_err(to_py)?);
        let rows: PlanRows = match params_for(recipe, &x, &empty_outputs(y_kind, output_dim)?, n)? {
            Params2::Nystroem(p) => p.plan_rows(n),
            Params2::Sketched(p) => p.plan_rows(n),
            Params2::NystroemReducedRank(p) => p.plan_rows(n),
        }
        .map_err(to_py)?;
        Ok((rows.x, rows.y))
    })
}

fn plan_typed<Y: StreamOutputs>(
    py: Python<'_>,
    p: Params2,
    n: usize,
    rows: SampledRows<Features, Y>,
    info: (usize, usize, u64),
) -> PyResult<Encoded>
where
    KernelSpec: Kernel<Y>,
{
    let estimator = py
        .detach(|| match p {
            Params2::Nystroem(p) => p.plan(n, &rows).map(AnyPlan::Nystroem),
            Params2::Sketched(p) => p.plan(n, &rows).map(AnyPlan::Sketched),
            // Explicit: the `KernelSpec: Kernel<Y>` bound in scope would make the compiler infer X = Y.
            Params2::NystroemReducedRank(p) => p.plan::<Features, Y>(n, &rows).map(AnyPlan::NystroemReducedRank),
        })
        .map_err(to_py)?;
    let (n_features, output_dim, seed) = info;
    encode(py, &Plan { estimator, n_features, output_dim, seed })
}

/// The plan (encoded) for `n` training rows from the rows gathered at
/// `stream_plan_rows`: `x` at `x_rows`, `y` at `y_rows` (`y_kind` labels
/// or vectors, `output_dim` wide).
#[pyfunction]
#[pyo3(signature = (recipe, n, x_rows, x, y_rows, y, y_kind, output_dim))]
#[allow(clippy::too_many_arguments)]
pub fn stream_plan(
    py: Python<'_>,
    recipe: &str,
    n: usize,
    x_rows: Vec<usize>,
    x: &Bound<'_, PyAny>,
    y_rows: Vec<usize>,
    y: &Bound<'_, PyAny>,
    y_kind: &str,
    output_dim: usize,
) -> PyResult<Encoded> {
    guard(|| {
        let x = convert::inputs(x)?;
        let y = convert::outputs(y, y_kind)?;
        let p = params_for(recipe, &x, &y, n)?;
        let info = (x.n_features(), output_dim, okr::Recipe::from_json(recipe).map_err(to_py)?.seed);
        match y {
            Outputs::Labels(y) => plan_typed(py, p, n, SampledRows::new(x_rows, x, y_rows, y).map_err(to_py)?, info),
            Outputs::Vectors(y) => plan_typed(py, p, n, SampledRows::new(x_rows, x, y_rows, y).map_err(to_py)?, info),
        }
    })
}

fn statistics_typed<Y: StreamOutputs>(
    py: Python<'_>,
    plan: &[u8],
    x: &Features,
    y: &Y,
    first_row: usize,
    n_jobs: Option<NJobs>,
) -> PyResult<Encoded>
where
    KernelSpec: Kernel<Y>,
{
    let plan = decode_plan::<Y>(plan)?;
    let stats = threads::run(py, n_jobs, || match &plan.estimator {
        AnyPlan::Nystroem(p) => p.statistics(x, y, first_row),
        AnyPlan::Sketched(p) => p.statistics(x, y, first_row),
        AnyPlan::NystroemReducedRank(p) => p.statistics(x, y, first_row),
    })?;
    encode(py, &stats.map_err(to_py)?)
}

/// One partition's statistics (encoded): its rows `x`, `y` starting at global
/// row `first_row`, under the plan `plan` (encoded).
#[pyfunction]
#[pyo3(signature = (plan, x, y, y_kind, first_row, n_jobs=None))]
pub fn stream_statistics(
    py: Python<'_>,
    plan: PyReadonlyArray1<'_, u8>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    y_kind: &str,
    first_row: usize,
    n_jobs: Option<NJobs>,
) -> PyResult<Encoded> {
    guard(|| {
        let plan = bytes_of(&plan)?;
        let x = convert::inputs(x)?;
        match convert::outputs(y, y_kind)? {
            Outputs::Labels(y) => statistics_typed(py, plan, &x, &y, first_row, n_jobs),
            Outputs::Vectors(y) => statistics_typed(py, plan, &x, &y, first_row, n_jobs),
        }
    })
}

fn merge_typed<Y: StreamOutputs>(py: Python<'_>, a: &[u8], b: &[u8]) -> PyResult<Encoded> {
    let (a, b) = (decode_stats::<Y>(a)?, decode_stats::<Y>(b)?);
    let merged = py.detach(|| a.merge(b)).map_err(to_py)?;
    encode(py, &merged)
}

/// Two statistics summed (encoded); refused (`ValueError`) for statistics of
/// different plans or overlapping rows.
#[pyfunction]
pub fn stream_merge(
    py: Python<'_>,
    a: PyReadonlyArray1<'_, u8>,
    b: PyReadonlyArray1<'_, u8>,
    y_kind: &str,
) -> PyResult<Encoded> {
    guard(|| {
        let (a, b) = (bytes_of(&a)?, bytes_of(&b)?);
        match y_kind {
            "labels" => merge_typed::<LabelSets>(py, a, b),
            "vectors" => merge_typed::<DenseRows>(py, a, b),
            other => Err(bad_kind(other)),
        }
    })
}

fn finalize_typed<Y: StreamOutputs>(py: Python<'_>, plan: &[u8], stats: &[u8], n_jobs: Option<NJobs>) -> PyResult<Model>
where
    KernelSpec: Kernel<Y>,
{
    let plan = decode_plan::<Y>(plan)?;
    let stats = decode_stats::<Y>(stats)?;
    let start = std::time::Instant::now();
    let model: SavedEstimator = threads::run(py, n_jobs, || {
        let fitted = match &plan.estimator {
            AnyPlan::Nystroem(p) => p.finalize(stats).map(OutputModel::Nystroem),
            AnyPlan::Sketched(p) => p.finalize(stats).map(OutputModel::Sketched),
            AnyPlan::NystroemReducedRank(p) => p.finalize(stats).map(OutputModel::NystroemReducedRank),
        };
        fitted.map(Y::saved)
    })?
    .map_err(to_py)?;
    let mut info = ModelInfo::new(plan.n_features, plan.output_dim);
    info.seed = plan.seed;
    info.fit_seconds = start.elapsed().as_secs_f64();
    Model::new(SavedModel::new(model, info).map_err(to_py)?)
}

/// The fitted model from the plan and the statistics merged over all rows.
#[pyfunction]
#[pyo3(signature = (plan, stats, y_kind, n_jobs=None))]
pub fn stream_finalize(
    py: Python<'_>,
    plan: PyReadonlyArray1<'_, u8>,
    stats: PyReadonlyArray1<'_, u8>,
    y_kind: &str,
    n_jobs: Option<NJobs>,
) -> PyResult<Model> {
    guard(|| {
        let (plan, stats) = (bytes_of(&plan)?, bytes_of(&stats)?);
        match y_kind {
            "labels" => finalize_typed::<LabelSets>(py, plan, stats, n_jobs),
            "vectors" => finalize_typed::<DenseRows>(py, plan, stats, n_jobs),
            other => Err(bad_kind(other)),
        }
    })
}

/// `(rows, numbers)` of encoded statistics: the rows covered and the size in
/// bytes of their numbers (for reports of what was shipped).
#[pyfunction]
pub fn stream_stats_info(stats: PyReadonlyArray1<'_, u8>, y_kind: &str) -> PyResult<(usize, usize)> {
    guard(|| {
        let stats = bytes_of(&stats)?;
        match y_kind {
            "labels" => decode_stats::<LabelSets>(stats).map(|s| (s.n_samples(), s.size_bytes())),
            "vectors" => decode_stats::<DenseRows>(stats).map(|s| (s.n_samples(), s.size_bytes())),
            other => Err(bad_kind(other)),
        }
    })
}
