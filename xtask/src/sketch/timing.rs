//! `cargo xtask reproduce sketch-timing`: wall-clock and CPU seconds of the
//! configurations chosen by `sketch-multilabel` on Bibtex (read from
//! `sketch-multilabel.json`), with the machine's load average, so that the
//! time budget can be judged when the machine is shared.

use std::path::Path;

use anyhow::{Context, Result};
use okr_estimators::sketch::SketchSpec;
use okr_eval::{MetricRecord, read_records};
use okr_kernels::Gaussian;

use super::multilabel::{MethodConfig, RunOutcome, SplitRef, run_method};
use crate::common::data::SparseSplit;
use crate::common::process::load_average;
use crate::common::report::write_outputs;

/// Sketch seeds per SISOKR configuration (the poster's 30 runs; the
/// acceptance bound is per run, so the slowest run is reported too).
const SISOKR_SEEDS: u64 = 30;
/// Sketch seeds for SIOKR and ISOKR.
const OTHER_SEEDS: u64 = 5;

fn spec(kind: &str, size: Option<u64>) -> Result<Option<SketchSpec>> {
    match (kind.trim(), size) {
        ("none", _) | (_, None) => Ok(None),
        (k, Some(m)) => Ok(Some(format!("{k}:{m}").parse()?)),
    }
}

/// Runs the timing pass and writes `sketch-timing.{json,md}`.
pub fn run(out_dir: &Path, seed: u64) -> Result<()> {
    let source = out_dir.join("sketch-multilabel.json");
    let chosen =
        read_records(&source).with_context(|| format!("run sketch-multilabel first ({})", source.display()))?;
    let data = SparseSplit::mulan("bibtex", seed)?;
    let split = SplitRef {
        x_train: &data.x,
        y_train: &data.y,
        x_test: &data.x_test,
        y_test: &data.y_test,
        candidates: &data.candidates,
    };
    let ky = data.output_kernel()?;
    let load_before = load_average();
    let mut records = Vec::new();
    let mut md = String::from(
        "# `cargo xtask reproduce sketch-timing`\n\n\
         | method | m_x | m_y | runs | fit s (wall) | decode s (wall) | fit + decode s (wall) | slowest run s (wall) | fit + decode CPU s | CPU s / 2 threads | test F1 |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in chosen.iter().filter(|r| r.dataset == data.name && r.metric == "f1_samples") {
        let get = |k: &str| r.setting.get(k).cloned().unwrap_or(serde_json::Value::Null);
        let kinds = get("sketch").as_str().unwrap_or("none / none").to_string();
        let (kin, kout) = kinds.split_once('/').unwrap_or(("none", "none"));
        let method: &'static str = match r.method.as_str() {
            "iokr" => "iokr",
            "siokr" => "siokr",
            "isokr" => "isokr",
            "sisokr" => "sisokr",
            "sisokr-fast" => "sisokr-fast",
            _ => continue,
        };
        let cfg =
            MethodConfig { method, input: spec(kin, get("m_x").as_u64())?, output: spec(kout, get("m_y").as_u64())? };
        let kx = Gaussian::new(get("gamma").as_f64().context("gamma")?)?;
        let lambda = get("lambda").as_f64().context("lambda")?;
        let runs = match method {
            "iokr" => 1,
            "sisokr" | "sisokr-fast" => SISOKR_SEEDS,
            _ => OTHER_SEEDS,
        };
        let outcomes: Vec<RunOutcome> =
            (0..runs).map(|s| run_method(&split, &kx, &ky, lambda, &cfg, s)).collect::<Result<_>>()?;
        let mean = |f: &dyn Fn(&RunOutcome) -> f64| outcomes.iter().map(f).sum::<f64>() / outcomes.len() as f64;
        let fit = mean(&|o| o.fit_seconds);
        let dec = mean(&|o| o.decode_seconds);
        let cpu = mean(&|o| o.fit_cpu_seconds.unwrap_or(f64::NAN) + o.decode_cpu_seconds.unwrap_or(f64::NAN));
        let slowest = outcomes.iter().map(|o| o.fit_seconds + o.decode_seconds).fold(0.0, f64::max);
        let f1 = mean(&|o| o.f1);
        let threads = rayon::current_num_threads();
        eprintln!("xtask: timing {method}: wall {fit:.3} + {dec:.3} s (slowest {slowest:.3} s), CPU {cpu:.3} s");
        md.push_str(&format!(
            "| {method} | {} | {} | {runs} | {fit:.3} | {dec:.3} | {:.3} | {slowest:.3} | {cpu:.3} | {:.3} | {:.2} |\n",
            cfg.input.map_or("-".into(), |s| s.to_string()),
            cfg.output.map_or("-".into(), |s| s.to_string()),
            fit + dec,
            cpu / threads as f64,
            100.0 * f1
        ));
        let base = |metric: &str, value: f64| {
            MetricRecord::new("sketch-timing", &data.name, method, metric, value)
                .with_setting("m_x", cfg.input.map(|s| s.size))
                .with_setting("m_y", cfg.output.map(|s| s.size))
                .with_setting("sketch", kinds.clone())
                .with_setting("runs", runs)
                .with_setting("threads", threads)
                .with_seconds(value)
        };
        records.push(base("fit_seconds", fit));
        records.push(base("decode_seconds", dec));
        records.push(base("fit_decode_cpu_seconds", cpu));
        records.push(base("slowest_fit_decode_seconds", slowest));
        records.push(
            MetricRecord::new("sketch-timing", &data.name, method, "f1_samples", f1)
                .with_setting("m_x", cfg.input.map(|s| s.size))
                .with_setting("m_y", cfg.output.map(|s| s.size))
                .with_setting("runs", runs),
        );
    }
    let load_after = load_average();
    md.push_str(&format!(
        "\nConfigurations and hyper-parameters as chosen in `sketch-multilabel.json` (Bibtex, test split, \
         sketch seeds 0..{SISOKR_SEEDS} for SISOKR, 0..{OTHER_SEEDS} for SIOKR and ISOKR; times are means over the \
         runs, `slowest run` the largest fit + decode of any one run). CPU seconds are user + system time of the process over all threads \
         (`/proc/self/stat`); `CPU s / 2 threads` is what the wall time would be if both cores were \
         busy with this job alone and the work parallelized perfectly, an estimate and not a \
         measurement of wall time. 1-minute load average: {} before, {} after (2 cores).\n\n\
         Records: `sketch-timing.json`.\n",
        load_before.map_or("-".into(), |v| format!("{v:.1}")),
        load_after.map_or("-".into(), |v| format!("{v:.1}")),
    ));
    write_outputs(out_dir, "sketch-timing", &records, &md)?;
    println!("{md}");
    Ok(())
}
