//! `okr tune`: an estimator's Gaussian width and ridge by cross-validation
//! (label sets, fingerprints, vectors), then the refit of `okr fit` with the choice.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use indicatif::ProgressBar;
use okr_decode::select::{DecodedScorer, RefitSearch, loo_grid};
use okr_estimators::persist::OutputModel;
use okr_estimators::select::{GaussianIokrSearch, GridSearchResult, RkhsCriterion, WidthLineSearch, rkhs_grid};
use okr_eval::{Features, KFold, f1_samples};
use okr_kernels::{DenseRows, Gaussian, Kernel, KernelSpec, LabelSets, Linear, Rows};
use serde_json::json;

use super::fit::check;
use super::outputs::Owned;
use crate::cli::{CvKind, EstimatorKind, FitArgs, KernelKind, OutputKindFlag, TuneArgs};
use crate::config::read_data;
use crate::output::write_result;
use okr::Recipe;
use okr::defaults::LOO_LAMBDAS;
use okr::resolve::loo_rows;

/// Width multiplier of the median heuristic (`gamma = 1 / (2 median)`), where the line search starts.
const START_WIDTH: f64 = 0.5;

pub fn run(a: &TuneArgs) -> Result<()> {
    let f = &a.fit;
    if matches!(f.estimator, EstimatorKind::Leml | EstimatorKind::Kae | EstimatorKind::K2ae) {
        bail!(
            "okr tune searches the kernel-output estimators (iokr, reduced-rank, kde, trace-norm, siokr, \
             isokr, sisokr, nystroem), not --estimator {}",
            f.estimator.name()
        );
    }
    if f.estimator != EstimatorKind::Iokr && !matches!(a.cv, CvKind::KFold(_)) {
        bail!(
            "--cv {} is a closed form of IOKR: --estimator {} is cross-validated by refitting, give a fold count (--cv 3)",
            a.cv.flag(),
            f.estimator.name()
        );
    }
    if f.input_kernel != KernelKind::Gaussian {
        bail!("okr tune searches Gaussian widths: --input-kernel gaussian only");
    }
    for (flag, given) in [
        ("--lambda", f.lambda.is_some()),
        ("--lambda1", f.lambda1.is_some()),
        ("--lambda2", f.lambda2.is_some()),
        ("--gamma", f.gamma.is_some()),
        ("--sigma2", f.sigma2.is_some()),
    ] {
        if given {
            bail!("{flag} is what okr tune chooses: give the grid with --lambdas / --widths instead");
        }
    }
    let kind = f.output_kind;
    if matches!(kind, OutputKindFlag::Graph | OutputKindFlag::Ranking) {
        bail!(
            "okr tune searches label-set, fingerprint and vector outputs, not --output-kind {}",
            format!("{kind:?}").to_lowercase()
        );
    }
    if kind == OutputKindFlag::Vector && !matches!(a.cv, CvKind::KFold(_)) {
        bail!("--cv {} is a closed form for label sets: vector outputs take a fold count (--cv 3)", a.cv.flag());
    }
    check(f)?;
    let recipe = crate::recipe::from_flags(f)?;
    let ky_recipe = recipe.output.kernel_or_default();
    let (data, outputs, ky) = match kind {
        OutputKindFlag::Vector => {
            let (data, y) = super::outputs::vector_data(f)?;
            let (ky, _, note) = okr::resolve::vector_output_kernel(&ky_recipe, &y)?;
            (data, Outputs::Vectors(y, note), ky)
        }
        _ => {
            let data = match kind {
                OutputKindFlag::Fingerprint => super::outputs::fingerprint_data(f)?,
                _ => read_data(&f.train, &f.data, None)?,
            };
            if data.n_labels() == 0 {
                bail!("{}: the training file has no labels, so the model would predict nothing", f.train.display());
            }
            let (ky, _, _) = okr::resolve::label_output_kernel(&ky_recipe, &data.y)?;
            let sets = Outputs::Sets(data.y.clone());
            (data, sets, ky)
        }
    };
    let scoring = Scoring::of(a.cv, &outputs);
    if let CvKind::KFold(k) = a.cv
        && k > data.n_samples()
    {
        bail!("invalid --cv {k}: more folds than the {} training samples", data.n_samples());
    }
    let standardize = match &recipe.input {
        okr::InputRecipe::Features { standardize, .. } => *standardize,
        _ => bail!("okr tune searches one Gaussian input kernel on features"),
    };
    let inputs = okr::resolve::prepare_inputs(standardize, true, &data.x)?;
    let lambdas = a.lambdas.clone().unwrap_or_else(|| LOO_LAMBDAS.to_vec());
    check_lambdas(&lambdas, data.n_samples())?;

    let spinner = ProgressBar::new_spinner().with_message(format!("tuning on {} samples", data.n_samples()));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let start = Instant::now();
    let mut steps = 0usize;
    let mut on_step = || {
        steps += 1;
        spinner.set_message(format!("tuning on {} samples: {steps} fits", data.n_samples()));
    };
    let n = data.n_samples();
    let search = Search { fit: f, recipe: &recipe, cv: a.cv, lambdas: &lambdas, seed: f.seed };
    // Coarse to fine: without --widths, the width is searched on a seeded
    // subset of SCREEN_ROWS rows (cheap folds), then the ridge path is
    // cross-validated on all rows at that width.
    let screen = (a.widths.is_none() && n > SCREEN_ROWS)
        .then(|| okr_eval::train_test_split(n, SCREEN_ROWS as f64 / n as f64, f.seed))
        .transpose()?
        .map(|(_, rows)| rows);
    let (coarse, result) = match &screen {
        None => {
            let widths = a.widths.as_deref().map(Widths::Given).unwrap_or(Widths::LineSearch);
            (None, search.on(inputs.rows(), &outputs, &ky, widths, &mut on_step)?)
        }
        Some(rows) => {
            let coarse =
                search.on(&inputs.rows().select(rows), &outputs.select(rows), &ky, Widths::LineSearch, &mut on_step)?;
            let fine = search.on(inputs.rows(), &outputs, &ky, Widths::Given(&[coarse.c()]), &mut on_step)?;
            (Some(coarse), fine)
        }
    };
    let search_seconds = start.elapsed().as_secs_f64();
    spinner.finish_and_clear();

    let report = if a.json {
        json_report(&scoring, coarse.as_ref(), &result, search_seconds)
    } else {
        text_report(&scoring, coarse.as_ref(), &result, search_seconds)
    };
    write_result(None, |w| w.write_all(report.as_bytes()))?;
    let failed: usize = [coarse.as_ref(), Some(&result)]
        .into_iter()
        .flatten()
        .flat_map(|r| r.fold_scores.iter().flatten().flatten())
        .filter(|s| s.is_nan())
        .count();
    if failed > 0 {
        eprintln!(
            "okr: warning: {failed} fits failed and were scored NaN, never chosen (usually a ridge too small \
             for the estimator: raise the smallest of --lambdas)"
        );
    }

    let mut refit = recipe.clone();
    refit.estimator.lambda = Some(result.lambda());
    if let okr::InputRecipe::Features { kernel, .. } = &mut refit.input {
        (kernel.gamma, kernel.sigma2) = (Some(result.gamma()), None);
    }
    let note = scoring.criterion.to_string();
    let owned = match outputs {
        Outputs::Vectors(y, _) => Owned::Vectors(y),
        Outputs::Sets(_) => Owned::Sets,
    };
    super::fit::fit_read(f, &refit, &data, &owned, Some(&note))
}

