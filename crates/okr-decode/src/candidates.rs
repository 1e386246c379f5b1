use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use okr_estimators::SurrogateModel;
use okr_kernels::Rows;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Candidate-set decoder with a memory budget.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `memory_budget` | 1 GiB | peak bytes for coefficient, atom-product and score tiles (tiles never go below one row) | `> 0` |
/// | `top_k` | 1 | number of best candidates kept per test point | `>= 1` |
///
/// For `n_atoms = r`, the decoder caches the whole atom-product matrix
/// `G` `(r, n_candidates)` when it fits in half the budget (computed once);
/// otherwise it recomputes `G` in candidate tiles for each tile of test rows.
/// Scores of a tile are one GEMM, `S = G^T C^T`, scanned in parallel.
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_decode::CandidateDecoder;
/// use okr_estimators::Iokr;
/// use okr_kernels::{DenseRows, Linear, Rows};
/// // Outputs are one-hot vectors; candidates are the three classes.
/// let x = DenseRows::new(Mat::from_fn(6, 3, |i, j| if i % 3 == j { 1.0 } else { 0.1 }))?;
/// let y = DenseRows::new(Mat::from_fn(6, 3, |i, j| if i % 3 == j { 1.0 } else { 0.0 }))?;
/// let model = Iokr::params(Linear, Linear).lambda(1e-6).fit(&x, &y)?;
/// let candidates = y.select(&[0, 1, 2]);
/// let decoded = CandidateDecoder::new().decode(&model, &x, &candidates)?;
/// assert_eq!(decoded.best(), vec![0, 1, 2, 0, 1, 2]);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CandidateDecoder {
    memory_budget: usize,
    top_k: usize,
}

impl Default for CandidateDecoder {
    fn default() -> Self {
        Self { memory_budget: 1 << 30, top_k: 1 }
    }
}

/// Result of candidate decoding: for each test point, the `top_k` best
/// candidate indices (best first) and their scores
/// $k(c, c) - 2\langle h(x), \psi(c)\rangle$ (that is
/// $\|h(x) - \psi(c)\|^2 - \|h(x)\|^2$).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decoded {
    k: usize,
    indices: Vec<usize>,
    scores: Vec<f64>,
}

impl Decoded {
    /// Number of test points.
    pub fn n_rows(&self) -> usize {
        self.indices.len().checked_div(self.k).unwrap_or(0)
    }
    /// Number of candidates kept per test point (`min(top_k, n_candidates)`).
    pub fn k(&self) -> usize {
        self.k
    }
    /// The best candidate of every test point.
    pub fn best(&self) -> Vec<usize> {
        self.indices.chunks(self.k).map(|c| c[0]).collect()
    }
    /// The ranked candidates of test point `t`, best first.
    ///
    /// # Panics
    /// If `t >= n_rows()`.
    pub fn top(&self, t: usize) -> &[usize] {
        &self.indices[t * self.k..(t + 1) * self.k]
    }
    /// Scores of the ranked candidates of test point `t`.
    ///
    /// # Panics
    /// If `t >= n_rows()`.
    pub fn top_scores(&self, t: usize) -> &[f64] {
        &self.scores[t * self.k..(t + 1) * self.k]
    }
}

