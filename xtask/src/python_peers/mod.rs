//! `cargo xtask reproduce python-vs-peers`: IOKR and SISOKR on Bibtex
//! through okr's Python package, beside the same computations written with
//! numpy / scipy / scikit-learn and in `structured-predictions` (installed
//! from PyPI into its own environment, `target/peers-venv`), and beside the
//! okr CLI's fit + decode: fit and decode seconds, F1, peak memory. Every
//! method runs in its own process (`bench.py`), in one run, with numpy's
//! DGEMM rate measured before and after.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use okr_eval::MetricRecord;
use serde_json::Value;

use crate::common::process::load_average;
use crate::common::report::write_outputs;
use crate::python_tests::{bench, python_with_okr, run, target_dir, virtual_env, workspace_root};

/// The benchmark script (one method per process).
const BENCH_PY: &str = include_str!("bench.py");

/// Hyper-parameters: the README's Bibtex setting.
const LAMBDA: f64 = 1e-5;
const GAMMA: f64 = 4.6e-3;
const OUTPUT_GAMMA: f64 = 1.0 / (2.0 * 2.4);
const INPUT_SKETCH: usize = 1500;
const OUTPUT_SKETCH: usize = 800;

/// The peers' environment: the same numpy stack, Cython for
/// structured-predictions' tree extensions, and what its modules import.
const PEER_REQUIREMENTS: &str = "numpy==2.4.6\nscipy==1.17.1\nscikit-learn==1.9.1\nCython==3.1.4\npandas==2.3.3\nliac-arff==2.5.0\nsetuptools==80.9.0\n";
const PEER_PACKAGE: &str = "structured-predictions==0.1.3";

/// One method's measurement.
struct Measured {
    method: String,
    fit_s: f64,
    decode_s: f64,
    f1: f64,
    peak_mb: Option<f64>,
}

fn measured(v: &Value) -> Result<Measured> {
    let f = |k: &str| v[k].as_f64().with_context(|| format!("missing {k} in {v}"));
    Ok(Measured {
        method: v["method"].as_str().unwrap_or("?").to_string(),
        fit_s: f("fit_s")?,
        decode_s: f("decode_s")?,
        f1: f("f1")?,
        peak_mb: v["peak_mb"].as_f64(),
    })
}

/// Bibtex as an .npz the bench script reads (sparse X, dense 0/1 Y).
fn prepare(python: &Path, dir: &Path, seed: u64) -> Result<PathBuf> {
    let root = okr_eval::data_dir();
    let train = root.join("bibtex/bibtex-train.arff");
    let test = root.join("bibtex/bibtex-test.arff");
    let npz = dir.join("bibtex.npz");
    let script = format!(
        "import numpy as np, okr\n\
         X, Y = okr.load_arff({train:?}, 159)\n\
         Xt, Yt = okr.load_arff({test:?}, 159)\n\
         np.savez({npz:?}, x_data=X.data, x_indices=X.indices, x_indptr=X.indptr, x_shape=X.shape,\n\
                  xt_data=Xt.data, xt_indices=Xt.indices, xt_indptr=Xt.indptr, xt_shape=Xt.shape,\n\
                  y=Y.toarray().astype(np.int8), yt=Yt.toarray().astype(np.int8),\n\
                  lam={LAMBDA}, gamma={GAMMA}, output_gamma={OUTPUT_GAMMA},\n\
                  input_sketch={INPUT_SKETCH}, output_sketch={OUTPUT_SKETCH}, seed={seed})\n",
        train = train.display().to_string(),
        test = test.display().to_string(),
        npz = npz.display().to_string(),
    );
    run(Command::new(python).arg("-c").arg(script), "write bibtex.npz")?;
    Ok(npz)
}

/// The peers' environment, or why it could not be made.
fn peer_python(target: &Path) -> Result<PathBuf> {
    let venv = target.join("peers-venv");
    let req = target.join("peers-requirements.txt");
    std::fs::write(&req, PEER_REQUIREMENTS)?;
    let python = virtual_env(&venv, &req)?;
    let installed = Command::new(&python)
        .args(["-c", "import stpredictions.models.IOKR.model, stpredictions.models.IOKR.SketchedIOKR"])
        .status()?;
    if !installed.success() {
        eprintln!("python-vs-peers: pip install {PEER_PACKAGE}");
        let out = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--no-build-isolation", PEER_PACKAGE])
            .output()
            .context("cannot run pip")?;
        if !out.status.success() {
            // pip's last exception line says why (the build's own error).
            let err = String::from_utf8_lossy(&out.stderr);
            let cause = err.lines().rev().find(|l| l.contains("Error:")).unwrap_or("pip failed").trim();
            bail!("pip install {PEER_PACKAGE} failed: {cause}");
        }
    }
    Ok(python)
}

