//! Model selection from a [`Recipe`]: the Gaussian input width and the
//! ridge of a kernel-output estimator by cross-validation, then the recipe
//! to refit with the choice. `okr tune` and Python's cross-validated
//! estimators both run this search.
//!
//! IOKR on label sets has closed forms (leave-one-out F1 from one
//! eigendecomposition, leave-one-out or GCV error in the output RKHS) and a
//! regularization path (K-fold: one eigendecomposition per fold and width
//! scores every ridge); other estimators and vector outputs are refitted per
//! fold, width and ridge. Without given widths the width is searched coarse
//! to fine: a line search from the median heuristic on a seeded subset of
//! [`SCREEN_ROWS`] rows, then the ridges on every row at the chosen width.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use okr_decode::select::{DecodedScorer, RefitSearch, loo_grid};
use okr_estimators::persist::OutputModel;
use okr_estimators::select::{GaussianIokrSearch, GridSearchResult, RkhsCriterion, WidthLineSearch, rkhs_grid};
use okr_eval::{Features, GroupKFold, KFold, f1_samples};
use okr_kernels::{DenseRows, Gaussian, Kernel, KernelSpec, LabelSets, Linear, Rows};

use crate::catalog::{Estimator, Family};
use crate::fit::TrainOutputs;
use crate::recipe::{InputRecipe, OutputKind, Recipe};
use crate::resolve::{self, loo_rows};
use crate::{Error, Result, defaults};

/// Width multiplier of the median heuristic (`gamma = 1 / (2 median)`),
/// where the line search starts.
pub const START_WIDTH: f64 = 0.5;

/// Training rows the coarse width search runs on when there are more.
pub const SCREEN_ROWS: usize = 2000;

/// How a grid cell is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cv {
    /// K-fold cross-validation (K >= 2): example-based F1 of the decoded
    /// label sets, or minus the mean squared error of decoded vectors.
    KFold(usize),
    /// Closed-form leave-one-out example-based F1 (IOKR, label sets).
    Loo,
    /// Closed-form leave-one-out squared error in the output RKHS.
    LooRkhs,
    /// Generalized cross-validation of the squared error in the output RKHS.
    GcvRkhs,
}

impl Cv {
    /// Whether the score is an error (lower is better) rather than an F1.
    pub fn is_error(self) -> bool {
        matches!(self, Cv::LooRkhs | Cv::GcvRkhs)
    }

    /// The spelling [`from_str`](FromStr::from_str) reads.
    pub fn name(self) -> String {
        match self {
            Cv::KFold(k) => k.to_string(),
            Cv::Loo => "loo".into(),
            Cv::LooRkhs => "loo-rkhs".into(),
            Cv::GcvRkhs => "gcv-rkhs".into(),
        }
    }
}

impl fmt::Display for Cv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cv::KFold(k) => write!(f, "{k}-fold cross-validated F1"),
            Cv::Loo => write!(f, "closed-form leave-one-out F1"),
            Cv::LooRkhs => write!(f, "closed-form leave-one-out squared error in the output RKHS"),
            Cv::GcvRkhs => write!(f, "GCV squared error in the output RKHS"),
        }
    }
}

impl FromStr for Cv {
    type Err = Error;

    /// A fold count of at least 2, `loo`, `loo-rkhs` or `gcv-rkhs`.
    fn from_str(text: &str) -> Result<Self> {
        match text {
            "loo" => Ok(Cv::Loo),
            "loo-rkhs" => Ok(Cv::LooRkhs),
            "gcv-rkhs" => Ok(Cv::GcvRkhs),
            _ => match text.parse::<usize>() {
                Ok(k) if k >= 2 => Ok(Cv::KFold(k)),
                _ => Err(Error::invalid("cv", text, "a fold count of at least 2, loo, loo-rkhs or gcv-rkhs")),
            },
        }
    }
}

/// A search: the recipe (its ridge and input width are what is chosen),
/// the scoring, the grids and optional groups.
#[derive(Debug, Clone)]
pub struct TuneRequest<'a> {
    /// The estimator, kernels and outputs; `lambda` and the input width
    /// must be unset (they are searched).
    pub recipe: &'a Recipe,
    /// How a cell is scored.
    pub cv: Cv,
    /// Ridges (default [`defaults::LOO_LAMBDAS`]).
    pub lambdas: Option<Vec<f64>>,
    /// Width multipliers `c` (`gamma = c / median`); default: coarse to fine.
    pub widths: Option<Vec<f64>>,
    /// A group per training row: K-fold keeps each group in one fold
    /// ([`GroupKFold`]), as every spectrum of one molecule.
    pub groups: Option<&'a [u64]>,
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct Tuned {
    /// The width search on [`SCREEN_ROWS`] rows, when it ran.
    pub coarse: Option<GridSearchResult>,
    /// The final grid (every row).
    pub result: GridSearchResult,
    /// The criterion, in words.
    pub criterion: String,
    /// Whether the scores are negated errors (vectors, RKHS criteria)
    /// rather than F1 fractions.
    pub error: bool,
    /// What a score is: `example-based F1, fraction` or the negated error.
    pub score: &'static str,
    /// The score's name in a table: `F1 x100`, `error`, `squared error`.
    pub what: &'static str,
    /// Cells whose fit failed (scored NaN, never chosen).
    pub failed: usize,
    /// The recipe with the chosen ridge and width, to refit on every row.
    pub refit: Recipe,
}

