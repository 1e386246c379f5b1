//! `cargo xtask reproduce tune-estimators`: what `okr tune` buys over the
//! defaults of `okr fit` for the estimators other than IOKR, on the small
//! Mulan data sets: test F1 at the default width and ridge beside test F1 at
//! the K-fold choice of `okr_decode::select::RefitSearch`, and what the search costs.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use okr_decode::CandidateDecoder;
use okr_decode::select::RefitSearch;
use okr_estimators::nystroem::Anchors;
use okr_estimators::persist::{EstimatorSpec, OutputModel};
use okr_estimators::select::WidthLineSearch;
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_eval::{Features, KFold, MetricRecord, f1_samples};
use okr_kernels::{Gaussian, KernelSpec, LabelSets, Rows};

use crate::common::data::{LoadedData, load_mulan_or_standin, standardized_features};
use crate::common::process::MachineState;
use crate::common::report::write_outputs;

/// Data sets of the run (all below the 2000 rows at which `okr tune` screens widths on a subset).
pub const DATASETS: [&str; 4] = ["emotions", "scene", "yeast", "enron"];

/// `okr fit`'s default ridge for the estimators other than IOKR.
const DEFAULT_LAMBDA: f64 = okr::defaults::LAMBDA;
/// The median heuristic's width multiplier, `gamma = 1 / (2 median)`; the line search starts there.
const DEFAULT_WIDTH: f64 = 0.5;
/// `okr tune`'s default ridges.
const LAMBDAS: [f64; 8] = okr::defaults::LOO_LAMBDAS;
/// Folds of the search (`okr tune`'s default).
const FOLDS: usize = 3;

/// An estimator's specification at a ridge.
type SpecAt = Box<dyn Fn(f64) -> EstimatorSpec>;

/// The estimators compared, with the flags they are fitted with, as `okr fit` would be called.
fn estimators(seed: u64) -> Vec<(&'static str, &'static str, SpecAt)> {
    let uniform = |m| Some(SketchSpec::new(SketchKind::Uniform, m));
    vec![
        (
            "nystroem",
            "--anchors 300",
            Box::new(move |lambda| EstimatorSpec::Nystroem { lambda, anchors: Anchors::Uniform(300), seed }),
        ),
        (
            "sisokr",
            "--input-sketch uniform:400 --output-sketch uniform:200",
            Box::new(move |lambda| EstimatorSpec::Sketched {
                lambda,
                input_sketch: uniform(400),
                output_sketch: uniform(200),
                seed,
            }),
        ),
        (
            "reduced-rank",
            "--rank 10",
            Box::new(|lambda| EstimatorSpec::ReducedRank { rank: 10, lambda1: lambda, lambda2: lambda }),
        ),
    ]
}

const NOTES: &str = "\
What `okr tune` buys over `okr fit`'s defaults for the estimators it refits (everything but \
IOKR, which has its own closed-form path). Default: the median heuristic \
`gamma = 1 / (2 median ||x - x'||^2)` (width multiplier c = 0.5) and `lambda = 1e-3`, \
`okr fit`'s defaults for these estimators. Tuned: `okr tune`'s search, i.e. \
`okr_decode::select::RefitSearch` inside the width line search from c = 0.5 (factors of 2, \
until the best width is inside), ridges 1e-8 .. 1e-1, 3-fold cross-validated example-based F1 \
of the decoded training label sets on the training split only (seeded folds), then one refit \
on the whole training split. Both are evaluated once on the test split. Input kernel Gaussian, \
output kernel Gaussian with `sigma^2` the mean number of labels per training point; dense \
non-binary features standardized with training statistics; candidates the distinct training \
label sets. The other flags are fixed as in the `flags` column. `search s` is the wall time of \
the whole search (every fold, width and ridge), `fits` the number of fits in it; on a 2-core \
machine, one run. No published figure: the papers do not tune these estimators this way.";

