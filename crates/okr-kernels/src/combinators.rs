//! Kernel algebra: sums, weighted sums, products, cosine normalization and
//! centring in feature space, as kernels on any [`Rows`] and as operations
//! on Gram matrices (training Gram plus test x train blocks).
//!
//! | combinator | $k'(x, y)$ |
//! |---|---|
//! | [`Sum`] | $k_1(x, y) + k_2(x, y)$ |
//! | [`WeightedSum`] | $\sum_m w_m k_m(x, y)$, $w_m \ge 0$ |
//! | [`Product`] | $k_1(x, y)\, k_2(x, y)$ |
//! | [`Normalized`] | $k(x, y) / \sqrt{k(x, x)\, k(y, y)}$ (0 when either is 0) |
//! | [`Centered`] | $\langle \phi(x) - \bar\phi, \phi(y) - \bar\phi \rangle$, $\bar\phi$ the mean of the training features |
//!
//! Sums, products and normalizations of PSD kernels are PSD (Schur product
//! theorem for products). Centring uses the *training* mean for every row,
//! so a test row is centred with the training statistics:
//! $$\tilde k(x, y) = k(x, y) - \tfrac1n \textstyle\sum_t k(x, x_t) - \tfrac1n \sum_t k(y, x_t) + \tfrac1{n^2} \sum_{s,t} k(x_s, x_t).$$
//!
//! # Example
//! ```
//! use okr_kernels::combinators::{Centered, Normalized, Sum};
//! use okr_kernels::{DenseRows, Gaussian, Kernel, Linear};
//! let x = DenseRows::from_rows(&[vec![1.0, 0.0], vec![0.0, 2.0], vec![1.0, 1.0]])?;
//! let k = Sum(Gaussian::new(0.5)?, Linear);
//! assert!((k.eval(&x, 0, &x, 1) - (-2.5f64).exp()).abs() < 1e-15);
//! assert_eq!(Normalized(Linear).diag(&x), vec![1.0; 3]);
//! // Centred Grams have zero row sums on the training set.
//! let c = Centered::fit(Linear, &x).gram(&x);
//! assert!((0..3).all(|i| (0..3).map(|j| c[(i, j)]).sum::<f64>().abs() < 1e-14));
//! Ok::<(), okr_kernels::Error>(())
//! ```

use faer::{Mat, MatMut, MatRef, Par};
use serde::{Deserialize, Serialize};

use crate::{Error, Kernel, Result, Rows};

/// $k_1 + k_2$.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sum<A, B>(pub A, pub B);

/// $k_1 k_2$ (elementwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Product<A, B>(pub A, pub B);

/// $\sum_m w_m k_m$ with non-negative weights (multiple kernel learning
/// combines kernels this way, see [`crate::mkl`]).
///
/// Deserialization checks the weights like [`WeightedSum::new`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "WeightedSumFields<K>")]
pub struct WeightedSum<K> {
    weights: Vec<f64>,
    kernels: Vec<K>,
}

/// The serialized fields of [`WeightedSum`], checked on the way in.
#[derive(Deserialize)]
struct WeightedSumFields<K> {
    weights: Vec<f64>,
    kernels: Vec<K>,
}

impl<K> TryFrom<WeightedSumFields<K>> for WeightedSum<K> {
    type Error = Error;
    fn try_from(f: WeightedSumFields<K>) -> Result<Self> {
        Self::new(f.weights, f.kernels)
    }
}

/// Cosine normalization $k(x, y) / \sqrt{k(x, x) k(y, y)}$; 0 when either
/// self-similarity is 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Normalized<K>(pub K);

/// A kernel centred in feature space with the statistics of a training set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Centered<K, R> {
    kernel: K,
    train: R,
    /// $\frac1n \sum_t k(x_s, x_t)$ for every training sample `s`.
    train_means: Vec<f64>,
    /// $\frac1{n^2} \sum_{s,t} k(x_s, x_t)$.
    grand_mean: f64,
}

impl<K> WeightedSum<K> {
    /// Combines `kernels` with `weights`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for different lengths or no kernel,
    /// [`Error::InvalidParameter`] for a negative or non-finite weight.
    pub fn new(weights: Vec<f64>, kernels: Vec<K>) -> Result<Self> {
        if kernels.is_empty() || weights.len() != kernels.len() {
            return Err(Error::ShapeMismatch {
                what: "kernel weights",
                expected: kernels.len().max(1),
                got: weights.len(),
            });
        }
        if let Some(&w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(Error::InvalidParameter { name: "kernel weight", value: w, expected: "finite and >= 0" });
        }
        Ok(Self { weights, kernels })
    }

    /// The weights.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The kernels, in the order of [`weights`](Self::weights).
    pub fn kernels(&self) -> &[K] {
        &self.kernels
    }
}

