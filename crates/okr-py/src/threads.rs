//! `n_jobs` -> okr threads: computations run inside a rayon pool of that
//! size, and faer's `Par::rayon(0)` (what okr passes) uses the size of the
//! current pool.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::PyResult;
use pyo3::exceptions::PyValueError;

/// Runs `f` on `n_jobs` threads: `None` or `-1` means every core (rayon's
/// global pool), `-k` every core but `k - 1` (scikit-learn's convention),
/// `k >= 1` exactly `k`. Pools are built once per size and kept.
pub fn run<T: Send>(n_jobs: Option<i64>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match n_jobs {
        None | Some(-1) => return Ok(f()),
        Some(0) => return Err(PyValueError::new_err("invalid n_jobs = 0: expected None, a positive count or -1")),
        Some(k) if k > 0 => k as usize,
        Some(k) => (cores as i64 + 1 + k).max(1) as usize,
    };
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pool = {
        let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        match pools.get(&threads) {
            Some(p) => p.clone(),
            None => {
                let p = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| PyValueError::new_err(format!("cannot start {threads} threads: {e}")))?;
                pools.entry(threads).or_insert(Arc::new(p)).clone()
            }
        }
    };
    Ok(pool.install(f))
}
