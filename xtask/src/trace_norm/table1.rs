//! `cargo xtask reproduce tn-table1` (alias `tn-jester`): Table 1 of Luise et
//! al. (ICML 2019), every column okr can run, through the `tn-jester`
//! protocol ([`super::jester`]): sushi, MovieLens 100K and jester3 on the real
//! ratings of the shared data, jester1 and jester2 on labelled seeded
//! stand-ins (their ratings are not in the shared data). SELF + trace norm vs
//! SELF + HS vs the item-mean baseline, per-user 50/20/30 splits, validation
//! on the 20 %, mean ± std over the splits, the paper's figure beside ours.
//!
//! The records are merged per data set into `tn-table1.json`: `--datasets`
//! reruns some columns and keeps the others' records (and validation logs).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use okr_eval::MetricRecord;
use okr_eval::readers::ranking::{Ratings, read_movielens_100k, read_sushi};

use super::jester::{
    Convention, SPLITS, TN_MAX_ITER, TN_RANKS, TnGrid, jester3_records, plot, render, run_dataset, summary,
};
use super::standins::{STANDINS, shape_standin};
use crate::common::process::MachineState;
use crate::common::report::write_outputs;

/// The columns, in run and report order (cheapest first).
pub const DATASETS: [&str; 5] = ["sushi", "ml100k", "jester3", "jester1-standin", "jester2-standin"];

/// Record file stem.
const NAME: &str = "tn-table1";

/// Sushi trace-norm grid (as the sushi stand-in's: 5000 users with 5
/// training ratings each, few entries per pair task).
pub const SUSHI_GRID: TnGrid =
    TnGrid { lambdas: &[1.0, 10.0, 100.0, 1e3, 1e4], ranks: &TN_RANKS, max_iter: TN_MAX_ITER };

/// MovieLens 100K trace-norm grid: rank 5, at most 60 L-BFGS iterations
/// (about a million observed pair tasks; the ml100k stand-in selected 1e3).
pub const ML100K_GRID: TnGrid = TnGrid { lambdas: &[300.0, 1e3, 3e3], ranks: &[5], max_iter: 60 };

/// The records and validation log of one column.
fn run_column(name: &str, seed: u64) -> Result<(Vec<MetricRecord>, String)> {
    let data = okr_eval::data_dir();
    let real = |r: Ratings, grid: &TnGrid| -> Result<(Vec<MetricRecord>, String)> {
        let users = r.users.len() as u64;
        let ratings = r.n_ratings() as u64;
        let (recs, log) = run_dataset(NAME, name, &r, false, &[Convention::Clean], SPLITS, seed, grid)?;
        Ok((recs.into_iter().map(|x| x.with_setting("users", users).with_setting("ratings", ratings)).collect(), log))
    };
    match name {
        "sushi" => {
            let p = data.join("sushi/sushi_ratings.csv");
            real(read_sushi(&p).with_context(|| format!("reading {}", p.display()))?, &SUSHI_GRID)
        }
        "ml100k" => {
            let p = data.join("movielens/ml100k_ratings.csv");
            real(read_movielens_100k(&p).with_context(|| format!("reading {}", p.display()))?, &ML100K_GRID)
        }
        "jester3" => {
            let max_users = std::env::var("OKR_TN_MAX_USERS").ok().and_then(|v| v.parse().ok());
            jester3_records(NAME, seed, max_users)
        }
        _ => {
            let Some((k, st)) = STANDINS.iter().enumerate().find(|(_, s)| s.name == name) else {
                bail!("tn-table1: unknown data set {name} (known: {})", DATASETS.join(", "))
            };
            // The data seed of `tn-jester-standins`, so the two reports share the draws.
            let r = shape_standin(&st.shape, seed + 1000 * (k as u64 + 1));
            let (users, ratings) = (r.users.len() as u64, r.n_ratings() as u64);
            let (recs, log) = run_dataset(NAME, name, &r, true, &[Convention::Clean], st.splits, seed, &st.grid)?;
            Ok((
                recs.into_iter().map(|x| x.with_setting("users", users).with_setting("ratings", ratings)).collect(),
                log,
            ))
        }
    }
}

/// The validation-log sections `(data set, body)` of an existing report.
fn old_logs(md: &str) -> Vec<(String, String)> {
    let Some(i) = md.find("\n## Validation log\n") else { return Vec::new() };
    md[i..]
        .split("\n### ")
        .skip(1)
        .filter_map(|sec| {
            let (name, body) = sec.split_once('\n')?;
            Some((name.trim().to_string(), body.trim_end().to_string()))
        })
        .collect()
}

