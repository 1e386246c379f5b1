//! Retrieval metrics from the rank of the true candidate of each query
//! (1 = ranked first), as in metabolite identification: top-k accuracy and
//! mean / median rank, each computed twice, with tied scores counted in the
//! true candidate's favour (optimistic rank) and against it (pessimistic).

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The `k` of [`RankSummary::top_k`]: top-1, 5, 10 and 20 accuracy.
pub const TOP_KS: [usize; 4] = [1, 5, 10, 20];

/// Metrics of one rank convention.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    /// Fraction of queries whose true candidate has rank `<= k`, for `k` in [`TOP_KS`].
    pub top_k: [f64; 4],
    /// Mean rank.
    pub mean_rank: f64,
    /// Median rank (the mean of the two middle ranks for an even count).
    pub median_rank: f64,
}

impl RankSummary {
    /// The metrics by name, in order: `top_1`, `top_5`, `top_10`, `top_20`
    /// (the keys of [`TOP_KS`]), `mean_rank`, `median_rank` (what `okr rank
    /// --summary` writes per rank convention).
    ///
    /// # Example
    /// ```
    /// let s = okr_eval::rank_summary(&[1, 4, 30])?;
    /// let named = s.named();
    /// assert_eq!((named[1].0.as_str(), named[1].1), ("top_5", 2.0 / 3.0));
    /// assert_eq!(named[5], ("median_rank".to_string(), 4.0));
    /// # Ok::<(), okr_eval::Error>(())
    /// ```
    pub fn named(&self) -> Vec<(String, f64)> {
        let top = TOP_KS.iter().zip(self.top_k).map(|(k, v)| (format!("top_{k}"), v));
        top.chain([("mean_rank".to_string(), self.mean_rank), ("median_rank".to_string(), self.median_rank)]).collect()
    }
}

/// Retrieval metrics, ties counted both ways.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RetrievalMetrics {
    /// Number of queries with a known true candidate.
    pub n_queries: usize,
    /// From the optimistic ranks `1 + #{c : s_c < s_true}`.
    pub optimistic: RankSummary,
    /// From the pessimistic ranks `#{c : s_c <= s_true}`.
    pub pessimistic: RankSummary,
}

/// Fraction of `ranks` (1-based) that are `<= k`.
///
/// # Errors
/// [`Error::Empty`] without ranks, [`Error::InvalidArgument`] for `k == 0`
/// or a rank 0.
///
/// # Example
/// ```
/// assert_eq!(okr_eval::top_k_rank_accuracy(&[1, 3, 7, 2], 2)?, 0.5);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn top_k_rank_accuracy(ranks: &[usize], k: usize) -> Result<f64> {
    check_ranks(ranks)?;
    if k == 0 {
        return Err(Error::invalid("k", k, "k >= 1"));
    }
    Ok(ranks.iter().filter(|&&r| r <= k).count() as f64 / ranks.len() as f64)
}

