//! From Python objects to okr containers and back.
//!
//! Copies, and why:
//! - dense float64 arrays that are C- or F-contiguous are read in place:
//!   [`NumpySource`] keeps the buffer exported (so the memory stays alive and
//!   cannot be resized) and hands its slice to [`DenseRows::from_shared`]; a
//!   fitted model that keeps its training rows (IOKR, reduced rank, KDE,
//!   trace norm) keeps this reference, as scikit-learn's `KernelRidge` keeps
//!   `X_fit_`. Other dtypes and non-contiguous views are converted by the
//!   Python layer (`okr._validation`) into one float64 copy first.
//! - scipy.sparse CSR matrices are copied once into [`CsrRows`]: okr's CSR
//!   indices are `usize`, scipy's `int32` or `int64`.
//! - label indicator matrices become [`LabelSets`] (lists of label indices).

use std::sync::Arc;

use faer::MatRef;
use numpy::PyReadonlyArray1;
use okr_kernels::{CsrRows, DenseRows, DenseSource, Features, LabelSets};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::to_py;

/// Input features: dense rows (read in place) or CSR rows.
pub type Inputs = Features;

/// Outputs: label sets (0/1 indicator matrices) or dense vectors.
#[derive(Debug, Clone)]
pub enum Outputs {
    /// Label sets over `n_labels` labels.
    Labels(LabelSets),
    /// Vectors, one per row.
    Vectors(DenseRows),
}

/// A contiguous float64 buffer exported by a Python object (a NumPy array),
/// viewed as an `(nrows, ncols)` matrix in its own order.
pub struct NumpySource {
    buffer: PyBuffer<f64>,
    nrows: usize,
    ncols: usize,
    row_major: bool,
}

impl std::fmt::Debug for NumpySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let order = if self.row_major { "C" } else { "F" };
        write!(f, "NumpySource({} x {}, {order}-ordered)", self.nrows, self.ncols)
    }
}

impl NumpySource {
    /// Exports the buffer of a 2-D float64 array.
    fn new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let buffer = PyBuffer::<f64>::get(obj)?;
        if buffer.dimensions() != 2 {
            return Err(PyValueError::new_err(format!(
                "expected a 2-D array, got {} dimension(s)",
                buffer.dimensions()
            )));
        }
        let (nrows, ncols) = (buffer.shape()[0], buffer.shape()[1]);
        // A 1 x d or n x 1 array is both; take C then.
        let row_major = if buffer.is_c_contiguous() {
            true
        } else if buffer.is_fortran_contiguous() {
            false
        } else {
            return Err(PyValueError::new_err("the array must be C- or F-contiguous"));
        };
        Ok(Self { buffer, nrows, ncols, row_major })
    }

    fn slice(&self) -> &[f64] {
        let len = self.buffer.item_count();
        if len == 0 {
            return &[];
        }
        // SAFETY: `PyBuffer::<f64>::get` checked that the buffer holds
        // aligned f64 items; `item_count` of them start at `buf_ptr` because
        // the buffer is contiguous (checked in `new`). The export held by
        // `self.buffer` keeps the memory alive (and NumPy refuses to resize
        // an exported array) until `self` is dropped, which outlives the
        // returned borrow. The slice is only read; writes from Python to the
        // array while okr reads it without the GIL would race, as for every
        // NumPy routine that releases the GIL, and are documented as not
        // allowed during fit / predict.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.buffer.buf_ptr().cast::<f64>(), len)
        }
    }
}

impl DenseSource for NumpySource {
    fn view(&self) -> MatRef<'_, f64> {
        if self.row_major {
            MatRef::from_row_major_slice(self.slice(), self.nrows, self.ncols)
        } else {
            MatRef::from_column_major_slice(self.slice(), self.nrows, self.ncols)
        }
    }
}