/// The training outputs a search decodes and scores: the caller's, or the
/// screen's subset of them.
enum Scored<'a> {
    Sets(Cow<'a, LabelSets>),
    Vectors(Cow<'a, DenseRows>),
}

impl Scored<'_> {
    fn select(&self, rows: &[usize]) -> Scored<'static> {
        match self {
            Scored::Sets(y) => Scored::Sets(Cow::Owned(y.select(rows))),
            Scored::Vectors(y) => Scored::Vectors(Cow::Owned(y.select(rows))),
        }
    }
}

/// Checks a request before any data are read.
///
/// # Errors
/// [`Error::Refused`] naming what the search cannot do; [`Error::Invalid`]
/// for a grid value.
pub fn check(req: &TuneRequest<'_>) -> Result<()> {
    let r = req.recipe;
    // What the search chooses first: a clearer message than any other check.
    for (what, given) in [
        ("lambda", r.estimator.lambda.is_some()),
        ("lambda1", r.estimator.lambda1.is_some()),
        ("lambda2", r.estimator.lambda2.is_some()),
        ("the input gamma", matches!(&r.input, InputRecipe::Features { kernel, .. } if kernel.gamma.is_some())),
        ("the input sigma2", matches!(&r.input, InputRecipe::Features { kernel, .. } if kernel.sigma2.is_some())),
    ] {
        if given {
            return Err(Error::Refused(format!(
                "{what} is what okr tune chooses: give the grid (lambdas / widths) instead"
            )));
        }
    }
    r.check()?;
    let e = r.estimator.name;
    if e.family() != Family::KernelOutput {
        return Err(Error::Refused(format!(
            "okr tune searches the kernel-output estimators (iokr, reduced-rank, kde, trace-norm, siokr, isokr, \
             sisokr, nystroem, nystroem-reduced-rank), not estimator {e}"
        )));
    }
    if e != Estimator::Iokr && !matches!(req.cv, Cv::KFold(_)) {
        return Err(Error::Refused(format!(
            "cv {} is a closed form of IOKR: {e} is cross-validated by refitting, give a fold count (for example 3)",
            req.cv.name()
        )));
    }
    let InputRecipe::Features { kernel, .. } = &r.input else {
        return Err(Error::Refused("okr tune searches one Gaussian input kernel on features".into()));
    };
    if kernel.canonical_name() != "gaussian" {
        return Err(Error::Refused(format!(
            "okr tune searches Gaussian widths: input kernel gaussian only, not {}",
            kernel.canonical_name()
        )));
    }
    match r.output.kind {
        OutputKind::Graph | OutputKind::Ranking => {
            return Err(Error::Refused(format!(
                "okr tune searches label-set, fingerprint and vector outputs, not {}",
                r.output.kind.name()
            )));
        }
        OutputKind::Vector if !matches!(req.cv, Cv::KFold(_)) => {
            return Err(Error::Refused(format!(
                "cv {} is a closed form for label sets: vector outputs take a fold count",
                req.cv.name()
            )));
        }
        _ => {}
    }
    if req.groups.is_some() && !matches!(req.cv, Cv::KFold(_)) {
        return Err(Error::Refused(format!(
            "groups need K-fold cross-validation (a fold count), not cv {}",
            req.cv.name()
        )));
    }
    for &l in req.lambdas.iter().flatten() {
        if !(l.is_finite() && l > 0.0) {
            return Err(Error::invalid("lambdas value", l, "finite and > 0"));
        }
    }
    for &c in req.widths.iter().flatten() {
        if !(c.is_finite() && c > 0.0) {
            return Err(Error::invalid("widths value", c, "finite and > 0"));
        }
    }
    if req.lambdas.as_ref().is_some_and(|l| l.is_empty()) || req.widths.as_ref().is_some_and(|w| w.is_empty()) {
        return Err(Error::Refused("an empty grid: give at least one ridge and one width".into()));
    }
    Ok(())
}

