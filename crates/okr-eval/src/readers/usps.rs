//! USPS handwritten digits in the ESL "zipcode" text format: one image a line,
//! a digit label followed by 256 grey values in `[-1, 1]`, row-major 16 x 16.
//!
//! The reduced-rank paper's task (Weston et al. 2003) predicts the bottom half
//! (values 128..256) from the top half (values 0..128):
//! [`UspsImages::top_half`] and [`UspsImages::bottom_half`].

use std::path::{Path, PathBuf};

use faer::Mat;
use okr_kernels::DenseRows;

use super::{excerpt, lines, parse_finite, read_text};
use crate::{Error, Result};

/// Pixels per image (16 x 16).
pub const USPS_PIXELS: usize = 256;

/// Images of one USPS file.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("zip.train");
/// let row: Vec<String> = (0..256).map(|k| if k < 128 { "-1" } else { "1" }.to_string()).collect();
/// std::fs::write(&path, format!("3 {}\n", row.join(" ")))?;
/// let images = okr_eval::read_usps(&path)?;
/// assert_eq!((images.len(), images.labels()[0]), (1, 3));
/// let bottom = images.bottom_half(true)?; // rescaled to [0, 1]
/// assert_eq!(bottom.as_mat()[(0, 0)], 1.0);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct UspsImages {
    labels: Vec<u8>,
    pixels: Mat<f64>,
}

impl UspsImages {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there is no image.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Digit labels (0-9).
    pub fn labels(&self) -> &[u8] {
        &self.labels
    }

    /// All pixels as read, `(n, 256)`, values in `[-1, 1]`.
    pub fn pixels(&self) -> &Mat<f64> {
        &self.pixels
    }

    /// The images with the given indices, in that order.
    pub fn select(&self, idx: &[usize]) -> UspsImages {
        UspsImages {
            labels: idx.iter().map(|&i| self.labels[i]).collect(),
            pixels: Mat::from_fn(idx.len(), USPS_PIXELS, |r, c| self.pixels[(idx[r], c)]),
        }
    }

    fn half(&self, from: usize, to_unit: bool) -> Result<DenseRows> {
        let map = |v: f64| if to_unit { 0.5 * (v + 1.0) } else { v };
        let m = Mat::from_fn(self.len(), USPS_PIXELS / 2, |i, j| map(self.pixels[(i, from + j)]));
        Ok(DenseRows::new(m)?)
    }

    /// Pixels 0..128 (the top 8 rows); `to_unit` maps `[-1, 1]` to `[0, 1]`.
    ///
    /// # Errors
    /// [`Error::Kernels`] if a pixel is not finite (never for [`read_usps`] images).
    pub fn top_half(&self, to_unit: bool) -> Result<DenseRows> {
        self.half(0, to_unit)
    }

    /// Pixels 128..256 (the bottom 8 rows); `to_unit` maps `[-1, 1]` to `[0, 1]`.
    ///
    /// # Errors
    /// [`Error::Kernels`] if a pixel is not finite (never for [`read_usps`] images).
    pub fn bottom_half(&self, to_unit: bool) -> Result<DenseRows> {
        self.half(USPS_PIXELS / 2, to_unit)
    }
}

