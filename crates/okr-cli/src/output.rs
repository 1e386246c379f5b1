//! Where `okr` writes results, and how its errors read.
//!
//! - A result file (`predict -o`, `encode -o`) is written with
//!   [`okr_eval::write_atomic`]: built in full in a temporary file of the target
//!   directory, then renamed, so nothing is truncated before the work is done
//!   and an error or a signal leaves the old file as it was.
//! - Standard output is flushed before `okr` exits; a write error there (a
//!   closed pipe, a closed descriptor, a full disk) is an error like any other.
//!   [`Stream::Lines`] commands (`predict`, `encode` without `-o`) treat a
//!   closed pipe as the reader having seen enough (`okr predict ... | head`)
//!   and exit 0; `eval`, whose one JSON object is useless when cut, does not.
//! - [`one_line`]: the error chain on one line, each cause once, without the
//!   ` (os error N)` suffixes, control characters escaped.
//!
//! A standard output closed before `okr` starts (`>&-`) is no case of its
//! own: the Rust runtime opens `/dev/null` on a closed descriptor 0-2 before
//! `main`, so it behaves as `> /dev/null`.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// How a command's standard output is consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Independent lines: a reader may stop early (`| head`), a closed pipe is success.
    Lines,
    /// One document that is worthless when cut: a closed pipe is an error.
    Document,
}

/// Message of a failed write to standard output.
pub const STDOUT_ERROR: &str = "cannot write to standard output";

/// Writes a result to `path` atomically, or to standard output when `None`.
///
/// # Errors
/// The I/O error of the body, the flush or the rename, with the file (or
/// standard output) named.
pub fn write_result(path: Option<&Path>, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    match path {
        Some(p) => okr_eval::write_atomic(p, |w| body(w))?,
        None => {
            let mut w = BufWriter::new(io::stdout().lock());
            body(&mut w).and_then(|()| w.flush()).context(STDOUT_ERROR)?;
        }
    }
    Ok(())
}

/// Whether `err` is a closed pipe on standard output.
pub fn is_broken_stdout(err: &anyhow::Error) -> bool {
    err.to_string() == STDOUT_ERROR
        && err.chain().any(|e| e.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}

/// `text` without the ` (os error N)` suffixes the standard library appends.
fn strip_os_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(" (os error ") {
        let tail = &rest[i + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&rest[..i]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// The error chain as one line: `outer: cause: root`, where a cause whose text
/// the previous part already contains is left out (typed errors that print
/// their source), ` (os error N)` suffixes dropped and control characters
/// (from file contents or names) escaped.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = strip_os_error(&cause.to_string());
        if parts.last().is_some_and(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    okr_eval::error::escape_controls(&parts.join(": ")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_without_doubled_text() {
        let io = io::Error::from_raw_os_error(2);
        let typed = okr_eval::Error::Io { path: "x.arff".into(), source: io };
        let err = anyhow::Error::new(typed).context("reading the training file");
        assert_eq!(one_line(&err), "reading the training file: cannot open x.arff: No such file or directory");
        let err = anyhow::Error::new(io::Error::from_raw_os_error(28)).context(STDOUT_ERROR);
        assert_eq!(one_line(&err), "cannot write to standard output: No space left on device");
        assert!(!is_broken_stdout(&err));
        let err = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context(STDOUT_ERROR);
        assert!(is_broken_stdout(&err));
    }

    #[test]
    fn control_characters_are_escaped() {
        let err = anyhow::anyhow!("bad name '\x1b[31mred\x1b[0m'\nsecond line");
        let line = one_line(&err);
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.contains("\\u{1b}[31mred"), "{line}");
    }

    #[test]
    fn os_error_suffix_only() {
        assert_eq!(strip_os_error("a (os error 13): b (os error x)"), "a: b (os error x)");
    }
}
