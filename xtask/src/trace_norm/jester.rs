//! `cargo xtask reproduce tn-jester`: Table 1 of Luise et al. (ICML 2019),
//! jester3 column, on the real ratings: SELF + trace norm (masked multitask
//! R2) vs SELF + HS (per-pair kernel ridge), per-user 50/20/30 splits, 5
//! splits, validation-selected hyper-parameters, under both pair conventions
//! of spec 3.4; plus seeded stand-ins of the other Table 1 shapes.
//!
//! Protocol (spec 2.2-2.4, 3.4, decisions 5-13):
//! - split: per user, shuffled ratings, `floor(0.5 k)` train, `ceil(0.2 k)`
//!   validation, the rest test (nothing dropped);
//! - input features (linear kernel): $x_u = [r_u^{train}, 0] / \sqrt{1 + \|r_u^{train}\|^2}$;
//! - tasks: pairs $a < b$ of items, target $r_b - r_a$;
//! - `clean`: train / evaluate on pairs of items both rated in the same part
//!   with distinct ratings; `code` (the authors' code): missing ratings are 0
//!   and every pair with a non-zero difference enters (rated vs unrated too);
//! - decoding: maximum-agreement order (min weighted feedback arc set) over the
//!   items of the evaluated pairs, exact up to 18 items, heuristic beyond;
//! - metric: per-user normalized pairwise loss, mean over users with a non-zero denominator.
// Index loops mirror the matrix formulas (pairs a < b, entries (i, j)).
#![allow(clippy::needless_range_loop)]

use std::path::Path;
use std::time::Instant;

use crate::common::report::write_outputs;
use crate::common::stats::mean_std;
use anyhow::{Context, Result};
use faer::Mat;
use okr_decode::ranking::best_order;
use okr_estimators::trace_norm::masked::{MaskedOptions, MaskedTraceNorm, TaskEntries};
use okr_estimators::trace_norm::score_lambda_path_chunked;
use okr_eval::MetricRecord;
use okr_eval::ranking_metrics::pairwise_ranking_loss;
use okr_eval::readers::ranking::{Ratings, read_ratings};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Number of random splits.
pub const SPLITS: usize = 5;
/// Trace-norm lambda grid (unnormalized-sum convention of the masked objective).
pub const TN_LAMBDAS: [f64; 5] = [1e3, 3e3, 1e4, 3e4, 1e5];
/// Trace-norm rank grid.
pub const TN_RANKS: [usize; 2] = [5, 10];
/// L-BFGS iteration budget per trace-norm fit.
pub const TN_MAX_ITER: usize = 200;
/// HS per-task ridge grid (`(X_U^T X_U + n_t lambda I)`).
pub const HS_LAMBDAS: [f64; 8] = [1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0, 10.0, 100.0];

/// Which pairs enter training and evaluation (spec 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// Pairs of items both rated in the part, distinct ratings.
    Clean,
    /// The authors' code: missing = 0, every pair with a non-zero difference.
    Code,
}

impl Convention {
    fn name(self) -> &'static str {
        match self {
            Convention::Clean => "clean",
            Convention::Code => "code",
        }
    }
}

/// One user's three parts.
struct UserSplit {
    train: Vec<(usize, f64)>,
    val: Vec<(usize, f64)>,
    test: Vec<(usize, f64)>,
}

fn split_users(r: &Ratings, seed: u64) -> Vec<UserSplit> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    r.users
        .iter()
        .map(|u| {
            let mut v = u.clone();
            v.shuffle(&mut rng);
            let k = v.len();
            let n_tr = k / 2;
            let n_val = (k * 2).div_ceil(10).min(k - n_tr);
            let test = v.split_off(n_tr + n_val);
            let val = v.split_off(n_tr);
            UserSplit { train: v, val, test }
        })
        .collect()
}

/// Task index of the pair `a < b` among `n` items.
fn task(n: usize, a: usize, b: usize) -> usize {
    a * n - a * (a + 1) / 2 + b - a - 1
}

fn features(splits: &[UserSplit], n_items: usize) -> Mat<f64> {
    let mut x = Mat::zeros(splits.len(), n_items + 1);
    for (u, s) in splits.iter().enumerate() {
        let norm = (1.0 + s.train.iter().map(|(_, r)| r * r).sum::<f64>()).sqrt();
        for &(i, r) in &s.train {
            x[(u, i)] = r / norm;
        }
    }
    x
}

