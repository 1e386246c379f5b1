use std::ops::Range;

use faer::{Mat, MatMut, Par};

/// A set of rows (samples) a kernel can be evaluated on.
pub trait Rows: Clone + Send + Sync {
    /// Number of rows, `n_samples`.
    fn n_rows(&self) -> usize;

    /// Dimension of the ambient vector space (`n_features`, or `n_labels` for
    /// label sets), or `None` for containers that are not vectors. Estimators
    /// use it to reject test data of another width than the training data.
    fn feature_dim(&self) -> Option<usize> {
        None
    }

    /// The rows at `indices` (in that order, repeats allowed), as a new container.
    ///
    /// # Panics
    /// If an index is `>= n_rows()`.
    fn select(&self, indices: &[usize]) -> Self;

    /// The contiguous rows `range`, as a new container.
    ///
    /// # Panics
    /// If the range is out of bounds.
    fn slice(&self, range: Range<usize>) -> Self {
        let idx: Vec<usize> = range.collect();
        self.select(&idx)
    }
}

/// A positive semi-definite kernel $k(a, b)$ on the rows of a container `R`.
///
/// Implementors provide pointwise [`eval`](Kernel::eval) and a block method;
/// vector kernels override [`gram_block_into`](Kernel::gram_block_into) with a
/// GEMM-based computation.
pub trait Kernel<R: Rows>: Send + Sync {
    /// $k(a_i, b_j)$.
    ///
    /// # Panics
    /// If `i >= a.n_rows()` or `j >= b.n_rows()`.
    fn eval(&self, a: &R, i: usize, b: &R, j: usize) -> f64;

    /// Fills `dst` (`a.n_rows() x b.n_rows()`) with $k(a_i, b_j)$.
    ///
    /// The default evaluates pair by pair; vector kernels override it.
    ///
    /// # Panics
    /// If `dst` has the wrong shape.
    #[track_caller]
    fn gram_block_into(&self, a: &R, b: &R, mut dst: MatMut<'_, f64>, par: Par) {
        assert_eq!((dst.nrows(), dst.ncols()), (a.n_rows(), b.n_rows()), "gram block shape");
        let _ = par;
        for j in 0..b.n_rows() {
            for i in 0..a.n_rows() {
                dst[(i, j)] = self.eval(a, i, b, j);
            }
        }
    }

    /// The Gram block $K_{ij} = k(a_i, b_j)$ of shape `(a.n_rows(), b.n_rows())`.
    fn gram_block(&self, a: &R, b: &R) -> Mat<f64> {
        let mut out = Mat::zeros(a.n_rows(), b.n_rows());
        self.gram_block_into(a, b, out.as_mut(), Par::rayon(0));
        out
    }

    /// The symmetric Gram matrix $K_{ij} = k(a_i, a_j)$, exactly symmetric.
    fn gram(&self, a: &R) -> Mat<f64> {
        let mut k = self.gram_block(a, a);
        let n = k.nrows();
        for j in 0..n {
            for i in j + 1..n {
                let v = 0.5 * (k[(i, j)] + k[(j, i)]);
                k[(i, j)] = v;
                k[(j, i)] = v;
            }
        }
        k
    }

    /// The diagonal $k(a_i, a_i)$ for every row.
    fn diag(&self, a: &R) -> Vec<f64> {
        (0..a.n_rows()).map(|i| self.eval(a, i, a, i)).collect()
    }
}
