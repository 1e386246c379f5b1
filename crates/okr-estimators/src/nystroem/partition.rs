//! Nystroem KRR fitted over row partitions (map-reduce; `okr.dask` runs it
//! on a cluster): the fit needs the data only through sums over training
//! rows,
//!
//! $$K_{mn}K_{nm} = \sum_p K_{m p} K_{p m},\qquad
//!   K_{mn}P = \sum_p K_{m p} P_p,$$
//!
//! an `m x m` matrix and one `m`-column per distinct output. So
//!
//! 1. the driver draws the anchors once ([`NystroemValidParams::anchor_indices`],
//!    the same draw as the single-machine fit) and ships their rows;
//! 2. each partition computes its [`NystroemStats`] (its rows streamed in
//!    chunks, as in the single-machine fit): `n_p`, $K_{mp}K_{pm}$, its
//!    distinct outputs with the column sums of $K_{mp}$ over each, and the
//!    output index of every row;
//! 3. statistics [`merge`](NystroemStats::merge) by summing (distinct outputs
//!    of both sides are matched, so the merged outputs are the distinct
//!    outputs of the union in first-occurrence order of the merge order);
//! 4. [`finalize`](NystroemValidParams::finalize) whitens $K_{mm}$, factorizes
//!    and solves once, as the single-machine fit does after its pass.
//!
//! The single-machine [`fit`](crate::Fit::fit) gives the one-partition model
//! up to rounding; any partitioning merged in any order gives the same
//! predictions (tested to 1e-10). A statistic is `m^2 + m k_p` doubles.

use faer::{Mat, Par};
use okr_kernels::{DenseRows, Kernel, LabelSets, Rows};
use serde::{Deserialize, Serialize};

use super::{Nystroem, NystroemValidParams};
use crate::sketched::{RidgeSystem, Whitening};
use crate::stream::stream_products;
use crate::{Error, Result};

/// Output containers whose rows can be concatenated (merging statistics
/// joins the partitions' distinct outputs).
pub trait ConcatRows: Rows {
    /// The rows of `self` followed by those of `other`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when the widths differ.
    fn concat(&self, other: &Self) -> Result<Self>;
}

impl ConcatRows for LabelSets {
    fn concat(&self, other: &Self) -> Result<Self> {
        if self.n_labels() != other.n_labels() {
            return Err(Error::ShapeMismatch {
                what: "merged label sets",
                expected: self.n_labels(),
                got: other.n_labels(),
            });
        }
        let sets = self.iter().chain(other.iter()).map(<[usize]>::to_vec).collect();
        Ok(LabelSets::new(self.n_labels(), sets)?)
    }
}

impl ConcatRows for DenseRows {
    fn concat(&self, other: &Self) -> Result<Self> {
        let (a, b) = (self.as_mat(), other.as_mat());
        if a.ncols() != b.ncols() {
            return Err(Error::ShapeMismatch { what: "merged output vectors", expected: a.ncols(), got: b.ncols() });
        }
        let n = a.nrows();
        Ok(DenseRows::new(Mat::from_fn(
            n + b.nrows(),
            a.ncols(),
            |i, j| if i < n { a[(i, j)] } else { b[(i - n, j)] },
        ))?)
    }
}

/// The sufficient statistics of a set of training rows for a Nystroem fit
/// on fixed anchors.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NystroemStats<Y> {
    /// Indices of the anchors the statistics were computed on.
    anchor_indices: Vec<usize>,
    /// Rows summed.
    n: usize,
    /// $\sum_i k_m(x_i) k_m(x_i)^\top$ `(m, m)`.
    #[serde(with = "okr_linalg::serde_mat")]
    ata: Mat<f64>,
    /// Distinct outputs, first-occurrence order.
    outputs: Y,
    /// $\sum_{i: y_i = \text{output}_g} k_m(x_i)$ `(m, n_outputs)`.
    #[serde(with = "okr_linalg::serde_mat")]
    at_p: Mat<f64>,
    /// Output index of every row, in row order.
    output_of: Vec<usize>,
}

impl<Y: ConcatRows> NystroemStats<Y> {
    /// Rows summed.
    pub fn n_samples(&self) -> usize {
        self.n
    }

    /// Checks the shapes a deserialized statistic must have (bytes from
    /// another process are not trusted).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] naming the inconsistent part.
    pub fn validate(&self) -> Result<()> {
        let m = self.anchor_indices.len();
        let k = self.outputs.n_rows();
        let bad = |what: &'static str, expected: usize, got: usize| Err(Error::ShapeMismatch { what, expected, got });
        if self.ata.nrows() != m || self.ata.ncols() != m {
            return bad("statistics: anchor cross-product", m, self.ata.nrows());
        }
        if self.at_p.nrows() != m || self.at_p.ncols() != k {
            return bad("statistics: output sums", k, self.at_p.ncols());
        }
        if self.output_of.len() != self.n {
            return bad("statistics: output index per row", self.n, self.output_of.len());
        }
        if let Some(&g) = self.output_of.iter().find(|&&g| g >= k) {
            return bad("statistics: output index", k, g);
        }
        Ok(())
    }

