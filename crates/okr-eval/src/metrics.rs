//! Evaluation metrics over label sets, score matrices, rankings and output
//! kernels, and the JSON result records of the experiments.
//!
//! Label-set metrics take the true sets first, the predicted ones second, and
//! return fractions in `[0, 1]` (result records report `p_at_k` in percent: multiply by 100).
//! When a ratio has a zero denominator the value is 0: scikit-learn's
//! `zero_division=0` convention.

use std::io::Write;
use std::path::Path;

use faer::MatRef;
use okr_kernels::{LabelSets, Rows};
use serde::{Deserialize, Serialize};

use crate::readers::{read_text, write_atomic};
use crate::{Error, Result};

/// Checks that two label-set collections have the same shape and are not empty.
pub(crate) fn check_sets(truth: &LabelSets, pred: &LabelSets) -> Result<()> {
    if pred.n_rows() != truth.n_rows() {
        return Err(Error::ShapeMismatch {
            what: "predicted label sets (one per sample)",
            expected: truth.n_rows(),
            got: pred.n_rows(),
        });
    }
    if pred.n_labels() != truth.n_labels() {
        return Err(Error::ShapeMismatch {
            what: "number of labels of the predictions",
            expected: truth.n_labels(),
            got: pred.n_labels(),
        });
    }
    if truth.n_rows() == 0 {
        return Err(Error::Empty { what: "no samples to evaluate" });
    }
    Ok(())
}

/// `|a ∩ b|` for strictly increasing slices.
pub(crate) fn intersection(a: &[usize], b: &[usize]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Example-based F1:
/// $\frac1n \sum_i \frac{2 |y_i \cap \hat y_i|}{|y_i| + |\hat y_i|}$, a term being 0
/// when both sets are empty.
///
/// Equals scikit-learn's `f1_score(y, y_hat, average="samples", zero_division=0)`.
/// (The reduced-rank paper reports it ×100.)
///
/// # Errors
/// [`Error::ShapeMismatch`] if the collections differ in rows or labels,
/// [`Error::Empty`] if there are no samples.
///
/// # Example
/// ```
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(4, vec![vec![0, 1], vec![2], vec![]])?;
/// let p = LabelSets::new(4, vec![vec![1], vec![3], vec![]])?;
/// let f1 = okr_eval::f1_samples(&y, &p)?;
/// assert!((f1 - (2.0 / 3.0 + 0.0 + 0.0) / 3.0).abs() < 1e-15);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn f1_samples(truth: &LabelSets, pred: &LabelSets) -> Result<f64> {
    check_sets(truth, pred)?;
    let total: f64 = truth
        .iter()
        .zip(pred.iter())
        .map(|(y, p)| {
            let denom = y.len() + p.len();
            if denom == 0 { 0.0 } else { 2.0 * intersection(y, p) as f64 / denom as f64 }
        })
        .sum();
    Ok(total / truth.n_rows() as f64)
}

/// Micro-averaged F1: $\frac{2\,TP}{2\,TP + FP + FN}$ with the counts summed over
/// all samples and labels; 0 when there are no true and no predicted labels at all.
///
/// Equals scikit-learn's `f1_score(y, y_hat, average="micro", zero_division=0)`.
///
/// # Errors
/// As [`f1_samples`].
///
/// # Example
/// ```
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(3, vec![vec![0, 1], vec![2]])?;
/// let p = LabelSets::new(3, vec![vec![0], vec![1, 2]])?;
/// // TP = 2, FP = 1, FN = 1
/// assert_eq!(okr_eval::f1_micro(&y, &p)?, 4.0 / 6.0);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn f1_micro(truth: &LabelSets, pred: &LabelSets) -> Result<f64> {
    check_sets(truth, pred)?;
    let (mut tp, mut n_true, mut n_pred) = (0usize, 0usize, 0usize);
    for (y, p) in truth.iter().zip(pred.iter()) {
        tp += intersection(y, p);
        n_true += y.len();
        n_pred += p.len();
    }
    // 2TP + FP + FN = |Y| + |Yhat|
    let denom = n_true + n_pred;
    Ok(if denom == 0 { 0.0 } else { 2.0 * tp as f64 / denom as f64 })
}

