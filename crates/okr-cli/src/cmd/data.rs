//! `okr data list`, `okr data fetch`, and `--dataset NAME` on fit, tune and eval.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::cli::{DataCommand, EvalArgs, FitArgs};
use okr_eval::catalog::{DATASETS, Entry, Outcome, fetch, find};

pub fn run(c: &DataCommand) -> Result<()> {
    match c {
        DataCommand::List => list(),
        DataCommand::Fetch(a) => {
            let dataset = lookup(&a.name)?;
            let mirror = match &a.mirror {
                Some(m) => m.clone(),
                None => std::env::var("OKR_DATA_MIRROR").ok().filter(|m| !m.is_empty()).with_context(|| {
                    format!(
                        "no download source for {}: its public distribution is an archive okr does not unpack; \
                         pass --mirror URL (or set OKR_DATA_MIRROR) to a server holding the files as \
                         <URL>/{}/<file>, which are checked against the SHA-256 sums okr knows",
                        dataset.name, dataset.name
                    )
                })?,
            };
            if !(mirror.starts_with("http://") || mirror.starts_with("https://")) {
                bail!("invalid --mirror '{mirror}': expected an http:// or https:// URL");
            }
            let dir = okr_eval::data_dir();
            let done = fetch(dataset, &dir, &mirror, Duration::from_secs(a.timeout))?;
            for (path, outcome) in done {
                let what = match outcome {
                    Outcome::Downloaded => "downloaded, SHA-256 verified",
                    Outcome::Present => "already present, SHA-256 verified",
                };
                eprintln!("okr: {}: {what}", path.display());
            }
            Ok(())
        }
    }
}

fn lookup(name: &str) -> Result<&'static Entry> {
    find(name).with_context(|| {
        let names: Vec<&str> = DATASETS.iter().map(|d| d.name).collect();
        format!("unknown data set '{name}': expected one of {}", names.join(", "))
    })
}

fn list() -> Result<()> {
    let located = okr_eval::locate_data_dir();
    let dir = located.path;
    let mut out = format!("data directory: {} ({})\n", dir.display(), located.source);
    for d in DATASETS {
        let present = d.files.iter().all(|f| dir.join(f.path).is_file());
        let labels = d.n_labels.map_or(String::new(), |l| format!(", {l} labels"));
        out.push_str(&format!(
            "{:<10} {:>6.1} MB  {:<8} {}{labels}\n",
            d.name,
            d.bytes() as f64 / 1e6,
            if present { "present" } else { "missing" },
            d.description
        ));
    }
    crate::output::write_result(None, |w| w.write_all(out.as_bytes()))
}

/// The training (`test` false) or test file of `--dataset NAME` in
/// OKR_DATA_DIR, which must be there, and the data set.
fn dataset_file(name: &str, test: bool) -> Result<(&'static Entry, PathBuf)> {
    let d = lookup(name)?;
    let Some((train, test_file)) = d.train_test() else { bail!("--dataset {name}: not a multi-label data set") };
    let path = okr_eval::data_dir().join(if test { test_file } else { train });
    if !path.is_file() {
        bail!("--dataset {}: {} is missing (okr data fetch {})", d.name, path.display(), d.name);
    }
    Ok((d, path))
}

/// `--dataset NAME` on fit and tune: the training file and the label count.
pub fn resolve_fit(a: &mut FitArgs) -> Result<()> {
    match &a.dataset {
        None => {
            a.train = a.train_file.clone().context("okr fit needs --train PATH or --dataset NAME")?;
            Ok(())
        }
        Some(_) if a.train_file.is_some() => bail!("--train and --dataset name the same file: give one"),
        Some(name) => {
            let (d, path) = dataset_file(name, false)?;
            if a.data.label_count.is_some_and(|l| Some(l) != d.n_labels) {
                bail!(
                    "--label-count does not match --dataset {}, which has {} labels",
                    d.name,
                    d.n_labels.unwrap_or(0)
                );
            }
            a.train = path;
            a.data.label_count = d.n_labels;
            Ok(())
        }
    }
}

/// `--dataset NAME` on eval: the test file.
pub fn resolve_eval(a: &mut EvalArgs) -> Result<()> {
    match &a.dataset {
        None => {
            a.input = a.input_file.clone().context("okr eval needs --input PATH or --dataset NAME")?;
            Ok(())
        }
        Some(_) if a.input_file.is_some() => bail!("--input and --dataset name the same file: give one"),
        Some(name) => {
            a.input = dataset_file(name, true)?.1;
            Ok(())
        }
    }
}
