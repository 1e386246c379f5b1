//! The streamed fits as map-reduce: a *plan* drawn once, *statistics* per
//! row partition (summed by [`PartitionStats::merge`]), and a *finalize*
//! step on the merged statistics. `okr.dask` runs it on a cluster; the
//! single-machine fits of [`Nystroem`](crate::Nystroem),
//! [`SketchedIokr`](crate::SketchedIokr) (with an input sketch) and
//! [`NystroemReducedRank`](crate::NystroemReducedRank) are the same code with
//! one partition.
//!
//! # Why it splits
//!
//! All three fits are ridge regressions on $m$ features
//! $A = K R^\top$ `(n, m)` of the inputs: $A = K_{nm}$ (the anchors'
//! Gram columns, $R$ a 0/1 selection) for Nystroem, $A = K_X R_X^\top$ for a
//! sketch $R_X$ `(m, n)`. With a whitening $\Phi$ of $R K R^\top$
//! ($K_{mm}$ for Nystroem), features $F = A\Phi$ and right-hand sides $T$,
//! the solution is $\Phi (F^\top F + n\lambda I)^{-1} F^\top T$ (equal to
//! $(A^\top A + n\lambda R K R^\top)^{-1} A^\top T$ for a Cholesky
//! whitening), and the data enter only through sums over training rows $i$:
//!
//! | statistic | sum over rows | size | estimators |
//! |---|---|---|---|
//! | $A^\top A$ | $\sum_i a_i a_i^\top$ | `m x m` | all |
//! | $A^\top P$ | $\sum_{i: y_i = u} a_i$ for each distinct output $u$ | `m x u` | Nystroem, SIOKR / SISOKR |
//! | $R K R^\top$ | $\sum_i a_i r_i^\top$ ($r_i$ = column $i$ of $R$) | `m x m` | SIOKR / SISOKR |
//! | $A^\top T$ | $\sum_i a_i t_i^\top$, $t_i = U\psi(y_i)$ | `m x p` | Nystroem reduced rank |
//!
//! with $a_i = R\,k(X, x_i)$ `(m)`: computable from row $i$ and the plan
//! alone (the anchors, or the sketch with its support rows $X_S$). $P$ is
//! the 0/1 map from rows to distinct outputs; a partition keeps its distinct
//! outputs, the global row of each one's first occurrence and the output
//! index of each of its rows, so that merging matches equal outputs across
//! partitions and orders them by first occurrence, as a single-machine
//! `group_duplicates` does. Sums commute: any partitioning of the rows,
//! merged in any order, gives the single-partition model up to rounding
//! (tested to 1e-10).
//!
//! # Plan, statistics, finalize
//!
//! 1. **Plan** (driver, once): the random draws of the single-machine fit
//!    from its seed (anchors, input and output sketches, the reduced-rank
//!    subset) and the rows they touch ([`PlanRows`] names them, the caller
//!    gathers them); for the reduced-rank estimator also the output
//!    projection learned on the subset. Serializable, shipped to workers.
//! 2. **Statistics** (worker, per partition of contiguous rows starting at a
//!    global `first_row`): the sums above, rows streamed in chunks, peak
//!    memory the `m x m` accumulators plus one `m x chunk` block.
//! 3. **Merge** (anywhere): sums; refuses statistics of another plan
//!    ([`PartitionError::OtherPlan`]) or overlapping rows.
//! 4. **Finalize** (driver): checks the rows are exactly `0..n`, factorizes
//!    $A^\top A + n\lambda R K R^\top$ (or, when its pivots are too small,
//!    whitens $R K R^\top$ and factorizes $F^\top F + n\lambda I$),
//!    solves, and for SISOKR builds the output-side factors
//!    ($D = K_Y R_Y^\top$ on the distinct outputs, $E = R_Y K_Y R_Y^\top$).
//!    Cost $O(m^3 + m^2 u)$, independent of `n`.
//!
//! A statistic is $m^2$ doubles ($2m^2$ with a sketch) plus $m u_p$ for the
//! partition's $u_p$ distinct outputs (or $m p$), plus one integer per row.

mod stats;

pub use crate::nystroem::NystroemPlan;
pub use crate::nystroem_rr::NystroemReducedRankPlan;
pub use crate::sketched::SketchedPlan;
pub(crate) use stats::OutputSums;
pub use stats::{ConcatRows, PartitionStats};

use okr_kernels::Rows;

use crate::{Error, Result};

// Defined in okr-surrogate beside `Error`, which wraps it.
pub use okr_surrogate::PartitionError;

/// The training rows a plan needs, by global index (sorted, distinct): the
/// caller gathers `x` at [`x`](Self::x) and `y` at [`y`](Self::y) and hands
/// them to the plan constructor as [`SampledRows`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanRows {
    /// Input rows needed.
    pub x: Vec<usize>,
    /// Output rows needed.
    pub y: Vec<usize>,
}

