//! The model file: a magic header, a format version, then a postcard body.
//! Written to a temporary file in the target directory and renamed, so a
//! failed or interrupted `okr fit` never leaves a partial model.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use okr_estimators::kae::{K2aeOnRows, Kae};
use okr_estimators::leml::Leml;
use okr_estimators::{Iokr, Kde, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNorm};
use okr_eval::Standardizer;
use okr_kernels::{CsrRows, DenseRows, KernelSpec, LabelSets};
use serde::{Deserialize, Serialize};

/// First bytes of every okr model file.
const MAGIC: &[u8; 8] = b"OKRMODEL";
/// Version of the body layout; bumped on any incompatible change.
pub const FORMAT_VERSION: u32 = 2;

/// A fitted estimator on dense or sparse inputs with label-set outputs.
#[derive(Debug, Serialize, Deserialize)]
pub enum FittedModel {
    /// IOKR, dense input rows.
    IokrDense(Iokr<DenseRows, LabelSets, KernelSpec, KernelSpec>),
    /// IOKR, sparse (CSR) input rows.
    IokrSparse(Iokr<CsrRows, LabelSets, KernelSpec, KernelSpec>),
    /// Reduced-rank IOKR, dense input rows.
    ReducedRankDense(ReducedRankIokr<DenseRows, LabelSets, KernelSpec, KernelSpec>),
    /// Reduced-rank IOKR, sparse (CSR) input rows.
    ReducedRankSparse(ReducedRankIokr<CsrRows, LabelSets, KernelSpec, KernelSpec>),
    /// KDE, dense input rows.
    KdeDense(Kde<DenseRows, LabelSets, KernelSpec, KernelSpec>),
    /// KDE, sparse (CSR) input rows.
    KdeSparse(Kde<CsrRows, LabelSets, KernelSpec, KernelSpec>),
    /// LEML, a label-score model on sparse rows (dense files are converted).
    /// Appended last: files of the other variants keep their encoding.
    Leml(Leml),
    /// Trace-norm (LR-SELF), dense input rows. Appended: files of earlier variants still read.
    TraceNormDense(TraceNorm<DenseRows, LabelSets, KernelSpec, KernelSpec>),
    /// Trace-norm (LR-SELF), sparse (CSR) input rows.
    TraceNormSparse(TraceNorm<CsrRows, LabelSets, KernelSpec, KernelSpec>),
    // Autoencoders (appended: the variant indices above are unchanged, so
    // files of the same format version still read).
    /// Kernel autoencoder, dense input rows.
    KaeDense(Kae),
    /// K2AE, dense input rows.
    K2aeDense(K2aeOnRows<DenseRows, KernelSpec>),
    /// K2AE, sparse (CSR) input rows.
    K2aeSparse(K2aeOnRows<CsrRows, KernelSpec>),
    // Variants below were appended without a format bump: postcard encodes the
    // variant index, so files written before them still read the same.
    /// SIOKR / ISOKR / SISOKR, dense input rows.
    SketchedDense(SketchedIokr<DenseRows, LabelSets, KernelSpec, KernelSpec>),
    /// SIOKR / ISOKR / SISOKR, sparse (CSR) input rows.
    SketchedSparse(SketchedIokr<CsrRows, LabelSets, KernelSpec, KernelSpec>),
    /// Nystroem KRR, dense input rows.
    NystroemDense(Nystroem<DenseRows, LabelSets, KernelSpec, KernelSpec>),
    /// Nystroem KRR, sparse (CSR) input rows.
    NystroemSparse(Nystroem<CsrRows, LabelSets, KernelSpec, KernelSpec>),
}

impl FittedModel {
    /// `(requested, used)` rank of the low-rank estimators (the used rank is
    /// capped at the numerical rank); `None` for IOKR.
    pub fn ranks(&self) -> Option<(usize, usize)> {
        match self {
            Self::IokrDense(_) | Self::IokrSparse(_) => None,
            Self::ReducedRankDense(m) => Some((m.requested_rank(), m.rank())),
            Self::ReducedRankSparse(m) => Some((m.requested_rank(), m.rank())),
            Self::KdeDense(m) => Some((m.requested_rank(), m.rank())),
            Self::KdeSparse(m) => Some((m.requested_rank(), m.rank())),
            Self::Leml(m) => Some((m.fitted_params().rank(), m.fitted_params().rank())),
            Self::TraceNormDense(m) => Some((m.params_used().rank(), m.n_atoms())),
            Self::TraceNormSparse(m) => Some((m.params_used().rank(), m.n_atoms())),
            Self::KaeDense(_) | Self::K2aeDense(_) | Self::K2aeSparse(_) => None,
            Self::SketchedDense(_) | Self::SketchedSparse(_) | Self::NystroemDense(_) | Self::NystroemSparse(_) => None,
        }
    }

    /// Whether the model is a kernel autoencoder (`okr encode`, not `predict` / `eval`).
    pub fn is_autoencoder(&self) -> bool {
        matches!(self, Self::KaeDense(_) | Self::K2aeDense(_) | Self::K2aeSparse(_))
    }
}

/// Everything `okr predict` / `okr eval` need besides the test file.
#[derive(Debug, Serialize, Deserialize)]
pub struct ModelFile {
    /// okr version that wrote the file.
    pub okr_version: String,
    /// Estimator name (kebab-case, as in result records).
    pub estimator: String,
    /// Number of input features.
    pub n_features: usize,
    /// Number of labels.
    pub n_labels: usize,
    /// Seed given to `okr fit`.
    pub seed: u64,
    /// Wall-clock seconds of the fit (Gram + factorization).
    pub fit_seconds: f64,
    /// Standardization of dense inputs (sparse inputs carry it in the kernel weights).
    pub standardizer: Option<Standardizer>,
    /// The fitted estimator.
    pub model: FittedModel,
}

impl ModelFile {
    /// Writes the model atomically (temporary file + rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        let body = postcard::to_stdvec(self).context("cannot encode the model")?;
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        let write = |f: &mut std::fs::File| -> std::io::Result<()> {
            f.write_all(MAGIC)?;
            f.write_all(&FORMAT_VERSION.to_le_bytes())?;
            f.write_all(&body)?;
            f.sync_all()
        };
        write(tmp.as_file_mut()).with_context(|| format!("cannot write {}", path.display()))?;
        // Temporary files are private (0600); a model is an ordinary file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .with_context(|| format!("cannot set permissions of {}", path.display()))?;
        }
        tmp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }

    /// Reads and checks a model file.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            bail!("{} is not an okr model file (written by `okr fit`)", path.display());
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            bail!(
                "{} has model format version {version}; this okr reads version {FORMAT_VERSION} (refit the model)",
                path.display()
            );
        }
        postcard::from_bytes(&bytes[12..]).with_context(|| format!("{} is corrupt or truncated", path.display()))
    }
}
