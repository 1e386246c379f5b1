//! `cargo xtask reproduce rr-usps`: USPS half-image completion of
//! Brogat-Motte et al. (2022), §5.2.1: Table 3 (RBF loss at n = 1000 for
//! reduced-rank IOKR, IOKR and KDE) and Figure 4 (test MSE in the output RKHS
//! against n, reduced rank vs ridge), plus a PNG of reconstructed digits.
//!
//! Convention: pixels rescaled from `[-1, 1]` to `[0, 1]`; input = the top 128
//! pixels, output = the bottom 128; output kernel `exp(-||y - y'||² / (2·10))`
//! (σ² = 10); Gaussian input kernel `exp(-γ||x - x'||²)` with
//! `γ = c / median ||x - x'||²`; ridge `(K + nλI)`, `λ1 = λ2 = λ`; candidates =
//! all 7291 training bottom halves; RBF loss `2 − 2k(ŷ, y)`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use faer::Mat;
use indicatif::{ProgressBar, ProgressStyle};
use okr_decode::CandidateDecoder;
use okr_estimators::Fit;
use okr_estimators::iokr::IokrPath;
use okr_estimators::{Iokr, Kde, ParamGuard, ReducedRankIokr, SurrogateModel};
use okr_eval::{MetricRecord, ShuffleSplit, find_usps_in, read_usps};
use okr_kernels::{DenseRows, Gaussian, Kernel, Rows, median_sq_distance};
use plotters::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use crate::common::plot::{Panel, Series, draw_png};
use crate::common::report::write_outputs;
use crate::common::stats::mean;

/// Experiment name.
pub const NAME: &str = "rr-usps";
/// Output kernel width σ² of the paper.
pub const OUTPUT_SIGMA2: f64 = 10.0;
/// Training size of Table 3.
pub const N_TABLE: usize = 1000;
/// Width multipliers `c` (`γ = c / median squared distance`).
pub const WIDTHS: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 4.0];
/// Ridge values.
pub const LAMBDAS: [f64; 6] = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1];
/// Ranks (reduced rank and KDE).
pub const RANKS: [usize; 12] = [2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192];
/// Training sizes of Figure 4.
pub const N_CURVE: [usize; 6] = [500, 1000, 2000, 3000, 5000, 7000];
/// Ridge values of the Figure 4 selection.
pub const CURVE_LAMBDAS: [f64; 4] = [1e-5, 1e-4, 1e-3, 1e-2];

/// Table 6 of the paper, USPS row: fit and decode seconds (their machine).
fn published_times(method: &str) -> Option<(f64, f64)> {
    match method {
        "iokr" => Some((0.1, 9.0)),
        "reduced-rank-iokr" => Some((0.4, 1.0)),
        _ => None,
    }
}

/// Table 3 of the paper (RBF loss ± standard error, rank).
fn published(method: &str) -> Option<(f64, f64)> {
    match method {
        "reduced-rank-iokr" => Some((0.734, 0.011)),
        "iokr" => Some((0.751, 0.011)),
        "kde" | "kde-centered" => Some((0.764, 0.011)),
        _ => None,
    }
}

struct Usps {
    x: DenseRows,
    y: DenseRows,
    x_test: DenseRows,
    y_test: DenseRows,
    test_labels: Vec<u8>,
}

fn load() -> Result<Usps> {
    let dir = okr_eval::data_dir();
    let (train, test) = find_usps_in(&dir)
        .with_context(|| "rr-usps needs the real USPS files; there is no stand-in for this experiment")?;
    let train = read_usps(train)?;
    let test = read_usps(test)?;
    Ok(Usps {
        x: train.top_half(true)?,
        y: train.bottom_half(true)?,
        x_test: test.top_half(true)?,
        y_test: test.bottom_half(true)?,
        test_labels: test.labels().to_vec(),
    })
}

/// Squared distances row `i` of `a` to row `j` of `b`.
fn sq_dist(a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
    let (a, b) = (a.as_mat(), b.as_mat());
    (0..a.ncols()).map(|f| (a[(i, f)] - b[(j, f)]).powi(2)).sum()
}

