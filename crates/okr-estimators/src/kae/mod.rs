//! Kernel autoencoders (Laforgue, Clémençon and d'Alché-Buc, AISTATS 2019):
//! the finite-dimensional [`Kae`] and the Gram-only [`K2ae`].
//!
//! A KAE is $f_L \circ \dots \circ f_1$ with $f_l$ in the vv-RKHS of the
//! decomposable kernel $k_l(x, x') A_l$. By the representer theorem
//! $f_l = \sum_i k_l(\cdot, x_i^{(l-1)}) A_l \varphi_{l,i}$, so with
//! $\Phi_l$ `(n, d_l)` the training representations follow the matrix
//! forward pass $X^{(l)} = K_l \Phi_l A_l$, $K_l = k_l(X^{(l-1)}, X^{(l-1)})$,
//! and the objective is
//! $$J = \frac1n \lVert X - X^{(L)} \rVert_F^2 + \sum_l \lambda_l \langle K_l, \Phi_l A_l \Phi_l^\top \rangle_F.$$
//! Gradients are computed in reverse mode (spec 1.4.2), $O(L n^2 d)$ per step.
//!
//! The **K2AE** sees its inputs only through a Gram matrix $K_{in}$: the last
//! layer maps into the input RKHS and is solved by KRR, so the objective is
//! profiled to $\lambda_L \operatorname{tr}(K_{in} (K_L + n\lambda_L I)^{-1})$
//! plus the inner penalties, with $\partial J/\partial K_L = -\lambda_L N_L$,
//! $N_L = W^{-1} K_{in} W^{-1}$ (paper eq. 14; the authors' code has the
//! opposite sign, which is wrong). New points are encoded from their cross
//! Gram with the training inputs, and their reconstruction error is
//! computed from Grams only (spec 1.6.6).
//!
//! With linear kernels, identity operators and no penalty, the optimal
//! 2-layer code is the kernel PCA map $U_p \Sigma_p^{1/2}$ ([`Kpca`] gives
//! $U_p \Sigma_p$; spec 2.2).
//!
//! # Example
//! ```
//! use faer::Mat;
//! use okr_estimators::kae::{K2ae, LayerKernel};
//! // 20 points on a noisy circle; linear input Gram.
//! let x = Mat::from_fn(20, 2, |i, j| {
//!     let t = i as f64 * 0.31;
//!     if j == 0 { t.cos() } else { t.sin() + 0.01 * i as f64 }
//! });
//! let k_in = &x * x.transpose();
//! let model = K2ae::params()
//!     .hidden_dims(vec![1])
//!     .kernels(vec![LayerKernel::Linear, LayerKernel::GaussianMedian])
//!     .max_iter(50)
//!     .fit_k2ae_gram(k_in.as_ref())?;
//! let codes = model.encode(k_in.as_ref(), None)?; // (20, 1)
//! assert_eq!((codes.nrows(), codes.ncols()), (20, 1));
//! Ok::<(), okr_estimators::Error>(())
//! ```

mod by_name;
mod fit;
mod history;
mod kernel;
mod kpca;
mod network;
mod params;
mod validate;

use faer::{Mat, MatRef, Par};
use okr_kernels::{Kernel, Rows};
use okr_linalg::Cholesky;
use serde::{Deserialize, Serialize};

pub use fit::{StopReason, TrainInfo};
pub use history::KaeSnapshot;
pub use kernel::LayerKernel;
pub use kpca::Kpca;
pub use params::{KaeParams, KaeValidParams, LastLayer, MAX_LAYERS, Optimizer};

use network::Layer;

use crate::{Error, ParamGuard, Result};

