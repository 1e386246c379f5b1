//! Initialization, the objective/gradient oracle and the training loop.

use faer::{Mat, MatRef};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::network::{self, Layer, Operator, Pass};
use super::{LastLayer, LayerKernel, Optimizer};
use crate::kae::params::KaeValidParams;
use crate::{Error, Result};

/// Why training stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// `max_iter` steps were taken.
    MaxIter,
    /// The objective decreased by less than `tol` (relative) over `patience` steps.
    Converged,
}

/// What happened during training.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::kae::{Kae, StopReason};
/// let x = Mat::from_fn(12, 2, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0);
/// let model = Kae::params().max_iter(30).fit(x.as_ref())?;
/// let info = model.train_info();
/// // One objective per step, and one more at the final state when converged.
/// let extra = usize::from(info.stop == StopReason::Converged);
/// assert_eq!(info.objective_history.len(), info.n_iter + extra);
/// assert!(info.n_iter <= 30);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainInfo {
    /// The objective at each step, before the step, and (when the loop
    /// converged) at the final state, where the stopping rule was met.
    /// Between two refreshes of a stale last layer (`refresh_every > 1`) this
    /// is the surrogate being minimized; at refresh steps it is the true
    /// objective.
    pub objective_history: Vec<f64>,
    /// Number of gradient steps taken (parameter updates applied).
    pub n_iter: usize,
    /// The true objective at the returned parameters (last layer refreshed).
    pub final_objective: f64,
    /// Why the loop stopped.
    pub stop: StopReason,
}

/// The last layer during training.
pub(crate) enum Head<'a> {
    /// Finite-dimensional, $\Phi_L$ trained by gradient (it is the last parameter).
    FiniteGradient { target: MatRef<'a, f64> },
    /// Finite-dimensional, $\Phi_L$ by KRR at refreshes.
    FiniteKrr { target: MatRef<'a, f64>, phi: Option<Mat<f64>> },
    /// Infinite-dimensional (K2AE): $B = W^{-1}K_{out}$ and $N_L$ at the last refresh.
    Kernel { k_out: MatRef<'a, f64>, stale: Option<(Mat<f64>, Mat<f64>)> },
}

/// The objective as a function of the trainable coefficients.
pub(crate) struct Problem<'a> {
    pub k1: MatRef<'a, f64>,
    pub layers: Vec<Layer>,
    pub head: Head<'a>,
}

impl Problem<'_> {
    fn n_inner(&self) -> usize {
        self.layers.len() - 1
    }

    /// Objective and gradient at `theta`; `refresh` recomputes the
    /// closed-form last layer first.
    pub fn value_and_grad(&mut self, theta: &[Mat<f64>], refresh: bool) -> Result<(f64, Vec<Mat<f64>>, Pass)> {
        let m = self.n_inner();
        let inner = &theta[..m];
        let pass = network::forward(self.k1, &self.layers, inner)?;
        let pen = network::inner_penalty(&pass, &self.layers, inner);
        let k_last = pass.last_gram();
        let last = &self.layers[m];
        let (head_value, d_last, grad_last) = match &mut self.head {
            Head::FiniteGradient { target } => {
                let (v, d, g) = network::finite_head(*target, k_last, &theta[m], last);
                (v, d, Some(g))
            }
            Head::FiniteKrr { target, phi } => {
                if refresh || phi.is_none() {
                    *phi = Some(network::krr_last(k_last, *target, last)?);
                }
                let (v, d, _) = network::finite_head(*target, k_last, phi.as_ref().expect("set above"), last);
                (v, d, None)
            }
            Head::Kernel { k_out, stale } => {
                if refresh || stale.is_none() {
                    let h = network::kernel_head(k_last, *k_out, last.lambda)?;
                    let d = Mat::from_fn(h.n_l.nrows(), h.n_l.ncols(), |i, j| -last.lambda * h.n_l[(i, j)]);
                    *stale = Some((h.w_inv_kout, h.n_l));
                    (h.value, d, None)
                } else {
                    let (b, n_l) = stale.as_ref().expect("checked above");
                    let (v, d) = network::stale_kernel_head(k_last, *k_out, b.as_ref(), n_l.as_ref(), last.lambda);
                    (v, d, None)
                }
            }
        };
        let mut grads = network::backward(self.k1, &self.layers, inner, &pass, d_last)?;
        if let Some(g) = grad_last {
            grads.push(g);
        }
        Ok((head_value + pen, grads, pass))
    }
}

