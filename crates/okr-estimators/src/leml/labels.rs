//! Training targets of LEML: full label sets, or an observed set Ω of entries
//! with explicit values.

use okr_kernels::{LabelSets, Rows};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::sparse::Csr;
use crate::{Error, Result};

/// Partially observed labels: the set Ω of observed `(sample, label)` entries,
/// each with its value (`+1`/`-1`, or `1`/`0` with explicit zeros for the
/// squared loss). Entries outside Ω are missing, not negative.
///
/// # Example
/// ```
/// use okr_estimators::leml::PartialLabels;
/// use okr_kernels::LabelSets;
/// // sample 0: label 1 is on, label 2 is off; sample 1: label 0 is on
/// let y = PartialLabels::new(3, vec![vec![(1, 1.0), (2, -1.0)], vec![(0, 1.0)]])?;
/// assert_eq!((y.n_samples(), y.n_labels(), y.n_observed()), (2, 3, 3));
/// // Hide labels at random: keep each of the n * L entries with probability 0.5.
/// let full = LabelSets::new(3, vec![vec![0], vec![1, 2]])?;
/// let part = PartialLabels::sample(&full, 0.5, -1.0, 7)?;
/// assert!(part.n_observed() <= 6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PartialLabels {
    pub(crate) obs: Csr,
}

impl PartialLabels {
    /// Observed entries per sample: `rows[i]` lists `(label, value)` pairs
    /// (any order, no duplicates).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a label index `>= n_labels`, a
    /// duplicate entry or a non-finite value.
    pub fn new(n_labels: usize, rows: Vec<Vec<(usize, f64)>>) -> Result<Self> {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        indptr.push(0);
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for (i, mut r) in rows.into_iter().enumerate() {
            r.sort_by_key(|e| e.0);
            for (p, &(j, v)) in r.iter().enumerate() {
                if j >= n_labels {
                    return Err(Error::InvalidParameter {
                        name: "observed label index",
                        value: format!("{j} (sample {i})"),
                        expected: "< n_labels",
                    });
                }
                if p > 0 && r[p - 1].0 == j {
                    return Err(Error::InvalidParameter {
                        name: "observed entry",
                        value: format!("({i}, {j}) twice"),
                        expected: "each entry at most once",
                    });
                }
                if !v.is_finite() {
                    return Err(Error::InvalidParameter {
                        name: "observed label value",
                        value: format!("{v} at ({i}, {j})"),
                        expected: "a finite number",
                    });
                }
                indices.push(j);
                values.push(v);
            }
            indptr.push(indices.len());
        }
        Ok(Self { obs: Csr { nrows: indptr.len() - 1, ncols: n_labels, indptr, indices, values } })
    }

    /// Observes each of the `n·L` entries of `full` independently with
    /// probability `fraction` (seeded ChaCha8): positives get `+1`, negatives
    /// `negative` (`-1` for the ±1 encoding, `0` for {0, 1}).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 < fraction <= 1` and `negative` is finite.
    pub fn sample(full: &LabelSets, fraction: f64, negative: f64, seed: u64) -> Result<Self> {
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "observed fraction",
                value: fraction.to_string(),
                expected: "in (0, 1]",
            });
        }
        if !negative.is_finite() {
            return Err(Error::InvalidParameter {
                name: "negative value",
                value: negative.to_string(),
                expected: "a finite number",
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let l = full.n_labels();
        let rows = full
            .iter()
            .map(|set| {
                (0..l)
                    .filter(|_| rng.random::<f64>() < fraction)
                    .map(|j| (j, if set.binary_search(&j).is_ok() { 1.0 } else { negative }))
                    .collect()
            })
            .collect();
        Self::new(l, rows)
    }

    /// Number of samples `n`.
    pub fn n_samples(&self) -> usize {
        self.obs.nrows
    }

    /// Number of labels `L`.
    pub fn n_labels(&self) -> usize {
        self.obs.ncols
    }

    /// $|\Omega|$.
    pub fn n_observed(&self) -> usize {
        self.obs.nnz()
    }

    /// Observed `(label, value)` pairs of sample `i`, labels increasing.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let r = self.obs.indptr[i]..self.obs.indptr[i + 1];
        self.obs.indices[r.clone()].iter().copied().zip(self.obs.values[r].iter().copied())
    }
}

/// What LEML is trained on.
///
/// - `Full`: every entry is observed; the label sets hold the positives. The
///   squared loss uses {0, 1} targets (Algorithm 2, Hamming threshold 0.5);
///   logistic and squared hinge use ±1 over all `n·L` entries (threshold 0).
/// - `Partial`: only Ω is observed, with the values stored there
///   (Algorithm 1). The Hamming threshold is the midpoint of the two values.
///
/// # Example
/// ```
/// use okr_estimators::leml::Targets;
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(3, vec![vec![0], vec![1, 2]])?;
/// assert_eq!(Targets::Full(&y).n_samples(), 2);
/// # Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Targets<'a> {
    /// All labels observed.
    Full(&'a LabelSets),
    /// Only the entries of Ω observed.
    Partial(&'a PartialLabels),
}

impl Targets<'_> {
    /// Number of samples.
    pub fn n_samples(&self) -> usize {
        match self {
            Targets::Full(y) => y.n_rows(),
            Targets::Partial(y) => y.n_samples(),
        }
    }

    /// Number of labels.
    pub fn n_labels(&self) -> usize {
        match self {
            Targets::Full(y) => y.n_labels(),
            Targets::Partial(y) => y.n_labels(),
        }
    }
}
