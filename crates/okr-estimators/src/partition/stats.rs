//! [`PartitionStats`]: the sums of one set of training rows, and merging.

use faer::{Mat, MatRef};
use okr_kernels::{DenseRows, LabelSets, Rows};
use serde::{Deserialize, Serialize};

use super::PartitionError;
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

/// A matrix field that may be absent.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Dense(#[serde(with = "okr_linalg::serde_mat")] Mat<f64>);

/// The distinct outputs of the rows and the sums of $a_i$ over each.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OutputSums<Y> {
    /// Distinct outputs, ordered by first occurrence (global row).
    pub(crate) outputs: Y,
    /// Global row of each distinct output's first occurrence (increasing).
    pub(crate) first_row: Vec<usize>,
    /// $A^\top P$ `(m, n_outputs)`.
    #[serde(with = "okr_linalg::serde_mat")]
    pub(crate) at_p: Mat<f64>,
    /// Output index of every row, rows in increasing global order.
    pub(crate) output_of: Vec<usize>,
}

impl<Y: Rows> OutputSums<Y> {
    /// From the rows' outputs grouped locally (`group_duplicates` of the
    /// partition's `y`) and `A^T P` over those groups.
    pub(crate) fn new(outputs: Y, output_of: Vec<usize>, at_p: Mat<f64>, first_row: usize) -> Self {
        let mut first = vec![usize::MAX; outputs.n_rows()];
        for (i, &g) in output_of.iter().enumerate() {
            if first[g] == usize::MAX {
                first[g] = first_row + i;
            }
        }
        Self { outputs, first_row: first, at_p, output_of }
    }
}

/// The sufficient statistics of a set of training rows under one plan (see
/// the [module docs](super)): $A^\top A$, and as the estimator needs them
/// $R K R^\top$, $A^\top T$ and the distinct outputs with $A^\top P$.
/// Serializable (postcard bytes between processes; call
/// [`validate`](Self::validate) on bytes from elsewhere).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionStats<Y> {
    plan: u64,
    /// Covered global rows: sorted, disjoint, non-adjacent `[start, end)`.
    rows: Vec<(usize, usize)>,
    #[serde(with = "okr_linalg::serde_mat")]
    ata: Mat<f64>,
    rkr: Option<Dense>,
    at_t: Option<Dense>,
    outputs: Option<OutputSums<Y>>,
}

/// The parts of merged statistics, for the finalize steps.
pub(crate) struct StatsParts<Y> {
    pub(crate) ata: Mat<f64>,
    pub(crate) rkr: Option<Mat<f64>>,
    pub(crate) at_t: Option<Mat<f64>>,
    pub(crate) outputs: Option<OutputSums<Y>>,
}

impl<Y: Rows> PartitionStats<Y> {
    pub(crate) fn new(
        plan: u64,
        first_row: usize,
        n_rows: usize,
        ata: Mat<f64>,
        rkr: Option<Mat<f64>>,
        at_t: Option<Mat<f64>>,
        outputs: Option<OutputSums<Y>>,
    ) -> Self {
        let rows = if n_rows == 0 { Vec::new() } else { vec![(first_row, first_row + n_rows)] };
        Self { plan, rows, ata, rkr: rkr.map(Dense), at_t: at_t.map(Dense), outputs }
    }

    /// Fingerprint of the plan the statistics were computed under.
    pub fn plan_id(&self) -> u64 {
        self.plan
    }

    /// Number of rows summed.
    pub fn n_samples(&self) -> usize {
        self.rows.iter().map(|(a, b)| b - a).sum()
    }

    /// The covered global rows, as sorted disjoint `[start, end)` ranges.
    pub fn row_ranges(&self) -> &[(usize, usize)] {
        &self.rows
    }

    /// Number of features `m`.
    pub fn n_features(&self) -> usize {
        self.ata.nrows()
    }

