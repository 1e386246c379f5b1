//! `okr predict` and `okr eval` on models of outputs other than label sets
//! (issue 17): vectors ([`Model::Vectors`]), graphs ([`Model::Graphs`]) and
//! rankings ([`Model::Rankings`]). One path for the three: read the test
//! inputs, take the candidates (`--candidates` or the model's training
//! outputs), decode, then write per kind.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::persist::{Model, SavedModel, SavedOutputSurrogate};
use okr_eval::{Features, mean_and_std_err, output_kernel_losses};
use okr_kernels::{DenseRows, Graphs, Kernel, Rankings, Rows};
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

/// `vector`, `graph` or `ranking`.
fn kind(mf: &SavedModel) -> &'static str {
    match mf.model {
        Model::Vectors(_) => "vector",
        Model::Graphs(_) => "graph",
        _ => "ranking",
    }
}

/// Decodes `x` among `cands`, with the squared RKHS errors against `truth`
/// when given.
fn decode<Y: Rows + 'static, KY: Kernel<Y> + 'static>(
    model: &SavedOutputSurrogate<Y, KY>,
    x: &Features,
    cands: &Y,
    truth: Option<&Y>,
    decoder: CandidateDecoder,
) -> Result<(Decoded, Option<Vec<f64>>)> {
    if cands.n_rows() == 0 {
        bail!("the candidate set is empty");
    }
    Ok(decoder.decode_tiles(model, x, cands, truth, |_, _| Ok(()))?)
}

/// `okr predict` on a vector, graph or ranking model: per input the decoded
/// candidate (a vector's values, a graph's candidate index, a ranking's
/// 1-based ranks), top-k `;`-separated; `csv` (graphs and rankings) one row
/// per (input, rank) with the candidate id, score and the ranking's ranks;
/// `json` `{candidate_ids, scores, output}`.
pub fn predict(a: &PredictArgs, input: &Path, mf: &SavedModel) -> Result<()> {
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
    let (x, _) = test_inputs(mf, input, &a.data)?;
    let dec = a.decode.decoder().top_k(a.top_k);
    let path = a.decode.candidates.as_deref();
    let text = match &mf.model {
        Model::Vectors(v) => {
            let c = vector_candidates(v, path)?;
            written(a, mf, &dec.decode(v.surrogate(), &x, &c)?, &c)?
        }
        Model::Graphs(m) => {
            let c = graph_candidates(m, path)?;
            written(a, mf, &decode(m.surrogate(), &x, &c, None, dec)?.0, &c)?
        }
        Model::Rankings(m) => {
            let c = ranking_candidates(m, path)?;
            written(a, mf, &decode(m.surrogate(), &x, &c, None, dec)?.0, &c)?
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
fn against<Y: Rows + 'static, KY: Kernel<Y> + 'static>(
    model: &SavedOutputSurrogate<Y, KY>,
    x: &Features,
    cands: &Y,
    truth: &Y,
    decoder: CandidateDecoder,
) -> Result<(Y, Value)> {
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
    let path = a.decode.candidates.as_deref();
    let outputs = a.output_file.outputs.as_deref();
    let (n, mut report) = match &mf.model {
        Model::Vectors(v) => {
            let Some(out) = outputs else {
                bail!("{} is a vector model: give the true outputs with --outputs FILE", a.model.display())
            };
            let (x, _) = test_inputs(mf, &a.input, &a.data)?;
            let truth = read_vector_file(out, Some(v.output_width()))?;
            check_rows(out, truth.n_rows(), &a.input, x.n_rows())?;
            let (predicted, common) = against(v.surrogate(), &x, &vector_candidates(v, path)?, &truth, dec)?;
            let (loss, loss_se) = mean_and_std_err(&output_kernel_losses(v.output_kernel(), &predicted, &truth)?);
            let own =
                json!({ "output_dim": v.output_width(), "output_kernel_loss": loss, "output_kernel_loss_se": loss_se });
            (x.n_rows(), merged(own, common))
        }
        Model::Graphs(m) => {
            let (x, _) = test_inputs(mf, &a.input, &a.data)?;
            let Some(out) = outputs else {
                bail!(
                    "{} is a graph model: give the true graphs with --outputs DIR/NAME (a TU data set)",
                    a.model.display()
                )
            };
            let truth = okr_eval::read_tu_graphs(out)?;
            if truth.n_rows() != x.n_rows() {
                bail!(
                    "{}: {} graphs for the {} rows of {}",
                    out.display(),
                    truth.n_rows(),
                    x.n_rows(),
                    a.input.display()
                );
            }
            let (predicted, common) = against(m.surrogate(), &x, &graph_candidates(m, path)?, &truth, dec)?;
            let (loss, loss_se) = mean_and_std_err(&output_kernel_losses(m.output_kernel(), &predicted, &truth)?);
            let own = json!({
                "top1_exact_match": okr_eval::output_metrics::exact_match(&predicted, &truth)?,
                "rbf_loss": loss,
                "rbf_loss_se": loss_se,
                "wl_iterations": m.output_kernel().iterations(),
            });
            (x.n_rows(), merged(own, common))
        }
        Model::Rankings(m) => {
            let (x, truth) = test_inputs(mf, &a.input, &a.data)?;
            if outputs.is_some() {
                bail!("a ranking model reads the true rankings from --input (a label-ranking file): drop --outputs");
            }
            let truth = truth.expect("read with the inputs");
            let (predicted, common) = against(m.surrogate(), &x, &ranking_candidates(m, path)?, &truth, dec)?;
            let (tau, dis) = okr_eval::output_metrics::ranking_agreement(&predicted, &truth)?;
            let ((tau, tau_se), (dis, dis_se)) = (mean_and_std_err(&tau), mean_and_std_err(&dis));
            let own = json!({
                "kendall_tau": tau,
                "kendall_tau_se": tau_se,
                "pairwise_disagreement": dis,
                "pairwise_disagreement_se": dis_se,
                "n_items": truth.n_items(),
            });
            (x.n_rows(), merged(own, common))
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

/// The keys of both JSON objects.
fn merged(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}
