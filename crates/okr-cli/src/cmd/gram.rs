//! Precomputed input Grams (`fit --input-gram`, `--input-gram-test`) and
//! combined input kernels (`fit --input-kernels ... --mkl`). Reading and
//! checking Gram files is okr-kernels' (`read_train_gram`, `read_test_gram`),
//! the weights its `mkl` module's.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use okr_estimators::persist::Model;
use okr_eval::Features;
use okr_kernels::combinators::WeightedSum;
use okr_kernels::mkl::{alignf_weights, uniform_weights};
use okr_kernels::{GRAM_SYMMETRY_TOL, GramRows, Kernel, KernelOptions, KernelSpec, LabelSets, Precomputed};

use crate::cli::{EstimatorKind, FitArgs, KernelKind, KernelList, MklKind, OutputKindFlag};
use crate::config::{build_kernel, read_data};

/// The estimators that take a precomputed input Gram.
const GRAM_ESTIMATORS: [EstimatorKind; 6] = [
    EstimatorKind::Iokr,
    EstimatorKind::ReducedRank,
    EstimatorKind::Siokr,
    EstimatorKind::Isokr,
    EstimatorKind::Sisokr,
    EstimatorKind::Nystroem,
];

/// Checks `--input-gram`, `--input-kernels` and `--mkl` against the other flags.
pub(crate) fn check_flags(a: &FitArgs) -> Result<()> {
    let estimator = a.estimator.name();
    if a.input_gram.is_some() {
        if !GRAM_ESTIMATORS.contains(&a.estimator) {
            bail!(
                "--input-gram does not apply to --estimator {estimator} (a precomputed Gram suits iokr, \
                 reduced-rank, siokr, isokr, sisokr and nystroem)"
            );
        }
        let given = [
            ("--input-kernels", a.input_kernels.is_some()),
            ("--input-kernel", a.input_kernel != KernelKind::Gaussian),
            ("--input-gamma", a.gamma.is_some()),
            ("--input-sigma2", a.sigma2.is_some()),
            ("--degree", a.degree.is_some()),
            ("--coef0", a.coef0.is_some()),
            ("--standardize", a.standardize),
            ("--no-standardize", a.no_standardize),
            ("--output-kind", a.output_kind != OutputKindFlag::Labels),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            bail!("{flag} does not apply with --input-gram (the Gram replaces the input kernel and features)");
        }
    }
    if let Some(list) = &a.input_kernels {
        if matches!(a.estimator, EstimatorKind::Leml | EstimatorKind::Kae | EstimatorKind::K2ae) {
            bail!("--input-kernels does not apply to --estimator {estimator}");
        }
        if a.output_kind != OutputKindFlag::Labels {
            bail!("--input-kernels applies to --output-kind labels only");
        }
        let given = [
            ("--input-kernel", a.input_kernel != KernelKind::Gaussian),
            ("--input-gamma", a.gamma.is_some()),
            ("--input-sigma2", a.sigma2.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            bail!("{flag} does not apply with --input-kernels (give KIND:GAMMA in the list)");
        }
        let poly = list.0.iter().any(|k| k.kind == KernelKind::Polynomial);
        if !poly && (a.degree.is_some() || a.coef0.is_some()) {
            bail!("--degree and --coef0 apply to a polynomial kernel in --input-kernels only");
        }
    } else if a.mkl.is_some() {
        bail!("--mkl applies with --input-kernels only");
    }
    Ok(())
}

/// The `--input-kernels` combined with `--mkl` weights on the training rows
/// `x` (the rows the model is fitted on; `weights` are the sparse
/// standardization's Gaussian feature weights), with a description.
pub(crate) fn combined_kernel(
    a: &FitArgs,
    list: &KernelList,
    x: &Features,
    weights: Option<&[f64]>,
    y: &LabelSets,
    ky: &KernelSpec,
) -> Result<(KernelSpec, String)> {
    let median = okr_kernels::median_sq_distance(x, okr_kernels::MEDIAN_SAMPLE_ROWS);
    let kernels = list
        .0
        .iter()
        .map(|item| {
            let options = KernelOptions { gamma: item.gamma, sigma2: None, ..a.input_kernel_options() };
            let k = build_kernel(item.kind, options, || okr_kernels::median_heuristic_gamma(median), "input")?;
            super::fit::weighted(k, weights)
        })
        .collect::<Result<Vec<KernelSpec>>>()?;
    let method = a.mkl.unwrap_or(MklKind::Uniform);
    let w = match method {
        MklKind::Uniform => uniform_weights(kernels.len()),
        MklKind::Alignf => {
            let grams: Vec<_> = kernels.iter().map(|k| k.gram(x)).collect();
            let refs: Vec<_> = grams.iter().map(|g| g.as_ref()).collect();
            alignf_weights(&refs, ky.gram(y).as_ref()).context("--mkl alignf")?
        }
    };
    let note = format!("--mkl {}", if method == MklKind::Uniform { "uniform" } else { "alignf" });
    Ok((WeightedSum::new(w, kernels)?.into(), note))
}

/// `okr fit --input-gram`: the labels from the training file, the inputs
/// from the Gram.
pub(crate) fn fit(a: &FitArgs, gram_path: &Path) -> Result<()> {
    let data = read_data(&a.train, &a.data, None)?;
    let (n, l) = (data.n_samples(), data.n_labels());
    if l == 0 {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }
    let x = okr_kernels::read_train_gram(gram_path, GRAM_SYMMETRY_TOL)
        .with_context(|| format!("--input-gram {}", gram_path.display()))?;
    if x.n_train() != n {
        bail!(
            "--input-gram {}: a {m} x {m} Gram for the {n} rows of {}",
            gram_path.display(),
            a.train.display(),
            m = x.n_train()
        );
    }
    let warnings = super::fit::capped_sizes(a, n);
    let ky = super::fit::output_kernel(a, &data)?;
    let (lambda, note) = match (a.lambda, a.estimator) {
        (Some(lambda), _) => (lambda, "--lambda".to_string()),
        (None, EstimatorKind::Iokr) => super::fit::loo_lambda(a.seed, &x, &data.y, Precomputed, &ky)?,
        (None, _) => (super::fit::DEFAULT_LAMBDA, "default; --lambda to set it".to_string()),
    };
    let spec = super::fit::estimator_spec(a, lambda)?;
    let t = Instant::now();
    let model = spec.fit_gram(ky, &x, &data.y)?;
    let fit_seconds = t.elapsed().as_secs_f64();
    // The model reads rows of n kernel values: its "features" are the training samples.
    let mut info = crate::model::info(&data, None, None, a.seed);
    info.n_features = n;
    let file = crate::model::save_fitted(Model::Gram(model), info, fit_seconds, &a.model)?;
    for w in warnings {
        eprintln!("okr: warning: {w}");
    }
    eprintln!(
        "okr: fitted {} on a precomputed {n} x {n} Gram ({l} labels) in {fit_seconds:.2} s -> {}",
        file.model.name(),
        a.model.display()
    );
    eprintln!("okr: input kernel precomputed ({}); lambda = {lambda:e} ({note})", gram_path.display());
    Ok(())
}

/// The test x train Gram of `--input-gram-test` for a model on `n_train`
/// training samples.
pub(crate) fn read_test(path: &Path, n_train: usize) -> Result<GramRows> {
    okr_kernels::read_test_gram(path, n_train).with_context(|| format!("--input-gram-test {}", path.display()))
}

/// The test inputs a decoding command reads: for a Gram model the test x
/// train Gram (and `--input` only for labels), else the features of `--input`.
pub(crate) fn check_test_flags(
    model: &Model,
    model_path: &Path,
    gram: Option<&Path>,
    input: Option<&Path>,
) -> Result<()> {
    match (model, gram, input) {
        (Model::Gram(_), None, _) => bail!(
            "{} was fitted on a precomputed Gram (--input-gram): give the test x train Gram with --input-gram-test",
            model_path.display()
        ),
        (Model::Gram(_), Some(_), _) => Ok(()),
        (_, Some(_), _) => bail!(
            "--input-gram-test applies to models fitted with --input-gram; {} ({}) was fitted on features",
            model_path.display(),
            model.name()
        ),
        (_, None, None) => bail!("--input is required: {} reads features", model_path.display()),
        (_, None, Some(_)) => Ok(()),
    }
}
