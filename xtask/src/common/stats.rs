//! Summary statistics of repeated runs.

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
}
