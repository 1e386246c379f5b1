use serde::{Deserialize, Serialize};

use crate::core::checks;
use crate::sketch::SketchSpec;
use crate::{Error, ParamGuard, Result};

/// Validated SIOKR / ISOKR / SISOKR hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `lambda` | `1e-3` | ridge of the input side, system $R_X(K_X^2 + n\lambda K_X)R_X^\top$ | `(0, inf)` |
/// | `input_sketch` | `None` | $R_X$ (`None`: exact KRR on the input side, $O(n^3)$) | [`SketchSpec`] |
/// | `output_sketch` | `None` | $R_Y$ (`None`: no output projection) | [`SketchSpec`] |
/// | `seed` | `0` | seed of the sketches (`ChaCha8Rng`, input sketch drawn first) | any |
/// | `pinv_rtol` | `1e-12` | eigenvalues of the `m x m` systems at or below `pinv_rtol * max` are dropped (for $R_X K_X R_X^\top$: when the input system is solved in whitened form, see the fit); floor of the direct solve's relative pivot test (`max(1e-10, pinv_rtol)`) | `[0, 1)` |
/// | `input_kernel`, `output_kernel` | (given) | $k_x$, $k_y$ | |
///
/// With both sketches `None` the estimator is IOKR. The ridge convention is
/// okr's $(K + n\lambda I)$ (scikit-learn `alpha = n * lambda`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SketchedIokrValidParams<KX, KY> {
    pub(crate) lambda: f64,
    pub(crate) input_sketch: Option<SketchSpec>,
    pub(crate) output_sketch: Option<SketchSpec>,
    pub(crate) seed: u64,
    pub(crate) pinv_rtol: f64,
    pub(crate) input_kernel: KX,
    pub(crate) output_kernel: KY,
}

impl<KX, KY> SketchedIokrValidParams<KX, KY> {
    /// Ridge parameter $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// The input sketch, if any.
    pub fn input_sketch(&self) -> Option<SketchSpec> {
        self.input_sketch
    }
    /// The output sketch, if any.
    pub fn output_sketch(&self) -> Option<SketchSpec> {
        self.output_sketch
    }
    /// Seed of the sketches.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Relative eigenvalue threshold of the pseudo-inverses.
    pub fn pinv_rtol(&self) -> f64 {
        self.pinv_rtol
    }
    /// Input kernel.
    pub fn input_kernel(&self) -> &KX {
        &self.input_kernel
    }
    /// Output kernel.
    pub fn output_kernel(&self) -> &KY {
        &self.output_kernel
    }
    /// Method name as in result records: `sisokr`, `siokr`, `isokr`, or
    /// `iokr` when neither side is sketched.
    pub fn method(&self) -> &'static str {
        match (self.input_sketch.is_some(), self.output_sketch.is_some()) {
            (true, true) => "sisokr",
            (true, false) => "siokr",
            (false, true) => "isokr",
            (false, false) => "iokr",
        }
    }
}

/// SIOKR / ISOKR / SISOKR hyper-parameters (builder; setters store,
/// [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::sketch::{SketchKind, SketchSpec};
/// use okr_estimators::{ParamGuard, SketchedIokr};
/// use okr_kernels::Linear;
/// let p = SketchedIokr::params(Linear, Linear)
///     .input_sketch(Some(SketchSpec::new(SketchKind::Uniform, 100)))
///     .output_sketch(Some("gaussian:20".parse()?));
/// assert_eq!(p.check_ref()?.method(), "sisokr");
/// assert!(p.clone().pinv_rtol(1.5).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SketchedIokrParams<KX, KY>(pub(crate) SketchedIokrValidParams<KX, KY>);

impl<KX, KY> SketchedIokrParams<KX, KY> {
    /// Parameters with the given kernels, no sketch, `lambda = 1e-3`, seed 0.
    pub fn new(input_kernel: KX, output_kernel: KY) -> Self {
        Self(SketchedIokrValidParams {
            lambda: 1e-3,
            input_sketch: None,
            output_sketch: None,
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
    /// Sets the input sketch $R_X$ (`None`: exact on the input side).
    pub fn input_sketch(mut self, spec: Option<SketchSpec>) -> Self {
        self.0.input_sketch = spec;
        self
    }
    /// Sets the output sketch $R_Y$ (`None`: no output projection).
    pub fn output_sketch(mut self, spec: Option<SketchSpec>) -> Self {
        self.0.output_sketch = spec;
        self
    }
    /// Sets the seed of the sketches.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
    /// Sets the relative eigenvalue threshold of the pseudo-inverses.
    pub fn pinv_rtol(mut self, rtol: f64) -> Self {
        self.0.pinv_rtol = rtol;
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

impl<KX, KY> ParamGuard for SketchedIokrParams<KX, KY> {
    type Checked = SketchedIokrValidParams<KX, KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        let p = &self.0;
        checks::positive("lambda", p.lambda)?;
        checks::fraction("pinv_rtol", p.pinv_rtol)?;
        for s in [p.input_sketch, p.output_sketch].iter().flatten() {
            s.check()?;
        }
        Ok(&self.0)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
