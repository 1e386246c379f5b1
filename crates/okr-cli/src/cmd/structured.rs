//! Graph and ranking outputs (issue 17): `okr fit --output-kind graph |
//! ranking`, and predict / eval on such models ([`Model::Graphs`],
//! [`Model::Rankings`]). Graphs come from TU data sets
//! ([`okr_eval::read_tu_graphs`]), rankings from label-ranking files
//! ([`read_label_ranking`]: features and ranks in one file); candidates
//! default to the model's training outputs.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use faer::Mat;
use okr_decode::per_query::read_candidate_pool;
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::SurrogateModel;
use okr_estimators::persist::{Model, ModelInfo, OutputModel, SavedModel, SavedOutputSurrogate};
use okr_eval::readers::ranking::read_label_ranking;
use okr_eval::{Dataset, Features};
use okr_kernels::{Graphs, Kernel, LabelSets, RankingKernel, Rankings, Rows, WlSubtree};
use serde_json::{Value, json};

use super::fit::{DEFAULT_LAMBDA, Inputs, capped_sizes, describe_kernel, estimator_spec, input_kernel, prepare_inputs};
use crate::cli::{DataArgs, EvalArgs, FitArgs, KernelKind, OutputFormat, OutputKindFlag, PredictArgs};
use crate::config::{index_base, read_data, read_for_model, set_threads};
use crate::model::{input_shape, inputs, save_fitted};
use crate::output::write_result;

/// `--wl-iterations` when not given.
pub const DEFAULT_WL_ITERATIONS: usize = 3;

/// Checks the graph and ranking flags of `okr fit` before any file is read.
pub fn check_fit(a: &FitArgs) -> Result<()> {
    let kind = a.output_kind;
    let structured = matches!(kind, OutputKindFlag::Graph | OutputKindFlag::Ranking);
    for (flag, wanted, given) in [
        ("--wl-iterations", KernelKind::Wl, a.structured.wl_iterations.is_some()),
        ("--mallows-lambda", KernelKind::Mallows, a.structured.mallows_lambda.is_some()),
    ] {
        if given && a.output_kernel != wanted {
            bail!("{flag} applies to --output-kernel {} only", format!("{wanted:?}").to_lowercase());
        }
    }
    let needed: &[KernelKind] = match kind {
        OutputKindFlag::Graph => &[KernelKind::Wl],
        OutputKindFlag::Ranking => &[KernelKind::Kendall, KernelKind::Mallows],
        _ => &[],
    };
    let name = format!("{:?}", a.output_kernel).to_lowercase();
    if structured && !needed.contains(&a.output_kernel) {
        let names: Vec<String> = needed.iter().map(|k| format!("{k:?}").to_lowercase()).collect();
        bail!("--output-kind {} needs --output-kernel {} (not {name})", kind_name(kind), names.join(" or "));
    }
    if !structured && is_structured_kernel(a.output_kernel) {
        let what = if a.output_kernel == KernelKind::Wl { "graph" } else { "ranking" };
        bail!(
            "--output-kernel {name} is a {what} kernel: it needs --output-kind {what} (the outputs here are vectors)"
        );
    }
    if kind == OutputKindFlag::Ranking && a.output_file.outputs.is_some() {
        bail!("--output-kind ranking reads features and rankings from --train (a label-ranking file): drop --outputs");
    }
    if let Some(h) = a.structured.wl_iterations
        && h > okr_estimators::persist::MAX_WL_ITERATIONS
    {
        bail!("invalid --wl-iterations {h}: at most {}", okr_estimators::persist::MAX_WL_ITERATIONS);
    }
    if let Some(l) = a.structured.mallows_lambda {
        RankingKernel::mallows(l).context("--mallows-lambda")?;
    }
    Ok(())
}

/// Whether `--input-kernel` / `--output-kernel` names a graph or ranking kernel.
pub fn is_structured_kernel(kind: KernelKind) -> bool {
    matches!(kind, KernelKind::Wl | KernelKind::Kendall | KernelKind::Mallows)
}

fn kind_name(kind: OutputKindFlag) -> String {
    format!("{kind:?}").to_lowercase()
}

