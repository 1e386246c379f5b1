//! The library's progress reports (solver iterations, decode tiles) as
//! Python `logging` records on the logger `"okr"`, at level INFO, when an
//! estimator's `verbose` is set: with `verbose = 1` at most one record a
//! second and the last step, with `verbose >= 2` every step (scikit-learn's
//! meaning: more is chattier).

use std::time::{Duration, Instant};

use okr::surrogate::progress::{self, Progress};
use pyo3::prelude::*;

/// Sends reports to a Python logger, taking the GIL for each record.
struct Logger {
    logger: Py<PyAny>,
    verbose: usize,
    last: Option<Instant>,
}

impl Progress for Logger {
    fn step(&mut self, step: usize, total: usize, message: &str) {
        let due = self.verbose >= 2
            || (total > 0 && step >= total)
            || self.last.is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if !due {
            return;
        }
        self.last = Some(Instant::now());
        let text = if total > 0 { format!("{message}: {step}/{total}") } else { format!("{message}: {step}") };
        // A logging failure (a broken handler) must not fail the fit.
        Python::attach(|py| {
            let _ = self.logger.call_method1(py, "info", (text,));
        });
    }
}

/// The observer for `verbose` (none for 0), made while the GIL is held.
pub fn logger(py: Python<'_>, verbose: usize) -> PyResult<Option<Box<dyn Progress + Send>>> {
    if verbose == 0 {
        return Ok(None);
    }
    let logger = py.import("logging")?.call_method1("getLogger", ("okr",))?.unbind();
    Ok(Some(Box::new(Logger { logger, verbose, last: None })))
}

/// Runs `f` with `observer` receiving this thread's reports (call it on the
/// thread that runs the computation, inside `threads::run`).
pub fn observe<T>(observer: Option<Box<dyn Progress + Send>>, f: impl FnOnce() -> T) -> T {
    match observer {
        Some(o) => progress::observe(o, f),
        None => f(),
    }
}
