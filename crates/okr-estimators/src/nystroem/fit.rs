use okr_kernels::{Kernel, Rows};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Anchors, Nystroem, NystroemValidParams};
use crate::core::checks::{check_sample_weight, check_training_set};
use crate::partition::SampledRows;
use crate::sketch::distinct_uniform;
use crate::sketched::{RidgeSystem, SketchGram, sum_rows_by_group};
use crate::{Error, Fit, FitWeighted, Result};

impl<KX: Clone, KY: Clone> NystroemValidParams<KX, KY> {
    /// [`fit`](Self::fit) with $K_{nm}$ streamed in chunks of `chunk_rows`
    /// training rows: each chunk's block $K(\text{anchors}, x_c)$ is added into
    /// $K_{mn}K_{nm}$ (SYRK-shaped) and $K_{mn}P$, then dropped. After the
    /// pass (finalize) $B = K_{mn}K_{nm} + n\lambda K_{mm}$ is formed in the
    /// buffer of a freshly built $K_{mm}$ and factored in place, so the peak
    /// is two `m x m` matrices (three when $B$ is too ill conditioned and the
    /// whitened form is used) plus $W$ and one `m x chunk_rows` block.
    /// The result does not depend on `chunk_rows` beyond rounding.
    ///
    /// # Errors
    /// As [`fit`](Self::fit), and [`Error::InvalidParameter`] for `chunk_rows = 0`.
    pub fn fit_with_chunk_rows<X, Y>(&self, x: &X, y: &Y, chunk_rows: usize) -> Result<Nystroem<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        self.fit_chunked(x, y, chunk_rows, None)
    }

    /// The streamed fit, weighted when `weights` are given.
    fn fit_chunked<X, Y>(
        &self,
        x: &X,
        y: &Y,
        chunk_rows: usize,
        weights: Option<&[f64]>,
    ) -> Result<Nystroem<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        // One partition of the map-reduce fit (see `crate::partition`).
        let n = check_training_set(x, y)?;
        let total = match weights {
            None => n as f64,
            Some(w) => check_sample_weight(w, n)?,
        };
        let plan = self.plan(n, &SampledRows::select_from(x, y, self.plan_rows(n)?))?;
        let stats = plan.statistics_weighted(x, y, 0, chunk_rows, weights)?;
        plan.finalize_weighted(stats, total)
    }

    /// The reference fit that forms $K_{nm}$ `(n, m)` whole (memory
    /// $O(nm)$); equal to [`fit`](Self::fit) up to rounding. Kept for tests
    /// and small problems.
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    pub fn fit_in_memory<X, Y>(&self, x: &X, y: &Y) -> Result<Nystroem<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        let (n, anchor_indices, anchors) = self.anchors_for(x, y)?;
        let knm = self.input_kernel.gram_block(x, &anchors);
        let kmm = self.input_kernel.gram(&anchors);
        let ridge = n as f64 * self.lambda;
        let form = "system B = A^T A + ridge K_mm";
        let gram = SketchGram::Held(kmm);
        let system = RidgeSystem::new(knm.as_ref(), gram, form, ridge, self.lambda, self.pinv_rtol)?;
        let rank = system.rank();
        let (outputs, output_of) = y.group_duplicates();
        let at_p = sum_rows_by_group(knm.as_ref(), &output_of, outputs.n_rows()).transpose().to_owned();
        let w = system.solve(at_p);
        Ok(Nystroem { params: self.clone(), anchors, anchor_indices, weights: w, outputs, output_of, rank })
    }

    /// Checks the training pair and draws (or checks) the anchors.
    pub(crate) fn anchors_for<X: Rows, Y: Rows>(&self, x: &X, y: &Y) -> Result<(usize, Vec<usize>, X)> {
        let n = check_training_set(x, y)?;
        let anchor_indices = self.draw_anchors(n)?;
        let anchors = x.select(&anchor_indices);
        Ok((n, anchor_indices, anchors))
    }

    /// The anchors' indices among `n` rows: seeded uniform draw (sorted) or the given ones.
    pub(crate) fn draw_anchors(&self, n: usize) -> Result<Vec<usize>> {
        if n == 0 {
            return Err(Error::Empty { what: "training set" });
        }
        Ok(match &self.anchors {
            Anchors::Uniform(m) => {
                let mut idx = distinct_uniform(n, *m, &mut ChaCha8Rng::seed_from_u64(self.seed));
                idx.sort_unstable();
                idx
            }
            Anchors::Given(v) => {
                if let Some(&bad) = v.iter().find(|&&i| i >= n) {
                    return Err(Error::InvalidParameter {
                        name: "anchors",
                        value: format!("index {bad}"),
                        expected: "training indices < n_samples",
                    });
                }
                v.clone()
            }
        })
    }
}

