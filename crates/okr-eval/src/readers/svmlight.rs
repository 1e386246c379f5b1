//! svmlight / libsvm multi-label format: one sample a line,
//! `l1,l2,... f:v f:v ... # comment`.
//!
//! - The label list comes first: comma-separated non-negative integers, used as
//!   0-based label indices exactly as written. It may be empty: a line whose first
//!   token is an `index:value` pair has no labels (writers start it with a space).
//! - Feature indices are **1-based** in libsvm files and 0-based in some others;
//!   the reader is told which by [`SvmlightOptions::new`]`(zero_based)`. There is
//!   no guessing: a 0 index in a 1-based file is an error.
//! - Pairs may come in any order; an index may appear at most once.
//! - `#` starts a comment; blank and comment-only lines are skipped (as
//!   scikit-learn's `load_svmlight_file` does). `qid:` pairs are rejected.
//!
//! Indices at or above [`MAX_DIMENSION`] (2^24) are rejected as malformed: they
//! exceed every Extreme Classification benchmark, and one bad index would
//! otherwise make the reader allocate a default name per feature up to it.
//!
//! The number of features and labels is the largest index seen plus one unless
//! given with [`SvmlightOptions::n_features`] / [`SvmlightOptions::n_labels`]
//! (give them for test files so their shapes match the training file); given
//! values are used as they are, even above [`MAX_DIMENSION`].

use std::io::Write;
use std::path::Path;

use okr_kernels::{CsrRows, LabelSets, Rows};

use super::{excerpt, lines, parse_finite, push_f64, read_text, write_atomic};
use crate::{Dataset, Error, Features, Result};

/// The largest number of features or labels the svmlight and XC readers accept
/// (`2^24 = 16_777_216`).
///
/// # Example
/// ```
/// assert!(okr_eval::readers::svmlight::MAX_DIMENSION > 3_000_000); // Amazon-3M's labels fit
/// ```
pub const MAX_DIMENSION: usize = 1 << 24;

/// How to read an svmlight file; built with [`SvmlightOptions::new`], which
/// makes the index base an explicit choice.
///
/// | Name | Default | Purpose |
/// |---|---|---|
/// | `zero_based` | (required) | feature indices start at 0 (`true`) or 1 (`false`, libsvm) |
/// | `n_features` | `None` = largest index + 1 | number of features; indices must be below it |
/// | `n_labels` | `None` = largest label + 1 | number of labels; labels must be below it |
///
/// # Example
/// ```
/// use okr_eval::SvmlightOptions;
/// let opts = SvmlightOptions::new(false).n_features(1836).n_labels(159);
/// assert_eq!((opts.zero_based, opts.n_features, opts.n_labels), (false, Some(1836), Some(159)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SvmlightOptions {
    /// Feature indices start at 0 (`true`) or at 1 (`false`, the libsvm convention).
    pub zero_based: bool,
    /// Number of features, or `None` to use the largest index + 1.
    pub n_features: Option<usize>,
    /// Number of labels, or `None` to use the largest label + 1.
    pub n_labels: Option<usize>,
}

impl SvmlightOptions {
    /// Options for a file with 0-based (`true`) or 1-based (`false`) feature indices.
    pub fn new(zero_based: bool) -> Self {
        Self { zero_based, n_features: None, n_labels: None }
    }

    /// Sets the number of features.
    pub fn n_features(mut self, n: usize) -> Self {
        self.n_features = Some(n);
        self
    }

    /// Sets the number of labels.
    pub fn n_labels(mut self, n: usize) -> Self {
        self.n_labels = Some(n);
        self
    }
}

/// Reads a multi-label svmlight / libsvm file into sparse features.
///
/// Feature and label names are the defaults `f0, ...` and `l0, ...`.
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] for a malformed label list or `index:value`
/// pair, a 0 index in a 1-based file, a repeated index, a non-finite value, a
/// `qid:` pair, or an index at or above the given `n_features` / `n_labels`.
///
/// # Example
/// ```
/// use okr_eval::{read_svmlight, SvmlightOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.svm");
/// std::fs::write(&path, "# two samples\n0,2 1:0.5 3:1\n 2:-1\n")?;
/// let data = read_svmlight(&path, &SvmlightOptions::new(false))?;
/// assert_eq!((data.n_samples(), data.n_features(), data.n_labels()), (2, 3, 3));
/// assert_eq!(data.y.set(0), &[0, 2]);
/// assert!(data.y.set(1).is_empty());
/// assert_eq!(data.x.to_dense()[(1, 1)], -1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_svmlight(path: impl AsRef<Path>, opts: &SvmlightOptions) -> Result<Dataset> {
    Ok(read_svmlight_counting(path.as_ref(), opts)?.0)
}