/// `okr fit --output-kind graph | ranking`.
pub fn fit(a: &FitArgs) -> Result<()> {
    if a.output_kind == OutputKindFlag::Ranking {
        let (data, y) = read_ranking_file(&a.train)?;
        let ky = match a.structured.mallows_lambda {
            None if a.output_kernel == KernelKind::Mallows => RankingKernel::mallows(1.0 / y.n_pairs().max(1) as f64)?,
            Some(l) => RankingKernel::mallows(l)?,
            None => RankingKernel::Kendall,
        };
        let what = format!("rankings of {} items", y.n_items());
        return fit_outputs(a, &data, &y, ky, y.n_items(), &what, &format!("{ky:?}"), Model::Rankings);
    }
    let Some(path) = a.output_file.outputs.as_deref() else {
        bail!("--output-kind graph needs --outputs DIR/NAME (a TU data set: the training graphs)")
    };
    let data = read_data(&a.train, &DataArgs { label_count: Some(0), ..a.data.clone() }, None)?;
    let y = okr_eval::read_tu_graphs(path)?;
    if y.n_rows() != data.n_samples() {
        bail!("{}: {} graphs for the {} rows of {}", path.display(), y.n_rows(), data.n_samples(), a.train.display());
    }
    let h = a.structured.wl_iterations.unwrap_or(DEFAULT_WL_ITERATIONS);
    let ky = WlSubtree::new(h).normalized(true);
    fit_outputs(a, &data, &y, ky, 0, "graph outputs", &format!("normalized WL subtree, {h} iterations"), Model::Graphs)
}

/// Fits `--estimator` on the features of `data` and the outputs `y` with
/// the output kernel `ky`, and saves `wrap(model)` with `n_labels` in its
/// metadata; `outputs` and `ky_text` describe them in the messages.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_outputs<Y, KY>(
    a: &FitArgs,
    data: &Dataset,
    y: &Y,
    ky: KY,
    n_labels: usize,
    outputs: &str,
    ky_text: &str,
    wrap: fn(OutputModel<Y, KY>) -> Model,
) -> Result<()>
where
    Y: Rows,
    KY: Kernel<Y> + Clone,
{
    let (n, d) = (data.n_samples(), data.n_features());
    let warnings = capped_sizes(a, n);
    let Inputs { standardizer, weights, x, note } = prepare_inputs(a, data)?;
    let (kx, median) = input_kernel(a, &x, weights.as_deref())?;
    let lambda = a.lambda.unwrap_or(DEFAULT_LAMBDA);
    let spec = estimator_spec(a, lambda)?;
    let x = if data.x.is_sparse() { &data.x } else { &x };
    let t = Instant::now();
    let model = spec.fit(kx.clone(), ky, x, y)?;
    let fit_seconds = t.elapsed().as_secs_f64();
    let mut meta = ModelInfo::new(d, n_labels);
    meta.index_base = index_base(&a.train, &a.data)?;
    meta.standardizer = standardizer;
    meta.seed = a.seed;
    let file = save_fitted(wrap(model), meta, fit_seconds, &a.model)?;
    for w in warnings {
        eprintln!("okr: warning: {w}");
    }
    eprintln!(
        "okr: fitted {} on {n} samples ({d} features, {outputs}) in {fit_seconds:.2} s -> {}",
        file.model.name(),
        a.model.display()
    );
    let gamma_note = if a.gamma.is_some() || a.sigma2.is_some() {
        "given".to_string()
    } else {
        format!("median heuristic 1 / (2 * {median:.4})")
    };
    let lambda_note = if a.lambda.is_some() { "--lambda" } else { "default; --lambda to set it" };
    eprintln!(
        "okr: features {note}; input kernel {}; output kernel {ky_text}; lambda = {lambda:e} ({lambda_note})",
        describe_kernel(&kx, &gamma_note)
    );
    Ok(())
}

/// A label-ranking file (`n,d,k` header, then `d` features and `k` ranks per
/// row) as features without labels and rankings.
fn read_ranking_file(path: &Path) -> Result<(Dataset, Rankings)> {
    let lr = read_label_ranking(path)?;
    let y = lr.rankings().with_context(|| path.display().to_string())?;
    let n = y.n_rows();
    let data = Dataset::new(Features::Dense(lr.features()?), LabelSets::new(0, vec![Vec::new(); n])?)?;
    Ok((data, y))
}

/// The test inputs of a graph or ranking model (as the model reads them) and,
/// for a ranking model, the rankings of the file.
pub fn test_inputs(mf: &SavedModel, path: &Path, d: &DataArgs) -> Result<(Features, Option<Rankings>)> {
    let (data, truth) = match &mf.model {
        Model::Rankings(m) => {
            let (data, y) = read_ranking_file(path)?;
            if data.n_features() != mf.info.n_features || y.n_items() != m.candidates().n_items() {
                bail!(
                    "{}: {} features and {} ranked items, the model has {} and {}",
                    path.display(),
                    data.n_features(),
                    y.n_items(),
                    mf.info.n_features,
                    m.candidates().n_items()
                );
            }
            (data, Some(y))
        }
        _ => (read_for_model(path, d, input_shape(mf))?.data, None),
    };
    Ok((inputs(mf, &data)?.into_owned(), truth))
}

