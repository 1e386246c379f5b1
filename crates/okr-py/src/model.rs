//! `okr._okr.fit` and the fitted `Model`: the GIL is released around every
//! computation (`Python::detach`), which runs on `n_jobs` threads.

use numpy::{PyArray2, ndarray::Array2};
use okr::TrainOutputs;
use okr_estimators::persist::{Model as SavedEstimator, ModelInfo, SavedModel};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{self, Inputs, Outputs};
use crate::errors::{guard, to_py};
use crate::surrogate::Expansion;
use crate::threads::{self, NJobs};

/// Label-set candidates as CSR arrays: `(indices, indptr, shape)`.
use crate::convert::CandidateSets;

/// Top-k decoding result: candidate indices and their scores, `(n, k)` each.
type TopK<'py> = (Bound<'py, PyArray2<i64>>, Bound<'py, PyArray2<f64>>);

/// A fitted okr surrogate model.
#[pyclass(module = "okr._okr", name = "Model", frozen)]
pub struct Model {
    saved: SavedModel,
}

impl Model {
    /// A checked kernel-output model (label sets or vectors).
    pub(crate) fn new(saved: SavedModel) -> PyResult<Self> {
        Expansion::of(&saved.model)?;
        Ok(Self { saved })
    }

    pub(crate) fn expansion(&self) -> Expansion<'_> {
        Expansion::of(&self.saved.model).expect("checked in Model::new")
    }
}

/// Fits the recipe `recipe` (JSON, as `okr.Recipe` / the estimators build
/// it; every default and data-dependent width is resolved by the `okr`
/// crate) on `x` (a float64 array, read in place, or a CSR matrix) and `y`
/// (`y_kind` `labels`: a CSR 0/1 indicator; `vectors`: a float64 array).
/// Returns the model and the library's warnings (sizes capped at n).
/// `previous`, a model of the same estimator fitted on data of the same
/// shape, is continued for the recipe's `max_iter` more iterations
/// (`warm_start`, through `okr::fit_from`). `sample_weight`, one float per
/// row, is checked by okr (`okr::fit_weighted`: count, finite, `> 0`) and
/// fits the weighted ridge.
#[pyfunction]
/// `verbose` logs the solver's progress (see `progress`).
#[pyo3(signature = (recipe, x, y, y_kind, n_jobs=None, previous=None, verbose=0, sample_weight=None))]
// One argument per keyword of the Python call.
#[allow(clippy::too_many_arguments)]
pub fn fit_recipe(
    py: Python<'_>,
    recipe: &str,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    y_kind: &str,
    n_jobs: Option<NJobs>,
    previous: Option<PyRef<'_, Model>>,
    verbose: usize,
    sample_weight: Option<Vec<f64>>,
) -> PyResult<(Model, Vec<String>)> {
    let previous = previous.as_deref().map(|m| &m.saved.model);
    let weights = sample_weight.as_deref();
    let observer = crate::progress::logger(py, verbose)?;
    guard(|| {
        let recipe = okr::Recipe::from_json(recipe).map_err(to_py)?;
        let x = convert::inputs(x)?;
        let y = convert::outputs(y, y_kind)?;
        // scikit-learn's kernel="precomputed": X is the training Gram.
        let gram = train_gram(&recipe, &x)?;
        let fitted = threads::run(py, n_jobs, || {
            crate::progress::observe(observer, || {
                let y = match &y {
                    Outputs::Labels(l) => TrainOutputs::Labels(l),
                    Outputs::Vectors(v) => TrainOutputs::Vectors(v),
                };
                match (&gram, previous, weights) {
                    (Some(_), Some(_), _) => {
                        Err(okr::Error::Refused("a model fitted on a precomputed Gram does not iterate".into()))
                    }
                    (_, Some(_), Some(_)) => Err(okr::Error::Refused(
                        "a warm start continues an iterative fit, which takes no sample weights".into(),
                    )),
                    (Some(k), None, Some(w)) => okr::fit_gram_weighted(&recipe, k, &y, w),
                    (Some(k), None, None) => okr::fit_gram(&recipe, k, &y),
                    (None, Some(p), None) => okr::fit_from(&recipe, p, &x, &y),
                    (None, None, Some(w)) => okr::fit_weighted(&recipe, &x, &y, w),
                    (None, None, None) => okr::fit(&recipe, &x, &y),
                }
            })
        })?
        .map_err(to_py)?;
        let output_dim = match &y {
            Outputs::Labels(l) => l.n_labels(),
            Outputs::Vectors(v) => v.n_features(),
        };
        let warnings = fitted.warnings.clone();
        let saved = fitted.into_saved(ModelInfo::new(x.n_features(), output_dim)).map_err(to_py)?;
        Ok((Model::new(saved)?, warnings))
    })
}

