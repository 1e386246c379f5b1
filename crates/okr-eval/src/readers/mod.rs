//! Readers and writers of multi-label data files.
//!
//! | format | read | write | features |
//! |---|---|---|---|
//! | Mulan ARFF (dense or sparse rows) | [`read_arff`] | [`write_arff`] | dense or sparse, as in the file |
//! | svmlight / libsvm multi-label | [`read_svmlight`] | [`write_svmlight`] | sparse |
//! | Extreme Classification repository | [`read_xc`] | [`write_xc`] | sparse |
//! | CSV (features, then label columns) | [`read_csv`] | [`write_csv`] | dense |
//! | USPS zipcode digits (`label v1 .. v256`) | [`read_usps`] | - | dense images |
//!
//! All readers take the file exactly as it is: CRLF or LF line ends, a missing
//! final newline and a UTF-8 byte-order mark are accepted. Every parse error is an
//! [`Error::Parse`] naming the file, the 1-based line and
//! what was expected. Writers write to a temporary file in the target directory
//! and rename it into place, so a failed write never leaves a partial file.
//! Numbers are written in the shortest form that reads back to the same `f64`,
//! so every writer round-trips with its reader.

pub mod arff;
pub mod csv;
pub mod ranking;
pub mod svmlight;
pub mod tu;
pub mod usps;
pub mod xc;

pub use arff::{read_arff, write_arff};
pub use csv::{CsvHeader, read_csv, write_csv};
pub use svmlight::{SvmlightOptions, read_svmlight, write_svmlight};
pub use tu::{TuDataset, read_tu};
pub use usps::{USPS_PIXELS, UspsImages, find_usps_in, read_usps};
pub use xc::{read_xc, write_xc};

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Reads a whole text file. Invalid UTF-8 is replaced (numbers are ASCII; only
/// names can be affected) and a leading byte-order mark is dropped.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let bytes = fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// `(1-based line number, line without its `\n` or `\r\n`)`.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n').enumerate().map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// Shortens `s` for an error message.
pub(crate) fn excerpt(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() <= MAX { s.to_string() } else { format!("{}...", s.chars().take(MAX).collect::<String>()) }
}

/// Appends `v` in the shortest form that parses back to the same `f64`
/// (integers without a fractional part).
pub(crate) fn push_f64(out: &mut String, v: f64) {
    use std::fmt::Write as _;
    if v == v.trunc() && v.abs() < 1e15 {
        let _ = write!(out, "{}", v as i64);
    } else {
        let _ = write!(out, "{v:?}");
    }
}

/// Parses a finite `f64`, returning a message on failure.
pub(crate) fn parse_finite(tok: &str, what: impl FnOnce() -> String) -> std::result::Result<f64, String> {
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("expected a finite number for {}, got '{}'", what(), excerpt(tok))),
        Err(_) if tok == "?" => {
            Err(format!("expected a number for {}, got the missing value '?' (not supported)", what()))
        }
        Err(_) => Err(format!("expected a number for {}, got '{}'", what(), excerpt(tok))),
    }
}

/// The temporary file next to `path` that [`write_atomic`] renames into place.
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Writes `path` atomically: `body` writes a temporary file in the same
/// directory, which is then renamed over `path`. On failure the temporary file
/// is removed and `path` is untouched.
pub(crate) fn write_atomic(path: &Path, body: impl FnOnce(&mut BufWriter<fs::File>) -> io::Result<()>) -> Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let file = fs::File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        body(&mut w)?;
        w.flush()?;
        w.into_inner().map_err(io::IntoInnerError::into_error)?.sync_all()?;
        fs::rename(&tmp, path)
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&tmp);
        Error::Write { path: path.to_path_buf(), source }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip() {
        for v in [0.0, 1.0, -3.0, 0.1, 1e-300, -2.5e17, 123456.789, f64::MAX, f64::MIN_POSITIVE, 1e15, 0.3] {
            let mut s = String::new();
            push_f64(&mut s, v);
            assert_eq!(s.parse::<f64>().unwrap(), v, "{s}");
        }
        let mut s = String::new();
        push_f64(&mut s, 2.0);
        assert_eq!(s, "2");
    }

    #[test]
    fn line_endings() {
        let v: Vec<_> = lines("a\r\nb\nc").collect();
        assert_eq!(v, [(1, "a"), (2, "b"), (3, "c")]);
    }

    #[test]
    fn atomic_write_failure_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let e = write_atomic(&path, |_| Err(io::Error::other("boom"))).unwrap_err();
        assert!(e.to_string().contains("out.txt") && e.to_string().contains("boom"), "{e}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomic(&path, |w| w.write_all(b"ok")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "ok");
        let e = write_atomic(&dir.path().join("missing/x.txt"), |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().starts_with("cannot write "), "{e}");
    }
}
