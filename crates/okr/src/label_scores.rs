//! LEML (Yu et al. 2014) from a [`Recipe`]: label scores `x^T W H` on the
//! features as given (no input kernel), every default from
//! [`crate::defaults`].

use std::time::Instant;

use okr_estimators::leml::{Leml, LemlParams, Loss, PartialLabels, Targets};
use okr_estimators::persist::Model;
use okr_estimators::{Fit, FitFrom, ParamGuard};
use okr_kernels::{Features, LabelSets, Rows};

use crate::recipe::{EstimatorRecipe, Recipe};
use crate::{Error, Fitted, Result, defaults};

/// LEML's parameters from `recipe` for `n_labels` labels, with a warning
/// when the rank asked for is capped at the label count (pass
/// `usize::MAX` to check a recipe before the data are read).
///
/// | parameter | default |
/// |---|---|
/// | `rank` | [`defaults::LEML_RANK`], capped at the labels |
/// | `lambda` | [`defaults::LEML_LAMBDA`] |
/// | `loss` | `sq` (also `lr`, `sh`) |
/// | `max_iter` | [`defaults::LEML_MAX_ITER`], stopping early at relative change [`defaults::LEML_TOL`] |
///
/// # Errors
/// [`Error::Invalid`] for an unknown loss or an observed fraction outside
/// `(0, 1]`; the builder's checks.
pub fn leml_params(recipe: &Recipe, n_labels: usize) -> Result<(LemlParams, Vec<String>)> {
    let e = &recipe.estimator;
    let loss_name = e.loss.as_deref().unwrap_or(defaults::LEML_LOSS);
    let loss =
        Loss::from_name(loss_name).ok_or_else(|| Error::invalid("loss", format!("{loss_name:?}"), "sq, lr or sh"))?;
    if let Some(f) = e.observed_fraction
        && !(f > 0.0 && f <= 1.0)
    {
        return Err(Error::invalid("observed_fraction", f, "a fraction in (0, 1]"));
    }
    let mut warnings = Vec::new();
    let rank = match e.rank {
        // A label-space rank beyond the label count adds nothing.
        Some(r) if r > n_labels => {
            warnings.push(format!("rank {r} is more than the {n_labels} labels: capped at {n_labels}"));
            n_labels.max(1)
        }
        Some(r) => r,
        None => defaults::LEML_RANK.min(n_labels).max(1),
    };
    let params = Leml::params()
        .rank(rank)
        .lambda(e.lambda.unwrap_or(defaults::LEML_LAMBDA))
        .loss(loss)
        .max_iter(e.max_iter.unwrap_or(defaults::LEML_MAX_ITER))
        .tol(defaults::LEML_TOL)
        .seed(recipe.seed);
    params.check_ref()?;
    Ok((params, warnings))
}

/// Fits LEML on `x` (sparse rows; dense features are converted once) and
/// label sets `y`: every label observed, or a seeded fraction
/// (`observed_fraction`, the others unknown).
pub(crate) fn fit(
    recipe: &Recipe,
    x: &Features,
    y: &LabelSets,
    start: Instant,
    warm: Option<&Model>,
) -> Result<Fitted> {
    let previous = match warm {
        None => None,
        Some(Model::Leml(m)) => Some(m),
        Some(other) => return Err(crate::fit::cannot_continue(recipe, other)),
    };
    let (params, warnings) = leml_params(recipe, y.n_labels())?;
    let e = &recipe.estimator;
    let partial = match e.observed_fraction {
        Some(f) if f < 1.0 => Some(PartialLabels::sample(y, f, -1.0, recipe.seed)?),
        _ => None,
    };
    let targets = match &partial {
        Some(p) => Targets::Partial(p),
        None => Targets::Full(y),
    };
    let rows = x.sparse_rows()?;
    let model = match previous {
        None => params.fit(rows.as_ref(), targets)?,
        Some(p) => params.fit_from(p, rows.as_ref(), targets)?,
    };
    let p = params.check_ref()?;
    let mut resolved = Recipe { estimator: EstimatorRecipe::new(e.name), ..recipe.clone() };
    let r = &mut resolved.estimator;
    (r.rank, r.lambda, r.max_iter) = (Some(p.rank()), Some(p.lambda()), Some(p.max_iter()));
    r.loss = Some(e.loss.clone().unwrap_or_else(|| defaults::LEML_LOSS.to_string()));
    r.observed_fraction = e.observed_fraction;
    let mut notes = vec![
        format!("lambda = {:e} ({})", p.lambda(), if e.lambda.is_some() { "given" } else { "default of leml" }),
        format!(
            "rank {} ({})",
            p.rank(),
            if e.rank.is_some() { "given" } else { "default: at most 10, at most the labels" }
        ),
    ];
    if let Some(p) = &partial {
        notes.push(format!("{} of {} labels observed", p.n_observed(), x.n_rows() * y.n_labels()));
    }
    if let Some(h) = model.history().last() {
        notes.push(format!("{} alternating iterations, objective {:.4e}", model.history().len(), h.objective));
    }
    Ok(Fitted {
        model: Model::Leml(model),
        recipe: resolved,
        standardizer: None,
        warnings,
        notes,
        fit_seconds: start.elapsed().as_secs_f64(),
    })
}
