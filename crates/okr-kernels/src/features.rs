//! [`Features`]: input rows that are dense or sparse, as one container.
//!
//! Readers return whichever form the file has (dense ARFF and CSV rows are
//! dense, sparse ARFF, svmlight and XC rows sparse), and fitted models keep
//! whichever form they were trained on. With one container type an
//! estimator is generic over a single `X = Features`, so a model has one
//! type whatever its training file was.

use std::ops::Range;

use faer::{Mat, MatMut, Par};
use serde::{Deserialize, Serialize};

use crate::{CsrRows, DenseRows, Kernel, Result, Rows};

/// Input features: dense rows or compressed sparse rows, shape `(n_samples, n_features)`.
///
/// Every vector kernel of this crate and [`KernelSpec`](crate::KernelSpec)
/// works on `Features`, dispatching once per call, so blocks run the dense
/// GEMM or sparse product path unchanged. Two containers of
/// different forms are evaluated in the form of the first one (`a`): the
/// second is converted block by block, as the test rows against training
/// rows of a model are.
///
/// # Example
/// ```
/// use okr_kernels::{CsrRows, DenseRows, Features, Gaussian, Kernel, Rows};
/// let x = Features::Sparse(CsrRows::from_rows(3, vec![vec![(0, 1.0)], vec![(2, 2.0)]])?);
/// assert_eq!((x.n_rows(), x.n_features(), x.is_sparse()), (2, 3, true));
/// assert_eq!(x.to_dense()[(1, 2)], 2.0);
/// assert_eq!(x.select(&[1]).nnz(), 1);
/// // Dense test rows against sparse training rows: the same kernel values.
/// let t = Features::Dense(DenseRows::from_rows(&[vec![1.0, 0.0, 0.0]])?);
/// let k = Gaussian::new(0.5)?;
/// assert!((k.gram_block(&x, &t)[(0, 0)] - 1.0).abs() < 1e-15);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Features {
    /// Dense `(n_samples, n_features)` rows.
    Dense(DenseRows),
    /// Sparse rows in CSR form.
    Sparse(CsrRows),
}

impl Features {
    /// Number of features (columns).
    pub fn n_features(&self) -> usize {
        match self {
            Features::Dense(x) => x.n_features(),
            Features::Sparse(x) => x.n_features(),
        }
    }

    /// Whether the features are stored sparse.
    pub fn is_sparse(&self) -> bool {
        matches!(self, Features::Sparse(_))
    }

    /// Number of stored entries: `n_rows * n_features` for dense rows.
    pub fn nnz(&self) -> usize {
        match self {
            Features::Dense(x) => x.n_rows() * x.n_features(),
            Features::Sparse(x) => x.nnz(),
        }
    }

    /// The dense rows, if stored dense.
    pub fn as_dense(&self) -> Option<&DenseRows> {
        match self {
            Features::Dense(x) => Some(x),
            Features::Sparse(_) => None,
        }
    }

    /// The sparse rows, if stored sparse.
    pub fn as_sparse(&self) -> Option<&CsrRows> {
        match self {
            Features::Dense(_) => None,
            Features::Sparse(x) => Some(x),
        }
    }

    /// The dense `(n_samples, n_features)` matrix (a copy; densifies sparse rows).
    pub fn to_dense(&self) -> Mat<f64> {
        match self {
            Features::Dense(x) => x.as_mat().to_owned(),
            Features::Sparse(x) => x.to_dense(),
        }
    }

    /// The rows as [`DenseRows`] (a copy; densifies sparse rows).
    ///
    /// # Errors
    /// None in practice (the entries are finite by construction); the type
    /// keeps the container constructors' contract.
    pub fn to_dense_rows(&self) -> Result<DenseRows> {
        match self {
            Features::Dense(x) => Ok(x.clone()),
            Features::Sparse(x) => DenseRows::new(x.to_dense()),
        }
    }

    /// The rows as [`CsrRows`] (a copy; the nonzero entries of dense rows).
    ///
    /// # Errors
    /// As [`to_dense_rows`](Self::to_dense_rows).
    pub fn to_sparse_rows(&self) -> Result<CsrRows> {
        match self {
            Features::Dense(x) => CsrRows::from_dense(x.as_mat()),
            Features::Sparse(x) => Ok(x.clone()),
        }
    }

