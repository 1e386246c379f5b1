//! `cargo xtask reproduce rr-multilabel-full`: reduced-rank IOKR against IOKR
//! on the full Bibtex and Corel5k training splits (Brogat-Motte et al. 2022,
//! Table 5 accuracy and Table 6 fit / decode times).
//!
//! IOKR's width and ridge come from the same 3-fold cross-validation as
//! `reproduce quick`. Reduced rank keeps that width, and picks λ among
//! `{λ/10, λ, 10λ}` and the rank on one 80/20 split of the training set (one
//! fit per λ at the largest rank through `fit_lambda_path`, truncated to every
//! rank). Both are refitted on the whole training split and timed. The test F1
//! and decode time of every rank of the grid are reported too (not used for
//! selection), to show the accuracy / decoding-speed trade-off.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use okr_estimators::Fit;
use okr_estimators::{Iokr, ParamGuard, ReducedRankIokr};
use okr_eval::{MetricRecord, ShuffleSplit, f1_samples};
use okr_kernels::{Gaussian, Kernel, LabelSets, Linear, Rows};

use crate::common::cv::{decode_f1, fit_then_decode, quick_cv};
use crate::common::data::dense_or_sparse;
use crate::common::data::{LoadedData, load_mulan_or_standin};
use crate::common::plot::{Panel, Series, draw_png};
use crate::common::report::write_outputs;

/// Experiment name.
pub const NAME: &str = "rr-multilabel-full";
/// Data sets of the run.
pub const DATASETS: [&str; 2] = ["bibtex", "corel5k"];
/// Ranks of the grid.
pub const RANKS: [usize; 12] = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];

/// Table 5 (F1 x100) and Table 6 (fit s, decode s) of the paper.
fn published(dataset: &str, method: &str) -> Option<(f64, f64, f64)> {
    match (dataset, method) {
        ("bibtex", "iokr") => Some((44.0, 2.0, 13.0)),
        ("bibtex", "reduced-rank-iokr") => Some((43.8, 15.0, 4.0)),
        _ => None,
    }
}

/// Runs the experiment and writes `rr-multilabel-full.{md,json,png}`.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64) -> Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let cv = quick_cv(seed);
    let pb = ProgressBar::new(datasets.len() as u64 * (cv.steps() + 3 + RANKS.len() as u64));
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")?);
    let t0 = Instant::now();
    let mut records = Vec::new();
    let mut table = String::from(
        "| data set | method | c | λ | p | atoms | **test F1** | paper F1 (Table 5) | fit s | decode s | paper fit / decode s (Table 6) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut sweeps = String::new();
    let mut panels = Vec::new();
    for name in datasets {
        pb.set_message(format!("{name}: loading"));
        let data = load_mulan_or_standin(name, seed)?;
        let out = dense_or_sparse!(name, (&data.train.x, &data.test.x), |a, b| evaluate(&data, a, b, &cv, seed, &pb)?);
        records.extend(out.records);
        table.push_str(&out.rows);
        sweeps.push_str(&out.sweep_md);
        panels.push(out.panel);
    }
    pb.finish_and_clear();
    let total = t0.elapsed().as_secs_f64();
    draw_png(&out_dir.join(format!("{NAME}.png")), &panels, panels.len().max(1), (620, 440))?;
    let md = format!(
        "# `cargo xtask reproduce {NAME}`\n\n{NOTES}\n\nTotal run time {total:.0} s (2 threads; the machine was \
         shared with other jobs, so times are upper bounds).\n\n{table}\n## Test F1 and decode time against the rank\n\n\
         Not used for selection: every rank of the grid, refitted on the whole training split.\n{sweeps}\n\
         ![F1 against rank]({NAME}.png)\n\nRecords: `{NAME}.json`.\n"
    );
    write_outputs(out_dir, NAME, &records, &md)?;
    println!("{table}{sweeps}\ntotal {total:.0} s");
    Ok(())
}

