use serde::{Deserialize, Serialize};

use crate::core::checks;
use crate::{Error, ParamGuard, Result};

/// Validated KDE hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `rank` | `64` | number $p$ of output kernel-PCA directions | `[1, inf)`, capped at the numerical rank |
/// | `lambda` | `1e-3` | ridge of the regression onto the directions, system $K_x + n\lambda I$ | `(0, inf)` |
/// | `centered` | `false` | kernel PCA of $H K_y H$ ($H = I - 11^\top/n$) instead of $K_y$ | |
/// | `rank_tolerance` | `1e-10` | eigenvalues $\nu_i \le \mathrm{tol}\cdot\nu_0$ are dropped | `[0, 1)` |
/// | `input_kernel` | (given) | kernel on inputs $k_x$ | |
/// | `output_kernel` | (given) | kernel on outputs $k_y$ | |
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KdeValidParams<KX, KY> {
    pub(crate) rank: usize,
    pub(crate) lambda: f64,
    pub(crate) centered: bool,
    pub(crate) rank_tolerance: f64,
    pub(crate) input_kernel: KX,
    pub(crate) output_kernel: KY,
}

impl<KX, KY> KdeValidParams<KX, KY> {
    /// Requested number of directions $p$.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Ridge $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// Whether the output kernel PCA is centred.
    pub fn centered(&self) -> bool {
        self.centered
    }
    /// Relative tolerance of the numerical rank.
    pub fn rank_tolerance(&self) -> f64 {
        self.rank_tolerance
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

/// KDE hyper-parameters (builder; setters store, [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::{Kde, ParamGuard};
/// use okr_kernels::Linear;
/// let params = Kde::params(Linear, Linear).rank(4).centered(true);
/// assert!(params.check_ref()?.centered());
/// assert!(Kde::params(Linear, Linear).lambda(-1.0).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KdeParams<KX, KY>(pub(crate) KdeValidParams<KX, KY>);

impl<KX, KY> KdeParams<KX, KY> {
    /// Parameters with the given kernels, `rank = 64`, `lambda = 1e-3`,
    /// uncentred, `rank_tolerance = 1e-10`.
    pub fn new(input_kernel: KX, output_kernel: KY) -> Self {
        Self(KdeValidParams {
            rank: 64,
            lambda: 1e-3,
            centered: false,
            rank_tolerance: 1e-10,
            input_kernel,
            output_kernel,
        })
    }
    /// Sets the number of directions $p$.
    pub fn rank(mut self, p: usize) -> Self {
        self.0.rank = p;
        self
    }
    /// Sets the ridge $\lambda$.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.0.lambda = lambda;
        self
    }
    /// Centred (`true`) or uncentred output kernel PCA.
    pub fn centered(mut self, centered: bool) -> Self {
        self.0.centered = centered;
        self
    }
    /// Sets the relative tolerance of the numerical rank.
    pub fn rank_tolerance(mut self, tol: f64) -> Self {
        self.0.rank_tolerance = tol;
        self
    }
}

impl<KX, KY> ParamGuard for KdeParams<KX, KY> {
    type Checked = KdeValidParams<KX, KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        let p = &self.0;
        checks::at_least_one("rank", p.rank)?;
        checks::positive("lambda", p.lambda)?;
        checks::fraction("rank_tolerance", p.rank_tolerance)?;
        Ok(&self.0)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
