use faer::{Mat, MatRef};
use okr_kernels::{Kernel, Rows};

use super::{ReducedRankIokr, ReducedRankValidParams};
use crate::core::checks::{check_sample_weight, check_training_set};
use crate::{Error, Fit, FitWeighted, Result};

/// $V \operatorname{diag}(f(s)) V^\top$.
fn spectral(v: MatRef<'_, f64>, s: &[f64], f: impl Fn(f64) -> f64) -> Mat<f64> {
    let vs = Mat::from_fn(v.nrows(), v.ncols(), |i, j| v[(i, j)] * f(s[j]));
    vs * v.transpose()
}

impl<KX: Clone, KY: Clone> ReducedRankValidParams<KX, KY> {
    /// Fits one model per ridge value with $\lambda_1 = \lambda_2 = \lambda$
    /// (the paper's setting), sharing the kernel Grams and the one
    /// eigendecomposition of $K_x$ (spec 1.9): each further $\lambda$ costs
    /// one eigendecomposition of $K_h$ and GEMMs. Model `i` equals
    /// `self.lambda1(lambdas[i]).lambda2(lambdas[i]).fit(x, y)` up to rounding.
    ///
    /// # Errors
    /// As [`fit`](Self::fit), plus [`Error::InvalidParameter`] for a
    /// non-positive or non-finite $\lambda$.
    ///
    /// # Example
    /// ```
    /// use faer::Mat;
    /// use okr_estimators::{ParamGuard, ReducedRankIokr};
    /// use okr_kernels::{DenseRows, Linear};
    /// let x = DenseRows::new(Mat::from_fn(10, 3, |i, j| ((i * 7 + j * 3) % 5) as f64))?;
    /// let y = DenseRows::new(Mat::from_fn(10, 2, |i, j| ((i + 2 * j) % 3) as f64))?;
    /// let params = ReducedRankIokr::params(Linear, Linear).rank(2).check()?;
    /// let path = params.fit_lambda_path(&x, &y, &[1e-3, 1e-1])?;
    /// assert_eq!(path.len(), 2);
    /// assert_eq!(path[1].params_used().lambda2(), 1e-1);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fit_lambda_path<X, Y>(&self, x: &X, y: &Y, lambdas: &[f64]) -> Result<Vec<ReducedRankIokr<X, Y, KX, KY>>>
    where
        X: Rows,
        Y: Rows,
        KX: Kernel<X>,
        KY: Kernel<Y>,
    {
        for &l in lambdas {
            if !(l.is_finite() && l > 0.0) {
                return Err(Error::InvalidParameter {
                    name: "lambda",
                    value: l.to_string(),
                    expected: "finite and > 0",
                });
            }
        }
        let shared = SharedGrams::new(&self.input_kernel, &self.output_kernel, x, y, None)?;
        lambdas
            .iter()
            .map(|&l| {
                let mut p = self.clone();
                p.lambda1 = l;
                p.lambda2 = Some(l);
                p.fit_shared(&shared, x)
            })
            .collect()
    }

    fn fit_shared<X, Y>(&self, shared: &SharedGrams<Y>, x: &X) -> Result<ReducedRankIokr<X, Y, KX, KY>>
    where
        X: Rows,
        Y: Rows,
    {
        let SharedGrams { s, v, ky, outputs, output_of, total, sqrt_w } = shared;
        let n = ky.nrows();
        let nf = *total;
        let (lambda1, lambda2) = (self.lambda1, self.lambda2());

        // Unweighted, A1 = K_x W_1 is symmetric; weighted, the fitted values
        // scaled by sqrt(w_i) are the rows of A1 = V diag(s/(s + n_w lambda1)) V^T W^{1/2}
        // (see `fit_weighted`), and K_h = A1 K_y A1^T.
        #[allow(non_snake_case)]
        let (A1, Kh) = {
            let mut A1 = spectral(v.as_ref(), s, |si| si / (si + nf * lambda1));
            let Kh = match sqrt_w {
                None => &A1 * (ky * &A1),
                Some(r) => {
                    scale_cols(&mut A1, r);
                    &A1 * (ky * A1.transpose())
                }
            };
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
        // M = W2 (K_y G^T) = V diag(1/(s + n lambda2)) V^T UY; weighted,
        // W2 = W^{1/2} V diag(1/(s + n_w lambda2)) V^T W^{1/2}.
        let mut uy = ky * g.transpose();
        if let Some(r) = sqrt_w {
            scale_rows(&mut uy, r);
        }
        let vt_uy = v.transpose() * &uy;
        let scaled = Mat::from_fn(n, p, |i, j| vt_uy[(i, j)] / (s[i] + nf * lambda2));
        let mut predict_map = v * scaled;
        if let Some(r) = sqrt_w {
            scale_rows(&mut predict_map, r);
        }

        Ok(ReducedRankIokr {
            params: self.clone(),
            x_train: x.clone(),
            outputs: outputs.clone(),
            output_of: output_of.clone(),
            encoder,
            predict_map,
            mu,
            numerical_rank,
        })
    }
}

impl<'y, X, Y, KX, KY> Fit<X, &'y Y> for ReducedRankValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    type Object = ReducedRankIokr<X, Y, KX, KY>;

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
    fn fit(&self, x: &X, y: &'y Y) -> Result<ReducedRankIokr<X, Y, KX, KY>> {
        let shared = SharedGrams::new(&self.input_kernel, &self.output_kernel, x, y, None)?;
        self.fit_shared(&shared, x)
    }
}

