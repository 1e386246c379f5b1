//! `cargo xtask reproduce rr-multilabel-small`: the small-data regime of
//! Brogat-Motte et al. 2022, Table 7. Reduced-rank IOKR and IOKR trained on
//! the first 2000 training rows of Bibtex and Corel5k, hyper-parameters chosen
//! by 5 x 80/20 random sub-sampling on those rows, test F1 on the full test split.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use okr_estimators::Fit;
use okr_estimators::select::GaussianIokrSearch;
use okr_estimators::{Iokr, ReducedRankIokr};
use okr_eval::{Dataset, MetricRecord, ShuffleSplit, f1_samples};
use okr_kernels::{Gaussian, Kernel, LabelSets, Linear, Rows, median_sq_distance};

use crate::common::cv::{MEDIAN_ROWS, decode_f1, decoded_f1, fit_then_decode};
use crate::common::data::dense_or_sparse;
use crate::common::data::{LoadedData, load_mulan_or_standin};
use crate::common::report::{PaperValue, write_results_with};

/// Data sets of the run, in order.
pub const DATASETS: [&str; 2] = ["bibtex", "corel5k"];

/// Training rows kept (the first ones of the training file).
pub const N_TRAIN: usize = 2000;

/// Width multipliers `c` (`gamma = c / median squared distance`).
pub const WIDTHS: [f64; 4] = [0.25, 0.5, 1.0, 2.0];

/// Ridge values (`lambda1 = lambda2 = lambda`).
pub const LAMBDAS: [f64; 4] = [1e-6, 1e-5, 1e-4, 1e-3];

/// Largest rank of the grid.
pub const P_MAX: usize = 200;

/// Random sub-sampling repetitions and validation fraction.
pub const SPLITS: usize = 5;
/// Validation fraction of each repetition.
pub const VAL_FRACTION: f64 = 0.2;

/// Integer logarithmic grid of ranks `1..=P_MAX`: `unique(round(logspace(0, log10 P_MAX, 16)))`.
pub fn rank_grid() -> Vec<usize> {
    let steps = 16;
    let mut g: Vec<usize> = (0..steps)
        .map(|i| (10f64.powf(i as f64 / (steps - 1) as f64 * (P_MAX as f64).log10())).round() as usize)
        .collect();
    g.dedup();
    g
}

/// Published test F1 (x100), Table 7, by data set and method.
pub fn published(dataset: &str, method: &str) -> Vec<PaperValue> {
    let v = match (dataset, method) {
        ("bibtex", "iokr") => 35.9,
        ("bibtex", "reduced-rank-iokr") => 39.7,
        ("corel5k", "iokr") => 13.7,
        ("corel5k", "reduced-rank-iokr") => 16.1,
        _ => return Vec::new(),
    };
    vec![PaperValue { value: v, source: "Brogat-Motte et al. 2022, Table 7" }]
}

/// Runs the experiment on `datasets` and writes `rr-multilabel-small.{json,md}` into `out_dir`.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64) -> Result<()> {
    let per_ds = (SPLITS * WIDTHS.len()) as u64 + 3;
    let pb = ProgressBar::new(datasets.len() as u64 * per_ds);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")?);
    let t0 = Instant::now();
    let mut records = Vec::new();
    let mut grids = String::from(
        "\n\n## Validation grids\n\nMean validation example-based F1 (x100) over the 5 sub-samplings; \
         rows are width multipliers `c`, columns `lambda`; each reduced-rank cell is the best rank \
         of the grid (in brackets). The selection is in bold.\n",
    );
    for name in datasets {
        pb.set_message(format!("{name}: loading"));
        let data = load_mulan_or_standin(name, seed)?;
        pb.inc(1);
        let (recs, md) = run_dataset(&data, seed, &pb)?;
        records.extend(recs);
        grids.push_str(&md);
    }
    pb.finish_and_clear();
    let total = t0.elapsed().as_secs_f64();
    let notes = format!("{NOTES}\n\nRank grid: {:?}. Total run time: {total:.0} s.{grids}", rank_grid());
    let table = write_results_with(
        out_dir,
        "rr-multilabel-small",
        &records,
        &|d, m| published(d, m),
        "published F1",
        true,
        &notes,
    )?;
    println!("{table}");
    println!("total: {total:.1} s");
    Ok(())
}

