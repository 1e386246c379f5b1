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
//!
//! Every fitted model saves to and loads from a checked model file
//! ([`persist`]). The matrix types (faer's [`Mat`], [`MatRef`], [`MatMut`],
//! [`Par`]), the rows types ([`Features`], [`DenseRows`], [`CsrRows`],
//! [`LabelSets`]) and the kernels are re-exported, so that this crate, with
//! okr-decode and okr-eval, is all a user needs:
//!
//! ```
//! use okr_estimators::{DenseRows, Features, Fit, Gaussian, Iokr, LabelSets, Linear, Mat, SurrogateModel};
//! let x = Features::from(DenseRows::new(Mat::from_fn(6, 2, |i, j| (i + 2 * j) as f64 / 5.0))?);
//! let y = LabelSets::new(3, vec![vec![0], vec![1, 2], vec![0], vec![2], vec![1], vec![0, 1]])?;
//! let model = Iokr::params(Gaussian::new(0.5)?, Linear).lambda(1e-2).fit(&x, &y)?;
//! assert_eq!(model.coefficients(&x)?.nrows(), 6);
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod core;
pub mod iokr;
pub mod kae;
pub mod kde;
pub mod leml;
pub mod nystroem;
pub mod nystroem_rr;
pub mod output_basis;
mod param_guard;
pub mod partition;
pub mod persist;
pub mod reduced_rank;
mod score;
pub mod select;
pub mod sketch;
pub mod sketched;
mod stream;
pub mod trace_norm;

pub use crate::core::checks::check_sample_weight;
pub use crate::core::{Fit, FitFrom, FitWeighted, KernelExpansion, LinearExpansion};
// What the public signatures take and return, so that a user crate needs no
// direct dependency on faer or okr-kernels.
pub use faer::{Mat, MatMut, MatRef, Par};
pub use iokr::{Iokr, IokrParams, IokrValidParams};
pub use kae::{K2ae, Kae, KaeParams, KaeValidParams};
pub use kde::{Kde, KdeParams, KdeValidParams};
pub use nystroem::{Nystroem, NystroemParams, NystroemValidParams};
pub use nystroem_rr::{NystroemReducedRank, NystroemReducedRankParams, NystroemReducedRankValidParams};
/// The whole of okr-kernels (graphs, precomputed Grams, combinators, MKL).
pub use okr_kernels as kernels;
pub use okr_kernels::{
    CsrRows, DenseRows, Features, Gaussian, GaussianTanimoto, Kernel, KernelSpec, LabelSets, Laplacian, Linear,
    Polynomial, Rows, Standardizer, Tanimoto,
};
pub use output_basis::{BasisKind, OutputBasis, OutputBasisParams, OutputBasisValidParams};
pub use param_guard::ParamGuard;
pub use reduced_rank::{ReducedRankIokr, ReducedRankParams, ReducedRankValidParams};
pub use score::ScoreModel;
pub use sketched::{SketchedIokr, SketchedIokrParams, SketchedIokrValidParams};
// The error and the surrogate interface live in okr-surrogate, which
// okr-decode depends on instead of this crate.
pub use okr_surrogate::{Error, Result, SurrogateModel};
pub use trace_norm::{TraceNorm, TraceNormParams, TraceNormSolver, TraceNormValidParams};

/// The crate README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
