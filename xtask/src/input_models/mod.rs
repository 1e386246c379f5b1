//! `cargo xtask reproduce input-models` (issue 36): bring your own input
//! model. On Bibtex, Corel5k (label sets, example-based F1) and USPS (the
//! bottom half of a digit from its top half: vector outputs, RBF loss),
//! scikit-learn's ridge, MLP and gradient boosting regress a sketched output
//! basis (`okr.SurrogateRegressor`) beside okr's IOKR and SISOKR; fit,
//! predict and decode seconds and the metric, every method in its own
//! process (`bench.py`), in one run. In the same run, the score GEMM of
//! decoding from coordinates (okr-decode's `CoordinateDecoder`, profiled
//! phase "score GEMM") is measured against faer's DGEMM rate, from Bibtex's
//! size up. Writes docs/results/input-models.{md,json}.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use faer::Mat;
use okr_decode::{CandidateDecoder, CoordinateDecoder};
use okr_estimators::output_basis::{BasisKind, OutputBasis};
use okr_eval::MetricRecord;
use okr_kernels::{Gaussian, LabelSets, Rows};
use okr_linalg::profile;
use serde_json::Value;

use crate::common::process::{gemm_rate, load_average};
use crate::common::report::write_outputs;
use crate::python_tests::{bench, bench_script};

const BENCH_PY: &str = include_str!("bench.py");
const NAME: &str = "input-models";

/// One GEMM-rate measurement of decoding from coordinates.
struct GemmRow {
    dataset: &'static str,
    basis: String,
    n_test: usize,
    n_candidates: usize,
    r: usize,
    gflops: f64,
    score_seconds: f64,
    decode_seconds: f64,
}

fn labels(name: &str, n_labels: usize, split: &str) -> Result<LabelSets> {
    // Mulan spells Corel5k's files with a capital C.
    let file = if name == "corel5k" { "Corel5k" } else { name };
    let path = okr_eval::data_dir().join(format!("{name}/{file}-{split}.arff"));
    Ok(okr_eval::read_arff(&path, n_labels).with_context(|| format!("read {}", path.display()))?.y)
}

/// The score GEMM rate of decoding the coordinates of the test label sets
/// (repeated `times`) against the distinct training label sets.
fn score_gemm(dataset: &'static str, n_labels: usize) -> Result<Vec<GemmRow>> {
    let (y, yt) = (labels(dataset, n_labels, "train")?, labels(dataset, n_labels, "test")?);
    let kernel = Gaussian::from_sigma2(y.mean_cardinality().max(1.0))?;
    let mut rows = Vec::new();
    for (name, kind) in [("sketch-800", BasisKind::Sketch("uniform:800".parse()?)), ("exact", BasisKind::Exact)] {
        let basis = OutputBasis::params(kernel.clone()).kind(kind).fit(&y)?;
        let z = basis.transform(&yt)?;
        let n_c = okr_surrogate_distinct(&basis);
        for times in [1usize, 4] {
            let zt = z.values();
            let big = Mat::from_fn(zt.nrows() * times, zt.ncols(), |i, j| zt[(i % zt.nrows(), j)]);
            let coords = okr::surrogate::Coordinates::of_basis(big, basis.id())?;
            let dec = CoordinateDecoder::from(CandidateDecoder::new());
            let start = Instant::now();
            let (decoded, phases) = profile::collect(|| dec.decode_training(&basis, &coords));
            let decode_seconds = start.elapsed().as_secs_f64();
            decoded?;
            let gemm = phases.iter().find(|p| p.name == "score GEMM").context("no score GEMM phase")?;
            rows.push(GemmRow {
                dataset,
                basis: name.into(),
                n_test: coords.n_rows(),
                n_candidates: n_c,
                r: basis.n_components(),
                gflops: gemm.gflops(),
                score_seconds: gemm.seconds,
                decode_seconds,
            });
        }
    }
    Ok(rows)
}

fn okr_surrogate_distinct(basis: &OutputBasis<LabelSets, Gaussian>) -> usize {
    okr::surrogate::CoordinateBasis::distinct_outputs(basis).n_rows()
}

/// Runs the experiment and writes `docs/results/input-models.{md,json}`.
pub fn run_experiment(out_dir: &Path, seed: u64) -> Result<()> {
    let (python, script) = bench_script(NAME, BENCH_PY)?;
    let load_before = load_average();
    let dgemm_before = gemm_rate::<f64>();
    eprintln!("{NAME}: score GEMM of decoding from coordinates");
    let mut gemm_rows = score_gemm("bibtex", 159)?;
    gemm_rows.extend(score_gemm("corel5k", 374)?);
    let dgemm_after_gemm = gemm_rate::<f64>();
    let numpy_gemm = bench(&python, &script, "gemm", Path::new(""))?["gflops"].as_f64().unwrap_or(f64::NAN);
    let mut results: Vec<(String, Value)> = Vec::new();
    let mut failures = Vec::new();
    for dataset in ["bibtex", "corel5k", "usps"] {
        for method in ["okr-iokr", "okr-sisokr", "ridge", "mlp", "hgb"] {
            eprintln!("{NAME}: {dataset} {method}");
            match bench(&python, &script, method, Path::new(dataset)) {
                Ok(v) => results.push((dataset.into(), v)),
                Err(e) => failures.push(format!("{dataset} {method}: {e:#}")),
            }
        }
    }
    let dgemm_after = gemm_rate::<f64>();
    let load_after = load_average();
    write(
        out_dir,
        &gemm_rows,
        &results,
        &failures,
        (dgemm_before, dgemm_after_gemm, dgemm_after, numpy_gemm),
        (load_before, load_after),
        seed,
    )
}