/// RBF losses `2 − 2k(c_best, y)` of decoded candidate indices.
fn rbf_losses(best: &[usize], cands: &DenseRows, truth: &DenseRows, gamma_y: f64) -> Vec<f64> {
    best.iter().enumerate().map(|(t, &c)| okr_eval::rbf_loss((-gamma_y * sq_dist(cands, c, truth, t)).exp())).collect()
}

/// Mean validation RBF losses over the splits.
#[derive(Default)]
struct Table3Grid {
    iokr: Vec<Vec<f64>>,
    rr: Vec<Vec<Vec<f64>>>,
    kde: [Vec<Vec<Vec<f64>>>; 2],
}

/// The model of one method with the selected hyper-parameters.
#[derive(Debug, Clone, Copy)]
struct Choice {
    c: f64,
    lambda: f64,
    rank: Option<usize>,
    val_loss: f64,
}

fn pick_iokr(grid: &[Vec<f64>]) -> Choice {
    let mut best = Choice { c: 0.0, lambda: 0.0, rank: None, val_loss: f64::INFINITY };
    for (wi, row) in grid.iter().enumerate() {
        for (li, &v) in row.iter().enumerate() {
            if v < best.val_loss {
                best = Choice { c: WIDTHS[wi], lambda: LAMBDAS[li], rank: None, val_loss: v };
            }
        }
    }
    best
}

fn pick_ranked(grid: &[Vec<Vec<f64>>]) -> Choice {
    let mut best = Choice { c: 0.0, lambda: 0.0, rank: None, val_loss: f64::INFINITY };
    for (wi, a) in grid.iter().enumerate() {
        for (li, b) in a.iter().enumerate() {
            for (pi, &v) in b.iter().enumerate() {
                if v < best.val_loss {
                    best = Choice { c: WIDTHS[wi], lambda: LAMBDAS[li], rank: Some(RANKS[pi]), val_loss: v };
                }
            }
        }
    }
    best
}

/// 5 x 80/20 random sub-sampling of the training rows: validation RBF loss of
/// every (c, λ, p) for IOKR, reduced rank and KDE (uncentred, centred).
fn validate_table3(
    x: &DenseRows,
    y: &DenseRows,
    cands: &DenseRows,
    ky: &Gaussian,
    seed: u64,
    pb: &ProgressBar,
) -> Result<Table3Grid> {
    let p_max = *RANKS.last().unwrap();
    let splits = ShuffleSplit::new(5, 0.2, seed).split(x.n_rows())?;
    let w = 1.0 / splits.len() as f64;
    let (nw, nl, np) = (WIDTHS.len(), LAMBDAS.len(), RANKS.len());
    let mut grid = Table3Grid {
        iokr: vec![vec![0.0; nl]; nw],
        rr: vec![vec![vec![0.0; np]; nl]; nw],
        kde: [vec![vec![vec![0.0; np]; nl]; nw], vec![vec![vec![0.0; np]; nl]; nw]],
    };
    let decoder = CandidateDecoder::new();
    let norms = vec![1.0; cands.n_rows()];
    let gamma_y = ky.gamma();
    for (si, (tr, va)) in splits.iter().enumerate() {
        let (x_tr, y_tr, x_va, y_va) = (x.select(tr), y.select(tr), x.select(va), y.select(va));
        let mut kde_atoms = [Mat::zeros(0, 0), Mat::zeros(0, 0)];
        let k_cand = ky.gram_block(&y_tr, cands);
        let median = median_sq_distance(&x_tr, 2000);
        for (wi, &c) in WIDTHS.iter().enumerate() {
            let kx = Gaussian::new(c / median)?;
            let k_tr = kx.gram(&x_tr);
            let path = IokrPath::new(k_tr.as_ref())?;
            let a = path.project_inputs(kx.gram_block(&x_va, &x_tr).as_ref());
            let b = path.project_atoms(k_cand.as_ref());
            for (li, &lambda) in LAMBDAS.iter().enumerate() {
                let coef = path.scaled_coefficients(a.as_ref(), lambda);
                let best = decoder.decode_matrices(coef.as_ref(), b.as_ref(), &norms)?.best();
                grid.iokr[wi][li] += w * mean(&rbf_losses(&best, cands, &y_va, gamma_y));
            }
            let rr_path = ReducedRankIokr::params(kx.clone(), ky.clone())
                .rank(p_max)
                .check()?
                .fit_lambda_path(&x_tr, &y_tr, &LAMBDAS)?;
            for (li, model) in rr_path.iter().enumerate() {
                let coef = model.coefficients(&x_va)?;
                let g = atom_products(model, cands)?;
                prefix_losses(&coef, &g, &y_va, cands, gamma_y, w, &mut grid.rr[wi][li])?;
            }
            for (ci, centered) in [false, true].into_iter().enumerate() {
                // The output KPCA, hence the atom products, depend on neither
                // the input width nor lambda: computed once per split.
                if wi == 0 {
                    let m = kde(&kx, ky, LAMBDAS[0], centered).fit(&x_tr, &y_tr)?;
                    kde_atoms[ci] = atom_products(&m, cands)?;
                }
                for (li, &lambda) in LAMBDAS.iter().enumerate() {
                    let model = kde(&kx, ky, lambda, centered).fit(&x_tr, &y_tr)?;
                    let coef = model.coefficients(&x_va)?;
                    prefix_losses(&coef, &kde_atoms[ci], &y_va, cands, gamma_y, w, &mut grid.kde[ci][wi][li])?;
                }
            }
            eprintln!("[{NAME}] validation split {}/{}, c = {c}: done", si + 1, splits.len());
            pb.inc(1);
        }
    }
    Ok(grid)
}

