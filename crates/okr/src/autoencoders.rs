//! The kernel autoencoders KAE and K2AE (Laforgue et al. 2019) from a
//! [`Recipe`]: unsupervised, they fit on the features alone.
//!
//! The inner widths are `hidden_dims`, or `layers - 1` layers of width
//! `code_dim` (the CLI's spelling); the code is the first narrowest inner
//! layer. The
//! first layer's kernel is the recipe's input kernel (KAE: `gaussian`,
//! `linear` or `polynomial`, a Gaussian without a width takes the KAE
//! paper's median rule on the layer's inputs; K2AE: any vector kernel,
//! widths resolved as for every estimator); the other layers are Gaussian
//! with the median rule.

use std::time::Instant;

use okr_estimators::ParamGuard;
use okr_estimators::kae::{KaeParams, LayerKernel};
use okr_estimators::persist::Model;
use okr_kernels::{Features, KernelOptions, Rows, Standardizer};

use crate::catalog::Estimator;
use crate::recipe::{InputRecipe, KernelRecipe, Recipe, Standardize};
use crate::resolve::{self, PreparedInputs};
use crate::{Error, Fitted, Result, defaults};

/// The inner widths of `recipe`: `hidden_dims`, or `layers - 1` layers
/// of `code_dim` ([`defaults::KAE_LAYERS`], [`defaults::KAE_CODE_DIM`]).
///
/// # Errors
/// [`Error::Refused`] when both spellings are given; [`Error::Invalid`]
/// for fewer than 2 layers, an empty list or a width of 0.
pub fn hidden_dims(recipe: &Recipe) -> Result<Vec<usize>> {
    let e = &recipe.estimator;
    if let Some(dims) = &e.hidden_dims {
        if e.layers.is_some() || e.code_dim.is_some() {
            return Err(Error::Refused("give hidden_dims, or layers and code_dim, not both".into()));
        }
        if dims.is_empty() || dims.contains(&0) {
            return Err(Error::invalid("hidden_dims", format!("{dims:?}"), "a non-empty list of integers >= 1"));
        }
        return Ok(dims.clone());
    }
    let layers = e.layers.unwrap_or(defaults::KAE_LAYERS);
    if layers < 2 {
        return Err(Error::invalid("layers", layers, "at least 2 (a kernel autoencoder has an inner layer)"));
    }
    let code = e.code_dim.unwrap_or(defaults::KAE_CODE_DIM);
    if code == 0 {
        return Err(Error::invalid("code_dim", 0, "an integer >= 1"));
    }
    Ok(vec![code; layers - 1])
}

/// The finite KAE's first-layer kernel from the input kernel's recipe.
fn first_layer(k: &KernelRecipe) -> Result<LayerKernel> {
    let degree = resolve::poly_degree(k.degree)?;
    let options =
        KernelOptions { gamma: k.gamma, sigma2: k.sigma2, degree, coef0: k.coef0.unwrap_or(defaults::POLY_COEF0) };
    LayerKernel::from_name(&k.canonical_name(), &options).map_err(|_| {
        Error::Refused(format!(
            "KAE takes gaussian, linear or polynomial input kernels (not {}); K2AE takes any vector kernel",
            k.canonical_name()
        ))
    })
}

/// The autoencoder's parameters from `recipe` (before the data are read).
///
/// # Errors
/// As [`hidden_dims`]; [`Error::Refused`] for an input side other than
/// features or a KAE kernel it cannot use; the builder's checks.
pub fn params(recipe: &Recipe) -> Result<KaeParams> {
    let InputRecipe::Features { kernel, .. } = &recipe.input else {
        return Err(Error::Refused(format!(
            "estimator {} reconstructs its features: give features with one input kernel",
            recipe.estimator.name
        )));
    };
    let first = match recipe.estimator.name {
        Estimator::Kae => first_layer(kernel)?,
        _ => LayerKernel::Linear,
    };
    let e = &recipe.estimator;
    let p = KaeParams::stacked(hidden_dims(recipe)?, first, e.lambda.unwrap_or(defaults::LAMBDA))
        .max_iter(e.max_iter.unwrap_or(defaults::KAE_MAX_ITER))
        .seed(recipe.seed);
    p.check_ref()?;
    Ok(p)
}

/// The standardization of an autoencoder's features: only when asked
/// (`Auto` uses them as given: the autoencoder reconstructs its inputs, and
/// the KAE paper's median rule sets the widths on them).
fn standardize(s: Standardize, x: &Features, name: Estimator) -> Result<Option<Standardizer>> {
    match (s, x) {
        (Standardize::Yes, Features::Dense(_)) => Ok(Some(Standardizer::fit(x)?)),
        (Standardize::Yes, Features::Sparse(_)) => {
            Err(Error::Refused(format!("standardizing features for estimator {name} needs dense features")))
        }
        _ => Ok(None),
    }
}

