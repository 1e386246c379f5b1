//! Small list files of the command line: candidate label sets (one set a line)
//! and index lists (Nystroem anchors).

use std::path::Path;

use okr_io::rows::RowError;
use okr_kernels::LabelSets;

use super::{excerpt, lines, read_text};
use crate::{Error, Result};

/// Reads candidate label sets: one set per line as 0-based labels below
/// `n_labels`, separated by commas or whitespace ([`okr_io::rows`]); `-` or
/// an empty line is the empty set; a line starting with `#` is a comment. Labels are sorted, and each may appear once a line.
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] for a token that is not a label index, a
/// label `>= n_labels`, a repeated label, or a file without any set.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("c.txt");
/// std::fs::write(&path, "# candidates\n2,0\n\n1\n-\n")?;
/// use okr_kernels::Rows;
/// let sets = okr_eval::read_label_sets(&path, 3)?;
/// assert_eq!(sets.n_rows(), 4);
/// assert!(sets.set(3).is_empty());
/// assert_eq!(sets.set(0), &[0, 2]);
/// assert!(sets.set(1).is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_label_sets(path: impl AsRef<Path>, n_labels: usize) -> Result<LabelSets> {
    let path = path.as_ref();
    let text = read_text(path)?;
    // Compressed as read: no vector per row (a file of `-` lines costs 8
    // bytes per row beside its text).
    let (mut indptr, mut labels) = (vec![0], Vec::new());
    let mut last = 1;
    // A final newline ends the last line; it starts no (empty) set.
    let body = if text.is_empty() { None } else { Some(text.strip_suffix('\n').unwrap_or(&text)) };
    for (no, raw) in body.into_iter().flat_map(lines) {
        last = no;
        let line = raw.trim();
        if line.starts_with('#') {
            continue;
        }
        // The row syntax of every label-set file (okr_io::rows): `-` or a
        // blank line is the empty set.
        let mut set = okr_io::rows::parse_index_set(line, n_labels).map_err(|e| match e {
            RowError::OutOfRange { index, .. } => {
                Error::parse(path, no, format!("expected labels < {n_labels} (the model's label count), got {index}"))
            }
            RowError::Token { found, .. } => {
                Error::parse(path, no, format!("expected a 0-based label index, got '{}'", excerpt(&found)))
            }
            other => Error::parse(path, no, other.to_string()),
        })?;
        set.sort_unstable();
        if let Some(w) = set.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::parse(path, no, format!("expected each label at most once, got {} twice", w[0])));
        }
        labels.extend_from_slice(&set);
        indptr.push(labels.len());
    }
    if indptr.len() == 1 {
        return Err(Error::parse(path, last, "expected one label set per line, got an empty candidate file"));
    }
    indptr.shrink_to_fit();
    labels.shrink_to_fit();
    Ok(LabelSets::from_compressed(n_labels, indptr, labels)?)
}

/// Reads a list of 0-based indices, one per line or comma separated; blank
/// lines are skipped.
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] for a token that is not a non-negative integer.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.txt");
/// std::fs::write(&path, "3, 1\n\n7\n")?;
/// assert_eq!(okr_eval::read_indices(&path)?, vec![3, 1, 7]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_indices(path: impl AsRef<Path>) -> Result<Vec<usize>> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let mut idx = Vec::new();
    for (no, line) in lines(&text) {
        for tok in line.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let i = tok
                .parse::<usize>()
                .map_err(|_| Error::parse(path, no, format!("expected a 0-based index, got '{}'", excerpt(tok))))?;
            idx.push(i);
        }
    }
    Ok(idx)
}

/// Reads sample weights (`okr fit --sample-weights`): one number per line,
/// in the order of the training rows; blank lines and lines starting with
/// `#` are skipped. Only the syntax is checked here: the values and their
/// count are checked by the fit, with every other door's weights
/// (`okr_estimators::check_sample_weight`: one per row, finite, `> 0`),
/// so `nan`, `0` or `-1` parse and are refused there.
///
/// # Errors
/// [`Error::Io`] (also for a file above the text size limit);
/// [`Error::Parse`] for a line that is not one number.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("w.txt");
/// std::fs::write(&path, "# weights\n1\n\n2.5e0\n0.5\n")?;
/// assert_eq!(okr_eval::read_sample_weights(&path)?, vec![1.0, 2.5, 0.5]);
/// std::fs::write(&path, "1\n2 3\n")?;
/// assert!(okr_eval::read_sample_weights(&path).unwrap_err().to_string().contains(":2:"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_sample_weights(path: impl AsRef<Path>) -> Result<Vec<f64>> {
    let path = path.as_ref();
    let text = read_text(path)?;
    okr_io::rows::data_lines(&text)
        .map(|(no, line)| {
            line.parse::<f64>()
                .map_err(|_| Error::parse(path, no, format!("expected one number, got '{}'", excerpt(line))))
        })
        .collect()
}

/// Reads one score threshold per label: a finite number per line, in label
/// order; blank lines are skipped.
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] for a line that is not a finite number, or
/// (at the last line) a count other than `n_labels`.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("t.txt");
/// std::fs::write(&path, "0.5\n\n-1e-3\n")?;
/// assert_eq!(okr_eval::read_thresholds(&path, 2)?, vec![0.5, -1e-3]);
/// assert!(okr_eval::read_thresholds(&path, 3).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_thresholds(path: impl AsRef<Path>, n_labels: usize) -> Result<Vec<f64>> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let mut out = Vec::new();
    let mut last = 1;
    for (no, line) in lines(&text) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        last = no;
        let t = line
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite())
            .ok_or_else(|| Error::parse(path, no, format!("expected a finite number, got '{}'", excerpt(line))))?;
        out.push(t);
    }
    if out.len() != n_labels {
        let msg = format!("{} thresholds, expected one per label ({n_labels})", out.len());
        return Err(Error::parse(path, last, msg));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use okr_kernels::Rows;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.txt");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn label_sets_match_the_old_line_rule() {
        // `str::lines` semantics: a final newline ends the last line, it starts no set.
        let (_d, p) = write("1\n\n");
        let s = read_label_sets(&p, 2).unwrap();
        assert_eq!(s.n_rows(), 2);
        let (_d, p) = write("1\n\n0");
        assert_eq!(read_label_sets(&p, 2).unwrap().n_rows(), 3);
        let (_d, p) = write("");
        assert!(read_label_sets(&p, 2).unwrap_err().to_string().contains("empty candidate file"));
    }

    #[test]
    fn label_set_errors_name_path_and_line() {
        for (text, needle) in
            [("0\nx\n", ":2: expected a 0-based label index"), ("0\n5\n", ":2: expected labels < 2"), ("1,1\n", ":1:")]
        {
            let (_d, p) = write(text);
            let e = read_label_sets(&p, 2).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn indices() {
        let (_d, p) = write("0,2\n-1\n");
        assert!(read_indices(&p).unwrap_err().to_string().contains(":2: expected a 0-based index, got '-1'"));
    }

    #[test]
    fn thresholds_one_per_label() {
        let (_d, p) = write("0.5\n\n  -2 \n1e-3\n");
        assert_eq!(read_thresholds(&p, 3).unwrap(), vec![0.5, -2.0, 1e-3]);
        let e = read_thresholds(&p, 2).unwrap_err().to_string();
        assert!(e.contains(":4: 3 thresholds, expected one per label (2)"), "{e}");
        let (_d, p) = write("0.5\nnan\n");
        assert!(read_thresholds(&p, 2).unwrap_err().to_string().contains(":2: expected a finite number, got 'nan'"));
    }
}
