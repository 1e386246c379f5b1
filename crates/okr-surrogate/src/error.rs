/// Errors of okr-estimators and of the [`SurrogateModel`](crate::SurrogateModel)
/// interface (okr-estimators re-exports this type as `okr_estimators::Error`).
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
    /// A sample weight that is not a finite number `> 0` (zero, negative,
    /// NaN or infinite).
    #[error(
        "invalid sample weight {value} of sample {index} (counting from 0): expected a finite number > 0{}",
        if *.value == 0.0 { " (a zero weight: drop the row instead)" } else { "" }
    )]
    InvalidSampleWeight {
        /// The sample (0-based row of the training data).
        index: usize,
        /// The weight given.
        value: f64,
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
    /// Coordinates tagged with another output basis than the one decoding
    /// them (see [`Coordinates`](crate::Coordinates)).
    #[error(
        "coordinates of another output basis (basis id {got:016x}, this basis is {expected:016x}): \
         transform the outputs with the basis that decodes them"
    )]
    OtherBasis {
        /// Id of the basis decoding.
        expected: u64,
        /// Id the coordinates carry.
        got: u64,
    },
    /// A linear algebra failure (for example a kernel that is not PSD).
    #[error(transparent)]
    Linalg(#[from] okr_linalg::Error),
    /// Partition statistics that cannot be merged or finalized.
    #[error(transparent)]
    Partition(#[from] PartitionError),
    /// An invalid kernel or container.
    #[error(transparent)]
    Kernel(#[from] okr_kernels::Error),
}

/// Result type of okr-estimators (`okr_estimators::Result`).
pub type Result<T> = std::result::Result<T, Error>;

/// Why partition statistics cannot be combined or finalized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionError {
    /// The statistics were computed under another plan (other anchors,
    /// sketch, subset or hyper-parameters).
    #[error("statistics of another plan (fingerprint {got:016x}, expected {expected:016x}): other anchors or sketch")]
    OtherPlan {
        /// Fingerprint of the plan (or first statistic).
        expected: u64,
        /// Fingerprint found.
        got: u64,
    },
    /// Two statistics both cover a row.
    #[error("statistics overlap: row {row} is in both")]
    OverlappingRows {
        /// A row in both.
        row: usize,
    },
    /// The merged statistics do not cover the training rows exactly.
    #[error("statistics cover {covered} of rows 0..{n} (first missing row: {first_missing})")]
    MissingRows {
        /// Rows covered.
        covered: usize,
        /// Training rows of the plan.
        n: usize,
        /// First row not covered.
        first_missing: usize,
    },
    /// A partition runs past the plan's rows.
    #[error("partition rows {first_row}..{end} run past the plan's {n} rows")]
    RowsPastEnd {
        /// Its first global row.
        first_row: usize,
        /// One past its last row.
        end: usize,
        /// The plan's rows.
        n: usize,
    },
    /// A deserialized plan or statistic is inconsistent.
    #[error("corrupt {what}")]
    Corrupt {
        /// What is inconsistent.
        what: String,
    },
}