/// A fitted finite-dimensional kernel autoencoder on `(n_samples, n_features)` inputs.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::kae::{Kae, LayerKernel};
/// let x = Mat::from_fn(30, 3, |i, j| ((i * 7 + j * 11) % 13) as f64 / 13.0);
/// let model = Kae::params()
///     .hidden_dims(vec![2])
///     .kernels(vec![LayerKernel::GaussianMedian])
///     .lambdas(vec![1e-4])
///     .max_iter(100)
///     .fit(x.as_ref())?;
/// let code = model.encode(x.as_ref())?; // (30, 2)
/// let rec = model.reconstruct(x.as_ref())?; // (30, 3)
/// assert_eq!((code.ncols(), rec.ncols()), (2, 3));
/// let hist = &model.train_info().objective_history;
/// assert!(hist.last().unwrap() < &hist[0]);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kae {
    layers: Vec<Layer>,
    #[serde(with = "mat_vec")]
    phis: Vec<Mat<f64>>,
    #[serde(with = "okr_linalg::serde_mat")]
    x_train: Mat<f64>,
    #[serde(with = "mat_vec")]
    codes: Vec<Mat<f64>>,
    code_layer: usize,
    info: TrainInfo,
    /// The optimizer's state, to continue the fit exactly ([`KaeValidParams::fit_from`]);
    /// not written to model files.
    #[serde(skip)]
    state: Option<fit::TrainState>,
}

impl Kae {
    /// Default parameters (see [`KaeParams`]).
    pub fn params() -> KaeParams {
        KaeParams::default()
    }
}

impl KaeParams {
    /// Checks the parameters and fits a finite KAE on `x` `(n_samples, n_features)`.
    ///
    /// # Errors
    /// As [`KaeValidParams::fit`], and invalid parameters.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<Kae> {
        self.check_ref()?.fit(x)
    }
    /// Checks the parameters and fits a K2AE on the input Gram `k_in`.
    ///
    /// # Errors
    /// As [`KaeValidParams::fit_k2ae_gram`], and invalid parameters.
    pub fn fit_k2ae_gram(&self, k_in: MatRef<'_, f64>) -> Result<K2ae> {
        self.check_ref()?.fit_k2ae_gram(k_in)
    }
    /// Checks the parameters and continues the finite KAE `previous` on `x`.
    ///
    /// # Errors
    /// As [`KaeValidParams::fit_from`], and invalid parameters.
    pub fn fit_from(&self, previous: &Kae, x: MatRef<'_, f64>) -> Result<Kae> {
        self.check_ref()?.fit_from(previous, x)
    }
}

fn check_finite(what: &'static str, m: MatRef<'_, f64>) -> Result<()> {
    if m.nrows() == 0 {
        return Err(Error::Empty { what });
    }
    if m.col_iter().any(|c| c.iter().any(|v| !v.is_finite())) {
        return Err(Error::InvalidParameter {
            name: what,
            value: "NaN or inf entries".into(),
            expected: "finite values",
        });
    }
    Ok(())
}

/// A continued fit keeps the inner widths of the model it continues.
fn check_same_widths(codes: &[Mat<f64>], hidden_dims: &[usize]) -> Result<()> {
    for (c, &w) in codes.iter().zip(hidden_dims) {
        if c.ncols() != w {
            return Err(Error::ShapeMismatch { what: "inner width of a continued fit", expected: c.ncols(), got: w });
        }
    }
    Ok(())
}

/// Inner widths above `max(n_samples, n_features)` add no expressiveness
/// (codes are `K Phi A` with `K` of rank `<= n`) and only cost memory.
fn check_widths(params: &KaeValidParams, n: usize, d: usize) -> Result<()> {
    let bound = n.max(d);
    match params.hidden_dims.iter().find(|&&w| w > bound) {
        Some(&w) => Err(Error::InvalidParameter {
            name: "hidden_dims",
            value: format!("width {w} (> {bound} = max(n_samples = {n}, n_features = {d}))"),
            expected: "every width at most max(samples, features)",
        }),
        None => Ok(()),
    }
}

