//! Where a long computation spends its time: wall and CPU seconds and
//! floating-point operations per named phase, collected on request.
//!
//! The streamed fits and the decoders mark their phases with [`phase`]
//! (kernel blocks, the SYRK accumulation, factorizations, solves, the score
//! GEMM, ...). Nothing is recorded unless the calling thread runs inside
//! [`collect`], so the marks cost one thread-local read otherwise:
//!
//! ```
//! use okr_linalg::profile;
//! let (sum, phases) = profile::collect(|| {
//!     let _p = profile::phase("sum", 1e3);
//!     (0..1000).map(f64::from).sum::<f64>()
//! });
//! assert_eq!(sum, 499_500.0);
//! assert_eq!(phases[0].name, "sum");
//! assert_eq!(phases[0].calls, 1);
//! ```
//!
//! A phase's rate is `flops / seconds`; its parallel factor is
//! `cpu_seconds / seconds` (CPU time of the whole process, all threads, so
//! another thread of the same process working meanwhile counts too).
//! Phases nest: an inner phase's time is also inside the outer one's.

use std::cell::RefCell;
use std::time::Instant;

/// Totals of one named phase over all its calls.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseTime {
    /// The phase's name as given to [`phase`].
    pub name: &'static str,
    /// How many times the phase ran.
    pub calls: usize,
    /// Wall seconds, summed over calls.
    pub seconds: f64,
    /// CPU seconds of the process (all threads) during the phase, summed
    /// over calls; `None` where the platform does not report it.
    pub cpu_seconds: Option<f64>,
    /// Floating-point operations, summed over calls, as counted by the
    /// caller of [`phase`] (a multiply-add counts 2).
    pub flops: f64,
}

impl PhaseTime {
    /// GFLOP/s (`flops / seconds / 1e9`); 0 for a phase that took no time.
    #[must_use]
    pub fn gflops(&self) -> f64 {
        if self.seconds > 0.0 { self.flops / self.seconds / 1e9 } else { 0.0 }
    }
}

thread_local! {
    static COLLECTOR: RefCell<Option<Vec<PhaseTime>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns its value with the phases it marked on this thread,
/// in order of first start, calls of the same name added up. Nested
/// `collect` calls each see their own phases only.
pub fn collect<T>(f: impl FnOnce() -> T) -> (T, Vec<PhaseTime>) {
    let outer = COLLECTOR.with(|c| c.borrow_mut().replace(Vec::new()));
    // The collector is restored even if `f` unwinds.
    struct Restore(Option<Option<Vec<PhaseTime>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                COLLECTOR.with(|c| *c.borrow_mut() = outer);
            }
        }
    }
    let mut restore = Restore(Some(outer));
    let value = f();
    let mut phases = COLLECTOR.with(|c| c.borrow_mut().take()).unwrap_or_default();
    // A phase still running when `f` returned (a guard kept alive) is not reported.
    phases.retain(|p| p.calls > 0);
    if let Some(outer) = restore.0.take() {
        COLLECTOR.with(|c| *c.borrow_mut() = outer);
    }
    (value, phases)
}

/// Whether this thread is inside [`collect`] (so that callers can skip
/// counting work only a profile needs).
#[must_use]
pub fn is_collecting() -> bool {
    COLLECTOR.with(|c| c.borrow().is_some())
}

/// Marks a phase of `flops` floating-point operations from now until the
/// returned guard drops. A no-op outside [`collect`].
#[must_use = "the phase ends when the guard drops"]
pub fn phase(name: &'static str, flops: f64) -> PhaseGuard {
    // A phase's row exists from its first start, so phases list in order of
    // first start (an outer phase before the phases inside it).
    let on = COLLECTOR.with(|c| {
        let mut c = c.borrow_mut();
        let Some(phases) = c.as_mut() else { return false };
        if !phases.iter().any(|p| p.name == name) {
            phases.push(PhaseTime { name, calls: 0, seconds: 0.0, cpu_seconds: Some(0.0), flops: 0.0 });
        }
        true
    });
    PhaseGuard { name, flops, started: on.then(|| (Instant::now(), process_cpu_seconds())) }
}

