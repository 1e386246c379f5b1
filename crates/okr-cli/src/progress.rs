//! Progress bars on standard error: only when it is a terminal and
//! `--quiet` is not given, so that redirected output and logs never hold
//! bar drawings. The library reports through `okr_surrogate::progress`
//! (solver iterations, tuning fits, decode tiles, downloads); [`observe`]
//! turns those reports into one indicatif bar (a spinner when the total is
//! unknown), cleared when the command ends.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use okr::surrogate::progress::{self, Progress};

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: no bars.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether bars are drawn: standard error is a terminal and `--quiet` is not given.
pub fn enabled() -> bool {
    !QUIET.load(Ordering::Relaxed) && std::io::stderr().is_terminal()
}

/// The bar of one command: created at the first report, its style following
/// whether the report knows its total.
struct Bar {
    bar: Option<ProgressBar>,
    /// Whether the style drawn is the bounded one (`None` before the first report).
    bounded: Option<bool>,
}

impl Progress for Bar {
    fn step(&mut self, step: usize, total: usize, message: &str) {
        let bounded = total > 0;
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        if self.bounded != Some(bounded) {
            let style = if bounded {
                ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} ({elapsed})")
            } else {
                ProgressStyle::with_template("{spinner} {msg}: {pos} ({elapsed})")
            };
            bar.set_style(style.unwrap_or_else(|_| ProgressStyle::default_bar()).progress_chars("=> "));
            self.bounded = Some(bounded);
        }
        if bounded {
            bar.set_length(total as u64);
        } else {
            bar.unset_length();
        }
        bar.set_position(step as u64);
        bar.set_message(message.to_string());
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// Runs `f` with the library's progress reports drawn as a bar on standard
/// error when [`enabled`], else runs it silently.
pub fn observe<R>(f: impl FnOnce() -> R) -> R {
    if !enabled() {
        return f();
    }
    progress::observe(Box::new(Bar { bar: None, bounded: None }), f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bar follows the reports: bounded with a total, a spinner without.
    #[test]
    fn the_bar_follows_bounded_and_unbounded_reports() {
        let mut bar = Bar { bar: None, bounded: None };
        bar.step(3, 10, "trace-norm gd");
        let b = bar.bar.clone().unwrap();
        b.set_draw_target(ProgressDrawTarget::hidden());
        assert_eq!((b.position(), b.length(), b.message()), (3, Some(10), "trace-norm gd".to_string()));
        bar.step(7, 0, "tune: fits");
        assert_eq!((b.position(), b.length()), (7, None));
        drop(bar);
        assert!(b.is_finished());
    }
}
