//! Decoders: from a [`SurrogateModel`](okr_surrogate::SurrogateModel)
//! prediction to structured outputs.
//!
//! [`CandidateDecoder`] solves
//! $$\hat y(x) = \arg\min_{c \in \mathcal C} \|h(x) - \psi(c)\|^2
//! = \arg\min_c\; k(c, c) - 2 \langle h(x), \psi(c) \rangle$$
//! over a candidate set, in tiles of test rows and candidates whose memory
//! stays under a budget, so any number of candidates works. Ties go to the
//! lowest candidate index. With [`Precision::F32`] the scores are an f32
//! GEMM and a short list per row is re-scored in f64, which gives the f64
//! decision except for near-ties within [`f32_margin`]. For models whose
//! coefficients are $C = K_x(x, X_e)\,M$ it multiplies the score chain
//! $K_x(x, X_e)\,M\,G$ in the order with fewer flops ([`ChainOrder`],
//! [`ChainCosts`]).
//!
//! [`per_query`] ranks each test point against its own candidate set
//! (retrieval), streamed from a documented file, and reports the rank of the
//! true candidate with ties counted optimistically and pessimistically.
//!
//! [`CoordinateDecoder`] decodes coordinates predicted by any model in an
//! output basis fitted from outputs alone (okr-estimators' `OutputBasis`),
//! with the same tiles, precision and tie rule.
#![warn(missing_docs)]

mod candidates;
mod chain;
mod coordinates;
mod error;
pub mod per_query;
mod precision;
pub mod ranking;
mod scan;
pub mod select;

pub use candidates::{CandidateDecoder, Decoded};
pub use chain::{ChainCosts, ChainOrder, ChainPlan, KERNEL_ENTRY_FLOPS_UNKNOWN, kernel_entry_flops};
pub use coordinates::CoordinateDecoder;
pub use error::{Error, Result};
pub use precision::{F32_SHORTLIST_EXTRA, Precision, f32_margin};

/// The crate README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