    /// Approximate size in bytes of the statistic's numbers (what a worker ships).
    pub fn size_bytes(&self) -> usize {
        let mats = [Some(&self.ata), self.rkr.as_ref().map(|d| &d.0), self.at_t.as_ref().map(|d| &d.0)];
        let dense: usize = mats.iter().flatten().map(|m| m.nrows() * m.ncols() * 8).sum();
        let sums = self.outputs.as_ref().map_or(0, |o| o.at_p.nrows() * o.at_p.ncols() * 8 + o.output_of.len() * 8);
        dense + sums
    }

    /// Checks the consistency a deserialized statistic must have.
    ///
    /// # Errors
    /// [`PartitionError::Corrupt`] naming the inconsistent part.
    pub fn validate(&self) -> Result<()> {
        let corrupt = |what: String| Err(PartitionError::Corrupt { what: format!("statistics: {what}") }.into());
        let m = self.ata.nrows();
        if self.ata.ncols() != m {
            return corrupt(format!("A^T A is {} x {}", m, self.ata.ncols()));
        }
        if self.rows.iter().any(|&(a, b)| a >= b) || self.rows.windows(2).any(|w| w[0].1 >= w[1].0) {
            return corrupt("row ranges not sorted and disjoint".into());
        }
        if let Some(Dense(r)) = &self.rkr
            && (r.nrows(), r.ncols()) != (m, m)
        {
            return corrupt(format!("R K R^T is {} x {} for m = {m}", r.nrows(), r.ncols()));
        }
        if let Some(Dense(t)) = &self.at_t
            && t.nrows() != m
        {
            return corrupt(format!("A^T T has {} rows for m = {m}", t.nrows()));
        }
        if let Some(o) = &self.outputs {
            let k = o.outputs.n_rows();
            if (o.at_p.nrows(), o.at_p.ncols()) != (m, k) || o.first_row.len() != k {
                return corrupt(format!(
                    "output sums of {k} outputs have shape {:?}",
                    (o.at_p.nrows(), o.at_p.ncols())
                ));
            }
            if o.output_of.len() != self.n_samples() || o.output_of.iter().any(|&g| g >= k) {
                return corrupt("output index per row".into());
            }
            if o.first_row.windows(2).any(|w| w[0] >= w[1]) {
                return corrupt("first rows of the outputs not increasing".into());
            }
        }
        Ok(())
    }

    /// Checks that the statistics are of plan `id` and cover exactly `0..n`,
    /// and hands out their parts.
    pub(crate) fn into_complete(self, id: u64, n: usize) -> Result<StatsParts<Y>> {
        if self.plan != id {
            return Err(PartitionError::OtherPlan { expected: id, got: self.plan }.into());
        }
        self.validate()?;
        if self.rows != [(0, n)] {
            let covered = self.n_samples();
            let first_missing = match self.rows.first() {
                Some(&(0, end)) => end,
                _ => 0,
            };
            return Err(PartitionError::MissingRows { covered, n, first_missing }.into());
        }
        Ok(StatsParts {
            ata: self.ata,
            rkr: self.rkr.map(|d| d.0),
            at_t: self.at_t.map(|d| d.0),
            outputs: self.outputs,
        })
    }
}