/// The okr CLI's fit + decode on the same files and hyper-parameters:
/// `(fit seconds, decode seconds, F1)` from `okr eval`'s report.
fn cli(dir: &Path) -> Result<(f64, f64, f64)> {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(&cargo).args(["build", "--release", "--quiet", "-p", "okr-cli"]).current_dir(&root), "build okr")?;
    let okr = target_dir(&root).join("release/okr");
    let data = okr_eval::data_dir();
    let model = dir.join("bibtex.okr");
    let fit = Command::new(&okr)
        .arg("fit")
        .arg("--train")
        .arg(data.join("bibtex/bibtex-train.arff"))
        .args(["--label-count", "159", "--lambda", &LAMBDA.to_string(), "--input-gamma", &GAMMA.to_string()])
        .args(["--output-gamma", &OUTPUT_GAMMA.to_string(), "-m"])
        .arg(&model)
        .output()?;
    if !fit.status.success() {
        bail!("okr fit: {}", String::from_utf8_lossy(&fit.stderr));
    }
    let eval = Command::new(&okr)
        .args(["eval", "-m"])
        .arg(&model)
        .arg("-i")
        .arg(data.join("bibtex/bibtex-test.arff"))
        .args(["--label-count", "159"])
        .output()?;
    if !eval.status.success() {
        bail!("okr eval: {}", String::from_utf8_lossy(&eval.stderr));
    }
    let report: Value = serde_json::from_slice(&eval.stdout)?;
    let f = |k: &str| report[k].as_f64().with_context(|| format!("okr eval: no {k}"));
    Ok((f("fit_seconds")?, f("decode_seconds")?, f("f1_samples")?))
}

/// Runs the comparison and writes `docs/results/python-vs-peers.{md,json}`.
pub fn run_experiment(out_dir: &Path, seed: u64) -> Result<()> {
    let python = python_with_okr()?;
    let target = target_dir(&workspace_root());
    let dir = target.join("python-vs-peers");
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("bench.py");
    std::fs::write(&script, BENCH_PY)?;
    let data = prepare(&python, &dir, seed)?;
    let load_before = load_average();
    let gemm_before = bench(&python, &script, "gemm", &data)?["gflops"].as_f64().unwrap_or(f64::NAN);
    let (cli_fit, cli_decode, cli_f1) = cli(&dir)?;
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for method in ["okr-iokr", "numpy-iokr", "okr-sisokr", "numpy-sisokr"] {
        eprintln!("python-vs-peers: {method}");
        rows.push(measured(&bench(&python, &script, method, &data)?)?);
    }
    match peer_python(&target) {
        Ok(peer) => {
            for method in ["peer-iokr", "peer-sisokr"] {
                eprintln!("python-vs-peers: {method}");
                match bench(&peer, &script, method, &data).and_then(|v| measured(&v)) {
                    Ok(m) => rows.push(m),
                    Err(e) => failures.push(format!("{method}: {e:#}")),
                }
            }
        }
        Err(e) => failures.push(format!("structured-predictions could not be installed from PyPI: {e:#}")),
    }
    let gemm_after = bench(&python, &script, "gemm", &data)?["gflops"].as_f64().unwrap_or(f64::NAN);
    let load = (load_before, load_average());
    write(out_dir, &rows, (cli_fit, cli_decode, cli_f1), (gemm_before, gemm_after), load, &failures, seed)
}

fn show_load(load: Option<f64>) -> String {
    load.map_or_else(|| "unknown".into(), |l| format!("{l:.2}"))
}

