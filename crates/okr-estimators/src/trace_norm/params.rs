use serde::{Deserialize, Serialize};

use super::solvers::{SolverOptions, StepRule};
use crate::core::checks;
use crate::{Error, ParamGuard, Result};

/// Which solver fits the trace-norm estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TraceNormSolver {
    /// Factorized gradient descent with Armijo backtracking (Algorithm 1
    /// corrected, spec 1.6-1.7): $O(n^2 r)$ per iteration, no decomposition.
    GradientDescent,
    /// Alternating least squares on the same factorization (one $O(n^3)$ eigendecomposition).
    Als,
    /// The exact convex solver (FISTA with singular value soft thresholding in
    /// the kernel geometry, two $O(n^3)$ eigendecompositions); `rank` is ignored.
    Convex,
}

impl std::str::FromStr for TraceNormSolver {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "gd" => Ok(Self::GradientDescent),
            "als" => Ok(Self::Als),
            "convex" => Ok(Self::Convex),
            other => Err(Error::InvalidParameter {
                name: "solver",
                value: other.to_string(),
                expected: "one of gd, als, convex",
            }),
        }
    }
}

/// Validated trace-norm (LR-SELF) hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `lambda` | `1e-3` | weight of $\|A\|^2_{HS} + \|B\|^2_{HS}$ in (12), i.e. $2\lambda\|G\|_*$ in (11) | `(0, inf)` |
/// | `rank` | `10` | number of factor columns $r$ (GD, ALS) | `[1, inf)` |
/// | `solver` | `GradientDescent` | [`TraceNormSolver`] | |
/// | `max_iter` | `10000` | iteration budget | `[1, inf)` |
/// | `tol` | `1e-8` | relative objective decrease that counts as converged | `(0, 1)` |
/// | `init_scale` | `0.05` | $\epsilon$ of the scaled random initialization | `(0, inf)` |
/// | `seed` | `0` | seed of the initialization | |
///
/// Objective (12): $\frac1n\sum_i\|AB^*\phi(x_i) - \psi(y_i)\|^2 + \lambda(\|A\|^2_{HS} + \|B\|^2_{HS})$.
/// Conversions: the convex form (11) has weight $2\lambda$ on $\|G\|_*$; the
/// paper's printed Algorithm 1 (no $1/n$, halved penalty) has
/// $\lambda_{\text{alg1}} = n\lambda$ and step $\nu = 2\eta$.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceNormValidParams<KX, KY> {
    pub(crate) lambda: f64,
    pub(crate) rank: usize,
    pub(crate) solver: TraceNormSolver,
    pub(crate) max_iter: usize,
    pub(crate) tol: f64,
    pub(crate) init_scale: f64,
    pub(crate) seed: u64,
    pub(crate) input_kernel: KX,
    pub(crate) output_kernel: KY,
}

impl<KX, KY> TraceNormValidParams<KX, KY> {
    /// $\lambda$ of (12).
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// Factor rank $r$.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The solver.
    pub fn solver(&self) -> TraceNormSolver {
        self.solver
    }
    /// Iteration budget.
    pub fn max_iter(&self) -> usize {
        self.max_iter
    }
    /// Seed of the initialization.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Input kernel.
    pub fn input_kernel(&self) -> &KX {
        &self.input_kernel
    }
    /// Output kernel.
    pub fn output_kernel(&self) -> &KY {
        &self.output_kernel
    }
    /// The iterative solvers' options these parameters imply.
    pub fn solver_options(&self) -> SolverOptions {
        SolverOptions {
            max_iter: self.max_iter,
            rel_tol: self.tol,
            grad_tol: 1e-6,
            step: StepRule::Armijo { eta0: 1.0 },
        }
    }
}

/// Trace-norm hyper-parameters (builder; setters store, [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::{ParamGuard, TraceNorm};
/// use okr_kernels::Linear;
/// let params = TraceNorm::params(Linear, Linear).lambda(1e-2).rank(5);
/// assert_eq!(params.check_ref()?.rank(), 5);
/// assert!(TraceNorm::params(Linear, Linear).rank(0).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceNormParams<KX, KY>(pub(crate) TraceNormValidParams<KX, KY>);

impl<KX, KY> TraceNormParams<KX, KY> {
    /// Defaults (see [`TraceNormValidParams`]) with the given kernels.
    pub fn new(input_kernel: KX, output_kernel: KY) -> Self {
        Self(TraceNormValidParams {
            lambda: 1e-3,
            rank: 10,
            solver: TraceNormSolver::GradientDescent,
            max_iter: 10_000,
            tol: 1e-8,
            init_scale: 0.05,
            seed: 0,
            input_kernel,
            output_kernel,
        })
    }
    /// Sets $\lambda$ of (12).
    pub fn lambda(mut self, v: f64) -> Self {
        self.0.lambda = v;
        self
    }
    /// Sets the factor rank $r$.
    pub fn rank(mut self, v: usize) -> Self {
        self.0.rank = v;
        self
    }
    /// Sets the solver.
    pub fn solver(mut self, v: TraceNormSolver) -> Self {
        self.0.solver = v;
        self
    }
    /// Sets the iteration budget.
    pub fn max_iter(mut self, v: usize) -> Self {
        self.0.max_iter = v;
        self
    }
    /// Sets the relative-decrease tolerance.
    pub fn tol(mut self, v: f64) -> Self {
        self.0.tol = v;
        self
    }
    /// Sets $\epsilon$ of the initialization.
    pub fn init_scale(mut self, v: f64) -> Self {
        self.0.init_scale = v;
        self
    }
    /// Sets the seed.
    pub fn seed(mut self, v: u64) -> Self {
        self.0.seed = v;
        self
    }
}

impl<KX, KY> ParamGuard for TraceNormParams<KX, KY> {
    type Checked = TraceNormValidParams<KX, KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        let p = &self.0;
        checks::positive("lambda", p.lambda)?;
        checks::at_least_one("rank", p.rank)?;
        checks::at_least_one("max_iter", p.max_iter)?;
        checks::open_fraction("tol", p.tol)?;
        checks::positive("init_scale", p.init_scale)?;
        Ok(&self.0)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
