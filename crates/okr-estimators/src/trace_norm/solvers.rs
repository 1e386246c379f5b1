//! Solvers of the trace-norm surrogate problem on Gram matrices (spec 1.6-1.9).
//!
//! All three work on $K_x, K_y$ `(n, n)` only and return the factor
//! coefficients $M$ (input side) and $N$ (output side), `(n, r)`, with the
//! prediction weights $\alpha(x) = N M^\top v_x$.
//!
//! Objective (12), weight $\lambda$ in the factorized convention:
//! $$J(M, N) = \tfrac1n \operatorname{tr}[(N M^\top K_x - I)^\top K_y (N M^\top K_x - I)] +
//!   \lambda [\operatorname{tr}(M^\top K_x M) + \operatorname{tr}(N^\top K_y N)],$$
//! whose minimum equals the minimum of the convex problem (11)
//! $\frac1n \sum_i \|G\phi(x_i) - \psi(y_i)\|^2 + 2\lambda \|G\|_*$ once $r \ge \operatorname{rank}\hat G$.
// Index loops mirror the matrix formulas (pairs a < b, entries (i, j)).
#![allow(clippy::needless_range_loop)]

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use okr_linalg::{eigh, thin_svd};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};
use okr_surrogate::progress;

/// Why an iterative solver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    /// Relative decrease below tolerance for 5 consecutive iterations.
    RelativeDecrease,
    /// Gradient norm below `grad_tol` times the initial one.
    GradientNorm,
    /// The iteration budget was used up.
    MaxIter,
    /// The line search step fell below $10^{-16}$ (at machine precision).
    StepUnderflow,
}

/// Step rule of the factorized gradient descent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum StepRule {
    /// Backtracking Armijo from `eta0`: accept $\eta$ if
    /// $J(\eta) \le J - \tfrac12 \eta \|\nabla\|^2_{HS}$, else halve; grow by 1.5 after each accepted step.
    Armijo {
        /// First trial step.
        eta0: f64,
    },
    /// A fixed step (no line search; for tests against explicit-feature descent).
    Fixed(f64),
}

/// Options of the iterative solvers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SolverOptions {
    /// Iteration budget.
    pub max_iter: usize,
    /// Relative objective decrease that counts as stalled (5 in a row stop GD; 1 stops ALS).
    pub rel_tol: f64,
    /// Stop when $\|\nabla\|_{HS} < $ `grad_tol` $\cdot \|\nabla_0\|_{HS}$ (GD only).
    pub grad_tol: f64,
    /// Step rule (GD only).
    pub step: StepRule,
}

impl Default for SolverOptions {
    fn default() -> Self {
        Self { max_iter: 10_000, rel_tol: 1e-8, grad_tol: 1e-6, step: StepRule::Armijo { eta0: 1.0 } }
    }
}

/// Factors found by a solver, with its trace.
#[derive(Debug, Clone)]
pub struct FactorizedSolution {
    /// Input-side coefficients $M$ `(n, r)`: $B = \Phi^* M$.
    pub m: Mat<f64>,
    /// Output-side coefficients $N$ `(n, r)`: $A = \Psi^* N$.
    pub n: Mat<f64>,
    /// Final objective $J$ (12).
    pub objective: f64,
    /// Iterations run.
    pub n_iter: usize,
    /// Why the solver stopped.
    pub stop: StopReason,
    /// What gradient descent needs to continue exactly where it stopped
    /// ([`factorized_gd_from`]); `None` for the other solvers.
    pub gd_state: Option<GdState>,
}

impl FactorizedSolution {
    /// A starting point for [`factorized_gd_from`] / [`factorized_als_from`]
    /// from given factors (no iteration history: gradient descent starts its
    /// step size and gradient reference afresh).
    pub fn from_factors(m: Mat<f64>, n: Mat<f64>) -> Self {
        Self { m, n, objective: f64::NAN, n_iter: 0, stop: StopReason::MaxIter, gd_state: None }
    }
}

/// The running state of [`factorized_gd`] at its last iteration: the kernel
/// products $K_xM$, $K_yN$ as updated (not recomputed), the objective, the
/// step size, the reference gradient norm and the stall count. With it,
/// $k$ iterations continued for $k$ more equal $2k$ iterations bit for bit.
#[derive(Debug, Clone)]
pub struct GdState {
    kxm: Mat<f64>,
    kyn: Mat<f64>,
    objective: f64,
    eta: f64,
    g0: f64,
    stalled: usize,
}

