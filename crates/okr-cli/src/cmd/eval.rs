//! `okr eval`: one JSON object with the same keys, in the same units, for
//! every estimator (see `metrics_report`).

use anyhow::{Result, bail};
use faer::MatRef;
use okr_eval::{
    Dataset, f1_macro, f1_micro, f1_samples, hamming_loss, instance_auc, jaccard_samples,
    label_ranking_average_precision, per_label_scores, precision_at_k, subset_accuracy,
};
use okr_kernels::{LabelSets, Rows};
use serde_json::{Value, json};

use okr_eval::predictions::PredictionFormat;

use crate::cli::EvalArgs;
use crate::cmd::{Extras, load_for_decoding, predict_dataset};
use crate::config::check_data_flags;
use crate::output::write_result;

/// What an estimator's prediction on a labelled file gives the metrics.
pub struct Evaluated<'a> {
    /// The test file.
    pub data: &'a Dataset,
    /// Predicted label sets.
    pub predicted: LabelSets,
    /// Label scores `(n_test, n_labels)`: decoding models' `h(x)` read with a
    /// linear output kernel, score models' own scores; `None` for a
    /// prediction file without scores (the ranking metrics are then null).
    pub scores: Option<MatRef<'a, f64>>,
    /// Mean squared RKHS error `||h(x) - psi(y)||^2` (decoding models).
    pub mse_h: Option<f64>,
    /// Number of candidate outputs (decoding models).
    pub n_candidates: Option<usize>,
    /// Threshold of the label scores (score models).
    pub threshold: Option<f64>,
    /// Seconds of prediction (coefficients + decoding, or scores + thresholding).
    pub decode_seconds: f64,
}

/// The metrics of `okr eval`. Every key is present for every estimator
/// (`null` where it does not apply): set metrics are fractions in [0, 1],
/// `p_at_k` percent, times seconds.
pub fn metrics_report(estimator: &str, fit_seconds: f64, e: &Evaluated<'_>, per_label: bool) -> Result<Value> {
    let (y, pred) = (&e.data.y, &e.predicted);
    // p@k is undefined for k above the number of labels: null in the JSON.
    let p_at = |k: usize| -> Result<Option<f64>> {
        match e.scores {
            Some(s) if k <= y.n_labels() => Ok(Some(100.0 * precision_at_k(s, y, k)?)),
            _ => Ok(None),
        }
    };
    let lrap = e.scores.map(|s| label_ranking_average_precision(s, y)).transpose()?;
    let mut report = json!({
        "estimator": estimator,
        "n_test": e.data.n_samples(),
        "n_labels": y.n_labels(),
        "n_candidates": e.n_candidates,
        "threshold": e.threshold,
        "f1_samples": f1_samples(y, pred)?,
        "f1_micro": f1_micro(y, pred)?,
        "f1_macro": f1_macro(y, pred)?,
        "hamming": hamming_loss(y, pred)?,
        "subset_accuracy": subset_accuracy(y, pred)?,
        "jaccard_samples": jaccard_samples(y, pred)?,
        "lrap": lrap,
        // Undefined when no test point has both a positive and a negative label.
        "auc": e.scores.and_then(|s| instance_auc(s, y).ok()),
        "p_at_1": p_at(1)?,
        "p_at_3": p_at(3)?,
        "p_at_5": p_at(5)?,
        "mse_h": e.mse_h,
        "fit_seconds": fit_seconds,
        "decode_seconds": e.decode_seconds,
    });
    if per_label {
        let rows: Vec<Value> = per_label_scores(y, pred)?
            .iter()
            .enumerate()
            .map(|(j, s)| {
                json!({
                    "label": e.data.label_names.get(j).map(|n| n.into_owned()),
                    "precision": s.precision,
                    "recall": s.recall,
                    "f1": s.f1,
                    "support": s.support,
                })
            })
            .collect();
        report["per_label"] = Value::Array(rows);
    }
    Ok(report)
}

