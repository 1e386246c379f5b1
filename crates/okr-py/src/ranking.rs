//! Per-query candidate ranking for `OkrSurrogate.rank_candidates`: test row
//! `q` ranks its own candidates, given as indices into a shared pool
//! (`indices[indptr[q]..indptr[q + 1]]`), with
//! [`okr_decode::per_query::PerQueryDecoder`] under a memory budget; the
//! rank of a known true candidate is reported with ties counted both ways.

use numpy::{PyArray1, PyArray2, PyReadonlyArray1, ndarray::Array2};
use okr_decode::per_query::{PerQueryDecoder, Query, RankedQuery};
use okr_kernels::{Features, Rows};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict};

use crate::convert::{self, Outputs};
use crate::errors::{guard, to_py};
use crate::model::Model;
use crate::surrogate::Expansion;
use crate::threads::{self, NJobs};

/// Flattened rankings: candidate pool indices and scores of all queries,
/// query `q`'s at `offsets[q]..offsets[q + 1]`, and the true candidate's
/// `(optimistic, pessimistic)` rank per query (`-1` when none is given).
type Ranked<'py> =
    (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray2<i64>>);

pub(crate) fn usizes(name: &str, a: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<usize>> {
    a.as_array()
        .iter()
        .map(|&v| usize::try_from(v).map_err(|_| PyValueError::new_err(format!("negative value {v} in {name}"))))
        .collect()
}

/// Each test row's candidate group: pool rows `indices[indptr[q]..indptr[q + 1]]`,
/// or the whole pool for every row.
pub(crate) enum Groups {
    Lists { indptr: Vec<usize>, indices: Vec<usize> },
    WholePool(usize),
}

impl Groups {
    pub(crate) fn check(&self, n_test: usize) -> PyResult<()> {
        let Groups::Lists { indptr, indices } = self else { return Ok(()) };
        if indptr.len() != n_test + 1 || indptr.first() != Some(&0) || indptr.last() != Some(&indices.len()) {
            return Err(PyValueError::new_err(format!(
                "candidate groups: {} offsets for {n_test} test rows and {} indices (expected {} offsets from 0 to {})",
                indptr.len(),
                indices.len(),
                n_test + 1,
                indices.len()
            )));
        }
        if let Some(q) = indptr.windows(2).position(|w| w[0] > w[1]) {
            return Err(PyValueError::new_err(format!("candidate groups: offsets decrease at query {q}")));
        }
        Ok(())
    }

    pub(crate) fn group(&self, q: usize) -> Vec<usize> {
        match self {
            Groups::Lists { indptr, indices } => indices[indptr[q]..indptr[q + 1]].to_vec(),
            Groups::WholePool(n_pool) => (0..*n_pool).collect(),
        }
    }
}

/// The queries, built one at a time (the decoder consumes them tile by tile):
/// row `q` with its pool rows and the position of its true candidate
/// (`truth[q]`, a pool row, `-1` for none) among them.
fn queries<'a, Y: Rows + 'a>(
    n_test: usize,
    groups: &'a Groups,
    truth: &'a [i64],
) -> impl Iterator<Item = okr_decode::Result<Query<Y>>> + 'a {
    (0..n_test).map(move |q| {
        let group = groups.group(q);
        let position = match truth[q] {
            t if t < 0 => None,
            t => Some(group.iter().position(|&i| i as i64 == t).ok_or_else(|| okr_decode::Error::InvalidQuery {
                query: q.to_string(),
                msg: format!("its true candidate {t} is not among its candidates"),
            })?),
        };
        Ok(Query::pooled(q.to_string(), q, group, position))
    })
}

