//! The interface between okr's estimators and its decoders, so that a
//! decoder needs no estimator.
//!
//! A fitted kernel-output estimator predicts, for a batch of inputs, a
//! coefficient matrix $C$ `(n_test, n_atoms)` over an output basis whose atoms
//! $a_j$ are known combinations of training outputs. A decoder scores a
//! candidate $c$ by
//! $$\|h(x_t) - \psi(c)\|^2 - \|h(x_t)\|^2 = k(c, c) - 2 \sum_j C_{tj} \langle a_j, \psi(c)\rangle,$$
//! which is all [`SurrogateModel`] exposes. okr-estimators implements it for
//! every estimator and re-exports every item here at its old path
//! (`okr_estimators::{Error, Result, SurrogateModel, LinearExpansion, KernelExpansion}`,
//! `okr_estimators::core::{AtomGram, Atoms, InputMap}`,
//! `okr_estimators::iokr::IokrPath`,
//! `okr_estimators::select::{FoldScorer, GridSearchResult, LooProducts}`,
//! `okr_estimators::partition::PartitionError`); okr-decode depends on this
//! crate only.
//!
//! - [`SurrogateModel`], and [`LinearExpansion`] for models whose
//!   coefficients are $C = K_x(x, X_e)\,M$ (a decoder may then fold the
//!   candidates into $M$ first).
//! - [`KernelExpansion`]: the structure of a fitted kernel-output model
//!   (input map, atoms); implementing it gives the model its
//!   [`SurrogateModel`] (one blanket impl, here because the orphan rule
//!   puts it beside the trait).
//! - [`Coordinates`] and [`CoordinateBasis`]: coordinates of outputs in an
//!   output basis fitted from training outputs alone (okr-estimators'
//!   `OutputBasis`), so that coordinates predicted by any model decode.
//! - [`Error`] / [`Result`]: the estimators' error, here so that a
//!   [`SurrogateModel`] implementation and its callers share one error type.
//! - [`IokrPath`], [`LooProducts`], [`FoldScorer`], [`GridSearchResult`]: the
//!   IOKR regularization path (one eigendecomposition of $K_x$ for every
//!   $\lambda$), its exact leave-one-out predictions and the grid-search
//!   interface, which okr-decode's decoded model selection (`okr_decode::select`)
//!   builds on.
//! - [`progress`]: one observer of long computations (solver iterations,
//!   tuning grids, decodes), which the front doors show.
#![warn(missing_docs)]

mod coordinates;
mod error;
mod expansion;
mod linear;
mod loo;
mod path;
pub mod progress;
mod select;
mod surrogate;

pub use coordinates::{CoordinateBasis, Coordinates};
pub use error::{Error, PartitionError, Result};
pub use expansion::{
    AtomGram, Atoms, InputMap, KernelExpansion, projected_atom_products_into, projected_coefficients_into, tile_rows,
};
pub use linear::LinearExpansion;
pub use loo::LooProducts;
pub use path::IokrPath;
pub use select::{FoldScorer, GridCell, GridSearchResult, check_folds, check_grid, search_median};
pub use surrogate::{RKHS_ERROR_TILE_BYTES, SurrogateModel};

/// The crate README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
