//! `okr._okr.fit_embedding` and the fitted `Embedding` behind
//! `okr.OutputEmbedding` and `okr.SurrogateRegressor`: an output basis
//! fitted from training outputs alone (`okr::embed`), the coordinates of
//! outputs, and the decoding of coordinates predicted by any regressor with
//! okr's decoder. Every rule (kernel widths, sizes, caps) is the `okr`
//! crate's; this module converts arrays.

use numpy::{PyArray1, PyArray2, PyReadonlyArray1, ndarray::Array2};
use okr::TrainOutputs;
use okr::embed::{Embedding, EmbeddingBasis, EmbeddingRecipe, fit_embedding as fit_basis};
use okr::surrogate::{CoordinateBasis, Coordinates};
use okr_decode::CandidateDecoder;
use okr_decode::per_query::PerQueryDecoder;
use okr_kernels::Rows;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{self, Outputs};
use crate::errors::{guard, to_py};
use crate::ranking::{Groups, flatten, usizes};
use crate::threads::{self, NJobs};

/// Label-set outputs as CSR arrays: `(indices, indptr, shape)`.
use crate::convert::CandidateSets;

/// Top-k decoding result: candidate indices and their scores, `(n, k)` each.
type TopK<'py> = (Bound<'py, PyArray2<i64>>, Bound<'py, PyArray2<f64>>);

/// Flattened rankings, as `ranking::rank_per_query` returns them.
type Ranked<'py> =
    (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray2<i64>>);

fn train_outputs(y: &Outputs) -> TrainOutputs<'_> {
    match y {
        Outputs::Labels(l) => TrainOutputs::Labels(l),
        Outputs::Vectors(v) => TrainOutputs::Vectors(v),
    }
}

/// A fitted output basis.
#[pyclass(module = "okr._okr", name = "Embedding", frozen)]
pub struct PyEmbedding {
    inner: Embedding,
}

/// Fits the output basis of `recipe` (JSON of `okr::embed::EmbeddingRecipe`)
/// on `y` (`y_kind` `labels`: a CSR 0/1 indicator; `vectors`: a float64
/// array). Returns the basis and the library's notes.
#[pyfunction]
#[pyo3(signature = (recipe, y, y_kind, n_jobs=None))]
pub fn fit_embedding(
    py: Python<'_>,
    recipe: &str,
    y: &Bound<'_, PyAny>,
    y_kind: &str,
    n_jobs: Option<NJobs>,
) -> PyResult<(PyEmbedding, Vec<String>)> {
    guard(|| {
        let recipe = EmbeddingRecipe::from_json(recipe).map_err(to_py)?;
        let y = convert::outputs(y, y_kind)?;
        let inner = threads::run(py, n_jobs, || fit_basis(&recipe, &train_outputs(&y)))?.map_err(to_py)?;
        let notes = inner.notes().to_vec();
        Ok((PyEmbedding { inner }, notes))
    })
}

impl PyEmbedding {
    /// Coordinates predicted by a regressor: a float64 array, read in place
    /// (NaN and infinity refused with the row).
    fn coordinates(&self, z: &Bound<'_, PyAny>) -> PyResult<Coordinates> {
        let rows = convert::dense_rows(z)?;
        Ok(Coordinates::from_rows(rows, None))
    }
}

#[pymethods]
impl PyEmbedding {
    /// Number of coordinates per output.
    #[getter]
    fn n_components(&self) -> usize {
        self.inner.n_components()
    }

