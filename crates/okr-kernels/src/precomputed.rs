//! Precomputed Gram matrices as a kernel: for data that only comes as
//! kernel values (spectrum kernels, graph kernels computed elsewhere).
//!
//! A sample is represented by its row of kernel values against the `n_train`
//! training samples ([`GramRows`]): the training container holds the
//! training Gram `K` `(n_train, n_train)`, a test container holds the block
//! `K(test, train)` `(n_test, n_train)`. [`Precomputed`] evaluates
//! $k(a_i, b_j)$ by looking up the entry of the row of whichever sample is
//! not a training sample at the training index of the other, so every
//! estimator that only evaluates train x train and test x train pairs
//! (IOKR, reduced rank, Nystroem, SISOKR with sub-sampling sketches, whose
//! Gram columns are looked up) works unchanged on precomputed Grams.
//!
//! # Files
//!
//! - [`read_gram_npy`]: a NumPy `.npy` file of `float64` or `float32`, C or
//!   Fortran order, either byte order (through `npyz`, the crate behind faer's
//!   npy support).
//! - [`read_gram_text`]: one matrix row per line, values separated by
//!   whitespace or commas, `#` comment lines and blank lines skipped, every
//!   row of the same length (what `numpy.savetxt` writes).
//!
//! # Example
//! ```
//! use okr_kernels::{Gaussian, GramRows, Kernel, Precomputed, DenseRows, Rows};
//! let x = DenseRows::from_rows(&[vec![0.0], vec![1.0], vec![3.0]])?;
//! let xt = DenseRows::from_rows(&[vec![0.5]])?;
//! let k = Gaussian::new(0.5)?;
//! let train = GramRows::train(k.gram(&x))?;
//! let test = GramRows::test(k.gram_block(&xt, &x), None)?;
//! assert_eq!(Precomputed.gram_block(&test, &train), k.gram_block(&xt, &x));
//! assert_eq!(Precomputed.gram(&train.select(&[2, 0])), k.gram(&x.select(&[2, 0])));
//! Ok::<(), okr_kernels::Error>(())
//! ```

use std::path::Path;

use faer::Mat;
use serde::{Deserialize, Serialize};

use crate::{Error, Kernel, Result, Rows};

/// Samples given by their kernel values against the training samples.
///
/// Row `i` holds $k(s_i, x_t)$ for every training sample `t`; a row that is
/// itself a training sample remembers its training index, and rows may
/// carry their self-similarity $k(s_i, s_i)$ (known for training rows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GramRows {
    #[serde(with = "okr_linalg::serde_mat")]
    values: Mat<f64>,
    train_index: Vec<Option<usize>>,
    self_sim: Option<Vec<f64>>,
}

fn check_finite(k: &Mat<f64>, what: &'static str) -> Result<()> {
    match (0..k.nrows()).find(|&i| k.row(i).iter().any(|v| !v.is_finite())) {
        Some(row) => Err(Error::NonFinite { what, row }),
        None => Ok(()),
    }
}

impl GramRows {
    /// The training samples, from the training Gram `(n_train, n_train)`.
    /// Only the lower triangle is read for pairs of training samples in
    /// [`Kernel::gram_into`]; blocks read the entries as given.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for a non-square matrix, [`Error::NonFinite`].
    pub fn train(k: Mat<f64>) -> Result<Self> {
        if k.nrows() != k.ncols() {
            return Err(Error::ShapeMismatch {
                what: "columns of the training Gram",
                expected: k.nrows(),
                got: k.ncols(),
            });
        }
        check_finite(&k, "training Gram")?;
        let n = k.nrows();
        let diag = (0..n).map(|i| k[(i, i)]).collect();
        Ok(Self { values: k, train_index: (0..n).map(Some).collect(), self_sim: Some(diag) })
    }

