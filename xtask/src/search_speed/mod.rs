//! `cargo xtask reproduce search-speed` (issue 37, item 1): okr.SearchCV
//! against scikit-learn's GridSearchCV refitting okr.IOKR, on the same grid
//! (okr's default ridges, three input widths) and the same three folds
//! (`SearchCV.split`), on Bibtex's training split. One Python process per
//! data set times both searches one after the other (`bench.py`) and checks
//! that they score every cell alike; faer's DGEMM rate and the load are
//! measured around it. Writes docs/results/search-speed.{md,json}.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use okr_eval::MetricRecord;
use serde_json::Value;

use crate::common::process::{gemm_rate, load_average};
use crate::common::report::write_outputs;
use crate::python_tests::{bench, bench_script};

const BENCH_PY: &str = include_str!("bench.py");
const NAME: &str = "search-speed";

/// The data sets searched.
pub const DATASETS: [&str; 1] = ["bibtex"];

fn show(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".into(), |l| format!("{l:.2}"))
}

/// Runs the searches and writes `docs/results/search-speed.{md,json}`.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64) -> Result<()> {
    let (python, script) = bench_script(NAME, BENCH_PY)?;
    let load_before = load_average();
    let dgemm_before = gemm_rate::<f64>();
    let mut results = Vec::new();
    for dataset in datasets {
        eprintln!("{NAME}: {dataset}");
        let v = bench(&python, &script, dataset, Path::new("")).with_context(|| format!("{NAME} on {dataset}"))?;
        results.push(v);
    }
    let dgemm_after = gemm_rate::<f64>();
    let load_after = load_average();

    let mut md = format!("# `cargo xtask reproduce {NAME}`\n\n");
    let _ = writeln!(
        md,
        "Issue 37: `okr.SearchCV` (okr tune's search: per fold and input width, one eigendecomposition of \
         the fold's Gram scores every ridge) against scikit-learn's `GridSearchCV` refitting `okr.IOKR` per \
         cell and fold (`n_jobs=1`; okr's threads run inside every fit, as inside SearchCV), on the same grid \
         (okr's default ridges x input widths 0.5, 1 and 2 times the median heuristic) and the same three \
         folds (`SearchCV.split`), scored by example-based F1 on each fold's held-out rows. One run, one \
         process per data set, the searches one after the other: faer's DGEMM rate {dgemm_before:.1} \
         GFLOP/s before and {dgemm_after:.1} after; 1-minute load average {} before and {} after ({} \
         cores).\n",
        show(load_before),
        show(load_after),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    md.push_str(
        "| data | n | features | labels | cells x folds | SearchCV s | GridSearchCV s | speed-up | largest score difference | same choice |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut records = Vec::new();
    for v in &results {
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let u = |k: &str| v[k].as_u64().unwrap_or(0);
        let dataset = v["dataset"].as_str().unwrap_or("?");
        let speedup = f("sklearn_seconds") / f("okr_seconds");
        let same = v["okr_best"] == v["sklearn_best"];
        let _ = writeln!(
            md,
            "| {dataset} | {} | {} | {} | {} x {} | {:.2} | {:.2} | {:.2}x | {:.1e} | {} |",
            u("n"),
            u("d"),
            u("n_labels"),
            u("cells"),
            u("folds"),
            f("okr_seconds"),
            f("sklearn_seconds"),
            speedup,
            f("max_score_diff"),
            if same { "yes" } else { "no" }
        );
        let mut rec = MetricRecord::new(NAME, dataset, "searchcv-vs-gridsearchcv", "speedup", speedup);
        rec.seconds = Some(f("okr_seconds"));
        for k in [
            "okr_seconds",
            "sklearn_seconds",
            "okr_cpu_seconds",
            "sklearn_cpu_seconds",
            "max_score_diff",
            "score_diff_by_lambda",
            "cells",
            "folds",
            "okr_best",
            "sklearn_best",
            "load_before_okr",
            "load_before_sklearn",
            "load_end",
        ] {
            rec.setting.insert(k.into(), v[k].clone());
        }
        rec.setting.insert("seed".into(), seed.into());
        rec.setting.insert("dgemm_gflops".into(), Value::from(dgemm_before.max(dgemm_after)));
        records.push(rec);
    }
    md.push_str(
        "\nThe score difference is the largest over the grid between the two searches' mean fold F1 \
         (fractions); the choice is the cell of the best mean score. CPU seconds count okr's threads; \
         the load is the 1-minute average as each search started and at the end.\n\n\
         | data | SearchCV CPU s | GridSearchCV CPU s | CPU ratio | load at SearchCV / GridSearchCV / end | largest score difference per ridge |\n\
         |---|---|---|---|---|---|\n",
    );
    for v in &results {
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let per_lambda = v["score_diff_by_lambda"]
            .as_object()
            .map(|m| m.iter().map(|(l, d)| format!("{l}: {:.1e}", d.as_f64().unwrap_or(f64::NAN))).collect::<Vec<_>>())
            .unwrap_or_default()
            .join(", ");
        let _ = writeln!(
            md,
            "| {} | {:.1} | {:.1} | {:.2}x | {:.2} / {:.2} / {:.2} | {per_lambda} |",
            v["dataset"].as_str().unwrap_or("?"),
            f("okr_cpu_seconds"),
            f("sklearn_cpu_seconds"),
            f("sklearn_cpu_seconds") / f("okr_cpu_seconds"),
            f("load_before_okr"),
            f("load_before_sklearn"),
            f("load_end"),
        );
    }
    write_outputs(out_dir, NAME, &records, &md)
}
