//! Data-driven kernel widths.

use crate::{Error, Kernel, LabelSets, Linear, Result, Rows};

/// Median squared Euclidean distance $\|x_i - x_j\|^2$ over the pairs of at
/// most `max_rows` evenly spaced rows of `x` (all rows when fewer), computed
/// from one linear Gram block. Deterministic; `0` for fewer than two rows;
/// `inf` when the squared distances overflow (features near `1e154`).
///
/// The Gaussian width `gamma = c / median` with `c = 1/2` is the median
/// heuristic ($\sigma^2$ = median).
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, median_sq_distance};
/// let x = DenseRows::from_rows(&[vec![0.0], vec![1.0], vec![3.0]])?;
/// // Squared distances 1, 9, 4: the median is 4.
/// assert_eq!(median_sq_distance(&x, 100), 4.0);
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub fn median_sq_distance<R: Rows>(x: &R, max_rows: usize) -> f64
where
    Linear: Kernel<R>,
{
    let n = x.n_rows();
    let m = n.min(max_rows.max(2));
    if m < 2 {
        return 0.0;
    }
    let idx: Vec<usize> = (0..m).map(|i| i * n / m).collect();
    let sample = x.select(&idx);
    let g = Linear.gram(&sample);
    let mut d: Vec<f64> = (0..m)
        .flat_map(|j| (0..j).map(move |i| (i, j)))
        .map(|(i, j)| {
            // An overflowed norm makes `inf - inf = NaN`: that distance is
            // infinite, not 0 (which would read as identical rows).
            let d = g[(i, i)] + g[(j, j)] - 2.0 * g[(i, j)];
            if d.is_nan() { f64::INFINITY } else { d.max(0.0) }
        })
        .collect();
    let mid = d.len() / 2;
    *d.select_nth_unstable_by(mid, f64::total_cmp).1
}

/// The median-heuristic Gaussian width for a median squared distance
/// `median_sq` (from [`median_sq_distance`]): $\gamma = 1 / (2 m)$, so that
/// $\sigma^2 = m$; `1` when the median is `0` (all sampled rows equal).
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, median_heuristic_gamma, median_sq_distance};
/// let x = DenseRows::from_rows(&[vec![0.0], vec![1.0], vec![3.0]])?;
/// assert_eq!(median_heuristic_gamma(median_sq_distance(&x, 2000)), 1.0 / 8.0);
/// assert_eq!(median_heuristic_gamma(0.0), 1.0);
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub fn median_heuristic_gamma(median_sq: f64) -> f64 {
    if median_sq > 0.0 { 1.0 / (2.0 * median_sq) } else { 1.0 }
}

/// Rows the median heuristic samples in okr's default widths (`okr fit`,
/// the Python estimators): [`median_gamma`].
pub const MEDIAN_SAMPLE_ROWS: usize = 2000;

/// okr's default Gaussian width on feature vectors: the median heuristic
/// over at most [`MEDIAN_SAMPLE_ROWS`] rows,
/// `median_heuristic_gamma(median_sq_distance(x, MEDIAN_SAMPLE_ROWS))`,
/// unchecked: `0` or `inf` when the median overflows or underflows. A
/// default width for a user's data goes through [`checked_median_gamma`],
/// whose error every front door shares.
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, median_gamma};
/// let x = DenseRows::from_rows(&[vec![0.0], vec![1.0], vec![3.0]])?;
/// assert_eq!(median_gamma(&x), 1.0 / 8.0); // median squared distance 4
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub fn median_gamma<R: Rows>(x: &R) -> f64
where
    Linear: Kernel<R>,
{
    median_heuristic_gamma(median_sq_distance(x, MEDIAN_SAMPLE_ROWS))
}

/// The training side a data-driven width is computed on, named in
/// [`Error::UnusableMedian`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WidthSide {
    /// The input kernel's width (`gamma`, `okr --input-gamma`).
    Inputs,
    /// The output kernel's width (`output_gamma`, `okr --output-gamma`).
    Outputs,
}

impl WidthSide {
    /// What to do about an unusable median.
    pub(crate) fn remedy(self) -> &'static str {
        match self {
            Self::Inputs => "scale the features or set gamma (--input-gamma)",
            Self::Outputs => "scale the outputs or set output_gamma (--output-gamma)",
        }
    }
}

impl std::fmt::Display for WidthSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Inputs => "inputs",
            Self::Outputs => "outputs",
        })
    }
}

/// The one check of a median-heuristic width, shared by every caller
/// (`okr fit` and `tune` through the recipe layer, `okr fit --estimator
/// k2ae`, the Python estimators): the width
/// [`median_heuristic_gamma`]`(median_sq)` when it can be used, an error
/// when the median squared distance overflowed (`inf`, features near
/// `1e154` without standardization) or is so small that `1 / (2 median)`
/// does. A median of 0 (all sampled rows identical) keeps the heuristic's
/// fallback `1`.
///
/// # Errors
/// [`Error::UnusableMedian`] naming the median and the remedy.
///
/// # Example
/// ```
/// use okr_kernels::{WidthSide, check_median_width};
/// assert_eq!(check_median_width(4.0, WidthSide::Inputs)?, 0.125);
/// assert_eq!(check_median_width(0.0, WidthSide::Inputs)?, 1.0);
/// let err = check_median_width(f64::INFINITY, WidthSide::Inputs).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "the median squared distance between training inputs is inf: scale the features or set gamma (--input-gamma)"
/// );
/// assert!(check_median_width(1e-320, WidthSide::Outputs).is_err());
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub fn check_median_width(median_sq: f64, side: WidthSide) -> Result<f64> {
    let gamma = median_heuristic_gamma(median_sq);
    if median_sq == 0.0 || (median_sq.is_finite() && gamma.is_finite()) {
        Ok(gamma)
    } else {
        Err(Error::UnusableMedian { side, median: median_sq })
    }
}