    /// The training samples from a training Gram that must be square,
    /// finite and symmetric up to `tol` times its largest absolute entry,
    /// $|K_{ij} - K_{ji}| \le \mathrm{tol} \max |K|$ (a file's or a
    /// caller's Gram; [`GRAM_SYMMETRY_TOL`] is the usual `tol`).
    ///
    /// # Errors
    /// As [`GramRows::train`]; [`Error::NotSymmetric`] naming the worst pair.
    pub fn checked_train(k: Mat<f64>, tol: f64) -> Result<Self> {
        let k = Self::train(k)?;
        let v = k.values();
        let n = v.nrows();
        let scale = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).fold(0.0f64, |m, (i, j)| m.max(v[(i, j)].abs()));
        let mut worst = (0, 0, 0.0f64);
        for j in 0..n {
            for i in j + 1..n {
                let diff = v[(i, j)] - v[(j, i)];
                if diff.abs() > worst.2.abs() {
                    worst = (i, j, diff);
                }
            }
        }
        let bound = tol * scale;
        if worst.2.abs() > bound {
            return Err(Error::NotSymmetric { row: worst.0, col: worst.1, diff: worst.2, tol: bound });
        }
        Ok(k)
    }

    /// Test samples, from the block `K(test, train)` `(n_test, n_train)` and
    /// optionally their self-similarities $k(x, x)$ (needed only to
    /// normalize or to evaluate a test sample against itself).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `diag` has another length than the rows,
    /// [`Error::NonFinite`].
    pub fn test(k_test_train: Mat<f64>, diag: Option<Vec<f64>>) -> Result<Self> {
        check_finite(&k_test_train, "test x train Gram")?;
        if let Some(d) = &diag {
            if d.len() != k_test_train.nrows() {
                return Err(Error::ShapeMismatch {
                    what: "test self-similarities",
                    expected: k_test_train.nrows(),
                    got: d.len(),
                });
            }
            if let Some(row) = d.iter().position(|v| !v.is_finite()) {
                return Err(Error::NonFinite { what: "test self-similarities", row });
            }
        }
        let n = k_test_train.nrows();
        Ok(Self { values: k_test_train, train_index: vec![None; n], self_sim: diag })
    }

    /// Number of training samples (the width of every row).
    pub fn n_train(&self) -> usize {
        self.values.ncols()
    }

    /// The kernel values `(n_rows, n_train)`.
    pub fn values(&self) -> faer::MatRef<'_, f64> {
        self.values.as_ref()
    }

    /// The training index of row `i`, if it is a training sample.
    pub fn train_index(&self, i: usize) -> Option<usize> {
        self.train_index[i]
    }

    /// $k(s_i, s_i)$ of row `i`, when known.
    pub fn self_similarity(&self, i: usize) -> Option<f64> {
        self.self_sim.as_ref().map(|d| d[i])
    }

    /// Checks rows that a fitted model keeps (training rows or a selection
    /// of them, as deserialized from a model file): finite values, every row
    /// a training sample with an index below [`n_train`](Self::n_train), one
    /// self-similarity per row when present. Such rows can be evaluated
    /// against any rows of the same width without a panic.
    ///
    /// # Errors
    /// [`Error::NonFinite`], [`Error::IndexOutOfRange`] (a missing training
    /// index counts as out of range), [`Error::ShapeMismatch`].
    pub fn check_training_rows(&self) -> Result<()> {
        check_finite(&self.values, "stored Gram rows")?;
        let n = self.values.ncols();
        if self.train_index.len() != self.values.nrows() {
            return Err(Error::ShapeMismatch {
                what: "training indices of Gram rows",
                expected: self.values.nrows(),
                got: self.train_index.len(),
            });
        }
        if let Some(pos) = self.train_index.iter().position(|t| !t.is_some_and(|t| t < n)) {
            let index = self.train_index[pos].unwrap_or(usize::MAX);
            return Err(Error::IndexOutOfRange { what: "training sample", index, bound: n });
        }
        if let Some(d) = &self.self_sim {
            if d.len() != self.values.nrows() {
                return Err(Error::ShapeMismatch {
                    what: "self-similarities of Gram rows",
                    expected: self.values.nrows(),
                    got: d.len(),
                });
            }
            if let Some(row) = d.iter().position(|v| !v.is_finite()) {
                return Err(Error::NonFinite { what: "self-similarities of Gram rows", row });
            }
        }
        Ok(())
    }
}

impl Rows for GramRows {
    fn n_rows(&self) -> usize {
        self.values.nrows()
    }
    /// The number of training samples: estimators reject test blocks of
    /// another width.
    fn feature_dim(&self) -> Option<usize> {
        Some(self.values.ncols())
    }
    fn select(&self, indices: &[usize]) -> Self {
        Self {
            values: Mat::from_fn(indices.len(), self.values.ncols(), |i, j| self.values[(indices[i], j)]),
            train_index: indices.iter().map(|&i| self.train_index[i]).collect(),
            self_sim: self.self_sim.as_ref().map(|d| indices.iter().map(|&i| d[i]).collect()),
        }
    }
}

/// The kernel of a precomputed Gram matrix, on [`GramRows`].
///
/// # Panics
/// Evaluating two samples that are both outside the training set (only a
/// sample against itself with a known self-similarity is defined), or rows
/// of different widths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Precomputed;

