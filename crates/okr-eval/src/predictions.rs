//! Prediction files of label sets: [`write_predictions`] writes them in one
//! of four [`PredictionFormat`]s (`okr predict --output-format`),
//! [`read_predictions`] reads the best set per input and the label scores
//! back (`okr eval --predictions`).
//!
//! - `labels`: one line per input, the predicted label set as comma-separated
//!   0-based label indices, `-` for the empty set (the row syntax of
//!   [`okr_io::rows`]; a blank line, as okr wrote the empty set before, reads
//!   as the empty set too); with several ranked sets, `;`-separated.
//! - `indicator`: one line per input, a 0/1 value per label, comma-separated,
//!   no header (`numpy.loadtxt(f, delimiter=",")`).
//! - `csv`: the indicator with a header of label names; with label scores,
//!   one more column per label, `score:<name>` (`pandas.read_csv(f)`). Read
//!   back, the columns are matched to the labels by name, in any order.
//! - `json`: JSON Lines, one object per input: `labels` (names), `label_ids`;
//!   with several ranked sets or their scores, a `top` list of `{labels,
//!   label_ids, score}` (the decoding score `k(c, c) - 2 <h(x), psi(c)>`, lower
//!   is better); with label scores, `label_scores` (one number per label).
//!
//! # Example
//! ```
//! use okr_eval::predictions::{Predicted, PredictionFormat, read_predictions, write_predictions};
//! let names = vec!["a".to_string(), "b".to_string(), "c".to_string()];
//! let p = Predicted { names: names.clone(), ranked: vec![vec![vec![0, 2]], vec![vec![]]], ranked_scores: None, label_scores: None };
//! let mut text = Vec::new();
//! write_predictions(PredictionFormat::Indicator, &p, &mut text)?;
//! assert_eq!(String::from_utf8(text.clone()).unwrap(), "1,0,1\n0,0,0\n");
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("p.txt");
//! std::fs::write(&path, &text)?;
//! let back = read_predictions(&path, PredictionFormat::Indicator, &names)?;
//! assert_eq!(back.sets.set(0), &[0, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Write};
use std::path::Path;

use faer::Mat;
use okr_io::rows::RowError;
use okr_kernels::LabelSets;
use serde_json::{Value, json};

use crate::{Error, Result};

/// The formats of a prediction file (see the [module](self) documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredictionFormat {
    /// Label indices per line; ranked sets `;`-separated.
    Labels,
    /// A 0/1 value per label per line, no header.
    Indicator,
    /// CSV with a header of label names (and `score:<name>` columns).
    Csv,
    /// JSON Lines.
    Json,
}

impl PredictionFormat {
    /// The format of a prediction file by its extension: `.csv`, `.json` /
    /// `.jsonl`, else `labels` (`indicator` files are not told apart by name).
    ///
    /// # Example
    /// ```
    /// use okr_eval::predictions::PredictionFormat as F;
    /// assert_eq!(F::of_path("p.jsonl".as_ref()), F::Json);
    /// assert_eq!(F::of_path("p.txt".as_ref()), F::Labels);
    /// ```
    pub fn of_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some("csv") => Self::Csv,
            Some("json" | "jsonl") => Self::Json,
            _ => Self::Labels,
        }
    }
}

/// Predictions of label sets, as [`write_predictions`] writes them.
#[derive(Debug, Clone)]
pub struct Predicted {
    /// One name per label.
    pub names: Vec<String>,
    /// Per input, its ranked label sets (best first; often one set).
    pub ranked: Vec<Vec<Vec<usize>>>,
    /// Per input, the decoding score of each ranked set (decoding models).
    pub ranked_scores: Option<Vec<Vec<f64>>>,
    /// Label scores `(n, n_labels)`.
    pub label_scores: Option<Mat<f64>>,
}