/// The training Gram of a recipe whose input is a precomputed Gram (`x` as
/// given to `fit`: a dense, square, finite, symmetric array); `None` for
/// other recipes.
pub(crate) fn train_gram(recipe: &okr::Recipe, x: &Inputs) -> PyResult<Option<okr_kernels::GramRows>> {
    match (&recipe.input, x) {
        (okr::InputRecipe::Gram, Inputs::Dense(k)) => Ok(Some(
            okr_kernels::GramRows::checked_train(k.as_mat().to_owned(), okr_kernels::GRAM_SYMMETRY_TOL)
                .map_err(to_py)?,
        )),
        (okr::InputRecipe::Gram, Inputs::Sparse(_)) => {
            Err(PyValueError::new_err("a precomputed Gram must be a dense (n_samples, n_samples) array"))
        }
        _ => Ok(None),
    }
}

/// The inputs as the model reads them: standardized with the model's
/// standardizer when it has one (models of `okr fit` on dense features).
fn prepared(saved: &SavedModel, x: Inputs) -> PyResult<Inputs> {
    match &saved.info.standardizer {
        Some(st) => st.transform_features(&x).map_err(to_py),
        None => Ok(x),
    }
}

fn int_array(py: Python<'_>, rows: usize, cols: usize, f: impl Fn(usize, usize) -> i64) -> Bound<'_, PyArray2<i64>> {
    PyArray2::from_owned_array(py, Array2::from_shape_fn((rows, cols), |(i, j)| f(i, j)))
}

#[pymethods]
impl Model {
    /// Iterations the solver ran, over every warm-started fit (trace
    /// norm), or `None` for the estimators that do not iterate.
    #[getter]
    fn n_iter(&self) -> Option<usize> {
        use okr_estimators::persist::OutputModel;
        match &self.saved.model {
            SavedEstimator::TraceNorm(m) => Some(m.n_iter()),
            SavedEstimator::Vectors(OutputModel::TraceNorm(m)) => Some(m.n_iter()),
            _ => None,
        }
    }

    /// The `k` best candidates per row of `x`, best first: `(indices, scores)`
    /// with indices into `candidates()` and scores `k(c, c) - 2 <h(x), psi(c)>`
    /// (lower is better; ties go to the lower index).
    /// `precision` `"f64"` or `"f32"` (single-precision scores, the best
    /// candidates re-scored in double precision).
    #[pyo3(signature = (x, k=1, n_jobs=None, precision="f64"))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        k: usize,
        n_jobs: Option<NJobs>,
        precision: &str,
    ) -> PyResult<TopK<'py>> {
        guard(|| {
            let precision: okr_decode::Precision = precision.parse().map_err(to_py)?;
            let x = prepared(&self.saved, convert::inputs(x)?)?;
            let decoded = threads::run(py, n_jobs, || self.expansion().decode(&x, k, precision))??;
            let k = decoded.k();
            let n = decoded.n_rows();
            let idx = int_array(py, n, k, |t, j| decoded.top(t).get(j).map_or(-1, |&c| c as i64));
            let scores = PyArray2::from_owned_array(
                py,
                Array2::from_shape_fn((n, k), |(t, j)| decoded.top_scores(t).get(j).copied().unwrap_or(f64::INFINITY)),
            );
            Ok((idx, scores))
        })
    }

    /// `h(x)` read with a linear output kernel, `(n, output_dim)`: label
    /// scores for label sets, the kernel ridge prediction for vectors.
    #[pyo3(signature = (x, n_jobs=None))]
    fn label_scores<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<NJobs>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guard(|| {
            let x = prepared(&self.saved, convert::inputs(x)?)?;
            let s = threads::run(py, n_jobs, || self.expansion().output_scores(&x))??;
            Ok(convert::to_numpy(py, s.as_ref()))
        })
    }

    /// The candidates (distinct training outputs, first-occurrence order),
    /// `(n_candidates, output_dim)`, dense (label sets as 0/1 rows; see
    /// `candidate_sets` for label spaces too wide to densify).
    fn candidates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guard(|| Ok(convert::to_numpy(py, self.expansion().candidates().as_ref())))
    }

    /// The label-set candidates as the CSR arrays of their indicator,
    /// `(indices, indptr, (n_candidates, n_labels))`, without a dense copy
    /// (a sparse `Y` may have millions of labels); `ValueError` for vector
    /// outputs.
    fn candidate_sets<'py>(&self, py: Python<'py>) -> PyResult<CandidateSets<'py>> {
        guard(|| {
            let (Expansion::Labels(_, sets) | Expansion::Gram(_, sets, _)) = self.expansion() else {
                return Err(PyValueError::new_err("a vector-output model has no label-set candidates"));
            };
            Ok(convert::label_set_csr(py, sets))
        })
    }

    /// okr's model bytes (the format of `okr fit`'s model files: versioned,
    /// checksummed); what pickling stores.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            let bytes = py.detach(|| self.saved.to_bytes()).map_err(to_py)?;
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// A model from okr's model bytes; `ValueError` with okr's message for
    /// bytes that are not a (kernel-output) model or are damaged.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        guard(|| {
            let saved = py.detach(|| SavedModel::from_bytes(data)).map_err(to_py)?;
            Self::new(saved)
        })
    }

    /// Reads a model file written by `okr fit` or [`save`](Self::save);
    /// `ValueError` with okr's message for a file that is not a
    /// kernel-output model on features.
    #[staticmethod]
    fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        guard(|| {
            let saved = py.detach(|| SavedModel::load(&path)).map_err(to_py)?;
            Self::new(saved)
        })
    }

    /// Writes the model file (atomically), which `okr predict` reads.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        guard(|| py.detach(|| self.saved.save(&path)).map_err(to_py))
    }

    /// The recipe the model was fitted from (JSON), or `None`.
    #[getter]
    fn recipe(&self) -> Option<String> {
        self.saved.recipe().map(str::to_string)
    }

    /// The label names stored in the model (empty when unnamed).
    #[getter]
    fn label_names(&self) -> Vec<String> {
        self.saved.info.label_names.clone()
    }

    /// Estimator name (`iokr`, `reduced-rank`, `sisokr`, ...).
    #[getter]
    fn estimator(&self) -> PyResult<String> {
        guard(|| Ok(self.saved.model.name()))
    }

    /// Number of input features.
    #[getter]
    fn n_features(&self) -> PyResult<usize> {
        guard(|| Ok(self.saved.info.n_features))
    }

    /// `labels` or `vectors`.
    #[getter]
    fn output_kind(&self) -> PyResult<&str> {
        guard(|| Ok(if matches!(self.saved.model, SavedEstimator::Vectors(_)) { "vectors" } else { "labels" }))
    }

    /// Number of labels (label sets) or output dimension (vectors).
    #[getter]
    fn output_dim(&self) -> PyResult<usize> {
        guard(|| Ok(self.saved.info.n_labels))
    }

    /// Number of atoms of the output basis.
    #[getter]
    fn n_atoms(&self) -> PyResult<usize> {
        guard(|| Ok(self.expansion().n_atoms()))
    }

    /// `(requested, used)` rank of low-rank models, else `None`.
    #[getter]
    fn ranks(&self) -> PyResult<Option<(usize, usize)>> {
        guard(|| Ok(self.saved.model.ranks()))
    }
}