/// [`read_svmlight`], also returning the number of rows with a label list.
pub(crate) fn read_svmlight_counting(path: &Path, opts: &SvmlightOptions) -> Result<(Dataset, usize)> {
    let text = read_text(path)?;
    let mut rows = RowParser::new(path, opts.zero_based, opts.n_features, opts.n_labels);
    for (no, raw) in lines(&text) {
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        rows.push(no, line)?;
    }
    let labelled = rows.n_labelled_rows();
    Ok((rows.finish()?, labelled))
}

/// Writes `data` in the multi-label svmlight format, with 1-based
/// (`zero_based = false`, libsvm) or 0-based feature indices. Only nonzero
/// features of dense rows are written; stored entries of sparse rows are all
/// written (explicit zeros too).
///
/// A sample without labels starts with a space (` 3:0.5`). A sample with neither
/// labels nor features would be a blank line, which readers skip; it is written
/// as an explicit zero of the first feature (`1:0`), so it reads back as a row
/// with one stored zero.
///
/// The format does not store `n_features` or `n_labels`: pass them to
/// [`SvmlightOptions`] when reading back if trailing features or labels may be unused.
///
/// # Errors
/// [`Error::ShapeMismatch`] if `data` is inconsistent; [`Error::InvalidArgument`]
/// if a sample is empty and there are no features to write a zero for;
/// [`Error::Write`].
///
/// # Example
/// ```
/// use okr_eval::{read_svmlight, write_svmlight, Dataset, SvmlightOptions};
/// use okr_kernels::{CsrRows, LabelSets};
/// let x = CsrRows::from_rows(4, vec![vec![(0, 1.5), (3, -2.0)], vec![(1, 1.0)]])?;
/// let data = Dataset::new(x.into(), LabelSets::new(2, vec![vec![1], vec![]])?)?;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("b.svm");
/// write_svmlight(&path, &data, false)?;
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "1 1:1.5 4:-2\n 2:1\n");
/// let back = read_svmlight(&path, &SvmlightOptions::new(false).n_features(4).n_labels(2))?;
/// assert_eq!(back, data);
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn write_svmlight(path: impl AsRef<Path>, data: &Dataset, zero_based: bool) -> Result<()> {
    data.check()?;
    check_writable(data)?;
    write_atomic(path.as_ref(), |w| write_rows(w, data, if zero_based { 0 } else { 1 }))
}

/// Rejects data with an empty sample and no feature to write a zero for.
pub(crate) fn check_writable(data: &Dataset) -> Result<()> {
    if data.n_features() == 0 && data.y.iter().any(<[usize]>::is_empty) {
        return Err(Error::invalid(
            "data",
            "a sample without labels and without features",
            "at least one feature, so that an empty sample can be written as an explicit zero",
        ));
    }
    Ok(())
}

