//! Prediction files: `okr predict --output-format labels|indicator|csv|json`
//! writes them, `okr eval --predictions` reads them back.
//!
//! - `labels`: one line per input, the predicted label set as comma-separated
//!   0-based label indices; with `--top-k K` the K best sets, `;`-separated.
//! - `indicator`: one line per input, a 0/1 value per label, comma-separated,
//!   no header (`numpy.loadtxt(f, delimiter=",")`).
//! - `csv`: the indicator with a header of label names (the model's, or
//!   `label_0, label_1, ...`); with `--scores`, one more column per label,
//!   `score:<name>` (`pandas.read_csv(f)`).
//! - `json`: JSON Lines, one object per input: `labels` (names), `label_ids`;
//!   with `--top-k` a `top` list of `{labels, label_ids, score}` (the decoding
//!   score `k(c, c) - 2 <h(x), psi(c)>`, lower is better); with `--scores`,
//!   `label_scores` (one number per label).

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use faer::Mat;
use okr_kernels::LabelSets;
use serde_json::{Value, json};

use crate::cli::OutputFormat;

/// What `okr predict` writes.
pub struct Predicted {
    /// One name per label.
    pub names: Vec<String>,
    /// Per input, its ranked label sets (best first; one set without `--top-k`).
    pub ranked: Vec<Vec<Vec<usize>>>,
    /// Per input, the decoding score of each ranked set (decoding models).
    pub ranked_scores: Option<Vec<Vec<f64>>>,
    /// Label scores `(n, n_labels)` (`--scores`).
    pub label_scores: Option<Mat<f64>>,
}

/// The names of the model's labels: its own, or `label_<j>`.
pub fn label_names(info: &okr_estimators::persist::ModelInfo) -> Vec<String> {
    if info.label_names.len() == info.n_labels {
        info.label_names.clone()
    } else {
        (0..info.n_labels).map(|j| format!("label_{j}")).collect()
    }
}

/// Checks the format against `--top-k` and `--scores` before any work.
pub fn check_format(format: OutputFormat, top_k: usize, scores: bool) -> Result<()> {
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

/// Writes the predictions in `format`.
pub fn render(format: OutputFormat, p: &Predicted, out: &mut dyn Write) -> Result<()> {
    let l = p.names.len();
    let best = |i: usize| -> &[usize] { p.ranked[i].first().map_or(&[], |s| s.as_slice()) };
    match format {
        OutputFormat::Labels => {
            for sets in &p.ranked {
                let line: Vec<String> = sets.iter().map(|s| join(s.iter().map(usize::to_string), ",")).collect();
                writeln!(out, "{}", line.join(";"))?;
            }
        }
        OutputFormat::Indicator => {
            for i in 0..p.ranked.len() {
                writeln!(out, "{}", join(indicator(best(i), l).iter().map(u8::to_string), ","))?;
            }
        }
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            let mut header: Vec<String> = p.names.clone();
            if p.label_scores.is_some() {
                header.extend(p.names.iter().map(|n| format!("score:{n}")));
            }
            w.write_record(&header)?;
            for i in 0..p.ranked.len() {
                let mut row: Vec<String> = indicator(best(i), l).iter().map(u8::to_string).collect();
                if let Some(s) = &p.label_scores {
                    row.extend((0..l).map(|j| s[(i, j)].to_string()));
                }
                w.write_record(&row)?;
            }
            w.flush()?;
        }
        OutputFormat::Json => {
            for i in 0..p.ranked.len() {
                let set = best(i);
                let mut obj = json!({
                    "labels": set.iter().map(|&j| p.names[j].as_str()).collect::<Vec<_>>(),
                    "label_ids": set,
                });
                if p.ranked[i].len() > 1 || p.ranked_scores.is_some() {
                    let top: Vec<Value> = p.ranked[i]
                        .iter()
                        .enumerate()
                        .map(|(r, s)| {
                            json!({
                                "labels": s.iter().map(|&j| p.names[j].as_str()).collect::<Vec<_>>(),
                                "label_ids": s,
                                "score": p.ranked_scores.as_ref().and_then(|sc| sc[i].get(r).copied()),
                            })
                        })
                        .collect();
                    obj["top"] = Value::Array(top);
                }
                if let Some(s) = &p.label_scores {
                    obj["label_scores"] = json!((0..l).map(|j| s[(i, j)]).collect::<Vec<_>>());
                }
                writeln!(out, "{obj}")?;
            }
        }
    }
    Ok(())
}

fn join(items: impl Iterator<Item = String>, sep: &str) -> String {
    items.collect::<Vec<_>>().join(sep)
}

