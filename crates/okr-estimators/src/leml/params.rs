use okr_linalg::{CgParams, TronParams};
use serde::{Deserialize, Serialize};

use super::loss::Loss;
use super::objective::StepSolver;
use crate::core::checks;
use crate::{Error, ParamGuard, Result};

/// Validated parameters of [`Leml`](super::Leml): the only type that can fit.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `rank` | `10` | `k`, columns of `W` `(d, k)` and `H` `(L, k)` | `>= 1` |
/// | `lambda` | `0.1` | $\lambda$ in $\sum_\Omega \ell + \tfrac\lambda2(\lVert W\rVert_F^2 + \lVert H\rVert_F^2)$ | `> 0` |
/// | `loss` | `Squared` | [`Loss`] | |
/// | `max_iter` | `10` | alternating iterations (one W-step then one H-step each) | `1..=1000000` |
/// | `tol` | none | stop early once an iteration lowers $J_\Omega$ by at most `tol` (relative); none runs `max_iter` iterations, as the paper | `[0, 1)` |
/// | `cg_tol` | `1e-3` | squared loss: CG stops at $\lVert r\rVert \le$ `cg_tol` $\lVert\nabla g\rVert$ | `(0, 1)` |
/// | `max_cg_iter` | `20` | Hessian-vector products per CG solve / TRON Newton step | `>= 1` |
/// | `tron_eps` | `0.01` | logistic, squared hinge: TRON stops at $\lVert\nabla\rVert \le$ `tron_eps` $\lVert\nabla_0\rVert$ | `(0, 1)` |
/// | `tron_max_iter` | `5` | TRON Newton steps per W- or H-step | `>= 1` |
/// | `gram` | `true` | full labels, squared loss: use $X^\top X$ for the W-step when it is cheaper | |
/// | `seed` | `0` | initialisation ($W = 0$, $H \sim U[0, 1)$) | any |
///
/// **Convention.** The squared loss is $\tfrac12 (y - z)^2$. The authors' code
/// minimises $C \sum_\Omega \ell + \tfrac12(\lVert W\rVert^2 + \lVert H\rVert^2)$ with
/// $C = 1/\lambda_{code}$ and squared loss $(y - z)^2$, so
/// $\lambda = \lambda_{code}$ for logistic and squared hinge, and
/// $\lambda = \lambda_{code} / 2$ for the squared loss.
///
/// # Example
/// ```
/// use okr_estimators::leml::{Leml, Loss};
/// use okr_estimators::ParamGuard;
/// let p = Leml::params().rank(8).lambda(1.0).loss(Loss::Logistic).check()?;
/// assert_eq!((p.rank(), p.lambda()), (8, 1.0));
/// assert!(Leml::params().lambda(0.0).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LemlValidParams {
    pub(crate) rank: usize,
    pub(crate) lambda: f64,
    pub(crate) loss: Loss,
    pub(crate) max_iter: usize,
    pub(crate) tol: Option<f64>,
    pub(crate) cg_tol: f64,
    pub(crate) max_cg_iter: usize,
    pub(crate) tron_eps: f64,
    pub(crate) tron_max_iter: usize,
    pub(crate) gram: bool,
    pub(crate) seed: u64,
}

impl Default for LemlValidParams {
    fn default() -> Self {
        Self {
            rank: 10,
            lambda: 0.1,
            loss: Loss::Squared,
            max_iter: 10,
            tol: None,
            cg_tol: 1e-3,
            max_cg_iter: 20,
            tron_eps: 1e-2,
            tron_max_iter: 5,
            gram: true,
            seed: 0,
        }
    }
}