/// Writes one line per sample with feature indices offset by `base`.
pub(crate) fn write_rows(w: &mut impl Write, data: &Dataset, base: usize) -> std::io::Result<()> {
    fn pair(line: &mut String, j: usize, v: f64) {
        line.push(' ');
        line.push_str(&j.to_string());
        line.push(':');
        push_f64(line, v);
    }
    let mut line = String::new();
    for i in 0..data.n_samples() {
        line.clear();
        for (k, &l) in data.y.set(i).iter().enumerate() {
            if k > 0 {
                line.push(',');
            }
            line.push_str(&l.to_string());
        }
        match &data.x {
            Features::Dense(x) => {
                let x = x.as_mat();
                for j in 0..x.ncols() {
                    if x[(i, j)] != 0.0 {
                        pair(&mut line, j + base, x[(i, j)]);
                    }
                }
            }
            Features::Sparse(x) => {
                let (idx, val) = x.row(i);
                for (&j, &v) in idx.iter().zip(val) {
                    pair(&mut line, j + base, v);
                }
            }
        }
        if line.is_empty() {
            pair(&mut line, base, 0.0);
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// The line up to a `#` comment.
pub(crate) fn strip_comment(line: &str) -> &str {
    match line.find('#') {
        Some(p) => &line[..p],
        None => line,
    }
}

/// Parses svmlight-style rows into CSR storage and label sets.
pub(crate) struct RowParser<'a> {
    path: &'a Path,
    zero_based: bool,
    n_features: Option<usize>,
    n_labels: Option<usize>,
    max_feature: Option<usize>,
    max_label: Option<usize>,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
    sets: Vec<Vec<usize>>,
    row: Vec<(usize, f64)>,
    labelled_rows: usize,
}

impl<'a> RowParser<'a> {
    pub(crate) fn new(path: &'a Path, zero_based: bool, n_features: Option<usize>, n_labels: Option<usize>) -> Self {
        Self {
            path,
            zero_based,
            n_features,
            n_labels,
            max_feature: None,
            max_label: None,
            indptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            sets: Vec::new(),
            row: Vec::new(),
            labelled_rows: 0,
        }
    }

    /// Number of rows parsed so far.
    pub(crate) fn n_rows(&self) -> usize {
        self.sets.len()
    }

    /// Number of rows parsed so far that start with a label list.
    pub(crate) fn n_labelled_rows(&self) -> usize {
        self.labelled_rows
    }

    /// Parses one line (comment already removed); an empty line is an empty sample.
    pub(crate) fn push(&mut self, no: usize, line: &str) -> Result<()> {
        let err = |msg: String| Error::parse(self.path, no, msg);
        let mut tokens = line.split_ascii_whitespace().peekable();
        let mut labels = Vec::new();
        if let Some(first) = tokens.next_if(|t| !t.contains(':')) {
            self.labelled_rows += 1;
            for tok in first.split(',') {
                let l: usize = tok.parse().map_err(|_| {
                    err(format!(
                        "expected comma-separated label indices (non-negative integers) first, got '{}'",
                        excerpt(first)
                    ))
                })?;
                match self.n_labels {
                    Some(n) if l >= n => {
                        return Err(err(format!("expected label indices < n_labels = {n}, got {l}")));
                    }
                    None if l >= MAX_DIMENSION => {
                        return Err(err(format!("expected label indices < {MAX_DIMENSION} (MAX_DIMENSION), got {l}")));
                    }
                    _ => {}
                }
                labels.push(l);
            }
        }
        labels.sort_unstable();
        if let Some(w) = labels.windows(2).find(|w| w[0] == w[1]) {
            return Err(err(format!("expected each label at most once, got {} twice", w[0])));
        }
        if let Some(&m) = labels.last() {
            self.max_label = Some(self.max_label.map_or(m, |x| x.max(m)));
        }
        self.row.clear();
        for tok in tokens {
            let Some((idx, val)) = tok.split_once(':') else {
                return Err(err(format!("expected a feature 'index:value', got '{}'", excerpt(tok))));
            };
            if idx == "qid" {
                return Err(err("expected a feature 'index:value', got a 'qid:' pair (not supported)".into()));
            }
            let raw: usize = idx.parse().map_err(|_| {
                err(format!("expected a non-negative integer feature index before ':', got '{}'", excerpt(tok)))
            })?;
            let j = if self.zero_based {
                raw
            } else {
                raw.checked_sub(1).ok_or_else(|| {
                    err("expected 1-based feature indices (zero_based = false), got index 0".to_string())
                })?
            };
            let base = usize::from(!self.zero_based);
            match self.n_features {
                Some(n) if j >= n => {
                    return Err(err(format!("expected feature indices < {} (n_features = {n}), got {raw}", n + base)));
                }
                None if j >= MAX_DIMENSION => {
                    return Err(err(format!(
                        "expected feature indices < {} (MAX_DIMENSION features), got {raw}",
                        MAX_DIMENSION + base
                    )));
                }
                _ => {}
            }
            let v = parse_finite(val, || format!("feature {raw}")).map_err(err)?;
            self.row.push((j, v));
        }
        if !self.row.is_sorted_by_key(|e| e.0) {
            self.row.sort_unstable_by_key(|e| e.0);
        }
        if let Some(w) = self.row.windows(2).find(|w| w[0].0 == w[1].0) {
            let raw = w[0].0 + usize::from(!self.zero_based);
            return Err(err(format!("expected each feature index at most once, got {raw} twice")));
        }
        if let Some(&(m, _)) = self.row.last() {
            self.max_feature = Some(self.max_feature.map_or(m, |x| x.max(m)));
        }
        for &(j, v) in &self.row {
            self.indices.push(j);
            self.values.push(v);
        }
        self.indptr.push(self.indices.len());
        self.sets.push(labels);
        Ok(())
    }

    pub(crate) fn finish(self) -> Result<Dataset> {
        let d = self.n_features.unwrap_or(self.max_feature.map_or(0, |m| m + 1));
        let n_labels = self.n_labels.unwrap_or(self.max_label.map_or(0, |m| m + 1));
        let x = CsrRows::new(d, self.indptr, self.indices, self.values)?;
        let y = LabelSets::new(n_labels, self.sets)?;
        debug_assert_eq!(x.n_rows(), y.n_rows());
        Dataset::new(Features::Sparse(x), y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, opts: &SvmlightOptions) -> Result<Dataset> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.svm");
        std::fs::write(&path, text).unwrap();
        read_svmlight(&path, opts).map_err(|e| match e {
            Error::Parse { line, msg, .. } => Error::Parse { path: "data/t.svm".into(), line, msg },
            e => e,
        })
    }

    fn parse_err(text: &str, opts: &SvmlightOptions, line: usize, expect: &[&str]) {
        let msg = parse(text, opts).unwrap_err().to_string();
        assert!(msg.starts_with(&format!("data/t.svm:{line}: ")), "{msg}");
        for piece in expect {
            assert!(msg.contains(piece), "{msg:?} lacks {piece:?}");
        }
    }

    #[test]
    fn reads_labels_features_comments() {
        let text = "# header comment\r\n1,0 3:2.5 1:1 # trailing\r\n\r\n 2:-1\r\n4\r\n3:1e3";
        let d = parse(text, &SvmlightOptions::new(false)).unwrap();
        assert_eq!((d.n_samples(), d.n_features(), d.n_labels()), (4, 3, 5));
        let x = d.x.as_sparse().unwrap();
        assert_eq!(x.row(0), (&[0usize, 2][..], &[1.0, 2.5][..]));
        assert_eq!(d.y.set(0), &[0, 1]);
        assert!(d.y.set(1).is_empty());
        assert_eq!(d.y.set(2), &[4]);
        assert_eq!(x.row(2).0.len(), 0);
        assert_eq!(x.row(3), (&[2usize][..], &[1000.0][..]));
        let z = parse("0 0:1 2:2\n", &SvmlightOptions::new(true).n_features(5).n_labels(3)).unwrap();
        assert_eq!((z.n_features(), z.n_labels()), (5, 3));
        assert_eq!(z.x.as_sparse().unwrap().row(0).0, &[0, 2]);
    }

    #[test]
    fn errors_name_path_line_and_expectation() {
        let one = SvmlightOptions::new(false);
        parse_err("1 1:1\n1 0:1\n", &one, 2, &["expected 1-based feature indices", "got index 0"]);
        parse_err("a,b 1:1\n", &one, 1, &["expected comma-separated label indices", "'a,b'"]);
        parse_err("1, 1:1\n", &one, 1, &["expected comma-separated label indices"]);
        parse_err("1 1:1 x\n", &one, 1, &["expected a feature 'index:value'", "got 'x'"]);
        parse_err("1 1:1 y:2\n", &one, 1, &["expected a non-negative integer feature index", "'y:2'"]);
        parse_err("1 1:abc\n", &one, 1, &["expected a number for feature 1", "'abc'"]);
        parse_err("1 1:nan\n", &one, 1, &["expected a finite number for feature 1"]);
        parse_err("1 2:1 2:3\n", &one, 1, &["at most once", "2 twice"]);
        parse_err("1,1 2:1\n", &one, 1, &["label at most once", "1 twice"]);
        parse_err("1 qid:3 1:1\n", &one, 1, &["qid"]);
        parse_err("\n\n1 7:1\n", &one.n_features(5), 3, &["expected feature indices < 6", "got 7"]);
        parse_err("4 1:1\n", &one.n_labels(3), 1, &["expected label indices < n_labels = 3", "got 4"]);
        parse_err("1 99999999999:1\n", &one, 1, &["expected feature indices < 16777217", "got 99999999999"]);
        parse_err("99999999999 1:1\n", &one, 1, &["expected label indices < 16777216 (MAX_DIMENSION)"]);
    }

    #[test]
    fn svmlight_file_of_31_bytes_naming_feature_16777216_allocates_no_names() {
        let text = "0 16777216:1\n1 1:2.5 3:0.25\n";
        let d = parse(text, &SvmlightOptions::new(false)).unwrap();
        assert_eq!((d.n_features(), d.n_labels(), d.x.nnz()), (1 << 24, 2, 3));
        // Numbered names: constant memory, not 16 million strings.
        assert!(matches!(d.feature_names, crate::dataset::Names::Numbered { len: 16_777_216, .. }));
        assert_eq!(d.feature_names.get((1 << 24) - 1).as_deref(), Some("f16777215"));
    }

    #[test]
    fn dense_and_empty_rows_write() {
        let x = okr_kernels::DenseRows::from_rows(&[vec![0.0, 2.0], vec![0.0, 0.0], vec![0.0, 0.0]]).unwrap();
        let y = LabelSets::new(3, vec![vec![], vec![2], vec![]]).unwrap();
        let data = Dataset::new(x.into(), y).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.svm");
        write_svmlight(&path, &data, true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), " 1:2\n2\n 0:0\n");
        let back = read_svmlight(&path, &SvmlightOptions::new(true).n_features(2).n_labels(3)).unwrap();
        assert_eq!(back.x.to_dense(), data.x.to_dense());
        assert_eq!(back.y, data.y);
        let none = Dataset::new(
            okr_kernels::DenseRows::new(faer::Mat::zeros(1, 0)).unwrap().into(),
            LabelSets::new(1, vec![vec![]]).unwrap(),
        )
        .unwrap();
        assert!(matches!(write_svmlight(&path, &none, false), Err(Error::InvalidArgument { .. })));
    }
}
