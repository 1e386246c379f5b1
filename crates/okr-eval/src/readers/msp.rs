//! NIST MSP spectral libraries, as NIST, MoNA and MassBank export them:
//!
//! ```text
//! Name: Kojic acid
//! InChIKey: BEJNERDRQOWKJM-UHFFFAOYSA-N
//! PrecursorMZ: 141.0193
//! Ion_mode: NEGATIVE
//! Num Peaks: 3
//! 57.0346 6.2
//! 69.0346 4.1; 141.0193 100
//!
//! Name: ...
//! ```
//!
//! A record is a block of `Key: value` lines (see [`super::spectra`] for the
//! keys) ending with `Num Peaks: n`, then exactly `n` peaks `mz intensity`,
//! one or several a line, separated by `;` (whitespace, tabs or a comma
//! between the two numbers; an annotation after them, such as `"b2"`, is
//! ignored). The record ends after its `n`-th peak. Blank lines separate
//! records and are skipped; comment lines start with `#`.

use std::path::Path;

use okr_kernels::MAX_PEAKS;

use super::spectra::{Key, Record, SpectrumLibrary, key, library, parse_peak};
use super::{excerpt, lines, read_text};
use crate::{Error, Result};

/// Reads an MSP spectral library (the format is described in the [module
/// docs](self)).
///
/// # Errors
/// [`Error::Io`], [`Error::InputTooLarge`] or [`Error::NotText`] for a file
/// that cannot be read; [`Error::Parse`] with the line for a line that is
/// neither `Key: value` nor a blank line where a record's header is expected,
/// a malformed value or peak, a `Num Peaks` above [`MAX_PEAKS`], or fewer
/// peaks than announced (at the line where the next record starts, or at
/// the last line).
///
/// # Example
/// ```
/// use okr_kernels::Rows;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("lib.msp");
/// std::fs::write(&path, "Name: ADP\nInChIKey: XTWYTFMLZFPYCI-UHFFFAOYSA-N\nPrecursorMZ: 428.31\n\
///     Num Peaks: 3\n135.0 83; 136.0 999;\n210 5\n\nName: empty\nNum Peaks: 0\n")?;
/// let lib = okr_eval::read_msp(&path)?;
/// assert_eq!((lib.len(), lib.spectra.spectrum(0).n_peaks()), (2, 3));
/// assert_eq!(lib.spectra.spectrum(0).precursor_mz(), Some(428.31));
/// assert_eq!(lib.metadata[0].inchikey_first_block(), Some("XTWYTFMLZFPYCI"));
/// assert_eq!(lib.metadata[1].name.as_deref(), Some("empty"));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_msp(path: impl AsRef<Path>) -> Result<SpectrumLibrary> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let mut records = Vec::new();
    // The record being read, and how many peaks it still expects once its
    // `Num Peaks` line has been read.
    let mut current: Option<(Record, Option<usize>)> = None;
    let mut last_line = 0;
    for (no, raw) in lines(&text) {
        last_line = no;
        let line = raw.trim();
        let err = |msg: String| Error::parse(path, no, msg);
        match current.as_mut() {
            Some((r, Some(remaining))) => {
                if line.is_empty() {
                    continue;
                }
                // A peak line (possibly several peaks).
                for part in line.split(';') {
                    if part.trim().is_empty() {
                        continue;
                    }
                    if *remaining == 0 {
                        return Err(err(format!(
                            "more peaks than the {} announced by Num Peaks for the record of line {}",
                            r.peaks.len(),
                            r.meta.line
                        )));
                    }
                    let peak = parse_peak(part).map_err(|m| {
                        let n = r.peaks.len();
                        err(format!("{m} (peak {} of {} of the record of line {})", n + 1, n + *remaining, r.meta.line))
                    })?;
                    r.peaks.push(peak);
                    *remaining -= 1;
                }
            }
            Some((r, slot)) => {
                if line.is_empty() {
                    return Err(err(format!("the record of line {} ends before its Num Peaks line", r.meta.line)));
                }
                if !line.starts_with('#') {
                    header_line(r, slot, line).map_err(err)?;
                }
            }
            None => {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                if !line.contains(':') {
                    return Err(err(format!("expected a record ('Name: ...'), got '{}'", excerpt(line))));
                }
                let (r, slot) = current.insert((Record::new(no), None));
                header_line(r, slot, line).map_err(err)?;
            }
        }
        if let Some((_, Some(0))) = current {
            records.push(current.take().expect("a record is open").0);
        }
    }
    if let Some((r, remaining)) = current {
        let msg = match remaining {
            None => format!("the record of line {} has no Num Peaks line", r.meta.line),
            Some(k) => format!(
                "the file ends after {} of the {} peaks of the record of line {}",
                r.peaks.len(),
                r.peaks.len() + k,
                r.meta.line
            ),
        };
        return Err(Error::parse(path, last_line, msg));
    }
    library(path, records)
}

