//! Rankings (total orders of `k` items) and the Kendall and Mallows kernels
//! on them (Jiao & Vert, "The Kendall and Mallows kernels for permutations",
//! ICML 2015).
// Index loops mirror the pair formulas (item pairs p < q).
#![allow(clippy::needless_range_loop)]

use faer::{MatMut, Par};
use serde::{Deserialize, Serialize};

use crate::containers::group_by_key;
use crate::{DenseRows, Error, Kernel, Linear, Result, Rows};

/// Largest number of items of a ranking: the Kendall embedding has
/// $\binom k2$ coordinates per row, so this bounds it (and what a crafted
/// model file can ask for) at about $5 \cdot 10^5$.
pub const MAX_RANKING_ITEMS: usize = 1024;

/// Rankings of `n_items` items, one per row: row `i` holds the rank of each
/// item (0 = most preferred), a permutation of `0..n_items`.
///
/// Deserialized values are checked like constructed ones.
///
/// # Example
/// ```
/// use okr_kernels::{Rankings, Rows};
/// // Item 2 first, then item 0, then item 1.
/// let r = Rankings::new(3, vec![vec![1, 2, 0], vec![0, 1, 2], vec![1, 2, 0]])?;
/// assert_eq!(r.ranks(0), &[1, 2, 0]);
/// assert_eq!(r.order(0), vec![2, 0, 1]);
/// assert_eq!(r.discordant_pairs(0, &r, 1), 2);
/// assert_eq!(r.group_duplicates().1, vec![0, 1, 0]);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RankingParts")]
pub struct Rankings {
    n_items: usize,
    /// Row-major ranks, `n_rows * n_items` values.
    ranks: Vec<u32>,
}

/// The serialized fields of [`Rankings`], checked on the way in.
#[derive(Deserialize)]
struct RankingParts {
    n_items: usize,
    ranks: Vec<u32>,
}

impl TryFrom<RankingParts> for Rankings {
    type Error = Error;
    fn try_from(p: RankingParts) -> Result<Self> {
        Self::from_flat(p.n_items, p.ranks)
    }
}

impl Rankings {
    /// Rankings from rank vectors (`rows[i][j]` = rank of item `j`, 0-based).
    ///
    /// # Errors
    /// [`Error::InvalidStructure`] for `n_items` outside `1..=MAX_RANKING_ITEMS`
    /// or a row that is not a permutation of `0..n_items`.
    pub fn new(n_items: usize, rows: Vec<Vec<usize>>) -> Result<Self> {
        let mut flat = Vec::with_capacity(rows.len() * n_items);
        for (i, r) in rows.iter().enumerate() {
            if r.len() != n_items {
                return Err(Error::InvalidStructure(format!("ranking {i} has {} ranks, expected {n_items}", r.len())));
            }
            flat.extend(r.iter().map(|&v| u32::try_from(v).unwrap_or(u32::MAX)));
        }
        Self::from_flat(n_items, flat)
    }

    fn from_flat(n_items: usize, ranks: Vec<u32>) -> Result<Self> {
        if !(1..=MAX_RANKING_ITEMS).contains(&n_items) {
            return Err(Error::InvalidStructure(format!(
                "rankings of {n_items} items (expected 1 to {MAX_RANKING_ITEMS})"
            )));
        }
        if !ranks.len().is_multiple_of(n_items) {
            return Err(Error::InvalidStructure(format!("{} ranks for rows of {n_items}", ranks.len())));
        }
        let mut seen = vec![usize::MAX; n_items];
        for (i, row) in ranks.chunks_exact(n_items).enumerate() {
            for &v in row {
                let v = v as usize;
                if v >= n_items || seen[v] == i {
                    return Err(Error::InvalidStructure(format!("ranking {i} is not a permutation of 0..{n_items}")));
                }
                seen[v] = i;
            }
        }
        Ok(Self { n_items, ranks })
    }