pub fn run(a: &EvalArgs) -> Result<()> {
    check_data_flags(&a.input, &a.data, None)?;
    if let Some(path) = &a.predictions {
        return eval_file(a, path);
    }
    let mf = crate::model::load(&a.model)?;
    super::gram::check_test_flags(&mf.model, &a.model, a.decode.input_gram_test.as_deref(), Some(&a.input))?;
    if let okr_estimators::persist::Model::Vectors(v) = &mf.model {
        return crate::cmd::outputs::eval(a, &mf, v);
    }
    if matches!(mf.model, okr_estimators::persist::Model::Graphs(_) | okr_estimators::persist::Model::Rankings(_)) {
        return crate::cmd::structured::eval(a, &mf);
    }
    // Fingerprint models: the true fingerprints from --outputs, not label columns.
    let truth = a.output_file.outputs.as_deref();
    let (mf, mut test, candidates, decoder) =
        load_for_decoding(mf, &a.model, Some(&a.input), &a.data, &a.decode, truth.is_none())?;
    if test.gram.is_none() {
        check_data_flags(&a.input, &a.data, Some(mf.info.n_labels))?;
    }
    let Some(mut data) = test.data.take() else { unreachable!("eval always reads --input") };
    if let Some(path) = truth {
        let fp = crate::cmd::outputs::read_fingerprints(path, &a.output_file, Some(mf.info.n_labels))?;
        if fp.n_rows() != data.n_samples() {
            bail!(
                "{}: {} outputs for the {} rows of {}",
                path.display(),
                fp.n_rows(),
                data.n_samples(),
                a.input.display()
            );
        }
        data.y = fp;
    }
    let report = if let okr_estimators::persist::Model::Leml(m) = &mf.model {
        if a.decode.candidates.is_some() {
            bail!("--candidates does not apply to a LEML model (it ranks label scores, it decodes no candidates)");
        }
        let (scores, predicted, threshold, decode_seconds) = crate::cmd::scores::thresholded_scores(m, &data)?;
        let e = Evaluated {
            data: &data,
            predicted,
            scores: Some(scores.as_ref()),
            mse_h: None,
            n_candidates: None,
            threshold: Some(threshold),
            decode_seconds,
        };
        metrics_report(&mf.model.name(), mf.info.fit_seconds, &e, a.per_label)?
    } else {
        test.data = Some(data);
        let pred = predict_dataset(&mf, &test, &candidates, decoder, Extras::ScoresAndErrors)?;
        let Some(data) = test.data.take() else { unreachable!("put back above") };
        let Some(scores) = &pred.label_scores else { unreachable!("eval asks for label scores") };
        let errors = pred.rkhs_sq_errors.as_deref().unwrap_or(&[]);
        let e = Evaluated {
            data: &data,
            predicted: candidates.select(&pred.decoded.best()),
            scores: Some(scores.as_ref()),
            mse_h: Some(errors.iter().sum::<f64>() / errors.len().max(1) as f64),
            n_candidates: Some(candidates.n_rows()),
            threshold: None,
            decode_seconds: pred.decode_seconds,
        };
        let mut report = metrics_report(&mf.model.name(), mf.info.fit_seconds, &e, a.per_label)?;
        if truth.is_some()
            && let Some(m) = mf.model.surrogate()
        {
            // Fingerprints: the output-kernel loss of the decoded candidates too.
            let losses = okr_eval::output_kernel_losses(m.output_kernel(), &e.predicted, &data.y)?;
            report["output_kernel_loss"] = json!(losses.iter().sum::<f64>() / losses.len().max(1) as f64);
        }
        report
    };
    write_result(None, |w| writeln!(w, "{report}"))
}

/// `okr eval --predictions FILE`: the metrics of a prediction file against
/// the labelled file (the model gives the label names and count).
fn eval_file(a: &EvalArgs, path: &std::path::Path) -> Result<()> {
    let mf = crate::model::load(&a.model)?;
    check_data_flags(&a.input, &a.data, Some(mf.info.n_labels))?;
    let names = crate::model::label_names(&mf.info);
    let format = a.predictions_format.map_or_else(|| PredictionFormat::of_path(path), PredictionFormat::from);
    let back = okr_eval::predictions::read_predictions(path, format, &names)?;
    let input = crate::config::read_for_model(&a.input, &a.data, crate::model::shape(&mf))?;
    if input.labels == okr_eval::LabelColumns::Absent {
        bail!("{}: has features only, no label columns to evaluate against", a.input.display());
    }
    let data = input.data;
    if back.sets.n_rows() != data.n_samples() {
        bail!(
            "{}: {} predictions for {} rows of {}",
            path.display(),
            back.sets.n_rows(),
            data.n_samples(),
            a.input.display()
        );
    }
    let e = Evaluated {
        data: &data,
        predicted: back.sets,
        scores: back.scores.as_ref().map(|s| s.as_ref()),
        mse_h: None,
        n_candidates: None,
        threshold: None,
        decode_seconds: 0.0,
    };
    let report = metrics_report(&mf.model.name(), mf.info.fit_seconds, &e, a.per_label)?;
    write_result(None, |w| writeln!(w, "{report}"))
}
