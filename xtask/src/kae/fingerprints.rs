//! `cargo xtask reproduce kae-fingerprints`: a stand-in for the metabolite
//! fingerprint reconstruction of the KAE paper (Sec. 5.2, Table 2; spec 3.3).
//! The real data (Brouard et al. 2016) is not available: seeded binary
//! fingerprints of the same width from a low-rank Bernoulli latent model.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use faer::{Mat, MatRef};
use okr_estimators::ParamGuard;
use okr_estimators::kae::{K2ae, Kae, LastLayer, LayerKernel, Optimizer};
use okr_eval::MetricRecord;
use okr_kernels::{Kernel, Tanimoto};

use super::common::write_experiment;
use crate::common::fingerprints::fingerprint_standin;

/// Fingerprint width of the paper's data.
pub const N_BITS: usize = 4136;
/// Candidate lambda_2 of the KAE decoder.
pub const LAMBDA2_GRID: [f64; 3] = [1e-3, 1e-2, 1e-1];
/// Stand-in sizes (the paper: 5579 / 1395; reduced for time, see the notes).
pub const N_TRAIN: usize = 600;
/// Test size.
pub const N_TEST: usize = 150;
/// Code sizes and published test MSREs (Table 2): (p, AE sigmoid, AE relu, KAE).
pub const TABLE2: [(usize, f64, f64, f64); 5] = [
    (5, 99.81, 96.62, 76.38),
    (10, 87.36, 84.02, 65.76),
    (25, 72.31, 68.77, 51.63),
    (50, 63.00, 58.29, 40.72),
    (100, 55.43, 48.63, 36.27),
];

/// Mean over rows of the squared Euclidean reconstruction error.
fn msre(y: MatRef<'_, f64>, y_hat: MatRef<'_, f64>) -> f64 {
    let mut s = 0.0;
    for j in 0..y.ncols() {
        for i in 0..y.nrows() {
            s += (y[(i, j)] - y_hat[(i, j)]).powi(2);
        }
    }
    s / y.nrows() as f64
}

