//! Checks shared by every estimator, and pieces shared by estimators whose atoms are `p` directions of the output
//! RKHS given by an encoder over the distinct training outputs (reduced-rank
//! IOKR, KDE): prediction `C = K_x(x, X) M`, atom products `G K_y(outputs, c)`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_kernels::{Kernel, Rows};

use crate::sketch::tile_rows;
use crate::{Error, Result};

/// Checks a training pair: at least one sample and one output per input.
/// Returns `n_samples`.
pub(crate) fn check_training_set<X: Rows, Y: Rows>(x: &X, y: &Y) -> Result<usize> {
    let n = x.n_rows();
    if n == 0 {
        return Err(Error::Empty { what: "training set" });
    }
    if y.n_rows() != n {
        return Err(Error::ShapeMismatch { what: "number of training outputs", expected: n, got: y.n_rows() });
    }
    Ok(n)
}

/// Rejects `other` when its width differs from the training container's.
pub(crate) fn check_width<R: Rows>(what: &'static str, train: &R, other: &R) -> Result<()> {
    match (train.feature_dim(), other.feature_dim()) {
        (Some(a), Some(b)) if a != b => Err(Error::ShapeMismatch { what, expected: a, got: b }),
        _ => Ok(()),
    }
}

/// $C = K_x(x, X)\, M$ with `M` `(n, p)`, in tiles of test rows so that the
/// Gram temporary stays within 64 MiB (`sketch::tile_rows`)
/// whatever the number of test rows.
pub(crate) fn projected_coefficients_into<X: Rows, KX: Kernel<X>>(
    kx: &KX,
    x_train: &X,
    x: &X,
    predict_map: MatRef<'_, f64>,
    dst: MatMut<'_, f64>,
    par: Par,
) -> Result<()> {
    check_width("input features", x_train, x)?;
    assert_eq!((dst.nrows(), dst.ncols()), (x.n_rows(), predict_map.ncols()), "coefficient block shape");
    coefficients_in_tiles(kx, x_train, x, predict_map, dst, par, tile_rows(x_train.n_rows(), x.n_rows()));
    Ok(())
}

fn coefficients_in_tiles<X: Rows, KX: Kernel<X>>(
    kx: &KX,
    x_train: &X,
    x: &X,
    predict_map: MatRef<'_, f64>,
    mut dst: MatMut<'_, f64>,
    par: Par,
    tile: usize,
) {
    let (n, n_te) = (x_train.n_rows(), x.n_rows());
    let mut k = Mat::zeros(n, tile);
    for start in (0..n_te).step_by(tile) {
        let t = tile.min(n_te - start);
        let mut kt = k.as_mut().subcols_mut(0, t);
        kx.gram_block_into(x_train, &x.slice(start..start + t), kt.as_mut(), par);
        matmul(dst.as_mut().subrows_mut(start, t), Accum::Replace, kt.as_ref().transpose(), predict_map, 1.0, par);
    }
}

/// $G\, K_y(\text{outputs}, c)$ `(p, n_c)` with the encoder `G` `(p, n_outputs)`,
/// in tiles of candidates (bounded Gram temporary, as above).
pub(crate) fn projected_atom_products_into<Y: Rows, KY: Kernel<Y>>(
    ky: &KY,
    outputs: &Y,
    candidates: &Y,
    encoder: MatRef<'_, f64>,
    dst: MatMut<'_, f64>,
    par: Par,
) -> Result<()> {
    check_width("output dimension", outputs, candidates)?;
    assert_eq!((dst.nrows(), dst.ncols()), (encoder.nrows(), candidates.n_rows()), "atom products shape");
    atom_products_in_tiles(
        ky,
        outputs,
        candidates,
        encoder,
        dst,
        par,
        tile_rows(outputs.n_rows(), candidates.n_rows()),
    );
    Ok(())
}

fn atom_products_in_tiles<Y: Rows, KY: Kernel<Y>>(
    ky: &KY,
    outputs: &Y,
    candidates: &Y,
    encoder: MatRef<'_, f64>,
    mut dst: MatMut<'_, f64>,
    par: Par,
    tile: usize,
) {
    let (n, n_c) = (outputs.n_rows(), candidates.n_rows());
    let mut k = Mat::zeros(n, tile);
    for start in (0..n_c).step_by(tile) {
        let t = tile.min(n_c - start);
        let mut kt = k.as_mut().subcols_mut(0, t);
        ky.gram_block_into(outputs, &candidates.slice(start..start + t), kt.as_mut(), par);
        matmul(dst.as_mut().subcols_mut(start, t), Accum::Replace, encoder, kt.as_ref(), 1.0, par);
    }
}

