//! Wall and CPU seconds of a call, once or best of a few repetitions.

use std::time::Instant;

use super::process::process_cpu_seconds;

/// Wall seconds of one call and the process's CPU seconds over all threads
/// (`None` where `/proc` does not provide them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    /// Wall-clock seconds.
    pub wall: f64,
    /// CPU seconds, user + system, of every thread of the process.
    pub cpu: Option<f64>,
}

/// Runs `f` once, timed.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Timed) {
    let cpu0 = process_cpu_seconds();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu0.zip(process_cpu_seconds()).map(|(a, b)| b - a);
    (out, Timed { wall, cpu })
}

/// Runs `f` `reps` times (at least once): the timing of the fastest call (by
/// wall seconds) and the output of the last.
pub fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> (Timed, T) {
    let (mut out, mut best) = timed(&mut f);
    for _ in 1..reps {
        let (o, t) = timed(&mut f);
        if t.wall < best.wall {
            best = t;
        }
        out = o;
    }
    (best, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_of_runs_reps_times_and_keeps_the_last_output() {
        let mut calls = 0;
        let (t, last) = best_of(3, || {
            calls += 1;
            calls
        });
        assert_eq!((calls, last), (3, 3));
        assert!(t.wall >= 0.0 && t.cpu.is_none_or(|c| c >= 0.0));
        let (_, once) = best_of(0, || 7);
        assert_eq!(once, 7);
    }
}