/// Runs the search of `req` on features `x` and outputs `y` (label sets,
/// fingerprints or vectors); `on_step` is called after each fit, which is
/// also reported to the progress observer ([`crate::surrogate::progress`]).
///
/// # Errors
/// As [`check`]; [`Error::Invalid`] for more folds than samples (or
/// groups), a ridge whose `n * lambda` overflows, groups of the wrong
/// length; errors of the fits that are not scored NaN.
pub fn tune(req: &TuneRequest<'_>, x: &Features, y: &TrainOutputs<'_>, on_step: &mut dyn FnMut()) -> Result<Tuned> {
    check(req)?;
    // Each fit is also a progress report (total unknown: the width line search decides it).
    let mut fits = 0;
    let on_step: &mut dyn FnMut() = &mut || {
        fits += 1;
        on_step();
        okr_surrogate::progress::report(fits, 0, "tune: fits");
    };
    let r = req.recipe;
    let n = x.n_rows();
    if y.kind() != r.output.kind || y.n_rows() != n {
        return Err(Error::Refused(format!(
            "the recipe asks for {} outputs of the {n} training rows, the outputs are {} {}",
            r.output.kind.name(),
            y.n_rows(),
            y.kind().name()
        )));
    }
    if let Some(g) = req.groups
        && g.len() != n
    {
        return Err(Error::invalid("groups", format!("{} values", g.len()), format!("one per training row ({n})")));
    }
    if let Cv::KFold(k) = req.cv
        && k > n
    {
        return Err(Error::invalid("cv", k, format!("no more folds than the {n} training samples")));
    }
    let lambdas = req.lambdas.clone().unwrap_or_else(|| defaults::LOO_LAMBDAS.to_vec());
    for &l in &lambdas {
        if !(l * n as f64).is_finite() {
            return Err(Error::invalid(
                "lambdas value",
                format!("{l:e}"),
                format!("n * lambda finite for the {n} training samples"),
            ));
        }
    }
    let (outputs, ky) = match y {
        TrainOutputs::Vectors(v) => {
            let (ky, _, _) = resolve::vector_output_kernel(&r.output.kernel_or_default(), v)?;
            (Scored::Vectors(Cow::Borrowed(*v)), ky)
        }
        TrainOutputs::Labels(s) | TrainOutputs::Fingerprints(s) => {
            if s.n_labels() == 0 {
                return Err(Error::Refused("the training outputs have no labels".into()));
            }
            let (ky, _, _) = resolve::label_output_kernel(&r.output.kernel_or_default(), s)?;
            (Scored::Sets(Cow::Borrowed(*s)), ky)
        }
        TrainOutputs::Graphs(_) | TrainOutputs::Rankings(_) => unreachable!("refused by check"),
    };
    let InputRecipe::Features { standardize, .. } = &r.input else { unreachable!("refused by check") };
    let inputs = resolve::prepare_inputs(*standardize, true, x)?;
    let search = Search { recipe: r, cv: req.cv, lambdas: &lambdas, seed: r.seed };
    let screen = (req.widths.is_none() && n > SCREEN_ROWS)
        .then(|| okr_eval::train_test_split(n, SCREEN_ROWS as f64 / n as f64, r.seed))
        .transpose()?
        .map(|(_, rows)| rows);
    let (coarse, result) = match &screen {
        None => {
            let widths = req.widths.as_deref().map(Widths::Given).unwrap_or(Widths::LineSearch);
            (None, search.on(inputs.rows(), &outputs, req.groups, &ky, widths, on_step)?)
        }
        Some(rows) => {
            let groups: Option<Vec<u64>> = req.groups.map(|g| rows.iter().map(|&i| g[i]).collect());
            let coarse = search.on(
                &inputs.rows().select(rows),
                &outputs.select(rows),
                groups.as_deref(),
                &ky,
                Widths::LineSearch,
                on_step,
            )?;
            let fine = search.on(inputs.rows(), &outputs, req.groups, &ky, Widths::Given(&[coarse.c()]), on_step)?;
            (Some(coarse), fine)
        }
    };
    let failed = [coarse.as_ref(), Some(&result)]
        .into_iter()
        .flatten()
        .flat_map(|g| g.fold_scores.iter().flatten().flatten())
        .filter(|s| s.is_nan())
        .count();
    let mut refit = r.clone();
    refit.estimator.lambda = Some(result.lambda());
    if let InputRecipe::Features { kernel, .. } = &mut refit.input {
        (kernel.gamma, kernel.sigma2) = (Some(result.gamma()), None);
    }
    let (criterion, error, score, what) = match (&outputs, req.cv) {
        (Scored::Vectors(_), cv) => (
            format!("{}-fold cross-validated mean squared error of the decoded vectors", cv.name()),
            true,
            "negated mean squared error of the decoded vectors (higher is better)",
            "squared error",
        ),
        (_, cv) if cv.is_error() => (cv.to_string(), true, "negated error (higher is better)", "error"),
        (_, cv) => (cv.to_string(), false, "example-based F1, fraction", "F1 x100"),
    };
    let criterion = match req.groups {
        Some(_) => format!("{criterion}, folds grouped"),
        None => criterion,
    };
    Ok(Tuned { coarse, result, criterion, error, score, what, failed, refit })
}

