//! Trace-norm regularized surrogate prediction, LR-SELF (Luise, Stamos,
//! Pontil and Ciliberto, ICML 2019; spec `trace-norm-and-sketching.md` 1.3-1.9).
//!
//! $$\min_G \frac1n \sum_{i=1}^n \|G\phi(x_i) - \psi(y_i)\|^2_{\mathcal H_y} + 2\lambda\|G\|_*
//! \;=\; \min_{A,B}\frac1n\sum_i\|AB^*\phi(x_i)-\psi(y_i)\|^2 + \lambda(\|A\|^2_{HS}+\|B\|^2_{HS}),$$
//! with $A = \Psi^*N$ (output side) and $B = \Phi^*M$ (input side), $M, N \in \mathbb R^{n\times r}$,
//! so that $\hat g(x) = \Psi^* N M^\top v_x$ and $\alpha(x) = N M^\top v_x$.
//!
//! The [`SurrogateModel`](crate::SurrogateModel) atoms are the $r$ columns of $A$,
//! $a_j = \sum_i N_{ij}\psi(y_i)$: coefficients $C = K_x(x, X)\,M$ `(n_test, r)`,
//! atom products $N^\top K_y(Y, c)$, atom Gram $N^\top K_y N$. Decoding therefore
//! costs $O(n_{te}\, r\, n_c)$ after projecting the candidates.
//!
//! Solvers ([`TraceNormSolver`]): factorized gradient descent (the paper's
//! Algorithm 1, corrected), alternating least squares, and the exact convex
//! solver; see [`solvers`] for the equations and the $\lambda$ conversions.
//! [`masked`] holds the per-user ranking (multitask, missing pairs) variant.

mod fit;
pub mod masked;
mod params;
mod self_hs;
pub mod solvers;

use faer::{Mat, MatRef, Par};
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

pub use params::{TraceNormParams, TraceNormSolver, TraceNormValidParams};
pub use self_hs::{SelfHs, SelfHsParams, SelfHsValidParams, score_lambda_path_chunked};
pub use solvers::{
    ConvexSolution, FactorizedSolution, FistaResult, GdState, SolverOptions, StepRule, StopReason, convex_trace_norm,
    factorized_als, factorized_als_from, factorized_gd, factorized_gd_from, factorized_objective, fista_svt,
    scaled_init,
};

use crate::Result;
use crate::core::checks::check_width;
use crate::core::projected_coefficients_into;
use crate::core::{AtomGram, Atoms, InputMap, KernelExpansion};
use crate::persist::{self, Invalid, Validate};

/// A fitted trace-norm (LR-SELF) model.
///
/// Keeps the training inputs and outputs, the factor coefficients $M$, $N$
/// `(n, r)` and the solver's trace.
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_estimators::{SurrogateModel, TraceNorm};
/// use okr_kernels::{DenseRows, Linear, Rows};
/// let x = DenseRows::new(Mat::from_fn(12, 3, |i, j| ((i * 7 + j * 3) % 5) as f64 / 5.0))?;
/// let y = DenseRows::new(Mat::from_fn(12, 4, |i, j| ((i + 2 * j) % 3) as f64))?;
/// let model = TraceNorm::params(Linear, Linear).lambda(1e-2).rank(3).fit(&x, &y)?;
/// let c = model.coefficients(&x.select(&[0, 5]))?;
/// assert_eq!((c.nrows(), c.ncols()), (2, 3));
/// let alpha = model.alpha(&x.select(&[0]))?; // (n_train, 1) weights over training outputs
/// assert_eq!(alpha.nrows(), 12);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TraceNorm<X, Y, KX, KY> {
    params: TraceNormValidParams<KX, KY>,
    x_train: X,
    y_train: Y,
    #[serde(with = "okr_linalg::serde_mat")]
    m: Mat<f64>,
    /// Stored transposed: $N^\top$ `(r, n)`, the atoms' weights on the training samples.
    #[serde(with = "okr_linalg::serde_mat")]
    nt: Mat<f64>,
    /// The distinct training outputs and, per sample, the index of its output.
    outputs: Y,
    output_of: Vec<usize>,
    /// $N^\top$ with the columns of samples sharing an output summed: `(r, n_distinct)`.
    #[serde(with = "okr_linalg::serde_mat")]
    encoder: Mat<f64>,
    objective: f64,
    n_iter: usize,
    stop: StopReason,
    /// Gradient descent's running state, to continue the fit exactly
    /// ([`FitFrom`](crate::FitFrom)); not written to model files (a loaded
    /// model continues from its factors with a fresh step size).
    #[serde(skip)]
    gd_state: Option<GdState>,
}

impl<KX, KY> TraceNorm<(), (), KX, KY> {
    /// Default parameters (`lambda = 1e-3`, `rank = 10`, gradient descent) with the given kernels.
    pub fn params(input_kernel: KX, output_kernel: KY) -> TraceNormParams<KX, KY> {
        TraceNormParams::new(input_kernel, output_kernel)
    }
}

