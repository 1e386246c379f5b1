use std::ops::Range;

use faer::{Mat, MatRef, Par};
use okr_kernels::Rows;
use okr_linalg::profile;
use okr_surrogate::SurrogateModel;
use serde::{Deserialize, Serialize};

use crate::chain::{self, ChainOrder, ChainPlan};
use crate::scan::{Scratch, scan_tile};
use crate::{Error, Precision, Result};

/// Candidate-set decoder with a memory budget.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `memory_budget` | 1 GiB | peak bytes for coefficient, atom-product, folded-candidate, kernel-row and score tiles (tiles never go below one row) | `> 0` |
/// | `top_k` | 1 | number of best candidates kept per test point | `>= 1` |
/// | `precision` | [`Precision::F64`] | arithmetic of the score GEMM; [`Precision::F32`] scores in single precision and re-scores a shortlist in double | `F64`, `F32` |
/// | `chain_order` | [`ChainOrder::Auto`] | order of the score chain $K_x(x, X_e)\,M\,G$ for models with a linear input map | `Auto`, `CoefficientsFirst`, `CandidatesFirst` |
///
/// **Coefficients first** (every model): for `n_atoms = r`, the decoder
/// caches the whole atom-product matrix `G` `(r, n_candidates)` when it fits
/// in half the budget (computed once); otherwise it recomputes `G` in
/// candidate tiles for each tile of test rows. Scores of a tile are one
/// GEMM, `S = G^T C^T`, scanned in parallel.
///
/// **Candidates first** (models whose coefficients are
/// $C = K_x(x, X_e)\,M$, [`SurrogateModel::linear_expansion`]): the
/// candidates are folded into the map, $F = M G$ `(e, n_candidates)`, in
/// candidate tiles that fit the budget; for each tile every test tile's
/// kernel rows $K_x(X_e, x)$ are computed and scored, `S = F^T K_x(X_e, x)`.
/// [`ChainOrder::Auto`] picks the order with fewer flops by
/// [`ChainCosts`](crate::ChainCosts) (cheaper whenever $e$ is below the
/// number of test rows and atoms are about as many as candidates);
/// [`CandidateDecoder::plan`] tells which order and tiles a decode uses.
/// Both orders give the same scores up to rounding and the same tie rule.
///
/// With [`Precision::F32`] the GEMM runs in single precision (about twice
/// the arithmetic rate and half the score memory), the best
/// `top_k + 7` candidates of each row and candidate tile by the f32 scores
/// (the shortlist, [`F32_SHORTLIST_EXTRA`](crate::F32_SHORTLIST_EXTRA) beyond `top_k`) are re-scored in
/// double precision, and the top-k is taken from the re-scored shortlist.
/// The returned scores are the double-precision ones. The decision equals
/// the f64 decision whenever the f64 best beats the runner-up by more than
/// [`f32_margin`](crate::f32_margin) (ties: lowest index, as in f64); see there for the bound.
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
    #[serde(default)]
    chain_order: ChainOrder,
}

impl Default for CandidateDecoder {
    fn default() -> Self {
        Self { memory_budget: 1 << 30, top_k: 1, precision: Precision::F64, chain_order: ChainOrder::Auto }
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
    pub(crate) fn from_parts(k: usize, indices: Vec<usize>, scores: Vec<f64>) -> Self {
        Self { k, indices, scores }
    }

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

/// What the coefficients-first loop calls with each test tile's rows and coefficients.
type OnTile<'a> = dyn FnMut(Range<usize>, MatRef<'_, f64>) -> Result<()> + 'a;

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

    /// Sets the order of the score chain (default [`ChainOrder::Auto`]);
    /// forcing one is for tests and benches.
    pub fn chain_order(mut self, order: ChainOrder) -> Self {
        self.chain_order = order;
        self
    }

    /// The order of the score chain asked for.
    pub fn get_chain_order(&self) -> ChainOrder {
        self.chain_order
    }

