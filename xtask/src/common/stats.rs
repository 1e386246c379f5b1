//! Summary statistics of repeated runs, and correlations.

/// Arithmetic mean (NaN for an empty slice).
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Mean and sample standard deviation `sqrt(sum (x - m)^2 / (n - 1))` (0 for
/// fewer than two values).
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, var.sqrt())
}

/// The upper median (element `n / 2` of the sorted values).
///
/// # Panics
/// On an empty vector.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Population standard deviation $\sqrt{\sum_i (x_i - m)^2 / n}$ (divided
/// by $n$, not $n - 1$ as in [`mean_std`]); NaN for an empty slice.
pub fn population_std(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len().max(1) as f64).sqrt()
}

/// Pearson correlation $\frac{\sum (a_i - \bar a)(b_i - \bar b)}
/// {\sqrt{\sum (a_i - \bar a)^2 \sum (b_i - \bar b)^2}}$ of two slices of
/// the same length; 0 when either is constant.
pub fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let (ma, mb) = (mean(a), mean(b));
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let (va, vb): (f64, f64) = (a.iter().map(|x| (x - ma).powi(2)).sum(), b.iter().map(|y| (y - mb).powi(2)).sum());
    if va > 0.0 && vb > 0.0 { cov / (va * vb).sqrt() } else { 0.0 }
}

/// Ranks 1..=n in increasing order (by `total_cmp`); tied values share the
/// average of the ranks they span (`[5, 1, 5]` -> `[2.5, 1, 2.5]`).
pub fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut start = 0;
    while start < idx.len() {
        let mut end = start + 1;
        while end < idx.len() && v[idx[end]].total_cmp(&v[idx[start]]).is_eq() {
            end += 1;
        }
        // Positions start..end hold ranks start + 1..=end: their mean.
        let avg = (start + 1 + end) as f64 / 2.0;
        idx[start..end].iter().for_each(|&i| r[i] = avg);
        start = end;
    }
    r
}

/// Spearman rank correlation: [`pearson`] of the [`ranks`] (ties averaged).
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    pearson(&ranks(a), &ranks(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn against_hand_computed_values() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
        // Deviations -2, -1, 3: squares 14, over n - 1 = 2.
        assert_eq!(mean_std(&[1.0, 2.0, 6.0]), (3.0, 7f64.sqrt()));
        assert_eq!(mean_std(&[4.0]), (4.0, 0.0));
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 3.0);
    }

    #[test]
    fn correlations_against_hand_computed_values() {
        // Deviations -2, -1, 3: squares 14, over n = 3.
        assert_eq!(population_std(&[1.0, 2.0, 6.0]), (14.0f64 / 3.0).sqrt());
        assert_eq!(population_std(&[4.0]), 0.0);
        assert_eq!(pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]), 1.0);
        assert_eq!(pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), -1.0);
        assert_eq!(pearson(&[1.0, 2.0, 3.0], &[5.0, 5.0, 5.0]), 0.0);
        // a - 2 = (-1, 0, 1), b - 2 = (-1, 1, 0): cov 1 over sqrt(2 * 2).
        assert_eq!(pearson(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0]), 0.5);
        assert_eq!(ranks(&[0.3, -1.0, 7.0]), vec![2.0, 1.0, 3.0]);
        assert_eq!(ranks(&[5.0, 1.0, 5.0]), vec![2.5, 1.0, 2.5]);
        assert_eq!(ranks(&[2.0, 2.0, 2.0, 1.0]), vec![3.0, 3.0, 3.0, 1.0]);
        assert!(ranks(&[]).is_empty());
        // Monotone but not linear: Spearman 1, Pearson below 1.
        let (a, b) = ([1.0, 2.0, 3.0, 4.0], [1.0, 8.0, 27.0, 64.0]);
        assert_eq!(spearman(&a, &b), 1.0);
        assert!(pearson(&a, &b) < 1.0);
        // Ranks (1, 2.5, 2.5) vs (1, 2, 3): deviations (-1, .5, .5), (-1, 0, 1);
        // cov 1.5 over sqrt(1.5 * 2).
        assert_eq!(spearman(&[1.0, 2.0, 2.0], &[1.0, 2.0, 3.0]), 1.5 / 3f64.sqrt());
    }
}
