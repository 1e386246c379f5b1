//! Metrics of label-score models (LEML, BR, CPLST) that depend on the label
//! encoding.

use faer::MatRef;
use okr_kernels::{LabelSets, Rows};

use crate::Result;
use crate::metrics::check_scores;

/// Hamming loss of thresholded scores:
/// $\frac{1}{nL} \sum_{i,j} \mathbb{1}\big[(j \in y_i) \ne (s_{ij} > \theta)\big]$.
///
/// The threshold is the midpoint of the training encoding: `0.5` for models
/// trained on {0, 1} targets (squared loss, full labels), `0` for ±1 targets
/// (logistic, squared hinge, missing-label squared loss). The inequality is
/// strict, as in the LEML authors' evaluation.
///
/// # Errors
/// As [`precision_at_k`](crate::precision_at_k) for the scores.
///
/// # Example
/// ```
/// use faer::mat;
/// use okr_kernels::LabelSets;
/// let scores = mat![[0.9, 0.5, 0.2], [0.6, 0.1, 0.7]];
/// let y = LabelSets::new(3, vec![vec![0, 1], vec![2]])?;
/// // at 0.5: row 0 predicts {0} (label 1 missed); row 1 predicts {0, 2} (label 0 wrong)
/// assert_eq!(okr_eval::hamming_loss_at(scores.as_ref(), &y, 0.5)?, 2.0 / 6.0);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn hamming_loss_at(scores: MatRef<'_, f64>, truth: &LabelSets, threshold: f64) -> Result<f64> {
    check_scores(scores, truth)?;
    let l = truth.n_labels();
    let mut wrong = 0usize;
    for (i, y) in truth.iter().enumerate() {
        let predicted = (0..l).filter(|&j| scores[(i, j)] > threshold).count();
        let hits = y.iter().filter(|&&j| scores[(i, j)] > threshold).count();
        wrong += predicted + y.len() - 2 * hits;
    }
    Ok(wrong as f64 / (truth.n_rows() * l) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn threshold_follows_the_encoding() {
        let y = LabelSets::new(2, vec![vec![0], vec![]]).unwrap();
        let s = Mat::from_fn(2, 2, |i, j| if i == 0 && j == 0 { 0.3 } else { -0.2 });
        // {0, 1} encoding: 0.3 is below 0.5, one miss.
        assert_eq!(hamming_loss_at(s.as_ref(), &y, 0.5).unwrap(), 0.25);
        // ±1 encoding: 0.3 > 0 is a hit, everything else negative.
        assert_eq!(hamming_loss_at(s.as_ref(), &y, 0.0).unwrap(), 0.0);
        // Strict inequality: a score equal to the threshold is off.
        assert_eq!(hamming_loss_at(s.as_ref(), &y, 0.3).unwrap(), 0.25);
    }
}
