//! `cargo xtask reproduce tn-theory`: experiments E1-E3 of spec section 4
//! (when does the trace norm beat Frobenius / HS regularization?), on linear
//! multi-output regression with closed-form excess risk.
//!
//! - E1: $d = T = 100$, $x$ uniform on the unit sphere ($E xx^\top = I/d$),
//!   $G_* = U\operatorname{diag}(s)V^\top$ of rank $k$ with a flat spectrum and
//!   $\|G_*\|_F = 1$, $y = G_* x + \sigma\varepsilon$, $\varepsilon\sim N(0, I_T)/\sqrt T$.
//!   Excess risk $\operatorname{tr}((\hat G - G_*) C (\hat G - G_*)^\top)$.
//! - E2: the same with anisotropic inputs (one direction carries most of the variance).
//! - E3: the log-log slope of the excess risk in $n$.
//!
//! Both estimators come from one eigendecomposition of $X^\top X$: HS (ridge)
//! $\hat\Gamma = C_{yx}(\Sigma + n\lambda)^{-1}$, trace norm by the exact convex
//! solver [`fista_svt`] along a warm-started $\lambda$ path. $\lambda$ is chosen on
//! a fresh validation sample of 1000 points (and, for reference, by oracle).
// Index loops mirror the matrix formulas (pairs a < b, entries (i, j)).
#![allow(clippy::needless_range_loop)]

use std::path::Path;

use anyhow::Result;
use faer::Mat;
use okr_estimators::trace_norm::fista_svt;
use okr_eval::MetricRecord;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::common::report::write_outputs;
use crate::common::rng::normal;

const D: usize = 100;
const T: usize = 100;
const SIGMA: f64 = 0.1;
const RANKS: [usize; 4] = [1, 3, 10, 100];
const SIZES: [usize; 4] = [100, 400, 1600, 3200];
const REPS: usize = 3;
const N_VAL: usize = 1000;

/// Inputs on the unit sphere; `aniso` stretches coordinate 0 by 10 before normalizing.
fn inputs(n: usize, aniso: bool, rng: &mut ChaCha8Rng) -> Mat<f64> {
    let mut x = Mat::from_fn(n, D, |_, j| normal(rng) * if aniso && j == 0 { 10.0 } else { 1.0 });
    for i in 0..n {
        let norm = (0..D).map(|j| x[(i, j)] * x[(i, j)]).sum::<f64>().sqrt();
        for j in 0..D {
            x[(i, j)] /= norm;
        }
    }
    x
}

fn orthonormal(rows: usize, k: usize, rng: &mut ChaCha8Rng) -> Mat<f64> {
    let g = Mat::from_fn(rows, k, |_, _| normal(rng));
    g.qr().compute_thin_Q()
}

fn outputs(x: &Mat<f64>, g: &Mat<f64>, rng: &mut ChaCha8Rng) -> Mat<f64> {
    let clean = x * g.transpose();
    Mat::from_fn(x.nrows(), T, |i, t| clean[(i, t)] + SIGMA * normal(rng) / (T as f64).sqrt())
}

fn excess(gh: &Mat<f64>, gs: &Mat<f64>, cov: &Mat<f64>) -> f64 {
    let e = gh - gs;
    let ec = &e * cov;
    (0..T).map(|t| (0..D).map(|j| ec[(t, j)] * e[(t, j)]).sum::<f64>()).sum()
}

fn val_mse(gh: &Mat<f64>, xv: &Mat<f64>, yv: &Mat<f64>) -> f64 {
    (xv * gh.transpose() - yv).squared_norm_l2() / xv.nrows() as f64
}

/// `(HS by validation, HS oracle, TN by validation, TN oracle)` excess risks.
fn one_run(n: usize, k: usize, aniso: bool, cov: &Mat<f64>, seed: u64) -> Result<[f64; 4]> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (u, v) = (orthonormal(T, k, &mut rng), orthonormal(D, k, &mut rng));
    let s = 1.0 / (k as f64).sqrt();
    let gs = &u * v.transpose() * s; // flat spectrum, |G|_F = 1
    let (x, xv) = (inputs(n, aniso, &mut rng), inputs(N_VAL, aniso, &mut rng));
    let (y, yv) = (outputs(&x, &gs, &mut rng), outputs(&xv, &gs, &mut rng));
    let e = okr_linalg::eigh((x.transpose() * &x).as_ref())?;
    let p = e.values().iter().take_while(|&&w| w > 1e-10 * e.values()[0]).count();
    let sig: Vec<f64> = e.values()[..p].to_vec();
    let vp = e.vectors().subcols(0, p).to_owned();
    let c = y.transpose() * &x * &vp; // (T, p) = Y^T F_x
    let back = |gamma: &Mat<f64>| gamma * vp.transpose(); // G = Gamma V^T
    let pick = |cands: Vec<Mat<f64>>| {
        let vals: Vec<f64> = cands.iter().map(|g| val_mse(g, &xv, &yv)).collect();
        let ex: Vec<f64> = cands.iter().map(|g| excess(g, &gs, cov)).collect();
        let iv = (0..vals.len()).min_by(|&a, &b| vals[a].total_cmp(&vals[b])).unwrap_or(0);
        (ex[iv], ex.iter().copied().fold(f64::INFINITY, f64::min))
    };
    let hs: Vec<Mat<f64>> = (0..15)
        .map(|i| {
            let l = 10f64.powf(-6.0 + 0.5 * i as f64);
            back(&Mat::from_fn(T, p, |t, j| c[(t, j)] / (sig[j] + n as f64 * l)))
        })
        .collect();
    let lmax = 2.0 / n as f64 * okr_linalg::thin_svd(c.as_ref())?.s()[0];
    let mut warm: Option<Mat<f64>> = None;
    let mut tn = Vec::new();
    for i in 1..=10 {
        let l = lmax * 0.5f64.powi(i);
        let fit = fista_svt(&sig, c.as_ref(), y.squared_norm_l2(), n, l, warm.as_ref(), 1e-7, 300)?;
        tn.push(back(&fit.gamma));
        warm = Some(fit.gamma);
    }
    let (hv, ho) = pick(hs);
    let (tv, to) = pick(tn);
    Ok([hv, ho, tv, to])
}

