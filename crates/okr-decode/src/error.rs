/// Errors of okr-decode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The candidate set has no element.
    #[error("the candidate set is empty")]
    NoCandidates,
    /// A decoder parameter is invalid.
    #[error("invalid decoder parameter {name} = {value}: expected {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Offending value.
        value: String,
        /// Valid range.
        expected: &'static str,
    },
    /// The model rejected the inputs or the candidates.
    #[error(transparent)]
    Estimator(#[from] okr_estimators::Error),
}

/// Result type of okr-decode.
pub type Result<T> = std::result::Result<T, Error>;
