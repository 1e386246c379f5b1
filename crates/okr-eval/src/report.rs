//! The metrics of a label-set prediction on a labelled test set as one record
//! ([`LabelSetReport`], what `okr eval` prints), with the same keys in the
//! same units for every estimator.

use faer::MatRef;
use okr_kernels::LabelSets;
use serde::Serialize;

use crate::{
    Dataset, Result, f1_macro, f1_micro, f1_samples, hamming_loss, instance_auc, jaccard_samples,
    label_ranking_average_precision, per_label_scores, precision_at_k, subset_accuracy,
};

/// What an estimator's prediction on a labelled file gives the metrics.
#[derive(Debug, Clone)]
pub struct LabelSetPrediction<'a> {
    /// The test file: its label sets are the truth, its label names name the
    /// per-label rows.
    pub data: &'a Dataset,
    /// Predicted label sets, one per test row.
    pub predicted: LabelSets,
    /// Label scores `(n_test, n_labels)` (decoding models: $h(x)$ read with a
    /// linear output kernel; score models: their own scores); `None` for a
    /// prediction without scores, whose ranking metrics are then `None`.
    pub scores: Option<MatRef<'a, f64>>,
    /// Mean squared RKHS error $\frac1n \sum_i \|h(x_i) - \psi(y_i)\|^2$ (decoding models).
    pub mse_h: Option<f64>,
    /// Number of candidate outputs decoded (decoding models).
    pub n_candidates: Option<usize>,
    /// Threshold of the label scores (score models).
    pub threshold: Option<f64>,
    /// Seconds of prediction (coefficients and decoding, or scores and thresholding).
    pub decode_seconds: f64,
}

/// Precision, recall, F1 (fractions) and support (a count) of one label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelReport {
    /// The label's name, from the test file.
    pub label: Option<String>,
    /// $TP / (TP + FP)$.
    pub precision: f64,
    /// $TP / (TP + FN)$.
    pub recall: f64,
    /// $2\,TP / (2\,TP + FP + FN)$.
    pub f1: f64,
    /// $TP + FN$.
    pub support: usize,
}

/// The metrics of a label-set prediction. Every field is present for every
/// estimator (`None`, serialized as `null`, where it does not apply): the
/// set metrics are fractions in $[0, 1]$, `p_at_k` percent, times seconds.
///
/// The set metrics equal scikit-learn's `f1_score` (average samples, micro,
/// macro), `hamming_loss`, `accuracy_score`, `jaccard_score(average="samples")`
/// and `precision_recall_fscore_support(average=None)`, with `zero_division=0`;
/// `lrap` equals `label_ranking_average_precision_score`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelSetReport {
    /// The estimator's name.
    pub estimator: String,
    /// Number of test rows.
    pub n_test: usize,
    /// Number of labels.
    pub n_labels: usize,
    /// Candidate outputs decoded (`None` for score models).
    pub n_candidates: Option<usize>,
    /// Score threshold (score models; `None` when decoding).
    pub threshold: Option<f64>,
    /// Example-based F1.
    pub f1_samples: f64,
    /// Micro-averaged F1.
    pub f1_micro: f64,
    /// Macro-averaged F1.
    pub f1_macro: f64,
    /// Fraction of wrong label entries.
    pub hamming: f64,
    /// Fraction of exactly right label sets.
    pub subset_accuracy: f64,
    /// Mean $|y \cap \hat y| / |y \cup \hat y|$ (0 when both are empty).
    pub jaccard_samples: f64,
    /// Label ranking average precision (needs scores).
    pub lrap: Option<f64>,
    /// Per-instance ranking AUC (needs scores; `None` when no test row has both
    /// a positive and a negative label).
    pub auc: Option<f64>,
    /// Precision@1 in percent (needs scores and at least 1 label).
    pub p_at_1: Option<f64>,
    /// Precision@3 in percent (needs scores and at least 3 labels).
    pub p_at_3: Option<f64>,
    /// Precision@5 in percent (needs scores and at least 5 labels).
    pub p_at_5: Option<f64>,
    /// Mean $\|h(x) - \psi(y)\|^2$ (decoding models).
    pub mse_h: Option<f64>,
    /// Seconds the fit took.
    pub fit_seconds: f64,
    /// Seconds of prediction.
    pub decode_seconds: f64,
    /// Mean output-kernel loss $\|\psi(\hat y) - \psi(y)\|^2$ of the decoded
    /// outputs, when the caller adds it (fingerprint outputs); left out of
    /// the serialization when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_kernel_loss: Option<f64>,
    /// One row per label in label order, when asked for; left out of the
    /// serialization when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_label: Option<Vec<LabelReport>>,
}

