//! LEML's logistic (`lr`) and squared-hinge (`sh`) rows of Tables 6-15, with
//! binary relevance (BR) of the same loss tuned on the same validation split
//! beside them.
//!
//! One record file per (experiment, data set, loss): `leml-full-<data>-<loss>`
//! and `leml-missing-<loss>`. Every finished fit (a validation point, a test
//! row) is merged into its file at once, so an interrupted run resumes where it
//! stopped: validation points and rows already in the file are not refitted.
//! The markdown beside each file is rendered from its records only.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use okr_estimators::Fit;
use okr_estimators::leml::{BinaryRelevance, Loss, PartialLabels, Targets};
use okr_eval::{MetricRecord, read_records, write_records};
use okr_kernels::Rows;
use serde_json::{Value, json};

use super::experiments::{
    Data, METRICS, Scores, Validation, evaluate, fit_draws, leml_params, mean_std, push_records, rank_for,
};
use super::paper::{FULL_RATIOS, MISSING_RATIOS, OBSERVED, full_cell, missing_cell};
use crate::common::process::load_average;
use crate::common::report::write_md;

/// The settings that tell two records of one method and metric apart: a
/// rerun replaces the record with the same key and keeps the others.
fn key(r: &MetricRecord) -> (String, String, String, String, String) {
    let get = |k: &str| r.setting.get(k).map_or(String::new(), Value::to_string);
    let mut who = format!("{}|{}|{}", get("split"), get("k_over_l"), get("observed"));
    if r.setting.get("split").and_then(Value::as_str) == Some("validation") {
        who.push('|');
        who.push_str(&get("lambda"));
    }
    (r.experiment.clone(), r.dataset.clone(), r.method.clone(), r.metric.clone(), who)
}

/// `old` with every record of `new` in it, a record of `old` with the same
/// [`key`] replaced in place, the others appended in order.
pub fn merge_records(old: &mut Vec<MetricRecord>, new: Vec<MetricRecord>) {
    for r in new {
        let k = key(&r);
        match old.iter().position(|o| key(o) == k) {
            Some(p) => old[p] = r,
            None => old.push(r),
        }
    }
}

/// The records of one result file, read back at the start of a run.
pub struct RunFile {
    dir: PathBuf,
    stem: String,
    pub records: Vec<MetricRecord>,
}

impl RunFile {
    /// `<dir>/<stem>.json` if it exists, else empty.
    pub fn open(dir: &Path, stem: &str) -> Result<Self> {
        let path = dir.join(format!("{stem}.json"));
        let mut records = if path.exists() { read_records(&path)? } else { Vec::new() };
        // One draw has no spread: a std of 0 there would read as a measured one.
        for r in &mut records {
            if r.setting.get("draws").and_then(Value::as_u64) == Some(1) {
                r.std = None;
            }
        }
        Ok(Self { dir: dir.to_path_buf(), stem: stem.to_string(), records })
    }

    /// Merges `new` and writes the file.
    pub fn add(&mut self, new: Vec<MetricRecord>) -> Result<()> {
        merge_records(&mut self.records, new);
        write_records(self.dir.join(format!("{}.json", self.stem)), &self.records)?;
        Ok(())
    }

    fn find(
        &self,
        method: &str,
        metric: &str,
        split: &str,
        k_over_l: Option<f64>,
        observed: f64,
    ) -> Option<&MetricRecord> {
        self.records.iter().find(|r| {
            r.method == method
                && r.metric == metric
                && r.setting.get("split").and_then(Value::as_str) == Some(split)
                && r.setting.get("k_over_l").and_then(Value::as_f64) == k_over_l
                && r.setting.get("observed").and_then(Value::as_f64) == Some(observed)
        })
    }

    /// Validation P@3 of `method` at `lambda`, if measured.
    pub fn validation_p3(&self, method: &str, lambda: f64) -> Option<f64> {
        self.records
            .iter()
            .find(|r| {
                r.method == method
                    && r.metric == "p_at_3"
                    && r.setting.get("split").and_then(Value::as_str) == Some("validation")
                    && r.setting.get("lambda").and_then(Value::as_f64) == Some(lambda)
            })
            .map(|r| r.value)
    }

