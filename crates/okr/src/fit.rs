//! Fitting from a [`Recipe`]: the one path from a request and training data
//! to a fitted model and the resolved recipe, for every output kind and
//! input side.

use std::time::Instant;

use okr_estimators::TraceNorm;
use okr_estimators::persist::{EstimatorSpec, GramModel, Model, ModelInfo, OutputModel, SavedModel};
use okr_kernels::{
    DenseRows, Features, GramRows, Graphs, Kernel, KernelSpec, LabelSets, Precomputed, Rankings, Rows, Spectra,
    Standardizer,
};

use crate::catalog::{Estimator, Family};
use crate::recipe::{InputRecipe, KernelRecipe, OutputKind, OutputRecipe, Recipe, SpectraKernelRecipe};
use crate::resolve::{self, PreparedInputs};
use crate::{Error, Result, defaults};

/// Training outputs, one row per training input.
#[derive(Debug, Clone, Copy)]
pub enum TrainOutputs<'a> {
    /// Label sets.
    Labels(&'a LabelSets),
    /// Fingerprints, as label sets of their set bits.
    Fingerprints(&'a LabelSets),
    /// Real vectors.
    Vectors(&'a DenseRows),
    /// Labelled graphs.
    Graphs(&'a Graphs),
    /// Rankings.
    Rankings(&'a Rankings),
}

impl TrainOutputs<'_> {
    /// The output kind.
    pub fn kind(&self) -> OutputKind {
        match self {
            TrainOutputs::Labels(_) => OutputKind::Labels,
            TrainOutputs::Fingerprints(_) => OutputKind::Fingerprint,
            TrainOutputs::Vectors(_) => OutputKind::Vector,
            TrainOutputs::Graphs(_) => OutputKind::Graph,
            TrainOutputs::Rankings(_) => OutputKind::Ranking,
        }
    }

    /// Number of outputs.
    pub fn n_rows(&self) -> usize {
        match self {
            TrainOutputs::Labels(y) | TrainOutputs::Fingerprints(y) => y.n_rows(),
            TrainOutputs::Vectors(y) => y.n_rows(),
            TrainOutputs::Graphs(y) => y.n_rows(),
            TrainOutputs::Rankings(y) => y.n_rows(),
        }
    }

    /// The width a model file records: labels, bits, vector length, ranked
    /// items (0 for graphs).
    pub fn width(&self) -> usize {
        match self {
            TrainOutputs::Labels(y) | TrainOutputs::Fingerprints(y) => y.n_labels(),
            TrainOutputs::Vectors(y) => y.n_features(),
            TrainOutputs::Graphs(_) => 0,
            TrainOutputs::Rankings(y) => y.n_items(),
        }
    }
}

/// A fitted model with the resolved recipe and what resolving it said.
#[derive(Debug, Clone)]
pub struct Fitted {
    /// The fitted model.
    pub model: Model,
    /// The recipe with every default resolved: refitting it on the same
    /// data gives the same model.
    pub recipe: Recipe,
    /// The standardization of dense inputs, applied before the model.
    pub standardizer: Option<Standardizer>,
    /// Sizes capped at the number of samples and the like, one line each.
    pub warnings: Vec<String>,
    /// How each data-dependent value was set, one line each
    /// (`input kernel gaussian, gamma = 0.0123 (median heuristic ...)`).
    pub notes: Vec<String>,
    /// Wall-clock seconds of the fit (resolution included).
    pub fit_seconds: f64,
}

impl Fitted {
    /// The model file content: the model, `info` completed with the
    /// standardizer, seed and fit time, and the resolved recipe.
    ///
    /// # Errors
    /// [`Error::Persist`] when `info` contradicts the model.
    pub fn into_saved(self, mut info: ModelInfo) -> Result<SavedModel> {
        info.standardizer = self.standardizer;
        info.seed = self.recipe.seed;
        info.fit_seconds = self.fit_seconds;
        Ok(SavedModel::new(self.model, info)?.with_recipe(Some(self.recipe.to_json_line())))
    }
}

impl Recipe {
    /// The recipe as one line of JSON (what model files store).
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("a recipe always serializes")
    }
}

/// Fits `recipe` on feature rows `x` and outputs `y` (its output kind must
/// be the recipe's): every estimator of the catalog. LEML reads label sets;
/// the autoencoders ignore `y` (see [`crate::fit_codes`], which takes no
/// outputs).
///
/// # Errors
/// [`Error::Refused`] for a recipe that cannot be fitted (see
/// [`Recipe::check`]) or outputs of another kind or count; errors of the
/// resolution and of the estimator's fit.
pub fn fit(recipe: &Recipe, x: &Features, y: &TrainOutputs<'_>) -> Result<Fitted> {
    fit_impl(recipe, x, y, None, None)
}

/// [`fit`] with a weight per training sample (scikit-learn's
/// `sample_weight`): the weighted ridge
/// $$\min_h \sum_i w_i\,\|h(x_i) - \psi(y_i)\|^2 + \Big(\sum_i w_i\Big)\lambda\,\|h\|^2,$$
/// i.e. okr's ridge $n\lambda$ with $n$ replaced by the sum of the weights,
/// so that unit weights give [`fit`], integer weights equal repeating the
/// rows, and scaling every weight by the same factor changes nothing. With
/// a linear output kernel this is scikit-learn's
/// `KernelRidge(alpha = lambda * sum(w)).fit(X, Y, sample_weight = w)`.
/// See [`FitWeighted`](okr_estimators::FitWeighted) for each estimator's
/// normal equations.
///
/// The weights are data, like `x` and `y`: they are checked here once
/// ([`check_sample_weight`](okr_estimators::check_sample_weight): one per
/// row, finite, `> 0`), used by the fit and not recorded in the recipe or
/// the model. The data-dependent defaults (the median heuristic of the
/// input width, the output kernel's width from the mean number of labels
/// or the outputs' median distance, ALIGNF weights, standardization) and
/// the random draws (anchors, sketches) are computed on the rows without
/// the weights: give those values for integer weights to equal repeated
/// rows exactly.
///
/// # Errors
/// As [`fit`]; the weight check's errors (a wrong count, a zero,
/// negative, NaN or infinite weight); [`Error::Refused`] for an estimator
/// without a weighted fit (see [`Estimator::takes_sample_weight`]: KDE,
/// Nystroem reduced rank, trace norm, LEML and the autoencoders). IOKR on
/// label sets without a given `lambda` takes the default `lambda` with a
/// warning instead of its leave-one-out choice, which is unweighted.
pub fn fit_weighted(recipe: &Recipe, x: &Features, y: &TrainOutputs<'_>, sample_weight: &[f64]) -> Result<Fitted> {
    fit_impl(recipe, x, y, None, Some(sample_weight))
}

/// Continues `previous`, a model fitted from a recipe of the same estimator
/// on data of the same shape, for `recipe`'s `max_iter` more iterations (a
/// warm start): trace norm (`gd`, `als`), LEML, KAE and K2AE. The recipe is
/// resolved on `x` as [`fit`] resolves it, and the estimator continues from
/// `previous`'s state (see [`FitFrom`](okr_estimators::FitFrom)): with the
/// same recipe and data, `k` iterations continued for `k` more equal `2k`
/// iterations in one fit.
///
/// # Errors
/// As [`fit`]; [`Error::Refused`] when `previous` is not a model of the
/// recipe's estimator or the estimator does not iterate; a shape mismatch
/// when the data differ in shape from `previous`'s.
pub fn fit_from(recipe: &Recipe, previous: &Model, x: &Features, y: &TrainOutputs<'_>) -> Result<Fitted> {
    fit_impl(recipe, x, y, Some(previous), None)
}

/// The checks of a weighted fit of `recipe` on `n` rows, before anything
/// is resolved: an estimator with a weighted fit, and the weights
/// themselves. Returns their sum.
fn check_weighted(recipe: &Recipe, n: usize, weights: &[f64]) -> Result<f64> {
    let name = recipe.estimator.name;
    if !name.takes_sample_weight() {
        return Err(Error::Refused(format!(
            "estimator {name} has no weighted fit: sample weights are taken by iokr, reduced-rank, nystroem, \
             siokr, isokr and sisokr"
        )));
    }
    Ok(okr_estimators::check_sample_weight(weights, n)?)
}

/// The refusal of a warm start from a model of another kind.
pub(crate) fn cannot_continue(recipe: &Recipe, previous: &Model) -> Error {
    Error::Refused(format!(
        "cannot continue a {} model with estimator {}: a warm start continues a trace-norm (gd, als), leml, kae \
         or k2ae fit of the same estimator and output kind",
        previous.name(),
        recipe.estimator.name
    ))
}

fn fit_impl(
    recipe: &Recipe,
    x: &Features,
    y: &TrainOutputs<'_>,
    warm: Option<&Model>,
    weights: Option<&[f64]>,
) -> Result<Fitted> {
    let start = Instant::now();
    check_outputs(recipe, x.n_rows(), y)?;
    match recipe.input {
        InputRecipe::Gram => {
            return Err(Error::Refused("the recipe's input is a precomputed Gram: fit it with fit_gram".into()));
        }
        InputRecipe::Spectra { .. } => {
            return Err(Error::Refused("the recipe's input is spectra: fit it with fit_spectra".into()));
        }
        _ => {}
    }
    if let Some(w) = weights {
        check_weighted(recipe, x.n_rows(), w)?;
    }
    match (recipe.estimator.name.family(), y) {
        (Family::KernelOutput, _) => {}
        (Family::LabelScores, TrainOutputs::Labels(y)) => return crate::label_scores::fit(recipe, x, y, start, warm),
        (Family::LabelScores, _) => unreachable!("Recipe::check refuses other outputs for leml"),
        // Unsupervised: the outputs are not read.
        (Family::Autoencoder, _) => return crate::autoencoders::fit_codes_impl(recipe, x, warm, &mut |_, _| {}),
    }
    if warm.is_some() && recipe.estimator.name != Estimator::TraceNorm {
        return Err(Error::Refused(format!(
            "estimator {} is not iterative: a warm start continues trace-norm, leml, kae or k2ae",
            recipe.estimator.name
        )));
    }
    let mut out = Resolution::new(recipe);
    out.weighted = weights.is_some();
    let (standardize, gaussian) = match &recipe.input {
        InputRecipe::Features { kernel, standardize } => (*standardize, kernel.canonical_name() == "gaussian"),
        InputRecipe::Combined { kernels, standardize, .. } => {
            (*standardize, kernels.iter().all(|k| k.canonical_name() == "gaussian"))
        }
        InputRecipe::Gram | InputRecipe::Spectra { .. } => unreachable!("refused above"),
    };
    let prepared = resolve::prepare_inputs(standardize, gaussian, x)?;
    out.notes.push(format!("features {}", prepared.note));
    // Sparse models keep the raw rows (their standardization is in the kernel's weights).
    let rows = if x.is_sparse() { x } else { prepared.rows() };
    let fitted = match y {
        TrainOutputs::Labels(y) | TrainOutputs::Fingerprints(y) => {
            let (ky, kr, note) = resolve::label_output_kernel(&recipe.output.kernel_or_default(), y)?;
            out.output_kernel(kr, &ky, &note);
            let kx = out.input_kernel(recipe, &prepared, rows, || ky.gram(*y))?;
            let lambda =
                out.lambda(recipe, |seed| resolve::loo_lambda(seed, rows, y, kx.clone(), &ky), true, x.n_rows())?;
            let spec = out.spec(recipe, x.n_rows(), lambda)?;
            let previous = match warm {
                None => None,
                Some(Model::TraceNorm(p)) => Some(p),
                Some(other) => return Err(cannot_continue(recipe, other)),
            };
            Model::from(fit_spec(spec, kx, ky, rows, *y, previous, weights)?)
        }
        TrainOutputs::Vectors(y) => {
            let (ky, kr, note) = resolve::vector_output_kernel(&recipe.output.kernel_or_default(), y)?;
            out.output_kernel(kr, &ky, &note);
            let kx = out.input_kernel(recipe, &prepared, rows, || ky.gram(*y))?;
            let lambda =
                out.lambda(recipe, |_| unreachable!("no leave-one-out choice on vectors"), false, x.n_rows())?;
            let previous = match warm {
                None => None,
                Some(Model::Vectors(OutputModel::TraceNorm(p))) => Some(p),
                Some(other) => return Err(cannot_continue(recipe, other)),
            };
            Model::Vectors(fit_spec(out.spec(recipe, x.n_rows(), lambda)?, kx, ky, rows, *y, previous, weights)?)
        }
        TrainOutputs::Graphs(y) => {
            let (ky, kr) = resolve::graph_output_kernel(&recipe.output.kernel_or_default())?;
            out.notes.push(format!("output kernel normalized WL subtree, {} iterations", kr.iterations.unwrap_or(0)));
            out.recipe.output.kernel = Some(kr);
            let kx = out.input_kernel(recipe, &prepared, rows, || ky.gram(*y))?;
            let lambda =
                out.lambda(recipe, |_| unreachable!("no leave-one-out choice on graphs"), false, x.n_rows())?;
            let previous = match warm {
                None => None,
                Some(Model::Graphs(OutputModel::TraceNorm(p))) => Some(p),
                Some(other) => return Err(cannot_continue(recipe, other)),
            };
            Model::Graphs(fit_spec(out.spec(recipe, x.n_rows(), lambda)?, kx, ky, rows, *y, previous, weights)?)
        }
        TrainOutputs::Rankings(y) => {
            let (ky, kr) = resolve::ranking_output_kernel(&recipe.output.kernel_or_default(), y)?;
            out.notes.push(format!("output kernel {ky:?}"));
            out.recipe.output.kernel = Some(kr);
            let kx = out.input_kernel(recipe, &prepared, rows, || ky.gram(*y))?;
            let lambda =
                out.lambda(recipe, |_| unreachable!("no leave-one-out choice on rankings"), false, x.n_rows())?;
            let previous = match warm {
                None => None,
                Some(Model::Rankings(OutputModel::TraceNorm(p))) => Some(p),
                Some(other) => return Err(cannot_continue(recipe, other)),
            };
            Model::Rankings(fit_spec(out.spec(recipe, x.n_rows(), lambda)?, kx, ky, rows, *y, previous, weights)?)
        }
    };
    Ok(out.finish(fitted, prepared.standardizer, start))
}

/// Fits `recipe` (input side [`InputRecipe::Gram`]) on a precomputed
/// training Gram and outputs of any kind, for every kernel-output estimator:
/// the model of the kernel the Gram was computed from. Label sets and
/// fingerprints give a [`Model::Gram`], vectors, graphs and rankings a
/// [`Model::GramVectors`], [`Model::GramGraphs`] or [`Model::GramRankings`].
///
/// # Errors
/// As [`fit`]; [`Error::Refused`] for an estimator that needs features
/// (LEML, the autoencoders), with the reason.
pub fn fit_gram(recipe: &Recipe, gram: &GramRows, y: &TrainOutputs<'_>) -> Result<Fitted> {
    fit_gram_impl(recipe, gram, y, None)
}

/// [`fit_gram`] with a weight per training sample: the weighted fit of
/// [`fit_weighted`] on a precomputed Gram.
///
/// # Errors
/// As [`fit_gram`] and [`fit_weighted`].
pub fn fit_gram_weighted(
    recipe: &Recipe,
    gram: &GramRows,
    y: &TrainOutputs<'_>,
    sample_weight: &[f64],
) -> Result<Fitted> {
    fit_gram_impl(recipe, gram, y, Some(sample_weight))
}

fn fit_gram_impl(recipe: &Recipe, gram: &GramRows, y: &TrainOutputs<'_>, weights: Option<&[f64]>) -> Result<Fitted> {
    let start = Instant::now();
    if !matches!(recipe.input, InputRecipe::Gram) {
        return Err(Error::Refused("the recipe's input is not a precomputed Gram: fit it with fit".into()));
    }
    check_outputs(recipe, gram.n_train(), y)?;
    let n = gram.n_train();
    if let Some(w) = weights {
        check_weighted(recipe, n, w)?;
    }
    let mut out = Resolution::new(recipe);
    out.weighted = weights.is_some();
    let no_loo = |kind: &str| -> Result<(f64, String)> {
        unreachable!("no leave-one-out choice on {kind}: Resolution::lambda asks on label sets only")
    };
    let model = match y {
        TrainOutputs::Labels(y) | TrainOutputs::Fingerprints(y) => {
            let (ky, kr, note) = resolve::label_output_kernel(&recipe.output.kernel_or_default(), y)?;
            out.output_kernel(kr, &ky, &note);
            out.notes.push("input kernel precomputed".into());
            let lambda = out.lambda(recipe, |seed| resolve::loo_lambda(seed, gram, y, Precomputed, &ky), true, n)?;
            Model::Gram(GramModel::from(fit_gram_spec(out.spec(recipe, n, lambda)?, ky, gram, *y, weights)?))
        }
        TrainOutputs::Vectors(y) => {
            let (ky, kr, note) = resolve::vector_output_kernel(&recipe.output.kernel_or_default(), y)?;
            out.output_kernel(kr, &ky, &note);
            out.notes.push("input kernel precomputed".into());
            let lambda = out.lambda(recipe, |_| no_loo("vectors"), false, n)?;
            Model::GramVectors(fit_gram_spec(out.spec(recipe, n, lambda)?, ky, gram, *y, weights)?)
        }
        TrainOutputs::Graphs(y) => {
            let (ky, kr) = resolve::graph_output_kernel(&recipe.output.kernel_or_default())?;
            out.notes.push(format!("output kernel normalized WL subtree, {} iterations", kr.iterations.unwrap_or(0)));
            out.recipe.output.kernel = Some(kr);
            out.notes.push("input kernel precomputed".into());
            let lambda = out.lambda(recipe, |_| no_loo("graphs"), false, n)?;
            Model::GramGraphs(fit_gram_spec(out.spec(recipe, n, lambda)?, ky, gram, *y, weights)?)
        }
        TrainOutputs::Rankings(y) => {
            let (ky, kr) = resolve::ranking_output_kernel(&recipe.output.kernel_or_default(), y)?;
            out.notes.push(format!("output kernel {ky:?}"));
            out.recipe.output.kernel = Some(kr);
            out.notes.push("input kernel precomputed".into());
            let lambda = out.lambda(recipe, |_| no_loo("rankings"), false, n)?;
            Model::GramRankings(fit_gram_spec(out.spec(recipe, n, lambda)?, ky, gram, *y, weights)?)
        }
    };
    Ok(out.finish(model, None, start))
}

/// Fits `recipe` (input side [`InputRecipe::Spectra`]) on MS/MS spectra
/// and outputs of any kind: the training Gram of the recipe's probability
/// product kernel ([`SpectraKernelRecipe::ppk`]) is computed here, then
/// fitted exactly as [`fit_gram`] fits a precomputed Gram, so the model is
/// the one `fit_gram` gives on the Gram `okr gram` writes for the same
/// spectra and parameters. The resolved recipe records every kernel
/// parameter.
///
/// The model stores no spectra: predictions take the test x train block
/// `ppk.gram_block(test, train)` ([`Kernel::gram_block`]) as a
/// [`GramRows::test`], like any Gram model.
///
/// # Errors
/// As [`fit_gram`]; [`Error::Refused`] for a recipe whose input is not
/// spectra; the kernel's error for a parameter out of range.
pub fn fit_spectra(recipe: &Recipe, spectra: &Spectra, y: &TrainOutputs<'_>) -> Result<Fitted> {
    fit_spectra_impl(recipe, spectra, y, None)
}

/// [`fit_spectra`] with a weight per training spectrum: the weighted fit of
/// [`fit_gram_weighted`] on the spectra's Gram.
///
/// # Errors
/// As [`fit_spectra`] and [`fit_weighted`].
pub fn fit_spectra_weighted(
    recipe: &Recipe,
    spectra: &Spectra,
    y: &TrainOutputs<'_>,
    sample_weight: &[f64],
) -> Result<Fitted> {
    fit_spectra_impl(recipe, spectra, y, Some(sample_weight))
}

fn fit_spectra_impl(
    recipe: &Recipe,
    spectra: &Spectra,
    y: &TrainOutputs<'_>,
    weights: Option<&[f64]>,
) -> Result<Fitted> {
    let start = Instant::now();
    let InputRecipe::Spectra { kernel } = &recipe.input else {
        return Err(Error::Refused("the recipe's input is not spectra: fit it with fit or fit_gram".into()));
    };
    check_outputs(recipe, spectra.n_rows(), y)?;
    let ppk = kernel.ppk()?;
    let gram = GramRows::train(ppk.gram(spectra))?;
    let mut fitted = fit_gram_impl(&Recipe { input: InputRecipe::Gram, ..recipe.clone() }, &gram, y, weights)?;
    let resolved = SpectraKernelRecipe::of(&ppk);
    let note = format!("input kernel ppk on {} spectra ({})", spectra.n_rows(), describe_ppk(&resolved));
    for n in fitted.notes.iter_mut().filter(|n| *n == "input kernel precomputed") {
        n.clone_from(&note);
    }
    fitted.recipe.input = InputRecipe::Spectra { kernel: resolved };
    fitted.fit_seconds = start.elapsed().as_secs_f64();
    Ok(fitted)
}

/// `peak width 0.01, intensity weights, no intensity coordinate, precursor width 0.01`.
fn describe_ppk(k: &SpectraKernelRecipe) -> String {
    let width = |w: Option<f64>, what: &str| w.map_or(format!("no {what}"), |w| format!("{what} width {w}"));
    format!(
        "peak width {}, {} weights, {}, {}",
        k.peak_width.unwrap_or(f64::NAN),
        k.peak_weights.as_deref().unwrap_or("?"),
        width(k.intensity_width, "intensity"),
        width(k.precursor_width, "precursor")
    )
}

fn fit_spec<Y, KY>(
    spec: EstimatorSpec,
    kx: KernelSpec,
    ky: KY,
    x: &Features,
    y: &Y,
    previous: Option<&TraceNorm<Features, Y, KernelSpec, KY>>,
    weights: Option<&[f64]>,
) -> Result<OutputModel<Y, KY>>
where
    Y: Rows,
    KY: Kernel<Y> + Clone,
{
    Ok(match (previous, weights) {
        (None, None) => spec.fit(kx, ky, x, y)?,
        (None, Some(w)) => spec.fit_weighted(kx, ky, x, y, w)?,
        (Some(p), _) => spec.fit_from(kx, ky, x, y, p)?,
    })
}

/// [`EstimatorSpec::fit`] on a precomputed Gram, weighted when `weights` are given.
fn fit_gram_spec<Y, KY>(
    spec: EstimatorSpec,
    ky: KY,
    gram: &GramRows,
    y: &Y,
    weights: Option<&[f64]>,
) -> Result<OutputModel<Y, KY, GramRows, Precomputed>>
where
    Y: Rows,
    KY: Kernel<Y> + Clone,
{
    Ok(match weights {
        None => spec.fit(Precomputed, ky, gram, y)?,
        Some(w) => spec.fit_weighted(Precomputed, ky, gram, y, w)?,
    })
}

/// The checks shared by both fits: the recipe, and outputs of its kind with
/// a row per input.
fn check_outputs(recipe: &Recipe, n: usize, y: &TrainOutputs<'_>) -> Result<()> {
    recipe.check()?;
    if y.kind() != recipe.output.kind {
        return Err(Error::Refused(format!(
            "the recipe asks for {} outputs, the training outputs are {}",
            recipe.output.kind.name(),
            y.kind().name()
        )));
    }
    if y.n_rows() != n {
        let what = "number of training outputs";
        return Err(okr_estimators::Error::ShapeMismatch { what, expected: n, got: y.n_rows() }.into());
    }
    if n == 0 {
        return Err(Error::Refused("no training samples".into()));
    }
    if matches!(y, TrainOutputs::Labels(_) | TrainOutputs::Fingerprints(_)) && y.width() == 0 {
        return Err(Error::Refused("the training outputs have no labels, so the model would predict nothing".into()));
    }
    Ok(())
}

/// The resolved recipe under construction, with the notes and warnings.
struct Resolution {
    recipe: Recipe,
    notes: Vec<String>,
    warnings: Vec<String>,
    /// A fit with sample weights (IOKR's leave-one-out choice of lambda is unweighted).
    weighted: bool,
}

impl Resolution {
    fn new(recipe: &Recipe) -> Self {
        Self { recipe: recipe.clone(), notes: Vec::new(), warnings: Vec::new(), weighted: false }
    }

    fn output_kernel(&mut self, resolved: KernelRecipe, ky: &KernelSpec, note: &str) {
        self.notes.push(format!("output kernel {} ({note})", describe(ky)));
        self.recipe.output = OutputRecipe { kind: self.recipe.output.kind, kernel: Some(resolved) };
    }

    /// The input kernel of a features or combined input side, recorded.
    fn input_kernel(
        &mut self,
        recipe: &Recipe,
        prepared: &PreparedInputs,
        rows: &Features,
        output_gram: impl FnOnce() -> faer::Mat<f64>,
    ) -> Result<KernelSpec> {
        match &recipe.input {
            InputRecipe::Features { kernel, standardize } => {
                let (kx, resolved, note) = resolve::input_kernel(kernel, prepared)?;
                self.notes.push(format!("input kernel {} ({note})", describe(&kx)));
                self.recipe.input = InputRecipe::Features { kernel: resolved, standardize: *standardize };
                Ok(kx)
            }
            InputRecipe::Combined { kernels, mkl, weights, standardize } => {
                let (kx, resolved, w) =
                    resolve::combined_kernel(kernels, *mkl, weights.as_deref(), prepared, rows, output_gram)?;
                self.notes.push(format!("input kernel {kx} ({mkl:?} weights)"));
                self.recipe.input =
                    InputRecipe::Combined { kernels: resolved, mkl: *mkl, weights: Some(w), standardize: *standardize };
                Ok(kx)
            }
            InputRecipe::Gram | InputRecipe::Spectra { .. } => unreachable!("features only"),
        }
    }

    /// The ridge: given, IOKR's leave-one-out choice (`loo`, on label sets),
    /// or the default.
    fn lambda(
        &mut self,
        recipe: &Recipe,
        loo: impl FnOnce(u64) -> Result<(f64, String)>,
        label_sets: bool,
        n: usize,
    ) -> Result<f64> {
        // Leave-one-out needs two samples; with one, the default ridge.
        let (lambda, note) = match recipe.estimator.lambda {
            Some(l) => (l, "given".to_string()),
            None if label_sets && n >= 2 && recipe.estimator.name == Estimator::Iokr && self.weighted => {
                self.warnings.push(format!(
                    "lambda = {:e}, the default: iokr's leave-one-out choice of lambda is unweighted, so a fit with \
                     sample weights and no lambda takes the default; give lambda",
                    defaults::LAMBDA
                ));
                (defaults::LAMBDA, "default of iokr with sample weights".to_string())
            }
            None if label_sets && n >= 2 && recipe.estimator.name == Estimator::Iokr => loo(recipe.seed)?,
            None => (defaults::LAMBDA, format!("default of {}", recipe.estimator.name)),
        };
        self.notes.push(format!("lambda = {lambda:e} ({note})"));
        Ok(lambda)
    }

    fn spec(&mut self, recipe: &Recipe, n: usize, lambda: f64) -> Result<EstimatorSpec> {
        let (spec, warnings) = resolve::estimator_spec(recipe, n, lambda)?;
        self.warnings.extend(warnings);
        self.recipe.estimator = resolve::record(recipe.estimator.name, &spec);
        Ok(spec)
    }

    fn finish(self, model: Model, standardizer: Option<Standardizer>, start: Instant) -> Fitted {
        Fitted {
            model,
            recipe: self.recipe,
            standardizer,
            warnings: self.warnings,
            notes: self.notes,
            fit_seconds: start.elapsed().as_secs_f64(),
        }
    }
}

/// `gaussian, gamma = 0.0123` and the like.
pub fn describe(k: &KernelSpec) -> String {
    match k {
        KernelSpec::Gaussian(g) => format!("gaussian, gamma = {:.6}", g.gamma()),
        KernelSpec::WeightedSum(_) => k.to_string(),
        other => format!("{other:?}"),
    }
}
