//! More multi-label metrics: subset accuracy, example-based Jaccard, label
//! ranking average precision, and per-label precision / recall / F1 / support.
//!
//! Each one states the scikit-learn function it equals, with the
//! `zero_division` convention okr uses everywhere: a ratio whose denominator is
//! 0 counts as 0 (as [`f1_samples`](crate::f1_samples) does), except where
//! scikit-learn's definition fixes another value (LRAP of a sample whose labels
//! are all relevant or all irrelevant is 1).

use faer::MatRef;
use okr_kernels::{LabelSets, Rows};

use crate::Result;
use crate::metrics::{check_scores, check_sets, intersection};

/// Subset accuracy (exact match): the fraction of samples whose predicted set
/// equals the true set, $\frac1n\sum_i \mathbb 1[\hat y_i = y_i]$.
///
/// Equals scikit-learn's `accuracy_score(Y, Y_hat)` on indicator matrices.
///
/// # Errors
/// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if the collections differ in rows or labels,
/// [`Error::Empty`](crate::Error::Empty) if there are no samples.
///
/// # Example
/// ```
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(3, vec![vec![0, 1], vec![2], vec![]])?;
/// let p = LabelSets::new(3, vec![vec![0, 1], vec![1], vec![]])?;
/// assert_eq!(okr_eval::subset_accuracy(&y, &p)?, 2.0 / 3.0);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn subset_accuracy(truth: &LabelSets, pred: &LabelSets) -> Result<f64> {
    check_sets(truth, pred)?;
    let hits = truth.iter().zip(pred.iter()).filter(|(y, p)| y == p).count();
    Ok(hits as f64 / truth.n_rows() as f64)
}

/// Example-based Jaccard index:
/// $\frac1n\sum_i \frac{|y_i \cap \hat y_i|}{|y_i \cup \hat y_i|}$, a term being 0
/// when both sets are empty.
///
/// Equals scikit-learn's `jaccard_score(Y, Y_hat, average="samples", zero_division=0)`.
///
/// # Errors
/// As [`subset_accuracy`].
///
/// # Example
/// ```
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(4, vec![vec![0, 1], vec![2], vec![]])?;
/// let p = LabelSets::new(4, vec![vec![1, 3], vec![2], vec![]])?;
/// // 1/3, 1, 0 (both empty)
/// assert!((okr_eval::jaccard_samples(&y, &p)? - (1.0 / 3.0 + 1.0) / 3.0).abs() < 1e-15);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn jaccard_samples(truth: &LabelSets, pred: &LabelSets) -> Result<f64> {
    check_sets(truth, pred)?;
    let sum: f64 = truth
        .iter()
        .zip(pred.iter())
        .map(|(y, p)| {
            let inter = intersection(y, p);
            let union = y.len() + p.len() - inter;
            if union == 0 { 0.0 } else { inter as f64 / union as f64 }
        })
        .sum();
    Ok(sum / truth.n_rows() as f64)
}

/// Label ranking average precision of `scores` `(n_samples, n_labels)`: for a
/// sample with relevant labels $P$,
/// $$\frac{1}{|P|}\sum_{j \in P} \frac{|\{k \in P : s_k \ge s_j\}|}{|\{k : s_k \ge s_j\}|},$$
/// averaged over samples; a sample whose labels are all relevant or all
/// irrelevant scores 1. Ties count against the label (`>=`).
///
/// Equals scikit-learn's `label_ranking_average_precision_score(Y, S)`.
///
/// # Errors
/// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if `scores` is not `(n_samples, n_labels)`,
/// [`Error::NonFinite`](crate::Error::NonFinite) for a NaN/inf score, [`Error::Empty`](crate::Error::Empty) if there are no samples.
///
/// # Example
/// ```
/// use faer::mat;
/// use okr_kernels::LabelSets;
/// let scores = mat![[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]];
/// let y = LabelSets::new(3, vec![vec![0], vec![1, 2]])?;
/// // row 0: label 0 ranks 2nd: 1/2; row 1: label 1 ranks 2nd (1 relevant of 2),
/// // label 2 ranks 3rd (2 of 3): (1/2 + 2/3) / 2
/// let expected = (0.5 + (0.5 + 2.0 / 3.0) / 2.0) / 2.0;
/// assert!((okr_eval::label_ranking_average_precision(scores.as_ref(), &y)? - expected).abs() < 1e-15);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn label_ranking_average_precision(scores: MatRef<'_, f64>, truth: &LabelSets) -> Result<f64> {
    check_scores(scores, truth)?;
    let l = truth.n_labels();
    let mut relevant_scores: Vec<f64> = Vec::new();
    let mut all_scores: Vec<f64> = Vec::with_capacity(l);
    let mut sum = 0.0;
    for (i, y) in truth.iter().enumerate() {
        if y.is_empty() || y.len() == l {
            sum += 1.0;
            continue;
        }
        // Sorted descending, the counts of scores >= s are partition points.
        all_scores.clear();
        all_scores.extend((0..l).map(|j| scores[(i, j)]));
        all_scores.sort_unstable_by(|a, b| b.total_cmp(a));
        relevant_scores.clear();
        relevant_scores.extend(y.iter().map(|&j| scores[(i, j)]));
        relevant_scores.sort_unstable_by(|a, b| b.total_cmp(a));
        let at_least = |sorted: &[f64], s: f64| sorted.partition_point(|&v| v >= s);
        let ap: f64 = relevant_scores
            .iter()
            .map(|&s| at_least(&relevant_scores, s) as f64 / at_least(&all_scores, s) as f64)
            .sum();
        sum += ap / y.len() as f64;
    }
    Ok(sum / truth.n_rows() as f64)
}

