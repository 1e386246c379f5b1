//! Sketched input / sketched output kernel regression: SIOKR, ISOKR and
//! SISOKR (El Ahmad, Laforgue, d'Alché-Buc; SISOKR poster, spec 5.3).
//!
//! The IOKR estimator $\hat h(x) = \sum_i \hat\alpha_i(x)\psi(y_i)$ is
//! replaced by a low-rank $\tilde h = \tilde P_Y \hat h_{\tilde P_X}$ built from
//! random sketches $R_X \in \mathbb R^{m_X \times n}$ and
//! $R_Y \in \mathbb R^{m_Y \times n}$ ([`Sketch`](crate::sketch::Sketch)):
//! $$\tilde\alpha(x) = R_Y^\top \tilde\Omega_Y \tilde\Omega_X R_X k_X^x,\quad
//! \tilde\Omega_Y = (R_Y K_Y R_Y^\top)^\dagger R_Y K_Y,\quad
//! \tilde\Omega_X = K_X R_X^\top (R_X K_X^2 R_X^\top + n\lambda R_X K_X R_X^\top)^\dagger.$$
//! SIOKR sketches the input only ($R_Y = I$), ISOKR the output only
//! ($R_X = I$). Pseudo-inverses drop eigenvalues at or below
//! `pinv_rtol * max` (default `1e-12`).
//!
//! The [`SurrogateModel`](crate::SurrogateModel) atoms are the $m_Y$ sketched outputs
//! $a_j = \sum_i (R_Y)_{ji}\psi(y_i)$ (without an output sketch: the
//! distinct training outputs), so decoding costs $O(n_{te}\, m_Y\, n_c)$;
//! coefficients are $C = K_X(x, X_S)\, Z$ over the support $S$ of $R_X$ only
//! (`m_X` points for sub-sampling). The poster's inference formula has a
//! dimension typo; okr uses $K_X^{te,tr} R_X^\top \tilde\Omega_X^\top \tilde\Omega_Y^\top R_Y K_Y^{tr,c}$
//! (spec 5.3).

mod fit;
mod params;
mod partition;
mod ridge;

use faer::{Mat, MatRef};
use okr_kernels::{Kernel, Rows};
use serde::{Deserialize, Serialize};

pub use params::{SketchedIokrParams, SketchedIokrValidParams};
pub use partition::SketchedPlan;

use crate::core::{AtomGram, Atoms, InputMap, KernelExpansion};
use crate::persist::{self, Invalid, Validate};

pub(crate) use fit::sum_rows_by_group;
pub(crate) use ridge::{RidgeSystem, SketchGram};

/// The output atoms of a model with an output sketch: the training outputs
/// the sketch touches and its restriction $R_{Y,S}$.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SketchedAtoms<Y> {
    support: Y,
    support_indices: Vec<usize>,
    #[serde(with = "okr_linalg::serde_mat")]
    weights: Mat<f64>,
    #[serde(with = "okr_linalg::serde_mat")]
    gram: Mat<f64>,
}

/// A fitted SIOKR / ISOKR / SISOKR model.
///
/// Keeps the training inputs on the support of $R_X$, the input map $Z$
/// `(|S_X|, n_atoms)`, the distinct training outputs (the default
/// candidates) and, with an output sketch, the touched outputs with the
/// weights $R_{Y,S}$ `(m_Y, |S_Y|)` and the atom Gram $R_Y K_Y R_Y^\top$.
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_estimators::sketch::SketchSpec;
/// use okr_estimators::{SketchedIokr, SurrogateModel};
/// use okr_kernels::{DenseRows, Gaussian, Rows};
/// let x = DenseRows::new(Mat::from_fn(40, 2, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0))?;
/// let y = DenseRows::new(Mat::from_fn(40, 3, |i, j| ((i + j) % 4) as f64))?;
/// let model = SketchedIokr::params(Gaussian::new(1.0)?, Gaussian::new(0.5)?)
///     .input_sketch(Some("uniform:10".parse()?))
///     .output_sketch(Some("gaussian:5".parse()?))
///     .lambda(1e-3)
///     .fit(&x, &y)?;
/// assert_eq!(model.method(), "sisokr");
/// assert!(model.input_support().len() <= 10); // only these Gram columns are used
/// let c = model.coefficients(&x.select(&[0, 1, 2]))?;
/// assert_eq!((c.nrows(), c.ncols()), (3, 5));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SketchedIokr<X, Y, KX, KY> {
    params: SketchedIokrValidParams<KX, KY>,
    n_samples: usize,
    x_support: X,
    x_support_indices: Vec<usize>,
    #[serde(with = "okr_linalg::serde_mat")]
    input_map: Mat<f64>,
    outputs: Y,
    output_of: Vec<usize>,
    atoms: Option<SketchedAtoms<Y>>,
    input_rank: Option<usize>,
    output_rank: Option<usize>,
}

impl<KX, KY> SketchedIokr<(), (), KX, KY> {
    /// Default parameters (no sketch, `lambda = 1e-3`, seed 0) with the given kernels.
    pub fn params(input_kernel: KX, output_kernel: KY) -> SketchedIokrParams<KX, KY> {
        SketchedIokrParams::new(input_kernel, output_kernel)
    }
}

