//! `cargo xtask reproduce dask-scale`: Nystroem KRR on the Bookmarks-shaped
//! stand-in (a quarter of its size unless `--full`), fitted in one process
//! and through `okr.dask` on a LocalCluster of two single-threaded worker
//! processes, in one run: fit and decode seconds, F1 (equal), peak memory
//! per worker, bytes shipped. Writes `docs/results/dask-scale.{md,json}`.

pub mod files;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use okr_eval::MetricRecord;
use serde_json::Value;

use crate::common::process::load_average;
use crate::common::report::write_outputs;
use crate::python_tests::{python_with_okr, run, target_dir, workspace_root};

const RUN_PY: &str = include_str!("run.py");

/// Runs the comparison on the stand-in scaled by `scale` with `anchors` anchors.
pub fn run_experiment(out_dir: &Path, seed: u64, scale: f64, anchors: usize) -> Result<()> {
    let python = python_with_okr()?;
    let root = workspace_root();
    let dir = target_dir(&root).join("dask-scale");
    std::fs::create_dir_all(&dir)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(&cargo).args(["build", "--release", "--quiet", "-p", "okr-cli"]).current_dir(&root), "build okr")?;
    let okr = target_dir(&root).join("release/okr");
    run(
        Command::new(&okr)
            .args(["gen", "--preset", "bookmarks", "--scale", &scale.to_string(), "--seed", &seed.to_string(), "-o"])
            .arg(&dir),
        "okr gen --preset bookmarks",
    )?;
    let script = dir.join("run.py");
    std::fs::write(&script, RUN_PY)?;
    let json = dir.join("dask-scale.json");
    let load_before = load_average();
    run(
        Command::new(&python)
            .arg(&script)
            .arg(dir.join("bookmarks-standin-train.arff"))
            .arg(dir.join("bookmarks-standin-test.arff"))
            .args(["208", &anchors.to_string(), "4"])
            .arg(&json),
        "dask-scale run.py",
    )?;
    let load = (load_before, load_average());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json)?).context("dask-scale output")?;
    write(out_dir, &v, scale, load)
}

fn write(out_dir: &Path, v: &Value, scale: f64, load: (Option<f64>, Option<f64>)) -> Result<()> {
    let f = |p: &str| v.pointer(p).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let (s_fit, s_dec, d_fit, d_dec) =
        (f("/single/fit_s"), f("/single/decode_s"), f("/dask/fit_s"), f("/dask/decode_s"));
    let mut md = String::from("# `cargo xtask reproduce dask-scale`\n\n");
    let _ = writeln!(
        md,
        "Nystroem KRR on the Bookmarks-shaped stand-in scaled by {scale} (a seeded stand-in, not the real data: \
         {} training / {} test points, 2150 features, 208 labels), {} anchors, the training rows in {} \
         partitions. One process (2 threads) against `okr.dask` on a LocalCluster of 2 worker processes of \
         1 thread each (127.0.0.1), in one run; numpy's DGEMM rate {:.1} GFLOP/s.\n",
        f("/n_train"),
        f("/n_test"),
        f("/anchors"),
        f("/partitions"),
        f("/dgemm_gflops_numpy")
    );
    md.push_str("| run | fit s | decode s | total s | x one process | F1 (%) | peak RSS (MB) |\n|---|---|---|---|---|---|---|\n");
    let _ = writeln!(
        md,
        "| one process | {s_fit:.2} | {s_dec:.2} | {:.2} | 1.00 | {:.2} | {:.0} |",
        s_fit + s_dec,
        100.0 * f("/single/f1"),
        f("/single/peak_mb")
    );
    let workers: Vec<String> = v
        .pointer("/dask/worker_peak_mb")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |a| a.iter().filter_map(Value::as_f64).map(|m| format!("{m:.0}")).collect());
    let _ = writeln!(
        md,
        "| okr.dask, 2 workers | {d_fit:.2} | {d_dec:.2} | {:.2} | {:.2} | {:.2} | {} per worker |",
        d_fit + d_dec,
        (d_fit + d_dec) / (s_fit + s_dec),
        100.0 * f("/dask/f1"),
        workers.join(" / ")
    );
    let _ = writeln!(
        md,
        "\nShipped: the anchors' rows to the workers ({:.1} MB), at most {:.1} MB of statistics back \
         (`8 (m^2 + m k_p + n_p)` bytes per partition), the model once per worker for prediction. Largest \
         difference of the decision functions on 200 test points: {:.2e}. The data were persisted on the \
         workers before the timed fit. On a shared machine the times are upper bounds: the DGEMM rate \
         above shows the load (this machine measures 116-221 GFLOP/s when quiet); 1-minute load average {} \
         before and {} after on {} cores.",
        f("/dask/anchor_rows_bytes") / 1e6,
        f("/dask/statistics_bytes_upper_bound") / 1e6,
        f("/max_abs_decision_diff"),
        load.0.map_or_else(|| "unknown".to_string(), |l| format!("{l:.2}")),
        load.1.map_or_else(|| "unknown".to_string(), |l| format!("{l:.2}")),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut recs = Vec::new();
    for (method, fit, dec, f1) in
        [("one-process", s_fit, s_dec, f("/single/f1")), ("dask-2-workers", d_fit, d_dec, f("/dask/f1"))]
    {
        let mut r = MetricRecord::new("dask-scale", "bookmarks-standin", method, "f1_samples", f1);
        r.stand_in = true;
        r.seconds = Some(fit + dec);
        r.setting.insert("fit_seconds".into(), fit.into());
        r.setting.insert("decode_seconds".into(), dec.into());
        r.setting.insert("scale".into(), scale.into());
        recs.push(r);
    }
    write_outputs(out_dir, "dask-scale", &recs, &md)
}
