//! Kernel families. Every kernel here except [`Laplacian`](laplacian::Laplacian)
//! is a function of the inner product and the two squared norms, so one
//! generic pipeline serves them all: a tile of inner products (GEMM or sparse
//! product, see `crate::products`), then an elementwise transform while the
//! tile is in cache.

use faer::{MatMut, Par};

use crate::block::{TILE, for_each_tile, for_each_tile_sym};
use crate::products::VectorRows;

pub mod by_name;
pub mod gaussian;
pub mod laplacian;
pub mod linear;
pub mod polynomial;
pub mod spec;
pub mod tanimoto;

/// A kernel of the form $k(x, y) = \phi(\langle x, Wy\rangle, \|x\|_W^2, \|y\|_W^2)$.
pub(crate) trait DotKernel: Sync {
    /// `transform(dot, ..) == dot`: the transform pass is skipped.
    const IDENTITY: bool = false;

    /// Feature weights $W$ (identity when `None`).
    fn weights(&self) -> Option<&[f64]> {
        None
    }

    /// $\phi(\langle x, Wy\rangle, \|x\|_W^2, \|y\|_W^2)$.
    fn transform(&self, dot: f64, na: f64, nb: f64) -> f64;

    /// $k(x, x)$ from $\|x\|_W^2$ (written on the Gram diagonal exactly).
    fn self_value(&self, na: f64) -> f64;

    /// Pointwise evaluation (the reference the blocks are tested against).
    fn eval_pair<R: VectorRows>(&self, a: &R, i: usize, b: &R, j: usize) -> f64 {
        let w = self.weights();
        self.transform(R::pair_dot(a, i, b, j, w), R::pair_dot(a, i, a, i, w), R::pair_dot(b, j, b, j, w))
    }
}

/// Checks the contracts shared by all vector kernels.
#[track_caller]
pub(crate) fn check_dims<R: VectorRows>(a: &R, b: &R, w: Option<&[f64]>) {
    assert_eq!(a.dim(), b.dim(), "the two row sets have different numbers of features");
    if let Some(w) = w {
        assert_eq!(w.len(), a.dim(), "feature_weights length must equal n_features");
    }
}

/// The elementwise transform of a product tile, `tile[i, j] =
/// transform(tile[i, j], na[i], nb[j])`.
///
/// The loop runs under pulp's run-time dispatch so that it is compiled with
/// the widest vector extension the CPU has (AVX2 + FMA, else the SSE2
/// baseline). The transforms are written without `mul_add`, so every path
/// rounds identically; on AVX2 the Gaussian transform runs about 10x faster
/// than on SSE2 (it was more than half of a sparse Bibtex Gram).
#[inline(always)]
fn apply<K: DotKernel>(k: &K, tile: MatMut<'_, f64>, na: &[f64], nb: &[f64]) {
    if K::IDENTITY {
        return;
    }
    pulp::Arch::new().dispatch(Transform { k, tile, na, nb });
}

struct Transform<'a, 't, K> {
    k: &'a K,
    tile: MatMut<'t, f64>,
    na: &'a [f64],
    nb: &'a [f64],
}

impl<K: DotKernel> pulp::WithSimd for Transform<'_, '_, K> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self { k, mut tile, na, nb } = self;
        for (j, &nbj) in nb.iter().enumerate() {
            let col = tile.as_mut().col_mut(j).try_as_col_major_mut().expect("tiles have row stride 1").as_slice_mut();
            for (x, &nai) in col.iter_mut().zip(na) {
                *x = k.transform(*x, nai, nbj);
            }
        }
    }
}

#[track_caller]
pub(crate) fn dot_eval<K: DotKernel, R: VectorRows>(k: &K, a: &R, i: usize, b: &R, j: usize) -> f64 {
    check_dims(a, b, k.weights());
    k.eval_pair(a, i, b, j)
}

#[track_caller]
pub(crate) fn dot_block_into<K: DotKernel, R: VectorRows>(k: &K, a: &R, b: &R, dst: MatMut<'_, f64>, par: Par) {
    assert_eq!((dst.nrows(), dst.ncols()), (a.n_rows(), b.n_rows()), "gram block shape");
    check_dims(a, b, k.weights());
    if a.n_rows() == 0 || b.n_rows() == 0 {
        return;
    }
    let w = k.weights();
    let (na, nb) = (a.sq_norms(w), b.sq_norms(w));
    let prods = R::products(a, b, w);
    for_each_tile(dst, prods.tile_rows(), TILE, par, |rows, cols, mut tile, p, s| {
        prods.fill(rows.clone(), cols.clone(), tile.as_mut(), p, s);
        apply(k, tile, &na[rows], &nb[cols]);
    });
}

#[track_caller]
pub(crate) fn dot_gram_into<K: DotKernel, R: VectorRows>(k: &K, a: &R, mut dst: MatMut<'_, f64>, par: Par) {
    let n = a.n_rows();
    assert_eq!((dst.nrows(), dst.ncols()), (n, n), "gram shape");
    check_dims(a, a, k.weights());
    if n == 0 {
        return;
    }
    let w = k.weights();
    let na = a.sq_norms(w);
    let prods = R::products(a, a, w);
    for_each_tile_sym(dst.as_mut(), prods.tile_rows(), par, |rows, cols, mut tile, p, s| {
        prods.fill(rows.clone(), cols.clone(), tile.as_mut(), p, s);
        apply(k, tile, &na[rows], &na[cols]);
    });
    for (i, &nai) in na.iter().enumerate() {
        dst[(i, i)] = k.self_value(nai);
    }
}

pub(crate) fn dot_diag<K: DotKernel, R: VectorRows>(k: &K, a: &R) -> Vec<f64> {
    if let Some(w) = k.weights() {
        assert_eq!(w.len(), a.dim(), "feature_weights length must equal n_features");
    }
    a.sq_norms(k.weights()).into_iter().map(|na| k.self_value(na)).collect()
}

/// Implements [`Kernel`](crate::Kernel) for `DenseRows`, `CsrRows` and
/// `LabelSets` through the [`DotKernel`] pipeline.
macro_rules! impl_dot_kernel {
    ($ty:ty) => {
        impl_dot_kernel!(@one $ty, $crate::DenseRows);
        impl_dot_kernel!(@one $ty, $crate::CsrRows);
        impl_dot_kernel!(@one $ty, $crate::LabelSets);
    };
    (@one $ty:ty, $rows:ty) => {
        impl $crate::Kernel<$rows> for $ty {
            #[track_caller]
            fn eval(&self, a: &$rows, i: usize, b: &$rows, j: usize) -> f64 {
                $crate::kernels::dot_eval(self, a, i, b, j)
            }

            #[track_caller]
            fn gram_block_into(&self, a: &$rows, b: &$rows, dst: faer::MatMut<'_, f64>, par: faer::Par) {
                $crate::kernels::dot_block_into(self, a, b, dst, par)
            }

            #[track_caller]
            fn gram_into(&self, a: &$rows, dst: faer::MatMut<'_, f64>, par: faer::Par) {
                $crate::kernels::dot_gram_into(self, a, dst, par)
            }

            #[track_caller]
            fn diag(&self, a: &$rows) -> Vec<f64> {
                $crate::kernels::dot_diag(self, a)
            }
        }
    };
}
pub(crate) use impl_dot_kernel;

/// Checks that a scale parameter is finite and strictly positive.
pub(crate) fn check_positive(name: &'static str, value: f64) -> crate::Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(crate::Error::InvalidParameter { name, value, expected: "finite and > 0" })
    }
}

/// Formats a float for `Display` (shortest round-trip form).
pub(crate) struct Num(pub f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}