impl KaeValidParams {
    /// Fits a finite KAE on `x` `(n_samples, n_features)`.
    ///
    /// # Errors
    /// [`Error::Empty`] / [`Error::InvalidParameter`] for empty or non-finite
    /// data; [`Error::Linalg`] when the KRR system does not factor; an
    /// [`Error::InvalidParameter`] naming the optimizer when the objective diverges.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<Kae> {
        self.fit_with_progress(x, &mut |_, _| {})
    }

    /// As [`fit`](Self::fit), calling `progress(step, objective)` at every step.
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    pub fn fit_with_progress(&self, x: MatRef<'_, f64>, progress: &mut dyn FnMut(usize, f64)) -> Result<Kae> {
        Ok(self.fit_recording(x, progress, &[])?.0)
    }

    /// Fits a K2AE on the input Gram $K_{in}$ `(n, n)` (the target Gram is
    /// $K_{in}$ too).
    ///
    /// # Errors
    /// As [`fit_k2ae_gram_with_output`](Self::fit_k2ae_gram_with_output).
    pub fn fit_k2ae_gram(&self, k_in: MatRef<'_, f64>) -> Result<K2ae> {
        self.fit_k2ae_gram_with_output(k_in, k_in, &mut |_, _| {})
    }

    /// Fits a K2AE whose first layer sees $K_{in}$ and whose last layer
    /// reconstructs targets with Gram $K_{out}$ (the authors' `G_out`; for
    /// explicit target vectors $Y$, $K_{out} = YY^\top$ and the KRR
    /// reconstruction is explicit, see [`K2ae::reconstruction_weights`]).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for non-square or mismatched Grams;
    /// [`Error::InvalidParameter`] for non-finite entries, a gradient-trained
    /// last layer or an operator on layer $L$ (the K2AE has $A_L = I$);
    /// [`Error::Linalg`] when $K_L + n\lambda_L I$ does not factor.
    pub fn fit_k2ae_gram_with_output(
        &self,
        k_in: MatRef<'_, f64>,
        k_out: MatRef<'_, f64>,
        progress: &mut dyn FnMut(usize, f64),
    ) -> Result<K2ae> {
        self.fit_k2ae_impl(k_in, k_out, None, progress)
    }

    /// Continues the K2AE `previous` on the same input Gram for `max_iter`
    /// more steps, as [`fit_from`](Self::fit_from) does for the finite KAE
    /// (its resolved kernels and coefficients, and Adam's state when it was
    /// fitted in this process).
    ///
    /// # Errors
    /// As [`fit_k2ae_gram`](Self::fit_k2ae_gram); [`Error::ShapeMismatch`]
    /// for another number of samples, layers or inner widths.
    pub fn fit_k2ae_gram_from(&self, previous: &K2ae, k_in: MatRef<'_, f64>) -> Result<K2ae> {
        self.fit_k2ae_impl(k_in, k_in, Some(previous), &mut |_, _| {})
    }

    /// As [`fit_k2ae_gram_from`](Self::fit_k2ae_gram_from) on rows with a
    /// kernel (see [`fit_k2ae_rows`](Self::fit_k2ae_rows)).
    ///
    /// # Errors
    /// As [`fit_k2ae_gram_from`](Self::fit_k2ae_gram_from).
    pub fn fit_k2ae_rows_from<R: Rows, K: Kernel<R>>(
        &self,
        previous: &K2aeOnRows<R, K>,
        kernel: K,
        x: &R,
    ) -> Result<K2aeOnRows<R, K>> {
        let k_in = kernel.gram(x);
        let model = self.fit_k2ae_impl(k_in.as_ref(), k_in.as_ref(), Some(&previous.model), &mut |_, _| {})?;
        Ok(K2aeOnRows { model, kernel, x_train: x.clone() })
    }

    fn fit_k2ae_impl(
        &self,
        k_in: MatRef<'_, f64>,
        k_out: MatRef<'_, f64>,
        previous: Option<&K2ae>,
        progress: &mut dyn FnMut(usize, f64),
    ) -> Result<K2ae> {
        let n = k_in.nrows();
        check_finite("input Gram", k_in)?;
        check_finite("output Gram", k_out)?;
        check_widths(self, n, n)?;
        for (what, m) in [("input Gram columns", k_in), ("output Gram rows", k_out), ("output Gram columns", k_out)] {
            let got = if what.ends_with("rows") { m.nrows() } else { m.ncols() };
            if got != n {
                return Err(Error::ShapeMismatch { what, expected: n, got });
            }
        }
        if self.last_layer != LastLayer::Krr {
            return Err(Error::InvalidParameter {
                name: "last_layer",
                value: "gradient".into(),
                expected: "krr (the K2AE's last layer maps into the input RKHS and is always the KRR)",
            });
        }
        if self.operators.iter().any(|(l, _)| *l == self.n_layers()) {
            return Err(Error::InvalidParameter {
                name: "operator",
                value: format!("layer {}", self.n_layers()),
                expected: "no operator on the last layer of a K2AE (A_L = I)",
            });
        }
        let diag: Vec<f64> = (0..n).map(|i| k_in[(i, i)]).collect();
        let (k1, layers, mut theta, resume) = match previous {
            None => {
                let first = resolve_on_gram(self.kernel(1), k_in, &diag);
                let k1 = gram_from_inner_products(first, k_in, &diag, &diag)?;
                let (layers, theta) = fit::initialize(k1.as_ref(), first, self, None)?;
                (k1, layers, theta, None)
            }
            Some(prev) => {
                for (what, expected, got) in [
                    ("training samples of a continued fit", prev.n_samples(), n),
                    ("layers of a continued fit", prev.layers.len(), self.n_layers()),
                ] {
                    if expected != got {
                        return Err(Error::ShapeMismatch { what, expected, got });
                    }
                }
                check_same_widths(&prev.codes, &self.hidden_dims)?;
                let mut layers = prev.layers.clone();
                for (l, layer) in layers.iter_mut().enumerate() {
                    layer.lambda = self.lambda(l + 1);
                }
                let k1 = gram_from_inner_products(layers[0].kernel, k_in, &diag, &diag)?;
                let resume = fit::Resume::after(&prev.info, prev.state.as_ref());
                (k1, layers, prev.phis.clone(), Some(resume))
            }
        };
        let mut problem = fit::Problem { k1: k1.as_ref(), layers, head: fit::Head::Kernel { k_out, stale: None } };
        let (mut info, state) = fit::train(&mut problem, &mut theta, self, resume, progress, &mut |_, _| {})?;
        let (value, _, pass) = problem.value_and_grad(&theta, true)?;
        info.final_objective = value;
        let lambda_l = problem.layers[problem.layers.len() - 1].lambda;
        let head = network::kernel_head(pass.last_gram(), k_out, lambda_l)?;
        Ok(K2ae {
            layers: problem.layers,
            phis: theta,
            train_diag: diag,
            codes: pass.codes,
            chol_w: head.chol_w,
            n_l: head.n_l,
            code_layer: self.code_layer(),
            info,
            state: Some(state),
        })
    }

    /// Fits a K2AE on any rows with any kernel: computes the Gram of `x`
    /// and keeps the rows and the kernel to encode new rows.
    ///
    /// # Errors
    /// As [`fit_k2ae_gram`](Self::fit_k2ae_gram).
    pub fn fit_k2ae_rows<R: Rows, K: Kernel<R>>(&self, kernel: K, x: &R) -> Result<K2aeOnRows<R, K>> {
        let k_in = kernel.gram(x);
        let model = self.fit_k2ae_gram(k_in.as_ref())?;
        Ok(K2aeOnRows { model, kernel, x_train: x.clone() })
    }
}