    /// Number of ranked items `k`.
    pub fn n_items(&self) -> usize {
        self.n_items
    }
    /// Number of item pairs $\binom k2$.
    pub fn n_pairs(&self) -> usize {
        self.n_items * (self.n_items - 1) / 2
    }
    /// Ranks of row `i` (`ranks(i)[j]` = rank of item `j`, 0 = first).
    ///
    /// # Panics
    /// If `i >= n_rows()`.
    pub fn ranks(&self, i: usize) -> &[u32] {
        &self.ranks[i * self.n_items..(i + 1) * self.n_items]
    }
    /// The items of row `i` from most to least preferred.
    pub fn order(&self, i: usize) -> Vec<usize> {
        let mut o = vec![0; self.n_items];
        for (item, &r) in self.ranks(i).iter().enumerate() {
            o[r as usize] = item;
        }
        o
    }
    /// Number of item pairs that row `i` and row `j` of `other` order
    /// differently (the Kendall distance).
    ///
    /// # Panics
    /// If the rows are out of range or the item counts differ.
    pub fn discordant_pairs(&self, i: usize, other: &Rankings, j: usize) -> usize {
        assert_eq!(self.n_items, other.n_items, "rankings of different item counts");
        let (a, b) = (self.ranks(i), other.ranks(j));
        let mut d = 0;
        for p in 0..self.n_items {
            for q in p + 1..self.n_items {
                d += usize::from((a[p] < a[q]) != (b[p] < b[q]));
            }
        }
        d
    }
    /// The Kendall embedding, one row per ranking:
    /// $\phi(\sigma)_{pq} = \operatorname{sign}(\sigma_q - \sigma_p)$ for item
    /// pairs $p < q$ (+1 when $p$ is ranked before $q$), so that
    /// $\langle \phi(\sigma), \phi(\sigma') \rangle = \binom k2 - 2 n_d(\sigma, \sigma')$.
    pub fn kendall_embedding(&self) -> DenseRows {
        let (k, n) = (self.n_items, self.n_rows());
        let mut m = faer::Mat::zeros(n, self.n_pairs());
        for i in 0..n {
            let r = self.ranks(i);
            let mut c = 0;
            for p in 0..k {
                for q in p + 1..k {
                    m[(i, c)] = if r[p] < r[q] { 1.0 } else { -1.0 };
                    c += 1;
                }
            }
        }
        DenseRows::new(m).expect("entries are +-1")
    }
}

impl Rows for Rankings {
    fn n_rows(&self) -> usize {
        self.ranks.len() / self.n_items
    }
    /// The item count: rankings of other lengths are rejected as candidates.
    fn feature_dim(&self) -> Option<usize> {
        Some(self.n_items)
    }
    fn select(&self, indices: &[usize]) -> Self {
        let mut ranks = Vec::with_capacity(indices.len() * self.n_items);
        for &i in indices {
            ranks.extend_from_slice(self.ranks(i));
        }
        Self { n_items: self.n_items, ranks }
    }
    fn group_duplicates(&self) -> (Self, Vec<usize>) {
        group_by_key(self.n_rows(), |i| self.ranks(i), |first| self.select(first))
    }
}

/// Kernels on rankings, both with unit diagonal:
///
/// | kernel | $k(\sigma, \sigma')$ |
/// |---|---|
/// | `Kendall` | $\tau(\sigma, \sigma') = 1 - 2 n_d(\sigma, \sigma') / \binom k2$ (1 for a single item) |
/// | `Mallows { lambda }` | $\exp(-\lambda\, n_d(\sigma, \sigma'))$, $\lambda > 0$ |
///
/// with $n_d$ the number of discordant item pairs. Both are positive
/// definite (Jiao & Vert 2015): Kendall is the linear kernel of the Kendall
/// embedding over $\binom k2$, Mallows the Gaussian kernel
/// $\exp(-\tfrac{\lambda}{4} \|\phi(\sigma) - \phi(\sigma')\|^2)$ on it. Gram
/// blocks go through one GEMM of the embeddings.
///
/// # Example
/// ```
/// use okr_kernels::{Kernel, RankingKernel, Rankings};
/// let r = Rankings::new(3, vec![vec![0, 1, 2], vec![2, 1, 0]])?;
/// assert_eq!(RankingKernel::Kendall.eval(&r, 0, &r, 1), -1.0);
/// let m = RankingKernel::mallows(0.5)?;
/// assert!((m.eval(&r, 0, &r, 1) - (-1.5f64).exp()).abs() < 1e-15);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RankingKernel {
    /// Kendall's tau.
    Kendall,
    /// The Mallows kernel of width `lambda`.
    Mallows {
        /// $\lambda > 0$.
        lambda: f64,
    },
}

impl RankingKernel {
    /// The Mallows kernel.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `lambda` is finite and `> 0`.
    pub fn mallows(lambda: f64) -> Result<Self> {
        let k = Self::Mallows { lambda };
        k.check()?;
        Ok(k)
    }

    /// `Ok` when the parameters are valid (a deserialized kernel did not go
    /// through [`mallows`](Self::mallows)).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a Mallows width that is not finite and `> 0`.
    pub fn check(&self) -> Result<()> {
        match *self {
            Self::Mallows { lambda } if !(lambda.is_finite() && lambda > 0.0) => {
                Err(Error::InvalidParameter { name: "lambda", value: lambda, expected: "a finite number > 0" })
            }
            _ => Ok(()),
        }
    }

