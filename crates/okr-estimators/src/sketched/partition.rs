//! SIOKR / SISOKR over row partitions (see [`crate::partition`]): the plan
//! is the input sketch with its support rows (and the output sketch with its
//! support outputs); a partition's statistics are $A_p^\top A_p$,
//! $A_p^\top P_p$ and its part of $R K R^\top$ ($A = K_X R_X^\top$);
//! finalize builds the output side on the merged distinct outputs and
//! solves the ridge system.

use faer::Par;
use okr_kernels::{Kernel, Rows};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::fit::{stream_chunk_rows, stream_sketched};
use super::{SketchedIokr, SketchedIokrValidParams};
use crate::partition::{
    OutputSums, PartitionError, PartitionPlan, PartitionStats, PlanRows, SampledRows, check_partition, fingerprint,
};
use crate::sketch::{PreparedSketch, Sketch, SketchKind, SketchSpec};
use crate::{Error, Result};

/// The plan of a partitioned SIOKR / SISOKR fit: the hyper-parameters, `n`,
/// the input sketch $R_X$ with the inputs on its support and, with an output
/// sketch, $R_Y$ with the outputs on its support (drawn as the
/// single-machine fit draws them, identical samples merged).
///
/// Every partition needs the support rows: sub-sampling and leverage
/// sketches touch `m` rows, p-sparsified ones about `n (1 - (1-p)^m)`, the
/// dense kinds (Gaussian, Rademacher, SJLT) all `n` (the plan then holds
/// all of `X` and $R_X$ `(m, n)`: they do not scale out).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SketchedPlan<X, Y, KX, KY> {
    params: SketchedIokrValidParams<KX, KY>,
    n: usize,
    input: Sketch,
    x_support: X,
    output: Option<(Sketch, Y)>,
    id: u64,
}

fn plan_id<KX, KY>(p: &SketchedIokrValidParams<KX, KY>, n: usize, input: &Sketch, output: Option<&Sketch>) -> u64 {
    fingerprint(&("sketched", n, input, output, p.lambda.to_bits(), p.pinv_rtol.to_bits()))
}

/// `R` with its columns merged within groups of identical rows among its
/// support (`support_rows`, support order): the estimator is unchanged and
/// a sub-sampling $R K R^\top$ stays non-singular.
fn merge_identical<R: Rows>(r: Sketch, support_rows: &R) -> Sketch {
    let support = r.support();
    let (_, group_in_support) = support_rows.group_duplicates();
    let mut group_of: Vec<usize> = (0..r.ncols()).map(|i| i + support.len()).collect();
    for (&col, &g) in support.iter().zip(&group_in_support) {
        group_of[col] = g;
    }
    r.merge_duplicate_columns(&group_of).unwrap_or(r)
}

impl<KX: Clone, KY: Clone> SketchedIokrValidParams<KX, KY> {
    /// The input sketch and the output sketch (unmerged), drawn in the
    /// single-machine order from the seed; `draw(spec, is_output, rng)` draws one.
    pub(crate) fn draws(
        &self,
        mut draw: impl FnMut(&SketchSpec, bool, &mut ChaCha8Rng) -> Result<Sketch>,
    ) -> Result<(Sketch, Option<Sketch>)> {
        let Some(input) = &self.input_sketch else {
            return Err(Error::InvalidParameter {
                name: "input_sketch",
                value: "none".into(),
                expected: "an input sketch (a partitioned fit streams K R^T; without one the fit is n x n)",
            });
        };
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        // Input sketch first, so its draw does not depend on the output side.
        let rx = draw(input, false, &mut rng)?;
        let ry = match &self.output_sketch {
            Some(spec) => Some(draw(spec, true, &mut rng)?),
            None => None,
        };
        Ok((rx, ry))
    }

    fn oblivious_draws(&self, n: usize) -> Result<(Sketch, Option<Sketch>)> {
        self.draws(|spec, _, rng| {
            if spec.kind == SketchKind::Leverage {
                return Err(Error::InvalidParameter {
                    name: "sketch",
                    value: spec.to_string(),
                    expected: "a data-oblivious kind for a partitioned fit (leverage scores need all rows at once)",
                });
            }
            Sketch::draw_with(spec, n, rng)
        })
    }

    /// The training rows the plan needs among `n`: the inputs on the input
    /// sketch's support and the outputs on the output sketch's.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] without an input sketch or for a
    /// leverage sketch (its scores need all rows), the draws' errors.
    pub fn plan_rows(&self, n: usize) -> Result<PlanRows> {
        let (rx, ry) = self.oblivious_draws(n)?;
        Ok(PlanRows::new(rx.support().to_vec(), ry.map_or(Vec::new(), |r| r.support().to_vec())))
    }

    /// The plan for `n` training rows from the rows gathered at
    /// [`plan_rows`](Self::plan_rows).
    ///
    /// # Errors
    /// As [`plan_rows`](Self::plan_rows), and [`Error::InvalidParameter`]
    /// when `rows` lacks a support row.
    pub fn plan<X: Rows, Y: Rows>(&self, n: usize, rows: &SampledRows<X, Y>) -> Result<SketchedPlan<X, Y, KX, KY>> {
        let (rx, ry) = self.oblivious_draws(n)?;
        self.plan_from_draws(n, rows, rx, ry)
    }

