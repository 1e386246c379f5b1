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
//!
//! On a precomputed input Gram ([`tune_gram`]) the input kernel is fixed:
//! the ridge and, when [`TuneRequest::output_gammas`] are given, the width
//! of a Gaussian-type output kernel are searched; the folds are cut as Gram
//! blocks (`K[train, train]` to fit, `K[validation, train]` to predict).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use okr_decode::CandidateDecoder;
use okr_decode::per_query::{PerQueryDecoder, Query};
use okr_decode::select::{DecodedScorer, RefitSearch, loo_grid};
use okr_estimators::iokr::IokrPath;
use okr_estimators::persist::OutputModel;
use okr_estimators::select::FoldScorer;
use okr_estimators::select::{GaussianIokrSearch, GridSearchResult, RkhsCriterion, WidthLineSearch, rkhs_grid};
use okr_eval::{Features, GroupKFold, KFold, f1_samples};
use okr_kernels::{DenseRows, Gaussian, GramRows, Kernel, KernelSpec, LabelSets, Linear, Precomputed, Rows};

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

/// What a grid cell's validation rows are scored by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scoring {
    /// The decoded outputs: example-based F1 of label sets, minus the mean
    /// squared error of vectors (or the RKHS criteria of [`Cv`]).
    #[default]
    Decoded,
    /// Retrieval: the fraction of validation queries whose true candidate
    /// ranks in the top `k` of its candidate set (`top1`, `top5`, `top10`,
    /// any `topK`). Ties are counted against the true candidate: its rank is
    /// the pessimistic rank `#{c : s_c <= s_true}` of `okr rank`.
    Top(usize),
    /// Retrieval: minus the mean pessimistic rank of the true candidate
    /// (`mean-rank`; higher is better, as every score).
    MeanRank,
}

impl Scoring {
    /// Whether validation queries are ranked (a retrieval scoring).
    pub fn is_retrieval(self) -> bool {
        self != Scoring::Decoded
    }

    /// The spelling [`from_str`](FromStr::from_str) reads.
    pub fn name(self) -> String {
        match self {
            Scoring::Decoded => "decoded".into(),
            Scoring::Top(k) => format!("top{k}"),
            Scoring::MeanRank => "mean-rank".into(),
        }
    }

    /// The score of the pessimistic true ranks of a fold's queries.
    fn score(self, ranks: &[usize]) -> f64 {
        let n = ranks.len() as f64;
        match self {
            Scoring::Top(k) => ranks.iter().filter(|&&r| r <= k).count() as f64 / n,
            Scoring::MeanRank => -(ranks.iter().map(|&r| r as f64).sum::<f64>() / n),
            Scoring::Decoded => unreachable!("not a retrieval scoring"),
        }
    }
}

impl FromStr for Scoring {
    type Err = Error;

    /// `decoded`, `top1`, `top5`, `top10` (any `topK`, K >= 1) or `mean-rank`.
    fn from_str(text: &str) -> Result<Self> {
        let bad = || Error::invalid("scoring", text, "decoded, top1, top5, top10 (topK, K >= 1) or mean-rank");
        match text {
            "decoded" => Ok(Scoring::Decoded),
            "mean-rank" => Ok(Scoring::MeanRank),
            _ => match text.strip_prefix("top").map(str::parse::<usize>) {
                Some(Ok(k)) if k >= 1 => Ok(Scoring::Top(k)),
                _ => Err(bad()),
            },
        }
    }
}