impl Kernel<GramRows> for Precomputed {
    #[track_caller]
    fn eval(&self, a: &GramRows, i: usize, b: &GramRows, j: usize) -> f64 {
        assert_eq!(a.n_train(), b.n_train(), "precomputed Gram rows of different widths");
        match (a.train_index[i], b.train_index[j]) {
            (_, Some(t)) => a.values[(i, t)],
            (Some(t), None) => b.values[(j, t)],
            (None, None) => match (std::ptr::eq(a, b) && i == j, a.self_similarity(i)) {
                (true, Some(d)) => d,
                _ => panic!("precomputed kernel: no value between two samples outside the training set"),
            },
        }
    }

    fn diag(&self, a: &GramRows) -> Vec<f64> {
        (0..a.n_rows())
            .map(|i| match (a.train_index[i], a.self_similarity(i)) {
                (Some(t), _) => a.values[(i, t)],
                (None, Some(d)) => d,
                (None, None) => panic!("precomputed kernel: self-similarity of test row {i} unknown"),
            })
            .collect()
    }
}

/// Reads a Gram matrix (or a test x train block) from a `.npy` file of
/// `float64` or `float32` values (either byte order), C or Fortran order.
///
/// faer 0.24's `npy` reader wraps the same `npyz` crate, but ignores the byte
/// order and panics on a truncated file; this reader returns errors instead.
/// The shape in the header is checked before anything is allocated
/// ([`npy_shape`]): two dimensions, each at least 1, whose product times the
/// item size fits in the bytes after the header, so that a 128-byte file
/// cannot ask for more memory than its own size.
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] (line 0) for another dtype, a shape that
/// is not two-dimensional or larger than the file, or a truncated file,
/// [`Error::NonFinite`].
pub fn read_gram_npy(path: impl AsRef<Path>) -> Result<Mat<f64>> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = crate::bounded::read_file_starting_with(path, crate::bounded::MAX_INPUT_BYTES, false, b"\x93NUMPY")
        .map_err(|e| Error::Io { path: name.clone(), msg: e.to_string() })?
        .ok_or_else(|| Error::Parse {
            path: name.clone(),
            line: 0,
            msg: "not a .npy file (it does not start with \\x93NUMPY)".into(),
        })?;
    gram_from_npy_bytes(&bytes).map_err(|msg| match msg {
        NpyError::Parse(msg) => Error::Parse { path: name, line: 0, msg },
        NpyError::Other(e) => e,
    })
}

/// Why `.npy` bytes are not a Gram matrix.
enum NpyError {
    Parse(String),
    Other(Error),
}

/// The smallest item a Gram file holds (`float32`).
const MIN_NPY_ITEM_BYTES: u64 = 4;

/// The two dimensions declared by the header of `.npy` bytes (which must
/// start with the magic), checked against the size of the data after the
/// header: each dimension at least 1, and `nrows * ncols * 4` (`float32`, the
/// smallest item) at most the data bytes, with checked arithmetic. The header
/// is parsed here, before `npyz` sees it, so a shape whose product wraps
/// (`(4294967296, 4294967296)`, `(2**63, 2)`) is an error, never an
/// allocation.
///
/// # Errors
/// The message of a header that is truncated, has no or several `shape`
/// keys, a shape that is not two integers, an empty shape or one larger
/// than the file.
///
/// # Example
/// ```
/// let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
/// let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
/// bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
/// bytes.extend_from_slice(header.as_bytes());
/// bytes.extend_from_slice(&[0u8; 48]);
/// assert_eq!(okr_kernels::npy_shape(&bytes), Ok((2, 3)));
/// bytes.truncate(bytes.len() - 40);
/// assert!(okr_kernels::npy_shape(&bytes).unwrap_err().contains("more values than"));
/// ```
pub fn npy_shape(bytes: &[u8]) -> std::result::Result<(usize, usize), String> {
    let truncated = || "truncated .npy header".to_string();
    let version = *bytes.get(6).ok_or_else(truncated)?;
    let (len, start) = match version {
        1 => (u64::from(u16::from_le_bytes(bytes.get(8..10).ok_or_else(truncated)?.try_into().expect("2 bytes"))), 10),
        2 | 3 => {
            (u64::from(u32::from_le_bytes(bytes.get(8..12).ok_or_else(truncated)?.try_into().expect("4 bytes"))), 12)
        }
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| l.checked_add(start))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(truncated)?;
    let header = String::from_utf8_lossy(&bytes[start..end]);
    let data_bytes = (bytes.len() - end) as u64;
    if header.matches("shape").count() != 1 {
        return Err("expected one 'shape' key in the .npy header".into());
    }
    let after = &header[header.find("shape").expect("counted above") + "shape".len()..];
    let tuple = after
        .trim_start_matches(['\'', '"'])
        .trim_start()
        .strip_prefix(':')
        .map(str::trim_start)
        .and_then(|t| t.strip_prefix('('))
        .and_then(|t| t.split_once(')'))
        .map(|(inside, _)| inside)
        .ok_or_else(|| "no shape tuple in the .npy header".to_string())?;
    let dims = tuple
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.trim_end_matches('L')
                .parse::<u64>()
                .map_err(|_| format!("shape dimension {t:?} is not an integer below 2^64"))
        })
        .collect::<std::result::Result<Vec<u64>, String>>()?;
    let [nrows, ncols] = dims[..] else {
        return Err(format!("expected a 2-dimensional array, found shape {dims:?}"));
    };
    if nrows == 0 || ncols == 0 {
        return Err(format!("empty array (shape ({nrows}, {ncols})): a Gram file holds at least one value"));
    }
    let fits =
        nrows.checked_mul(ncols).and_then(|n| n.checked_mul(MIN_NPY_ITEM_BYTES)).is_some_and(|b| b <= data_bytes);
    let too_large = || {
        format!(
            "the header declares shape ({nrows}, {ncols}), more values than the file's {data_bytes} data bytes hold"
        )
    };
    if !fits {
        return Err(too_large());
    }
    Ok((usize::try_from(nrows).map_err(|_| too_large())?, usize::try_from(ncols).map_err(|_| too_large())?))
}