impl<'y, X, Y, KX, KY> Fit<X, &'y Y> for NystroemValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Object = Nystroem<X, Y, KX, KY>;

    /// Fits Nystroem KRR (spec reduced-rank 1.7):
    /// $\alpha(x) = K_{nm}(K_{nm}^\top K_{nm} + n\lambda K_{mm})^\dagger k_m(x)$,
    /// the KRR estimator restricted to the span of the anchors' features.
    /// Stores $W = (K_{nm}^\top K_{nm} + n\lambda K_{mm})^\dagger K_{nm}^\top P$
    /// `(m, n_distinct)` so that $C = K(x, \text{anchors})\, W$. With
    /// $B = K_{nm}^\top K_{nm} + n\lambda K_{mm}$, $W$ comes from one
    /// Cholesky factorization $B = L L^\top$ when it succeeds without jitter
    /// and $\min L_{ii}^2 > \max(10^{-10}, \mathrm{pinv\_rtol}) \max L_{ii}^2$ (cost $m^3/3 + 2 m^2
    /// n_{distinct}$); otherwise from the stable form
    /// $W = \Phi (F^\top F + n\lambda I)^{-1} F^\top P$ with $\Phi = L_K^{-\top}$
    /// from a Cholesky factor $K_{mm} = L_K L_K^\top$ when its pivots satisfy
    /// $\min L_{ii}^2 > \mathrm{rtol} \max L_{ii}^2$, otherwise
    /// $\Phi = V_r \operatorname{diag}(w_r^{-1/2})$ from $K_{mm} = V \operatorname{diag}(w) V^\top$
    /// (eigenvalues at or below `pinv_rtol * max` dropped), and $F = K_{nm}\Phi$.
    ///
    /// $K_{nm}$ is never held whole: it is streamed in chunks of
    /// [`DEFAULT_CHUNK_ROWS`](super::DEFAULT_CHUNK_ROWS) rows (see
    /// [`fit_with_chunk_rows`](Self::fit_with_chunk_rows)).
    /// Time $O(n m d + n m^2 + m^3)$, memory $O(m^2 + m\, n_{distinct})$.
    ///
    /// # Errors
    /// [`Error::Empty`] / [`Error::ShapeMismatch`] for the training pair,
    /// [`Error::InvalidParameter`] for an anchor index `>= n`,
    /// [`Error::ZeroRank`] for a zero system, [`Error::Linalg`].
    fn fit(&self, x: &X, y: &'y Y) -> Result<Nystroem<X, Y, KX, KY>> {
        self.fit_with_chunk_rows(x, y, super::DEFAULT_CHUNK_ROWS)
    }
}

impl<'y, X, Y, KX, KY> FitWeighted<X, &'y Y> for NystroemValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    /// Fits weighted Nystroem KRR (see [`FitWeighted`]): with
    /// $h = \sum_a \beta_a k(\cdot, x_a)$ over the anchors, minimizing
    /// $\sum_i w_i\|(K_{nm}\beta)_i - \psi(y_i)\|^2 + n_w\lambda\,\beta^\top K_{mm}\beta$
    /// gives the normal equations
    /// $(K_{nm}^\top W K_{nm} + n_w\lambda K_{mm})\,\beta = K_{nm}^\top W P$,
    /// so $W = (K_{nm}^\top W K_{nm} + n_w\lambda K_{mm})^\dagger K_{nm}^\top W P$
    /// (the weight matrix of the model, not to confuse with the sample
    /// weights), solved as in [`fit`](Fit::fit) with the streamed products
    /// weighted. The anchors are drawn as in `fit`, without the weights, so
    /// integer weights equal repeated rows for the same anchors
    /// ([`Anchors::Given`]).
    ///
    /// # Errors
    /// As [`fit`](Fit::fit), and those of [`check_sample_weight`](crate::check_sample_weight).
    fn fit_weighted(&self, x: &X, y: &'y Y, sample_weight: &[f64]) -> Result<Nystroem<X, Y, KX, KY>> {
        self.fit_chunked(x, y, super::DEFAULT_CHUNK_ROWS, Some(sample_weight))
    }
}
