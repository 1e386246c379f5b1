//! Readers for structured outputs beyond label sets: binary fingerprints
//! (as [`LabelSets`] of their set bits, the container the Tanimoto kernels
//! run on sparsely) and dense vectors ([`DenseRows`]).
//!
//! | reader | one line per row | example line |
//! |---|---|---|
//! | [`read_fingerprints_dense`] | `n_bits` values 0 or 1, separated by commas or whitespace | `0,1,1,0` |
//! | [`read_fingerprints_sparse`] | the 0-based indices of the set bits, separated by commas or whitespace, `-` for none | `1 2` |
//! | [`read_vectors`] | the values, separated by commas or whitespace | `0.5, -1e-3, 2` |
//!
//! Lines starting with `#` and blank lines are skipped; every row of a file
//! has the same width. Errors name the file and the 1-based line. The row
//! syntax is [`okr_io::rows`], shared with the candidate files of okr-decode
//! and the prediction files.

use std::path::Path;

use faer::Mat;
use okr_io::rows::{LineError, parse_bit_table, parse_index_set, parse_value_table};
use okr_kernels::{DenseRows, LabelSets};

use crate::{Error, Result};

fn parse_error(path: &Path, e: LineError) -> Error {
    Error::Parse { path: path.to_path_buf(), line: e.line, msg: e.error.to_string() }
}

/// Reads dense 0/1 fingerprints, one per line, as the sets of their set bits.
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] for a value other than 0 or 1 or a row of
/// another width.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("fp.csv");
/// std::fs::write(&path, "0,1,1,0\n1,0,0,0\n")?;
/// let fp = okr_eval::read_fingerprints_dense(&path)?;
/// assert_eq!((fp.n_labels(), fp.set(0), fp.set(1)), (4, &[1, 2][..], &[0][..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_fingerprints_dense(path: impl AsRef<Path>) -> Result<LabelSets> {
    let path = path.as_ref();
    let text = crate::readers::read_text(path)?;
    let (sets, width) = parse_bit_table(&text).map_err(|e| parse_error(path, e))?;
    Ok(LabelSets::new(width, sets)?)
}

/// Reads sparse fingerprints of `n_bits` bits: per line, the 0-based indices
/// of the set bits (`-` for none).
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] for a token that is not an index or an
/// index `>= n_bits`.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("fp.txt");
/// std::fs::write(&path, "# bits set\n3 0\n-\n")?;
/// let fp = okr_eval::read_fingerprints_sparse(&path, 4)?;
/// assert_eq!((fp.set(0), fp.set(1)), (&[0, 3][..], &[][..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_fingerprints_sparse(path: impl AsRef<Path>, n_bits: usize) -> Result<LabelSets> {
    let path = path.as_ref();
    // A declared width is checked before anything of that width exists (issue 35, C1).
    let max = crate::readers::svmlight::MAX_DIMENSION;
    if n_bits == 0 || n_bits > max {
        return Err(crate::Error::InvalidArgument {
            name: "n_bits",
            value: n_bits.to_string(),
            expected: format!("a fingerprint length from 1 to {max}"),
        });
    }
    let text = crate::readers::read_text(path)?;
    // Compressed as read: no vector per row.
    let (mut indptr, mut bits) = (vec![0], Vec::new());
    for (line, row) in okr_io::rows::data_lines(&text) {
        let mut set = parse_index_set(row, n_bits).map_err(|error| parse_error(path, LineError { line, error }))?;
        set.sort_unstable();
        set.dedup();
        bits.extend_from_slice(&set);
        indptr.push(bits.len());
    }
    indptr.shrink_to_fit();
    bits.shrink_to_fit();
    Ok(LabelSets::from_compressed(n_bits, indptr, bits)?)
}

/// Reads dense vectors, one per line.
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] for a token that is not a finite number or
/// a row of another width.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("v.csv");
/// std::fs::write(&path, "0.5, -1\n2 3\n")?;
/// let v = okr_eval::read_vectors(&path)?;
/// assert_eq!(v.as_mat()[(0, 1)], -1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_vectors(path: impl AsRef<Path>) -> Result<DenseRows> {
    let path = path.as_ref();
    let text = crate::readers::read_text(path)?;
    let (rows, width) = parse_value_table(&text).map_err(|e| parse_error(path, e))?;
    Ok(DenseRows::new(Mat::from_fn(rows.len(), width, |i, j| rows[i][j]))?)
}

#[cfg(test)]
mod tests {

    /// C1: a declared fingerprint length beyond what any file holds is one
    /// clear error, before anything of that length is allocated.
    #[test]
    fn c1_n_bits_beyond_the_limit_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fp.txt");
        std::fs::write(&path, "0,3\n-\n").unwrap();
        for n in [0, (1usize << 24) + 1, 1_000_000_000_000, usize::MAX] {
            let err = read_fingerprints_sparse(&path, n).unwrap_err().to_string();
            assert!(err.contains("n_bits") && err.contains(&n.to_string()), "{err}");
        }
        assert_eq!(read_fingerprints_sparse(&path, 1 << 24).unwrap().n_labels(), 1 << 24);
    }

    use super::*;
    use okr_kernels::Rows;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn dense_and_sparse_fingerprints_agree() {
        let (_d1, dense) = write("# header comment\n1 0 0 1 1\n\n0,0,0,0,0\n0 1 0 0 0\n");
        let (_d2, sparse) = write("0 3 4\n-\n1\n");
        let a = read_fingerprints_dense(&dense).unwrap();
        let b = read_fingerprints_sparse(&sparse, 5).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.n_rows(), 3);
        assert_eq!(a.to_indicator()[(0, 4)], 1.0);
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let err = |r: Result<LabelSets>| r.unwrap_err().to_string();
        let (_d, p) = write("0 1\n1 2\n");
        assert!(err(read_fingerprints_dense(&p)).ends_with(":2: expected 0 or 1, found \"2\""));
        let (_d, p) = write("0 1\n1\n");
        assert!(err(read_fingerprints_dense(&p)).ends_with(":2: expected 2 values, found 1"));
        let (_d, p) = write("1\n# c\n9\n");
        assert!(err(read_fingerprints_sparse(&p, 4)).ends_with(":3: index 9 out of range (width 4)"));
        let (_d, p) = write("x\n");
        assert!(err(read_fingerprints_sparse(&p, 4)).ends_with(":1: expected an index, found \"x\""));
        let (_d, p) = write("1 2\n1 inf\n");
        assert!(read_vectors(&p).unwrap_err().to_string().ends_with(":2: expected a finite number, found \"inf\""));
        let (_d, p) = write("1 2\n3 4 5\n");
        assert!(read_vectors(&p).unwrap_err().to_string().ends_with(":2: expected 2 values, found 3"));
        assert!(matches!(read_vectors("/no/such/file"), Err(Error::Io { .. })));
    }
}