/// Macro-averaged F1: the mean over **all** `L` labels of
/// $\frac{2\,TP_l}{2\,TP_l + FP_l + FN_l}$, a label that is neither true nor predicted
/// anywhere counting as 0.
///
/// Equals scikit-learn's `f1_score(y, y_hat, average="macro", zero_division=0)`
/// (labels absent from both still count in the mean, as with the indicator-matrix input).
///
/// # Errors
/// As [`f1_samples`], and [`Error::Empty`] if there are no labels.
///
/// # Example
/// ```
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(3, vec![vec![0], vec![0, 1]])?;
/// let p = LabelSets::new(3, vec![vec![0], vec![]])?;
/// // label 0: 2*1/(2*1+0+1) = 2/3; label 1: 0; label 2: 0 (zero_division)
/// assert!((okr_eval::f1_macro(&y, &p)? - 2.0 / 9.0).abs() < 1e-15);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn f1_macro(truth: &LabelSets, pred: &LabelSets) -> Result<f64> {
    check_sets(truth, pred)?;
    let l = truth.n_labels();
    if l == 0 {
        return Err(Error::Empty { what: "no labels to average F1 over" });
    }
    let mut tp = vec![0usize; l];
    let mut n_true = vec![0usize; l];
    let mut n_pred = vec![0usize; l];
    for (y, p) in truth.iter().zip(pred.iter()) {
        for &j in y {
            n_true[j] += 1;
        }
        for &j in p {
            n_pred[j] += 1;
            if y.binary_search(&j).is_ok() {
                tp[j] += 1;
            }
        }
    }
    let sum: f64 = (0..l)
        .map(|j| {
            let denom = n_true[j] + n_pred[j];
            if denom == 0 { 0.0 } else { 2.0 * tp[j] as f64 / denom as f64 }
        })
        .sum();
    Ok(sum / l as f64)
}

/// Hamming loss: the fraction of wrong label entries,
/// $\frac{1}{nL} \sum_i |y_i \,\triangle\, \hat y_i|$.
///
/// Equals scikit-learn's `hamming_loss` on indicator matrices.
///
/// # Errors
/// As [`f1_samples`], and [`Error::Empty`] if there are no labels.
///
/// # Example
/// ```
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(4, vec![vec![0, 1], vec![]])?;
/// let p = LabelSets::new(4, vec![vec![1, 2], vec![]])?;
/// assert_eq!(okr_eval::hamming_loss(&y, &p)?, 2.0 / 8.0);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn hamming_loss(truth: &LabelSets, pred: &LabelSets) -> Result<f64> {
    check_sets(truth, pred)?;
    if truth.n_labels() == 0 {
        return Err(Error::Empty { what: "no labels for the Hamming loss" });
    }
    let wrong: usize = truth.iter().zip(pred.iter()).map(|(y, p)| y.len() + p.len() - 2 * intersection(y, p)).sum();
    Ok(wrong as f64 / (truth.n_rows() * truth.n_labels()) as f64)
}

/// Checks a score matrix against the true sets; rejects NaN/inf.
pub(crate) fn check_scores(scores: MatRef<'_, f64>, truth: &LabelSets) -> Result<()> {
    if scores.nrows() != truth.n_rows() {
        return Err(Error::ShapeMismatch {
            what: "score rows (one per sample)",
            expected: truth.n_rows(),
            got: scores.nrows(),
        });
    }
    if scores.ncols() != truth.n_labels() {
        return Err(Error::ShapeMismatch {
            what: "score columns (one per label)",
            expected: truth.n_labels(),
            got: scores.ncols(),
        });
    }
    if truth.n_rows() == 0 {
        return Err(Error::Empty { what: "no samples to evaluate" });
    }
    for i in 0..scores.nrows() {
        if (0..scores.ncols()).any(|j| !scores[(i, j)].is_finite()) {
            return Err(Error::NonFinite { what: "label scores", row: i });
        }
    }
    Ok(())
}

