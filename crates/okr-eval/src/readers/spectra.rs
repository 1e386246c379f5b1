//! Mass spectral libraries: MGF ([`read_mgf`](super::read_mgf)) and MSP
//! ([`read_msp`](super::read_msp)) files as [`Spectra`] plus the metadata of
//! each spectrum ([`SpectrumMetadata`]).
//!
//! Keys are matched without regard to case, spaces and underscores
//! (`PrecursorMZ`, `PRECURSOR_MZ` and `precursor mz` are one key). The
//! known keys fill the typed fields; every other key is kept, as the file
//! gives its value, in [`SpectrumMetadata::other`] under its lowercase name.
//!
//! | field | MGF keys | MSP keys |
//! |---|---|---|
//! | peaks | `mz intensity [annotation]` lines | `Num Peaks: n`, then `n` pairs `mz intensity [annotation]`, one or several a line (separated by `;`) |
//! | precursor m/z ([`Spectrum::precursor_mz`]) | `PEPMASS` (first number), `PRECURSORMZ` | `PrecursorMZ`, `PEPMASS` |
//! | charge ([`Spectrum::charge`]) | `CHARGE` (`1+`, `2-`, `+1`, `-1`, `0`; the first of `2+ and 3+`) | `Charge` |
//! | ion mode ([`Spectrum::ion_mode`]) | `IONMODE` | `Ion_mode`, `IonMode` (`P`, `N` too) |
//! | name | `NAME`, else `TITLE` | `Name` |
//! | SMILES, InChI, InChIKey, formula | `SMILES`, `INCHI`, `INCHIKEY`, `FORMULA` | `SMILES`, `InChI`, `InChIKey`, `Formula` |
//!
//! Empty values and `N/A`, `NA`, `n/a` (any case) are missing values. A
//! precursor m/z of 0 (GNPS's "unknown") is missing; an ion mode other than
//! positive / negative is missing, its text kept in `other`.

use std::collections::BTreeMap;

#[cfg(doc)]
use okr_kernels::Spectrum;
use okr_kernels::{IonMode, Rows, Spectra};

use super::excerpt;

/// The metadata of one library spectrum (the peaks, precursor m/z, charge
/// and ion mode are on the [`Spectrum`] itself).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpectrumMetadata {
    /// 1-based line of the file where the spectrum starts.
    pub line: usize,
    /// Compound name (MGF `NAME`, else `TITLE`; MSP `Name`).
    pub name: Option<String>,
    /// SMILES of the structure.
    pub smiles: Option<String>,
    /// InChI of the structure.
    pub inchi: Option<String>,
    /// InChIKey of the structure.
    pub inchikey: Option<String>,
    /// Molecular formula.
    pub formula: Option<String>,
    /// Every other key (lowercase) with its value as given.
    pub other: BTreeMap<String, String>,
}

impl SpectrumMetadata {
    /// The first block of the InChIKey (14 upper-case letters: the
    /// molecular skeleton without stereochemistry), when the InChIKey has
    /// the standard shape `XXXXXXXXXXXXXX-YYYYYYYYFV-P`. Spectra of one
    /// structure share it, so it groups cross-validation folds.
    ///
    /// # Example
    /// ```
    /// let mut m = okr_eval::SpectrumMetadata::default();
    /// m.inchikey = Some("XTWYTFMLZFPYCI-UHFFFAOYSA-N".into());
    /// assert_eq!(m.inchikey_first_block(), Some("XTWYTFMLZFPYCI"));
    /// m.inchikey = Some("not a key".into());
    /// assert_eq!(m.inchikey_first_block(), None);
    /// ```
    pub fn inchikey_first_block(&self) -> Option<&str> {
        let key = self.inchikey.as_deref()?;
        let b = key.as_bytes();
        let shape = b.len() == 27
            && b[14] == b'-'
            && b[25] == b'-'
            && b.iter().enumerate().all(|(i, c)| i == 14 || i == 25 || c.is_ascii_uppercase());
        shape.then(|| &key[..14])
    }
}

/// The spectra of a library file and their metadata, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct SpectrumLibrary {
    /// The spectra.
    pub spectra: Spectra,
    /// One entry per spectrum.
    pub metadata: Vec<SpectrumMetadata>,
}

impl SpectrumLibrary {
    /// Number of spectra.
    pub fn len(&self) -> usize {
        self.spectra.n_rows()
    }
    /// Whether the file held no spectrum.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A known metadata key, after normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Name,
    Title,
    Precursor,
    Charge,
    IonMode,
    Smiles,
    Inchi,
    Inchikey,
    Formula,
    NumPeaks,
    Other,
}

