use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use okr_estimators::SurrogateModel;
use okr_kernels::Rows;
use okr_linalg::profile;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Candidate-set decoder with a memory budget.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `memory_budget` | 1 GiB | peak bytes for coefficient, atom-product and score tiles (tiles never go below one row) | `> 0` |
/// | `top_k` | 1 | number of best candidates kept per test point | `>= 1` |
/// | `precision` | [`Precision::F64`] | arithmetic of the score GEMM; [`Precision::F32`] scores in single precision and re-scores a shortlist in double | `F64`, `F32` |
///
/// For `n_atoms = r`, the decoder caches the whole atom-product matrix
/// `G` `(r, n_candidates)` when it fits in half the budget (computed once);
/// otherwise it recomputes `G` in candidate tiles for each tile of test rows.
/// Scores of a tile are one GEMM, `S = G^T C^T`, scanned in parallel.
///
/// With [`Precision::F32`] the GEMM runs in single precision (about twice
/// the arithmetic rate and half the score memory), the best
/// `top_k + 7` candidates of each row and candidate tile by the f32 scores
/// (the shortlist, [`F32_SHORTLIST_EXTRA`] beyond `top_k`) are re-scored in
/// double precision, and the top-k is taken from the re-scored shortlist.
/// The returned scores are the double-precision ones. The decision equals
/// the f64 decision whenever the f64 best beats the runner-up by more than
/// [`f32_margin`] (ties: lowest index, as in f64); see there for the bound.
/// A row whose f32 scores overflow is re-scored entirely in double.
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
    #[serde(default)]
    precision: Precision,
}

impl Default for CandidateDecoder {
    fn default() -> Self {
        Self { memory_budget: 1 << 30, top_k: 1, precision: Precision::F64 }
    }
}

/// Arithmetic of the decoding scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Scores by an f64 GEMM (the reference).
    #[default]
    F64,
    /// Scores by an f32 GEMM, the shortlist re-scored in f64 (see
    /// [`CandidateDecoder`] and [`f32_margin`]).
    F32,
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "f64" => Ok(Self::F64),
            "f32" => Ok(Self::F32),
            _ => Err(Error::InvalidParameter { name: "precision", value: s.into(), expected: "f64 or f32" }),
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::F64 => "f64",
            Self::F32 => "f32",
        })
    }
}

/// How many candidates beyond `top_k` each row keeps, per candidate tile, by
/// its f32 scores for re-scoring in f64 under [`Precision::F32`].
pub const F32_SHORTLIST_EXTRA: usize = 7;

