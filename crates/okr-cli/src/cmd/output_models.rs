//! `okr predict` and `okr eval` on models of outputs other than label sets
//! (issue 17): vectors ([`Model::Vectors`]), graphs ([`Model::Graphs`]) and
//! rankings ([`Model::Rankings`]), fitted on features or on a precomputed
//! Gram ([`Model::GramVectors`], ...: the test inputs are then the test x
//! train Gram of `--input-gram-test`). One path for the six: read the test
//! inputs, take the candidates (`--candidates` or the model's training
//! outputs), decode, then write per kind.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::persist::{Model, OutputModel, SavedModel, SavedOutputSurrogate};
use okr_eval::{mean_and_std_err, output_kernel_losses};
use okr_kernels::{DenseRows, GramRows, Graphs, Kernel, KernelSpec, RankingKernel, Rankings, Rows, WlSubtree};
use serde_json::{Value, json};

use super::outputs::{check_rows, read_vector_file, vector_candidates};
use super::structured::{graph_candidates, ranking_candidates, test_inputs};
use crate::cli::{EvalArgs, FingerprintFormat, OutputFormat, PredictArgs};
use crate::config::set_threads;
use crate::output::write_result;

/// How `okr predict` writes a candidate output.
trait Written: Rows {
    /// Candidate `j` in the `labels` format and as CSV columns; `None` when
    /// its index stands for it (graphs).
    fn values(&self, j: usize) -> Option<String>;
    /// Candidate `j` as the JSON `output`.
    fn json(&self, j: usize) -> Value;
}

impl Written for DenseRows {
    fn values(&self, j: usize) -> Option<String> {
        let c = self.as_mat();
        Some(okr_eval::rows::format_values(&(0..c.ncols()).map(|f| c[(j, f)]).collect::<Vec<_>>()))
    }
    fn json(&self, j: usize) -> Value {
        let c = self.as_mat();
        json!((0..c.ncols()).map(|f| c[(j, f)]).collect::<Vec<_>>())
    }
}

impl Written for Graphs {
    fn values(&self, _: usize) -> Option<String> {
        None
    }
    fn json(&self, j: usize) -> Value {
        json!(j)
    }
}

/// A ranking as its 1-based ranks (the syntax of label-ranking files).
fn ranks(r: &Rankings, j: usize) -> Vec<u32> {
    r.ranks(j).iter().map(|&v| v + 1).collect()
}

impl Written for Rankings {
    fn values(&self, j: usize) -> Option<String> {
        Some(ranks(self, j).iter().map(u32::to_string).collect::<Vec<_>>().join(","))
    }
    fn json(&self, j: usize) -> Value {
        json!(ranks(self, j))
    }
}

/// Whether the model predicts vectors, graphs or rankings (on features or on a Gram).
pub fn is_output_model(model: &Model) -> bool {
    use okr_estimators::persist::OutputKind;
    matches!(model.output_kind(), OutputKind::Vectors | OutputKind::Graphs | OutputKind::Rankings)
}

/// `vector`, `graph` or `ranking`.
fn kind(mf: &SavedModel) -> &'static str {
    match mf.model {
        Model::Vectors(_) | Model::GramVectors(_) => "vector",
        Model::Graphs(_) | Model::GramGraphs(_) => "graph",
        _ => "ranking",
    }
}

/// The test x train Gram of `--input-gram-test` for a model fitted on a Gram
/// of `n_train` training samples.
fn gram_inputs(gram: Option<&Path>, n_train: usize) -> Result<GramRows> {
    let Some(path) = gram else { unreachable!("checked by gram::check_test_flags") };
    super::gram::read_test(path, n_train)
}

/// Decodes `x` among `cands`, with the squared RKHS errors against `truth`
/// when given.
fn decode<Y, KY, X, KX>(
    model: &SavedOutputSurrogate<Y, KY, X, KX>,
    x: &X,
    cands: &Y,
    truth: Option<&Y>,
    decoder: CandidateDecoder,
) -> Result<(Decoded, Option<Vec<f64>>)>
where
    Y: Rows + 'static,
    KY: Kernel<Y> + 'static,
    X: Rows + 'static,
    KX: Kernel<X> + 'static,
{
    if cands.n_rows() == 0 {
        bail!("the candidate set is empty");
    }
    Ok(decoder.decode_tiles(model, x, cands, truth, |_, _| Ok(()))?)
}

