use serde::{Deserialize, Serialize};

use crate::core::checks;
use crate::{Error, ParamGuard, Result};

/// Validated IOKR hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `lambda` | `1e-3` | ridge, objective $\frac1n\sum_i \|h(x_i)-\psi(y_i)\|^2 + \lambda\|h\|^2$ | `(0, inf)` |
/// | `input_kernel` | (given) | kernel on inputs $k_x$ | |
/// | `output_kernel` | (given) | kernel on outputs $k_y$ | |
///
/// The system solved is $(K_x + n\lambda I)$: scikit-learn's
/// `KernelRidge(alpha = n * lambda)`; MATLAB code using $\lambda I$ has
/// `lambda_okr = lambda_matlab / n`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IokrValidParams<KX, KY> {
    pub(crate) lambda: f64,
    pub(crate) input_kernel: KX,
    pub(crate) output_kernel: KY,
}

impl<KX, KY> IokrValidParams<KX, KY> {
    /// Ridge parameter $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// Input kernel.
    pub fn input_kernel(&self) -> &KX {
        &self.input_kernel
    }
    /// Output kernel.
    pub fn output_kernel(&self) -> &KY {
        &self.output_kernel
    }
}

/// IOKR hyper-parameters (builder; setters store, [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::{Iokr, ParamGuard};
/// use okr_kernels::Linear;
/// let params = Iokr::params(Linear, Linear).lambda(1e-2);
/// assert_eq!(params.check_ref()?.lambda(), 1e-2);
/// assert!(Iokr::params(Linear, Linear).lambda(0.0).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IokrParams<KX, KY>(pub(crate) IokrValidParams<KX, KY>);

impl<KX, KY> IokrParams<KX, KY> {
    /// Parameters with the given kernels and `lambda = 1e-3`.
    pub fn new(input_kernel: KX, output_kernel: KY) -> Self {
        Self(IokrValidParams { lambda: 1e-3, input_kernel, output_kernel })
    }
    /// Sets the ridge $\lambda$ (system $K + n\lambda I$).
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.0.lambda = lambda;
        self
    }
    /// Sets the input kernel.
    pub fn input_kernel(mut self, k: KX) -> Self {
        self.0.input_kernel = k;
        self
    }
    /// Sets the output kernel.
    pub fn output_kernel(mut self, k: KY) -> Self {
        self.0.output_kernel = k;
        self
    }
}

impl<KX, KY> ParamGuard for IokrParams<KX, KY> {
    type Checked = IokrValidParams<KX, KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        checks::positive("lambda", self.0.lambda)?;
        Ok(&self.0)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
