//! IOKR: kernel ridge regression with an input and an output kernel
//! (Brouard et al.; Brogat-Motte et al. 2022, Eq. 5).
//!
//! $$\hat h = \arg\min_h \frac1n \sum_{i=1}^n \|h(x_i) - \psi(y_i)\|^2_{\mathcal H_y} + \lambda \|h\|^2,
//! \qquad \hat h(x) = \sum_i \alpha_i(x)\, \psi(y_i),\quad \alpha(x) = (K_x + n\lambda I)^{-1} k_x(x).$$
//!
//! No intercept and no centring. The output basis of the [`SurrogateModel`](crate::SurrogateModel)
//! is the distinct training outputs: with $P$ the `(n, n_atoms)` 0/1 matrix
//! that maps each sample to its output's atom, $h(x) = \sum_u (\alpha(x)^\top P)_u\, \psi(u)$.
//! Multi-label data repeat label sets (Bibtex: 2058 distinct sets among 4880
//! samples), so scoring candidates against atoms instead of samples halves
//! the decoding GEMM.

mod fit;
mod params;

use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, SolveInfo};
use serde::{Deserialize, Serialize};

// The regularization path lives in okr-surrogate, where okr-decode's
// leave-one-out search reaches it without the estimators.
pub use okr_surrogate::IokrPath;
pub use params::{IokrParams, IokrValidParams};

use crate::core::{AtomGram, Atoms, InputMap, KernelExpansion};
use crate::persist::{self, Invalid, Validate};

/// A fitted IOKR model.
///
/// Keeps the training inputs, the distinct training outputs (atoms) with the
/// sample-to-atom map, and the Cholesky factor of $K_x + n\lambda I$;
/// predictions solve with it.
///
/// # Example
/// ```
/// use okr_estimators::Fit;
/// use faer::Mat;
/// use okr_estimators::{Iokr, SurrogateModel};
/// use okr_kernels::{DenseRows, Linear, Rows};
/// let x = DenseRows::new(Mat::from_fn(6, 2, |i, j| (i * 3 + j) as f64 / 7.0))?;
/// let y = DenseRows::new(Mat::from_fn(6, 1, |i, _| i as f64))?;
/// let model = Iokr::params(Linear, Linear).lambda(1e-3).fit(&x, &y)?;
/// let c = model.coefficients(&x.select(&[0, 5]))?;
/// assert_eq!((c.nrows(), c.ncols()), (2, model.atoms().n_rows()));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Iokr<X, Y, KX, KY> {
    params: IokrValidParams<KX, KY>,
    x_train: X,
    atoms: Y,
    atom_of: Vec<usize>,
    chol: Cholesky,
    info: SolveInfo,
}

impl<KX, KY> Iokr<(), (), KX, KY> {
    /// Default parameters (`lambda = 1e-3`) with the given kernels.
    pub fn params(input_kernel: KX, output_kernel: KY) -> IokrParams<KX, KY> {
        IokrParams::new(input_kernel, output_kernel)
    }
}

impl<X: Rows, Y: Rows, KX, KY> Iokr<X, Y, KX, KY> {
    /// The parameters the model was fitted with.
    pub fn params_used(&self) -> &IokrValidParams<KX, KY> {
        &self.params
    }
    /// Training inputs.
    pub fn x_train(&self) -> &X {
        &self.x_train
    }
    /// The distinct training outputs in first-occurrence order: the atoms
    /// of the output basis.
    pub fn atoms(&self) -> &Y {
        &self.atoms
    }
    /// For every training sample, the index of its output in [`atoms`](Self::atoms).
    pub fn atom_of_sample(&self) -> &[usize] {
        &self.atom_of
    }
    /// The training outputs, rebuilt from the atoms.
    pub fn y_train(&self) -> Y {
        self.atoms.select(&self.atom_of)
    }
    /// Number of training samples `n`.
    pub fn n_samples(&self) -> usize {
        self.x_train.n_rows()
    }
    /// Jitter and attempts of the Cholesky factorization.
    pub fn solve_info(&self) -> SolveInfo {
        self.info
    }
}

impl<X, Y, KX, KY> KernelExpansion<X, Y> for Iokr<X, Y, KX, KY>
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
        &self.x_train
    }
    fn input_map(&self) -> InputMap<'_> {
        InputMap::Ridge { factor: &self.chol, atom_of: &self.atom_of }
    }
    fn atoms(&self) -> Atoms<'_, Y> {
        Atoms { outputs: &self.atoms, weights: None, gram: AtomGram::FromOutputs }
    }
    fn training_outputs(&self) -> &Y {
        &self.atoms
    }
}

impl<X: Rows, Y: Rows, KX: persist::StoredKernel<X>, KY: persist::StoredKernel<Y>> Validate for Iokr<X, Y, KX, KY> {
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("IOKR", &IokrParams(self.params.clone()))?;
        let n = self.x_train.n_rows();
        persist::ensure(n > 0, || "IOKR has no training samples".into())?;
        persist::grouping("IOKR sample-to-atom map", &self.atom_of, n, self.atoms.n_rows())?;
        persist::cholesky("IOKR Cholesky factor", &self.chol, n)?;
        self.params.input_kernel.check_rows("IOKR input kernel", &self.x_train)?;
        self.params.output_kernel.check_rows("IOKR output kernel", &self.atoms)
    }
}
