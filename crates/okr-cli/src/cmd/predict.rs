//! `okr predict`.

use std::io::{BufWriter, Write};

use anyhow::{Context, Result};
use okr_decode::CandidateDecoder;

use crate::cli::PredictArgs;
use crate::cmd::predict_dataset;
use crate::config::{read_candidates, read_data, set_threads};
use crate::model::ModelFile;

pub fn run(a: &PredictArgs) -> Result<()> {
    set_threads(a.decode.threads)?;
    let mf = ModelFile::load(&a.model)?;
    let data = read_data(&a.input, &a.data, Some(mf.shape()))?;
    let candidates = match &a.decode.candidates {
        Some(p) => read_candidates(p, mf.n_labels)?,
        None => mf.default_candidates(),
    };
    let decoder = CandidateDecoder::new().top_k(a.top_k).memory_budget(a.decode.memory_budget.saturating_mul(1 << 20));
    let pred = predict_dataset(&mf, &data, &candidates, decoder, false)?;

    let sink: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
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
