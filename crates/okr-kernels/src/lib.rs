//! Kernels, input containers and Gram blocks for okr.
//!
//! - Containers ([`Rows`]): [`DenseRows`] (an `(n_samples, n_features)` matrix),
//!   [`CsrRows`] (compressed sparse rows) and [`LabelSets`] (binary label sets,
//!   seen as 0/1 vectors over `n_labels` labels).
//! - The [`Kernel`] trait: pointwise evaluation plus a block method that fills
//!   a Gram block for two row sets. Dense and sparse kernels compute blocks
//!   through GEMM / sparse products (`||x||^2 + ||y||^2 - 2 X Y^T`), never pair
//!   by pair.
#![warn(missing_docs)]

mod containers;
mod error;
mod traits;

pub use containers::{CsrRows, DenseRows, LabelSets};
pub use error::{Error, Result};
pub use traits::{Kernel, Rows};
