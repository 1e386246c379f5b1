//! Checks shared by every estimator, and pieces shared by estimators whose atoms are `p` directions of the output
//! RKHS given by an encoder over the distinct training outputs (reduced-rank
//! IOKR, KDE): prediction `C = K_x(x, X) M`, atom products `G K_y(outputs, c)`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_kernels::{Kernel, Rows};

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

/// `dst = K_x(x, X_train)^T`-side product: $C = K_x(x, X)\, M$ with `M` `(n, p)`.
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
    let mut k = Mat::zeros(x_train.n_rows(), x.n_rows());
    kx.gram_block_into(x_train, x, k.as_mut(), par);
    matmul(dst, Accum::Replace, k.transpose(), predict_map, 1.0, par);
    Ok(())
}

/// $G\, K_y(\text{outputs}, c)$ `(p, n_c)` with the encoder `G` `(p, n_outputs)`.
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
    let mut k = Mat::zeros(outputs.n_rows(), candidates.n_rows());
    ky.gram_block_into(outputs, candidates, k.as_mut(), par);
    matmul(dst, Accum::Replace, encoder, k.as_ref(), 1.0, par);
    Ok(())
}

/// Implements [`SurrogateModel`](crate::SurrogateModel) for a model whose
/// atoms are rows of an `encoder` `(r, n_distinct)` over its distinct training
/// `outputs`, with coefficients $C = K_x(x, X_{train})\,M$ for a stored map
/// `$map` `(n, r)` (reduced rank, KDE, trace norm). The fields `params`
/// (with `input_kernel` and `output_kernel`), `x_train`, `outputs` and
/// `encoder` are required; `atom_gram` is given as a closure of the model:
/// the identity for orthonormal atoms, $G K_y G^\top$ otherwise.
macro_rules! projected_surrogate_model {
    ($ty:ident, $map:ident, atom_gram = |$model:ident| $gram:expr) => {
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
                $crate::projection::check_width("input features", &self.x_train, x)
            }

            fn check_outputs(&self, y: &Y) -> $crate::Result<()> {
                $crate::projection::check_width("output dimension", &self.outputs, y)
            }

            /// $C = K_x(x, X_{train})\, M$: one Gram block and one `(n_test, n) x (n, r)` GEMM.
            fn coefficients_into(&self, x: &X, dst: faer::MatMut<'_, f64>, par: faer::Par) -> $crate::Result<()> {
                let map = self.$map.as_ref();
                $crate::projection::projected_coefficients_into(
                    &self.params.input_kernel,
                    &self.x_train,
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