/// A `Key: value` line of a record's header; `Num Peaks` sets `slot`.
fn header_line(r: &mut Record, slot: &mut Option<usize>, line: &str) -> std::result::Result<(), String> {
    let Some((k, v)) = line.split_once(':') else {
        return Err(format!("expected 'Key: value' or 'Num Peaks: n', got '{}'", excerpt(line)));
    };
    if key(k) != Key::NumPeaks {
        return r.set(k, v);
    }
    let n = v
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|&n| n <= MAX_PEAKS)
        .ok_or_else(|| format!("expected a peak count 0 to {MAX_PEAKS}, got '{}'", excerpt(v.trim())))?;
    r.peaks.try_reserve_exact(n).map_err(|_| format!("cannot reserve memory for {n} peaks"))?;
    r.meta.other.insert(k.trim().to_lowercase(), v.trim().to_string());
    *slot = Some(n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<SpectrumLibrary> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.msp");
        std::fs::write(&path, text).unwrap();
        read_msp(&path)
    }

    fn parse_error(text: &str) -> (usize, String) {
        match read(text) {
            Err(Error::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_line() {
        let (line, msg) = parse_error("Name: a\nNum Peaks: 3\n1 2; 3 4\n");
        assert_eq!(line, 4);
        assert!(msg.contains("after 2 of the 3 peaks"), "{msg}");
        let (line, msg) = parse_error("Name: a\nNum Peaks: 1\n1 2; 3 4\n");
        assert_eq!(line, 3);
        assert!(msg.contains("more peaks"), "{msg}");
        assert_eq!(parse_error("Name: a\nNum Peaks: x\n").0, 2);
        assert_eq!(parse_error("Name: a\nNum Peaks: 99999999999\n").0, 2);
        assert_eq!(parse_error("Name: a\nNum Peaks: 2\n1 2\n0 5\n").0, 4);
        assert_eq!(parse_error("Name: a\nPrecursorMZ: abc\nNum Peaks: 0\n").0, 2);
        assert_eq!(parse_error("Name: a\n\nNum Peaks: 0\n").0, 2);
        assert_eq!(parse_error("Name: a\nno colon\n").0, 2);
        assert_eq!(parse_error("12 5\n").0, 1);
        assert_eq!(parse_error("Name: a\nComments: x\n").0, 3);
        assert_eq!(parse_error("Name: a\nComments: x").0, 2);
    }

    #[test]
    fn records_without_blank_lines_and_crlf() {
        let lib = read("\u{feff}Name: a\r\nNum peaks: 2\r\n40\t147;  41   57;\r\nName: b\r\nION_MODE: P\r\nNUM PEAKS: 1\r\n5 1 \"y1\"")
            .unwrap();
        assert_eq!(lib.len(), 2);
        assert_eq!(lib.spectra.spectrum(0).peaks(), &[(40.0, 147.0), (41.0, 57.0)]);
        assert_eq!(lib.spectra.spectrum(1).ion_mode(), Some(okr_kernels::IonMode::Positive));
        assert_eq!(lib.metadata[1].line, 4);
        assert_eq!(lib.metadata[0].other.get("num peaks").map(String::as_str), Some("2"));
    }
}
