//! `predict` and `eval` for label-score models (LEML): threshold or rank the
//! scores `(n_test, n_labels)` instead of decoding candidate sets.

use anyhow::{Result, bail};
use okr_estimators::ScoreModel;
use okr_estimators::leml::Leml;
use okr_eval::Dataset;
use okr_eval::predictions::Predicted;
use okr_eval::score_metrics::{threshold_sets, top_labels};
use okr_kernels::LabelSets;

use crate::cli::RenderArgs;

/// One threshold per label: `--threshold`, `--thresholds FILE` or the model's.
fn thresholds(model: &Leml, render: &RenderArgs) -> Result<Vec<f64>> {
    let l = model.n_labels();
    if let Some(t) = render.threshold {
        if !t.is_finite() {
            bail!("invalid --threshold {t}: expected a finite number");
        }
        return Ok(vec![t; l]);
    }
    let Some(path) = &render.thresholds else { return Ok(vec![model.decision_threshold(); l]) };
    Ok(okr_eval::read_thresholds(path, l)?)
}

/// Per input the thresholded label set, or with `top_k > 1` the `top_k`
/// best-scoring labels, best first (ties: lower label first).
pub fn predict(
    model: &Leml,
    data: &Dataset,
    top_k: usize,
    render: &RenderArgs,
    names: Vec<String>,
) -> Result<Predicted> {
    let thresholds = thresholds(model, render)?;
    let scores = model.scores(data.x.sparse_rows()?.as_ref())?;
    let ranked = if top_k > 1 {
        top_labels(scores.as_ref(), top_k).into_iter().map(|labels| vec![labels]).collect()
    } else {
        threshold_sets(scores.as_ref(), &thresholds)?.iter().map(|set| vec![set.to_vec()]).collect()
    };
    Ok(Predicted { names, ranked, ranked_scores: None, label_scores: render.scores.then_some(scores) })
}

/// LEML's label scores on `data`, the sets above its threshold, the
/// threshold, and the seconds it took.
pub fn thresholded_scores(model: &Leml, data: &Dataset) -> Result<(faer::Mat<f64>, LabelSets, f64, f64)> {
    let start = std::time::Instant::now();
    let scores = model.scores(data.x.sparse_rows()?.as_ref())?;
    let t = model.decision_threshold();
    let predicted = threshold_sets(scores.as_ref(), &vec![t; scores.ncols()])?;
    Ok((scores, predicted, t, start.elapsed().as_secs_f64()))
}