/// Resolves a median-heuristic first kernel on the RKHS distances
/// $K_{ii} + K_{jj} - 2K_{ij}$.
fn resolve_on_gram(kernel: LayerKernel, k: MatRef<'_, f64>, diag: &[f64]) -> LayerKernel {
    if kernel != LayerKernel::GaussianMedian {
        return kernel;
    }
    let n = k.nrows();
    let step = n.div_ceil(1000);
    let idx: Vec<usize> = (0..n).step_by(step).collect();
    let mut d = Vec::new();
    for (a, &i) in idx.iter().enumerate() {
        for &j in &idx[a + 1..] {
            d.push((diag[i] + diag[j] - 2.0 * k[(i, j)]).max(0.0));
        }
    }
    let med = if d.is_empty() {
        0.0
    } else {
        let mid = d.len() / 2;
        *d.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1
    };
    LayerKernel::Gaussian { gamma: if med > 0.0 { 1.0 / med } else { 1.0 } }
}

/// $k_1(\phi(a_i), \phi(b_j))$ from the inner products $\langle\phi(a_i), \phi(b_j)\rangle$
/// and the squared norms.
fn gram_from_inner_products(kernel: LayerKernel, g: MatRef<'_, f64>, da: &[f64], db: &[f64]) -> Result<Mat<f64>> {
    Ok(match kernel {
        LayerKernel::Linear => g.to_owned(),
        LayerKernel::Gaussian { gamma } => {
            Mat::from_fn(g.nrows(), g.ncols(), |i, j| (-gamma * (da[i] + db[j] - 2.0 * g[(i, j)]).max(0.0)).exp())
        }
        LayerKernel::Polynomial { degree, gamma, coef0 } => {
            Mat::from_fn(g.nrows(), g.ncols(), |i, j| (gamma * g[(i, j)] + coef0).powi(degree as i32))
        }
        LayerKernel::GaussianMedian => return LayerKernel::GaussianMedian.gram(g),
    })
}