/// `okr predict` on a vector, graph or ranking model: per input the decoded
/// candidate (a vector's values, a graph's candidate index, a ranking's
/// 1-based ranks), top-k `;`-separated; `csv` (graphs and rankings) one row
/// per (input, rank) with the candidate id, score and the ranking's ranks;
/// `json` `{candidate_ids, scores, output}`. The test inputs are the
/// features of `--input`, or for a model fitted on a Gram the block of
/// `--input-gram-test`.
pub fn predict(a: &PredictArgs, mf: &SavedModel) -> Result<()> {
    set_threads(a.decode.threads)?;
    let (r, kind) = (&a.render, kind(mf));
    if kind == "vector" {
        if r.threshold.is_some() || r.thresholds.is_some() {
            bail!("--threshold and --thresholds apply to label-score models (leml), not to vector models");
        }
        if matches!(r.output_format, OutputFormat::Csv | OutputFormat::Indicator) {
            bail!(
                "a vector model writes --output-format labels (the decoded vectors) or json (candidate ids and scores)"
            );
        }
    } else if r.threshold.is_some() || r.thresholds.is_some() || r.scores {
        bail!("--threshold, --thresholds and --scores apply to label-set models, not to {kind} outputs");
    } else if r.output_format == OutputFormat::Indicator {
        bail!("a {kind} model writes --output-format labels, csv or json (there is no label indicator)");
    }
    let dec = a.decode.decoder().top_k(a.top_k);
    let path = a.decode.candidates.as_deref();
    let gram = a.decode.input_gram_test.as_deref();
    if let (Some(n), Some(input)) = (mf.model.gram_n_train(), &a.input) {
        bail!(
            "--input {} does not apply: the {kind} model was fitted on a precomputed Gram of {n} training samples, \
             its test inputs are --input-gram-test",
            input.display()
        );
    }
    let features = || -> Result<okr_eval::Features> {
        let Some(input) = &a.input else { unreachable!("checked by gram::check_test_flags") };
        Ok(test_inputs(mf, input, &a.data)?.0)
    };
    let text = match &mf.model {
        Model::Vectors(v) => {
            let c = vector_candidates(v.candidates(), path)?;
            written(a, mf, &dec.decode(v.surrogate(), &features()?, &c)?, &c)?
        }
        Model::GramVectors(v) => {
            let c = vector_candidates(v.candidates(), path)?;
            written(a, mf, &dec.decode(v.surrogate(), &gram_inputs(gram, v.n_train())?, &c)?, &c)?
        }
        Model::Graphs(m) => {
            let c = graph_candidates(m.candidates(), path)?;
            written(a, mf, &decode(m.surrogate(), &features()?, &c, None, dec)?.0, &c)?
        }
        Model::GramGraphs(m) => {
            let c = graph_candidates(m.candidates(), path)?;
            written(a, mf, &decode(m.surrogate(), &gram_inputs(gram, m.n_train())?, &c, None, dec)?.0, &c)?
        }
        Model::Rankings(m) => {
            let c = ranking_candidates(m.candidates(), path)?;
            written(a, mf, &decode(m.surrogate(), &features()?, &c, None, dec)?.0, &c)?
        }
        Model::GramRankings(m) => {
            let c = ranking_candidates(m.candidates(), path)?;
            written(a, mf, &decode(m.surrogate(), &gram_inputs(gram, m.n_train())?, &c, None, dec)?.0, &c)?
        }
        _ => unreachable!("called for vector, graph and ranking models"),
    };
    write_result(a.output.as_deref(), |w| w.write_all(&text))
}

/// The predictions of `decoded` among the candidates `c` in `--output-format`.
fn written<Y: Written>(a: &PredictArgs, mf: &SavedModel, decoded: &Decoded, c: &Y) -> Result<Vec<u8>> {
    let mut text = Vec::new();
    let format = a.render.output_format;
    if format == OutputFormat::Csv {
        let names: String = (0..mf.info.n_labels)
            .map(|j| format!(",{}", mf.info.label_names.get(j).cloned().unwrap_or_else(|| format!("item_{j}"))))
            .collect();
        writeln!(text, "input,rank,candidate_id,score{names}")?;
    }
    for t in 0..decoded.n_rows() {
        let (top, scores) = (decoded.top(t), decoded.top_scores(t));
        match format {
            OutputFormat::Json => {
                let best = top.first().map(|&j| c.json(j));
                writeln!(text, "{}", json!({ "candidate_ids": top, "scores": scores, "output": best }))?;
            }
            OutputFormat::Csv => {
                for (r, (&j, s)) in top.iter().zip(scores).enumerate() {
                    let extra = c.values(j).map_or(String::new(), |v| format!(",{v}"));
                    writeln!(text, "{t},{},{j},{s:?}{extra}", r + 1)?;
                }
            }
            _ => {
                let shown: Vec<String> = top.iter().map(|&j| c.values(j).unwrap_or_else(|| j.to_string())).collect();
                writeln!(text, "{}", shown.join(";"))?;
            }
        }
    }
    Ok(text)
}

