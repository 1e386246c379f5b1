//! What every estimator shares: the [`Fit`] trait (checked parameters fit,
//! and unchecked ones through [`ParamGuard`](crate::ParamGuard)), the
//! parameter checks (`checks`), and [`KernelExpansion`], the structure of
//! a fitted kernel-output model from which its
//! [`SurrogateModel`](crate::SurrogateModel) is derived once.

pub(crate) mod checks;
mod fit;

pub use fit::{Fit, FitFrom, FitWeighted};
// The kernel expansion lives in okr-surrogate beside `SurrogateModel`, so
// that its blanket `SurrogateModel` impl satisfies the orphan rule.
pub use okr_surrogate::{AtomGram, Atoms, InputMap, KernelExpansion, LinearExpansion};
pub(crate) use okr_surrogate::{projected_atom_products_into, projected_coefficients_into};