impl Kae {
    /// The representations $X^{(1)}, \dots, X^{(L)}$ of `x` `(m, n_features)`;
    /// the last one is the reconstruction.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `x` has another width than the training inputs.
    pub fn transform(&self, x: MatRef<'_, f64>) -> Result<Vec<Mat<f64>>> {
        if x.ncols() != self.x_train.ncols() {
            return Err(Error::ShapeMismatch { what: "input width", expected: self.x_train.ncols(), got: x.ncols() });
        }
        let mut out: Vec<Mat<f64>> = Vec::with_capacity(self.layers.len());
        for (l, layer) in self.layers.iter().enumerate() {
            let (prev_te, prev_tr) =
                if l == 0 { (x, self.x_train.as_ref()) } else { (out[l - 1].as_ref(), self.codes[l - 1].as_ref()) };
            let k = layer.kernel.cross(prev_te, prev_tr)?;
            out.push(layer.apply_op(&k * &self.phis[l]));
        }
        Ok(out)
    }
    /// The code $X^{(c)}$ of `x` at the code layer `c`.
    ///
    /// # Errors
    /// As [`transform`](Self::transform).
    pub fn encode(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        Ok(self.transform(x)?.swap_remove(self.code_layer - 1))
    }
    /// The reconstruction $f_L \circ \dots \circ f_1(x)$.
    ///
    /// # Errors
    /// As [`transform`](Self::transform).
    pub fn reconstruct(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        Ok(self.transform(x)?.pop().expect("L >= 2"))
    }
    /// Mean squared reconstruction error $\frac1m\sum_i\lVert x_i - \hat x_i\rVert^2$.
    ///
    /// # Errors
    /// As [`transform`](Self::transform).
    pub fn reconstruction_error(&self, x: MatRef<'_, f64>) -> Result<f64> {
        let r = self.reconstruct(x)?;
        let d = Mat::from_fn(r.nrows(), r.ncols(), |i, j| x[(i, j)] - r[(i, j)]);
        Ok(network::dot(d.as_ref(), d.as_ref()) / x.nrows().max(1) as f64)
    }
    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.x_train.ncols()
    }
    /// Training representations $X^{(1)}..X^{(L-1)}$ at the final parameters.
    pub fn train_codes(&self) -> &[Mat<f64>] {
        &self.codes
    }
    /// Coefficients $\Phi_1..\Phi_L$.
    pub fn coefficients(&self) -> &[Mat<f64>] {
        &self.phis
    }
    /// The resolved layer kernels $k_1..k_L$.
    pub fn kernels(&self) -> Vec<LayerKernel> {
        self.layers.iter().map(|l| l.kernel).collect()
    }
    /// The code layer (1-based).
    pub fn code_layer(&self) -> usize {
        self.code_layer
    }
    /// Training history and final objective.
    pub fn train_info(&self) -> &TrainInfo {
        &self.info
    }
}

/// A fitted K2AE: inputs seen only through Gram matrices.
///
/// Encoding and test distortion take the cross Gram `(m, n_train)` between
/// new and training inputs, and the new inputs' squared norms $k(x, x)$ when
/// the first layer is not linear in the RKHS ([`LayerKernel::Gaussian`]).
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::kae::{K2ae, LayerKernel};
/// let x = Mat::from_fn(16, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0);
/// let k_in = &x * x.transpose();
/// let model = K2ae::params().kernels(vec![LayerKernel::Linear, LayerKernel::GaussianMedian])
///     .max_iter(20).fit_k2ae_gram(k_in.as_ref())?;
/// let diag: Vec<f64> = (0..16).map(|i| k_in[(i, i)]).collect();
/// let dist = model.test_distortion(k_in.as_ref(), Some(&diag), k_in.as_ref(), &diag)?;
/// let mean = dist.iter().sum::<f64>() / 16.0;
/// assert!(mean >= 0.0);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct K2ae {
    layers: Vec<Layer>,
    #[serde(with = "mat_vec")]
    phis: Vec<Mat<f64>>,
    train_diag: Vec<f64>,
    #[serde(with = "mat_vec")]
    codes: Vec<Mat<f64>>,
    chol_w: Cholesky,
    #[serde(with = "okr_linalg::serde_mat")]
    n_l: Mat<f64>,
    code_layer: usize,
    info: TrainInfo,
    /// As [`Kae`]'s: the optimizer's state, in memory only.
    #[serde(skip)]
    state: Option<fit::TrainState>,
}