fn indicator(set: &[usize], n_labels: usize) -> Vec<u8> {
    let mut row = vec![0u8; n_labels];
    for &j in set {
        row[j] = 1;
    }
    row
}

/// A prediction file read back: the best label set per input and, when the
/// file has them, the label scores.
pub struct ReadBack {
    /// Predicted sets.
    pub sets: LabelSets,
    /// Label scores `(n, n_labels)`.
    pub scores: Option<Mat<f64>>,
}

/// The format of a prediction file: by extension (`.csv`, `.json` /
/// `.jsonl`), else `labels`; `indicator` must be named.
pub fn format_of(path: &Path, given: Option<OutputFormat>) -> OutputFormat {
    given.unwrap_or_else(|| match path.extension().and_then(|e| e.to_str()) {
        Some("csv") => OutputFormat::Csv,
        Some("json" | "jsonl") => OutputFormat::Json,
        _ => OutputFormat::Labels,
    })
}

/// Reads a prediction file of `format` over `names` (one per label).
pub fn read(path: &Path, format: OutputFormat, names: &[String]) -> Result<ReadBack> {
    let l = names.len();
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let at = |line: usize| format!("{}:{}", path.display(), line + 1);
    let mut sets = Vec::new();
    let mut scores: Vec<Vec<f64>> = Vec::new();
    let label = |t: &str, line: usize| -> Result<usize> {
        let j: usize = t.trim().parse().with_context(|| format!("{}: {t:?} is not a label index", at(line)))?;
        if j >= l {
            bail!("{}: label {j} is out of range (the model has {l} labels)", at(line));
        }
        Ok(j)
    };
    match format {
        OutputFormat::Labels | OutputFormat::Indicator => {
            for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
                let line = line.with_context(|| at(i))?;
                let first = line.split(';').next().unwrap_or("");
                let set: Vec<usize> = if format == OutputFormat::Labels {
                    first.split(',').filter(|t| !t.trim().is_empty()).map(|t| label(t, i)).collect::<Result<_>>()?
                } else {
                    let cells: Vec<&str> = line.split(',').collect();
                    if cells.len() != l {
                        bail!("{}: {} values, expected one per label ({l})", at(i), cells.len());
                    }
                    zero_one(&cells, &at(i))?
                };
                sets.push(set);
            }
        }
        OutputFormat::Csv => {
            let mut r = csv::Reader::from_reader(file);
            let header = r.headers().with_context(|| at(0))?.clone();
            let has_scores = header.len() == 2 * l;
            if header.len() != l && !has_scores {
                bail!("{}: {} columns, expected {l} labels (and {l} score columns)", at(0), header.len());
            }
            for (i, rec) in r.records().enumerate() {
                let rec = rec.with_context(|| at(i + 1))?;
                let cells: Vec<&str> = rec.iter().collect();
                sets.push(zero_one(&cells[..l], &at(i + 1))?);
                if has_scores {
                    scores.push(
                        cells[l..]
                            .iter()
                            .map(|c| c.trim().parse::<f64>().with_context(|| format!("{}: score {c:?}", at(i + 1))))
                            .collect::<Result<_>>()?,
                    );
                }
            }
        }
        OutputFormat::Json => {
            for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
                let line = line.with_context(|| at(i))?;
                let v: Value = serde_json::from_str(&line).with_context(|| format!("{}: not JSON", at(i)))?;
                let ids = v["label_ids"].as_array().with_context(|| format!("{}: no label_ids", at(i)))?;
                sets.push(ids.iter().map(|t| label(&t.to_string(), i)).collect::<Result<_>>()?);
                if let Some(s) = v["label_scores"].as_array() {
                    if s.len() != l {
                        bail!("{}: {} label scores for {l} labels", at(i), s.len());
                    }
                    scores.push(s.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect());
                }
            }
        }
    }
    let n = sets.len();
    if !scores.is_empty() && scores.len() != n {
        bail!("{}: label scores on {} of {n} lines", path.display(), scores.len());
    }
    let sets = LabelSets::new(
        l,
        sets.into_iter()
            .map(|mut s| {
                s.sort_unstable();
                s.dedup();
                s
            })
            .collect(),
    )?;
    let scores = (!scores.is_empty()).then(|| Mat::from_fn(n, l, |i, j| scores[i][j]));
    Ok(ReadBack { sets, scores })
}

fn zero_one(cells: &[&str], at: &str) -> Result<Vec<usize>> {
    cells
        .iter()
        .enumerate()
        .filter_map(|(j, c)| match c.trim() {
            "0" => None,
            "1" => Some(Ok(j)),
            other => Some(Err(anyhow::anyhow!("{at}: {other:?} is not 0 or 1"))),
        })
        .collect()
}
