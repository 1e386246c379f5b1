//! A linear probe: how linearly separable are learned codes? A least-squares
//! (ridge) classifier on standardized codes plus a bias, one-vs-rest targets
//! $\pm 1$, prediction by the largest output; accuracy on held-out points.
//!
//! With $Z = [\tilde c, 1]$ the standardized codes
//! ([`okr_kernels::Standardizer`] fitted on the training rows: train mean,
//! population std; a constant column becomes 0) and $T_{ik} = 1$ if $y_i = k$ else
//! $-1$, the weights are $W = (Z^\top Z + n\rho\,\mathrm{diag}(1, \dots, 1, 0))^{-1} Z^\top T$
//! (the bias is not penalized).

use faer::linalg::solvers::Solve;
use faer::{Mat, MatRef};
use okr_kernels::{DenseRows, Features, Standardizer};

use crate::{Error, Result};

/// A fitted least-squares classifier.
#[derive(Debug, Clone)]
pub struct LinearProbe {
    /// okr's feature standardization, fitted on the training codes.
    standardizer: Standardizer,
    /// `(d + 1, k)`: one column per class, the bias last.
    weights: Mat<f64>,
}

impl LinearProbe {
    /// Fits on the rows `train` of `codes` `(n, d)` with their `labels` (`0..k`,
    /// `k` = largest label + 1 over all of `labels`) and ridge `rho >= 0`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `labels` has not one entry per row;
    /// [`Error::Empty`] for no training row; [`Error::InvalidArgument`] for a
    /// negative or non-finite `rho` or a training row out of range;
    /// [`Error::NonFinite`] for a non-finite code.
    ///
    /// # Example
    /// ```
    /// use faer::Mat;
    /// use okr_eval::probe::LinearProbe;
    /// // Two classes on either side of x = 0.
    /// let codes = Mat::from_fn(6, 1, |i, _| if i < 3 { -1.0 - i as f64 } else { i as f64 });
    /// let labels = [0, 0, 0, 1, 1, 1];
    /// let probe = LinearProbe::fit(codes.as_ref(), &labels, &[0, 1, 3, 4], 1e-6)?;
    /// assert_eq!(probe.accuracy(codes.as_ref(), &labels, &[2, 5])?, 1.0);
    /// Ok::<(), okr_eval::Error>(())
    /// ```
    pub fn fit(codes: MatRef<'_, f64>, labels: &[usize], train: &[usize], rho: f64) -> Result<Self> {
        let (n, d) = (codes.nrows(), codes.ncols());
        if labels.len() != n {
            return Err(Error::ShapeMismatch { what: "labels (one per code row)", expected: n, got: labels.len() });
        }
        if train.is_empty() {
            return Err(Error::Empty { what: "training rows of the probe" });
        }
        if !(rho.is_finite() && rho >= 0.0) {
            return Err(Error::invalid("rho", rho, "finite and >= 0"));
        }
        if let Some(&i) = train.iter().find(|&&i| i >= n) {
            return Err(Error::invalid("train row", i, format!("< {n}")));
        }
        if let Some(i) = (0..n).find(|&i| (0..d).any(|j| !codes[(i, j)].is_finite())) {
            return Err(Error::NonFinite { what: "codes", row: i });
        }
        let k = labels.iter().max().map_or(1, |m| m + 1);
        let m = train.len() as f64;
        let standardizer = Standardizer::fit(&Features::Dense(rows_of(codes, train)?))?;
        let mut probe = Self { standardizer, weights: Mat::zeros(d + 1, k) };
        let z = probe.design(codes, train)?;
        let t = Mat::from_fn(train.len(), k, |r, c| if labels[train[r]] == c { 1.0 } else { -1.0 });
        let mut a = z.transpose() * &z;
        for j in 0..d {
            // A constant column standardizes to zeros: keep the system regular.
            a[(j, j)] += if a[(j, j)] == 0.0 { 1.0 } else { m * rho };
        }
        probe.weights = a.partial_piv_lu().solve(z.transpose() * &t);
        Ok(probe)
    }

    /// `[standardized codes of rows, 1]`.
    fn design(&self, codes: MatRef<'_, f64>, rows: &[usize]) -> Result<Mat<f64>> {
        let z = self.standardizer.transform(&rows_of(codes, rows)?)?;
        let (z, d) = (z.as_mat(), codes.ncols());
        Ok(Mat::from_fn(rows.len(), d + 1, |r, j| if j == d { 1.0 } else { z[(r, j)] }))
    }

    /// The weights `(d + 1, k)` on the standardized codes, the bias in the last row.
    pub fn weights(&self) -> MatRef<'_, f64> {
        self.weights.as_ref()
    }

    /// Predicted classes of the rows `rows` of `codes` (ties to the smaller class).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for codes of another width; [`Error::InvalidArgument`] for a row out of range.
    pub fn predict(&self, codes: MatRef<'_, f64>, rows: &[usize]) -> Result<Vec<usize>> {
        let d = self.standardizer.n_features();
        if codes.ncols() != d {
            return Err(Error::ShapeMismatch { what: "code columns", expected: d, got: codes.ncols() });
        }
        if let Some(&i) = rows.iter().find(|&&i| i >= codes.nrows()) {
            return Err(Error::invalid("row", i, format!("< {}", codes.nrows())));
        }
        let out = self.design(codes, rows)? * &self.weights;
        Ok((0..rows.len())
            .map(|r| (0..out.ncols()).fold(0, |b, c| if out[(r, c)] > out[(r, b)] { c } else { b }))
            .collect())
    }

    /// Fraction of the rows `rows` whose predicted class is their label.
    ///
    /// # Errors
    /// As [`predict`](Self::predict); [`Error::Empty`] for no row, [`Error::ShapeMismatch`] for labels of another length.
    pub fn accuracy(&self, codes: MatRef<'_, f64>, labels: &[usize], rows: &[usize]) -> Result<f64> {
        if rows.is_empty() {
            return Err(Error::Empty { what: "evaluation rows of the probe" });
        }
        if labels.len() != codes.nrows() {
            return Err(Error::ShapeMismatch {
                what: "labels (one per code row)",
                expected: codes.nrows(),
                got: labels.len(),
            });
        }
        let pred = self.predict(codes, rows)?;
        Ok(rows.iter().zip(&pred).filter(|(i, p)| labels[**i] == **p).count() as f64 / rows.len() as f64)
    }
}

/// The rows `rows` of `codes` as dense rows.
fn rows_of(codes: MatRef<'_, f64>, rows: &[usize]) -> Result<DenseRows> {
    Ok(DenseRows::new(Mat::from_fn(rows.len(), codes.ncols(), |r, j| codes[(rows[r], j)]))?)
}
