//! From Python objects to okr containers and back.
//!
//! Copies, and why:
//! - dense float64 arrays that are C- or F-contiguous are read in place:
//!   [`NumpySource`] keeps the buffer exported (so the memory stays alive and
//!   cannot be resized) and hands its slice to [`DenseRows::from_shared`]; a
//!   fitted model that keeps its training rows (IOKR, reduced rank, KDE,
//!   trace norm) keeps this reference, as scikit-learn's `KernelRidge` keeps
//!   `X_fit_`. Other dtypes and non-contiguous views are converted by the
//!   Python layer (`okr._base._inputs`) into one float64 copy first.
//! - scipy.sparse CSR matrices are copied once into [`CsrRows`]: okr's CSR
//!   indices are `usize`, scipy's `int32` or `int64`.
//! - label indicator matrices become [`LabelSets`] (lists of label indices).
//!
//! Every width an input declares (a CSR matrix's `shape[1]`, a label
//! count, a dense array's columns) is checked against okr's one width limit,
//! [`MAX_WIDTH`] (the bound of model files and of okr-eval's readers), before
//! anything is allocated for it: a 1 KB CSR matrix may declare 2^31 columns,
//! and per-feature work arrays would then take gigabytes.

use std::sync::Arc;

use faer::MatRef;
use numpy::PyReadonlyArray1;
use okr_estimators::persist::MAX_WIDTH;
use okr_kernels::{CsrRows, DenseRows, DenseSource, Features, LabelSets, Rows};
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
    let source = NumpySource::new(obj)?;
    check_width("columns", source.ncols)?;
    DenseRows::from_shared(Arc::new(source)).map_err(to_py)
}

/// A width declared by an input (`what`: columns, labels), refused above
/// [`MAX_WIDTH`] with a `ValueError` naming it.
pub fn check_width(what: &str, width: usize) -> PyResult<()> {
    if width > MAX_WIDTH {
        return Err(PyValueError::new_err(format!(
            "the input declares {width} {what}: okr takes at most {MAX_WIDTH} (2^24, MAX_WIDTH)"
        )));
    }
    Ok(())
}

