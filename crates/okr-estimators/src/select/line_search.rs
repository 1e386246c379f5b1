//! Coarse-to-fine search over kernel widths: a line search in log width.

use super::GridSearchResult;
use crate::{Error, Result};

/// `[c / factor, c * factor]`.
///
/// # Example
/// ```
/// assert_eq!(okr_estimators::select::log_neighbours(1.0, 2.0), [0.5, 2.0]);
/// ```
pub fn log_neighbours(c: f64, factor: f64) -> [f64; 2] {
    [c / factor, c * factor]
}

/// A line search over width multipliers $c$ on a geometric grid
/// $c_0 \cdot f^k$: it evaluates $c_0 / f$, $c_0$, $c_0 f$, then, while the
/// best cell lies on the smallest (largest) evaluated width, one more width
/// beyond it, up to `max_widths` widths in all.
///
/// Each evaluation is a full ridge path (a [`GridSearchResult`] over one or
/// more widths, e.g. from [`GaussianIokrSearch`](super::GaussianIokrSearch));
/// the results are merged, so every fold score is kept. When the mean score
/// is unimodal in $\log c$ along the grid the search ends at the best width
/// of the whole grid, evaluating only its neighbourhood.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `start` | - | first width $c_0$ | finite, $> 0$ |
/// | `factor` | 2 | grid ratio $f$ | finite, $> 1$ |
/// | `max_widths` | 7 | widths evaluated at most | $\ge 3$ |
///
/// # Example
/// ```
/// use okr_estimators::select::{GridSearchResult, WidthLineSearch};
/// // A unimodal score in log2(c) peaking at c = 4, over one ridge and one fold.
/// let eval = |widths: &[f64]| -> Result<GridSearchResult, okr_estimators::Error> {
///     let scores = widths.iter().map(|c| vec![vec![-(c.log2() - 2.0).abs()]]).collect();
///     Ok(GridSearchResult::from_fold_scores(1.0, widths.to_vec(), vec![1e-3], scores))
/// };
/// let result = WidthLineSearch::new(0.5).run(eval)?;
/// assert_eq!(result.c(), 4.0);
/// assert_eq!(result.widths, [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct WidthLineSearch {
    start: f64,
    factor: f64,
    max_widths: usize,
}

impl WidthLineSearch {
    /// A search from `start` with ratio 2 and at most 7 widths.
    pub fn new(start: f64) -> Self {
        Self { start, factor: 2.0, max_widths: 7 }
    }

    /// Sets the grid ratio.
    pub fn factor(mut self, factor: f64) -> Self {
        self.factor = factor;
        self
    }

    /// Sets the largest number of widths evaluated.
    pub fn max_widths(mut self, max_widths: usize) -> Self {
        self.max_widths = max_widths;
        self
    }

    fn check(&self) -> Result<()> {
        let bad = |name: &'static str, value: String, expected: &'static str| {
            Err(Error::InvalidParameter { name, value, expected })
        };
        if !(self.start.is_finite() && self.start > 0.0) {
            return bad("start", self.start.to_string(), "finite and > 0");
        }
        if !(self.factor.is_finite() && self.factor > 1.0) {
            return bad("factor", self.factor.to_string(), "finite and > 1");
        }
        if self.max_widths < 3 {
            return bad("max_widths", self.max_widths.to_string(), ">= 3");
        }
        Ok(())
    }

    /// Runs the search; `eval(widths)` runs the grid over `widths` (with the
    /// same ridges, folds and median every time).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a bad `start`, `factor` or
    /// `max_widths`, or results that cannot be merged; `eval`'s errors.
    pub fn run<E: From<Error>>(
        &self,
        mut eval: impl FnMut(&[f64]) -> std::result::Result<GridSearchResult, E>,
    ) -> std::result::Result<GridSearchResult, E> {
        self.check()?;
        let [lo, hi] = log_neighbours(self.start, self.factor);
        let mut result = eval(&[lo, self.start, hi])?;
        while result.widths.len() < self.max_widths {
            let (first, last) = (0, result.widths.len() - 1);
            let next = if result.best_width == first {
                result.widths[first] / self.factor
            } else if result.best_width == last {
                result.widths[last] * self.factor
            } else {
                break;
            };
            result = result.merge(eval(&[next])?)?;
        }
        Ok(result)
    }
}