/// The near-tie margin of [`Precision::F32`] for one test row: if the f64
/// best candidate's score is lower than every other candidate's by more than
///
/// $$\delta_t = 4\,\gamma_{r+4}\,\|c_t\|_2\,\max_c \|g_c\|_2 + 2^{-50} \max_c |k(c,c)|,
/// \qquad \gamma_n = \frac{n u}{1 - n u},\; u = 2^{-24},$$
///
/// the f32 decision is the f64 decision. Here `coef_norm` is
/// $\|c_t\|_2$ (the row's coefficients, length $r$ = `n_atoms`),
/// `max_atom_norm` is the largest column norm of the atom products $G$ and
/// `max_norm` is $\max_c |k(c,c)|$.
///
/// Why: each f32 score is within $2\gamma_{r+2}\sum_i |c_{ti} g_{ic}|$
/// (rounding of $c_t$ and $G$ to f32 and any-order f32 summation) plus the
/// f64 rounding of adding $k(c,c)$ of the exact score, and the f64 scores
/// (GEMM and the shortlist's dot products) are within the f64 analogue;
/// Cauchy-Schwarz bounds the sum. With a gap above $\delta_t$ the f64 best
/// is the strict f32 best, so it is in the shortlist and wins the re-scoring.
/// Conversely, the f64 best is missed only when `top_k + 7` candidates of
/// its candidate tile lie within $\delta_t$ of it, or when a shortlisted
/// candidate ties it to within f64 rounding. The bound is worst-case
/// (rounding errors of random sign typically grow like $\sqrt r$, not $r$);
/// `cargo xtask bench --precision` reports differing decisions against it.
/// Returns infinity when $(r+4)u \ge 1$.
///
/// # Example
/// ```
/// let m = okr_decode::f32_margin(1000, 2.0, 3.0, 1.0);
/// assert!(m > 4.0 * 1004.0 * 2f64.powi(-24) * 6.0 && m < 1.5e-3);
/// ```
pub fn f32_margin(n_atoms: usize, coef_norm: f64, max_atom_norm: f64, max_norm: f64) -> f64 {
    let nu = (n_atoms as f64 + 4.0) * f64::from(f32::EPSILON) / 2.0;
    if nu >= 1.0 {
        return f64::INFINITY;
    }
    4.0 * nu / (1.0 - nu) * coef_norm * max_atom_norm + max_norm.abs() * 2f64.powi(-50)
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

    /// Sets the arithmetic of the scores (default [`Precision::F64`]).
    pub fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }

    /// The arithmetic of the scores.
    pub fn get_precision(&self) -> Precision {
        self.precision
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
        // F32 holds an f32 copy of G, a transposed f64 and a transposed f32
        // copy of the coefficient tile and an f32 score tile: at most 2.5 f64
        // entries per entry of the f64 plan.
        let bytes_per_entry = match self.precision {
            Precision::F64 => 8,
            Precision::F32 => 20,
        };
        let plan = TilePlan::new(self.memory_budget / bytes_per_entry, r, n_c, n_te);
        let par = Par::rayon(0);
        let norms = model.output_sq_norms(candidates);

        let cached_g = if plan.cand_tile == n_c {
            let mut g = Mat::zeros(model.n_atoms(), n_c);
            let _p = profile::phase("decode: atom products", 0.0);
            model.atom_products_into(candidates, g.as_mut(), par)?;
            Some(g)
        } else {
            None
        };

        let mut scratch = Scratch::new(self.precision);
        if let Some(g) = &cached_g {
            scratch.set_g32(g.as_ref());
        }
        let mut indices = vec![usize::MAX; n_te * k];
        let mut scores = vec![f64::INFINITY; n_te * k];
        let mut coef = Mat::<f64>::zeros(0, 0);
        let mut g_tile = Mat::<f64>::zeros(0, 0);
        for t0 in (0..n_te).step_by(plan.test_tile) {
            let tt = plan.test_tile.min(n_te - t0);
            let xt = if t0 == 0 && tt == n_te { x.clone() } else { x.slice(t0..t0 + tt) };
            coef.resize_with(tt, model.n_atoms(), |_, _| 0.0);
            {
                // Outer phase: the expansion marks its kernel blocks and GEMMs inside.
                let _p = profile::phase("decode: test coefficients", 0.0);
                model.coefficients_into(&xt, coef.as_mut(), par)?;
            }
            for c0 in (0..n_c).step_by(plan.cand_tile) {
                let ct = plan.cand_tile.min(n_c - c0);
                let g = match &cached_g {
                    Some(g) => g.as_ref(),
                    None => {
                        g_tile.resize_with(model.n_atoms(), ct, |_, _| 0.0);
                        let _p = profile::phase("decode: atom products", 0.0);
                        model.atom_products_into(&candidates.slice(c0..c0 + ct), g_tile.as_mut(), par)?;
                        scratch.set_g32(g_tile.as_ref());
                        g_tile.as_ref()
                    }
                };
                let range = t0 * k..(t0 + tt) * k;
                scan_tile(
                    &mut scratch,
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
    /// rows so the score block stays within the memory budget; under
    /// [`Precision::F32`] an f32 copy of `atom_products` is held beside it.
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
        // F32: an f32 score tile, transposed f64 and f32 copies of the
        // coefficient tile, beside the f32 copy of the atom products.
        let per_row = match self.precision {
            Precision::F64 => 8 * n_c,
            Precision::F32 => 4 * n_c + 12 * coef.ncols(),
        };
        let tile = (self.memory_budget / per_row.max(1)).clamp(1, n_te.max(1));
        let mut indices = vec![usize::MAX; n_te * k];
        let mut scores = vec![f64::INFINITY; n_te * k];
        let mut scratch = Scratch::new(self.precision);
        scratch.set_g32(atom_products);
        for t0 in (0..n_te).step_by(tile) {
            let tt = tile.min(n_te - t0);
            let range = t0 * k..(t0 + tt) * k;
            scan_tile(
                &mut scratch,
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

/// Buffers reused across tiles: the f64 score tile, or under
/// [`Precision::F32`] the f32 copy of the atom products, the transposed
/// coefficient tile in f64 (contiguous rows for the re-scoring) and f32, and
/// the f32 score tile.
struct Scratch {
    precision: Precision,
    s: Mat<f64>,
    s32: Mat<f32>,
    g32: Mat<f32>,
    coef_t: Mat<f64>,
    coef32_t: Mat<f32>,
}

impl Scratch {
    fn new(precision: Precision) -> Self {
        let z = || Mat::zeros(0, 0);
        Self {
            precision,
            s: z(),
            s32: Mat::zeros(0, 0),
            g32: Mat::zeros(0, 0),
            coef_t: z(),
            coef32_t: Mat::zeros(0, 0),
        }
    }

    /// Rounds the atom products of the current candidate tile to f32 (F32 only).
    fn set_g32(&mut self, g: MatRef<'_, f64>) {
        if self.precision == Precision::F32 {
            round_into(&mut self.g32, g);
        }
    }
}

/// `dst = src` rounded to f32 (resized to `src`'s shape).
fn round_into(dst: &mut Mat<f32>, src: MatRef<'_, f64>) {
    dst.resize_with(src.nrows(), src.ncols(), |_, _| 0.0);
    for j in 0..src.ncols() {
        for (d, &v) in dst.col_as_slice_mut(j).iter_mut().zip(src.col(j).iter()) {
            *d = v as f32;
        }
    }
}

/// $k(c,c) - 2 \langle c_t, g_c\rangle$ in f64 from the contiguous
/// coefficient row `coef_t`, summed in atom order (so equal candidates get
/// bit-equal scores).
#[inline]
fn rescore(coef_t: &[f64], g: MatRef<'_, f64>, c: usize, norm: f64) -> f64 {
    let dot: f64 = match g.col(c).try_as_col_major() {
        Some(col) => coef_t.iter().zip(col.as_slice()).map(|(&a, &b)| a * b).sum(),
        None => coef_t.iter().zip(g.col(c).iter()).map(|(&a, &b)| a * b).sum(),
    };
    norm - 2.0 * dot
}

/// Scores one tile, `S^T = -2 G^T C^T + norms` (`ct x tt`, so the scores of a
/// test row are one contiguous column), and merges them into the running top-k.
/// Under [`Precision::F32`] the GEMM is in f32 and each row's f32 shortlist
/// is re-scored in f64 before the merge.
///
/// Returns `Err(t)` with the lowest row `t` of the tile that has a NaN or
/// infinite score: such a row has no meaningful argmin, and leaving it
/// undecoded would hand an out-of-range index to the caller.
#[allow(clippy::too_many_arguments)]
fn scan_tile(
    scratch: &mut Scratch,
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
    if scratch.precision == Precision::F32 {
        return scan_tile_f32(scratch, coef, g, norms, c0, indices, scores, par);
    }
    let s = &mut scratch.s;
    s.resize_with(ct, tt, |_, _| 0.0);
    {
        let _p = profile::phase("score GEMM", 2.0 * (tt * ct * coef.ncols()) as f64);
        matmul(s.as_mut(), Accum::Replace, g.transpose(), coef.transpose(), -2.0, par);
    }
    let s = &*s;
    let _p = profile::phase("argmax scan", 0.0);
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

/// [`scan_tile`] in f32 with f64 re-scoring of a `k + F32_SHORTLIST_EXTRA`
/// shortlist per row; `scratch.g32` must hold `g` rounded to f32.
#[allow(clippy::too_many_arguments)]
fn scan_tile_f32(
    scratch: &mut Scratch,
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
    debug_assert_eq!((scratch.g32.nrows(), scratch.g32.ncols()), (g.nrows(), ct));
    scratch.coef_t.resize_with(coef.ncols(), tt, |_, _| 0.0);
    scratch.coef_t.copy_from(coef.transpose());
    round_into(&mut scratch.coef32_t, scratch.coef_t.as_ref());
    scratch.s32.resize_with(ct, tt, |_, _| 0.0);
    {
        let _p = profile::phase("score GEMM (f32)", 2.0 * (tt * ct * coef.ncols()) as f64);
        matmul(scratch.s32.as_mut(), Accum::Replace, scratch.g32.transpose(), scratch.coef32_t.as_ref(), -2.0f32, par);
    }
    let (s32, coef_t) = (&scratch.s32, &scratch.coef_t);
    let _p = profile::phase("argmax scan + f64 re-scoring", 0.0);
    let ks = k + F32_SHORTLIST_EXTRA;
    indices
        .par_chunks_mut(k)
        .zip(scores.par_chunks_mut(k))
        .enumerate()
        .filter_map(|(t, (idx, sc))| {
            let mut short_idx = vec![usize::MAX; ks];
            let mut short_sc = vec![f64::INFINITY; ks];
            let mut finite = true;
            for (c, (&v, &nc)) in s32.col_as_slice(t).iter().zip(norms).enumerate() {
                let score = f64::from(v) + nc;
                if !score.is_finite() {
                    finite = false;
                    break;
                }
                insert_top_k(&mut short_idx, &mut short_sc, c, score);
            }
            if finite {
                // In index order, so ties in f64 keep the lowest index.
                short_idx.sort_unstable();
                for &c in short_idx.iter().take_while(|&&c| c != usize::MAX) {
                    let score = rescore(coef_t.col_as_slice(t), g, c, norms[c]);
                    if !score.is_finite() {
                        return Some(t);
                    }
                    insert_top_k(idx, sc, c0 + c, score);
                }
            } else {
                // f32 overflow: the whole row in f64, which errs only where f64 does.
                for (c, &nc) in norms.iter().enumerate().take(ct) {
                    let score = rescore(coef_t.col_as_slice(t), g, c, nc);
                    if !score.is_finite() {
                        return Some(t);
                    }
                    insert_top_k(idx, sc, c0 + c, score);
                }
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
