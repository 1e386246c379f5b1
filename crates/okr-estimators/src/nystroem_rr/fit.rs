use faer::{Mat, Par};
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, JitterPolicy};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{NystroemReducedRank, NystroemReducedRankValidParams};
use crate::core::checks::check_training_set;
use crate::core::projected_atom_products_into;
use crate::nystroem::{Anchors, NystroemParams};
use crate::partition::{PartitionPlan, SampledRows};
use crate::sketch::distinct_uniform;
use crate::{Error, Fit, Nystroem, Result};

/// The projection learned by Algorithm 1 on a subset, over the subset's
/// distinct outputs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Projection<Y> {
    pub(crate) outputs: Y,
    /// $G_u$ `(p, n_u)`.
    #[serde(with = "okr_linalg::serde_mat")]
    pub(crate) encoder: Mat<f64>,
    pub(crate) mu: Vec<f64>,
    pub(crate) numerical_rank: usize,
}

/// Algorithm 1 of reduced-rank IOKR on `(x, y)` without any `n x n`
/// eigendecomposition. With the 0/1 map $P$ `(n, n_u)` onto the distinct
/// outputs, $K_y = P K_u P^\top$, so $K_h = A_1 K_y A_1 = B K_u B^\top$ with
/// $B = A_1 P = P - n\lambda_1 (K_x + n\lambda_1 I)^{-1} P$ `(n, n_u)` (one
/// Cholesky solve). With $K_u = L L^\top$ (eigendecomposition, clamped at 0)
/// and $C = B^\top B$, the nonzero eigenvalues $\mu$ of $K_h$ are those of
/// $L^\top C L = V \operatorname{diag}(\mu) V^\top$ and the encoder over the
/// distinct outputs is $G_u = \beta^\top A_1 P = \operatorname{diag}(\mu_p)^{-1} V_p^\top L^\top C$.
/// Cost $O(n^3/3 + n^2 n_u + n\, n_u^2 + n_u^3)$ instead of two $n \times n$
/// eigendecompositions; equal to [`ReducedRankIokr`](crate::ReducedRankIokr)'s
/// encoder up to the signs of its rows.
#[allow(non_snake_case)]
pub(crate) fn learn_projection<X, Y, KX, KY>(
    kx: &KX,
    ky: &KY,
    x: &X,
    y: &Y,
    lambda1: f64,
    rank: usize,
    tol: f64,
) -> Result<Projection<Y>>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X>,
    KY: Kernel<Y>,
{
    let par = Par::rayon(0);
    let n = check_training_set(x, y)?;
    let ridge = n as f64 * lambda1;
    let (outputs, output_of) = y.group_duplicates();
    let n_u = outputs.n_rows();
    let build = || {
        let mut k = kx.gram(x);
        for i in 0..n {
            k[(i, i)] += ridge;
        }
        k
    };
    let (chol, _) = Cholesky::factor_with(build, JitterPolicy::with_lambda(lambda1), par)?;
    let P = Mat::from_fn(n, n_u, |i, u| if output_of[i] == u { 1.0 } else { 0.0 });
    let mut B = chol.solve(P.as_ref(), par);
    drop(chol);
    for u in 0..n_u {
        for i in 0..n {
            B[(i, u)] = P[(i, u)] - ridge * B[(i, u)];
        }
    }
    drop(P);
    let C = okr_linalg::crossprod(B.as_ref(), par);
    drop(B);
    let (z, Q) = okr_linalg::eigh(ky.gram(&outputs).as_ref())?.into_parts();
    let L = Mat::from_fn(n_u, n_u, |i, j| Q[(i, j)] * z[j].max(0.0).sqrt());
    let LtC = L.transpose() * &C;
    let S = &LtC * &L;
    let S = Mat::from_fn(n_u, n_u, |i, j| 0.5 * (S[(i, j)] + S[(j, i)]));
    let eig = okr_linalg::eigh(S.as_ref())?;
    let numerical_rank = eig.numerical_rank(tol);
    if numerical_rank == 0 {
        return Err(Error::ZeroRank { what: "K_h = W1 Kx Ky Kx W1", tol });
    }
    let p = rank.min(numerical_rank);
    let (mu, V) = eig.into_parts();
    let Vt = Mat::from_fn(p, n_u, |i, j| V[(j, i)] / mu[i]);
    let encoder = Vt * LtC;
    Ok(Projection { outputs, encoder, mu, numerical_rank })
}

/// `k` training indices: uniform distinct ones from `seed`, or the given ones checked.
pub(crate) fn draw_indices(choice: &Anchors, n: usize, seed: u64, name: &'static str) -> Result<Vec<usize>> {
    match choice {
        Anchors::Uniform(k) => {
            let mut idx = distinct_uniform(n, *k, &mut ChaCha8Rng::seed_from_u64(seed));
            idx.sort_unstable();
            Ok(idx)
        }
        Anchors::Given(v) => {
            if let Some(&bad) = v.iter().find(|&&i| i >= n) {
                return Err(Error::InvalidParameter {
                    name,
                    value: format!("index {bad}"),
                    expected: "training indices < n_samples",
                });
            }
            Ok(v.clone())
        }
    }
}

impl<KX: Clone, KY: Clone> NystroemReducedRankValidParams<KX, KY> {
    pub(crate) fn nystroem_params(&self) -> NystroemParams<KX, KY> {
        Nystroem::params(self.input_kernel.clone(), self.output_kernel.clone())
            .lambda(self.lambda2())
            .anchors(self.anchors.clone())
            .seed(self.seed)
            .pinv_rtol(self.pinv_rtol)
    }

