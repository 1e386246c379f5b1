//! From parsed flags to okr objects: data readers, kernels, threads.

use std::path::Path;

use anyhow::{Context, Result, bail};
use okr_estimators::persist::IndexBase;
use okr_eval::{
    CsvHeader, DataFormat, Dataset, LabelColumns, ModelInput, ModelShape, ReadOptions, read_data_file,
    read_data_file_for_model,
};

use crate::cli::{CsvHeaderFlag, DataArgs, EstimatorKind, FitArgs, Format, KernelKind};

/// The width of the data a model expects, to read test files consistently.
pub type Shape = ModelShape;

/// The file's format: `--format`, or by extension for `--format auto`.
fn resolve_format(path: &Path, format: Format) -> Result<DataFormat> {
    Ok(match format {
        Format::Arff => DataFormat::Arff,
        Format::Svmlight => DataFormat::Svmlight,
        Format::Xc => DataFormat::Xc,
        Format::Csv => DataFormat::Csv,
        Format::Auto => DataFormat::from_path(path).with_context(|| {
            format!(
                "cannot tell the format of {} from its extension; pass --format arff|svmlight|xc|csv",
                path.display()
            )
        })?,
    })
}

/// How the flags number an svmlight file's features, recorded in the model;
/// `None` for formats without feature indices.
pub fn index_base(path: &Path, args: &DataArgs) -> Result<Option<IndexBase>> {
    Ok(match resolve_format(path, args.format)? {
        DataFormat::Svmlight => Some(if args.zero_based { IndexBase::ZeroBased } else { IndexBase::OneBased }),
        _ => None,
    })
}

/// Checks the data flags against the file's format before anything is read:
/// a flag the format would ignore is an error naming both. `model_labels` is
/// the label count of the model for `predict` / `eval` / `encode`.
pub fn check_data_flags(path: &Path, args: &DataArgs, model_labels: Option<usize>) -> Result<()> {
    let format = resolve_format(path, args.format)?;
    let name = format.name();
    if args.zero_based && format != DataFormat::Svmlight {
        bail!("--zero-based applies to svmlight files only, not to the {name} file {}", path.display());
    }
    if args.csv_header != CsvHeaderFlag::Auto && format != DataFormat::Csv {
        bail!("--csv-header applies to CSV files only, not to the {name} file {}", path.display());
    }
    if args.label_count.is_some() && format == DataFormat::Xc {
        bail!("--label-count does not apply to the XC file {}: its header declares the label count", path.display());
    }
    if let (Some(l), Some(m)) = (args.label_count, model_labels)
        && l != m
        && l != 0
    {
        bail!(
            "--label-count {l} does not match the model, which has {m} labels \
             (leave the flag out; 0 means a file of features only)"
        );
    }
    Ok(())
}

/// Checks `okr fit`'s flags before any file is read: a flag that the chosen
/// estimator or kernel would silently ignore is an error naming the flag and
/// the estimator or kernel, and the model must not overwrite an input.
pub fn check_fit_flags(a: &FitArgs) -> Result<()> {
    use EstimatorKind as E;
    use okr::Param as P;
    let estimator = a.estimator.name();
    let autoencoder = matches!(a.estimator, E::Kae | E::K2ae);
    // Which estimator takes which hyper-parameter is the catalog's (okr::Param).
    let specific = [
        (P::Rank, a.rank.is_some()),
        (P::Centered, a.centered),
        (P::Solver, a.solver.is_some()),
        (P::Lambda1, a.lambda1.is_some()),
        (P::Lambda2, a.lambda2.is_some()),
        (P::InputSketch, a.input_sketch.is_some()),
        (P::OutputSketch, a.output_sketch.is_some()),
        (P::Anchors, a.anchors.is_some()),
        (P::Subset, a.subset.is_some()),
        (P::Loss, a.loss.is_some()),
        (P::ObservedFraction, a.observed_fraction.is_some()),
        (P::Layers, a.layers.is_some()),
        (P::CodeDim, a.code_dim.is_some()),
        (P::MaxIter, a.max_iter.is_some()),
    ];
    let e = crate::recipe::estimator(a.estimator);
    for (param, given) in specific {
        if given && !e.takes(param) {
            let names: Vec<&str> = param.estimators().iter().map(|e| e.name()).collect();
            bail!(
                "{} does not apply to --estimator {estimator} (only to {})",
                crate::recipe::flag(param),
                names.join(", ")
            );
        }
    }
    if a.estimator == E::Leml {
        for (flag, given) in [("--standardize", a.standardize), ("--no-standardize", a.no_standardize)] {
            if given {
                bail!("{flag} does not apply to --estimator leml (it uses its features as given)");
            }
        }
    }
    // LEML is linear in the features and has no output kernel; autoencoders have no outputs.
    let kernels = [
        ("--input-kernel", a.input_kernel != KernelKind::Gaussian, false),
        ("--input-gamma", a.gamma.is_some(), false),
        ("--input-sigma2", a.sigma2.is_some(), false),
        ("--output-kernel", a.output_kernel != KernelKind::Gaussian, true),
        ("--output-gamma", a.output_gamma.is_some(), true),
        ("--output-sigma2", a.output_sigma2.is_some(), true),
    ];
    for (flag, given, output_side) in kernels {
        if given && (a.estimator == E::Leml || (output_side && autoencoder)) {
            let why = if a.estimator == E::Leml { "it is linear in the features" } else { "it has no output kernel" };
            bail!("{flag} does not apply to --estimator {estimator} ({why})");
        }
    }
    if a.input_kernel.is_structured() {
        let name = format!("{:?}", a.input_kernel).to_lowercase();
        bail!(
            "--input-kernel {name} is a graph or ranking kernel: okr's inputs are feature vectors (it is an output kernel)"
        );
    }
    for (flag, given) in [("--degree", a.degree.is_some()), ("--coef0", a.coef0.is_some())] {
        // With --input-kernels, a polynomial item takes them (checked with the list).
        if given && a.input_kernels.is_none() && a.input_kernel != KernelKind::Polynomial {
            bail!("{flag} applies to --input-kernel polynomial (or a polynomial in --input-kernels) only");
        }
    }
    if a.data.label_count == Some(0) && !autoencoder && a.output_kind == crate::cli::OutputKindFlag::Labels {
        bail!(
            "invalid --label-count 0 with --estimator {estimator}: a model without labels predicts nothing \
             (0 labels suit only kae and k2ae)"
        );
    }
    for (side, kind, gamma, sigma2) in [
        ("input", a.input_kernel, a.gamma.is_some(), a.sigma2.is_some()),
        ("output", a.output_kernel, a.output_gamma.is_some(), a.output_sigma2.is_some()),
    ] {
        let kernel = format!("{kind:?}").to_lowercase();
        let widthless = matches!(kind, KernelKind::Linear | KernelKind::Tanimoto) || kind.is_structured();
        if gamma && widthless {
            bail!("--{side}-gamma does not apply to --{side}-kernel {kernel} (it has no width)");
        }
        if sigma2 && (widthless || kind == KernelKind::Polynomial) {
            bail!("--{side}-sigma2 does not apply to --{side}-kernel {kernel} (only to kernels with a Gaussian width)");
        }
    }
    check_fit_paths(a)
}

