//! `okr predict`.

use anyhow::{Result, bail};

use crate::cli::PredictArgs;
use crate::cmd::{load_for_decoding, predict_dataset};
use crate::config::check_data_flags;
use crate::output::write_result;

pub fn run(a: &PredictArgs) -> Result<()> {
    check_data_flags(&a.input, &a.data, None)?;
    if let Some(out) = &a.output {
        let mut inputs = vec![("input file", a.input.as_path()), ("model", a.model.as_path())];
        inputs.extend(a.decode.candidates.as_deref().map(|c| ("candidate file", c)));
        okr_eval::check_not_input(out, &inputs)?;
    }
    let (mf, data, candidates, decoder) = load_for_decoding(&a.model, &a.input, &a.data, &a.decode, false)?;
    check_data_flags(&a.input, &a.data, Some(mf.info.n_labels))?;
    // The whole prediction is made before the output is opened, so a failure
    // leaves an existing output file as it was.
    let mut text = Vec::new();
    if let okr_estimators::persist::Model::Leml(m) = &mf.model {
        if a.decode.candidates.is_some() {
            bail!("--candidates does not apply to a LEML model (it ranks label scores, it decodes no candidates)");
        }
        crate::cmd::scores::predict(m, &data, a.top_k, &mut text)?;
    } else {
        use std::io::Write;
        let pred = predict_dataset(&mf, &data, &candidates, decoder.top_k(a.top_k), false)?;
        for t in 0..pred.decoded.n_rows() {
            let line: Vec<String> = pred
                .decoded
                .top(t)
                .iter()
                .map(|&c| candidates.set(c).iter().map(|l| l.to_string()).collect::<Vec<_>>().join(","))
                .collect();
            writeln!(text, "{}", line.join(";"))?;
        }
    }
    write_result(a.output.as_deref(), |w| w.write_all(&text))
}
