//! The data-dependent defaults of a [`Recipe`], each resolved by one
//! function: standardization, kernel widths, the ridge IOKR chooses by
//! leave-one-out, combined-kernel weights, and sizes capped at the number
//! of training samples (with the warning every front door shows).

use okr_decode::select::loo_grid;
use okr_estimators::TraceNormSolver;
use okr_estimators::nystroem::Anchors;
use okr_estimators::persist::EstimatorSpec;
use okr_estimators::sketch::SketchSpec;
use okr_kernels::combinators::WeightedSum;
use okr_kernels::mkl::{alignf_weights, uniform_weights};
use okr_kernels::{
    DenseRows, Features, Gaussian, Kernel, KernelOptions, KernelSpec, LabelSets, MEDIAN_SAMPLE_ROWS, RankingKernel,
    Rankings, Rows, Standardizer, WidthSide, WlSubtree, median_heuristic_gamma, median_sq_distance,
};

use crate::catalog::Estimator;
use crate::defaults;
use crate::recipe::{AnchorsRecipe, EstimatorRecipe, KernelRecipe, Mkl, Recipe, Standardize};
use crate::{Error, Result};

/// The estimator of `recipe` with ridge `lambda` (reduced rank: `lambda1`
/// and `lambda2` default to it) for `n` training samples, with every
/// default filled in, and a warning for each size capped at `n` (pass
/// `usize::MAX` to check a recipe before the data are read).
///
/// # Errors
/// [`Error::Refused`] for a sketched estimator without its sketch or a
/// non-kernel-output estimator; [`Error::Estimators`] for a value out of
/// range (the builders' checks).
pub fn estimator_spec(recipe: &Recipe, n: usize, lambda: f64) -> Result<(EstimatorSpec, Vec<String>)> {
    let e = &recipe.estimator;
    let mut warnings = Vec::new();
    let mut cap = |what: String, m: usize| -> usize {
        if m > n {
            warnings.push(format!("{what} asks for {m} of {n} training samples: capped at {n}"));
            n
        } else {
            m
        }
    };
    let seed = recipe.seed;
    let lambda1 = e.lambda1.unwrap_or(lambda);
    let lambda2 = e.lambda2.unwrap_or(lambda1);
    let rank = e.rank.unwrap_or(defaults::RANK);
    let mut sketch = |text: &Option<String>, what: &str, needed: bool| -> Result<Option<SketchSpec>> {
        let Some(text) = text else {
            if needed {
                let side = if what == "input_sketch" { "an input" } else { "an output" };
                return Err(Error::Refused(format!(
                    "estimator {} needs {side} sketch {what} KIND:m (for example uniform:1000 or gaussian:100)",
                    e.name
                )));
            }
            return Ok(None);
        };
        let mut s: SketchSpec = text.parse()?;
        s.check()?;
        s.size = cap(format!("{what} {text}"), s.size);
        Ok(Some(s))
    };
    let spec = match e.name {
        Estimator::Iokr => EstimatorSpec::Iokr { lambda },
        Estimator::ReducedRank => EstimatorSpec::ReducedRank { rank, lambda1, lambda2 },
        Estimator::Kde => EstimatorSpec::Kde { rank, lambda, centered: e.centered.unwrap_or(false) },
        Estimator::Siokr | Estimator::Isokr | Estimator::Sisokr => {
            let wants_in = e.name != Estimator::Isokr;
            let wants_out = e.name != Estimator::Siokr;
            let input_sketch = sketch(&e.input_sketch, "input_sketch", wants_in)?;
            let output_sketch = sketch(&e.output_sketch, "output_sketch", wants_out)?;
            EstimatorSpec::Sketched { lambda, input_sketch, output_sketch, seed }
        }
        Estimator::Nystroem => EstimatorSpec::Nystroem { lambda, anchors: anchors(&e.anchors, &mut cap), seed },
        Estimator::NystroemReducedRank => EstimatorSpec::NystroemReducedRank {
            rank,
            lambda1,
            lambda2,
            anchors: anchors(&e.anchors, &mut cap),
            subset: Anchors::Uniform(cap("subset".into(), e.subset.unwrap_or(defaults::SUBSET))),
            seed,
        },
        Estimator::TraceNorm => {
            let solver: TraceNormSolver = e.solver.as_deref().unwrap_or(defaults::TRACE_NORM_SOLVER).parse()?;
            let rank = cap("rank".into(), e.rank.unwrap_or(defaults::TRACE_NORM_RANK));
            let max_iter = e.max_iter.unwrap_or(defaults::TRACE_NORM_MAX_ITER);
            EstimatorSpec::TraceNorm { rank, lambda, solver, seed, max_iter }
        }
        Estimator::Leml | Estimator::Kae | Estimator::K2ae => {
            return Err(Error::Refused(format!("estimator {} is not a kernel-output estimator", e.name)));
        }
    };
    spec.check()?;
    Ok((spec, warnings))
}