/// Candidates of a graph model: `--candidates` (a TU data set) or its training graphs.
fn graph_candidates(m: &OutputModel<Graphs, WlSubtree>, path: Option<&Path>) -> Result<Graphs> {
    Ok(match path {
        Some(p) => okr_eval::read_tu_graphs(p)?,
        None => m.candidates().clone(),
    })
}

/// Candidates of a ranking model: `--candidates` (one ranking per line, the
/// `k` ranks 1-based) or its distinct training rankings.
fn ranking_candidates(m: &OutputModel<Rankings, RankingKernel>, path: Option<&Path>) -> Result<Rankings> {
    Ok(match path {
        Some(p) => read_candidate_pool(p, m.candidates().n_items())?,
        None => m.candidates().clone(),
    })
}

/// Decodes `x` among `cands`; with `truth`, also `||h(x) - psi(y)||^2` per row.
fn decode<Y: Rows + 'static, KY: Kernel<Y> + 'static>(
    model: &SavedOutputSurrogate<Y, KY>,
    x: &Features,
    cands: &Y,
    truth: Option<&Y>,
    decoder: CandidateDecoder,
) -> Result<(Decoded, Option<Vec<f64>>, f64)> {
    if cands.n_rows() == 0 {
        bail!("the candidate set is empty");
    }
    let start = Instant::now();
    let coef = model.coefficients(x)?;
    let mut g = Mat::zeros(model.n_atoms(), cands.n_rows());
    model.atom_products_into(cands, g.as_mut(), faer::Par::rayon(0))?;
    let decoded = decoder.decode_matrices(coef.as_ref(), g.as_ref(), &model.output_sq_norms(cands))?;
    let seconds = start.elapsed().as_secs_f64();
    let errors = truth.map(|y| model.rkhs_sq_errors_from(coef.as_ref(), y)).transpose()?;
    Ok((decoded, errors, seconds))
}

fn decoder(budget_mib: usize, precision: okr_decode::Precision) -> CandidateDecoder {
    CandidateDecoder::new().memory_budget(budget_mib.saturating_mul(1 << 20)).precision(precision)
}

/// One ranking as its 1-based ranks (the syntax of label-ranking files).
fn ranks(r: &Rankings, i: usize) -> Vec<u32> {
    r.ranks(i).iter().map(|&v| v + 1).collect()
}

/// `okr predict` on a graph or ranking model: per input the chosen
/// candidate's index (graphs) or ranking (its 1-based ranks), top-k
/// `;`-separated; `csv` one row per (input, rank) with the candidate id,
/// score (and the item ranks); `json` `{candidate_ids, scores, output}`.
pub fn predict(a: &PredictArgs, input: &Path, mf: &SavedModel) -> Result<()> {
    set_threads(a.decode.threads)?;
    if a.render.threshold.is_some() || a.render.thresholds.is_some() || a.render.scores {
        bail!("--threshold, --thresholds and --scores apply to label-set models, not to {} outputs", kind(mf));
    }
    if a.render.output_format == OutputFormat::Indicator {
        bail!("a {} model writes --output-format labels, csv or json (there is no label indicator)", kind(mf));
    }
    let (x, _) = test_inputs(mf, input, &a.data)?;
    let dec = decoder(a.decode.memory_budget, a.decode.precision).top_k(a.top_k);
    let cand_path = a.decode.candidates.as_deref();
    // Per candidate: the fields shown beside its id (a ranking's ranks; none for a graph).
    let (decoded, fields): (Decoded, Box<dyn Fn(usize) -> Vec<u32>>) = match &mf.model {
        Model::Graphs(m) => {
            let c = graph_candidates(m, cand_path)?;
            (decode(m.surrogate(), &x, &c, None, dec)?.0, Box::new(|_: usize| Vec::new()))
        }
        Model::Rankings(m) => {
            let c = ranking_candidates(m, cand_path)?;
            (decode(m.surrogate(), &x, &c, None, dec)?.0, Box::new(move |j: usize| ranks(&c, j)))
        }
        _ => unreachable!("called for graph and ranking models"),
    };
    let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let show = |j: usize| {
        let f = fields(j);
        if f.is_empty() { j.to_string() } else { join(&f) }
    };
    let mut text = Vec::new();
    if a.render.output_format == OutputFormat::Csv {
        let names: Vec<String> = (0..mf.info.n_labels)
            .map(|j| mf.info.label_names.get(j).cloned().unwrap_or_else(|| format!("item_{j}")))
            .collect();
        writeln!(text, "{}", ["input", "rank", "candidate_id", "score"].join(",") + &prefixed(&names))?;
    }
    for t in 0..decoded.n_rows() {
        let (top, scores) = (decoded.top(t), decoded.top_scores(t));
        match a.render.output_format {
            OutputFormat::Json => {
                let best = top.first().map(|&j| if mf.info.n_labels == 0 { json!(j) } else { json!(fields(j)) });
                writeln!(text, "{}", json!({ "candidate_ids": top, "scores": scores, "output": best }))?;
            }
            OutputFormat::Csv => {
                for (r, (&j, s)) in top.iter().zip(scores).enumerate() {
                    let f = fields(j);
                    let extra = if f.is_empty() { String::new() } else { format!(",{}", join(&f)) };
                    writeln!(text, "{t},{},{j},{s:?}{extra}", r + 1)?;
                }
            }
            _ => writeln!(text, "{}", top.iter().map(|&j| show(j)).collect::<Vec<_>>().join(";"))?,
        }
    }
    write_result(a.output.as_deref(), |w| w.write_all(&text))
}