const NOTES: &str = "\
Small-data regime of Brogat-Motte et al. 2022 (Table 7): training set = the first 2000 rows of \
the training file, test set = the full test split. Gaussian input kernel \
`exp(-gamma ||x - x'||^2)` with `gamma = c / median ||x - x'||^2` (median over the 2000 \
training rows) and Gaussian output kernel on label vectors with `sigma^2` = mean number of \
labels per training point. Ridge `(K + n lambda I)`, `lambda1 = lambda2 = lambda`. Candidates: \
the distinct training label sets. Hyper-parameters are chosen by 5 x 80/20 random sub-sampling \
of the 2000 training rows (mean validation example-based F1) over `c in {0.25, 0.5, 1, 2}`, \
`lambda in {1e-6, 1e-5, 1e-4, 1e-3}` and, for reduced-rank IOKR, the rank grid below (one fit \
at rank 200 per (c, lambda, split), truncated to each rank). `iokr` reuses the width and lambda \
selected for reduced-rank IOKR, as in the paper (\"the same lambda was used for IOKR\"); \
`iokr-own-tuning` is IOKR with (c, lambda) selected on its own validation F1. Features are used \
raw (both are binary). The paper's Corel5k is another version of the data (37152 features, 260 \
labels) while ours is Mulan's (499 features, 374 labels): only the ordering of the Corel5k rows \
compares, not the values.\n\n## Reading the gap (the committed run, seed 0)\n\nTable 7's ordering is not reproduced: on test, IOKR (42.05 Bibtex, 19.27 Corel5k) is level with or slightly above reduced-rank IOKR (41.90, 19.03); reduced rank wins only on validation F1, by 0.1-0.2. Both of our methods are far above the paper's figures (IOKR +6.2, reduced rank +2.2 on Bibtex). The likeliest reason is tuning: our IOKR gets a width and lambda chosen by cross-validation, whereas the paper's IOKR reused the reduced-rank lambda and its width choice is unstated. On Bibtex the selected rank is 200, the top of the grid, which the paper says its selections never were; so the grid is too small there and reduced rank is barely a truncation. A run with ranks up to about 800 is the next check. On Corel5k the data differ from the paper's, so only the ordering could compare, and it does not match either.";

fn run_dataset(data: &LoadedData, seed: u64, pb: &ProgressBar) -> Result<(Vec<MetricRecord>, String)> {
    let LoadedData { name, train, test, stand_in } = data;
    let n = train.n_samples().min(N_TRAIN);
    let first: Vec<usize> = (0..n).collect();
    let train = train.select(&first);
    let mut out = dense_or_sparse!(name, (&train.x, &test.x), |a, b| evaluate(name, a, b, &train, test, seed, pb)?);
    for r in &mut out.0 {
        r.stand_in = *stand_in;
    }
    Ok(out)
}

/// Validation scores: `iokr[c][lambda]` and `rr[c][lambda][rank index]`.
struct Grid {
    iokr: Vec<Vec<f64>>,
    rr: Vec<Vec<Vec<f64>>>,
}

