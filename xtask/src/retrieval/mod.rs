//! `cargo xtask reproduce retrieval`: identification by retrieval with
//! per-query candidate sets, the candidate-set-size study of the
//! metabolite-identification papers (Brouard et al. 2016; the reduced-rank
//! paper's Table 8 protocol) on the data okr holds.
//!
//! Label sets: for Bibtex, Corel5k and Delicious, each test point's
//! candidates are its true label set plus `D` distractors drawn (seeded,
//! without replacement) from the distinct label sets of train and test with
//! the same cardinality, the analogue of a same-formula database; `D` in
//! {10, 100, 1000, all}. Where a cardinality has fewer than `D` other sets,
//! all of them are used (the mean candidate count is reported).
//!
//! Fingerprints: the seeded fingerprint stand-in of `kae-fingerprints`
//! (4136 bits from a latent Bernoulli model; labelled in every row), with
//! inputs that are noisy linear views of the latent point, a Tanimoto output
//! kernel, and distractors drawn uniformly from a database of stand-in
//! fingerprints.
//!
//! Methods: IOKR, reduced-rank IOKR and SISOKR, all through
//! [`PerQueryDecoder`]. IOKR's `(c, lambda)` is chosen on a validation split
//! of the training set by the library's path search (example-based F1 of
//! decoded training outputs); the reduced rank by validation F1 at that
//! `(c, lambda)`; SISOKR runs at fixed sizes (see [`SISOKR_INPUT`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use faer::Mat;
use okr_decode::per_query::{PerQueryDecoder, Query};
use okr_estimators::select::GaussianIokrSearch;
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_estimators::{Fit, Iokr, ReducedRankIokr, SketchedIokr, SurrogateModel};
use okr_eval::{MetricRecord, RetrievalMetrics, retrieval_metrics};
use okr_kernels::{DenseRows, Gaussian, Kernel, LabelSets, Linear, Rows, Tanimoto, median_sq_distance};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::common::cv::{decode_f1, decoded_f1};
use crate::common::data::dense_or_sparse;
use crate::common::data::load_mulan_or_standin;
use crate::common::fingerprints::{LATENT_RANK, fingerprint_standin};
use crate::common::plot::{Panel, Series, draw_png};
use crate::common::process::load_average;
use crate::common::report::write_outputs;

/// Label-set data sets of the experiment.
pub const DATASETS: [&str; 3] = ["bibtex", "corel5k", "delicious"];
/// Distractors per query; `None`: every other set of the same cardinality.
const DISTRACTORS: [Option<usize>; 4] = [Some(10), Some(100), Some(1000), None];
/// Width multipliers of IOKR's validation search.
const C_GRID: [f64; 3] = [0.25, 0.5, 1.0];
/// Ridges of IOKR's validation search.
const LAMBDA_GRID: [f64; 4] = [1e-6, 1e-5, 1e-4, 1e-3];
/// Ranks of the reduced-rank validation.
const RR_RANKS: [usize; 3] = [64, 256, 768];
/// SISOKR's input sketch: uniform sub-sampling of this many training rows
/// (at most half of them); the range `sketch-multilabel` selected on Bibtex.
const SISOKR_INPUT: usize = 3000;
/// SISOKR's output sketch: uniform sub-sampling of this many rows.
const SISOKR_OUTPUT: usize = 800;
/// SISOKR's ridge relative to IOKR's (`sketch-multilabel` chose 1/30 to 1/10).
const SISOKR_LAMBDA_FACTOR: f64 = 0.1;
/// Fingerprint stand-in: training points, test queries, database size.
const FP_TRAIN: usize = 2000;
const FP_TEST: usize = 300;
const FP_DATABASE: usize = 20000;
/// Bits of the fingerprint stand-in (as `kae-fingerprints`).
const FP_BITS: usize = 4136;
/// Input dimension of the fingerprint stand-in's noisy latent views.
const FP_INPUT_DIM: usize = 100;
/// Noise standard deviation of those views.
const FP_NOISE: f64 = 0.5;