/// The pairs of one part under a convention, as `(a, b, r_a, r_b)` with `a < b`, `r_a != r_b`.
fn part_pairs(part: &[(usize, f64)], conv: Convention, n_items: usize) -> Vec<(usize, usize, f64, f64)> {
    let mut out = Vec::new();
    match conv {
        Convention::Clean => {
            for (x, &(a, ra)) in part.iter().enumerate() {
                for &(b, rb) in &part[x + 1..] {
                    if ra != rb {
                        let (lo, hi, rl, rh) = if a < b { (a, b, ra, rb) } else { (b, a, rb, ra) };
                        out.push((lo, hi, rl, rh));
                    }
                }
            }
        }
        Convention::Code => {
            let mut dense = vec![0.0; n_items];
            let mut rated = vec![false; n_items];
            for &(i, r) in part {
                dense[i] = r;
                rated[i] = true;
            }
            for a in 0..n_items {
                for b in a + 1..n_items {
                    if (rated[a] || rated[b]) && dense[a] != dense[b] {
                        out.push((a, b, dense[a], dense[b]));
                    }
                }
            }
        }
    }
    out
}

/// The training entries on the tasks observed in training only (compact
/// task ids), and the map from a pair task to its compact id (`u32::MAX` when
/// no user observes it in training: both methods then predict 0, the optimum
/// of either objective on an unobserved task).
fn train_entries(splits: &[UserSplit], conv: Convention, n_items: usize) -> Result<(TaskEntries, Vec<u32>)> {
    let users: Vec<Vec<(usize, f64)>> = splits
        .par_iter()
        .map(|s| {
            part_pairs(&s.train, conv, n_items)
                .into_iter()
                .map(|(a, b, ra, rb)| (task(n_items, a, b), rb - ra))
                .collect()
        })
        .collect();
    let mut compact = vec![u32::MAX; n_items * (n_items - 1) / 2];
    let mut n_tasks = 0u32;
    let users = users
        .into_iter()
        .map(|v| {
            v.into_iter()
                .map(|(t, y)| {
                    if compact[t] == u32::MAX {
                        compact[t] = n_tasks;
                        n_tasks += 1;
                    }
                    (compact[t] as usize, y)
                })
                .collect()
        })
        .collect();
    Ok((TaskEntries::from_users(n_tasks as usize, users)?, compact))
}

/// One user's evaluation problem: the items (graph nodes), their true ratings
/// (0 where unrated under `code`) and the evaluated pairs as local indices.
struct EvalUser {
    items: Vec<usize>,
    truth: Vec<f64>,
    pairs: Vec<(usize, usize)>,
}

fn eval_users(splits: &[UserSplit], conv: Convention, n_items: usize, test: bool) -> Vec<EvalUser> {
    splits
        .par_iter()
        .map(|s| {
            let part = if test { &s.test } else { &s.val };
            let pairs = part_pairs(part, conv, n_items);
            let mut local = vec![usize::MAX; n_items];
            let (mut items, mut truth) = (Vec::new(), Vec::new());
            let mut idx = |i: usize, r: f64, items: &mut Vec<usize>, truth: &mut Vec<f64>| {
                if local[i] == usize::MAX {
                    local[i] = items.len();
                    items.push(i);
                    truth.push(r);
                }
                local[i]
            };
            let pairs = pairs
                .into_iter()
                .map(|(a, b, ra, rb)| (idx(a, ra, &mut items, &mut truth), idx(b, rb, &mut items, &mut truth)))
                .collect();
            EvalUser { items, truth, pairs }
        })
        .collect()
}