/// Ends its phase when dropped (see [`phase`]).
#[derive(Debug)]
pub struct PhaseGuard {
    name: &'static str,
    flops: f64,
    started: Option<(Instant, Option<f64>)>,
}

impl PhaseGuard {
    /// Sets the phase's flop count when it is known only once the work has
    /// been chosen (a factorization that may fall back to another method).
    pub fn set_flops(&mut self, flops: f64) {
        self.flops = flops;
    }
}

impl Drop for PhaseGuard {
    fn drop(&mut self) {
        let Some((t0, cpu0)) = self.started else { return };
        let seconds = t0.elapsed().as_secs_f64();
        let cpu = cpu0.zip(process_cpu_seconds()).map(|(a, b)| (b - a).max(0.0));
        COLLECTOR.with(|c| {
            let mut c = c.borrow_mut();
            let Some(phases) = c.as_mut() else { return };
            // The row was made at the phase's start unless a nested `collect` replaced the collector.
            let p = match phases.iter().position(|p| p.name == self.name) {
                Some(i) => &mut phases[i],
                None => {
                    phases.push(PhaseTime {
                        name: self.name,
                        calls: 0,
                        seconds: 0.0,
                        cpu_seconds: Some(0.0),
                        flops: 0.0,
                    });
                    phases.last_mut().expect("just pushed")
                }
            };
            p.calls += 1;
            p.seconds += seconds;
            p.flops += self.flops;
            p.cpu_seconds = p.cpu_seconds.zip(cpu).map(|(a, b)| a + b);
        });
    }
}

/// CPU seconds (user + system) of this process so far, all threads: the
/// sum of the threads' `/proc/self/task/*/schedstat` (nanoseconds) on
/// Linux, else `/proc/self/stat` (1/100 s ticks, includes exited threads);
/// `None` where neither exists.
#[must_use]
pub fn process_cpu_seconds() -> Option<f64> {
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        let ns: f64 = tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .sum();
        if ns > 0.0 {
            return Some(ns * 1e-9);
        }
    }
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_recorded_outside_collect() {
        assert!(!is_collecting());
        drop(phase("ignored", 1.0));
        let ((), phases) = collect(|| {});
        assert!(phases.is_empty());
    }

    #[test]
    fn calls_of_one_name_add_up_in_order_of_first_start() {
        let ((), phases) = collect(|| {
            for _ in 0..3 {
                let _a = phase("a", 2.0);
                let _b = phase("b", 5.0);
            }
            drop(phase("c", 0.0));
        });
        let names: Vec<_> = phases.iter().map(|p| p.name).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!((phases[0].calls, phases[0].flops), (3, 6.0));
        assert_eq!((phases[1].calls, phases[1].flops), (3, 15.0));
        // "b" is inside "a" each time.
        assert!(phases[1].seconds <= phases[0].seconds);
    }

    #[test]
    fn nested_collect_sees_its_own_phases_and_restores_the_outer() {
        let (inner, outer) = collect(|| {
            drop(phase("outer", 1.0));
            let ((), inner) = collect(|| drop(phase("inner", 1.0)));
            drop(phase("outer", 1.0));
            inner
        });
        assert_eq!(inner.iter().map(|p| p.name).collect::<Vec<_>>(), ["inner"]);
        assert_eq!(outer.len(), 1);
        assert_eq!((outer[0].name, outer[0].calls), ("outer", 2));
        assert!(!is_collecting());
    }

    #[test]
    fn a_panic_inside_collect_leaves_the_thread_not_collecting() {
        let r = std::panic::catch_unwind(|| collect(|| panic!("boom")));
        assert!(r.is_err());
        assert!(!is_collecting());
    }

    #[test]
    fn cpu_seconds_grow_with_work() {
        let Some(a) = process_cpu_seconds() else { return };
        let mut x = 0u64;
        let t = Instant::now();
        while t.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
        let b = process_cpu_seconds().unwrap();
        assert!(b > a, "{a} -> {b}");
    }
}
