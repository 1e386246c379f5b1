//! CSV: one sample a row, numeric feature columns followed by `n_labels` 0/1
//! label columns, with an optional header line of names.
//!
//! Fields are split by the `csv` crate (RFC 4180: comma-separated, a field may
//! be double-quoted, `""` is a quote). Surrounding white space is trimmed from
//! every field, quoted or not, and blank lines are skipped. There are no comment lines, and no field may span
//! lines (an unclosed quote is reported as such).
//!
//! # The header rule
//! [`CsvHeader::Present`] and [`CsvHeader::Absent`] say it outright. With
//! [`CsvHeader::Detect`], the first non-blank line is a header when one of its
//! fields is not a number or it contains a double quote (so [`write_csv`],
//! which quotes numeric names, is always read back right). A first line of
//! three or more unquoted numbers that are the column numbers `0,1,2,...` or
//! `1,2,3,...` is a header of numbers, as data frames write by default: it is
//! neither taken for data nor for names, but rejected as ambiguous, naming the
//! explicit choice. Any other line of numbers is data.

use std::io::Write;
use std::path::Path;

use okr_kernels::{DenseRows, LabelSets};

use super::{LabelCount, excerpt, parse_finite, push_f64, read_text, try_vec, write_atomic};
use crate::dataset::Names;
use crate::{Dataset, Error, Features, Result};

/// Whether a CSV file starts with a header line of column names (see the
/// [module docs](self) for the detection rule).
///
/// # Example
/// ```
/// use okr_eval::CsvHeader;
/// assert_ne!(CsvHeader::Detect, CsvHeader::Present);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CsvHeader {
    /// The first line is a header if one of its fields is not a number or it
    /// contains a quote; a line of column numbers (`0,1,2` or `1,2,3`) is an
    /// error; any other line of numbers is data.
    #[default]
    Detect,
    /// The first line is a header.
    Present,
    /// There is no header; names are `f0, ...` and `l0, ...`.
    Absent,
}

/// Whether `fields` are the column numbers `0,1,...` or `1,2,...` (three or more).
fn are_column_numbers(fields: &[String]) -> bool {
    let ints: Option<Vec<u64>> = fields.iter().map(|f| f.parse::<u64>().ok()).collect();
    match ints {
        Some(v) if v.len() >= 3 => {
            let base = v[0];
            base <= 1 && v.iter().enumerate().all(|(j, &x)| x == base + j as u64)
        }
        _ => false,
    }
}

/// Reads a CSV file of numeric features followed by `n_labels` 0/1 label columns.
///
/// Feature names come from the header (if any), else `f0, ...`; label names
/// likewise (`l0, ...`).
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] for a row with a different number of fields
/// than the first, fewer than `n_labels` columns, a field that is not a finite
/// number, a label value other than 0/1, a field spanning lines (an unclosed
/// quote), or with [`CsvHeader::Detect`] a first line of column numbers.
///
/// # Example
/// ```
/// use okr_eval::{read_csv, CsvHeader};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "height,\"weight, kg\",tall,heavy\n1.8,90,1,1\n1.6,55,0,0\n")?;
/// let data = read_csv(&path, 2, CsvHeader::Detect)?;
/// assert_eq!((data.n_samples(), data.n_features(), data.n_labels()), (2, 2, 2));
/// assert_eq!(data.feature_names, ["height", "weight, kg"]);
/// assert_eq!(data.y.set(0), &[0, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_csv(path: impl AsRef<Path>, n_labels: usize, header: CsvHeader) -> Result<Dataset> {
    read_csv_with(path.as_ref(), LabelCount::Fixed(n_labels), header)
}