    /// Whether the test row of `method` at (`k_over_l`, `observed`) was
    /// measured with `lambda`.
    pub fn has_test(&self, method: &str, k_over_l: Option<f64>, observed: f64, lambda: f64) -> bool {
        self.find(method, "p_at_3", "test", k_over_l, observed)
            .is_some_and(|r| r.setting.get("lambda").and_then(Value::as_f64) == Some(lambda))
    }
}

/// The lambda of `grid` with the best validation P@3 in `file` (ties: the
/// smaller lambda), fitting the grid points not yet measured with `fit_eval`.
#[allow(clippy::too_many_arguments)]
fn tune(
    file: &mut RunFile,
    data: &Data,
    experiment: &str,
    method: &str,
    k: usize,
    grid: &[f64],
    observed: f64,
    mut fit_eval: impl FnMut(f64) -> Result<Scores>,
) -> Result<f64> {
    if let [only] = grid {
        return Ok(*only);
    }
    for &lambda in grid {
        if file.validation_p3(method, lambda).is_some() {
            continue;
        }
        let t = Instant::now();
        let s = fit_eval(lambda)?;
        let secs = t.elapsed().as_secs_f64();
        eprintln!("xtask: {} {method} validation lambda {lambda}: P@3 {:.2} ({secs:.1} s)", data.name, s.p3);
        let settings =
            [("split", json!("validation")), ("k", json!(k)), ("observed", json!(observed)), ("lambda", json!(lambda))];
        file.add(records(experiment, data, method, &s, None, &settings, secs, &|_| None))?;
    }
    let mut best = (grid[0], f64::NEG_INFINITY);
    for &lambda in grid {
        let p3 = file.validation_p3(method, lambda).unwrap_or(f64::NEG_INFINITY);
        if p3 > best.1 {
            best = (lambda, p3);
        }
    }
    Ok(best.0)
}

/// A row the paper has: method, k/L (`None` for BR), observed fraction.
pub type PaperRow = (String, Option<f64>, f64);

/// The five metric records of one row, its fit time and the 1-minute load.
#[allow(clippy::too_many_arguments)]
pub(super) fn records(
    experiment: &str,
    data: &Data,
    method: &str,
    s: &Scores,
    std: Option<&Scores>,
    settings: &[(&str, Value)],
    secs: f64,
    paper: &dyn Fn(&str) -> Option<f64>,
) -> Vec<MetricRecord> {
    let load = load_average();
    let mut out = Vec::new();
    push_records(&mut out, experiment, data, method, s, settings, secs, paper, std);
    if let Some(l) = load {
        let mut r = MetricRecord::new(experiment, &data.name, method, "load_1min", l).with_stand_in(data.stand_in);
        for (k, v) in settings {
            r = r.with_setting(*k, v.clone());
        }
        out.push(r);
    }
    out
}

fn setting_f64(r: &MetricRecord, k: &str) -> Option<f64> {
    r.setting.get(k).and_then(Value::as_f64)
}