    /// What [`decode`](CandidateDecoder::decode) does for `model`, `n_test`
    /// test rows and `n_candidates` candidates: the order that runs, both
    /// orders' flops ([`ChainCosts`](crate::ChainCosts), for models with a
    /// linear input map) and the tiles under the memory budget.
    pub fn plan<X, Y, M>(&self, model: &M, n_test: usize, n_candidates: usize) -> ChainPlan
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
    {
        let lin = model.linear_expansion();
        chain::plan(
            self.memory_budget,
            self.precision,
            self.chain_order,
            model.n_atoms(),
            lin.as_ref(),
            n_test,
            n_candidates,
        )
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
        let k = self.top_k.min(n_c);
        let norms = model.output_sq_norms(candidates);
        let lin = model.linear_expansion();
        let plan =
            chain::plan(self.memory_budget, self.precision, self.chain_order, model.n_atoms(), lin.as_ref(), n_te, n_c);
        match (plan.order, &lin) {
            (ChainOrder::CandidatesFirst, Some(lin)) => {
                chain::decode_candidates_first(&plan, self.precision, model, lin, x, candidates, &norms, k)
            }
            _ => self.decode_coefficients_first(&plan, model, x, candidates, &norms, k, &mut |_, _| Ok(())),
        }
    }

    /// The coefficients-first loop: test tiles outer, candidate tiles inner;
    /// `on_tile(rows, coef)` sees each test tile's coefficients before they
    /// are scored.
    #[allow(clippy::too_many_arguments)]
    fn decode_coefficients_first<X, Y, M>(
        &self,
        plan: &ChainPlan,
        model: &M,
        x: &X,
        candidates: &Y,
        norms: &[f64],
        k: usize,
        on_tile: &mut OnTile<'_>,
    ) -> Result<Decoded>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
    {
        let (n_te, n_c) = (x.n_rows(), candidates.n_rows());
        let par = Par::rayon(0);
        let mut scratch = Scratch::new(self.precision);
        // The whole of G when it fits, kept in f64 as a column-major G^T (the
        // score GEMM's left factor, see `scan_tile`), which the copy (equal
        // in bytes to G, dropped with it) leaves within the budget.
        let cached_g = if plan.candidate_tile == n_c {
            let mut g = Mat::zeros(model.n_atoms(), n_c);
            let _p = profile::phase("decode: atom products", 0.0);
            model.atom_products_into(candidates, g.as_mut(), par)?;
            scratch.set_g32(g.as_ref());
            Some(match self.precision {
                Precision::F64 => CachedG::Transposed(g.transpose().to_owned()),
                Precision::F32 => CachedG::Columns(g),
            })
        } else {
            None
        };
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
            on_tile(t0..t0 + tt, coef.as_ref())?;
            for c0 in (0..n_c).step_by(plan.candidate_tile) {
                let ct = plan.candidate_tile.min(n_c - c0);
                let g = match &cached_g {
                    Some(CachedG::Columns(g)) => g.as_ref(),
                    Some(CachedG::Transposed(g_t)) => g_t.as_ref().transpose(),
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
                    coef.as_ref().transpose(),
                    g,
                    &norms[c0..c0 + ct],
                    c0,
                    &mut indices[range.clone()],
                    &mut scores[range],
                    par,
                )
                .map_err(|t| Error::NonFiniteScore { row: t0 + t })?;
            }
            okr_surrogate::progress::report(t0 + tt, n_te, "decode: test rows");
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
        // F64: the score tile and a column-major copy of the coefficient
        // tile, beside a column-major copy of G^T; F32: an f32 score tile,
        // transposed f64 and f32 copies of the coefficient tile, beside the
        // f32 copy of the atom products.
        let per_row = match self.precision {
            Precision::F64 => 8 * (n_c + coef.ncols()),
            Precision::F32 => 4 * n_c + 12 * coef.ncols(),
        };
        let tile = (self.memory_budget / per_row.max(1)).clamp(1, n_te.max(1));
        let mut indices = vec![usize::MAX; n_te * k];
        let mut scores = vec![f64::INFINITY; n_te * k];
        let mut scratch = Scratch::new(self.precision);
        scratch.set_g32(atom_products);
        // In f64, a column-major G^T once for every tile (see `scan_tile`).
        let g_t = (self.precision == Precision::F64 && atom_products.col_stride() != 1)
            .then(|| atom_products.transpose().to_owned());
        let atom_products = g_t.as_ref().map_or(atom_products, |g_t| g_t.as_ref().transpose());
        for t0 in (0..n_te).step_by(tile) {
            let tt = tile.min(n_te - t0);
            let range = t0 * k..(t0 + tt) * k;
            scan_tile(
                &mut scratch,
                coef.subrows(t0, tt).transpose(),
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

    /// Decodes every row of `x` against `candidates` coefficients first, in
    /// test tiles under the memory budget, and hands each tile's coefficients
    /// to the caller: for test rows `rows`, `on_tile(rows, C)` receives
    /// $C$ `(rows.len(), n_atoms)` with $h(x_t) = \sum_a C_{ta} a_a$, before
    /// the tile is scored. Read-outs that are linear in $h(x)$ (label scores
    /// $C B Y$) are computed there one tile at a time, so the whole
    /// `(n_test, n_atoms)` coefficient matrix never exists.
    ///
    /// With `truth` (one true output per row of `x`), it also returns the
    /// squared RKHS errors computed inside each tile,
    /// $$\|h(x_t) - \psi(y_t)\|^2 = c_t^\top A\, c_t - 2\, c_t^\top g(y_t) + k(y_t, y_t),$$
    /// with $A$ the atom Gram ([`SurrogateModel::atom_gram`], computed once,
    /// `(n_atoms, n_atoms)`: model-sized, outside the budget) and $g(y_t)$ the
    /// atom products of $y_t$; negative rounding is clipped to 0. These are
    /// [`SurrogateModel::rkhs_sq_errors`] up to rounding. The tiles then also
    /// hold $g$ and $C A$ (`2 n_atoms` more entries per test row, counted in
    /// the budget); what `on_tile` allocates is the caller's.
    ///
    /// Always coefficients first (the candidates-first order never forms
    /// $C$); the decision and scores equal [`decode`](Self::decode)'s up to
    /// rounding, ties to the lowest index.
    ///
    /// # Errors
    /// As [`decode`](Self::decode); a shape error of the model when `truth`
    /// is not one output of the model's kind per row of `x`; any error
    /// `on_tile` returns (decoding stops there).
    ///
    /// # Example
    /// ```
    /// use okr_estimators::{Fit, Iokr};
    /// use faer::Mat;
    /// use okr_decode::CandidateDecoder;
    /// use okr_kernels::{DenseRows, Linear, Rows};
    /// let x = DenseRows::new(Mat::from_fn(6, 3, |i, j| if i % 3 == j { 1.0 } else { 0.1 }))?;
    /// let y = DenseRows::new(Mat::from_fn(6, 3, |i, j| if i % 3 == j { 1.0 } else { 0.0 }))?;
    /// let model = Iokr::params(Linear, Linear).lambda(1e-6).fit(&x, &y)?;
    /// // 200 bytes: one test row per tile.
    /// let dec = CandidateDecoder::new().memory_budget(200);
    /// let mut rows_seen = Vec::new();
    /// let (decoded, errors) = dec.decode_tiles(&model, &x, &y.select(&[0, 1, 2]), Some(&y), |rows, coef| {
    ///     assert_eq!(coef.nrows(), rows.len());
    ///     rows_seen.push(rows);
    ///     Ok(())
    /// })?;
    /// assert_eq!(decoded.best(), vec![0, 1, 2, 0, 1, 2]);
    /// assert_eq!(rows_seen, (0..6).map(|t| t..t + 1).collect::<Vec<_>>());
    /// // h(x) is close to psi(y) on the training rows at a small ridge.
    /// assert!(errors.unwrap().iter().all(|&e| e < 1e-3));
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode_tiles<X, Y, M, F>(
        &self,
        model: &M,
        x: &X,
        candidates: &Y,
        truth: Option<&Y>,
        mut on_tile: F,
    ) -> Result<(Decoded, Option<Vec<f64>>)>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
        F: FnMut(Range<usize>, MatRef<'_, f64>) -> Result<()>,
    {
        self.check()?;
        let n_c = candidates.n_rows();
        if n_c == 0 {
            return Err(Error::NoCandidates);
        }
        model.check_inputs(x)?;
        model.check_outputs(candidates)?;
        let (n_te, r) = (x.n_rows(), model.n_atoms());
        let mut errors = match truth {
            Some(y) => {
                model.check_outputs(y)?;
                if y.n_rows() != n_te {
                    return Err(okr_surrogate::Error::ShapeMismatch {
                        what: "rows of true outputs vs test inputs",
                        expected: n_te,
                        got: y.n_rows(),
                    }
                    .into());
                }
                Some((y, model.atom_gram(), Vec::with_capacity(n_te)))
            }
            None => None,
        };
        let extra = if errors.is_some() { 2 * r } else { 0 };
        let plan = chain::coefficients_first_plan(self.memory_budget, self.precision, r, n_te, n_c, extra);
        let norms = model.output_sq_norms(candidates);
        let k = self.top_k.min(n_c);
        let decoded = self.decode_coefficients_first(&plan, model, x, candidates, &norms, k, &mut |rows, coef| {
            if let Some((y, gram, out)) = &mut errors {
                out.extend(model.rkhs_sq_errors_with_gram(coef, &y.slice(rows.clone()), gram.as_ref())?);
            }
            on_tile(rows, coef)
        })?;
        Ok((decoded, errors.map(|(_, _, out)| out)))
    }

    /// [`decode_tiles`](Self::decode_tiles) with true outputs and nothing
    /// else per tile: the decision and the squared RKHS errors
    /// $\|h(x_t) - \psi(y_t)\|^2$ (the `mse_h` metric is their mean), in
    /// tiles under the memory budget.
    ///
    /// # Errors
    /// As [`decode_tiles`](Self::decode_tiles).
    pub fn decode_with_errors<X, Y, M>(
        &self,
        model: &M,
        x: &X,
        candidates: &Y,
        truth: &Y,
    ) -> Result<(Decoded, Vec<f64>)>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
    {
        let (decoded, errors) = self.decode_tiles(model, x, candidates, Some(truth), |_, _| Ok(()))?;
        Ok((decoded, errors.unwrap_or_default()))
    }
}

/// The atom products of every candidate, kept for all test tiles: `G`
/// `(n_atoms, n_c)` (F32, whose re-scoring reads a candidate's column), or
/// its transpose stored column-major (F64, the score GEMM's left factor).
enum CachedG {
    Columns(Mat<f64>),
    Transposed(Mat<f64>),
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn decode_tiles_agrees_with_decode() {
        use okr_estimators::{Fit, Iokr};
        use okr_kernels::{DenseRows, Gaussian, Linear};
        let x = DenseRows::new(Mat::from_fn(9, 2, |i, j| ((i * 3 + j * 5) % 7) as f64 / 7.0)).unwrap();
        let y = DenseRows::new(Mat::from_fn(9, 2, |i, j| ((i + 2 * j) % 4) as f64)).unwrap();
        let model = Iokr::params(Gaussian::new(0.5).unwrap(), Linear).lambda(1e-2).fit(&x, &y).unwrap();
        let dec = CandidateDecoder::new().top_k(3);
        let mut coef = Mat::zeros(9, model.n_atoms());
        let (a, errors) = dec
            .decode_tiles(&model, &x, &y, None, |rows, c| {
                coef.as_mut().subrows_mut(rows.start, rows.len()).copy_from(c);
                Ok(())
            })
            .unwrap();
        assert!(errors.is_none());
        let b = dec.decode(&model, &x, &y).unwrap();
        assert_eq!(a.best(), b.best());
        for t in 0..9 {
            for (s, r) in a.top_scores(t).iter().zip(b.top_scores(t)) {
                assert!((s - r).abs() < 1e-10 * (1.0 + r.abs()), "{s} {r}");
            }
        }
        assert_eq!(coef, model.coefficients(&x).unwrap());
        let empty = y.select(&[]);
        assert_eq!(dec.decode_with_errors(&model, &x, &empty, &y).unwrap_err(), Error::NoCandidates);
        let short = y.select(&[0, 1]);
        let e = dec.decode_with_errors(&model, &x, &y, &short).unwrap_err();
        assert!(matches!(e, Error::Estimator(okr_surrogate::Error::ShapeMismatch { expected: 9, got: 2, .. })), "{e}");
        // An error of the hook stops decoding and is returned.
        let e = dec.decode_tiles(&model, &x, &y, None, |_, _| Err(Error::NoCandidates)).unwrap_err();
        assert_eq!(e, Error::NoCandidates);
    }
}
