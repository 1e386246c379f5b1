//! `cargo xtask reproduce kae-graphs`: K2AE codes vs KPCA codes of the
//! Weisfeiler-Lehman kernel on MUTAG, PTC_MR and NCI1, fed to the same
//! downstream classifier (replaces the paper's NCI-Cancer regression, whose
//! Gram matrix is not available here).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use faer::Mat;
use okr_estimators::kae::{K2ae, Kpca, LayerKernel, Optimizer};
use okr_eval::{MetricRecord, read_tu};
use okr_kernels::{Kernel, Rows, WlSubtree};

use super::common::{code_gaussian_gram, krr_classify, mean_std, sub, write_experiment};

/// Data sets (lowercase record names) and their TU folder names.
pub const DATASETS: [(&str, &str); 3] = [("mutag", "MUTAG"), ("ptc_mr", "PTC_MR"), ("nci1", "NCI1")];
/// Code sizes of the paper.
pub const CODE_DIMS: [usize; 5] = [5, 10, 25, 50, 100];
/// Random 80/20 train/test splits.
pub const SPLITS: u64 = 10;
/// WL relabelling rounds.
pub const WL_ITERATIONS: usize = 3;
/// At most this many graphs are used to fit the encoders (unsupervised);
/// all graphs are then encoded out of sample.
pub const MAX_FIT: usize = 1000;
/// K2AE penalties (lambda_1 on the encoder, lambda_2 on the KRR decoder).
pub const LAMBDAS: [f64; 2] = [1e-6, 1e-3];
/// K2AE gradient steps.
pub const MAX_ITER: usize = 300;

/// Runs the experiment and writes `kae-graphs.{json,md}`.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64) -> Result<()> {
    let t0 = Instant::now();
    let mut records = Vec::new();
    for (name, folder) in DATASETS {
        if !datasets.iter().any(|d| d == name) {
            continue;
        }
        records.extend(run_dataset(name, folder, seed)?);
    }
    let table = render(&records);
    let notes = format!("{NOTES}\n\nTotal run time: {:.0} s (seed {seed}).", t0.elapsed().as_secs_f64());
    write_experiment(out_dir, "kae-graphs", &records, &table, &notes)?;
    println!("{table}");
    Ok(())
}

fn run_dataset(name: &str, folder: &str, seed: u64) -> Result<Vec<MetricRecord>> {
    let dir = okr_eval::data_dir().join("tudataset").join(folder);
    let ds = read_tu(&dir, folder).with_context(|| format!("reading {}", dir.display()))?;
    let n = ds.graphs.n_rows();
    let y: Vec<f64> = ds.labels.iter().map(|&l| if l > 0 { 1.0 } else { -1.0 }).collect();
    let t = Instant::now();
    let k = WlSubtree::new(WL_ITERATIONS).normalized(true).gram(&ds.graphs);
    eprintln!("{name}: {n} graphs, WL Gram in {:.1} s", t.elapsed().as_secs_f64());
    let all: Vec<usize> = (0..n).collect();
    let fit: Vec<usize> = if n > MAX_FIT {
        okr_eval::train_test_split(n, (n - MAX_FIT) as f64 / n as f64, seed ^ 0xf17)?.0
    } else {
        all.clone()
    };
    let k_fit = sub(k.as_ref(), &fit, &fit);
    let k_all_fit = sub(k.as_ref(), &all, &fit);
    let diag = vec![1.0; n];
    let splits: Vec<(Vec<usize>, Vec<usize>)> =
        (0..SPLITS).map(|s| okr_eval::train_test_split(n, 0.2, seed + s)).collect::<okr_eval::Result<_>>()?;
    let base = |method: &str, p: Option<usize>| {
        let r = MetricRecord::new("kae-graphs", name, method, "accuracy", 0.0)
            .with_setting("n", n)
            .with_setting("n_fit", fit.len())
            .with_setting("wl_iterations", WL_ITERATIONS);
        match p {
            Some(p) => r.with_setting("code_dim", p),
            None => r,
        }
    };
    let mut records = Vec::new();
    let evaluate = |codes_gram: &dyn Fn(&[usize]) -> Mat<f64>| -> Result<(f64, f64)> {
        let mut acc = Vec::new();
        for (s, (train, test)) in splits.iter().enumerate() {
            let g = codes_gram(train);
            acc.push(krr_classify(g.as_ref(), &y, train, test, seed + s as u64)?.0);
        }
        Ok(mean_std(&acc))
    };
    // Reference: the classifier on the WL kernel itself.
    let t = Instant::now();
    let (m, s) = evaluate(&|_| k.clone())?;
    records.push(base("krr-wl", None).with_std(s).with_seconds(t.elapsed().as_secs_f64()));
    records.last_mut().expect("pushed").value = m;
    eprintln!("{name}: krr-wl {:.2} +- {:.2}", 100.0 * m, 100.0 * s);
    for p in CODE_DIMS {
        let t = Instant::now();
        let kpca = Kpca::fit(k_fit.as_ref(), p)?;
        let codes = kpca.transform(k_all_fit.as_ref())?;
        let fit_s = t.elapsed().as_secs_f64();
        for standardize in [true, false] {
            let (m, s) = evaluate(&|train| code_gaussian_gram(codes.as_ref(), train, standardize))?;
            let mut r = base("kpca", Some(p))
                .with_std(s)
                .with_seconds(fit_s)
                .with_setting("components", kpca.n_components())
                .with_setting("standardized", standardize);
            r.value = m;
            records.push(r);
            eprintln!(
                "{name} p={p} std={standardize}: kpca {:.2} +- {:.2} ({} components)",
                100.0 * m,
                100.0 * s,
                kpca.n_components()
            );
        }

        let t = Instant::now();
        let model = K2ae::params()
            .hidden_dims(vec![p])
            .kernels(vec![LayerKernel::Linear, LayerKernel::GaussianMedian])
            .lambdas(LAMBDAS.to_vec())
            .optimizer(Optimizer::adam(1e-2))
            .max_iter(MAX_ITER)
            .seed(seed)
            .fit_k2ae_gram(k_fit.as_ref())?;
        let codes = model.encode(k_all_fit.as_ref(), Some(&diag))?;
        let fit_s = t.elapsed().as_secs_f64();
        let info = model.train_info();
        // Mean Gram-only reconstruction error of the graphs not used to fit (if any) and of the fit set.
        let dist = model.test_distortion(k_all_fit.as_ref(), Some(&diag), k_all_fit.as_ref(), &diag)?;
        let mut accs = Vec::new();
        for standardize in [true, false] {
            let (m, s) = evaluate(&|train| code_gaussian_gram(codes.as_ref(), train, standardize))?;
            let mut r = base("k2ae", Some(p))
                .with_std(s)
                .with_seconds(fit_s)
                .with_setting("standardized", standardize)
                .with_setting("lambda1", LAMBDAS[0])
                .with_setting("lambda2", LAMBDAS[1])
                .with_setting("steps", info.n_iter)
                .with_setting("objective_start", info.objective_history[0])
                .with_setting("objective_end", info.final_objective);
            r.value = m;
            records.push(r);
            accs.push((m, s));
        }
        let (m, s) = accs[0];
        let mean_dist = dist.iter().sum::<f64>() / n as f64;
        records.push({
            let mut r = base("k2ae", Some(p)).with_seconds(fit_s);
            r.metric = "mse_h".into();
            r.value = mean_dist;
            r
        });
        eprintln!(
            "{name} p={p}: k2ae {:.2} +- {:.2} ({} steps, J {:.4} -> {:.4}, {fit_s:.1} s, mean RKHS distortion {mean_dist:.4})",
            100.0 * m,
            100.0 * s,
            info.n_iter,
            info.objective_history[0],
            info.final_objective
        );
    }
    Ok(records)
}

