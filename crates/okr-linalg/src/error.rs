/// Numerical failures of okr-linalg.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The matrix (a kernel plus its ridge) is not positive definite enough to
    /// factor, even after adding the largest jitter tried.
    #[error(
        "kernel matrix is not positive definite with lambda = {lambda:e} \
         (Cholesky failed at pivot {pivot}, even with jitter {jitter:e} added to the diagonal); \
         increase lambda or check the kernel"
    )]
    NotPsd {
        /// The ridge parameter the caller was factoring with (`NaN` if none).
        lambda: f64,
        /// Largest jitter added to the diagonal.
        jitter: f64,
        /// Index of the failing pivot in the last attempt.
        pivot: usize,
    },
    /// A matrix entry is NaN or infinite.
    #[error("{what} contains a non-finite value (NaN or infinity)")]
    NonFinite {
        /// Which matrix.
        what: &'static str,
    },
    /// An operator that must be symmetric positive definite is not: conjugate
    /// gradient met a direction of non-positive curvature $p^\top A p \le 0$,
    /// or a preconditioner has a non-positive diagonal entry.
    #[error("{what} is not positive definite (found {value:e}); it must be symmetric positive definite")]
    NotPositiveDefinite {
        /// Which operator.
        what: &'static str,
        /// The offending value: the Rayleigh quotient $p^\top A p / p^\top p$
        /// of the failing direction, or the diagonal entry.
        value: f64,
    },
    /// An iterative method or decomposition did not converge.
    #[error("{what} did not converge after {iterations} iterations (residual {residual:e})")]
    NoConvergence {
        /// Which method.
        what: &'static str,
        /// Iterations done.
        iterations: usize,
        /// Last relative residual (`NaN` when not applicable).
        residual: f64,
    },
}

/// Result type of okr-linalg.
pub type Result<T> = std::result::Result<T, Error>;
