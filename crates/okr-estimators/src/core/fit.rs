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