/// [`read_csv`] with the label count decided by `labels` from the number of columns.
pub(crate) fn read_csv_with(path: &Path, labels: LabelCount, header: CsvHeader) -> Result<Dataset> {
    let text = read_text(path)?;
    let err = |no: usize, msg: String| Error::parse(path, no, msg);
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(::csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut names: Option<Vec<String>> = None;
    let mut n_cols: Option<usize> = None;
    let mut n_labels = match labels {
        LabelCount::Fixed(l) => l,
        LabelCount::Optional { .. } => 0,
    };
    let mut data: Vec<f64> = Vec::new();
    let mut sets: Vec<Vec<usize>> = Vec::new();
    let mut record = ::csv::StringRecord::new();
    let mut first = true;
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let no = e.position().map_or(1, |p| p.line() as usize);
            err(no, format!("expected CSV fields, got a malformed line ({e})"))
        })?;
        if !more {
            break;
        }
        let start = record.position().expect("records read from text have a position");
        let no = start.line() as usize;
        if record.len() == 1 && record[0].is_empty() {
            continue;
        }
        if let Some(j) = record.iter().position(|f| f.contains(['\n', '\r'])) {
            return Err(err(
                no,
                format!("expected each field on one line, got a line break in field {} (an unclosed '\"'?)", j + 1),
            ));
        }
        if first {
            first = false;
            n_labels = labels.resolve(record.len(), "columns").map_err(|m| err(no, m))?;
            n_cols = Some(record.len());
            let fields: Vec<String> = record.iter().map(str::to_string).collect();
            let is_header = match header {
                CsvHeader::Present => true,
                CsvHeader::Absent => false,
                CsvHeader::Detect => {
                    let line_end =
                        text[start.byte() as usize..].find('\n').map_or(text.len(), |e| start.byte() as usize + e);
                    let quoted = text[start.byte() as usize..line_end].contains('"');
                    let numeric = fields.iter().all(|f| f.parse::<f64>().is_ok());
                    if !quoted && numeric && are_column_numbers(&fields) {
                        return Err(err(
                            no,
                            format!(
                                "expected a header of names or a data row, got the column numbers '{}': \
                                 say whether the file has a header (CsvHeader::Present / Absent, \
                                 okr --csv-header yes|no)",
                                excerpt(&fields.join(","))
                            ),
                        ));
                    }
                    quoted || !numeric
                }
            };
            if is_header {
                names = Some(fields);
                continue;
            }
        }
        let n_cols = n_cols.expect("set on the first line");
        if record.len() != n_cols {
            return Err(err(
                no,
                format!("expected {n_cols} comma-separated fields like the first line, got {}", record.len()),
            ));
        }
        let d = n_cols - n_labels;
        let mut set = Vec::new();
        for (j, f) in record.iter().enumerate() {
            let v = parse_finite(f, || format!("column {}", j + 1)).map_err(|m| err(no, m))?;
            if j < d {
                data.push(v);
            } else if v == 1.0 {
                set.push(j - d);
            } else if v != 0.0 {
                return Err(err(no, format!("expected 0 or 1 in label column {}, got '{}'", j + 1, excerpt(f))));
            }
        }
        sets.push(set);
    }
    let n_cols = n_cols.unwrap_or(n_labels);
    let d = n_cols - n_labels;
    let n = sets.len();
    // Column-major copy for faer; `try_vec` so a huge file is an error, not an abort.
    let mut col_major = try_vec(path, n * d)?;
    for j in 0..d {
        col_major.extend((0..n).map(|i| data[i * d + j]));
    }
    drop(data);
    let x = DenseRows::new(faer::Mat::from_fn(n, d, |i, j| col_major[j * n + i]))?;
    let y = LabelSets::new(n_labels, sets)?;
    let (feature_names, label_names) = match names {
        Some(mut names) => {
            let labels = names.split_off(d);
            (Names::Given(names), Names::Given(labels))
        }
        None => (Names::numbered("f", d), Names::numbered("l", n_labels)),
    };
    Dataset::with_names(Features::Dense(x), y, feature_names, label_names)
}

/// Quotes a CSV header field when it would not read back as itself.
fn quote_field(name: &str) -> String {
    let plain = !name.is_empty()
        && name.trim() == name
        && !name.contains([',', '"', '\n', '\r'])
        && name.parse::<f64>().is_err();
    if plain { name.to_string() } else { format!("\"{}\"", name.replace('"', "\"\"")) }
}