/// Mean per-user loss and the fraction of users decoded exactly, for the
/// pair scores `score(u, t)` $\approx r_b - r_a$ of task `t = (a, b)`, `a < b`.
fn evaluate(users: &[EvalUser], n_items: usize, score: &(dyn Fn(usize, usize) -> f64 + Sync)) -> (f64, f64) {
    let per: Vec<(Option<f64>, bool)> = users
        .par_iter()
        .enumerate()
        .map(|(u, e)| {
            let m = e.items.len();
            if e.pairs.is_empty() {
                return (None, true);
            }
            let mut pref = vec![0.0; m * m];
            for &(i, j) in &e.pairs {
                let (a, b) = (e.items[i], e.items[j]);
                // g = estimate of r_b - r_a for a < b: evidence that b ranks above a.
                let g = score(u, task(n_items, a.min(b), a.max(b)));
                let g = if a < b { g } else { -g };
                pref[i * m + j] = g;
                pref[j * m + i] = -g;
            }
            let (order, exact) = best_order(&pref, m);
            let mut pos = vec![0.0; m];
            for (p, &i) in order.iter().enumerate() {
                pos[i] = p as f64;
            }
            (pairwise_ranking_loss(&e.truth, &pos, &e.pairs), exact)
        })
        .collect();
    let losses: Vec<f64> = per.iter().filter_map(|p| p.0).collect();
    let exact = per.iter().filter(|p| p.1).count() as f64 / per.len().max(1) as f64;
    (losses.iter().sum::<f64>() / losses.len().max(1) as f64, exact)
}

/// SELF + HS pair scores of one evaluation part, per lambda: per user, `(full
/// task, score)` sorted by task; tasks no training user observes score 0.
struct HsTable {
    per_lambda: Vec<Vec<Vec<(usize, f64)>>>,
}

impl HsTable {
    fn get(&self, li: usize, u: usize, t: usize) -> f64 {
        let row = &self.per_lambda[li][u];
        row.binary_search_by_key(&t, |p| p.0).map_or(0.0, |k| row[k].1)
    }
}

/// The SELF + HS scores of every lambda on the validation and test pairs, by
/// [`score_lambda_path_chunked`] (tasks solved 1024 at a time).
fn hs_tables(
    x: &Mat<f64>,
    entries: &TaskEntries,
    compact: &[u32],
    lambdas: &[f64],
    val: &[EvalUser],
    test: &[EvalUser],
    n_items: usize,
) -> Result<(HsTable, HsTable)> {
    // (part, user, full task) of every query, and the (user, compact task) pairs scored.
    let mut keys = Vec::new();
    let mut queries = Vec::new();
    for (p, part) in [val, test].into_iter().enumerate() {
        for (u, e) in part.iter().enumerate() {
            for &(i, j) in &e.pairs {
                let (a, b) = (e.items[i], e.items[j]);
                let t = task(n_items, a.min(b), a.max(b));
                if compact[t] != u32::MAX {
                    keys.push((p, u, t));
                    queries.push((u, compact[t] as usize));
                }
            }
        }
    }
    let scores = score_lambda_path_chunked(x.as_ref(), entries, lambdas, x.as_ref(), &queries, 1024)?;
    let mut tabs: Vec<HsTable> = [val.len(), test.len()]
        .iter()
        .map(|&n| HsTable { per_lambda: vec![vec![Vec::new(); n]; lambdas.len()] })
        .collect();
    for (li, s) in scores.iter().enumerate() {
        for (&(p, u, t), &v) in keys.iter().zip(s) {
            tabs[p].per_lambda[li][u].push((t, v));
        }
    }
    for tab in &mut tabs {
        for rows in &mut tab.per_lambda {
            for row in rows.iter_mut() {
                row.sort_unstable_by_key(|p| p.0);
                row.dedup_by_key(|p| p.0);
            }
        }
    }
    let test_tab = tabs.pop().context("two tables")?;
    let val_tab = tabs.pop().context("two tables")?;
    Ok((val_tab, test_tab))
}

/// The trace-norm grid searched on split 0's validation part.
#[derive(Debug, Clone, Copy)]
pub struct TnGrid {
    /// Lambdas (unnormalized-sum convention).
    pub lambdas: &'static [f64],
    /// Ranks.
    pub ranks: &'static [usize],
    /// L-BFGS iteration budget per fit.
    pub max_iter: usize,
}

/// The `tn-jester` grid: [`TN_LAMBDAS`] x [`TN_RANKS`], [`TN_MAX_ITER`] iterations.
pub const JESTER3_GRID: TnGrid = TnGrid { lambdas: &TN_LAMBDAS, ranks: &TN_RANKS, max_iter: TN_MAX_ITER };

/// Results of one (data set, split, convention).
struct SplitResult {
    method: &'static str,
    val: f64,
    test: f64,
    exact: f64,
    lambda: f64,
    rank: Option<usize>,
    seconds: f64,
}