/// Precision at `k`: $\frac1n \sum_i \frac{|\mathrm{top}_k(s_i) \cap y_i|}{k}$, where
/// $\mathrm{top}_k(s_i)$ are the `k` labels with the highest scores in row `i` of
/// `scores` `(n_samples, n_labels)`. Ties at the boundary go to the **lowest label
/// index**. No normalization by $\min(k, |y_i|)$ (the LEML tables' definition;
/// records report it in percent as `p_at_k`).
///
/// # Errors
/// [`Error::ShapeMismatch`] if `scores` is not `(truth.n_rows(), truth.n_labels())`,
/// [`Error::InvalidArgument`] unless `1 <= k <= n_labels`, [`Error::NonFinite`] for a
/// NaN/inf score, [`Error::Empty`] if there are no samples.
///
/// # Example
/// ```
/// use faer::mat;
/// use okr_kernels::LabelSets;
/// let scores = mat![[0.9, 0.5, 0.5, 0.1], [0.0, 0.0, 0.0, 0.0]];
/// let y = LabelSets::new(4, vec![vec![0, 2], vec![1]])?;
/// // row 0: top-2 = {0, 1} (tie 1 vs 2 -> 1), one hit; row 1: top-2 = {0, 1}, one hit
/// assert_eq!(okr_eval::precision_at_k(scores.as_ref(), &y, 2)?, 0.5);
/// assert_eq!(okr_eval::precision_at_k(scores.as_ref(), &y, 1)?, 0.5);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn precision_at_k(scores: MatRef<'_, f64>, truth: &LabelSets, k: usize) -> Result<f64> {
    check_scores(scores, truth)?;
    let l = truth.n_labels();
    if k == 0 || k > l {
        return Err(Error::invalid("k", k, format!("1 <= k <= n_labels = {l}")));
    }
    let mut order: Vec<usize> = Vec::with_capacity(l);
    let mut hits = 0usize;
    for (i, y) in truth.iter().enumerate() {
        let row = |j: usize| scores[(i, j)];
        order.clear();
        order.extend(0..l);
        let cmp = |a: &usize, b: &usize| row(*b).total_cmp(&row(*a)).then(a.cmp(b));
        if k < l {
            order.select_nth_unstable_by(k - 1, cmp);
        }
        hits += order[..k].iter().filter(|j| y.binary_search(j).is_ok()).count();
    }
    Ok(hits as f64 / (k * truth.n_rows()) as f64)
}

/// Per-instance ranking AUC averaged over samples (the LEML "average AUC"): for a
/// sample with positives $P$ and negatives $N$,
/// $\frac{1}{|P||N|} \sum_{p \in P, q \in N} \big(\mathbb{1}(s_p > s_q) + \tfrac12 \mathbb{1}(s_p = s_q)\big)$.
/// Samples with no positive or no negative label have no AUC and are **left out
/// of the mean** (scikit-learn's `roc_auc_score` would raise on them).
///
/// # Errors
/// As [`precision_at_k`] for the scores; [`Error::Empty`] if no sample has both a
/// positive and a negative label.
///
/// # Example
/// ```
/// use faer::mat;
/// use okr_kernels::LabelSets;
/// let scores = mat![[0.9, 0.2, 0.5], [0.3, 0.3, 0.1], [1.0, 2.0, 3.0]];
/// let y = LabelSets::new(3, vec![vec![0], vec![1], vec![]])?;
/// // row 0: 1.0; row 1: (0.5 + 1) / 2 = 0.75; row 2 has no positive: left out
/// assert_eq!(okr_eval::instance_auc(scores.as_ref(), &y)?, 0.875);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn instance_auc(scores: MatRef<'_, f64>, truth: &LabelSets) -> Result<f64> {
    check_scores(scores, truth)?;
    let l = truth.n_labels();
    let mut order: Vec<usize> = Vec::with_capacity(l);
    let (mut sum, mut count) = (0.0, 0usize);
    for (i, y) in truth.iter().enumerate() {
        let (n_pos, n_neg) = (y.len(), l - y.len());
        if n_pos == 0 || n_neg == 0 {
            continue;
        }
        order.clear();
        order.extend(0..l);
        order.sort_unstable_by(|a, b| scores[(i, *a)].total_cmp(&scores[(i, *b)]));
        // Mann-Whitney: sum of the (1-based, tie-averaged) ranks of the positives.
        let mut rank_sum = 0.0;
        let mut start = 0;
        while start < l {
            let v = scores[(i, order[start])];
            let mut end = start + 1;
            while end < l && scores[(i, order[end])] == v {
                end += 1;
            }
            let mid_rank = (start + 1 + end) as f64 / 2.0;
            let pos_in_tie = order[start..end].iter().filter(|j| y.binary_search(j).is_ok()).count();
            rank_sum += mid_rank * pos_in_tie as f64;
            start = end;
        }
        let u = rank_sum - (n_pos * (n_pos + 1)) as f64 / 2.0;
        sum += u / (n_pos * n_neg) as f64;
        count += 1;
    }
    if count == 0 {
        return Err(Error::Empty { what: "no sample has both a positive and a negative label (AUC undefined)" });
    }
    Ok(sum / count as f64)
}

