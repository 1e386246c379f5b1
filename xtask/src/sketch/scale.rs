//! `cargo xtask reproduce sketch-scale`: SISOKR (and SIOKR) on the
//! Bookmarks-shaped stand-in (60000 / 27856, 2150 sparse features, 208
//! labels): fit and decode seconds and peak memory beside the poster's
//! 118 s / 20 s, and a curve of time and F1 against the input sketch size.

use std::path::Path;

use anyhow::{Context, Result};
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_eval::{MetricRecord, write_records};

use crate::common::data::SparseSplit;
use crate::common::plot::{Panel, Series, draw_png};
use okr_kernels::{CsrRows, Gaussian, Rows, median_sq_distance};

use super::multilabel::{MethodConfig, RunOutcome, SplitRef, run_method};
use crate::common::process::{load_average, peak_rss_bytes, reset_peak_rss};

/// What one configuration measured.
struct Measured {
    cfg: MethodConfig,
    outcome: RunOutcome,
    peak: Option<u64>,
    n_test: usize,
    seed: u64,
    /// 1-minute load average when the run started.
    load: Option<f64>,
}

/// Sketch seeds per SISOKR size.
const SEEDS: u64 = 3;

fn sisokr(mx: usize, my: usize) -> MethodConfig {
    MethodConfig {
        method: "sisokr",
        input: Some(SketchSpec::new(SketchKind::Uniform, mx)),
        output: Some(SketchSpec::new(SketchKind::Uniform, my)),
    }
}

/// Runs the experiment and writes `sketch-scale.{json,md}`.
pub fn run(out_dir: &Path, seed: u64) -> Result<()> {
    let data = SparseSplit::bookmarks(seed, 1)?;
    let (x_train, y_train, x_test, y_test, cand) = (&data.x, &data.y, &data.x_test, &data.y_test, &data.candidates);
    let dataset = &data.name;
    let ky = data.output_kernel()?;
    let median_sq = median_sq_distance(x_train, 2000);
    eprintln!("xtask: {} distinct training label sets (candidates)", cand.n_rows());

    // (c, lambda) on a 12000 / 3000 validation split of the training rows, SISOKR 1000 / 100.
    let (fit_idx, val_idx) = okr_eval::train_test_split(x_train.n_rows(), 0.2, 0)?;
    let (fit_idx, val_idx) = (&fit_idx[..12000.min(fit_idx.len())], &val_idx[..3000.min(val_idx.len())]);
    let (xf, yf, xv, yv) =
        (x_train.select(fit_idx), y_train.select(fit_idx), x_train.select(val_idx), y_train.select(val_idx));
    let (cand_f, _) = yf.unique();
    let val = SplitRef { x_train: &xf, y_train: &yf, x_test: &xv, y_test: &yv, candidates: &cand_f };
    let mut log = String::from("| c \\ lambda | 1e-6 | 1e-5 | 1e-4 |\n|---|---|---|---|\n");
    let mut best = (f64::NEG_INFINITY, 1.0, 1e-5);
    for c in [0.25, 0.5, 1.0] {
        log.push_str(&format!("| {c} |"));
        for lambda in [1e-6, 1e-5, 1e-4] {
            let r = run_method(&val, &Gaussian::new(c / median_sq)?, &ky, lambda, &sisokr(1000, 100), 0)?;
            log.push_str(&format!(" {:.2} |", 100.0 * r.f1));
            if r.f1 > best.0 {
                best = (r.f1, c, lambda);
            }
        }
        log.push('\n');
    }
    let (_, c, lambda) = best;
    let kx = Gaussian::new(c / median_sq)?;
    eprintln!("xtask: {dataset}: c = {c}, lambda = {lambda:e} (validation F1 {:.2})", 100.0 * best.0);

    let full = SplitRef { x_train, y_train, x_test, y_test, candidates: cand };
    let mut measured = Vec::new();
    let mut records = Vec::new();
    let mut measure = |split: &SplitRef<'_, CsrRows>, cfg: MethodConfig, seed: u64, records: &mut Vec<MetricRecord>| {
        let load = load_average();
        let resettable = reset_peak_rss();
        let outcome = run_method(split, &kx, &ky, lambda, &cfg, seed)?;
        let peak = if resettable { peak_rss_bytes() } else { None };
        eprintln!(
            "xtask: {} m_x = {:?} m_y = {:?} seed {seed} (n_test {}): F1 {:.2}, fit {:.2} s, decode {:.2} s, peak RSS {:.2} GiB",
            cfg.method,
            cfg.input.map(|s| s.size),
            cfg.output.map(|s| s.size),
            split.x_test.n_rows(),
            100.0 * outcome.f1,
            outcome.fit_seconds,
            outcome.decode_seconds,
            peak.unwrap_or(0) as f64 / (1u64 << 30) as f64
        );
        let m = Measured { cfg, outcome, peak, n_test: split.x_test.n_rows(), seed, load };
        records.extend(to_records(dataset, &m, x_train.n_rows(), c, lambda, cand.n_rows()));
        // Written after every run: a long experiment keeps what it measured.
        std::fs::create_dir_all(out_dir)?;
        write_records(out_dir.join("sketch-scale.json"), records)?;
        measured.push(m);
        anyhow::Ok(())
    };
    // Headline SISOKR 2000 / 100, then curves over the input size (m_y = 100)
    // and the output size (m_x = 2000); three sketch seeds at every size.
    for (mx, my) in [(2000, 100), (500, 100), (1000, 100), (4000, 100), (2000, 50), (2000, 200)] {
        for s in 0..SEEDS {
            measure(&full, sisokr(mx, my), s, &mut records)?;
        }
    }
    // SIOKR: its atoms are all distinct training label sets, so decoding costs
    // n_test x n_distinct x n_c (about 9 TFLOP here).
    let siokr = MethodConfig { method: "siokr", input: Some(SketchSpec::new(SketchKind::Uniform, 2000)), output: None };
    measure(&full, siokr, 0, &mut records)?;

    let md = render(&records, &log);
    std::fs::write(out_dir.join("sketch-scale.md"), &md).context("writing sketch-scale.md")?;
    plot(&records, out_dir)?;
    println!("{md}");
    Ok(())
}

