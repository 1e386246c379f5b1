//! `cargo xtask index`: `docs/results/index.md` from the result records
//! (`docs/results/*.json`), one row per record that has a published figure
//! beside it, and the experiments that have none.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use okr_eval::{MetricRecord, read_records};

/// Reads every `<dir>/*.json` record file (in name order) and writes `<dir>/index.md`.
pub fn write_index(dir: &Path) -> Result<()> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut by_file = Vec::new();
    for path in files {
        let records = read_records(&path).with_context(|| format!("reading records {}", path.display()))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        by_file.push((stem, records));
    }
    let md = render(&by_file);
    let out = dir.join("index.md");
    // Written beside and renamed, so a reader never sees half an index.
    let tmp = dir.join(".index.md.tmp");
    std::fs::write(&tmp, md)
        .and_then(|()| std::fs::rename(&tmp, &out))
        .with_context(|| format!("cannot write {}", out.display()))?;
    println!("wrote {} ({} record files)", out.display(), by_file.len());
    Ok(())
}

/// A number with about four significant digits.
fn num(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.1}"),
        a if a >= 1.0 => format!("{v:.3}"),
        _ => format!("{v:.4}"),
    }
}

/// Whether a setting value reads as a chosen setting (a name, a flag, an
/// integer or a short number) rather than a measured figure or a list.
fn is_setting(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(_) | serde_json::Value::Bool(_) => true,
        serde_json::Value::Number(n) => n.to_string().len() <= 8,
        _ => false,
    }
}

/// The setting entries that differ between records of one group.
fn varying(group: &[&MetricRecord]) -> Vec<String> {
    let keys: Vec<&String> = group.iter().flat_map(|r| r.setting.keys()).collect();
    let mut out: Vec<String> = Vec::new();
    for k in keys {
        if out.contains(k) || !group.iter().all(|r| r.setting.get(k).is_none_or(is_setting)) {
            continue;
        }
        let first = group[0].setting.get(k);
        if group.iter().any(|r| r.setting.get(k) != first) {
            out.push(k.clone());
        }
    }
    out
}

/// Rows of a paper's table on data okr holds (or a labelled stand-in where the
/// data is not public), and how many distinct settings of `metric` with a
/// published figure beside them make the table complete.
pub struct Expected {
    pub paper: &'static str,
    pub table: &'static str,
    pub experiment: &'static str,
    pub dataset: &'static str,
    pub method: &'static str,
    pub metric: &'static str,
    pub rows: usize,
}

const fn row(
    paper: &'static str,
    table: &'static str,
    experiment: &'static str,
    dataset: &'static str,
    method: &'static str,
    metric: &'static str,
    rows: usize,
) -> Expected {
    Expected { paper, table, experiment, dataset, method, metric, rows }
}

const LEML: &str = "LEML (Yu et al. 2014)";
const TN: &str = "trace-norm ranking (ICML 2019)";
const RR: &str = "reduced rank (JMLR 2022)";
const KAE: &str = "kernel autoencoders (AISTATS 2019)";