fn validate<X>(
    x: &X,
    y: &LabelSets,
    median: f64,
    ky: &Gaussian,
    seed: u64,
    name: &str,
    pb: &ProgressBar,
) -> Result<Grid>
where
    X: Rows,
    Linear: Kernel<X>,
    Gaussian: Kernel<X>,
{
    let ranks = rank_grid();
    let splits = ShuffleSplit::new(SPLITS, VAL_FRACTION, seed).split(x.n_rows())?;
    let w = 1.0 / splits.len() as f64;
    // IOKR: the library's path search (one eigendecomposition per split and width).
    pb.set_message(format!("{name}: IOKR validation"));
    let search = GaussianIokrSearch::new(WIDTHS.to_vec(), LAMBDAS.to_vec()).median_rows(MEDIAN_ROWS);
    let iokr = search.run(x, &splits, &mut decoded_f1(y, ky), &mut || {})?;
    let mut grid = Grid { iokr: iokr.mean, rr: vec![vec![vec![0.0; ranks.len()]; LAMBDAS.len()]; WIDTHS.len()] };
    for (si, (tr, va)) in splits.iter().enumerate() {
        let y_tr = y.select(tr);
        let (cand, _) = y_tr.unique();
        let truth = y.select(va);
        let (x_tr, x_va) = (x.select(tr), x.select(va));
        for (wi, &c) in WIDTHS.iter().enumerate() {
            pb.set_message(format!("{name}: split {}/{}, c = {c}", si + 1, splits.len()));
            let kx = Gaussian::new(c / median)?;
            for (li, &lambda) in LAMBDAS.iter().enumerate() {
                // Reduced rank: one fit at P_MAX, truncated to every rank of the grid.
                let model = Fit::<X, &LabelSets>::fit(
                    &ReducedRankIokr::params(kx.clone(), ky.clone()).rank(P_MAX).lambda1(lambda),
                    &x_tr,
                    &y_tr,
                )?;
                for (pi, &q) in ranks.iter().enumerate() {
                    let m = model.truncated(q)?;
                    grid.rr[wi][li][pi] += w * decode_f1(&m, &x_va, &truth, &cand)?;
                }
            }
            pb.inc(1);
        }
    }
    Ok(grid)
}

