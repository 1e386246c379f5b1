//! `okr fit`: flags (or `--recipe FILE`) -> one [`okr::Recipe`] -> the
//! library's fit -> a model file. LEML and the autoencoders keep their own
//! paths until the recipe layer fits them.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use okr::{Family, InputRecipe, OutputKind, Recipe, TrainOutputs};
use okr_estimators::leml::{Leml, LemlParams, Loss, PartialLabels, Targets};
use okr_estimators::persist::Model;
use okr_estimators::{Fit, ParamGuard};
use okr_eval::Dataset;
use okr_kernels::GRAM_SYMMETRY_TOL;

use crate::cli::{DEFAULT_RANK, FitArgs, LossKind};
use crate::config::{index_base, read_data, set_threads};
use crate::model::{info, save, save_fitted};

pub fn run(a: &FitArgs) -> Result<()> {
    let recipe = match &a.recipe {
        Some(path) => {
            crate::recipe::check_no_model_flags(a)?;
            crate::config::check_fit_paths(a)?;
            let mut r = crate::recipe::read(path)?;
            if a.threads.is_some() {
                r.runtime.threads = a.threads;
            }
            if matches!(r.input, InputRecipe::Gram) && a.input_gram.is_none() {
                bail!(
                    "--recipe {}: the recipe's input is a precomputed Gram: give it with --input-gram",
                    path.display()
                );
            }
            r
        }
        None => {
            check(a)?;
            crate::recipe::from_flags(a)?
        }
    };
    set_threads(recipe.runtime.threads)?;
    match recipe.estimator.name.family() {
        Family::Autoencoder => super::kae::fit(a),
        Family::LabelScores => fit_leml(a, &read_data(&a.train, &a.data, None)?),
        Family::KernelOutput => fit_recipe(a, &recipe, None),
    }
}

/// Checks the flags and the request they make, so that a bad value fails
/// before a large file is read.
pub(crate) fn check(a: &FitArgs) -> Result<()> {
    super::gram::check_flags(a)?;
    super::outputs::check_fit(a)?;
    crate::config::check_fit_flags(a)?;
    set_threads(a.threads)?;
    if a.estimator == crate::cli::EstimatorKind::Leml {
        leml_params(a).check()?;
        if let Some(f) = a.observed_fraction
            && !(f > 0.0 && f <= 1.0)
        {
            bail!("invalid --observed-fraction {f}: expected a fraction in (0, 1]");
        }
        return Ok(());
    }
    if crate::recipe::estimator(a.estimator).family() == Family::KernelOutput {
        crate::recipe::from_flags(a)?.check()?;
    }
    Ok(())
}

/// Reads the training data the recipe's output kind and input side need,
/// fits the recipe with the library and saves the model; `chosen` says
/// which values `okr tune` chose.
pub(crate) fn fit_recipe(a: &FitArgs, recipe: &Recipe, chosen: Option<&str>) -> Result<()> {
    let (data, owned) = super::outputs::training_data(a, recipe.output.kind)?;
    fit_read(a, recipe, &data, &owned, chosen)
}

/// [`fit_recipe`] on training data already read.
pub(crate) fn fit_read(
    a: &FitArgs,
    recipe: &Recipe,
    data: &Dataset,
    owned: &super::outputs::Owned,
    chosen: Option<&str>,
) -> Result<()> {
    let kind = recipe.output.kind;
    let y = match (owned, kind) {
        (super::outputs::Owned::Vectors(v), _) => TrainOutputs::Vectors(v),
        (super::outputs::Owned::Graphs(g), _) => TrainOutputs::Graphs(g),
        (super::outputs::Owned::Rankings(r), _) => TrainOutputs::Rankings(r),
        (super::outputs::Owned::Sets, OutputKind::Fingerprint) => TrainOutputs::Fingerprints(&data.y),
        (super::outputs::Owned::Sets, _) => TrainOutputs::Labels(&data.y),
    };
    if y.width() == 0 && matches!(kind, OutputKind::Labels | OutputKind::Fingerprint) {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }
    let (n, d) = (data.n_samples(), data.n_features());
    let spinner = ProgressBar::new_spinner().with_message(format!("fitting {} on {n} samples", recipe.estimator.name));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let (fitted, gram_path) = match &a.input_gram {
        Some(path) => (okr::fit_gram(recipe, &read_train_gram(path, n, &a.train)?, &y)?, Some(path)),
        None => (okr::fit(recipe, &data.x, &y)?, None),
    };
    spinner.finish_and_clear();
    let mut meta = info(data, index_base(&a.train, &a.data)?, None, recipe.seed);
    meta.n_labels = y.width();
    if gram_path.is_some() {
        // The model reads rows of n kernel values: its "features" are the training samples.
        (meta.n_features, meta.index_base) = (n, None);
    }
    let (warnings, notes, seconds) = (fitted.warnings.clone(), fitted.notes.clone(), fitted.fit_seconds);
    let saved = fitted.into_saved(meta)?;
    save(&saved, &a.model).with_context(|| format!("saving the model to {}", a.model.display()))?;
    for w in warnings {
        eprintln!("okr: warning: {w}");
    }
    let rank = match saved.model.ranks() {
        Some((requested, used)) if requested != used => {
            format!(", rank {used}: --rank {requested} capped at the numerical rank")
        }
        Some((_, used)) => format!(", rank {used}"),
        None => String::new(),
    };
    let outputs = match kind {
        OutputKind::Labels => format!("{} labels", y.width()),
        OutputKind::Fingerprint => format!("fingerprints of {} bits", y.width()),
        OutputKind::Vector => format!("vector outputs of {} values", y.width()),
        OutputKind::Graph => "graph outputs".to_string(),
        OutputKind::Ranking => format!("rankings of {} items", y.width()),
    };
    let inputs = match gram_path {
        Some(p) => format!("a precomputed {n} x {n} Gram ({}; {outputs}{rank})", p.display()),
        None => format!("{n} samples ({d} features, {outputs}{rank})"),
    };
    eprintln!("okr: fitted {} on {inputs} in {seconds:.2} s -> {}", saved.model.name(), a.model.display());
    eprintln!("okr: {}", notes.join("; "));
    if let Some(c) = chosen {
        eprintln!("okr: width and lambda chosen by okr tune: {c}");
    }
    Ok(())
}

