/// Errors of okr-decode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The candidate set has no element.
    #[error("the candidate set is empty")]
    NoCandidates,
    /// A query of a per-query candidate source has no candidate.
    #[error("query {query}: the candidate set is empty")]
    EmptyQuery {
        /// The query's id.
        query: String,
    },
    /// A query refers to something that does not exist (a test row, a pool
    /// index, the position of its true candidate).
    #[error("query {query}: {msg}")]
    InvalidQuery {
        /// The query's id.
        query: String,
        /// What is wrong.
        msg: String,
    },
    /// A candidate file could not be read.
    #[error("cannot read {path}: {msg}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error's message.
        msg: String,
    },
    /// A malformed line in a candidate file, displayed as `path:line: msg`.
    #[error("{path}:{line}: {msg}")]
    Parse {
        /// The file.
        path: String,
        /// The 1-based line number.
        line: usize,
        /// What was expected and what was found.
        msg: String,
    },
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
    /// A test row has a NaN or infinite score for some candidate (the input or
    /// output kernel overflowed), so it has no best candidate.
    #[error(
        "test row {row} has a non-finite (NaN or infinite) decoding score: a kernel value overflowed; \
         rescale the features or lower gamma / the polynomial degree"
    )]
    NonFiniteScore {
        /// The 0-based test row.
        row: usize,
    },
    /// The model rejected the inputs or the candidates.
    #[error(transparent)]
    Estimator(#[from] okr_surrogate::Error),
}

/// Result type of okr-decode.
pub type Result<T> = std::result::Result<T, Error>;