/// Writes the predictions in `format`. Every label index must be below
/// `p.names.len()`; the indicator and CSV formats write the best set of each
/// input only.
///
/// # Errors
/// The I/O error of `out`.
pub fn write_predictions(format: PredictionFormat, p: &Predicted, out: &mut dyn Write) -> io::Result<()> {
    let l = p.names.len();
    let best = |i: usize| -> &[usize] { p.ranked[i].first().map_or(&[], |s| s.as_slice()) };
    match format {
        PredictionFormat::Labels => {
            for sets in &p.ranked {
                let line: Vec<String> = sets.iter().map(|s| okr_io::rows::format_index_set(s)).collect();
                writeln!(out, "{}", line.join(";"))?;
            }
        }
        PredictionFormat::Indicator => {
            for i in 0..p.ranked.len() {
                writeln!(out, "{}", join(indicator(best(i), l).iter().map(u8::to_string), ","))?;
            }
        }
        PredictionFormat::Csv => {
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
        PredictionFormat::Json => {
            let names = |s: &[usize]| s.iter().map(|&j| p.names[j].as_str()).collect::<Vec<_>>();
            for i in 0..p.ranked.len() {
                let set = best(i);
                let mut obj = json!({ "labels": names(set), "label_ids": set });
                if p.ranked[i].len() > 1 || p.ranked_scores.is_some() {
                    let top: Vec<Value> = p.ranked[i]
                        .iter()
                        .enumerate()
                        .map(|(r, s)| {
                            let score = p.ranked_scores.as_ref().and_then(|sc| sc[i].get(r).copied());
                            json!({ "labels": names(s), "label_ids": s, "score": score })
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
#[derive(Debug, Clone)]
pub struct ReadBack {
    /// Predicted sets (sorted, without repeats).
    pub sets: LabelSets,
    /// Label scores `(n, n_labels)`.
    pub scores: Option<Mat<f64>>,
}

/// Reads a prediction file of `format` over `names` (one per label): the
/// first (best) set of each line, and the label scores of the CSV and JSON
/// formats when the file has them.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read; [`Error::Parse`] naming the
/// line for a label index out of range or not a number, a value other than
/// 0/1, a wrong column count, a CSV header naming a column the model has no
/// label for or missing a label, a line that is not JSON, or label scores on
/// some lines only.
pub fn read_predictions(path: &Path, format: PredictionFormat, names: &[String]) -> Result<ReadBack> {
    let l = names.len();
    // Whole and bounded: the read-back sets are kept anyway, and a device or
    // a binary file must end in an error, not in one endless line.
    let text = crate::readers::read_text(path)?;
    // `line` is 0-based here, 1-based in the messages.
    let parse = |line: usize, msg: String| Error::parse(path, line + 1, msg);
    let mut sets = Vec::new();
    let mut scores: Vec<Vec<f64>> = Vec::new();
    let label = |t: &str, line: usize| -> Result<usize> {
        let j: usize = t.trim().parse().map_err(|_| parse(line, format!("{t:?} is not a label index")))?;
        if j >= l {
            return Err(parse(line, format!("label {j} is out of range (the model has {l} labels)")));
        }
        Ok(j)
    };
    match format {
        PredictionFormat::Labels | PredictionFormat::Indicator => {
            for (i, line) in text.lines().enumerate() {
                let set: Vec<usize> = if format == PredictionFormat::Labels {
                    let first = line.split(';').next().unwrap_or("");
                    okr_io::rows::parse_index_set(first, l).map_err(|e| match e {
                        RowError::OutOfRange { index, .. } => {
                            parse(i, format!("label {index} is out of range (the model has {l} labels)"))
                        }
                        RowError::Token { found, .. } => parse(i, format!("{found:?} is not a label index")),
                        other => parse(i, other.to_string()),
                    })?
                } else {
                    let cells: Vec<&str> = line.split(',').collect();
                    if cells.len() != l {
                        return Err(parse(i, format!("{} values, expected one per label ({l})", cells.len())));
                    }
                    zero_one(&cells).map_err(|m| parse(i, m))?
                };
                sets.push(set);
            }
        }
        PredictionFormat::Csv => {
            let mut r = csv::Reader::from_reader(text.as_bytes());
            let header = r.headers().map_err(|e| parse(0, e.to_string()))?.clone();
            let columns = csv_columns(&header, names).map_err(|m| parse(0, m))?;
            for (i, rec) in r.records().enumerate() {
                let rec = rec.map_err(|e| parse(i + 1, e.to_string()))?;
                let cells: Vec<&str> = rec.iter().collect();
                let labels: Vec<&str> = columns.labels.iter().map(|&c| cells[c]).collect();
                sets.push(zero_one(&labels).map_err(|m| parse(i + 1, m))?);
                if let Some(cols) = &columns.scores {
                    let score = |c: &usize| {
                        let t = cells[*c];
                        t.trim().parse::<f64>().map_err(|_| parse(i + 1, format!("score {t:?}")))
                    };
                    scores.push(cols.iter().map(score).collect::<Result<_>>()?);
                }
            }
        }
        PredictionFormat::Json => {
            for (i, line) in text.lines().enumerate() {
                let v: Value = serde_json::from_str(line).map_err(|e| parse(i, format!("not JSON: {e}")))?;
                let ids = v["label_ids"].as_array().ok_or_else(|| parse(i, "no label_ids".into()))?;
                sets.push(ids.iter().map(|t| label(&t.to_string(), i)).collect::<Result<_>>()?);
                let has = v["label_scores"].as_array();
                if (scores.len() == i) != has.is_some() && i > 0 {
                    return Err(parse(i, "label_scores on some lines only".into()));
                }
                if let Some(s) = has {
                    if s.len() != l {
                        return Err(parse(i, format!("{} label scores for {l} labels", s.len())));
                    }
                    scores.push(s.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect());
                }
            }
        }
    }
    let n = sets.len();
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

/// Where each label's columns are in a CSV prediction file.
struct CsvColumns {
    /// Per label (in the model's order), its 0/1 column.
    labels: Vec<usize>,
    /// Per label, its `score:<name>` column, when the file has scores.
    scores: Option<Vec<usize>>,
}

/// Matches a CSV header to the model's label `names` by name: every label
/// once, its `score:<name>` column for all labels or none, in any order. A
/// name the model does not have, a repeated name, or a missing label is
/// an error naming them.
fn csv_columns(header: &csv::StringRecord, names: &[String]) -> std::result::Result<CsvColumns, String> {
    let index: std::collections::HashMap<&str, usize> =
        names.iter().enumerate().map(|(j, n)| (n.as_str(), j)).collect();
    let mut labels = vec![None; names.len()];
    let mut scores = vec![None; names.len()];
    let mut unknown = Vec::new();
    let mut repeated = Vec::new();
    for (c, name) in header.iter().enumerate() {
        // A label named `score:x` itself is a label column first.
        let (slot, j) = match index.get(name) {
            Some(&j) => (&mut labels, j),
            None => match name.strip_prefix("score:").and_then(|n| index.get(n)) {
                Some(&j) => (&mut scores, j),
                None => {
                    unknown.push(format!("{name:?}"));
                    continue;
                }
            },
        };
        if slot[j].replace(c).is_some() {
            repeated.push(format!("{name:?}"));
        }
    }
    let list = |v: &[String]| {
        const SHOWN: usize = 5;
        let more = v.len().saturating_sub(SHOWN);
        let head = v[..v.len().min(SHOWN)].join(", ");
        if more > 0 { format!("{head} and {more} more") } else { head }
    };
    if !unknown.is_empty() {
        return Err(format!("the header names columns the model has no label for: {}", list(&unknown)));
    }
    if !repeated.is_empty() {
        return Err(format!("the header repeats the columns {}", list(&repeated)));
    }
    let missing: Vec<String> =
        names.iter().zip(&labels).filter(|(_, c)| c.is_none()).map(|(n, _)| format!("{n:?}")).collect();
    if !missing.is_empty() {
        return Err(format!("the header has no column for the labels {}", list(&missing)));
    }
    let n_scores = scores.iter().filter(|c| c.is_some()).count();
    if n_scores != 0 && n_scores != names.len() {
        let missing: Vec<String> =
            names.iter().zip(&scores).filter(|(_, c)| c.is_none()).map(|(n, _)| format!("\"score:{n}\"")).collect();
        return Err(format!("the header has score columns for some labels only, none for {}", list(&missing)));
    }
    let all = |v: Vec<Option<usize>>| v.into_iter().collect::<Option<Vec<usize>>>();
    Ok(CsvColumns { labels: all(labels).unwrap_or_default(), scores: if n_scores == 0 { None } else { all(scores) } })
}

/// The indices of the `1` cells; a cell other than 0 or 1 is an error.
fn zero_one(cells: &[&str]) -> std::result::Result<Vec<usize>, String> {
    cells
        .iter()
        .enumerate()
        .filter_map(|(j, c)| match c.trim() {
            "0" => None,
            "1" => Some(Ok(j)),
            other => Some(Err(format!("{other:?} is not 0 or 1"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(l: usize) -> Vec<String> {
        (0..l).map(|j| format!("n{j}")).collect()
    }

    /// Every format round-trips the best set; CSV and JSON the label scores too.
    #[test]
    fn every_format_round_trips() {
        let ranked = vec![vec![vec![2, 0], vec![1]], vec![vec![]], vec![vec![1, 2]]];
        let scores = Mat::from_fn(3, 3, |i, j| (i * 3 + j) as f64 / 7.0 - 0.5);
        let dir = tempfile::tempdir().unwrap();
        for format in
            [PredictionFormat::Labels, PredictionFormat::Indicator, PredictionFormat::Csv, PredictionFormat::Json]
        {
            let with_scores = matches!(format, PredictionFormat::Csv | PredictionFormat::Json);
            let p = Predicted {
                names: names(3),
                ranked: ranked.clone(),
                ranked_scores: with_scores.then(|| vec![vec![0.5, 1.5], vec![2.0], vec![-1.0]]),
                label_scores: with_scores.then(|| scores.clone()),
            };
            let mut text = Vec::new();
            write_predictions(format, &p, &mut text).unwrap();
            let path = dir.path().join(format!("{format:?}"));
            std::fs::write(&path, &text).unwrap();
            let back = read_predictions(&path, format, &names(3)).unwrap();
            let expected: Vec<Vec<usize>> = vec![vec![0, 2], vec![], vec![1, 2]];
            for (i, e) in expected.iter().enumerate() {
                assert_eq!(back.sets.set(i), e.as_slice(), "{format:?} row {i}");
            }
            assert_eq!(back.scores.is_some(), with_scores, "{format:?}");
            if let Some(s) = back.scores {
                // Rust prints the shortest string that parses back to the same f64.
                assert_eq!(s, scores, "{format:?}");
            }
        }
    }

    /// CSV columns are matched to the labels by name: reordered columns read
    /// as the same sets and scores.
    #[test]
    fn csv_columns_are_matched_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let read = |text: &str| {
            let path = dir.path().join("p.csv");
            std::fs::write(&path, text).unwrap();
            read_predictions(&path, PredictionFormat::Csv, &names(3)).unwrap()
        };
        let in_order = read("n0,n1,n2,score:n0,score:n1,score:n2\n1,0,1,0.5,0.25,2\n0,1,0,1,2,3\n");
        let shuffled = read("score:n2,n2,n0,score:n1,n1,score:n0\n2,1,1,0.25,0,0.5\n3,0,0,2,1,1\n");
        for i in 0..2 {
            assert_eq!(in_order.sets.set(i), shuffled.sets.set(i), "row {i}");
        }
        assert_eq!(in_order.sets.set(0), &[0, 2]);
        assert_eq!(in_order.scores, shuffled.scores);
    }

    #[test]
    fn written_text() {
        let p = Predicted {
            names: vec!["a".into(), "b,c".into()],
            ranked: vec![vec![vec![1], vec![0, 1]]],
            ranked_scores: Some(vec![vec![-0.25, 0.75]]),
            label_scores: None,
        };
        let text = |f| {
            let mut out = Vec::new();
            write_predictions(f, &p, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(text(PredictionFormat::Labels), "1;0,1\n");
        assert_eq!(text(PredictionFormat::Csv), "a,\"b,c\"\n0,1\n");
        let v: Value = serde_json::from_str(text(PredictionFormat::Json).trim()).unwrap();
        assert_eq!(v["labels"], json!(["b,c"]));
        assert_eq!(v["top"][1]["label_ids"], json!([0, 1]));
        assert_eq!(v["top"][0]["score"], json!(-0.25));
    }

    /// One spelling when written (`-`), both when read (a blank line is
    /// how okr wrote the empty set before).
    #[test]
    fn the_empty_set_is_written_as_a_dash_and_a_blank_line_still_reads() {
        let p = Predicted {
            names: names(3),
            ranked: vec![vec![vec![], vec![1]], vec![vec![0, 2]]],
            ranked_scores: None,
            label_scores: None,
        };
        let mut text = Vec::new();
        write_predictions(PredictionFormat::Labels, &p, &mut text).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), "-;1\n0,2\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.txt");
        std::fs::write(&path, "\n-\n0,2\n").unwrap();
        let back = read_predictions(&path, PredictionFormat::Labels, &names(3)).unwrap();
        assert_eq!((back.sets.set(0), back.sets.set(1), back.sets.set(2)), (&[][..], &[][..], &[0, 2][..]));
    }

    #[test]
    fn malformed_files_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let read = |text: &str, format| {
            let path = dir.path().join("bad");
            std::fs::write(&path, text).unwrap();
            read_predictions(&path, format, &names(2)).unwrap_err().to_string()
        };
        let at = |line: usize| format!("{}:{line}: ", dir.path().join("bad").display());
        assert_eq!(
            read("0\n7\n", PredictionFormat::Labels),
            format!("{}label 7 is out of range (the model has 2 labels)", at(2))
        );
        assert_eq!(read("x\n", PredictionFormat::Labels), format!("{}\"x\" is not a label index", at(1)));
        assert_eq!(read("0,2\n", PredictionFormat::Indicator), format!("{}\"2\" is not 0 or 1", at(1)));
        assert_eq!(read("0\n", PredictionFormat::Indicator), format!("{}1 values, expected one per label (2)", at(1)));
        assert!(read("n0,n1,n2\n", PredictionFormat::Csv).starts_with(&at(1)));
        assert!(
            read("{\"label_ids\": [0]}\nnope\n", PredictionFormat::Json).starts_with(&format!("{}not JSON", at(2)))
        );
        assert_eq!(
            read("{\"label_ids\": [0], \"label_scores\": [1, 2]}\n{\"label_ids\": [1]}\n", PredictionFormat::Json),
            format!("{}label_scores on some lines only", at(2))
        );
        assert_eq!(
            read("n0,x,n1\n0,1,1\n", PredictionFormat::Csv),
            format!("{}the header names columns the model has no label for: \"x\"", at(1))
        );
        assert_eq!(
            read("n1\n1\n", PredictionFormat::Csv),
            format!("{}the header has no column for the labels \"n0\"", at(1))
        );
        let missing = read_predictions(&dir.path().join("none"), PredictionFormat::Labels, &names(2)).unwrap_err();
        assert!(matches!(missing, Error::Io { .. }), "{missing}");
    }
}