fn gram_from_npy_bytes(bytes: &[u8]) -> std::result::Result<Mat<f64>, NpyError> {
    use npyz::{DType, NpyFile, Order, TypeChar};
    let (nrows, ncols) = npy_shape(bytes).map_err(NpyError::Parse)?;
    let parse = |msg: String| NpyError::Parse(msg);
    let npy = NpyFile::new(bytes).map_err(|e| parse(e.to_string()))?;
    if npy.shape() != [nrows as u64, ncols as u64] {
        return Err(parse(format!("ambiguous .npy header (shape {:?} and ({nrows}, {ncols}))", npy.shape())));
    }
    let fortran = npy.order() == Order::Fortran;
    let values: Vec<f64> = match npy.dtype() {
        DType::Plain(t) if t.type_char() == TypeChar::Float && t.size_field() == 8 => npy.into_vec::<f64>(),
        DType::Plain(t) if t.type_char() == TypeChar::Float && t.size_field() == 4 => {
            npy.into_vec::<f32>().map(|v| v.into_iter().map(f64::from).collect())
        }
        other => return Err(parse(format!("expected float64 or float32 values, found {}", other.descr()))),
    }
    .map_err(|e| parse(e.to_string()))?;
    if values.len() != nrows * ncols {
        return Err(parse(format!("expected {} values, found {}", nrows * ncols, values.len())));
    }
    let k = if fortran {
        Mat::from_fn(nrows, ncols, |i, j| values[j * nrows + i])
    } else {
        Mat::from_fn(nrows, ncols, |i, j| values[i * ncols + j])
    };
    check_finite(&k, "Gram file").map_err(NpyError::Other)?;
    Ok(k)
}

/// Reads a Gram matrix (or a test x train block) from text: one row per
/// line, values separated by whitespace or commas, `#` comment lines and
/// blank lines skipped.
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] naming the line of a bad value or a row
/// of another length, [`Error::NonFinite`].
pub fn read_gram_text(path: impl AsRef<Path>) -> Result<Mat<f64>> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = crate::bounded::read_text(path, crate::bounded::MAX_INPUT_BYTES)
        .map_err(|e| Error::Io { path: name.clone(), msg: e.to_string() })?;
    // The vector row syntax of okr's output files (okr_io::rows).
    let (rows, ncols) = okr_io::rows::parse_value_table(&text).map_err(|e| Error::Parse {
        path: name.clone(),
        line: e.line,
        msg: e.error.to_string(),
    })?;
    Ok(Mat::from_fn(rows.len(), ncols, |i, j| rows[i][j]))
}

/// Default relative tolerance of [`read_train_gram`]'s symmetry check.
pub const GRAM_SYMMETRY_TOL: f64 = 1e-8;

/// Reads a Gram file by its extension: `.npy` with [`read_gram_npy`], any
/// other with [`read_gram_text`].
///
/// # Errors
/// Those of the reader.
pub fn read_gram(path: impl AsRef<Path>) -> Result<Mat<f64>> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => read_gram_npy(path),
        _ => read_gram_text(path),
    }
}

