//! Model files: every fitted estimator saved with the metadata a reader
//! needs to use it (label names, input width, index base, standardization).
//!
//! A model file is
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `OKRMODEL` |
//! | 4 | format version, little-endian `u32` ([`FORMAT_VERSION`]) |
//! | 8 | body length in bytes, little-endian `u64` |
//! | 4 | CRC-32 (IEEE) of the body, little-endian `u32` |
//! | body | [`SavedModel`] encoded with postcard |
//!
//! Reading checks, in order: the magic, the version (a newer file says
//! "written by a newer okr (format N, this okr reads up to M)"), the length
//! (a truncated file or trailing bytes are rejected), the checksum, the
//! postcard decoding (which must use the whole body), then every invariant
//! prediction relies on ([`Validate`]: indices in range, sorted CSR rows,
//! consistent shapes, finite numbers, the metadata against the model). Any
//! failure after the version is [`Error::Corrupt`], displayed as one line
//! `corrupt model file: <what>`; a file that loads is safe to predict with.
//!
//! The layout of the body follows the estimators' fields, so any change to a
//! persisted type must bump [`FORMAT_VERSION`]: the golden files under
//! `tests/fixtures/` (one per [`Model`] variant, rewritten only with
//! `OKR_BLESS=1`) are loaded by the tests and must re-encode to the same
//! bytes, so a change without a bump fails.
//!
//! Persistence is always compiled in: every estimator derives serde already
//! (its parameters and kernels are serde values), and the only additions are
//! postcard and a CRC.
//!
//! # Example
//! ```
//! use okr_estimators::Fit;
//! use faer::Mat;
//! use okr_estimators::persist::{Model, ModelInfo, SavedModel};
//! use okr_estimators::Iokr;
//! use okr_kernels::{DenseRows, Features, Gaussian, KernelSpec, LabelSets, Linear};
//! let x = Features::from(DenseRows::new(Mat::from_fn(6, 2, |i, j| (i * 3 + j) as f64 / 7.0))?);
//! let y = LabelSets::new(3, vec![vec![0], vec![1], vec![0, 2], vec![2], vec![1], vec![0]])?;
//! let kx = KernelSpec::from(Gaussian::new(0.5)?);
//! let model = Iokr::params(kx, KernelSpec::from(Linear)).lambda(1e-2).fit(&x, &y)?;
//! let mut info = ModelInfo::new(2, 3);
//! info.label_names = vec!["a".into(), "b".into(), "c".into()];
//! let saved = SavedModel::new(Model::Iokr(model), info)?;
//! let bytes = saved.to_bytes()?;
//! let back = SavedModel::from_bytes(&bytes)?;
//! assert_eq!(back.to_bytes()?, bytes);
//! assert_eq!(back.model.name(), "iokr");
//! let mut bad = bytes.clone();
//! bad.push(0);
//! assert!(SavedModel::from_bytes(&bad).unwrap_err().to_string().starts_with("corrupt model file"));
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod check;
mod describe;
mod format;
mod gram;
mod model;
mod outputs;
mod probe;
mod spec;

use std::path::{Path, PathBuf};

use okr_kernels::Standardizer;
use serde::{Deserialize, Serialize};

pub(crate) use check::{
    Check, check_params, cholesky, ensure, finite, finite_slice, grouping, indices, kernel_fits, matrix, rows,
};
pub use check::{MAX_WL_ITERATIONS, StoredKernel};
pub use format::{FORMAT_VERSION, MAGIC, OLDEST_READ_VERSION};
pub use gram::{GramModel, SavedGramSurrogate};
pub use model::{Model, OutputKind, SavedSurrogate};
pub use okr_io::atomic::{remove_temporary_files, write_atomic};
pub use outputs::{
    GramGraphModel, GramOutputModel, GramRankingModel, GramVectorModel, GraphModel, OutputModel, RankingModel,
    SavedOutputSurrogate, SavedVectorSurrogate, VectorModel,
};
#[doc(hidden)]
pub use probe::{fuzz_model_file, probe};
pub use spec::EstimatorSpec;

/// Why a deserialized structure cannot be used: one line naming the part
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks every invariant that predicting with a deserialized value relies
/// on (the checks a constructor or `fit` guarantees), so that a model that
/// passes never panics or reads out of bounds.
pub trait Validate {
    /// `Ok` when the value is usable, otherwise what is wrong.
    ///
    /// # Errors
    /// [`Invalid`] naming the first inconsistency.
    fn validate(&self) -> std::result::Result<(), Invalid>;
}

