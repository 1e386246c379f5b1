//! Metrics of label-score models (LEML, BR, CPLST) that depend on the label
//! encoding.

use faer::MatRef;
use okr_kernels::{LabelSets, Rows};

use crate::metrics::check_scores;
use crate::{Error, Result};

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

/// The labels whose score is above their threshold:
/// $\hat y_i = \{ j : s_{ij} > \theta_j \}$ (strict, as [`hamming_loss_at`]),
/// one threshold per label (column of `scores`).
///
/// # Errors
/// [`Error::ShapeMismatch`] when `thresholds` does not have one value per column.
///
/// # Example
/// ```
/// use faer::mat;
/// use okr_kernels::Rows;
/// let scores = mat![[0.9, 0.5], [0.1, 0.7]];
/// let sets = okr_eval::score_metrics::threshold_sets(scores.as_ref(), &[0.5, 0.6])?;
/// assert_eq!((sets.set(0), sets.set(1)), (&[0][..], &[1][..]));
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn threshold_sets(scores: MatRef<'_, f64>, thresholds: &[f64]) -> Result<LabelSets> {
    if thresholds.len() != scores.ncols() {
        return Err(Error::ShapeMismatch {
            what: "thresholds (one per label)",
            expected: scores.ncols(),
            got: thresholds.len(),
        });
    }
    let sets = (0..scores.nrows())
        .map(|i| (0..scores.ncols()).filter(|&j| scores[(i, j)] > thresholds[j]).collect())
        .collect();
    Ok(LabelSets::new(scores.ncols(), sets)?)
}

/// The `k` best-scoring labels of every row (all labels when `k` is larger),
/// best first; ties go to the lower label.
///
/// # Example
/// ```
/// use faer::mat;
/// let scores = mat![[0.2, 0.9, 0.2], [0.0, 0.0, 1.0]];
/// let top = okr_eval::score_metrics::top_labels(scores.as_ref(), 2);
/// assert_eq!(top, vec![vec![1, 0], vec![2, 0]]);
/// ```
pub fn top_labels(scores: MatRef<'_, f64>, k: usize) -> Vec<Vec<usize>> {
    (0..scores.nrows())
        .map(|i| {
            let mut order: Vec<usize> = (0..scores.ncols()).collect();
            order.sort_by(|&a, &b| scores[(i, b)].total_cmp(&scores[(i, a)]).then(a.cmp(&b)));
            order.truncate(k);
            order
        })
        .collect()
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

    #[test]
    fn threshold_sets_and_top_labels_match_loops() {
        let s = Mat::from_fn(4, 3, |i, j| ((i * 7 + j * 5) % 6) as f64 / 6.0 - 0.3);
        let t = [0.0, 0.2, -0.1];
        let sets = threshold_sets(s.as_ref(), &t).unwrap();
        for i in 0..4 {
            let want: Vec<usize> = (0..3).filter(|&j| s[(i, j)] > t[j]).collect();
            assert_eq!(sets.set(i), &want[..]);
        }
        // Equal thresholds agree with the Hamming loss at that threshold.
        let y = threshold_sets(s.as_ref(), &[0.1; 3]).unwrap();
        assert_eq!(hamming_loss_at(s.as_ref(), &y, 0.1).unwrap(), 0.0);
        assert!(threshold_sets(s.as_ref(), &[0.0; 2]).is_err());
        let top = top_labels(s.as_ref(), 2);
        for (i, row) in top.iter().enumerate() {
            assert_eq!(row.len(), 2);
            // No label outside the top scores higher than the second (ties: lower label first).
            let worst = s[(i, row[1])];
            assert!(s[(i, row[0])] >= worst);
            for j in (0..3).filter(|j| !row.contains(j)) {
                assert!(s[(i, j)] < worst || (s[(i, j)] == worst && j > row[1]));
            }
        }
        assert_eq!(top_labels(s.as_ref(), 9)[0].len(), 3);
    }
}