fn render(records: &[MetricRecord]) -> String {
    let mut out = String::from(
        "Test accuracy (%) of the same Gaussian kernel ridge classifier on K2AE codes and on KPCA codes \
         (mean +- std over 10 random 80/20 splits).\n\n\
         Codes standardized (per-column z-score on the training split) or raw.\n\n\
         | data set | n (fit) | code dim | KPCA std. | K2AE std. | diff | KPCA raw | K2AE raw | diff | K2AE RKHS distortion | K2AE fit s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let find_std = |d: &str, m: &str, metric: &str, p: Option<u64>, standardized: Option<bool>| {
        records.iter().find(|r| {
            r.dataset == d
                && r.method == m
                && r.metric == metric
                && r.setting.get("code_dim").and_then(|v| v.as_u64()) == p
                && r.setting.get("standardized").and_then(|v| v.as_bool()) == standardized
        })
    };
    let find = |d: &str, m: &str, metric: &str, p: Option<u64>| find_std(d, m, metric, p, None);
    let pct = |r: &MetricRecord| format!("{:.2} +- {:.2}", 100.0 * r.value, 100.0 * r.std.unwrap_or(0.0));
    for (name, _) in DATASETS {
        let Some(reference) = find(name, "krr-wl", "accuracy", None) else { continue };
        let n = reference.setting.get("n").and_then(|v| v.as_u64()).unwrap_or(0);
        let n_fit = reference.setting.get("n_fit").and_then(|v| v.as_u64()).unwrap_or(0);
        for p in CODE_DIMS {
            let p64 = Some(p as u64);
            let (Some(kp), Some(ka), Some(kpr), Some(kar)) = (
                find_std(name, "kpca", "accuracy", p64, Some(true)),
                find_std(name, "k2ae", "accuracy", p64, Some(true)),
                find_std(name, "kpca", "accuracy", p64, Some(false)),
                find_std(name, "k2ae", "accuracy", p64, Some(false)),
            ) else {
                continue;
            };
            let dist = find(name, "k2ae", "mse_h", p64).map_or(f64::NAN, |r| r.value);
            let _ = writeln!(
                out,
                "| {name} | {n} ({n_fit}) | {p} | {} | {} | {:+.2} | {} | {} | {:+.2} | {dist:.4} | {:.1} |",
                pct(kp),
                pct(ka),
                100.0 * (ka.value - kp.value),
                pct(kpr),
                pct(kar),
                100.0 * (kar.value - kpr.value),
                ka.seconds.unwrap_or(0.0),
            );
        }
        let _ =
            writeln!(out, "| {name} | {n} | WL kernel itself (KRR, no codes): {} | | | | | | | | |", pct(reference));
    }
    out
}

