//! `okr fit`'s flags -> one [`okr::Recipe`]: a translation of the CLI's idiom
//! (flags, their names and files) into the library's request; every default,
//! width and check is the library's.

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use okr::{
    AnchorsRecipe, Estimator, InputRecipe, KernelRecipe, Mkl, OutputKind, OutputRecipe, Param, Recipe, Runtime,
    SpectraKernelRecipe, Standardize,
};

use crate::cli::{EstimatorKind, FitArgs, KernelKind, MklKind, OutputKindFlag, SpectraKernelArgs};

/// The library's estimator of `--estimator`.
pub fn estimator(kind: EstimatorKind) -> Estimator {
    kind.name().parse().expect("every --estimator is in the catalog")
}

/// The flag that sets hyper-parameter `p`.
pub fn flag(p: Param) -> String {
    format!("--{}", p.name().replace('_', "-"))
}

/// The kernel `kind` by its flag name.
fn kernel_name(kind: KernelKind) -> String {
    kind.to_possible_value().expect("no kernel kind is skipped").get_name().to_string()
}

/// The input kernel's recipe from `--input-kernel` and its parameter flags.
fn input_kernel(a: &FitArgs) -> KernelRecipe {
    KernelRecipe {
        gamma: a.gamma,
        sigma2: a.sigma2,
        degree: a.degree.map(u64::from),
        coef0: a.coef0,
        ..KernelRecipe::named(&kernel_name(a.input_kernel))
    }
}

/// The output kernel's recipe: `None` when no output-kernel flag was
/// given (the output kind's default kernel).
fn output_kernel(a: &FitArgs) -> Option<KernelRecipe> {
    let s = &a.structured;
    let given = a.output_kernel != KernelKind::Gaussian
        || a.output_gamma.is_some()
        || a.output_sigma2.is_some()
        || s.wl_iterations.is_some()
        || s.mallows_lambda.is_some();
    given.then(|| KernelRecipe {
        gamma: a.output_gamma.or(s.mallows_lambda),
        sigma2: a.output_sigma2,
        iterations: s.wl_iterations,
        ..KernelRecipe::named(&kernel_name(a.output_kernel))
    })
}

fn standardize(a: &FitArgs) -> Standardize {
    match (a.standardize, a.no_standardize) {
        (true, _) => Standardize::Yes,
        (_, true) => Standardize::No,
        _ => Standardize::Auto,
    }
}

/// The probability product kernel's recipe from its flags (`okr fit
/// --input-spectra` and `okr gram`): unset flags stay unset, so the
/// defaults are the library's.
pub fn spectra_kernel(a: &SpectraKernelArgs) -> SpectraKernelRecipe {
    SpectraKernelRecipe {
        peak_width: a.peak_width,
        peak_weights: a.peak_weights.map(|w| w.name().to_string()),
        intensity_width: a.intensity_width,
        precursor_width: a.precursor_width,
    }
}