/// Writes `data` as CSV: a header of names (quoted where needed, so that
/// [`CsvHeader::Detect`] finds it), then features (sparse ones densified) and
/// 0/1 label columns. `read_csv(path, data.n_labels(), CsvHeader::Detect)`
/// gives back `data` with dense features.
///
/// # Errors
/// [`Error::ShapeMismatch`] if `data` is inconsistent, [`Error::InvalidArgument`]
/// if a name contains a line break (the reader is line-based) or surrounding
/// white space (the reader trims fields, quoted or not), or there are no
/// columns at all, [`Error::Write`].
///
/// # Example
/// ```
/// use okr_eval::{read_csv, write_csv, CsvHeader, Dataset};
/// use okr_kernels::{DenseRows, LabelSets};
/// let x = DenseRows::from_rows(&[vec![0.5], vec![-2.0]])?;
/// let data = Dataset::new(x.into(), LabelSets::new(2, vec![vec![1], vec![0, 1]])?)?;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.csv");
/// write_csv(&path, &data)?;
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "f0,l0,l1\n0.5,0,1\n-2,1,1\n");
/// assert_eq!(read_csv(&path, 2, CsvHeader::Detect)?, data);
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn write_csv(path: impl AsRef<Path>, data: &Dataset) -> Result<()> {
    data.check()?;
    if let Some(name) = data.feature_names.iter().chain(data.label_names.iter()).find(|n| n.contains(['\n', '\r'])) {
        return Err(Error::invalid("column name", format!("{name:?}"), "a name without line breaks"));
    }
    if let Some(name) = data.feature_names.iter().chain(data.label_names.iter()).find(|n| n.trim() != n.as_ref()) {
        return Err(Error::invalid(
            "column name",
            format!("{name:?}"),
            "a name without surrounding white space (CSV fields are trimmed when read)",
        ));
    }
    if data.n_features() + data.n_labels() == 0 {
        return Err(Error::invalid("data", "no columns", "at least one feature or label column"));
    }
    let x = data.x.to_dense();
    write_atomic(path.as_ref(), |w| {
        let header: Vec<String> =
            data.feature_names.iter().chain(data.label_names.iter()).map(|n| quote_field(&n)).collect();
        writeln!(w, "{}", header.join(","))?;
        let mut line = String::new();
        for i in 0..data.n_samples() {
            line.clear();
            for j in 0..x.ncols() {
                push_f64(&mut line, x[(i, j)]);
                line.push(',');
            }
            let set = data.y.set(i);
            for l in 0..data.n_labels() {
                line.push(if set.binary_search(&l).is_ok() { '1' } else { '0' });
                line.push(',');
            }
            line.pop();
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, n_labels: usize, header: CsvHeader) -> Result<Dataset> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, text).unwrap();
        read_csv(&path, n_labels, header).map_err(|e| match e {
            Error::Parse { line, msg, .. } => Error::Parse { path: "data/t.csv".into(), line, msg },
            e => e,
        })
    }

    fn parse_err(text: &str, n_labels: usize, line: usize, expect: &[&str]) {
        let msg = parse(text, n_labels, CsvHeader::Detect).unwrap_err().to_string();
        assert!(msg.starts_with(&format!("data/t.csv:{line}: ")), "{msg}");
        for piece in expect {
            assert!(msg.contains(piece), "{msg:?} lacks {piece:?}");
        }
    }

    #[test]
    fn header_detection_and_crlf() {
        let d = parse("1,2,0\r\n3, 4 ,1\r\n\r\n", 1, CsvHeader::Detect).unwrap();
        assert_eq!((d.n_samples(), d.n_features()), (2, 2));
        assert_eq!(d.feature_names, ["f0", "f1"]);
        assert_eq!(d.y.set(1), &[0]);
        let d = parse("\"1\",b,c\n1,2,0\n", 1, CsvHeader::Detect).unwrap();
        assert_eq!(d.feature_names, ["1", "b"]);
        assert_eq!(d.label_names, ["c"]);
        let d = parse("0,1,2\n1,2,0\n", 1, CsvHeader::Present).unwrap();
        assert_eq!((d.n_samples(), d.label_names.get(0).as_deref()), (1, Some("2")));
        assert!(parse("a,b\n", 0, CsvHeader::Absent).is_err());
        let d = parse("x,\"y \"\"q\"\"\"\n", 1, CsvHeader::Detect).unwrap();
        assert_eq!((d.n_samples(), d.label_names.get(0).as_deref()), (0, Some("y \"q\"")));
    }

    #[test]
    fn errors_name_path_line_and_expectation() {
        parse_err("a,b,c\n1,2,0\n1,2\n", 1, 3, &["expected 3 comma-separated fields", "got 2"]);
        parse_err("a,b,c\n1,x,0\n", 1, 2, &["expected a number for column 2", "got 'x'"]);
        parse_err("a,b,c\n1,NaN,0\n", 1, 2, &["expected a finite number for column 2"]);
        parse_err("a,b,c\n1,2,0.5\n", 1, 2, &["expected 0 or 1 in label column 3", "'0.5'"]);
        parse_err("a,b\n", 3, 1, &["expected at least n_labels = 3 columns, found 2"]);
        parse_err("a,\"b\nc,d\n", 1, 1, &["line break in field 2", "unclosed"]);
    }

    #[test]
    fn header_of_numbers_is_not_a_data_row() {
        // Column numbers as data frames write them: neither data nor silently names.
        for text in ["0,1,2\n5,6,1\n", "1,2,3\n5,6,1\n", " 0 , 1 , 2 , 3\n5,6,7,1\n"] {
            parse_err(text, 1, 1, &["column numbers", "CsvHeader::Present / Absent", "--csv-header"]);
            let d = parse(text, 1, CsvHeader::Present).unwrap();
            assert_eq!(d.n_samples(), 1, "{text}");
            // As data, the last column number is not a 0/1 label: also an error.
            assert!(parse(text, 1, CsvHeader::Absent).is_err(), "{text}");
        }
        // A quoted numeric header is a header; other number rows are data.
        let d = parse("\"0\",\"1\",\"2\"\n5,6,1\n", 1, CsvHeader::Detect).unwrap();
        assert_eq!((d.n_samples(), d.feature_names.get(1).as_deref()), (1, Some("1")));
        let d = parse("0,1,1\n5,6,0\n", 1, CsvHeader::Detect).unwrap();
        assert_eq!(d.n_samples(), 2);
    }

    #[test]
    fn quoting() {
        for name in ["a", "b,c", "q\"q", "1.5", "", "x y", "0"] {
            let q = quote_field(name);
            let d = parse(&format!("{q},z\n1,0\n"), 1, CsvHeader::Detect).unwrap();
            assert_eq!(d.feature_names, [name], "{q}");
        }
    }
}