/// A trace-norm model's score of user `u` on task `t`, `z_u . b_c` with `c`
/// the task's compact index (0 for a task without training entries).
fn tn_scores<'a>(
    model: &MaskedTraceNorm,
    x: &Mat<f64>,
    compact: &'a [u32],
    rank: usize,
) -> impl Fn(usize, usize) -> f64 + Sync + 'a {
    let (z, b) = (model.embed(x.as_ref()), model.b().to_owned());
    move |u, t| match compact[t] {
        u32::MAX => 0.0,
        c => (0..rank).map(|k| z[(u, k)] * b[(c as usize, k)]).sum::<f64>(),
    }
}

/// Hyper-parameters selected on a validation set: HS lambda index, trace-norm (lambda, rank).
#[derive(Debug, Clone, Copy)]
struct Selection {
    hs: usize,
    tn: (f64, usize),
}

fn run_split(
    ratings: &Ratings,
    conv: Convention,
    seed: u64,
    fixed: Option<Selection>,
    grid: &TnGrid,
    log: &mut String,
) -> Result<(Vec<SplitResult>, Selection)> {
    let (tn_lambdas, tn_ranks): (Vec<f64>, Vec<usize>) = match fixed {
        Some(sel) => (vec![sel.tn.0], vec![sel.tn.1]),
        None => (grid.lambdas.to_vec(), grid.ranks.to_vec()),
    };
    let n_items = ratings.n_items;
    let splits = split_users(ratings, seed);
    let x = features(&splits, n_items);
    let (entries, compact) = train_entries(&splits, conv, n_items)?;
    let val = eval_users(&splits, conv, n_items, false);
    let test = eval_users(&splits, conv, n_items, true);
    eprintln!(
        "  split {seed} {}: {} users, {} train entries on {} tasks, {} val pairs, {} test pairs",
        conv.name(),
        splits.len(),
        entries.n_entries(),
        entries.n_tasks(),
        val.iter().map(|e| e.pairs.len()).sum::<usize>(),
        test.iter().map(|e| e.pairs.len()).sum::<usize>()
    );
    let mut out = Vec::new();

    // SELF + HS.
    let t0 = Instant::now();
    let hs_lambdas: Vec<f64> = match fixed {
        Some(sel) => vec![HS_LAMBDAS[sel.hs]],
        None => HS_LAMBDAS.to_vec(),
    };
    // Chunked fit + score (memory-bounded: ml100k's ~1M pair tasks would need
    // 13 GB of weights per lambda), validation and test queries at once.
    let (val_tab, test_tab) = hs_tables(&x, &entries, &compact, &hs_lambdas, &val, &test, n_items)?;
    let fit_s = t0.elapsed().as_secs_f64();
    let mut best: Option<(f64, usize)> = None;
    for li in 0..hs_lambdas.len() {
        let (v, _) = evaluate(&val, n_items, &|u, t| val_tab.get(li, u, t));
        let line = format!("| {seed} | {} | self-hs | {:.0e} | - | {v:.4} | |\n", conv.name(), hs_lambdas[li]);
        eprint!("    {line}");
        log.push_str(&line);
        if best.is_none_or(|(b, _)| v < b) {
            best = Some((v, li));
        }
    }
    let (v, li) = best.context("empty HS grid")?;
    let hs_sel = HS_LAMBDAS.iter().position(|&l| l == hs_lambdas[li]).unwrap_or(0);
    let (te, ex) = evaluate(&test, n_items, &|u, t| test_tab.get(li, u, t));
    out.push(SplitResult {
        method: "self-hs",
        val: v,
        test: te,
        exact: ex,
        lambda: hs_lambdas[li],
        rank: None,
        seconds: fit_s,
    });

    // SELF + trace norm (masked R2), lambda path from large to small per rank, warm started.
    let t0 = Instant::now();
    let mut best: Option<(f64, f64, usize, MaskedTraceNorm)> = None;
    for &rank in &tn_ranks {
        for &lambda in tn_lambdas.iter().rev() {
            let opts = MaskedOptions { lambda, rank, max_iter: grid.max_iter, rel_tol: 1e-9, init_scale: 0.1, seed };
            // Cold seeded start per grid point: a warm start from a large-lambda
            // solution near 0 would sit next to the saddle at 0.
            let model = MaskedTraceNorm::fit(&x, &entries, &opts, None)?;
            let (v, _) = evaluate(&val, n_items, &tn_scores(&model, &x, &compact, rank));
            let line = format!(
                "| {seed} | {} | trace-norm | {lambda} | {rank} | {v:.4} | {} iters |\n",
                conv.name(),
                model.n_iter()
            );
            eprint!("    {line}");
            log.push_str(&line);
            if best.as_ref().is_none_or(|bst| v < bst.0) {
                best = Some((v, lambda, rank, model));
            }
        }
    }
    let fit_s = t0.elapsed().as_secs_f64();
    let (v, lambda, rank, model) = best.context("empty trace-norm grid")?;
    let (te, ex) = evaluate(&test, n_items, &tn_scores(&model, &x, &compact, rank));
    out.push(SplitResult {
        method: "trace-norm",
        val: v,
        test: te,
        exact: ex,
        lambda,
        rank: Some(rank),
        seconds: fit_s,
    });

    // Sanity baseline: items by mean training rating (same for every user).
    let mut sum = vec![0.0; n_items];
    let mut cnt = vec![0.0; n_items];
    for s in &splits {
        for &(i, r) in &s.train {
            sum[i] += r;
            cnt[i] += 1.0;
        }
    }
    let mean: Vec<f64> = (0..n_items).map(|i| if cnt[i] > 0.0 { sum[i] / cnt[i] } else { 0.0 }).collect();
    let mut pair_of = vec![(0, 0); n_items * (n_items - 1) / 2];
    for a in 0..n_items {
        for b in a + 1..n_items {
            pair_of[task(n_items, a, b)] = (a, b);
        }
    }
    let pop = |_: usize, t: usize| {
        let (a, b) = pair_of[t];
        mean[b] - mean[a]
    };
    let (pv, _) = evaluate(&val, n_items, &pop);
    let (pt, pe) = evaluate(&test, n_items, &pop);
    out.push(SplitResult {
        method: "item-mean",
        val: pv,
        test: pt,
        exact: pe,
        lambda: f64::NAN,
        rank: None,
        seconds: 0.0,
    });
    Ok((out, Selection { hs: hs_sel, tn: (lambda, rank) }))
}