/// Runs the columns in `only` (default all of [`DATASETS`]), merging with the
/// records of the other columns already in `tn-table1.json`; rewrites the
/// report after every column, so a run stopped for time keeps what it finished.
pub fn run(out_dir: &Path, seed: u64, only: Option<&[String]>) -> Result<()> {
    let names: Vec<&str> = match only {
        Some(o) => {
            for n in o {
                if !DATASETS.contains(&n.as_str()) {
                    bail!("tn-table1: unknown data set {n} (known: {})", DATASETS.join(", "));
                }
            }
            DATASETS.iter().copied().filter(|d| o.iter().any(|n| n == d)).collect()
        }
        None => DATASETS.to_vec(),
    };
    std::fs::create_dir_all(out_dir)?;
    let mut records = okr_eval::read_records(out_dir.join(format!("{NAME}.json"))).unwrap_or_default();
    let mut logs = old_logs(&std::fs::read_to_string(out_dir.join(format!("{NAME}.md"))).unwrap_or_default());
    for name in names {
        let machine = MachineState::now();
        let t0 = Instant::now();
        eprintln!("{NAME}: {name}");
        let (recs, log) = run_column(name, seed)?;
        let secs = t0.elapsed().as_secs_f64();
        let machine_after = MachineState::now();
        eprintln!("{NAME}: {name} done in {secs:.0} s");
        records.retain(|r| r.dataset != name);
        records.extend(recs.into_iter().map(|r| {
            let r = r.with_setting("dataset_seconds", secs).with_setting("dgemm_gflops", machine.dgemm_gflops);
            match machine.load {
                Some(l) => r.with_setting("load_average", l),
                None => r,
            }
        }));
        logs.retain(|(n, _)| n != name);
        logs.push((
            name.to_string(),
            format!(
                "| split | convention | method | lambda | rank | val loss | |\n|---|---|---|---|---|---|---|\n{}\nWall time of the column: {secs:.0} s (all splits, 2 threads; {}).",
                log.trim_end(),
                machine.describe(&machine_after)
            ),
        ));
        write(out_dir, &mut records, &mut logs)?;
    }
    Ok(())
}

/// Re-renders `tn-table1.md` from `tn-table1.json` (after a change of the
/// notes only), keeping the validation logs.
pub fn rerender(out_dir: &Path) -> Result<()> {
    let mut records = okr_eval::read_records(out_dir.join(format!("{NAME}.json")))?;
    let mut logs = old_logs(&std::fs::read_to_string(out_dir.join(format!("{NAME}.md"))).unwrap_or_default());
    write(out_dir, &mut records, &mut logs)
}

fn order(name: &str) -> usize {
    DATASETS.iter().position(|d| *d == name).unwrap_or(DATASETS.len())
}

fn write(out_dir: &Path, records: &mut [MetricRecord], logs: &mut [(String, String)]) -> Result<()> {
    records.sort_by_key(|r| order(&r.dataset)); // stable: keeps the method / convention order
    logs.sort_by_key(|(n, _)| order(n));
    plot(
        records,
        &out_dir.join(format!("{NAME}.png")),
        "Table 1: pairwise loss (mean ± std over splits); black ticks = paper (on the real data)",
    )?;
    let mut md = format!("# `cargo xtask reproduce {NAME}` (alias `tn-jester`)\n\n{}\n", render(records));
    md.push_str(&summary(records));
    md.push_str("\n## The gap, per row\n\n");
    for (name, text) in GAPS {
        let of = |m: &str| records.iter().find(|r| r.dataset == name && r.method == m);
        let Some(tn) = of("trace-norm") else { continue };
        let fig = |r: Option<&MetricRecord>| {
            r.map_or("-".to_string(), |r| {
                let paper = r.paper.map_or(String::new(), |p| format!(" (paper {p:.3}, gap {:+.3})", r.value - p));
                format!("{:.3} ± {:.3}{paper}", r.value, r.std.unwrap_or(f64::NAN))
            })
        };
        md.push_str(&format!(
            "- **{name}** (first rows of the data set): trace norm {}, SELF + HS {}, item-mean {}. {text}\n",
            fig(Some(tn)),
            fig(of("self-hs")),
            fig(of("item-mean"))
        ));
    }
    let missing: Vec<&str> = DATASETS.iter().copied().filter(|d| !records.iter().any(|r| r.dataset == *d)).collect();
    if !missing.is_empty() {
        md.push_str(&format!(
            "\nNot run in this report yet (time on the shared machine): {}. The same protocol's rows for jester3 \
             (real) are in `tn-jester.md` and for the jester1 / jester2 stand-ins (same data seeds) in \
             `tn-jester-standins.md`; `cargo xtask reproduce tn-table1 --datasets {}` adds them here.\n",
            missing.join(", "),
            missing.join(",")
        ));
    }
    md.push_str(&format!(
        "\n## Protocol\n\n{NOTES}\n\n{}\n\n![pairwise loss per setting]({NAME}.png)\n\nRecords: `{NAME}.json` (metric `pairwise_loss`; settings `convention`, `users`, `ratings`, per-split losses, selections, `dataset_seconds` = wall time of the column).\n\n## Validation log\n\nSplit 0 runs the grid; later splits refit with split 0's selection.\n",
        super::jester::NOTES
    ));
    for (name, body) in logs.iter() {
        md.push_str(&format!("\n### {name}\n{body}\n"));
    }
    write_outputs(out_dir, NAME, records, &md)
}

