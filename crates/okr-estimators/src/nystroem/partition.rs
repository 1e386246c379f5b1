//! Nystroem KRR over row partitions (see [`crate::partition`]): the plan is
//! the anchors, a partition's statistics are $K_{mp}K_{pm}$ and
//! $K_{mp}P_p$ with its distinct outputs, finalize solves the ridge system
//! with $K_{mm}$.

use faer::Par;
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

use super::{Nystroem, NystroemValidParams};
use crate::partition::{
    OutputSums, PartitionError, PartitionPlan, PartitionStats, PlanRows, SampledRows, check_partition, fingerprint,
};
use crate::sketched::{RidgeSystem, SketchGram};
use crate::stream::{StreamedProducts, stream_products};
use crate::{Error, Result};

/// The plan of a partitioned Nystroem fit: the hyper-parameters, `n`, and
/// the anchors drawn as the single-machine fit draws them (indices and rows).
///
/// # Example
/// ```
/// use okr_estimators::nystroem::Anchors;
/// use okr_estimators::partition::{PartitionPlan, SampledRows};
/// use okr_estimators::{DenseRows, Gaussian, Mat, Nystroem, ParamGuard, Rows};
/// let x = DenseRows::new(Mat::from_fn(30, 2, |i, j| ((i * 5 + j) % 7) as f64 / 7.0))?;
/// let y = DenseRows::new(Mat::from_fn(30, 1, |i, _| (i % 3) as f64))?;
/// let params = Nystroem::params(Gaussian::new(1.0)?, Gaussian::new(1.0)?).anchors(Anchors::Uniform(8)).check()?;
/// let plan = params.plan(30, &SampledRows::select_from(&x, &y, params.plan_rows(30)?))?;
/// let a = plan.statistics(&x.slice(0..12), &y.slice(0..12), 0)?;
/// let b = plan.statistics(&x.slice(12..30), &y.slice(12..30), 12)?;
/// let model = plan.finalize(b.merge(a)?)?;
/// assert_eq!(model.anchor_indices().len(), 8);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NystroemPlan<X, KX, KY> {
    params: NystroemValidParams<KX, KY>,
    n: usize,
    anchor_indices: Vec<usize>,
    anchors: X,
    id: u64,
}

fn plan_id<KX, KY>(params: &NystroemValidParams<KX, KY>, n: usize, anchor_indices: &[usize]) -> u64 {
    fingerprint(&("nystroem", n, anchor_indices, params.lambda.to_bits(), params.pinv_rtol.to_bits()))
}

impl<KX: Clone, KY: Clone> NystroemValidParams<KX, KY> {
    /// The training rows the plan needs among `n`: the anchors (the
    /// single-machine fit's draw).
    ///
    /// # Errors
    /// [`Error::Empty`] for `n = 0`, [`Error::InvalidParameter`] for a given
    /// anchor index `>= n`.
    pub fn plan_rows(&self, n: usize) -> Result<PlanRows> {
        Ok(PlanRows::new(self.draw_anchors(n)?, Vec::new()))
    }

    /// The plan for `n` training rows from the rows gathered at
    /// [`plan_rows`](Self::plan_rows).
    ///
    /// # Errors
    /// As [`plan_rows`](Self::plan_rows), and [`Error::InvalidParameter`]
    /// when `rows` lacks an anchor.
    pub fn plan<X: Rows, Y: Rows>(&self, n: usize, rows: &SampledRows<X, Y>) -> Result<NystroemPlan<X, KX, KY>> {
        let anchor_indices = self.draw_anchors(n)?;
        let anchors = rows.x_at(&anchor_indices)?;
        let id = plan_id(self, n, &anchor_indices);
        Ok(NystroemPlan { params: self.clone(), n, anchor_indices, anchors, id })
    }
}

impl<X: Rows, KX: Clone, KY: Clone> NystroemPlan<X, KX, KY> {
    /// Training indices of the anchors.
    pub fn anchor_indices(&self) -> &[usize] {
        &self.anchor_indices
    }

    /// Checks a deserialized plan (bytes from another process).
    ///
    /// # Errors
    /// [`PartitionError::Corrupt`] naming the inconsistent part.
    pub fn validate(&self) -> Result<()> {
        // Hyper-parameters out of range would panic in the streamed pass.
        crate::ParamGuard::check_ref(&super::NystroemParams(self.params.clone()))?;
        let ok = self.anchors.n_rows() == self.anchor_indices.len()
            && !self.anchor_indices.is_empty()
            && self.anchor_indices.iter().all(|&i| i < self.n)
            && self.id == plan_id(&self.params, self.n, &self.anchor_indices);
        if ok { Ok(()) } else { Err(PartitionError::Corrupt { what: "Nystroem plan".into() }.into()) }
    }

    /// [`PartitionPlan::statistics`] with `chunk_rows` rows per streamed block.
    ///
    /// # Errors
    /// As [`PartitionPlan::statistics`], and [`Error::InvalidParameter`] for `chunk_rows = 0`.
    pub fn statistics_chunked<Y: Rows>(
        &self,
        x: &X,
        y: &Y,
        first_row: usize,
        chunk_rows: usize,
    ) -> Result<PartitionStats<Y>>
    where
        KX: Kernel<X>,
    {
        self.statistics_weighted(x, y, first_row, chunk_rows, None)
    }

