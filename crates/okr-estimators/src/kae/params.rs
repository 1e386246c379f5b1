use faer::Mat;
use serde::{Deserialize, Serialize};

use super::LayerKernel;
use crate::core::checks;
use crate::{Error, ParamGuard, Result};

/// The step rule of the gradient training.
///
/// # Example
/// ```
/// use okr_estimators::kae::Optimizer;
/// let adam = Optimizer::adam(1e-2);
/// assert_eq!(adam, Optimizer::Adam { learning_rate: 1e-2, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    /// Adam (Kingma and Ba 2015) on every coefficient matrix.
    Adam {
        /// Step size.
        learning_rate: f64,
        /// First-moment decay.
        beta1: f64,
        /// Second-moment decay.
        beta2: f64,
        /// Denominator offset.
        epsilon: f64,
    },
    /// Plain gradient descent $\Phi \leftarrow \Phi - \eta \nabla J$ with a fixed step.
    GradientDescent {
        /// The step $\eta$.
        learning_rate: f64,
    },
}

impl Optimizer {
    /// Adam with the usual moments (0.9, 0.999, 1e-8).
    pub fn adam(learning_rate: f64) -> Self {
        Self::Adam { learning_rate, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 }
    }
    /// Plain gradient descent.
    pub fn gradient_descent(learning_rate: f64) -> Self {
        Self::GradientDescent { learning_rate }
    }
}

/// How the finite-dimensional last layer $f_L$ is trained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LastLayer {
    /// $\Phi_L$ by gradient steps with the other layers (paper Sec. 4.2).
    Gradient,
    /// $\Phi_L$ in closed form by kernel ridge regression (spec 1.5),
    /// refreshed every `refresh_every` steps (the authors' `md` scheme).
    Krr,
}

/// Most layers a KAE may have: every layer adds an `n x n` Gram matrix to
/// each step, so deeper networks are a configuration error, not a long run.
pub const MAX_LAYERS: usize = 64;

/// Validated KAE / K2AE hyper-parameters; the only type that can fit.
///
/// See [`KaeParams`] for the table of fields.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KaeValidParams {
    pub(crate) hidden_dims: Vec<usize>,
    pub(crate) kernels: Vec<LayerKernel>,
    pub(crate) lambdas: Vec<f64>,
    #[serde(skip)]
    pub(crate) operators: Vec<(usize, Mat<f64>)>,
    pub(crate) last_layer: LastLayer,
    pub(crate) refresh_every: usize,
    pub(crate) optimizer: Optimizer,
    pub(crate) max_iter: usize,
    pub(crate) tol: f64,
    pub(crate) patience: usize,
    pub(crate) init_scale: f64,
    pub(crate) code_layer: Option<usize>,
    pub(crate) seed: u64,
}

/// Hyper-parameters of a kernel autoencoder, for both the finite-dimensional
/// [`Kae`](super::Kae) and the Gram-only [`K2ae`](super::K2ae).
///
/// The model is $f_L \circ \dots \circ f_1$ with $L$ = `hidden_dims.len() + 1`
/// layers, $f_l$ in the vv-RKHS of $k_l(x, x') A_l$, trained on
/// $$\frac1n \sum_i \lVert x_i - f_L \circ \dots \circ f_1(x_i) \rVert^2 + \sum_l \lambda_l \lVert f_l \rVert^2_{\mathcal H_l}.$$
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `hidden_dims` | `[2]` | widths $d_1..d_{L-1}$ of the inner layers | non-empty, each `>= 1`, at most [`MAX_LAYERS`] layers; at fit, each width at most `max(n_samples, n_features)` |
/// | `kernels` | `[GaussianMedian]` | $k_1..k_L$; one entry is used for every layer. In the K2AE, $k_1$ acts on $\phi(x)$ through the input Gram ([`LayerKernel::Linear`] = the precomputed Gram) | valid kernels |
/// | `lambdas` | `[1e-3]` | $\lambda_1..\lambda_L$; one entry is used for every layer | `>= 0`; $\lambda_L > 0$ with a KRR last layer |
/// | `operator(l, A)` | $I$ | PSD $A_l$ (`d_l x d_l`), finite KAE only | symmetric |
/// | `last_layer` | `Krr` | finite KAE: $\Phi_L$ by KRR or by gradient | |
/// | `refresh_every` | `1` | gradient steps between KRR / $N_L$ refreshes (1 = exact gradient of the profiled objective) | `>= 1` |
/// | `optimizer` | Adam(1e-2) | step rule | positive step |
/// | `max_iter` | `500` | gradient steps | `>= 1` |
/// | `tol`, `patience` | `1e-7`, `20` | stop when the objective decreased by less than `tol` (relative) over `patience` steps | `tol >= 0`, `patience >= 1` |
/// | `init_scale` | `1.0` | $\Phi_l \sim N(0,1)$ rescaled so that $X^{(l)}$ has this RMS entry | `> 0` |
/// | `code_layer` | first narrowest | which $X^{(l)}$ [`encode`](super::Kae::encode) returns | `1..L-1` |
/// | `seed` | `0` | initialization RNG (`ChaCha8Rng`) | any |
///
/// Ridge convention: the KRR last layer solves with $K_L + n\lambda_L I$
/// (scikit-learn `alpha = n * lambda`).
///
/// # Errors
/// [`Error::InvalidParameter`] names the first invalid field.
///
/// # Example
/// ```
/// use okr_estimators::ParamGuard;
/// use okr_estimators::kae::{Kae, LayerKernel};
/// let p = Kae::params().hidden_dims(vec![3]).kernels(vec![LayerKernel::Linear]).lambdas(vec![0.0, 1e-3]);
/// assert!(p.check_ref().is_ok());
/// assert!(Kae::params().hidden_dims(vec![]).check_ref().is_err());
/// ```
#[derive(Debug, Clone)]
pub struct KaeParams(pub(crate) KaeValidParams);