/// The key `raw` (any case, spaces and underscores ignored).
pub(crate) fn key(raw: &str) -> Key {
    let k: String = raw.chars().filter(|c| *c != ' ' && *c != '_').flat_map(char::to_lowercase).collect();
    match k.as_str() {
        "name" | "compoundname" => Key::Name,
        "title" => Key::Title,
        "pepmass" | "precursormz" | "precursormass" => Key::Precursor,
        "charge" | "precursorcharge" => Key::Charge,
        "ionmode" | "ionisationmode" | "ionizationmode" | "polarity" => Key::IonMode,
        "smiles" => Key::Smiles,
        "inchi" => Key::Inchi,
        "inchikey" => Key::Inchikey,
        "formula" | "molecularformula" => Key::Formula,
        "numpeaks" => Key::NumPeaks,
        _ => Key::Other,
    }
}

/// `None` for an empty or "not available" value.
fn present(value: &str) -> Option<String> {
    let v = value.trim();
    let missing = v.is_empty() || ["n/a", "na", "none", "null"].iter().any(|m| v.eq_ignore_ascii_case(m));
    (!missing).then(|| v.to_string())
}

/// A spectrum being read: metadata plus the fields that go on the
/// [`Spectrum`].
#[derive(Debug, Default)]
pub(crate) struct Record {
    pub meta: SpectrumMetadata,
    pub peaks: Vec<(f64, f64)>,
    pub precursor_mz: Option<f64>,
    pub charge: Option<i32>,
    pub ion_mode: Option<IonMode>,
}

impl Record {
    pub(crate) fn new(line: usize) -> Self {
        let mut r = Self::default();
        r.meta.line = line;
        r
    }

    /// Stores `raw_key = value` (`Key::NumPeaks` is the caller's); a
    /// message for a malformed value.
    pub(crate) fn set(&mut self, raw_key: &str, value: &str) -> Result<(), String> {
        let m = &mut self.meta;
        match key(raw_key) {
            Key::Name => m.name = present(value),
            Key::Smiles => m.smiles = present(value),
            Key::Inchi => m.inchi = present(value),
            Key::Inchikey => m.inchikey = present(value),
            Key::Formula => m.formula = present(value),
            Key::Precursor => self.precursor_mz = parse_precursor(value)?,
            Key::Charge => self.charge = parse_charge(value)?,
            Key::IonMode => {
                self.ion_mode = parse_ion_mode(value);
                if self.ion_mode.is_none() && present(value).is_some() {
                    m.other.insert(raw_key.trim().to_lowercase(), value.trim().to_string());
                }
            }
            Key::Title | Key::NumPeaks | Key::Other => {
                m.other.insert(raw_key.trim().to_lowercase(), value.trim().to_string());
            }
        }
        Ok(())
    }

    /// The finished spectrum and its metadata.
    pub(crate) fn finish(mut self) -> Result<(okr_kernels::Spectrum, SpectrumMetadata), okr_kernels::Error> {
        if self.meta.name.is_none() {
            self.meta.name = self.meta.other.get("title").and_then(|t| present(t));
        }
        let mut s = okr_kernels::Spectrum::new(self.peaks)?;
        if let Some(mz) = self.precursor_mz {
            s = s.with_precursor_mz(mz)?;
        }
        if let Some(c) = self.charge {
            s = s.with_charge(c);
        }
        if let Some(mode) = self.ion_mode {
            s = s.with_ion_mode(mode);
        }
        Ok((s, self.meta))
    }
}

