use std::ops::Range;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, JitterPolicy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::ridge::{RidgeSystem, SketchGram};
use super::{SketchedAtoms, SketchedIokr, SketchedIokrValidParams};
use crate::core::checks::{check_sample_weight, check_training_set};
use crate::partition::{PlanRows, SampledRows};
use crate::sketch::{PreparedSketch, Sketch};
use crate::stream::{StreamedProducts, stream_products};
use crate::{Error, Fit, FitWeighted, Result};

/// $E^\dagger$ for a symmetric PSD matrix $E$ `(m, m)`, applied from the
/// right: a Cholesky factorization when its pivots satisfy
/// $\min L_{ii}^2 > \mathrm{rtol} \max L_{ii}^2$ (then $E^\dagger = E^{-1}$),
/// otherwise an eigendecomposition dropping eigenvalues at or below
/// `rtol * max`.
pub(crate) enum PsdInverse {
    Cholesky(Cholesky),
    Pinv(Mat<f64>),
}

impl PsdInverse {
    /// The inverse and the rank kept.
    pub(crate) fn new(e: MatRef<'_, f64>, rtol: f64, lambda: f64, what: &'static str) -> Result<(Self, usize)> {
        if let Some(c) = pivoted_cholesky_or_none(e, rtol, lambda) {
            let rank = c.dim();
            return Ok((Self::Cholesky(c), rank));
        }
        let (pinv, rank) = psd_pinv(e, rtol, what)?;
        Ok((Self::Pinv(pinv), rank))
    }

    /// $M E^\dagger$ `(k, m)` for `m` `(k, m)`.
    pub(crate) fn apply_right(&self, m: MatRef<'_, f64>) -> Mat<f64> {
        let par = Par::rayon(0);
        match self {
            Self::Cholesky(c) => {
                // (E^{-1} M^T)^T.
                let mut mt = m.transpose().to_owned();
                c.solve_in_place(mt.as_mut(), par);
                mt.transpose().to_owned()
            }
            Self::Pinv(p) => {
                let mut out = Mat::zeros(m.nrows(), p.ncols());
                matmul(out.as_mut(), Accum::Replace, m, p.as_ref(), 1.0, par);
                out
            }
        }
    }
}

/// The Cholesky factor of `a` without jitter, if it exists and its pivots
/// satisfy $\min L_{ii}^2 > \mathrm{rtol} \max L_{ii}^2$.
pub(super) fn pivoted_cholesky_or_none(a: MatRef<'_, f64>, rtol: f64, lambda: f64) -> Option<Cholesky> {
    let no_jitter = JitterPolicy { max_attempts: 0, ..JitterPolicy::with_lambda(lambda) };
    let (c, _) = Cholesky::factor_in_place(a.to_owned(), no_jitter, Par::rayon(0)).ok()?;
    pivots_pass(&c, rtol).then_some(c)
}

/// Whether the pivots of a Cholesky factor satisfy
/// $\min L_{ii}^2 > \mathrm{rtol} \max L_{ii}^2$.
pub(super) fn pivots_pass(c: &Cholesky, rtol: f64) -> bool {
    let d = c.l().diagonal().column_vector();
    let (lo, hi) = d.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| (lo.min(v * v), hi.max(v * v)));
    hi > 0.0 && lo > rtol * hi
}

/// Pseudo-inverse of a symmetric PSD matrix by eigendecomposition, dropping
/// eigenvalues at or below `rtol * max`: $V_r \operatorname{diag}(1/w_r) V_r^\top$.
/// Returns the pseudo-inverse and the rank kept.
pub(crate) fn psd_pinv(a: MatRef<'_, f64>, rtol: f64, what: &'static str) -> Result<(Mat<f64>, usize)> {
    let e = okr_linalg::eigh(a)?;
    let w = e.values();
    let top = w.first().copied().unwrap_or(0.0);
    let r = if top > 0.0 { w.iter().take_while(|&&v| v > rtol * top).count() } else { 0 };
    if r == 0 {
        return Err(Error::ZeroRank { what, tol: rtol });
    }
    let v = e.vectors().subcols(0, r);
    let vs = Mat::from_fn(v.nrows(), r, |i, j| v[(i, j)] / w[j]);
    let mut out = Mat::zeros(v.nrows(), v.nrows());
    matmul(out.as_mut(), Accum::Replace, vs.as_ref(), v.transpose(), 1.0, Par::rayon(0));
    Ok((out, r))
}

