//! `okr._okr.tune`: the search of `okr tune` ([`okr::tune`]) for Python's
//! `okr.SearchCV`: the Gaussian input width and the ridge of a
//! kernel-output estimator by okr's fast paths (IOKR's regularization path
//! and closed forms), K-fold with optional groups; on a precomputed Gram
//! (`kernel="precomputed"`) the ridge, folds cut as Gram blocks. Scored by
//! the decoded outputs or, for retrieval ([`okr::tune::Scoring`]), by the
//! rank of each training row's true candidate among its own candidate set
//! (inline or indices into a pool, as `okr tune --candidates-per-query`).

use okr::TrainOutputs;
use okr::tune::{Cv, Scoring, TuneQueries, TuneRequest};
use okr_decode::per_query::Query;
use okr_kernels::{LabelSets, Rows};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::json;

use crate::convert::{self, Outputs};
use crate::errors::{guard, to_py};
use crate::threads::{self, NJobs};

/// Runs the search of `recipe` (JSON; its `lambda` and input width unset)
/// scored by `cv` (a fold count, `loo`, `loo-rkhs` or `gcv-rkhs`) over
/// `lambdas` and width multipliers `widths` (`None`: okr's grid and its
/// coarse-to-fine width search), with a group per row (`groups`, K-fold
/// only). Returns JSON: `criterion`, `score` (what a score is), `error`,
/// `failed`, `cells` (every width x ridge: `c`, `gamma`, `lambda`, `mean`,
/// `std`, `fold_scores`), `coarse_cells`, `chosen` and `refit` (the recipe
/// to refit with the choice).
///
/// `scoring` is [`Scoring`]'s spelling (`decoded`, `top1`, `top5`, `top10`,
/// `topK`, `mean-rank`); a retrieval scoring takes `queries`
/// ([`PyQueries`]). `verbose` logs the fits of the grid (see `progress`).
#[pyfunction]
#[pyo3(signature = (recipe, cv, lambdas, widths, groups, x, y, y_kind, n_jobs=None, scoring="decoded", queries=None, verbose=0))]
#[allow(clippy::too_many_arguments)]
pub fn tune(
    py: Python<'_>,
    recipe: &str,
    cv: &str,
    lambdas: Option<Vec<f64>>,
    widths: Option<Vec<f64>>,
    groups: Option<Vec<i64>>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    y_kind: &str,
    n_jobs: Option<NJobs>,
    scoring: &str,
    queries: Option<PyQueries<'_>>,
    verbose: usize,
) -> PyResult<String> {
    let observer = crate::progress::logger(py, verbose)?;
    guard(|| {
        let recipe = okr::Recipe::from_json(recipe).map_err(to_py)?;
        let cv: Cv = cv.parse().map_err(to_py)?;
        let scoring: Scoring = scoring.parse().map_err(to_py)?;
        // Any integer labels a group; only equality matters.
        let groups: Option<Vec<u64>> = groups.map(|g| g.into_iter().map(|v| v as u64).collect());
        let request = TuneRequest {
            recipe: &recipe,
            cv,
            lambdas,
            widths,
            groups: groups.as_deref(),
            output_gammas: None,
            scoring,
            // Built with the data; the early check only asks whether they are given.
            queries: queries.as_ref().map(|_| TuneQueries { queries: &[], pool: None }),
        };
        okr::tune::check(&request).map_err(to_py)?;
        let x = convert::inputs(x)?;
        let y = convert::outputs(y, y_kind)?;
        let built = match (queries, &y) {
            (None, _) => None,
            (Some(q), Outputs::Labels(sets)) => Some(q.build(sets.n_labels())?),
            (Some(_), Outputs::Vectors(_)) => {
                return Err(PyValueError::new_err("retrieval scoring ranks candidate label sets, not vector outputs"));
            }
        };
        let request = TuneRequest {
            queries: built.as_ref().map(|(q, pool)| TuneQueries { queries: q, pool: pool.as_ref() }),
            ..request
        };
        // kernel="precomputed": X is the training Gram, folds cut as Gram blocks.
        let gram = crate::model::train_gram(&recipe, &x)?;
        let tuned = threads::run(py, n_jobs, || {
            crate::progress::observe(observer, || {
                let y = match &y {
                    Outputs::Labels(l) => TrainOutputs::Labels(l),
                    Outputs::Vectors(v) => TrainOutputs::Vectors(v),
                };
                match &gram {
                    Some(k) => okr::tune::tune_gram(&request, k, &y, &mut || {}),
                    None => okr::tune::tune(&request, &x, &y, &mut || {}),
                }
            })
        })?
        .map_err(to_py)?;
        let r = &tuned.result;
        let report = json!({
            "criterion": tuned.criterion,
            "score": tuned.score,
            "error": tuned.error,
            "failed": tuned.failed,
            "cells": r.cells(),
            "coarse_cells": tuned.coarse.as_ref().map(|c| c.cells()),
            "chosen": { "c": r.c(), "gamma": r.gamma(), "lambda": r.lambda(), "mean": r.best_score() },
            "refit": serde_json::to_value(&tuned.refit).map_err(|e| to_py(okr::Error::Recipe(e.to_string())))?,
        });
        Ok(report.to_string())
    })
}