fn kde(kx: &Gaussian, ky: &Gaussian, lambda: f64, centered: bool) -> okr_estimators::KdeParams<Gaussian, Gaussian> {
    Kde::params(kx.clone(), ky.clone()).rank(*RANKS.last().unwrap()).lambda(lambda).centered(centered)
}

fn atom_products<M: SurrogateModel<DenseRows, DenseRows>>(model: &M, cands: &DenseRows) -> Result<Mat<f64>> {
    let mut g = Mat::zeros(model.n_atoms(), cands.n_rows());
    model.atom_products_into(cands, g.as_mut(), faer::Par::rayon(0))?;
    Ok(g)
}

/// Adds `w` times the validation RBF loss of every rank prefix of a model
/// with orthonormal nested atoms (reduced rank, KDE) to `acc`, from its
/// validation coefficients and candidate atom products.
fn prefix_losses(
    coef: &Mat<f64>,
    g: &Mat<f64>,
    y_va: &DenseRows,
    cands: &DenseRows,
    gamma_y: f64,
    w: f64,
    acc: &mut [f64],
) -> Result<()> {
    let decoder = CandidateDecoder::new();
    let norms = vec![1.0; cands.n_rows()];
    for (pi, &q) in RANKS.iter().enumerate() {
        let q = q.min(coef.ncols()).min(g.nrows());
        let best = decoder.decode_matrices(coef.as_ref().subcols(0, q), g.as_ref().subrows(0, q), &norms)?.best();
        acc[pi] += w * mean(&rbf_losses(&best, cands, y_va, gamma_y));
    }
    Ok(())
}

/// Test figures of one refitted model.
struct TestResult {
    losses: Vec<f64>,
    mse_h: f64,
    best: Vec<usize>,
    fit_s: f64,
    decode_s: f64,
}

fn test_model<M: SurrogateModel<DenseRows, DenseRows>>(
    model: &M,
    fit_s: f64,
    d: &Usps,
    gamma_y: f64,
) -> Result<TestResult> {
    let t = Instant::now();
    let best = CandidateDecoder::new().decode(model, &d.x_test, &d.y)?.best();
    let decode_s = t.elapsed().as_secs_f64();
    let losses = rbf_losses(&best, &d.y, &d.y_test, gamma_y);
    let mse_h = mean(&model.rkhs_sq_errors(&d.x_test, &d.y_test)?);
    Ok(TestResult { losses, mse_h, best, fit_s, decode_s })
}

