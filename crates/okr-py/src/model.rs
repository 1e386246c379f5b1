//! `okr._okr.fit` and the fitted `Model`: the GIL is released around every
//! computation (`Python::detach`), which runs on `n_jobs` threads.

use numpy::{PyArray2, ndarray::Array2};
use okr_estimators::nystroem::Anchors;
use okr_estimators::{Fit, Iokr, Kde, Nystroem, ReducedRankIokr, SketchedIokr, TraceNorm, TraceNormSolver};
use okr_kernels::{Kernel, KernelSpec, Rows};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{self, Inputs, Outputs};
use crate::errors::to_py;
use crate::params::{KernelChoice, Params};
use crate::surrogate::{Fitted, FromInputs, OutputMatrix, Predictor};
use crate::threads;

/// Top-k decoding result: candidate indices and their scores, `(n, k)` each.
type TopK<'py> = (Bound<'py, PyArray2<i64>>, Bound<'py, PyArray2<f64>>);

/// Everything a fit needs, read from the parameter dict while the GIL is held.
struct FitSpec {
    estimator: String,
    kx: KernelChoice,
    ky: KernelChoice,
    lam: f64,
    lam2: Option<f64>,
    rank: usize,
    centered: bool,
    input_sketch: Option<String>,
    output_sketch: Option<String>,
    n_components: usize,
    solver: String,
    seed: u64,
}

impl FitSpec {
    fn read(estimator: &str, p: &Params<'_, '_>) -> PyResult<Self> {
        Ok(Self {
            estimator: estimator.to_string(),
            kx: KernelChoice::input(p)?,
            ky: KernelChoice::output(p)?,
            lam: p.f64_or("lam", 1e-3)?,
            lam2: p.f64("lam2")?,
            rank: p.usize_or("rank", 10)?,
            centered: p.bool_or("centered", false)?,
            input_sketch: p.string("input_sketch")?,
            output_sketch: p.string("output_sketch")?,
            n_components: p.usize_or("n_components", 1000)?,
            solver: p.string("solver")?.unwrap_or_else(|| "gd".into()),
            seed: p.seed()?,
        })
    }
}

/// Fits the estimator on typed containers.
fn fit_typed<X, Y>(s: &FitSpec, x: &X, y: &Y, kx: KernelSpec, ky: KernelSpec) -> PyResult<Box<dyn Predictor>>
where
    X: FromInputs,
    Y: OutputMatrix,
    KernelSpec: Kernel<X> + Kernel<Y>,
{
    fn boxed<M: crate::surrogate::Surrogate<X, Y>, X: FromInputs, Y: OutputMatrix>(
        m: Result<M, okr_estimators::Error>,
    ) -> PyResult<Box<dyn Predictor>> {
        Ok(Box::new(Fitted::<M, X, Y>::new(m.map_err(to_py)?)))
    }
    let n = x.n_rows();
    let sketch = |text: &Option<String>| -> PyResult<_> {
        let Some(text) = text else { return Ok(None) };
        let mut spec: okr_estimators::sketch::SketchSpec = text.parse().map_err(to_py)?;
        spec.check().map_err(to_py)?;
        // A sketch never needs more rows than samples (scikit-learn's checks
        // fit on a few dozen samples); the parameter itself is left as given.
        spec.size = spec.size.min(n.max(1));
        Ok(Some(spec))
    };
    match s.estimator.as_str() {
        "iokr" => boxed(Iokr::params(kx, ky).lambda(s.lam).fit(x, y)),
        "reduced_rank" => boxed(
            ReducedRankIokr::params(kx, ky).rank(s.rank).lambda1(s.lam).lambda2(s.lam2.unwrap_or(s.lam)).fit(x, y),
        ),
        "kde" => boxed(Kde::params(kx, ky).rank(s.rank).lambda(s.lam).centered(s.centered).fit(x, y)),
        "sketched" => boxed(
            SketchedIokr::params(kx, ky)
                .lambda(s.lam)
                .input_sketch(sketch(&s.input_sketch)?)
                .output_sketch(sketch(&s.output_sketch)?)
                .seed(s.seed)
                .fit(x, y),
        ),
        "nystroem" => {
            // Anchors capped at n, as sketches are.
            let anchors = Anchors::Uniform(s.n_components.min(n.max(1)));
            boxed(Nystroem::params(kx, ky).lambda(s.lam).anchors(anchors).seed(s.seed).fit(x, y))
        }
        "trace_norm" => {
            let solver = match s.solver.as_str() {
                "gd" => TraceNormSolver::GradientDescent,
                "als" => TraceNormSolver::Als,
                "convex" => TraceNormSolver::Convex,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "invalid parameter solver = {other:?}: expected gd, als or convex"
                    )));
                }
            };
            boxed(TraceNorm::params(kx, ky).rank(s.rank).lambda(s.lam).solver(solver).seed(s.seed).fit(x, y))
        }
        other => Err(PyValueError::new_err(format!("unknown estimator {other:?}"))),
    }
}

