//! The row syntax of okr's output files: one function writes and one parses
//! each kind of row, for every file that holds them (training outputs,
//! candidate pools, per-query candidate files, prediction files).
//!
//! | rows of | syntax | example | written by | parsed by |
//! |---|---|---|---|---|
//! | label sets, sparse fingerprints | the 0-based indices of the set labels / bits, separated by commas or whitespace; [`EMPTY_SET`] (`-`) for none | `0,3,4` | [`format_index_set`] | [`parse_index_set`] |
//! | dense fingerprints | one value 0 or 1 per bit | `1,0,0,1` | [`format_bits`] | [`parse_bits`] |
//! | vectors | finite numbers | `0.5,-0.001,2.0` | [`format_values`] | [`parse_values`] |
//!
//! okr writes commas and spells the empty set `-`, so that every row is a
//! visible line (readers of row files skip blank lines). Readers also accept
//! a blank row as the empty set where a blank line is a row (prediction files
//! of okr before this convention). Values are written with Rust's shortest
//! round-trip formatting, so a written vector parses back to the same `f64`s.
//!
//! A file of rows: [`data_lines`] gives its rows with their 1-based line
//! numbers (skipping blank lines and `#` comments), a [`RowError`] becomes a
//! [`LineError`] naming the line.
//!
//! # Example
//! ```
//! use okr_io::rows::{format_index_set, parse_index_set, parse_values, format_values};
//! assert_eq!(format_index_set(&[]), "-");
//! assert_eq!(parse_index_set(&format_index_set(&[0, 3]), 4)?, vec![0, 3]);
//! assert_eq!(parse_index_set("-", 4)?, Vec::<usize>::new());
//! assert_eq!(parse_values(&format_values(&[0.1, -2.0]))?, vec![0.1, -2.0]);
//! assert_eq!(parse_index_set("1 9", 4).unwrap_err().to_string(), "index 9 out of range (width 4)");
//! # Ok::<(), okr_io::rows::RowError>(())
//! ```

use std::fmt::Write as _;

/// How okr writes the empty label set or fingerprint.
pub const EMPTY_SET: &str = "-";

/// What is wrong with one row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RowError {
    /// A token that is not what the row holds.
    #[error("expected {expected}, found {found:?}")]
    Token {
        /// What was expected (`"an index"`, `"0 or 1"`, `"a finite number"`).
        expected: &'static str,
        /// The token, at most 40 characters of it.
        found: String,
    },
    /// An index not below the width.
    #[error("index {index} out of range (width {width})")]
    OutOfRange {
        /// The index.
        index: usize,
        /// The number of labels or bits.
        width: usize,
    },
    /// A row of another width than the rows before it.
    #[error("expected {expected} values, found {found}")]
    Width {
        /// The width of the earlier rows.
        expected: usize,
        /// This row's.
        found: usize,
    },
}

/// A [`RowError`] on a 1-based line of a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {error}")]
pub struct LineError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong with it.
    pub error: RowError,
}

fn token(expected: &'static str, found: &str) -> RowError {
    RowError::Token { expected, found: found.chars().take(40).collect() }
}

/// The fields of a row: separated by commas and / or whitespace.
///
/// # Example
/// ```
/// let f: Vec<&str> = okr_io::rows::fields(" 1, 2\t3 ,,4 ").collect();
/// assert_eq!(f, ["1", "2", "3", "4"]);
/// ```
pub fn fields(row: &str) -> impl Iterator<Item = &str> {
    row.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty())
}

/// The data lines of a text file with their 1-based line numbers, trimmed;
/// blank lines and lines starting with `#` are skipped.
///
/// # Example
/// ```
/// let rows: Vec<_> = okr_io::rows::data_lines("# c\n1 2\n\n 3 \n").collect();
/// assert_eq!(rows, [(2, "1 2"), (4, "3")]);
/// ```
pub fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Parses a label set or sparse fingerprint: the indices of its set labels
/// or bits, each `< width`, in the order given; `-` or a blank row is the
/// empty set.
///
/// # Errors
/// [`RowError::Token`] for a token that is not an index,
/// [`RowError::OutOfRange`] for an index `>= width`.
pub fn parse_index_set(row: &str, width: usize) -> Result<Vec<usize>, RowError> {
    let row = row.trim();
    if row == EMPTY_SET {
        return Ok(Vec::new());
    }
    fields(row)
        .map(|t| {
            let index: usize = t.parse().map_err(|_| token("an index", t))?;
            if index >= width {
                return Err(RowError::OutOfRange { index, width });
            }
            Ok(index)
        })
        .collect()
}

