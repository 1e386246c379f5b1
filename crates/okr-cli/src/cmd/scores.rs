//! `predict` and `eval` for label-score models (LEML): threshold or rank the
//! scores `(n_test, n_labels)` instead of decoding candidate sets.

use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result, bail};
use okr_estimators::ScoreModel;
use okr_estimators::leml::Leml;
use okr_eval::Dataset;
use okr_kernels::LabelSets;

use crate::cli::RenderArgs;
use crate::cmd::sparse_inputs;
use okr_eval::predictions::Predicted;

/// Labels with a score above their threshold.
fn thresholded(scores: faer::MatRef<'_, f64>, thresholds: &[f64]) -> Result<LabelSets> {
    let sets = (0..scores.nrows())
        .map(|i| (0..scores.ncols()).filter(|&j| scores[(i, j)] > thresholds[j]).collect())
        .collect();
    Ok(LabelSets::new(scores.ncols(), sets)?)
}

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
    read_thresholds(path, l)
}

fn read_thresholds(path: &Path, l: usize) -> Result<Vec<f64>> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("{}:{}", path.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let t: f64 = line
            .trim()
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite())
            .with_context(|| format!("{}:{}: {:?} is not a finite number", path.display(), i + 1, line.trim()))?;
        out.push(t);
    }
    if out.len() != l {
        bail!("{}: {} thresholds, expected one per label ({l})", path.display(), out.len());
    }
    Ok(out)
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
    let scores = model.scores(sparse_inputs(data)?.as_ref())?;
    let sets = thresholded(scores.as_ref(), &thresholds)?;
    let ranked = (0..scores.nrows())
        .map(|i| {
            let labels: Vec<usize> = if top_k > 1 {
                let mut order: Vec<usize> = (0..scores.ncols()).collect();
                order.sort_by(|&a, &b| scores[(i, b)].total_cmp(&scores[(i, a)]).then(a.cmp(&b)));
                order.truncate(top_k);
                order
            } else {
                sets.set(i).to_vec()
            };
            vec![labels]
        })
        .collect();
    Ok(Predicted { names, ranked, ranked_scores: None, label_scores: render.scores.then_some(scores) })
}

/// LEML's label scores on `data`, the sets above its threshold, the
/// threshold, and the seconds it took.
pub fn thresholded_scores(model: &Leml, data: &Dataset) -> Result<(faer::Mat<f64>, LabelSets, f64, f64)> {
    let start = std::time::Instant::now();
    let scores = model.scores(sparse_inputs(data)?.as_ref())?;
    let t = model.decision_threshold();
    let predicted = thresholded(scores.as_ref(), &vec![t; scores.ncols()])?;
    Ok((scores, predicted, t, start.elapsed().as_secs_f64()))
}
