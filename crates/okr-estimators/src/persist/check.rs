//! The checks the [`Validate`](super::Validate) impls are written with.

use faer::MatRef;
use okr_kernels::{GramRows, Graphs, KernelSpec, Precomputed, RankingKernel, Rankings, Rows, WlSubtree};
use okr_linalg::Cholesky;

use super::Invalid;
use crate::ParamGuard;

/// Result of a check.
pub(crate) type Check = Result<(), Invalid>;

/// `Err(message())` unless `ok`.
pub(crate) fn ensure(ok: bool, message: impl FnOnce() -> String) -> Check {
    if ok { Ok(()) } else { Err(Invalid(message())) }
}

/// Every entry of `m` is finite.
pub(crate) fn finite(what: &str, m: MatRef<'_, f64>) -> Check {
    ensure(m.col_iter().all(|c| c.iter().all(|v| v.is_finite())), || format!("{what} has a NaN or infinite entry"))
}

/// Every value is finite.
pub(crate) fn finite_slice(what: &str, v: &[f64]) -> Check {
    ensure(v.iter().all(|x| x.is_finite()), || format!("{what} has a NaN or infinite value"))
}

/// `m` is `(rows, cols)` with finite entries.
pub(crate) fn matrix(what: &str, m: MatRef<'_, f64>, rows: usize, cols: usize) -> Check {
    ensure((m.nrows(), m.ncols()) == (rows, cols), || {
        format!("{what} is {} x {}, expected {rows} x {cols}", m.nrows(), m.ncols())
    })?;
    finite(what, m)
}

/// Every index is below `bound`.
pub(crate) fn indices(what: &str, idx: &[usize], bound: usize) -> Check {
    match idx.iter().find(|&&i| i >= bound) {
        Some(&i) => Err(Invalid(format!("{what}: index {i} out of range (< {bound})"))),
        None => Ok(()),
    }
}

/// `map` has `n` entries, each below `n_groups`.
pub(crate) fn grouping(what: &str, map: &[usize], n: usize, n_groups: usize) -> Check {
    ensure(map.len() == n, || format!("{what} has {} entries for {n} samples", map.len()))?;
    indices(what, map, n_groups)
}

/// `r` has `n` rows.
pub(crate) fn rows<R: Rows>(what: &str, r: &R, n: usize) -> Check {
    ensure(r.n_rows() == n, || format!("{what} has {} rows, expected {n}", r.n_rows()))
}

/// `kernel` can be evaluated on rows like `r`: a Gaussian's feature weights
/// have one entry per feature.
pub(crate) fn kernel_fits<R: Rows>(what: &str, kernel: &KernelSpec, r: &R) -> Check {
    if let KernelSpec::WeightedSum(sum) = kernel {
        return sum.kernels().iter().try_for_each(|k| kernel_fits(what, k, r));
    }
    if let (KernelSpec::Gaussian(g), Some(d)) = (kernel, r.feature_dim())
        && let Some(w) = g.feature_weights()
    {
        return ensure(w.len() == d, || format!("{what} has {} feature weights for {d} features", w.len()));
    }
    Ok(())
}

/// An input kernel a saved model can hold on rows `R`, with the check that
/// it evaluates the rows the model keeps without a panic.
pub trait StoredKernel<R>: Clone {
    /// `Ok` when the kernel can be evaluated on `rows` (and on test rows of
    /// the model's width).
    ///
    /// # Errors
    /// [`Invalid`] naming `what`.
    fn check_rows(&self, what: &str, rows: &R) -> Check;
}

impl<R: Rows> StoredKernel<R> for KernelSpec {
    fn check_rows(&self, what: &str, rows: &R) -> Check {
        kernel_fits(what, self, rows)
    }
}

/// The rows kept by a Gram model must be training rows (a deserialized
/// [`GramRows`] did not go through its constructors).
impl StoredKernel<GramRows> for Precomputed {
    fn check_rows(&self, what: &str, rows: &GramRows) -> Check {
        rows.check_training_rows().map_err(|e| Invalid(format!("{what} rows: {e}")))
    }
}

/// Most WL relabelling rounds a saved model may ask for (each round costs a
/// pass over every node and edge of the graphs of a block; real uses take 1-10).
pub const MAX_WL_ITERATIONS: usize = 100;

/// The WL subtree kernel evaluates any graphs; its round count is bounded.
impl StoredKernel<Graphs> for WlSubtree {
    fn check_rows(&self, what: &str, _rows: &Graphs) -> Check {
        ensure(self.iterations() <= MAX_WL_ITERATIONS, || {
            format!("{what} has {} WL iterations (at most {MAX_WL_ITERATIONS})", self.iterations())
        })
    }
}

/// Ranking kernels evaluate rankings of any length; a Mallows width must be valid.
impl StoredKernel<Rankings> for RankingKernel {
    fn check_rows(&self, what: &str, _rows: &Rankings) -> Check {
        self.check().map_err(|e| Invalid(format!("{what}: {e}")))
    }
}

/// A factor of dimension `n` with finite entries and a positive diagonal.
pub(crate) fn cholesky(what: &str, c: &Cholesky, n: usize) -> Check {
    ensure(c.dim() == n, || format!("{what} has dimension {}, expected {n}", c.dim()))?;
    finite(what, c.l())?;
    ensure((0..n).all(|i| c.l()[(i, i)] > 0.0), || format!("{what} has a diagonal entry <= 0"))?;
    ensure(c.jitter().is_finite() && c.jitter() >= 0.0, || format!("{what} has an invalid jitter"))
}

/// The parameters pass their builder's checks.
pub(crate) fn check_params<P: ParamGuard<Error = crate::Error>>(what: &str, p: &P) -> Check {
    p.check_ref().map(|_| ()).map_err(|e| Invalid(format!("{what} parameters: {e}")))
}