/// Precision, recall, F1 and support of one label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelScores {
    /// $TP / (TP + FP)$, 0 when the label is never predicted.
    pub precision: f64,
    /// $TP / (TP + FN)$, 0 when the label never occurs.
    pub recall: f64,
    /// $2\,TP / (2\,TP + FP + FN)$, 0 when the label is neither true nor predicted.
    pub f1: f64,
    /// Number of samples that have the label, $TP + FN$.
    pub support: usize,
}

/// Precision, recall, F1 and support of every label, in label order.
///
/// Equals scikit-learn's
/// `precision_recall_fscore_support(Y, Y_hat, average=None, zero_division=0)`;
/// the mean of the `f1` fields is [`f1_macro`](crate::f1_macro).
///
/// # Errors
/// As [`subset_accuracy`].
///
/// # Example
/// ```
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(3, vec![vec![0, 1], vec![0]])?;
/// let p = LabelSets::new(3, vec![vec![0], vec![0, 2]])?;
/// let s = okr_eval::per_label_scores(&y, &p)?;
/// assert_eq!((s[0].precision, s[0].recall, s[0].f1, s[0].support), (1.0, 1.0, 1.0, 2));
/// assert_eq!((s[1].precision, s[1].recall, s[1].support), (0.0, 0.0, 1));
/// assert_eq!((s[2].precision, s[2].f1, s[2].support), (0.0, 0.0, 0));
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn per_label_scores(truth: &LabelSets, pred: &LabelSets) -> Result<Vec<LabelScores>> {
    check_sets(truth, pred)?;
    let l = truth.n_labels();
    let (mut tp, mut n_true, mut n_pred) = (vec![0usize; l], vec![0usize; l], vec![0usize; l]);
    for (y, p) in truth.iter().zip(pred.iter()) {
        y.iter().for_each(|&j| n_true[j] += 1);
        p.iter().for_each(|&j| n_pred[j] += 1);
        let (mut a, mut b) = (0, 0);
        while a < y.len() && b < p.len() {
            match y[a].cmp(&p[b]) {
                std::cmp::Ordering::Less => a += 1,
                std::cmp::Ordering::Greater => b += 1,
                std::cmp::Ordering::Equal => {
                    tp[y[a]] += 1;
                    a += 1;
                    b += 1;
                }
            }
        }
    }
    let ratio = |num: usize, den: usize| if den == 0 { 0.0 } else { num as f64 / den as f64 };
    Ok((0..l)
        .map(|j| LabelScores {
            precision: ratio(tp[j], n_pred[j]),
            recall: ratio(tp[j], n_true[j]),
            f1: ratio(2 * tp[j], n_true[j] + n_pred[j]),
            support: n_true[j],
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use faer::Mat;
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng};

    /// Indicator rows of label sets (the brute-force side works on 0/1 matrices).
    fn dense(sets: &LabelSets) -> Vec<Vec<bool>> {
        sets.iter().map(|s| (0..sets.n_labels()).map(|j| s.contains(&j)).collect()).collect()
    }

    fn random_sets(rng: &mut rand_chacha::ChaCha8Rng, n: usize, l: usize) -> LabelSets {
        let sets = (0..n).map(|_| (0..l).filter(|_| rng.random_bool(0.35)).collect()).collect();
        LabelSets::new(l, sets).unwrap()
    }

    /// Subset accuracy, Jaccard, LRAP, and (precision, recall, F1, support) per label.
    type Brute = (f64, f64, f64, Vec<(f64, f64, f64, usize)>);

    /// scikit-learn's definitions, computed on indicator matrices label by label.
    fn brute(y: &LabelSets, p: &LabelSets, s: &Mat<f64>) -> Brute {
        let (yd, pd) = (dense(y), dense(p));
        let (n, l) = (yd.len(), y.n_labels());
        let exact = (0..n).filter(|&i| yd[i] == pd[i]).count() as f64 / n as f64;
        let mut jac = 0.0;
        let mut lrap = 0.0;
        for i in 0..n {
            let inter = (0..l).filter(|&j| yd[i][j] && pd[i][j]).count();
            let union = (0..l).filter(|&j| yd[i][j] || pd[i][j]).count();
            jac += if union == 0 { 0.0 } else { inter as f64 / union as f64 };
            let rel: Vec<usize> = (0..l).filter(|&j| yd[i][j]).collect();
            if rel.is_empty() || rel.len() == l {
                lrap += 1.0;
                continue;
            }
            let mut ap = 0.0;
            for &j in &rel {
                let rank = (0..l).filter(|&k| s[(i, k)] >= s[(i, j)]).count();
                let hits = rel.iter().filter(|&&k| s[(i, k)] >= s[(i, j)]).count();
                ap += hits as f64 / rank as f64;
            }
            lrap += ap / rel.len() as f64;
        }
        let per = (0..l)
            .map(|j| {
                let tp = (0..n).filter(|&i| yd[i][j] && pd[i][j]).count() as f64;
                let fp = (0..n).filter(|&i| !yd[i][j] && pd[i][j]).count() as f64;
                let fn_ = (0..n).filter(|&i| yd[i][j] && !pd[i][j]).count() as f64;
                let div = |a: f64, b: f64| if b == 0.0 { 0.0 } else { a / b };
                (div(tp, tp + fp), div(tp, tp + fn_), div(2.0 * tp, 2.0 * tp + fp + fn_), (tp + fn_) as usize)
            })
            .collect();
        (exact, jac / n as f64, lrap / n as f64, per)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn agree_with_brute_force(seed in 0u64..1000, n in 1usize..12, l in 1usize..7, levels in 1u32..4) {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let (y, p) = (random_sets(&mut rng, n, l), random_sets(&mut rng, n, l));
            // Few distinct score levels, so ties are common.
            let s = Mat::from_fn(n, l, |_, _| f64::from(rng.random_range(0..levels + 1)));
            let (exact, jac, lrap, per) = brute(&y, &p, &s);
            prop_assert_eq!(subset_accuracy(&y, &p).unwrap(), exact);
            prop_assert!((jaccard_samples(&y, &p).unwrap() - jac).abs() < 1e-12);
            prop_assert!((label_ranking_average_precision(s.as_ref(), &y).unwrap() - lrap).abs() < 1e-12);
            let got = per_label_scores(&y, &p).unwrap();
            for (g, b) in got.iter().zip(&per) {
                prop_assert_eq!((g.precision, g.recall, g.f1, g.support), *b);
            }
            let macro_f1 = got.iter().map(|g| g.f1).sum::<f64>() / l as f64;
            prop_assert!((macro_f1 - crate::f1_macro(&y, &p).unwrap()).abs() < 1e-12);
        }
    }

    #[test]
    fn scikit_learn_documentation_examples() {
        // label_ranking_average_precision_score([[1,0,0],[0,0,1]], [[.75,.5,1],[1,.2,.1]]) == 0.416...
        let s = faer::mat![[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]];
        let y = LabelSets::new(3, vec![vec![0], vec![2]]).unwrap();
        assert!((label_ranking_average_precision(s.as_ref(), &y).unwrap() - 5.0 / 12.0).abs() < 1e-15);
        // jaccard_score([[0,1,1],[1,1,0]], [[1,1,1],[1,0,0]], average="samples") == 0.5833...
        let y = LabelSets::new(3, vec![vec![1, 2], vec![0, 1]]).unwrap();
        let p = LabelSets::new(3, vec![vec![0, 1, 2], vec![0]]).unwrap();
        assert!((jaccard_samples(&y, &p).unwrap() - 7.0 / 12.0).abs() < 1e-15);
        // accuracy_score(np.array([[0, 1], [1, 1]]), np.ones((2, 2))) == 0.5
        let y = LabelSets::new(2, vec![vec![1], vec![0, 1]]).unwrap();
        let p = LabelSets::new(2, vec![vec![0, 1], vec![0, 1]]).unwrap();
        assert_eq!(subset_accuracy(&y, &p).unwrap(), 0.5);
    }

    #[test]
    fn shapes_and_values_are_checked() {
        let y = LabelSets::new(2, vec![vec![0]]).unwrap();
        let p = LabelSets::new(3, vec![vec![0]]).unwrap();
        assert!(matches!(subset_accuracy(&y, &p), Err(Error::ShapeMismatch { .. })));
        let empty = LabelSets::new(2, vec![]).unwrap();
        assert!(matches!(jaccard_samples(&empty, &empty), Err(Error::Empty { .. })));
        let nan = faer::mat![[f64::NAN, 0.0]];
        assert!(matches!(label_ranking_average_precision(nan.as_ref(), &y), Err(Error::NonFinite { .. })));
    }
}
