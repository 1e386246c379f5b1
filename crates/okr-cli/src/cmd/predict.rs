//! `okr predict`.

use anyhow::{Result, bail};
use okr_estimators::persist::Model;

use okr_eval::predictions::{Predicted, write_predictions};

use super::decoding::{Extras, load_for_decoding, predict_dataset};
use crate::cli::{OutputFormat, PredictArgs};
use crate::config::check_data_flags;
use crate::model::label_names;
use crate::output::write_result;

pub fn run(a: &PredictArgs) -> Result<()> {
    if let Some(input) = &a.input {
        check_data_flags(input, &a.data, None)?;
    }
    check_format(a.render.output_format, a.top_k, a.render.scores)?;
    if let Some(out) = &a.output {
        let mut inputs = vec![("model", a.model.as_path())];
        inputs.extend(a.input.as_deref().map(|p| ("input file", p)));
        inputs.extend(a.decode.input_gram_test.as_deref().map(|p| ("Gram file", p)));
        inputs.extend(a.decode.candidates.as_deref().map(|c| ("candidate file", c)));
        inputs.extend(a.render.thresholds.as_deref().map(|c| ("thresholds file", c)));
        okr_eval::check_not_input(out, &inputs)?;
    }
    let mf = crate::model::load(&a.model)?;
    super::gram::check_test_flags(&mf.model, &a.model, a.decode.input_gram_test.as_deref(), a.input.as_deref())?;
    if super::output_models::is_output_model(&mf.model) {
        return super::output_models::predict(a, &mf);
    }
    let (mf, test, candidates, decoder) =
        load_for_decoding(mf, &a.model, a.input.as_deref(), &a.data, &a.decode, false)?;
    if let (Some(input), None) = (&a.input, &test.gram) {
        check_data_flags(input, &a.data, Some(mf.info.n_labels))?;
    }
    let names = label_names(&mf.info);
    // The whole prediction is made before the output is opened, so a failure
    // leaves an existing output file as it was.
    let predicted = if let Model::Leml(m) = &mf.model {
        if a.decode.candidates.is_some() {
            bail!("--candidates does not apply to a LEML model (it ranks label scores, it decodes no candidates)");
        }
        let Some(data) = &test.data else { bail!("a LEML model reads features: give --input") };
        crate::cmd::scores::predict(m, data, a.top_k, &a.render, names)?
    } else {
        if a.render.threshold.is_some() || a.render.thresholds.is_some() {
            bail!("--threshold and --thresholds apply to label-score models (leml), not to {}", mf.model.name());
        }
        let extras = if a.render.scores { Extras::Scores } else { Extras::None };
        let pred = predict_dataset(&mf, &test, &candidates, decoder.top_k(a.top_k), extras)?;
        let n = pred.decoded.n_rows();
        Predicted {
            names,
            ranked: (0..n).map(|t| pred.decoded.top(t).iter().map(|&c| candidates.set(c).to_vec()).collect()).collect(),
            ranked_scores: a.render.scores.then(|| (0..n).map(|t| pred.decoded.top_scores(t).to_vec()).collect()),
            label_scores: pred.label_scores,
        }
    };
    let mut text = Vec::new();
    write_predictions(a.render.output_format.into(), &predicted, &mut text)?;
    write_result(a.output.as_deref(), |w| w.write_all(&text))
}

/// Checks the format against `--top-k` and `--scores` before any work.
fn check_format(format: OutputFormat, top_k: usize, scores: bool) -> Result<()> {
    match format {
        OutputFormat::Indicator | OutputFormat::Csv if top_k > 1 => {
            bail!("--top-k {top_k} needs --output-format labels or json (an indicator row holds one label set)")
        }
        OutputFormat::Labels | OutputFormat::Indicator if scores => {
            bail!("--scores needs --output-format csv or json")
        }
        _ => Ok(()),
    }
}