/// Top-`k` accuracy: the fraction of samples whose true candidate index
/// `truth[i]` is among the first `k` entries of `ranked[i]` (candidates best first,
/// e.g. from a top-k decoder). Lists shorter than `k` are used as they are.
///
/// # Errors
/// [`Error::ShapeMismatch`] if `ranked` and `truth` differ in length,
/// [`Error::InvalidArgument`] if `k == 0`, [`Error::Empty`] if there are no samples.
///
/// # Example
/// ```
/// let ranked = vec![vec![4, 2, 9], vec![1, 0, 3], vec![7, 8, 5]];
/// let truth = [2, 1, 6];
/// assert_eq!(okr_eval::top_k_accuracy(&ranked, &truth, 1)?, 1.0 / 3.0);
/// assert_eq!(okr_eval::top_k_accuracy(&ranked, &truth, 2)?, 2.0 / 3.0);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn top_k_accuracy<R: AsRef<[usize]>>(ranked: &[R], truth: &[usize], k: usize) -> Result<f64> {
    if ranked.len() != truth.len() {
        return Err(Error::ShapeMismatch {
            what: "rankings (one per sample)",
            expected: truth.len(),
            got: ranked.len(),
        });
    }
    if k == 0 {
        return Err(Error::invalid("k", k, "k >= 1"));
    }
    if truth.is_empty() {
        return Err(Error::Empty { what: "no samples to evaluate" });
    }
    let hits = ranked.iter().zip(truth).filter(|(r, t)| r.as_ref().iter().take(k).any(|c| c == *t)).count();
    Ok(hits as f64 / truth.len() as f64)
}

/// Squared distance in the output RKHS,
/// $\|\psi(\hat y) - \psi(y)\|^2 = k(\hat y, \hat y) + k(y, y) - 2 k(\hat y, y)$,
/// clamped at 0 to absorb rounding.
///
/// # Example
/// ```
/// // linear kernel on [1, 2] and [0, 2]: 5 + 4 - 2 * 4 = 1
/// assert_eq!(okr_eval::rkhs_squared_error(5.0, 4.0, 4.0), 1.0);
/// assert_eq!(okr_eval::rkhs_squared_error(1.0, 1.0, 1.0 + 1e-17), 0.0);
/// ```
pub fn rkhs_squared_error(k_pred_pred: f64, k_true_true: f64, k_pred_true: f64) -> f64 {
    (k_pred_pred + k_true_true - 2.0 * k_pred_true).max(0.0)
}

