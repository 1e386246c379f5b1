//! `okr encode` (the autoencoders are fitted by `okr fit`, through the
//! library's recipe layer).

use anyhow::{Result, bail};
use okr_estimators::persist::Model;

use crate::cli::EncodeArgs;
use crate::config::{read_data, set_threads};
use crate::model::{inputs, is_autoencoder, shape};

/// `okr encode`: one comma-separated code per input line.
pub fn encode(a: &EncodeArgs) -> Result<()> {
    crate::config::check_data_flags(&a.input, &a.data, None)?;
    if let Some(out) = &a.output {
        okr_eval::check_not_input(out, &[("input file", a.input.as_path()), ("model", a.model.as_path())])?;
    }
    set_threads(a.threads)?;
    let mf = crate::model::load(&a.model)?;
    if !is_autoencoder(&mf.model) {
        bail!("{} is a {} model: `okr encode` needs --estimator kae or k2ae", a.model.display(), mf.model.name());
    }
    let data = read_data(&a.input, &a.data, Some(shape(&mf)))?;
    let x = inputs(&mf, &data)?;
    let codes = match &mf.model {
        Model::Kae(m) => m.encode(x.to_dense().as_ref())?,
        Model::K2ae(m) => m.encode(x.as_ref())?,
        _ => unreachable!("checked above"),
    };
    crate::output::write_result(a.output.as_deref(), |out| {
        for i in 0..codes.nrows() {
            let row: Vec<String> = (0..codes.ncols()).map(|j| format!("{}", codes[(i, j)])).collect();
            writeln!(out, "{}", row.join(","))?;
        }
        Ok(())
    })
}
