//! Serde support for faer matrices: a matrix is stored as
//! `{ nrows, ncols, data }` with `data` in column-major order.
//!
//! Use it with `#[serde(with = "okr_linalg::serde_mat")]` on a `Mat<f64>` field.
//!
//! # Example
//! ```
//! use faer::Mat;
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Model { #[serde(with = "okr_linalg::serde_mat")] w: Mat<f64> }
//! let m = Model { w: Mat::from_fn(2, 3, |i, j| (i + 10 * j) as f64) };
//! let bytes = serde_json::to_vec(&m).unwrap();
//! let back: Model = serde_json::from_slice(&bytes).unwrap();
//! assert_eq!(back.w, m.w);
//! ```
use faer::Mat;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

#[derive(Serialize, Deserialize)]
struct Repr {
    nrows: usize,
    ncols: usize,
    data: Vec<f64>,
}

/// Serializes a matrix as `{ nrows, ncols, data }` (column-major).
pub fn serialize<S: Serializer>(m: &Mat<f64>, s: S) -> Result<S::Ok, S::Error> {
    serialize_view(m.as_ref(), s)
}

/// Serializes a matrix view of any strides exactly as [`serialize`] does
/// for the owned matrix with the same entries.
pub fn serialize_view<S: Serializer>(m: faer::MatRef<'_, f64>, s: S) -> Result<S::Ok, S::Error> {
    let mut data = Vec::with_capacity(m.nrows() * m.ncols());
    for j in 0..m.ncols() {
        data.extend(m.col(j).iter().copied());
    }
    Repr { nrows: m.nrows(), ncols: m.ncols(), data }.serialize(s)
}

/// Largest dimension of a deserialized matrix without entries (`0 x m` or
/// `m x 0`): building a matrix takes time in its dimensions, so an empty one
/// must not claim billions of columns.
pub const MAX_EMPTY_DIMENSION: usize = 1 << 24;

/// Deserializes a matrix written by [`serialize`], checking its length.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Mat<f64>, D::Error> {
    let r = Repr::deserialize(d)?;
    if r.data.is_empty() && r.nrows.max(r.ncols) > MAX_EMPTY_DIMENSION {
        return Err(D::Error::custom(format!("empty matrix of {} x {} is too large", r.nrows, r.ncols)));
    }
    if r.nrows.checked_mul(r.ncols) != Some(r.data.len()) {
        return Err(D::Error::custom(format!(
            "matrix data has {} entries, expected {} x {}",
            r.data.len(),
            r.nrows,
            r.ncols
        )));
    }
    Ok(Mat::from_fn(r.nrows, r.ncols, |i, j| r.data[i + j * r.nrows]))
}