impl LemlValidParams {
    /// The rank `k`.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The regularisation $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// The loss.
    pub fn loss(&self) -> Loss {
        self.loss
    }
    /// Alternating iterations.
    pub fn max_iter(&self) -> usize {
        self.max_iter
    }
    /// The convergence tolerance, if any.
    pub fn tol(&self) -> Option<f64> {
        self.tol
    }
    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub(crate) fn solver(&self) -> StepSolver {
        StepSolver {
            cg: CgParams::default().tol(self.cg_tol).max_iter(self.max_cg_iter),
            tron: TronParams::default().eps(self.tron_eps).max_iter(self.tron_max_iter).max_cg_iter(self.max_cg_iter),
        }
    }
}

/// Parameters of [`Leml`](super::Leml) (builder; see [`LemlValidParams`] for the table).
///
/// # Example
/// ```
/// let p = okr_estimators::leml::Leml::params().rank(4).max_iter(3).seed(7);
/// # let _ = p;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LemlParams(pub(crate) LemlValidParams);

impl LemlParams {
    /// Sets the rank `k`.
    pub fn rank(mut self, rank: usize) -> Self {
        self.0.rank = rank;
        self
    }
    /// Sets $\lambda$.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.0.lambda = lambda;
        self
    }
    /// Sets the loss.
    pub fn loss(mut self, loss: Loss) -> Self {
        self.0.loss = loss;
        self
    }
    /// Sets the number of alternating iterations.
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.0.max_iter = max_iter;
        self
    }
    /// Stops once an iteration lowers the objective by at most `tol` (relative).
    pub fn tol(mut self, tol: f64) -> Self {
        self.0.tol = Some(tol);
        self
    }
    /// Sets the relative CG tolerance of squared-loss steps.
    pub fn cg_tol(mut self, cg_tol: f64) -> Self {
        self.0.cg_tol = cg_tol;
        self
    }
    /// Sets the Hessian-vector products allowed per CG solve or Newton step.
    pub fn max_cg_iter(mut self, max_cg_iter: usize) -> Self {
        self.0.max_cg_iter = max_cg_iter;
        self
    }
    /// Sets TRON's relative gradient tolerance.
    pub fn tron_eps(mut self, tron_eps: f64) -> Self {
        self.0.tron_eps = tron_eps;
        self
    }
    /// Sets TRON's Newton steps per subproblem.
    pub fn tron_max_iter(mut self, tron_max_iter: usize) -> Self {
        self.0.tron_max_iter = tron_max_iter;
        self
    }
    /// Allows (`true`) or forbids the Gram-matrix W-step.
    pub fn gram(mut self, gram: bool) -> Self {
        self.0.gram = gram;
        self
    }
    /// Sets the seed of the initialisation.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
}

pub(crate) fn check_solver(cg_tol: f64, max_cg_iter: usize, tron_eps: f64, tron_max_iter: usize) -> Result<()> {
    checks::open_fraction("cg_tol", cg_tol)?;
    checks::at_least_one("max_cg_iter", max_cg_iter)?;
    checks::open_fraction("tron_eps", tron_eps)?;
    checks::at_least_one("tron_max_iter", tron_max_iter)
}

/// Largest `max_iter` (each iteration keeps one history entry).
pub const MAX_ITER: usize = 1_000_000;

impl ParamGuard for LemlParams {
    type Checked = LemlValidParams;
    type Error = Error;

    fn check_ref(&self) -> Result<&LemlValidParams> {
        let p = &self.0;
        checks::at_least_one("rank", p.rank)?;
        checks::positive("lambda", p.lambda)?;
        checks::at_least_one("max_iter", p.max_iter)?;
        // One history entry per iteration: bounded, and beyond any run that converges.
        checks::at_most("max_iter", p.max_iter, MAX_ITER, "at most 1000000 alternating iterations")?;
        if let Some(tol) = p.tol {
            checks::fraction("tol", tol)?;
        }
        check_solver(p.cg_tol, p.max_cg_iter, p.tron_eps, p.tron_max_iter)?;
        Ok(p)
    }

    fn check(self) -> Result<LemlValidParams> {
        self.check_ref()?;
        Ok(self.0)
    }
}