/// Candidate sets of training rows for retrieval scoring: a query's
/// `test_row` is a training row (its validation fold ranks it), candidates
/// inline or indices into `pool`, the true candidate marked (queries
/// without one are not scored). The queries of `okr rank`'s candidate
/// files ([`okr_decode::per_query::CandidateFileReader`]).
#[derive(Debug, Clone, Copy)]
pub struct TuneQueries<'a> {
    /// The queries, any order; a training row may have several.
    pub queries: &'a [Query<LabelSets>],
    /// The pool of pooled queries.
    pub pool: Option<&'a LabelSets>,
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
    /// On a precomputed Gram: widths `gamma` of the (Gaussian-type) output
    /// kernel to search beside the ridge; `None`: the output kernel of the
    /// recipe, resolved as a fit resolves it.
    pub output_gammas: Option<Vec<f64>>,
    /// What a cell is scored by (default: the decoded outputs).
    pub scoring: Scoring,
    /// The candidate sets of a retrieval [`scoring`](Self::scoring).
    pub queries: Option<TuneQueries<'a>>,
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
    match &r.input {
        InputRecipe::Features { kernel, .. } => {
            if kernel.canonical_name() != "gaussian" {
                return Err(Error::Refused(format!(
                    "okr tune searches Gaussian widths: input kernel gaussian only, not {}",
                    kernel.canonical_name()
                )));
            }
            if req.output_gammas.is_some() {
                return Err(Error::Refused(
                    "output_gammas are searched on a precomputed Gram; on features okr tune searches the input \
                     width (widths)"
                        .into(),
                ));
            }
        }
        InputRecipe::Gram => {
            if req.widths.is_some() {
                return Err(Error::Refused(
                    "widths do not apply to a precomputed Gram (its input kernel is fixed): search the output \
                     width with output_gammas"
                        .into(),
                ));
            }
            if matches!(req.cv, Cv::LooRkhs | Cv::GcvRkhs) {
                return Err(Error::Refused(format!(
                    "cv {} is a closed form of the Gaussian width path on features: on a precomputed Gram give a \
                     fold count or loo",
                    req.cv.name()
                )));
            }
            if let Some(g) = &req.output_gammas {
                let ky = r.output.kernel_or_default();
                if !ky.has_gaussian_width() {
                    return Err(Error::Refused(format!(
                        "output_gammas need an output kernel with a Gaussian width (gaussian, laplacian, \
                         gaussian-tanimoto), not {}",
                        ky.canonical_name()
                    )));
                }
                if ky.gamma.is_some() || ky.sigma2.is_some() {
                    return Err(Error::Refused(
                        "the output gamma is what okr tune chooses with output_gammas: leave it unset".into(),
                    ));
                }
                if g.is_empty() {
                    return Err(Error::Refused("an empty grid: give at least one output gamma".into()));
                }
                for &v in g {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(Error::invalid("output_gammas value", v, "finite and > 0"));
                    }
                }
            }
        }
        InputRecipe::Spectra { .. } => {
            return Err(Error::Refused(
                "okr tune does not search on spectra yet: write their Gram with okr gram and tune on it as a \
                 precomputed Gram"
                    .into(),
            ));
        }
        InputRecipe::Combined { .. } => {
            return Err(Error::Refused(
                "okr tune searches one Gaussian input kernel on features or a precomputed Gram, not combined \
                 kernels"
                    .into(),
            ));
        }
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
    match (req.scoring.is_retrieval(), req.queries.is_some()) {
        (true, false) => {
            return Err(Error::Refused(format!(
                "scoring {} ranks per-query candidate sets: give the queries (a candidate file)",
                req.scoring.name()
            )));
        }
        (false, true) => {
            return Err(Error::Refused("queries apply to a retrieval scoring (top1, top5, top10, mean-rank)".into()));
        }
        (true, true) => {
            if !matches!(req.cv, Cv::KFold(_)) {
                return Err(Error::Refused(format!(
                    "scoring {} ranks the queries of validation folds: give a fold count, not cv {}",
                    req.scoring.name(),
                    req.cv.name()
                )));
            }
            if !matches!(r.output.kind, OutputKind::Labels | OutputKind::Fingerprint) {
                return Err(Error::Refused(format!(
                    "scoring {} ranks candidate label sets or fingerprints, not {} outputs",
                    req.scoring.name(),
                    r.output.kind.name()
                )));
            }
        }
        (false, false) => {}
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
    if matches!(r.input, InputRecipe::Gram) {
        return Err(Error::Refused("the recipe's input is a precomputed Gram: tune it with tune_gram".into()));
    }
    let n = x.n_rows();
    let lambdas = check_data(req, n, y)?;
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
    if let (Some(q), Cv::KFold(k), Scored::Sets(y)) = (req.queries, req.cv, &outputs) {
        let x = inputs.rows();
        let folds = folds(k, n, req.groups, r.seed)?;
        let fq = fold_queries(&folds, &q, n)?;
        let median = okr_estimators::select::search_median(x, okr_kernels::MEDIAN_SAMPLE_ROWS)?;
        let cut = |tr: &[usize], va: &[usize]| -> Result<(Features, Features)> { Ok((x.select(tr), x.select(va))) };
        let kernel = |c: f64| -> Result<KernelSpec> { Ok(Gaussian::new(c / median)?.into()) };
        let mut eval = |widths: &[f64]| -> Result<GridSearchResult> {
            let fs = retrieval_refit(
                r,
                &folds,
                &fq,
                q.pool,
                &cut,
                &kernel,
                widths,
                y.as_ref(),
                &ky,
                &lambdas,
                req.scoring,
                on_step,
            )?;
            Ok(GridSearchResult::from_fold_scores(median, widths.to_vec(), lambdas.clone(), fs))
        };
        let result = match req.widths.as_deref() {
            Some(w) => eval(w)?,
            None => WidthLineSearch::new(START_WIDTH).run(eval)?,
        };
        let failed = result.fold_scores.iter().flatten().flatten().filter(|v| v.is_nan()).count();
        let mut refit = r.clone();
        refit.estimator.lambda = Some(result.lambda());
        if let InputRecipe::Features { kernel, .. } = &mut refit.input {
            (kernel.gamma, kernel.sigma2) = (Some(result.gamma()), None);
        }
        let (mut criterion, error, score, what) = describe_retrieval(req.scoring, req.cv);
        if req.groups.is_some() {
            criterion.push_str(", folds grouped");
        }
        return Ok(Tuned { coarse: None, result, criterion, error, score, what, failed, refit });
    }
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
    let (criterion, error, score, what) = describe_scores(matches!(outputs, Scored::Vectors(_)), req.cv);
    let criterion = match req.groups {
        Some(_) => format!("{criterion}, folds grouped"),
        None => criterion,
    };
    Ok(Tuned { coarse, result, criterion, error, score, what, failed, refit })
}

