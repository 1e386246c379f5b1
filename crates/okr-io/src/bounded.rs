//! Bounded reads of user files, shared by every okr reader (okr-kernels,
//! okr-decode, okr-eval).
//!
//! A path on the command line may name a device (`/dev/zero`), a pipe that
//! never closes or a file larger than memory. Reading it whole, or one
//! "line" of it, with the standard library grows memory until the process is
//! killed. Every read here has a byte limit, reserves memory fallibly and,
//! for text, stops at the first NUL byte, so such an input ends in a
//! [`ReadError`] after at most `limit` bytes.

use std::fs::{File, Metadata};
use std::io::{self, BufRead, Read};
use std::path::Path;

/// The largest input file a reader accepts (8 GiB), and the longest line of
/// a streamed file.
pub const MAX_INPUT_BYTES: u64 = 8 << 30;

/// Why a bounded read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system's error.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// More than `limit` bytes (the file, or one line of a streamed file).
    #[error("larger than the {limit}-byte input limit (or endless)")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// A NUL byte in a text input.
    #[error("not a text file (a NUL byte at offset {offset})")]
    NotText {
        /// Byte offset of the NUL byte from where the read started (the
        /// file's start, or the line's for [`read_line`]).
        offset: u64,
    },
    /// Memory for the contents could not be reserved.
    #[error("out of memory ({bytes} bytes)")]
    OutOfMemory {
        /// The requested size in bytes.
        bytes: u64,
    },
}

/// Reads the whole file at `path`, at most `limit` bytes; with `text`, a NUL
/// byte is an error. A regular file above the limit is refused before it is
/// read; its memory is reserved at once, fallibly.
///
/// # Errors
/// [`ReadError`].
///
/// # Example
/// ```
/// use okr_io::bounded::{ReadError, read_file};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.txt");
/// std::fs::write(&path, "1 2\n")?;
/// assert_eq!(read_file(&path, 100, true)?, b"1 2\n");
/// assert!(matches!(read_file(&path, 3, true), Err(ReadError::TooLarge { limit: 3 })));
/// # #[cfg(unix)]
/// assert!(matches!(read_file("/dev/zero".as_ref(), 100, true), Err(ReadError::NotText { offset: 0 })));
/// # #[cfg(unix)]
/// assert!(matches!(read_file("/dev/zero".as_ref(), 100, false), Err(ReadError::TooLarge { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_file(path: &Path, limit: u64, text: bool) -> Result<Vec<u8>, ReadError> {
    Ok(read_file_starting_with(path, limit, text, b"")?.expect("every file starts with no bytes"))
}

/// As [`read_file`], for a format whose files start with `magic`: `None` as
/// soon as the first bytes differ (a device or another kind of file is not
/// read further).
///
/// # Errors
/// [`ReadError`].
///
/// # Example
/// ```
/// # #[cfg(unix)]
/// assert!(okr_io::bounded::read_file_starting_with("/dev/zero".as_ref(), 1 << 30, false, b"\x93NUMPY")?.is_none());
/// # Ok::<(), okr_io::bounded::ReadError>(())
/// ```
pub fn read_file_starting_with(
    path: &Path,
    limit: u64,
    text: bool,
    magic: &[u8],
) -> Result<Option<Vec<u8>>, ReadError> {
    let mut file = File::open(path)?;
    let size = file.metadata().ok().filter(Metadata::is_file).map(|m| m.len());
    if size.is_some_and(|s| s > limit) {
        return Err(ReadError::TooLarge { limit });
    }
    let mut bytes: Vec<u8> = Vec::new();
    let first = size.unwrap_or(0).saturating_add(1);
    bytes
        .try_reserve_exact(usize::try_from(first).unwrap_or(usize::MAX))
        .map_err(|_| ReadError::OutOfMemory { bytes: first })?;
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        let checked = bytes.len().min(magic.len());
        let upto = (bytes.len() + n).min(magic.len());
        if chunk[..upto - checked] != magic[checked..upto] {
            return Ok(None);
        }
        append(&mut bytes, &chunk[..n], limit, text)?;
    }
    Ok((bytes.len() >= magic.len()).then_some(bytes))
}

/// As [`read_file`] with `text`, and the contents checked to be UTF-8.
///
/// # Errors
/// [`ReadError`]; invalid UTF-8 is [`ReadError::Io`] of kind `InvalidData`.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    String::from_utf8(read_file(path, limit, true)?).map_err(|e| invalid_utf8(e.utf8_error()))
}

/// Reads one line of text from `reader` into `line` (cleared first),
/// including its `\n`; returns the number of bytes read, 0 at the end. At
/// most `limit` bytes per line; a NUL byte or invalid UTF-8 is an error. The
/// bounded form of [`BufRead::read_line`], which grows without limit on a
/// stream without newlines.
///
/// # Errors
/// [`ReadError`]; invalid UTF-8 is [`ReadError::Io`] of kind `InvalidData`.
///
/// # Example
/// ```
/// use okr_io::bounded::{ReadError, read_line};
/// let mut reader = std::io::Cursor::new("query a 0\n1 2\n");
/// let mut line = String::new();
/// assert_eq!(read_line(&mut reader, &mut line, 100)?, 10);
/// assert_eq!(line, "query a 0\n");
/// assert_eq!(read_line(&mut reader, &mut line, 3).unwrap_err().to_string(), "larger than the 3-byte input limit (or endless)");
/// let mut zeros = std::io::BufReader::new(std::io::repeat(0));
/// assert!(matches!(read_line(&mut zeros, &mut line, 100), Err(ReadError::NotText { offset: 0 })));
/// # Ok::<(), ReadError>(())
/// ```
pub fn read_line<R: BufRead + ?Sized>(reader: &mut R, line: &mut String, limit: u64) -> Result<usize, ReadError> {
    line.clear();
    let mut bytes = std::mem::take(line).into_bytes();
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if available.is_empty() {
            break;
        }
        let (end, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        append(&mut bytes, &available[..end], limit, true)?;
        reader.consume(end);
        if done {
            break;
        }
    }
    *line = String::from_utf8(bytes).map_err(|e| invalid_utf8(e.utf8_error()))?;
    Ok(line.len())
}

