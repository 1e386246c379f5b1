//! Mascot Generic Format (MGF) spectral libraries, as GNPS and matchms
//! write them:
//!
//! ```text
//! BEGIN IONS
//! PEPMASS=183.057
//! CHARGE=1-
//! IONMODE=negative
//! NAME=Fuberidazole M-H
//! SMILES=C1=CC=C2C(=C1)NC(=N2)C3=CC=CO3
//! 70.786774 213.612045
//! 94.917038 10964.588867
//! END IONS
//! ```
//!
//! Inside `BEGIN IONS` ... `END IONS`, a line `KEY=VALUE` is metadata (see
//! [`super::spectra`] for the keys) and any other line a peak `mz intensity`
//! (tab, space or comma separated; further columns, such as a fragment
//! charge or an annotation, are ignored). Blank lines and comment lines
//! (starting with `#`, `;`, `!` or `/`) are skipped everywhere; `KEY=VALUE`
//! lines outside a block (global parameters) are accepted and ignored.

use std::path::Path;

use okr_kernels::MAX_PEAKS;

use super::spectra::{Record, SpectrumLibrary, library, parse_peak};
use super::{excerpt, lines, read_text};
use crate::{Error, Result};

/// Reads an MGF spectral library (the format is described in the [module
/// docs](self)).
///
/// # Errors
/// [`Error::Io`], [`Error::InputTooLarge`] or [`Error::NotText`] for a file
/// that cannot be read (above [`MAX_INPUT_BYTES`](crate::MAX_INPUT_BYTES),
/// endless, or with a NUL byte); [`Error::Parse`] with the line for a
/// malformed peak or value, a block that is not closed, `END IONS` without
/// `BEGIN IONS`, or more than [`MAX_PEAKS`] peaks in a spectrum.
///
/// # Example
/// ```
/// use okr_kernels::{IonMode, Rows};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("lib.mgf");
/// std::fs::write(&path, "BEGIN IONS\nPEPMASS=183.057\nCHARGE=1-\nIONMODE=negative\nNAME=Fuberidazole\n\
///     SMILES=C1=CC=C2C(=C1)NC(=N2)C3=CC=CO3\n94.917\t10964.6\n70.786\t213.6\nEND IONS\n")?;
/// let lib = okr_eval::read_mgf(&path)?;
/// let s = lib.spectra.spectrum(0);
/// assert_eq!((lib.len(), s.n_peaks(), s.precursor_mz(), s.charge()), (1, 2, Some(183.057), Some(-1)));
/// assert_eq!(s.ion_mode(), Some(IonMode::Negative));
/// assert_eq!(lib.metadata[0].name.as_deref(), Some("Fuberidazole"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_mgf(path: impl AsRef<Path>) -> Result<SpectrumLibrary> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let mut records = Vec::new();
    let mut current: Option<Record> = None;
    for (no, raw) in lines(&text) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with(['#', ';', '!', '/']) {
            continue;
        }
        let err = |msg: String| Error::parse(path, no, msg);
        if line.eq_ignore_ascii_case("BEGIN IONS") {
            if let Some(r) = &current {
                return Err(err(format!("BEGIN IONS inside the spectrum of line {} (END IONS missing)", r.meta.line)));
            }
            current = Some(Record::new(no));
        } else if line.eq_ignore_ascii_case("END IONS") {
            match current.take() {
                Some(r) => records.push(r),
                None => return Err(err("END IONS without BEGIN IONS".into())),
            }
        } else if let Some(r) = current.as_mut() {
            match line.split_once('=') {
                // A key never starts with a digit; a peak always does.
                Some((k, v)) if !k.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-') => {
                    r.set(k, v).map_err(err)?;
                }
                _ => {
                    if r.peaks.len() >= MAX_PEAKS {
                        return Err(err(format!(
                            "more than {MAX_PEAKS} peaks in the spectrum of line {}",
                            r.meta.line
                        )));
                    }
                    r.peaks.push(parse_peak(line).map_err(err)?);
                }
            }
        } else if !line.contains('=') {
            return Err(err(format!("expected BEGIN IONS, got '{}'", excerpt(line))));
        }
    }
    if let Some(r) = current {
        return Err(Error::parse(
            path,
            r.meta.line,
            "the spectrum that starts here has no END IONS before the end of the file",
        ));
    }
    library(path, records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<SpectrumLibrary> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.mgf");
        std::fs::write(&path, text).unwrap();
        read_mgf(&path)
    }

    fn parse_error(text: &str) -> (usize, String) {
        match read(text) {
            Err(Error::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_line() {
        let (line, msg) = parse_error("BEGIN IONS\nPEPMASS=1\n10 x\nEND IONS\n");
        assert_eq!(line, 3);
        assert!(msg.contains("intensity"), "{msg}");
        assert_eq!(parse_error("BEGIN IONS\n10 1\n").0, 1);
        assert_eq!(parse_error("\n\nEND IONS\n").0, 3);
        assert_eq!(parse_error("BEGIN IONS\nBEGIN IONS\n").0, 2);
        assert_eq!(parse_error("garbage\n").0, 1);
        assert_eq!(parse_error("BEGIN IONS\nCHARGE=x\nEND IONS").0, 2);
        assert_eq!(parse_error("BEGIN IONS\nPEPMASS=-3\nEND IONS").0, 2);
        assert_eq!(parse_error("BEGIN IONS\n-3 5\nEND IONS").0, 2);
        assert_eq!(parse_error("BEGIN IONS\n5\nEND IONS").0, 2);
    }

    #[test]
    fn comments_globals_empty_blocks_and_crlf() {
        let lib = read("\u{feff}# comment\r\nCOM=global\r\nBEGIN IONS\r\nTITLE=t1\r\nEND IONS\r\n\r\nbegin ions\r\nNAME=n\r\nTITLE=t2\r\n1.5 2\r\nend ions").unwrap();
        assert_eq!(lib.len(), 2);
        assert_eq!(lib.metadata[0].name.as_deref(), Some("t1"));
        assert_eq!(lib.metadata[1].name.as_deref(), Some("n"));
        assert_eq!(lib.metadata[1].other.get("title").map(String::as_str), Some("t2"));
        assert_eq!((lib.metadata[0].line, lib.metadata[1].line), (3, 7));
        assert!(lib.spectra.spectrum(0).is_empty());
        assert_eq!(lib.spectra.spectrum(1).peaks(), &[(1.5, 2.0)]);
        assert!(read("").unwrap().is_empty());
    }
}
