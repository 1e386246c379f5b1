//! Loading the benchmark data, or a labelled stand-in when it is missing.

use anyhow::Result;
use okr_eval::Dataset;

/// A train/test pair and where it came from.
pub struct LoadedData {
    /// Data set name as in the records (`bibtex`, or `bibtex-standin`).
    pub name: String,
    /// Training split.
    pub train: Dataset,
    /// Test split.
    pub test: Dataset,
    /// Whether this is a seeded stand-in rather than the real data.
    pub stand_in: bool,
}

/// Reads a Mulan data set from `OKR_DATA_DIR` (default `../shared/data`), or
/// generates a seeded stand-in of the same shape, saying so on stderr.
pub fn load_mulan_or_standin(name: &str, seed: u64) -> Result<LoadedData> {
    match okr_eval::read_mulan(name) {
        Ok((train, test)) => Ok(LoadedData { name: name.to_string(), train, test, stand_in: false }),
        Err(err) => {
            eprintln!("xtask: {err}; using a seeded stand-in of the same shape (results are labelled {name}-standin)");
            let preset = okr_eval::StandinPreset::from_name(name)
                .ok_or_else(|| anyhow::anyhow!("no stand-in generator for {name}"))?;
            let (train, test) = preset.spec().seed(seed).generate()?;
            Ok(LoadedData { name: format!("{name}-standin"), train, test, stand_in: true })
        }
    }
}
