/// Errors of okr-kernels (invalid containers or kernel parameters).
///
/// # Example
/// ```
/// use okr_kernels::{Error, Gaussian};
/// let err = Gaussian::new(-1.0).unwrap_err();
/// assert!(matches!(err, Error::InvalidParameter { name: "gamma", .. }));
/// assert_eq!(err.to_string(), "invalid kernel parameter gamma = -1: finite and > 0");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two shapes that must agree do not.
    #[error("shape mismatch in {what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// What was being checked.
        what: &'static str,
        /// Expected size.
        expected: usize,
        /// Actual size.
        got: usize,
    },
    /// An index is out of range (a feature or label index in a sparse row).
    #[error("{what} index {index} out of range (must be < {bound})")]
    IndexOutOfRange {
        /// What kind of index.
        what: &'static str,
        /// The offending index.
        index: usize,
        /// The exclusive upper bound.
        bound: usize,
    },
    /// A value is NaN or infinite.
    #[error("{what} contains a non-finite value (NaN or infinity) at row {row}")]
    NonFinite {
        /// Which data.
        what: &'static str,
        /// Row of the first offending value.
        row: usize,
    },
    /// A kernel parameter is outside its valid range.
    #[error("invalid kernel parameter {name} = {value}: {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Offending value.
        value: f64,
        /// What is expected.
        expected: &'static str,
    },
    /// A kernel name that [`KernelSpec::from_name`](crate::KernelSpec::from_name)
    /// does not know.
    #[error(
        "unknown kernel {name:?}: expected gaussian (rbf), linear, laplacian, polynomial (poly), \
         tanimoto or gaussian-tanimoto"
    )]
    UnknownKernel {
        /// The name given.
        name: String,
    },
    /// A median-heuristic width that cannot be used: the median squared
    /// distance between the training rows of `side` overflowed (features
    /// near `1e154`) or is so small that `1 / (2 median)` does
    /// ([`check_median_width`](crate::check_median_width)). The message is
    /// the same for every front door: it names the data to scale and the
    /// width to give (the parameter, and the `okr` flag).
    #[error("the median squared distance between training {side} is {median:e}: {}", .side.remedy())]
    UnusableMedian {
        /// The side the width is for.
        side: crate::WidthSide,
        /// The median squared distance.
        median: f64,
    },
    /// Empty data where at least one row is needed.
    #[error("empty data: {what}")]
    Empty {
        /// What is empty.
        what: &'static str,
    },
    /// Invalid CSR structure.
    #[error("invalid sparse structure: {0}")]
    InvalidStructure(String),
    /// A Gram matrix file could not be read.
    #[error("cannot read {path}: {msg}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error's message.
        msg: String,
    },
    /// A malformed line of a Gram matrix file, displayed as `path:line: msg`
    /// (line 0 for a binary file).
    #[error("{path}:{line}: {msg}")]
    Parse {
        /// The file.
        path: String,
        /// The 1-based line number.
        line: usize,
        /// What was expected and what was found.
        msg: String,
    },
    /// A training Gram matrix is not symmetric.
    #[error("the training Gram is not symmetric: K[{row},{col}] - K[{col},{row}] = {diff:e} (tolerance {tol:e})")]
    NotSymmetric {
        /// Row of the largest difference.
        row: usize,
        /// Column of the largest difference.
        col: usize,
        /// The difference.
        diff: f64,
        /// The tolerance it exceeds.
        tol: f64,
    },
    /// A peak of a mass spectrum is invalid.
    #[error("invalid peak {index} (m/z {mz}, intensity {intensity}): expected {expected}")]
    InvalidPeak {
        /// Index of the peak in the list given.
        index: usize,
        /// Its m/z.
        mz: f64,
        /// Its intensity.
        intensity: f64,
        /// What is expected.
        expected: &'static str,
    },
    /// A mass spectrum has more peaks than
    /// [`MAX_PEAKS`](crate::MAX_PEAKS).
    #[error("a spectrum of {n_peaks} peaks: at most {max} are accepted")]
    TooManyPeaks {
        /// Peaks given.
        n_peaks: usize,
        /// The limit.
        max: usize,
    },
    /// A precursor m/z that is not finite and positive.
    #[error("invalid precursor m/z {mz}: expected a finite number > 0")]
    InvalidPrecursor {
        /// The value given.
        mz: f64,
    },
    /// Multiple kernel learning cannot weight these kernels.
    #[error("multiple kernel learning: {0}")]
    Mkl(String),
}

/// Result type of okr-kernels.
pub type Result<T> = std::result::Result<T, Error>;