const NOTES: &str = "\
**What this replaces.** The paper's supervised experiment is an NCI-Cancer regression (2303 \
molecules, Tanimoto Gram, 59 targets, random forests on codes; spec 3.2), whose Gram matrix is \
not available here. This experiment keeps its structure (2-layer K2AE codes vs KPCA codes of \
sizes 5, 10, 25, 50, 100, fed to the same downstream learner, 10 seeded runs) on the TU graph \
classification sets MUTAG, PTC_MR and NCI1 (real data, `../shared/data/tudataset`). There is no \
published figure to compare with: the paper has no graph-classification experiment.

**Protocol.** Input kernel: Weisfeiler-Lehman subtree kernel, 3 rounds, cosine-normalized (unit \
diagonal), node labels only. Encoders are unsupervised and fitted once per code size on all \
graphs (MUTAG, PTC_MR) or on a seeded subset of 1000 graphs (NCI1, for time: one K2AE step costs \
one n x n Cholesky), labels never used; every graph is then encoded out of sample from its cross \
Gram. KPCA is uncentred (the theory of spec 2 is), fitted on the same graphs, and keeps at most \
the numerically non-zero components (column `components` in the records). K2AE: first layer the \
precomputed WL Gram (linear in the RKHS, spec 1.6.7 option a), code layer of width p, Gaussian \
last-layer kernel with the median heuristic on the initial codes, lambda_1 = 1e-6, lambda_2 = \
1e-3 (fixed, not tuned on labels), Adam (lr 1e-2), at most 300 steps, exact profiled gradient \
(N_L refreshed every step, D_L = -lambda_2 N_L). Downstream classifier (the same for every code), \
in two variants: codes standardized column-wise with the training split's statistics \
(`std.`), or used as they are (`raw`); then a Gaussian kernel with gamma = 1 / median \
squared distance, kernel ridge regression on +-1 labels with `(K + n lambda I)` and lambda chosen \
in {1e-4, 1e-3, 1e-2, 1e-1} on a seeded 75/25 split of the training part, prediction = sign. \
The `WL kernel itself` row is the same ridge classifier on the WL Gram directly (the analogue of \
the paper's KRR column). `K2AE RKHS distortion` is the mean Gram-only reconstruction error \
||phi(x) - f(phi(x))||^2 over all graphs (spec 1.6.6; 1 = reconstructing nothing, since the \
kernel is normalized).

**Why two variants.** KPCA codes are U_p Sigma_p (column scale sqrt(mu_k)), the K2AE code is a \
learned basis of a nearby subspace with O(1) columns. Standardizing gives every KPCA component \
unit variance, so tiny trailing components (noise for large p on small sets) weigh as much as the \
leading ones; raw codes keep KPCA's own geometry (a Gaussian kernel on raw KPCA codes is a \
Gaussian on the RKHS distance projected on the top-p subspace). Reading the comparison on one \
variant only would favour one method by construction, so both are shown.

**Reading the table (the committed run, seed 0).** Differences are K2AE minus KPCA in accuracy \
points; the split-to-split std is about 3-5 points on MUTAG, 5-8 on PTC_MR and 1 on NCI1, so \
only NCI1 separates the methods. MUTAG: K2AE ahead or level in all 10 cells (+0.0 to +3.2 \
points, and +14.7 at p = 100 standardized, where standardizing blows up KPCA's noise \
components), all but that one within one std. PTC_MR: mixed, K2AE ahead in 7 of 10 cells, \
behind at p = 10 (-5.1 / -5.7) and at p = 25 raw (-1.0); the largest gaps, +9.3 / +9.4 at p = 5, are about 1.5-2 stds, the others within about one std. NCI1: level at p = 5-25 \
(-0.02 to +1.18), KPCA better at p = 50 and 100 (-0.8 to -2.5, one to two stds). So the paper's \
ordering (K2AE codes better than KPCA codes of the same size, spec 3.2) shows at small code \
sizes and on the small sets, not at p >= 50 on NCI1. Two caveats on NCI1: its encoders saw \
1000 of the 4110 graphs (KPCA too), and the K2AE runs stopped after 50-70 Adam steps by the \
relative-decrease rule (objective 0.12-0.15 -> 0.086-0.136; MUTAG and PTC_MR ran 279-300 steps), so the K2AE there is far from \
converged; no K2AE setting (lambda, steps) was tuned, on labels or otherwise. The best code \
classifiers (K2AE p = 100 on MUTAG, 88.4; KPCA p = 100 on NCI1, 83.7) are above the same ridge \
classifier on the WL kernel itself (85.0, 81.4).";
