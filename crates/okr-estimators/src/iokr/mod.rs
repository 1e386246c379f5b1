//! IOKR: kernel ridge regression with an input and an output kernel
//! (Brouard et al.; Brogat-Motte et al. 2022, Eq. 5).
//!
//! $$\hat h = \arg\min_h \frac1n \sum_{i=1}^n \|h(x_i) - \psi(y_i)\|^2_{\mathcal H_y} + \lambda \|h\|^2,
//! \qquad \hat h(x) = \sum_i \alpha_i(x)\, \psi(y_i),\quad \alpha(x) = (K_x + n\lambda I)^{-1} k_x(x).$$
//!
//! No intercept and no centring. The output basis of the [`SurrogateModel`]
//! is the distinct training outputs: with $P$ the `(n, n_atoms)` 0/1 matrix
//! that maps each sample to its output's atom, $h(x) = \sum_u (\alpha(x)^\top P)_u\, \psi(u)$.
//! Multi-label data repeat label sets (Bibtex: 2058 distinct sets among 4880
//! samples), so scoring candidates against atoms instead of samples halves
//! the decoding GEMM.

mod fit;
mod params;
mod path;

use faer::{Mat, MatMut, Par};
use okr_kernels::{Kernel, KernelSpec, Rows};
use okr_linalg::{Cholesky, SolveInfo};
use serde::{Deserialize, Serialize};

pub use params::{IokrParams, IokrValidParams};
pub use path::IokrPath;

use crate::persist::{self, Invalid, Validate};
use crate::projection::check_width;
use crate::{Result, SurrogateModel};

/// A fitted IOKR model.
///
/// Keeps the training inputs, the distinct training outputs (atoms) with the
/// sample-to-atom map, and the Cholesky factor of $K_x + n\lambda I$;
/// predictions solve with it.
///
/// # Example
/// ```
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

impl<X, Y, KX, KY> SurrogateModel<X, Y> for Iokr<X, Y, KX, KY>
where
    X: Rows,
    Y: Rows,
    KX: Kernel<X>,
    KY: Kernel<Y>,
{
    fn n_atoms(&self) -> usize {
        self.atoms.n_rows()
    }

    fn check_inputs(&self, x: &X) -> Result<()> {
        check_width("input features", &self.x_train, x)
    }

    fn check_outputs(&self, y: &Y) -> Result<()> {
        check_width("output dimension", &self.atoms, y)
    }

    /// $C = K_x(x, X_{train}) (K_x + n\lambda I)^{-1} P$, via
    /// $\alpha = (K + n\lambda I)^{-1} K_x(X_{train}, x)$: one Gram block, a
    /// Cholesky solve with `x.n_rows()` right-hand sides, then the weights of
    /// samples sharing an output are summed into their atom.
    fn coefficients_into(&self, x: &X, mut dst: MatMut<'_, f64>, par: Par) -> Result<()> {
        self.check_inputs(x)?;
        let n = self.n_samples();
        assert_eq!((dst.nrows(), dst.ncols()), (x.n_rows(), self.n_atoms()), "coefficient block shape");
        let mut alpha = Mat::zeros(n, x.n_rows());
        self.params.input_kernel.gram_block_into(&self.x_train, x, alpha.as_mut(), par);
        self.chol.solve_in_place(alpha.as_mut(), par);
        if self.n_atoms() == n {
            // Every output distinct: atoms are the samples, in order.
            dst.copy_from(alpha.transpose());
            return Ok(());
        }
        // Sum into an (n_atoms, n_test) buffer so each test point's column is contiguous.
        let mut agg = Mat::<f64>::zeros(self.n_atoms(), x.n_rows());
        for t in 0..x.n_rows() {
            let mut col = agg.col_mut(t);
            for (i, &a) in alpha.col(t).iter().enumerate() {
                col[self.atom_of[i]] += a;
            }
        }
        dst.copy_from(agg.transpose());
        Ok(())
    }

    fn atom_products_into(&self, candidates: &Y, dst: MatMut<'_, f64>, par: Par) -> Result<()> {
        self.check_outputs(candidates)?;
        self.params.output_kernel.gram_block_into(&self.atoms, candidates, dst, par);
        Ok(())
    }

    fn output_sq_norms(&self, y: &Y) -> Vec<f64> {
        self.params.output_kernel.diag(y)
    }

    fn atom_gram(&self) -> Mat<f64> {
        self.params.output_kernel.gram(&self.atoms)
    }
}

impl<X: Rows, Y: Rows> Validate for Iokr<X, Y, KernelSpec, KernelSpec> {
    fn validate(&self) -> std::result::Result<(), Invalid> {
        persist::check_params("IOKR", &IokrParams(self.params.clone()))?;
        let n = self.x_train.n_rows();
        persist::ensure(n > 0, || "IOKR has no training samples".into())?;
        persist::grouping("IOKR sample-to-atom map", &self.atom_of, n, self.atoms.n_rows())?;
        persist::cholesky("IOKR Cholesky factor", &self.chol, n)?;
        persist::kernel_fits("IOKR input kernel", &self.params.input_kernel, &self.x_train)?;
        persist::kernel_fits("IOKR output kernel", &self.params.output_kernel, &self.atoms)
    }
}
