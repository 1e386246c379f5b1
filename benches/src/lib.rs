//! Seeded fixtures shared by okr's criterion benches.

use faer::Mat;
use okr_kernels::{CsrRows, DenseRows, LabelSets};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Dense `(n, d)` rows with entries uniform in `[-1, 1)`.
pub fn dense_rows(n: usize, d: usize, seed: u64) -> DenseRows {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    DenseRows::new(Mat::from_fn(n, d, |_, _| rng.random::<f64>() * 2.0 - 1.0)).expect("finite")
}

/// Sparse binary `(n, d)` rows, each entry present with probability `density`.
pub fn sparse_binary_rows(n: usize, d: usize, density: f64, seed: u64) -> CsrRows {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rows = (0..n).map(|_| (0..d).filter(|_| rng.random::<f64>() < density).map(|j| (j, 1.0)).collect()).collect();
    CsrRows::from_rows(d, rows).expect("valid CSR")
}

/// Label sets over `n_labels` labels, about `mean` labels each, drawn from
/// `n_patterns` prototypes so that sets repeat as in real multi-label data.
pub fn label_sets(n: usize, n_labels: usize, mean: f64, n_patterns: usize, seed: u64) -> LabelSets {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let p = mean / n_labels as f64;
    let patterns: Vec<Vec<usize>> =
        (0..n_patterns).map(|_| (0..n_labels).filter(|_| rng.random::<f64>() < p).collect()).collect();
    let sets = (0..n).map(|_| patterns[rng.random_range(0..n_patterns)].clone()).collect();
    LabelSets::new(n_labels, sets).expect("labels in range")
}
