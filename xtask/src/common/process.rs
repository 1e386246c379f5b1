//! Process measurements on Linux: peak resident set size, CPU time and the
//! load average (each `None` where `/proc` does not provide it).

/// The `key:` line of `/proc/self/status` (a size in kB), in bytes.
fn status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Peak resident set size of this process (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM")
}

/// Current resident set size of this process (`VmRSS`), in bytes.
pub fn rss_bytes() -> Option<u64> {
    status_bytes("VmRSS")
}

/// Resets the peak RSS counter (Linux `clear_refs` value 5), so the next
/// reading covers what follows; returns whether it worked.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

pub use okr_linalg::profile::process_cpu_seconds;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};

use super::timing::best_of;

/// The 1-minute load average, for the record of how busy the machine was.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// faer's GEMM rate `C = A B` in GFLOP/s on all threads, in the precision
/// `T`: the best of three repetitions at n = 2048 and 3072 (small-integer
/// entries, exact in either precision).
pub fn gemm_rate<T: faer::traits::ComplexField + From<i16>>() -> f64 {
    let mut best = 0.0f64;
    for n in [2048usize, 3072] {
        let a = Mat::<T>::from_fn(n, n, |i, j| T::from(((i * 7 + j * 13) % 17) as i16 - 8));
        let b = Mat::<T>::from_fn(n, n, |i, j| T::from(((i * 5 + j * 3) % 11) as i16 - 5));
        let mut c = Mat::<T>::zeros(n, n);
        let (t, ()) =
            best_of(3, || matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), T::from(1), Par::rayon(0)));
        best = best.max(2.0 * (n as f64).powi(3) / t.wall / 1e9);
    }
    best
}

/// How busy the machine is at one moment: faer's DGEMM rate (GFLOP/s, a few
/// seconds to measure) and the 1-minute load average.
#[derive(Debug, Clone, Copy)]
pub struct MachineState {
    pub dgemm_gflops: f64,
    pub load: Option<f64>,
}

impl MachineState {
    /// Measures both now.
    pub fn now() -> Self {
        Self { load: load_average(), dgemm_gflops: gemm_rate::<f64>() }
    }

    /// One sentence for a results file, `self` measured before the timed work
    /// and `after` after it.
    pub fn describe(&self, after: &Self) -> String {
        let load = |l: Option<f64>| l.map_or_else(|| "unknown".to_string(), |l| format!("{l:.2}"));
        format!(
            "faer DGEMM {:.1} GFLOP/s before and {:.1} after, 1-minute load average {} before and {} after on {} cores \
             (a load above the core count makes the times upper bounds)",
            self.dgemm_gflops,
            after.dgemm_gflops,
            load(self.load),
            load(after.load),
            std::thread::available_parallelism().map_or(0, |n| n.get())
        )
    }
}