/// Runs the search of `req` (input side [`InputRecipe::Gram`]) on the
/// precomputed training Gram `gram` and outputs `y` (label sets,
/// fingerprints or vectors): the ridges times the output widths
/// ([`TuneRequest::output_gammas`], or the recipe's output kernel alone).
/// Every fold is cut as Gram blocks: `K[train, train]` fits, `K[validation,
/// train]` predicts. IOKR on label sets uses its regularization path (one
/// eigendecomposition per fold and output width) or the closed-form
/// leave-one-out F1, as on features; the other estimators and vectors are
/// refitted per fold and cell. The result's widths are the output gammas
/// (its median is 1, so `c = gamma`); `on_step` is called after each fold
/// and output width.
///
/// The same grid scores as [`tune`] on the features the Gram came from with
/// the Gaussian input width fixed (`widths = [c]`, `gamma = c / median`).
///
/// # Errors
/// As [`tune`]; [`Error::Refused`] for a recipe whose input is not a Gram.
pub fn tune_gram(
    req: &TuneRequest<'_>,
    gram: &GramRows,
    y: &TrainOutputs<'_>,
    on_step: &mut dyn FnMut(),
) -> Result<Tuned> {
    check(req)?;
    // Each fit is also a progress report, as in `tune`.
    let mut fits = 0;
    let on_step: &mut dyn FnMut() = &mut || {
        fits += 1;
        on_step();
        okr_surrogate::progress::report(fits, 0, "tune: fits");
    };
    let r = req.recipe;
    if !matches!(r.input, InputRecipe::Gram) {
        return Err(Error::Refused("the recipe's input is not a precomputed Gram: tune it with tune".into()));
    }
    let n = gram.n_train();
    let lambdas = check_data(req, n, y)?;
    // The output kernel of each grid row: the recipe's resolved, or each output gamma.
    let base = r.output.kernel_or_default();
    let kernel_at = |gamma: Option<f64>| -> Result<(KernelSpec, f64)> {
        let mut k = base.clone();
        if gamma.is_some() {
            (k.gamma, k.sigma2) = (gamma, None);
        }
        let (ky, resolved, _) = match y {
            TrainOutputs::Vectors(v) => resolve::vector_output_kernel(&k, v)?,
            TrainOutputs::Labels(s) | TrainOutputs::Fingerprints(s) => {
                if s.n_labels() == 0 {
                    return Err(Error::Refused("the training outputs have no labels".into()));
                }
                resolve::label_output_kernel(&k, s)?
            }
            TrainOutputs::Graphs(_) | TrainOutputs::Rankings(_) => unreachable!("refused by check"),
        };
        Ok((ky, resolved.gamma.unwrap_or(f64::NAN)))
    };
    let rows: Vec<(KernelSpec, f64)> = match &req.output_gammas {
        Some(g) => g.iter().map(|&v| kernel_at(Some(v))).collect::<Result<_>>()?,
        None => vec![kernel_at(None)?],
    };
    let folds = match req.cv {
        Cv::KFold(k) => folds(k, n, req.groups, r.seed)?,
        _ => Vec::new(),
    };
    let k_all = gram.values();
    let block = |a: &[usize], b: &[usize]| faer::Mat::from_fn(a.len(), b.len(), |i, j| k_all[(a[i], b[j])]);
    let mut fold_scores = Vec::with_capacity(rows.len());
    for (ky, _) in &rows {
        let scores = match (y, req.cv) {
            (TrainOutputs::Labels(s) | TrainOutputs::Fingerprints(s), Cv::KFold(_)) if req.queries.is_some() => {
                let q = req.queries.expect("matched");
                let fq = fold_queries(&folds, &q, n)?;
                let cut = |tr: &[usize], va: &[usize]| -> Result<(GramRows, GramRows)> {
                    Ok((GramRows::train(block(tr, tr))?, GramRows::test(block(va, tr), None)?))
                };
                let kernel = |_: f64| -> Result<Precomputed> { Ok(Precomputed) };
                let scoring = req.scoring;
                let fs =
                    retrieval_refit(r, &folds, &fq, q.pool, &cut, &kernel, &[1.0], s, ky, &lambdas, scoring, on_step)?;
                fs.into_iter().next().expect("one width")
            }
            (TrainOutputs::Labels(s) | TrainOutputs::Fingerprints(s), Cv::Loo) => {
                let loo = loo_rows(n, r.seed)?;
                let grid = loo_grid(gram, s, &[(1.0, Precomputed)], ky, &lambdas, &loo, 1.0, sets_f1, on_step)?;
                grid.fold_scores.into_iter().next().expect("one kernel")
            }
            (TrainOutputs::Labels(s) | TrainOutputs::Fingerprints(s), Cv::KFold(_))
                if r.estimator.name == Estimator::Iokr =>
            {
                let mut scorer = DecodedScorer::new(s, ky, sets_f1);
                let mut scores = vec![Vec::with_capacity(folds.len()); lambdas.len()];
                for (tr, va) in &folds {
                    let fold = scorer.prepare(tr, va)?;
                    let path = IokrPath::new(block(tr, tr).as_ref())?;
                    let a = path.project_inputs(block(va, tr).as_ref());
                    let b = path.project_atoms(scorer.atom_products(&fold));
                    for (li, &lambda) in lambdas.iter().enumerate() {
                        let coef = path.scaled_coefficients(a.as_ref(), lambda);
                        scores[li].push(scorer.score(&fold, coef.as_ref(), b.as_ref())?);
                    }
                }
                on_step();
                scores
            }
            (TrainOutputs::Labels(s) | TrainOutputs::Fingerprints(s), Cv::KFold(_)) => {
                gram_refit(r, &folds, &block, *s, ky, &lambdas, sets_f1, on_step)?
            }
            (TrainOutputs::Vectors(v), Cv::KFold(_)) => {
                gram_refit(r, &folds, &block, *v, ky, &lambdas, neg_mse, on_step)?
            }
            _ => unreachable!("refused by check"),
        };
        fold_scores.push(scores);
    }
    let gammas: Vec<f64> = rows.iter().map(|(_, g)| *g).collect();
    let result = GridSearchResult::from_fold_scores(1.0, gammas, lambdas, fold_scores);
    let failed = result.fold_scores.iter().flatten().flatten().filter(|v| v.is_nan()).count();
    let mut refit = r.clone();
    refit.estimator.lambda = Some(result.lambda());
    if req.output_gammas.is_some() {
        let mut k = base;
        (k.gamma, k.sigma2) = (Some(result.c()), None);
        refit.output.kernel = Some(k);
    }
    let vectors = matches!(y, TrainOutputs::Vectors(_));
    let (criterion, error, score, what) = match req.scoring.is_retrieval() {
        true => describe_retrieval(req.scoring, req.cv),
        false => describe_scores(vectors, req.cv),
    };
    let widths = if req.output_gammas.is_some() { "ridge and output gamma" } else { "ridge" };
    let mut criterion = format!("{criterion} on a precomputed Gram ({widths} searched)");
    if req.groups.is_some() {
        criterion.push_str(", folds grouped");
    }
    Ok(Tuned { coarse: None, result, criterion, error, score, what, failed, refit })
}

