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