/// Reads a USPS zipcode file (`label v1 ... v256` per line, white-space
/// separated; blank lines skipped).
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::Parse`] with the line for
/// a label that is not a digit 0-9, a value that is not a finite number in
/// `[-1, 1]`, or a line without exactly 256 values; [`Error::Empty`] for a
/// file without images.
pub fn read_usps(path: impl AsRef<Path>) -> Result<UspsImages> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let mut labels = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    for (no, line) in lines(&text) {
        let mut toks = line.split_whitespace();
        let Some(first) = toks.next() else { continue };
        let label =
            first.parse::<f64>().ok().filter(|v| v.fract() == 0.0 && (0.0..=9.0).contains(v)).ok_or_else(|| {
                Error::parse(path, no, format!("expected a digit label 0-9, got '{}'", excerpt(first)))
            })?;
        labels.push(label as u8);
        let mut count = 0;
        for tok in toks {
            count += 1;
            if count > USPS_PIXELS {
                break;
            }
            let v = parse_finite(tok, || format!("pixel {count}")).map_err(|m| Error::parse(path, no, m))?;
            if !(-1.0 - 1e-9..=1.0 + 1e-9).contains(&v) {
                return Err(Error::parse(path, no, format!("pixel {count} = {v} is outside [-1, 1]")));
            }
            values.push(v);
        }
        if count != USPS_PIXELS {
            let got = if count > USPS_PIXELS { "more".to_string() } else { count.to_string() };
            return Err(Error::parse(
                path,
                no,
                format!("expected {USPS_PIXELS} pixel values after the label, got {got}"),
            ));
        }
    }
    if labels.is_empty() {
        return Err(Error::Empty { what: "USPS file (no images)" });
    }
    let pixels = Mat::from_fn(labels.len(), USPS_PIXELS, |i, j| values[i * USPS_PIXELS + j]);
    Ok(UspsImages { labels, pixels })
}

/// The USPS files of a data directory: `<dir>/usps/usps_train.txt` and
/// `<dir>/usps/usps_test.txt`.
///
/// # Errors
/// [`Error::DatasetNotFound`] naming the files and the directory.
///
/// # Example
/// ```
/// match okr_eval::find_usps_in(std::path::Path::new("/nonexistent")) {
///     Ok((train, test)) => println!("{} {}", train.display(), test.display()),
///     Err(e) => assert!(e.to_string().contains("usps_train.txt")),
/// }
/// ```
pub fn find_usps_in(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let train = dir.join("usps/usps_train.txt");
    let test = dir.join("usps/usps_test.txt");
    if !(train.is_file() && test.is_file()) {
        return Err(Error::DatasetNotFound {
            name: "usps (usps/usps_train.txt, usps/usps_test.txt)".into(),
            dir: dir.into(),
        });
    }
    Ok((train, test))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(label: &str, n: usize, v: &str) -> String {
        let mut s = label.to_string();
        for _ in 0..n {
            s.push(' ');
            s.push_str(v);
        }
        s
    }

    #[test]
    fn reads_halves_and_rescales() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("u.txt");
        let mut vals: Vec<String> = (0..256).map(|k| format!("{:.4}", k as f64 / 255.0 * 2.0 - 1.0)).collect();
        vals[0] = "-1".into();
        std::fs::write(&p, format!("7 {}\r\n\n{}", vals.join(" "), line("0", 256, "0.5"))).unwrap();
        let im = read_usps(&p).unwrap();
        assert_eq!(im.labels(), [7, 0]);
        let top = im.top_half(false).unwrap();
        let bottom = im.bottom_half(true).unwrap();
        assert_eq!((top.as_mat().ncols(), bottom.as_mat().ncols()), (128, 128));
        assert_eq!(top.as_mat()[(0, 0)], -1.0);
        assert!((bottom.as_mat()[(0, 0)] - 0.5 * (vals[128].parse::<f64>().unwrap() + 1.0)).abs() < 1e-15);
        assert_eq!(bottom.as_mat()[(1, 5)], 0.75);
        let sel = im.select(&[1]);
        assert_eq!(sel.labels(), [0]);
    }

    #[test]
    fn errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.txt");
        for (body, needle) in [
            (format!("{}\n{}", line("1", 256, "0"), line("2", 255, "0")), ":2: expected 256 pixel values"),
            (line("x", 256, "0"), ":1: expected a digit label"),
            (line("3", 256, "1.5"), "outside [-1, 1]"),
            (line("3", 257, "0"), "got more"),
            (line("3", 256, "nan"), "finite"),
            (String::new(), "no images"),
        ] {
            std::fs::write(&p, body).unwrap();
            let e = read_usps(&p).unwrap_err().to_string();
            assert!(e.contains(needle), "{e} (wanted {needle})");
        }
    }
}
