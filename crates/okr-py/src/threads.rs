//! `n_jobs` -> okr threads: computations release the GIL and run inside a
//! rayon pool of that size, and faer's `Par::rayon(0)` (what okr passes)
//! uses the size of the current pool.
//!
//! The count is capped at the cores by okr's one rule
//! ([`okr_linalg::threads::effective_threads`], which the CLI's `--threads`
//! applies too), with a Python `UserWarning` (`warnings.warn`) when a
//! request is lowered. A pool is built once per size and kept for the
//! process; since sizes never exceed the cores, at most `cores - 1` pools
//! exist beside rayon's global one (which serves `n_jobs` equal to its size).

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock};

use okr_linalg::threads::effective_threads;
use pyo3::exceptions::{PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyInt;

/// The `n_jobs` argument as Python gives it: `None`, or any integer
/// (integers beyond 64 bits saturate, so `10**30` is capped like `10**6`).
/// Anything else is a `ValueError` naming the value.
#[derive(Debug, Clone, Copy)]
pub struct NJobs(i64);

impl<'a, 'py> FromPyObject<'a, 'py> for NJobs {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        let bad = || PyValueError::new_err(format!("invalid n_jobs = {obj}: expected None, -1 or an integer >= 1"));
        // bool is an int subclass in Python; scikit-learn refuses it too.
        if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<pyo3::types::PyBool>() {
            return Err(bad());
        }
        match obj.extract::<i64>() {
            Ok(v) => Ok(Self(v)),
            Err(_) if obj.gt(0)? => Ok(Self(i64::MAX)),
            Err(_) => Ok(Self(i64::MIN)),
        }
    }
}

/// The thread count for `n_jobs` (`None` for rayon's global pool): `None`
/// or `-1` every core, `-k` every core but `k - 1` (scikit-learn's
/// convention, at least 1), `k >= 1` exactly `k` up to the cores (with the
/// warning to show when capped).
fn resolve(n_jobs: Option<NJobs>) -> PyResult<(Option<usize>, Option<String>)> {
    let cores = okr_linalg::threads::available_cores();
    let requested = match n_jobs.map(|n| n.0) {
        None | Some(-1) => return Ok((None, None)),
        Some(0) => return Err(PyValueError::new_err("invalid n_jobs = 0: expected None, -1 or an integer >= 1")),
        Some(k) if k > 0 => usize::try_from(k).unwrap_or(usize::MAX),
        Some(k) => usize::try_from((cores as i64).saturating_add(1).saturating_add(k).max(1)).unwrap_or(1),
    };
    let (threads, capped) = effective_threads(requested);
    Ok((Some(threads), capped.map(|c| format!("n_jobs = {}: {c}", n_jobs.map_or(0, |n| n.0)))))
}

/// The kept pool of `threads` threads (`None`: rayon's global pool, which
/// already has that many).
fn pool(threads: usize) -> PyResult<Option<Arc<rayon::ThreadPool>>> {
    // Outside any pool, `current_num_threads` is the global pool's size.
    if threads == rayon::current_num_threads() {
        return Ok(None);
    }
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Ok(Some(p.clone()));
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyValueError::new_err(format!("cannot start {threads} threads: {e}")))?;
    Ok(Some(pools.entry(threads).or_insert(Arc::new(p)).clone()))
}

/// Runs `f` without the GIL on the threads `n_jobs` asks for (see
/// [`resolve`]). A capped request warns first (a `UserWarning`, which a
/// warnings filter set to `error` turns into the exception).
pub fn run<T: Send>(py: Python<'_>, n_jobs: Option<NJobs>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let (threads, warning) = resolve(n_jobs)?;
    if let Some(w) = warning {
        let msg = CString::new(w).map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &msg, 1)?;
    }
    let pool = match threads {
        Some(t) => pool(t)?,
        None => None,
    };
    Ok(py.detach(|| match pool {
        Some(p) => p.install(f),
        None => f(),
    }))
}