fn anchors(a: &Option<AnchorsRecipe>, cap: &mut impl FnMut(String, usize) -> usize) -> Anchors {
    match a {
        None => Anchors::Uniform(cap("anchors".into(), defaults::ANCHORS)),
        Some(AnchorsRecipe::Count(m)) => Anchors::Uniform(cap("anchors".into(), *m)),
        Some(AnchorsRecipe::Indices(idx)) => Anchors::Given(idx.clone()),
    }
}

/// The estimator part of a resolved recipe: every hyper-parameter `spec`
/// used, under the name `name`.
pub fn record(name: Estimator, spec: &EstimatorSpec) -> EstimatorRecipe {
    let mut r = EstimatorRecipe::new(name);
    let anchors = |a: &Anchors| match a {
        Anchors::Uniform(m) => AnchorsRecipe::Count(*m),
        Anchors::Given(idx) => AnchorsRecipe::Indices(idx.clone()),
    };
    match spec {
        EstimatorSpec::Iokr { lambda } => r.lambda = Some(*lambda),
        EstimatorSpec::ReducedRank { rank, lambda1, lambda2 } => {
            (r.rank, r.lambda, r.lambda1, r.lambda2) = (Some(*rank), Some(*lambda1), Some(*lambda1), Some(*lambda2));
        }
        EstimatorSpec::Kde { rank, lambda, centered } => {
            (r.rank, r.lambda, r.centered) = (Some(*rank), Some(*lambda), Some(*centered));
        }
        EstimatorSpec::Sketched { lambda, input_sketch, output_sketch, .. } => {
            r.lambda = Some(*lambda);
            r.input_sketch = input_sketch.map(|s| s.to_string());
            r.output_sketch = output_sketch.map(|s| s.to_string());
        }
        EstimatorSpec::Nystroem { lambda, anchors: a, .. } => {
            (r.lambda, r.anchors) = (Some(*lambda), Some(anchors(a)));
        }
        EstimatorSpec::NystroemReducedRank { rank, lambda1, lambda2, anchors: a, subset, .. } => {
            (r.rank, r.lambda, r.lambda1, r.lambda2) = (Some(*rank), Some(*lambda1), Some(*lambda1), Some(*lambda2));
            r.anchors = Some(anchors(a));
            r.subset = Some(subset.count());
        }
        EstimatorSpec::TraceNorm { rank, lambda, solver, max_iter, .. } => {
            (r.rank, r.lambda, r.max_iter) = (Some(*rank), Some(*lambda), Some(*max_iter));
            r.solver = Some(
                match solver {
                    TraceNormSolver::GradientDescent => "gd",
                    TraceNormSolver::Als => "als",
                    TraceNormSolver::Convex => "convex",
                }
                .into(),
            );
        }
        _ => {}
    }
    r
}

/// Training inputs as the input kernel sees them.
#[derive(Debug, Clone)]
pub struct PreparedInputs<'a> {
    /// Standardization of dense inputs, stored in the model.
    pub standardizer: Option<Standardizer>,
    /// Standardization of sparse inputs, as Gaussian feature weights.
    pub weights: Option<Vec<f64>>,
    /// Rows for the width heuristics: standardized dense rows, or sparse
    /// rows divided by their scale (the same distances); the caller's rows,
    /// not a copy, when nothing is scaled.
    pub rows: std::borrow::Cow<'a, Features>,
    /// How the inputs were treated.
    pub note: &'static str,
}

impl PreparedInputs<'_> {
    /// The prepared rows.
    pub fn rows(&self) -> &Features {
        &self.rows
    }
}

