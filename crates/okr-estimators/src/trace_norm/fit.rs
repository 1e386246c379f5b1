use okr_kernels::{Kernel, Rows};

use super::solvers::{convex_trace_norm, factorized_als, factorized_gd, scaled_init};
use super::{TraceNorm, TraceNormParams, TraceNormSolver, TraceNormValidParams};
use crate::projection::check_training_set;
use crate::{ParamGuard, Result};

impl<KX: Clone, KY: Clone> TraceNormValidParams<KX, KY> {
    /// Fits the trace-norm estimator: computes $K_x$ and $K_y$, then runs the
    /// chosen solver (GD and ALS from the scaled random initialization).
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for no samples,
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `x` and `y`
    /// have different numbers of rows, [`Error::Linalg`](crate::Error::Linalg)
    /// when a decomposition fails (ALS, convex).
    pub fn fit<X, Y>(&self, x: &X, y: &Y) -> Result<TraceNorm<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        check_training_set(x, y)?;
        let kx = self.input_kernel.gram(x);
        let ky = self.output_kernel.gram(y);
        let sol = match self.solver {
            TraceNormSolver::Convex => {
                convex_trace_norm(kx.as_ref(), ky.as_ref(), 2.0 * self.lambda, self.tol, self.max_iter)?.factors
            }
            TraceNormSolver::GradientDescent | TraceNormSolver::Als => {
                let (m0, n0) = scaled_init(kx.as_ref(), ky.as_ref(), self.rank, self.init_scale, self.seed);
                let opts = self.solver_options();
                if self.solver == TraceNormSolver::Als {
                    factorized_als(kx.as_ref(), ky.as_ref(), self.lambda, m0, n0, &opts)?
                } else {
                    factorized_gd(kx.as_ref(), ky.as_ref(), self.lambda, m0, n0, &opts)?
                }
            }
        };
        Ok(TraceNorm::from_solution(self.clone(), x.clone(), y.clone(), sol))
    }
}

impl<KX: Clone, KY: Clone> TraceNormParams<KX, KY> {
    /// Checks the parameters, then fits (see [`TraceNormValidParams::fit`]).
    ///
    /// # Errors
    /// An invalid parameter, or any error of [`TraceNormValidParams::fit`].
    pub fn fit<X, Y>(&self, x: &X, y: &Y) -> Result<TraceNorm<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        self.check_ref()?.fit(x, y)
    }
}