/// Validation MSE in H of ridge (per λ) and reduced rank (per λ and rank) on
/// one 80/20 split, for the Figure 4 selection.
fn validate_curve(
    x: &DenseRows,
    y: &DenseRows,
    kx: &Gaussian,
    ky: &Gaussian,
    seed: u64,
) -> Result<(Vec<f64>, Vec<Vec<f64>>)> {
    let (tr, va) = &ShuffleSplit::new(1, 0.2, seed).split(x.n_rows())?[0];
    let (x_tr, y_tr, x_va, y_va) = (x.select(tr), y.select(tr), x.select(va), y.select(va));
    let n_va = va.len();
    // Ridge: a = W k_x, ||h(x) − ψ(y)||² = aᵀK_y a − 2aᵀk^y(y) + 1.
    let path = IokrPath::new(kx.gram(&x_tr).as_ref())?;
    let v = path.eigenvectors();
    let q = v.transpose() * kx.gram_block(&x_tr, &x_va);
    let ky_tr = ky.gram(&y_tr);
    let ky_cross = ky.gram_block(&y_tr, &y_va);
    let mut ridge = Vec::new();
    for &lambda in &CURVE_LAMBDAS {
        let wts = path.weights(lambda);
        let scaled = Mat::from_fn(q.nrows(), n_va, |i, j| q[(i, j)] * wts[i]);
        let a = v * scaled;
        let kya = &ky_tr * &a;
        let mse: f64 = (0..n_va)
            .map(|j| (0..a.nrows()).map(|i| a[(i, j)] * (kya[(i, j)] - 2.0 * ky_cross[(i, j)])).sum::<f64>() + 1.0)
            .sum::<f64>()
            / n_va as f64;
        ridge.push(mse);
    }
    // Reduced rank: ||P h(x) − ψ(y)||² = Σ_{j<q} (u_j² − 2 u_j v_j) + 1.
    let p_max = *RANKS.last().unwrap();
    let models = ReducedRankIokr::params(kx.clone(), ky.clone()).rank(p_max).check()?.fit_lambda_path(
        &x_tr,
        &y_tr,
        &CURVE_LAMBDAS,
    )?;
    let mut rr = Vec::new();
    for model in &models {
        let u = model.coefficients(&x_va)?;
        let mut g = Mat::zeros(model.n_atoms(), n_va);
        model.atom_products_into(&y_va, g.as_mut(), faer::Par::rayon(0))?;
        let per_rank = RANKS
            .iter()
            .map(|&q| {
                let q = q.min(model.n_atoms());
                (0..n_va)
                    .map(|t| (0..q).map(|j| u[(t, j)] * (u[(t, j)] - 2.0 * g[(j, t)])).sum::<f64>() + 1.0)
                    .sum::<f64>()
                    / n_va as f64
            })
            .collect();
        rr.push(per_rank);
    }
    Ok((ridge, rr))
}

