//! The matrix forward pass, the RKHS-norm penalties and the reverse-mode
//! gradients of a KAE (spec 1.3, 1.4.2), and the three last-layer "heads":
//! finite-dimensional by gradient, finite-dimensional by KRR (spec 1.5) and
//! infinite-dimensional (K2AE, Gram-only, spec 1.6).

use faer::{Mat, MatRef, Par};
use okr_linalg::{Cholesky, JitterPolicy};
use serde::{Deserialize, Serialize};

use super::LayerKernel;
use crate::Result;

/// A PSD operator $A_l$ stored for serde.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Operator(#[serde(with = "okr_linalg::serde_mat")] pub Mat<f64>);

/// One layer with its kernel resolved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Layer {
    pub kernel: LayerKernel,
    pub operator: Option<Operator>,
    pub lambda: f64,
}

impl Layer {
    /// $M A_l$ (or $M$ when $A_l = I$).
    pub fn apply_op(&self, m: Mat<f64>) -> Mat<f64> {
        match &self.operator {
            None => m,
            Some(a) => &m * &a.0,
        }
    }
}

/// Training representations and Gram matrices at given inner coefficients.
pub(crate) struct Pass {
    /// `codes[l - 1]` = $X^{(l)}$ for $l = 1..L-1$.
    pub codes: Vec<Mat<f64>>,
    /// `grams[l - 2]` = $K_l$ for $l = 2..L$ ($K_1$ is fixed and kept apart).
    pub grams: Vec<Mat<f64>>,
}

impl Pass {
    pub fn gram<'a>(&'a self, k1: MatRef<'a, f64>, l: usize) -> MatRef<'a, f64> {
        if l == 1 { k1 } else { self.grams[l - 2].as_ref() }
    }
    pub fn last_gram(&self) -> MatRef<'_, f64> {
        self.grams.last().expect("a KAE has at least two layers").as_ref()
    }
}

/// Forward pass over the inner layers: $X^{(l)} = K_l \Phi_l A_l$ and
/// $K_{l+1} = k_{l+1}(X^{(l)}, X^{(l)})$, for $l = 1..L-1$.
pub(crate) fn forward(k1: MatRef<'_, f64>, layers: &[Layer], inner: &[Mat<f64>]) -> Result<Pass> {
    let m = layers.len() - 1;
    debug_assert_eq!(inner.len(), m);
    let mut codes: Vec<Mat<f64>> = Vec::with_capacity(m);
    let mut grams: Vec<Mat<f64>> = Vec::with_capacity(m);
    for l in 0..m {
        let k = if l == 0 { k1 } else { grams[l - 1].as_ref() };
        let x = layers[l].apply_op(k * &inner[l]);
        grams.push(layers[l + 1].kernel.gram(x.as_ref())?);
        codes.push(x);
    }
    Ok(Pass { codes, grams })
}

/// $\sum_{l<L} \lambda_l \lVert f_l \rVert^2 = \sum_l \lambda_l \langle K_l, \Phi_l A_l \Phi_l^\top\rangle
/// = \sum_l \lambda_l \langle X^{(l)}, \Phi_l \rangle$.
pub(crate) fn inner_penalty(pass: &Pass, layers: &[Layer], inner: &[Mat<f64>]) -> f64 {
    inner
        .iter()
        .zip(&pass.codes)
        .zip(layers)
        .map(|((phi, x), layer)| layer.lambda * dot(x.as_ref(), phi.as_ref()))
        .sum()
}