/// The markdown of a per-loss file: the test rows (ours (paper), ± std over
/// draws when given), then the validation grid per method.
pub fn render(title: &str, intro: &str, records: &[MetricRecord], paper_rows: &[PaperRow]) -> String {
    let mut md = format!("# {title}\n\n{intro}\n");
    let absent: Vec<String> = paper_rows
        .iter()
        .filter(|(m, kl, obs)| {
            !records.iter().any(|r| {
                r.method == *m
                    && r.metric == "p_at_3"
                    && r.setting.get("split").and_then(Value::as_str) == Some("test")
                    && setting_f64(r, "k_over_l") == *kl
                    && setting_f64(r, "observed") == Some(*obs)
            })
        })
        .map(|(m, kl, obs)| match kl {
            Some(kl) => format!("{m} at k/L {:.0}% ({:.0}% observed)", 100.0 * kl, 100.0 * obs),
            None => format!("{m} ({:.0}% observed)", 100.0 * obs),
        })
        .collect();
    if !absent.is_empty() {
        let _ = writeln!(
            md,
            "\n**Rows of the paper not run here** (time on the shared 2-core machine; a rerun with the same flags \
             adds them): {}.",
            absent.join(", ")
        );
    }
    let mut methods: Vec<&str> = Vec::new();
    for r in records {
        if !methods.contains(&r.method.as_str()) {
            methods.push(&r.method);
        }
    }
    // LEML rows first, then BR.
    methods.sort_by_key(|m| m.starts_with("br"));
    let value =
        |method: &str, split: &str, k_over_l: Option<f64>, observed: Option<f64>, lambda: Option<f64>, metric: &str| {
            records.iter().find(|r| {
                r.method == method
                    && r.metric == metric
                    && r.setting.get("split").and_then(Value::as_str) == Some(split)
                    && setting_f64(r, "k_over_l") == k_over_l
                    && setting_f64(r, "observed") == observed
                    && (lambda.is_none() || setting_f64(r, "lambda") == lambda)
            })
        };
    md.push_str(
        "\n| method | k/L | observed | k | lambda | P@1 | P@3 | P@5 | Hamming | AUC | fit s | load (1 min) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut rows: Vec<(&str, Option<f64>, Option<f64>)> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.metric == "p_at_3" && r.setting.get("split").and_then(Value::as_str) == Some("test"))
    {
        rows.push((&r.method, setting_f64(r, "k_over_l"), setting_f64(r, "observed")));
    }
    rows.sort_by(|a, b| {
        let pos = |m: &str| methods.iter().position(|x| *x == m);
        (pos(a.0), a.2.map(|v| (v * 1e6) as i64), a.1.map(|v| (v * 1e6) as i64)).cmp(&(
            pos(b.0),
            b.2.map(|v| (v * 1e6) as i64),
            b.1.map(|v| (v * 1e6) as i64),
        ))
    });
    for (method, kl, obs) in rows {
        let Some(p3) = value(method, "test", kl, obs, None, "p_at_3") else { continue };
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.0}%", 100.0 * v));
        let k = p3.setting.get("k").map_or("-".to_string(), Value::to_string);
        let lambda = p3.setting.get("lambda").map_or("-".to_string(), Value::to_string);
        let _ = write!(md, "| {method} | {} | {} | {k} | {lambda} |", pct(kl), pct(obs));
        for metric in METRICS {
            let p = if metric == "hamming" || metric == "auc" { 4 } else { 2 };
            match value(method, "test", kl, obs, None, metric) {
                Some(r) => {
                    let std = r.std.map_or(String::new(), |s| format!(" ± {s:.p$}"));
                    let paper = r.paper.map_or(String::new(), |v| format!(" ({v:.p$})"));
                    let _ = write!(md, " {:.p$}{std}{paper} |", r.value);
                }
                None => md.push_str(" - |"),
            }
        }
        let secs =
            value(method, "test", kl, obs, None, "fit_seconds").map_or("-".into(), |r| format!("{:.1}", r.value));
        let load = value(method, "test", kl, obs, None, "load_1min").map_or("-".into(), |r| format!("{:.2}", r.value));
        let _ = writeln!(md, " {secs} | {load} |");
    }
    md.push_str(&gap_summary(records, &methods));
    for method in &methods {
        let mut grid: Vec<&MetricRecord> = records
            .iter()
            .filter(|r| {
                r.method == *method
                    && r.metric == "p_at_3"
                    && r.setting.get("split").and_then(Value::as_str) == Some("validation")
            })
            .collect();
        if grid.is_empty() {
            continue;
        }
        grid.sort_by(|a, b| {
            setting_f64(a, "lambda").unwrap_or(0.0).total_cmp(&setting_f64(b, "lambda").unwrap_or(0.0))
        });
        let best = grid.iter().fold((f64::NAN, f64::NEG_INFINITY), |b, r| {
            if r.value > b.1 { (setting_f64(r, "lambda").unwrap_or(f64::NAN), r.value) } else { b }
        });
        let k = grid[0].setting.get("k").map_or("-".to_string(), Value::to_string);
        let obs = setting_f64(grid[0], "observed").unwrap_or(1.0);
        let _ = write!(
            md,
            "\n**{method}, k = {k}, {:.0} % observed** (validation: fit on 80 % of the training rows, scored on the \
             other 20 % with their complete labels)\n\n| lambda | P@1 | P@3 | P@5 | Hamming | AUC | fit s |\n\
             |---|---|---|---|---|---|---|\n",
            100.0 * obs
        );
        for r in &grid {
            let lambda = setting_f64(r, "lambda");
            let mark = if lambda == Some(best.0) { " **(chosen)**" } else { "" };
            let _ = write!(md, "| {}{mark} |", lambda.unwrap_or(f64::NAN));
            for metric in METRICS {
                let p = if metric == "hamming" || metric == "auc" { 4 } else { 2 };
                let v = value(method, "validation", None, Some(obs), lambda, metric).map_or(f64::NAN, |r| r.value);
                let _ = write!(md, " {v:.p$} |");
            }
            let secs =
                value(method, "validation", None, Some(obs), lambda, "fit_seconds").map_or(f64::NAN, |r| r.value);
            let _ = writeln!(md, " {secs:.1} |");
        }
        if let Some(edge) = grid_edge(&grid, best.0) {
            let _ = writeln!(
                md,
                "\nThe chosen lambda is the {edge} of the grid: the validation optimum may lie beyond it (not searched: time)."
            );
        }
    }
    md
}