fn slope(ns: &[usize], v: &[f64]) -> f64 {
    okr_estimators::reduced_rank::assumptions::log_log_slope(ns.iter().zip(v).map(|(&n, &e)| (n as f64, e)))
}

/// Runs E1-E3 and writes `tn-theory.{json,md}`.
pub fn run(out_dir: &Path, seed: u64) -> Result<()> {
    let mut records = Vec::new();
    let mut md = String::from("# `cargo xtask reproduce tn-theory`\n\n");
    for (exp, aniso) in [("E1 isotropic", false), ("E2 anisotropic", true)] {
        let cov = if aniso {
            let mut rng = ChaCha8Rng::seed_from_u64(seed + 999);
            let xs = inputs(20_000, true, &mut rng);
            xs.transpose() * &xs * (1.0 / 20_000.0)
        } else {
            Mat::from_fn(D, D, |i, j| if i == j { 1.0 / D as f64 } else { 0.0 })
        };
        let c_op = okr_linalg::eigh(cov.as_ref())?.values()[0];
        md.push_str(&format!(
            "## {exp} (‖C‖_op = {c_op:.3}, m_x = 1)\n\nExcess risk, mean over {REPS} repetitions; lambda by validation (oracle in brackets).\n\n\
             | rank k | n | HS | trace norm | TN / HS |\n|---|---|---|---|---|\n"
        ));
        for &k in &RANKS {
            let (mut hs_curve, mut tn_curve) = (Vec::new(), Vec::new());
            for &n in &SIZES {
                let mut acc = [0.0; 4];
                for r in 0..REPS {
                    let res = one_run(n, k, aniso, &cov, seed + 1000 * r as u64 + 7 * k as u64 + n as u64)?;
                    acc.iter_mut().zip(res).for_each(|(a, b)| *a += b / REPS as f64);
                }
                eprintln!("  {exp} k={k} n={n}: HS {:.2e}, TN {:.2e}", acc[0], acc[2]);
                md.push_str(&format!(
                    "| {k} | {n} | {:.3e} ({:.3e}) | {:.3e} ({:.3e}) | {:.2} |\n",
                    acc[0],
                    acc[1],
                    acc[2],
                    acc[3],
                    acc[2] / acc[0]
                ));
                hs_curve.push(acc[0]);
                tn_curve.push(acc[2]);
                for (method, v, o) in [("self-hs", acc[0], acc[1]), ("trace-norm", acc[2], acc[3])] {
                    records.push(
                        MetricRecord::new(
                            "tn-theory",
                            if aniso { "e2-anisotropic" } else { "e1-isotropic" },
                            method,
                            "mse_h",
                            v,
                        )
                        .with_stand_in(true)
                        .with_setting("rank", k as u64)
                        .with_setting("n", n as u64)
                        .with_setting("oracle_lambda_excess_risk", o)
                        .with_setting("reps", REPS as u64),
                    );
                }
            }
            md.push_str(&format!(
                "| {k} | log-log slope (E3) | {:.2} | {:.2} | |\n",
                slope(&SIZES, &hs_curve),
                slope(&SIZES, &tn_curve)
            ));
        }
        md.push('\n');
    }
    md.push_str(NOTES);
    write_outputs(out_dir, "tn-theory", &records, &md)
}

const NOTES: &str = "Setup (spec 4, E1-E3): d = T = 100, sigma = 0.1, flat spectrum of rank k with \
|G_*|_F = 1, 3 repetitions (spec suggests 10; the machine is shared), n in {100, 400, 1600, 3200}. \
Excess risk = tr((G - G_*) C (G - G_*)^T) with C = I/d (E1) or a 20,000-sample estimate (E2: coordinate 0 \
stretched x10 before projecting to the sphere). HS: ridge over 1e-6..1e1 (K + n lambda I); trace norm: \
exact convex solver (FISTA + SVT, at most 300 iterations per lambda, warm path) with lambda_max / 2^i, i = 1..10. Records: metric `mse_h` = surrogate \
excess risk, data set `e1-isotropic` / `e2-anisotropic` (synthetic, `stand_in: true`). Expected (Thm 3 vs \
its HS analogue): TN < HS for small k; the advantage fades at full rank with a flat spectrum (E1) and when \
|C|_op^{1/2} approaches m_x (E2); E3: slopes at most -1/2.\n";
