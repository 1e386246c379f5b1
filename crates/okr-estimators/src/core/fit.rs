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