impl<X: Rows, Y: Rows, KX, KY> SketchedIokr<X, Y, KX, KY> {
    /// The parameters the model was fitted with.
    pub fn params_used(&self) -> &SketchedIokrValidParams<KX, KY> {
        &self.params
    }
    /// `sisokr`, `siokr`, `isokr` or `iokr`.
    pub fn method(&self) -> &'static str {
        self.params.method()
    }
    /// Number of training samples `n`.
    pub fn n_samples(&self) -> usize {
        self.n_samples
    }
    /// Indices of the training inputs the model keeps: the support of $R_X$
    /// (all samples without an input sketch).
    pub fn input_support(&self) -> &[usize] {
        &self.x_support_indices
    }
    /// The training inputs on the support.
    pub fn x_support(&self) -> &X {
        &self.x_support
    }
    /// The input map $Z$ `(|S_X|, n_atoms)`: $C = K_X(x, X_S) Z$.
    pub fn input_map(&self) -> MatRef<'_, f64> {
        self.input_map.as_ref()
    }
    /// The distinct training outputs in first-occurrence order (the default
    /// candidates; the atoms when there is no output sketch).
    pub fn distinct_outputs(&self) -> &Y {
        &self.outputs
    }
    /// For every training sample, the index of its output in
    /// [`distinct_outputs`](Self::distinct_outputs).
    pub fn output_of_sample(&self) -> &[usize] {
        &self.output_of
    }
    /// The outputs the atoms are written over: the training outputs touched by
    /// $R_Y$, or the distinct training outputs without an output sketch.
    pub fn atom_outputs(&self) -> &Y {
        self.atoms.as_ref().map_or(&self.outputs, |a| &a.support)
    }
    /// Indices (into the training samples) of [`atom_outputs`](Self::atom_outputs)
    /// with an output sketch; `None` without one.
    pub fn output_support(&self) -> Option<&[usize]> {
        self.atoms.as_ref().map(|a| a.support_indices.as_slice())
    }
    /// Weights $B$ `(n_atoms, atom_outputs.n_rows())` of the atoms,
    /// $a_j = \sum_s B_{js}\psi(y_s)$: $R_{Y,S}$, or `None` for the identity.
    pub fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
        self.atoms.as_ref().map(|a| a.weights.as_ref())
    }
    /// Rank kept in the pseudo-inverse of $B_X$ (input sketch only).
    pub fn input_rank(&self) -> Option<usize> {
        self.input_rank
    }
    /// Rank kept in the pseudo-inverse of $R_Y K_Y R_Y^\top$ (output sketch only).
    pub fn output_rank(&self) -> Option<usize> {
        self.output_rank
    }
}

impl<X, Y, KX, KY> KernelExpansion<X, Y> for SketchedIokr<X, Y, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X>,
    KY: Kernel<Y>,
{
    type InputKernel = KX;
    type OutputKernel = KY;

    fn input_kernel(&self) -> &KX {
        &self.params.input_kernel
    }
    fn output_kernel(&self) -> &KY {
        &self.params.output_kernel
    }
    fn expansion_inputs(&self) -> &X {
        &self.x_support
    }
    fn input_map(&self) -> InputMap<'_> {
        InputMap::Linear(self.input_map.as_ref())
    }
    fn atoms(&self) -> Atoms<'_, Y> {
        match &self.atoms {
            Some(a) => Atoms {
                outputs: &a.support,
                weights: Some(a.weights.as_ref()),
                gram: AtomGram::Stored(a.gram.as_ref()),
            },
            None => Atoms { outputs: &self.outputs, weights: None, gram: AtomGram::FromOutputs },
        }
    }
    fn training_outputs(&self) -> &Y {
        &self.outputs
    }
}

impl<X: Rows, Y: Rows, KX: persist::StoredKernel<X>, KY: persist::StoredKernel<Y>> Validate
    for SketchedIokr<X, Y, KX, KY>
{
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("sketched", &SketchedIokrParams(self.params.clone()))?;
        let n = self.n_samples;
        persist::ensure(n > 0 && !self.x_support_indices.is_empty(), || {
            "sketched model has no training samples or no input support".into()
        })?;
        persist::rows("sketched input support", &self.x_support, self.x_support_indices.len())?;
        persist::indices("sketched input support", &self.x_support_indices, n)?;
        persist::grouping("sketched sample-to-output map", &self.output_of, n, self.outputs.n_rows())?;
        let r = self.input_map.ncols();
        persist::matrix("sketched input map", self.input_map.as_ref(), self.x_support.n_rows(), r)?;
        match &self.atoms {
            Some(a) => {
                persist::rows("sketched output support", &a.support, a.support_indices.len())?;
                persist::indices("sketched output support", &a.support_indices, n)?;
                persist::ensure(a.support.feature_dim() == self.outputs.feature_dim(), || {
                    "sketched output support has another width than the outputs".into()
                })?;
                persist::matrix("sketched atom weights", a.weights.as_ref(), r, a.support.n_rows())?;
                persist::matrix("sketched atom Gram", a.gram.as_ref(), r, r)?;
                self.params.output_kernel.check_rows("sketched output kernel", &a.support)?;
            }
            None => persist::ensure(r == self.outputs.n_rows(), || {
                format!("sketched model has {r} atoms for {} distinct outputs", self.outputs.n_rows())
            })?,
        }
        self.params.input_kernel.check_rows("sketched input kernel", &self.x_support)?;
        self.params.output_kernel.check_rows("sketched output kernel", &self.outputs)
    }
}