    /// [`statistics_chunked`](Self::statistics_chunked) with the rows'
    /// sample `weights`: $K_{mp}W_pK_{pm}$ and $K_{mp}W_pP_p$.
    pub(crate) fn statistics_weighted<Y: Rows>(
        &self,
        x: &X,
        y: &Y,
        first_row: usize,
        chunk_rows: usize,
        weights: Option<&[f64]>,
    ) -> Result<PartitionStats<Y>>
    where
        KX: Kernel<X>,
    {
        if chunk_rows == 0 {
            return Err(Error::InvalidParameter { name: "chunk_rows", value: "0".into(), expected: "an integer >= 1" });
        }
        let n_p = crate::core::checks::check_training_set(x, y)?;
        check_partition(first_row, n_p, self.n)?;
        let (outputs, output_of) = y.group_duplicates();
        let groups = Some((output_of.as_slice(), outputs.n_rows()));
        let prods = self.stream(x, chunk_rows, groups, None, weights);
        let at_p = prods.at_groups.expect("groups were given");
        let sums = OutputSums::new(outputs, output_of, at_p, first_row);
        Ok(PartitionStats::new(self.id, first_row, n_p, prods.ata, None, None, Some(sums)))
    }
}

impl<X: Rows, KX: Kernel<X>, KY> NystroemPlan<X, KX, KY> {
    /// One pass over the partition `x` in chunks: $K_{mp}K_{pm}$ and the
    /// requested right-hand sides ($K_{mp}P$ for `groups`, $K_{mp}T$ for `t`),
    /// weighted by the rows' `weights` when given (see [`stream_products`]).
    pub(crate) fn stream(
        &self,
        x: &X,
        chunk_rows: usize,
        groups: Option<(&[usize], usize)>,
        t: Option<faer::MatRef<'_, f64>>,
        weights: Option<&[f64]>,
    ) -> StreamedProducts {
        let par = Par::rayon(0);
        let fill = |rows: std::ops::Range<usize>, block: faer::MatMut<'_, f64>| {
            self.params.input_kernel.gram_block_into(&self.anchors, &x.slice(rows), block, par)
        };
        stream_products(x.n_rows(), self.anchors.n_rows(), chunk_rows, fill, groups, t, weights, |_, _| {}, par)
    }

    /// The ridge system $K_{mn}K_{nm} + n\lambda K_{mm}$ from the merged
    /// $K_{mn}K_{nm}$ (see [`RidgeSystem`]): $K_{mm}$ is built from the
    /// anchors when needed rather than held, so the direct path keeps two
    /// `m x m` matrices and the whitening fallback three. `total` is $n$, or
    /// $\sum_i w_i$ for a weighted fit (ridge `total * lambda`).
    pub(crate) fn system(&self, ata: faer::Mat<f64>, total: f64) -> Result<RidgeSystem> {
        let p = &self.params;
        let kmm = || {
            let _p = okr_linalg::profile::phase("anchor Gram K_mm", 0.0);
            p.input_kernel.gram(&self.anchors)
        };
        let form = "system B = A^T A + ridge K_mm";
        RidgeSystem::from_cross_product(ata, SketchGram::Built(&kmm), form, total * p.lambda, p.lambda, p.pinv_rtol)
    }

    /// The anchor rows.
    pub(crate) fn anchors(&self) -> &X {
        &self.anchors
    }
}

impl<X, Y, KX, KY> PartitionPlan<X, Y> for NystroemPlan<X, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Clone,
{
    type Model = Nystroem<X, Y, KX, KY>;

    fn n_samples(&self) -> usize {
        self.n
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn statistics(&self, x: &X, y: &Y, first_row: usize) -> Result<PartitionStats<Y>> {
        self.statistics_chunked(x, y, first_row, super::DEFAULT_CHUNK_ROWS)
    }

    /// The ridge system $K_{mn}K_{nm} + n\lambda K_{mm}$ and its solve
    /// against $K_{mn}P$, as the single-machine fit.
    fn finalize(&self, stats: PartitionStats<Y>) -> Result<Nystroem<X, Y, KX, KY>> {
        self.finalize_weighted(stats, self.n as f64)
    }
}

impl<X: Rows, KX: Kernel<X> + Clone, KY: Clone> NystroemPlan<X, KX, KY> {
    /// [`PartitionPlan::finalize`] with ridge `total * lambda` (`total` is
    /// $n$, or $\sum_i w_i$ for a weighted fit).
    pub(crate) fn finalize_weighted<Y: Rows>(
        &self,
        stats: PartitionStats<Y>,
        total: f64,
    ) -> Result<Nystroem<X, Y, KX, KY>> {
        let parts = stats.into_complete(self.id, self.n)?;
        let sums =
            parts.outputs.ok_or_else(|| PartitionError::Corrupt { what: "statistics without outputs".into() })?;
        let system = self.system(parts.ata, total)?;
        let rank = system.rank();
        let weights = system.solve(sums.at_p);
        Ok(Nystroem {
            params: self.params.clone(),
            anchors: self.anchors.clone(),
            anchor_indices: self.anchor_indices.clone(),
            weights,
            outputs: sums.outputs,
            output_of: sums.output_of,
            rank,
        })
    }
}