/// The candidate database of one data set and where each query's truth is.
struct Database {
    /// Distinct outputs.
    outputs: LabelSets,
    /// Database index of each test point's true output.
    truth: Vec<usize>,
    /// Database indices each test point's distractors are drawn from
    /// (shared per group, e.g. per cardinality).
    group_of: Vec<usize>,
    /// The groups.
    groups: Vec<Vec<usize>>,
}

/// Distinct label sets of train and test, grouped by cardinality.
fn label_database(train: &LabelSets, test: &LabelSets) -> Result<Database> {
    let sets: Vec<Vec<usize>> = train.iter().chain(test.iter()).map(<[usize]>::to_vec).collect();
    let (outputs, _) = LabelSets::new(train.n_labels(), sets)?.unique();
    let index: HashMap<&[usize], usize> = outputs.iter().enumerate().map(|(i, s)| (s, i)).collect();
    let mut by_card: HashMap<usize, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut card_group = vec![0; outputs.n_rows()];
    for (i, s) in outputs.iter().enumerate() {
        let g = *by_card.entry(s.len()).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
        card_group[i] = g;
    }
    let truth: Vec<usize> = test.iter().map(|s| index[s]).collect();
    let group_of = truth.iter().map(|&t| card_group[t]).collect();
    Ok(Database { outputs, truth, group_of, groups })
}

/// Each test point's query: its truth and up to `d` distractors of its
/// group (all of them for `None`), in a seeded random order.
fn draw_queries(db: &Database, d: Option<usize>, seed: u64) -> Vec<Query<LabelSets>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    db.truth
        .iter()
        .zip(&db.group_of)
        .enumerate()
        .map(|(row, (&t, &g))| {
            let mut others: Vec<usize> = db.groups[g].iter().copied().filter(|&c| c != t).collect();
            let take = d.map_or(others.len(), |d| d.min(others.len()));
            let (chosen, _) = others.partial_shuffle(&mut rng, take);
            let mut cands = chosen.to_vec();
            cands.push(t);
            cands.shuffle(&mut rng);
            let pos = cands.iter().position(|&c| c == t);
            Query::pooled(format!("q{row}"), row, cands, pos)
        })
        .collect()
}

/// Metrics and decode time of one model on one candidate-set size.
fn rank_queries<X: Rows, M: SurrogateModel<X, LabelSets> + ?Sized>(
    model: &M,
    x_test: &X,
    db: &Database,
    queries: Vec<Query<LabelSets>>,
) -> Result<(RetrievalMetrics, f64, f64)> {
    let n_q = queries.len();
    let mean_candidates = queries.iter().map(Query::n_candidates).sum::<usize>() as f64 / n_q as f64;
    let t = Instant::now();
    let ranked = PerQueryDecoder::new().top_k(Some(1)).rank_all(model, x_test, Some(&db.outputs), queries)?;
    let seconds_per_query = t.elapsed().as_secs_f64() / n_q as f64;
    let (opt, pess): (Vec<usize>, Vec<usize>) = ranked
        .iter()
        .map(|r| r.true_rank.map(|t| (t.optimistic, t.pessimistic)).context("query without its true rank"))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    Ok((retrieval_metrics(&opt, &pess)?, mean_candidates, seconds_per_query))
}

/// One data set's fitted models, chosen on a validation split.
struct Models<X, KY> {
    iokr: Iokr<X, LabelSets, Gaussian, KY>,
    reduced_rank: ReducedRankIokr<X, LabelSets, Gaussian, KY>,
    sisokr: SketchedIokr<X, LabelSets, Gaussian, KY>,
}