impl PlanRows {
    pub(crate) fn new(mut x: Vec<usize>, mut y: Vec<usize>) -> Self {
        x.sort_unstable();
        x.dedup();
        y.sort_unstable();
        y.dedup();
        Self { x, y }
    }
}

/// Training rows gathered at the global indices of [`PlanRows`].
#[derive(Debug, Clone)]
pub struct SampledRows<X, Y> {
    x_indices: Vec<usize>,
    x: X,
    y_indices: Vec<usize>,
    y: Y,
}

impl<X: Rows, Y: Rows> SampledRows<X, Y> {
    /// Rows `x` at the sorted distinct indices `x_indices`, `y` at `y_indices`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when a container does not have one row per
    /// index, [`Error::InvalidParameter`] for indices that are not sorted
    /// and distinct.
    pub fn new(x_indices: Vec<usize>, x: X, y_indices: Vec<usize>, y: Y) -> Result<Self> {
        for (what, idx, rows) in
            [("sampled input rows", &x_indices, x.n_rows()), ("sampled output rows", &y_indices, y.n_rows())]
        {
            if idx.len() != rows {
                return Err(Error::ShapeMismatch { what, expected: idx.len(), got: rows });
            }
            if idx.windows(2).any(|w| w[0] >= w[1]) {
                return Err(Error::InvalidParameter {
                    name: "sampled row indices",
                    value: format!("{} indices", idx.len()),
                    expected: "sorted distinct indices (PlanRows)",
                });
            }
        }
        Ok(Self { x_indices, x, y_indices, y })
    }

    /// The rows at `rows` of the whole training pair.
    pub fn select_from(x: &X, y: &Y, rows: PlanRows) -> Self {
        let (xs, ys) = (x.select(&rows.x), y.select(&rows.y));
        Self { x_indices: rows.x, x: xs, y_indices: rows.y, y: ys }
    }

    fn positions(indices: &[usize], wanted: &[usize], what: &'static str) -> Result<Vec<usize>> {
        wanted
            .iter()
            .map(|i| {
                indices.binary_search(i).map_err(|_| Error::InvalidParameter {
                    name: what,
                    value: format!("row {i} not gathered"),
                    expected: "the rows listed by the plan's PlanRows",
                })
            })
            .collect()
    }

    /// The inputs at global rows `wanted` (repeats allowed).
    pub(crate) fn x_at(&self, wanted: &[usize]) -> Result<X> {
        Ok(self.x.select(&Self::positions(&self.x_indices, wanted, "sampled input rows")?))
    }

    /// The outputs at global rows `wanted` (repeats allowed).
    pub(crate) fn y_at(&self, wanted: &[usize]) -> Result<Y> {
        Ok(self.y.select(&Self::positions(&self.y_indices, wanted, "sampled output rows")?))
    }
}

/// FNV-1a over the postcard bytes of `key`: a fingerprint that is the same
/// in every process (unlike `std`'s hasher, not guaranteed across versions).
pub(crate) fn fingerprint<T: serde::Serialize>(key: &T) -> u64 {
    let bytes = postcard::to_stdvec(key).expect("plan keys serialize");
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Checks that a partition of `n_rows` rows starting at `first_row` lies in `0..n`.
pub(crate) fn check_partition(first_row: usize, n_rows: usize, n: usize) -> Result<()> {
    let end = first_row.saturating_add(n_rows);
    if end > n {
        return Err(PartitionError::RowsPastEnd { first_row, end, n }.into());
    }
    Ok(())
}

/// The row-partitioned fit of an estimator: what `okr.dask` (or any
/// map-reduce engine) needs from a plan.
pub trait PartitionPlan<X, Y> {
    /// The fitted model.
    type Model;

    /// Training rows `n` of the plan.
    fn n_samples(&self) -> usize;

    /// The plan's fingerprint (recorded in its statistics).
    fn id(&self) -> u64;

    /// Statistics of the contiguous training rows `x`, `y` starting at
    /// global row `first_row`.
    ///
    /// # Errors
    /// [`Error::Empty`] / [`Error::ShapeMismatch`] for the partition,
    /// [`PartitionError::RowsPastEnd`].
    fn statistics(&self, x: &X, y: &Y, first_row: usize) -> Result<PartitionStats<Y>>;

    /// The model from statistics merged over exactly the rows `0..n`.
    ///
    /// # Errors
    /// [`PartitionError`] for statistics of another plan or missing rows,
    /// [`Error::ZeroRank`], [`Error::Linalg`].
    fn finalize(&self, stats: PartitionStats<Y>) -> Result<Self::Model>;
}