/// Runs the experiment and writes `kae-fingerprints.{json,md}`.
pub fn run(out_dir: &Path, seed: u64) -> Result<()> {
    let train = fingerprint_standin(N_TRAIN, N_BITS, seed + 1)?.1;
    let test = fingerprint_standin(N_TEST, N_BITS, seed + 2)?.1;
    let (y_tr, y_te) = (train.to_dense(), test.to_dense());
    let bits_on = train.nnz() as f64 / N_TRAIN as f64;
    let k_in = Tanimoto.gram(&train);
    let k_in_te = Tanimoto.gram_block(&test, &train);
    let diag_te = Tanimoto.diag(&test);
    // Centred PCA of the training fingerprints (the KPCA baseline with a linear kernel).
    let mean: Vec<f64> =
        (0..N_BITS).map(|j| (0..N_TRAIN).map(|i| y_tr[(i, j)]).sum::<f64>() / N_TRAIN as f64).collect();
    let yc = Mat::from_fn(N_TRAIN, N_BITS, |i, j| y_tr[(i, j)] - mean[j]);
    let svd = okr_linalg::thin_svd(yc.as_ref())?;
    // KAE targets: centred fingerprints (output Gram of Y - mean), the same centring as KPCA.
    // Uncentred targets make the all-codes-equal solution (K_L = 1 1^T, the mean direction)
    // nearly optimal and the first run collapsed to it.
    let k_out = &yc * yc.transpose();
    let n_fit = N_TRAIN * 4 / 5;
    let mean_fit: Vec<f64> =
        (0..N_BITS).map(|j| (0..n_fit).map(|i| y_tr[(i, j)]).sum::<f64>() / n_fit as f64).collect();
    let yc_fit = Mat::from_fn(n_fit, N_BITS, |i, j| y_tr[(i, j)] - mean_fit[j]);
    let k_out_fit = &yc_fit * yc_fit.transpose();
    let mut records = Vec::new();
    let mut table = format!(
        "Test MSRE (mean over test fingerprints of the squared error summed over the {N_BITS} bits), \
         stand-in data: {N_TRAIN} train / {N_TEST} test, {bits_on:.1} bits on per training point. \
         Mean predictor (all bits = training mean): {:.2}.\n\n\
         | code dim | KPCA (linear, centred) | linear AE (Adam) | KAE (K2AE: Tanimoto in, fingerprints out) | KAE - KPCA | paper: AE sigmoid / AE relu / KAE | KAE fit s |\n\
         |---|---|---|---|---|---|---|\n",
        msre(y_te.as_ref(), Mat::from_fn(N_TEST, N_BITS, |_, j| mean[j]).as_ref())
    );
    let mut val_table = String::from(
        "\n\nKAE lambda_2 selection (validation MSRE on the last 20% of the training fingerprints, encoder fitted on the first 80%):\n\n| code dim | lambda_2: validation MSRE | chosen |\n|---|---|---|\n",
    );
    for (p, ae_sig, ae_relu, kae_paper) in TABLE2 {
        // KPCA: project the centred test fingerprints on the top-p principal directions.
        let v = svd.v().subcols(0, p);
        let ytc = Mat::from_fn(N_TEST, N_BITS, |i, j| y_te[(i, j)] - mean[j]);
        let proj = &(&ytc * v) * v.transpose();
        let kpca_rec = Mat::from_fn(N_TEST, N_BITS, |i, j| proj[(i, j)] + mean[j]);
        let kpca = msre(y_te.as_ref(), kpca_rec.as_ref());

        // Linear autoencoder: the KAE with linear kernels, linear encoder trained by Adam,
        // linear decoder in closed form (ridge 1e-6); its optimum is uncentred rank-p PCA.
        let t = Instant::now();
        let lin = Kae::params()
            .hidden_dims(vec![p])
            .kernels(vec![LayerKernel::Linear])
            .lambdas(vec![0.0, 1e-6])
            .last_layer(LastLayer::Krr)
            .optimizer(Optimizer::adam(1e-2))
            .max_iter(300)
            .seed(seed)
            .fit(y_tr.as_ref())?;
        let lin_s = t.elapsed().as_secs_f64();
        let lin_err = lin.reconstruction_error(y_te.as_ref())?;

        // KAE: Tanimoto Gram in, explicit fingerprints out (G_out = Y Y^T), KRR decoder;
        // lambda_2 chosen on a held-out 20% of the training fingerprints (no test data).
        let t = Instant::now();
        let fit = |k_in: MatRef<'_, f64>, k_out: MatRef<'_, f64>, lambda2: f64| {
            K2ae::params()
                .hidden_dims(vec![p])
                .kernels(vec![LayerKernel::Linear, LayerKernel::GaussianMedian])
                .lambdas(vec![1e-6, lambda2])
                .optimizer(Optimizer::adam(1e-2))
                .max_iter(150)
                .seed(seed)
                .check()?
                .fit_k2ae_gram_with_output(k_in, k_out, &mut |_, _| {})
        };
        let (fit_idx, val_idx): (Vec<usize>, Vec<usize>) = ((0..n_fit).collect(), (n_fit..N_TRAIN).collect());
        let sub = |m: MatRef<'_, f64>, r: &[usize], c: &[usize]| Mat::from_fn(r.len(), c.len(), |i, j| m[(r[i], c[j])]);
        debug_assert_eq!(fit_idx.len(), n_fit);
        let mut best = (f64::INFINITY, LAMBDA2_GRID[0]);
        let mut val_errors = Vec::new();
        for &lambda2 in &LAMBDA2_GRID {
            let m = fit(sub(k_in.as_ref(), &fit_idx, &fit_idx).as_ref(), k_out_fit.as_ref(), lambda2)?;
            let diag_val: Vec<f64> = val_idx.iter().map(|&i| k_in[(i, i)]).collect();
            let beta = m.reconstruction_weights(sub(k_in.as_ref(), &val_idx, &fit_idx).as_ref(), Some(&diag_val))?;
            let rec_c = &beta * &yc_fit;
            let rec = Mat::from_fn(rec_c.nrows(), N_BITS, |i, j| rec_c[(i, j)] + mean_fit[j]);
            let err = msre(sub(y_tr.as_ref(), &val_idx, &(0..N_BITS).collect::<Vec<_>>()).as_ref(), rec.as_ref());
            val_errors.push(format!("{lambda2:.0e}: {err:.1}"));
            if err < best.0 {
                best = (err, lambda2);
            }
        }
        let kae = fit(k_in.as_ref(), k_out.as_ref(), best.1)?;
        let kae_s = t.elapsed().as_secs_f64();
        let beta = kae.reconstruction_weights(k_in_te.as_ref(), Some(&diag_te))?;
        let rec_c = &beta * &yc;
        let rec = Mat::from_fn(N_TEST, N_BITS, |i, j| rec_c[(i, j)] + mean[j]);
        let kae_err = msre(y_te.as_ref(), rec.as_ref());
        // Cross-check: the Gram-only test distortion (spec 1.6.6) with the output Gram.
        let k_out_te = &ytc * yc.transpose();
        let diag_out: Vec<f64> = (0..N_TEST).map(|i| (0..N_BITS).map(|j| ytc[(i, j)].powi(2)).sum()).collect();
        let gram_only = kae.test_distortion(k_in_te.as_ref(), Some(&diag_te), k_out_te.as_ref(), &diag_out)?;
        let gram_only = gram_only.iter().sum::<f64>() / N_TEST as f64;
        let _ = writeln!(
            table,
            "| {p} | {kpca:.2} | {lin_err:.2} | {kae_err:.2} (Gram-only: {gram_only:.2}) | {:+.2} | {ae_sig:.2} / {ae_relu:.2} / {kae_paper:.2} | {kae_s:.1} |",
            kae_err - kpca
        );
        let base = |method: &str, v: f64| {
            MetricRecord::new("kae-fingerprints", "metabolites-standin", method, "msre", v)
                .with_stand_in(true)
                .with_setting("code_dim", p)
                .with_setting("n", N_TRAIN)
                .with_setting("n_test", N_TEST)
        };
        records.push(base("kpca", kpca));
        records.push(base("linear-ae", lin_err).with_seconds(lin_s).with_setting("steps", lin.train_info().n_iter));
        records.push(
            base("kae", kae_err)
                .with_paper(kae_paper)
                .with_seconds(kae_s)
                .with_setting("steps", kae.train_info().n_iter)
                .with_setting("gram_only_msre", gram_only)
                .with_setting("lambda2", best.1),
        );
        let _ = writeln!(val_table, "| {p} | {} | {:.0e} |", val_errors.join(", "), best.1);
        eprintln!(
            "p={p}: kpca {kpca:.2}, linear AE {lin_err:.2} ({lin_s:.0} s), kae {kae_err:.2} / {gram_only:.2} ({kae_s:.0} s)"
        );
    }
    table.push_str(&val_table);
    write_experiment(out_dir, "kae-fingerprints", &records, &table, NOTES)?;
    println!("{table}");
    Ok(())
}

