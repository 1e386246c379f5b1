//! Helpers shared by the kernel-autoencoder experiments: a kernel ridge
//! classifier with a held-out choice of lambda, statistics, and the
//! markdown/JSON writer.

use std::path::Path;

use anyhow::Result;
use faer::{Mat, MatRef, Par};
use okr_eval::MetricRecord;
use okr_linalg::{Cholesky, JitterPolicy};

/// Ridge values of the downstream classifier, `(K + n lambda I)`.
pub const CLASSIFIER_LAMBDAS: [f64; 4] = [1e-4, 1e-3, 1e-2, 1e-1];

/// Mean and (population) standard deviation.
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt())
}

/// Rows `rows` and columns `cols` of `k`.
pub fn sub(k: MatRef<'_, f64>, rows: &[usize], cols: &[usize]) -> Mat<f64> {
    Mat::from_fn(rows.len(), cols.len(), |i, j| k[(rows[i], cols[j])])
}

/// Kernel ridge regression on +-1 targets, predicting the sign.
fn krr_predict(k_tr: MatRef<'_, f64>, y: &[f64], k_te_tr: MatRef<'_, f64>, lambda: f64) -> Result<Vec<f64>> {
    let n = k_tr.nrows();
    let w = Mat::from_fn(n, n, |i, j| k_tr[(i, j)] + if i == j { n as f64 * lambda } else { 0.0 });
    let (chol, _) = Cholesky::factor_in_place(w, JitterPolicy::with_lambda(lambda), Par::rayon(0))?;
    let yv = Mat::from_fn(n, 1, |i, _| y[i]);
    let alpha = chol.solve(yv.as_ref(), Par::rayon(0));
    let s = k_te_tr * &alpha;
    Ok((0..s.nrows()).map(|i| s[(i, 0)]).collect())
}

fn accuracy(scores: &[f64], y: &[f64]) -> f64 {
    scores.iter().zip(y).filter(|(s, y)| (**s >= 0.0) == (**y > 0.0)).count() as f64 / y.len().max(1) as f64
}

/// Test accuracy of a kernel ridge classifier on the +-1 labels `y`, with
/// kernel matrix `k` over all points, trained on `train`, lambda chosen
/// from [`CLASSIFIER_LAMBDAS`] on a seeded 75/25 split of `train`.
pub fn krr_classify(k: MatRef<'_, f64>, y: &[f64], train: &[usize], test: &[usize], seed: u64) -> Result<(f64, f64)> {
    let (inner_tr, inner_va) = okr_eval::train_test_split(train.len(), 0.25, seed ^ 0x5eed)?;
    let itr: Vec<usize> = inner_tr.iter().map(|&i| train[i]).collect();
    let iva: Vec<usize> = inner_va.iter().map(|&i| train[i]).collect();
    let y_itr: Vec<f64> = itr.iter().map(|&i| y[i]).collect();
    let y_iva: Vec<f64> = iva.iter().map(|&i| y[i]).collect();
    let k_itr = sub(k, &itr, &itr);
    let k_iva = sub(k, &iva, &itr);
    let mut best = (f64::NEG_INFINITY, CLASSIFIER_LAMBDAS[0]);
    for &lam in &CLASSIFIER_LAMBDAS {
        let acc = accuracy(&krr_predict(k_itr.as_ref(), &y_itr, k_iva.as_ref(), lam)?, &y_iva);
        if acc > best.0 {
            best = (acc, lam);
        }
    }
    let y_tr: Vec<f64> = train.iter().map(|&i| y[i]).collect();
    let y_te: Vec<f64> = test.iter().map(|&i| y[i]).collect();
    let scores = krr_predict(sub(k, train, train).as_ref(), &y_tr, sub(k, test, train).as_ref(), best.1)?;
    Ok((accuracy(&scores, &y_te), best.1))
}

/// Gaussian Gram of codes (standardized with the statistics of the `train`
/// rows when `standardize`), width `1 / median squared distance` over the
/// training rows.
pub fn code_gaussian_gram(codes: MatRef<'_, f64>, train: &[usize], standardize: bool) -> Mat<f64> {
    let (n, p) = (codes.nrows(), codes.ncols());
    let mut z = Mat::zeros(n, p);
    for c in 0..p {
        let v: Vec<f64> = train.iter().map(|&i| codes[(i, c)]).collect();
        let (m, s) = mean_std(&v);
        let (m, s) = if !standardize {
            (0.0, 1.0)
        } else if s > 0.0 {
            (m, s)
        } else {
            (m, 1.0)
        };
        for i in 0..n {
            z[(i, c)] = (codes[(i, c)] - m) / s;
        }
    }
    let zt = sub(z.as_ref(), train, &(0..p).collect::<Vec<_>>());
    let mut d = Vec::new();
    let step = train.len().div_ceil(500);
    for a in (0..zt.nrows()).step_by(step) {
        for b in (a + 1..zt.nrows()).step_by(step) {
            d.push((0..p).map(|c| (zt[(a, c)] - zt[(b, c)]).powi(2)).sum::<f64>());
        }
    }
    d.sort_by(|a, b| a.total_cmp(b));
    let med = d.get(d.len() / 2).copied().filter(|m| *m > 0.0).unwrap_or(1.0);
    okr_estimators::kae::LayerKernel::Gaussian { gamma: 1.0 / med }.gram(z.as_ref()).expect("resolved kernel")
}

/// Writes `<name>.json` and `<name>.md` (title, table, notes).
pub fn write_experiment(out_dir: &Path, name: &str, records: &[MetricRecord], table: &str, notes: &str) -> Result<()> {
    let md = format!(
        "# `cargo xtask reproduce {name}`\n\n{table}\n\n{notes}\n\nRecords: `{name}.json` (one per measured figure).\n"
    );
    crate::common::report::write_outputs(out_dir, name, records, &md)
}
