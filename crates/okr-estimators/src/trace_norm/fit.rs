use okr_kernels::{Kernel, Rows};

use super::solvers::{FactorizedSolution, convex_trace_norm, factorized_als_from, factorized_gd_from, scaled_init};
use super::{TraceNorm, TraceNormSolver, TraceNormValidParams};
use crate::core::checks::{self, check_training_set, check_width};
use crate::{Error, Fit, FitFrom, Result};

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
        self.fit_impl(x, y, None)
    }
}

impl<'y, X, Y, KX, KY> FitFrom<X, &'y Y> for TraceNormValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    /// Continues `previous` for `max_iter` more iterations of the GD or ALS
    /// solver, from its factors $M$, $N$ (and, after gradient descent in this
    /// process, the solver's step size and products: see
    /// [`factorized_gd_from`]).
    ///
    /// # Errors
    /// As [`fit`](Fit::fit); [`Error::ShapeMismatch`] when `x` has another
    /// number of samples or features than `previous`'s training inputs, or
    /// `previous` another rank; [`Error::InvalidParameter`] for the convex
    /// solver (it keeps no factors to start from).
    fn fit_from(&self, previous: &TraceNorm<X, Y, KX, KY>, x: &X, y: &'y Y) -> Result<TraceNorm<X, Y, KX, KY>> {
        self.fit_impl(x, y, Some(previous))
    }
}

impl<KX, KY> TraceNormValidParams<KX, KY> {
    fn fit_impl<X, Y>(
        &self,
        x: &X,
        y: &Y,
        previous: Option<&TraceNorm<X, Y, KX, KY>>,
    ) -> Result<TraceNorm<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X> + Clone,
        KY: Kernel<Y> + Clone,
    {
        let n = check_training_set(x, y)?;
        if self.solver != TraceNormSolver::Convex {
            // The factors are (n, rank): a rank above n only adds zero directions, slowly.
            checks::at_most("rank", self.rank, n, "at most the number of training samples")?;
        }
        if let Some(prev) = previous {
            if self.solver == TraceNormSolver::Convex {
                return Err(Error::InvalidParameter {
                    name: "solver",
                    value: "convex".into(),
                    expected: "gd or als to continue a fit (the convex solver keeps no factors to start from)",
                });
            }
            let (n_prev, r_prev) = (prev.m.nrows(), prev.m.ncols());
            if n_prev != n {
                let what = "training samples of a continued fit (the previous fit's)";
                return Err(Error::ShapeMismatch { what, expected: n_prev, got: n });
            }
            if r_prev != self.rank {
                return Err(Error::ShapeMismatch { what: "rank of a continued fit", expected: r_prev, got: self.rank });
            }
            check_width("input features of a continued fit", &prev.x_train, x)?;
            check_width("output width of a continued fit", &prev.y_train, y)?;
        }
        let kx = self.input_kernel.gram(x);
        let ky = self.output_kernel.gram(y);
        let sol = match self.solver {
            TraceNormSolver::Convex => {
                convex_trace_norm(kx.as_ref(), ky.as_ref(), 2.0 * self.lambda, self.tol, self.max_iter)?.factors
            }
            TraceNormSolver::GradientDescent | TraceNormSolver::Als => {
                let start = match previous {
                    Some(prev) => prev.solution(),
                    None => {
                        let (m0, n0) = scaled_init(kx.as_ref(), ky.as_ref(), self.rank, self.init_scale, self.seed);
                        FactorizedSolution::from_factors(m0, n0)
                    }
                };
                let opts = self.solver_options();
                if self.solver == TraceNormSolver::Als {
                    factorized_als_from(kx.as_ref(), ky.as_ref(), self.lambda, start, &opts)?
                } else {
                    factorized_gd_from(kx.as_ref(), ky.as_ref(), self.lambda, start, &opts)?
                }
            }
        };
        Ok(TraceNorm::from_solution(self.clone(), x.clone(), y.clone(), sol))
    }
}
