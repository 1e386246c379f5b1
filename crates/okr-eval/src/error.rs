//! The error type of okr-eval.

use std::io;
use std::path::{Path, PathBuf};

/// Errors of okr-eval: unreadable or malformed files, inconsistent shapes,
/// invalid arguments and errors of the lower crates.
///
/// Every error that comes from a file names the file; parse errors also name
/// the 1-based line and say what was expected there.
///
/// # Example
/// ```
/// use okr_eval::{read_arff, Error};
/// let err = read_arff("no/such/file.arff", 3).unwrap_err();
/// assert!(matches!(err, Error::Io { .. }));
/// assert_eq!(err.to_string(), "cannot open no/such/file.arff: No such file or directory");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened or read.
    #[error("cannot open {}: {}", .path.display(), io_message(.source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying I/O error.
        source: io::Error,
    },
    /// A file could not be created, written or renamed into place.
    #[error("cannot write {}: {}", .path.display(), io_message(.source))]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying I/O error.
        source: io::Error,
    },
    /// A malformed line in a data file, displayed as `path:line: msg`
    /// (control characters of `msg`, which quotes the file, are escaped).
    #[error("{}:{line}: {}", .path.display(), escape_controls(.msg))]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What was expected and what was found.
        msg: String,
    },
    /// An input file is larger than the readers' bound
    /// ([`MAX_INPUT_BYTES`](crate::output::MAX_INPUT_BYTES)), or endless.
    #[error("cannot read {}: larger than the {limit}-byte input limit (or endless)", .path.display())]
    InputTooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// An input file is not text (it has a NUL byte).
    #[error("cannot read {}: not a text file (a NUL byte at offset {offset})", .path.display())]
    NotText {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first NUL byte.
        offset: u64,
    },
    /// Memory for a size taken from a file or from user input could not be reserved.
    #[error("out of memory: cannot reserve {bytes} bytes for {what}")]
    OutOfMemory {
        /// What the memory was for.
        what: String,
        /// The requested size in bytes.
        bytes: u64,
    },
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
    /// A value is NaN or infinite.
    #[error("{what} contains a non-finite value (NaN or infinity) at row {row}")]
    NonFinite {
        /// Which data.
        what: &'static str,
        /// The (0-based) row of the first offending value.
        row: usize,
    },
    /// An argument is outside its valid range.
    #[error("invalid argument {name} = {value}: expected {expected}")]
    InvalidArgument {
        /// Argument name.
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What is expected.
        expected: String,
    },
    /// Empty data where at least one element is needed.
    #[error("empty data: {what}")]
    Empty {
        /// What is empty.
        what: &'static str,
    },
    /// A benchmark data set is not where it was looked for.
    #[error("dataset {name} not found in {} (set OKR_DATA_DIR)", .dir.display())]
    DatasetNotFound {
        /// The data set name.
        name: String,
        /// The data directory that was searched.
        dir: PathBuf,
    },
    /// A download of a catalog file failed (an unreachable or failing
    /// server, a transfer cut short); the message says whether the file was
    /// left unwritten.
    #[error("cannot download {url}: {msg}")]
    Download {
        /// The URL.
        url: String,
        /// What failed.
        msg: String,
    },
    /// A downloaded file was refused: its size or SHA-256 is not the
    /// catalog's, and it was not written.
    #[error("refused {url}: {msg}")]
    Refused {
        /// The URL.
        url: String,
        /// What differs, and that the file was not written.
        msg: String,
    },
    /// An error of okr-kernels (invalid container).
    #[error(transparent)]
    Kernels(#[from] okr_kernels::Error),
}

/// Result type of okr-eval.
pub type Result<T> = std::result::Result<T, Error>;

/// `s` with control characters escaped (`\u{1b}` for ESC, `\n` for a line
/// break), so that text quoted from an input file cannot drive the terminal an
/// error message is printed on, nor break the message over several lines.
///
/// # Example
/// ```
/// assert_eq!(okr_eval::error::escape_controls("a\x1b[2Jb\n"), "a\\u{1b}[2Jb\\n");
/// assert_eq!(okr_eval::error::escape_controls("plain é"), "plain é");
/// ```
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The I/O error message without the trailing ` (os error N)`.
fn io_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

impl Error {
    /// A parse error at `path:line`.
    pub(crate) fn parse(path: &Path, line: usize, msg: impl Into<String>) -> Self {
        Error::Parse { path: path.to_path_buf(), line, msg: msg.into() }
    }

    /// An error opening or reading `path`.
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Error::Io { path: path.to_path_buf(), source }
    }

    /// An invalid argument.
    pub(crate) fn invalid(name: &'static str, value: impl ToString, expected: impl Into<String>) -> Self {
        Error::InvalidArgument { name, value: value.to_string(), expected: expected.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let e = Error::io(Path::new("data/x.arff"), io::Error::from(io::ErrorKind::NotFound));
        assert!(e.to_string().starts_with("cannot open data/x.arff: "), "{e}");
        let e = Error::io(Path::new("data/x.arff"), io::Error::from_raw_os_error(2));
        assert_eq!(e.to_string(), "cannot open data/x.arff: No such file or directory");
        let e = Error::parse(Path::new("a.csv"), 7, "expected a number, got 'x'");
        assert_eq!(e.to_string(), "a.csv:7: expected a number, got 'x'");
        let e = Error::invalid("k", 0, "k >= 1");
        assert_eq!(e.to_string(), "invalid argument k = 0: expected k >= 1");
        let e = Error::parse(Path::new("a.csv"), 2, "got '\x1b]0;pwned\x07'");
        assert_eq!(e.to_string(), "a.csv:2: got '\\u{1b}]0;pwned\\u{7}'");
        let e = Error::Refused { url: "http://m/a".into(), msg: "SHA-256 mismatch".into() };
        assert_eq!(e.to_string(), "refused http://m/a: SHA-256 mismatch");
        let e = Error::Download { url: "http://m/a".into(), msg: "connection refused".into() };
        assert_eq!(e.to_string(), "cannot download http://m/a: connection refused");
        let e: Error = okr_kernels::Error::NonFinite { what: "x", row: 1 }.into();
        assert!(e.to_string().contains("non-finite"));
    }

    #[test]
    fn autotraits() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Error>();
    }
}
