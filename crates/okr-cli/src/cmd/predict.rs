//! `okr predict`.

use std::io::{BufWriter, Write};

use anyhow::{Context, Result};

use crate::cli::PredictArgs;
use crate::cmd::{load_for_decoding, predict_dataset};

pub fn run(a: &PredictArgs) -> Result<()> {
    let (mf, data, candidates, decoder) = load_for_decoding(&a.model, &a.input, &a.data, &a.decode)?;
    let sink: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    if let crate::model::FittedModel::Leml(m) = &mf.model {
        crate::cmd::scores::predict(m, &data, a.top_k, &mut out)?;
        out.flush()?;
        return Ok(());
    }
    let pred = predict_dataset(&mf, &data, &candidates, decoder.top_k(a.top_k), false)?;
    for t in 0..pred.decoded.n_rows() {
        let line: Vec<String> = pred
            .decoded
            .top(t)
            .iter()
            .map(|&c| candidates.set(c).iter().map(|l| l.to_string()).collect::<Vec<_>>().join(","))
            .collect();
        writeln!(out, "{}", line.join(";"))?;
    }
    out.flush()?;
    Ok(())
}