/// Draws $\Phi_l \sim N(0, 1)$ layer by layer, rescaled so that
/// $X^{(l)} = K_l\Phi_lA_l$ has RMS entry `init_scale`, resolving
/// median-heuristic kernels on the scaled codes. Returns the resolved layers
/// (layer 1 as given) and the inner coefficients.
pub(crate) fn initialize(
    k1: MatRef<'_, f64>,
    first: LayerKernel,
    params: &KaeValidParams,
    output_dim: Option<usize>,
) -> Result<(Vec<Layer>, Vec<Mat<f64>>)> {
    let n = k1.nrows();
    let big_l = params.n_layers();
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let op = |l: usize| params.operators.iter().find(|(k, _)| *k == l).map(|(_, a)| Operator(a.clone()));
    if let (Some(a), Some(d)) = (op(big_l), output_dim)
        && a.0.nrows() != d
    {
        return Err(Error::ShapeMismatch {
            what: "operator A_L size (input dimension)",
            expected: d,
            got: a.0.nrows(),
        });
    }
    let mut layers = vec![Layer { kernel: first, operator: op(1), lambda: params.lambda(1) }];
    let mut phis = Vec::with_capacity(big_l - 1);
    let mut k_prev: Mat<f64> = Mat::zeros(0, 0);
    for l in 1..big_l {
        let d = params.hidden_dims[l - 1];
        let mut phi = standard_normal(n, d, &mut rng);
        let k = if l == 1 { k1 } else { k_prev.as_ref() };
        let x = layers[l - 1].apply_op(k * &phi);
        let rms = (network::dot(x.as_ref(), x.as_ref()) / (n * d).max(1) as f64).sqrt();
        let scale = if rms > 0.0 && rms.is_finite() { params.init_scale / rms } else { 1.0 };
        phi = Mat::from_fn(n, d, |i, j| phi[(i, j)] * scale);
        let x = Mat::from_fn(n, d, |i, j| x[(i, j)] * scale);
        let kernel = params.kernel(l + 1).resolve(x.as_ref());
        k_prev = kernel.gram(x.as_ref())?;
        layers.push(Layer { kernel, operator: op(l + 1), lambda: params.lambda(l + 1) });
        phis.push(phi);
    }
    Ok((layers, phis))
}

pub(crate) fn standard_normal(nrows: usize, ncols: usize, rng: &mut ChaCha8Rng) -> Mat<f64> {
    // Box-Muller: two uniforms in (0, 1] give one N(0, 1) draw (the second is discarded
    // to keep the stream position a simple function of the shape).
    Mat::from_fn(nrows, ncols, |_, _| {
        let u1: f64 = 1.0 - rng.random::<f64>();
        let u2: f64 = rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    })
}

/// The optimizer's running state after a fit: Adam's moments and the step
/// their bias correction counts from, so that a continued fit
/// ([`KaeValidParams::fit_from`]) is exactly the longer fit. Kept in memory
/// only (not in model files).
#[derive(Debug, Clone)]
pub(crate) struct TrainState {
    first_moment: Vec<Mat<f64>>,
    second_moment: Vec<Mat<f64>>,
    /// Steps before Adam's first step (0 for a fit from the initialization).
    adam_origin: usize,
}

/// Where a continued fit starts: the updates already applied, their
/// objective history and, when known, the optimizer's state.
pub(crate) struct Resume {
    pub start: usize,
    pub history: Vec<f64>,
    pub state: Option<TrainState>,
}

impl Resume {
    /// The continuation of a fit with `info` and `state`.
    pub fn after(info: &TrainInfo, state: Option<&TrainState>) -> Self {
        // A converged fit evaluated its final state without stepping: that
        // evaluation is repeated as the continuation's first step.
        let history = info.objective_history[..info.n_iter.min(info.objective_history.len())].to_vec();
        Self { start: info.n_iter, history, state: state.cloned() }
    }
}