/// `sketch-scale.png`: F1, fit and decode seconds of SISOKR against `m_x`
/// (at `m_y = 100`) and against `m_y` (at `m_x = 2000`): the mean over the
/// sketch seeds as a line, every seed as a marker.
fn plot(records: &[MetricRecord], out_dir: &Path) -> Result<()> {
    let get = |r: &MetricRecord, k: &str| r.setting.get(k).and_then(|v| v.as_f64());
    let runs = |metric: &str, along: &str, fixed: (&str, f64)| -> Vec<(f64, f64)> {
        let mut pts: Vec<(f64, f64)> = records
            .iter()
            .filter(|r| r.method == "sisokr" && r.metric == metric && get(r, fixed.0) == Some(fixed.1))
            .filter_map(|r| Some((get(r, along)?, r.value)))
            .map(|(m, v)| (m, if metric == "f1_samples" { 100.0 * v } else { v }))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    };
    let mean = |pts: &[(f64, f64)]| -> Vec<(f64, f64)> {
        let mut out: Vec<(f64, f64, usize)> = Vec::new();
        for &(m, v) in pts {
            match out.last_mut() {
                Some(last) if last.0 == m => {
                    last.1 += v;
                    last.2 += 1;
                }
                _ => out.push((m, v, 1)),
            }
        }
        out.into_iter().map(|(m, v, k)| (m, v / k as f64)).collect()
    };
    let with_runs = |label: &str, colour: usize, pts: Vec<(f64, f64)>| {
        vec![
            Series::line(label, colour, mean(&pts)),
            Series { label: String::new(), colour, points: pts, thin: false, markers: true },
        ]
    };
    let panels = [
        ("m_x", ("m_y", 100.0), "input sketch size m_x (m_y = 100)"),
        ("m_y", ("m_x", 2000.0), "output sketch size m_y (m_x = 2000)"),
    ]
    .into_iter()
    .flat_map(|(along, fixed, x_label)| {
        let seconds = [("fit", 1, "fit_seconds"), ("decode", 2, "decode_seconds")]
            .into_iter()
            .flat_map(|(label, colour, metric)| with_runs(label, colour, runs(metric, along, fixed)))
            .collect();
        [
            Panel::new(
                format!("SISOKR test F1 vs {along} (stand-in)"),
                (x_label, "F1 x100"),
                (false, false),
                with_runs("F1 (mean; markers: seeds)", 0, runs("f1_samples", along, fixed)),
            ),
            Panel::new(format!("SISOKR seconds vs {along}"), (x_label, "seconds (2 threads)"), (false, false), seconds),
        ]
    })
    .collect::<Vec<_>>();
    draw_png(&out_dir.join("sketch-scale.png"), &panels, 2, (560, 400))
}