/// Standardizes the features as `standardize` says. Dense features are
/// standardized (`Auto`: unless they are all 0/1); sparse features stay
/// sparse and, with `Yes`, carry the standardization as Gaussian feature
/// weights (`gaussian` must then be true: only the Gaussian kernel takes
/// them).
///
/// # Errors
/// [`Error::Refused`] for `Yes` on sparse data with another kernel;
/// errors of [`Standardizer::fit`].
pub fn prepare_inputs(standardize: Standardize, gaussian: bool, x: &Features) -> Result<PreparedInputs<'_>> {
    let (on, note) = match standardize {
        Standardize::No => (false, "used as given (no standardization)"),
        Standardize::Yes => (true, "standardized (as asked)"),
        Standardize::Auto if x.is_sparse() => (false, "used as given (sparse; standardize to scale them)"),
        Standardize::Auto if okr_kernels::is_binary(x) => (false, "used as given (binary)"),
        Standardize::Auto => (true, "standardized (dense, not binary)"),
    };
    if !on {
        return Ok(PreparedInputs { standardizer: None, weights: None, rows: std::borrow::Cow::Borrowed(x), note });
    }
    let st = Standardizer::fit(x)?;
    Ok(match x {
        Features::Dense(d) => {
            let rows = std::borrow::Cow::Owned(Features::Dense(st.transform(d)?));
            PreparedInputs { rows, standardizer: Some(st), weights: None, note }
        }
        Features::Sparse(s) => {
            if !gaussian {
                return Err(Error::Refused(
                    "standardizing sparse data works with the gaussian input kernel only (it becomes per-feature \
                     weights, so the data stays sparse)"
                        .into(),
                ));
            }
            PreparedInputs {
                rows: std::borrow::Cow::Owned(Features::Sparse(st.scale_sparse(s)?)),
                standardizer: None,
                weights: Some(st.feature_weights()),
                note,
            }
        }
    })
}

/// A vector kernel (`gaussian`, `linear`, `laplacian`, `polynomial`,
/// `tanimoto`, `gaussian-tanimoto`) from its recipe: an unset Gaussian-type
/// width is `default_gamma()`; an unset polynomial `gamma` is
/// `1 / n_features`, its degree and offset [`defaults::POLY_DEGREE`] and
/// [`defaults::POLY_COEF0`]. Returns the kernel and the recipe with every
/// parameter filled in.
///
/// # Errors
/// [`Error::Kernels`] for a parameter out of range or a non-finite default width.
pub fn vector_kernel(
    k: &KernelRecipe,
    n_features: usize,
    default_gamma: impl FnOnce() -> f64,
) -> Result<(KernelSpec, KernelRecipe)> {
    let name = k.canonical_name();
    let poly = name == "polynomial";
    let options = KernelOptions {
        gamma: k.gamma.or(if poly { Some(1.0 / n_features.max(1) as f64) } else { None }),
        sigma2: k.sigma2,
        degree: poly_degree(k.degree)?,
        coef0: k.coef0.unwrap_or(defaults::POLY_COEF0),
    };
    let spec = KernelSpec::from_name(&name, &options, default_gamma)?;
    let mut resolved = KernelRecipe::named(&name);
    match &spec {
        KernelSpec::Gaussian(g) => resolved.gamma = Some(g.gamma()),
        KernelSpec::Laplacian(g) => resolved.gamma = Some(g.gamma()),
        KernelSpec::GaussianTanimoto(g) => resolved.gamma = Some(g.gamma()),
        KernelSpec::Polynomial(p) => {
            (resolved.gamma, resolved.degree, resolved.coef0) =
                (Some(p.gamma()), Some(u64::from(p.degree())), Some(p.coef0()));
        }
        _ => {}
    }
    Ok((spec, resolved))
}

/// A polynomial degree as given ([`defaults::POLY_DEGREE`] when unset),
/// refused with the kernel's message beyond `i32::MAX`.
///
/// # Errors
/// [`Error::Kernels`] naming the degree.
pub fn poly_degree(degree: Option<u64>) -> Result<u32> {
    match degree {
        None => Ok(defaults::POLY_DEGREE),
        Some(d) => {
            Ok(u32::try_from(d).ok().filter(|&d| d <= i32::MAX as u32).ok_or(okr_kernels::Error::InvalidParameter {
                name: "degree",
                value: d as f64,
                expected: "an integer in 1..=i32::MAX",
            })?)
        }
    }
}

