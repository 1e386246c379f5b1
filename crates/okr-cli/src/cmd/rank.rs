//! `okr rank`: per-query candidate sets ranked with a saved model
//! ([`okr_decode::per_query`]), written as one CSV table, with the retrieval
//! summary ([`okr_eval::retrieval_metrics`]) on standard error or in a JSON file.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use okr_decode::per_query::{CandidateFileMode, CandidateFileReader, PerQueryDecoder, TextRows, read_candidate_pool};
use okr_estimators::SurrogateModel;
use okr_estimators::persist::Model;
use okr_eval::{Features, RankSummary, RetrievalMetrics};
use okr_kernels::{GramRows, Graphs, LabelSets, Rankings, Rows};
use serde_json::json;

use crate::cli::RankArgs;
use crate::config::{check_data_flags, read_for_model, set_threads};
use crate::model::{inputs, is_autoencoder, shape};
use crate::output::write_result;

pub fn run(a: &RankArgs) -> Result<()> {
    if let Some(input) = &a.input {
        check_data_flags(input, &a.data, None)?;
    }
    set_threads(a.threads)?;
    let mut files = vec![("model", a.model.as_path()), ("candidate file", a.candidates_per_query.as_path())];
    files.extend(a.input.as_deref().map(|p| ("input file", p)));
    files.extend(a.input_gram_test.as_deref().map(|p| ("Gram file", p)));
    files.extend(a.pool.as_deref().map(|p| ("pool file", p)));
    for out in [&a.output, &a.summary].into_iter().flatten() {
        okr_eval::check_not_input(out, &files)?;
    }
    if let (Some(output), Some(summary)) = (&a.output, &a.summary) {
        okr_eval::check_distinct_outputs(&[("output file", output), ("summary", summary)])?;
    }
    let mf = crate::model::load(&a.model)?;
    let width = mf.info.n_labels;
    super::gram::check_test_flags(&mf.model, &a.model, a.input_gram_test.as_deref(), a.input.as_deref())?;
    let input = a.input.as_deref().unwrap_or(Path::new(""));
    let ranked = match &mf.model {
        Model::Gram(g) => {
            let Some(path) = &a.input_gram_test else { unreachable!("checked above") };
            let x = super::gram::read_test(path, g.n_train())?;
            rank_with::<GramRows, LabelSets, _>(a, g.surrogate(), &x, width, &text_pool)?
        }
        Model::GramVectors(v) => {
            let x = super::gram::read_test(gram_path(a)?, v.n_train())?;
            rank_with::<GramRows, okr_kernels::DenseRows, _>(a, v.surrogate(), &x, width, &text_pool)?
        }
        Model::GramGraphs(m) => {
            let x = super::gram::read_test(gram_path(a)?, m.n_train())?;
            let tu = |p: &Path, _: usize| -> Result<Graphs> { Ok(okr_eval::read_tu_graphs(p)?) };
            rank_with::<GramRows, Graphs, _>(a, m.surrogate(), &x, width, &tu)?
        }
        Model::GramRankings(m) => {
            let x = super::gram::read_test(gram_path(a)?, m.n_train())?;
            rank_with::<GramRows, Rankings, _>(a, m.surrogate(), &x, width, &text_pool)?
        }
        Model::Vectors(v) => {
            let (x, _) = super::structured::test_inputs(&mf, input, &a.data)?;
            rank_with::<Features, okr_kernels::DenseRows, _>(a, v.surrogate(), &x, width, &text_pool)?
        }
        Model::Graphs(m) => {
            let (x, _) = super::structured::test_inputs(&mf, input, &a.data)?;
            let tu = |p: &Path, _: usize| -> Result<Graphs> { Ok(okr_eval::read_tu_graphs(p)?) };
            rank_with::<Features, Graphs, _>(a, m.surrogate(), &x, width, &tu)?
        }
        Model::Rankings(m) => {
            let (x, _) = super::structured::test_inputs(&mf, input, &a.data)?;
            rank_with::<Features, Rankings, _>(a, m.surrogate(), &x, width, &text_pool)?
        }
        m => {
            let Some(model) = m.surrogate() else {
                let what = if is_autoencoder(m) { "an autoencoder" } else { "a label-score model" };
                bail!("{} is a {} model ({what}): okr rank needs a decoding estimator", a.model.display(), m.name());
            };
            check_data_flags(input, &a.data, Some(width))?;
            let data = read_for_model(input, &a.data, shape(&mf))?.data;
            let x = inputs(&mf, &data)?;
            rank_with::<Features, LabelSets, _>(a, model, &x, width, &text_pool)?
        }
    };
    summarize(a.summary.as_deref(), ranked.n_queries, &ranked.optimistic, &ranked.pessimistic)
}

/// The `--input-gram-test` of a model fitted on a Gram (checked present).
fn gram_path(a: &RankArgs) -> Result<&Path> {
    a.input_gram_test.as_deref().context("--input-gram-test is required for a model fitted on a Gram")
}

/// The true ranks of the queries that mark one.
struct Ranked {
    n_queries: usize,
    optimistic: Vec<usize>,
    pessimistic: Vec<usize>,
}

/// The header of the ranked table.
const TABLE_HEADER: &str = "query_id,rank,candidate_id,score,true_rank_optimistic,true_rank_pessimistic";