/// Writes a label set or sparse fingerprint: its indices separated by
/// commas, [`EMPTY_SET`] when empty (no newline).
pub fn format_index_set(set: &[usize]) -> String {
    if set.is_empty() {
        return EMPTY_SET.to_string();
    }
    let mut out = String::with_capacity(set.len() * 4);
    for (k, j) in set.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{j}");
    }
    out
}

/// Parses a dense fingerprint, one value 0 or 1 per bit: the indices of the
/// set bits and the number of values.
///
/// # Errors
/// [`RowError::Token`] for a value other than 0 or 1.
pub fn parse_bits(row: &str) -> Result<(Vec<usize>, usize), RowError> {
    let mut set = Vec::new();
    let mut width = 0;
    for t in fields(row) {
        match t.parse::<f64>() {
            Ok(1.0) => set.push(width),
            Ok(0.0) => {}
            _ => return Err(token("0 or 1", t)),
        }
        width += 1;
    }
    Ok((set, width))
}

/// Writes a dense fingerprint of `width` bits with the bits of `set` at 1,
/// comma-separated (no newline). Indices `>= width` are ignored.
pub fn format_bits(set: &[usize], width: usize) -> String {
    let mut bits = vec!["0"; width];
    for &j in set.iter().filter(|&&j| j < width) {
        bits[j] = "1";
    }
    bits.join(",")
}

/// Parses a vector of finite numbers.
///
/// # Errors
/// [`RowError::Token`] for a token that is not a finite number.
pub fn parse_values(row: &str) -> Result<Vec<f64>, RowError> {
    fields(row)
        .map(|t| t.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| token("a finite number", t)))
        .collect()
}

/// Writes a vector, comma-separated, each value in Rust's shortest form
/// that parses back to the same `f64` (no newline).
pub fn format_values(values: &[f64]) -> String {
    let mut out = String::with_capacity(values.len() * 8);
    for (k, v) in values.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{v:?}");
    }
    out
}

/// Checks that a row of `found` values has the width of the rows before
/// it; the first row sets `width`.
///
/// # Errors
/// [`RowError::Width`].
pub fn check_width(width: &mut Option<usize>, found: usize) -> Result<(), RowError> {
    match *width {
        None => {
            *width = Some(found);
            Ok(())
        }
        Some(expected) if expected != found => Err(RowError::Width { expected, found }),
        Some(_) => Ok(()),
    }
}

/// Parses every data line of `text` (see [`data_lines`]) with `parse`.
///
/// # Errors
/// The first [`RowError`], as a [`LineError`] naming its line.
///
/// # Example
/// ```
/// use okr_io::rows::{parse_lines, parse_values};
/// let rows = parse_lines("1 2\n# c\n3 x\n", parse_values).unwrap_err();
/// assert_eq!(rows.to_string(), "line 3: expected a finite number, found \"x\"");
/// ```
pub fn parse_lines<T>(text: &str, mut parse: impl FnMut(&str) -> Result<T, RowError>) -> Result<Vec<T>, LineError> {
    data_lines(text).map(|(line, row)| parse(row).map_err(|error| LineError { line, error })).collect()
}

/// Parses a table of vectors (all of one width): the rows and the width (0
/// for no row).
///
/// # Errors
/// A [`LineError`] for a token that is not a finite number or a row of
/// another width than the first.
pub fn parse_value_table(text: &str) -> Result<(Vec<Vec<f64>>, usize), LineError> {
    let mut width = None;
    let rows = parse_lines(text, |row| {
        let values = parse_values(row)?;
        check_width(&mut width, values.len())?;
        Ok(values)
    })?;
    Ok((rows, width.unwrap_or(0)))
}