/// The median squared distance between rows of `x` (at most
/// [`MEDIAN_SAMPLE_ROWS`] of them) and the median-heuristic width
/// `1 / (2 median)`.
pub fn median_width<R: Rows>(x: &R) -> (f64, f64)
where
    okr_kernels::Linear: Kernel<R>,
{
    let m = median_sq_distance(x, MEDIAN_SAMPLE_ROWS);
    (m, median_heuristic_gamma(m))
}

/// Whether `k` takes its width from the median heuristic (a Gaussian-type
/// kernel with no `gamma` or `sigma2` given).
fn needs_median(k: &KernelRecipe) -> bool {
    k.gamma.is_none() && k.sigma2.is_none() && k.has_gaussian_width()
}

/// Refuses a median-heuristic width that cannot be used: the one check of
/// [`okr_kernels::check_median_width`] (the same message in every front
/// door). A median of 0 (all sampled rows identical) keeps the heuristic's
/// fallback.
///
/// # Errors
/// [`Error::Kernels`] ([`okr_kernels::Error::UnusableMedian`]) naming the
/// median and what to do.
fn check_median(median: f64, side: WidthSide) -> Result<()> {
    okr_kernels::check_median_width(median, side)?;
    Ok(())
}

/// The input kernel of a recipe on prepared inputs: the kernel (with the
/// sparse standardization's feature weights), its resolved recipe and how
/// its width was set.
///
/// # Errors
/// As [`vector_kernel`]; [`Error::Kernels`] when the median-heuristic width
/// is needed and the median squared distance overflows.
pub fn input_kernel(k: &KernelRecipe, p: &PreparedInputs) -> Result<(KernelSpec, KernelRecipe, String)> {
    // The median reads up to 2000 rows: only when a width is needed.
    let (median, gamma) = if needs_median(k) {
        let (median, gamma) = median_width(p.rows());
        check_median(median, WidthSide::Inputs)?;
        (median, gamma)
    } else {
        (f64::NAN, f64::NAN)
    };
    let (spec, resolved) = vector_kernel(k, p.rows.n_features(), || gamma)?;
    let note = match (k.gamma.is_some() || k.sigma2.is_some(), k.has_gaussian_width()) {
        (true, _) => "given".to_string(),
        (false, true) => format!("median heuristic 1 / (2 * {median:.4}), the median squared distance"),
        (false, false) => "defaults".to_string(),
    };
    Ok((weighted(spec, p.weights.as_deref())?, resolved, note))
}

/// A Gaussian kernel with the sparse standardization's feature `weights`
/// (other kernels, or no weights: `k` as it is).
///
/// # Errors
/// [`Error::Kernels`] for weights of the wrong length.
pub fn weighted(k: KernelSpec, weights: Option<&[f64]>) -> Result<KernelSpec> {
    Ok(match (weights, k) {
        (Some(w), KernelSpec::Gaussian(g)) => Gaussian::new(g.gamma())?.with_feature_weights(w.to_vec())?.into(),
        (_, k) => k,
    })
}

/// Several input kernels combined: each resolved on the prepared inputs
/// (an unset Gaussian width: the median heuristic), weighted uniformly or by
/// ALIGNF against the output Gram `output_gram()` (computed only for
/// ALIGNF), or with the `weights` given. Returns the combined kernel, the
/// resolved kernels and the weights.
///
/// # Errors
/// As [`vector_kernel`]; ALIGNF's errors; [`Error::Kernels`] when a kernel
/// needs the median-heuristic width and the median squared distance overflows.
pub fn combined_kernel(
    kernels: &[KernelRecipe],
    mkl: Mkl,
    given: Option<&[f64]>,
    p: &PreparedInputs,
    fit_rows: &Features,
    output_gram: impl FnOnce() -> faer::Mat<f64>,
) -> Result<(KernelSpec, Vec<KernelRecipe>, Vec<f64>)> {
    let (median, gamma) = median_width(p.rows());
    if kernels.iter().any(needs_median) {
        check_median(median, WidthSide::Inputs)?;
    }
    let mut specs = Vec::with_capacity(kernels.len());
    let mut resolved = Vec::with_capacity(kernels.len());
    for k in kernels {
        let (s, r) = vector_kernel(k, p.rows.n_features(), || gamma)?;
        specs.push(weighted(s, p.weights.as_deref())?);
        resolved.push(r);
    }
    let w = match (given, mkl) {
        (Some(w), _) => w.to_vec(),
        (None, Mkl::Uniform) => uniform_weights(specs.len()),
        (None, Mkl::Alignf) => {
            let grams: Vec<_> = specs.iter().map(|k| k.gram(fit_rows)).collect();
            let refs: Vec<_> = grams.iter().map(|g| g.as_ref()).collect();
            alignf_weights(&refs, output_gram().as_ref())?
        }
    };
    Ok((WeightedSum::new(w.clone(), specs)?.into(), resolved, w))
}

