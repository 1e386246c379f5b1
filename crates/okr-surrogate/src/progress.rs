//! Progress of long computations, reported to one observer.
//!
//! The iterative solvers (trace norm, LEML, KAE / K2AE), `okr::tune`'s grid
//! and long decodes call [`report`] with `(step, total, message)`; a front
//! door that wants to show progress runs the computation inside
//! [`observe`] with its [`Progress`] (the `okr` command draws bars on a
//! terminal, the Python package logs). Without an observer, [`report`]
//! costs one thread-local read.
//!
//! The observer is per thread: it sees the reports of the thread that runs
//! the computation's loop (the solvers' iterations, the decoders' batches),
//! not of the worker threads a step fans out to.
//!
//! # Example
//! ```
//! use okr_surrogate::progress::{Progress, observe, report};
//! struct Count(std::rc::Rc<std::cell::Cell<usize>>);
//! impl Progress for Count {
//!     fn step(&mut self, step: usize, total: usize, _message: &str) {
//!         assert!(step <= total);
//!         self.0.set(self.0.get() + 1);
//!     }
//! }
//! let seen = std::rc::Rc::new(std::cell::Cell::new(0));
//! let sum = observe(Box::new(Count(seen.clone())), || {
//!     (1..=3).map(|i| { report(i, 3, "adding"); i }).sum::<usize>()
//! });
//! assert_eq!((sum, seen.get()), (6, 3));
//! report(1, 1, "nobody listens"); // outside `observe`: ignored
//! assert_eq!(seen.get(), 3);
//! ```

use std::cell::RefCell;

/// An observer of progress: `step` of `total` steps is done (`total` is 0
/// when unknown), with a short message naming the computation and, where
/// useful, its current value (`"trace-norm gd, objective 0.1234"`).
pub trait Progress {
    /// Called after each step.
    fn step(&mut self, step: usize, total: usize, message: &str);
}

impl<F: FnMut(usize, usize, &str)> Progress for F {
    fn step(&mut self, step: usize, total: usize, message: &str) {
        self(step, total, message)
    }
}

thread_local! {
    static OBSERVER: RefCell<Option<Box<dyn Progress>>> = const { RefCell::new(None) };
}

/// Puts the previous observer back when [`observe`] ends, even by a panic.
struct Restore(Option<Box<dyn Progress>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        OBSERVER.with(|o| *o.borrow_mut() = previous);
    }
}

/// Runs `f` with `observer` receiving the [`report`]s of this thread, then
/// restores the observer that was there before (observers nest).
pub fn observe<R>(observer: Box<dyn Progress>, f: impl FnOnce() -> R) -> R {
    let previous = OBSERVER.with(|o| o.borrow_mut().replace(observer));
    let _restore = Restore(previous);
    f()
}

/// Reports that `step` of `total` steps is done to this thread's observer,
/// if any. A report from inside the observer itself is dropped.
pub fn report(step: usize, total: usize, message: &str) {
    OBSERVER.with(|o| {
        if let Ok(mut o) = o.try_borrow_mut()
            && let Some(obs) = o.as_mut()
        {
            obs.step(step, total, message);
        }
    });
}

/// Whether this thread has an observer (to skip formatting a message
/// nobody reads).
pub fn observed() -> bool {
    OBSERVER.with(|o| o.try_borrow().is_ok_and(|o| o.is_some()))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    #[test]
    fn observers_nest_and_are_restored_after_a_panic() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let (a, b) = (log.clone(), log.clone());
        observe(Box::new(move |s, t, m: &str| a.borrow_mut().push(format!("outer {s}/{t} {m}"))), || {
            report(1, 2, "x");
            observe(Box::new(move |s, t, m: &str| b.borrow_mut().push(format!("inner {s}/{t} {m}"))), || {
                report(1, 1, "y")
            });
            report(2, 2, "x");
            let caught = std::panic::catch_unwind(|| {
                observe(Box::new(|_, _, _: &str| {}), || panic!("boom"));
            });
            assert!(caught.is_err());
            report(3, 3, "after the panic");
        });
        assert!(!observed());
        assert_eq!(*log.borrow(), ["outer 1/2 x", "inner 1/1 y", "outer 2/2 x", "outer 3/3 after the panic"]);
    }
}