/// [`PerQueryDecoder::rank`] collecting the rankings in query order.
fn rank_all<X: Rows, Y: Rows, M: okr_estimators::SurrogateModel<X, Y> + ?Sized>(
    decoder: &PerQueryDecoder,
    model: &M,
    x: &X,
    pool: &Y,
    groups: &Groups,
    truth: &[i64],
) -> okr_decode::Result<Vec<RankedQuery>> {
    let mut out = Vec::new();
    decoder.rank(model, x, Some(pool), queries(x.n_rows(), groups, truth), |r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

pub(crate) fn flatten(py: Python<'_>, ranked: Vec<RankedQuery>) -> Ranked<'_> {
    let mut offsets = Vec::with_capacity(ranked.len() + 1);
    offsets.push(0i64);
    let (mut ids, mut scores) = (Vec::new(), Vec::new());
    for r in &ranked {
        ids.extend(r.ids.iter().map(|&i| i as i64));
        scores.extend_from_slice(&r.scores);
        offsets.push(ids.len() as i64);
    }
    let ranks = Array2::from_shape_fn((ranked.len(), 2), |(q, j)| match ranked[q].true_rank {
        Some(t) => (if j == 0 { t.optimistic } else { t.pessimistic }) as i64,
        None => -1,
    });
    (
        PyArray1::from_vec(py, ids),
        PyArray1::from_vec(py, scores),
        PyArray1::from_vec(py, offsets),
        PyArray2::from_owned_array(py, ranks),
    )
}

/// Ranks each test row's own candidates (see the module docs): `pool` holds
/// the candidate outputs (`y_kind` `labels`: a CSR 0/1 indicator; `vectors`:
/// a float64 array); `indptr` / `indices` give each row's pool rows (both
/// `None`: the whole pool for every row); `truth` the true pool row per test
/// row (`-1`: unknown); `top_k` limits each ranking (default: all
/// candidates); `memory_budget` bounds the decoder's tiles in bytes.
#[pyfunction]
#[pyo3(signature = (model, x, pool, y_kind, indptr, indices, truth, top_k=None, memory_budget=1 << 30, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub fn rank_per_query<'py>(
    py: Python<'py>,
    model: &Model,
    x: &Bound<'py, PyAny>,
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
        let x: Features = convert::inputs(x)?;
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
        groups.check(x.n_rows())?;
        let truth: Vec<i64> = truth.as_array().to_vec();
        if truth.len() != x.n_rows() {
            return Err(PyValueError::new_err(format!("{} true candidates for {} test rows", truth.len(), x.n_rows())));
        }
        let decoder = PerQueryDecoder::new().memory_budget(memory_budget).top_k(top_k);
        let ranked = match (model.expansion(), &pool) {
            (Expansion::Labels(m, _), Outputs::Labels(pool)) => {
                threads::run(py, n_jobs, || rank_all(&decoder, m, &x, pool, &groups, &truth))?
            }
            (Expansion::Vectors(m, _), Outputs::Vectors(pool)) => {
                threads::run(py, n_jobs, || rank_all(&decoder, m, &x, pool, &groups, &truth))?
            }
            (Expansion::Gram(m, _, n_train), Outputs::Labels(pool)) => {
                let k = crate::surrogate::gram_rows(&x, n_train)?;
                threads::run(py, n_jobs, || rank_all(&decoder, m, &k, pool, &groups, &truth))?
            }
            (Expansion::GramVectors(m, _, n_train), Outputs::Vectors(pool)) => {
                let k = crate::surrogate::gram_rows(&x, n_train)?;
                threads::run(py, n_jobs, || rank_all(&decoder, m, &k, pool, &groups, &truth))?
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "candidates of kind {y_kind:?} do not match the model's outputs"
                )));
            }
        }
        .map_err(to_py)?;
        Ok(flatten(py, ranked))
    })
}

/// Retrieval metrics of true-candidate ranks (1 = first): top-1/5/10/20
/// accuracy, mean and median rank, from the optimistic and the pessimistic
/// ranks (`okr_eval::retrieval_metrics`), as a dict.
#[pyfunction]
pub fn retrieval_metrics<'py>(
    py: Python<'py>,
    optimistic: Vec<usize>,
    pessimistic: Vec<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    guard(|| {
        let m = okr_eval::retrieval_metrics(&optimistic, &pessimistic).map_err(to_py)?;
        let out = PyDict::new(py);
        out.set_item("n_queries", m.n_queries)?;
        for (name, s) in [("optimistic", m.optimistic), ("pessimistic", m.pessimistic)] {
            out.set_item(name, s.named().into_py_dict(py)?)?;
        }
        Ok(out)
    })
}