impl<Y: ConcatRows> PartitionStats<Y> {
    /// The statistics of the rows of both: sums, distinct outputs matched
    /// and ordered by first occurrence. Commutative and associative up to
    /// rounding.
    ///
    /// # Errors
    /// [`PartitionError::OtherPlan`] for statistics of another plan (other
    /// anchors or sketch), [`PartitionError::OverlappingRows`],
    /// [`PartitionError::Corrupt`] for mismatched parts,
    /// [`Error::ShapeMismatch`] for outputs of another width.
    pub fn merge(self, other: Self) -> Result<Self> {
        if self.plan != other.plan {
            return Err(PartitionError::OtherPlan { expected: self.plan, got: other.plan }.into());
        }
        let same_parts = self.ata.nrows() == other.ata.nrows()
            && self.rkr.is_some() == other.rkr.is_some()
            && self.at_t.as_ref().map(|d| d.0.ncols()) == other.at_t.as_ref().map(|d| d.0.ncols())
            && self.outputs.is_some() == other.outputs.is_some();
        if !same_parts {
            return Err(PartitionError::Corrupt { what: "statistics of one plan with different parts".into() }.into());
        }
        // Row ranges of both, in order, each with its slice of output indices.
        let mut segments: Vec<(usize, usize, bool, usize)> = Vec::new();
        for (side, rows) in [(false, &self.rows), (true, &other.rows)] {
            let mut offset = 0;
            for &(a, b) in rows {
                segments.push((a, b, side, offset));
                offset += b - a;
            }
        }
        segments.sort_unstable_by_key(|s| s.0);
        if let Some(w) = segments.windows(2).find(|w| w[0].1 > w[1].0) {
            return Err(PartitionError::OverlappingRows { row: w[1].0 }.into());
        }
        let mut rows: Vec<(usize, usize)> = Vec::new();
        for &(a, b, _, _) in &segments {
            match rows.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => rows.push((a, b)),
            }
        }
        let outputs = match (self.outputs, other.outputs) {
            (Some(l), Some(r)) => Some(merge_outputs(l, r, &segments)?),
            _ => None,
        };
        let add = |a: Option<Dense>, b: Option<Dense>| a.zip(b).map(|(a, b)| Dense(a.0 + b.0));
        Ok(Self {
            plan: self.plan,
            rows,
            ata: self.ata + other.ata,
            rkr: add(self.rkr, other.rkr),
            at_t: add(self.at_t, other.at_t),
            outputs,
        })
    }
}

/// Joins two sets of output sums; `segments` lists the row ranges of both
/// sides in global order (`false` = left) with their offsets into the side's
/// `output_of`.
fn merge_outputs<Y: ConcatRows>(
    left: OutputSums<Y>,
    right: OutputSums<Y>,
    segments: &[(usize, usize, bool, usize)],
) -> Result<OutputSums<Y>> {
    let k_left = left.outputs.n_rows();
    let joined = left.outputs.concat(&right.outputs)?;
    let (distinct, group_of) = joined.group_duplicates();
    // First global row of each distinct output, then their order by it.
    let mut first = vec![usize::MAX; distinct.n_rows()];
    for (j, &g) in group_of.iter().enumerate() {
        let f = if j < k_left { left.first_row[j] } else { right.first_row[j - k_left] };
        first[g] = first[g].min(f);
    }
    let mut order: Vec<usize> = (0..distinct.n_rows()).collect();
    order.sort_unstable_by_key(|&g| first[g]);
    let mut rank = vec![0; order.len()];
    for (r, &g) in order.iter().enumerate() {
        rank[g] = r;
    }
    let final_of: Vec<usize> = group_of.iter().map(|&g| rank[g]).collect();
    let m = left.at_p.nrows();
    let mut at_p = Mat::zeros(m, order.len());
    for (src, block) in [(0, left.at_p.as_ref()), (k_left, right.at_p.as_ref())] {
        add_columns(&mut at_p, block, |j| final_of[src + j]);
    }
    let mut output_of = Vec::with_capacity(left.output_of.len() + right.output_of.len());
    for &(a, b, side, offset) in segments {
        let (src, base) = if side { (&right.output_of, k_left) } else { (&left.output_of, 0) };
        output_of.extend(src[offset..offset + (b - a)].iter().map(|&g| final_of[base + g]));
    }
    Ok(OutputSums {
        outputs: distinct.select(&order),
        first_row: order.iter().map(|&g| first[g]).collect(),
        at_p,
        output_of,
    })
}

fn add_columns(dst: &mut Mat<f64>, block: MatRef<'_, f64>, target: impl Fn(usize) -> usize) {
    for j in 0..block.ncols() {
        let mut d = dst.col_mut(target(j));
        d += block.col(j);
    }
}
