//! The recipe layer's error.

use std::fmt::Display;

/// Errors of the recipe layer: a choice that cannot be fitted, a value
/// out of range, or an error of the crates below.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An estimator name that is not in the catalog.
    #[error("unknown estimator {name:?} (expected one of {})", crate::catalog::names())]
    UnknownEstimator {
        /// The name given.
        name: String,
    },
    /// A value outside its range.
    #[error("invalid {what} = {value}: expected {expected}")]
    Invalid {
        /// What the value is.
        what: String,
        /// The value given.
        value: String,
        /// The valid range.
        expected: String,
    },
    /// A combination of choices that okr cannot fit, with the reason.
    #[error("{0}")]
    Refused(String),
    /// A recipe that does not parse.
    #[error("invalid recipe: {0}")]
    Recipe(String),
    /// An estimator's error (also the surrogate crate's, which it re-exports).
    #[error(transparent)]
    Estimators(#[from] okr_estimators::Error),
    /// A kernel's error.
    #[error(transparent)]
    Kernels(#[from] okr_kernels::Error),
    /// A decoder's error.
    #[error(transparent)]
    Decode(#[from] okr_decode::Error),
    /// A data or metric error.
    #[error(transparent)]
    Eval(#[from] okr_eval::Error),
    /// A model file's error.
    #[error(transparent)]
    Persist(#[from] okr_estimators::persist::Error),
}

impl Error {
    /// [`Error::Invalid`] from displayable parts.
    pub fn invalid(what: impl Display, value: impl Display, expected: impl Display) -> Self {
        Error::Invalid { what: what.to_string(), value: value.to_string(), expected: expected.to_string() }
    }
}

/// Result of the recipe layer.
pub type Result<T> = std::result::Result<T, Error>;
