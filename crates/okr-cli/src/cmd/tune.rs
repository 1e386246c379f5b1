//! `okr tune`: flags -> one [`okr::tune::TuneRequest`] -> the library's
//! search ([`okr::tune`]) -> the report, then the refit of `okr fit` with
//! the choice.

use std::time::Instant;

use anyhow::{Context, Result, bail};
use okr::tune::{SCREEN_ROWS, TuneQueries, TuneRequest, Tuned};
use okr::{OutputKind, TrainOutputs};
use okr_decode::per_query::{Query, read_candidate_pool};
use okr_estimators::select::GridSearchResult;
use okr_kernels::LabelSets;
use serde_json::json;

use super::fit::check;
use super::outputs::Owned;
use crate::cli::TuneArgs;
use crate::output::write_result;

pub fn run(a: &TuneArgs) -> Result<()> {
    let f = &a.fit;
    if let Some(path) = &f.sample_weights {
        bail!(
            "--sample-weights {}: okr tune's cross-validated search is unweighted; tune without weights, then \
             okr fit --recipe with --sample-weights",
            path.display()
        );
    }
    let recipe = crate::recipe::from_flags(f)?;
    let groups_text = a.groups.as_deref().map(read_groups).transpose()?;
    let request = TuneRequest {
        recipe: &recipe,
        cv: a.cv,
        lambdas: a.lambdas.clone(),
        widths: a.widths.clone(),
        groups: groups_text.as_deref(),
        output_gammas: a.output_gammas.clone(),
        scoring: a.scoring,
        // Read with the data; the early check only asks whether they are given.
        queries: a.candidates_per_query.as_ref().map(|_| TuneQueries { queries: &[], pool: None }),
    };
    // A bad request fails before a large file is read.
    okr::tune::check(&request).map_err(flag_names)?;
    check(f)?;
    let (data, owned) = super::outputs::training_data(f, recipe.output.kind)?;
    let y = match (&owned, recipe.output.kind) {
        (Owned::Vectors(v), _) => TrainOutputs::Vectors(v),
        (Owned::Sets, OutputKind::Fingerprint) => TrainOutputs::Fingerprints(&data.y),
        (Owned::Sets, _) => TrainOutputs::Labels(&data.y),
        _ => bail!("okr tune searches label-set, fingerprint and vector outputs"),
    };
    let queries = read_queries(a, &y)?;
    let request = TuneRequest {
        queries: queries.as_ref().map(|(q, pool)| TuneQueries { queries: q, pool: pool.as_ref() }),
        ..request
    };
    if let Some(g) = &groups_text
        && g.len() != data.n_samples()
    {
        bail!(
            "--groups {}: {} groups for the {} rows of {}",
            a.groups.as_ref().expect("read above").display(),
            g.len(),
            data.n_samples(),
            f.train.display()
        );
    }
    // okr::tune reports each fit to `crate::progress`'s bar.
    let start = Instant::now();
    let tuned = match &f.input_gram {
        Some(path) => {
            let gram = super::fit::read_train_gram(path, data.n_samples(), &f.train)?;
            okr::tune::tune_gram(&request, &gram, &y, &mut || {})
        }
        None => okr::tune::tune(&request, &data.x, &y, &mut || {}),
    }
    .map_err(flag_names)?;
    let seconds = start.elapsed().as_secs_f64();
    let report = if a.json { json_report(&tuned, seconds) } else { text_report(&tuned, seconds) };
    write_result(None, |w| w.write_all(report.as_bytes()))?;
    if tuned.failed > 0 {
        eprintln!(
            "okr: warning: {} fits failed and were scored NaN, never chosen (usually a ridge too small \
             for the estimator: raise the smallest of --lambdas)",
            tuned.failed
        );
    }
    super::fit::fit_read(f, &tuned.refit, &data, &owned, Some(&tuned.criterion))
}

/// The library's words for the search's settings, as the flags spell them
/// (the message is the library's; only the names change).
fn flag_names(e: okr::Error) -> anyhow::Error {
    let mut text = e.to_string();
    for (words, flag) in [
        ("invalid cv = ", "invalid --cv "),
        ("cv loo", "--cv loo"),
        ("cv gcv-rkhs", "--cv gcv-rkhs"),
        ("(for example 3)", "(--cv 3)"),
        ("invalid lambdas value", "invalid --lambdas value"),
        ("invalid widths value", "invalid --widths value"),
        ("invalid output_gammas value", "invalid --output-gammas value"),
        ("give the queries (a candidate file)", "give the queries with --candidates-per-query FILE"),
        ("queries apply to a retrieval scoring", "--candidates-per-query applies to a retrieval --scoring"),
        ("invalid scoring = ", "invalid --scoring "),
        ("widths do not apply to a precomputed Gram", "--widths does not apply with --input-gram"),
        ("search the output width with output_gammas", "search the output width with --output-gammas"),
        ("with output_gammas: leave it unset", "with --output-gammas: drop --output-gamma"),
        ("output_gammas are searched on a precomputed Gram", "--output-gammas applies with --input-gram"),
        ("output_gammas need an output kernel", "--output-gammas needs an output kernel"),
        ("the grid (lambdas / widths)", "the grid with --lambdas / --widths"),
        ("the input gamma is", "--gamma is"),
        ("the input sigma2 is", "--sigma2 is"),
        ("lambda1 is", "--lambda1 is"),
        ("lambda2 is", "--lambda2 is"),
        ("not estimator ", "not --estimator "),
        ("vector outputs, not ", "vector outputs, not --output-kind "),
    ] {
        text = text.replace(words, flag);
    }
    if text.starts_with("lambda is") {
        text.insert_str(0, "--");
    }
    anyhow::anyhow!(text)
}