impl LabelSetReport {
    /// The metrics of `p` for `estimator` fitted in `fit_seconds`, with the
    /// per-label rows when `per_label`.
    ///
    /// # Errors
    /// The metrics' shape errors ([`Error::ShapeMismatch`](crate::Error::ShapeMismatch))
    /// when the predicted sets or the scores do not match the test file.
    ///
    /// # Example
    /// ```
    /// use okr_eval::report::{LabelSetPrediction, LabelSetReport};
    /// use okr_eval::{Dataset, Features};
    /// use okr_kernels::{DenseRows, LabelSets};
    /// let y = LabelSets::new(2, vec![vec![0], vec![1]])?;
    /// let data = Dataset::new(Features::Dense(DenseRows::new(faer::Mat::zeros(2, 1))?), y.clone())?;
    /// let p = LabelSetPrediction {
    ///     data: &data, predicted: y, scores: None, mse_h: None,
    ///     n_candidates: Some(2), threshold: None, decode_seconds: 0.0,
    /// };
    /// let r = LabelSetReport::new("iokr", 0.1, &p, false)?;
    /// assert_eq!((r.f1_samples, r.hamming, r.p_at_1), (1.0, 0.0, None));
    /// # Ok::<(), okr_eval::Error>(())
    /// ```
    pub fn new(estimator: &str, fit_seconds: f64, p: &LabelSetPrediction<'_>, per_label: bool) -> Result<Self> {
        let (y, pred) = (&p.data.y, &p.predicted);
        // p@k is undefined for k above the number of labels.
        let p_at = |k: usize| -> Result<Option<f64>> {
            match p.scores {
                Some(s) if k <= y.n_labels() => Ok(Some(100.0 * precision_at_k(s, y, k)?)),
                _ => Ok(None),
            }
        };
        let per_label = per_label
            .then(|| -> Result<Vec<LabelReport>> {
                Ok(per_label_scores(y, pred)?
                    .iter()
                    .enumerate()
                    .map(|(j, s)| LabelReport {
                        label: p.data.label_names.get(j).map(|n| n.into_owned()),
                        precision: s.precision,
                        recall: s.recall,
                        f1: s.f1,
                        support: s.support,
                    })
                    .collect())
            })
            .transpose()?;
        Ok(Self {
            estimator: estimator.to_string(),
            n_test: p.data.n_samples(),
            n_labels: y.n_labels(),
            n_candidates: p.n_candidates,
            threshold: p.threshold,
            f1_samples: f1_samples(y, pred)?,
            f1_micro: f1_micro(y, pred)?,
            f1_macro: f1_macro(y, pred)?,
            hamming: hamming_loss(y, pred)?,
            subset_accuracy: subset_accuracy(y, pred)?,
            jaccard_samples: jaccard_samples(y, pred)?,
            lrap: p.scores.map(|s| label_ranking_average_precision(s, y)).transpose()?,
            auc: p.scores.and_then(|s| instance_auc(s, y).ok()),
            p_at_1: p_at(1)?,
            p_at_3: p_at(3)?,
            p_at_5: p_at(5)?,
            mse_h: p.mse_h,
            fit_seconds,
            decode_seconds: p.decode_seconds,
            output_kernel_loss: None,
            per_label,
        })
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;
    use okr_kernels::{DenseRows, Rows};

    use super::*;
    use crate::Features;
    use crate::dataset::Names;

    fn data(y: &LabelSets) -> Dataset {
        let x = Features::Dense(DenseRows::new(Mat::zeros(y.n_rows(), 1)).unwrap());
        let mut d = Dataset::new(x, y.clone()).unwrap();
        d.label_names = Names::Given(vec!["a".into(), "b".into(), "c".into()]);
        d
    }

    #[test]
    fn counts_by_hand_and_nulls_where_undefined() {
        let y = LabelSets::new(3, vec![vec![0, 1], vec![2], vec![]]).unwrap();
        let pred = LabelSets::new(3, vec![vec![0], vec![2], vec![1]]).unwrap();
        let d = data(&y);
        // Scores ranking every true label first: p@1 = 100 on the rows with labels.
        let scores = Mat::from_fn(3, 3, |i, j| if y.set(i).contains(&j) { 1.0 } else { 0.0 });
        let p = LabelSetPrediction {
            data: &d,
            predicted: pred,
            scores: Some(scores.as_ref()),
            mse_h: Some(0.5),
            n_candidates: Some(4),
            threshold: None,
            decode_seconds: 2.0,
        };
        let r = LabelSetReport::new("iokr", 1.0, &p, true).unwrap();
        // Row F1: 2*1/(2+1) = 2/3, 1, 0 (one side empty); mean 5/9.
        assert!((r.f1_samples - 5.0 / 9.0).abs() < 1e-12, "{}", r.f1_samples);
        // Wrong entries: label 1 of row 0, label 1 of row 2: 2 of 9.
        assert!((r.hamming - 2.0 / 9.0).abs() < 1e-12);
        assert!((r.subset_accuracy - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((r.p_at_5, r.n_test, r.n_labels, r.n_candidates), (None, 3, 3, Some(4)));
        assert!(r.p_at_1.is_some() && r.p_at_3.is_some() && r.lrap.is_some());
        let rows = r.per_label.as_ref().unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[1].label.as_deref(), rows[1].precision, rows[1].recall, rows[1].support),
            (Some("b"), 0.0, 0.0, 1)
        );
        let v = serde_json::to_value(&r).unwrap();
        assert!(v["p_at_5"].is_null() && v["threshold"].is_null() && v.get("output_kernel_loss").is_none());
        // Without scores the ranking metrics are null; without per_label no key.
        let p = LabelSetPrediction { scores: None, ..p };
        let r = LabelSetReport::new("leml", 1.0, &p, false).unwrap();
        assert_eq!((r.lrap, r.auc, r.p_at_1), (None, None, None));
        assert!(serde_json::to_value(&r).unwrap().get("per_label").is_none());
    }

    #[test]
    fn mismatched_prediction_is_an_error() {
        let y = LabelSets::new(3, vec![vec![0], vec![1]]).unwrap();
        let d = data(&y);
        let p = LabelSetPrediction {
            data: &d,
            predicted: LabelSets::new(3, vec![vec![0]]).unwrap(),
            scores: None,
            mse_h: None,
            n_candidates: None,
            threshold: None,
            decode_seconds: 0.0,
        };
        assert!(LabelSetReport::new("x", 0.0, &p, false).is_err());
    }
}