impl<'y, X, Y, KX, KY> FitWeighted<X, &'y Y> for ReducedRankValidParams<KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X> + Clone,
    KY: Kernel<Y> + Clone,
{
    /// Fits weighted reduced-rank IOKR (see [`FitWeighted`]): both ridge
    /// estimators are weighted, $\hat h_\lambda$ with
    /// $W_\lambda = (K_x + n_w\lambda W^{-1})^{-1}$, and the projection is
    /// onto the top-$p$ eigenvectors of the weighted covariance
    /// $\sum_i w_i\, \hat h_{\lambda_1}(x_i)\otimes\hat h_{\lambda_1}(x_i)$.
    ///
    /// With $\tilde K = W^{1/2}K_xW^{1/2} = V\operatorname{diag}(s)V^\top$,
    /// $W_\lambda = W^{1/2}V\operatorname{diag}(1/(s+n_w\lambda))V^\top W^{1/2}$,
    /// and the scaled fitted values $w_i^{1/2}\hat h_{\lambda_1}(x_i) = \sum_j (A_1)_{ij}\psi(y_j)$
    /// have $A_1 = W^{1/2}K_xW_1 = V\operatorname{diag}(s/(s+n_w\lambda_1))V^\top W^{1/2}$.
    /// Then $K_h = A_1K_yA_1^\top = \sum_i\mu_iu_iu_i^\top$, $G = \beta^\top A_1$ and
    /// $M = W_2K_yG^\top$ as in [`fit`](Fit::fit), whose formulas are the case $W = I$.
    /// Integer weights equal repeated rows up to rounding (the projection is
    /// the same subspace when $\mu_p > \mu_{p+1}$).
    ///
    /// # Errors
    /// As [`fit`](Fit::fit), and those of [`check_sample_weight`](crate::check_sample_weight).
    fn fit_weighted(&self, x: &X, y: &'y Y, sample_weight: &[f64]) -> Result<ReducedRankIokr<X, Y, KX, KY>> {
        let shared = SharedGrams::new(&self.input_kernel, &self.output_kernel, x, y, Some(sample_weight))?;
        self.fit_shared(&shared, x)
    }
}

/// Multiplies column `j` of `m` by `r[j]`.
fn scale_cols(m: &mut Mat<f64>, r: &[f64]) {
    for (j, &rj) in r.iter().enumerate() {
        m.col_mut(j).iter_mut().for_each(|v| *v *= rj);
    }
}

/// Multiplies row `i` of `m` by `r[i]`.
fn scale_rows(m: &mut Mat<f64>, r: &[f64]) {
    for j in 0..m.ncols() {
        for (i, &ri) in r.iter().enumerate() {
            m[(i, j)] *= ri;
        }
    }
}

/// What every ridge value of a fit shares: the eigendecomposition of $K_x$
/// (of $W^{1/2}K_xW^{1/2}$ when weighted; eigenvalues clamped at 0), the
/// sample-level $K_y$, the distinct outputs, $n$ (or $n_w = \sum_i w_i$)
/// and $w_i^{1/2}$ when weighted.
struct SharedGrams<Y> {
    s: Vec<f64>,
    v: Mat<f64>,
    ky: Mat<f64>,
    outputs: Y,
    output_of: Vec<usize>,
    total: f64,
    sqrt_w: Option<Vec<f64>>,
}

impl<Y: Rows> SharedGrams<Y> {
    fn new<X: Rows, KX: Kernel<X>, KY: Kernel<Y>>(
        kx_fn: &KX,
        ky_fn: &KY,
        x: &X,
        y: &Y,
        weights: Option<&[f64]>,
    ) -> Result<Self> {
        let n = check_training_set(x, y)?;
        let (total, sqrt_w) = match weights {
            None => (n as f64, None),
            Some(w) => (check_sample_weight(w, n)?, Some(w.iter().map(|v| v.sqrt()).collect::<Vec<_>>())),
        };
        let mut kx = kx_fn.gram(x);
        if let Some(r) = &sqrt_w {
            // W^{1/2} K_x W^{1/2}, computed from one triangle so that it stays exactly symmetric.
            let (lo, r) = (&kx, r.as_slice());
            let at = |i: usize, j: usize| lo[(i.max(j), i.min(j))] * r[i.max(j)] * r[i.min(j)];
            kx = Mat::from_fn(n, n, at);
        }
        let (s, v) = okr_linalg::eigh(kx.as_ref())?.into_parts();
        let s: Vec<f64> = s.into_iter().map(|v| v.max(0.0)).collect();
        let (outputs, output_of) = y.group_duplicates();
        let ku = ky_fn.gram(&outputs);
        let ky = Mat::from_fn(n, n, |i, j| ku[(output_of[i], output_of[j])]);
        Ok(Self { s, v, ky, outputs, output_of, total, sqrt_w })
    }
}