const NOTES: &str = "\
Full training splits of Bibtex (4880 / 2515) and Corel5k (4500 / 500, Mulan's version: 499 \
features, 374 labels, not the paper's 37152 / 260). Gaussian input kernel `exp(-γ||x - x'||²)`, \
`γ = c / median ||x - x'||²`, Gaussian output kernel with σ² = mean labels per point, ridge \
`(K + nλI)`, candidates = the distinct training label sets. IOKR: (c, λ) by 3-fold CV as in \
`reproduce quick`. Reduced rank: IOKR's c; λ ∈ {λ/10, λ, 10λ} and p by one 80/20 split of the \
training set (validation example-based F1).";

struct Outcome {
    records: Vec<MetricRecord>,
    rows: String,
    sweep_md: String,
    panel: Panel,
}

fn evaluate<X>(
    data: &LoadedData,
    x: &X,
    x_test: &X,
    cv: &crate::common::cv::GaussianIokrCv,
    seed: u64,
    pb: &ProgressBar,
) -> Result<Outcome>
where
    X: Rows,
    Linear: Kernel<X>,
    Gaussian: Kernel<X>,
{
    let LoadedData { name, train, test, stand_in } = data;
    let y = &train.y;
    let ky = Gaussian::from_sigma2(y.mean_cardinality().max(f64::MIN_POSITIVE))?;
    pb.set_message(format!("{name}: IOKR cross-validation"));
    let choice = cv.run(x, y, &ky, pb)?;
    let kx = Gaussian::new(choice.gamma())?;

    // Reduced rank: λ and p on one 80/20 split.
    pb.set_message(format!("{name}: reduced-rank validation"));
    let lambdas = [choice.lambda() / 10.0, choice.lambda(), choice.lambda() * 10.0];
    let (tr, va) = &ShuffleSplit::new(1, 0.2, seed).split(x.n_rows())?[0];
    let (x_tr, x_va, y_tr, y_va) = (x.select(tr), x.select(va), y.select(tr), y.select(va));
    let (cand_tr, _) = y_tr.unique();
    let p_max = *RANKS.last().unwrap();
    let path = ReducedRankIokr::params(kx.clone(), ky.clone())
        .rank(p_max)
        .check()?
        .fit_lambda_path::<X, LabelSets>(&x_tr, &y_tr, &lambdas)?;
    let mut best = (f64::NEG_INFINITY, 0.0, 0usize);
    for (model, &lambda) in path.iter().zip(&lambdas) {
        for &q in RANKS.iter().filter(|&&q| q <= model.rank()) {
            let m = model.truncated(q)?;
            let f1 = decode_f1(&m, &x_va, &y_va, &cand_tr)?;
            if f1 > best.0 {
                best = (f1, lambda, q);
            }
        }
    }
    drop(path);
    pb.inc(1);
    let (val_f1, rr_lambda, rr_rank) = best;

    // Refit both on the whole training split.
    let (cand, _) = y.unique();
    pb.set_message(format!("{name}: IOKR fit + decode"));
    let params = Iokr::params(kx.clone(), ky.clone()).lambda(choice.lambda());
    let (decoded, fit, decode) = fit_then_decode(|| Fit::<X, &LabelSets>::fit(&params, x, y), x_test, &cand)?;
    let (iokr_fit, iokr_dec) = (fit.wall, decode.wall);
    let iokr_f1 = f1_samples(&test.y, &cand.select(&decoded.best()))?;
    pb.inc(1);

    pb.set_message(format!("{name}: reduced-rank fit + decode"));
    let t = Instant::now();
    let rr = Fit::<X, &LabelSets>::fit(
        &ReducedRankIokr::params(kx.clone(), ky.clone()).rank(p_max).lambda1(rr_lambda),
        x,
        y,
    )?;
    let rr_fit_max = t.elapsed().as_secs_f64();
    pb.inc(1);
    // The sweep: every rank is a prefix of the largest fit; decode time per rank.
    let mut sweep = Vec::new();
    for &q in RANKS.iter().filter(|&&q| q <= rr.rank()) {
        let m = rr.truncated(q)?;
        let t = Instant::now();
        sweep.push((q, decode_f1(&m, x_test, &test.y, &cand)?, t.elapsed().as_secs_f64()));
        pb.inc(1);
    }
    let selected = sweep.iter().find(|s| s.0 == rr_rank).copied().expect("selected rank is in the sweep");
    // The fit time of the selected model alone: refit at that rank.
    let t = Instant::now();
    let _ = Fit::<X, &LabelSets>::fit(
        &ReducedRankIokr::params(kx.clone(), ky.clone()).rank(rr_rank).lambda1(rr_lambda),
        x,
        y,
    )?;
    let rr_fit = t.elapsed().as_secs_f64();

    let mut records = Vec::new();
    let mut rows = String::new();
    for (method, f1, fit_s, dec_s, lambda, rank, atoms) in [
        ("iokr", iokr_f1, iokr_fit, iokr_dec, choice.lambda(), None, cand.n_rows()),
        ("reduced-rank-iokr", selected.1, rr_fit, selected.2, rr_lambda, Some(rr_rank), rr_rank),
    ] {
        let paper = published(name, method);
        let rec = |metric: &str, value: f64| {
            let mut r = MetricRecord::new(NAME, name.as_str(), method, metric, value)
                .with_setting("n", train.n_samples())
                .with_setting("n_test", test.n_samples())
                .with_setting("c", choice.c())
                .with_setting("gamma", choice.gamma())
                .with_setting("lambda", lambda)
                .with_setting("n_candidates", cand.n_rows());
            if let Some(p) = rank {
                r = r.with_setting("rank", p).with_setting("val_f1_samples", val_f1);
            } else {
                r = r.with_setting("cv_f1_samples", choice.best_score());
            }
            r.stand_in = *stand_in;
            r
        };
        let mut f1_rec = rec("f1_samples", f1).with_seconds(fit_s + dec_s);
        let mut fit_rec = rec("fit_seconds", fit_s);
        let mut dec_rec = rec("decode_seconds", dec_s);
        if let Some((pf, pfit, pdec)) = paper {
            f1_rec = f1_rec.with_paper(pf / 100.0);
            fit_rec = fit_rec.with_paper(pfit);
            dec_rec = dec_rec.with_paper(pdec);
        }
        records.extend([f1_rec, fit_rec, dec_rec]);
        let _ = writeln!(
            rows,
            "| {name}{} | {method} | {} | {lambda:.0e} | {} | {atoms} | **{:.2}** | {} | {fit_s:.2} | {dec_s:.2} | {} |",
            if *stand_in { " (stand-in)" } else { "" },
            choice.c(),
            rank.map_or("∞".into(), |p| p.to_string()),
            f1 * 100.0,
            paper.map_or("-".into(), |p| format!("{:.1}", p.0)),
            paper.map_or("-".into(), |p| format!("{} / {}", p.1, p.2)),
        );
    }
    let mut sweep_md = format!(
        "\n### {name}\n\nIOKR: F1 {:.2}, decode {iokr_dec:.2} s over {} candidate atoms. Reduced rank (λ = {rr_lambda:.0e}, \
         fit at p = {p_max}: {rr_fit_max:.1} s):\n\n| p | test F1 | F1 − IOKR | decode s | decode speed-up |\n|---|---|---|---|---|\n",
        iokr_f1 * 100.0,
        cand.n_rows()
    );
    for &(q, f1, dec) in &sweep {
        let _ = writeln!(
            sweep_md,
            "| {q}{} | {:.2} | {:+.2} | {dec:.2} | {:.1}x |",
            if q == rr_rank { " (selected)" } else { "" },
            f1 * 100.0,
            (f1 - iokr_f1) * 100.0,
            iokr_dec / dec
        );
        records.push(
            MetricRecord::new(NAME, name.as_str(), "reduced-rank-iokr", "f1_samples", f1)
                .with_setting("n", train.n_samples())
                .with_setting("rank", q)
                .with_setting("lambda", rr_lambda)
                .with_setting("sweep", true)
                .with_seconds(dec),
        );
    }
    let series = vec![
        Series::line("reduced rank", 3, sweep.iter().map(|s| (s.0 as f64, 100.0 * s.1)).collect()),
        Series::thin("IOKR", 0, vec![(RANKS[0] as f64, 100.0 * iokr_f1), (p_max as f64, 100.0 * iokr_f1)]),
    ];
    let panel = Panel::new(
        format!("{name}: test F1 against rank"),
        ("rank p", "example-based F1 (x100)"),
        (true, false),
        series,
    );
    Ok(Outcome { records, rows, sweep_md, panel })
}