impl Default for KaeParams {
    fn default() -> Self {
        Self(KaeValidParams {
            hidden_dims: vec![2],
            kernels: vec![LayerKernel::GaussianMedian],
            lambdas: vec![1e-3],
            operators: Vec::new(),
            last_layer: LastLayer::Krr,
            refresh_every: 1,
            optimizer: Optimizer::adam(1e-2),
            max_iter: 500,
            tol: 1e-7,
            patience: 20,
            init_scale: 1.0,
            code_layer: None,
            seed: 0,
        })
    }
}

impl KaeParams {
    /// Widths $d_1..d_{L-1}$ of the inner layers.
    pub fn hidden_dims(mut self, dims: Vec<usize>) -> Self {
        self.0.hidden_dims = dims;
        self
    }
    /// Layer kernels $k_1..k_L$ (a single entry applies to all layers).
    pub fn kernels(mut self, kernels: Vec<LayerKernel>) -> Self {
        self.0.kernels = kernels;
        self
    }
    /// Penalties $\lambda_1..\lambda_L$ (a single entry applies to all layers).
    pub fn lambdas(mut self, lambdas: Vec<f64>) -> Self {
        self.0.lambdas = lambdas;
        self
    }
    /// The PSD operator $A_l$ of layer `l` (1-based), `d_l x d_l`.
    pub fn operator(mut self, l: usize, a: Mat<f64>) -> Self {
        self.0.operators.retain(|(k, _)| *k != l);
        self.0.operators.push((l, a));
        self
    }
    /// How the finite-dimensional last layer is trained.
    pub fn last_layer(mut self, last: LastLayer) -> Self {
        self.0.last_layer = last;
        self
    }
    /// Gradient steps between closed-form refreshes of the last layer.
    pub fn refresh_every(mut self, steps: usize) -> Self {
        self.0.refresh_every = steps;
        self
    }
    /// The step rule.
    pub fn optimizer(mut self, optimizer: Optimizer) -> Self {
        self.0.optimizer = optimizer;
        self
    }
    /// Maximum number of gradient steps.
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.0.max_iter = max_iter;
        self
    }
    /// Relative-decrease stopping tolerance.
    pub fn tol(mut self, tol: f64) -> Self {
        self.0.tol = tol;
        self
    }
    /// Window (in steps) of the relative-decrease test.
    pub fn patience(mut self, patience: usize) -> Self {
        self.0.patience = patience;
        self
    }
    /// RMS entry of the initial codes $X^{(l)}$.
    pub fn init_scale(mut self, scale: f64) -> Self {
        self.0.init_scale = scale;
        self
    }
    /// The layer whose output is the code (1-based, `< L`).
    pub fn code_layer(mut self, l: usize) -> Self {
        self.0.code_layer = Some(l);
        self
    }
    /// Initialization seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
}