/// More items than the input that bounds them can hold: a count declared or
/// implied by one input (a query's pool indices, a TU data set's graph
/// labels) above the size of the input it refers to (the pool, the graphs
/// of the indicator file). Readers check it as each item arrives, so that
/// such an input ends in this error before it is stored, not in an
/// allocation of its claimed size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("more than {limit} {what}: {bound}")]
pub struct TooMany {
    /// What is counted (`pool indices`, `graph labels`).
    pub what: &'static str,
    /// The largest count the bounding input allows.
    pub limit: usize,
    /// Why the count is bounded (`the pool has 3 rows`).
    pub bound: String,
}

/// The one rule of declared and implied counts: accepts the `count`-th item
/// (1-based) of `what` when `count <= limit`; `bound` says which input sets
/// the limit, for the message (built only on error).
///
/// # Errors
/// [`TooMany`] when `count > limit`.
///
/// # Example
/// ```
/// use okr_io::bounded::check_count;
/// assert!(check_count(3, 3, "pool indices", || "the pool has 3 rows".into()).is_ok());
/// let err = check_count(4, 3, "pool indices", || "the pool has 3 rows".into()).unwrap_err();
/// assert_eq!(err.to_string(), "more than 3 pool indices: the pool has 3 rows");
/// ```
pub fn check_count(
    count: usize,
    limit: usize,
    what: &'static str,
    bound: impl FnOnce() -> String,
) -> Result<(), TooMany> {
    if count <= limit { Ok(()) } else { Err(TooMany { what, limit, bound: bound() }) }
}

/// Appends `chunk` to `bytes` within `limit`, reserving fallibly.
fn append(bytes: &mut Vec<u8>, chunk: &[u8], limit: u64, text: bool) -> Result<(), ReadError> {
    if text && let Some(k) = chunk.iter().position(|&b| b == 0) {
        return Err(ReadError::NotText { offset: (bytes.len() + k) as u64 });
    }
    let total = (bytes.len() + chunk.len()) as u64;
    if total > limit {
        return Err(ReadError::TooLarge { limit });
    }
    bytes.try_reserve(chunk.len()).map_err(|_| ReadError::OutOfMemory { bytes: total })?;
    bytes.extend_from_slice(chunk);
    Ok(())
}

fn invalid_utf8(e: std::str::Utf8Error) -> ReadError {
    ReadError::Io(io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines come back as `BufRead::read_line` gives them, across buffer
    /// boundaries, with and without a final newline.
    #[test]
    fn read_line_matches_the_standard_reader() {
        let text = "a\n\nbcd\r\nlast";
        for capacity in [1, 2, 3, 64] {
            let mut ours = io::BufReader::with_capacity(capacity, text.as_bytes());
            let mut std_reader = io::BufReader::new(text.as_bytes());
            let (mut a, mut b) = (String::new(), String::new());
            loop {
                let n = read_line(&mut ours, &mut a, 100).unwrap();
                b.clear();
                let m = std_reader.read_line(&mut b).unwrap();
                assert_eq!((n, &a), (m, &b), "capacity {capacity}");
                if n == 0 {
                    break;
                }
            }
        }
    }

    #[test]
    fn limits_nul_bytes_and_utf8_are_errors() {
        let mut line = String::new();
        let mut r = io::BufReader::with_capacity(2, "abcdef\n".as_bytes());
        assert!(matches!(read_line(&mut r, &mut line, 6), Err(ReadError::TooLarge { limit: 6 })));
        let mut r = io::BufReader::with_capacity(2, "abcdef\n".as_bytes());
        assert_eq!(read_line(&mut r, &mut line, 7).unwrap(), 7);
        let mut r = io::BufReader::with_capacity(2, &b"ab\0c\n"[..]);
        assert!(matches!(read_line(&mut r, &mut line, 100), Err(ReadError::NotText { offset: 2 })));
        let mut r = io::BufReader::new(&b"\xff\n"[..]);
        let err = read_line(&mut r, &mut line, 100).unwrap_err();
        assert!(matches!(&err, ReadError::Io(e) if e.kind() == io::ErrorKind::InvalidData), "{err}");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12\0").unwrap();
        assert!(matches!(read_file(&path, 100, true), Err(ReadError::NotText { offset: 2 })));
        assert_eq!(read_file(&path, 100, false).unwrap(), b"12\0");
        assert!(matches!(read_file(&path, 2, false), Err(ReadError::TooLarge { limit: 2 })));
        std::fs::write(&path, b"\xc3(").unwrap();
        assert!(matches!(read_text(&path, 100), Err(ReadError::Io(_))));
        assert!(matches!(read_file(&dir.path().join("missing"), 100, true), Err(ReadError::Io(_))));
        for (contents, starts) in
            [(&b"MAGICrest"[..], true), (b"MAGIC", true), (b"MAGI", false), (b"MAGIc..", false), (b"", false)]
        {
            std::fs::write(&path, contents).unwrap();
            let got = read_file_starting_with(&path, 100, false, b"MAGIC").unwrap();
            assert_eq!(got.as_deref(), starts.then_some(contents), "{contents:?}");
        }
    }
}