    /// The basis id (tags its coordinates in okr's files).
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }

    /// The output width (labels or vector length).
    #[getter]
    fn output_dim(&self) -> usize {
        self.inner.width()
    }

    /// The resolved recipe, one line of JSON.
    #[getter]
    fn recipe(&self) -> String {
        self.inner.recipe().to_json()
    }

    /// The kept eigenvalues of the atoms' Gram, non-increasing.
    fn eigenvalues<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let w = match self.inner.basis() {
            EmbeddingBasis::Labels(b) => b.eigenvalues().to_vec(),
            EmbeddingBasis::Vectors(b) => b.eigenvalues().to_vec(),
            EmbeddingBasis::Rankings(b) => b.eigenvalues().to_vec(),
        };
        PyArray1::from_vec(py, w)
    }

    /// The coordinates `(n, n_components)` of outputs `y` of kind `y_kind`.
    #[pyo3(signature = (y, y_kind, n_jobs=None))]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        y: &Bound<'py, PyAny>,
        y_kind: &str,
        n_jobs: Option<NJobs>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guard(|| {
            let y = convert::outputs(y, y_kind)?;
            let z = threads::run(py, n_jobs, || self.inner.transform(&train_outputs(&y)))?.map_err(to_py)?;
            Ok(convert::to_numpy(py, z.values()))
        })
    }

    /// The `k` best candidates per row of the coordinates `z` (a float64
    /// array `(n, n_components)`), best first: `(indices, scores)` with
    /// scores `k(c, c) - 2 z^T z(c)` (lower is better; ties to the lower
    /// index). Candidates: `candidates` of kind `y_kind`, or the distinct
    /// training outputs when `None`.
    #[pyo3(signature = (z, k=1, candidates=None, y_kind="labels", n_jobs=None, precision="f64", memory_budget=1 << 30))]
    #[allow(clippy::too_many_arguments)]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        z: &Bound<'py, PyAny>,
        k: usize,
        candidates: Option<&Bound<'py, PyAny>>,
        y_kind: &str,
        n_jobs: Option<NJobs>,
        precision: &str,
        memory_budget: usize,
    ) -> PyResult<TopK<'py>> {
        guard(|| {
            let precision: okr_decode::Precision = precision.parse().map_err(to_py)?;
            let z = self.coordinates(z)?;
            let cands = candidates.map(|c| convert::outputs(c, y_kind)).transpose()?;
            let dec = CandidateDecoder::new().top_k(k).precision(precision).memory_budget(memory_budget);
            let decoded = threads::run(py, n_jobs, || {
                let c = cands.as_ref().map(train_outputs);
                self.inner.decode(&z, c.as_ref(), dec)
            })?
            .map_err(to_py)?;
            let (n, k) = (decoded.n_rows(), decoded.k());
            let idx = Array2::from_shape_fn((n, k), |(t, j)| decoded.top(t)[j] as i64);
            let scores = Array2::from_shape_fn((n, k), |(t, j)| decoded.top_scores(t)[j]);
            Ok((PyArray2::from_owned_array(py, idx), PyArray2::from_owned_array(py, scores)))
        })
    }

    /// Ranks each row of `z` against its own pool rows, as
    /// `ranking::rank_per_query` does for a fitted model.
    #[pyo3(signature = (z, pool, y_kind, indptr, indices, truth, top_k=None, memory_budget=1 << 30, n_jobs=None))]
    #[allow(clippy::too_many_arguments)]
    fn rank_per_query<'py>(
        &self,
        py: Python<'py>,
        z: &Bound<'py, PyAny>,
        pool: &Bound<'py, PyAny>,
        y_kind: &str,
        indptr: Option<PyReadonlyArray1<'py, i64>>,
        indices: Option<PyReadonlyArray1<'py, i64>>,
        truth: PyReadonlyArray1<'py, i64>,
        top_k: Option<usize>,
        memory_budget: usize,
        n_jobs: Option<NJobs>,
    ) -> PyResult<Ranked<'py>> {
        guard(|| {
            let z = self.coordinates(z)?;
            let pool = convert::outputs(pool, y_kind)?;
            let n_pool = match &pool {
                Outputs::Labels(p) => p.n_rows(),
                Outputs::Vectors(p) => p.n_rows(),
            };
            let groups = match (indptr, indices) {
                (Some(indptr), Some(indices)) => {
                    Groups::Lists { indptr: usizes("indptr", &indptr)?, indices: usizes("indices", &indices)? }
                }
                (None, None) => Groups::WholePool(n_pool),
                _ => return Err(PyValueError::new_err("candidate groups need both indptr and indices")),
            };
            let n = z.n_rows();
            groups.check(n)?;
            let truth: Vec<i64> = truth.as_array().to_vec();
            if truth.len() != n {
                return Err(PyValueError::new_err(format!("{} true candidates for {n} test rows", truth.len())));
            }
            let mut queries = Vec::with_capacity(n);
            for (q, &t) in truth.iter().enumerate() {
                let group = groups.group(q);
                let position = match t {
                    t if t < 0 => None,
                    t => Some(group.iter().position(|&i| i as i64 == t).ok_or_else(|| {
                        PyValueError::new_err(format!("query {q}: its true candidate {t} is not among its candidates"))
                    })?),
                };
                queries.push((q.to_string(), q, group, position));
            }
            let ranker = PerQueryDecoder::new().memory_budget(memory_budget).top_k(top_k);
            let ranked =
                threads::run(py, n_jobs, || self.inner.rank_pooled(&ranker, &z, Some(&train_outputs(&pool)), queries))?
                    .map_err(to_py)?;
            Ok(flatten(py, ranked))
        })
    }

    /// The distinct training outputs (the default candidates), dense
    /// `(n_distinct, output_dim)` (label sets as 0/1 rows).
    fn candidates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guard(|| match self.inner.basis() {
            EmbeddingBasis::Vectors(b) => Ok(convert::to_numpy(py, b.distinct_outputs().as_mat())),
            EmbeddingBasis::Labels(b) => {
                let sets = b.distinct_outputs();
                let mut a = Array2::<f64>::zeros((sets.n_rows(), sets.n_labels()));
                for (i, set) in sets.iter().enumerate() {
                    for &l in set {
                        a[(i, l)] = 1.0;
                    }
                }
                Ok(PyArray2::from_owned_array(py, a))
            }
            EmbeddingBasis::Rankings(_) => Err(PyValueError::new_err("ranking outputs are not exposed to Python")),
        })
    }

    /// The distinct label-set training outputs as CSR arrays `(indices,
    /// indptr, shape)`; `ValueError` for vector outputs.
    fn candidate_sets<'py>(&self, py: Python<'py>) -> PyResult<CandidateSets<'py>> {
        guard(|| {
            let EmbeddingBasis::Labels(b) = self.inner.basis() else {
                return Err(PyValueError::new_err("a vector-output basis has no label-set candidates"));
            };
            let sets = b.distinct_outputs();
            Ok(convert::label_set_csr(py, sets))
        })
    }

    /// The basis as the bytes of an output-basis file (what pickling stores).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            let bytes = py.detach(|| self.inner.to_bytes()).map_err(to_py)?;
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// A basis from the bytes of an output-basis file.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        guard(|| Ok(Self { inner: py.detach(|| Embedding::from_bytes(data)).map_err(to_py)? }))
    }

    /// Writes the basis to `path` atomically (what `okr decode --basis` reads).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        guard(|| py.detach(|| self.inner.save(&path)).map_err(to_py))
    }

    /// Reads an output-basis file written by `okr embed-outputs` or `save`.
    #[staticmethod]
    fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        guard(|| Ok(Self { inner: py.detach(|| Embedding::load(&path)).map_err(to_py)? }))
    }
}