/// Decodes the test inputs among `cands` and scores the chosen outputs
/// against `truth`: the chosen outputs, and the keys every kind reports
/// (`n_candidates`, `mse_h`, `decode_seconds`).
fn against<Y, KY, X, KX>(
    model: &SavedOutputSurrogate<Y, KY, X, KX>,
    x: &X,
    cands: &Y,
    truth: &Y,
    decoder: CandidateDecoder,
) -> Result<(Y, Value)>
where
    Y: Rows + 'static,
    KY: Kernel<Y> + 'static,
    X: Rows + 'static,
    KX: Kernel<X> + 'static,
{
    let start = Instant::now();
    let (decoded, errors) = decode(model, x, cands, Some(truth), decoder)?;
    let seconds = start.elapsed().as_secs_f64();
    let errors = errors.unwrap_or_default();
    let common = json!({
        "n_candidates": cands.n_rows(),
        "mse_h": mean_and_std_err(&errors).0,
        "decode_seconds": seconds,
    });
    Ok((cands.select(&decoded.best()), common))
}

/// `okr eval` on a vector model (true vectors from `--outputs`: the mean
/// output-kernel loss `||psi(yhat) - psi(y)||^2` and its standard error), a
/// graph model (true graphs from `--outputs`, a TU data set: exact matches
/// and the loss `2 - 2 k(yhat, y)`) or a ranking model (true rankings from
/// the label-ranking `--input`: Kendall tau and pairwise disagreement); all
/// with `mse_h`, the mean `||h(x) - psi(y)||^2`.
pub fn eval(a: &EvalArgs, mf: &SavedModel) -> Result<()> {
    set_threads(a.decode.threads)?;
    let kind = kind(mf);
    if a.predictions.is_some() || a.per_label {
        bail!("--predictions and --per-label apply to label-set models, not to {kind} models");
    }
    if a.output_file.n_bits.is_some() || a.output_file.fingerprint_format != FingerprintFormat::Dense {
        bail!("--n-bits and --fingerprint-format apply to fingerprint models, not to {kind} models");
    }
    let dec = a.decode.decoder();
    let gram = a.decode.input_gram_test.as_deref();
    let e = Eval { a, dec, candidates: a.decode.candidates.as_deref(), outputs: a.output_file.outputs.as_deref() };
    let (n, mut report) = match &mf.model {
        Model::Vectors(v) => {
            let (x, _) = test_inputs(mf, &a.input, &a.data)?;
            e.vectors(v, &x, &a.input)?
        }
        Model::GramVectors(v) => e.vectors(v, &gram_inputs(gram, v.n_train())?, gram.unwrap_or(&a.input))?,
        Model::Graphs(m) => {
            let (x, _) = test_inputs(mf, &a.input, &a.data)?;
            e.graphs(m, &x, &a.input)?
        }
        Model::GramGraphs(m) => e.graphs(m, &gram_inputs(gram, m.n_train())?, gram.unwrap_or(&a.input))?,
        Model::Rankings(m) => {
            let (x, truth) = test_inputs(mf, &a.input, &a.data)?;
            e.rankings(m, &x, truth.expect("read with the inputs"))?
        }
        Model::GramRankings(m) => {
            let x = gram_inputs(gram, m.n_train())?;
            // The true rankings of the label-ranking --input (its features are not the model's inputs).
            let (_, truth) = super::structured::read_ranking_file(&a.input)?;
            if truth.n_rows() != x.n_rows() || truth.n_items() != m.candidates().n_items() {
                bail!(
                    "{}: {} rankings of {} items for the {} rows of the --input-gram-test Gram and the model's {} items",
                    a.input.display(),
                    truth.n_rows(),
                    truth.n_items(),
                    x.n_rows(),
                    m.candidates().n_items()
                );
            }
            e.rankings(m, &x, truth)?
        }
        _ => unreachable!("called for vector, graph and ranking models"),
    };
    let head = json!({
        "estimator": mf.model.name(),
        "output_kind": format!("{kind}s"),
        "n_test": n,
        "fit_seconds": mf.info.fit_seconds,
    });
    report = merged(report, head);
    write_result(None, |w| writeln!(w, "{report}"))
}

