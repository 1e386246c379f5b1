//! `okr._okr.tune`: the search of `okr tune` ([`okr::tune`]) for Python's
//! `okr.SearchCV`: the Gaussian input width and the ridge of a
//! kernel-output estimator by okr's fast paths (IOKR's regularization path
//! and closed forms), K-fold with optional groups; on a precomputed Gram
//! (`kernel="precomputed"`) the ridge, folds cut as Gram blocks.

use okr::TrainOutputs;
use okr::tune::{Cv, TuneRequest};
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
#[pyfunction]
#[pyo3(signature = (recipe, cv, lambdas, widths, groups, x, y, y_kind, n_jobs=None))]
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
) -> PyResult<String> {
    guard(|| {
        let recipe = okr::Recipe::from_json(recipe).map_err(to_py)?;
        let cv: Cv = cv.parse().map_err(to_py)?;
        // Any integer labels a group; only equality matters.
        let groups: Option<Vec<u64>> = groups.map(|g| g.into_iter().map(|v| v as u64).collect());
        let request = TuneRequest {
            recipe: &recipe,
            cv,
            lambdas,
            widths,
            groups: groups.as_deref(),
            output_gammas: None,
            scoring: okr::tune::Scoring::Decoded,
            queries: None,
        };
        okr::tune::check(&request).map_err(to_py)?;
        let x = convert::inputs(x)?;
        let y = convert::outputs(y, y_kind)?;
        // kernel="precomputed": X is the training Gram, folds cut as Gram blocks.
        let gram = crate::model::train_gram(&recipe, &x)?;
        let tuned = threads::run(py, n_jobs, || {
            let y = match &y {
                Outputs::Labels(l) => TrainOutputs::Labels(l),
                Outputs::Vectors(v) => TrainOutputs::Vectors(v),
            };
            match &gram {
                Some(k) => okr::tune::tune_gram(&request, k, &y, &mut || {}),
                None => okr::tune::tune(&request, &x, &y, &mut || {}),
            }
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
