use serde::{Deserialize, Serialize};

use crate::core::checks;
use crate::{Error, ParamGuard, Result};

/// How Nystroem anchors are chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Anchors {
    /// `m` distinct training points drawn uniformly (without replacement).
    Uniform(usize),
    /// These training indices (repeats allowed; they span the same subspace).
    Given(Vec<usize>),
}

impl Anchors {
    /// Number of anchors (given indices may repeat).
    pub fn count(&self) -> usize {
        match self {
            Anchors::Uniform(m) => *m,
            Anchors::Given(v) => v.len(),
        }
    }
}

/// Validated Nystroem KRR hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `lambda` | `1e-3` | ridge, system $K_{nm}^\top K_{nm} + n\lambda K_{mm}$ | `(0, inf)` |
/// | `anchors` | `Uniform(1000)` | anchor points | `m >= 1`, indices `< n` |
/// | `seed` | `0` | seed of uniform anchors (`ChaCha8Rng`) | any |
/// | `pinv_rtol` | `1e-12` | eigenvalues of $K_{mm}$ at or below `pinv_rtol * max` dropped when the system is solved in whitened form; floor of the direct solve's relative pivot test (`max(1e-10, pinv_rtol)`) | `[0, 1)` |
/// | `input_kernel`, `output_kernel` | (given) | $k_x$, $k_y$ | |
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NystroemValidParams<KX, KY> {
    pub(crate) lambda: f64,
    pub(crate) anchors: Anchors,
    pub(crate) seed: u64,
    pub(crate) pinv_rtol: f64,
    pub(crate) input_kernel: KX,
    pub(crate) output_kernel: KY,
}

impl<KX, KY> NystroemValidParams<KX, KY> {
    /// Ridge parameter $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// Anchor choice.
    pub fn anchors(&self) -> &Anchors {
        &self.anchors
    }
    /// Seed of uniform anchors.
    pub fn seed(&self) -> u64 {
        self.seed
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

/// Nystroem KRR hyper-parameters (builder; setters store, [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::nystroem::Anchors;
/// use okr_estimators::{Nystroem, ParamGuard};
/// use okr_kernels::Linear;
/// let p = Nystroem::params(Linear, Linear).anchors(Anchors::Uniform(50)).lambda(1e-2);
/// assert_eq!(p.check_ref()?.lambda(), 1e-2);
/// assert!(Nystroem::params(Linear, Linear).anchors(Anchors::Given(vec![])).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NystroemParams<KX, KY>(pub(crate) NystroemValidParams<KX, KY>);

impl<KX, KY> NystroemParams<KX, KY> {
    /// Parameters with the given kernels, 1000 uniform anchors, `lambda = 1e-3`, seed 0.
    pub fn new(input_kernel: KX, output_kernel: KY) -> Self {
        Self(NystroemValidParams {
            lambda: 1e-3,
            anchors: Anchors::Uniform(1000),
            seed: 0,
            pinv_rtol: 1e-12,
            input_kernel,
            output_kernel,
        })
    }
    /// Sets the ridge $\lambda$.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.0.lambda = lambda;
        self
    }
    /// Sets the anchors.
    pub fn anchors(mut self, anchors: Anchors) -> Self {
        self.0.anchors = anchors;
        self
    }
    /// Sets the seed of uniform anchors.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
    /// Sets the relative eigenvalue threshold of the pseudo-inverse.
    pub fn pinv_rtol(mut self, rtol: f64) -> Self {
        self.0.pinv_rtol = rtol;
        self
    }
}

impl<KX, KY> ParamGuard for NystroemParams<KX, KY> {
    type Checked = NystroemValidParams<KX, KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        let p = &self.0;
        checks::positive("lambda", p.lambda)?;
        checks::fraction("pinv_rtol", p.pinv_rtol)?;
        checks::at_least_one("anchors", p.anchors.count())?;
        Ok(&self.0)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