fn fit_models<X, KY>(name: &str, x: &X, y: &LabelSets, ky: KY, log: &mut String) -> Result<Models<X, KY>>
where
    X: Rows,
    Gaussian: Kernel<X>,
    Linear: Kernel<X>,
    KY: Kernel<LabelSets> + Clone,
{
    let median_sq = median_sq_distance(x, 2000);
    let (fit_idx, val_idx) = okr_eval::train_test_split(x.n_rows(), 0.2, 0)?;
    let search = GaussianIokrSearch::new(C_GRID.to_vec(), LAMBDA_GRID.to_vec()).median_rows(2000);
    let folds = [(fit_idx.clone(), val_idx.clone())];
    let choice = search.run(x, &folds, &mut decoded_f1(y, &ky), &mut || {})?;
    let (c, lambda) = (choice.c(), choice.lambda());
    let kx = Gaussian::new(c / median_sq)?;
    // Reduced rank on the same validation split, at IOKR's (c, lambda).
    let (xf, yf, xv, yv) = (x.select(&fit_idx), y.select(&fit_idx), x.select(&val_idx), y.select(&val_idx));
    let (cand_f, _) = yf.unique();
    let p_max = RR_RANKS.iter().copied().filter(|&p| p < xf.n_rows()).max().unwrap_or(1);
    let rr_val = ReducedRankIokr::params(kx.clone(), ky.clone()).rank(p_max).lambda1(lambda).fit(&xf, &yf)?;
    let mut rank = (f64::NEG_INFINITY, p_max);
    for &p in RR_RANKS.iter().filter(|&&p| p <= rr_val.rank()) {
        let m = rr_val.truncated(p)?;
        let f1 = decode_f1(&m, &xv, &yv, &cand_f)?;
        if f1 > rank.0 + 1e-12 {
            rank = (f1, p);
        }
    }
    let rank = rank.1;
    let n = x.n_rows();
    let (mx, my) = (SISOKR_INPUT.min(n / 2), SISOKR_OUTPUT.min(n / 2));
    let iokr = Iokr::params(kx.clone(), ky.clone()).lambda(lambda).fit(x, y)?;
    let reduced_rank = ReducedRankIokr::params(kx.clone(), ky.clone()).rank(rank).lambda1(lambda).fit(x, y)?;
    let sisokr = SketchedIokr::params(kx, ky)
        .lambda(lambda * SISOKR_LAMBDA_FACTOR)
        .input_sketch(Some(SketchSpec::new(SketchKind::Uniform, mx)))
        .output_sketch(Some(SketchSpec::new(SketchKind::Uniform, my)))
        .seed(0)
        .fit(x, y)?;
    let setting = format!(
        "c = {c}, lambda = {lambda:.1e} (validation F1 {:.2}); reduced rank p = {rank}; SISOKR uniform m_x = {mx}, \
         m_y = {my}, lambda = {:.1e}",
        100.0 * choice.best_score(),
        lambda * SISOKR_LAMBDA_FACTOR
    );
    writeln!(log, "- {name}: {setting}")?;
    eprintln!("xtask: retrieval {name}: {setting}");
    Ok(Models { iokr, reduced_rank, sisokr })
}

/// One row of the tables.
struct Row {
    dataset: String,
    stand_in: bool,
    method: &'static str,
    /// `Some(D)` or `None` for all.
    distractors: Option<usize>,
    mean_candidates: f64,
    metrics: RetrievalMetrics,
    seconds_per_query: f64,
}