/// Refuses a ridge of the grid before the search rather than at the refit:
/// each must be finite and > 0, and `n * lambda` (the ridge added to the
/// Gram of the `n` training samples) finite too.
fn check_lambdas(lambdas: &[f64], n: usize) -> Result<()> {
    for &l in lambdas {
        if !(l.is_finite() && l > 0.0) {
            bail!("invalid --lambdas value {l}: expected finite and > 0");
        }
        if !(l * n as f64).is_finite() {
            bail!("invalid --lambdas value {l:e}: n * lambda is not finite for the {n} training samples");
        }
    }
    Ok(())
}

/// The training outputs a search decodes and scores.
enum Outputs {
    /// Label sets (or fingerprints), scored by example-based F1.
    Sets(LabelSets),
    /// Vectors, scored by the mean squared error of the decoded vectors, and
    /// how the output kernel's width was set.
    Vectors(DenseRows, String),
}

impl Outputs {
    fn select(&self, rows: &[usize]) -> Outputs {
        match self {
            Outputs::Sets(y) => Outputs::Sets(y.select(rows)),
            Outputs::Vectors(y, note) => Outputs::Vectors(y.select(rows), note.clone()),
        }
    }
}

/// What a grid cell's score is, as printed.
struct Scoring {
    /// The criterion, for the report and the refit's note.
    criterion: String,
    /// Lower is better (printed as is) rather than an F1 (printed x100).
    error: bool,
    /// Column header of the scores.
    what: &'static str,
    /// What the JSON scores are.
    json: &'static str,
}

