//! Closed-form leave-one-out and GCV errors of IOKR in the output RKHS.

use faer::{Mat, MatRef};
use okr_kernels::{Gaussian, Kernel, Rows};
use okr_surrogate::GridSearchResult;

use crate::iokr::IokrPath;
use crate::{Error, Result};

/// Leave-one-out and generalized cross-validation errors of IOKR's squared
/// loss in $\mathcal H_Y$ for any $\lambda$, from one eigendecomposition.
///
/// IOKR is kernel ridge regression into $\mathcal H_Y$: with the hat matrix
/// $H = K_x(K_x + n\lambda I)^{-1}$ `(n, n)` the fitted outputs are
/// $\hat h(x_i) = \sum_j H_{ij}\psi(y_j)$. Holding the ridge $\mu = n\lambda$
/// fixed, the leave-one-out residual of ridge regression is
/// $$r_i = \psi(y_i) - \hat h_{-i}(x_i) = \frac{\psi(y_i) - \hat h(x_i)}{1 - H_{ii}},$$
/// and its squared norm is read through the output Gram $K_y$:
/// $$\mathrm{LOO}(\lambda) = \frac1n\sum_i \frac{[(I - H)K_y(I - H)]_{ii}}{(1 - H_{ii})^2},\qquad
/// \mathrm{GCV}(\lambda) = \frac1n\sum_i \frac{[(I - H)K_y(I - H)]_{ii}}{(1 - \operatorname{tr}(H)/n)^2}.$$
/// With $K_x = V\operatorname{diag}(s)V^\top$, $I - H = V\operatorname{diag}(d)V^\top$,
/// $d_k = n\lambda/(s_k + n\lambda)$, so with $\tilde K_y = V^\top K_y V$
/// (formed once) the numerators are the diagonal of
/// $(V\operatorname{diag}(d))\,\tilde K_y\,(V\operatorname{diag}(d))^\top$ (one GEMM per
/// $\lambda$), and $1 - H_{ii} = \sum_k V_{ik}^2 d_k$ is computed without cancellation.
///
/// Note that a refit without sample $i$ under okr's ridge convention
/// $(K + n'\lambda' I)$, $n' = n - 1$, has the same $\mu$ for $\lambda' = n\lambda/(n-1)$.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::select::LooPath;
/// let x = Mat::from_fn(8, 2, |i, j| ((3 * i + j) % 5) as f64);
/// let kx = &x * x.transpose();
/// let ky = Mat::<f64>::identity(8, 8);
/// let loo = LooPath::new(kx.as_ref(), ky.as_ref())?.scan(&[1e-3, 1e-1, 10.0])?;
/// assert_eq!(loo.loo.len(), 3);
/// assert!(loo.loo.iter().zip(&loo.gcv).all(|(a, b)| *a > 0.0 && *b > 0.0));
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LooPath {
    path: IokrPath,
    /// $\tilde K_y = V^\top K_y V$ `(n, n)`.
    ky_rotated: Mat<f64>,
}

/// LOO and GCV errors over a grid of ridges, and the minimisers.
#[derive(Debug, Clone, PartialEq)]
pub struct LooResult {
    /// The ridges $\lambda$, as given.
    pub lambdas: Vec<f64>,
    /// Mean leave-one-out squared error in $\mathcal H_Y$ per ridge.
    pub loo: Vec<f64>,
    /// Generalized cross-validation error per ridge.
    pub gcv: Vec<f64>,
    /// Index of the smallest LOO error (first on ties).
    pub best_loo: usize,
    /// Index of the smallest GCV error (first on ties).
    pub best_gcv: usize,
}

impl LooPath {
    /// Decomposes the training input Gram `k_x` `(n, n)` and rotates the
    /// output Gram `k_y` `(n, n)` into its eigenbasis.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when the shapes differ; the errors of
    /// [`IokrPath::new`].
    pub fn new(k_x: MatRef<'_, f64>, k_y: MatRef<'_, f64>) -> Result<Self> {
        Self::from_path(IokrPath::new(k_x)?, k_y)
    }

    /// As [`new`](Self::new) from an existing decomposition of $K_x$.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `k_y` is not `(n, n)`.
    pub fn from_path(path: IokrPath, k_y: MatRef<'_, f64>) -> Result<Self> {
        let n = path.n_samples();
        if k_y.nrows() != n || k_y.ncols() != n {
            let got = if k_y.nrows() != n { k_y.nrows() } else { k_y.ncols() };
            return Err(Error::ShapeMismatch { what: "output Gram size", expected: n, got });
        }
        let v = path.eigenvectors();
        let ky_rotated = v.transpose() * (k_y * v);
        Ok(Self { path, ky_rotated })
    }

