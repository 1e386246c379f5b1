//! What every estimator shares: the [`Fit`] trait (checked parameters fit,
//! and unchecked ones through [`ParamGuard`](crate::ParamGuard)), the
//! parameter checks (`checks`), and [`KernelExpansion`], the structure of
//! a fitted kernel-output model from which its
//! [`SurrogateModel`](crate::SurrogateModel) is derived once.

pub(crate) mod checks;
mod expansion;
mod fit;
mod linear;

pub use expansion::{AtomGram, Atoms, InputMap, KernelExpansion};
pub(crate) use expansion::{projected_atom_products_into, projected_coefficients_into};
pub use fit::Fit;
pub use linear::LinearExpansion;