/// Every table row of the papers that okr reproduces: checked against the
/// records by [`coverage`].
pub const EXPECTED: &[Expected] = &[
    row(LEML, "3, 6-10", "leml-full", "bibtex", "leml-sq", "p_at_3", 5),
    row(LEML, "3, 6-10", "leml-full", "bibtex", "leml-lr", "p_at_3", 5),
    row(LEML, "3, 6-10", "leml-full", "bibtex", "leml-sh", "p_at_3", 5),
    row(LEML, "6-10", "leml-full", "bibtex", "cplst", "p_at_3", 5),
    row(LEML, "3, 6-10", "leml-full", "delicious", "leml-sq", "p_at_3", 5),
    row(LEML, "3, 6-10", "leml-full", "delicious", "leml-lr", "p_at_3", 5),
    row(LEML, "3, 6-10", "leml-full", "delicious", "leml-sh", "p_at_3", 5),
    row(LEML, "6-10", "leml-full", "delicious", "cplst", "p_at_3", 5),
    row(LEML, "5, 11-15", "leml-missing", "bibtex", "leml-sq", "p_at_3", 12),
    row(LEML, "5, 11-15", "leml-missing", "bibtex", "br-sq", "p_at_3", 4),
    row(LEML, "11-15", "leml-missing", "bibtex", "leml-lr", "p_at_3", 12),
    row(LEML, "11-15", "leml-missing", "bibtex", "br-lr", "p_at_3", 4),
    row(LEML, "11-15", "leml-missing", "bibtex", "leml-sh", "p_at_3", 12),
    row(LEML, "11-15", "leml-missing", "bibtex", "br-sh", "p_at_3", 4),
    row(TN, "1", "tn-table1", "sushi", "trace-norm", "pairwise_loss", 1),
    row(TN, "1", "tn-table1", "sushi", "self-hs", "pairwise_loss", 1),
    row(TN, "1", "tn-table1", "ml100k", "trace-norm", "pairwise_loss", 1),
    row(TN, "1", "tn-table1", "ml100k", "self-hs", "pairwise_loss", 1),
    row(TN, "1", "tn-table1", "jester3", "trace-norm", "pairwise_loss", 1),
    row(TN, "1", "tn-table1", "jester3", "self-hs", "pairwise_loss", 1),
    row(TN, "1 (stand-in)", "tn-jester-standins", "jester1-standin", "trace-norm", "pairwise_loss", 1),
    row(TN, "1 (stand-in)", "tn-jester-standins", "jester1-standin", "self-hs", "pairwise_loss", 1),
    row(TN, "1 (stand-in)", "tn-jester-standins", "jester2-standin", "trace-norm", "pairwise_loss", 1),
    row(TN, "1 (stand-in)", "tn-jester-standins", "jester2-standin", "self-hs", "pairwise_loss", 1),
    row(RR, "3", "rr-usps", "usps", "reduced-rank-iokr", "rbf_loss", 1),
    row(RR, "3", "rr-usps", "usps", "iokr", "rbf_loss", 1),
    row(RR, "3", "rr-usps", "usps", "kde", "rbf_loss", 1),
    row(RR, "5", "rr-multilabel-full", "bibtex", "reduced-rank-iokr", "f1_samples", 1),
    row(RR, "6", "rr-multilabel-full", "bibtex", "iokr", "fit_seconds", 1),
    row(RR, "6", "rr-multilabel-full", "bibtex", "reduced-rank-iokr", "fit_seconds", 1),
    row(RR, "6", "rr-usps", "usps", "iokr", "fit_seconds", 1),
    row(RR, "6", "rr-usps", "usps", "reduced-rank-iokr", "fit_seconds", 1),
    row(RR, "7", "rr-multilabel-small", "bibtex", "iokr", "f1_samples", 1),
    row(RR, "7", "rr-multilabel-small", "bibtex", "reduced-rank-iokr", "f1_samples", 1),
    row(RR, "7", "rr-multilabel-small", "corel5k", "iokr", "f1_samples", 1),
    row(RR, "7", "rr-multilabel-small", "corel5k", "reduced-rank-iokr", "f1_samples", 1),
    row(KAE, "2 (stand-in)", "kae-fingerprints", "metabolites-standin", "kae", "msre", 5),
];

/// Table rows of the papers deliberately not reproduced: (paper, table, rows, reason).
pub const SKIPPED: &[(&str, &str, &str, &str)] = &[
    (LEML, "3, 5-15", "autofood, compphys", "data not in the shared data (see its README)"),
    (LEML, "4", "eurlex, nus-wide, wiki", "data not in the shared data"),
    (
        LEML,
        "3, 6-10",
        "WSABIE (WAR loss) column",
        "no public code: the authors hand-tuned their own implementation; not implemented in okr",
    ),
    (
        LEML,
        "5, 6-15",
        "BCS column",
        "Bayesian compressed sensing ran from Kapoor et al.'s own code; not implemented in okr",
    ),
    (
        TN,
        "1",
        "MART, RankNet, RankBoost, AdaRank, Coordinate Ascent, LambdaMART, ListNet, Random Forests, SVMrank",
        "third-party baselines (RankLib, SVMrank binaries), not part of okr; the item-mean baseline stands in",
    ),
    (TN, "1", "jester1, jester2 (real)", "ratings not in the shared data: seeded stand-ins of their shapes, labelled"),
    (RR, "3", "SPEN", "structured prediction energy network: a neural training stack okr does not have"),
    (RR, "5", "LR, NN, SPEN, PRLR, DVN", "figures the paper quotes from other articles, not its own runs"),
    (RR, "5-7", "Bookmarks column", "data not in the shared data (rr-scale, sketch-scale use a labelled stand-in)"),
    (RR, "8", "metabolite identification", "data not public"),
    (KAE, "1, 3", "NCI-Cancer NMSE (59 cancers)", "the NCI-Cancer Gram matrix is not in the shared data"),
    (
        KAE,
        "2",
        "metabolites (real), AE (sigmoid / relu) columns",
        "data not public; the stand-in run compares KAE only",
    ),
];

