//! [`Fit`]: the one fitting entry point, with a blanket impl over
//! [`ParamGuard`] so that unchecked parameters fit after their check.

use crate::{Error, ParamGuard, Result};

/// Fits a model on inputs `x` and targets (linfa's `Fit`).
///
/// The validated parameters of each estimator implement it; every params
/// builder implements it through [`ParamGuard`]: `fit` checks the
/// parameters, then fits. `T` is what the estimator learns from: `&Y` output
/// rows for the kernel-output estimators, [`Targets`](crate::leml::Targets)
/// for LEML and binary relevance, `&LabelSets` for CPLST.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::{Fit, Iokr, ParamGuard};
/// use okr_kernels::{DenseRows, Linear};
/// let x = DenseRows::new(Mat::from_fn(5, 2, |i, j| (i + j) as f64))?;
/// let params = Iokr::params(Linear, Linear).lambda(1e-2);
/// let a = params.fit(&x, &x)?; // checks, then fits
/// let b = params.check()?.fit(&x, &x)?; // the same, in two steps
/// assert_eq!(a.n_samples(), b.n_samples());
/// assert!(Iokr::params(Linear, Linear).lambda(-1.0).fit(&x, &x).is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub trait Fit<X: ?Sized, T> {
    /// The fitted model.
    type Object;

    /// Fits on `x` and `targets`.
    ///
    /// # Errors
    /// An invalid parameter (unchecked parameters), data that do not fit the
    /// estimator (shapes, empty sets) or a numerical failure; see each
    /// estimator.
    fn fit(&self, x: &X, targets: T) -> Result<Self::Object>;
}

impl<P, X: ?Sized, T> Fit<X, T> for P
where
    P: ParamGuard<Error = Error>,
    P::Checked: Fit<X, T>,
{
    type Object = <P::Checked as Fit<X, T>>::Object;

    fn fit(&self, x: &X, targets: T) -> Result<Self::Object> {
        self.check_ref()?.fit(x, targets)
    }
}

/// Continues a fitted model's training (a warm start), for the iterative
/// estimators: trace norm (gradient descent, ALS), LEML, and KAE / K2AE
/// (their own `fit_from` methods, as their `fit` takes no targets).
///
/// `fit_from(&previous, x, targets)` starts from `previous`'s fitted state
/// (its factors or coefficients, and the solver's running state when the
/// model was fitted in this process) and runs this parameter set's
/// `max_iter` more iterations with its hyper-parameters. With the same
/// parameters and data, `k` iterations continued for `k` more equal `2k`
/// iterations in one fit (when no stopping rule ends the first run early).
/// Iteration counts and histories cover both runs.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::{Fit, FitFrom, TraceNorm};
/// use okr_kernels::{DenseRows, Linear};
/// let x = DenseRows::new(Mat::from_fn(12, 3, |i, j| ((i * 7 + j * 3) % 5) as f64 / 5.0))?;
/// let y = DenseRows::new(Mat::from_fn(12, 2, |i, j| ((i + 2 * j) % 3) as f64))?;
/// let params = |k| TraceNorm::params(Linear, Linear).rank(2).max_iter(k).tol(1e-300);
/// let once = params(40).fit(&x, &y)?;
/// let half = params(20).fit(&x, &y)?;
/// let twice = params(20).fit_from(&half, &x, &y)?;
/// assert_eq!((twice.m(), twice.n_iter()), (once.m(), 40));
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub trait FitFrom<X: ?Sized, T>: Fit<X, T> {
    /// Continues `previous` on `x` and `targets`.
    ///
    /// # Errors
    /// As [`Fit::fit`], and [`Error::ShapeMismatch`] when `x` or `targets`
    /// do not have the shape `previous` was fitted on (samples, features,
    /// labels, rank), or [`Error::InvalidParameter`] for a solver that
    /// cannot continue (the convex trace-norm solver).
    fn fit_from(&self, previous: &Self::Object, x: &X, targets: T) -> Result<Self::Object>;
}