impl K2ae {
    /// Default parameters (see [`KaeParams`]).
    pub fn params() -> KaeParams {
        KaeParams::default()
    }

    /// Number of training samples.
    pub fn n_samples(&self) -> usize {
        self.train_diag.len()
    }

    /// Representations $X^{(1)}..X^{(L-1)}$ of new points and their last-layer
    /// kernel row block $k_L(X^{(L-1)}_{te}, X^{(L-1)}_{tr})$ `(m, n)`.
    fn forward_test(&self, k_cross: MatRef<'_, f64>, diag: Option<&[f64]>) -> Result<(Vec<Mat<f64>>, Mat<f64>)> {
        let n = self.n_samples();
        if k_cross.ncols() != n {
            return Err(Error::ShapeMismatch {
                what: "cross Gram columns (training samples)",
                expected: n,
                got: k_cross.ncols(),
            });
        }
        check_finite("cross Gram", k_cross)?;
        let first = self.layers[0].kernel;
        let k1 = match (first, diag) {
            (LayerKernel::Gaussian { .. }, None) => {
                return Err(Error::InvalidParameter {
                    name: "diag",
                    value: "none".into(),
                    expected: "the new points' k(x, x) (the first layer is Gaussian on the RKHS)",
                });
            }
            (_, Some(d)) if d.len() != k_cross.nrows() => {
                return Err(Error::ShapeMismatch { what: "test diagonal", expected: k_cross.nrows(), got: d.len() });
            }
            (_, d) => {
                let zeros = vec![0.0; k_cross.nrows()];
                gram_from_inner_products(first, k_cross, d.unwrap_or(&zeros), &self.train_diag)?
            }
        };
        let mut codes: Vec<Mat<f64>> = Vec::with_capacity(self.codes.len());
        let mut k = k1;
        for l in 0..self.codes.len() {
            let x = self.layers[l].apply_op(&k * &self.phis[l]);
            k = self.layers[l + 1].kernel.cross(x.as_ref(), self.codes[l].as_ref())?;
            codes.push(x);
        }
        Ok((codes, k))
    }

    /// The codes $X^{(1)}..X^{(L-1)}$ of new points from their cross Gram.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for a cross Gram of the wrong width or a
    /// diagonal of the wrong length; [`Error::InvalidParameter`] for a missing
    /// diagonal (Gaussian first layer) or non-finite entries.
    pub fn transform(&self, k_cross: MatRef<'_, f64>, diag: Option<&[f64]>) -> Result<Vec<Mat<f64>>> {
        Ok(self.forward_test(k_cross, diag)?.0)
    }

    /// The code of new points at the code layer.
    ///
    /// # Errors
    /// As [`transform`](Self::transform).
    pub fn encode(&self, k_cross: MatRef<'_, f64>, diag: Option<&[f64]>) -> Result<Mat<f64>> {
        Ok(self.transform(k_cross, diag)?.swap_remove(self.code_layer - 1))
    }

    /// $\beta(x) = W^{-1}k_L(x)$ for each new point, as rows `(m, n)`: the
    /// reconstruction of $\phi(x)$ is $\sum_j \beta_j(x)\phi(x_j)$ (explicit
    /// targets $Y$: $\hat y = \beta^\top Y$).
    ///
    /// # Errors
    /// As [`transform`](Self::transform).
    pub fn reconstruction_weights(&self, k_cross: MatRef<'_, f64>, diag: Option<&[f64]>) -> Result<Mat<f64>> {
        let (_, kt) = self.forward_test(k_cross, diag)?;
        let b = self.chol_w.solve(kt.transpose(), Par::rayon(0));
        Ok(b.transpose().to_owned())
    }