    /// The rows in CSR form: borrowed when stored sparse, else the nonzero
    /// entries of the dense rows (one copy of $\mathrm{nnz}$ entries). For
    /// models whose products run on sparse rows (LEML).
    ///
    /// # Errors
    /// As [`to_sparse_rows`](Self::to_sparse_rows).
    ///
    /// # Example
    /// ```
    /// use std::borrow::Cow;
    /// use okr_kernels::{DenseRows, Features};
    /// let x = Features::Dense(DenseRows::from_rows(&[vec![0.0, 2.0], vec![1.0, 0.0]])?);
    /// let s = x.sparse_rows()?;
    /// assert_eq!((s.nnz(), s.row(0)), (2, (&[1][..], &[2.0][..])));
    /// let sparse = Features::Sparse(s.into_owned());
    /// assert!(matches!(sparse.sparse_rows()?, Cow::Borrowed(_)));
    /// Ok::<(), okr_kernels::Error>(())
    /// ```
    pub fn sparse_rows(&self) -> Result<std::borrow::Cow<'_, CsrRows>> {
        use std::borrow::Cow;
        Ok(match self {
            Features::Sparse(x) => Cow::Borrowed(x),
            Features::Dense(x) => Cow::Owned(CsrRows::from_dense(x.as_mat())?),
        })
    }

    /// `other` in the same form as `self` (borrowed when it already is).
    fn like<'a>(&self, other: &'a Features) -> std::borrow::Cow<'a, Features> {
        use std::borrow::Cow;
        match (self, other) {
            (Features::Dense(_), Features::Sparse(s)) => {
                Cow::Owned(Features::Dense(DenseRows::new(s.to_dense()).expect("CSR values are finite")))
            }
            (Features::Sparse(_), Features::Dense(d)) => {
                Cow::Owned(Features::Sparse(CsrRows::from_dense(d.as_mat()).expect("dense rows are finite")))
            }
            _ => Cow::Borrowed(other),
        }
    }
}

impl Rows for Features {
    fn n_rows(&self) -> usize {
        match self {
            Features::Dense(x) => x.n_rows(),
            Features::Sparse(x) => x.n_rows(),
        }
    }

    fn feature_dim(&self) -> Option<usize> {
        Some(self.n_features())
    }

    fn select(&self, indices: &[usize]) -> Self {
        match self {
            Features::Dense(x) => Features::Dense(x.select(indices)),
            Features::Sparse(x) => Features::Sparse(x.select(indices)),
        }
    }

    fn group_duplicates(&self) -> (Self, Vec<usize>) {
        match self {
            Features::Dense(x) => {
                let (d, g) = x.group_duplicates();
                (Features::Dense(d), g)
            }
            Features::Sparse(x) => {
                let (d, g) = x.group_duplicates();
                (Features::Sparse(d), g)
            }
        }
    }

    fn slice(&self, range: Range<usize>) -> Self {
        match self {
            Features::Dense(x) => Features::Dense(x.slice(range)),
            Features::Sparse(x) => Features::Sparse(x.slice(range)),
        }
    }
}

impl From<DenseRows> for Features {
    fn from(x: DenseRows) -> Self {
        Features::Dense(x)
    }
}

impl From<CsrRows> for Features {
    fn from(x: CsrRows) -> Self {
        Features::Sparse(x)
    }
}

/// The vector kernels of this crate (and [`KernelSpec`](crate::KernelSpec))
/// on [`Features`]: one dispatch per call to the dense or sparse path. (A
/// blanket impl over `Kernel<DenseRows> + Kernel<CsrRows>` would overlap
/// with the combinators' impls for every container.)
macro_rules! features_kernel {
    ($($k:ty),*) => {$(
        impl Kernel<Features> for $k {
            #[track_caller]
            fn eval(&self, a: &Features, i: usize, b: &Features, j: usize) -> f64 {
                match (a, b) {
                    (Features::Dense(a), Features::Dense(b)) => self.eval(a, i, b, j),
                    (Features::Sparse(a), Features::Sparse(b)) => self.eval(a, i, b, j),
                    _ => self.eval(a, i, &a.like(&b.select(&[j])), 0),
                }
            }

            #[track_caller]
            fn gram_block_into(&self, a: &Features, b: &Features, dst: MatMut<'_, f64>, par: Par) {
                match (a, a.like(b).as_ref()) {
                    (Features::Dense(a), Features::Dense(b)) => self.gram_block_into(a, b, dst, par),
                    (Features::Sparse(a), Features::Sparse(b)) => self.gram_block_into(a, b, dst, par),
                    _ => unreachable!("converted to the form of a"),
                }
            }

            #[track_caller]
            fn gram_into(&self, a: &Features, dst: MatMut<'_, f64>, par: Par) {
                match a {
                    Features::Dense(a) => self.gram_into(a, dst, par),
                    Features::Sparse(a) => self.gram_into(a, dst, par),
                }
            }

            #[track_caller]
            fn diag(&self, a: &Features) -> Vec<f64> {
                match a {
                    Features::Dense(a) => self.diag(a),
                    Features::Sparse(a) => self.diag(a),
                }
            }
        }
    )*};
}

