//! Shared fixtures of the okr-decode tests.

use faer::Mat;
use okr_kernels::DenseRows;

/// `n x d` rows with values on the grid `{0, 1/levels, .., (levels-1)/levels}`
/// from a seeded xorshift generator; few levels give repeated rows (ties).
pub fn rows(n: usize, d: usize, seed: u64, levels: u64) -> DenseRows {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    DenseRows::new(Mat::from_fn(n, d, |_, _| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % levels) as f64 / levels as f64
    }))
    .unwrap()
}
