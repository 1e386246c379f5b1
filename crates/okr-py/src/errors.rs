//! okr errors as Python exceptions: `ValueError` with okr's message.

use pyo3::PyErr;
use pyo3::exceptions::PyValueError;

/// Any okr error (bad parameters, shapes, non-finite values, numerical
/// failures) becomes a `ValueError` carrying okr's own message.
pub fn to_py<E: std::fmt::Display>(e: E) -> PyErr {
    PyValueError::new_err(e.to_string())
}