/// Parses a table of dense fingerprints (all of one width): the indices of
/// the set bits per row, and the width.
///
/// # Errors
/// A [`LineError`] for a value other than 0 or 1 or a row of another width.
pub fn parse_bit_table(text: &str) -> Result<(Vec<Vec<usize>>, usize), LineError> {
    let mut width = None;
    let rows = parse_lines(text, |row| {
        let (set, n) = parse_bits(row)?;
        check_width(&mut width, n)?;
        Ok(set)
    })?;
    Ok((rows, width.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no dependency): xorshift.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn index_sets_round_trip() {
        let mut s = 0x9E37_79B9_7F4A_7C15;
        for width in [1, 2, 7, 64, 1000] {
            for _ in 0..50 {
                let mut set: Vec<usize> = (0..width).filter(|_| next(&mut s).is_multiple_of(3)).collect();
                if next(&mut s).is_multiple_of(4) {
                    set.clear();
                }
                let row = format_index_set(&set);
                assert!(!row.trim().is_empty(), "a written row is never blank");
                assert_eq!(parse_index_set(&row, width).unwrap(), set, "{row}");
                let bits = format_bits(&set, width);
                assert_eq!(parse_bits(&bits).unwrap(), (set.clone(), width), "{bits}");
            }
        }
        // The other spellings read back the same.
        assert_eq!(parse_index_set("", 3).unwrap(), Vec::<usize>::new());
        assert_eq!(parse_index_set("  -  ", 3).unwrap(), Vec::<usize>::new());
        assert_eq!(parse_index_set("2 0,1", 3).unwrap(), vec![2, 0, 1]);
        assert_eq!(parse_bits("1 0 1.0 0e0").unwrap(), (vec![0, 2], 4));
    }

    #[test]
    fn values_round_trip_exactly() {
        let mut s = 12345;
        for len in [0, 1, 3, 17] {
            let v: Vec<f64> = (0..len)
                .map(|_| f64::from_bits(next(&mut s) >> 2) * if next(&mut s).is_multiple_of(2) { 1.0 } else { -1.0 })
                .map(|x| if x.is_finite() { x } else { 0.5 })
                .chain([0.1, -0.0, 1e-310, f64::MAX])
                .collect();
            let row = format_values(&v);
            let back = parse_values(&row).unwrap();
            assert_eq!(back.len(), v.len());
            assert!(back.iter().zip(&v).all(|(a, b)| a.to_bits() == b.to_bits()), "{row}");
        }
    }

    #[test]
    fn errors_name_the_token_and_the_line() {
        assert_eq!(parse_index_set("1 x", 4).unwrap_err(), token("an index", "x"));
        assert_eq!(parse_index_set("-1", 4).unwrap_err().to_string(), "expected an index, found \"-1\"");
        assert_eq!(parse_index_set("4", 4).unwrap_err(), RowError::OutOfRange { index: 4, width: 4 });
        assert_eq!(parse_bits("0 2").unwrap_err().to_string(), "expected 0 or 1, found \"2\"");
        for bad in ["inf", "NaN", "1e999", "abc"] {
            assert!(matches!(parse_values(bad), Err(RowError::Token { .. })), "{bad}");
        }
        let long = "y".repeat(100);
        assert!(matches!(parse_values(&long), Err(RowError::Token { found, .. }) if found.len() == 40));

        let e = parse_value_table("# header\n1 2\n\n3 4 5\n").unwrap_err();
        assert_eq!(e, LineError { line: 4, error: RowError::Width { expected: 2, found: 3 } });
        assert_eq!(e.to_string(), "line 4: expected 2 values, found 3");
        let e = parse_bit_table("0,1\n1,1\n0,3\n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: expected 0 or 1, found \"3\"");
        let e = parse_lines("1\n-\n\n7\n", |r| parse_index_set(r, 5)).unwrap_err();
        assert_eq!(e.to_string(), "line 4: index 7 out of range (width 5)");
        assert_eq!(parse_value_table("").unwrap(), (vec![], 0));
        assert_eq!(parse_bit_table("1 0\n0 0\n").unwrap(), (vec![vec![0], vec![]], 2));
    }
}