/// The per-query candidate sets of a retrieval scoring, as Python's
/// `SearchCV.fit` flattens them: query `q` ranks candidates for training
/// row `rows[q]`, its candidates are `indices[indptr[q]..indptr[q + 1]]`
/// (rows of `candidates`: a 0/1 CSR label indicator) and its true candidate
/// is at position `truth[q]` of that list (`-1`: none, the query is not
/// scored). With `inline`, `candidates` stacks every query's own candidates
/// (`okr-candidates 1 inline`); otherwise it is the shared pool
/// (`okr-candidates 1 pool` with `--pool`).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct PyQueries<'py> {
    candidates: Bound<'py, PyAny>,
    inline: bool,
    rows: Vec<i64>,
    indptr: Vec<i64>,
    indices: Vec<i64>,
    truth: Vec<i64>,
}

/// Queries of training rows and the pool of pool-mode queries.
type Queries = (Vec<Query<LabelSets>>, Option<LabelSets>);

impl PyQueries<'_> {
    /// The queries (and the pool), checked against `n_labels` outputs.
    fn build(self, n_labels: usize) -> PyResult<Queries> {
        let candidates = convert::label_sets(&self.candidates)?;
        if candidates.n_labels() != n_labels {
            return Err(PyValueError::new_err(format!(
                "candidates have {} labels, the training outputs {n_labels}",
                candidates.n_labels()
            )));
        }
        let n = self.rows.len();
        if self.indptr.len() != n + 1 || self.truth.len() != n {
            return Err(PyValueError::new_err(format!(
                "candidate queries: {} rows, {} offsets and {} true positions (expected {n}, {} and {n})",
                n,
                self.indptr.len(),
                self.truth.len(),
                n + 1
            )));
        }
        let index = |what: &str, v: i64| {
            usize::try_from(v).map_err(|_| PyValueError::new_err(format!("negative {what} {v} in candidate queries")))
        };
        let indices = self.indices.iter().map(|&v| index("candidate index", v)).collect::<PyResult<Vec<_>>>()?;
        if let Some(&bad) = indices.iter().find(|&&i| i >= candidates.n_rows()) {
            return Err(PyValueError::new_err(format!(
                "candidate index {bad} beyond the {} candidate rows",
                candidates.n_rows()
            )));
        }
        let mut queries = Vec::with_capacity(n);
        for q in 0..n {
            let (a, b) = (index("offset", self.indptr[q])?, index("offset", self.indptr[q + 1])?);
            if a > b || b > indices.len() {
                return Err(PyValueError::new_err(format!("candidate queries: offsets of query {q} out of order")));
            }
            let list = indices[a..b].to_vec();
            let truth = match self.truth[q] {
                t if t < 0 => None,
                t => Some(index("true position", t)?),
            };
            let row = index("training row", self.rows[q])?;
            queries.push(match self.inline {
                true => Query::inline(q.to_string(), row, candidates.select(&list), truth),
                false => Query::pooled(q.to_string(), row, list, truth),
            });
        }
        Ok((queries, (!self.inline).then_some(candidates)))
    }
}

/// The folds `okr tune` (and `SearchCV`) cut `n_samples` training rows
/// into: `n_splits` folds, each group of `groups` in one fold when given,
/// shuffled by the recipe's seed ([`okr::tune::folds`]). Returns the
/// `(training rows, validation rows)` of each fold.
#[pyfunction]
#[pyo3(signature = (recipe, n_splits, n_samples, groups=None))]
pub fn cv_folds(
    recipe: &str,
    n_splits: usize,
    n_samples: usize,
    groups: Option<Vec<i64>>,
) -> PyResult<Vec<(Vec<usize>, Vec<usize>)>> {
    guard(|| {
        let recipe = okr::Recipe::from_json(recipe).map_err(to_py)?;
        let groups: Option<Vec<u64>> = groups.map(|g| g.into_iter().map(|v| v as u64).collect());
        okr::tune::folds(n_splits, n_samples, groups.as_deref(), recipe.seed).map_err(to_py)
    })
}
