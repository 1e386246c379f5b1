//! Data, metrics and splits for okr's experiments.
//!
//! - [`Dataset`]: features ([`Features`]: dense or CSR rows), label sets and names;
//!   every reader returns one.
//! - [`readers`]: Mulan ARFF ([`read_arff`]), svmlight / libsvm ([`read_svmlight`]),
//!   Extreme Classification ([`read_xc`]) and CSV ([`read_csv`]) readers, with writers
//!   that round-trip; MGF ([`read_mgf`]) and MSP ([`read_msp`]) spectral libraries
//!   as [`SpectrumLibrary`]. Parse errors name the file, the line and what was expected.
//! - [`predictions`]: prediction files of label sets (label indices, 0/1
//!   indicator, CSV, JSON Lines), written and read back.
//! - [`output_readers`]: binary fingerprints (dense 0/1 or the indices of set
//!   bits) as label sets, and dense output vectors.
//! - [`Standardizer`]: per-feature mean / population std fitted on training data;
//!   sparse data is scaled, never densified.
//! - [`metrics`]: example-based, micro and macro F1, Hamming loss, precision@k,
//!   per-instance AUC, top-k accuracy, RKHS and RBF losses, and the JSON
//!   [`MetricRecord`]s of `docs/results/`.
//! - [`report`]: the metrics of a label-set prediction as one record
//!   ([`report::LabelSetReport`], what `okr eval` prints).
//! - [`output_metrics`]: exact match of graph outputs, Kendall tau and pairwise
//!   disagreement of ranking outputs.
//! - [`retrieval_metrics()`]: top-1/5/10/20 accuracy and mean / median rank of the
//!   true candidate of per-query candidate sets, ties counted both ways.
//! - [`probe`]: a least-squares linear classifier on codes ([`probe::LinearProbe`]), for separability.
//! - [`split`]: seeded [`train_test_split`], [`KFold`], [`ShuffleSplit`].
//! - [`data_dir()`] / [`find_mulan`]: where the benchmark files are (`OKR_DATA_DIR`, a checkout's
//!   `shared/data`, else the per-user data home; [`locate_data_dir`] says which).
//! - [`catalog`]: the benchmark data sets by name, their files and SHA-256
//!   checksums; with the `download` feature, their verified download.
//! - [`standin`]: seeded multi-label stand-in generators with the benchmark shapes;
//!   [`spectra_standin`]: a seeded metabolite-identification stand-in (spectra,
//!   fingerprints, formulas, candidate sets).
//!
//! # Example
//! ```
//! use okr_eval::{f1_samples, KFold, StandinPreset, Standardizer};
//! let (train, test) = StandinPreset::Emotions.spec().sizes(120, 40).generate()?;
//! let scaler = Standardizer::fit(&train.x)?;
//! let x = scaler.transform(train.x.as_dense().unwrap())?;
//! assert_eq!(x.n_features(), 72);
//! let folds = KFold::new(5).shuffle(0).split(train.n_samples())?;
//! assert_eq!(folds.len(), 5);
//! assert_eq!(f1_samples(&test.y, &test.y)?, 1.0);
//! Ok::<(), okr_eval::Error>(())
//! ```
#![warn(missing_docs)]

pub mod catalog;
pub mod data_dir;
pub mod dataset;
pub mod error;
pub mod fuzz;
pub mod label_metrics;
pub mod metrics;
pub mod output;
/// The row syntax of output files (label sets, fingerprints, vectors): [`okr_io::rows`].
pub use okr_io::rows;
pub mod output_metrics;
pub mod output_readers;
pub mod predictions;
pub mod probe;
pub mod ranking_metrics;
pub mod readers;
pub mod report;
pub mod retrieval_metrics;
pub mod score_metrics;
pub mod spectra_standin;
pub mod split;
pub mod standin;

pub use data_dir::{
    DataDir, DataDirInputs, DataDirSource, MULAN_DATASETS, data_dir, find_mulan, find_mulan_in, locate_data_dir,
    read_mulan, resolve_data_dir,
};
pub use dataset::{Dataset, Features};
pub use error::{Error, Result};
pub use label_metrics::{
    LabelScores, jaccard_samples, label_ranking_average_precision, per_label_scores, subset_accuracy,
};
pub use metrics::{
    MetricRecord, f1_macro, f1_micro, f1_samples, gaussian_rbf_loss, hamming_loss, instance_auc, mean_and_std_err,
    output_kernel_losses, precision_at_k, rbf_loss, read_records, rkhs_squared_error, top_k_accuracy, write_records,
};
pub use okr_kernels::{Standardizer, is_binary};
pub use output::{MAX_INPUT_BYTES, check_distinct_outputs, check_not_input, remove_temporary_files, write_atomic};
pub use output_readers::{read_fingerprints_dense, read_fingerprints_sparse, read_vectors};
pub use readers::{
    CsvHeader, DataFormat, LabelColumns, ModelInput, ModelShape, ReadOptions, SpectrumLibrary, SpectrumMetadata,
    SvmlightOptions, TuDataset, USPS_PIXELS, UspsImages, find_usps_in, read_arff, read_arff_for_model, read_csv,
    read_csv_for_model, read_data_file, read_data_file_for_model, read_indices, read_label_sets, read_mgf, read_msp,
    read_sample_weights, read_svmlight, read_svmlight_for_model, read_thresholds, read_tu, read_tu_graphs, read_usps,
    read_xc, read_xc_for_model, write_arff, write_csv, write_svmlight, write_xc,
};
pub use retrieval_metrics::{RankSummary, RetrievalMetrics, rank_summary, retrieval_metrics, top_k_rank_accuracy};
pub use score_metrics::hamming_loss_at;
pub use spectra_standin::{SpectraStandin, SpectraStandinSpec};
pub use split::{GroupKFold, KFold, ShuffleSplit, train_test_split};
pub use standin::{StandinPreset, StandinSpec};

/// The crate README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
