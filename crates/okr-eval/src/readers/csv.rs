//! CSV: one sample a row, numeric feature columns followed by `n_labels` 0/1
//! label columns, with an optional header line of names.
//!
//! Fields are separated by commas; a field may be double-quoted (`"a,b"`, with
//! `""` for a quote, as in RFC 4180). Surrounding white space is ignored and blank
//! lines are skipped. There are no comment lines.

use std::io::Write;
use std::path::Path;

use okr_kernels::{DenseRows, LabelSets};

use super::{excerpt, lines, parse_finite, push_f64, read_text, write_atomic};
use crate::dataset::default_names;
use crate::{Dataset, Error, Features, Result};

/// Whether a CSV file starts with a header line of column names.
///
/// # Example
/// ```
/// use okr_eval::CsvHeader;
/// assert_ne!(CsvHeader::Detect, CsvHeader::Present);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CsvHeader {
    /// The first line is a header if one of its fields is quoted or is not a
    /// number. A header of unquoted numbers (`0,1,2`) is taken for data: say
    /// [`CsvHeader::Present`] for those.
    #[default]
    Detect,
    /// The first line is a header.
    Present,
    /// There is no header; names are `f0, ...` and `l0, ...`.
    Absent,
}

/// Splits a CSV line into fields, unquoting quoted ones; `quoted[k]` says
/// whether field `k` was quoted.
fn split_csv(line: &str) -> std::result::Result<(Vec<String>, Vec<bool>), String> {
    let mut fields = Vec::new();
    let mut quoted = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
        let mut field = String::new();
        let was_quoted = chars.next_if_eq(&'"').is_some();
        if was_quoted {
            loop {
                match chars.next() {
                    Some('"') if chars.next_if_eq(&'"').is_some() => field.push('"'),
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("expected a closing '\"' to end the quoted field".into()),
                }
            }
            while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
            if let Some(&c) = chars.peek()
                && c != ','
            {
                return Err(format!("expected ',' after the quoted field \"{}\", got '{c}'", excerpt(&field)));
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                field.push(c);
            }
            field.truncate(field.trim_end().len());
        }
        fields.push(field);
        quoted.push(was_quoted);
        if chars.next().is_none() {
            return Ok((fields, quoted));
        }
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
/// number, a label value other than 0/1, or an unclosed quote.
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
    let path = path.as_ref();
    let text = read_text(path)?;
    let err = |no: usize, msg: String| Error::parse(path, no, msg);
    let mut names: Option<Vec<String>> = None;
    let mut n_cols: Option<usize> = None;
    let mut data: Vec<f64> = Vec::new();
    let mut sets: Vec<Vec<usize>> = Vec::new();
    let mut first = true;
    for (no, raw) in lines(&text) {
        if raw.trim().is_empty() {
            continue;
        }
        let (fields, quoted) = split_csv(raw).map_err(|m| err(no, m))?;
        if first {
            first = false;
            if n_labels > fields.len() {
                return Err(err(no, format!("expected at least n_labels = {n_labels} columns, got {}", fields.len())));
            }
            n_cols = Some(fields.len());
            let is_header = match header {
                CsvHeader::Present => true,
                CsvHeader::Absent => false,
                CsvHeader::Detect => fields.iter().zip(&quoted).any(|(f, &q)| q || f.trim().parse::<f64>().is_err()),
            };
            if is_header {
                names = Some(fields);
                continue;
            }
        }
        let n_cols = n_cols.expect("set on the first line");
        if fields.len() != n_cols {
            return Err(err(
                no,
                format!("expected {n_cols} comma-separated fields like the first line, got {}", fields.len()),
            ));
        }
        let d = n_cols - n_labels;
        let mut set = Vec::new();
        for (j, f) in fields.iter().enumerate() {
            let v = parse_finite(f.trim(), || format!("column {}", j + 1)).map_err(|m| err(no, m))?;
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
    let x = DenseRows::new(faer::Mat::from_fn(n, d, |i, j| data[i * d + j]))?;
    let y = LabelSets::new(n_labels, sets)?;
    let (feature_names, label_names) = match names {
        Some(mut names) => {
            let labels = names.split_off(d);
            (names, labels)
        }
        None => (default_names("f", d), default_names("l", n_labels)),
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
/// if a name contains a line break (the reader is line-based) or there are no
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
    if let Some(name) = data.feature_names.iter().chain(&data.label_names).find(|n| n.contains(['\n', '\r'])) {
        return Err(Error::invalid("column name", format!("{name:?}"), "a name without line breaks"));
    }
    if data.n_features() + data.n_labels() == 0 {
        return Err(Error::invalid("data", "no columns", "at least one feature or label column"));
    }
    let x = data.x.to_dense();
    write_atomic(path.as_ref(), |w| {
        let header: Vec<String> = data.feature_names.iter().chain(&data.label_names).map(|n| quote_field(n)).collect();
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
        assert_eq!((d.n_samples(), d.label_names[0].as_str()), (1, "2"));
        assert!(parse("a,b\n", 0, CsvHeader::Absent).is_err());
        let d = parse("x,\"y \"\"q\"\"\"\n", 1, CsvHeader::Detect).unwrap();
        assert_eq!((d.n_samples(), d.label_names[0].as_str()), (0, "y \"q\""));
    }

    #[test]
    fn errors_name_path_line_and_expectation() {
        parse_err("a,b,c\n1,2,0\n1,2\n", 1, 3, &["expected 3 comma-separated fields", "got 2"]);
        parse_err("a,b,c\n1,x,0\n", 1, 2, &["expected a number for column 2", "got 'x'"]);
        parse_err("a,b,c\n1,NaN,0\n", 1, 2, &["expected a finite number for column 2"]);
        parse_err("a,b,c\n1,2,0.5\n", 1, 2, &["expected 0 or 1 in label column 3", "'0.5'"]);
        parse_err("a,b\n", 3, 1, &["expected at least n_labels = 3 columns, got 2"]);
        parse_err("a,\"b\n", 1, 1, &["expected a closing '\"'"]);
        parse_err("a,\"b\"x,c\n", 1, 1, &["expected ',' after the quoted field"]);
    }

    #[test]
    fn quoting() {
        for name in ["a", "b,c", " pad", "q\"q", "1.5", "", "x y"] {
            let q = quote_field(name);
            let (f, quoted) = split_csv(&q).unwrap();
            assert_eq!(f, [name.to_string()], "{q}");
            assert!(quoted[0] || name.parse::<f64>().is_err());
        }
    }
}