    /// Composes an already fitted Nystroem KRR model with the projection
    /// learned on the subset: $M = W\, UY_u$ `(m, p)` with the model's weights
    /// $W$ `(m, n_distinct)` and the projected distinct outputs $UY_u$. Equal
    /// to [`fit`](Self::fit) when `nystroem` was fitted on `(x, y)` with
    /// ridge `lambda2` and these anchors; the returned model's parameters
    /// take `lambda2` and the anchors from `nystroem`. Saves the streamed
    /// pass when both estimators are wanted.
    ///
    /// # Errors
    /// As [`fit`](Self::fit), and [`Error::ShapeMismatch`] when `y` does not
    /// have the distinct outputs `nystroem` was fitted on.
    pub fn fit_from_nystroem<X, Y>(
        &self,
        nystroem: &Nystroem<X, Y, KX, KY>,
        x: &X,
        y: &Y,
    ) -> Result<NystroemReducedRank<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        let n = check_training_set(x, y)?;
        if nystroem.output_of_sample().len() != n {
            return Err(Error::ShapeMismatch {
                what: "training rows of the Nystroem model",
                expected: n,
                got: nystroem.output_of_sample().len(),
            });
        }
        let subset_indices = self.subset_indices(n)?;
        let proj = self.subset_projection(&x.select(&subset_indices), &y.select(&subset_indices))?;
        let uy_u = projected_outputs(&self.output_kernel, &proj, nystroem.distinct_outputs())?;
        let predict_map = nystroem.weights() * uy_u;
        let mut params = self.clone();
        params.lambda2 = Some(nystroem.params_used().lambda());
        params.anchors = Anchors::Given(nystroem.anchor_indices().to_vec());
        Ok(NystroemReducedRank {
            params,
            anchors: nystroem.anchors().clone(),
            anchor_indices: nystroem.anchor_indices().to_vec(),
            subset_indices,
            outputs: proj.outputs,
            encoder: proj.encoder,
            predict_map,
            mu: proj.mu,
            numerical_rank: proj.numerical_rank,
            nystroem_rank: nystroem.rank(),
        })
    }

    /// The subset $S$ drawn from `n` rows (the single-machine and the
    /// partitioned fits draw it alike).
    pub(crate) fn subset_indices(&self, n: usize) -> Result<Vec<usize>> {
        draw_indices(&self.subset, n, self.seed.wrapping_add(1), "subset")
    }

    /// The projection of rank $p$ learned on the subset's rows `(xs, ys)`.
    pub(crate) fn subset_projection<X, Y>(&self, xs: &X, ys: &Y) -> Result<Projection<Y>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        learn_projection(&self.input_kernel, &self.output_kernel, xs, ys, self.lambda1, self.rank, self.rank_tolerance)
    }
}

impl<'y, X, Y, KX, KY> Fit<X, &'y Y> for NystroemReducedRankValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Object = NystroemReducedRank<X, Y, KX, KY>;

    /// Fits the Nystroem reduced-rank estimator (reduced-rank spec 1.7):
    ///
    /// 1. the projection $\hat P$ of rank $p$ by Algorithm 1 on the subset $S$
    ///    with ridge $\lambda_1$: the encoder $G_S$ over the subset's distinct
    ///    outputs (without an $|S| \times |S|$ eigendecomposition, see the
    ///    module docs);
    /// 2. the projected training outputs $UY = K_y(Y, Y_S) G_S^\top$ `(n, p)`
    ///    (computed on distinct outputs only);
    /// 3. Nystroem KRR with ridge $\lambda_2$ on the anchors, streamed over row
    ///    chunks of $K_{nm}$ with right-hand side $UY$:
    ///    $M = (K_{mn}K_{nm} + n\lambda_2 K_{mm})^\dagger K_{mn}\, UY$ `(m, p)`,
    ///    so that $U\hat h(x) = M^\top k_m(x)$.
    ///
    /// Memory $O(m^2 + |S|^2 + n p)$: no `n x m` or `n x n` matrix.
    ///
    /// # Errors
    /// [`Error::Empty`] / [`Error::ShapeMismatch`] for the training pair,
    /// [`Error::InvalidParameter`] for an index `>= n`, [`Error::ZeroRank`]
    /// for a zero $K_h$ or Nystroem system, [`Error::Linalg`].
    fn fit(&self, x: &X, y: &'y Y) -> Result<NystroemReducedRank<X, Y, KX, KY>> {
        // One partition of the map-reduce fit (see `crate::partition`).
        let n = check_training_set(x, y)?;
        let plan = self.plan(n, &SampledRows::select_from(x, y, self.plan_rows(n)?))?;
        let stats = plan.statistics(x, y, 0)?;
        plan.finalize(stats)
    }
}

/// $UY_u = K_y(\text{distinct}, Y_S)\, G_S^\top$ `(n_distinct, p)`, in tiles.
pub(crate) fn projected_outputs<Y: Rows, KY: Kernel<Y>>(
    ky: &KY,
    proj: &Projection<Y>,
    distinct: &Y,
) -> Result<Mat<f64>> {
    let mut g = Mat::zeros(proj.encoder.nrows(), distinct.n_rows());
    projected_atom_products_into(ky, &proj.outputs, distinct, proj.encoder.as_ref(), g.as_mut(), Par::rayon(0))?;
    Ok(g.transpose().to_owned())
}
