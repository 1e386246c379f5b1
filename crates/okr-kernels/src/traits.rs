use std::ops::Range;

use faer::{Mat, MatMut, Par};

/// A set of rows (samples) a kernel can be evaluated on.
///
/// # Example
/// ```
/// use okr_kernels::{LabelSets, Rows};
/// let y = LabelSets::new(3, vec![vec![0], vec![1, 2], vec![]])?;
/// assert_eq!(y.n_rows(), 3);
/// assert_eq!(y.select(&[2, 0]).set(1), &[0]);
/// assert_eq!(y.slice(1..3).set(0), &[1, 2]);
/// Ok::<(), okr_kernels::Error>(())
/// ```
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

    /// Groups identical rows: the distinct rows in first-occurrence order,
    /// and for every row the index of its group. The default treats every row
    /// as distinct (always correct, no saving); containers whose rows repeat
    /// in practice (dense and sparse features, label sets) override it. Estimators use it to keep one
    /// atom per distinct training output.
    fn group_duplicates(&self) -> (Self, Vec<usize>) {
        (self.clone(), (0..self.n_rows()).collect())
    }

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
/// the kernels of this crate override [`gram_block_into`](Kernel::gram_block_into),
/// [`gram_into`](Kernel::gram_into) and [`diag`](Kernel::diag) with tiled
/// GEMM / sparse-product computations.
///
/// **Parallelism.** The `_into` methods take a [`Par`]: with
/// [`Par::Rayon`] the tiles of the block are filled in parallel on the
/// current rayon pool (the thread count inside `Par::Rayon` is not enforced;
/// install a pool to bound it); [`Par::Seq`] computes on the calling thread.
/// The allocating methods use [`faer::get_global_parallelism`], so
/// `faer::set_global_parallelism(Par::Seq)` makes them sequential.
///
/// # Panics
/// Besides the shape checks of each method, the vector kernels of this crate
/// panic (a programmer contract, checked once per call) when the two row
/// sets have different numbers of features (labels for
/// [`LabelSets`](crate::LabelSets)), or when a
/// [`Gaussian`](crate::Gaussian)'s feature weights have another length.
///
/// # Example
/// ```
/// use faer::{Mat, Par};
/// use okr_kernels::{DenseRows, Gaussian, Kernel};
/// let train = DenseRows::from_rows(&[vec![0.0, 1.0], vec![1.0, 1.0], vec![2.0, 0.0]])?;
/// let test = DenseRows::from_rows(&[vec![0.5, 0.5]])?;
/// let k = Gaussian::new(0.5)?;
/// let gram = k.gram(&train); // (3, 3)
/// let mut cross = Mat::zeros(1, 3);
/// k.gram_block_into(&test, &train, cross.as_mut(), Par::Seq); // (1, 3)
/// assert_eq!(gram[(1, 2)], gram[(2, 1)]);
/// assert_eq!(k.diag(&train), vec![1.0; 3]);
/// assert!((cross[(0, 0)] - k.eval(&test, 0, &train, 0)).abs() < 1e-15);
/// Ok::<(), okr_kernels::Error>(())
/// ```
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

    /// The Gram block $K_{ij} = k(a_i, b_j)$ of shape `(a.n_rows(), b.n_rows())`,
    /// computed with faer's global parallelism ([`faer::get_global_parallelism`]).
    fn gram_block(&self, a: &R, b: &R) -> Mat<f64> {
        let mut out = Mat::zeros(a.n_rows(), b.n_rows());
        self.gram_block_into(a, b, out.as_mut(), faer::get_global_parallelism());
        out
    }

    /// Fills the square `dst` (`a.n_rows() x a.n_rows()`) with the Gram matrix
    /// $K_{ij} = k(a_i, a_j)$, exactly symmetric.
    ///
    /// The default computes the full block and copies the lower triangle onto
    /// the upper one; vector kernels override it to compute only the tiles on
    /// and below the diagonal.
    ///
    /// # Panics
    /// If `dst` has the wrong shape.
    #[track_caller]
    fn gram_into(&self, a: &R, mut dst: MatMut<'_, f64>, par: Par) {
        self.gram_block_into(a, a, dst.as_mut(), par);
        let n = dst.nrows();
        for j in 0..n {
            for i in j + 1..n {
                dst[(j, i)] = dst[(i, j)];
            }
        }
    }

    /// The symmetric Gram matrix $K_{ij} = k(a_i, a_j)$, exactly symmetric,
    /// computed with faer's global parallelism.
    fn gram(&self, a: &R) -> Mat<f64> {
        let mut k = Mat::zeros(a.n_rows(), a.n_rows());
        self.gram_into(a, k.as_mut(), faer::get_global_parallelism());
        k
    }

    /// The diagonal $k(a_i, a_i)$ for every row.
    fn diag(&self, a: &R) -> Vec<f64> {
        (0..a.n_rows()).map(|i| self.eval(a, i, a, i)).collect()
    }
}