/// Every candidate-set size for the three models of one data set.
fn rank_all_sizes<X, KY>(
    dataset: &str,
    stand_in: bool,
    models: &Models<X, KY>,
    x_test: &X,
    db: &Database,
    sizes: &[Option<usize>],
    seed: u64,
) -> Result<Vec<Row>>
where
    X: Rows,
    Gaussian: Kernel<X>,
    Linear: Kernel<X>,
    KY: Kernel<LabelSets> + Clone,
{
    let mut rows = Vec::new();
    for &d in sizes {
        // The same candidate sets for every method.
        let queries = draw_queries(db, d, seed);
        let methods: [(&'static str, &dyn SurrogateModel<X, LabelSets>); 3] =
            [("iokr", &models.iokr), ("reduced-rank-iokr", &models.reduced_rank), ("sisokr", &models.sisokr)];
        for (method, model) in methods {
            let (metrics, mean_candidates, seconds_per_query) = rank_queries(model, x_test, db, queries.clone())?;
            rows.push(Row {
                dataset: dataset.to_string(),
                stand_in,
                method,
                distractors: d,
                mean_candidates,
                metrics,
                seconds_per_query,
            });
        }
    }
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn run_labels<X>(
    name: &str,
    stand_in: bool,
    x: &X,
    y: &LabelSets,
    x_test: &X,
    y_test: &LabelSets,
    seed: u64,
    log: &mut String,
) -> Result<Vec<Row>>
where
    X: Rows,
    Gaussian: Kernel<X>,
    Linear: Kernel<X>,
{
    let ky = Gaussian::from_sigma2(y.mean_cardinality().max(f64::MIN_POSITIVE))?;
    let models = fit_models(name, x, y, ky, log)?;
    let db = label_database(y, y_test)?;
    writeln!(log, "  - {} distinct label sets in {} cardinality groups", db.outputs.n_rows(), db.groups.len())?;
    rank_all_sizes(name, stand_in, &models, x_test, &db, &DISTRACTORS, seed)
}

/// Noisy linear views of the latent points: `x = z W + e`, `W` (10 x 100)
/// and `e` standard normal (`e` scaled by [`FP_NOISE`]), seeded.
fn latent_views(z: &Mat<f64>, w: &Mat<f64>, seed: u64) -> Result<DenseRows> {
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut x = z * w;
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            let e: f64 = StandardNormal.sample(&mut rng);
            x[(i, j)] += FP_NOISE * e;
        }
    }
    Ok(DenseRows::new(x)?)
}

/// Fingerprints as sets of on bits.
fn bit_sets(fp: &okr_kernels::CsrRows) -> Result<LabelSets> {
    let sets = (0..fp.n_rows()).map(|i| fp.row(i).0.to_vec()).collect();
    Ok(LabelSets::new(FP_BITS, sets)?)
}

fn run_fingerprints(seed: u64, log: &mut String) -> Result<Vec<Row>> {
    use rand_distr::{Distribution, StandardNormal};
    let name = "fingerprints-standin";
    let (z_tr, fp_tr) = fingerprint_standin(FP_TRAIN, FP_BITS, seed + 11)?;
    let (z_te, fp_te) = fingerprint_standin(FP_TEST, FP_BITS, seed + 12)?;
    let (_, fp_db) = fingerprint_standin(FP_DATABASE, FP_BITS, seed + 13)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 14);
    let w = Mat::from_fn(LATENT_RANK, FP_INPUT_DIM, |_, _| StandardNormal.sample(&mut rng));
    let x = latent_views(&z_tr, &w, seed + 15)?;
    let x_test = latent_views(&z_te, &w, seed + 16)?;
    let (y, y_test, y_db) = (bit_sets(&fp_tr)?, bit_sets(&fp_te)?, bit_sets(&fp_db)?);
    let models = fit_models(name, &x, &y, Tanimoto, log)?;
    // The database: the test truths first, then the stand-in molecules
    // (duplicates merged); distractors are drawn from all of it.
    let sets: Vec<Vec<usize>> = y_test.iter().chain(y_db.iter()).map(<[usize]>::to_vec).collect();
    let (outputs, _) = LabelSets::new(FP_BITS, sets)?.unique();
    let index: HashMap<&[usize], usize> = outputs.iter().enumerate().map(|(i, s)| (s, i)).collect();
    let truth: Vec<usize> = y_test.iter().map(|s| index[s]).collect();
    let n_out = outputs.n_rows();
    let db = Database { truth, group_of: vec![0; FP_TEST], groups: vec![(0..n_out).collect()], outputs };
    writeln!(
        log,
        "  - database of {n_out} distinct fingerprints; inputs: {FP_INPUT_DIM}-d noisy views (noise sd {FP_NOISE}) of the 10-d latent point"
    )?;
    rank_all_sizes(name, true, &models, &x_test, &db, &DISTRACTORS, seed)
}