fn fit_any(s: &FitSpec, x: &Inputs, y: &Outputs) -> PyResult<Box<dyn Predictor>> {
    let kx = s.kx.build_input(x)?;
    let ky = s.ky.build_output(y)?;
    match (x, y) {
        (Inputs::Dense(x), Outputs::Labels(y)) => fit_typed(s, x, y, kx, ky),
        (Inputs::Sparse(x), Outputs::Labels(y)) => fit_typed(s, x, y, kx, ky),
        (Inputs::Dense(x), Outputs::Vectors(y)) => fit_typed(s, x, y, kx, ky),
        (Inputs::Sparse(x), Outputs::Vectors(y)) => fit_typed(s, x, y, kx, ky),
    }
}

/// A fitted okr surrogate model.
#[pyclass(module = "okr._okr", name = "Model", frozen)]
pub struct Model {
    inner: Box<dyn Predictor>,
    estimator: String,
    n_features: usize,
    output_kind: &'static str,
    output_dim: usize,
    n_samples: usize,
}

/// Fits `estimator` (`iokr`, `reduced_rank`, `kde`, `sketched`,
/// `nystroem`, `trace_norm`) with the hyper-parameters `params` on `x` (a
/// float64 array, read in place, or a CSR matrix) and `y` (`y_kind`
/// `labels`: a CSR 0/1 indicator; `vectors`: a float64 array).
#[pyfunction]
#[pyo3(signature = (estimator, params, x, y, y_kind, n_jobs=None))]
pub fn fit(
    py: Python<'_>,
    estimator: &str,
    params: &Bound<'_, PyDict>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    y_kind: &str,
    n_jobs: Option<i64>,
) -> PyResult<Model> {
    let spec = FitSpec::read(estimator, &Params(params))?;
    let x = convert::inputs(x)?;
    let y = convert::outputs(y, y_kind)?;
    let (output_kind, output_dim) = match &y {
        Outputs::Labels(l) => ("labels", l.n_labels()),
        Outputs::Vectors(v) => ("vectors", v.n_features()),
    };
    let n_samples = match &x {
        Inputs::Dense(d) => d.n_rows(),
        Inputs::Sparse(s) => s.n_rows(),
    };
    let n_features = x.n_features();
    let inner = py.detach(|| threads::run(n_jobs, || fit_any(&spec, &x, &y)))??;
    Ok(Model { inner, estimator: estimator.to_string(), n_features, output_kind, output_dim, n_samples })
}

fn int_array(py: Python<'_>, rows: usize, cols: usize, f: impl Fn(usize, usize) -> i64) -> Bound<'_, PyArray2<i64>> {
    PyArray2::from_owned_array(py, Array2::from_shape_fn((rows, cols), |(i, j)| f(i, j)))
}

#[pymethods]
impl Model {
    /// The `k` best candidates per row of `x`, best first: `(indices, scores)`
    /// with indices into `candidates()` and scores `k(c, c) - 2 <h(x), psi(c)>`
    /// (lower is better; ties go to the lower index).
    #[pyo3(signature = (x, k=1, n_jobs=None))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        k: usize,
        n_jobs: Option<i64>,
    ) -> PyResult<TopK<'py>> {
        let x = convert::inputs(x)?;
        let decoded = py.detach(|| threads::run(n_jobs, || self.inner.decode(&x, k)))??;
        let k = decoded.k();
        let n = decoded.n_rows();
        let idx = int_array(py, n, k, |t, j| decoded.top(t).get(j).map_or(-1, |&c| c as i64));
        let scores = PyArray2::from_owned_array(
            py,
            Array2::from_shape_fn((n, k), |(t, j)| decoded.top_scores(t).get(j).copied().unwrap_or(f64::INFINITY)),
        );
        Ok((idx, scores))
    }

    /// `h(x)` read with a linear output kernel, `(n, output_dim)`: label
    /// scores for label sets, the kernel ridge prediction for vectors.
    #[pyo3(signature = (x, n_jobs=None))]
    fn label_scores<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = convert::inputs(x)?;
        let s = py.detach(|| threads::run(n_jobs, || self.inner.label_scores(&x)))??;
        Ok(convert::to_numpy(py, s.as_ref()))
    }

    /// The candidates (distinct training outputs, first-occurrence order),
    /// `(n_candidates, output_dim)`.
    fn candidates<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        convert::to_numpy(py, self.inner.candidates().as_ref())
    }

    /// Estimator name.
    #[getter]
    fn estimator(&self) -> &str {
        &self.estimator
    }

    /// Number of input features.
    #[getter]
    fn n_features(&self) -> usize {
        self.n_features
    }

    /// `labels` or `vectors`.
    #[getter]
    fn output_kind(&self) -> &str {
        self.output_kind
    }

    /// Number of labels (label sets) or output dimension (vectors).
    #[getter]
    fn output_dim(&self) -> usize {
        self.output_dim
    }

    /// Number of training samples.
    #[getter]
    fn n_samples(&self) -> usize {
        self.n_samples
    }

    /// Number of atoms of the output basis.
    #[getter]
    fn n_atoms(&self) -> usize {
        self.inner.n_atoms()
    }

    /// `(requested, used)` rank of low-rank models, else `None`.
    #[getter]
    fn ranks(&self) -> Option<(usize, usize)> {
        self.inner.ranks()
    }
}
