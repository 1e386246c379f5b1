//! Outputs beyond label sets (issue 17): `okr fit --output-kind fingerprint
//! | vector` ([`Model::Vectors`]); graphs and rankings are in `structured.rs`,
//! predict and eval on these models in `output_models.rs`. Fingerprints are
//! label sets whose labels are the bits, so their models are the label-set
//! models with a fingerprint kernel.

use std::path::Path;

use anyhow::{Context, Result, bail};
use okr::OutputKind;
use okr_eval::dataset::Names;
use okr_eval::{Dataset, read_vectors};
use okr_kernels::{DenseRows, Graphs, LabelSets, Rankings, Rows};

use crate::cli::{EstimatorKind, FingerprintFormat, FitArgs, OutputFileArgs, OutputKindFlag};
use crate::config::read_data;

/// Checks the output-kind flags of `okr fit` before any file is read.
pub fn check_fit(a: &FitArgs) -> Result<()> {
    super::structured::check_fit(a)?;
    let f = &a.output_file;
    let kind = a.output_kind;
    if kind == OutputKindFlag::Labels {
        if f.outputs.is_some() {
            bail!(
                "--outputs applies to --output-kind fingerprint, vector or graph (label sets are columns of --train)"
            );
        }
    } else {
        let name = format!("{kind:?}").to_lowercase();
        if matches!(a.estimator, EstimatorKind::Leml | EstimatorKind::Kae | EstimatorKind::K2ae) {
            bail!("--output-kind {name} needs a kernel-output estimator, not --estimator {}", a.estimator.name());
        }
        let Some(_) = &f.outputs else {
            if kind == OutputKindFlag::Ranking {
                return Ok(()); // the label-ranking --train file holds the rankings
            }
            bail!("--output-kind {name} needs --outputs FILE (the training outputs)")
        };
        if let Some(l) = a.data.label_count.filter(|&l| l > 0) {
            bail!("--output-kind {name} reads its outputs from --outputs: --train holds features only, not {l} labels");
        }
    }
    let fingerprint_flags = f.fingerprint_format != FingerprintFormat::Dense || f.n_bits.is_some();
    if fingerprint_flags && kind != OutputKindFlag::Fingerprint {
        bail!("--fingerprint-format and --n-bits apply to --output-kind fingerprint only");
    }
    if kind == OutputKindFlag::Fingerprint && f.fingerprint_format == FingerprintFormat::Sparse && f.n_bits.is_none() {
        bail!("--fingerprint-format sparse needs --n-bits N (the fingerprint length)");
    }
    Ok(())
}

/// Reads a fingerprint file as label sets of `n_bits` (when known: the
/// model's length; a `--n-bits` that differs from it is refused, not ignored).
pub fn read_fingerprints(path: &Path, f: &OutputFileArgs, n_bits: Option<usize>) -> Result<LabelSets> {
    if let (Some(model), Some(given)) = (n_bits, f.n_bits)
        && model != given
    {
        bail!("--n-bits {given} differs from the model's fingerprint length ({model} bits)");
    }
    let fp = match f.fingerprint_format {
        FingerprintFormat::Dense => okr_eval::read_fingerprints_dense(path)?,
        FingerprintFormat::Sparse => {
            let n = n_bits.or(f.n_bits).context("--fingerprint-format sparse needs --n-bits N")?;
            okr_eval::read_fingerprints_sparse(path, n)?
        }
    };
    match n_bits {
        Some(n) if fp.n_labels() != n && fp.n_rows() > 0 => {
            bail!("{}: fingerprints of {} bits, the model has {n}", path.display(), fp.n_labels())
        }
        _ => Ok(fp),
    }
}

/// Reads vectors of width `p` (when known).
pub(crate) fn read_vector_file(path: &Path, p: Option<usize>) -> Result<DenseRows> {
    let y = read_vectors(path)?;
    match p {
        Some(p) if y.n_features() != p => {
            bail!("{}: vectors of {} values, the model's have {p}", path.display(), y.n_features())
        }
        _ => Ok(y),
    }
}

/// Checks that an output file has a row per input row.
pub(crate) fn check_rows(path: &Path, n_out: usize, input: &Path, n: usize) -> Result<()> {
    if n_out != n {
        bail!("{}: {n_out} outputs for the {n} rows of {}", path.display(), input.display());
    }
    Ok(())
}

/// Training outputs read beside the training file (label sets and
/// fingerprints are the data set's label sets).
pub(crate) enum Owned {
    /// The label sets of the data set.
    Sets,
    /// Vectors of `--outputs`.
    Vectors(DenseRows),
    /// Graphs of the TU data set of `--outputs`.
    Graphs(Graphs),
    /// Rankings of the label-ranking `--train` file.
    Rankings(Rankings),
}

/// The training data of `okr fit` for outputs of `kind`: the features, and
/// the outputs (label sets in the data set, or read beside it).
pub(crate) fn training_data(a: &FitArgs, kind: OutputKind) -> Result<(Dataset, Owned)> {
    Ok(match kind {
        OutputKind::Labels => (read_data(&a.train, &a.data, None)?, Owned::Sets),
        OutputKind::Fingerprint => (fingerprint_data(a)?, Owned::Sets),
        OutputKind::Vector => {
            let (data, y) = vector_data(a)?;
            (data, Owned::Vectors(y))
        }
        OutputKind::Graph => {
            let (data, y) = super::structured::graph_data(a)?;
            (data, Owned::Graphs(y))
        }
        OutputKind::Ranking => {
            let (data, y) = super::structured::read_ranking_file(&a.train)?;
            (data, Owned::Rankings(y))
        }
    })
}

/// The features of `--train` and the output vectors of `--outputs`, a row each.
pub(crate) fn vector_data(a: &FitArgs) -> Result<(Dataset, DenseRows)> {
    let Some(path) = a.output_file.outputs.as_deref() else { bail!("--outputs FILE is required") };
    let data = read_data(&a.train, &crate::config::features_only(&a.data), None)?;
    let y = read_vector_file(path, None)?;
    check_rows(path, y.n_rows(), &a.train, data.n_samples())?;
    if y.n_features() == 0 {
        bail!("{}: the output vectors are empty", path.display());
    }
    Ok((data, y))
}

/// The features of `--train` with the fingerprints of `--outputs` as their
/// label sets (labels named `bit_0`, `bit_1`, ...).
pub(crate) fn fingerprint_data(a: &FitArgs) -> Result<Dataset> {
    let Some(path) = a.output_file.outputs.as_deref() else { bail!("--outputs FILE is required") };
    let mut data = read_data(&a.train, &crate::config::features_only(&a.data), None)?;
    let fp = read_fingerprints(path, &a.output_file, a.output_file.n_bits)?;
    check_rows(path, fp.n_rows(), &a.train, data.n_samples())?;
    data.label_names = Names::numbered("bit_", fp.n_labels());
    data.y = fp;
    Ok(data)
}

/// Candidates of a vector model: `--candidates` (vectors) or its distinct
/// training outputs `own`.
pub(crate) fn vector_candidates(own: &DenseRows, path: Option<&Path>) -> Result<DenseRows> {
    match path {
        Some(p) => read_vector_file(p, Some(own.n_features())),
        None => Ok(own.clone()),
    }
}