/// Errors of reading and writing model files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes do not start with the model file magic.
    #[error("not an okr model file (no OKRMODEL header; model files are written by `okr fit`)")]
    NotAModel,
    /// The file's format is newer than this okr reads.
    #[error("written by a newer okr (format {found}, this okr reads up to {supported})")]
    NewerFormat {
        /// The file's format version.
        found: u32,
        /// The newest version this okr reads.
        supported: u32,
    },
    /// The file's format is older than this okr reads.
    #[error("written by an older okr (format {found}, this okr reads formats {supported} and newer): refit the model")]
    OlderFormat {
        /// The file's format version.
        found: u32,
        /// The oldest version this okr reads.
        supported: u32,
    },
    /// The file is damaged or inconsistent.
    #[error("corrupt model file: {0}")]
    Corrupt(String),
    /// The model cannot be encoded (for example inconsistent metadata).
    #[error("cannot save the model: {0}")]
    Encode(String),
    /// Reading or writing the file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Result type of model files.
pub type Result<T> = std::result::Result<T, Error>;

/// How feature indices of the training file were numbered (svmlight files
/// number features from 1 by default, or from 0), so that test files are read
/// the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexBase {
    /// The first feature is index 0.
    ZeroBased,
    /// The first feature is index 1.
    OneBased,
}

/// What a model file records besides the estimator.
///
/// `n_features` and `n_labels` are checked against the model; `label_names`
/// is empty (labels are numbered) or has one name per label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelInfo {
    /// okr version that wrote the file.
    pub okr_version: String,
    /// Number of input features.
    pub n_features: usize,
    /// Number of labels (outputs of the label-set and label-score models;
    /// for autoencoders, the labels of the training file, which they ignore).
    pub n_labels: usize,
    /// One name per label, or none.
    pub label_names: Vec<String>,
    /// Feature numbering of the training file, when it numbered features (svmlight).
    pub index_base: Option<IndexBase>,
    /// Standardization applied to dense inputs before the model (sparse
    /// inputs carry it as Gaussian feature weights instead).
    pub standardizer: Option<Standardizer>,
    /// Seed given to the fit.
    pub seed: u64,
    /// Wall-clock seconds of the fit.
    pub fit_seconds: f64,
}

/// Longest string of the metadata (a version, a label name).
const MAX_NAME_BYTES: usize = 4096;

/// Largest feature or label count a model file may declare: the bound of
/// okr-eval's readers (`MAX_DIMENSION`), so that a crafted width cannot make
/// prediction allocate per-feature arrays beyond any real data set's.
pub const MAX_WIDTH: usize = 1 << 24;

impl ModelInfo {
    /// Metadata for a model on `n_features` inputs and `n_labels` labels,
    /// written by this okr; no label names, index base or standardization.
    pub fn new(n_features: usize, n_labels: usize) -> Self {
        Self {
            okr_version: env!("CARGO_PKG_VERSION").to_string(),
            n_features,
            n_labels,
            label_names: Vec::new(),
            index_base: None,
            standardizer: None,
            seed: 0,
            fit_seconds: 0.0,
        }
    }

    /// The name of label `j`: its given name, or `j` written out.
    pub fn label_name(&self, j: usize) -> String {
        self.label_names.get(j).cloned().unwrap_or_else(|| j.to_string())
    }
}

impl Validate for ModelInfo {
    fn validate(&self) -> std::result::Result<(), Invalid> {
        ensure(self.n_features <= MAX_WIDTH && self.n_labels <= MAX_WIDTH, || {
            format!("{} features and {} labels (at most {MAX_WIDTH} each)", self.n_features, self.n_labels)
        })?;
        ensure(self.okr_version.len() <= MAX_NAME_BYTES, || "okr version string too long".into())?;
        ensure(self.label_names.is_empty() || self.label_names.len() == self.n_labels, || {
            format!("{} label names for {} labels", self.label_names.len(), self.n_labels)
        })?;
        ensure(self.label_names.iter().all(|n| n.len() <= MAX_NAME_BYTES), || "label name too long".into())?;
        ensure(self.fit_seconds.is_finite() && self.fit_seconds >= 0.0, || {
            format!("fit time {} s is not a finite non-negative number", self.fit_seconds)
        })?;
        if let Some(st) = &self.standardizer {
            ensure(st.n_features() == self.n_features, || {
                format!("standardizer of {} features for {} features", st.n_features(), self.n_features)
            })?;
        }
        Ok(())
    }
}

/// A fitted model with its metadata: what a model file holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedModel {
    /// The metadata.
    pub info: ModelInfo,
    /// The fitted estimator.
    pub model: Model,
    /// The recipe the model was fitted from (one line of JSON, written by
    /// the `okr` crate's recipe layer; format 8 and newer), encoded after
    /// the model (see [`to_bytes`](Self::to_bytes)).
    #[serde(skip)]
    recipe: Option<String>,
}