impl<K, R: Rows> Centered<K, R> {
    /// Centres `kernel` on the training rows `train` (keeps a copy of them:
    /// test rows need $\sum_t k(x, x_t)$).
    pub fn fit(kernel: K, train: &R) -> Self
    where
        K: Kernel<R>,
    {
        let k = kernel.gram(train);
        let (_, stats) = center_gram(k.as_ref());
        Self { kernel, train: train.clone(), train_means: stats.train_means, grand_mean: stats.grand_mean }
    }

    /// Row means $\frac1n \sum_t k(a_i, x_t)$.
    fn means(&self, a: &R) -> Vec<f64>
    where
        K: Kernel<R>,
    {
        let n = self.train.n_rows() as f64;
        let block = self.kernel.gram_block(a, &self.train);
        (0..a.n_rows()).map(|i| block.row(i).iter().sum::<f64>() / n).collect()
    }
}

impl<R: Rows, A: Kernel<R>, B: Kernel<R>> Kernel<R> for Sum<A, B> {
    fn eval(&self, a: &R, i: usize, b: &R, j: usize) -> f64 {
        self.0.eval(a, i, b, j) + self.1.eval(a, i, b, j)
    }
    fn gram_block_into(&self, a: &R, b: &R, mut dst: MatMut<'_, f64>, par: Par) {
        self.0.gram_block_into(a, b, dst.as_mut(), par);
        let mut tmp = Mat::zeros(a.n_rows(), b.n_rows());
        self.1.gram_block_into(a, b, tmp.as_mut(), par);
        zip_in_place(dst, tmp.as_ref(), |d, t| d + t);
    }
    fn diag(&self, a: &R) -> Vec<f64> {
        self.0.diag(a).iter().zip(self.1.diag(a)).map(|(u, v)| u + v).collect()
    }
}

impl<R: Rows, A: Kernel<R>, B: Kernel<R>> Kernel<R> for Product<A, B> {
    fn eval(&self, a: &R, i: usize, b: &R, j: usize) -> f64 {
        self.0.eval(a, i, b, j) * self.1.eval(a, i, b, j)
    }
    fn gram_block_into(&self, a: &R, b: &R, mut dst: MatMut<'_, f64>, par: Par) {
        self.0.gram_block_into(a, b, dst.as_mut(), par);
        let mut tmp = Mat::zeros(a.n_rows(), b.n_rows());
        self.1.gram_block_into(a, b, tmp.as_mut(), par);
        zip_in_place(dst, tmp.as_ref(), |d, t| d * t);
    }
    fn diag(&self, a: &R) -> Vec<f64> {
        self.0.diag(a).iter().zip(self.1.diag(a)).map(|(u, v)| u * v).collect()
    }
}

impl<R: Rows, K: Kernel<R>> Kernel<R> for WeightedSum<K> {
    fn eval(&self, a: &R, i: usize, b: &R, j: usize) -> f64 {
        self.weights.iter().zip(&self.kernels).map(|(w, k)| w * k.eval(a, i, b, j)).sum()
    }
    fn gram_block_into(&self, a: &R, b: &R, mut dst: MatMut<'_, f64>, par: Par) {
        dst.fill(0.0);
        let mut tmp = Mat::zeros(a.n_rows(), b.n_rows());
        for (&w, k) in self.weights.iter().zip(&self.kernels) {
            k.gram_block_into(a, b, tmp.as_mut(), par);
            zip_in_place(dst.as_mut(), tmp.as_ref(), |d, t| d + w * t);
        }
    }
    fn diag(&self, a: &R) -> Vec<f64> {
        let mut d = vec![0.0; a.n_rows()];
        for (&w, k) in self.weights.iter().zip(&self.kernels) {
            for (x, v) in d.iter_mut().zip(k.diag(a)) {
                *x += w * v;
            }
        }
        d
    }
}

fn cosine(k: f64, da: f64, db: f64) -> f64 {
    if da > 0.0 && db > 0.0 { k / (da * db).sqrt() } else { 0.0 }
}

impl<R: Rows, K: Kernel<R>> Kernel<R> for Normalized<K> {
    fn eval(&self, a: &R, i: usize, b: &R, j: usize) -> f64 {
        cosine(self.0.eval(a, i, b, j), self.0.eval(a, i, a, i), self.0.eval(b, j, b, j))
    }
    fn gram_block_into(&self, a: &R, b: &R, mut dst: MatMut<'_, f64>, par: Par) {
        self.0.gram_block_into(a, b, dst.as_mut(), par);
        let (da, db) = (self.0.diag(a), self.0.diag(b));
        for j in 0..b.n_rows() {
            for i in 0..a.n_rows() {
                dst[(i, j)] = cosine(dst[(i, j)], da[i], db[j]);
            }
        }
    }
    fn diag(&self, a: &R) -> Vec<f64> {
        self.0.diag(a).into_iter().map(|d| if d > 0.0 { 1.0 } else { 0.0 }).collect()
    }
}