impl Scoring {
    fn of(cv: CvKind, outputs: &Outputs) -> Self {
        match (outputs, cv) {
            (Outputs::Vectors(..), _) => Scoring {
                criterion: format!("{}-fold cross-validated mean squared error of the decoded vectors", cv.flag()),
                error: true,
                what: "squared error",
                json: "negated mean squared error of the decoded vectors (higher is better)",
            },
            _ if cv.is_error() => Scoring {
                criterion: cv.to_string(),
                error: true,
                what: "error",
                json: "negated error (higher is better)",
            },
            _ => {
                Scoring { criterion: cv.to_string(), error: false, what: "F1 x100", json: "example-based F1, fraction" }
            }
        }
    }

    /// A score as printed: F1 x100, errors as they are.
    fn shown(&self, score: f64) -> f64 {
        if self.error { -score } else { 100.0 * score }
    }
}

/// Training rows the coarse width search runs on when there are more.
const SCREEN_ROWS: usize = 2000;

/// The widths of one search.
#[derive(Clone, Copy)]
enum Widths<'a> {
    /// These multipliers.
    Given(&'a [f64]),
    /// A line search from the median heuristic.
    LineSearch,
}

/// The scoring and the ridges of a search.
struct Search<'a> {
    /// The fit: the estimator and its flags other than the width and ridge.
    fit: &'a FitArgs,
    /// The request of the flags.
    recipe: &'a Recipe,
    cv: CvKind,
    lambdas: &'a [f64],
    seed: u64,
}

impl Search<'_> {
    fn on(
        &self,
        x: &Features,
        y: &Outputs,
        ky: &KernelSpec,
        widths: Widths<'_>,
        on_step: &mut dyn FnMut(),
    ) -> Result<GridSearchResult> {
        let y = match (y, self.cv) {
            (Outputs::Vectors(y, _), CvKind::KFold(k)) => return self.refit(k, x, y, ky, widths, neg_mse, on_step),
            (Outputs::Vectors(..), _) => bail!("vector outputs are cross-validated by refitting: give --cv K"),
            (Outputs::Sets(y), CvKind::KFold(k)) if self.fit.estimator != EstimatorKind::Iokr => {
                return self.refit(k, x, y, ky, widths, sets_f1, on_step);
            }
            (Outputs::Sets(y), _) => y,
        };
        match x {
            Features::Dense(x) => self.run(x, y, ky, widths, on_step),
            Features::Sparse(x) => self.run(x, y, ky, widths, on_step),
        }
    }

    fn run<X>(
        &self,
        x: &X,
        y: &LabelSets,
        ky: &KernelSpec,
        widths: Widths<'_>,
        on_step: &mut dyn FnMut(),
    ) -> Result<GridSearchResult>
    where
        X: Rows,
        Gaussian: Kernel<X>,
        Linear: Kernel<X>,
    {
        let median = okr_estimators::select::search_median(x, okr_kernels::MEDIAN_SAMPLE_ROWS)?;
        let n = x.n_rows();
        let folds = match self.cv {
            CvKind::KFold(k) => KFold::new(k).shuffle(self.seed).split(n)?,
            _ => Vec::new(),
        };
        let rows = loo_rows(n, self.seed)?;
        let f1 = sets_f1;
        let mut eval = |widths: &[f64]| -> Result<GridSearchResult> {
            match self.cv {
                CvKind::KFold(_) => {
                    let search = GaussianIokrSearch::new(widths.to_vec(), self.lambdas.to_vec());
                    search.run(x, &folds, &mut DecodedScorer::new(y, ky, f1), on_step)
                }
                CvKind::Loo => {
                    let kernels: Vec<(f64, Gaussian)> =
                        widths.iter().map(|&c| Ok((c, Gaussian::new(c / median)?))).collect::<Result<_>>()?;
                    loo_grid(x, y, &kernels, ky, self.lambdas, &rows, median, f1, on_step)
                }
                CvKind::LooRkhs | CvKind::GcvRkhs => {
                    let criterion = if self.cv == CvKind::LooRkhs { RkhsCriterion::Loo } else { RkhsCriterion::Gcv };
                    Ok(rkhs_grid(x, ky.gram(y).as_ref(), widths, self.lambdas, median, criterion, on_step)?)
                }
            }
        };
        match widths {
            Widths::Given(w) => eval(w),
            Widths::LineSearch => WidthLineSearch::new(START_WIDTH).run(eval),
        }
    }
}