features_kernel!(
    crate::KernelSpec,
    crate::Linear,
    crate::Gaussian,
    crate::Laplacian,
    crate::Polynomial,
    crate::Tanimoto,
    crate::GaussianTanimoto
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gaussian, KernelSpec, Linear, Polynomial};

    fn pair() -> (Features, Features) {
        let d = DenseRows::from_rows(&[vec![1.0, 0.0, 2.0], vec![0.0, 0.0, 0.0], vec![-1.0, 3.0, 0.5]]).unwrap();
        let s = CsrRows::from_dense(d.as_mat()).unwrap();
        (Features::Dense(d), Features::Sparse(s))
    }

    /// The CSR view holds exactly the nonzero entries of the dense rows,
    /// and borrows rows stored sparse.
    #[test]
    fn sparse_rows_are_the_nonzeros() {
        let (d, s) = pair();
        let from_dense = d.sparse_rows().unwrap();
        assert!(matches!(from_dense, std::borrow::Cow::Owned(_)));
        let dense = d.to_dense();
        let mut nonzero = 0;
        for i in 0..dense.nrows() {
            let (idx, val) = from_dense.row(i);
            let want: Vec<(usize, f64)> =
                (0..dense.ncols()).filter(|&j| dense[(i, j)] != 0.0).map(|j| (j, dense[(i, j)])).collect();
            let got: Vec<(usize, f64)> = idx.iter().copied().zip(val.iter().copied()).collect();
            assert_eq!(got, want, "row {i}");
            nonzero += want.len();
        }
        assert_eq!((from_dense.nnz(), from_dense.n_features()), (nonzero, 3));
        match (&s, s.sparse_rows().unwrap()) {
            (Features::Sparse(inner), std::borrow::Cow::Borrowed(b)) => assert!(std::ptr::eq(inner, b)),
            _ => panic!("sparse rows are borrowed"),
        }
    }

    /// Each form, and both mixed orders, give the kernel of the dense rows.
    #[test]
    fn every_form_gives_the_same_kernel_values() {
        let (d, s) = pair();
        let specs: Vec<KernelSpec> =
            vec![Linear.into(), Gaussian::new(0.3).unwrap().into(), Polynomial::new(2, 1.0, 1.0).unwrap().into()];
        for k in specs {
            let want = k.gram(d.as_dense().unwrap());
            for (a, b) in [(&d, &d), (&s, &s), (&d, &s), (&s, &d)] {
                let got = k.gram_block(a, b);
                assert!((&got - &want).norm_max() < 1e-12, "{k}");
                assert!((k.eval(a, 2, b, 0) - want[(2, 0)]).abs() < 1e-12, "{k}");
            }
            assert!((k.gram(&s) - &want).norm_max() < 1e-12);
            assert_eq!(k.diag(&s).len(), 3);
        }
    }

    #[test]
    fn rows_delegate_to_the_stored_form() {
        let (d, s) = pair();
        let both = s.select(&[0, 1, 0]);
        let (distinct, groups) = both.group_duplicates();
        assert_eq!((distinct.n_rows(), groups), (2, vec![0, 1, 0]));
        assert!(distinct.is_sparse());
        assert_eq!(d.slice(1..3).to_dense(), s.slice(1..3).to_dense());
        assert_eq!(d.to_sparse_rows().unwrap(), *s.as_sparse().unwrap());
        assert_eq!(s.to_dense_rows().unwrap(), *d.as_dense().unwrap());
        assert_eq!((d.nnz(), s.nnz(), d.feature_dim()), (9, 5, Some(3)));
    }
}
