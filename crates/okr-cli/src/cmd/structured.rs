//! Graph and ranking outputs (issue 17): `okr fit --output-kind graph |
//! ranking` ([`Model::Graphs`], [`Model::Rankings`]); predict and eval on
//! such models are in `output_models.rs`. Graphs come from TU data sets
//! ([`okr_eval::read_tu_graphs`]), rankings from label-ranking files
//! ([`read_label_ranking`]: features and ranks in one file); candidates
//! default to the model's training outputs.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use okr_decode::per_query::read_candidate_pool;
use okr_estimators::persist::{Model, OutputModel, SavedModel};
use okr_eval::readers::ranking::read_label_ranking;
use okr_eval::{Dataset, Features};
use okr_kernels::{Graphs, Kernel, LabelSets, RankingKernel, Rankings, Rows, WlSubtree};

use super::fit::{DEFAULT_LAMBDA, Inputs, capped_sizes, describe_kernel, estimator_spec, input_kernel, prepare_inputs};
use crate::cli::{DataArgs, FitArgs, KernelKind, OutputKindFlag};
use crate::config::{index_base, read_data, read_for_model};
use crate::model::{info, input_shape, inputs, save_fitted};

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
        return fit_outputs(a, &data, &y, ky, y.n_items(), &what, &format!("{ky:?}"), None, Model::Rankings);
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
    fit_outputs(
        a,
        &data,
        &y,
        ky,
        0,
        "graph outputs",
        &format!("normalized WL subtree, {h} iterations"),
        None,
        Model::Graphs,
    )
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
    chosen: Option<&str>,
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
    let mut meta = info(data, index_base(&a.train, &a.data)?, standardizer, a.seed);
    meta.n_labels = n_labels;
    let file = save_fitted(wrap(model), meta, fit_seconds, &a.model)?;
    for w in warnings {
        eprintln!("okr: warning: {w}");
    }
    eprintln!(
        "okr: fitted {} on {n} samples ({d} features, {outputs}) in {fit_seconds:.2} s -> {}",
        file.model.name(),
        a.model.display()
    );
    let gamma_note = match chosen {
        Some(c) => c.to_string(),
        None if a.gamma.is_some() || a.sigma2.is_some() => "given".to_string(),
        None => format!("median heuristic 1 / (2 * {median:.4})"),
    };
    let lambda_note = match chosen {
        Some(c) => c,
        None if a.lambda.is_some() => "--lambda",
        None => "default; --lambda to set it",
    };
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
pub(crate) fn graph_candidates(m: &OutputModel<Graphs, WlSubtree>, path: Option<&Path>) -> Result<Graphs> {
    Ok(match path {
        Some(p) => okr_eval::read_tu_graphs(p)?,
        None => m.candidates().clone(),
    })
}

/// Candidates of a ranking model: `--candidates` (one ranking per line, the
/// `k` ranks 1-based) or its distinct training rankings.
pub(crate) fn ranking_candidates(m: &OutputModel<Rankings, RankingKernel>, path: Option<&Path>) -> Result<Rankings> {
    Ok(match path {
        Some(p) => read_candidate_pool(p, m.candidates().n_items())?,
        None => m.candidates().clone(),
    })
}