/// Rows of $A = K R^\top$ per streamed chunk: 2048 while the `m x chunk`
/// block stays within 64 MiB (`m <= 4096`), fewer above, at least 256.
///
/// The SYRK into $A^\top A$ has inner dimension `chunk`: at `m = 2000` on
/// 2 threads it ran at 68% of the DGEMM rate with the former 8 MiB rule
/// (524 rows), 75% with 1024 rows and 83% with 2048 or 4096 rows (best of
/// six rounds each, same run). 2048 rows cost 31 MiB at `m = 2000`, beside
/// the two `m x m` accumulators and $A^\top P$.
pub(crate) fn stream_chunk_rows(m: usize) -> usize {
    ((64 << 20) / 8 / m.max(1)).clamp(256, crate::stream::DEFAULT_CHUNK_ROWS)
}

/// One streamed pass over $A = K R^\top$ `(n, m)` (never held whole, see
/// [`stream_products`]): returns $A^\top A$ and $A^\top P$ `(m, n_groups)`
/// for the sample-to-group map `group_of`, and $R K R^\top$ `(m, m)`
/// (exactly symmetric). Each chunk is $A_c^\top = R\, K(X, X_c)$ `(m, c)`,
/// at most `chunk_rows` rows (fewer when a dense sketch's Gram temporary
/// would pass 64 MiB); $R K R^\top = \sum_c A_c^\top R_c^\top$.
#[cfg(test)]
fn stream_sketched_gram<R: Rows, K: Kernel<R>>(
    r: &Sketch,
    kernel: &K,
    x: &R,
    group_of: &[usize],
    n_groups: usize,
    chunk_rows: usize,
    par: Par,
) -> (StreamedProducts, Mat<f64>) {
    let prepared = PreparedSketch::new(r, x);
    let (prods, mut rkr) = stream_sketched(r, &prepared, kernel, x, 0, (group_of, n_groups), chunk_rows, None, par);
    okr_linalg::products::symmetrize_in_place(rkr.as_mut());
    (prods, rkr)
}

/// [`stream_sketched_gram`] for the contiguous rows `x` starting at global
/// row `first_row` (a partition), the support rows already gathered in
/// `prepared`; $R K R^\top$ is returned unsymmetrized (a partial sum).
/// With row `weights`, $A^\top W A$ and $A^\top W P$ (see [`stream_products`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn stream_sketched<R: Rows, K: Kernel<R>>(
    r: &Sketch,
    prepared: &PreparedSketch<'_, R>,
    kernel: &K,
    x: &R,
    first_row: usize,
    groups: (&[usize], usize),
    chunk_rows: usize,
    weights: Option<&[f64]>,
    par: Par,
) -> (StreamedProducts, Mat<f64>) {
    let (n, m) = (x.n_rows(), r.nrows());
    let chunk = chunk_rows.min(prepared.max_block_cols(n));
    let fill =
        |rows: Range<usize>, block: MatMut<'_, f64>| prepared.sketch_block_into(kernel, &x.slice(rows), block, par);
    let mut rkr = Mat::zeros(m, m);
    let add_rkr = |first: usize, block: MatRef<'_, f64>| {
        r.add_right_product_of_columns(first_row + first, block, rkr.as_mut(), par)
    };
    let prods = stream_products(n, m, chunk, fill, Some(groups), None, weights, add_rkr, par);
    (prods, rkr)
}

/// $P^\top A$ `(n_groups, k)`: the rows of `a` `(n, k)` summed by group.
pub(crate) fn sum_rows_by_group(a: MatRef<'_, f64>, group_of: &[usize], n_groups: usize) -> Mat<f64> {
    let mut out = Mat::zeros(n_groups, a.ncols());
    for j in 0..a.ncols() {
        for (i, &g) in group_of.iter().enumerate() {
            out[(g, j)] += a[(i, j)];
        }
    }
    out
}