/// Published Table 1 values (pairwise loss, std) by data set and method.
pub fn published(dataset: &str, method: &str) -> Option<(f64, f64)> {
    match (dataset, method) {
        ("jester3", "trace-norm") => Some((0.343, 0.003)),
        ("jester3", "self-hs") => Some((0.375, 0.005)),
        ("jester1", "trace-norm") => Some((0.247, 0.002)),
        ("jester1", "self-hs") => Some((0.386, 0.005)),
        ("jester2", "trace-norm") => Some((0.340, 0.003)),
        ("jester2", "self-hs") => Some((0.366, 0.002)),
        ("ml100k", "trace-norm") => Some((0.156, 0.005)),
        ("ml100k", "self-hs") => Some((0.312, 0.005)),
        ("sushi", "trace-norm") => Some((0.313, 0.003)),
        ("sushi", "self-hs") => Some((0.391, 0.003)),
        _ => None,
    }
}

/// Runs the protocol on one ratings data set under the given conventions and
/// returns the records and the validation log (markdown rows).
#[allow(clippy::too_many_arguments)]
pub fn run_dataset(
    experiment: &str,
    dataset: &str,
    ratings: &Ratings,
    stand_in: bool,
    conventions: &[Convention],
    splits: usize,
    seed: u64,
    grid: &TnGrid,
) -> Result<(Vec<MetricRecord>, String)> {
    let mut records = Vec::new();
    let mut log = String::new();
    for &conv in conventions {
        let mut per_method: Vec<(&'static str, Vec<SplitResult>)> = Vec::new();
        let mut selection = None;
        for s in 0..splits {
            let t0 = Instant::now();
            let (res, sel) = run_split(ratings, conv, seed + s as u64, selection, grid, &mut log)?;
            selection = Some(sel);
            eprintln!(
                "  {dataset} {} split {s}: {} ({:.0} s)",
                conv.name(),
                res.iter().map(|r| format!("{} {:.4}", r.method, r.test)).collect::<Vec<_>>().join(", "),
                t0.elapsed().as_secs_f64()
            );
            for r in res {
                match per_method.iter_mut().find(|(m, _)| *m == r.method) {
                    Some((_, v)) => v.push(r),
                    None => per_method.push((r.method, vec![r])),
                }
            }
        }
        for (method, rs) in per_method {
            let tests: Vec<f64> = rs.iter().map(|r| r.test).collect();
            let (m, sd) = mean_std(&tests);
            let (vm, _) = mean_std(&rs.iter().map(|r| r.val).collect::<Vec<_>>());
            let mut rec = MetricRecord::new(experiment, dataset, method, "pairwise_loss", m)
                .with_std(sd)
                .with_stand_in(stand_in)
                .with_setting("convention", conv.name())
                .with_setting("splits", splits as u64)
                .with_setting("val_pairwise_loss", vm)
                .with_setting("per_split", tests.clone())
                .with_setting("exact_fraction", rs.iter().map(|r| r.exact).sum::<f64>() / rs.len() as f64)
                .with_setting(
                    "lambda",
                    rs.iter().map(|r| if r.lambda.is_finite() { r.lambda } else { 0.0 }).collect::<Vec<_>>(),
                )
                .with_seconds(rs.iter().map(|r| r.seconds).sum::<f64>() / rs.len() as f64);
            if rs[0].rank.is_some() {
                rec = rec.with_setting("rank", rs.iter().map(|r| r.rank.unwrap_or(0) as u64).collect::<Vec<_>>());
            }
            if let Some((p, _)) = published(dataset.trim_end_matches("-standin"), method) {
                rec = rec.with_paper(p);
            }
            records.push(rec);
        }
    }
    Ok((records, log))
}

/// Loads jester3 from the data directory.
pub fn load_jester3() -> Result<Ratings> {
    let path = okr_eval::data_dir().join("jester/jester3_ratings.csv");
    read_ratings(&path).with_context(|| format!("reading {}", path.display()))
}

/// Renders the records as a markdown table.
pub fn render(records: &[MetricRecord]) -> String {
    let mut out = String::from(
        "| data set | users | convention | method | test loss (mean ± std over splits) | paper | gap | val loss | selected lambda | selected rank | exact FAS users | fit s / split |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in records {
        let get = |k: &str| r.setting.get(k).cloned().unwrap_or(serde_json::Value::Null);
        let paper = r.paper.map_or("-".into(), |p| format!("{p:.3}"));
        let gap = match (r.paper, r.stand_in) {
            (Some(p), false) => format!("{:+.3}", r.value - p),
            _ => "-".into(),
        };
        let name = if r.stand_in { format!("{} (stand-in)", r.dataset) } else { r.dataset.clone() };
        out.push_str(&format!(
            "| {name} | {} | {} | {} | **{:.3}** ± {:.3} | {paper} | {gap} | {:.3} | {} | {} | {:.0}% | {:.1} |\n",
            get("users"),
            get("convention").as_str().unwrap_or("-"),
            r.method,
            r.value,
            r.std.unwrap_or(f64::NAN),
            get("val_pairwise_loss").as_f64().unwrap_or(f64::NAN),
            get("lambda"),
            get("rank"),
            100.0 * get("exact_fraction").as_f64().unwrap_or(f64::NAN),
            r.seconds.unwrap_or(f64::NAN),
        ));
    }
    out
}

/// One line per (users, convention): which of trace norm and SELF + HS is
/// lower, by how much, in units of the larger split std, and the sanity baseline.
pub fn summary(records: &[MetricRecord]) -> String {
    let key =
        |r: &MetricRecord| (r.dataset.clone(), r.setting.get("users").cloned(), r.setting.get("convention").cloned());
    let mut out = String::from("## Findings (computed from the records)\n\n");
    let mut seen = Vec::new();
    for r in records {
        let k = key(r);
        if seen.contains(&k) {
            continue;
        }
        seen.push(k.clone());
        let find = |m: &str| records.iter().find(|q| key(q) == k && q.method == m);
        let (Some(tn), Some(hs)) = (find("trace-norm"), find("self-hs")) else { continue };
        let diff = tn.value - hs.value;
        let sd = tn.std.unwrap_or(0.0).max(hs.std.unwrap_or(0.0)).max(1e-12);
        let who = if diff < 0.0 { "trace norm is lower (better)" } else { "SELF + HS is lower (better)" };
        let base = find("item-mean").map_or(String::new(), |b| {
            let beats = if b.value < tn.value.min(hs.value) { "beats both" } else { "does not beat the better method" };
            format!("; item-mean {:.3} {beats}", b.value)
        });
        let paper = match (tn.paper, hs.paper) {
            (Some(t), Some(h)) => format!("; paper on the real data: trace norm lower by {:.3}", h - t),
            _ => String::new(),
        };
        out.push_str(&format!(
            "- {}, {} users, `{}`: trace norm {:.3} vs SELF + HS {:.3}: {who} by {:.3} ({:.1} split std{paper}){base}.\n",
            k.0,
            k.1.map_or("?".into(), |v| v.to_string()),
            k.2.and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            tn.value,
            hs.value,
            diff.abs(),
            diff.abs() / sd,
        ));
    }
    out
}

/// Bar chart of the records: one group per (data set, users, convention),
/// trace norm, SELF + HS and item-mean with std error bars, Table 1's values as black ticks.
pub fn plot(records: &[MetricRecord], path: &Path, title: &str) -> Result<()> {
    use crate::common::plot::{Bar, BarGroup, draw_bars_png};
    const METHODS: [&str; 3] = ["trace-norm", "self-hs", "item-mean"];
    let key = |r: &MetricRecord| {
        let users = r.setting.get("users").map_or(String::new(), |v| v.to_string());
        let conv = r.setting.get("convention").and_then(|v| v.as_str()).unwrap_or("-").to_string();
        (r.dataset.clone(), users, conv)
    };
    let mut groups: Vec<((String, String, String), BarGroup)> = Vec::new();
    for r in records {
        let Some(series) = METHODS.iter().position(|m| *m == r.method) else { continue };
        let k = key(r);
        let i = match groups.iter().position(|g| g.0 == k) {
            Some(i) => i,
            None => {
                let label = if r.stand_in {
                    format!("{} stand-in, {} users", r.dataset.trim_end_matches("-standin"), k.1)
                } else {
                    format!("{}, {} users, {}", r.dataset, k.1, k.2)
                };
                groups.push((k, BarGroup { label, bars: Vec::new() }));
                groups.len() - 1
            }
        };
        groups[i].1.bars.push(Bar { series, value: r.value, std: r.std, reference: r.paper });
    }
    let groups: Vec<BarGroup> = groups
        .into_iter()
        .map(|(_, mut g)| {
            g.bars.sort_by_key(|b| b.series);
            g
        })
        .collect();
    draw_bars_png(
        path,
        title,
        "pairwise loss (lower is better)",
        &["SELF + trace norm", "SELF + HS", "item-mean baseline"],
        &groups,
        None,
        (300 * groups.len().max(2) as u32 + 200, 520),
    )
}

/// Writes `<name>.json`, `<name>.md` and `<name>.png`.
pub fn write(out_dir: &Path, name: &str, records: &[MetricRecord], notes: &str) -> Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let title = if records.iter().any(|r| r.stand_in) {
        "Stand-ins of Table 1's shapes: pairwise loss (mean ± std over splits); ticks = paper on the real data"
    } else {
        "jester3: pairwise loss (mean ± std over splits); black ticks = Table 1"
    };
    plot(records, &out_dir.join(format!("{name}.png")), title)?;
    let md = format!(
        "# `cargo xtask reproduce {name}`\n\n{}\n{}\n{notes}\n\n![pairwise loss per setting]({name}.png)\n\nRecords: `{name}.json` (metric `pairwise_loss`, setting key `convention`).\n",
        render(records),
        summary(records)
    );
    write_outputs(out_dir, name, records, &md)
}

