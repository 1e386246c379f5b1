use serde::{Deserialize, Serialize};

use crate::core::checks;
use crate::sketch::SketchSpec;
use crate::{Error, ParamGuard, Result};

/// Which atoms an [`OutputBasis`](super::OutputBasis) orthonormalizes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BasisKind {
    /// Kernel PCA of the output Gram over the distinct training outputs
    /// ($R = I$): at full rank the basis spans every training output.
    Exact,
    /// The sketched outputs $R_Y \psi(Y)$ of a sketch drawn as ISOKR / SISOKR
    /// draw their output sketch (DSOKR's sketched basis).
    Sketch(SketchSpec),
    /// Nystroem: `anchors` distinct training outputs drawn uniformly without
    /// replacement (capped at the number of distinct outputs).
    Nystroem {
        /// Number of anchor outputs.
        anchors: usize,
    },
}

impl BasisKind {
    /// `exact`, `sketch` or `nystroem`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Sketch(_) => "sketch",
            Self::Nystroem { .. } => "nystroem",
        }
    }
}

/// Validated [`OutputBasis`](super::OutputBasis) parameters; the only type
/// with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `kernel` | (given) | output kernel $k_y$ | |
/// | `kind` | [`BasisKind::Exact`] | atoms orthonormalized: all distinct outputs, a sketch, or Nystroem anchors | |
/// | `n_components` | `None` (all) | keep at most this many leading components | `>= 1` |
/// | `rtol` | `1e-12` | drop eigenvalues at or below `rtol * max` | `[0, 1)` |
/// | `lambda` | `1e-3` | ridge of the approximate leverage scores (`leverage` sketches only) | `(0, inf)` |
/// | `seed` | `0` | seed of the sketch or anchor draw | any |
///
/// scikit-learn: `basis = "exact"` with all components is `KernelPCA` of the
/// distinct outputs without centring, scaled so that the transformed
/// training outputs reproduce the Gram matrix ($Z Z^\top = K_y$).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputBasisValidParams<KY> {
    pub(crate) kernel: KY,
    pub(crate) kind: BasisKind,
    pub(crate) n_components: Option<usize>,
    pub(crate) rtol: f64,
    pub(crate) lambda: f64,
    pub(crate) seed: u64,
}

impl<KY> OutputBasisValidParams<KY> {
    /// The output kernel.
    pub fn kernel(&self) -> &KY {
        &self.kernel
    }
    /// The kind of basis.
    pub fn kind(&self) -> BasisKind {
        self.kind
    }
    /// The largest number of components kept, if capped.
    pub fn n_components(&self) -> Option<usize> {
        self.n_components
    }
    /// The relative eigenvalue cut.
    pub fn rtol(&self) -> f64 {
        self.rtol
    }
    /// The ridge of leverage-score sketches.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// The seed of the draw.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// [`OutputBasis`](super::OutputBasis) parameters (builder; setters store,
/// [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::output_basis::{BasisKind, OutputBasis};
/// use okr_estimators::{Linear, ParamGuard};
/// let p = OutputBasis::params(Linear).kind(BasisKind::Nystroem { anchors: 50 }).n_components(Some(20));
/// assert_eq!(p.check_ref()?.n_components(), Some(20));
/// assert!(OutputBasis::params(Linear).n_components(Some(0)).check().is_err());
/// assert!(OutputBasis::params(Linear).kind(BasisKind::Nystroem { anchors: 0 }).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputBasisParams<KY>(pub(crate) OutputBasisValidParams<KY>);

impl<KY> OutputBasisParams<KY> {
    /// The exact basis of all components with the given kernel.
    pub fn new(kernel: KY) -> Self {
        Self(OutputBasisValidParams {
            kernel,
            kind: BasisKind::Exact,
            n_components: None,
            rtol: 1e-12,
            lambda: 1e-3,
            seed: 0,
        })
    }
    /// Sets the output kernel.
    pub fn kernel(mut self, kernel: KY) -> Self {
        self.0.kernel = kernel;
        self
    }
    /// Sets the kind of basis.
    pub fn kind(mut self, kind: BasisKind) -> Self {
        self.0.kind = kind;
        self
    }
    /// Keeps at most `n` leading components (`None`: all above `rtol`).
    pub fn n_components(mut self, n: Option<usize>) -> Self {
        self.0.n_components = n;
        self
    }
    /// Sets the relative eigenvalue cut.
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.0.rtol = rtol;
        self
    }
    /// Sets the ridge of leverage-score sketches.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.0.lambda = lambda;
        self
    }
    /// Sets the seed of the sketch or anchor draw.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
}

impl<KY> ParamGuard for OutputBasisParams<KY> {
    type Checked = OutputBasisValidParams<KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        let p = &self.0;
        if let Some(n) = p.n_components {
            checks::at_least_one("n_components", n)?;
        }
        checks::fraction("rtol", p.rtol)?;
        checks::positive("lambda", p.lambda)?;
        match p.kind {
            BasisKind::Exact => {}
            BasisKind::Sketch(spec) => spec.check()?,
            BasisKind::Nystroem { anchors } => checks::at_least_one("anchors", anchors)?,
        }
        Ok(p)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