fn d_label(d: Option<usize>) -> String {
    d.map_or_else(|| "all".to_string(), |d| d.to_string())
}

fn records(rows: &[Row]) -> Vec<MetricRecord> {
    let mut out = Vec::new();
    for r in rows {
        let mut push = |metric: &str, value: f64, seconds: Option<f64>| {
            let mut rec = MetricRecord::new("retrieval", &r.dataset, r.method, metric, value);
            rec.stand_in = r.stand_in;
            rec.seconds = seconds;
            rec.setting.insert("distractors".into(), d_label(r.distractors).into());
            rec.setting.insert("mean_candidates".into(), r.mean_candidates.into());
            out.push(rec);
        };
        for (i, k) in okr_eval::retrieval_metrics::TOP_KS.iter().enumerate() {
            push(&format!("top_{k}_pessimistic"), r.metrics.pessimistic.top_k[i], None);
            push(&format!("top_{k}_optimistic"), r.metrics.optimistic.top_k[i], None);
        }
        push("mean_rank_pessimistic", r.metrics.pessimistic.mean_rank, None);
        push("median_rank_pessimistic", r.metrics.pessimistic.median_rank, None);
        push("decode_seconds_per_query", r.seconds_per_query, Some(r.seconds_per_query));
    }
    out
}

fn render(rows: &[Row], log: &str, load: (Option<f64>, Option<f64>)) -> String {
    let mut md = String::from("# `cargo xtask reproduce retrieval`\n\n");
    md.push_str(
        "Identification by retrieval: each test point ranks its own candidate set (its true output plus `D` \
         distractors), the protocol of the metabolite-identification papers. Top-k accuracy in percent with \
         ties counted against the true candidate (pessimistic) and, in brackets, in its favour (optimistic); \
         mean rank pessimistic. No paper reports these label-set figures: this is okr's own study of the \
         candidate-set size, not a reproduction.\n\n",
    );
    let mut dataset = "";
    for r in rows {
        if r.dataset != dataset {
            dataset = &r.dataset;
            let label = if r.stand_in { " (seeded stand-in)" } else { "" };
            let _ = write!(
                md,
                "\n## {dataset}{label}\n\n| method | D | mean candidates | top-1 | top-5 | top-10 | mean rank | ms / query |\n\
                 |---|---|---|---|---|---|---|---|\n"
            );
        }
        let (p, o) = (&r.metrics.pessimistic, &r.metrics.optimistic);
        let cell = |i: usize| format!("{:.1} ({:.1})", 100.0 * p.top_k[i], 100.0 * o.top_k[i]);
        let _ = writeln!(
            md,
            "| {} | {} | {:.0} | {} | {} | {} | {:.1} | {:.3} |",
            r.method,
            d_label(r.distractors),
            r.mean_candidates,
            cell(0),
            cell(1),
            cell(2),
            p.mean_rank,
            1e3 * r.seconds_per_query
        );
    }
    let fmt_load = |l: Option<f64>| l.map_or("unknown".to_string(), |l| format!("{l:.2}"));
    let _ = write!(
        md,
        "\n## Settings\n\n{log}\nDecode time per query: wall seconds of `PerQueryDecoder::rank_all` (coefficients, \
         atom products of the candidates, scores) divided by the number of queries, 1 GiB budget; one-minute load \
         average {} before and {} after the run (above 2 the machine was shared, so treat the times as upper \
         bounds).\n\n![top-k accuracy against D](retrieval.png)\n\nRecords: `retrieval.json` (fractions).\n",
        fmt_load(load.0),
        fmt_load(load.1)
    );
    md
}