fn trace(a: MatRef<'_, f64>) -> f64 {
    (0..a.nrows().min(a.ncols())).map(|i| a[(i, i)]).sum()
}

fn frob_dot(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let mut s = 0.0;
    for j in 0..a.ncols() {
        for (x, y) in a.col(j).iter().zip(b.col(j).iter()) {
            s += x * y;
        }
    }
    s
}

/// `a + c * b`, elementwise.
fn axpy(a: MatRef<'_, f64>, c: f64, b: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[(i, j)] + c * b[(i, j)])
}

fn check_grams(kx: MatRef<'_, f64>, ky: MatRef<'_, f64>, rank: usize) -> Result<usize> {
    let n = kx.nrows();
    if n == 0 {
        return Err(Error::Empty { what: "training set" });
    }
    for (what, k) in [("input Gram columns", kx), ("output Gram rows", ky), ("output Gram columns", ky)] {
        let got = if what.ends_with("rows") { k.nrows() } else { k.ncols() };
        if got != n {
            return Err(Error::ShapeMismatch { what, expected: n, got });
        }
    }
    if rank == 0 {
        return Err(Error::InvalidParameter { name: "rank", value: "0".into(), expected: "an integer >= 1" });
    }
    Ok(n)
}

fn check_lambda(lambda: f64) -> Result<()> {
    if lambda.is_finite() && lambda > 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidParameter { name: "lambda", value: format!("{lambda}"), expected: "a finite number > 0" })
    }
}

/// The objective (12) from the kernel products $K_xM$, $K_yN$ only:
/// $J = \frac1n[\operatorname{tr}(S_x Q_y) - 2\langle K_xM, K_yN\rangle_F + \operatorname{tr}K_y] +
///   \lambda[\operatorname{tr}(M^\top K_x M) + \operatorname{tr} Q_y]$,
/// $S_x = (K_xM)^\top K_xM$, $Q_y = N^\top K_y N$. Costs $O(n r^2)$.
fn objective_from(
    m: MatRef<'_, f64>,
    nn: MatRef<'_, f64>,
    kxm: MatRef<'_, f64>,
    kyn: MatRef<'_, f64>,
    tr_ky: f64,
    lambda: f64,
) -> f64 {
    let n = m.nrows() as f64;
    let sx = kxm.transpose() * kxm;
    let qy = nn.transpose() * kyn;
    let fit = (frob_dot(sx.as_ref(), qy.as_ref()) - 2.0 * frob_dot(kxm, kyn) + tr_ky) / n;
    fit + lambda * (frob_dot(m, kxm) + trace(qy.as_ref()))
}

/// The objective (12) $J(M, N)$ with weight `lambda`.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::factorized_objective;
/// let k = Mat::<f64>::identity(3, 3);
/// let zero = Mat::<f64>::zeros(3, 1);
/// // At M = N = 0 only the data term tr(K_y)/n = 1 remains.
/// assert!((factorized_objective(k.as_ref(), k.as_ref(), zero.as_ref(), zero.as_ref(), 0.1) - 1.0).abs() < 1e-15);
/// ```
///
/// # Panics
/// If the shapes disagree (`kx`, `ky` `(n, n)`, `m`, `nn` `(n, r)`).
#[track_caller]
pub fn factorized_objective(
    kx: MatRef<'_, f64>,
    ky: MatRef<'_, f64>,
    m: MatRef<'_, f64>,
    nn: MatRef<'_, f64>,
    lambda: f64,
) -> f64 {
    assert!(kx.nrows() == m.nrows() && ky.nrows() == nn.nrows() && m.ncols() == nn.ncols(), "factor shapes");
    let kxm = kx * m;
    let kyn = ky * nn;
    objective_from(m, nn, kxm.as_ref(), kyn.as_ref(), trace(ky), lambda)
}