impl CandidateDecoder {
    /// The default decoder: 1 GiB budget, `top_k = 1`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the memory budget in bytes for the decoding tiles.
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = bytes;
        self
    }

    /// Sets how many best candidates to keep per test point.
    pub fn top_k(mut self, k: usize) -> Self {
        self.top_k = k;
        self
    }

    fn check(&self) -> Result<()> {
        if self.top_k == 0 {
            return Err(Error::InvalidParameter { name: "top_k", value: "0".into(), expected: ">= 1" });
        }
        if self.memory_budget == 0 {
            return Err(Error::InvalidParameter { name: "memory_budget", value: "0".into(), expected: "> 0 bytes" });
        }
        Ok(())
    }

    /// Decodes every row of `x` against `candidates`.
    ///
    /// # Errors
    /// [`Error::NoCandidates`] for an empty candidate set, invalid decoder
    /// parameters, the model's shape errors for `x` / `candidates`, or
    /// [`Error::NonFiniteScore`] naming the first test row with a NaN or
    /// infinite score (a kernel that overflows): every returned index is a
    /// valid candidate index.
    pub fn decode<X, Y, M>(&self, model: &M, x: &X, candidates: &Y) -> Result<Decoded>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
    {
        self.check()?;
        let n_c = candidates.n_rows();
        if n_c == 0 {
            return Err(Error::NoCandidates);
        }
        model.check_inputs(x)?;
        model.check_outputs(candidates)?;
        let n_te = x.n_rows();
        let r = model.n_atoms().max(1);
        let k = self.top_k.min(n_c);
        let plan = TilePlan::new(self.memory_budget / 8, r, n_c, n_te);
        let par = Par::rayon(0);
        let norms = model.output_sq_norms(candidates);

        let cached_g = if plan.cand_tile == n_c {
            let mut g = Mat::zeros(model.n_atoms(), n_c);
            model.atom_products_into(candidates, g.as_mut(), par)?;
            Some(g)
        } else {
            None
        };

        let mut indices = vec![usize::MAX; n_te * k];
        let mut scores = vec![f64::INFINITY; n_te * k];
        let mut coef = Mat::<f64>::zeros(0, 0);
        let mut s = Mat::<f64>::zeros(0, 0);
        let mut g_tile = Mat::<f64>::zeros(0, 0);
        for t0 in (0..n_te).step_by(plan.test_tile) {
            let tt = plan.test_tile.min(n_te - t0);
            let xt = if t0 == 0 && tt == n_te { x.clone() } else { x.slice(t0..t0 + tt) };
            coef.resize_with(tt, model.n_atoms(), |_, _| 0.0);
            model.coefficients_into(&xt, coef.as_mut(), par)?;
            for c0 in (0..n_c).step_by(plan.cand_tile) {
                let ct = plan.cand_tile.min(n_c - c0);
                let g = match &cached_g {
                    Some(g) => g.as_ref(),
                    None => {
                        g_tile.resize_with(model.n_atoms(), ct, |_, _| 0.0);
                        model.atom_products_into(&candidates.slice(c0..c0 + ct), g_tile.as_mut(), par)?;
                        g_tile.as_ref()
                    }
                };
                let range = t0 * k..(t0 + tt) * k;
                scan_tile(
                    &mut s,
                    coef.as_ref(),
                    g,
                    &norms[c0..c0 + ct],
                    c0,
                    &mut indices[range.clone()],
                    &mut scores[range],
                    par,
                )
                .map_err(|t| Error::NonFiniteScore { row: t0 + t })?;
            }
        }
        Ok(Decoded { k, indices, scores })
    }

    /// Decodes from precomputed matrices: coefficients `coef` `(n_test, r)`,
    /// atom products `atom_products` `(r, n_candidates)` and candidate norms
    /// $k(c, c)$. Used by regularization paths, where the coefficients of
    /// many hyper-parameters share one set of atom products. Tiles over test
    /// rows so the score block stays within the memory budget.
    ///
    /// # Errors
    /// [`Error::NoCandidates`], invalid decoder parameters,
    /// [`Error::InvalidParameter`] when the shapes disagree, or
    /// [`Error::NonFiniteScore`] as in [`CandidateDecoder::decode`].
    pub fn decode_matrices(
        &self,
        coef: MatRef<'_, f64>,
        atom_products: MatRef<'_, f64>,
        norms: &[f64],
    ) -> Result<Decoded> {
        self.check()?;
        let n_c = atom_products.ncols();
        if n_c == 0 {
            return Err(Error::NoCandidates);
        }
        if coef.ncols() != atom_products.nrows() || norms.len() != n_c {
            return Err(Error::InvalidParameter {
                name: "matrix shapes",
                value: format!(
                    "coef {}x{}, atom products {}x{}, {} norms",
                    coef.nrows(),
                    coef.ncols(),
                    atom_products.nrows(),
                    n_c,
                    norms.len()
                ),
                expected: "coef.ncols() == atom_products.nrows() and one norm per candidate",
            });
        }
        let n_te = coef.nrows();
        let k = self.top_k.min(n_c);
        let tile = (self.memory_budget / 8 / n_c).clamp(1, n_te.max(1));
        let mut indices = vec![usize::MAX; n_te * k];
        let mut scores = vec![f64::INFINITY; n_te * k];
        let mut s = Mat::<f64>::zeros(0, 0);
        for t0 in (0..n_te).step_by(tile) {
            let tt = tile.min(n_te - t0);
            let range = t0 * k..(t0 + tt) * k;
            scan_tile(
                &mut s,
                coef.subrows(t0, tt),
                atom_products,
                norms,
                0,
                &mut indices[range.clone()],
                &mut scores[range],
                Par::rayon(0),
            )
            .map_err(|t| Error::NonFiniteScore { row: t0 + t })?;
        }
        Ok(Decoded { k, indices, scores })
    }
}