/// The criterion in words, whether scores are negated errors, what a score
/// is and its name in a table.
fn describe_scores(vectors: bool, cv: Cv) -> (String, bool, &'static str, &'static str) {
    match (vectors, cv) {
        (true, cv) => (
            format!("{}-fold cross-validated mean squared error of the decoded vectors", cv.name()),
            true,
            "negated mean squared error of the decoded vectors (higher is better)",
            "squared error",
        ),
        (_, cv) if cv.is_error() => (cv.to_string(), true, "negated error (higher is better)", "error"),
        (_, cv) => (cv.to_string(), false, "example-based F1, fraction", "F1 x100"),
    }
}

/// The `k` folds of `n` training rows that [`tune`] and [`tune_gram`] cut
/// with K-fold cross-validation (`seed`: the recipe's): [`GroupKFold`] when
/// `groups` are given (each group in one fold), else a shuffled [`KFold`].
/// Returns `(training rows, validation rows)` per fold, so that a caller can
/// recompute a fold's score.
///
/// # Errors
/// [`Error::Invalid`] (from the splitters) for fewer rows or groups than folds.
pub fn folds(k: usize, n: usize, groups: Option<&[u64]>, seed: u64) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    Ok(match groups {
        Some(g) => GroupKFold::new(k).seed(seed).split(g)?,
        None => KFold::new(k).shuffle(seed).split(n)?,
    })
}