impl KaeValidParams {
    /// Number of layers $L$.
    pub fn n_layers(&self) -> usize {
        self.hidden_dims.len() + 1
    }
    /// Kernel of layer `l` (1-based).
    pub fn kernel(&self, l: usize) -> LayerKernel {
        if self.kernels.len() == 1 { self.kernels[0] } else { self.kernels[l - 1] }
    }
    /// $\lambda_l$ (1-based).
    pub fn lambda(&self, l: usize) -> f64 {
        if self.lambdas.len() == 1 { self.lambdas[0] } else { self.lambdas[l - 1] }
    }
    /// The code layer: the requested one, else the first narrowest inner layer.
    pub fn code_layer(&self) -> usize {
        self.code_layer.unwrap_or_else(|| {
            let min = *self.hidden_dims.iter().min().unwrap_or(&1);
            1 + self.hidden_dims.iter().position(|&d| d == min).unwrap_or(0)
        })
    }
    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Widths $d_1..d_{L-1}$ of the inner layers.
    pub fn hidden_dims(&self) -> &[usize] {
        &self.hidden_dims
    }
    /// Maximum number of gradient steps.
    pub fn max_iter(&self) -> usize {
        self.max_iter
    }
    /// The penalties as given (one entry applies to every layer).
    pub fn lambdas(&self) -> &[f64] {
        &self.lambdas
    }

    fn validate(&self) -> Result<()> {
        let bad = |name, value: String, expected| Err(Error::InvalidParameter { name, value, expected });
        let big_l = self.n_layers();
        if self.hidden_dims.is_empty() || self.hidden_dims.contains(&0) {
            return bad("hidden_dims", format!("{:?}", self.hidden_dims), "non-empty, every width >= 1");
        }
        if big_l > MAX_LAYERS {
            return bad("hidden_dims", format!("{big_l} layers"), "at most 64 layers");
        }
        if self.kernels.len() != 1 && self.kernels.len() != big_l {
            return bad("kernels", format!("{} kernels", self.kernels.len()), "1 or L = hidden_dims.len() + 1");
        }
        for k in &self.kernels {
            k.check("kernels")?;
        }
        if self.lambdas.len() != 1 && self.lambdas.len() != big_l {
            return bad("lambdas", format!("{} values", self.lambdas.len()), "1 or L = hidden_dims.len() + 1");
        }
        for &l in &self.lambdas {
            checks::non_negative("lambdas", l)?;
        }
        if self.last_layer == LastLayer::Krr && self.lambda(big_l) <= 0.0 {
            return bad("lambdas", format!("lambda_L = {}", self.lambda(big_l)), "lambda_L > 0 with a KRR last layer");
        }
        for (l, a) in &self.operators {
            if *l == 0 || *l > big_l {
                return bad("operator", format!("layer {l}"), "a layer index in 1..=L");
            }
            let sym = (0..a.nrows())
                .all(|i| (0..a.ncols()).all(|j| (a[(i, j)] - a[(j, i)]).abs() <= 1e-12 * (1.0 + a[(i, j)].abs())));
            if a.nrows() != a.ncols() || !sym || a.col_iter().any(|c| c.iter().any(|v| !v.is_finite())) {
                return bad(
                    "operator",
                    format!("layer {l}: {} x {}", a.nrows(), a.ncols()),
                    "a finite symmetric square matrix",
                );
            }
            if *l < big_l && a.nrows() != self.hidden_dims[*l - 1] {
                return bad("operator", format!("layer {l}: {} x {}", a.nrows(), a.ncols()), "d_l x d_l");
            }
        }
        if self.refresh_every == 0 {
            return bad("refresh_every", "0".into(), ">= 1");
        }
        let lr = match self.optimizer {
            Optimizer::Adam { learning_rate, beta1, beta2, epsilon } => {
                if !(0.0..1.0).contains(&beta1) || !(0.0..1.0).contains(&beta2) || epsilon.is_nan() || epsilon <= 0.0 {
                    return bad("optimizer", format!("{:?}", self.optimizer), "0 <= beta < 1, epsilon > 0");
                }
                learning_rate
            }
            Optimizer::GradientDescent { learning_rate } => learning_rate,
        };
        if !(lr > 0.0 && lr.is_finite()) {
            return bad("optimizer", format!("learning rate {lr}"), "> 0 and finite");
        }
        if self.max_iter == 0 {
            return bad("max_iter", "0".into(), ">= 1");
        }
        if self.tol.is_nan() || self.tol < 0.0 || self.patience == 0 {
            return bad("tol", format!("tol {} patience {}", self.tol, self.patience), "tol >= 0, patience >= 1");
        }
        if !(self.init_scale > 0.0 && self.init_scale.is_finite()) {
            return bad("init_scale", self.init_scale.to_string(), "> 0 and finite");
        }
        if let Some(c) = self.code_layer
            && (c == 0 || c >= big_l)
        {
            return bad("code_layer", c.to_string(), "1..L-1");
        }
        Ok(())
    }
}

impl ParamGuard for KaeParams {
    type Checked = KaeValidParams;
    type Error = Error;

    fn check_ref(&self) -> Result<&KaeValidParams> {
        self.0.validate()?;
        Ok(&self.0)
    }

    fn check(self) -> Result<KaeValidParams> {
        self.0.validate()?;
        Ok(self.0)
    }
}