    /// Squared reconstruction error of each new point in the output RKHS
    /// (spec 1.6.6):
    /// $\lVert x\rVert^2 + k_L(x)^\top N_L k_L(x) - 2 k_L(x)^\top W^{-1} K_{out}(\text{train}, x)$.
    /// `k_in_cross` and `diag_in` feed the encoder; `k_out_cross` `(m, n)` and
    /// `diag_out` are the output Gram between new and training targets and the
    /// new targets' squared norms (both equal the input ones for a pure K2AE).
    ///
    /// # Errors
    /// As [`transform`](Self::transform), plus shape mismatches of the output Grams.
    pub fn test_distortion(
        &self,
        k_in_cross: MatRef<'_, f64>,
        diag_in: Option<&[f64]>,
        k_out_cross: MatRef<'_, f64>,
        diag_out: &[f64],
    ) -> Result<Vec<f64>> {
        let m = k_in_cross.nrows();
        if k_out_cross.nrows() != m || k_out_cross.ncols() != self.n_samples() || diag_out.len() != m {
            return Err(Error::ShapeMismatch {
                what: "output cross Gram / diagonal",
                expected: m,
                got: k_out_cross.nrows(),
            });
        }
        let (_, kt) = self.forward_test(k_in_cross, diag_in)?;
        let kn = &kt * &self.n_l;
        let w_inv_kout = self.chol_w.solve(k_out_cross.transpose(), Par::rayon(0)); // (n, m)
        Ok((0..m)
            .map(|i| {
                let quad: f64 = (0..kt.ncols()).map(|j| kn[(i, j)] * kt[(i, j)]).sum();
                let cross: f64 = (0..kt.ncols()).map(|j| kt[(i, j)] * w_inv_kout[(j, i)]).sum();
                diag_out[i] + quad - 2.0 * cross
            })
            .collect())
    }

    /// Training representations $X^{(1)}..X^{(L-1)}$ at the final parameters.
    pub fn train_codes(&self) -> &[Mat<f64>] {
        &self.codes
    }
    /// The training code at the code layer.
    pub fn train_code(&self) -> MatRef<'_, f64> {
        self.codes[self.code_layer - 1].as_ref()
    }
    /// Inner coefficients $\Phi_1..\Phi_{L-1}$.
    pub fn coefficients(&self) -> &[Mat<f64>] {
        &self.phis
    }
    /// $N_L = W^{-1}K_{out}W^{-1}$ at the final parameters.
    pub fn n_l(&self) -> MatRef<'_, f64> {
        self.n_l.as_ref()
    }
    /// The resolved layer kernels $k_1..k_L$.
    pub fn kernels(&self) -> Vec<LayerKernel> {
        self.layers.iter().map(|l| l.kernel).collect()
    }
    /// The code layer (1-based).
    pub fn code_layer(&self) -> usize {
        self.code_layer
    }
    /// Training history and final (profiled) objective.
    pub fn train_info(&self) -> &TrainInfo {
        &self.info
    }
}

/// A [`K2ae`] fitted with a kernel on any rows, keeping the training rows to
/// encode new rows.
///
/// # Example
/// ```
/// use okr_estimators::kae::{K2ae, LayerKernel};
/// use okr_kernels::{CsrRows, Tanimoto};
/// let x = CsrRows::from_rows(5, (0..12).map(|i| vec![(i % 5, 1.0), ((i * 3 + 1) % 5, 1.0)]).collect())?;
/// let model = K2ae::params().kernels(vec![LayerKernel::Linear, LayerKernel::GaussianMedian])
///     .max_iter(10).check()?.fit_k2ae_rows(Tanimoto, &x)?;
/// assert_eq!(model.encode(&x)?.nrows(), 12);
/// # use okr_estimators::ParamGuard;
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct K2aeOnRows<R, K> {
    model: K2ae,
    kernel: K,
    x_train: R,
}