/// First maximum of `f` over the indices, in order.
fn argmax<I: Copy>(items: impl Iterator<Item = I>, f: impl Fn(I) -> f64) -> I {
    let mut best: Option<(I, f64)> = None;
    for i in items {
        let v = f(i);
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.expect("non-empty grid").0
}

fn evaluate<X>(
    name: &str,
    x_train: &X,
    x_test: &X,
    train: &Dataset,
    test: &Dataset,
    seed: u64,
    pb: &ProgressBar,
) -> Result<(Vec<MetricRecord>, String)>
where
    X: Rows,
    Linear: Kernel<X>,
    Gaussian: Kernel<X>,
{
    let sigma2_y = train.y.mean_cardinality().max(f64::MIN_POSITIVE);
    let ky = Gaussian::from_sigma2(sigma2_y)?;
    let median = median_sq_distance(x_train, MEDIAN_ROWS);
    anyhow::ensure!(median > 0.0, "{name}: all training inputs are identical");
    let ranks = rank_grid();
    let t_cv = Instant::now();
    let grid = validate(x_train, &train.y, median, &ky, seed, name, pb)?;
    let cv_seconds = t_cv.elapsed().as_secs_f64();

    let cells = || (0..WIDTHS.len()).flat_map(|w| (0..LAMBDAS.len()).map(move |l| (w, l)));
    let (rw, rl, rp) =
        argmax(cells().flat_map(|(w, l)| (0..ranks.len()).map(move |p| (w, l, p))), |(w, l, p)| grid.rr[w][l][p]);
    let (iw, il) = argmax(cells(), |(w, l)| grid.iokr[w][l]);

    let (cand, _) = train.y.unique();
    let mut records = Vec::new();
    // (method, c index, lambda index, rank, cv F1)
    let runs: [(&str, usize, usize, Option<usize>, f64); 3] = [
        ("iokr", rw, rl, None, grid.iokr[rw][rl]),
        ("iokr-own-tuning", iw, il, None, grid.iokr[iw][il]),
        ("reduced-rank-iokr", rw, rl, Some(ranks[rp]), grid.rr[rw][rl][rp]),
    ];
    for (method, wi, li, rank, cv_f1) in runs {
        pb.set_message(format!("{name}: {method} fit + decode"));
        let (c, lambda) = (WIDTHS[wi], LAMBDAS[li]);
        let kx = Gaussian::new(c / median)?;
        let (d, fit, dec) = match rank {
            None => {
                let params = Iokr::params(kx, ky.clone()).lambda(lambda);
                fit_then_decode(|| Fit::<X, &LabelSets>::fit(&params, x_train, &train.y), x_test, &cand)?
            }
            Some(p) => {
                let params = ReducedRankIokr::params(kx, ky.clone()).rank(p).lambda1(lambda);
                fit_then_decode(|| Fit::<X, &LabelSets>::fit(&params, x_train, &train.y), x_test, &cand)?
            }
        };
        let (pred, fit_seconds, decode_seconds) = (cand.select(&d.best()), fit.wall, dec.wall);
        let base = |metric: &str, value: f64| {
            let r = MetricRecord::new("rr-multilabel-small", name, method, metric, value)
                .with_setting("n", train.n_samples())
                .with_setting("n_test", test.n_samples())
                .with_setting("n_candidates", cand.n_rows())
                .with_setting("c", c)
                .with_setting("gamma", c / median)
                .with_setting("lambda", lambda)
                .with_setting("cv_splits", SPLITS)
                .with_setting("cv_f1_samples", cv_f1)
                .with_setting("median_sq_dist", median)
                .with_setting("sigma2_output", sigma2_y);
            match rank {
                Some(p) => r.with_setting("rank", p),
                None => r,
            }
        };
        let mut f1 = base("f1_samples", f1_samples(&test.y, &pred)?).with_seconds(fit_seconds + decode_seconds);
        if let Some(p) = published(name, method).first() {
            f1 = f1.with_paper(p.value / 100.0);
        }
        records.push(f1);
        records.push(base("fit_seconds", fit_seconds));
        records.push(base("decode_seconds", decode_seconds));
        records.push(base("cv_seconds", cv_seconds));
        pb.inc(1);
    }
    Ok((records, grid_md(name, &grid, &ranks, (rw, rl, rp), (iw, il))))
}

fn grid_md(name: &str, grid: &Grid, ranks: &[usize], rr: (usize, usize, usize), io: (usize, usize)) -> String {
    let header = |title: &str| {
        let mut s = format!("\n### {name}: {title}\n\n| c \\ lambda |");
        for l in &LAMBDAS {
            s.push_str(&format!(" {l:.0e} |"));
        }
        s.push_str(&format!("\n|---|{}\n", "---|".repeat(LAMBDAS.len())));
        s
    };
    let mut md = header("IOKR");
    for (wi, c) in WIDTHS.iter().enumerate() {
        md.push_str(&format!("| {c} |"));
        for li in 0..LAMBDAS.len() {
            let cell = format!("{:.2}", grid.iokr[wi][li] * 100.0);
            let bold = (wi, li) == io || (wi, li) == (rr.0, rr.1);
            md.push_str(&if bold { format!(" **{cell}** |") } else { format!(" {cell} |") });
        }
        md.push('\n');
    }
    md.push_str(&header("reduced-rank IOKR, best rank per cell"));
    for (wi, c) in WIDTHS.iter().enumerate() {
        md.push_str(&format!("| {c} |"));
        for li in 0..LAMBDAS.len() {
            let row = &grid.rr[wi][li];
            let pi = argmax(0..row.len(), |p| row[p]);
            let cell = format!("{:.2} (p = {})", row[pi] * 100.0, ranks[pi]);
            let bold = (wi, li, pi) == rr;
            md.push_str(&if bold { format!(" **{cell}** |") } else { format!(" {cell} |") });
        }
        md.push('\n');
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_grid_is_increasing_from_one_to_pmax() {
        let g = rank_grid();
        assert_eq!(g.first(), Some(&1));
        assert_eq!(g.last(), Some(&P_MAX));
        assert!(g.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn argmax_keeps_first_maximum() {
        assert_eq!(argmax(0..4, |i| [1.0, 3.0, 3.0, 2.0][i]), 1);
    }

    #[test]
    fn published_figures_of_table_7() {
        assert_eq!(published("bibtex", "reduced-rank-iokr")[0].value, 39.7);
        assert!(published("corel5k", "iokr-own-tuning").is_empty());
    }
}