/// The scaled random initialization of spec 1.7: i.i.d. $N(0, 1)$
/// coefficients, each column rescaled so that the factor columns
/// ($\Psi^*N_{:c}$, $\Phi^*M_{:c}$) have HS norm $\tau = \epsilon (\operatorname{tr}K_y/\operatorname{tr}K_x)^{1/4}$.
/// Never zero: $M = N = 0$ is a saddle point.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::scaled_init;
/// let k = Mat::<f64>::identity(4, 4);
/// let (m, n) = scaled_init(k.as_ref(), k.as_ref(), 2, 0.05, 0);
/// assert!(((m.col(0).norm_l2()) - 0.05).abs() < 1e-12 && (n.col(1).norm_l2() - 0.05).abs() < 1e-12);
/// ```
pub fn scaled_init(kx: MatRef<'_, f64>, ky: MatRef<'_, f64>, rank: usize, eps: f64, seed: u64) -> (Mat<f64>, Mat<f64>) {
    let n = kx.nrows();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Box-Muller: two uniforms -> one standard normal (the second is dropped, simplicity over speed here).
    let mut normal = || {
        let u1: f64 = 1.0 - rng.random::<f64>();
        let u2: f64 = rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let mut m = Mat::from_fn(n, rank, |_, _| normal());
    let mut nn = Mat::from_fn(n, rank, |_, _| normal());
    let (tx, ty) = (trace(kx).max(f64::MIN_POSITIVE), trace(ky).max(f64::MIN_POSITIVE));
    let tau = eps * (ty / tx).powf(0.25);
    for (coef, k) in [(&mut m, kx), (&mut nn, ky)] {
        let kc = k * coef.as_ref();
        for c in 0..rank {
            let sq: f64 = coef.col(c).iter().zip(kc.col(c).iter()).map(|(a, b)| a * b).sum();
            if sq > 0.0 {
                let s = tau / sq.sqrt();
                coef.col_mut(c).iter_mut().for_each(|v| *v *= s);
            }
        }
    }
    (m, nn)
}

/// Factorized gradient descent on (12) with the functional gradients of spec 1.6
/// (Algorithm 1 corrected: $\lambda_{\text{alg1}} = n\lambda$, $\nu = 2\eta$),
/// from the factors `(m0, n0)`:
/// $$G_N = \tfrac2n(N S_x - K_xM) + 2\lambda N,\qquad G_M = \tfrac2n(K_xM Q_y - K_yN) + 2\lambda M,$$
/// $M \leftarrow M - \eta G_M$, $N \leftarrow N - \eta G_N$ simultaneously. Per
/// iteration two $(n, n)(n, r)$ products ($K_xG_M$, $K_yG_N$); every line-search
/// trial is $O(nr^2)$ because $K_xM(\eta)$ is linear in $\eta$. $K_xM$, $K_yN$
/// are recomputed exactly every 100 iterations against drift.
///
/// # Errors
/// [`Error::ShapeMismatch`], [`Error::Empty`], [`Error::InvalidParameter`] for
/// `lambda <= 0` or a non-positive step.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::{factorized_gd, scaled_init, SolverOptions};
/// let x = Mat::from_fn(10, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0);
/// let k = &x * x.transpose();
/// let (m0, n0) = scaled_init(k.as_ref(), k.as_ref(), 2, 0.05, 0);
/// let sol = factorized_gd(k.as_ref(), k.as_ref(), 1e-2, m0, n0, &SolverOptions::default())?;
/// assert!(sol.objective < 0.5 * (0..10).map(|i| k[(i, i)]).sum::<f64>() / 10.0);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[allow(non_snake_case)]
pub fn factorized_gd(
    kx: MatRef<'_, f64>,
    ky: MatRef<'_, f64>,
    lambda: f64,
    m0: Mat<f64>,
    n0: Mat<f64>,
    opts: &SolverOptions,
) -> Result<FactorizedSolution> {
    gd_run(kx, ky, lambda, FactorizedSolution::from_factors(m0, n0), opts)
}

/// Continues [`factorized_gd`] from `previous` for `opts.max_iter` more
/// iterations: from its factors and, when it came from gradient descent on
/// the same Gram matrices and `lambda`, its running state ([`GdState`]), so
/// that $k$ iterations then $k$ more equal $2k$ iterations exactly.
/// `n_iter` counts the iterations of both runs.
///
/// # Errors
/// As [`factorized_gd`].
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::{factorized_gd, factorized_gd_from, scaled_init, SolverOptions};
/// let x = Mat::from_fn(10, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0);
/// let k = &x * x.transpose();
/// let (m0, n0) = scaled_init(k.as_ref(), k.as_ref(), 2, 0.05, 0);
/// let opts = |max_iter| SolverOptions { max_iter, rel_tol: 1e-300, grad_tol: 0.0, ..Default::default() };
/// let once = factorized_gd(k.as_ref(), k.as_ref(), 1e-2, m0.clone(), n0.clone(), &opts(20))?;
/// let half = factorized_gd(k.as_ref(), k.as_ref(), 1e-2, m0, n0, &opts(10))?;
/// let twice = factorized_gd_from(k.as_ref(), k.as_ref(), 1e-2, half, &opts(10))?;
/// assert_eq!((twice.m, twice.n_iter), (once.m, 20));
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub fn factorized_gd_from(
    kx: MatRef<'_, f64>,
    ky: MatRef<'_, f64>,
    lambda: f64,
    previous: FactorizedSolution,
    opts: &SolverOptions,
) -> Result<FactorizedSolution> {
    gd_run(kx, ky, lambda, previous, opts)
}

#[allow(non_snake_case)]
fn gd_run(
    kx: MatRef<'_, f64>,
    ky: MatRef<'_, f64>,
    lambda: f64,
    start: FactorizedSolution,
    opts: &SolverOptions,
) -> Result<FactorizedSolution> {
    let FactorizedSolution { m: m0, n: n0, n_iter: first, gd_state, .. } = start;
    let n = check_grams(kx, ky, m0.ncols().max(1))?;
    check_lambda(lambda)?;
    if m0.nrows() != n || n0.nrows() != n || n0.ncols() != m0.ncols() {
        return Err(Error::ShapeMismatch { what: "initial factor rows", expected: n, got: m0.nrows() });
    }
    let eta0 = match opts.step {
        StepRule::Armijo { eta0 } | StepRule::Fixed(eta0) if eta0.is_finite() && eta0 > 0.0 => eta0,
        _ => {
            return Err(Error::InvalidParameter {
                name: "step",
                value: format!("{:?}", opts.step),
                expected: "a finite step > 0",
            });
        }
    };
    let nf = n as f64;
    let tr_ky = trace(ky);
    let par = Par::rayon(0);
    let (mut m, mut nn) = (m0, n0);
    let r = m.ncols();
    // A previous run's state continues it exactly; without one (or with
    // factors of another shape) the products, step and reference restart.
    let resume = gd_state.filter(|s| s.kxm.nrows() == n && s.kxm.ncols() == r && s.kyn.ncols() == r);
    let (mut kxm, mut kyn, mut j, mut g0, mut stalled, mut eta) = match resume {
        Some(s) => {
            let eta = if matches!(opts.step, StepRule::Fixed(_)) { eta0 } else { s.eta };
            (s.kxm, s.kyn, s.objective, Some(s.g0).filter(|g| g.is_finite()), s.stalled, eta)
        }
        None => {
            let kxm = kx * &m;
            let kyn = ky * &nn;
            let j = objective_from(m.as_ref(), nn.as_ref(), kxm.as_ref(), kyn.as_ref(), tr_ky, lambda);
            (kxm, kyn, j, None, 0, eta0)
        }
    };
    let mut p = Mat::<f64>::zeros(n, r);
    let mut q = Mat::<f64>::zeros(n, r);
    // The exact objective at the returned factors, and the state to continue from.
    let finish = |m: Mat<f64>, nn: Mat<f64>, state: GdState, n_iter: usize, stop: StopReason, exact: bool| {
        let objective = if exact {
            objective_from(m.as_ref(), nn.as_ref(), (kx * &m).as_ref(), (ky * &nn).as_ref(), tr_ky, lambda)
        } else {
            state.objective
        };
        FactorizedSolution { m, n: nn, objective, n_iter, stop, gd_state: Some(state) }
    };
    for it in first..first.saturating_add(opts.max_iter) {
        let sx = kxm.transpose() * &kxm;
        let qy = nn.transpose() * &kyn;
        // G_N = (2/n)(N S_x - K_xM) + 2 lambda N ; G_M = (2/n)(K_xM Q_y - K_yN) + 2 lambda M
        let nsx = &nn * &sx;
        let gn = Mat::from_fn(n, r, |i, c| 2.0 / nf * (nsx[(i, c)] - kxm[(i, c)]) + 2.0 * lambda * nn[(i, c)]);
        let kxmq = &kxm * &qy;
        let gm = Mat::from_fn(n, r, |i, c| 2.0 / nf * (kxmq[(i, c)] - kyn[(i, c)]) + 2.0 * lambda * m[(i, c)]);
        matmul(p.as_mut(), Accum::Replace, kx, gm.as_ref(), 1.0, par);
        matmul(q.as_mut(), Accum::Replace, ky, gn.as_ref(), 1.0, par);
        let g2 = frob_dot(gm.as_ref(), p.as_ref()) + frob_dot(gn.as_ref(), q.as_ref());
        let g0v = *g0.get_or_insert(g2.max(0.0).sqrt());
        if g2.max(0.0).sqrt() <= opts.grad_tol * g0v || g2 == 0.0 {
            let state = GdState { kxm, kyn, objective: j, eta, g0: g0v, stalled };
            return Ok(finish(m, nn, state, it, StopReason::GradientNorm, false));
        }
        let (m1, n1, kxm1, kyn1, j1) = loop {
            let m1 = axpy(m.as_ref(), -eta, gm.as_ref());
            let n1 = axpy(nn.as_ref(), -eta, gn.as_ref());
            let kxm1 = axpy(kxm.as_ref(), -eta, p.as_ref());
            let kyn1 = axpy(kyn.as_ref(), -eta, q.as_ref());
            let j1 = objective_from(m1.as_ref(), n1.as_ref(), kxm1.as_ref(), kyn1.as_ref(), tr_ky, lambda);
            match opts.step {
                StepRule::Fixed(_) => break (m1, n1, kxm1, kyn1, j1),
                StepRule::Armijo { .. } => {
                    if j1 <= j - 0.5 * eta * g2 {
                        break (m1, n1, kxm1, kyn1, j1);
                    }
                    eta *= 0.5;
                    if eta < 1e-16 {
                        let state = GdState { kxm, kyn, objective: j, eta, g0: g0v, stalled };
                        return Ok(finish(m, nn, state, it, StopReason::StepUnderflow, false));
                    }
                }
            }
        };
        (m, nn, kxm, kyn) = (m1, n1, kxm1, kyn1);
        if matches!(opts.step, StepRule::Armijo { .. }) {
            eta *= 1.5;
        }
        if (it + 1) % 100 == 0 {
            matmul(kxm.as_mut(), Accum::Replace, kx, m.as_ref(), 1.0, par);
            matmul(kyn.as_mut(), Accum::Replace, ky, nn.as_ref(), 1.0, par);
        }
        let rel = (j - j1).abs() / j.abs().max(f64::MIN_POSITIVE);
        j = j1;
        if progress::observed() {
            progress::report(it + 1, first.saturating_add(opts.max_iter), &format!("trace-norm gd, objective {j:.6e}"));
        }
        stalled = if rel < opts.rel_tol { stalled + 1 } else { 0 };
        if stalled >= 5 {
            let state = GdState { kxm, kyn, objective: j, eta, g0: g0v, stalled };
            return Ok(finish(m, nn, state, it + 1, StopReason::RelativeDecrease, true));
        }
    }
    let g0 = g0.unwrap_or(f64::NAN);
    let state = GdState { kxm, kyn, objective: j, eta, g0, stalled };
    Ok(finish(m, nn, state, first.saturating_add(opts.max_iter), StopReason::MaxIter, true))
}

/// Alternating least squares on (12) (spec 1.8), from `(m0, n0)`; each block
/// step is exact, so $J$ never increases.
///
/// - N-step: $N = K_xM\,(M^\top K_x^2 M + n\lambda I_r)^{-1}$;
/// - M-step: the Sylvester equation $K_x M Q + n\lambda M = K_y N$, $Q = N^\top K_y N$,
///   solved in the eigenbases of $K_x$ (one $O(n^3)$ eigendecomposition) and $Q$.
///
/// Stops when the relative decrease of $J$ falls below `opts.rel_tol` or after `opts.max_iter` sweeps.
///
/// # Errors
/// As [`factorized_gd`], and [`Error::Linalg`] if an eigendecomposition fails.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::{factorized_als, scaled_init, SolverOptions};
/// let x = Mat::from_fn(10, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0);
/// let k = &x * x.transpose();
/// let (m0, n0) = scaled_init(k.as_ref(), k.as_ref(), 3, 0.05, 0);
/// let sol = factorized_als(k.as_ref(), k.as_ref(), 1e-2, m0, n0, &SolverOptions::default())?;
/// assert!(sol.objective.is_finite());
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub fn factorized_als(
    kx: MatRef<'_, f64>,
    ky: MatRef<'_, f64>,
    lambda: f64,
    m0: Mat<f64>,
    n0: Mat<f64>,
    opts: &SolverOptions,
) -> Result<FactorizedSolution> {
    factorized_als_from(kx, ky, lambda, FactorizedSolution::from_factors(m0, n0), opts)
}

/// Continues [`factorized_als`] from `previous` for `opts.max_iter` more
/// sweeps. A sweep depends on $M$ alone, so $k$ sweeps then $k$ more equal
/// $2k$ sweeps exactly; `n_iter` counts the sweeps of both runs.
///
/// # Errors
/// As [`factorized_als`].
pub fn factorized_als_from(
    kx: MatRef<'_, f64>,
    ky: MatRef<'_, f64>,
    lambda: f64,
    previous: FactorizedSolution,
    opts: &SolverOptions,
) -> Result<FactorizedSolution> {
    let FactorizedSolution { m: m0, n: n0, n_iter: first, .. } = previous;
    let n = check_grams(kx, ky, m0.ncols().max(1))?;
    check_lambda(lambda)?;
    if m0.nrows() != n || n0.nrows() != n || n0.ncols() != m0.ncols() {
        return Err(Error::ShapeMismatch { what: "initial factor rows", expected: n, got: m0.nrows() });
    }
    let nl = n as f64 * lambda;
    let ex = eigh(kx)?;
    let (sig, ux) = (ex.values().to_vec(), ex.vectors().to_owned());
    let r = m0.ncols();
    let (mut m, mut nn) = (m0, n0);
    let mut j = factorized_objective(kx, ky, m.as_ref(), nn.as_ref(), lambda);
    for it in 0..opts.max_iter {
        // N-step: (r x r) SPD solve.
        let kxm = kx * &m;
        let mut s = kxm.transpose() * &kxm;
        for i in 0..r {
            s[(i, i)] += nl;
        }
        let es = eigh(s.as_ref())?;
        let sinv = Mat::from_fn(r, r, |a, b| {
            (0..r).map(|k| es.vectors()[(a, k)] * es.vectors()[(b, k)] / es.values()[k]).sum::<f64>()
        });
        nn = &kxm * &sinv;
        // M-step: Sylvester in eigenbases.
        let kyn = ky * &nn;
        let qy = nn.transpose() * &kyn;
        let eq = eigh(qy.as_ref())?;
        let rhs = ux.transpose() * &kyn * eq.vectors();
        let mt = Mat::from_fn(n, r, |i, c| rhs[(i, c)] / (sig[i].max(0.0) * eq.values()[c].max(0.0) + nl));
        m = &ux * &mt * eq.vectors().transpose();
        let j1 = factorized_objective(kx, ky, m.as_ref(), nn.as_ref(), lambda);
        let rel = (j - j1).abs() / j.abs().max(f64::MIN_POSITIVE);
        j = j1;
        if progress::observed() {
            let total = first.saturating_add(opts.max_iter);
            progress::report(first + it + 1, total, &format!("trace-norm als, objective {j:.6e}"));
        }
        if rel < opts.rel_tol {
            return Ok(FactorizedSolution {
                m,
                n: nn,
                objective: j,
                n_iter: first + it + 1,
                stop: StopReason::RelativeDecrease,
                gd_state: None,
            });
        }
    }
    let n_iter = first.saturating_add(opts.max_iter);
    Ok(FactorizedSolution { m, n: nn, objective: j, n_iter, stop: StopReason::MaxIter, gd_state: None })
}

/// The minimizer of the convex problem (11) in the kernel-induced geometry (spec 1.9).
#[derive(Debug, Clone)]
pub struct ConvexSolution {
    /// $\Gamma$ `(p_y, p_x)`: $G$ in the orthonormal bases of the spans of the training features.
    pub gamma: Mat<f64>,
    /// Objective (11): $\frac1n\|F_x\Gamma^\top - F_y\|_F^2 + \lambda_{11}\|\Gamma\|_*$.
    pub objective: f64,
    /// Trace norm $\|\Gamma\|_* = \|G\|_*$.
    pub trace_norm: f64,
    /// Balanced factors of $W = N M^\top$ (rank of $\Gamma$ columns): $N = U_y\Sigma_y^{-1/2}U_\Gamma s^{1/2}$,
    /// $M = U_x\Sigma_x^{-1/2}V_\Gamma s^{1/2}$.
    pub factors: FactorizedSolution,
}

/// The eigen geometry of one Gram matrix: kept eigenvalues and vectors.
struct Geometry {
    sigma: Vec<f64>,
    u: Mat<f64>,
}

fn geometry(k: MatRef<'_, f64>, rtol: f64) -> Result<Geometry> {
    let e = eigh(k)?;
    let top = e.values().first().copied().unwrap_or(0.0).max(0.0);
    let p = e.values().iter().take_while(|&&v| v > rtol * top && v > 0.0).count();
    Ok(Geometry { sigma: e.values()[..p].to_vec(), u: e.vectors().subcols(0, p).to_owned() })
}

/// Exact solver of (11) with weight `lambda11` on $\|G\|_*$: FISTA on
/// $\Gamma \in \mathbb R^{p_y\times p_x}$, gradient $\frac2n(\Gamma\Sigma_x - C_{yx})$,
/// step $1/L$ with $L = \frac2n\sigma_{x,\max}$, prox = singular value soft
/// thresholding; stops when the relative objective change is below `tol` or
/// $\|\Delta\Gamma\|_F \le 10^{-9}\max(1, \|\Gamma\|_F)$. Eigenvalues below
/// $10^{-10}\cdot$max are dropped. The factorized problem with $\lambda$ has the
/// same optimum as this one with `lambda11` $= 2\lambda$.
///
/// # Errors
/// As [`factorized_gd`]; [`Error::Linalg`] if a decomposition fails.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::convex_trace_norm;
/// let x = Mat::from_fn(10, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0);
/// let k = &x * x.transpose();
/// let sol = convex_trace_norm(k.as_ref(), k.as_ref(), 1e-2, 1e-12, 100_000)?;
/// assert!(sol.trace_norm > 0.0);
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub fn convex_trace_norm(
    kx: MatRef<'_, f64>,
    ky: MatRef<'_, f64>,
    lambda11: f64,
    tol: f64,
    max_iter: usize,
) -> Result<ConvexSolution> {
    let n = check_grams(kx, ky, 1)?;
    check_lambda(lambda11)?;
    let nf = n as f64;
    let gx = geometry(kx, 1e-10)?;
    let gy = geometry(ky, 1e-10)?;
    let (px, py) = (gx.sigma.len(), gy.sigma.len());
    let tr_ky = trace(ky);
    if px == 0 || py == 0 {
        // G = 0 is optimal.
        let z = Mat::zeros(n, 1);
        let factors = FactorizedSolution {
            m: z.clone(),
            n: z,
            objective: tr_ky / nf,
            n_iter: 0,
            stop: StopReason::GradientNorm,
            gd_state: None,
        };
        return Ok(ConvexSolution { gamma: Mat::zeros(py, px), objective: tr_ky / nf, trace_norm: 0.0, factors });
    }
    let cross = gy.u.transpose() * &gx.u;
    let c = Mat::from_fn(py, px, |a, b| gy.sigma[a].sqrt() * cross[(a, b)] * gx.sigma[b].sqrt());
    let fit = fista_svt(&gx.sigma, c.as_ref(), tr_ky, n, lambda11, None, tol, max_iter)?;
    let (g, obj, nuc, iters) = (fit.gamma, fit.objective, fit.trace_norm, fit.n_iter);
    // Balanced factors from the SVD of Gamma.
    let svd = thin_svd(g.as_ref())?;
    let k = svd.s().iter().take_while(|&&v| v > 1e-14 * svd.s()[0].max(f64::MIN_POSITIVE)).count().max(1);
    let nn = &gy.u * Mat::from_fn(py, k, |a, j| svd.u()[(a, j)] * svd.s()[j].sqrt() / gy.sigma[a].sqrt());
    let m = &gx.u * Mat::from_fn(px, k, |b, j| svd.v()[(b, j)] * svd.s()[j].sqrt() / gx.sigma[b].sqrt());
    let factors = FactorizedSolution {
        m,
        n: nn,
        objective: obj,
        n_iter: iters,
        stop: StopReason::RelativeDecrease,
        gd_state: None,
    };
    Ok(ConvexSolution { gamma: g, objective: obj, trace_norm: nuc, factors })
}

/// The result of [`fista_svt`].
#[derive(Debug, Clone)]
pub struct FistaResult {
    /// The minimizer $\Gamma$ `(p_y, p_x)`.
    pub gamma: Mat<f64>,
    /// Objective value.
    pub objective: f64,
    /// $\|\Gamma\|_*$.
    pub trace_norm: f64,
    /// Iterations run.
    pub n_iter: usize,
}

/// FISTA with singular value soft thresholding for
/// $\min_\Gamma \frac1n(\operatorname{tr}(\Gamma\Sigma_x\Gamma^\top) - 2\langle\Gamma, C\rangle + \mathrm{tr}_y) + \lambda_{11}\|\Gamma\|_*$,
/// i.e. $\frac1n\|F_x\Gamma^\top - F_y\|_F^2 + \lambda_{11}\|\Gamma\|_*$ with
/// $F_x^\top F_x = \operatorname{diag}(\sigma_x)$ (descending, positive), $C = F_y^\top F_x$ `(p_y, p_x)`
/// and $\mathrm{tr}_y = \|F_y\|_F^2$. $F_y$ can be any output coordinates (an
/// orthonormal basis of the span of the $\psi(y_i)$, or explicit finite
/// features). Step $1/L$, $L = \frac2n\sigma_{x,0}$; stops when the relative
/// objective change is below `tol` or $\|\Delta\Gamma\|_F \le 10^{-9}\max(1,\|\Gamma\|_F)$.
/// `warm` starts from a previous $\Gamma$ (a path over $\lambda_{11}$).
///
/// # Errors
/// [`Error::Linalg`] if an SVD fails; [`Error::ShapeMismatch`] when `c` has not `sigma_x.len()` columns.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::fista_svt;
/// // Whitened (sigma = s), so the optimum is SVT_{n lambda / (2 s)}(C / s).
/// let c = Mat::from_fn(2, 2, |i, j| if i == j { [6.0, 1.0][i] } else { 0.0 });
/// let r = fista_svt(&[2.0, 2.0], c.as_ref(), 10.0, 4, 1.0, None, 1e-14, 10_000)?;
/// assert!((r.gamma[(0, 0)] - 2.0).abs() < 1e-8 && r.gamma[(1, 1)].abs() < 1e-8);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn fista_svt(
    sigma_x: &[f64],
    c: MatRef<'_, f64>,
    tr_y: f64,
    n: usize,
    lambda11: f64,
    warm: Option<&Mat<f64>>,
    tol: f64,
    max_iter: usize,
) -> Result<FistaResult> {
    let (py, px) = (c.nrows(), c.ncols());
    if sigma_x.len() != px {
        return Err(Error::ShapeMismatch {
            what: "columns of C vs input eigenvalues",
            expected: sigma_x.len(),
            got: px,
        });
    }
    check_lambda(lambda11)?;
    let nf = n as f64;
    let lip = 2.0 / nf * sigma_x.first().copied().unwrap_or(1.0).max(f64::MIN_POSITIVE);
    let t = 1.0 / lip;
    let objective = |g: MatRef<'_, f64>, nuclear: f64| {
        let mut quad = 0.0;
        for b in 0..px {
            for a in 0..py {
                quad += g[(a, b)] * g[(a, b)] * sigma_x[b] - 2.0 * g[(a, b)] * c[(a, b)];
            }
        }
        (quad + tr_y) / nf + lambda11 * nuclear
    };
    let svt = |z: Mat<f64>| -> Result<(Mat<f64>, f64)> {
        let svd = thin_svd(z.as_ref())?;
        let s: Vec<f64> = svd.s().iter().map(|&v| (v - t * lambda11).max(0.0)).collect();
        let k = s.iter().take_while(|&&v| v > 0.0).count();
        let mut out = Mat::zeros(py, px);
        if k > 0 {
            let us = Mat::from_fn(py, k, |a, j| svd.u()[(a, j)] * s[j]);
            matmul(out.as_mut(), Accum::Replace, us.as_ref(), svd.v().subcols(0, k).transpose(), 1.0, Par::Seq);
        }
        Ok((out, s.iter().sum()))
    };
    let mut g = match warm {
        Some(w) if w.nrows() == py && w.ncols() == px => w.clone(),
        _ => Mat::<f64>::zeros(py, px),
    };
    let mut nuc = if warm.is_some() { thin_svd(g.as_ref())?.s().iter().sum() } else { 0.0 };
    let mut y = g.clone();
    let mut tk = 1.0f64;
    let mut obj = objective(g.as_ref(), nuc);
    let mut iters = max_iter;
    for it in 0..max_iter {
        let step = Mat::from_fn(py, px, |a, b| y[(a, b)] - t * 2.0 / nf * (y[(a, b)] * sigma_x[b] - c[(a, b)]));
        let (g1, nuc1) = svt(step)?;
        let obj1 = objective(g1.as_ref(), nuc1);
        let tk1 = (1.0 + (1.0 + 4.0 * tk * tk).sqrt()) / 2.0;
        let mom = (tk - 1.0) / tk1;
        y = Mat::from_fn(py, px, |a, b| g1[(a, b)] + mom * (g1[(a, b)] - g[(a, b)]));
        let dg = (&g1 - &g).norm_l2();
        let rel = (obj - obj1).abs() / obj.abs().max(f64::MIN_POSITIVE);
        (g, nuc, obj, tk) = (g1, nuc1, obj1, tk1);
        if it > 0 && (rel < tol || dg <= 1e-9 * g.norm_l2().max(1.0)) {
            iters = it + 1;
            break;
        }
    }
    Ok(FistaResult { gamma: g, objective: obj, trace_norm: nuc, n_iter: iters })
}