impl<R: Rows, K: Kernel<R>> Kernel<R> for Centered<K, R> {
    fn eval(&self, a: &R, i: usize, b: &R, j: usize) -> f64 {
        let n = self.train.n_rows() as f64;
        let mean =
            |r: &R, i: usize| (0..self.train.n_rows()).map(|t| self.kernel.eval(r, i, &self.train, t)).sum::<f64>() / n;
        self.kernel.eval(a, i, b, j) - mean(a, i) - mean(b, j) + self.grand_mean
    }
    /// Memory: besides `dst`, the blocks `K(a, train)` and `K(b, train)`.
    fn gram_block_into(&self, a: &R, b: &R, mut dst: MatMut<'_, f64>, par: Par) {
        self.kernel.gram_block_into(a, b, dst.as_mut(), par);
        let (ma, mb) = (self.means(a), self.means(b));
        for j in 0..b.n_rows() {
            for i in 0..a.n_rows() {
                dst[(i, j)] += self.grand_mean - ma[i] - mb[j];
            }
        }
    }
    fn diag(&self, a: &R) -> Vec<f64> {
        let m = self.means(a);
        self.kernel.diag(a).iter().zip(m).map(|(d, m)| d - 2.0 * m + self.grand_mean).collect()
    }
}

fn zip_in_place(mut dst: MatMut<'_, f64>, src: MatRef<'_, f64>, f: impl Fn(f64, f64) -> f64) {
    for j in 0..dst.ncols() {
        for i in 0..dst.nrows() {
            dst[(i, j)] = f(dst[(i, j)], src[(i, j)]);
        }
    }
}

/// Training statistics of a centred Gram matrix, to centre test blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GramCentering {
    /// $\frac1n \sum_t K_{st}$ for every training sample `s`.
    pub train_means: Vec<f64>,
    /// $\frac1{n^2} \sum_{s,t} K_{st}$.
    pub grand_mean: f64,
}

/// Centres a training Gram `K` `(n, n)`: $\tilde K = H K H$ with
/// $H = I - \frac1n 1 1^\top$, and returns the statistics that centre test
/// blocks the same way.
///
/// # Panics
/// If `k` is not square.
#[track_caller]
pub fn center_gram(k: MatRef<'_, f64>) -> (Mat<f64>, GramCentering) {
    assert_eq!(k.nrows(), k.ncols(), "training Gram must be square");
    let n = k.nrows();
    let nf = n.max(1) as f64;
    let train_means: Vec<f64> = (0..n).map(|i| k.row(i).iter().sum::<f64>() / nf).collect();
    let grand_mean = train_means.iter().sum::<f64>() / nf;
    let c = Mat::from_fn(n, n, |i, j| k[(i, j)] - train_means[i] - train_means[j] + grand_mean);
    (c, GramCentering { train_means, grand_mean })
}

impl GramCentering {
    /// Centres a test x train block `K(test, train)` `(n_test, n)` with the
    /// training statistics: $\tilde K_{ij} = K_{ij} - \frac1n \sum_t K_{it} - m_j + \mu$.
    ///
    /// # Panics
    /// If `k_test_train` does not have one column per training sample.
    #[track_caller]
    pub fn center_block(&self, k_test_train: MatRef<'_, f64>) -> Mat<f64> {
        let n = self.train_means.len();
        assert_eq!(k_test_train.ncols(), n, "test block columns vs training samples");
        let row_means: Vec<f64> =
            (0..k_test_train.nrows()).map(|i| k_test_train.row(i).iter().sum::<f64>() / n.max(1) as f64).collect();
        Mat::from_fn(k_test_train.nrows(), n, |i, j| {
            k_test_train[(i, j)] - row_means[i] - self.train_means[j] + self.grand_mean
        })
    }

    /// Centred self-similarities of test rows, $k(x, x) - 2 \frac1n \sum_t k(x, x_t) + \mu$,
    /// from their raw values and their test x train block.
    ///
    /// # Panics
    /// If the shapes disagree.
    #[track_caller]
    pub fn center_diag(&self, diag: &[f64], k_test_train: MatRef<'_, f64>) -> Vec<f64> {
        let n = self.train_means.len();
        assert_eq!((k_test_train.nrows(), k_test_train.ncols()), (diag.len(), n), "test block shape");
        (0..diag.len())
            .map(|i| diag[i] - 2.0 * k_test_train.row(i).iter().sum::<f64>() / n.max(1) as f64 + self.grand_mean)
            .collect()
    }
}

/// Cosine-normalizes a block from the self-similarities of its rows and
/// columns: $K_{ij} / \sqrt{d^a_i d^b_j}$ (0 when either is 0). For a
/// training Gram pass its diagonal twice.
///
/// # Panics
/// If the lengths disagree with the block.
#[track_caller]
pub fn normalize_block(k: MatRef<'_, f64>, diag_rows: &[f64], diag_cols: &[f64]) -> Mat<f64> {
    assert_eq!((k.nrows(), k.ncols()), (diag_rows.len(), diag_cols.len()), "normalization shapes");
    Mat::from_fn(k.nrows(), k.ncols(), |i, j| cosine(k[(i, j)], diag_rows[i], diag_cols[j]))
}