    /// Sums two statistics on the same anchors; `other`'s rows come after
    /// `self`'s.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the anchors differ,
    /// [`Error::ShapeMismatch`] when the output widths differ.
    pub fn merge(self, other: Self) -> Result<Self> {
        if self.anchor_indices != other.anchor_indices || self.ata.nrows() != other.ata.nrows() {
            return Err(Error::InvalidParameter {
                name: "statistics",
                value: "computed on different anchors".into(),
                expected: "statistics of one plan (the same anchors)",
            });
        }
        let k_self = self.outputs.n_rows();
        let joined = self.outputs.concat(&other.outputs)?;
        let (outputs, group_of) = joined.group_duplicates();
        let m = self.ata.nrows();
        let mut at_p = Mat::zeros(m, outputs.n_rows());
        for (src, block) in [(0, &self.at_p), (k_self, &other.at_p)] {
            for j in 0..block.ncols() {
                let mut dst = at_p.col_mut(group_of[src + j]);
                dst += block.col(j);
            }
        }
        let output_of = self
            .output_of
            .iter()
            .map(|&g| group_of[g])
            .chain(other.output_of.iter().map(|&g| group_of[k_self + g]))
            .collect();
        Ok(Self {
            anchor_indices: self.anchor_indices,
            n: self.n + other.n,
            ata: self.ata + other.ata,
            outputs,
            at_p,
            output_of,
        })
    }
}

impl<KX: Clone, KY: Clone> NystroemValidParams<KX, KY> {
    /// The anchors' indices among `n` training rows: the single-machine
    /// fit's draw (seeded uniform without replacement, sorted) or the given ones.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a given index `>= n` or more anchors than rows.
    pub fn anchor_indices(&self, n: usize) -> Result<Vec<usize>> {
        self.draw_anchors(n)
    }

    /// The statistics of the rows `x`, `y` on the `anchors` (rows
    /// `anchor_indices` of the whole training set), streamed in chunks.
    ///
    /// # Errors
    /// [`Error::Empty`] / [`Error::ShapeMismatch`] for the partition.
    pub fn partition_stats<X, Y>(&self, anchors: &X, anchor_indices: &[usize], x: &X, y: &Y) -> Result<NystroemStats<Y>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
    {
        self.partition_stats_chunked(anchors, anchor_indices, x, y, super::DEFAULT_CHUNK_ROWS)
    }

    /// [`partition_stats`](Self::partition_stats) with `chunk_rows` rows per streamed block.
    pub(crate) fn partition_stats_chunked<X, Y>(
        &self,
        anchors: &X,
        anchor_indices: &[usize],
        x: &X,
        y: &Y,
        chunk_rows: usize,
    ) -> Result<NystroemStats<Y>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
    {
        if chunk_rows == 0 {
            return Err(Error::InvalidParameter { name: "chunk_rows", value: "0".into(), expected: "an integer >= 1" });
        }
        let n = crate::core::checks::check_training_set(x, y)?;
        if anchors.n_rows() != anchor_indices.len() {
            return Err(Error::ShapeMismatch {
                what: "anchor rows",
                expected: anchor_indices.len(),
                got: anchors.n_rows(),
            });
        }
        let (outputs, output_of) = y.group_duplicates();
        let par = Par::rayon(0);
        let fill = |rows: std::ops::Range<usize>, block: faer::MatMut<'_, f64>| {
            self.input_kernel.gram_block_into(anchors, &x.slice(rows), block, par)
        };
        let prods = stream_products(
            n,
            anchors.n_rows(),
            chunk_rows,
            fill,
            Some((&output_of, outputs.n_rows())),
            None,
            |_, _| {},
            par,
        );
        Ok(NystroemStats {
            anchor_indices: anchor_indices.to_vec(),
            n,
            ata: prods.ata,
            outputs,
            at_p: prods.at_groups.expect("groups were given"),
            output_of,
        })
    }

    /// The model from merged statistics: whitening of $K_{mm}$, the ridge
    /// system $F^\top F + n\lambda I$ and its solve, as the single-machine fit.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `anchors` are not the statistics'
    /// anchors, [`Error::ZeroRank`], [`Error::Linalg`].
    pub fn finalize<X, Y>(&self, anchors: X, stats: NystroemStats<Y>) -> Result<Nystroem<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
    {
        if anchors.n_rows() != stats.anchor_indices.len() {
            return Err(Error::ShapeMismatch {
                what: "anchor rows",
                expected: stats.anchor_indices.len(),
                got: anchors.n_rows(),
            });
        }
        let whitening = {
            let kmm = self.input_kernel.gram(&anchors);
            Whitening::new(kmm.as_ref(), self.pinv_rtol, self.lambda)?
        };
        let n = stats.n;
        let system = RidgeSystem::from_whitened(whitening, stats.ata, n as f64 * self.lambda, self.lambda)?;
        let rank = system.rank();
        let weights = system.core(system.whiten(stats.at_p));
        Ok(Nystroem {
            params: self.clone(),
            anchors,
            anchor_indices: stats.anchor_indices,
            weights,
            outputs: stats.outputs,
            output_of: stats.output_of,
            rank,
        })
    }
}