/// The output kernel on label sets or fingerprints: an unset Gaussian-type
/// width is `sigma^2 =` the mean number of labels (set bits) per training
/// point; an unset polynomial `gamma` is `1 / n_labels`.
///
/// # Errors
/// As [`vector_kernel`].
pub fn label_output_kernel(k: &KernelRecipe, y: &LabelSets) -> Result<(KernelSpec, KernelRecipe, String)> {
    let (spec, resolved) = vector_kernel(k, y.n_labels(), || okr_kernels::label_set_gamma(y))?;
    let note = if k.gamma.is_some() || k.sigma2.is_some() || !k.has_gaussian_width() {
        "given".to_string()
    } else {
        format!("default width: sigma^2 = {:.4} mean labels per point", y.mean_cardinality().max(1.0))
    };
    Ok((spec, resolved, note))
}

/// The output kernel on vectors: an unset Gaussian-type width is the
/// median heuristic on the training outputs.
///
/// # Errors
/// As [`vector_kernel`]; [`Error::Kernels`] when the median-heuristic width
/// is needed and the median squared distance overflows.
pub fn vector_output_kernel(k: &KernelRecipe, y: &DenseRows) -> Result<(KernelSpec, KernelRecipe, String)> {
    let (median, gamma) = median_width(y);
    if needs_median(k) {
        check_median(median, WidthSide::Outputs)?;
    }
    let (spec, resolved) = vector_kernel(k, y.n_features(), || gamma)?;
    let note = if k.gamma.is_some() || k.sigma2.is_some() || !k.has_gaussian_width() {
        "given".to_string()
    } else {
        format!("median heuristic 1 / (2 * {median:.4})")
    };
    Ok((spec, resolved, note))
}

/// The graph output kernel: normalized WL subtree with `iterations`
/// (default [`defaults::WL_ITERATIONS`]).
///
/// # Errors
/// [`Error::Invalid`] beyond the largest iteration count a model file stores.
pub fn graph_output_kernel(k: &KernelRecipe) -> Result<(WlSubtree, KernelRecipe)> {
    let h = k.iterations.unwrap_or(defaults::WL_ITERATIONS);
    let max = okr_estimators::persist::MAX_WL_ITERATIONS;
    if h > max {
        return Err(Error::invalid("wl iterations", h, format!("at most {max}")));
    }
    let mut r = KernelRecipe::named("wl");
    r.iterations = Some(h);
    Ok((WlSubtree::new(h).normalized(true), r))
}

/// The ranking output kernel: Kendall, or Mallows with `lambda = gamma`
/// (default `1 / n_pairs` of the training rankings).
///
/// # Errors
/// [`Error::Kernels`] for a Mallows `lambda` out of range.
pub fn ranking_output_kernel(k: &KernelRecipe, y: &Rankings) -> Result<(RankingKernel, KernelRecipe)> {
    let name = k.canonical_name();
    let mut r = KernelRecipe::named(&name);
    if name == "mallows" {
        let l = k.gamma.unwrap_or(1.0 / y.n_pairs().max(1) as f64);
        r.gamma = Some(l);
        return Ok((RankingKernel::mallows(l)?, r));
    }
    Ok((RankingKernel::Kendall, r))
}

/// The training rows whose leave-one-out predictions score a ridge: all of
/// them, or a seeded subset of [`defaults::LOO_ROWS`].
///
/// # Errors
/// Errors of the split.
pub fn loo_rows(n: usize, seed: u64) -> Result<Vec<usize>> {
    Ok(if n <= defaults::LOO_ROWS {
        (0..n).collect()
    } else {
        okr_eval::train_test_split(n, defaults::LOO_ROWS as f64 / n as f64, seed)?.1
    })
}