fn to_records(dataset: &str, m: &Measured, n: usize, c: f64, lambda: f64, n_candidates: usize) -> Vec<MetricRecord> {
    let base = |metric: &str, value: f64| {
        MetricRecord::new("sketch-scale", dataset, m.cfg.method, metric, value)
            .with_stand_in(true)
            .with_setting("n", n)
            .with_setting("n_test", m.n_test)
            .with_setting("n_candidates", n_candidates)
            .with_setting("m_x", m.cfg.input.map(|s| s.size))
            .with_setting("m_y", m.cfg.output.map(|s| s.size))
            .with_setting("sketch", "uniform / uniform")
            .with_setting("seed", m.seed)
            .with_setting("c", c)
            .with_setting("lambda", lambda)
            .with_setting("threads", rayon::current_num_threads())
            .with_setting("load_average", m.load)
    };
    let paper = |method: &str, metric: &str| match (method, metric) {
        ("sisokr", "fit_seconds") => Some(118.0),
        ("sisokr", "decode_seconds") => Some(20.0),
        ("siokr", "fit_seconds") => Some(354.0),
        ("siokr", "decode_seconds") => Some(297.0),
        _ => None,
    };
    let mut out = vec![
        base("f1_samples", m.outcome.f1),
        base("fit_seconds", m.outcome.fit_seconds).with_seconds(m.outcome.fit_seconds),
        base("decode_seconds", m.outcome.decode_seconds).with_seconds(m.outcome.decode_seconds),
    ];
    for r in &mut out {
        if let Some(p) = paper(m.cfg.method, &r.metric) {
            *r = r.clone().with_paper(p);
        }
    }
    if let Some(p) = m.peak {
        out.push(base("peak_rss_bytes", p as f64));
    }
    if let (Some(f), Some(d)) = (m.outcome.fit_cpu_seconds, m.outcome.decode_cpu_seconds) {
        out.push(base("fit_cpu_seconds", f));
        out.push(base("decode_cpu_seconds", d));
    }
    out
}