impl Search<'_> {
    /// K-fold search by refitting (estimators other than IOKR, and any
    /// estimator on vectors): one fit per fold, width and ridge, the other
    /// flags as given, scored by `metric` (higher is better).
    #[allow(clippy::too_many_arguments)]
    fn refit<Y>(
        &self,
        k: usize,
        x: &Features,
        y: &Y,
        ky: &KernelSpec,
        widths: Widths<'_>,
        metric: fn(&Y, &Y) -> Result<f64>,
        on_step: &mut dyn FnMut(),
    ) -> Result<GridSearchResult>
    where
        Y: Rows + 'static,
        KernelSpec: Kernel<Y>,
    {
        let folds = KFold::new(k).shuffle(self.seed).split(x.n_rows())?;
        let fit = |x: &Features, y: &Y, gamma: f64, lambda: f64| -> Result<OutputModel<Y, KernelSpec>> {
            let kx = KernelSpec::from(Gaussian::new(gamma)?);
            Ok(okr::resolve::estimator_spec(self.recipe, x.n_rows(), lambda)?.0.fit(kx, ky.clone(), x, y)?)
        };
        let mut eval = |widths: &[f64]| -> Result<GridSearchResult> {
            let search = RefitSearch::new(widths.to_vec(), self.lambdas.to_vec()).error_score(f64::NAN);
            search.run(x, y, &folds, fit, metric, on_step)
        };
        match widths {
            Widths::Given(w) => eval(w),
            Widths::LineSearch => WidthLineSearch::new(START_WIDTH).run(eval),
        }
    }
}

/// Example-based F1 of decoded label sets.
fn sets_f1(truth: &LabelSets, decoded: &LabelSets) -> Result<f64> {
    Ok(f1_samples(truth, decoded)?)
}

/// The negated mean squared Euclidean error of decoded vectors (higher is better).
fn neg_mse(truth: &DenseRows, decoded: &DenseRows) -> Result<f64> {
    let n = truth.n_rows().max(1) as f64;
    Ok(-(truth.as_mat() - decoded.as_mat()).squared_norm_l2() / n)
}

fn text_report(s: &Scoring, coarse: Option<&GridSearchResult>, r: &GridSearchResult, seconds: f64) -> String {
    let mut out = format!("okr tune: {} in {seconds:.1} s\n", s.criterion);
    if let Some(c) = coarse {
        out.push_str(&format!(
            "coarse: the width on {SCREEN_ROWS} seeded training rows, {} widths x {} ridges\n",
            c.widths.len(),
            c.lambdas.len()
        ));
        out.push_str(&grid_text(s, c));
        out.push_str(&format!("fine: the ridge on all training rows at c = {}\n", c.c()));
    }
    out.push_str(&grid_text(s, r));
    out.push_str(&format!(
        "chosen: c = {} (gamma = {:.6}), lambda = {:e}, mean {} {:.4}\n",
        r.c(),
        r.gamma(),
        r.lambda(),
        s.what,
        s.shown(r.best_score())
    ));
    out
}

/// One line per grid cell: width, ridge, mean, std and the fold scores.
fn grid_text(s: &Scoring, r: &GridSearchResult) -> String {
    let mut out = format!(
        "{:>8} {:>8} {:>10} {:>8} {:>9}  fold scores ({}; median squared distance {:.6})\n",
        "c", "lambda", "mean", "std", "", s.what, r.median_sq_dist
    );
    for (wi, &c) in r.widths.iter().enumerate() {
        for (li, &l) in r.lambdas.iter().enumerate() {
            let mark = if (wi, li) == (r.best_width, r.best_lambda) { "<- best" } else { "" };
            let folds: Vec<String> = r.fold_scores[wi][li].iter().map(|v| format!("{:.4}", s.shown(*v))).collect();
            out.push_str(&format!(
                "{c:>8} {l:>8.0e} {:>10.4} {:>8.4} {mark:>9}  {}\n",
                s.shown(r.mean[wi][li]),
                if s.error { r.std[wi][li] } else { 100.0 * r.std[wi][li] },
                folds.join(" ")
            ));
        }
    }
    out
}

/// The grid as JSON cells.
fn grid_json(r: &GridSearchResult) -> serde_json::Value {
    json!({ "median_sq_dist": r.median_sq_dist, "cells": r.cells() })
}

fn json_report(s: &Scoring, coarse: Option<&GridSearchResult>, r: &GridSearchResult, seconds: f64) -> String {
    let v = json!({
        "criterion": s.criterion,
        "score": s.json,
        "coarse": coarse.map(grid_json),
        "coarse_rows": coarse.map(|_| SCREEN_ROWS),
        "grid": grid_json(r),
        "chosen": { "c": r.c(), "gamma": r.gamma(), "lambda": r.lambda(), "mean": r.best_score() },
        "search_seconds": seconds,
    });
    format!("{v}\n")
}
