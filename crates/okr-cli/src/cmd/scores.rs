//! `predict` and `eval` for label-score models (LEML): threshold or rank the
//! scores `(n_test, n_labels)` instead of decoding candidate sets.

use std::io::Write;

use anyhow::Result;
use okr_estimators::ScoreModel;
use okr_estimators::leml::Leml;
use okr_eval::{Dataset, f1_macro, f1_micro, f1_samples, hamming_loss_at, instance_auc, precision_at_k};
use okr_kernels::LabelSets;
use serde_json::json;

use crate::cmd::sparse_inputs;
use okr_estimators::persist::SavedModel;

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

/// The LEML metrics as one JSON object: P@1/3/5 (percent), Hamming
/// loss at the encoding threshold, per-instance AUC (points without a
/// positive or a negative label left out), F1 of the thresholded sets.
pub fn eval(model: &Leml, mf: &SavedModel, data: &Dataset) -> Result<serde_json::Value> {
    let start = std::time::Instant::now();
    let scores = model.scores(sparse_inputs(data)?.as_ref())?;
    let predict_seconds = start.elapsed().as_secs_f64();
    let predicted = thresholded(scores.as_ref(), model.decision_threshold())?;
    let p_at = |k: usize| -> Result<Option<f64>> {
        if k > data.n_labels() {
            return Ok(None);
        }
        Ok(Some(100.0 * precision_at_k(scores.as_ref(), &data.y, k)?))
    };
    let report = json!({
        "n_test": data.n_samples(),
        "threshold": model.decision_threshold(),
        "f1_samples": f1_samples(&data.y, &predicted)?,
        "f1_micro": f1_micro(&data.y, &predicted)?,
        "f1_macro": f1_macro(&data.y, &predicted)?,
        "hamming": hamming_loss_at(scores.as_ref(), &data.y, model.decision_threshold())?,
        "p_at_1": p_at(1)?,
        "p_at_3": p_at(3)?,
        "p_at_5": p_at(5)?,
        "auc": instance_auc(scores.as_ref(), &data.y).ok(),
        "fit_seconds": mf.info.fit_seconds,
        "decode_seconds": predict_seconds,
    });
    Ok(report)
}