    pub(crate) fn plan_from_draws<X: Rows, Y: Rows>(
        &self,
        n: usize,
        rows: &SampledRows<X, Y>,
        rx: Sketch,
        ry: Option<Sketch>,
    ) -> Result<SketchedPlan<X, Y, KX, KY>> {
        let x_raw_support = rows.x_at(rx.support())?;
        let input = merge_identical(rx, &x_raw_support);
        let x_support = rows.x_at(input.support())?;
        let output = match ry {
            Some(ry) => {
                let y_raw_support = rows.y_at(ry.support())?;
                let ry = merge_identical(ry, &y_raw_support);
                let y_support = rows.y_at(ry.support())?;
                Some((ry, y_support))
            }
            None => None,
        };
        let id = plan_id(self, n, &input, output.as_ref().map(|o| &o.0));
        Ok(SketchedPlan { params: self.clone(), n, input, x_support, output, id })
    }
}

impl<X: Rows, Y: Rows, KX: Clone, KY: Clone> SketchedPlan<X, Y, KX, KY> {
    /// The input sketch (identical samples merged).
    pub fn input_sketch(&self) -> &Sketch {
        &self.input
    }

    /// Checks a deserialized plan (bytes from another process).
    ///
    /// # Errors
    /// [`PartitionError::Corrupt`] naming the inconsistent part.
    pub fn validate(&self) -> Result<()> {
        // Hyper-parameters out of range would panic in the streamed pass.
        crate::ParamGuard::check_ref(&super::SketchedIokrParams(self.params.clone()))?;
        let output_ok =
            self.output.as_ref().is_none_or(|(r, y)| r.ncols() == self.n && y.n_rows() == r.support().len());
        let ok = self.input.ncols() == self.n
            && self.x_support.n_rows() == self.input.support().len()
            && output_ok
            && self.id == plan_id(&self.params, self.n, &self.input, self.output.as_ref().map(|o| &o.0));
        if ok { Ok(()) } else { Err(PartitionError::Corrupt { what: "sketched plan".into() }.into()) }
    }
}

impl<X, Y, KX, KY> PartitionPlan<X, Y> for SketchedPlan<X, Y, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Model = SketchedIokr<X, Y, KX, KY>;

    fn n_samples(&self) -> usize {
        self.n
    }

    fn id(&self) -> u64 {
        self.id
    }

    /// $A_p^\top A_p$, $A_p^\top P_p$ and $\sum_{i \in p} a_i r_i^\top$, each
    /// chunk $A_c^\top = R_X K(X_S, x_c)$ from the plan's support rows.
    fn statistics(&self, x: &X, y: &Y, first_row: usize) -> Result<PartitionStats<Y>> {
        self.statistics_weighted(x, y, first_row, None)
    }

    /// The output side on the merged distinct outputs, then the ridge
    /// system and its solve, as the single-machine fit.
    fn finalize(&self, stats: PartitionStats<Y>) -> Result<SketchedIokr<X, Y, KX, KY>> {
        self.finalize_weighted(stats, self.n as f64)
    }
}

impl<X, Y, KX, KY> SketchedPlan<X, Y, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    /// [`PartitionPlan::statistics`] with the rows' sample `weights` (the
    /// weighted single-machine fit, one partition): $A^\top W A$ and $A^\top W P$.
    pub(crate) fn statistics_weighted(
        &self,
        x: &X,
        y: &Y,
        first_row: usize,
        weights: Option<&[f64]>,
    ) -> Result<PartitionStats<Y>> {
        let n_p = crate::core::checks::check_training_set(x, y)?;
        check_partition(first_row, n_p, self.n)?;
        let (outputs, output_of) = y.group_duplicates();
        let par = Par::rayon(0);
        let prepared = PreparedSketch::from_support(&self.input, &self.x_support);
        let chunk = stream_chunk_rows(self.input.nrows());
        let groups = (output_of.as_slice(), outputs.n_rows());
        let kernel = &self.params.input_kernel;
        let (prods, rkr) = stream_sketched(&self.input, &prepared, kernel, x, first_row, groups, chunk, weights, par);
        let at_p = prods.at_groups.expect("groups were given");
        let sums = OutputSums::new(outputs, output_of, at_p, first_row);
        Ok(PartitionStats::new(self.id, first_row, n_p, prods.ata, Some(rkr), None, Some(sums)))
    }

    /// [`PartitionPlan::finalize`] with ridge `total * lambda` (`total` is
    /// $n$, or $\sum_i w_i$ for a weighted fit).
    pub(crate) fn finalize_weighted(&self, stats: PartitionStats<Y>, total: f64) -> Result<SketchedIokr<X, Y, KX, KY>> {
        let parts = stats.into_complete(self.id, self.n)?;
        let corrupt = |what: &str| PartitionError::Corrupt { what: format!("statistics without {what}") };
        let sums = parts.outputs.ok_or_else(|| corrupt("outputs"))?;
        let mut rkr = parts.rkr.ok_or_else(|| corrupt("R K R^T"))?;
        okr_linalg::products::symmetrize_in_place(rkr.as_mut());
        let p = &self.params;
        let output = match &self.output {
            Some((ry, y_support)) => Some(p.output_side(ry, y_support, &sums.outputs, &sums.output_of)?),
            None => None,
        };
        let (input_map, rank) = p.input_side(&self.input, total, parts.ata, rkr, sums.at_p, output.as_ref())?;
        Ok(SketchedIokr {
            params: p.clone(),
            n_samples: self.n,
            x_support: self.x_support.clone(),
            x_support_indices: self.input.support().to_vec(),
            input_map,
            outputs: sums.outputs,
            output_of: sums.output_of,
            output_rank: output.as_ref().map(|o| o.rank),
            atoms: output.map(|o| o.atoms),
            input_rank: Some(rank),
        })
    }
}