/// Per [`EXPECTED`] entry: the number of distinct settings found (records of
/// its experiment, data set, method and metric with a published figure).
pub fn coverage(by_file: &[(String, Vec<MetricRecord>)]) -> Vec<(&'static Expected, usize)> {
    EXPECTED
        .iter()
        .map(|e| {
            let mut seen: Vec<String> = Vec::new();
            for r in by_file.iter().flat_map(|(_, rs)| rs) {
                if r.experiment == e.experiment
                    && r.dataset == e.dataset
                    && r.method == e.method
                    && r.metric == e.metric
                    && r.paper.is_some()
                {
                    let key = serde_json::to_string(&r.setting).unwrap_or_default();
                    if !seen.contains(&key) {
                        seen.push(key);
                    }
                }
            }
            (e, seen.len())
        })
        .collect()
}

fn coverage_md(by_file: &[(String, Vec<MetricRecord>)]) -> String {
    let mut md = String::from(
        "\n## Coverage of the papers' tables\n\nEvery table row of the papers on data okr holds (or a labelled \
         stand-in), checked against the records: `found` counts the distinct settings of the metric with a \
         published figure beside them (for LEML: k/L ratios, and observed fractions for the missing-label \
         tables).\n\n| paper | table | experiment | data set | method | metric | found / rows | status |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (e, found) in coverage(by_file) {
        let status = match found {
            0 => "**missing**",
            f if f < e.rows => "**partial**",
            _ => "complete",
        };
        let _ = writeln!(
            md,
            "| {} | {} | [{}]({}.md) | {} | {} | {} | {found} / {} | {status} |",
            e.paper, e.table, e.experiment, e.experiment, e.dataset, e.method, e.metric, e.rows
        );
    }
    md.push_str(
        "\n## Deliberately skipped\n\nTable rows of the papers not reproduced, with the reason.\n\n\
         | paper | table | rows | reason |\n|---|---|---|---|\n",
    );
    for (paper, table, rows, reason) in SKIPPED {
        let _ = writeln!(md, "| {paper} | {table} | {rows} | {reason} |");
    }
    md
}

