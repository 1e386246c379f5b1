//! `cargo xtask reproduce quick`: IOKR on the six small Mulan data sets,
//! hyper-parameters chosen by okr's own K-fold cross-validation on the
//! training split, test F1 beside the published IOKR figures.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use okr_estimators::Fit;
use okr_estimators::Iokr;
use okr_eval::{Dataset, MetricRecord, f1_macro, f1_micro, f1_samples, hamming_loss};
use okr_kernels::{Gaussian, Kernel, LabelSets, Linear, Rows};

use crate::common::cv::{GaussianIokrCv, fit_then_decode, quick_cv};
use crate::common::data::dense_or_sparse;
use crate::common::data::{LoadedData, load_mulan_or_standin, standardized_features};
use crate::common::report::{PaperValue, write_results};

/// Data sets of the quick run, in order.
pub const DATASETS: [&str; 6] = ["bibtex", "corel5k", "yeast", "scene", "emotions", "enron"];

/// Published IOKR test F1 (example-based, x100) for the data sets of the quick run.
pub fn published(dataset: &str) -> Vec<PaperValue> {
    match dataset {
        "bibtex" => vec![
            PaperValue { value: 44.0, source: "Brogat-Motte et al. 2022, Table 5" },
            PaperValue { value: 44.9, source: "El Ahmad et al., SISOKR poster" },
        ],
        _ => Vec::new(),
    }
}

/// One data set's outcome.
pub struct QuickRow {
    /// Records written to `quick.json`.
    pub records: Vec<MetricRecord>,
    /// Mean validation F1 over the grid, rendered under the table.
    pub grid_md: String,
}

/// Runs the quick experiment on `datasets` and writes `quick.{json,md}` into `out_dir`.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64) -> Result<()> {
    let cv = quick_cv(seed);
    let pb = ProgressBar::new(datasets.len() as u64 * (cv.steps() + 2));
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")?);
    let mut records = Vec::new();
    let mut grids = String::from(
        "\n\n## Cross-validation grids\n\nMean validation example-based F1 (x100) over the folds; \
         rows are width multipliers `c`, columns `lambda`; the selection is in bold.\n",
    );
    for name in datasets {
        pb.set_message(format!("{name}: loading"));
        let data = load_mulan_or_standin(name, seed)?;
        pb.inc(1);
        pb.set_message(format!("{name}: cross-validation"));
        let row = run_dataset(&data, &cv, &pb)?;
        pb.inc(1);
        records.extend(row.records);
        grids.push_str(&row.grid_md);
    }
    pb.finish_and_clear();
    let notes = format!("{QUICK_NOTES}{grids}");
    let table = write_results(out_dir, "quick", &records, &|d| published(d), &notes)?;
    println!("{table}");
    Ok(())
}

const QUICK_NOTES: &str = "\
IOKR with a Gaussian input kernel `exp(-gamma ||x - x'||^2)` and a Gaussian output kernel \
`exp(-||y - y'||^2 / (2 l))` on label vectors, `l` the mean number of labels per training \
point (the reduced-rank paper's `sigma^2_output`). Ridge `(K + n lambda I)`. Candidates: the \
distinct training label sets. `gamma = c / median ||x - x'||^2` and `lambda` are chosen by \
3-fold cross-validation of example-based F1 on the training split only, over \
`c in {1/8, ..., 8}` and `lambda in {1e-8, ..., 1e-1}`; then IOKR is refitted on the whole \
training split and evaluated once on the test split. Features that are not binary are \
standardized with training statistics (emotions, yeast, scene); binary ones are used raw. \
Published figures exist only for Bibtex; the reduced-rank paper's Corel5k is another version \
of the data (37152 features, 260 labels), so no Corel5k figure is set beside ours.";

fn run_dataset(data: &LoadedData, cv: &GaussianIokrCv, pb: &ProgressBar) -> Result<QuickRow> {
    let LoadedData { name, train, test, stand_in } = data;
    let sigma2_y = train.y.mean_cardinality().max(f64::MIN_POSITIVE);
    let ky = Gaussian::from_sigma2(sigma2_y)?;
    let binary = okr_eval::is_binary(&train.x);
    // Dense real-valued features are standardized; a sparse file keeps its raw values.
    let (train_x, test_x) = standardized_features(data)?;
    let mut out =
        dense_or_sparse!(name, (&train_x, &test_x), |a, b| evaluate(name, a, b, train, test, &ky, !binary, cv, pb)?);
    for r in &mut out.records {
        r.stand_in = *stand_in;
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn evaluate<X>(
    name: &str,
    x_train: &X,
    x_test: &X,
    train: &Dataset,
    test: &Dataset,
    ky: &Gaussian,
    standardized: bool,
    cv: &GaussianIokrCv,
    pb: &ProgressBar,
) -> Result<QuickRow>
where
    X: Rows,
    Linear: Kernel<X>,
    Gaussian: Kernel<X>,
{
    let t_cv = Instant::now();
    let choice = cv.run(x_train, &train.y, ky, pb)?;
    let cv_seconds = t_cv.elapsed().as_secs_f64();
    pb.set_message(format!("{name}: fit + decode"));
    let kx = Gaussian::new(choice.gamma())?;
    let params = Iokr::params(kx, ky.clone()).lambda(choice.lambda());
    let (cand, _) = train.y.unique();
    let (decoded, fit, decode) =
        fit_then_decode(|| Fit::<X, &LabelSets>::fit(&params, x_train, &train.y), x_test, &cand)?;
    let (pred, fit_seconds, decode_seconds) = (cand.select(&decoded.best()), fit.wall, decode.wall);

    let base = |metric: &str, value: f64| {
        MetricRecord::new("quick", name, "iokr", metric, value)
            .with_setting("n", train.n_samples())
            .with_setting("n_test", test.n_samples())
            .with_setting("n_candidates", cand.n_rows())
            .with_setting("c", choice.c())
            .with_setting("gamma", choice.gamma())
            .with_setting("lambda", choice.lambda())
            .with_setting("cv_folds", cv.folds)
            .with_setting("cv_f1_samples", choice.best_score())
            .with_setting("median_sq_dist", choice.median_sq_dist)
            .with_setting("standardized", standardized)
    };
    let mut f1 = base("f1_samples", f1_samples(&test.y, &pred)?).with_seconds(fit_seconds + decode_seconds);
    if let Some(p) = published(name).first() {
        f1 = f1.with_paper(p.value / 100.0);
    }
    let records = vec![
        f1,
        base("f1_micro", f1_micro(&test.y, &pred)?),
        base("f1_macro", f1_macro(&test.y, &pred)?),
        base("hamming", hamming_loss(&test.y, &pred)?),
        base("fit_seconds", fit_seconds),
        base("decode_seconds", decode_seconds),
        base("cv_seconds", cv_seconds),
    ];
    let mut grid_md = format!("\n### {name}\n\n| c \\ lambda |");
    for l in &cv.lambdas {
        grid_md.push_str(&format!(" {l:.0e} |"));
    }
    grid_md.push_str(&format!("\n|---|{}\n", "---|".repeat(cv.lambdas.len())));
    for (c, row) in cv.widths.iter().zip(&choice.mean) {
        grid_md.push_str(&format!("| {c} |"));
        for (l, v) in cv.lambdas.iter().zip(row) {
            let cell = format!("{:.2}", v * 100.0);
            if *c == choice.c() && *l == choice.lambda() {
                grid_md.push_str(&format!(" **{cell}** |"));
            } else {
                grid_md.push_str(&format!(" {cell} |"));
            }
        }
        grid_md.push('\n');
    }
    Ok(QuickRow { records, grid_md })
}