impl<'y, X, Y, KX, KY> Fit<X, &'y Y> for SketchedIokrValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Object = SketchedIokr<X, Y, KX, KY>;

    /// Fits SISOKR (or SIOKR, ISOKR, IOKR when a side is not sketched).
    ///
    /// With $A = K_X R_X^\top$, $B_X = A^\top A + n\lambda R_X K_X R_X^\top$,
    /// $D = K_Y R_Y^\top$ and $E = R_Y K_Y R_Y^\top$, the coefficients over the
    /// $m_Y$ atoms $a_j = \sum_i (R_Y)_{ji}\psi(y_i)$ are
    /// $c(x) = E^\dagger D^\top A\, B_X^\dagger\, R_X k_X^x$, i.e. the poster's
    /// $\tilde\Omega_Y \tilde\Omega_X R_X k^x_X$. The model stores
    /// $Z = R_{X,S}^\top B_X^\dagger A^\top D E^\dagger$ `(|S_X|, m_Y)` so that
    /// $C = K_X(x, X_S)\, Z$. Without an output sketch the atoms are the
    /// distinct training outputs ($D E^\dagger$ replaced by the 0/1 map $P$);
    /// without an input sketch $A B_X^\dagger R_X$ is replaced by
    /// $(K_X + n\lambda I)^{-1}$ (a Cholesky factorization, $O(n^3)$).
    /// $B_X^\dagger$ is applied by one Cholesky factorization of $B_X$ when
    /// its pivots pass a relative test, otherwise in the stable Nystroem
    /// form (features $F = A \Phi$ whitened by $R_X K_X R_X^\top$, then
    /// $F^\top F + n\lambda I$ by Cholesky), equal to the poster's
    /// pseudo-inverse on the range of $R_X K_X R_X^\top$.
    ///
    /// $A$ is never held whole: it is streamed in chunks of 2048 rows (fewer
    /// when $m_X > 4096$, keeping a chunk within 64 MiB),
    /// each added into $A^\top A$ (SYRK-shaped), $A^\top P$ and
    /// $R_X K_X R_X^\top$, with $P$ the 0/1 map from samples to distinct
    /// outputs.
    ///
    /// Time $O(n |S_X| d + n m_X^2 + u\, m_X m_Y + m_X^3 + m_Y^3)$ plus
    /// $O(u |S_Y| m_Y)$ for the output side, with $u$ the number of distinct
    /// training outputs ($|S| \le m$ for sub-sampling, $|S| = n$ for dense
    /// sketches); memory $O(m_X (m_X + u) + u\, m_Y)$ plus one chunk. No
    /// `n x n` matrix is formed when the input side is sketched.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::ShapeMismatch`] for the training pair;
    /// [`Error::ZeroRank`] when a sketched system is zero;
    /// [`Error::Linalg`] for a failed decomposition.
    fn fit(&self, x: &X, y: &'y Y) -> Result<SketchedIokr<X, Y, KX, KY>> {
        self.fit_impl(x, y, None)
    }
}

impl<'y, X, Y, KX, KY> FitWeighted<X, &'y Y> for SketchedIokrValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    /// Fits weighted SISOKR / SIOKR / ISOKR (see [`FitWeighted`]), with
    /// $n_w = \sum_i w_i$ in place of $n$ and $W = \operatorname{diag}(w)$.
    ///
    /// With an input sketch, $h$ is restricted to $\sum_k (R_X^\top\gamma)_k\,\phi(x_k)$
    /// and the weighted normal equations are
    /// $(A^\top W A + n_w\lambda R_XK_XR_X^\top)\,\Gamma = A^\top W\,T$,
    /// $A = K_XR_X^\top$: the streamed products become $A^\top W A$ and
    /// $A^\top W P$ (each chunk's columns scaled by $w_i^{1/2}$), the rest of
    /// the fit is unchanged. Without one (ISOKR), the input side is
    /// $(K_X + n_w\lambda W^{-1})^{-1}$ as weighted IOKR. The output sketch is
    /// an orthogonal projection of $\psi(y_i)$ onto the span of its atoms,
    /// which the weights do not change; the sketches are drawn as in
    /// [`fit`](Fit::fit), without the weights. Integer weights equal
    /// repeated rows for the same sketch matrices (a draw on `n` rows and
    /// one on the repeated rows differ).
    ///
    /// # Errors
    /// As [`fit`](Fit::fit), and those of [`check_sample_weight`](crate::check_sample_weight).
    fn fit_weighted(&self, x: &X, y: &'y Y, sample_weight: &[f64]) -> Result<SketchedIokr<X, Y, KX, KY>> {
        self.fit_impl(x, y, Some(sample_weight))
    }
}

