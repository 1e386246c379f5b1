//! `okr eval`: one JSON object with the same keys, in the same units, for
//! every estimator ([`okr_eval::report::LabelSetReport`]).

use anyhow::{Result, bail};
use okr_estimators::persist::Model;
use okr_eval::predictions::PredictionFormat;
use okr_eval::report::{LabelSetPrediction, LabelSetReport};
use okr_kernels::Rows;

use super::decoding::{Extras, load_for_decoding, predict_dataset};
use crate::cli::{EvalArgs, FingerprintFormat};
use crate::config::check_data_flags;
use crate::output::write_result;

/// The report as the one JSON object `okr eval` prints.
fn print(report: &LabelSetReport) -> Result<()> {
    let v = serde_json::to_value(report)?;
    write_result(None, |w| writeln!(w, "{v}"))
}

pub fn run(a: &EvalArgs) -> Result<()> {
    check_data_flags(&a.input, &a.data, None)?;
    check_fingerprint_flags(a)?;
    if let Some(path) = &a.predictions {
        return eval_file(a, path);
    }
    let mf = crate::model::load(&a.model)?;
    super::gram::check_test_flags(&mf.model, &a.model, a.decode.input_gram_test.as_deref(), Some(&a.input))?;
    if super::output_models::is_output_model(&mf.model) {
        return super::output_models::eval(a, &mf);
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
    let report = if let Model::Leml(m) = &mf.model {
        if a.decode.candidates.is_some() {
            bail!("--candidates does not apply to a LEML model (it ranks label scores, it decodes no candidates)");
        }
        let (scores, predicted, threshold, decode_seconds) = crate::cmd::scores::thresholded_scores(m, &data)?;
        let e = LabelSetPrediction {
            data: &data,
            predicted,
            scores: Some(scores.as_ref()),
            mse_h: None,
            n_candidates: None,
            threshold: Some(threshold),
            decode_seconds,
        };
        LabelSetReport::new(&mf.model.name(), mf.info.fit_seconds, &e, a.per_label)?
    } else {
        test.data = Some(data);
        let pred = predict_dataset(&mf, &test, &candidates, decoder, Extras::ScoresAndErrors)?;
        let Some(data) = test.data.take() else { unreachable!("put back above") };
        let Some(scores) = &pred.label_scores else { unreachable!("eval asks for label scores") };
        let errors = pred.rkhs_sq_errors.as_deref().unwrap_or(&[]);
        let e = LabelSetPrediction {
            data: &data,
            predicted: candidates.select(&pred.decoded.best()),
            scores: Some(scores.as_ref()),
            mse_h: Some(errors.iter().sum::<f64>() / errors.len().max(1) as f64),
            n_candidates: Some(candidates.n_rows()),
            threshold: None,
            decode_seconds: pred.decode_seconds,
        };
        let mut report = LabelSetReport::new(&mf.model.name(), mf.info.fit_seconds, &e, a.per_label)?;
        // The output kernel of a model on features or on a precomputed Gram.
        let ky = match (mf.model.surrogate(), mf.model.gram_surrogate()) {
            (Some(m), _) => Some(m.output_kernel()),
            (None, Some(m)) => Some(m.output_kernel()),
            (None, None) => None,
        };
        if truth.is_some()
            && let Some(ky) = ky
        {
            // Fingerprints: the output-kernel loss of the decoded candidates too.
            let losses = okr_eval::output_kernel_losses(ky, &e.predicted, &data.y)?;
            report.output_kernel_loss = Some(losses.iter().sum::<f64>() / losses.len().max(1) as f64);
        }
        report
    };
    print(&report)
}

/// `--n-bits` and `--fingerprint-format` describe the true fingerprints of
/// `--outputs`: without `--outputs` they describe nothing and are refused,
/// not ignored (the model's length is checked against them where they
/// apply, [`read_fingerprints`](crate::cmd::outputs::read_fingerprints)).
fn check_fingerprint_flags(a: &EvalArgs) -> Result<()> {
    let f = &a.output_file;
    if f.outputs.is_some() {
        return Ok(());
    }
    if let Some(n) = f.n_bits {
        bail!(
            "--n-bits {n} describes the sparse fingerprints of --outputs FILE, and no --outputs is given: \
             leave it out (eval takes the fingerprint length from the model)"
        );
    }
    if f.fingerprint_format != FingerprintFormat::Dense {
        bail!("--fingerprint-format describes the fingerprints of --outputs FILE, and no --outputs is given");
    }
    Ok(())
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
    let e = LabelSetPrediction {
        data: &data,
        predicted: back.sets,
        scores: back.scores.as_ref().map(|s| s.as_ref()),
        mse_h: None,
        n_candidates: None,
        threshold: None,
        decode_seconds: 0.0,
    };
    print(&LabelSetReport::new(&mf.model.name(), mf.info.fit_seconds, &e, a.per_label)?)
}
