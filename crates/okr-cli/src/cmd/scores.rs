//! `predict` and `eval` for label-score models (LEML): threshold or rank the
//! scores `(n_test, n_labels)` instead of decoding candidate sets.

use std::io::Write;

use anyhow::Result;
use okr_estimators::ScoreModel;
use okr_estimators::leml::Leml;
use okr_eval::Dataset;
use okr_kernels::LabelSets;

use crate::cmd::sparse_inputs;

/// Labels with a score above the model's threshold (its training encoding's midpoint).
fn thresholded(scores: faer::MatRef<'_, f64>, threshold: f64) -> Result<LabelSets> {
    let sets =
        (0..scores.nrows()).map(|i| (0..scores.ncols()).filter(|&j| scores[(i, j)] > threshold).collect()).collect();
    Ok(LabelSets::new(scores.ncols(), sets)?)
}

/// One line per input: the thresholded label set, or with `top_k > 1` the
/// `top_k` best-scoring labels, best first (ties: lower label first).
pub fn predict(model: &Leml, data: &Dataset, top_k: usize, out: &mut dyn Write) -> Result<()> {
    let scores = model.scores(sparse_inputs(data)?.as_ref())?;
    let sets = thresholded(scores.as_ref(), model.decision_threshold())?;
    for i in 0..scores.nrows() {
        let labels: Vec<usize> = if top_k > 1 {
            let mut order: Vec<usize> = (0..scores.ncols()).collect();
            order.sort_by(|&a, &b| scores[(i, b)].total_cmp(&scores[(i, a)]).then(a.cmp(&b)));
            order.truncate(top_k);
            order
        } else {
            sets.set(i).to_vec()
        };
        writeln!(out, "{}", labels.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(","))?;
    }
    Ok(())
}

/// LEML's label scores on `data`, the sets above its threshold, the
/// threshold, and the seconds it took.
pub fn thresholded_scores(model: &Leml, data: &Dataset) -> Result<(faer::Mat<f64>, LabelSets, f64, f64)> {
    let start = std::time::Instant::now();
    let scores = model.scores(sparse_inputs(data)?.as_ref())?;
    let predicted = thresholded(scores.as_ref(), model.decision_threshold())?;
    Ok((scores, predicted, model.decision_threshold(), start.elapsed().as_secs_f64()))
}