const NOTES: &str = "\
**Stand-in.** The metabolite data of the paper (Brouard et al. 2016: 5579 train / 1395 test \
metabolites, 4136-bit fingerprints) is not available here. The stand-in keeps the width (4136 \
bits) and sparse binary rows (315 bits on per point on average, more than \
the spec's proposal of about 100; the paper does not give the count) with a seeded low-rank Bernoulli latent model \
(10 latent factors, per-bit base rates log-uniform in [0.002, 0.2]), and uses 600 / 150 points \
for time (one K2AE step costs an n x n Cholesky and four n x n solves). Its numbers are not \
comparable with the paper's; only the orderings can be read (paper: KAE < AE relu < AE sigmoid \
at every size, all decreasing with the size). The dataset name in the records is \
`metabolites-standin`.

**Methods.** KAE: the paper's most plausible configuration (spec 5.11): a K2AE whose first layer \
is the Tanimoto Gram of the fingerprints, code layer of width p, Gaussian last-layer kernel \
(median heuristic on the initial codes), explicit fingerprint targets, centred with the training mean \
(output Gram (Y - m)(Y - m)^T, the authors' G_out; reconstruction = m + beta^T (Y - m)), lambda_1 = 1e-6, lambda_2 chosen in {1e-3, 1e-2, 1e-1} by validation \
reconstruction error on the last 20% of the training fingerprints (table below), Adam (lr \
1e-2), at most 150 steps; test reconstructions use \
beta = W^{-1} k_L(x), and the Gram-only distortion \
formula (spec 1.6.6) is shown beside as a cross-check. KPCA: linear-kernel PCA of the centred \
training fingerprints, test points projected on the top p directions (the best rank-p linear \
reconstruction with a bias). Linear AE: the KAE with linear kernels (an uncentred linear \
autoencoder d-p-d in representer form), encoder by Adam (lr 1e-2, 300 steps), decoder in closed \
form (ridge 1e-6); its optimum is uncentred rank-p PCA, so it cannot beat the centred KPCA \
column. Two earlier runs are not reported: in one, the linear AE also trained its decoder by \
Adam at lr 1e-2 and diverged to errors of 1e12 (3.3M decoder coefficients for a 4136-wide \
output need a far smaller step); in the other, the KAE had uncentred targets (Gram Y Y^T) and \
collapsed: its codes became nearly identical (K_L close to 1 1^T, whose direction is the mean \
fingerprint, the top eigenvector of an uncentred binary Gram), giving the same MSRE at p = 25 \
and 50 (248.60) and a KAE worse than KPCA at every size.

**Reading (the committed run, seed 0).** The paper's ordering (KAE far below the \
autoencoders) is not reproduced on this stand-in: the KAE is worse than centred KPCA at every \
size (+1.9 to +9.4, i.e. 0.8% to 4.3%), better than the linear AE only at p = 5 (251.4 vs \
253.3) and level or worse above, and it stops improving after p = 25 (226.6, 225.9, 225.6) while \
KPCA keeps decreasing (224.7, 221.6, 216.2). Every method is only 4-18% below the mean \
predictor (263.7): the stand-in's bits are noisy Bernoulli draws around a 10-factor logistic \
model, so most of the error is irreducible noise and a linear subspace already captures the \
signal; the KAE had no tuning beyond lambda_2. The Gram-only test distortion equals the \
explicit reconstruction error to the printed digits at every size.";