/// Summary of one rank list: top-1/5/10/20 accuracy, mean and median rank.
///
/// # Errors
/// As [`top_k_rank_accuracy`].
///
/// # Example
/// ```
/// let s = okr_eval::rank_summary(&[1, 4, 30])?;
/// assert_eq!(s.top_k, [1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0]);
/// assert_eq!((s.mean_rank, s.median_rank), (35.0 / 3.0, 4.0));
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn rank_summary(ranks: &[usize]) -> Result<RankSummary> {
    check_ranks(ranks)?;
    let mut top_k = [0.0; 4];
    for (slot, &k) in top_k.iter_mut().zip(&TOP_KS) {
        *slot = top_k_rank_accuracy(ranks, k)?;
    }
    let mean_rank = ranks.iter().map(|&r| r as f64).sum::<f64>() / ranks.len() as f64;
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let median_rank =
        if n % 2 == 1 { sorted[n / 2] as f64 } else { (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0 };
    Ok(RankSummary { top_k, mean_rank, median_rank })
}

/// Retrieval metrics from the optimistic and pessimistic ranks of the true
/// candidate of each query (same order).
///
/// # Errors
/// [`Error::ShapeMismatch`] for lists of different lengths, [`Error::Empty`]
/// without queries, [`Error::InvalidArgument`] for a rank 0 or an
/// optimistic rank above the pessimistic one.
///
/// # Example
/// ```
/// // Query 2's true candidate ties with one other candidate for first place.
/// let m = okr_eval::retrieval_metrics(&[1, 1, 6], &[1, 2, 6])?;
/// assert_eq!(m.optimistic.top_k[0], 2.0 / 3.0);
/// assert_eq!(m.pessimistic.top_k[0], 1.0 / 3.0);
/// assert_eq!(m.pessimistic.median_rank, 2.0);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn retrieval_metrics(optimistic: &[usize], pessimistic: &[usize]) -> Result<RetrievalMetrics> {
    if optimistic.len() != pessimistic.len() {
        return Err(Error::ShapeMismatch {
            what: "pessimistic ranks (one per query)",
            expected: optimistic.len(),
            got: pessimistic.len(),
        });
    }
    if let Some((o, p)) = optimistic.iter().zip(pessimistic).find(|(o, p)| o > p) {
        return Err(Error::invalid("optimistic rank", o, format!("<= the pessimistic rank {p}")));
    }
    Ok(RetrievalMetrics {
        n_queries: optimistic.len(),
        optimistic: rank_summary(optimistic)?,
        pessimistic: rank_summary(pessimistic)?,
    })
}

fn check_ranks(ranks: &[usize]) -> Result<()> {
    if ranks.is_empty() {
        return Err(Error::Empty { what: "no ranks to evaluate" });
    }
    if ranks.contains(&0) {
        return Err(Error::invalid("rank", 0, "ranks start at 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: count by looping over thresholds and a sorted median.
    #[test]
    fn summary_matches_direct_counts() {
        let mut s = 7u64;
        for n in 1..40 {
            let ranks: Vec<usize> = (0..n)
                .map(|_| {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                    1 + ((s >> 33) % 30) as usize
                })
                .collect();
            let sum = rank_summary(&ranks).unwrap();
            for (i, k) in TOP_KS.iter().enumerate() {
                let hits = ranks.iter().filter(|&&r| r <= *k).count();
                assert_eq!(sum.top_k[i], hits as f64 / n as f64);
            }
            // The median: half the ranks on each side.
            let below = ranks.iter().filter(|&&r| (r as f64) < sum.median_rank).count();
            let above = ranks.iter().filter(|&&r| (r as f64) > sum.median_rank).count();
            assert!(below <= n / 2 && above <= n / 2, "{ranks:?} {}", sum.median_rank);
            let mean = ranks.iter().sum::<usize>() as f64 / n as f64;
            assert!((sum.mean_rank - mean).abs() < 1e-12);
        }
        assert_eq!(rank_summary(&[3, 1, 2, 10]).unwrap().median_rank, 2.5);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(rank_summary(&[]), Err(Error::Empty { .. })));
        assert!(rank_summary(&[1, 0]).is_err());
        assert!(top_k_rank_accuracy(&[1], 0).is_err());
        assert!(matches!(retrieval_metrics(&[1], &[1, 2]), Err(Error::ShapeMismatch { .. })));
        assert!(retrieval_metrics(&[3], &[2]).unwrap_err().to_string().contains("optimistic rank"));
    }

    #[test]
    fn named_metrics_follow_top_ks() {
        let s = rank_summary(&[1, 2, 9, 15, 40]).unwrap();
        let named = s.named();
        let keys: Vec<&str> = named.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["top_1", "top_5", "top_10", "top_20", "mean_rank", "median_rank"]);
        let values: Vec<f64> = named.iter().map(|&(_, v)| v).collect();
        assert_eq!(values, [0.2, 0.4, 0.6, 0.8, 67.0 / 5.0, 9.0]);
    }
}