/// RBF loss $2 - 2 k(\hat y, y)$ for a normalized output kernel ($k(y, y) = 1$):
/// the [`rkhs_squared_error`] with both diagonal terms equal to 1.
///
/// # Example
/// ```
/// assert_eq!(okr_eval::rbf_loss(1.0), 0.0);
/// assert_eq!(okr_eval::rbf_loss(0.25), 1.5);
/// ```
pub fn rbf_loss(k_pred_true: f64) -> f64 {
    2.0 - 2.0 * k_pred_true
}

/// RBF loss for the Gaussian output kernel $k(a, b) = \exp(-\gamma \|a - b\|^2)$:
/// $2 - 2\exp(-\gamma \|\hat y - y\|^2)$ (USPS bottom halves, metabolite fingerprints).
///
/// # Errors
/// [`Error::ShapeMismatch`] if the vectors differ in length;
/// [`Error::InvalidArgument`] unless `gamma > 0` and finite.
///
/// # Example
/// ```
/// let l = okr_eval::gaussian_rbf_loss(&[0.0, 1.0], &[0.0, 0.0], 0.5)?;
/// assert!((l - (2.0 - 2.0 * (-0.5f64).exp())).abs() < 1e-15);
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn gaussian_rbf_loss(pred: &[f64], truth: &[f64], gamma: f64) -> Result<f64> {
    if pred.len() != truth.len() {
        return Err(Error::ShapeMismatch { what: "output vector length", expected: truth.len(), got: pred.len() });
    }
    if !(gamma > 0.0 && gamma.is_finite()) {
        return Err(Error::invalid("gamma", gamma, "a finite gamma > 0"));
    }
    let d2: f64 = pred.iter().zip(truth).map(|(a, b)| (a - b) * (a - b)).sum();
    Ok(rbf_loss((-gamma * d2).exp()))
}

/// Mean of `v` and the standard error of that mean, $s / \sqrt{n}$ with the
/// unbiased sample standard deviation $s$ (`None` below two values; the mean
/// of no value is NaN).
///
/// # Example
/// ```
/// let (m, se) = okr_eval::mean_and_std_err(&[1.0, 2.0, 3.0]);
/// assert_eq!(m, 2.0);
/// assert!((se.unwrap() - (1.0f64 / 3.0).sqrt()).abs() < 1e-15);
/// assert_eq!(okr_eval::mean_and_std_err(&[4.0]), (4.0, None));
/// ```
pub fn mean_and_std_err(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let se = (v.len() > 1).then(|| {
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (var / n).sqrt()
    });
    (mean, se)
}

/// Output-kernel loss of each prediction, $\|\psi(\hat y_i) - \psi(y_i)\|^2 =
/// k(\hat y_i, \hat y_i) + k(y_i, y_i) - 2 k(\hat y_i, y_i)$ ([`rkhs_squared_error`]),
/// row `i` of `pred` against row `i` of `truth`. For a Gaussian output kernel
/// it is the [`rbf_loss`] $2 - 2k(\hat y, y)$.
///
/// # Errors
/// [`Error::ShapeMismatch`] if the containers have different numbers of rows.
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, Linear};
/// let pred = DenseRows::new(faer::mat![[1.0, 2.0]])?;
/// let truth = DenseRows::new(faer::mat![[0.0, 2.0]])?;
/// assert_eq!(okr_eval::output_kernel_losses(&Linear, &pred, &truth)?, vec![1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn output_kernel_losses<Y, K>(kernel: &K, pred: &Y, truth: &Y) -> Result<Vec<f64>>
where
    Y: okr_kernels::Rows,
    K: okr_kernels::Kernel<Y> + ?Sized,
{
    if pred.n_rows() != truth.n_rows() {
        return Err(Error::ShapeMismatch { what: "predicted outputs", expected: truth.n_rows(), got: pred.n_rows() });
    }
    Ok((0..pred.n_rows())
        .map(|i| {
            rkhs_squared_error(
                kernel.eval(pred, i, pred, i),
                kernel.eval(truth, i, truth, i),
                kernel.eval(pred, i, truth, i),
            )
        })
        .collect())
}