/// Longest recipe a model file stores.
const MAX_RECIPE_BYTES: usize = 1 << 24;

impl Validate for SavedModel {
    fn validate(&self) -> std::result::Result<(), Invalid> {
        self.info.validate()?;
        self.model.validate()?;
        if let Some(d) = self.model.input_width() {
            ensure(d == self.info.n_features, || {
                format!("the model reads {d} features, its metadata says {}", self.info.n_features)
            })?;
        }
        if let Some(l) = self.model.output_width() {
            ensure(l == self.info.n_labels, || {
                format!("the model has {l} labels, its metadata says {}", self.info.n_labels)
            })?;
        }
        if self.info.standardizer.is_some() {
            ensure(self.model.input_width().is_some(), || "a standardizer on a model without input features".into())?;
        }
        Ok(())
    }
}

impl SavedModel {
    /// Pairs a model with its metadata, checking that they agree.
    ///
    /// # Errors
    /// [`Error::Encode`] when the metadata contradicts the model (widths,
    /// label names) or the model is inconsistent.
    pub fn new(model: Model, info: ModelInfo) -> Result<Self> {
        let saved = Self { info, model, recipe: None };
        saved.validate().map_err(|e| Error::Encode(e.0))?;
        Ok(saved)
    }

    /// The model with the recipe it was fitted from (one line of JSON).
    pub fn with_recipe(mut self, recipe: Option<String>) -> Self {
        self.recipe = recipe;
        self
    }

    /// The recipe the model was fitted from, when it was stored (models
    /// written before format 8, or fitted without the recipe layer, have none).
    pub fn recipe(&self) -> Option<&str> {
        self.recipe.as_deref()
    }

    /// The model file's bytes (header and body).
    ///
    /// # Errors
    /// [`Error::Encode`] if postcard cannot encode the model.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut body = postcard::to_stdvec(self).map_err(|e| Error::Encode(e.to_string()))?;
        let recipe = postcard::to_stdvec(&self.recipe).map_err(|e| Error::Encode(e.to_string()))?;
        body.extend_from_slice(&recipe);
        Ok(format::seal(&body))
    }

    /// Reads and checks a model file's bytes.
    ///
    /// # Errors
    /// [`Error::NotAModel`], [`Error::NewerFormat`], [`Error::OlderFormat`],
    /// or [`Error::Corrupt`] for a damaged or inconsistent file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let body = format::open(bytes)?;
        let (mut saved, mut rest): (SavedModel, &[u8]) =
            postcard::take_from_bytes(body).map_err(|e| Error::Corrupt(format!("cannot decode the body: {e}")))?;
        if format::version(bytes) >= format::RECIPE_VERSION {
            let (recipe, after): (Option<String>, &[u8]) = postcard::take_from_bytes(rest)
                .map_err(|e| Error::Corrupt(format!("cannot decode the recipe: {e}")))?;
            if recipe.as_ref().is_some_and(|r| r.len() > MAX_RECIPE_BYTES) {
                return Err(Error::Corrupt(format!("a recipe of more than {MAX_RECIPE_BYTES} bytes")));
            }
            (saved.recipe, rest) = (recipe, after);
        }
        if !rest.is_empty() {
            return Err(Error::Corrupt(format!("{} bytes of the body are not part of the model", rest.len())));
        }
        saved.validate().map_err(|e| Error::Corrupt(e.0))?;
        Ok(saved)
    }

    /// Writes the model file to `path` atomically with [`write_atomic`]: a
    /// temporary file in the same directory, renamed over `path` once
    /// complete (an existing file keeps its permissions; a new one gets the
    /// umask's; a device or pipe is written in place).
    ///
    /// # Errors
    /// [`Error::Encode`], or [`Error::Io`] naming the file.
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self.to_bytes()?;
        write_atomic(path, |w| std::io::Write::write_all(w, &bytes)).map_err(|source| Error::Io {
            action: "write",
            path: path.into(),
            source,
        })
    }

    /// Reads and checks the model file at `path`. The header is read first,
    /// so a path that is not a model file (a device such as `/dev/zero`, a
    /// pipe) is refused after its first bytes, and memory is bounded by the
    /// body length the header declares; a regular file whose size disagrees
    /// with its header is refused before its body is read.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file, or any error of [`from_bytes`](Self::from_bytes).
    pub fn load(path: &Path) -> Result<Self> {
        let io = |source| Error::Io { action: "read", path: path.into(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        let size = file.metadata().ok().filter(std::fs::Metadata::is_file).map(|m| m.len());
        let bytes = format::read_sealed(file, size, io)?;
        Self::from_bytes(&bytes)
    }
}
