//! [`Coordinates`] of outputs in an output basis and the
//! [`CoordinateBasis`] trait: what a decoder needs to score candidates
//! against coordinates predicted by any model.
//!
//! An output basis is a family of `r` atoms $e_j = \sum_u B_{ju}\,\psi(u)$
//! of the output RKHS written over some training outputs $U$. The
//! coordinates of a prediction $h = \sum_j z_j e_j$ are $z \in \mathbb R^r$;
//! a decoder scores a candidate $c$ by
//! $k(c, c) - 2 \sum_j z_j \langle e_j, \psi(c)\rangle$, exactly as it scores
//! the coefficients of a [`SurrogateModel`]: a basis is a
//! [`SurrogateModel`] whose inputs are the coordinates themselves
//! ([`DenseRows`] of width `r`).

use faer::{Mat, MatRef};
use okr_kernels::{DenseRows, Rows};

use crate::{Error, Result, SurrogateModel};

/// Coordinates `(n_rows, r)` of outputs (or of predictions) in an output
/// basis, optionally tagged with the id of the basis that produced them.
///
/// Untagged coordinates (a regressor's predictions) are checked for their
/// width and finiteness only; tagged ones must also come from the basis that
/// decodes them ([`Error::OtherBasis`]).
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_surrogate::Coordinates;
/// let z = Coordinates::new(Mat::from_fn(3, 2, |i, j| (i + j) as f64))?;
/// assert_eq!((z.n_rows(), z.width(), z.basis_id()), (3, 2, None));
/// assert!(Coordinates::new(Mat::from_fn(1, 1, |_, _| f64::NAN)).is_err());
/// Ok::<(), okr_surrogate::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Coordinates {
    rows: DenseRows,
    basis_id: Option<u64>,
}

impl Coordinates {
    /// Untagged coordinates.
    ///
    /// # Errors
    /// [`Error::Kernel`] (`NonFinite`, naming the row) for a NaN or
    /// infinite value.
    pub fn new(values: Mat<f64>) -> Result<Self> {
        Ok(Self { rows: DenseRows::new(values)?, basis_id: None })
    }

    /// Untagged coordinates copied from a matrix view.
    ///
    /// # Errors
    /// As [`Coordinates::new`].
    pub fn from_view(values: MatRef<'_, f64>) -> Result<Self> {
        Self::new(values.to_owned())
    }

    /// Coordinates tagged with the id of the basis that produced them.
    ///
    /// # Errors
    /// As [`Coordinates::new`].
    pub fn of_basis(values: Mat<f64>, basis_id: u64) -> Result<Self> {
        Ok(Self { rows: DenseRows::new(values)?, basis_id: Some(basis_id) })
    }

    /// Coordinates from rows already checked (no copy), optionally tagged.
    pub fn from_rows(rows: DenseRows, basis_id: Option<u64>) -> Self {
        Self { rows, basis_id }
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.rows.n_rows()
    }
    /// Number of coordinates per row, `r`.
    pub fn width(&self) -> usize {
        self.rows.as_mat().ncols()
    }
    /// The id of the basis that produced them, if tagged.
    pub fn basis_id(&self) -> Option<u64> {
        self.basis_id
    }
    /// The values `(n_rows, r)`.
    pub fn values(&self) -> MatRef<'_, f64> {
        self.rows.as_mat()
    }
    /// The values as rows, the input type of a [`CoordinateBasis`]'s
    /// [`SurrogateModel`].
    pub fn rows(&self) -> &DenseRows {
        &self.rows
    }
    /// The values, without the tag.
    pub fn into_values(self) -> Mat<f64> {
        self.rows.as_mat().to_owned()
    }
    /// The rows `range`, with the same tag.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
        Self { rows: self.rows.slice(range), basis_id: self.basis_id }
    }
}

/// An output basis that decoders can score coordinates against: a
/// [`SurrogateModel`] whose inputs are the coordinates (the coefficients
/// are the coordinates themselves: a [`KernelExpansion`](crate::KernelExpansion)
/// with [`InputMap::Coordinates`](crate::InputMap::Coordinates)), with an id
/// that tags its coordinates.
pub trait CoordinateBasis<Y: Rows>: SurrogateModel<DenseRows, Y> {
    /// An id of the fitted basis (a hash of its atoms): coordinates tagged
    /// with another id are refused.
    fn basis_id(&self) -> u64;

    /// The distinct training outputs the basis was fitted on, in
    /// first-occurrence order (the default candidates).
    fn distinct_outputs(&self) -> &Y;

    /// Checks coordinates before decoding: their width is the number of
    /// atoms and their tag, if any, is this basis.
    ///
    /// # Errors
    /// [`Error::OtherBasis`] for a tag of another basis,
    /// [`Error::ShapeMismatch`] for another width.
    fn check_coordinates(&self, z: &Coordinates) -> Result<()> {
        if let Some(got) = z.basis_id()
            && got != self.basis_id()
        {
            return Err(Error::OtherBasis { expected: self.basis_id(), got });
        }
        if z.width() != self.n_atoms() {
            return Err(Error::ShapeMismatch {
                what: "coordinate columns vs basis components",
                expected: self.n_atoms(),
                got: z.width(),
            });
        }
        Ok(())
    }
}