/// Implements [`SurrogateModel`](crate::SurrogateModel) for a model whose
/// atoms are rows of an `encoder` `(r, n_distinct)` over its distinct training
/// `outputs`, with coefficients $C = K_x(x, X_{train})\,M$ for a stored map
/// `$map` `(n, r)` (reduced rank, KDE, trace norm; Nystroem reduced rank with
/// `inputs = anchors`). The fields `params` (with `input_kernel` and
/// `output_kernel`), the input rows (`x_train` unless `inputs = ...`), `outputs` and
/// `encoder` are required; `atom_gram` is given as a closure of the model:
/// the identity for orthonormal atoms, $G K_y G^\top$ otherwise.
macro_rules! projected_surrogate_model {
    ($ty:ident, $map:ident, atom_gram = |$model:ident| $gram:expr) => {
        $crate::projection::projected_surrogate_model!($ty, $map, inputs = x_train, atom_gram = |$model| $gram);
    };
    ($ty:ident, $map:ident, inputs = $inputs:ident, atom_gram = |$model:ident| $gram:expr) => {
        impl<X, Y, KX, KY> $crate::SurrogateModel<X, Y> for $ty<X, Y, KX, KY>
        where
            X: okr_kernels::Rows,
            Y: okr_kernels::Rows,
            KX: okr_kernels::Kernel<X>,
            KY: okr_kernels::Kernel<Y>,
        {
            fn n_atoms(&self) -> usize {
                self.encoder.nrows()
            }

            fn check_inputs(&self, x: &X) -> $crate::Result<()> {
                $crate::projection::check_width("input features", &self.$inputs, x)
            }

            fn check_outputs(&self, y: &Y) -> $crate::Result<()> {
                $crate::projection::check_width("output dimension", &self.outputs, y)
            }

            /// $C = K_x(x, X_{train})\, M$: one Gram block and one `(n_test, n) x (n, r)` GEMM.
            fn coefficients_into(&self, x: &X, dst: faer::MatMut<'_, f64>, par: faer::Par) -> $crate::Result<()> {
                let map = self.$map.as_ref();
                $crate::projection::projected_coefficients_into(
                    &self.params.input_kernel,
                    &self.$inputs,
                    x,
                    map,
                    dst,
                    par,
                )
            }

            /// $G\, K_y(\text{distinct outputs}, c)$ `(r, n_c)`: the atoms' products with the candidates.
            fn atom_products_into(
                &self,
                candidates: &Y,
                dst: faer::MatMut<'_, f64>,
                par: faer::Par,
            ) -> $crate::Result<()> {
                let enc = self.encoder.as_ref();
                let ky = &self.params.output_kernel;
                $crate::projection::projected_atom_products_into(ky, &self.outputs, candidates, enc, dst, par)
            }

            fn output_sq_norms(&self, y: &Y) -> Vec<f64> {
                okr_kernels::Kernel::diag(&self.params.output_kernel, y)
            }

            fn atom_gram(&self) -> faer::Mat<f64> {
                let $model = self;
                $gram
            }
        }
    };
}
pub(crate) use projected_surrogate_model;

#[cfg(test)]
mod tests {
    use super::*;
    use okr_kernels::{DenseRows, Gaussian};

    fn rows(n: usize, d: usize, seed: usize) -> DenseRows {
        DenseRows::new(Mat::from_fn(n, d, |i, j| (((i * 7 + j * 3 + seed) % 11) as f64) / 11.0)).unwrap()
    }

    /// Every tile size, including ones that do not divide the row count,
    /// gives the one-block product.
    #[test]
    fn tiles_equal_one_block() {
        let k = Gaussian::new(0.7).unwrap();
        let (train, test) = (rows(9, 3, 1), rows(10, 3, 2));
        let map = Mat::from_fn(9, 4, |i, j| (i as f64 - 2.0 * j as f64) / 5.0);
        let enc = Mat::from_fn(4, 9, |i, j| (i * j) as f64 / 7.0 - 0.5);
        let full_c = k.gram_block(&test, &train) * &map;
        let full_g = &enc * k.gram_block(&train, &test);
        for tile in [1, 3, 4, 10] {
            let mut c = Mat::zeros(10, 4);
            coefficients_in_tiles(&k, &train, &test, map.as_ref(), c.as_mut(), Par::Seq, tile);
            assert!((&c - &full_c).norm_max() < 1e-13, "coefficients, tile {tile}");
            let mut g = Mat::zeros(4, 10);
            atom_products_in_tiles(&k, &train, &test, enc.as_ref(), g.as_mut(), Par::Seq, tile);
            assert!((&g - &full_g).norm_max() < 1e-13, "atom products, tile {tile}");
        }
    }
}