    /// The kernel value from the number of discordant pairs of `n_pairs`.
    fn of_discordant(&self, discordant: f64, n_pairs: f64) -> f64 {
        match *self {
            Self::Kendall if n_pairs == 0.0 => 1.0,
            Self::Kendall => 1.0 - 2.0 * discordant / n_pairs,
            Self::Mallows { lambda } => (-lambda * discordant).exp(),
        }
    }
}

impl Kernel<Rankings> for RankingKernel {
    fn eval(&self, a: &Rankings, i: usize, b: &Rankings, j: usize) -> f64 {
        self.of_discordant(a.discordant_pairs(i, b, j) as f64, a.n_pairs() as f64)
    }

    fn gram_block_into(&self, a: &Rankings, b: &Rankings, mut dst: MatMut<'_, f64>, par: Par) {
        assert_eq!((dst.nrows(), dst.ncols()), (a.n_rows(), b.n_rows()), "gram block shape");
        assert_eq!(a.n_items, b.n_items, "rankings of different item counts");
        let p = a.n_pairs() as f64;
        if p == 0.0 {
            // A single item: every ranking is the same.
            for j in 0..dst.ncols() {
                for i in 0..dst.nrows() {
                    dst[(i, j)] = 1.0;
                }
            }
            return;
        }
        Linear.gram_block_into(&a.kendall_embedding(), &b.kendall_embedding(), dst.as_mut(), par);
        // <phi, phi'> = P - 2 n_d, exact in floating point (integers).
        for j in 0..dst.ncols() {
            for i in 0..dst.nrows() {
                dst[(i, j)] = self.of_discordant((p - dst[(i, j)]) / 2.0, p);
            }
        }
    }

    fn diag(&self, a: &Rankings) -> Vec<f64> {
        vec![1.0; a.n_rows()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All permutations of `0..k` as rank vectors.
    fn all(k: usize) -> Vec<Vec<usize>> {
        if k == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for p in all(k - 1) {
            for pos in 0..k {
                let mut q: Vec<usize> = p.iter().map(|&v| if v >= pos { v + 1 } else { v }).collect();
                q.push(pos);
                out.push(q);
            }
        }
        out
    }

    /// Blocks equal the pairwise definitions (brute-force pair counts) on all
    /// 24 permutations of 4 items, and the Grams are positive semi-definite.
    #[test]
    fn blocks_match_pair_counts_and_are_psd() {
        let r = Rankings::new(4, all(4)).unwrap();
        assert_eq!(r.n_rows(), 24);
        for kernel in [RankingKernel::Kendall, RankingKernel::mallows(0.7).unwrap()] {
            let g = kernel.gram(&r);
            for i in 0..24 {
                for j in 0..24 {
                    let (a, b) = (r.ranks(i), r.ranks(j));
                    let mut nd = 0;
                    for p in 0..4 {
                        for q in 0..4 {
                            nd += usize::from(p < q && (a[p] < a[q]) != (b[p] < b[q]));
                        }
                    }
                    let want = match kernel {
                        RankingKernel::Kendall => 1.0 - 2.0 * nd as f64 / 6.0,
                        RankingKernel::Mallows { lambda } => (-lambda * nd as f64).exp(),
                    };
                    assert!((g[(i, j)] - want).abs() < 1e-15, "{kernel:?} {i} {j}");
                    assert_eq!(kernel.eval(&r, i, &r, j), g[(i, j)]);
                }
            }
            let eig = okr_linalg::eigh(g.as_ref()).unwrap();
            assert!(eig.values().iter().all(|&e| e > -1e-10), "{kernel:?}: {:?}", eig.values());
            assert_eq!(kernel.diag(&r), vec![1.0; 24]);
        }
    }

    #[test]
    fn invalid_rankings_and_widths_are_errors() {
        assert!(Rankings::new(3, vec![vec![0, 0, 1]]).is_err());
        assert!(Rankings::new(3, vec![vec![0, 1, 3]]).is_err());
        assert!(Rankings::new(3, vec![vec![0, 1]]).is_err());
        assert!(Rankings::new(0, vec![]).is_err());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(RankingKernel::mallows(bad).is_err());
        }
        // Deserialization runs the same checks.
        let good = Rankings::new(2, vec![vec![1, 0]]).unwrap();
        let bytes = postcard::to_stdvec(&good).unwrap();
        assert_eq!(postcard::from_bytes::<Rankings>(&bytes).unwrap(), good);
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() = 1; // ranks [1, 1]
        assert!(postcard::from_bytes::<Rankings>(&bad).is_err());
    }

    #[test]
    fn single_item_rankings_are_all_equal() {
        let r = Rankings::new(1, vec![vec![0], vec![0]]).unwrap();
        assert_eq!(RankingKernel::Kendall.gram(&r)[(0, 1)], 1.0);
        assert_eq!(r.group_duplicates().1, vec![0, 0]);
    }
}
