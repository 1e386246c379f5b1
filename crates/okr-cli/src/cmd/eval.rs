//! `okr eval`.

use anyhow::{Result, bail};
use okr_eval::{f1_macro, f1_micro, f1_samples, hamming_loss, precision_at_k};
use okr_kernels::Rows;
use serde_json::json;

use crate::cli::EvalArgs;
use crate::cmd::{load_for_decoding, predict_dataset};
use crate::config::check_data_flags;
use crate::output::write_result;

pub fn run(a: &EvalArgs) -> Result<()> {
    check_data_flags(&a.test, &a.data, None)?;
    let (mf, data, candidates, decoder) = load_for_decoding(&a.model, &a.test, &a.data, &a.decode)?;
    check_data_flags(&a.test, &a.data, Some(mf.info.n_labels))?;
    let report = if let okr_estimators::persist::Model::Leml(m) = &mf.model {
        if a.decode.candidates.is_some() {
            bail!("--candidates does not apply to a LEML model (it ranks label scores, it decodes no candidates)");
        }
        crate::cmd::scores::eval(m, &mf, &data)?
    } else {
        let pred = predict_dataset(&mf, &data, &candidates, decoder, true)?;
        let predicted = candidates.select(&pred.decoded.best());

        let Some(scores) = &pred.label_scores else { unreachable!("eval asks for label scores") };
        // p@k is undefined for k above the number of labels: null in the JSON.
        let p_at = |k: usize| -> Result<Option<f64>> {
            if k > data.n_labels() {
                return Ok(None);
            }
            Ok(Some(100.0 * precision_at_k(scores.as_ref(), &data.y, k)?))
        };
        let errors = pred.rkhs_sq_errors.as_deref().unwrap_or(&[]);
        let mse_h = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
        json!({
            "n_test": data.n_samples(),
            "n_candidates": candidates.n_rows(),
            "f1_samples": f1_samples(&data.y, &predicted)?,
            "f1_micro": f1_micro(&data.y, &predicted)?,
            "f1_macro": f1_macro(&data.y, &predicted)?,
            "hamming": hamming_loss(&data.y, &predicted)?,
            "p_at_1": p_at(1)?,
            "p_at_3": p_at(3)?,
            "p_at_5": p_at(5)?,
            "mse_h": mse_h,
            "fit_seconds": mf.info.fit_seconds,
            "decode_seconds": pred.decode_seconds,
        })
    };
    write_result(None, |w| writeln!(w, "{report}"))
}