/// [`median_gamma`] through [`check_median_width`]: okr's default Gaussian
/// width on feature vectors, or the error every front door reports when
/// it cannot be used.
///
/// # Errors
/// [`Error::UnusableMedian`].
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, WidthSide, checked_median_gamma};
/// let x = DenseRows::from_rows(&[vec![0.0], vec![1.0], vec![3.0]])?;
/// assert_eq!(checked_median_gamma(&x, WidthSide::Inputs)?, 1.0 / 8.0);
/// let huge = DenseRows::from_rows(&[vec![1e154, 3e154], vec![-2e154, 1e154], vec![2e154, -3e154]])?;
/// assert!(checked_median_gamma(&huge, WidthSide::Inputs).is_err());
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub fn checked_median_gamma<R: Rows>(x: &R, side: WidthSide) -> Result<f64>
where
    Linear: Kernel<R>,
{
    check_median_width(median_sq_distance(x, MEDIAN_SAMPLE_ROWS), side)
}

/// okr's default Gaussian width on label sets: $\sigma^2$ is the mean
/// number of labels per set $\bar c$ (at least 1), $\gamma = 1 / (2 \max(1, \bar c))$.
///
/// # Example
/// ```
/// use okr_kernels::{LabelSets, label_set_gamma};
/// let y = LabelSets::new(4, vec![vec![0, 1, 2], vec![3]])?;
/// assert_eq!(label_set_gamma(&y), 0.25); // 2 labels per set: sigma^2 = 2
/// assert_eq!(label_set_gamma(&LabelSets::new(4, vec![vec![]])?), 0.5);
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub fn label_set_gamma(y: &LabelSets) -> f64 {
    1.0 / (2.0 * y.mean_cardinality().max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrRows, DenseRows};

    #[test]
    fn sparse_equals_dense_and_small_inputs() {
        let rows = vec![vec![(0, 1.0)], vec![(1, 2.0)], vec![(0, 1.0), (2, 1.0)], vec![]];
        let s = CsrRows::from_rows(3, rows).unwrap();
        let d = DenseRows::new(s.to_dense()).unwrap();
        assert_eq!(median_sq_distance(&s, 10), median_sq_distance(&d, 10));
        assert_eq!(median_sq_distance(&d.select(&[0]), 10), 0.0);
        let f = crate::Features::from(s.clone());
        assert_eq!(median_sq_distance(&f, 10), median_sq_distance(&s, 10));
    }

    /// Rows near 1e154 overflow their squared norms: the median is `inf`,
    /// not the 0 of `NaN.max(0)` that reads as identical rows.
    #[test]
    fn overflowing_distances_are_infinite_not_zero() {
        let x = DenseRows::from_rows(&[vec![1e154, 3e154], vec![-2e154, 1e154], vec![2e154, -3e154]]).unwrap();
        assert_eq!(median_sq_distance(&x, 10), f64::INFINITY);
        let same = DenseRows::from_rows(&[vec![1.0], vec![1.0], vec![1.0]]).unwrap();
        assert_eq!(median_sq_distance(&same, 10), 0.0);
    }

    #[test]
    fn gamma_of_the_median() {
        // Squared distances 1, 4, 1 between 0, 1, 2: median 1, gamma 1/2.
        let x = DenseRows::from_rows(&[vec![0.0], vec![1.0], vec![2.0]]).unwrap();
        assert_eq!(median_heuristic_gamma(median_sq_distance(&x, 10)), 0.5);
        assert_eq!(median_heuristic_gamma(0.25), 2.0);
        assert_eq!(median_heuristic_gamma(0.0), 1.0);
        assert_eq!(median_heuristic_gamma(-0.0), 1.0);
        // Beyond MEDIAN_SAMPLE_ROWS rows, median_gamma samples evenly spaced rows.
        let many = DenseRows::new(faer::Mat::from_fn(2 * MEDIAN_SAMPLE_ROWS + 1, 1, |i, _| (i % 7) as f64)).unwrap();
        assert_eq!(median_gamma(&many), median_heuristic_gamma(median_sq_distance(&many, MEDIAN_SAMPLE_ROWS)));
        assert_eq!(median_gamma(&x), 0.5);
    }

    /// sigma^2 is the mean cardinality, at least 1.
    #[test]
    fn label_set_width() {
        for (sets, sigma2) in [(vec![vec![0, 1], vec![1, 2, 3]], 2.5), (vec![vec![], vec![0]], 1.0), (vec![], 1.0)] {
            let y = LabelSets::new(4, sets).unwrap();
            assert_eq!(label_set_gamma(&y), 1.0 / (2.0 * sigma2));
        }
    }
}