/// The training Gram of `--input-gram` for the `n` rows of the training file.
fn read_train_gram(path: &Path, n: usize, train: &Path) -> Result<okr_kernels::GramRows> {
    let x = okr_kernels::read_train_gram(path, GRAM_SYMMETRY_TOL)
        .with_context(|| format!("--input-gram {}", path.display()))?;
    if x.n_train() != n {
        bail!(
            "--input-gram {}: a {m} x {m} Gram for the {n} rows of {}",
            path.display(),
            train.display(),
            m = x.n_train()
        );
    }
    Ok(x)
}

/// LEML's relative convergence tolerance in the CLI.
const LEML_TOL: f64 = 1e-6;

/// LEML's parameters; the rank is `--rank` (or the default) before the
/// label count is known, see [`leml_rank`].
fn leml_params(a: &FitArgs) -> LemlParams {
    let loss = match a.loss.unwrap_or(LossKind::Sq) {
        LossKind::Sq => Loss::Squared,
        LossKind::Lr => Loss::Logistic,
        LossKind::Sh => Loss::SquaredHinge,
    };
    Leml::params()
        .rank(a.rank_or_default())
        .lambda(a.lambda.unwrap_or(okr::defaults::LAMBDA))
        .loss(loss)
        .max_iter(a.max_iter.unwrap_or(10))
        // A large --max-iter is a budget, not a promise to run it out.
        .tol(LEML_TOL)
        .seed(a.seed)
}

/// `okr fit --estimator leml`: sparse features (dense files are converted),
/// full labels or a seeded random fraction of them.
fn fit_leml(a: &FitArgs, data: &okr_eval::Dataset) -> Result<()> {
    let (n, d, l) = (data.n_samples(), data.n_features(), data.n_labels());
    if l == 0 {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }
    let (rank, capped) = leml_rank(a.rank, l);
    let params = leml_params(a).rank(rank).check()?;
    let x = data.x.sparse_rows()?;
    let partial = match a.observed_fraction {
        Some(f) if f < 1.0 => Some(PartialLabels::sample(&data.y, f, -1.0, a.seed)?),
        _ => None,
    };
    let targets = match &partial {
        Some(p) => Targets::Partial(p),
        None => Targets::Full(&data.y),
    };
    let spinner = ProgressBar::new_spinner().with_message(format!("fitting leml on {n} samples"));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let t = Instant::now();
    let model = params.fit(x.as_ref(), targets)?;
    let fit_seconds = t.elapsed().as_secs_f64();
    spinner.finish_and_clear();
    let objective = model.history().last().map_or(f64::NAN, |h| h.objective);
    let meta = info(data, index_base(&a.train, &a.data)?, None, a.seed);
    let file = save_fitted(Model::Leml(model), meta, fit_seconds, &a.model)?;
    let observed =
        partial.as_ref().map_or(String::new(), |p| format!(", {} of {} labels observed", p.n_observed(), n * l));
    eprintln!(
        "okr: fitted {} on {n} samples ({d} features, {l} labels{observed}, rank {}) in {fit_seconds:.2} s, objective {objective:.4e} -> {}",
        file.model.name(),
        params.rank(),
        a.model.display()
    );
    if let Some(asked) = capped {
        eprintln!("okr: warning: --rank {asked} is more than the {l} labels: capped at {l}");
    }
    eprintln!(
        "okr: lambda = {:e} ({}), rank {rank} ({})",
        params.lambda(),
        if a.lambda.is_some() { "--lambda" } else { "default; --lambda to set it" },
        if a.rank.is_some() { "--rank" } else { "default: the number of labels, at most 64" }
    );
    Ok(())
}

/// LEML's rank: `--rank` or the number of labels (at most [`DEFAULT_RANK`]),
/// capped at the number of labels (a larger label-space rank adds nothing);
/// the asked rank when it was capped.
fn leml_rank(asked: Option<usize>, n_labels: usize) -> (usize, Option<usize>) {
    match asked {
        Some(r) if r > n_labels => (n_labels.max(1), Some(r)),
        Some(r) => (r, None),
        None => (n_labels.clamp(1, DEFAULT_RANK), None),
    }
}