impl<KX: Clone, KY: Clone> SketchedIokrValidParams<KX, KY> {
    fn fit_impl<X, Y>(&self, x: &X, y: &Y, weights: Option<&[f64]>) -> Result<SketchedIokr<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        let n = check_training_set(x, y)?;
        let total = match weights {
            None => n as f64,
            Some(w) => check_sample_weight(w, n)?,
        };
        if self.input_sketch.is_some() {
            // One partition of the map-reduce fit (see `crate::partition`),
            // with the draws made on the data (leverage scores need it).
            let (rx, ry) = self.draws(|spec, output, rng| match output {
                false => Sketch::draw_for_kernel(spec, &self.input_kernel, x, self.lambda, rng),
                true => Sketch::draw_for_kernel(spec, &self.output_kernel, y, self.lambda, rng),
            })?;
            let rows = PlanRows::new(rx.support().to_vec(), ry.as_ref().map_or(Vec::new(), |r| r.support().to_vec()));
            let plan = self.plan_from_draws(n, &SampledRows::select_from(x, y, rows), rx, ry)?;
            let stats = plan.statistics_weighted(x, y, 0, weights)?;
            return plan.finalize_weighted(stats, total);
        }
        // ISOKR / IOKR: the input side is an n x n ridge solve.
        let par = Par::rayon(0);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let (outputs, output_of) = y.group_duplicates();
        let output = match &self.output_sketch {
            Some(spec) => {
                let ry = Sketch::draw_for_kernel(spec, &self.output_kernel, y, self.lambda, &mut rng)?;
                let ry = ry.merge_duplicate_columns(&output_of).unwrap_or(ry);
                let y_support = y.select(ry.support());
                Some(self.output_side(&ry, &y_support, &outputs, &output_of)?)
            }
            None => None,
        };
        // n lambda on the diagonal, or lambda n_w / w_i when weighted.
        let ridge = |i: usize| match weights {
            None => n as f64 * self.lambda,
            Some(w) => self.lambda * (total / w[i]),
        };
        let build = || {
            let mut k = self.input_kernel.gram(x);
            for i in 0..n {
                k[(i, i)] += ridge(i);
            }
            k
        };
        let (chol, _) = Cholesky::factor_with(build, JitterPolicy::with_lambda(self.lambda), par)?;
        let rhs = match &output {
            Some(o) => {
                let t = o.e_inv.apply_right(o.du_t.transpose());
                Mat::from_fn(n, t.ncols(), |i, j| t[(output_of[i], j)])
            }
            None => Mat::from_fn(n, outputs.n_rows(), |i, u| if output_of[i] == u { 1.0 } else { 0.0 }),
        };
        let input_map = chol.solve(rhs.as_ref(), par);
        Ok(SketchedIokr {
            params: self.clone(),
            n_samples: n,
            x_support: x.clone(),
            x_support_indices: (0..n).collect(),
            input_map,
            outputs,
            output_of,
            output_rank: output.as_ref().map(|o| o.rank),
            atoms: output.map(|o| o.atoms),
            input_rank: None,
        })
    }
}

/// The output side of a model with an output sketch $R_Y$: $D_u^\top =
/// R_Y K_Y(Y, U)$ `(m_Y, u)` over the distinct outputs $U$, the inverse of
/// $E = R_Y K_Y R_Y^\top$ and the atoms.
pub(crate) struct OutputSide<Y> {
    pub(crate) du_t: Mat<f64>,
    pub(crate) e_inv: PsdInverse,
    pub(crate) atoms: SketchedAtoms<Y>,
    pub(crate) rank: usize,
}

impl<KX, KY> SketchedIokrValidParams<KX, KY> {
    /// The output side from the (merged) output sketch, its support's
    /// outputs, the distinct training outputs and every sample's output
    /// index. $D = K_Y R_Y^\top$ `(n, m_Y)` repeats its rows within a group
    /// of identical outputs: only the distinct rows $D_u$ are computed
    /// ($D = P D_u$), and $E = R_{Y,S} D_S$ from the support's rows of $D$.
    pub(crate) fn output_side<Y: Rows>(
        &self,
        ry: &Sketch,
        y_support: &Y,
        outputs: &Y,
        output_of: &[usize],
    ) -> Result<OutputSide<Y>>
    where
        KY: Kernel<Y>,
    {
        let par = Par::rayon(0);
        // D_u^T = R_Y K_Y(Y, outputs) (m_Y, n_distinct); D_u is its transposed view.
        let du_t = ry.sketch_cross_from_support(&self.output_kernel, y_support, outputs, par);
        let du = du_t.transpose();
        let m = ry.nrows();
        let d_support = Mat::from_fn(ry.support().len(), m, |s, j| du[(output_of[ry.support()[s]], j)]);
        let mut e = Mat::zeros(m, m);
        ry.apply_support_into(d_support.as_ref(), e.as_mut(), par);
        okr_linalg::products::symmetrize_in_place(e.as_mut());
        let (e_inv, rank) = PsdInverse::new(e.as_ref(), self.pinv_rtol, self.lambda, "R_Y K_Y R_Y^T")?;
        let atoms = SketchedAtoms {
            support: y_support.clone(),
            support_indices: ry.support().to_vec(),
            weights: ry.support_matrix(),
            gram: e,
        };
        Ok(OutputSide { du_t, e_inv, atoms, rank })
    }

