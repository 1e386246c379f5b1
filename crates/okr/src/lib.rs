//! # okr
//!
//! Output kernel regression and surrogate structured prediction: the crate
//! users depend on. It re-exports okr's focused crates
//! ([`kernels`], [`linalg`], [`surrogate`], [`estimators`], [`decode`],
//! [`eval`]) and holds the **recipe layer**: every rule between a request
//! and a fitted model, written once for every front door (the `okr`
//! command-line tool, the Python package, the experiments).
//!
//! - [`catalog`]: the estimators, their names and aliases, and which
//!   hyper-parameters each takes;
//! - [`defaults`]: every default value, with the reason for each;
//! - [`Recipe`]: input side x estimator x output side x runtime options, a
//!   serde value stored in every model file;
//! - [`resolve`]: the data-dependent defaults (kernel widths, the ridge
//!   chosen by leave-one-out, standardization) and size caps with their
//!   warnings;
//! - [`embed`]: output embeddings fitted from outputs alone, whose
//!   coordinates any model can regress and okr decodes;
//! - [`fit()`](fit::fit): a recipe and training data to a fitted model and
//!   the resolved recipe, for every estimator (LEML through
//!   [`label_scores`], the autoencoders through [`fit_codes`]);
//! - [`tune`](mod@tune): the Gaussian width and ridge by cross-validation
//!   (IOKR's regularization path and closed forms), optionally with groups;
//!   on a precomputed Gram the ridge and output width; scored by the
//!   decoded outputs or by the retrieval rank of true candidates.
#![doc = include_str!("../README.md")]

pub mod autoencoders;
pub mod catalog;
pub mod defaults;
pub mod embed;
mod error;
pub mod fit;
pub mod label_scores;
pub mod recipe;
pub mod resolve;
pub mod tune;

pub use autoencoders::{fit_codes, fit_codes_from};
pub use catalog::{Estimator, Family, Param};
pub use error::{Error, Result};
pub use fit::{
    Fitted, TrainOutputs, fit, fit_from, fit_gram, fit_gram_weighted, fit_spectra, fit_spectra_weighted, fit_weighted,
};
pub use recipe::{
    AnchorsRecipe, EstimatorRecipe, InputRecipe, KernelRecipe, Mkl, OutputKind, OutputRecipe, Recipe, Runtime,
    SpectraKernelRecipe, Standardize,
};

pub use okr_decode as decode;
pub use okr_estimators as estimators;
pub use okr_eval as eval;
pub use okr_kernels as kernels;
pub use okr_linalg as linalg;
pub use okr_surrogate as surrogate;
