//! Nystroem reduced rank over row partitions (see [`crate::partition`]):
//! the plan is the anchors and the projection learned on the subset
//! (Algorithm 1 on the driver); a partition's statistics are
//! $K_{mp}K_{pm}$ and $K_{mp}\,UY_p$ `(m, p)` with its projected outputs
//! $UY_p = K_y(Y_p, Y_S) G_S^\top$; finalize solves the ridge system with
//! $K_{mm}$.

use faer::Mat;
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

use super::fit::{Projection, projected_outputs};
use super::{NystroemReducedRank, NystroemReducedRankValidParams};
use crate::nystroem::NystroemPlan;
use crate::partition::{
    PartitionError, PartitionPlan, PartitionStats, PlanRows, SampledRows, check_partition, fingerprint,
};
use crate::{ParamGuard, Result};

/// The plan of a partitioned Nystroem reduced-rank fit: the Nystroem plan
/// (anchors, ridge `lambda2`), the subset and the projection learned on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NystroemReducedRankPlan<X, Y, KX, KY> {
    params: NystroemReducedRankValidParams<KX, KY>,
    nystroem: NystroemPlan<X, KX, KY>,
    subset_indices: Vec<usize>,
    projection: Projection<Y>,
    id: u64,
}

fn plan_id<KX, KY>(p: &NystroemReducedRankValidParams<KX, KY>, nystroem: u64, subset: &[usize]) -> u64 {
    fingerprint(&("nystroem-rr", nystroem, subset, p.lambda1.to_bits(), p.rank, p.rank_tolerance.to_bits()))
}

impl<KX: Clone, KY: Clone> NystroemReducedRankValidParams<KX, KY> {
    /// The training rows the plan needs among `n`: the anchors' inputs and
    /// the subset's inputs and outputs (the single-machine fit's draws).
    ///
    /// # Errors
    /// [`Error::Empty`](crate::Error::Empty) for `n = 0`,
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) for a
    /// given index `>= n`.
    pub fn plan_rows(&self, n: usize) -> Result<PlanRows> {
        let anchors = self.nystroem_params().check()?.plan_rows(n)?;
        let subset = self.subset_indices(n)?;
        Ok(PlanRows::new(anchors.x.into_iter().chain(subset.iter().copied()).collect(), subset))
    }

    /// The plan for `n` training rows from the rows gathered at
    /// [`plan_rows`](Self::plan_rows): learns the projection on the subset
    /// (Algorithm 1, $O(|S|^3)$ on the caller).
    ///
    /// # Errors
    /// As [`plan_rows`](Self::plan_rows), and the projection's errors
    /// ([`Error::ZeroRank`](crate::Error::ZeroRank), linear algebra).
    pub fn plan<X, Y>(&self, n: usize, rows: &SampledRows<X, Y>) -> Result<NystroemReducedRankPlan<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        let nystroem = self.nystroem_params().check()?.plan(n, rows)?;
        let subset_indices = self.subset_indices(n)?;
        let projection = self.subset_projection(&rows.x_at(&subset_indices)?, &rows.y_at(&subset_indices)?)?;
        let id = plan_id(self, PartitionPlan::<X, Y>::id(&nystroem), &subset_indices);
        Ok(NystroemReducedRankPlan { params: self.clone(), nystroem, subset_indices, projection, id })
    }
}

impl<X: Rows, Y: Rows, KX: Kernel<X> + Clone, KY: Clone> NystroemReducedRankPlan<X, Y, KX, KY> {
    /// Checks a deserialized plan (bytes from another process).
    ///
    /// # Errors
    /// [`PartitionError::Corrupt`] naming the inconsistent part.
    pub fn validate(&self) -> Result<()> {
        // Hyper-parameters out of range would panic in the streamed pass.
        crate::ParamGuard::check_ref(&super::NystroemReducedRankParams(self.params.clone()))?;
        self.nystroem.validate()?;
        let n = PartitionPlan::<X, Y>::n_samples(&self.nystroem);
        let g = &self.projection.encoder;
        let ok = self.subset_indices.iter().all(|&i| i < n)
            && g.ncols() == self.projection.outputs.n_rows()
            && g.nrows() >= 1
            && self.id == plan_id(&self.params, PartitionPlan::<X, Y>::id(&self.nystroem), &self.subset_indices);
        if ok { Ok(()) } else { Err(PartitionError::Corrupt { what: "Nystroem reduced-rank plan".into() }.into()) }
    }
}

impl<X, Y, KX, KY> PartitionPlan<X, Y> for NystroemReducedRankPlan<X, Y, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Model = NystroemReducedRank<X, Y, KX, KY>;

    fn n_samples(&self) -> usize {
        PartitionPlan::<X, Y>::n_samples(&self.nystroem)
    }

    fn id(&self) -> u64 {
        self.id
    }

    /// $K_{mp}K_{pm}$ and $K_{mp}\,UY_p$, the projected outputs computed on
    /// the partition's distinct outputs only.
    fn statistics(&self, x: &X, y: &Y, first_row: usize) -> Result<PartitionStats<Y>> {
        let n_p = crate::core::checks::check_training_set(x, y)?;
        check_partition(first_row, n_p, self.n_samples())?;
        let (distinct, output_of) = y.group_duplicates();
        let uy_u = projected_outputs(&self.params.output_kernel, &self.projection, &distinct)?;
        let t = Mat::from_fn(n_p, uy_u.ncols(), |i, j| uy_u[(output_of[i], j)]);
        let prods = self.nystroem.stream(x, self.params.chunk_rows, None, Some(t.as_ref()), None);
        let at_t = prods.at_t.expect("a right-hand side was given");
        Ok(PartitionStats::new(self.id, first_row, n_p, prods.ata, None, Some(at_t), None))
    }

    /// $M = (K_{mn}K_{nm} + n\lambda_2 K_{mm})^\dagger K_{mn}\,UY$ (directly,
    /// or in the whitened form when the system is ill conditioned), as the
    /// single-machine fit.
    fn finalize(&self, stats: PartitionStats<Y>) -> Result<NystroemReducedRank<X, Y, KX, KY>> {
        let parts = stats.into_complete(self.id, self.n_samples())?;
        let at_t = parts.at_t.ok_or_else(|| PartitionError::Corrupt { what: "statistics without A^T T".into() })?;
        let system = self.nystroem.system(parts.ata, PartitionPlan::<X, Y>::n_samples(&self.nystroem) as f64)?;
        let nystroem_rank = system.rank();
        let predict_map = system.solve(at_t);
        let proj = &self.projection;
        Ok(NystroemReducedRank {
            params: self.params.clone(),
            anchors: self.nystroem.anchors().clone(),
            anchor_indices: self.nystroem.anchor_indices().to_vec(),
            subset_indices: self.subset_indices.clone(),
            outputs: proj.outputs.clone(),
            encoder: proj.encoder.clone(),
            predict_map,
            mu: proj.mu.clone(),
            numerical_rank: proj.numerical_rank,
            nystroem_rank,
        })
    }
}