/// Runs Table 3 and Figure 4 and writes `docs/results/rr-usps.*`.
pub fn run(out_dir: &Path, seed: u64) -> Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let t0 = Instant::now();
    let d = load()?;
    let ky = Gaussian::from_sigma2(OUTPUT_SIGMA2)?;
    let gamma_y = ky.gamma();
    let mut perm: Vec<usize> = (0..d.x.n_rows()).collect();
    perm.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let pb = ProgressBar::new((5 * WIDTHS.len() + 4 + N_CURVE.len()) as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")?);

    // ---- Table 3 ----
    pb.set_message("Table 3: validation");
    let idx = &perm[..N_TABLE];
    let (x, y) = (d.x.select(idx), d.y.select(idx));
    let grid = validate_table3(&x, &y, &d.y, &ky, seed, &pb)?;
    let median = median_sq_distance(&x, 2000);
    let choices = [
        ("reduced-rank-iokr", pick_ranked(&grid.rr)),
        ("iokr", pick_iokr(&grid.iokr)),
        ("kde", pick_ranked(&grid.kde[0])),
        ("kde-centered", pick_ranked(&grid.kde[1])),
    ];
    let mut records = Vec::new();
    let mut table = String::from(
        "| method | c | λ | p | validation RBF loss | **test RBF loss ± s.e.** | paper (Table 3) | gap | test MSE in H | fit s | decode s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut reconstructions: Vec<(&str, Vec<usize>)> = Vec::new();
    for (method, ch) in choices {
        pb.set_message(format!("Table 3: test {method}"));
        let kx = Gaussian::new(ch.c / median)?;
        let t = Instant::now();
        let res = match method {
            "iokr" => {
                let m = Iokr::params(kx, ky.clone()).lambda(ch.lambda).fit(&x, &y)?;
                test_model(&m, t.elapsed().as_secs_f64(), &d, gamma_y)?
            }
            "reduced-rank-iokr" => {
                let m =
                    ReducedRankIokr::params(kx, ky.clone()).rank(ch.rank.unwrap()).lambda1(ch.lambda).fit(&x, &y)?;
                test_model(&m, t.elapsed().as_secs_f64(), &d, gamma_y)?
            }
            _ => {
                let m = Kde::params(kx, ky.clone())
                    .rank(ch.rank.unwrap())
                    .lambda(ch.lambda)
                    .centered(method == "kde-centered")
                    .fit(&x, &y)?;
                test_model(&m, t.elapsed().as_secs_f64(), &d, gamma_y)?
            }
        };
        pb.inc(1);
        let (loss, se) = okr_eval::mean_and_std_err(&res.losses);
        let se = se.unwrap_or(f64::NAN);
        let paper = published(method);
        let mut setting = serde_json::Map::new();
        setting.insert("n".into(), json!(N_TABLE));
        setting.insert("n_test".into(), json!(d.x_test.n_rows()));
        setting.insert("c".into(), json!(ch.c));
        setting.insert("gamma".into(), json!(ch.c / median));
        setting.insert("lambda".into(), json!(ch.lambda));
        if let Some(p) = ch.rank {
            setting.insert("rank".into(), json!(p));
        }
        let mut rec = |metric: &str, value: f64, std: Option<f64>, paper: Option<f64>| {
            let mut r = MetricRecord::new(NAME, "usps", method, metric, value);
            r.setting = setting.clone();
            r.std = std;
            r.paper = paper;
            records.push(r);
        };
        rec("rbf_loss", loss, Some(se), paper.map(|p| p.0));
        rec("val_rbf_loss", ch.val_loss, None, None);
        rec("mse_h", res.mse_h, None, None);
        let times = published_times(method);
        rec("fit_seconds", res.fit_s, None, times.map(|t| t.0));
        rec("decode_seconds", res.decode_s, None, times.map(|t| t.1));
        let _ = writeln!(
            table,
            "| {method} | {} | {:.0e} | {} | {:.4} | **{loss:.3} ± {se:.3}** | {} | {} | {:.4} | {:.2} | {:.2} |",
            ch.c,
            ch.lambda,
            ch.rank.map_or("∞".into(), |p| p.to_string()),
            ch.val_loss,
            paper.map_or("-".into(), |p| format!("{:.3} ± {:.3}", p.0, p.1)),
            paper.map_or("-".into(), |p| format!("{:+.3}", loss - p.0)),
            res.mse_h,
            res.fit_s,
            res.decode_s
        );
        reconstructions.push((method, res.best));
    }
    draw_digits(&out_dir.join(format!("{NAME}-digits.png")), &d, &reconstructions)?;

    // ---- Figure 4 ----
    let rr_choice = choices[0].1;
    let mut curve_rows = String::from(
        "| n | ridge λ | ridge test MSE in H | reduced rank (λ, p) | reduced-rank test MSE in H | ratio |\n|---|---|---|---|---|---|\n",
    );
    let (mut ridge_pts, mut rr_pts) = (Vec::new(), Vec::new());
    for &n in &N_CURVE {
        pb.set_message(format!("Figure 4: n = {n}"));
        eprintln!("[{NAME}] Figure 4: n = {n}");
        let idx = &perm[..n.min(perm.len())];
        let (x, y) = (d.x.select(idx), d.y.select(idx));
        let kx = Gaussian::new(rr_choice.c / median_sq_distance(&x, 2000))?;
        let (ridge_val, rr_val) = validate_curve(&x, &y, &kx, &ky, seed + n as u64)?;
        let li = (0..CURVE_LAMBDAS.len()).min_by(|&a, &b| ridge_val[a].total_cmp(&ridge_val[b])).unwrap();
        let (rl, rp) = (0..CURVE_LAMBDAS.len())
            .flat_map(|l| (0..RANKS.len()).map(move |p| (l, p)))
            .min_by(|a, b| rr_val[a.0][a.1].total_cmp(&rr_val[b.0][b.1]))
            .unwrap();
        let t = Instant::now();
        let ridge = Iokr::params(kx.clone(), ky.clone()).lambda(CURVE_LAMBDAS[li]).fit(&x, &y)?;
        let ridge_fit = t.elapsed().as_secs_f64();
        let ridge_mse = mean(&ridge.rkhs_sq_errors(&d.x_test, &d.y_test)?);
        let t = Instant::now();
        let rr =
            ReducedRankIokr::params(kx.clone(), ky.clone()).rank(RANKS[rp]).lambda1(CURVE_LAMBDAS[rl]).fit(&x, &y)?;
        let rr_fit = t.elapsed().as_secs_f64();
        let rr_mse = mean(&rr.rkhs_sq_errors(&d.x_test, &d.y_test)?);
        pb.inc(1);
        for (method, value, lambda, rank, fit) in [
            ("iokr", ridge_mse, CURVE_LAMBDAS[li], None, ridge_fit),
            ("reduced-rank-iokr", rr_mse, CURVE_LAMBDAS[rl], Some(RANKS[rp]), rr_fit),
        ] {
            let mut r = MetricRecord::new(NAME, "usps", method, "mse_h", value);
            r.setting.insert("n".into(), json!(n));
            r.setting.insert("lambda".into(), json!(lambda));
            r.setting.insert("c".into(), json!(rr_choice.c));
            r.setting.insert("figure".into(), json!(4));
            if let Some(p) = rank {
                r.setting.insert("rank".into(), json!(p));
            }
            r.seconds = Some(fit);
            records.push(r);
        }
        ridge_pts.push((n as f64, ridge_mse));
        rr_pts.push((n as f64, rr_mse));
        let _ = writeln!(
            curve_rows,
            "| {n} | {:.0e} | {ridge_mse:.4} | ({:.0e}, {}) | {rr_mse:.4} | {:.3} |",
            CURVE_LAMBDAS[li],
            CURVE_LAMBDAS[rl],
            RANKS[rp],
            rr_mse / ridge_mse
        );
    }
    pb.finish_and_clear();
    let curve_ok = rr_pts.iter().zip(&ridge_pts).all(|(r, h)| r.1 <= h.1);
    draw_png(
        &out_dir.join(format!("{NAME}.png")),
        &[Panel::new(
            "USPS: test MSE in H_y vs n (Figure 4)",
            ("n", "test MSE in H"),
            (true, false),
            vec![Series::line("ridge (IOKR)", 0, ridge_pts), Series::line("reduced rank", 3, rr_pts)],
        )],
        1,
        (720, 480),
    )?;

    let total = t0.elapsed().as_secs_f64();
    let mut md = format!("# `cargo xtask reproduce {NAME}`\n\n");
    md.push_str(&format!(
        "USPS half-image completion (Brogat-Motte et al. 2022, §5.2.1): predict the bottom 128 pixels \
         from the top 128. {N_TABLE} training images drawn at random (seed {seed}) from the 7291 of \
         `usps_train.txt`; all 2007 test images; candidates = all 7291 training bottom halves.\n\n\
         **Convention.** Pixels rescaled from [-1, 1] to [0, 1]; output kernel \
         `exp(-||y - y'||² / (2σ²))` with σ² = 10; RBF loss `2 − 2k(ŷ, y)`; Gaussian input kernel \
         `exp(-γ||x − x'||²)` with `γ = c / median ||x − x'||²`; ridge `(K + nλI)` with λ1 = λ2 = λ. \
         Hyper-parameters by 5 × 80/20 random sub-sampling of the training images (mean validation \
         RBF loss of the decoded candidates) over c ∈ {WIDTHS:?}, λ ∈ {LAMBDAS:?} and p ∈ {RANKS:?}. \
         Standard errors are over the 2007 test images. Total run time {total:.0} s.\n\n## Table 3 (n = {N_TABLE})\n\n"
    ));
    md.push_str(&table);
    md.push_str(&format!(
        "\n{TABLE_NOTES}\n\n![reconstructions](rr-usps-digits.png)\n\n## Figure 4\n\n\
         Test MSE in the output RKHS, `||ĥ(x) − ψ(y)||²`, against the training size (the first n images \
         of the same random order). The width c = {} is Table 3's reduced-rank choice; λ ∈ {CURVE_LAMBDAS:?} \
         and p are chosen on one 80/20 split of each training set by validation MSE in H, then the model \
         is refitted on all n images. Reduced rank ≤ ridge at every n: **{}**.\n\n",
        rr_choice.c,
        if curve_ok { "held" } else { "did not hold" }
    ));
    md.push_str(&curve_rows);
    md.push_str("\n![Figure 4](rr-usps.png)\n\nRecords: `rr-usps.json`.\n");
    write_outputs(out_dir, NAME, &records, &md)?;
    println!("{table}\n{curve_rows}\nreduced rank <= ridge at every n: {curve_ok}\ntotal {total:.0} s");
    Ok(())
}

const TABLE_NOTES: &str = "\
KDE is reported with uncentred (`kde`) and centred (`kde-centered`) output KPCA; the paper does not \
say which it used. Both are okr's `Kde` estimator: the IOKR estimator projected on the top-p output \
KPCA directions (spec 1.6), tuned on the same grid (width, lambda and p) and decoded with the same \
rule as the other methods (`argmin_c k(c,c) - 2<h(x), psi(c)>`, i.e. the full candidate norm, which is \
1 for this kernel). **Gap to the paper's KDE (0.764).** In the committed run KDE comes out level with \
reduced-rank IOKR and below IOKR, about 0.03 under the paper's figure, so the paper's ordering \
reduced rank < IOKR < KDE holds for reduced rank vs IOKR only. What differs from the paper and may \
explain it (none of these was isolated by a separate run): Weston et al. decode KDE with the \
projected candidate norm `||P psi(c)||^2` instead of `k(c,c)`; the paper fixes p = 64 while our \
grid selected 96 / 128; and the paper's 1000 training images and tuning grid are unstated. \
Reduced rank and IOKR are within 0.02 of the paper, in the paper's order. Times are wall-clock on \
2 threads of a machine shared with other jobs (the paper's Table 6 gives 0.4 s / 1 s fit / decode \
for reduced rank and 0.1 s / 9 s for IOKR): decoding through p atoms is 3.5x faster than IOKR's \
1000 here, while the reduced-rank fit (two eigendecompositions of n x n) is slower than IOKR's \
Cholesky.";

/// A PNG grid: for ten test digits (the first of each class), the true image
/// and the top half completed with each method's decoded bottom half.
fn draw_digits(path: &Path, d: &Usps, recs: &[(&str, Vec<usize>)]) -> Result<()> {
    let picks: Vec<usize> = (0..10u8).filter_map(|c| d.test_labels.iter().position(|&l| l == c)).collect();
    let cell = 4u32; // pixels per image pixel
    let (img, pad) = (16 * cell, 6u32);
    let label_w = 150u32;
    let width = label_w + picks.len() as u32 * (img + pad);
    let height = (1 + recs.len() as u32) * (img + pad) + pad;
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let row_names: Vec<&str> = std::iter::once("truth").chain(recs.iter().map(|r| r.0)).collect();
    for (r, name) in row_names.iter().enumerate() {
        let y0 = pad + r as u32 * (img + pad);
        root.draw(&Text::new(name.to_string(), (4, (y0 + img / 2) as i32), ("sans-serif", 14)))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (k, &t) in picks.iter().enumerate() {
            let x0 = label_w + k as u32 * (img + pad);
            for py in 0..16 {
                for px in 0..16 {
                    let v = if py < 8 {
                        d.x_test.as_mat()[(t, py * 16 + px)]
                    } else if r == 0 {
                        d.y_test.as_mat()[(t, (py - 8) * 16 + px)]
                    } else {
                        d.y.as_mat()[(recs[r - 1].1[t], (py - 8) * 16 + px)]
                    };
                    // zipcode images are dark digits on light ground after rescaling
                    let g = (255.0 * (1.0 - v.clamp(0.0, 1.0))) as u8;
                    let (xa, ya) = ((x0 + px as u32 * cell) as i32, (y0 + py as u32 * cell) as i32);
                    root.draw(&Rectangle::new(
                        [(xa, ya), (xa + cell as i32, ya + cell as i32)],
                        RGBColor(g, g, g).filled(),
                    ))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                }
            }
        }
    }
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}
