//! The Laplacian kernel (L1 distance).

use std::fmt;

use faer::{MatMut, Par};
use serde::{Deserialize, Serialize};

use super::{Num, check_dims, check_positive};
use crate::block::{TILE, for_each_tile, for_each_tile_sym};
use crate::products::VectorRows;
use crate::{Error, Result, Rows};

/// The Laplacian kernel $k(x, y) = \exp(-\gamma \|x - y\|_1)$ with
/// $\|x - y\|_1 = \sum_f |x_f - y_f|$ (scikit-learn's `laplacian_kernel`).
///
/// The L1 distance is not GEMM-shaped. Dense blocks are computed tile by
/// tile, in parallel, by a packed register-blocked micro-kernel. Sparse rows
/// (and label sets) split features by frequency: frequent ones go through
/// the dense micro-kernel, the others through a sparse product over the
/// common support, using
/// $\|x - y\|_1 = \|x\|_1 + \|y\|_1 - \sum_{f:\, x_f y_f > 0} 2\min(|x_f|, |y_f|)$.
/// Pointwise [`eval`](crate::Kernel::eval) on sparse rows merges the two
/// index lists. On [`LabelSets`](crate::LabelSets) the distance is the size
/// of the symmetric difference.
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, Kernel, Laplacian};
/// let k = Laplacian::new(0.5)?;
/// let x = DenseRows::from_rows(&[vec![0.0, 1.0], vec![2.0, 0.0]])?;
/// assert!((k.gram(&x)[(0, 1)] - (-1.5f64).exp()).abs() < 1e-15);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "LaplacianRepr", into = "LaplacianRepr")]
pub struct Laplacian {
    gamma: f64,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LaplacianRepr {
    gamma: f64,
}

impl TryFrom<LaplacianRepr> for Laplacian {
    type Error = Error;
    fn try_from(r: LaplacianRepr) -> Result<Self> {
        Self::new(r.gamma)
    }
}

impl From<Laplacian> for LaplacianRepr {
    fn from(k: Laplacian) -> Self {
        Self { gamma: k.gamma }
    }
}

impl Laplacian {
    /// $k(x, y) = \exp(-\gamma \|x - y\|_1)$.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `gamma` is finite and `> 0`.
    pub fn new(gamma: f64) -> Result<Self> {
        Ok(Self { gamma: check_positive("gamma", gamma)? })
    }

    /// The scale $\gamma$ of the L1 distance.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    #[track_caller]
    fn block_into<R: VectorRows>(&self, a: &R, b: &R, dst: MatMut<'_, f64>, par: Par) {
        assert_eq!((dst.nrows(), dst.ncols()), (a.n_rows(), b.n_rows()), "gram block shape");
        check_dims(a, b, None);
        if a.n_rows() == 0 || b.n_rows() == 0 {
            return;
        }
        let dist = R::l1_distances(a, b);
        for_each_tile(dst, dist.tile_rows(), TILE, par, |rows, cols, mut tile, p, s| {
            dist.fill(rows, cols, tile.as_mut(), p, s);
            self.transform(tile);
        });
    }

    #[track_caller]
    fn gram_into_impl<R: VectorRows>(&self, a: &R, mut dst: MatMut<'_, f64>, par: Par) {
        let n = a.n_rows();
        assert_eq!((dst.nrows(), dst.ncols()), (n, n), "gram shape");
        if n == 0 {
            return;
        }
        let dist = R::l1_distances(a, a);
        for_each_tile_sym(dst.as_mut(), dist.tile_rows(), par, |rows, cols, mut tile, p, s| {
            dist.fill(rows, cols, tile.as_mut(), p, s);
            self.transform(tile);
        });
        for i in 0..n {
            dst[(i, i)] = 1.0;
        }
    }

    /// Distances to kernel values in place.
    fn transform(&self, mut tile: MatMut<'_, f64>) {
        for j in 0..tile.ncols() {
            let col = tile.as_mut().col_mut(j).try_as_col_major_mut().expect("tiles have row stride 1").as_slice_mut();
            col.iter_mut().for_each(|x| *x = crate::math::exp(-self.gamma * *x));
        }
    }
}

impl fmt::Display for Laplacian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "laplacian(gamma={})", Num(self.gamma))
    }
}

macro_rules! impl_laplacian {
    ($($rows:ty),*) => {$(
        impl crate::Kernel<$rows> for Laplacian {
            #[track_caller]
            fn eval(&self, a: &$rows, i: usize, b: &$rows, j: usize) -> f64 {
                check_dims(a, b, None);
                (-self.gamma * <$rows as VectorRows>::pair_l1(a, i, b, j)).exp()
            }

            #[track_caller]
            fn gram_block_into(&self, a: &$rows, b: &$rows, dst: MatMut<'_, f64>, par: Par) {
                self.block_into(a, b, dst, par)
            }

            #[track_caller]
            fn gram_into(&self, a: &$rows, dst: MatMut<'_, f64>, par: Par) {
                self.gram_into_impl(a, dst, par)
            }

            fn diag(&self, a: &$rows) -> Vec<f64> {
                vec![1.0; a.n_rows()]
            }
        }
    )*};
}

impl_laplacian!(crate::DenseRows, crate::CsrRows, crate::LabelSets);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrRows, DenseRows, Kernel, LabelSets};

    #[test]
    fn validates_and_displays() {
        assert!(Laplacian::new(0.0).is_err());
        assert!(Laplacian::new(f64::NEG_INFINITY).is_err());
        assert!(serde_json::from_str::<Laplacian>(r#"{"gamma":-2}"#).is_err());
        let k = Laplacian::new(0.25).unwrap();
        assert_eq!((k.gamma(), k.to_string()), (0.25, "laplacian(gamma=0.25)".to_string()));
    }

    #[test]
    fn sparse_dense_and_sets_agree() {
        let k = Laplacian::new(0.3).unwrap();
        let s = CsrRows::from_rows(4, vec![vec![(0, 1.0), (2, -2.0)], vec![(2, 3.0), (3, 1.0)], vec![]]).unwrap();
        let d = DenseRows::new(s.to_dense()).unwrap();
        let (gs, gd) = (k.gram(&s), k.gram(&d));
        for i in 0..3 {
            for j in 0..3 {
                assert!((gs[(i, j)] - gd[(i, j)]).abs() < 1e-14);
                assert!((gs[(i, j)] - k.eval(&s, i, &s, j)).abs() < 1e-14);
            }
        }
        assert!((gs[(0, 1)] - (-0.3f64 * 7.0).exp()).abs() < 1e-15);
        let y = LabelSets::new(3, vec![vec![0, 1], vec![1, 2]]).unwrap();
        assert!((k.gram_block(&y, &y)[(0, 1)] - (-0.6f64).exp()).abs() < 1e-15);
        assert_eq!(k.diag(&y), vec![1.0, 1.0]);
    }
}
