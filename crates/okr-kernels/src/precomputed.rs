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
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] (line 0) for another dtype, a shape that
/// is not two-dimensional or a truncated file, [`Error::NonFinite`].
pub fn read_gram_npy(path: impl AsRef<Path>) -> Result<Mat<f64>> {
    use npyz::{DType, NpyFile, Order, TypeChar};
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::Io { path: name.clone(), msg: e.to_string() })?;
    let parse = |msg: String| Error::Parse { path: name.clone(), line: 0, msg };
    let npy = NpyFile::new(&bytes[..]).map_err(|e| parse(e.to_string()))?;
    let (nrows, ncols) = match *npy.shape() {
        [r, c] => (r as usize, c as usize),
        ref other => return Err(parse(format!("expected a 2-dimensional array, found shape {other:?}"))),
    };
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
    check_finite(&k, "Gram file")?;
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
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io { path: name.clone(), msg: e.to_string() })?;
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let parse = |msg: String| Error::Parse { path: name.clone(), line: no + 1, msg };
        let row = t
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| parse(format!("expected a finite number, found {s:?}")))
            })
            .collect::<Result<Vec<f64>>>()?;
        if let Some(first) = rows.first().filter(|f| f.len() != row.len()) {
            return Err(parse(format!("expected {} values, found {}", first.len(), row.len())));
        }
        rows.push(row);
    }
    let ncols = rows.first().map_or(0, Vec::len);
    Ok(Mat::from_fn(rows.len(), ncols, |i, j| rows[i][j]))
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
    #[should_panic(expected = "outside the training set")]
    fn two_test_rows_have_no_value() {
        let test = GramRows::test(Mat::zeros(2, 3), None).unwrap();
        Precomputed.eval(&test, 0, &test.clone(), 1);
    }
}