/// Minimizes `problem` from `theta` with the step rule and stopping rules of
/// `params`; `progress(step, objective)` is called at every step, and
/// `record(updates, theta)` once for every parameter state visited, with the
/// number of updates applied so far (0 = the initialization; the last call
/// has the returned parameters). `resume` continues an earlier fit for
/// `max_iter` more steps.
pub(crate) fn train(
    problem: &mut Problem<'_>,
    theta: &mut [Mat<f64>],
    params: &KaeValidParams,
    resume: Option<Resume>,
    progress: &mut dyn FnMut(usize, f64),
    record: &mut dyn FnMut(usize, &[Mat<f64>]),
) -> Result<(TrainInfo, TrainState)> {
    let (start, mut history, state) = match resume {
        Some(r) => (r.start, r.history, r.state),
        None => (0, Vec::new(), None),
    };
    let shapes_match = |m: &[Mat<f64>]| {
        m.len() == theta.len()
            && m.iter().zip(theta.iter()).all(|(a, b)| (a.nrows(), a.ncols()) == (b.nrows(), b.ncols()))
    };
    let (mut first_moment, mut second_moment, adam_origin) = match state {
        Some(s) if shapes_match(&s.first_moment) && shapes_match(&s.second_moment) => {
            (s.first_moment, s.second_moment, s.adam_origin)
        }
        // Fresh moments, and a bias correction counted from the first new step.
        _ => {
            let zeros: Vec<Mat<f64>> = theta.iter().map(|t| Mat::zeros(t.nrows(), t.ncols())).collect();
            (zeros.clone(), zeros, start)
        }
    };
    let mut stop = StopReason::MaxIter;
    let end = start.saturating_add(params.max_iter);
    for it in start..end {
        record(it, theta);
        let refresh = it % params.refresh_every == 0;
        let (value, grads, _) = problem.value_and_grad(theta, refresh)?;
        if !value.is_finite() {
            return Err(Error::InvalidParameter {
                name: "optimizer",
                value: format!("{:?}", params.optimizer),
                expected: "a step size for which the objective stays finite (it diverged)",
            });
        }
        history.push(value);
        progress(it, value);
        if okr_surrogate::progress::observed() {
            okr_surrogate::progress::report(it + 1, end, &format!("autoencoder, objective {value:.6e}"));
        }
        if it >= params.patience {
            let before = history[it - params.patience];
            if before - value <= params.tol * before.abs() {
                stop = StopReason::Converged;
                break;
            }
        }
        match params.optimizer {
            Optimizer::GradientDescent { learning_rate } => {
                for (t, g) in theta.iter_mut().zip(&grads) {
                    *t -= learning_rate * g;
                }
            }
            Optimizer::Adam { learning_rate, beta1, beta2, epsilon } => {
                let step = i32::try_from(it + 1 - adam_origin).unwrap_or(i32::MAX);
                let c1 = 1.0 - beta1.powi(step);
                let c2 = 1.0 - beta2.powi(step);
                for ((t, g), (m1, m2)) in
                    theta.iter_mut().zip(&grads).zip(first_moment.iter_mut().zip(&mut second_moment))
                {
                    for j in 0..t.ncols() {
                        for i in 0..t.nrows() {
                            let gi = g[(i, j)];
                            m1[(i, j)] = beta1 * m1[(i, j)] + (1.0 - beta1) * gi;
                            m2[(i, j)] = beta2 * m2[(i, j)] + (1.0 - beta2) * gi * gi;
                            t[(i, j)] -= learning_rate * (m1[(i, j)] / c1) / ((m2[(i, j)] / c2).sqrt() + epsilon);
                        }
                    }
                }
            }
        }
    }
    // A converged loop broke before updating, so its last state was recorded above.
    if stop == StopReason::MaxIter {
        record(end, theta);
    }
    // A converged loop evaluated its final state without stepping from it.
    let n_iter = history.len() - usize::from(stop == StopReason::Converged);
    let state = TrainState { first_moment, second_moment, adam_origin };
    Ok((TrainInfo { objective_history: history, n_iter, final_objective: f64::NAN, stop }, state))
}

/// The finite KAE head for `params`.
pub(crate) fn finite_head<'a>(params: &KaeValidParams, target: MatRef<'a, f64>) -> Head<'a> {
    match params.last_layer {
        LastLayer::Gradient => Head::FiniteGradient { target },
        LastLayer::Krr => Head::FiniteKrr { target, phi: None },
    }
}
