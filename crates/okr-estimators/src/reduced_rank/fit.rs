use faer::{Mat, MatRef};
use okr_kernels::{Kernel, Rows};

use super::{ReducedRankIokr, ReducedRankParams, ReducedRankValidParams};
use crate::projection::check_training_set;
use crate::{Error, ParamGuard, Result};

/// $V \operatorname{diag}(f(s)) V^\top$.
fn spectral(v: MatRef<'_, f64>, s: &[f64], f: impl Fn(f64) -> f64) -> Mat<f64> {
    let vs = Mat::from_fn(v.nrows(), v.ncols(), |i, j| v[(i, j)] * f(s[j]));
    vs * v.transpose()
}

impl<KX: Clone, KY: Clone> ReducedRankValidParams<KX, KY> {
    /// Fits reduced-rank IOKR (Algorithm 1 of Brogat-Motte et al. 2022).
    ///
    /// 1. $K_x = V \operatorname{diag}(s) V^\top$ (one eigendecomposition serves
    ///    $W_1$ and $W_2$; negative rounding eigenvalues are clamped to 0);
    /// 2. $K_h = A_1 K_y A_1$ with $A_1 = K_x W_1 = V \operatorname{diag}(s/(s + n\lambda_1)) V^\top$,
    ///    symmetrized, and its eigenpairs $(\mu_i, u_i)$, descending;
    /// 3. $p$ = requested rank capped at the numerical rank of $K_h$ (the
    ///    number of $\mu_i > \mathrm{tol}\cdot\mu_0$; dividing by $\sqrt{\mu_i}$ for
    ///    $\mu_i \approx 0$ would blow up); the model reports both;
    /// 4. $G = \beta^\top A_1$ `(p, n)` with $\beta_{:,i} = u_i/\sqrt{\mu_i}$, its
    ///    columns summed over duplicate outputs, and $M = W_2 K_y G^\top$ `(n, p)`.
    ///
    /// Costs two $n \times n$ eigendecompositions and $O(n^3)$ GEMMs.
    ///
    /// # Errors
    /// [`Error::Empty`] for no samples, [`Error::ShapeMismatch`] when `x` and
    /// `y` have different numbers of rows, [`Error::Linalg`] when an
    /// eigendecomposition fails (non-finite kernel values),
    /// [`Error::ZeroRank`] when $K_h$ has numerical rank 0 (all outputs zero).
    pub fn fit<X, Y>(&self, x: &X, y: &Y) -> Result<ReducedRankIokr<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        let n = check_training_set(x, y)?;
        let nf = n as f64;
        let (lambda1, lambda2) = (self.lambda1, self.lambda2());

        let kx = self.input_kernel.gram(x);
        let (s, v) = okr_linalg::eigh(kx.as_ref())?.into_parts();
        let s: Vec<f64> = s.into_iter().map(|v| v.max(0.0)).collect();

        let (outputs, output_of) = y.group_duplicates();
        let ku = self.output_kernel.gram(&outputs);
        let ky = Mat::from_fn(n, n, |i, j| ku[(output_of[i], output_of[j])]);

        #[allow(non_snake_case)]
        let (A1, Kh) = {
            let A1 = spectral(v.as_ref(), &s, |si| si / (si + nf * lambda1));
            let Kh = &A1 * (&ky * &A1);
            // Rounding makes the product slightly asymmetric; eigh needs it exact.
            let Kh = Mat::from_fn(n, n, |i, j| 0.5 * (Kh[(i, j)] + Kh[(j, i)]));
            (A1, Kh)
        };
        let eig = okr_linalg::eigh(Kh.as_ref())?;
        let numerical_rank = eig.numerical_rank(self.rank_tolerance);
        if numerical_rank == 0 {
            return Err(Error::ZeroRank { what: "K_h = W1 Kx Ky Kx W1", tol: self.rank_tolerance });
        }
        let p = self.rank.min(numerical_rank);
        let (mu, u) = eig.into_parts();

        let beta_t = Mat::from_fn(p, n, |i, j| u[(j, i)] / mu[i].sqrt());
        let g = beta_t * &A1; // (p, n)
        let mut encoder = Mat::<f64>::zeros(p, outputs.n_rows());
        for (i, &o) in output_of.iter().enumerate() {
            for r in 0..p {
                encoder[(r, o)] += g[(r, i)];
            }
        }
        // M = W2 (K_y G^T) = V diag(1/(s + n lambda2)) V^T UY.
        let uy = &ky * g.transpose();
        let vt_uy = v.transpose() * &uy;
        let scaled = Mat::from_fn(n, p, |i, j| vt_uy[(i, j)] / (s[i] + nf * lambda2));
        let predict_map = &v * scaled;

        Ok(ReducedRankIokr {
            params: self.clone(),
            x_train: x.clone(),
            outputs,
            output_of,
            encoder,
            predict_map,
            mu,
            numerical_rank,
        })
    }
}

impl<KX: Clone, KY: Clone> ReducedRankParams<KX, KY> {
    /// Checks the parameters, then fits (see [`ReducedRankValidParams::fit`]).
    ///
    /// # Errors
    /// An invalid parameter, or any error of [`ReducedRankValidParams::fit`].
    pub fn fit<X, Y>(&self, x: &X, y: &Y) -> Result<ReducedRankIokr<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        self.check_ref()?.fit(x, y)
    }
}