/// Opens a per-query candidate file (`--candidates-per-query`) with its
/// pool: a pool-mode file needs `--pool`, an inline one refuses it, and
/// pool-mode lists are checked against the pool as they are read. `okr rank`
/// and `okr tune --scoring` read their queries through it.
pub(super) fn open_candidates<Y: TextRows>(
    file: &Path,
    pool: Option<&Path>,
    width: usize,
    read_pool: &dyn Fn(&Path, usize) -> Result<Y>,
) -> Result<(CandidateFileReader<Y>, Option<Y>)> {
    let reader = CandidateFileReader::<Y>::open(file, width)?;
    let pool = match (reader.mode(), pool) {
        (CandidateFileMode::Pool, Some(p)) => Some(read_pool(p, width)?),
        (CandidateFileMode::Pool, None) => bail!("{} is in pool mode: give the pool with --pool FILE", file.display()),
        (CandidateFileMode::Inline, Some(_)) => {
            bail!("--pool does not apply: {} lists its candidates inline", file.display())
        }
        (CandidateFileMode::Inline, None) => None,
    };
    let reader = match &pool {
        Some(p) => reader.pool_rows(p.n_rows()),
        None => reader,
    };
    Ok((reader, pool))
}

/// Ranks the queries of the candidate file with candidates of type `Y`,
/// writing the table as the queries are ranked (its memory does not grow
/// with the table): to the output file through its temporary file, so a
/// failure leaves an existing output as it was, or to standard output.
fn rank_with<X, Y, M>(
    a: &RankArgs,
    model: &M,
    x: &X,
    width: usize,
    read_pool: &dyn Fn(&Path, usize) -> Result<Y>,
) -> Result<Ranked>
where
    X: Rows,
    Y: TextRows,
    M: SurrogateModel<X, Y> + ?Sized,
{
    let (reader, pool) = open_candidates(&a.candidates_per_query, a.pool.as_deref(), width, read_pool)?;
    let decoder = PerQueryDecoder::new().memory_budget(a.memory_budget.saturating_mul(1 << 20)).top_k(a.top_k);
    let mut out = Ranked { n_queries: 0, optimistic: Vec::new(), pessimistic: Vec::new() };
    let mut failure = None;
    let written = write_result(a.output.as_deref(), |w| {
        writeln!(w, "{TABLE_HEADER}")?;
        // A write error stops the ranking and is the result's error (a
        // closed standard output stays recognizable as one).
        let mut write_error = None;
        let ranking = decoder.rank(model, x, pool.as_ref(), reader, |r| {
            out.n_queries += 1;
            let (opt, pes) = match r.true_rank {
                Some(t) => {
                    out.optimistic.push(t.optimistic);
                    out.pessimistic.push(t.pessimistic);
                    (t.optimistic.to_string(), t.pessimistic.to_string())
                }
                None => (String::new(), String::new()),
            };
            let id = csv_field(&r.id);
            for (rank, (c, s)) in r.ids.iter().zip(&r.scores).enumerate() {
                if let Err(e) = writeln!(w, "{id},{},{c},{s:?},{opt},{pes}", rank + 1) {
                    let msg = e.to_string();
                    write_error = Some(e);
                    return Err(okr_decode::Error::Io { path: "the ranked table".into(), msg });
                }
            }
            Ok(())
        });
        if let Some(e) = write_error {
            return Err(e);
        }
        ranking.map_err(|e| {
            failure = Some(e);
            std::io::Error::other("the ranking failed")
        })
    });
    match failure {
        Some(e) => Err(e.into()),
        None => written.map(|()| out),
    }
}

/// A pool file in the row syntax of [`TextRows`] (graphs have their own reader).
fn text_pool<Y: TextRows>(path: &Path, width: usize) -> Result<Y> {
    Ok(read_candidate_pool::<Y>(path, width)?)
}

/// Prints the retrieval summary on standard error, or writes it as JSON.
fn summarize(path: Option<&Path>, n_queries: usize, optimistic: &[usize], pessimistic: &[usize]) -> Result<()> {
    let metrics = (!optimistic.is_empty())
        .then(|| okr_eval::retrieval_metrics(optimistic, pessimistic))
        .transpose()
        .context("retrieval summary")?;
    match path {
        Some(p) => {
            let doc = summary_json(n_queries, metrics.as_ref());
            okr_eval::write_atomic(p, |w| writeln!(w, "{doc}"))?;
        }
        None => match &metrics {
            Some(m) => eprintln!(
                "okr rank: {n_queries} queries, {} with a true candidate; optimistic {}; pessimistic {}",
                m.n_queries,
                summary_text(&m.optimistic),
                summary_text(&m.pessimistic)
            ),
            None => eprintln!("okr rank: {n_queries} queries, none marks a true candidate"),
        },
    }
    Ok(())
}

fn summary_text(s: &RankSummary) -> String {
    format!(
        "top-1/5/10/20 accuracy {:.4}/{:.4}/{:.4}/{:.4}, mean rank {:.4}, median rank {}",
        s.top_k[0], s.top_k[1], s.top_k[2], s.top_k[3], s.mean_rank, s.median_rank
    )
}

/// `{n_queries, n_with_truth, optimistic: {top_1, top_5, top_10, top_20,
/// mean_rank, median_rank}, pessimistic: {...}}` (null without true candidates).
fn summary_json(n_queries: usize, m: Option<&RetrievalMetrics>) -> serde_json::Value {
    let one = |s: &RankSummary| s.named().into_iter().map(|(k, v)| (k, json!(v))).collect::<serde_json::Map<_, _>>();
    json!({
        "n_queries": n_queries,
        "n_with_truth": m.map_or(0, |m| m.n_queries),
        "optimistic": m.map(|m| one(&m.optimistic)),
        "pessimistic": m.map(|m| one(&m.pessimistic)),
    })
}

/// A query id as one CSV field (quoted when it holds a comma or a quote).
fn csv_field(id: &str) -> String {
    if id.contains([',', '"']) { format!("\"{}\"", id.replace('"', "\"\"")) } else { id.to_string() }
}