impl<R: Rows, K: Kernel<R>> K2aeOnRows<R, K> {
    /// The Gram-level model.
    pub fn model(&self) -> &K2ae {
        &self.model
    }
    /// The input kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }
    /// The training rows.
    pub fn x_train(&self) -> &R {
        &self.x_train
    }
    /// Codes of new rows.
    ///
    /// # Errors
    /// As [`K2ae::encode`].
    pub fn encode(&self, x: &R) -> Result<Mat<f64>> {
        let cross = self.kernel.gram_block(x, &self.x_train);
        let diag = self.kernel.diag(x);
        self.model.encode(cross.as_ref(), Some(&diag))
    }
    /// Squared RKHS reconstruction error of each new row.
    ///
    /// # Errors
    /// As [`K2ae::test_distortion`].
    pub fn test_distortion(&self, x: &R) -> Result<Vec<f64>> {
        let cross = self.kernel.gram_block(x, &self.x_train);
        let diag = self.kernel.diag(x);
        self.model.test_distortion(cross.as_ref(), Some(&diag), cross.as_ref(), &diag)
    }
}

/// serde for `Vec<Mat<f64>>` through [`okr_linalg::serde_mat`].
mod mat_vec {
    use faer::Mat;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Wrap(#[serde(with = "okr_linalg::serde_mat")] Mat<f64>);

    pub fn serialize<S: Serializer>(v: &[Mat<f64>], s: S) -> Result<S::Ok, S::Error> {
        let w: Vec<Wrap> = v.iter().map(|m| Wrap(m.clone())).collect();
        w.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Mat<f64>>, D::Error> {
        Ok(Vec::<Wrap>::deserialize(d)?.into_iter().map(|w| w.0).collect())
    }
}

#[doc(hidden)]
pub mod internals {
    //! Objective and gradient oracles, exposed for the oracle tests and the
    //! experiments (not a stable API).
    use faer::{Mat, MatRef};

    use super::network::{self, Layer, Operator};
    use super::{LayerKernel, fit};
    use crate::Result;

    /// A layer description for the oracles: kernel, optional operator, lambda.
    pub type LayerSpec = (LayerKernel, Option<Mat<f64>>, f64);

    fn layers(spec: &[LayerSpec]) -> Vec<Layer> {
        spec.iter().map(|(k, a, l)| Layer { kernel: *k, operator: a.clone().map(Operator), lambda: *l }).collect()
    }

    /// Finite KAE objective and gradients w.r.t. $\Phi_1..\Phi_L$, with $K_1 = k_1(X, X)$.
    ///
    /// # Errors
    /// Kernel evaluation errors.
    pub fn finite_objective(x: MatRef<'_, f64>, spec: &[LayerSpec], phis: &[Mat<f64>]) -> Result<(f64, Vec<Mat<f64>>)> {
        let k1 = spec[0].0.gram(x)?;
        let mut p =
            fit::Problem { k1: k1.as_ref(), layers: layers(spec), head: fit::Head::FiniteGradient { target: x } };
        let (v, g, _) = p.value_and_grad(phis, true)?;
        Ok((v, g))
    }

    /// Profiled K2AE objective $\lambda_L\operatorname{tr}(K_{out}W^{-1}) + \sum_{l<L}\lambda_l\lVert f_l\rVert^2$
    /// and its gradients w.r.t. $\Phi_1..\Phi_{L-1}$, with $K_1$ given.
    ///
    /// # Errors
    /// Kernel and factorization errors.
    pub fn profiled_objective(
        k1: MatRef<'_, f64>,
        k_out: MatRef<'_, f64>,
        spec: &[LayerSpec],
        phis: &[Mat<f64>],
    ) -> Result<(f64, Vec<Mat<f64>>)> {
        let mut p = fit::Problem { k1, layers: layers(spec), head: fit::Head::Kernel { k_out, stale: None } };
        let (v, g, _) = p.value_and_grad(phis, true)?;
        Ok((v, g))
    }

    /// The closed-form last layer $\Phi_L$ of spec 1.5 at given inner coefficients.
    ///
    /// # Errors
    /// Kernel and factorization errors.
    pub fn krr_last_layer(x: MatRef<'_, f64>, spec: &[LayerSpec], inner: &[Mat<f64>]) -> Result<Mat<f64>> {
        let k1 = spec[0].0.gram(x)?;
        let l = layers(spec);
        let pass = network::forward(k1.as_ref(), &l, inner)?;
        network::krr_last(pass.last_gram(), x, &l[l.len() - 1])
    }
}