/// The markdown of the index for `(file stem, records)` pairs.
pub fn render(by_file: &[(String, Vec<MetricRecord>)]) -> String {
    let mut md = String::from(
        "# Results index\n\nGenerated by `cargo xtask index` from the records `docs/results/*.json` (do not edit). \
         One row per record with a published figure: ours and the paper's in the record's units (fractions for \
         `f1_*`, percent for `p_at_k`, seconds for times), gap = ours - paper; `setting` shows what differs \
         between rows of the same experiment, data set, method and metric. Rows on stand-in data are marked: \
         their gap compares shapes, not values.\n\n\
         | experiment | data set | method | metric | setting | ours | paper | gap | link |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let mut without = Vec::new();
    for (stem, records) in by_file {
        let compared: Vec<&MetricRecord> = records.iter().filter(|r| r.paper.is_some()).collect();
        if compared.is_empty() {
            without.push((stem, records.len()));
            continue;
        }
        let mut groups: BTreeMap<(usize, &str, &str, &str), Vec<&MetricRecord>> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        for r in &compared {
            if !order.contains(&r.dataset.as_str()) {
                order.push(&r.dataset);
            }
            let pos = order.iter().position(|d| *d == r.dataset).unwrap_or(0);
            groups.entry((pos, &r.dataset, &r.method, &r.metric)).or_default().push(r);
        }
        for ((_, dataset, method, metric), group) in groups {
            let keys = varying(&group);
            for r in group {
                let setting: Vec<String> =
                    keys.iter().filter_map(|k| r.setting.get(k).map(|v| format!("{k}={v}"))).collect();
                let paper = r.paper.unwrap_or(f64::NAN);
                let ours = match r.std {
                    Some(s) => format!("{} ± {}", num(r.value), num(s)),
                    None => num(r.value),
                };
                let data = if r.stand_in { format!("{dataset} (stand-in)") } else { dataset.to_string() };
                let _ = writeln!(
                    md,
                    "| {} | {data} | {method} | {metric} | {} | {ours} | {} | {:+.4} | [{stem}.md]({stem}.md) |",
                    r.experiment,
                    setting.join(", "),
                    num(paper),
                    r.value - paper,
                );
            }
        }
    }
    md.push_str(
        "\n## Experiments without a published figure beside them\n\n| records | count | link |\n|---|---|---|\n",
    );
    for (stem, n) in without {
        let _ = writeln!(md, "| {stem} | {n} | [{stem}.md]({stem}.md) |");
    }
    md.push_str(&coverage_md(by_file));
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_gap_setting_and_sections() {
        let a = MetricRecord::new("rr-usps", "usps", "iokr", "rbf_loss", 0.75).with_paper(0.7).with_setting("rank", 8);
        let b = MetricRecord::new("rr-usps", "usps", "iokr", "rbf_loss", 0.72).with_paper(0.7).with_setting("rank", 16);
        let c = MetricRecord::new("kae-graphs", "mutag", "kae", "accuracy", 0.9);
        let md = render(&[("rr-usps".into(), vec![a, b]), ("kae-graphs".into(), vec![c])]);
        assert!(md.contains(
            "| rr-usps | usps | iokr | rbf_loss | rank=8 | 0.7500 | 0.7000 | +0.0500 | [rr-usps.md](rr-usps.md) |"
        ));
        assert!(md.contains("| rank=16 | 0.7200 |"));
        assert!(md.contains("| kae-graphs | 1 | [kae-graphs.md](kae-graphs.md) |"));
        assert!(!md.contains("| kae-graphs | mutag"));
    }

    fn leml(method: &str, kl: f64, paper: Option<f64>) -> MetricRecord {
        let r = MetricRecord::new("leml-full", "bibtex", method, "p_at_3", 30.0).with_setting("k_over_l", kl);
        match paper {
            Some(p) => r.with_paper(p),
            None => r,
        }
    }

    #[test]
    fn coverage_counts_settings_with_a_paper_figure() {
        let recs = vec![
            leml("leml-lr", 0.2, Some(25.65)),
            leml("leml-lr", 0.4, Some(28.2)),
            // Same setting twice (another file): counted once.
            leml("leml-lr", 0.4, Some(28.2)),
            // No published figure beside it: not a reproduced row.
            leml("leml-sh", 0.2, None),
        ];
        let cov = coverage(&[("leml-full-bibtex-lr".into(), recs)]);
        let found = |method: &str| cov.iter().find(|(e, _)| e.dataset == "bibtex" && e.method == method).unwrap().1;
        assert_eq!(found("leml-lr"), 2);
        assert_eq!(found("leml-sh"), 0);
        let md = render(&[("leml-full-bibtex-lr".into(), vec![leml("leml-lr", 0.2, Some(25.65))])]);
        assert!(md.contains("| bibtex | leml-lr | p_at_3 | 1 / 5 | **partial** |"), "{md}");
        assert!(md.contains("| bibtex | leml-sh | p_at_3 | 0 / 5 | **missing** |"), "{md}");
        assert!(md.contains("## Deliberately skipped"));
    }

    #[test]
    fn every_expected_row_and_skip_is_well_formed() {
        let mut keys = std::collections::HashSet::new();
        for e in EXPECTED {
            assert!(e.rows > 0, "{}", e.method);
            assert!(
                keys.insert((e.experiment, e.dataset, e.method, e.metric)),
                "{} {} listed twice",
                e.dataset,
                e.method
            );
        }
        for (paper, table, rows, reason) in SKIPPED {
            assert!(!paper.is_empty() && !table.is_empty() && !rows.is_empty() && reason.len() > 10, "{rows}");
        }
    }
}