/// IOKR's ridge when not given: the best closed-form leave-one-out
/// example-based F1 (decoded over the distinct training label sets) among
/// [`defaults::LOO_LAMBDAS`], on the rows of [`loo_rows`], with the input
/// kernel `kx` on `x` (features, or a precomputed Gram); with how it was
/// chosen.
///
/// # Errors
/// Errors of the leave-one-out search.
pub fn loo_lambda<X: Rows, K: Kernel<X>>(
    seed: u64,
    x: &X,
    y: &LabelSets,
    kx: K,
    ky: &KernelSpec,
) -> Result<(f64, String)> {
    let rows = loo_rows(y.n_rows(), seed)?;
    let f1 = |t: &LabelSets, p: &LabelSets| -> Result<f64> { Ok(okr_eval::f1_samples(t, p)?) };
    let result = loo_grid(x, y, &[(1.0, kx)], ky, &defaults::LOO_LAMBDAS, &rows, 0.0, f1, &mut || {})?;
    let note = format!(
        "closed-form leave-one-out F1 {:.2} on {} training rows, best of 1e-8..1e-1",
        100.0 * result.best_score(),
        rows.len()
    );
    Ok((result.lambda(), note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::Recipe;
    use okr_estimators::sketch::SketchKind;

    #[test]
    fn sizes_are_capped_at_n_with_one_warning_each() {
        let mut r = Recipe::new(Estimator::Sisokr);
        r.estimator.input_sketch = Some("uniform:50".into());
        r.estimator.output_sketch = Some("gaussian:8".into());
        let (spec, warnings) = estimator_spec(&r, 20, 1e-3).unwrap();
        assert_eq!(warnings, vec!["input_sketch uniform:50 asks for 50 of 20 training samples: capped at 20"]);
        let EstimatorSpec::Sketched { input_sketch: Some(s), .. } = spec else { panic!() };
        assert_eq!((s.kind, s.size), (SketchKind::Uniform, 20));
        let mut r = Recipe::new(Estimator::NystroemReducedRank);
        r.estimator.anchors = Some(AnchorsRecipe::Count(30));
        let (spec, warnings) = estimator_spec(&r, 25, 1e-3).unwrap();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        let rec = record(Estimator::NystroemReducedRank, &spec);
        assert_eq!((rec.anchors, rec.subset, rec.rank), (Some(AnchorsRecipe::Count(25)), Some(25), Some(64)));
        let (_, none) = estimator_spec(&Recipe::new(Estimator::Nystroem), usize::MAX, 1e-3).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn polynomial_defaults_follow_scikit_learn() {
        let (k, r) = vector_kernel(&KernelRecipe::named("poly"), 4, || unreachable!()).unwrap();
        assert_eq!(k, okr_kernels::Polynomial::new(3, 0.25, 1.0).unwrap().into());
        assert_eq!((r.name.as_str(), r.gamma, r.degree, r.coef0), ("polynomial", Some(0.25), Some(3), Some(1.0)));
        let (k, r) = vector_kernel(&KernelRecipe::named("rbf"), 4, || 0.125).unwrap();
        assert_eq!(k, Gaussian::new(0.125).unwrap().into());
        // The resolved recipe rebuilds the same kernel without the data.
        let (again, _) = vector_kernel(&r, 4, || unreachable!("the width is resolved")).unwrap();
        assert_eq!(again, k);
    }

    /// S4 / P4: a default width from an overflowing median is one error
    /// naming the cause; identical rows keep the heuristic's fallback; a
    /// given width needs no median.
    #[test]
    fn an_overflowing_median_is_refused_not_replaced_by_one() {
        let huge = DenseRows::from_rows(&[vec![1e200, 0.0], vec![-1e200, 2e200], vec![3e200, -1e200]]).unwrap();
        let err = vector_output_kernel(&KernelRecipe::named("gaussian"), &huge).unwrap_err().to_string();
        assert_eq!(
            err,
            "the median squared distance between training outputs is inf: scale the outputs or set output_gamma (--output-gamma)"
        );
        let mut given = KernelRecipe::named("gaussian");
        given.gamma = Some(0.5);
        assert!(vector_output_kernel(&given, &huge).is_ok());
        assert!(vector_output_kernel(&KernelRecipe::named("linear"), &huge).is_ok());
        let same = DenseRows::from_rows(&[vec![1.0], vec![1.0]]).unwrap();
        let (_, r, _) = vector_output_kernel(&KernelRecipe::named("gaussian"), &same).unwrap();
        assert_eq!(r.gamma, Some(1.0));
    }
}