/// Reverse mode over the inner layers, from $D_L = \partial J / \partial K_L$
/// (spec 1.4.2): returns $\partial J / \partial \Phi_l$ for $l = 1..L-1$
/// (the inner penalties included).
pub(crate) fn backward(
    k1: MatRef<'_, f64>,
    layers: &[Layer],
    inner: &[Mat<f64>],
    pass: &Pass,
    d_last: Mat<f64>,
) -> Result<Vec<Mat<f64>>> {
    let big_l = layers.len();
    let m = big_l - 1;
    let mut g = layers[big_l - 1].kernel.backward(pass.codes[m - 1].as_ref(), pass.last_gram(), d_last.as_ref())?;
    let mut grads = vec![Mat::<f64>::zeros(0, 0); m];
    for l in (1..=m).rev() {
        let layer = &layers[l - 1];
        let phi = &inner[l - 1];
        let k = pass.gram(k1, l);
        let lam = layer.lambda;
        let t = Mat::from_fn(g.nrows(), g.ncols(), |i, j| g[(i, j)] + 2.0 * lam * phi[(i, j)]);
        grads[l - 1] = layer.apply_op(k * &t);
        if l > 1 {
            let u = layer.apply_op(Mat::from_fn(g.nrows(), g.ncols(), |i, j| g[(i, j)] + lam * phi[(i, j)]));
            let d = &u * phi.transpose();
            g = layer.kernel.backward(pass.codes[l - 2].as_ref(), k, d.as_ref())?;
        }
    }
    Ok(grads)
}

/// Finite-dimensional last layer with coefficients $\Phi_L$:
/// returns $(\frac1n\lVert X - K_L\Phi_LA_L\rVert^2 + \lambda_L\lVert f_L\rVert^2,\ D_L,\ \partial J/\partial\Phi_L)$.
pub(crate) fn finite_head(
    target: MatRef<'_, f64>,
    k_last: MatRef<'_, f64>,
    phi: &Mat<f64>,
    layer: &Layer,
) -> (f64, Mat<f64>, Mat<f64>) {
    let n = target.nrows() as f64;
    let lam = layer.lambda;
    let xl = layer.apply_op(k_last * phi);
    let r = Mat::from_fn(xl.nrows(), xl.ncols(), |i, j| target[(i, j)] - xl[(i, j)]);
    let loss = dot(r.as_ref(), r.as_ref()) / n + lam * dot(xl.as_ref(), phi.as_ref());
    // G_L = -(2/n) R.
    let g = Mat::from_fn(r.nrows(), r.ncols(), |i, j| -2.0 / n * r[(i, j)]);
    let t = Mat::from_fn(g.nrows(), g.ncols(), |i, j| g[(i, j)] + 2.0 * lam * phi[(i, j)]);
    let grad = layer.apply_op(k_last * &t);
    let u = layer.apply_op(Mat::from_fn(g.nrows(), g.ncols(), |i, j| g[(i, j)] + lam * phi[(i, j)]));
    let d = &u * phi.transpose();
    (loss, d, grad)
}

/// The optimal finite-dimensional last layer (spec 1.5): solves
/// $K_L \Phi_L A_L + n\lambda_L \Phi_L = X$; with $A_L = I$,
/// $\Phi_L = (K_L + n\lambda_L I)^{-1} X$, otherwise column-wise in the
/// eigenbasis of $A_L$.
pub(crate) fn krr_last(k_last: MatRef<'_, f64>, target: MatRef<'_, f64>, layer: &Layer) -> Result<Mat<f64>> {
    let n = k_last.nrows();
    let nl = n as f64 * layer.lambda;
    let shifted = |a: f64| Mat::from_fn(n, n, |i, j| a * k_last[(i, j)] + if i == j { nl } else { 0.0 });
    let policy = JitterPolicy::with_lambda(layer.lambda);
    match &layer.operator {
        None => {
            let (chol, _) = Cholesky::factor(shifted(1.0).as_ref(), policy)?;
            Ok(chol.solve(target, Par::rayon(0)))
        }
        Some(a) => {
            let e = okr_linalg::eigh(a.0.as_ref())?;
            let q = e.vectors();
            let xq = target * q;
            let mut c = Mat::zeros(n, q.ncols());
            for (k, &ak) in e.values().iter().enumerate() {
                let (chol, _) = Cholesky::factor(shifted(ak.max(0.0)).as_ref(), policy)?;
                let col = chol.solve(xq.col(k).as_mat(), Par::rayon(0));
                c.col_mut(k).copy_from(col.col(0));
            }
            Ok(&c * q.transpose())
        }
    }
}