/// Per method and metric, over the test rows with a published figure: the
/// mean gap ours - paper and in how many cells ours is better (Hamming: lower).
fn gap_summary(records: &[MetricRecord], methods: &[&str]) -> String {
    let mut md = String::from(
        "\n**Ours against the paper, per metric** (test rows with a published cell; better = higher, Hamming \
         lower)\n\n| method | metric | cells | mean ours - paper | ours better in |\n|---|---|---|---|---|\n",
    );
    let mut any = false;
    for method in methods {
        for metric in METRICS {
            let pairs: Vec<(f64, f64)> = records
                .iter()
                .filter(|r| {
                    r.method == *method
                        && r.metric == metric
                        && r.setting.get("split").and_then(Value::as_str) == Some("test")
                })
                .filter_map(|r| r.paper.map(|p| (r.value, p)))
                .collect();
            if pairs.is_empty() {
                continue;
            }
            any = true;
            let n = pairs.len();
            let mean = pairs.iter().map(|(o, p)| o - p).sum::<f64>() / n as f64;
            let better = pairs.iter().filter(|(o, p)| if metric == "hamming" { o < p } else { o > p }).count();
            let prec = if metric == "hamming" || metric == "auc" { 4 } else { 2 };
            let _ = writeln!(md, "| {method} | {metric} | {n} | {mean:+.prec$} | {better} of {n} |");
        }
    }
    if any { md } else { String::new() }
}

/// `"largest"` / `"smallest"` when `chosen` is at that end of a grid of at
/// least two validation points.
fn grid_edge(grid: &[&MetricRecord], chosen: f64) -> Option<&'static str> {
    let lambdas: Vec<f64> = grid.iter().filter_map(|r| setting_f64(r, "lambda")).collect();
    let max = lambdas.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = lambdas.iter().copied().fold(f64::INFINITY, f64::min);
    match lambdas.len() {
        0 | 1 => None,
        _ if chosen == max => Some("largest"),
        _ if chosen == min => Some("smallest"),
        _ => None,
    }
}

