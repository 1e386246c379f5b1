//! How many threads okr starts for a requested count: the one rule every
//! front door (the CLI's `--threads`, Python's `n_jobs`) applies.
//!
//! A request above the machine's cores is capped at the cores (more threads
//! than cores only add memory and scheduling on GEMM-bound work, and a
//! request of a million threads would take minutes to start), with a
//! warning the caller shows in its own idiom.
//!
//! ```
//! use okr_linalg::threads::{available_cores, effective_threads};
//! let cores = available_cores();
//! assert_eq!(effective_threads(1), (1, None));
//! let (used, warning) = effective_threads(1_000_000);
//! assert_eq!(used, cores);
//! assert_eq!(warning.unwrap().requested, 1_000_000);
//! ```

use std::fmt;

/// The number of cores okr may use: [`std::thread::available_parallelism`]
/// (which follows the process's CPU affinity and cgroup quota), 1 when the
/// system cannot tell.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A thread request that was capped: what was asked and what is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadCap {
    /// The requested thread count.
    pub requested: usize,
    /// The thread count used (the cores).
    pub used: usize,
}

impl fmt::Display for ThreadCap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} threads requested, more than the {} cores available: using {}",
            self.requested, self.used, self.used
        )
    }
}

/// The thread count to start for `requested` threads (at least 1): at most
/// [`available_cores`], with a [`ThreadCap`] to show as a warning when the
/// request was lowered. A request of 0 is the caller's to refuse; here it
/// means 1.
pub fn effective_threads(requested: usize) -> (usize, Option<ThreadCap>) {
    effective_threads_on(requested, available_cores())
}

/// [`effective_threads`] for a machine with `cores` cores.
fn effective_threads_on(requested: usize, cores: usize) -> (usize, Option<ThreadCap>) {
    let cores = cores.max(1);
    if requested > cores { (cores, Some(ThreadCap { requested, used: cores })) } else { (requested.max(1), None) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_above_the_cores_are_capped_with_a_warning() {
        for cores in [1, 2, 8] {
            for requested in 0..=cores {
                assert_eq!(effective_threads_on(requested, cores), (requested.max(1), None));
            }
            for requested in [cores + 1, 1_000_000, usize::MAX] {
                let (used, cap) = effective_threads_on(requested, cores);
                assert_eq!((used, cap), (cores, Some(ThreadCap { requested, used: cores })));
            }
        }
        let cap = effective_threads_on(1_000_000, 2).1.unwrap();
        assert_eq!(cap.to_string(), "1000000 threads requested, more than the 2 cores available: using 2");
        assert!(effective_threads(usize::MAX).0 <= available_cores());
    }
}