/// `K[rows, columns]` of a training Gram.
type GramBlock<'a> = dyn Fn(&[usize], &[usize]) -> faer::Mat<f64> + 'a;

/// The training and validation inputs of a fold's training and validation rows.
type FoldCut<'a, X> = dyn Fn(&[usize], &[usize]) -> Result<(X, X)> + 'a;

/// K-fold on Gram blocks by refitting: one fit per fold and ridge (its
/// validation rows decoded among the fold's distinct training outputs and
/// scored by `metric`); a failed cell scores NaN. Returns the scores per
/// ridge and fold.
#[allow(clippy::too_many_arguments)]
fn gram_refit<Y>(
    r: &Recipe,
    folds: &[(Vec<usize>, Vec<usize>)],
    block: &GramBlock<'_>,
    y: &Y,
    ky: &KernelSpec,
    lambdas: &[f64],
    metric: fn(&Y, &Y) -> Result<f64>,
    on_step: &mut dyn FnMut(),
) -> Result<Vec<Vec<f64>>>
where
    Y: Rows + 'static,
    KernelSpec: Kernel<Y>,
{
    let mut scores = vec![Vec::with_capacity(folds.len()); lambdas.len()];
    let (mut first_error, mut fitted) = (None, 0usize);
    for (tr, va) in folds {
        let x_tr = GramRows::train(block(tr, tr))?;
        let x_va = GramRows::test(block(va, tr), None)?;
        let (y_tr, truth) = (y.select(tr), y.select(va));
        for (li, &lambda) in lambdas.iter().enumerate() {
            let cell = || -> Result<f64> {
                let (spec, _) = resolve::estimator_spec(r, tr.len(), lambda)?;
                let model = spec.fit(Precomputed, ky.clone(), &x_tr, &y_tr)?;
                let surrogate = model.surrogate();
                let candidates = surrogate.training_outputs();
                let best = CandidateDecoder::new().decode(surrogate, &x_va, candidates)?.best();
                metric(&truth, &candidates.select(&best))
            };
            match cell() {
                Ok(v) => {
                    fitted += 1;
                    scores[li].push(v);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                    scores[li].push(f64::NAN);
                }
            }
        }
        on_step();
    }
    match first_error {
        Some(e) if fitted == 0 => Err(e),
        _ => Ok(scores),
    }
}

/// The queries of each validation fold, their `test_row` the position in
/// the fold's validation rows.
///
/// # Errors
/// [`Error::Invalid`] for a query row beyond the training rows;
/// [`Error::Refused`] for a fold without a query that marks its true candidate.
fn fold_queries(
    folds: &[(Vec<usize>, Vec<usize>)],
    q: &TuneQueries<'_>,
    n: usize,
) -> Result<Vec<Vec<Query<LabelSets>>>> {
    let mut by_row = vec![Vec::new(); n];
    for (i, query) in q.queries.iter().enumerate() {
        if query.test_row >= n {
            return Err(Error::invalid(
                format!("query {}", query.id),
                format!("row {}", query.test_row),
                format!("a training row (< {n})"),
            ));
        }
        by_row[query.test_row].push(i);
    }
    folds
        .iter()
        .enumerate()
        .map(|(f, (_, va))| {
            let mut out = Vec::new();
            for (p, &row) in va.iter().enumerate() {
                for &i in &by_row[row] {
                    let mut query = q.queries[i].clone();
                    query.test_row = p;
                    out.push(query);
                }
            }
            if !out.iter().any(|q| q.truth.is_some()) {
                return Err(Error::Refused(format!(
                    "validation fold {} has no query that marks its true candidate: retrieval scoring needs one in \
                     every fold (more queries or fewer folds)",
                    f + 1
                )));
            }
            Ok(out)
        })
        .collect()
}

