//! Ranking metrics: the trace-norm paper's normalized weighted pairwise loss
//! (Eq. 18 normalized to [0, 1]) and Kendall's tau.
// Index loops mirror the matrix formulas (pairs a < b, entries (i, j)).
#![allow(clippy::needless_range_loop)]

/// The normalized pairwise ranking loss of one query (Luise et al. 2019, Eq. 18
/// normalized): over the evaluated `pairs` $(a, b)$,
/// $$\frac{\sum_{\text{discordant}} |y_a - y_b|}{\sum |y_a - y_b|},$$
/// a pair being discordant when the predicted scores order it against the
/// true ratings. Larger predicted score = more relevant; predictions must be a
/// strict order (ties in `pred` count as discordant, a decoder never emits
/// them). Pairs with tied true ratings weigh 0. `None` when the denominator
/// is 0 (the query is skipped, as in the authors' code). 0 = perfect, 1 =
/// reversed, 0.5 expected for a random order.
///
/// # Example
/// ```
/// use okr_eval::ranking_metrics::pairwise_ranking_loss;
/// let y = [1.0, 3.0, 2.0];
/// let pairs = [(0, 1), (0, 2), (1, 2)];
/// assert_eq!(pairwise_ranking_loss(&y, &[0.0, 2.0, 1.0], &pairs), Some(0.0));
/// assert_eq!(pairwise_ranking_loss(&y, &[2.0, 0.0, 1.0], &pairs), Some(1.0));
/// assert_eq!(pairwise_ranking_loss(&[1.0, 1.0], &[0.0, 1.0], &[(0, 1)]), None);
/// ```
pub fn pairwise_ranking_loss(truth: &[f64], pred: &[f64], pairs: &[(usize, usize)]) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    for &(a, b) in pairs {
        let w = (truth[a] - truth[b]).abs();
        if w == 0.0 {
            continue;
        }
        den += w;
        let agree = (truth[b] - truth[a]) * (pred[b] - pred[a]) > 0.0;
        if !agree {
            num += w;
        }
    }
    if den > 0.0 { Some(num / den) } else { None }
}

/// [`pairwise_ranking_loss`] over all pairs of the items.
///
/// # Example
/// ```
/// use okr_eval::ranking_metrics::pairwise_ranking_loss_all;
/// assert_eq!(pairwise_ranking_loss_all(&[1.0, 2.0, 4.0], &[1.0, 0.0, 2.0]), Some(1.0 / 6.0));
/// ```
pub fn pairwise_ranking_loss_all(truth: &[f64], pred: &[f64]) -> Option<f64> {
    let m = truth.len();
    let pairs: Vec<(usize, usize)> = (0..m).flat_map(|a| (a + 1..m).map(move |b| (a, b))).collect();
    pairwise_ranking_loss(truth, pred, &pairs)
}

/// Kendall's tau between two rankings of the same labels (`ranks[j]` = rank
/// of label `j`): $(C - D)/\binom k2$ over all pairs (tau-a; permutations
/// have no ties). 1 = identical, -1 = reversed. `NaN` for fewer than 2 labels.
///
/// # Panics
/// If the lengths differ.
///
/// # Example
/// ```
/// use okr_eval::ranking_metrics::kendall_tau;
/// assert_eq!(kendall_tau(&[1, 2, 3], &[1, 2, 3]), 1.0);
/// assert_eq!(kendall_tau(&[1, 2, 3], &[3, 2, 1]), -1.0);
/// assert!((kendall_tau(&[1, 2, 3], &[2, 1, 3]) - 1.0 / 3.0).abs() < 1e-15);
/// ```
#[track_caller]
pub fn kendall_tau(a: &[usize], b: &[usize]) -> f64 {
    assert_eq!(a.len(), b.len(), "rankings of different lengths");
    let k = a.len();
    let mut s = 0i64;
    for i in 0..k {
        for j in i + 1..k {
            let x = (a[i] as i64 - a[j] as i64).signum();
            let y = (b[i] as i64 - b[j] as i64).signum();
            s += x * y;
        }
    }
    s as f64 / (k * k.saturating_sub(1) / 2) as f64
}
