//! Readers and writers of multi-label data files and spectral libraries.
//!
//! | format | read | write | features |
//! |---|---|---|---|
//! | Mulan ARFF (dense or sparse rows) | [`read_arff`] | [`write_arff`] | dense or sparse, as in the file |
//! | svmlight / libsvm multi-label | [`read_svmlight`] | [`write_svmlight`] | sparse |
//! | Extreme Classification repository | [`read_xc`] | [`write_xc`] | sparse |
//! | CSV (features, then label columns) | [`read_csv`] | [`write_csv`] | dense |
//! | USPS zipcode digits (`label v1 .. v256`) | [`read_usps`] | - | dense images |
//! | MGF spectral library (GNPS, matchms) | [`read_mgf`] | - | MS/MS spectra ([`SpectrumLibrary`]) |
//! | MSP spectral library (NIST, MoNA) | [`read_msp`] | - | MS/MS spectra ([`SpectrumLibrary`]) |
//!
//! [`DataFormat`] tells the first four apart by extension, and
//! [`read_data_file`] / [`read_data_file_for_model`] read any of them.
//!
//! All readers take the file exactly as it is: CRLF or LF line ends, a missing
//! final newline and a UTF-8 byte-order mark are accepted. Every parse error is an
//! [`Error::Parse`](crate::Error::Parse) naming the file, the 1-based line and
//! what was expected (control characters quoted from the file are escaped).
//! Inputs are bounded: a file above [`MAX_INPUT_BYTES`],
//! an endless one (`/dev/zero`) or one with a NUL byte is an error, memory
//! for it is reserved fallibly, and names that a file does not give are
//! numbered on demand ([`Names`](crate::dataset::Names)), never one string per
//! index. Writers go through [`write_atomic`], so a failed
//! write never leaves a partial file.
//! Numbers are written in the shortest form that reads back to the same `f64`,
//! so every writer round-trips with its reader.

pub mod arff;
pub mod csv;
pub mod format;
pub mod lists;
pub mod mgf;
pub mod model_input;
pub mod msp;
pub mod ranking;
pub mod spectra;
pub mod svmlight;
pub mod tu;
pub mod usps;
pub mod xc;

pub use arff::{read_arff, write_arff};
pub use csv::{CsvHeader, read_csv, write_csv};
pub use format::{DataFormat, ReadOptions, read_data_file, read_data_file_for_model};
pub use lists::{read_indices, read_label_sets, read_sample_weights, read_thresholds};
pub use mgf::read_mgf;
pub use model_input::{
    LabelColumns, ModelInput, ModelShape, read_arff_for_model, read_csv_for_model, read_svmlight_for_model,
    read_xc_for_model,
};
pub use msp::read_msp;
pub use spectra::{SpectrumLibrary, SpectrumMetadata};
pub use svmlight::{SvmlightOptions, read_svmlight, write_svmlight};
pub use tu::{TuDataset, read_tu, read_tu_graphs, tu_files};
pub use usps::{USPS_PIXELS, UspsImages, find_usps_in, read_usps};
pub use xc::{read_xc, write_xc};

use std::path::Path;

use crate::Result;
use crate::output::{MAX_INPUT_BYTES, read_bounded};
pub(crate) use crate::output::{try_vec, write_atomic};

/// How many of a file's last columns (attributes) are labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LabelCount {
    /// Exactly this many.
    Fixed(usize),
    /// A file to predict on: `n_features` feature columns, then either
    /// `n_labels` label columns or none, told apart by the column count.
    Optional {
        /// Feature columns.
        n_features: usize,
        /// Label columns when present.
        n_labels: usize,
    },
}

impl LabelCount {
    /// The label count of a file with `n_cols` columns (`what` names them in messages).
    pub(crate) fn resolve(self, n_cols: usize, what: &str) -> std::result::Result<usize, String> {
        match self {
            LabelCount::Fixed(l) if l > n_cols => {
                Err(format!("expected at least n_labels = {l} {what}, found {n_cols}"))
            }
            LabelCount::Fixed(l) => Ok(l),
            LabelCount::Optional { n_features: d, n_labels: l } => {
                if n_cols == d {
                    Ok(0)
                } else if Some(n_cols) == d.checked_add(l) {
                    Ok(l)
                } else {
                    Err(format!(
                        "expected {d} {what} (the model's features) or {} (features, then its {l} labels), found {n_cols}",
                        d.saturating_add(l)
                    ))
                }
            }
        }
    }
}

/// Reads a whole text file (at most [`MAX_INPUT_BYTES`], no NUL byte).
/// Invalid UTF-8 is replaced (numbers are ASCII; only names can be affected)
/// and a leading byte-order mark is dropped.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let bytes = read_bounded(path, MAX_INPUT_BYTES)?;
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

/// Shortens `s` for an error message, with control characters escaped.
pub(crate) fn excerpt(s: &str) -> String {
    const MAX: usize = 40;
    let short = if s.chars().count() <= MAX {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(MAX).collect::<String>())
    };
    crate::error::escape_controls(&short).into_owned()
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
}