/// Re-renders `tn-jester.md` from `tn-jester.json` (after a change of the
/// report only), keeping the validation log of the existing markdown.
pub fn rerender(out_dir: &Path) -> Result<()> {
    for name in ["tn-jester", "tn-jester-standins"] {
        let Ok(records) = okr_eval::read_records(out_dir.join(format!("{name}.json"))) else { continue };
        let old = std::fs::read_to_string(out_dir.join(format!("{name}.md"))).unwrap_or_default();
        // Keep what follows the findings list (notes, validation log) up to the records line.
        let mut lines = old.lines().skip_while(|l| !l.starts_with("## Findings")).skip(1).peekable();
        while lines.peek().is_some_and(|l| l.is_empty() || l.starts_with("- ")) {
            lines.next();
        }
        let kept: Vec<&str> =
            lines.take_while(|l| !l.starts_with("Records: `")).filter(|l| !l.starts_with("![")).collect();
        write(out_dir, name, &records, kept.join("\n").trim_end())?;
    }
    Ok(())
}

/// Users kept for the `code` convention (its training set is ~15x larger;
/// the machine is shared), with `clean` rerun on the same users for comparison.
pub const CODE_USERS: usize = 2500;

/// The jester3 rows of Table 1 (real data) under experiment name `experiment`:
/// `clean` on all users, then both conventions on the first [`CODE_USERS`]
/// users; returns the records (tagged with `users`) and the validation log.
/// `max_users` caps the users everywhere (smoke runs only).
pub fn jester3_records(experiment: &str, seed: u64, max_users: Option<usize>) -> Result<(Vec<MetricRecord>, String)> {
    let mut ratings = load_jester3()?;
    if let Some(m) = max_users {
        ratings.users.truncate(m);
    }
    eprintln!("{experiment}: jester3, {} users, {} ratings", ratings.users.len(), ratings.n_ratings());
    let tag = |recs: Vec<MetricRecord>, users: usize| -> Vec<MetricRecord> {
        recs.into_iter().map(|r| r.with_setting("users", users as u64)).collect()
    };
    let (recs, mut log) =
        run_dataset(experiment, "jester3", &ratings, false, &[Convention::Clean], SPLITS, seed, &JESTER3_GRID)?;
    let mut records = tag(recs, ratings.users.len());
    let mut sub = ratings.clone();
    sub.users.truncate(CODE_USERS);
    let (recs, log2) = run_dataset(
        experiment,
        "jester3",
        &sub,
        false,
        &[Convention::Code, Convention::Clean],
        SPLITS,
        seed,
        &JESTER3_GRID,
    )?;
    records.extend(tag(recs, sub.users.len()));
    log.push_str(&log2);
    Ok((records, log))
}