/// The widths of one search.
#[derive(Clone, Copy)]
enum Widths<'a> {
    Given(&'a [f64]),
    LineSearch,
}

struct Search<'a> {
    recipe: &'a Recipe,
    cv: Cv,
    lambdas: &'a [f64],
    seed: u64,
}

impl Search<'_> {
    fn folds(&self, k: usize, n: usize, groups: Option<&[u64]>) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
        Ok(match groups {
            Some(g) => GroupKFold::new(k).seed(self.seed).split(g)?,
            None => KFold::new(k).shuffle(self.seed).split(n)?,
        })
    }

    fn on(
        &self,
        x: &Features,
        y: &Scored<'_>,
        groups: Option<&[u64]>,
        ky: &KernelSpec,
        widths: Widths<'_>,
        on_step: &mut dyn FnMut(),
    ) -> Result<GridSearchResult> {
        let y = match (y, self.cv) {
            (Scored::Vectors(y), Cv::KFold(k)) => {
                return self.refit(k, x, y.as_ref(), groups, ky, widths, neg_mse, on_step);
            }
            (Scored::Vectors(_), _) => unreachable!("refused by check"),
            (Scored::Sets(y), Cv::KFold(k)) if self.recipe.estimator.name != Estimator::Iokr => {
                return self.refit(k, x, y.as_ref(), groups, ky, widths, sets_f1, on_step);
            }
            (Scored::Sets(y), _) => y.as_ref(),
        };
        match x {
            Features::Dense(x) => self.iokr(x, y, groups, ky, widths, on_step),
            Features::Sparse(x) => self.iokr(x, y, groups, ky, widths, on_step),
        }
    }

    /// IOKR on label sets: the regularization path per fold, or the closed forms.
    fn iokr<X>(
        &self,
        x: &X,
        y: &LabelSets,
        groups: Option<&[u64]>,
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
            Cv::KFold(k) => self.folds(k, n, groups)?,
            _ => Vec::new(),
        };
        let rows = loo_rows(n, self.seed)?;
        let mut eval = |widths: &[f64]| -> Result<GridSearchResult> {
            match self.cv {
                Cv::KFold(_) => {
                    let search = GaussianIokrSearch::new(widths.to_vec(), self.lambdas.to_vec());
                    search.run(x, &folds, &mut DecodedScorer::new(y, ky, sets_f1), on_step)
                }
                Cv::Loo => {
                    let kernels: Vec<(f64, Gaussian)> =
                        widths.iter().map(|&c| Ok((c, Gaussian::new(c / median)?))).collect::<Result<_>>()?;
                    loo_grid(x, y, &kernels, ky, self.lambdas, &rows, median, sets_f1, on_step)
                }
                Cv::LooRkhs | Cv::GcvRkhs => {
                    let criterion = if self.cv == Cv::LooRkhs { RkhsCriterion::Loo } else { RkhsCriterion::Gcv };
                    Ok(rkhs_grid(x, ky.gram(y).as_ref(), widths, self.lambdas, median, criterion, on_step)?)
                }
            }
        };
        match widths {
            Widths::Given(w) => eval(w),
            Widths::LineSearch => WidthLineSearch::new(START_WIDTH).run(eval),
        }
    }

    /// K-fold by refitting: one fit per fold, width and ridge, scored by
    /// `metric` (higher is better); a failed fit scores NaN.
    #[allow(clippy::too_many_arguments)]
    fn refit<Y>(
        &self,
        k: usize,
        x: &Features,
        y: &Y,
        groups: Option<&[u64]>,
        ky: &KernelSpec,
        widths: Widths<'_>,
        metric: fn(&Y, &Y) -> Result<f64>,
        on_step: &mut dyn FnMut(),
    ) -> Result<GridSearchResult>
    where
        Y: Rows + 'static,
        KernelSpec: Kernel<Y>,
    {
        let folds = self.folds(k, x.n_rows(), groups)?;
        let fit = |x: &Features, y: &Y, gamma: f64, lambda: f64| -> Result<OutputModel<Y, KernelSpec>> {
            let kx = KernelSpec::from(Gaussian::new(gamma)?);
            let (spec, _) = resolve::estimator_spec(self.recipe, x.n_rows(), lambda)?;
            Ok(spec.fit(kx, ky.clone(), x, y)?)
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

/// Minus the mean squared Euclidean error of decoded vectors.
fn neg_mse(truth: &DenseRows, decoded: &DenseRows) -> Result<f64> {
    let n = truth.n_rows().max(1) as f64;
    Ok(-(truth.as_mat() - decoded.as_mat()).squared_norm_l2() / n)
}
