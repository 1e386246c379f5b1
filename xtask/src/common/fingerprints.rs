//! The seeded binary-fingerprint stand-in shared by `kae-fingerprints` and
//! `retrieval` (the metabolite data of Brouard et al. 2016 is not here).

use anyhow::Result;
use faer::Mat;
use okr_kernels::CsrRows;

use super::rng::Lcg;

/// Dimension of the latent variable behind the fingerprints.
pub const LATENT_RANK: usize = 10;

/// `n` fingerprints of `n_bits` bits and their latent points: bit j of point
/// i is on with probability sigmoid(a_j + z_i . b_j), z_i ~ N(0, I_10),
/// b_j ~ N(0, 1.5^2 I / 10), and a_j = logit of a per-bit base rate drawn
/// log-uniformly in [2e-3, 0.2] (about 100 bits on per point at 4136 bits,
/// as metabolite fingerprints). The bit model (a, b) is the same for every
/// seed; `seed` draws the points. Returns `(z (n x 10), fingerprints)`.
pub fn fingerprint_standin(n: usize, n_bits: usize, seed: u64) -> Result<(Mat<f64>, CsrRows)> {
    let rank = LATENT_RANK;
    let mut r = Lcg(0xf1e9 ^ 0x5151);
    let a: Vec<f64> = (0..n_bits)
        .map(|_| {
            let rate = (2e-3f64.ln() + r.uniform() * (0.2f64.ln() - 2e-3f64.ln())).exp();
            (rate / (1.0 - rate)).ln()
        })
        .collect();
    let b: Vec<f64> = (0..n_bits * rank).map(|_| 1.5 * r.normal() / (rank as f64).sqrt()).collect();
    let mut r = Lcg(seed);
    let mut latent = Mat::zeros(n, rank);
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let z: Vec<f64> = (0..rank).map(|_| r.normal()).collect();
        let mut row = Vec::new();
        for j in 0..n_bits {
            let logit = a[j] + (0..rank).map(|k| z[k] * b[j * rank + k]).sum::<f64>();
            if r.uniform() < 1.0 / (1.0 + (-logit).exp()) {
                row.push((j, 1.0));
            }
        }
        for (k, &zk) in z.iter().enumerate() {
            latent[(i, k)] = zk;
        }
        rows.push(row);
    }
    Ok((latent, CsrRows::from_rows(n_bits, rows)?))
}