    /// The LOO and GCV errors for one ridge `lambda`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `lambda` is finite and `> 0`.
    pub fn errors(&self, lambda: f64) -> Result<(f64, f64)> {
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(Error::InvalidParameter {
                name: "lambda",
                value: lambda.to_string(),
                expected: "finite and > 0",
            });
        }
        let n = self.path.n_samples();
        let mu = n as f64 * lambda;
        let d: Vec<f64> = self.path.eigenvalues().iter().map(|&s| mu / (s + mu)).collect();
        let v = self.path.eigenvectors();
        let vd = Mat::from_fn(n, n, |i, k| v[(i, k)] * d[k]);
        let t = &vd * &self.ky_rotated;
        let (mut loo, mut rss) = (0.0, 0.0);
        let trace_residual: f64 = d.iter().sum();
        for i in 0..n {
            let num: f64 = (0..n).map(|k| t[(i, k)] * vd[(i, k)]).sum();
            let one_minus_h: f64 = (0..n).map(|k| v[(i, k)] * vd[(i, k)]).sum();
            loo += num / (one_minus_h * one_minus_h);
            rss += num;
        }
        let gcv_den = trace_residual / n as f64;
        Ok((loo / n as f64, rss / n as f64 / (gcv_den * gcv_den)))
    }

    /// LOO and GCV errors for every ridge of `lambdas`.
    ///
    /// # Errors
    /// [`Error::Empty`] for no ridge; [`Error::InvalidParameter`] for a ridge
    /// that is not finite and `> 0`.
    pub fn scan(&self, lambdas: &[f64]) -> Result<LooResult> {
        if lambdas.is_empty() {
            return Err(Error::Empty { what: "lambdas" });
        }
        let (loo, gcv): (Vec<f64>, Vec<f64>) =
            lambdas.iter().map(|&l| self.errors(l)).collect::<Result<Vec<_>>>()?.into_iter().unzip();
        let argmin = |v: &[f64]| {
            let mut best = 0;
            for (i, x) in v.iter().enumerate() {
                if *x < v[best] || v[best].is_nan() {
                    best = i;
                }
            }
            best
        };
        Ok(LooResult { lambdas: lambdas.to_vec(), best_loo: argmin(&loo), best_gcv: argmin(&gcv), loo, gcv })
    }
}

/// The closed-form error of [`LooPath`] that [`rkhs_grid`] minimizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RkhsCriterion {
    /// Leave-one-out squared error in $\mathcal H_Y$.
    Loo,
    /// Generalized cross-validation error.
    Gcv,
}

/// IOKR's Gaussian width and ridge by a closed-form error in the output
/// RKHS: for every multiplier $c$ of `widths`, the Gaussian kernel
/// $\gamma = c / m$ ($m$ = `median_sq_dist`) on `x`, one [`LooPath`] (one
/// eigendecomposition) serving every ridge of `lambdas`, with the output
/// Gram `k_y` `(n, n)`. The result has one "fold" whose scores are the
/// negated errors (a [`GridSearchResult`] maximizes), so its choice is the
/// cell of least error; `on_step` is called after each width.
///
/// # Errors
/// [`Error::Empty`] for no width or ridge; the errors of [`LooPath`] and of
/// the Gaussian kernel (a width that gives no finite $\gamma > 0$).
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::select::{RkhsCriterion, rkhs_grid};
/// use okr_kernels::DenseRows;
/// let x = DenseRows::new(Mat::from_fn(10, 2, |i, j| ((3 * i + j) % 7) as f64))?;
/// let ky = Mat::from_fn(10, 10, |i, j| if i % 2 == j % 2 { 1.0 } else { 0.0 });
/// let r = rkhs_grid(&x, ky.as_ref(), &[0.5, 2.0], &[1e-3, 1e-1], 4.0, RkhsCriterion::Gcv, &mut || {})?;
/// assert!(r.best_score() <= 0.0 && r.fold_scores[1][0].len() == 1);
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub fn rkhs_grid<X: Rows>(
    x: &X,
    k_y: MatRef<'_, f64>,
    widths: &[f64],
    lambdas: &[f64],
    median_sq_dist: f64,
    criterion: RkhsCriterion,
    on_step: &mut dyn FnMut(),
) -> Result<GridSearchResult>
where
    Gaussian: Kernel<X>,
{
    if widths.is_empty() {
        return Err(Error::Empty { what: "widths" });
    }
    let mut fold_scores = Vec::with_capacity(widths.len());
    for &c in widths {
        let errors = LooPath::new(Gaussian::new(c / median_sq_dist)?.gram(x).as_ref(), k_y)?.scan(lambdas)?;
        let e = if criterion == RkhsCriterion::Loo { errors.loo } else { errors.gcv };
        fold_scores.push(e.iter().map(|v| vec![-v]).collect());
        on_step();
    }
    Ok(GridSearchResult::from_fold_scores(median_sq_dist, widths.to_vec(), lambdas.to_vec(), fold_scores))
}

#[cfg(test)]
mod tests {
    use okr_kernels::DenseRows;

    use super::*;

    #[test]
    fn rkhs_grid_scores_are_the_negated_path_errors() {
        let x = DenseRows::new(Mat::from_fn(12, 3, |i, j| ((5 * i + 2 * j) % 9) as f64 / 3.0)).unwrap();
        let ky = Mat::from_fn(12, 12, |i, j| if i % 3 == j % 3 { 1.0 } else { 0.2 });
        let (widths, lambdas, median) = ([0.25, 1.0, 4.0], [1e-4, 1e-2, 1.0], 2.5);
        for criterion in [RkhsCriterion::Loo, RkhsCriterion::Gcv] {
            let mut steps = 0;
            let r = rkhs_grid(&x, ky.as_ref(), &widths, &lambdas, median, criterion, &mut || steps += 1).unwrap();
            assert_eq!(steps, 3);
            let mut least = (f64::INFINITY, 0.0, 0.0);
            for (wi, &c) in widths.iter().enumerate() {
                let k = Gaussian::new(c / median).unwrap().gram(&x);
                let path = LooPath::new(k.as_ref(), ky.as_ref()).unwrap();
                for (li, &l) in lambdas.iter().enumerate() {
                    let (loo, gcv) = path.errors(l).unwrap();
                    let e = if criterion == RkhsCriterion::Loo { loo } else { gcv };
                    assert!((r.fold_scores[wi][li][0] + e).abs() <= 1e-12 * e.abs().max(1.0));
                    if e < least.0 {
                        least = (e, c, l);
                    }
                }
            }
            assert_eq!((r.c(), r.lambda()), (least.1, least.2), "{criterion:?}: the least error is chosen");
        }
        assert!(rkhs_grid(&x, ky.as_ref(), &[], &lambdas, median, RkhsCriterion::Loo, &mut || {}).is_err());
    }
}