/// The infinite-dimensional last layer at its KRR optimum (spec 1.6.3):
/// with $W = K_L + n\lambda_L I$ and $N_L = W^{-1} K_{out} W^{-1}$,
/// the profiled head objective $\lambda_L \operatorname{tr}(K_{out}W^{-1})$ and
/// $D_L = -\lambda_L N_L$ (paper eq. 14; **not** the $+\lambda_L N_L$ of the
/// authors' code).
pub(crate) struct KernelHead {
    pub chol_w: Cholesky,
    /// $W^{-1} K_{out}$.
    pub w_inv_kout: Mat<f64>,
    /// $N_L$, exactly symmetric.
    pub n_l: Mat<f64>,
    /// $\lambda_L \operatorname{tr}(K_{out} W^{-1})$.
    pub value: f64,
}

pub(crate) fn kernel_head(k_last: MatRef<'_, f64>, k_out: MatRef<'_, f64>, lambda: f64) -> Result<KernelHead> {
    let n = k_last.nrows();
    let nl = n as f64 * lambda;
    let w = Mat::from_fn(n, n, |i, j| k_last[(i, j)] + if i == j { nl } else { 0.0 });
    let (chol_w, _) = Cholesky::factor_in_place(w, JitterPolicy::with_lambda(lambda), Par::rayon(0))?;
    let w_inv_kout = chol_w.solve(k_out, Par::rayon(0));
    let value = lambda * (0..n).map(|i| w_inv_kout[(i, i)]).sum::<f64>();
    let mut n_l = chol_w.solve(w_inv_kout.transpose(), Par::rayon(0));
    symmetrize(&mut n_l);
    Ok(KernelHead { chol_w, w_inv_kout, n_l, value })
}

/// The head objective with the infinite-dimensional $\varphi_{L,i}$ held
/// fixed at a previous KRR solution (Algorithm 1's stale $N_L$), where
/// $B = W_0^{-1}K_{out}$ and $N = N_L$ were computed at that solution:
/// $\frac1n[\operatorname{tr}K_{out} - 2\operatorname{tr}(K_L B) + \operatorname{tr}(K_L N K_L)] + \lambda_L\langle K_L, N\rangle$
/// and its derivative $D_L = \frac1n(-2B^\top + K_LN + NK_L) + \lambda_L N$.
/// At the refresh point it equals the profiled value and $D_L = -\lambda_L N_L$.
pub(crate) fn stale_kernel_head(
    k_last: MatRef<'_, f64>,
    k_out: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    n_l: MatRef<'_, f64>,
    lambda: f64,
) -> (f64, Mat<f64>) {
    let n = k_last.nrows();
    let nf = n as f64;
    let p = k_last * n_l;
    let tr_out: f64 = (0..n).map(|i| k_out[(i, i)]).sum();
    let value = (tr_out - 2.0 * dot(k_last, b.transpose()) + dot(p.as_ref(), k_last)) / nf + lambda * dot(k_last, n_l);
    let d = Mat::from_fn(n, n, |i, j| (-2.0 * b[(j, i)] + p[(i, j)] + p[(j, i)]) / nf + lambda * n_l[(i, j)]);
    (value, d)
}

/// Frobenius inner product $\langle A, B \rangle$.
pub(crate) fn dot(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let mut s = 0.0;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            s += a[(i, j)] * b[(i, j)];
        }
    }
    s
}

pub(crate) fn symmetrize(m: &mut Mat<f64>) {
    let n = m.nrows();
    for j in 0..n {
        for i in j + 1..n {
            let v = 0.5 * (m[(i, j)] + m[(j, i)]);
            m[(i, j)] = v;
            m[(j, i)] = v;
        }
    }
}