/// Runs the comparison on `datasets` and writes `tune-estimators.{json,md}`.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64) -> Result<()> {
    let ests = estimators(seed);
    let pb = ProgressBar::new((datasets.len() * ests.len()) as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")?);
    let before = MachineState::now();
    let mut records = Vec::new();
    for name in datasets {
        pb.set_message(format!("{name}: loading"));
        let data = load_mulan_or_standin(name, seed)?;
        let (x, x_test) = standardized_features(&data)?;
        let (ky, _, _) = okr::resolve::label_output_kernel(&okr::KernelRecipe::default(), &data.train.y)?;
        for (est, flags, spec) in &ests {
            pb.set_message(format!("{name}: {est}"));
            records.extend(compare(&data, &x, &x_test, &ky, est, flags, spec.as_ref(), seed)?);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let machine = before.describe(&MachineState::now());
    let table = render(&records);
    let md = format!(
        "# `cargo xtask reproduce tune-estimators`\n\n{table}\n{NOTES}\n\nTimes: {machine}.\n\n\
         Records: `tune-estimators.json` (one per test F1; fractions, not percentages).\n"
    );
    write_outputs(out_dir, "tune-estimators", &records, &md)?;
    println!("{table}");
    Ok(())
}

/// One row per data set and estimator: default and tuned test F1 side by side.
fn render(records: &[MetricRecord]) -> String {
    let setting = |r: &MetricRecord, key: &str| r.setting.get(key).cloned().unwrap_or_default();
    let num = |r: &MetricRecord, key: &str| setting(r, key).as_f64().unwrap_or(f64::NAN);
    let mut out = String::from(
        "| data set | estimator | flags | test F1 default | test F1 tuned | tuned - default | chosen c, lambda | \
         CV F1 | widths searched | fits | search s |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for pair in records.chunks(2) {
        let [default, tuned] = pair else { continue };
        let est = tuned.method.trim_end_matches("-tuned");
        out.push_str(&format!(
            "| {} | {est} | `{}` | {:.2} | **{:.2}** | {:+.2} | {}, {:e} | {:.2} | {} | {} | {:.1} |\n",
            tuned.dataset,
            setting(tuned, "flags").as_str().unwrap_or_default(),
            100.0 * default.value,
            100.0 * tuned.value,
            100.0 * (tuned.value - default.value),
            num(tuned, "c"),
            num(tuned, "lambda"),
            100.0 * num(tuned, "cv_f1_samples"),
            setting(tuned, "widths_searched"),
            setting(tuned, "fits"),
            num(tuned, "search_seconds"),
        ));
    }
    let gains: Vec<f64> = records
        .chunks(2)
        .filter_map(|p| match p {
            [d, t] => Some(100.0 * (t.value - d.value)),
            _ => None,
        })
        .collect();
    let better = gains.iter().filter(|g| **g > 0.0).count();
    let mean = gains.iter().sum::<f64>() / gains.len().max(1) as f64;
    out.push_str(&format!(
        "\nTuned above the defaults in {better} of {} rows; mean test F1 gain {mean:+.2} points \
         (the search sees the training split only).\n",
        gains.len()
    ));
    out
}

/// Test F1 of one estimator at the defaults and at the search's choice.
#[allow(clippy::too_many_arguments)]
fn compare(
    data: &LoadedData,
    x: &Features,
    x_test: &Features,
    ky: &KernelSpec,
    est: &str,
    flags: &str,
    spec: &dyn Fn(f64) -> EstimatorSpec,
    seed: u64,
) -> Result<Vec<MetricRecord>> {
    let y = &data.train.y;
    let fit = |x: &Features, y: &LabelSets, gamma: f64, lambda: f64| -> Result<OutputModel<LabelSets, KernelSpec>> {
        Ok(spec(lambda).fit(KernelSpec::from(Gaussian::new(gamma)?), ky.clone(), x, y)?)
    };
    let f1 = |t: &LabelSets, p: &LabelSets| -> Result<f64> { Ok(f1_samples(t, p)?) };
    let folds = KFold::new(FOLDS).shuffle(seed).split(x.n_rows())?;
    let start = Instant::now();
    let mut fits = 0usize;
    let choice = WidthLineSearch::new(DEFAULT_WIDTH).run(|widths: &[f64]| -> Result<_> {
        fits += widths.len() * LAMBDAS.len() * FOLDS;
        RefitSearch::new(widths.to_vec(), LAMBDAS.to_vec()).run(x, y, &folds, fit, f1, &mut || {})
    })?;
    let search_seconds = start.elapsed().as_secs_f64();

    let (candidates, _) = y.unique();
    let test_f1 = |c: f64, lambda: f64| -> Result<f64> {
        let model = fit(x, y, c / choice.median_sq_dist, lambda)?;
        let best = CandidateDecoder::new().decode(&model, x_test, &candidates)?.best();
        f1(&data.test.y, &candidates.select(&best))
    };
    let record = |method: String, value: f64, c: f64, lambda: f64| {
        MetricRecord::new("tune-estimators", &data.name, &method, "f1_samples", value)
            .with_setting("flags", flags)
            .with_setting("n", y.n_rows())
            .with_setting("n_test", data.test.n_samples())
            .with_setting("c", c)
            .with_setting("gamma", c / choice.median_sq_dist)
            .with_setting("lambda", lambda)
    };
    let mut default =
        record(format!("{est}-default"), test_f1(DEFAULT_WIDTH, DEFAULT_LAMBDA)?, DEFAULT_WIDTH, DEFAULT_LAMBDA);
    let mut tuned = record(format!("{est}-tuned"), test_f1(choice.c(), choice.lambda())?, choice.c(), choice.lambda())
        .with_setting("cv_f1_samples", choice.best_score())
        .with_setting("search_seconds", search_seconds)
        .with_setting("fits", fits)
        .with_setting("widths_searched", choice.widths.len());
    for r in [&mut default, &mut tuned] {
        r.stand_in = data.stand_in;
    }
    Ok(vec![default, tuned])
}
