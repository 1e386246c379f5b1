//! The Extreme Classification repository format: a header line
//! `n_samples n_features n_labels`, then one svmlight-style line per sample,
//! `l1,l2,... f:v f:v ...`, with **0-based** feature and label indices.
//! A file of features only (to predict on) may have the header
//! `n_samples n_features` (read as 0 labels) and rows without label lists.
//!
//! A sample without labels starts with a space. Blank lines and `#` comments are
//! skipped (as in [`read_svmlight`](super::read_svmlight)); the number of samples
//! must match the header.

use std::io::Write;
use std::path::Path;

use super::svmlight::{MAX_DIMENSION, RowParser, check_writable, strip_comment, write_rows};
use super::{excerpt, lines, read_text, write_atomic};
use crate::{Dataset, Error, Result};

/// Reads an Extreme Classification repository file into sparse features.
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] for a malformed header, a malformed row (see
/// [`read_svmlight`](super::read_svmlight)), a feature or label index at or above
/// the header's counts, or a number of rows different from the header's.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("tiny_xc.txt");
/// std::fs::write(&path, "2 5 3\n0,2 0:1 4:0.5\n 3:2\n")?;
/// let data = okr_eval::read_xc(&path)?;
/// assert_eq!((data.n_samples(), data.n_features(), data.n_labels()), (2, 5, 3));
/// assert_eq!(data.y.set(0), &[0, 2]);
/// assert_eq!(data.x.to_dense()[(1, 3)], 2.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_xc(path: impl AsRef<Path>) -> Result<Dataset> {
    read_xc_with(path.as_ref(), None)
}

/// [`read_xc`]; with `model = Some((n_features, n_labels))` the header must
/// declare the model's features and either its labels or none.
pub(crate) fn read_xc_with(path: &Path, model: Option<(usize, usize)>) -> Result<Dataset> {
    let text = read_text(path)?;
    let mut it = lines(&text);
    let mut header = None;
    let mut last = 1;
    for (no, raw) in it.by_ref() {
        last = no;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let nums: Vec<Option<usize>> = line.split_ascii_whitespace().map(|t| t.parse().ok()).collect();
        match nums[..] {
            [Some(n), Some(d), Some(l)] if d <= MAX_DIMENSION && l <= MAX_DIMENSION => header = Some((no, n, d, l)),
            [Some(n), Some(d)] if d <= MAX_DIMENSION => header = Some((no, n, d, 0)),
            [Some(_), Some(_), Some(_)] | [Some(_), Some(_)] => {
                return Err(Error::parse(
                    path,
                    no,
                    format!(
                        "expected at most {MAX_DIMENSION} features and labels in the header, got '{}'",
                        excerpt(line)
                    ),
                ));
            }
            _ => {
                return Err(Error::parse(
                    path,
                    no,
                    format!(
                        "expected a header 'n_samples n_features n_labels' (or 'n_samples n_features' \
                         for features only), got '{}'",
                        excerpt(line)
                    ),
                ));
            }
        }
        break;
    }
    let Some((header_line, n, d, l)) = header else {
        return Err(Error::parse(path, last, "expected a header 'n_samples n_features n_labels', got an empty file"));
    };
    if let Some((model_d, model_l)) = model {
        if d != model_d {
            return Err(Error::parse(
                path,
                header_line,
                format!("expected n_features = {model_d} (the model's) in the header, got {d}"),
            ));
        }
        if l != 0 && l != model_l {
            return Err(Error::parse(
                path,
                header_line,
                format!("expected n_labels = {model_l} (the model's) or none in the header, got {l}"),
            ));
        }
    }
    let mut rows = RowParser::new(path, true, Some(d), Some(l));
    let mut last_row_line = header_line;
    for (no, raw) in it {
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        if rows.n_rows() == n {
            return Err(Error::parse(
                path,
                no,
                format!("expected {n} samples as the header says (line {header_line}), got more"),
            ));
        }
        rows.push(no, line)?;
        last_row_line = no;
    }
    if rows.n_rows() != n {
        return Err(Error::parse(
            path,
            last_row_line,
            format!("expected {n} samples as the header says (line {header_line}), got {}", rows.n_rows()),
        ));
    }
    rows.finish()
}

