use okr_kernels::{Kernel, Rows};

use super::solvers::{convex_trace_norm, factorized_als, factorized_gd, scaled_init};
use super::{TraceNorm, TraceNormSolver, TraceNormValidParams};
use crate::core::checks::{self, check_training_set};
use crate::{Fit, Result};

impl<'y, X, Y, KX, KY> Fit<X, &'y Y> for TraceNormValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Object = TraceNorm<X, Y, KX, KY>;

    /// Fits the trace-norm estimator: computes $K_x$ and $K_y$, then runs the
    /// chosen solver (GD and ALS from the scaled random initialization).
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for no samples,
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) for a rank
    /// above the number of samples (factorized solvers),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `x` and `y`
    /// have different numbers of rows, [`Error::Linalg`](crate::Error::Linalg)
    /// when a decomposition fails (ALS, convex).
    fn fit(&self, x: &X, y: &'y Y) -> Result<TraceNorm<X, Y, KX, KY>> {
        let n = check_training_set(x, y)?;
        if self.solver != TraceNormSolver::Convex {
            // The factors are (n, rank): a rank above n only adds zero directions, slowly.
            checks::at_most("rank", self.rank, n, "at most the number of training samples")?;
        }
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