fn write(
    out_dir: &Path,
    rows: &[Measured],
    cli: (f64, f64, f64),
    gemm: (f64, f64),
    load: (Option<f64>, Option<f64>),
    failures: &[String],
    seed: u64,
) -> Result<()> {
    let total = |m: &Measured| m.fit_s + m.decode_s;
    let okr_total = |estimator: &str| rows.iter().find(|m| m.method == format!("okr-{estimator}")).map(total);
    let mut md = String::from("# `cargo xtask reproduce python-vs-peers`\n\n");
    let _ = writeln!(
        md,
        "Bibtex (4880 train / 2515 test, 1836 sparse features, 159 labels), IOKR with a Gaussian input \
         kernel (gamma {GAMMA}), Gaussian output kernel (gamma {OUTPUT_GAMMA:.4}), lambda {LAMBDA:e}; SISOKR \
         with a uniform input sketch of {INPUT_SKETCH} rows and a Gaussian output sketch of {OUTPUT_SKETCH}; \
         candidates: the distinct training label sets. One process per method, one run; numpy's DGEMM \
         rate {:.1} GFLOP/s before and {:.1} after; 1-minute load average {} before and {} after \
         (this machine has {} cores; a load above that means the times are upper bounds).\n",
        gemm.0,
        gemm.1,
        show_load(load.0),
        show_load(load.1),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    md.push_str("| method | fit s | decode s | total s | x okr (same estimator) | F1 (%) | peak RSS (MB) |\n");
    md.push_str("|---|---|---|---|---|---|---|\n");
    let _ = writeln!(
        md,
        "| okr CLI (fit + eval) | {:.2} | {:.2} | {:.2} | | {:.2} | |",
        cli.0,
        cli.1,
        cli.0 + cli.1,
        100.0 * cli.2
    );
    let mut records = Vec::new();
    for m in rows {
        let estimator = m.method.split('-').nth(1).unwrap_or("");
        let ratio = okr_total(estimator).map_or(f64::NAN, |o| total(m) / o);
        let _ = writeln!(
            md,
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
            m.method,
            m.fit_s,
            m.decode_s,
            total(m),
            ratio,
            100.0 * m.f1,
            m.peak_mb.map_or(String::new(), |p| format!("{p:.0}"))
        );
        let mut rec = MetricRecord::new("python-vs-peers", "bibtex", &m.method, "f1_samples", m.f1);
        rec.seconds = Some(total(m));
        rec.setting.insert("fit_seconds".into(), m.fit_s.into());
        rec.setting.insert("decode_seconds".into(), m.decode_s.into());
        rec.setting.insert("seed".into(), seed.into());
        if let Some(p) = m.peak_mb {
            rec.setting.insert("peak_mb".into(), p.into());
        }
        rec.setting.insert("dgemm_gflops".into(), gemm.0.into());
        if let Some(l) = load.0 {
            rec.setting.insert("load_average".into(), l.into());
        }
        records.push(rec);
    }
    let mut cli_rec = MetricRecord::new("python-vs-peers", "bibtex", "okr-cli-iokr", "f1_samples", cli.2);
    cli_rec.seconds = Some(cli.0 + cli.1);
    records.push(cli_rec);
    if let Some(py) = okr_total("iokr") {
        let _ = writeln!(
            md,
            "\nPython overhead: okr's Python IOKR (fit + predict) takes {:.2}x the CLI's fit + decode in this run.",
            py / (cli.0 + cli.1)
        );
    }
    for f in failures {
        let _ = writeln!(md, "\nNot measured: {f}");
    }
    // Describe only the rows the table has.
    let peers_measured = records.iter().any(|r| r.method.starts_with("peer-"));
    md.push_str(
        "\nThe numpy rows are the same algebra written as a careful numpy user would (Cholesky solve \
         against the candidates' output Gram, one GEMM to score). ",
    );
    if peers_measured {
        md.push_str(
            "The peer rows call structured-predictions' `IOKR` (explicit inverse) and `SISOKR` (its \
             `SubSample` and `Gaussian` sketches). ",
        );
    }
    md.push_str(
        "numpy's IOKR fit also solves for the candidates' scores \
         `(K + n lambda I)^-1 K_y(Y, C)`, so its decode is one GEMM; okr stops its fit at the factorization \
         and decodes through the coefficients (which also give label scores and top-k lists). Times are \
         wall seconds on this machine, to be read as ratios within the run.\n",
    );
    write_outputs(out_dir, "python-vs-peers", &records, &md)
}