/// Reads a training Gram `(n_train, n_train)` ([`read_gram`]) and checks it:
/// square, finite, and symmetric up to `tol` times the largest absolute
/// entry, $|K_{ij} - K_{ji}| \le \mathrm{tol} \max |K|$.
///
/// # Errors
/// Those of [`read_gram`], [`Error::Empty`] for no rows,
/// [`Error::ShapeMismatch`] for a non-square matrix, [`Error::NotSymmetric`].
pub fn read_train_gram(path: impl AsRef<Path>, tol: f64) -> Result<GramRows> {
    let k = read_gram(path)?;
    if k.nrows() == 0 {
        return Err(Error::Empty { what: "training Gram file" });
    }
    GramRows::checked_train(k, tol)
}

/// Reads a test x train block `(n_test, n_train)` ([`read_gram`]) for a
/// model fitted on `n_train` training samples.
///
/// # Errors
/// Those of [`read_gram`], [`Error::Empty`] for no rows,
/// [`Error::ShapeMismatch`] when the block does not have `n_train` columns.
pub fn read_test_gram(path: impl AsRef<Path>, n_train: usize) -> Result<GramRows> {
    let k = read_gram(path)?;
    if k.nrows() == 0 {
        return Err(Error::Empty { what: "test x train Gram file" });
    }
    if k.ncols() != n_train {
        return Err(Error::ShapeMismatch {
            what: "columns of the test x train Gram (one per training sample)",
            expected: n_train,
            got: k.ncols(),
        });
    }
    GramRows::test(k, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_follow_the_training_index() {
        let k = Mat::from_fn(3, 3, |i, j| (1 + i + j) as f64 + if i == j { 10.0 } else { 0.0 });
        let train = GramRows::train(k.clone()).unwrap();
        let test = GramRows::test(Mat::from_fn(2, 3, |i, j| (100 * i + j) as f64), Some(vec![7.0, 8.0])).unwrap();
        let sub = train.select(&[2, 1]);
        assert_eq!(Precomputed.eval(&sub, 0, &train, 1), k[(2, 1)]);
        assert_eq!(Precomputed.eval(&test, 1, &sub, 0), 102.0);
        assert_eq!(Precomputed.eval(&sub, 1, &test, 1), 101.0);
        assert_eq!(Precomputed.diag(&test), vec![7.0, 8.0]);
        assert_eq!(Precomputed.diag(&sub), vec![k[(2, 2)], k[(1, 1)]]);
        assert!(GramRows::train(Mat::zeros(2, 3)).is_err());
        assert!(GramRows::test(Mat::zeros(2, 3), Some(vec![1.0])).is_err());
    }

    #[test]
    fn gram_files_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let ok = write("k.txt", "# train\n2 1\n1, 3\n");
        assert_eq!(read_train_gram(&ok, GRAM_SYMMETRY_TOL).unwrap().values()[(1, 0)], 1.0);
        let asym = write("a.txt", "2 1\n1.5 3\n");
        let e = read_train_gram(&asym, GRAM_SYMMETRY_TOL).unwrap_err();
        assert!(matches!(e, Error::NotSymmetric { row: 1, col: 0, .. }), "{e}");
        let wide = write("w.txt", "2 1 0\n1 3 0\n");
        assert!(matches!(read_train_gram(&wide, 1e-8), Err(Error::ShapeMismatch { expected: 2, got: 3, .. })));
        let nan = write("n.txt", "2 nan\nnan 3\n");
        assert!(matches!(read_train_gram(&nan, 1e-8), Err(Error::Parse { line: 1, .. })));
        assert!(matches!(read_test_gram(&wide, 2), Err(Error::ShapeMismatch { expected: 2, got: 3, .. })));
        assert_eq!(read_test_gram(&wide, 3).unwrap().n_rows(), 2);
        assert!(matches!(read_test_gram(write("e.txt", "# none\n"), 3), Err(Error::Empty { .. })));
    }

    #[test]
    fn stored_rows_must_be_training_rows() {
        let train = GramRows::train(Mat::identity(3, 3)).unwrap();
        assert!(train.select(&[2, 0]).check_training_rows().is_ok());
        let test = GramRows::test(Mat::zeros(1, 3), None).unwrap();
        assert!(matches!(test.check_training_rows(), Err(Error::IndexOutOfRange { .. })));
    }

    #[test]
    #[should_panic(expected = "outside the training set")]
    fn two_test_rows_have_no_value() {
        let test = GramRows::test(Mat::zeros(2, 3), None).unwrap();
        Precomputed.eval(&test, 0, &test.clone(), 1);
    }
}