/// Retrieval scoring by refitting: one fit per fold, width and ridge on the
/// fold's training rows (`cut` gives the training and validation inputs,
/// `kernel` the input kernel of a width), then the fold's queries ranked
/// ([`PerQueryDecoder`], the ranking of `okr rank`) and scored from the
/// pessimistic ranks of their true candidates. A failed cell scores NaN.
/// Returns `scores[width][ridge][fold]`.
#[allow(clippy::too_many_arguments)]
fn retrieval_refit<X, KX>(
    r: &Recipe,
    folds: &[(Vec<usize>, Vec<usize>)],
    fold_queries: &[Vec<Query<LabelSets>>],
    pool: Option<&LabelSets>,
    cut: &FoldCut<'_, X>,
    kernel: &dyn Fn(f64) -> Result<KX>,
    widths: &[f64],
    y: &LabelSets,
    ky: &KernelSpec,
    lambdas: &[f64],
    scoring: Scoring,
    on_step: &mut dyn FnMut(),
) -> Result<Vec<Vec<Vec<f64>>>>
where
    X: Rows + 'static,
    KX: Kernel<X> + Clone + 'static,
{
    let mut scores = vec![vec![Vec::with_capacity(folds.len()); lambdas.len()]; widths.len()];
    let (mut first_error, mut fitted) = (None, 0usize);
    let decoder = PerQueryDecoder::new();
    for ((tr, va), queries) in folds.iter().zip(fold_queries) {
        let (x_tr, x_va) = cut(tr, va)?;
        let y_tr = y.select(tr);
        for (wi, &c) in widths.iter().enumerate() {
            let kx = kernel(c)?;
            for (li, &lambda) in lambdas.iter().enumerate() {
                let cell = || -> Result<f64> {
                    let (spec, _) = resolve::estimator_spec(r, tr.len(), lambda)?;
                    let model = spec.fit(kx.clone(), ky.clone(), &x_tr, &y_tr)?;
                    let ranked = decoder.rank_all(model.surrogate(), &x_va, pool, queries.iter().cloned())?;
                    let ranks: Vec<usize> = ranked.iter().filter_map(|q| q.true_rank.map(|t| t.pessimistic)).collect();
                    Ok(scoring.score(&ranks))
                };
                match cell() {
                    Ok(v) => {
                        fitted += 1;
                        scores[wi][li].push(v);
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                        scores[wi][li].push(f64::NAN);
                    }
                }
            }
            on_step();
        }
    }
    match first_error {
        Some(e) if fitted == 0 => Err(e),
        _ => Ok(scores),
    }
}

/// The criterion, error flag, score and table name of a retrieval scoring.
fn describe_retrieval(scoring: Scoring, cv: Cv) -> (String, bool, &'static str, &'static str) {
    let k = cv.name();
    match scoring {
        Scoring::MeanRank => (
            format!("{k}-fold cross-validated mean rank of the true candidate (ties counted against it)"),
            true,
            "negated mean pessimistic rank of the true candidate (higher is better)",
            "mean rank",
        ),
        s => (
            format!("{k}-fold cross-validated {} accuracy of the true candidate (ties counted against it)", s.name()),
            false,
            "top-k accuracy of the true candidate, fraction",
            "top-k x100",
        ),
    }
}

/// The checks of the data against a request shared by [`tune`] and
/// [`tune_gram`]; returns the ridges.
fn check_data(req: &TuneRequest<'_>, n: usize, y: &TrainOutputs<'_>) -> Result<Vec<f64>> {
    let r = req.recipe;
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
    Ok(lambdas)
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
        folds(k, n, groups, self.seed)
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
            // Named: the bound `KernelSpec: Kernel<Y>` would otherwise make the inputs `Y` too.
            Ok(spec.fit::<Features, KernelSpec, Y, KernelSpec>(kx, ky.clone(), x, y)?)
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