/// The precursor m/z: the first number of the value (`PEPMASS=mz
/// [intensity]`); 0 or a missing value is unknown.
fn parse_precursor(value: &str) -> Result<Option<f64>, String> {
    let Some(v) = present(value) else { return Ok(None) };
    let tok = v.split(|c: char| c.is_whitespace() || c == ',').next().unwrap_or("");
    match tok.parse::<f64>() {
        Ok(0.0) => Ok(None),
        Ok(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
        _ => Err(format!("expected a precursor m/z (a finite number >= 0), got '{}'", excerpt(&v))),
    }
}

/// A charge `1+`, `2-`, `+1`, `-1`, `1`; the first of `2+ and 3+` or `2+,3+`.
fn parse_charge(value: &str) -> Result<Option<i32>, String> {
    let Some(v) = present(value) else { return Ok(None) };
    let tok = v.split(|c: char| c.is_whitespace() || c == ',').next().unwrap_or("");
    let (digits, negative) = if let Some(d) = tok.strip_suffix('+') {
        (d, false)
    } else if let Some(d) = tok.strip_suffix('-') {
        (d, true)
    } else if let Some(d) = tok.strip_prefix('+') {
        (d, false)
    } else if let Some(d) = tok.strip_prefix('-') {
        (d, true)
    } else {
        (tok, false)
    };
    match digits.parse::<u16>() {
        Ok(n) => Ok(Some(if negative { -i32::from(n) } else { i32::from(n) })),
        Err(_) => Err(format!("expected a charge such as 1+, 2- or -1, got '{}'", excerpt(&v))),
    }
}

/// `positive` / `negative` (also `pos`, `neg`, `p`, `n`, `+`, `-`), any case.
fn parse_ion_mode(value: &str) -> Option<IonMode> {
    match value.trim().to_lowercase().as_str() {
        "positive" | "pos" | "p" | "+" => Some(IonMode::Positive),
        "negative" | "neg" | "n" | "-" => Some(IonMode::Negative),
        _ => None,
    }
}

/// Parses `mz intensity [annotation...]` (whitespace or a comma between the
/// numbers); a message for anything else.
pub(crate) fn parse_peak(text: &str) -> Result<(f64, f64), String> {
    let mut tokens = text.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty());
    let (Some(a), Some(b)) = (tokens.next(), tokens.next()) else {
        return Err(format!("expected a peak 'mz intensity', got '{}'", excerpt(text.trim())));
    };
    let mz = a.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0);
    let intensity = b.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0);
    match (mz, intensity) {
        (Some(mz), Some(i)) => Ok((mz, i)),
        (None, _) => Err(format!("expected a peak m/z (a finite number > 0), got '{}'", excerpt(a))),
        (_, None) => Err(format!("expected a peak intensity (a finite number >= 0), got '{}'", excerpt(b))),
    }
}

/// The library of the finished records; a record the kernel crate refuses
/// (not possible after the per-line checks) is reported at its first line.
pub(crate) fn library(path: &std::path::Path, records: Vec<Record>) -> crate::Result<SpectrumLibrary> {
    let mut spectra = Vec::with_capacity(records.len());
    let mut metadata = Vec::with_capacity(records.len());
    for r in records {
        let line = r.meta.line;
        let (s, m) = r.finish().map_err(|e| crate::Error::parse(path, line, e.to_string()))?;
        spectra.push(s);
        metadata.push(m);
    }
    Ok(SpectrumLibrary { spectra: Spectra::new(spectra), metadata })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_values_and_peaks() {
        assert_eq!(key("PrecursorMZ"), Key::Precursor);
        assert_eq!(key("PRECURSOR_MZ"), Key::Precursor);
        assert_eq!(key("Num peaks"), Key::NumPeaks);
        assert_eq!(key("Ion_mode"), Key::IonMode);
        assert_eq!(key("INCHIAUX"), Key::Other);
        for (v, want) in [("1+", Some(1)), ("2-", Some(-2)), ("-1", Some(-1)), ("+3", Some(3)), ("0", Some(0))] {
            assert_eq!(parse_charge(v).unwrap(), want, "{v}");
        }
        assert_eq!(parse_charge("2+ and 3+").unwrap(), Some(2));
        assert_eq!(parse_charge("").unwrap(), None);
        assert!(parse_charge("x").is_err());
        assert!(parse_charge("99999").is_err());
        assert_eq!(parse_precursor("183.057 1200.5").unwrap(), Some(183.057));
        assert_eq!(parse_precursor("0.0").unwrap(), None);
        assert_eq!(parse_precursor(" N/A ").unwrap(), None);
        assert!(parse_precursor("-5").is_err());
        assert!(parse_precursor("nan").is_err());
        assert_eq!(parse_ion_mode("POSITIVE"), Some(IonMode::Positive));
        assert_eq!(parse_ion_mode("N"), Some(IonMode::Negative));
        assert_eq!(parse_ion_mode("n/a"), None);
        assert_eq!(parse_peak("70.78\t213.6").unwrap(), (70.78, 213.6));
        assert_eq!(parse_peak(" 35 19 \"b2\"").unwrap(), (35.0, 19.0));
        assert_eq!(parse_peak("12,0").unwrap(), (12.0, 0.0));
        assert!(parse_peak("12").unwrap_err().contains("expected a peak"));
        assert!(parse_peak("0 5").unwrap_err().contains("m/z"));
        assert!(parse_peak("5 -1").unwrap_err().contains("intensity"));
        assert!(parse_peak("5 inf").is_err());
        assert_eq!(present(" n/A "), None);
        assert_eq!(present(" CCO "), Some("CCO".into()));
    }
}