fn show(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".into(), |l| format!("{l:.2}"))
}

fn write(
    out_dir: &Path,
    gemm_rows: &[GemmRow],
    results: &[(String, Value)],
    failures: &[String],
    dgemm: (f64, f64, f64, f64),
    load: (Option<f64>, Option<f64>),
    seed: u64,
) -> Result<()> {
    let mut md = format!("# `cargo xtask reproduce {NAME}`\n\n");
    let _ = writeln!(
        md,
        "Bring your own input model (issue 36, docs/bring-your-own-model.md): scikit-learn regressors \
         on a sketched output basis (`okr.SurrogateRegressor` with `okr.OutputEmbedding(\"sketch\")`, \
         uniform sub-sampling of the training outputs as DSOKR, Gaussian output kernel) beside okr's \
         IOKR and SISOKR. One run: faer's DGEMM rate {:.1} GFLOP/s before, {:.1} after the GEMM \
         measurements and {:.1} at the end (numpy's {:.1}); 1-minute load average {} before and {} after \
         ({} cores).\n",
        dgemm.0,
        dgemm.1,
        dgemm.2,
        dgemm.3,
        show(load.0),
        show(load.1),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    md.push_str("## Score GEMM of decoding from coordinates\n\n");
    let ref_rate = dgemm.0.max(dgemm.1);
    let _ = writeln!(
        md,
        "The coordinates of the test label sets (repeated 1 and 4 times) decoded against the distinct \
         training label sets by `CoordinateDecoder` (f64, 1 GiB budget); the \"score GEMM\" phase's \
         rate against the better of the two DGEMM rates measured around it ({ref_rate:.1} GFLOP/s). \
         Acceptance: at least 70% from Bibtex's size up.\n"
    );
    md.push_str(
        "| data | basis | test rows | candidates | r | score GEMM GFLOP/s | of DGEMM | score GEMM s | decode s |\n",
    );
    md.push_str("|---|---|---|---|---|---|---|---|---|\n");
    let mut records = Vec::new();
    for g in gemm_rows {
        let frac = g.gflops / ref_rate;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.1} | {:.0}% | {:.3} | {:.3} |",
            g.dataset,
            g.basis,
            g.n_test,
            g.n_candidates,
            g.r,
            g.gflops,
            100.0 * frac,
            g.score_seconds,
            g.decode_seconds
        );
        let mut rec =
            MetricRecord::new(NAME, g.dataset, format!("coordinates-{}", g.basis), "score_gemm_fraction", frac);
        rec.seconds = Some(g.decode_seconds);
        for (k, v) in [
            ("n_test", Value::from(g.n_test)),
            ("n_candidates", g.n_candidates.into()),
            ("r", g.r.into()),
            ("score_gemm_gflops", g.gflops.into()),
            ("dgemm_gflops", ref_rate.into()),
        ] {
            rec.setting.insert(k.into(), v);
        }
        records.push(rec);
    }
    md.push_str("\n## Input models\n\n");
    md.push_str(
        "Ridge (`alpha = 1`) and an MLP (one hidden layer of 512, 60 Adam epochs) regress 800 \
         coordinates; gradient boosting (`HistGradientBoostingRegressor(max_iter=30)` per coordinate \
         through `MultiOutputRegressor`) 32. IOKR with okr's defaults (median-heuristic input width, \
         lambda by leave-one-out F1 on label sets, 1e-3 on vectors); SISOKR with a uniform input sketch of \
         1500 and a Gaussian output sketch of 800. All share the output kernel (Gaussian, sigma^2 = mean \
         labels per point; USPS: the median heuristic). Features as given (dense). Predict = the regressor's \
         coordinates; decode = okr's decoder (for IOKR / SISOKR: their whole `predict`).\n\n",
    );
    md.push_str("| data | method | basis | fit s | predict s | decode s | metric | value |\n|---|---|---|---|---|---|---|---|\n");
    for (dataset, v) in results {
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let method = v["method"].as_str().unwrap_or("?");
        let metric = v["metric"].as_str().unwrap_or("?");
        let shown = if metric == "f1_samples" { 100.0 * f("value") } else { f("value") };
        let _ = writeln!(
            md,
            "| {dataset} | {method} | {} | {:.2} | {:.2} | {:.2} | {} | {:.4} |",
            v["basis"].as_u64().map_or(String::new(), |b| b.to_string()),
            f("fit_s"),
            f("predict_s"),
            f("decode_s"),
            if metric == "f1_samples" { "F1 (%)" } else { metric },
            shown
        );
        let mut rec = MetricRecord::new(NAME, dataset.as_str(), method, metric, f("value"));
        rec.seconds = Some(f("fit_s") + f("predict_s") + f("decode_s"));
        for k in ["fit_s", "predict_s", "decode_s", "n_candidates", "basis"] {
            if !v[k].is_null() {
                rec.setting.insert(k.into(), v[k].clone());
            }
        }
        rec.setting.insert("seed".into(), seed.into());
        rec.setting.insert("dgemm_gflops".into(), dgemm.0.into());
        records.push(rec);
    }
    for f in failures {
        let _ = writeln!(md, "\nNot measured: {f}");
    }
    write_outputs(out_dir, NAME, &records, &md)
}