impl<P, X: ?Sized, T> FitFrom<X, T> for P
where
    P: ParamGuard<Error = Error>,
    P::Checked: FitFrom<X, T>,
{
    fn fit_from(&self, previous: &Self::Object, x: &X, targets: T) -> Result<Self::Object> {
        self.check_ref()?.fit_from(previous, x, targets)
    }
}

/// Fits with a weight per training sample (scikit-learn's `sample_weight`),
/// for the kernel-ridge family: IOKR, reduced-rank IOKR, Nystroem KRR and
/// the sketched estimators (SIOKR, ISOKR, SISOKR).
///
/// With weights $w_i > 0$, $W = \operatorname{diag}(w)$ and
/// $n_w = \sum_i w_i$ in place of $n$, the ridge estimator is
/// $$\hat h = \arg\min_h \frac1{n_w}\sum_{i=1}^n w_i\,\|h(x_i) - \psi(y_i)\|^2 + \lambda\|h\|^2,$$
/// i.e. $\sum_i w_i \|h(x_i)-\psi(y_i)\|^2 + n_w\lambda\|h\|^2$. Dividing by
/// $n_w$ (rather than $n$) makes integer weights equal to repeating the
/// rows (a repeated data set has $n_w$ rows), gives the unweighted fit for
/// unit weights, and makes the fit invariant to scaling all weights by
/// the same factor. In scikit-learn's terms:
/// `KernelRidge(alpha = lambda * sum(w)).fit(X, Y, sample_weight = w)`.
///
/// Kernel form: $\alpha(x) = W^{1/2}(W^{1/2}K_xW^{1/2} + n_w\lambda I)^{-1}W^{1/2}k_x(x)
/// = (K_x + n_w\lambda W^{-1})^{-1}k_x(x)$; see each estimator's
/// `fit_weighted` for the normal equations it solves. Weights are data, not
/// hyper-parameters: they are checked by
/// [`check_sample_weight`](crate::check_sample_weight) (one per sample,
/// finite, `> 0`) and not stored in the model. Random draws (Nystroem
/// anchors, sketches, leverage scores) do not see the weights.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::{Fit, FitWeighted, Iokr, Rows, SurrogateModel};
/// use okr_kernels::{DenseRows, Gaussian, Linear};
/// let x = DenseRows::new(Mat::from_fn(5, 2, |i, j| (i + j) as f64 / 4.0))?;
/// let y = DenseRows::new(Mat::from_fn(5, 1, |i, _| i as f64))?;
/// let params = Iokr::params(Gaussian::new(0.5)?, Linear).lambda(1e-2);
/// // Weight 2 on the last row equals the last row given twice.
/// let weighted = params.fit_weighted(&x, &y, &[1.0, 1.0, 1.0, 1.0, 2.0])?;
/// let (x2, y2) = (x.select(&[0, 1, 2, 3, 4, 4]), y.select(&[0, 1, 2, 3, 4, 4]));
/// let repeated = params.fit(&x2, &y2)?;
/// // Both predict h(x) = sum_u C_u psi(u) over the distinct outputs u.
/// let diff = (weighted.coefficients(&x)? - repeated.coefficients(&x)?).norm_max();
/// assert!(diff < 1e-10);
/// assert!(params.fit_weighted(&x, &y, &[1.0, 0.0, 1.0, 1.0, 1.0]).is_err());
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait FitWeighted<X: ?Sized, T>: Fit<X, T> {
    /// Fits on `x` and `targets` with `sample_weight[i]` on sample `i`.
    ///
    /// # Errors
    /// As [`Fit::fit`], and the errors of
    /// [`check_sample_weight`](crate::check_sample_weight).
    fn fit_weighted(&self, x: &X, targets: T, sample_weight: &[f64]) -> Result<Self::Object>;
}

impl<P, X: ?Sized, T> FitWeighted<X, T> for P
where
    P: ParamGuard<Error = Error>,
    P::Checked: FitWeighted<X, T>,
{
    fn fit_weighted(&self, x: &X, targets: T, sample_weight: &[f64]) -> Result<Self::Object> {
        self.check_ref()?.fit_weighted(x, targets, sample_weight)
    }
}