/// Renders `sketch-scale.md` from the records (one row per run).
fn render(records: &[MetricRecord], log: &str) -> String {
    let mut md = String::from("# `cargo xtask reproduce sketch-scale`\n\n");
    let Some(first) = records.first() else { return md };
    let s = |r: &MetricRecord, k: &str| {
        r.setting.get(k).map_or("-".to_string(), |v| if v.is_null() { "-".into() } else { v.to_string() })
    };
    md.push_str(&format!(
        "Data: `{}` (seeded stand-in of the Bookmarks shape: {} train / 27856 test, 2150 sparse \
         features, 208 labels; the real Bookmarks is not available here), {} candidates \
         (distinct training label sets). `c = {}`, `lambda = {}`.\n\n",
        first.dataset,
        s(first, "n"),
        s(first, "n_candidates"),
        s(first, "c"),
        s(first, "lambda")
    ));
    md.push_str(
        "| method | m_x | m_y | seeds | n_test | F1 | fit s | poster fit s | decode s | poster decode s | fit + decode CPU s | peak RSS GiB |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    // One row per configuration: mean ± std (ddof 1) over its sketch seeds.
    let key = |r: &MetricRecord| (r.method.clone(), s(r, "m_x"), s(r, "m_y"), s(r, "n_test"));
    let mut keys: Vec<_> = Vec::new();
    for r in records {
        if !keys.contains(&key(r)) {
            keys.push(key(r));
        }
    }
    for k in keys {
        let values = |metric: &str| -> Vec<f64> {
            records.iter().filter(|r| key(r) == k && r.metric == metric).map(|r| r.value).collect()
        };
        let stat = |metric: &str, scale: f64, digits: usize| {
            let v = values(metric);
            if v.is_empty() {
                return "-".to_string();
            }
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            if v.len() == 1 {
                return format!("{:.*}", digits, mean * scale);
            }
            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            format!("{:.*} ± {:.*}", digits, mean * scale, digits, sd * scale)
        };
        let (method, mx, my, nt) = &k;
        let (pf, pd) = match method.as_str() {
            "sisokr" => ("118", "20"),
            "siokr" => ("354", "297"),
            _ => ("-", "-"),
        };
        let cpu: Vec<f64> =
            values("fit_cpu_seconds").iter().zip(values("decode_cpu_seconds")).map(|(a, b)| a + b).collect();
        let cpu =
            if cpu.is_empty() { "-".into() } else { format!("{:.1}", cpu.iter().sum::<f64>() / cpu.len() as f64) };
        let peak = values("peak_rss_bytes").into_iter().fold(f64::NAN, f64::max);
        md.push_str(&format!(
            "| {method} | {mx} | {my} | {} | {nt} | {} | {} | {pf} | {} | {pd} | {cpu} | {} |\n",
            values("f1_samples").len(),
            stat("f1_samples", 100.0, 2),
            stat("fit_seconds", 1.0, 1),
            stat("decode_seconds", 1.0, 1),
            if peak.is_nan() { "-".into() } else { format!("{:.2}", peak / (1u64 << 30) as f64) },
        ));
    }
    md.push_str(SCALE_NOTES);
    let loads: Vec<f64> = records
        .iter()
        .filter(|r| r.metric == "f1_samples")
        .filter_map(|r| r.setting.get("load_average")?.as_f64())
        .collect();
    if let (Some(lo), Some(hi)) = (loads.iter().copied().reduce(f64::min), loads.iter().copied().reduce(f64::max)) {
        md.push_str(&format!(" The 1-minute load average (2 cores) when a run started was {lo:.1} to {hi:.1}."));
    }
    if !log.is_empty() {
        md.push_str("\n\n## Validation of (c, lambda)\n\nSISOKR (uniform 1000 / uniform 100, seed 0) on 12000 / 3000 training rows, F1 x100:\n\n");
        md.push_str(log);
    }
    md.push_str("\nRecords: `sketch-scale.json`.\n");
    md
}

/// Renders `sketch-scale.md` from `sketch-scale.json` (for a run that was
/// stopped before its end: the records are written after every run).
pub fn report(out_dir: &Path) -> Result<()> {
    let records = okr_eval::read_records(out_dir.join("sketch-scale.json"))?;
    let md = render(&records, "");
    std::fs::write(out_dir.join("sketch-scale.md"), &md).context("writing sketch-scale.md")?;
    plot(&records, out_dir)?;
    println!("{md}");
    Ok(())
}

const SCALE_NOTES: &str = "
Both sketches are uniform sub-sampling (only `m_x` input Gram columns and `m_y` output Gram
columns are computed; no `n x n` matrix exists). Gaussian input kernel with
`gamma = c / median ||x - x'||^2`, Gaussian output kernel on label vectors with `sigma^2` = mean
labels per point, ridge `(K + n lambda I)`. F1 and times are mean ± std over the sketch seeds,
CPU seconds their mean. Peak RSS is the largest `VmHWM` of the xtask process over the seeds, reset
(`/proc/self/clear_refs` = 5) before each run, so it covers that run plus the data already in
memory (the stand-in itself). F1 on a stand-in does not compare with the poster's
39.3 on the real Bookmarks; only times and memory do, on different hardware (the poster's is not
stated). Times are wall-clock on 2 threads; CPU seconds (user + system, all threads) measure the
work. SIOKR decodes against all distinct training label sets as atoms (no output sketch).";