    /// The input map $Z$ `(|S_X|, n_atoms)` and the rank kept, from the
    /// streamed sums $A^\top A$, $R_X K_X R_X^\top$ and $A^\top P$:
    /// $A^\top T = (A^\top P) D_u E^\dagger$ (or $A^\top P$ without an
    /// output sketch), then $Z = R_{X,S}^\top B_X^{-1} A^\top T$ with
    /// $B_X = A^\top A + n\lambda R_X K_X R_X^\top$ by [`RidgeSystem`]
    /// (directly, or in the whitened form when $B_X$ is ill conditioned).
    pub(crate) fn input_side<Y>(
        &self,
        rx: &Sketch,
        n: f64,
        ata: Mat<f64>,
        rkr: Mat<f64>,
        at_groups: Mat<f64>,
        output: Option<&OutputSide<Y>>,
    ) -> Result<(Mat<f64>, usize)> {
        let par = Par::rayon(0);
        // `n` is the number of samples, or the sum of the weights of a weighted fit.
        let ridge = n * self.lambda;
        let gram = SketchGram::Held(rkr);
        let form = "system B = A^T A + ridge R K R^T";
        let system = RidgeSystem::from_cross_product(ata, gram, form, ridge, self.lambda, self.pinv_rtol)?;
        let at_right = match output {
            Some(o) => {
                let mut ad = Mat::zeros(at_groups.nrows(), o.du_t.nrows());
                matmul(ad.as_mut(), Accum::Replace, at_groups.as_ref(), o.du_t.transpose(), 1.0, par);
                o.e_inv.apply_right(ad.as_ref())
            }
            None => at_groups,
        };
        let core = system.solve(at_right);
        Ok((rx.apply_support_transpose(core.as_ref()), system.rank()))
    }
}

#[cfg(test)]
mod tests {
    use okr_kernels::{DenseRows, Gaussian};

    use super::*;
    use crate::sketch::{SketchKind, SketchSpec};

    fn max_rel_err(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
        (a - b).norm_max() / b.norm_max()
    }

    /// The streamed reductions of $A = K R^\top$ equal the dense products
    /// for every sketch kind and for chunks that cut through the support
    /// (1, 7 and all rows), including sub-sampling with merged repeats.
    #[test]
    fn streamed_sketch_reductions_equal_dense_products() {
        let n = 53;
        let x = DenseRows::new(Mat::from_fn(n, 3, |i, j| ((i * 7 + j * 5) % 13) as f64 / 13.0)).unwrap();
        let kernel = Gaussian::new(0.8).unwrap();
        let group_of: Vec<usize> = (0..n).map(|i| (i * 5) % 7).collect();
        let p = Mat::from_fn(n, 7, |i, g| if group_of[i] == g { 1.0 } else { 0.0 });
        let k = kernel.gram(&x);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut sketches: Vec<Sketch> = [
            SketchKind::Gaussian,
            SketchKind::Rademacher,
            SketchKind::Uniform,
            SketchKind::SparseGaussian { p: Some(0.2) },
            SketchKind::Sjlt { s: 2 },
        ]
        .into_iter()
        .map(|kind| Sketch::draw_with(&SketchSpec::new(kind, 9), n, &mut rng).unwrap())
        .collect();
        let q: Vec<f64> = (0..n).map(|i| if i % 10 == 0 { 1.0 } else { 0.01 }).collect();
        let weighted = Sketch::weighted_subsampling(&q, 12, &mut rng).unwrap();
        sketches.push(weighted.merge_duplicate_columns(&(0..n).collect::<Vec<_>>()).unwrap());
        sketches.push(weighted);
        for r in &sketches {
            let rd = r.to_dense();
            let a = &k * rd.transpose();
            let (ata, at_p, rkr) = (a.transpose() * &a, a.transpose() * &p, &rd * &a);
            for chunk in [1, 7, n] {
                let (prods, streamed_rkr) = stream_sketched_gram(r, &kernel, &x, &group_of, 7, chunk, Par::rayon(2));
                assert!(max_rel_err(prods.ata.as_ref(), ata.as_ref()) < 1e-13, "A^T A, chunk {chunk}");
                let at_groups = prods.at_groups.unwrap();
                assert!(max_rel_err(at_groups.as_ref(), at_p.as_ref()) < 1e-13, "A^T P, chunk {chunk}");
                assert!(max_rel_err(streamed_rkr.as_ref(), rkr.as_ref()) < 1e-13, "R K R^T, chunk {chunk}");
                assert_eq!(streamed_rkr, streamed_rkr.transpose().to_owned(), "R K R^T symmetric");
            }
        }
    }
}