/// Scores one tile, `S^T = -2 G^T C^T + norms` (`ct x tt`, so the scores of a
/// test row are one contiguous column), and merges them into the running top-k.
///
/// Returns `Err(t)` with the lowest row `t` of the tile that has a NaN or
/// infinite score: such a row has no meaningful argmin, and leaving it
/// undecoded would hand an out-of-range index to the caller.
#[allow(clippy::too_many_arguments)]
fn scan_tile(
    s: &mut Mat<f64>,
    coef: MatRef<'_, f64>,
    g: MatRef<'_, f64>,
    norms: &[f64],
    c0: usize,
    indices: &mut [usize],
    scores: &mut [f64],
    par: Par,
) -> std::result::Result<(), usize> {
    let (tt, ct) = (coef.nrows(), g.ncols());
    let k = indices.len() / tt.max(1);
    s.resize_with(ct, tt, |_, _| 0.0);
    matmul(s.as_mut(), Accum::Replace, g.transpose(), coef.transpose(), -2.0, par);
    let s = &*s;
    indices
        .par_chunks_mut(k)
        .zip(scores.par_chunks_mut(k))
        .enumerate()
        .filter_map(|(t, (idx, sc))| {
            for (c, (&v, &nc)) in s.col(t).iter().zip(norms).enumerate() {
                let score = v + nc;
                if !score.is_finite() {
                    return Some(t);
                }
                insert_top_k(idx, sc, c0 + c, score);
            }
            None
        })
        .min()
        .map_or(Ok(()), Err)
}

/// Keeps `idx`/`sc` sorted by (score, index); a candidate enters only when
/// strictly better than the current last, so ties keep the lowest index
/// (candidates arrive in increasing index order). NaN scores never enter.
#[inline]
fn insert_top_k(idx: &mut [usize], sc: &mut [f64], c: usize, v: f64) {
    let k = sc.len();
    // `!(v < last)` also rejects NaN.
    if !(v < sc[k - 1] || idx[k - 1] == usize::MAX && !v.is_nan()) {
        return;
    }
    let mut pos = k - 1;
    while pos > 0 && (v < sc[pos - 1] || idx[pos - 1] == usize::MAX) {
        sc[pos] = sc[pos - 1];
        idx[pos] = idx[pos - 1];
        pos -= 1;
    }
    sc[pos] = v;
    idx[pos] = c;
}

/// Tile sizes (in rows) under a budget counted in f64 entries.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TilePlan {
    test_tile: usize,
    cand_tile: usize,
}

impl TilePlan {
    fn new(budget: usize, r: usize, n_c: usize, n_te: usize) -> Self {
        // Cache all of G when it takes at most half the budget; otherwise a
        // candidate tile gets a quarter.
        let cand_tile = if r.saturating_mul(n_c) <= budget / 2 { n_c } else { (budget / 4 / r).clamp(1, n_c) };
        let used = r * cand_tile;
        // The coefficient tile (tt x r), the model's Gram temporary (r x tt) and
        // the score tile (cand_tile x tt) share what is left.
        let per_test_row = 2 * r + cand_tile;
        let test_tile = (budget.saturating_sub(used) / per_test_row).clamp(1, n_te.max(1));
        Self { test_tile, cand_tile }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_insertion_keeps_order_and_ties_low() {
        let mut idx = vec![usize::MAX; 3];
        let mut sc = vec![f64::INFINITY; 3];
        for (c, v) in [(0, 5.0), (1, 1.0), (2, 1.0), (3, f64::NAN), (4, 0.5), (5, 5.0)] {
            insert_top_k(&mut idx, &mut sc, c, v);
        }
        assert_eq!(idx, vec![4, 1, 2]);
        assert_eq!(sc, vec![0.5, 1.0, 1.0]);
    }

    #[test]
    fn nan_or_inf_score_is_an_error_naming_the_test_row() {
        let g = Mat::from_fn(2, 3, |i, j| (i + j) as f64);
        let norms = [1.0, 2.0, 3.0];
        for bad in [f64::NAN, f64::INFINITY, f64::MAX] {
            // Row 2 of 4 overflows (-2 * f64::MAX is infinite); rows 0, 1, 3 are fine.
            let coef = Mat::from_fn(4, 2, |i, _| if i == 2 { bad } else { 0.5 });
            for budget in [8, 1 << 20] {
                let dec = CandidateDecoder::new().memory_budget(budget).top_k(2);
                let err = dec.decode_matrices(coef.as_ref(), g.as_ref(), &norms).unwrap_err();
                assert_eq!(err, Error::NonFiniteScore { row: 2 }, "{bad} {budget}");
                assert!(err.to_string().starts_with("test row 2 has a non-finite"), "{err}");
            }
        }
        let coef = Mat::from_fn(4, 2, |_, _| 0.5);
        let ok = CandidateDecoder::new().decode_matrices(coef.as_ref(), g.as_ref(), &norms).unwrap();
        assert!(ok.best().iter().all(|&c| c < 3));
    }

    #[test]
    fn tile_plan_respects_budget() {
        let budget = (1 << 20) / 8;
        let p = TilePlan::new(budget, 1000, 100_000, 5000);
        assert!(p.cand_tile < 100_000);
        assert!(p.cand_tile * 1000 + p.test_tile * (2 * 1000 + p.cand_tile) <= budget);
        let p = TilePlan::new(1 << 27, 100, 50, 7);
        assert_eq!((p.cand_tile, p.test_tile), (50, 7));
    }
}