fn plot(rows: &[Row], out_dir: &Path) -> Result<()> {
    let mut datasets: Vec<&str> = Vec::new();
    for r in rows {
        if !datasets.contains(&r.dataset.as_str()) {
            datasets.push(&r.dataset);
        }
    }
    let panels: Vec<Panel> = datasets
        .iter()
        .map(|&ds| {
            let mut series = Vec::new();
            for (i, method) in ["iokr", "reduced-rank-iokr", "sisokr"].iter().enumerate() {
                for (k_idx, k) in [(0usize, 1), (2, 10)] {
                    let points: Vec<(f64, f64)> = rows
                        .iter()
                        .filter(|r| r.dataset == ds && r.method == *method)
                        .map(|r| (r.mean_candidates, 100.0 * r.metrics.pessimistic.top_k[k_idx]))
                        .collect();
                    let label = format!("{method} top-{k}");
                    series.push(if k == 1 { Series::line(label, i, points) } else { Series::thin(label, i, points) });
                }
            }
            Panel::new(
                ds.to_string(),
                ("mean candidates per query (D + 1)", "top-k accuracy (%)"),
                (true, false),
                series,
            )
        })
        .collect();
    draw_png(&out_dir.join("retrieval.png"), &panels, 2, (560, 400))
}

/// Runs the experiment on `datasets` (label sets) and the fingerprint
/// stand-in, and writes `retrieval.{md,json,png}`.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64) -> Result<()> {
    let load_before = load_average();
    let mut log = String::new();
    let mut rows = Vec::new();
    for name in datasets {
        let data = load_mulan_or_standin(name, seed)?;
        let (y, y_test) = (&data.train.y, &data.test.y);
        let found = dense_or_sparse!(name, (&data.train.x, &data.test.x), |a, b| {
            run_labels(&data.name, data.stand_in, a, y, b, y_test, seed, &mut log)?
        });
        rows.extend(found);
    }
    rows.extend(run_fingerprints(seed, &mut log)?);
    let md = render(&rows, &log, (load_before, load_average()));
    write_outputs(out_dir, "retrieval", &records(&rows), &md)?;
    plot(&rows, out_dir)?;
    println!("{md}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queries hold their truth once, distractors of the truth's cardinality
    /// only, no repeats, and `min(D, available)` of them.
    #[test]
    fn queries_draw_same_cardinality_distractors() {
        let train =
            LabelSets::new(6, vec![vec![0], vec![1], vec![2], vec![0, 1], vec![1, 2], vec![0], vec![3, 4, 5]]).unwrap();
        let test = LabelSets::new(6, vec![vec![0], vec![0, 2], vec![3, 4, 5]]).unwrap();
        let db = label_database(&train, &test).unwrap();
        for d in [Some(1), Some(2), Some(100), None] {
            let queries = draw_queries(&db, d, 7);
            assert_eq!(queries.len(), 3);
            for (q, truth) in queries.iter().zip(test.iter()) {
                let okr_decode::per_query::CandidateList::Pool(idx) = &q.candidates else { panic!("pooled") };
                let t = idx[q.truth.unwrap()];
                assert_eq!(db.outputs.set(t), truth);
                let mut sorted = idx.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), idx.len(), "no repeated candidate");
                assert!(idx.iter().all(|&c| db.outputs.set(c).len() == truth.len()));
                let available = db.groups[db.group_of[q.test_row]].len() - 1;
                assert_eq!(idx.len(), 1 + d.map_or(available, |d| d.min(available)));
            }
        }
        // Seeded: the same draw twice.
        assert_eq!(draw_queries(&db, Some(1), 3), draw_queries(&db, Some(1), 3));
    }
}