/// One measured figure of an experiment, as stored in `docs/results/<name>.json`
/// (design.md, "Result records"). A results file is a JSON array of these.
///
/// Metric names: `f1_samples`, `f1_micro`, `f1_macro`, `hamming` (fractions),
/// `p_at_1`, `p_at_3`, `p_at_5` (percent), `auc`, `rbf_loss`, `mse_h`, `top1`, ...
/// Method names are kebab-case; stand-in data sets are named `<shape>-standin`
/// with `stand_in = true`.
///
/// # Example
/// ```
/// use okr_eval::MetricRecord;
/// let r = MetricRecord::new("rr-usps", "usps", "reduced-rank-iokr", "rbf_loss", 0.736)
///     .with_setting("n", 1000)
///     .with_setting("rank", 64)
///     .with_std(0.011)
///     .with_paper(0.734)
///     .with_seconds(0.41);
/// let json = serde_json::to_string(&r).unwrap();
/// assert_eq!(
///     json,
///     r#"{"experiment":"rr-usps","dataset":"usps","method":"reduced-rank-iokr","setting":{"n":1000,"rank":64},"metric":"rbf_loss","value":0.736,"std":0.011,"paper":0.734,"stand_in":false,"seconds":0.41}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRecord {
    /// Experiment name (`rr-usps`).
    pub experiment: String,
    /// Data set name (`bibtex`, `bookmarks-standin`).
    pub dataset: String,
    /// Method name, kebab-case (`iokr`, `reduced-rank-iokr`).
    pub method: String,
    /// Hyper-parameters and sizes of the run.
    #[serde(default)]
    pub setting: serde_json::Map<String, serde_json::Value>,
    /// Metric name (`f1_samples`, `p_at_1`, ...).
    pub metric: String,
    /// The measured value (mean over repetitions when `std` is given).
    pub value: f64,
    /// Standard deviation over repetitions, if any.
    #[serde(default)]
    pub std: Option<f64>,
    /// The value the paper reports, if any.
    #[serde(default)]
    pub paper: Option<f64>,
    /// Whether the data set is a stand-in generator rather than the real data.
    #[serde(default)]
    pub stand_in: bool,
    /// Wall-clock seconds of the measured step, if timed.
    #[serde(default)]
    pub seconds: Option<f64>,
}

impl MetricRecord {
    /// A record with an empty setting and no std, paper value or time.
    pub fn new(
        experiment: impl Into<String>,
        dataset: impl Into<String>,
        method: impl Into<String>,
        metric: impl Into<String>,
        value: f64,
    ) -> Self {
        Self {
            experiment: experiment.into(),
            dataset: dataset.into(),
            method: method.into(),
            setting: serde_json::Map::new(),
            metric: metric.into(),
            value,
            std: None,
            paper: None,
            stand_in: false,
            seconds: None,
        }
    }

    /// Adds one setting entry.
    pub fn with_setting(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.setting.insert(key.into(), value.into());
        self
    }

    /// Sets the standard deviation.
    pub fn with_std(mut self, std: f64) -> Self {
        self.std = Some(std);
        self
    }

    /// Sets the paper's value.
    pub fn with_paper(mut self, paper: f64) -> Self {
        self.paper = Some(paper);
        self
    }

    /// Marks the data set as a stand-in (or not).
    pub fn with_stand_in(mut self, stand_in: bool) -> Self {
        self.stand_in = stand_in;
        self
    }

    /// Sets the time in seconds.
    pub fn with_seconds(mut self, seconds: f64) -> Self {
        self.seconds = Some(seconds);
        self
    }
}