/// Bytes this process may still allocate, where the system tells: the
/// smaller of the memory it reports available (`MemAvailable` in
/// /proc/meminfo) and the room left under the address-space limit
/// (`ulimit -v`: /proc/self/limits minus `VmSize` in /proc/self/status).
/// `None` elsewhere (then only overflow is refused).
fn memory_room() -> Option<u64> {
    fn field(path: &str, name: &str, column: usize) -> Option<u64> {
        let text = std::fs::read_to_string(path).ok()?;
        let line = text.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().nth(column)?.parse().ok()
    }
    let available = field("/proc/meminfo", "MemAvailable:", 0).map(|kb| kb.saturating_mul(1024));
    // "Max address space   <soft> <hard> bytes"; "unlimited" does not parse.
    let as_room = field("/proc/self/limits", "Max address space", 0)
        .map(|limit| limit.saturating_sub(field("/proc/self/status", "VmSize:", 0).unwrap_or(0).saturating_mul(1024)));
    match (available, as_room) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A dense `(rows, cols)` float64 matrix (`what`) okr is about to allocate
/// for an input whose size does not bound it (a sparse matrix densified):
/// refused with a `ValueError` naming its size when it cannot be held.
pub fn check_dense(what: &str, rows: usize, cols: usize) -> PyResult<()> {
    let bytes = rows.checked_mul(cols).and_then(|n| n.checked_mul(8)).map(|b| b as u64);
    let room = memory_room();
    match (bytes, room) {
        (Some(b), Some(r)) if b <= r => Ok(()),
        (Some(_), None) => Ok(()),
        _ => Err(PyValueError::new_err(format!(
            "{what} would be {rows} x {cols} float64 ({:.3} GB), more than the {} this process can allocate",
            rows as f64 * cols as f64 * 8e-9,
            room.map_or("memory".to_string(), |r| format!("{:.3} GB", r as f64 * 1e-9)),
        ))),
    }
}

/// The `(n_rows, n_cols)` of a sparse matrix's `shape`.
fn shape(obj: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    obj.getattr("shape")?
        .extract()
        .map_err(|_| PyValueError::new_err("a sparse matrix's shape must be two integers >= 0"))
}

/// A CSR row structure: `indptr` of `n_rows + 1` offsets from 0,
/// non-decreasing, ending at `nnz`; the message names the first violation.
fn check_indptr(indptr: &[usize], n_rows: usize, nnz: usize, what: &str) -> PyResult<()> {
    if n_rows.checked_add(1) != Some(indptr.len()) {
        return Err(PyValueError::new_err(format!(
            "{what}: indptr has {} entries for {n_rows} rows (expected one more)",
            indptr.len()
        )));
    }
    if indptr.first() != Some(&0) || indptr.last() != Some(&nnz) {
        return Err(PyValueError::new_err(format!(
            "{what}: indptr must run from 0 to the {nnz} stored entries, got {:?} to {:?}",
            indptr.first(),
            indptr.last()
        )));
    }
    if let Some(row) = indptr.windows(2).position(|w| w[0] > w[1]) {
        return Err(PyValueError::new_err(format!("{what}: indptr decreases at row {row}")));
    }
    Ok(())
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
    let (n_rows, n_cols) = shape(obj)?;
    check_width("columns", n_cols)?;
    let indptr = indices(&obj.getattr("indptr")?, "indptr")?;
    let idx = indices(&obj.getattr("indices")?, "indices")?;
    let data = obj.getattr("data")?;
    let values: Vec<f64> = data
        .extract::<PyReadonlyArray1<'_, f64>>()
        .map_err(|_| PyValueError::new_err("a CSR matrix's data must be a 1-D float64 array"))?
        .as_array()
        .iter()
        .copied()
        .collect();
    check_indptr(&indptr, n_rows, idx.len(), "sparse features")?;
    CsrRows::new(n_cols, indptr, idx, values).map_err(to_py)
}

/// Features: a scipy.sparse CSR matrix (anything with `indptr`) or a dense
/// float64 array.
pub fn inputs(obj: &Bound<'_, PyAny>) -> PyResult<Inputs> {
    if obj.hasattr("indptr")? { Ok(Inputs::Sparse(csr_rows(obj)?)) } else { Ok(Inputs::Dense(dense_rows(obj)?)) }
}

/// Label sets from the CSR arrays of a 0/1 indicator matrix (the Python
/// layer checked the values and sorted the indices; the structure is
/// checked here again, as the module is callable directly).
pub fn label_sets(obj: &Bound<'_, PyAny>) -> PyResult<LabelSets> {
    let (n_rows, n_labels) = shape(obj)?;
    check_width("labels", n_labels)?;
    let indptr = indices(&obj.getattr("indptr")?, "indptr")?;
    let idx = indices(&obj.getattr("indices")?, "indices")?;
    check_indptr(&indptr, n_rows, idx.len(), "label indicator")?;
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

/// A label-set indicator as its CSR arrays, `(indices, indptr, (n_rows,
/// n_labels))`, without a dense copy (a sparse `Y` may have millions of labels).
pub type CandidateSets<'py> = (Bound<'py, numpy::PyArray1<i64>>, Bound<'py, numpy::PyArray1<i64>>, (usize, usize));

/// The CSR arrays of `sets` ([`CandidateSets`]).
pub fn label_set_csr<'py>(py: Python<'py>, sets: &LabelSets) -> CandidateSets<'py> {
    let mut indices = Vec::new();
    let mut indptr = vec![0i64];
    for set in sets.iter() {
        indices.extend(set.iter().map(|&l| l as i64));
        indptr.push(indices.len() as i64);
    }
    (numpy::PyArray1::from_vec(py, indices), numpy::PyArray1::from_vec(py, indptr), (sets.n_rows(), sets.n_labels()))
}