/// The jester3 protocol notes.
pub const NOTES: &str = "Paper: Luise, Stamos, Pontil, Ciliberto (ICML 2019), Table 1, jester3 column \
(SELF + trace norm 0.343 ± 0.003, SELF + HS 0.375 ± 0.005). `item-mean` is a sanity baseline \
(items ordered by mean training rating, the same order for every user); a random order scores 0.5.\n\n\
Protocol: per-user 50/20/30 split (floor / ceil, nothing dropped), 5 splits (seeds 0..4), linear kernel on \
x_u = [r_u^train, 0] / sqrt(1 + |r_u^train|^2); one task per item pair a < b with target r_b - r_a. \
Trace norm = masked multitask R2 (spec 2.4: 1/2 sum over observed entries + lambda/2 (|A|^2 + |B|^2), \
uniform weights, L-BFGS, at most 200 iterations (or a relative decrease below 1e-9 five times in a row) from a seeded N(0, 0.1^2) start), \
selected on split 0's validation set over lambda in {1e3, 3e3, 1e4, 3e4, 1e5} x rank in {5, 10} (the machine \
is shared by five builds: splits 1-4 refit at split 0's selection, for both methods). SELF + HS = one \
kernel ridge per pair over the users observing it, (X_U^T X_U + n_t lambda I), lambda in {1e-2, 3e-2, 0.1, 0.3, 1, 3, 10, 100} (a first run showed \
the optimum above 0.3), \
selected on validation (split 0, as above). Decoding: maximum-agreement order (minimum weighted feedback arc set), exact DP \
up to 18 items, Eades-Lin-Smyth + insertion local search beyond. Std over the 5 splits with ddof = 1.\n\n\
Conventions (spec 3.4): `clean` trains and evaluates on pairs of items both rated in the same part with \
distinct ratings; `code` is the authors' code: missing ratings are 0 and every pair with a non-zero \
difference enters, so rated-vs-unrated pairs dominate and decoding orders all 100 items (heuristic). \
`clean` runs on all 24,938 users; `code` (about 15x more training entries) on the first 2,500 users, \
with `clean` repeated on the same 2,500 users so the two conventions compare on equal data.";