/// Checks `okr fit`'s files, also with `--recipe`: the model must not
/// overwrite any file the fit reads, and the data flags must suit the
/// training file's format.
pub fn check_fit_paths(a: &FitArgs) -> Result<()> {
    let mut inputs: Vec<(&str, &Path)> = vec![("training file", a.train.as_path())];
    inputs.extend(a.input_gram.as_deref().map(|p| ("Gram file", p)));
    inputs.extend(a.input_spectra.as_deref().map(|p| ("spectra file", p)));
    inputs.extend(a.output_file.outputs.as_deref().map(|p| ("output file", p)));
    inputs.extend(a.recipe.as_deref().map(|p| ("recipe file", p)));
    if let Some(anchors) = &a.anchors
        && anchors.parse::<usize>().is_err()
    {
        inputs.push(("anchor file", Path::new(anchors.as_str())));
    }
    okr_eval::check_not_input(&a.model, &inputs)?;
    check_data_flags(&a.train, &a.data, None)
}

/// The data flags with `--label-count 0`: the input file holds features only.
pub fn features_only(d: &DataArgs) -> DataArgs {
    DataArgs { label_count: Some(0), ..d.clone() }
}

/// Reads a training file as `args` says.
pub fn read_data(path: &Path, args: &DataArgs, shape: Option<Shape>) -> Result<Dataset> {
    if let Some(shape) = shape {
        return Ok(read_for_model(path, args, shape)?.data);
    }
    let format = resolve_format(path, args.format)?;
    if args.label_count.is_none() && matches!(format, DataFormat::Arff | DataFormat::Csv) {
        bail!("{}: --label-count is required for this format (number of label columns)", path.display());
    }
    let data = read_data_file(path, format, &read_options(args))?;
    if data.n_samples() == 0 {
        bail!("{}: the file has no data rows", path.display());
    }
    Ok(data)
}

/// The reading flags of `args`.
fn read_options(args: &DataArgs) -> ReadOptions {
    let csv_header = match args.csv_header {
        CsvHeaderFlag::Auto => CsvHeader::Detect,
        CsvHeaderFlag::Yes => CsvHeader::Present,
        CsvHeaderFlag::No => CsvHeader::Absent,
    };
    ReadOptions { label_count: args.label_count, zero_based: args.zero_based, csv_header }
}

/// Reads a file to predict on or evaluate with a model of `shape`: the
/// model's features, with or without its label columns (see
/// `okr_eval::readers::model_input`). `--label-count` is then a check: 0 says
/// the file has no labels, the model's count that it has them.
pub fn read_for_model(path: &Path, args: &DataArgs, shape: Shape) -> Result<ModelInput> {
    let input = read_data_file_for_model(path, resolve_format(path, args.format)?, shape, &read_options(args))?;
    if input.data.n_samples() == 0 {
        bail!("{}: the file has no data rows", path.display());
    }
    match (args.label_count, input.labels) {
        (Some(0), LabelColumns::Present) if shape.n_labels > 0 => {
            bail!("{}: --label-count 0 says the file has no labels, but it has {}", path.display(), shape.n_labels)
        }
        (Some(l), LabelColumns::Absent) if l > 0 => {
            bail!("{}: --label-count {l} says the file has labels, but it has features only", path.display())
        }
        _ => {}
    }
    Ok(input)
}

/// Sets the global rayon pool size (faer uses it too); a count above the
/// cores is capped at the cores with a warning
/// ([`okr_linalg::threads::effective_threads`]).
pub fn set_threads(threads: Option<usize>) -> Result<()> {
    if let Some(t) = threads {
        if t == 0 {
            bail!("invalid --threads 0: expected at least 1");
        }
        let (t, capped) = okr_linalg::threads::effective_threads(t);
        if let Some(cap) = capped {
            eprintln!("okr: warning: --threads: {cap}");
        }
        rayon::ThreadPoolBuilder::new().num_threads(t).build_global().context("cannot configure the thread pool")?;
    }
    Ok(())
}
