//! okr errors as Python exceptions: `ValueError` with okr's message; and
//! the guard every entry point of the module runs in, so that no Rust panic
//! reaches Python as PyO3's `PanicException` (a `BaseException` that
//! `except Exception` does not catch).

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::{PyErr, PyResult};

/// Any okr error (bad parameters, shapes, non-finite values, numerical
/// failures) becomes a `ValueError` carrying okr's own message.
pub fn to_py<E: std::fmt::Display>(e: E) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs the body of a `#[pyfunction]` / `#[pymethods]` entry point: a panic
/// anywhere inside (the conversions, the detached computation on okr's
/// threads, whose panics rayon carries back to this thread) becomes a
/// `RuntimeError` naming it as an okr bug, with the panic's message. okr's
/// own errors are `ValueError`s (see [`to_py`]); a panic is never the
/// user's fault, so it is not one.
pub fn guard<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| Err(panic_error(payload.as_ref())))
}

/// The `RuntimeError` for a caught panic payload.
fn panic_error(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    PyRuntimeError::new_err(format!("okr internal error (please report it): {msg}"))
}