/// `leml-full` for one data set and one of `lr` / `sh`: lambda by validation
/// P@3 at k = 0.4L (or the single value of `grid`), test rows for `ratios`,
/// then BR of the same loss with its own validated lambda.
pub fn run_full_loss(
    data: &Data,
    loss: Loss,
    ratios: &[usize],
    grid: &[f64],
    out_dir: &Path,
    seed: u64,
    intro: &str,
) -> Result<()> {
    let base = data.name.trim_end_matches("-standin").to_string();
    let stem = format!("leml-full-{base}-{}", loss.name());
    let mut file = RunFile::open(out_dir, &stem)?;
    let l = data.n_labels();
    let val = Validation::new(data.x.n_rows(), seed)?;
    let (xf, yf) = data.train_rows(&val.fit);
    let (xv, yv) = data.train_rows(&val.val);
    let title = format!("`cargo xtask reproduce leml-full --datasets {base} --losses {}`", loss.name());
    let method = format!("leml-{}", loss.name());
    let mut paper_rows: Vec<PaperRow> =
        FULL_RATIOS.iter().map(|&p| (method.clone(), Some(p as f64 / 100.0), 1.0)).collect();
    paper_rows.push((format!("br-{}", loss.name()), None, 1.0));
    let save_md = |file: &RunFile| write_md(out_dir, &stem, &render(&title, intro, &file.records, &paper_rows));
    let k40 = rank_for(l, 40);
    let lambda = tune(&mut file, data, "leml-full", &method, k40, grid, 1.0, |lambda| {
        let m = leml_params(loss, k40, lambda, seed).fit(&xf, Targets::Full(&yf))?;
        evaluate(&m, &xv, &yv)
    })?;
    save_md(&file)?;
    for &pct in ratios {
        let kl = pct as f64 / 100.0;
        if file.has_test(&method, Some(kl), 1.0, lambda) {
            continue;
        }
        let k = rank_for(l, pct);
        let t = Instant::now();
        let m = leml_params(loss, k, lambda, seed).fit(&data.x, Targets::Full(&data.y))?;
        let secs = t.elapsed().as_secs_f64();
        let s = evaluate(&m, &data.x_test, &data.y_test)?;
        eprintln!(
            "xtask: {} {method} k = {k}: P@1 {:.2} P@3 {:.2} AUC {:.4} ({secs:.1} s)",
            data.name, s.p1, s.p3, s.auc
        );
        let settings = [
            ("split", json!("test")),
            ("k_over_l", json!(kl)),
            ("k", json!(k)),
            ("observed", json!(1.0)),
            ("lambda", json!(lambda)),
            ("lambda_from", json!(if grid.len() == 1 { "fixed" } else { "validation" })),
        ];
        let paper = |metric: &str| if data.stand_in { None } else { full_cell(&base, &method, metric, pct) };
        file.add(records("leml-full", data, &method, &s, None, &settings, secs, &paper))?;
        save_md(&file)?;
    }
    let br = format!("br-{}", loss.name());
    let lambda_br = tune(&mut file, data, "leml-full", &br, l, grid, 1.0, |lambda| {
        let m = BinaryRelevance::params().lambda(lambda).loss(loss).fit(&xf, Targets::Full(&yf))?;
        evaluate(&m, &xv, &yv)
    })?;
    if !file.has_test(&br, None, 1.0, lambda_br) {
        let t = Instant::now();
        let m = BinaryRelevance::params().lambda(lambda_br).loss(loss).fit(&data.x, Targets::Full(&data.y))?;
        let secs = t.elapsed().as_secs_f64();
        let s = evaluate(&m, &data.x_test, &data.y_test)?;
        eprintln!("xtask: {} {br}: P@1 {:.2} P@3 {:.2} AUC {:.4} ({secs:.1} s)", data.name, s.p1, s.p3, s.auc);
        let settings = [
            ("split", json!("test")),
            ("k", json!(l)),
            ("observed", json!(1.0)),
            ("lambda", json!(lambda_br)),
            ("lambda_from", json!(if grid.len() == 1 { "fixed" } else { "validation" })),
        ];
        file.add(records("leml-full", data, &br, &s, None, &settings, secs, &|_| None))?;
    }
    save_md(&file)
}

