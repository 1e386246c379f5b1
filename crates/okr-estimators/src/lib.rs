//! Output kernel regression estimators.
//!
//! Every kernel-output estimator learns $h: \mathcal X \to \mathcal H_Y$, the
//! RKHS of an output kernel, and exposes its prediction through
//! [`SurrogateModel`]: for a batch of inputs, a coefficient matrix `C`
//! `(n_test, n_atoms)` over an output basis whose atoms are known
//! combinations of training outputs. Decoders (okr-decode) only need that.
//!
//! Estimators follow the params -> checked params -> fitted model pattern:
//! `Iokr::params(kx, ky).lambda(1e-3).fit(&x, &y)?` checks the parameters
//! ([`ParamGuard`]) and returns the fitted [`Iokr`]; [`ReducedRankIokr`]
//! projects it on a learned rank-$p$ output subspace.
//!
//! Explicit-feature multi-label models ([`leml`]: LEML, binary relevance,
//! CPLST) give label scores through [`ScoreModel`] instead.
#![warn(missing_docs)]

pub mod core;
mod error;
pub mod iokr;
pub mod kae;
pub mod kde;
pub mod leml;
pub mod nystroem;
pub mod nystroem_rr;
mod param_guard;
pub mod persist;
pub mod reduced_rank;
mod score;
pub mod select;
pub mod sketch;
pub mod sketched;
mod stream;
mod surrogate;
pub mod trace_norm;

pub use crate::core::{Fit, KernelExpansion};
pub use error::{Error, Result};
pub use iokr::{Iokr, IokrParams, IokrValidParams};
pub use kae::{K2ae, Kae, KaeParams, KaeValidParams};
pub use kde::{Kde, KdeParams, KdeValidParams};
pub use nystroem::{Nystroem, NystroemParams, NystroemValidParams};
pub use nystroem_rr::{NystroemReducedRank, NystroemReducedRankParams, NystroemReducedRankValidParams};
pub use param_guard::ParamGuard;
pub use reduced_rank::{ReducedRankIokr, ReducedRankParams, ReducedRankValidParams};
pub use score::ScoreModel;
pub use sketched::{SketchedIokr, SketchedIokrParams, SketchedIokrValidParams};
pub use surrogate::SurrogateModel;
pub use trace_norm::{TraceNorm, TraceNormParams, TraceNormSolver, TraceNormValidParams};