/// Queries of training rows and the pool of a pool-mode candidate file.
type Queries = (Vec<Query<LabelSets>>, Option<LabelSets>);

/// The queries of `--candidates-per-query` (and the pool of a pool-mode
/// file) for a retrieval `--scoring`, read as `okr rank` reads them.
fn read_queries(a: &TuneArgs, y: &TrainOutputs<'_>) -> Result<Option<Queries>> {
    let Some(file) = &a.candidates_per_query else {
        if a.pool.is_some() {
            bail!("--pool applies with --candidates-per-query only");
        }
        return Ok(None);
    };
    let (TrainOutputs::Labels(sets) | TrainOutputs::Fingerprints(sets)) = y else {
        bail!("--candidates-per-query ranks candidate label sets or fingerprints, not vector outputs");
    };
    let width = sets.n_labels();
    let read_pool = |p: &std::path::Path, w: usize| Ok(read_candidate_pool::<LabelSets>(p, w)?);
    let (reader, pool) = super::rank::open_candidates(file, a.pool.as_deref(), width, &read_pool)?;
    let queries = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(Some((queries, pool)))
}

/// A group per training row, one per line (any text: rows with the same
/// text share a group, as every spectrum of one molecule).
fn read_groups(path: &std::path::Path) -> Result<Vec<u64>> {
    let text =
        okr_kernels::bounded::read_text(path, 1 << 30).with_context(|| format!("--groups {}", path.display()))?;
    let mut ids = std::collections::HashMap::new();
    Ok(text
        .lines()
        .map(|l| {
            let n = ids.len() as u64;
            *ids.entry(l.trim().to_string()).or_insert(n)
        })
        .collect())
}

/// A score as printed: F1 x100, errors as they are (negated back).
fn shown(t: &Tuned, score: f64) -> f64 {
    if t.error { -score } else { 100.0 * score }
}

fn what(t: &Tuned) -> &'static str {
    t.what
}

fn text_report(t: &Tuned, seconds: f64) -> String {
    let r = &t.result;
    let mut out = format!("okr tune: {} in {seconds:.1} s\n", t.criterion);
    if let Some(c) = &t.coarse {
        out.push_str(&format!(
            "coarse: the width on {SCREEN_ROWS} seeded training rows, {} widths x {} ridges\n",
            c.widths.len(),
            c.lambdas.len()
        ));
        out.push_str(&grid_text(t, c));
        out.push_str(&format!("fine: the ridge on all training rows at c = {}\n", c.c()));
    }
    out.push_str(&grid_text(t, r));
    out.push_str(&format!(
        "chosen: c = {} (gamma = {:.6}), lambda = {:e}, mean {} {:.4}\n",
        r.c(),
        r.gamma(),
        r.lambda(),
        what(t),
        shown(t, r.best_score())
    ));
    out
}

/// One line per grid cell: width, ridge, mean, std and the fold scores.
fn grid_text(t: &Tuned, r: &GridSearchResult) -> String {
    let mut out = format!(
        "{:>8} {:>8} {:>10} {:>8} {:>9}  fold scores ({}; median squared distance {:.6})\n",
        "c",
        "lambda",
        "mean",
        "std",
        "",
        what(t),
        r.median_sq_dist
    );
    for (wi, &c) in r.widths.iter().enumerate() {
        for (li, &l) in r.lambdas.iter().enumerate() {
            let mark = if (wi, li) == (r.best_width, r.best_lambda) { "<- best" } else { "" };
            let folds: Vec<String> = r.fold_scores[wi][li].iter().map(|v| format!("{:.4}", shown(t, *v))).collect();
            out.push_str(&format!(
                "{c:>8} {l:>8.0e} {:>10.4} {:>8.4} {mark:>9}  {}\n",
                shown(t, r.mean[wi][li]),
                if t.error { r.std[wi][li] } else { 100.0 * r.std[wi][li] },
                folds.join(" ")
            ));
        }
    }
    out
}

fn grid_json(r: &GridSearchResult) -> serde_json::Value {
    json!({ "median_sq_dist": r.median_sq_dist, "cells": r.cells() })
}

fn json_report(t: &Tuned, seconds: f64) -> String {
    let r = &t.result;
    let v = json!({
        "criterion": t.criterion,
        "score": t.score,
        "coarse": t.coarse.as_ref().map(grid_json),
        "coarse_rows": t.coarse.as_ref().map(|_| SCREEN_ROWS),
        "grid": grid_json(r),
        "chosen": { "c": r.c(), "gamma": r.gamma(), "lambda": r.lambda(), "mean": r.best_score() },
        "search_seconds": seconds,
    });
    format!("{v}\n")
}