/// `,name1,name2,...` (empty for no names).
fn prefixed(names: &[String]) -> String {
    names.iter().map(|n| format!(",{n}")).collect()
}

/// `graph` or `ranking`.
fn kind(mf: &SavedModel) -> &'static str {
    if matches!(mf.model, Model::Graphs(_)) { "graph" } else { "ranking" }
}

/// `okr eval` on a graph model (true graphs from `--outputs`, a TU data set)
/// or a ranking model (true rankings from the label-ranking `--input`).
pub fn eval(a: &EvalArgs, mf: &SavedModel) -> Result<()> {
    set_threads(a.decode.threads)?;
    if a.predictions.is_some() || a.per_label {
        bail!("--predictions and --per-label apply to label-set models, not to {} models", kind(mf));
    }
    let (x, ranking_truth) = test_inputs(mf, &a.input, &a.data)?;
    let dec = decoder(a.decode.memory_budget, a.decode.precision);
    let cand_path = a.decode.candidates.as_deref();
    let n = x.n_rows();
    let mut report = match &mf.model {
        Model::Graphs(m) => {
            let Some(path) = a.output_file.outputs.as_deref() else {
                bail!(
                    "{} is a graph model: give the true graphs with --outputs DIR/NAME (a TU data set)",
                    a.model.display()
                )
            };
            let truth = okr_eval::read_tu_graphs(path)?;
            if truth.n_rows() != n {
                bail!("{}: {} graphs for the {n} rows of {}", path.display(), truth.n_rows(), a.input.display());
            }
            let c = graph_candidates(m, cand_path)?;
            let (decoded, errors, seconds) = decode(m.surrogate(), &x, &c, Some(&truth), dec)?;
            let predicted = c.select(&decoded.best());
            let losses = okr_eval::output_kernel_losses(m.output_kernel(), &predicted, &truth)?;
            let (loss, loss_se) = okr_eval::mean_and_std_err(&losses);
            json!({
                "top1_exact_match": okr_eval::output_metrics::exact_match(&predicted, &truth)?,
                "rbf_loss": loss,
                "rbf_loss_se": loss_se,
                "wl_iterations": m.output_kernel().iterations(),
                "n_candidates": c.n_rows(),
                "mse_h": mean(errors),
                "decode_seconds": seconds,
            })
        }
        Model::Rankings(m) => {
            if a.output_file.outputs.is_some() {
                bail!("a ranking model reads the true rankings from --input (a label-ranking file): drop --outputs");
            }
            let truth = ranking_truth.expect("read with the inputs");
            let c = ranking_candidates(m, cand_path)?;
            let (decoded, errors, seconds) = decode(m.surrogate(), &x, &c, Some(&truth), dec)?;
            let predicted = c.select(&decoded.best());
            let (tau, dis) = okr_eval::output_metrics::ranking_agreement(&predicted, &truth)?;
            let ((tau, tau_se), (dis, dis_se)) = (okr_eval::mean_and_std_err(&tau), okr_eval::mean_and_std_err(&dis));
            json!({
                "kendall_tau": tau,
                "kendall_tau_se": tau_se,
                "pairwise_disagreement": dis,
                "pairwise_disagreement_se": dis_se,
                "n_items": truth.n_items(),
                "n_candidates": c.n_rows(),
                "mse_h": mean(errors),
                "decode_seconds": seconds,
            })
        }
        _ => unreachable!("called for graph and ranking models"),
    };
    let head = json!({
        "estimator": mf.model.name(),
        "output_kind": format!("{}s", kind(mf)),
        "n_test": n,
        "fit_seconds": mf.info.fit_seconds,
    });
    if let (Some(r), Value::Object(h)) = (report.as_object_mut(), head) {
        r.extend(h);
    }
    write_result(None, |w| writeln!(w, "{report}"))
}

fn mean(v: Option<Vec<f64>>) -> Option<f64> {
    v.map(|v| okr_eval::mean_and_std_err(&v).0)
}