impl<X: Rows, Y: Rows, KX, KY> TraceNorm<X, Y, KX, KY> {
    pub(crate) fn from_solution(
        params: TraceNormValidParams<KX, KY>,
        x_train: X,
        y_train: Y,
        sol: FactorizedSolution,
    ) -> Self {
        let (outputs, output_of) = y_train.group_duplicates();
        let r = sol.n.ncols();
        let mut encoder = Mat::zeros(r, outputs.n_rows());
        for (i, &o) in output_of.iter().enumerate() {
            for c in 0..r {
                encoder[(c, o)] += sol.n[(i, c)];
            }
        }
        Self {
            params,
            x_train,
            y_train,
            outputs,
            output_of,
            encoder,
            nt: sol.n.transpose().to_owned(),
            m: sol.m,
            objective: sol.objective,
            n_iter: sol.n_iter,
            stop: sol.stop,
            gd_state: sol.gd_state,
        }
    }

    /// The fitted factors as a solver's starting point (for a continued fit).
    pub(crate) fn solution(&self) -> FactorizedSolution {
        FactorizedSolution {
            m: self.m.clone(),
            n: self.nt.transpose().to_owned(),
            objective: self.objective,
            n_iter: self.n_iter,
            stop: self.stop,
            gd_state: self.gd_state.clone(),
        }
    }
    /// The parameters the model was fitted with.
    pub fn params_used(&self) -> &TraceNormValidParams<KX, KY> {
        &self.params
    }
    /// Training inputs.
    pub fn x_train(&self) -> &X {
        &self.x_train
    }
    /// Training outputs (the atoms are combinations of them).
    pub fn y_train(&self) -> &Y {
        &self.y_train
    }
    /// Input-side coefficients $M$ `(n, r)`.
    pub fn m(&self) -> MatRef<'_, f64> {
        self.m.as_ref()
    }
    /// Output-side coefficients $N$ `(n, r)`.
    pub fn n(&self) -> MatRef<'_, f64> {
        self.nt.transpose()
    }
    /// The distinct training outputs, in first-occurrence order: the columns of [`encoder`](Self::encoder).
    pub fn distinct_outputs(&self) -> &Y {
        &self.outputs
    }
    /// For every training sample, the index of its output in [`distinct_outputs`](Self::distinct_outputs).
    pub fn output_of_sample(&self) -> &[usize] {
        &self.output_of
    }
    /// The atoms' weights on the distinct outputs, `(r, n_distinct)`: $N^\top$ with
    /// the columns of samples sharing an output summed.
    pub fn encoder(&self) -> MatRef<'_, f64> {
        self.encoder.as_ref()
    }
    /// Final objective (12).
    pub fn objective(&self) -> f64 {
        self.objective
    }
    /// Iterations the solver ran.
    pub fn n_iter(&self) -> usize {
        self.n_iter
    }
    /// Why the solver stopped.
    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }
}

impl<X: Rows, Y: Rows, KX: Kernel<X>, KY> TraceNorm<X, Y, KX, KY> {
    /// The weights $\alpha(x) = N M^\top v_x$ over the training outputs, one
    /// column per row of `x`: `(n_train, x.n_rows())`. The SELF decoder is
    /// $\hat f(x) = \arg\min_y \sum_i \alpha_i(x)\ell(y, y_i)$.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for another input width.
    pub fn alpha(&self, x: &X) -> Result<Mat<f64>> {
        check_width("input features", &self.x_train, x)?;
        let mut c = Mat::zeros(x.n_rows(), self.m.ncols());
        projected_coefficients_into(
            &self.params.input_kernel,
            &self.x_train,
            x,
            self.m.as_ref(),
            c.as_mut(),
            Par::rayon(0),
        )?;
        Ok(self.nt.transpose() * c.transpose())
    }
}

impl<X, Y, KX, KY> KernelExpansion<X, Y> for TraceNorm<X, Y, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X>,
    KY: Kernel<Y>,
{
    type InputKernel = KX;
    type OutputKernel = KY;

    fn input_kernel(&self) -> &KX {
        &self.params.input_kernel
    }
    fn output_kernel(&self) -> &KY {
        &self.params.output_kernel
    }
    fn expansion_inputs(&self) -> &X {
        &self.x_train
    }
    fn input_map(&self) -> InputMap<'_> {
        InputMap::Linear(self.m.as_ref())
    }
    fn atoms(&self) -> Atoms<'_, Y> {
        Atoms { outputs: &self.outputs, weights: Some(self.encoder.as_ref()), gram: AtomGram::FromOutputs }
    }
    fn training_outputs(&self) -> &Y {
        &self.outputs
    }
}

impl<X: Rows, Y: Rows, KX: persist::StoredKernel<X>, KY: persist::StoredKernel<Y>> Validate
    for TraceNorm<X, Y, KX, KY>
{
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("trace-norm", &TraceNormParams(self.params.clone()))?;
        let n = self.x_train.n_rows();
        persist::ensure(n > 0, || "trace-norm model has no training samples".into())?;
        persist::rows("trace-norm training outputs", &self.y_train, n)?;
        persist::ensure(self.y_train.feature_dim() == self.outputs.feature_dim(), || {
            "trace-norm training outputs have another width than the distinct outputs".into()
        })?;
        persist::grouping("trace-norm sample-to-output map", &self.output_of, n, self.outputs.n_rows())?;
        let r = self.m.ncols();
        persist::matrix("trace-norm input coefficients", self.m.as_ref(), n, r)?;
        persist::matrix("trace-norm output coefficients", self.nt.as_ref(), r, n)?;
        persist::matrix("trace-norm encoder", self.encoder.as_ref(), r, self.outputs.n_rows())?;
        self.params.input_kernel.check_rows("trace-norm input kernel", &self.x_train)?;
        self.params.output_kernel.check_rows("trace-norm output kernel", &self.outputs)
    }
}
