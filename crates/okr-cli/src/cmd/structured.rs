//! Graph and ranking outputs (issue 17): `okr fit --output-kind graph |
//! ranking` ([`Model::Graphs`], [`Model::Rankings`]); predict and eval on
//! such models are in `output_models.rs`. Graphs come from TU data sets
//! ([`okr_eval::read_tu_graphs`]), rankings from label-ranking files
//! ([`read_label_ranking`]: features and ranks in one file); candidates
//! default to the model's training outputs.

use std::path::Path;

use anyhow::{Context, Result, bail};
use okr_decode::per_query::read_candidate_pool;
use okr_estimators::persist::{Model, SavedModel};
use okr_eval::readers::ranking::read_label_ranking;
use okr_eval::{Dataset, Features};
use okr_kernels::{Graphs, LabelSets, Rankings, Rows};

use crate::cli::{DataArgs, FitArgs, KernelKind, OutputKindFlag};
use crate::config::{read_data, read_for_model};
use crate::model::{input_shape, inputs};

/// Checks the graph and ranking flags of `okr fit` before any file is read.
pub fn check_fit(a: &FitArgs) -> Result<()> {
    let kind = a.output_kind;
    for (flag, wanted, given) in [
        ("--wl-iterations", KernelKind::Wl, a.structured.wl_iterations.is_some()),
        ("--mallows-lambda", KernelKind::Mallows, a.structured.mallows_lambda.is_some()),
    ] {
        if given && a.output_kernel != wanted {
            bail!("{flag} applies to --output-kernel {} only", format!("{wanted:?}").to_lowercase());
        }
    }
    if kind == OutputKindFlag::Ranking && a.output_file.outputs.is_some() {
        bail!("--output-kind ranking reads features and rankings from --train (a label-ranking file): drop --outputs");
    }
    Ok(())
}

/// The features of `--train` and the training graphs of `--outputs` (a TU data set).
pub(crate) fn graph_data(a: &FitArgs) -> Result<(Dataset, Graphs)> {
    let Some(path) = a.output_file.outputs.as_deref() else {
        bail!("--output-kind graph needs --outputs DIR/NAME (a TU data set: the training graphs)")
    };
    let data = read_data(&a.train, &crate::config::features_only(&a.data), None)?;
    let y = okr_eval::read_tu_graphs(path)?;
    if y.n_rows() != data.n_samples() {
        bail!("{}: {} graphs for the {} rows of {}", path.display(), y.n_rows(), data.n_samples(), a.train.display());
    }
    Ok((data, y))
}

/// A label-ranking file (`n,d,k` header, then `d` features and `k` ranks per
/// row) as features without labels and rankings.
pub(crate) fn read_ranking_file(path: &Path) -> Result<(Dataset, Rankings)> {
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

/// Candidates of a graph model: `--candidates` (a TU data set) or its
/// training graphs `own`.
pub(crate) fn graph_candidates(own: &Graphs, path: Option<&Path>) -> Result<Graphs> {
    Ok(match path {
        Some(p) => okr_eval::read_tu_graphs(p)?,
        None => own.clone(),
    })
}

/// Candidates of a ranking model: `--candidates` (one ranking per line, the
/// `k` ranks 1-based) or its distinct training rankings `own`.
pub(crate) fn ranking_candidates(own: &Rankings, path: Option<&Path>) -> Result<Rankings> {
    Ok(match path {
        Some(p) => read_candidate_pool(p, own.n_items())?,
        None => own.clone(),
    })
}