/// The flags of the probability product kernel, with whether each is given.
pub fn spectra_kernel_flags(a: &SpectraKernelArgs) -> [(&'static str, bool); 4] {
    [
        ("--peak-width", a.peak_width.is_some()),
        ("--peak-weights", a.peak_weights.is_some()),
        ("--intensity-width", a.intensity_width.is_some()),
        ("--precursor-width", a.precursor_width.is_some()),
    ]
}

/// The recipe `okr fit`'s flags ask for (files are read by the caller;
/// `--anchors PATH` is read here, as its indices are part of the request).
pub fn from_flags(a: &FitArgs) -> Result<Recipe> {
    let mut r = Recipe::new(estimator(a.estimator));
    let e = &mut r.estimator;
    (e.lambda, e.lambda1, e.lambda2, e.rank) = (a.lambda, a.lambda1, a.lambda2, a.rank);
    e.centered = a.centered.then_some(true);
    e.solver = a.solver.map(|s| s.to_possible_value().expect("listed").get_name().to_string());
    e.input_sketch = a.input_sketch.map(|s| s.to_string());
    e.output_sketch = a.output_sketch.map(|s| s.to_string());
    e.subset = a.subset;
    e.anchors = match &a.anchors {
        None => None,
        Some(text) => Some(match text.parse::<usize>() {
            Ok(m) => AnchorsRecipe::Count(m),
            Err(_) => AnchorsRecipe::Indices(okr_eval::read_indices(text).context("--anchors")?),
        }),
    };
    e.loss = a.loss.map(|l| l.to_possible_value().expect("listed").get_name().to_string());
    (e.observed_fraction, e.layers, e.code_dim, e.max_iter) = (a.observed_fraction, a.layers, a.code_dim, a.max_iter);
    r.input = match (&a.input_gram, &a.input_kernels) {
        (Some(_), _) => InputRecipe::Gram,
        (None, _) if a.input_spectra.is_some() => InputRecipe::Spectra { kernel: spectra_kernel(&a.spectra_kernel) },
        (None, Some(list)) => InputRecipe::Combined {
            kernels: list
                .0
                .iter()
                .map(|item| KernelRecipe {
                    gamma: item.gamma,
                    degree: (item.kind == KernelKind::Polynomial).then_some(a.degree).flatten().map(u64::from),
                    coef0: (item.kind == KernelKind::Polynomial).then_some(a.coef0).flatten(),
                    ..KernelRecipe::named(&kernel_name(item.kind))
                })
                .collect(),
            mkl: match a.mkl.unwrap_or(MklKind::Uniform) {
                MklKind::Uniform => Mkl::Uniform,
                MklKind::Alignf => Mkl::Alignf,
            },
            weights: None,
            standardize: standardize(a),
        },
        (None, None) => InputRecipe::Features { kernel: input_kernel(a), standardize: standardize(a) },
    };
    let kind = match a.output_kind {
        OutputKindFlag::Labels => OutputKind::Labels,
        OutputKindFlag::Fingerprint => OutputKind::Fingerprint,
        OutputKindFlag::Vector => OutputKind::Vector,
        OutputKindFlag::Graph => OutputKind::Graph,
        OutputKindFlag::Ranking => OutputKind::Ranking,
    };
    r.output = OutputRecipe { kind, kernel: output_kernel(a) };
    r.runtime = Runtime { threads: a.threads, ..Runtime::default() };
    r.seed = a.seed;
    Ok(r)
}

/// The flags `--recipe` replaces: any of them given with it is an error.
pub fn check_no_model_flags(a: &FitArgs) -> Result<()> {
    let given = [
        ("--estimator", a.estimator != EstimatorKind::Iokr),
        ("--lambda", a.lambda.is_some()),
        ("--rank", a.rank.is_some()),
        ("--input-kernel", a.input_kernel != KernelKind::Gaussian),
        ("--input-gamma", a.gamma.is_some()),
        ("--input-sigma2", a.sigma2.is_some()),
        ("--input-kernels", a.input_kernels.is_some()),
        ("--output-kernel", a.output_kernel != KernelKind::Gaussian),
        ("--output-gamma", a.output_gamma.is_some()),
        ("--output-sigma2", a.output_sigma2.is_some()),
        ("--input-sketch", a.input_sketch.is_some()),
        ("--output-sketch", a.output_sketch.is_some()),
        ("--anchors", a.anchors.is_some()),
        ("--output-kind", a.output_kind != OutputKindFlag::Labels),
        ("--seed", a.seed != 0),
    ];
    let kernel = spectra_kernel_flags(&a.spectra_kernel);
    if let Some((flag, _)) = given.iter().chain(&kernel).find(|(_, g)| *g) {
        bail!("{flag} does not apply with --recipe (the recipe file holds the estimator, kernels and outputs)");
    }
    Ok(())
}

/// Reads a recipe file (JSON: a recipe, or the output of `okr info --json`,
/// whose `recipe` member is taken).
pub fn read(path: &std::path::Path) -> Result<Recipe> {
    let text =
        okr_kernels::bounded::read_text(path, 1 << 20).with_context(|| format!("--recipe {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("--recipe {}: not JSON", path.display()))?;
    // `okr info --json`'s output names the estimator by a string and holds the recipe.
    let value = match value.get("recipe") {
        Some(inner) if !value["estimator"].is_object() => inner.clone(),
        _ => value,
    };
    let r = Recipe::from_json(&value.to_string()).with_context(|| format!("--recipe {}", path.display()))?;
    r.check().with_context(|| format!("--recipe {}", path.display()))?;
    Ok(r)
}