/// Fits the KAE or K2AE of `recipe` on `x`; `progress(step, objective)`
/// is called after each KAE step.
///
/// # Errors
/// [`Error::Refused`] for a recipe of another family; errors of [`params`]
/// and of the fit.
pub fn fit_codes(recipe: &Recipe, x: &Features, progress: &mut dyn FnMut(usize, f64)) -> Result<Fitted> {
    fit_codes_impl(recipe, x, None, progress)
}

/// Continues the KAE or K2AE `previous` (fitted from a recipe of the same
/// estimator on inputs of the same shape) for `recipe`'s `max_iter` more
/// steps, as [`crate::fit_from`] does for the supervised estimators: `k`
/// steps continued for `k` more equal `2k` steps in one fit.
///
/// # Errors
/// As [`fit_codes`]; [`Error::Refused`] when `previous` is not a model of
/// the recipe's estimator; a shape mismatch for inputs or layers of
/// another shape.
pub fn fit_codes_from(
    recipe: &Recipe,
    previous: &Model,
    x: &Features,
    progress: &mut dyn FnMut(usize, f64),
) -> Result<Fitted> {
    fit_codes_impl(recipe, x, Some(previous), progress)
}

pub(crate) fn fit_codes_impl(
    recipe: &Recipe,
    x: &Features,
    warm: Option<&Model>,
    progress: &mut dyn FnMut(usize, f64),
) -> Result<Fitted> {
    let start = Instant::now();
    recipe.check()?;
    let name = recipe.estimator.name;
    if !matches!(name, Estimator::Kae | Estimator::K2ae) {
        return Err(Error::Refused(format!("estimator {name} is not an autoencoder: fit it with okr::fit")));
    }
    if x.n_rows() == 0 {
        return Err(Error::Refused("no training samples".into()));
    }
    let params = params(recipe)?;
    let InputRecipe::Features { kernel, standardize: st } = &recipe.input else { unreachable!("checked by params") };
    let standardizer = standardize(*st, x, name)?;
    let rows = match &standardizer {
        Some(s) => std::borrow::Cow::Owned(s.transform_features(x)?),
        None => std::borrow::Cow::Borrowed(x),
    };
    let mut resolved = recipe.clone();
    resolved.estimator.hidden_dims = Some(hidden_dims(recipe)?);
    (resolved.estimator.layers, resolved.estimator.code_dim) = (None, None);
    resolved.estimator.lambda = Some(recipe.estimator.lambda.unwrap_or(defaults::LAMBDA));
    resolved.estimator.max_iter = Some(recipe.estimator.max_iter.unwrap_or(defaults::KAE_MAX_ITER));
    let mut notes = Vec::new();
    let model = match name {
        Estimator::Kae => {
            let dense = rows.to_dense();
            notes.push(format!("first layer {kernel:?}", kernel = first_layer(kernel)?));
            let p = params.check_ref()?;
            Model::Kae(match warm {
                None => p.fit_with_progress(dense.as_ref(), progress)?,
                Some(Model::Kae(prev)) => p.fit_from_with_progress(prev, dense.as_ref(), progress)?,
                Some(other) => return Err(crate::fit::cannot_continue(recipe, other)),
            })
        }
        _ => {
            let prepared = PreparedInputs {
                standardizer: None,
                weights: None,
                rows: std::borrow::Cow::Borrowed(&*rows),
                note: "",
            };
            let (kx, kr, note) = resolve::input_kernel(kernel, &prepared)?;
            notes.push(format!("input kernel {} ({note})", crate::fit::describe(&kx)));
            resolved.input = InputRecipe::Features { kernel: kr, standardize: *st };
            let p = params.check_ref()?;
            Model::K2ae(match warm {
                None => p.fit_k2ae_rows(kx, &*rows)?,
                Some(Model::K2ae(prev)) => p.fit_k2ae_rows_from(prev, kx, &*rows)?,
                Some(other) => return Err(crate::fit::cannot_continue(recipe, other)),
            })
        }
    };
    let train = match &model {
        Model::Kae(m) => m.train_info(),
        Model::K2ae(m) => m.model().train_info(),
        _ => unreachable!("autoencoders only"),
    };
    notes.push(format!(
        "{} steps, objective {:.6} -> {:.6}",
        train.n_iter,
        train.objective_history.first().copied().unwrap_or(f64::NAN),
        train.final_objective
    ));
    Ok(Fitted {
        model,
        recipe: resolved,
        standardizer,
        warnings: Vec::new(),
        notes,
        fit_seconds: start.elapsed().as_secs_f64(),
    })
}