/// Writes `records` as a JSON array, one record per line, atomically (a
/// temporary file in the same directory, then a rename).
///
/// # Errors
/// [`Error::NonFinite`] (row = record index) if a number is NaN or infinite (JSON
/// has no such numbers); [`Error::Write`].
///
/// # Example
/// ```
/// use okr_eval::{read_records, write_records, MetricRecord};
/// let recs = vec![
///     MetricRecord::new("rr-multilabel", "bibtex", "iokr", "f1_samples", 0.39).with_setting("lambda", 1e-3),
///     MetricRecord::new("rr-multilabel", "bookmarks-standin", "iokr", "f1_samples", 0.21).with_stand_in(true),
/// ];
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("rr-multilabel.json");
/// write_records(&path, &recs)?;
/// assert_eq!(read_records(&path)?, recs);
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn write_records(path: impl AsRef<Path>, records: &[MetricRecord]) -> Result<()> {
    for (row, r) in records.iter().enumerate() {
        let finite = |v: Option<f64>| v.is_none_or(f64::is_finite);
        if !(r.value.is_finite() && finite(r.std) && finite(r.paper) && finite(r.seconds)) {
            return Err(Error::NonFinite { what: "metric records", row });
        }
    }
    let lines: Vec<String> = records
        .iter()
        .map(|r| serde_json::to_string(r).expect("records of strings and finite numbers serialize"))
        .collect();
    write_atomic(path.as_ref(), |w| {
        if lines.is_empty() {
            return writeln!(w, "[]");
        }
        writeln!(w, "[")?;
        for (i, line) in lines.iter().enumerate() {
            let sep = if i + 1 < lines.len() { "," } else { "" };
            writeln!(w, "  {line}{sep}")?;
        }
        writeln!(w, "]")
    })
}