/// What `okr eval` scores with, for every kind of outputs and inputs.
struct Eval<'a> {
    a: &'a EvalArgs,
    dec: CandidateDecoder,
    candidates: Option<&'a Path>,
    outputs: Option<&'a Path>,
}

impl Eval<'_> {
    /// Vectors: the true vectors of `--outputs`, a row per test row of `source`.
    fn vectors<X, KX>(
        &self,
        v: &OutputModel<DenseRows, KernelSpec, X, KX>,
        x: &X,
        source: &Path,
    ) -> Result<(usize, Value)>
    where
        X: Rows + 'static,
        KX: Kernel<X> + 'static,
    {
        let Some(out) = self.outputs else {
            bail!("{} is a vector model: give the true outputs with --outputs FILE", self.a.model.display())
        };
        let truth = read_vector_file(out, Some(v.output_width()))?;
        check_rows(out, truth.n_rows(), source, x.n_rows())?;
        let cands = vector_candidates(v.candidates(), self.candidates)?;
        let (predicted, common) = against(v.surrogate(), x, &cands, &truth, self.dec)?;
        let (loss, loss_se) = mean_and_std_err(&output_kernel_losses(v.output_kernel(), &predicted, &truth)?);
        let own =
            json!({ "output_dim": v.output_width(), "output_kernel_loss": loss, "output_kernel_loss_se": loss_se });
        Ok((x.n_rows(), merged(own, common)))
    }

    /// Graphs: the true graphs of `--outputs` (a TU data set).
    fn graphs<X, KX>(&self, m: &OutputModel<Graphs, WlSubtree, X, KX>, x: &X, source: &Path) -> Result<(usize, Value)>
    where
        X: Rows + 'static,
        KX: Kernel<X> + 'static,
    {
        let Some(out) = self.outputs else {
            bail!(
                "{} is a graph model: give the true graphs with --outputs DIR/NAME (a TU data set)",
                self.a.model.display()
            )
        };
        let truth = okr_eval::read_tu_graphs(out)?;
        if truth.n_rows() != x.n_rows() {
            bail!("{}: {} graphs for the {} rows of {}", out.display(), truth.n_rows(), x.n_rows(), source.display());
        }
        let cands = graph_candidates(m.candidates(), self.candidates)?;
        let (predicted, common) = against(m.surrogate(), x, &cands, &truth, self.dec)?;
        let (loss, loss_se) = mean_and_std_err(&output_kernel_losses(m.output_kernel(), &predicted, &truth)?);
        let own = json!({
            "top1_exact_match": okr_eval::output_metrics::exact_match(&predicted, &truth)?,
            "rbf_loss": loss,
            "rbf_loss_se": loss_se,
            "wl_iterations": m.output_kernel().iterations(),
        });
        Ok((x.n_rows(), merged(own, common)))
    }

    /// Rankings: the true rankings `truth` (of the label-ranking `--input`).
    fn rankings<X, KX>(
        &self,
        m: &OutputModel<Rankings, RankingKernel, X, KX>,
        x: &X,
        truth: Rankings,
    ) -> Result<(usize, Value)>
    where
        X: Rows + 'static,
        KX: Kernel<X> + 'static,
    {
        if self.outputs.is_some() {
            bail!("a ranking model reads the true rankings from --input (a label-ranking file): drop --outputs");
        }
        let cands = ranking_candidates(m.candidates(), self.candidates)?;
        let (predicted, common) = against(m.surrogate(), x, &cands, &truth, self.dec)?;
        let (tau, dis) = okr_eval::output_metrics::ranking_agreement(&predicted, &truth)?;
        let ((tau, tau_se), (dis, dis_se)) = (mean_and_std_err(&tau), mean_and_std_err(&dis));
        let own = json!({
            "kendall_tau": tau,
            "kendall_tau_se": tau_se,
            "pairwise_disagreement": dis,
            "pairwise_disagreement_se": dis_se,
            "n_items": truth.n_items(),
        });
        Ok((x.n_rows(), merged(own, common)))
    }
}

/// The keys of both JSON objects.
fn merged(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}
