//! Precomputed input Grams (`fit --input-gram`, `--input-gram-test`), spectra
//! (`fit --input-spectra` and its kernel flags) and
//! combined input kernels (`fit --input-kernels ... --mkl`). Reading and
//! checking Gram files is okr-kernels' (`read_train_gram`, `read_test_gram`),
//! the weights its `mkl` module's.

use std::path::Path;

use anyhow::{Context, Result, bail};
use okr_estimators::persist::Model;
use okr_kernels::GramRows;

use crate::cli::{EstimatorKind, FitArgs, KernelKind};

/// Checks `--input-gram`, `--input-kernels` and `--mkl` against the other flags.
pub(crate) fn check_flags(a: &FitArgs) -> Result<()> {
    let estimator = a.estimator.name();
    let kernel_flags = crate::recipe::spectra_kernel_flags(&a.spectra_kernel);
    if a.input_spectra.is_none()
        && let Some((flag, _)) = kernel_flags.iter().find(|(_, g)| *g)
    {
        bail!("{flag} applies with --input-spectra only (the probability product kernel of MS/MS spectra)");
    }
    let replaced = match (&a.input_gram, &a.input_spectra) {
        (Some(_), _) => Some(("--input-gram", "the Gram replaces the input kernel and features")),
        (None, Some(_)) => Some(("--input-spectra", "the spectra and their kernel replace the features")),
        (None, None) => None,
    };
    if let Some((source, why)) = replaced {
        let given = [
            ("--input-kernels", a.input_kernels.is_some()),
            ("--input-kernel", a.input_kernel != KernelKind::Gaussian),
            ("--input-gamma", a.gamma.is_some()),
            ("--input-sigma2", a.sigma2.is_some()),
            ("--degree", a.degree.is_some()),
            ("--coef0", a.coef0.is_some()),
            ("--standardize", a.standardize),
            ("--no-standardize", a.no_standardize),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            bail!("{flag} does not apply with {source} ({why})");
        }
    }
    if let Some(list) = &a.input_kernels {
        if matches!(a.estimator, EstimatorKind::Leml | EstimatorKind::Kae | EstimatorKind::K2ae) {
            bail!("--input-kernels does not apply to --estimator {estimator}");
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
    match (model.gram_n_train(), gram, input) {
        (Some(_), None, _) => bail!(
            "{} was fitted on a precomputed Gram (--input-gram or --input-spectra): give the test x train Gram with \
             --input-gram-test (of spectra: okr gram -i TEST --columns TRAIN with the kernel okr info shows)",
            model_path.display()
        ),
        (Some(_), Some(_), _) => Ok(()),
        (None, Some(_), _) => bail!(
            "--input-gram-test applies to models fitted with --input-gram; {} ({}) was fitted on features",
            model_path.display(),
            model.name()
        ),
        (None, None, None) => bail!("--input is required: {} reads features", model_path.display()),
        (None, None, Some(_)) => Ok(()),
    }
}
