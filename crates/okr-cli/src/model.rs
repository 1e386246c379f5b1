//! Model files, in okr-estimators' format ([`okr_estimators::persist`]):
//! written with [`okr_eval::write_atomic`] (a complete temporary file renamed
//! over the target, which keeps the permissions of a file it replaces and
//! creates a new one under the umask), read and checked by the library.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use okr_estimators::persist::{self, IndexBase, Model, ModelInfo, SavedModel};
use okr_eval::dataset::Names;
use okr_eval::{Dataset, Features};
use okr_kernels::{LabelSets, Standardizer};

use crate::config::Shape;

/// Writes the model file atomically.
pub fn save(saved: &SavedModel, path: &Path) -> Result<()> {
    let bytes = saved.to_bytes()?;
    okr_eval::write_atomic(path, |w| w.write_all(&bytes))?;
    Ok(())
}

/// Reads and checks a model file; errors name the file once.
pub fn load(path: &Path) -> Result<SavedModel> {
    SavedModel::load(path).map_err(|e| match e {
        persist::Error::Io { .. } => anyhow::Error::new(e),
        e => anyhow::Error::new(e).context(path.display().to_string()),
    })
}

/// The metadata of a model fitted on `data`.
pub fn info(data: &Dataset, index_base: Option<IndexBase>, standardizer: Option<Standardizer>, seed: u64) -> ModelInfo {
    let mut info = ModelInfo::new(data.n_features(), data.n_labels());
    if let Names::Given(names) = &data.label_names {
        info.label_names = names.clone();
    }
    info.index_base = index_base;
    info.standardizer = standardizer;
    info.seed = seed;
    info
}

/// Shape of the data the model expects.
pub fn shape(saved: &SavedModel) -> Shape {
    Shape { n_features: saved.info.n_features, n_labels: saved.info.n_labels }
}

/// Shape of the input files the model reads: vector-output models read
/// features alone (their outputs are files of their own).
pub fn input_shape(saved: &SavedModel) -> Shape {
    match saved.model {
        Model::Vectors(_) | Model::Graphs(_) | Model::Rankings(_) => {
            Shape { n_features: saved.info.n_features, n_labels: 0 }
        }
        _ => shape(saved),
    }
}

/// Whether the model is a kernel autoencoder (`okr encode`, not `predict` / `eval`).
pub fn is_autoencoder(model: &Model) -> bool {
    matches!(model, Model::Kae(_) | Model::K2ae(_))
}

/// The distinct training label sets, in first-occurrence order (none for
/// models that decode no candidates).
pub fn default_candidates(saved: &SavedModel) -> LabelSets {
    match saved.model.label_candidates() {
        Some(c) => c.clone(),
        None => LabelSets::new(saved.info.n_labels, Vec::new()).expect("no sets"),
    }
}

/// The names of the model's labels: its own, or `label_<j>`.
pub fn label_names(info: &ModelInfo) -> Vec<String> {
    if info.label_names.len() == info.n_labels {
        info.label_names.clone()
    } else {
        (0..info.n_labels).map(|j| format!("label_{j}")).collect()
    }
}

/// The inputs the model reads: the file's features, standardized when the
/// model was fitted on standardized dense features (sparse models carry it
/// in their kernel's feature weights).
pub fn inputs<'a>(saved: &SavedModel, data: &'a Dataset) -> Result<Cow<'a, Features>> {
    Ok(match &saved.info.standardizer {
        Some(st) => Cow::Owned(st.transform_features(&data.x)?),
        None => Cow::Borrowed(&data.x),
    })
}