/// A dense 2-D float64 array, read in place.
pub fn dense_rows(obj: &Bound<'_, PyAny>) -> PyResult<DenseRows> {
    DenseRows::from_shared(Arc::new(NumpySource::new(obj)?)).map_err(to_py)
}

/// Reads an index array of any integer dtype as `usize` (one copy).
fn indices(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<usize>> {
    let bad = |v: i64| PyValueError::new_err(format!("{what} has a negative entry {v}"));
    if let Ok(a) = obj.extract::<PyReadonlyArray1<'_, i32>>() {
        return a.as_array().iter().map(|&v| usize::try_from(v).map_err(|_| bad(v.into()))).collect();
    }
    if let Ok(a) = obj.extract::<PyReadonlyArray1<'_, i64>>() {
        return a.as_array().iter().map(|&v| usize::try_from(v).map_err(|_| bad(v))).collect();
    }
    Err(PyValueError::new_err(format!("{what} must be a 1-D int32 or int64 array")))
}

/// The three arrays of a scipy.sparse CSR matrix (sorted indices, no
/// duplicates) and its width, copied once into [`CsrRows`].
pub fn csr_rows(obj: &Bound<'_, PyAny>) -> PyResult<CsrRows> {
    let (n_rows, n_cols): (usize, usize) = obj.getattr("shape")?.extract()?;
    let indptr = indices(&obj.getattr("indptr")?, "indptr")?;
    let idx = indices(&obj.getattr("indices")?, "indices")?;
    let data = obj.getattr("data")?;
    let values: Vec<f64> = data.extract::<PyReadonlyArray1<'_, f64>>()?.as_array().iter().copied().collect();
    if indptr.len() != n_rows + 1 {
        return Err(PyValueError::new_err(format!(
            "indptr has {} entries for {n_rows} rows (expected {})",
            indptr.len(),
            n_rows + 1
        )));
    }
    CsrRows::new(n_cols, indptr, idx, values).map_err(to_py)
}

/// Features: a scipy.sparse CSR matrix (anything with `indptr`) or a dense
/// float64 array.
pub fn inputs(obj: &Bound<'_, PyAny>) -> PyResult<Inputs> {
    if obj.hasattr("indptr")? { Ok(Inputs::Sparse(csr_rows(obj)?)) } else { Ok(Inputs::Dense(dense_rows(obj)?)) }
}

/// Label sets from the CSR arrays of a 0/1 indicator matrix (the Python
/// layer checked the values and sorted the indices).
pub fn label_sets(obj: &Bound<'_, PyAny>) -> PyResult<LabelSets> {
    let (n_rows, n_labels): (usize, usize) = obj.getattr("shape")?.extract()?;
    let indptr = indices(&obj.getattr("indptr")?, "indptr")?;
    let idx = indices(&obj.getattr("indices")?, "indices")?;
    if indptr.len() != n_rows + 1 || indptr.last() != Some(&idx.len()) {
        return Err(PyValueError::new_err("inconsistent CSR label indicator"));
    }
    let sets = indptr.windows(2).map(|w| idx[w[0]..w[1]].to_vec()).collect();
    LabelSets::new(n_labels, sets).map_err(to_py)
}

/// Outputs: label sets from a CSR indicator (`kind == "labels"`) or dense
/// float64 vectors (`kind == "vectors"`).
pub fn outputs(obj: &Bound<'_, PyAny>, kind: &str) -> PyResult<Outputs> {
    match kind {
        "labels" => Ok(Outputs::Labels(label_sets(obj)?)),
        "vectors" => Ok(Outputs::Vectors(dense_rows(obj)?)),
        other => Err(PyValueError::new_err(format!("unknown output kind {other:?}: expected labels or vectors"))),
    }
}

/// A faer matrix as a new NumPy array.
pub fn to_numpy<'py>(py: Python<'py>, m: MatRef<'_, f64>) -> Bound<'py, numpy::PyArray2<f64>> {
    let a = numpy::ndarray::Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)]);
    numpy::PyArray2::from_owned_array(py, a)
}