/// Reads a JSON array of records written by [`write_records`] (or by hand).
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] with the line of the JSON error.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("r.json");
/// std::fs::write(&path, r#"[{"experiment":"e","dataset":"d","method":"m","metric":"top1","value":0.5}]"#)?;
/// let recs = okr_eval::read_records(&path)?;
/// assert_eq!((recs[0].value, recs[0].stand_in, recs[0].std), (0.5, false, None));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_records(path: impl AsRef<Path>) -> Result<Vec<MetricRecord>> {
    let path = path.as_ref();
    let text = read_text(path)?;
    serde_json::from_str(&text)
        .map_err(|e| Error::parse(path, e.line().max(1), format!("expected a JSON array of metric records: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn sets(l: usize, s: &[&[usize]]) -> LabelSets {
        LabelSets::new(l, s.iter().map(|x| x.to_vec()).collect()).unwrap()
    }

    #[test]
    fn f1_values_match_sklearn_by_hand() {
        // sklearn: y_true = [[1,1,0],[0,0,1],[0,0,0]], y_pred = [[1,0,0],[0,1,1],[0,0,0]]
        let y = sets(3, &[&[0, 1], &[2], &[]]);
        let p = sets(3, &[&[0], &[1, 2], &[]]);
        // samples: (2/3 + 2/3 + 0) / 3
        assert!((f1_samples(&y, &p).unwrap() - 4.0 / 9.0).abs() < 1e-15);
        // micro: tp 2, |Y| 3, |P| 3 -> 4/6
        assert!((f1_micro(&y, &p).unwrap() - 2.0 / 3.0).abs() < 1e-15);
        // macro: label 0: 1, label 1: 0, label 2: 1 -> 2/3
        assert!((f1_macro(&y, &p).unwrap() - 2.0 / 3.0).abs() < 1e-15);
        assert!((hamming_loss(&y, &p).unwrap() - 2.0 / 9.0).abs() < 1e-15);
        let empty = sets(3, &[&[], &[]]);
        assert_eq!(f1_samples(&empty, &empty).unwrap(), 0.0);
        assert_eq!(f1_micro(&empty, &empty).unwrap(), 0.0);
        assert_eq!(f1_macro(&empty, &empty).unwrap(), 0.0);
        assert_eq!(hamming_loss(&empty, &empty).unwrap(), 0.0);
        assert_eq!(f1_samples(&y, &y).unwrap(), 2.0 / 3.0);
    }

    #[test]
    fn shape_errors() {
        let y = sets(3, &[&[0]]);
        assert!(matches!(f1_samples(&y, &sets(3, &[&[0], &[1]])), Err(Error::ShapeMismatch { .. })));
        assert!(matches!(f1_micro(&y, &sets(4, &[&[0]])), Err(Error::ShapeMismatch { .. })));
        assert!(matches!(f1_macro(&sets(3, &[]), &sets(3, &[])), Err(Error::Empty { .. })));
        assert!(matches!(hamming_loss(&sets(0, &[&[]]), &sets(0, &[&[]])), Err(Error::Empty { .. })));
        let s = Mat::<f64>::zeros(1, 3);
        assert!(matches!(precision_at_k(s.as_ref(), &y, 0), Err(Error::InvalidArgument { .. })));
        assert!(matches!(precision_at_k(s.as_ref(), &y, 4), Err(Error::InvalidArgument { .. })));
        assert!(matches!(precision_at_k(Mat::<f64>::zeros(2, 3).as_ref(), &y, 1), Err(Error::ShapeMismatch { .. })));
        let mut nan = Mat::<f64>::zeros(1, 3);
        nan[(0, 1)] = f64::NAN;
        assert!(matches!(precision_at_k(nan.as_ref(), &y, 1), Err(Error::NonFinite { row: 0, .. })));
        assert!(matches!(instance_auc(Mat::<f64>::zeros(1, 3).as_ref(), &sets(3, &[&[]])), Err(Error::Empty { .. })));
        assert!(top_k_accuracy(&[vec![1]], &[1, 2], 1).is_err());
        assert!(top_k_accuracy(&[vec![1]], &[1], 0).is_err());
        assert!(top_k_accuracy::<Vec<usize>>(&[], &[], 1).is_err());
        assert!(gaussian_rbf_loss(&[1.0], &[1.0, 2.0], 1.0).is_err());
        assert!(gaussian_rbf_loss(&[1.0], &[1.0], 0.0).is_err());
    }

    #[test]
    fn precision_ties_go_to_lowest_index() {
        let s = faer::mat![[1.0, 1.0, 1.0, 1.0]];
        assert_eq!(precision_at_k(s.as_ref(), &sets(4, &[&[0, 1]]), 2).unwrap(), 1.0);
        assert_eq!(precision_at_k(s.as_ref(), &sets(4, &[&[2, 3]]), 2).unwrap(), 0.0);
        assert_eq!(precision_at_k(s.as_ref(), &sets(4, &[&[3]]), 4).unwrap(), 0.25);
    }

    #[test]
    fn auc_brute_force() {
        let s = faer::mat![[0.1, 0.4, 0.4, 0.9, 0.0], [3.0, 1.0, 2.0, 2.0, 2.0]];
        let y = sets(5, &[&[1, 4], &[2, 3]]);
        let mut expect = 0.0;
        for (i, pos) in [(0, vec![1, 4]), (1, vec![2, 3])] {
            let neg: Vec<usize> = (0..5).filter(|j| !pos.contains(j)).collect();
            let mut acc = 0.0;
            for &p in &pos {
                for &q in &neg {
                    acc += if s[(i, p)] > s[(i, q)] {
                        1.0
                    } else if s[(i, p)] == s[(i, q)] {
                        0.5
                    } else {
                        0.0
                    };
                }
            }
            expect += acc / (pos.len() * neg.len()) as f64 / 2.0;
        }
        assert!((instance_auc(s.as_ref(), &y).unwrap() - expect).abs() < 1e-15);
    }

    #[test]
    fn records_round_trip_and_reject_nan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write_records(&path, &[]).unwrap();
        assert!(read_records(&path).unwrap().is_empty());
        let bad = MetricRecord::new("e", "d", "m", "f1_samples", f64::NAN);
        let ok = MetricRecord::new("e", "d", "m", "f1_samples", 0.5);
        assert!(matches!(write_records(&path, &[ok.clone(), bad]), Err(Error::NonFinite { row: 1, .. })));
        write_records(&path, &[ok.clone(), ok.clone().with_seconds(1.5)]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert_eq!(read_records(&path).unwrap().len(), 2);
        std::fs::write(&path, "[\n{\"experiment\": 3}\n]").unwrap();
        let e = read_records(&path).unwrap_err().to_string();
        assert!(e.contains("r.json:2: expected a JSON array of metric records"), "{e}");
    }
}
