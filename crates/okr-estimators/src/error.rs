/// Errors of okr-estimators.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A hyper-parameter is outside its valid range.
    #[error("invalid parameter {name} = {value}: expected {expected}")]
    InvalidParameter {
        /// Parameter name as in the params builder.
        name: &'static str,
        /// Offending value, formatted.
        value: String,
        /// The valid range.
        expected: &'static str,
    },
    /// Two sizes that must agree do not.
    #[error("shape mismatch: {what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// What was compared.
        what: &'static str,
        /// Expected size.
        expected: usize,
        /// Actual size.
        got: usize,
    },
    /// No samples where some are needed.
    #[error("{what} is empty")]
    Empty {
        /// What was empty.
        what: &'static str,
    },
    /// A matrix that needs a positive numerical rank has none (for example
    /// reduced-rank IOKR with constant-zero outputs).
    #[error("{what} has numerical rank 0 at relative tolerance {tol}: no direction to project on")]
    ZeroRank {
        /// The matrix.
        what: &'static str,
        /// The relative tolerance used.
        tol: f64,
    },
    /// A linear algebra failure (for example a kernel that is not PSD).
    #[error(transparent)]
    Linalg(#[from] okr_linalg::Error),
    /// Partition statistics that cannot be merged or finalized.
    #[error(transparent)]
    Partition(#[from] crate::partition::PartitionError),
    /// An invalid kernel or container.
    #[error(transparent)]
    Kernel(#[from] okr_kernels::Error),
}

/// Result type of okr-estimators.
pub type Result<T> = std::result::Result<T, Error>;