const NOTES: &str = "Columns: **sushi** (5000 users x 100 sushis, 10 ratings each, 1-5) and **ml100k** \
(MovieLens 100K, 943 users x 1682 movies, 100,000 ratings, 20-737 per user) are the real matrices of the \
paper's code (shared data `sushi/`, `movielens/`); **jester3** is the real Jester dataset 3 \
(`jester/`); **jester1** and **jester2** are *seeded stand-ins* of their shapes (the ratings are not in the \
shared data; generator and shapes in `tn-jester-standins.md`, 2,500 users, 3 splits): their paper column is for \
orientation only. sushi and ml100k: clean convention (pairs of items both rated in the same part with distinct \
ratings), 5 splits (seeds 0..4), trace-norm grids sushi lambda {1, 10, 100, 1e3, 1e4} x rank {5, 10} (at most 200 \
L-BFGS iterations), ml100k lambda {300, 1e3, 3e3} x rank 5, at most 60 iterations (about a million observed pair \
tasks, time on 2 shared cores); SELF + HS over lambda {1e-2, ..., 100} as for jester3, scored in chunks of 1024 pair \
tasks (`okr_estimators::trace_norm::score_lambda_path_chunked`: the full weight matrix of ml100k's pairs would \
be 1683 x ~1M doubles, 13 GB, per lambda). jester3 below is the `tn-jester` protocol unchanged.";

/// Per data set: why our figure differs from Table 1's.
const GAPS: [(&str, &str); 5] = [
    (
        "sushi",
        "SELF + HS is 0.005 below the paper's 0.391 (under two split stds): reproduced. Trace norm is lower than SELF + HS \
         by 0.047, the paper's ordering (the paper's margin is 0.078), but 0.026 above its 0.313. What differs from the paper: (i) our trace-norm \
         estimator is the masked multitask R2 factorization (rank 5 or 10, L-BFGS, at most 200 iterations), not the \
         paper's solver, and its grid is searched on split 0's validation part only; (ii) the `clean` convention (pairs \
         of items both rated in the same part) rather than the authors' code (missing = 0, rated-vs-unrated pairs in \
         training and in the loss), a different loss on the same ratings; (iii) SELF + HS picked the largest ridge of \
         its grid (100), so a larger ridge might lower it slightly. The item-mean baseline (one popularity order for \
         every user) beats both methods: with 5 training ratings per user, the per-user input carries little beyond \
         item popularity.",
    ),
    (
        "ml100k",
        "SELF + HS matches the paper's 0.312 (gap +0.002, within the split std): reproduced. Trace norm does **not** \
         reproduce the paper's 0.156: ours is about twice as high and ties with SELF + HS (SELF + HS lower by 0.002, \
         half a split std, so the paper's ordering is not found), and the item-mean baseline is below both. What differs: (i) the trace-norm budget: rank 5 only, at most 60 L-BFGS iterations (the selected \
         lambda = 300 fits stop at that cap) and lambda in {300, 1e3, 3e3} on split 0, because an iteration over the \
         ~1.7 M training entries on ~0.5 M pair tasks takes seconds on the shared 2 cores; (ii) the `clean` convention: \
         under the authors' code (missing = 0 and every pair with a non-zero difference), with 1682 movies and users \
         rating 20-737 of them, almost every evaluated pair is rated vs unrated, where any 1-5 rating beats the 0 of an \
         unrated movie and movie popularity alone predicts most pairs; we did not run `code` on ml100k (about 1.4 M \
         pairs per user part and 1682-item decodings), so this reading of the paper's low figure is a hypothesis, not \
         a measurement; (iii) users with more than 18 evaluated items are decoded by the heuristic (Eades-Lin-Smyth + \
         local search), not exactly (the `exact FAS users` column).",
    ),
    (
        "jester3",
        "see `tn-jester.md` for the reading: under `clean` on all users SELF + HS is slightly lower than trace norm \
         (the reverse of the paper), under the authors' `code` convention trace norm is lower, as in the paper; both \
         of ours are below the paper's figures.",
    ),
    (
        "jester1-standin",
        "a stand-in: the gap compares a synthetic shape with the paper's real data, not a reproduction.",
    ),
    (
        "jester2-standin",
        "a stand-in: the gap compares a synthetic shape with the paper's real data, not a reproduction.",
    ),
];
