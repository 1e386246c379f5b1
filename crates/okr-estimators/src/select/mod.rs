//! Model selection for IOKR: K-fold (or repeated hold-out) search over kernel
//! widths and ridge values through the regularization path, and closed-form
//! leave-one-out / GCV for the squared loss in the output RKHS.
//!
//! Both searches rest on [`IokrPath`](crate::iokr::IokrPath): one
//! eigendecomposition $K_x = V\operatorname{diag}(s)V^\top$ per training split
//! serves every $\lambda$, so a grid of $n_\lambda$ ridges costs one
//! $O(n^3)$ decomposition plus $n_\lambda$ GEMMs.
//!
//! - [`GaussianIokrSearch`]: the folds are given by the caller (okr-eval's
//!   `KFold` or `ShuffleSplit`), the input kernel is Gaussian with
//!   $\gamma = c / \operatorname{median}\|x - x'\|^2$ over a grid of
//!   multipliers $c$, and a [`FoldScorer`] scores each validation prediction
//!   (decoding and a task metric live above this crate). Every fold score is
//!   kept in the [`GridSearchResult`].
//! - [`WidthLineSearch`]: coarse-to-fine over widths: a line search in
//!   $\log c$ that runs a grid search only on the widths it needs, merging
//!   the [`GridSearchResult`]s.
//! - [`LooProducts`]: exact leave-one-out predictions of IOKR (as inner
//!   products with atoms, to decode them) for any $\lambda$ from one
//!   eigendecomposition: leave-one-out of a task metric in closed form.
//! - [`LooPath`]: exact leave-one-out and generalized cross-validation errors
//!   of IOKR's squared loss in $\mathcal H_Y$ for a grid of $\lambda$, from one
//!   eigendecomposition of $K_x$ and the output Gram $K_y$.

mod kfold;
mod line_search;
mod loo;

pub use kfold::GaussianIokrSearch;
pub use line_search::{WidthLineSearch, log_neighbours};
pub use loo::{LooPath, LooResult, RkhsCriterion, rkhs_grid};
// Defined in okr-surrogate so that okr-decode can decode and score them
// without depending on the estimators.
pub use okr_surrogate::{FoldScorer, GridCell, GridSearchResult, LooProducts, search_median};
