//! Result records -> `docs/results/<name>.json` and a markdown table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use okr_eval::{MetricRecord, write_records};

/// A published figure and where it comes from.
#[derive(Debug, Clone, Copy)]
pub struct PaperValue {
    /// The value as the paper prints it (F1 x100).
    pub value: f64,
    /// Paper and table.
    pub source: &'static str,
}

/// Metrics shown as percentages (stored as fractions).
const PERCENT: [&str; 3] = ["f1_samples", "f1_micro", "f1_macro"];

/// Writes `<out_dir>/<name>.json` (the records) and `<out_dir>/<name>.md`
/// (`md`), creating `out_dir` if needed.
pub fn write_outputs(out_dir: &Path, name: &str, records: &[MetricRecord], md: &str) -> Result<()> {
    std::fs::create_dir_all(out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    write_records(out_dir.join(format!("{name}.json")), records)?;
    write_md(out_dir, name, md)
}

/// Writes `<out_dir>/<name>.md`.
pub fn write_md(out_dir: &Path, name: &str, md: &str) -> Result<()> {
    let path = out_dir.join(format!("{name}.md"));
    okr_eval::write_atomic(&path, |w| std::io::Write::write_all(w, md.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `<out_dir>/<name>.json` (all records) and `<out_dir>/<name>.md`
/// (one row per data set and method, published figures beside ours), and
/// returns the markdown table.
pub fn write_results(
    out_dir: &Path,
    name: &str,
    records: &[MetricRecord],
    published: &dyn Fn(&str) -> Vec<PaperValue>,
    notes: &str,
) -> Result<String> {
    write_results_with(out_dir, name, records, &|d, _| published(d), "published IOKR F1", false, notes)
}

/// [`write_results`] with published figures by (data set, method), a header
/// for their column, and optionally a `rank` column after `lambda`.
pub fn write_results_with(
    out_dir: &Path,
    name: &str,
    records: &[MetricRecord],
    published: &dyn Fn(&str, &str) -> Vec<PaperValue>,
    paper_header: &str,
    show_rank: bool,
    notes: &str,
) -> Result<String> {
    let table = render_table(records, published, paper_header, show_rank);
    let md = format!(
        "# `cargo xtask reproduce {name}`\n\n{table}\n\n{notes}\n\nRecords: `{name}.json` (one per measured figure; \
         fractions, not percentages).\n"
    );
    write_outputs(out_dir, name, records, &md)?;
    Ok(table)
}

/// One markdown row per (data set, method): the F1 columns in percent, the
/// published values, the gap, then the selected hyper-parameters and times.
pub fn render_table(
    records: &[MetricRecord],
    published: &dyn Fn(&str, &str) -> Vec<PaperValue>,
    paper_header: &str,
    show_rank: bool,
) -> String {
    let mut rows: BTreeMap<(usize, String, String), BTreeMap<String, &MetricRecord>> = BTreeMap::new();
    let mut order = Vec::new();
    for r in records {
        if !order.contains(&r.dataset) {
            order.push(r.dataset.clone());
        }
        let pos = order.iter().position(|d| d == &r.dataset).unwrap();
        rows.entry((pos, r.dataset.clone(), r.method.clone())).or_default().insert(r.metric.clone(), r);
    }
    let rank_head = if show_rank { " rank |" } else { "" };
    let rank_rule = if show_rank { "---|" } else { "" };
    let mut out = format!(
        "| data set | method | n / n_test | c | lambda |{rank_head} CV F1 | **test F1** | {paper_header} | gap | F1 micro | F1 macro | Hamming | fit s | decode s |\n\
         |---|---|---|---|---|{rank_rule}---|---|---|---|---|---|---|---|---|\n",
    );
    for ((_, dataset, method), metrics) in rows {
        let any = metrics.values().next().unwrap();
        let s = &any.setting;
        let get = |k: &str| s.get(k).and_then(|v| v.as_f64());
        let val = |m: &str| metrics.get(m).map(|r| if PERCENT.contains(&m) { r.value * 100.0 } else { r.value });
        let fmt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
        let f1 = val("f1_samples");
        let base = dataset.trim_end_matches("-standin");
        let papers = published(base, &method);
        let rank = if show_rank { format!(" {} |", fmt(get("rank"), 0)) } else { String::new() };
        let paper_txt = if papers.is_empty() {
            "-".to_string()
        } else {
            papers.iter().map(|p| format!("{:.1} ({})", p.value, p.source)).collect::<Vec<_>>().join("; ")
        };
        let gap = match (f1, papers.first()) {
            (Some(f), Some(p)) if !any.stand_in => format!("{:+.1}", f - p.value),
            _ => "-".to_string(),
        };
        let name = if any.stand_in { format!("{dataset} (stand-in)") } else { dataset.clone() };
        let _ = writeln!(
            out,
            "| {name} | {method} | {} / {} | {} | {} |{rank} {} | **{}** | {paper_txt} | {gap} | {} | {} | {} | {} | {} |",
            fmt(get("n"), 0),
            fmt(get("n_test"), 0),
            fmt(get("c"), 3),
            get("lambda").map_or("-".into(), |v| format!("{v:.0e}")),
            fmt(get("cv_f1_samples").map(|v| v * 100.0), 2),
            fmt(f1, 2),
            fmt(val("f1_micro"), 2),
            fmt(val("f1_macro"), 2),
            fmt(val("hamming"), 4),
            fmt(val("fit_seconds"), 2),
            fmt(val("decode_seconds"), 2),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_outputs_creates_the_directory_and_writes_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("results");
        let records = vec![MetricRecord::new("exp", "data", "iokr", "f1_samples", 0.25).with_setting("c", 0.5)];
        write_outputs(&out, "exp", &records, "# exp\n").unwrap();
        assert_eq!(okr_eval::read_records(out.join("exp.json")).unwrap(), records);
        assert_eq!(std::fs::read_to_string(out.join("exp.md")).unwrap(), "# exp\n");
    }
}