/// Writes `data` in the Extreme Classification repository format (header, then
/// 0-based rows). Empty samples are written as in [`write_svmlight`](super::write_svmlight).
///
/// # Errors
/// As [`write_svmlight`](super::write_svmlight).
///
/// # Example
/// ```
/// use okr_eval::{read_xc, write_xc, Dataset};
/// use okr_kernels::{CsrRows, LabelSets};
/// let x = CsrRows::from_rows(3, vec![vec![(2, 0.25)], vec![(0, 1.0)]])?;
/// let data = Dataset::new(x.into(), LabelSets::new(4, vec![vec![3], vec![]])?)?;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out_xc.txt");
/// write_xc(&path, &data)?;
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "2 3 4\n3 2:0.25\n 0:1\n");
/// assert_eq!(read_xc(&path)?, data);
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn write_xc(path: impl AsRef<Path>, data: &Dataset) -> Result<()> {
    data.check()?;
    check_writable(data)?;
    write_atomic(path.as_ref(), |w| {
        writeln!(w, "{} {} {}", data.n_samples(), data.n_features(), data.n_labels())?;
        write_rows(w, data, 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(text: &str, line: usize, expect: &[&str]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t_xc.txt");
        std::fs::write(&path, text).unwrap();
        let msg = read_xc(&path).unwrap_err().to_string();
        assert!(msg.starts_with(&format!("{}:{line}: ", path.display())), "{msg}");
        for piece in expect {
            assert!(msg.contains(piece), "{msg:?} lacks {piece:?}");
        }
    }

    #[test]
    fn reads_with_comments_and_crlf() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "# c\r\n3 4 2\r\n1 0:1\r\n\r\n 3:1\r\n0,1 1:2 # x").unwrap();
        let d = read_xc(&path).unwrap();
        assert_eq!((d.n_samples(), d.n_features(), d.n_labels()), (3, 4, 2));
        assert_eq!(d.y.set(2), &[0, 1]);
    }

    #[test]
    fn header_without_labels_reads_features_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_xc.txt");
        std::fs::write(&path, "2 4\n 0:1 3:2\n 1:1\n").unwrap();
        let d = read_xc(&path).unwrap();
        assert_eq!((d.n_samples(), d.n_features(), d.n_labels()), (2, 4, 0));
        assert_eq!(d.x.to_dense()[(0, 3)], 2.0);
    }

    #[test]
    fn xc_header_counts_are_checked_against_the_data() {
        // Declared widths up to MAX_DIMENSION cost nothing until used (numbered names).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wide_xc.txt");
        std::fs::write(&path, "1 16777216 16777216\n16777215 16777215:1\n").unwrap();
        let d = read_xc(&path).unwrap();
        assert_eq!((d.n_features(), d.n_labels()), (1 << 24, 1 << 24));
        assert!(matches!(d.label_names, crate::dataset::Names::Numbered { .. }));
        // A sample count the data does not hold, either way, is an error.
        parse_err("99999999999999 4 2\n0 0:1\n", 2, &["expected 99999999999999 samples", "got 1"]);
        parse_err("1 4 2\n0 0:1\n1 0:1\n", 3, &["got more"]);
        parse_err("1 16777217 2\n0 0:1\n", 1, &["expected at most 16777216 features and labels"]);
    }

    #[test]
    fn errors_name_path_line_and_expectation() {
        parse_err("", 1, &["expected a header 'n_samples n_features n_labels'", "empty file"]);
        parse_err("3 4 x\n", 1, &["expected a header", "'3 4 x'"]);
        parse_err("3\n", 1, &["expected a header", "'3'"]);
        parse_err("1 4\n0 0:1\n", 2, &["expected label indices < n_labels = 0", "got 0"]);
        parse_err("1 4 99999999999\n", 1, &["expected at most 16777216 features and labels"]);
        parse_err("1 4 2\n0 0:1\n1 1:1\n", 3, &["expected 1 samples as the header says (line 1), got more"]);
        parse_err("3 4 2\n0 0:1\n1 1:1\n", 3, &["expected 3 samples", "got 2"]);
        parse_err("2 4 2\n0 4:1\n1 1:1\n", 2, &["expected feature indices < 4", "got 4"]);
        parse_err("2 4 2\n2 0:1\n1 1:1\n", 2, &["expected label indices < n_labels = 2", "got 2"]);
    }
}