/// `leml-missing` on bibtex for one of `lr` / `sh`: lambdas of LEML and BR by
/// validation P@3 at 20 % observed (LEML at k = 0.4L), then per observed
/// fraction BR and LEML at every k/L of `ratios`, means over `draws` draws of Ω.
#[allow(clippy::too_many_arguments)]
pub fn run_missing_loss(
    data: &Data,
    loss: Loss,
    observed: &[usize],
    ratios: &[usize],
    draws: usize,
    grid: &[f64],
    out_dir: &Path,
    seed: u64,
    intro: &str,
) -> Result<()> {
    let stem = format!("leml-missing-{}", loss.name());
    let mut file = RunFile::open(out_dir, &stem)?;
    let l = data.n_labels();
    let val = Validation::new(data.x.n_rows(), seed)?;
    let (xf, yf) = data.train_rows(&val.fit);
    let (xv, yv) = data.train_rows(&val.val);
    let omega_fit = PartialLabels::sample(&yf, 0.2, -1.0, seed)?;
    let title = format!("`cargo xtask reproduce leml-missing --losses {}`", loss.name());
    let method = format!("leml-{}", loss.name());
    let br = format!("br-{}", loss.name());
    let mut paper_rows: Vec<PaperRow> = Vec::new();
    for &o in &OBSERVED {
        paper_rows.push((br.clone(), None, o as f64 / 100.0));
        for &r in &MISSING_RATIOS {
            paper_rows.push((method.clone(), Some(r as f64 / 100.0), o as f64 / 100.0));
        }
    }
    let save_md = |file: &RunFile| write_md(out_dir, &stem, &render(&title, intro, &file.records, &paper_rows));
    let k40 = rank_for(l, 40);
    let lambda = tune(&mut file, data, "leml-missing", &method, k40, grid, 0.2, |lambda| {
        let m = leml_params(loss, k40, lambda, seed).fit(&xf, Targets::Partial(&omega_fit))?;
        evaluate(&m, &xv, &yv)
    })?;
    let lambda_br = tune(&mut file, data, "leml-missing", &br, l, grid, 0.2, |lambda| {
        let m = BinaryRelevance::params().lambda(lambda).loss(loss).fit(&xf, Targets::Partial(&omega_fit))?;
        evaluate(&m, &xv, &yv)
    })?;
    save_md(&file)?;
    let from = if grid.len() == 1 { "fixed" } else { "validation" };
    for &obs_pct in observed {
        let obs = obs_pct as f64 / 100.0;
        // The same draws of Ω as the squared-loss rows of `leml-missing`.
        let omegas: Vec<PartialLabels> = (0..draws)
            .map(|d| PartialLabels::sample(&data.y, obs, -1.0, seed + 1000 * d as u64 + obs_pct as u64))
            .collect::<std::result::Result<_, _>>()?;
        let fit_rows = |file: &mut RunFile, name: &str, k_pct: Option<usize>, lam: f64| -> Result<()> {
            let kl = k_pct.map(|p| p as f64 / 100.0);
            if file.has_test(name, kl, obs, lam) {
                return Ok(());
            }
            let k = k_pct.map_or(l, |p| rank_for(l, p));
            let (runs, secs) = if k_pct.is_some() {
                let params = leml_params(loss, k, lam, seed);
                fit_draws(data, &omegas, |o| Ok(params.fit(&data.x, Targets::Partial(o))?))?
            } else {
                let params = BinaryRelevance::params().lambda(lam).loss(loss);
                fit_draws(data, &omegas, |o| Ok(params.fit(&data.x, Targets::Partial(o))?))?
            };
            let (mean, std) = mean_std(&runs);
            eprintln!(
                "xtask: leml-missing {name} k = {k} observed {obs_pct}%: P@3 {:.2} ({secs:.1} s per fit)",
                mean.p3
            );
            let mut settings = vec![
                ("split", json!("test")),
                ("k", json!(k)),
                ("observed", json!(obs)),
                ("draws", json!(draws)),
                ("lambda", json!(lam)),
                ("lambda_from", json!(from)),
            ];
            if let Some(v) = kl {
                settings.push(("k_over_l", json!(v)));
            }
            // BR has no rank: its paper value is the same under every k/L, compared at 0.4L.
            let paper = |metric: &str| missing_cell(metric, k_pct.unwrap_or(40), obs_pct, name);
            let std = (draws > 1).then_some(&std);
            file.add(records("leml-missing", data, name, &mean, std, &settings, secs, &paper))?;
            save_md(file)
        };
        fit_rows(&mut file, &br, None, lambda_br)?;
        for &k_pct in ratios {
            fit_rows(&mut file, &method, Some(k_pct), lambda)?;
        }
    }
    save_md(&file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(method: &str, metric: &str, split: &str, kl: Option<f64>, lambda: f64, v: f64) -> MetricRecord {
        let mut r = MetricRecord::new("leml-full", "bibtex", method, metric, v)
            .with_setting("split", split)
            .with_setting("observed", 1.0)
            .with_setting("lambda", lambda);
        if let Some(kl) = kl {
            r = r.with_setting("k_over_l", kl);
        }
        r
    }

    #[test]
    fn merge_replaces_same_row_keeps_others() {
        let mut old = vec![
            rec("leml-lr", "p_at_3", "test", Some(0.2), 1.0, 10.0),
            rec("leml-lr", "p_at_3", "test", Some(0.4), 1.0, 11.0),
            rec("leml-lr", "p_at_3", "validation", None, 1.0, 5.0),
        ];
        merge_records(
            &mut old,
            vec![
                // Same test row with another lambda: replaced, not duplicated.
                rec("leml-lr", "p_at_3", "test", Some(0.2), 3.0, 20.0),
                // Another validation lambda: a new point of the grid.
                rec("leml-lr", "p_at_3", "validation", None, 3.0, 6.0),
                // Same validation lambda: replaced.
                rec("leml-lr", "p_at_3", "validation", None, 1.0, 7.0),
                rec("br-lr", "p_at_3", "test", None, 1.0, 30.0),
            ],
        );
        let values: Vec<f64> = old.iter().map(|r| r.value).collect();
        assert_eq!(values, [20.0, 11.0, 7.0, 6.0, 30.0]);
    }

    #[test]
    fn run_file_resumes_and_renders_from_records() {
        let dir = std::env::temp_dir().join(format!("okr-leml-runfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut f = RunFile::open(&dir, "leml-full-x-lr").unwrap();
        assert!(f.records.is_empty());
        f.add(vec![rec("leml-lr", "p_at_3", "test", Some(0.2), 3.0, 20.0).with_paper(25.0)]).unwrap();
        f.add(vec![rec("leml-lr", "p_at_3", "validation", None, 3.0, 6.0)]).unwrap();
        let g = RunFile::open(&dir, "leml-full-x-lr").unwrap();
        assert_eq!(g.records.len(), 2);
        assert!(g.has_test("leml-lr", Some(0.2), 1.0, 3.0));
        assert!(!g.has_test("leml-lr", Some(0.2), 1.0, 1.0), "another lambda is a new row");
        assert!(!g.has_test("leml-lr", Some(0.4), 1.0, 3.0));
        assert_eq!(g.validation_p3("leml-lr", 3.0), Some(6.0));
        assert_eq!(g.validation_p3("leml-lr", 1.0), None);
        let rows: Vec<PaperRow> = vec![("leml-lr".into(), Some(0.2), 1.0), ("leml-lr".into(), Some(0.4), 1.0)];
        let md = render("t", "i", &g.records, &rows);
        assert!(md.contains("not run here** (time on the shared 2-core machine; a rerun with the same flags adds them): leml-lr at k/L 40% (100% observed)."), "{md}");
        assert!(md.contains("| leml-lr | 20% | 100% | - | 3.0 | - | 20.00 (25.00) |"), "{md}");
        assert!(md.contains("| 3 **(chosen)** |"), "{md}");
        assert!(md.contains("| leml-lr | p_at_3 | 1 | -5.00 | 0 of 1 |"), "{md}");
        assert!(!md.contains("of the grid"), "one validation point has no edge");
        let mut h = g.records.clone();
        merge_records(&mut h, vec![rec("leml-lr", "p_at_3", "validation", None, 1.0, 5.0)]);
        assert!(render("t", "i", &h, &[]).contains("the largest of the grid"));
        merge_records(&mut h, vec![rec("leml-lr", "p_at_3", "validation", None, 10.0, 5.5)]);
        assert!(!render("t", "i", &h, &[]).contains("of the grid"), "3 is inside 1..10");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
