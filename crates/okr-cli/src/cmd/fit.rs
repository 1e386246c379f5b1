//! `okr fit`: flags (or `--recipe FILE`) -> one [`okr::Recipe`] -> the
//! library's fit -> a model file, for every estimator.

use std::path::Path;

use anyhow::{Context, Result, bail};
use okr::{Family, Fitted, InputRecipe, OutputKind, Recipe, TrainOutputs};
use okr_estimators::persist::Model;
use okr_eval::Dataset;
use okr_kernels::GRAM_SYMMETRY_TOL;

use crate::cli::FitArgs;
use crate::config::{index_base, set_threads};
use crate::model::{info, save};

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
            if matches!(r.input, InputRecipe::Spectra { .. }) && a.input_spectra.is_none() {
                bail!("--recipe {}: the recipe's input is spectra: give them with --input-spectra", path.display());
            }
            r
        }
        None => {
            check(a)?;
            crate::recipe::from_flags(a)?
        }
    };
    set_threads(recipe.runtime.threads)?;
    fit_recipe(a, &recipe, None)
}

/// Checks the flags and the request they make, so that a bad value fails
/// before a large file is read.
pub(crate) fn check(a: &FitArgs) -> Result<()> {
    super::gram::check_flags(a)?;
    super::outputs::check_fit(a)?;
    crate::config::check_fit_flags(a)?;
    set_threads(a.threads)?;
    crate::recipe::from_flags(a)?.check()?;
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
    let family = recipe.estimator.name.family();
    if y.width() == 0 && family != Family::Autoencoder && matches!(kind, OutputKind::Labels | OutputKind::Fingerprint) {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }
    let (n, d) = (data.n_samples(), data.n_features());
    // Sample weights are data: read here, checked (count, finite, > 0) by the library's fit.
    let weights = match &a.sample_weights {
        Some(path) => {
            Some(okr_eval::read_sample_weights(path).with_context(|| format!("--sample-weights {}", path.display()))?)
        }
        None => None,
    };
    let with_weights = |e: okr::Error| -> anyhow::Error {
        match &a.sample_weights {
            Some(path) => anyhow::Error::new(e).context(format!("--sample-weights {}", path.display())),
            None => e.into(),
        }
    };
    // Progress (the solvers' iterations) is drawn by `crate::progress`.
    let (fitted, gram_path) = match (&a.input_gram, &a.input_spectra, family, weights.as_deref()) {
        (Some(path), _, _, None) => (okr::fit_gram(recipe, &read_train_gram(path, n, &a.train)?, &y)?, Some(path)),
        (Some(path), _, _, Some(w)) => {
            let gram = read_train_gram(path, n, &a.train)?;
            (okr::fit_gram_weighted(recipe, &gram, &y, w).map_err(with_weights)?, Some(path))
        }
        (None, Some(path), _, None) => {
            (okr::fit_spectra(recipe, &read_train_spectra(path, n, &a.train)?, &y)?, Some(path))
        }
        (None, Some(path), _, Some(w)) => {
            let spectra = read_train_spectra(path, n, &a.train)?;
            (okr::fit_spectra_weighted(recipe, &spectra, &y, w).map_err(with_weights)?, Some(path))
        }
        (None, None, _, Some(w)) => (okr::fit_weighted(recipe, &data.x, &y, w).map_err(with_weights)?, None),
        (None, None, Family::Autoencoder, None) => (okr::fit_codes(recipe, &data.x, &mut |_, _| {})?, None),
        (None, None, _, None) => (okr::fit(recipe, &data.x, &y)?, None),
    };
    let mut meta = info(data, index_base(&a.train, &a.data)?, None, recipe.seed);
    if family == Family::KernelOutput {
        meta.n_labels = y.width();
    }
    if gram_path.is_some() {
        // The model reads rows of n kernel values: its "features" are the training samples.
        (meta.n_features, meta.index_base) = (n, None);
    }
    let (warnings, notes, seconds) = (fitted.warnings.clone(), fitted.notes.clone(), fitted.fit_seconds);
    let summary = summary(&fitted, &y);
    let saved = fitted.into_saved(meta)?;
    save(&saved, &a.model).with_context(|| format!("saving the model to {}", a.model.display()))?;
    for w in warnings {
        eprintln!("okr: warning: {w}");
    }
    let inputs = match gram_path {
        Some(p) if a.input_spectra.is_some() => format!("{n} spectra ({}; {summary})", p.display()),
        Some(p) => format!("a precomputed {n} x {n} Gram ({}; {summary})", p.display()),
        None => format!("{n} samples ({d} features, {summary})"),
    };
    eprintln!("okr: fitted {} on {inputs} in {seconds:.2} s -> {}", saved.model.name(), a.model.display());
    if !notes.is_empty() {
        eprintln!("okr: {}", notes.join("; "));
    }
    if let Some(c) = chosen {
        eprintln!("okr: width and lambda chosen by okr tune: {c}");
    }
    Ok(())
}

/// What a fit learnt, for the one-line summary: the outputs and rank of a
/// supervised model, the code width of an autoencoder.
fn summary(fitted: &Fitted, y: &TrainOutputs<'_>) -> String {
    let outputs = match y.kind() {
        OutputKind::Labels => format!("{} labels", y.width()),
        OutputKind::Fingerprint => format!("fingerprints of {} bits", y.width()),
        OutputKind::Vector => format!("vector outputs of {} values", y.width()),
        OutputKind::Graph => "graph outputs".to_string(),
        OutputKind::Ranking => format!("rankings of {} items", y.width()),
    };
    if matches!(fitted.model, Model::Kae(_) | Model::K2ae(_)) {
        // The code is the first narrowest inner layer.
        let code = fitted.recipe.estimator.hidden_dims.as_ref().and_then(|d| d.iter().min()).copied().unwrap_or(0);
        return format!("code {code}");
    }
    if let Model::Leml(m) = &fitted.model {
        return format!("{outputs}, rank {}", m.fitted_params().rank());
    }
    let rank = match fitted.model.ranks() {
        Some((requested, used)) if requested != used => {
            format!(", rank {used}: --rank {requested} capped at the numerical rank")
        }
        Some((_, used)) => format!(", rank {used}"),
        None => String::new(),
    };
    format!("{outputs}{rank}")
}

/// The training Gram of `--input-gram` for the `n` rows of the training file.
pub(crate) fn read_train_gram(path: &Path, n: usize, train: &Path) -> Result<okr_kernels::GramRows> {
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

/// The spectra of `--input-spectra` for the `n` rows of the training file.
fn read_train_spectra(path: &Path, n: usize, train: &Path) -> Result<okr_kernels::Spectra> {
    let lib = super::spectra_gram::read_spectra(path)?;
    if lib.len() != n {
        bail!("--input-spectra {}: {} spectra for the {n} rows of {}", path.display(), lib.len(), train.display());
    }
    Ok(lib.spectra)
}
