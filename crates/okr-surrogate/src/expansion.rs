//! [`KernelExpansion`]: what a fitted kernel-output model is made of, from
//! which its [`SurrogateModel`] is derived once for every estimator.
//!
//! Every such model predicts $h(x) = \sum_j C_j(x)\, a_j$ with
//!
//! - coefficients over the kernel expansion on some input rows $X_e$
//!   (training rows, anchors or a sketch's support): $C = K_x(x, X_e)\,M$
//!   for a stored map $M$ ([`InputMap::Linear`]), or IOKR's ridge solve
//!   $C = K_x(x, X)(K_x + n\lambda I)^{-1}P$ ([`InputMap::Ridge`]);
//! - atoms written over output rows $U$: $a_j = \sum_u B_{ju}\,\psi(u)$, with
//!   $B$ the identity when the atoms are the outputs themselves ([`Atoms`]).
//!
//! Coefficients and atom products are computed in row tiles so that the
//! Gram temporary stays within 64 MiB whatever the number of test rows or
//! candidates.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, profile};

use crate::linear::{check_width, input_kernel_block_into};
use crate::{LinearExpansion, Result, SurrogateModel};

/// Bytes of a Gram temporary computed at a time (coefficients, atom
/// products, the estimators' kernel sketches).
const TILE_BYTES: usize = 64 << 20;

/// Number of rows `t` of a tile against `width` columns within 64 MiB of
/// `f64`, at least 1 and at most `total.max(1)`.
///
/// # Example
/// ```
/// assert_eq!(okr_surrogate::tile_rows(1 << 20, 100), 8); // 8 x 2^20 doubles = 64 MiB
/// assert_eq!(okr_surrogate::tile_rows(10, 3), 3);
/// ```
pub fn tile_rows(width: usize, total: usize) -> usize {
    (TILE_BYTES / 8 / width.max(1)).clamp(1, total.max(1))
}

/// How the coefficients of $h(x)$ on the atoms are computed.
#[derive(Debug, Clone, Copy)]
pub enum InputMap<'a> {
    /// $C = K_x(x, X_e)\, M$ with $M$ `(|X_e|, n_atoms)`.
    Linear(MatRef<'a, f64>),
    /// IOKR: $\alpha = (K_x + n\lambda I)^{-1} K_x(X_e, x)$ with the factor of
    /// $K_x + n\lambda I$, then the weights of samples sharing an output are
    /// summed into its atom (`atom_of[i]` is sample `i`'s atom).
    Ridge {
        /// Cholesky factor of $K_x + n\lambda I$ `(n, n)`.
        factor: &'a Cholesky,
        /// For every training sample, its atom.
        atom_of: &'a [usize],
    },
    /// The inputs are the coefficients themselves: coordinates predicted
    /// elsewhere in an output basis fitted from outputs alone (okr-estimators'
    /// `OutputBasis`); [`KernelExpansion::coordinates_into`] copies them.
    Coordinates,
}

/// How the Gram matrix of the atoms $\langle a_i, a_j\rangle$ is obtained.
#[derive(Debug, Clone, Copy)]
pub enum AtomGram<'a> {
    /// The atoms are orthonormal.
    Identity,
    /// Stored at fit time.
    Stored(MatRef<'a, f64>),
    /// $B K_y(U, U) B^\top$ from the output kernel (or $K_y(U, U)$ without $B$).
    FromOutputs,
}

/// The atoms $a_j = \sum_u B_{ju}\psi(u)$ of a model.
#[derive(Debug, Clone, Copy)]
pub struct Atoms<'a, Y> {
    /// The output rows $U$ the atoms are written over.
    pub outputs: &'a Y,
    /// $B$ `(n_atoms, U.n_rows())`, or `None` when the atoms are the outputs.
    pub weights: Option<MatRef<'a, f64>>,
    /// Their Gram matrix.
    pub gram: AtomGram<'a>,
}

impl<Y: Rows> Atoms<'_, Y> {
    /// $h(x)$ read with a linear output kernel, from the coefficients $C$
    /// `(n_test, n_atoms)` (see [`SurrogateModel::coefficients_into`]):
    /// $C\,B\,U$ `(n_test, dim)`, with `outputs` the output rows $U$ as a
    /// matrix `(n_outputs, dim)` (a 0/1 label indicator, or the vectors) and
    /// $C\,U$ without $B$. For label sets, entry $(t, l)$ is the weight
    /// $h(x_t)$ puts on the outputs that hold label $l$: its label scores.
    ///
    /// # Panics
    /// If `coef` does not have [`SurrogateModel::n_atoms`] columns or
    /// `outputs` one row per output row.
    ///
    /// # Example
    /// ```
    /// use faer::{Mat, mat};
    /// use okr_kernels::DenseRows;
    /// use okr_surrogate::{AtomGram, Atoms};
    /// let u = DenseRows::new(mat![[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])?;
    /// let b = mat![[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]; // 2 atoms over 3 outputs
    /// let atoms = Atoms { outputs: &u, weights: Some(b.as_ref()), gram: AtomGram::FromOutputs };
    /// let c = mat![[0.5, 1.0]];
    /// assert_eq!(atoms.linear_read(c.as_ref(), u.as_mat()), mat![[1.0, 2.5]]);
    /// Ok::<(), okr_kernels::Error>(())
    /// ```
    #[track_caller]
    pub fn linear_read(&self, coef: MatRef<'_, f64>, outputs: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(outputs.nrows(), self.outputs.n_rows(), "one matrix row per output row");
        match self.weights {
            None => {
                assert_eq!(coef.ncols(), outputs.nrows(), "one coefficient per atom");
                coef * outputs
            }
            Some(b) => {
                assert_eq!(coef.ncols(), b.nrows(), "one coefficient per atom");
                coef * (b * outputs)
            }
        }
    }
}

/// A fitted kernel-output model as a kernel expansion; implementing it gives
/// the model its [`SurrogateModel`].
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_kernels::{DenseRows, Linear};
/// use okr_surrogate::{AtomGram, Atoms, InputMap, KernelExpansion, SurrogateModel};
/// // h(x) = sum_j C_j(x) psi(u_j) with C = K_x(x, X_e) M over the outputs U.
/// struct Tiny { xe: DenseRows, u: DenseRows, map: Mat<f64> }
/// impl KernelExpansion<DenseRows, DenseRows> for Tiny {
///     type InputKernel = Linear;
///     type OutputKernel = Linear;
///     fn input_kernel(&self) -> &Linear { &Linear }
///     fn output_kernel(&self) -> &Linear { &Linear }
///     fn expansion_inputs(&self) -> &DenseRows { &self.xe }
///     fn input_map(&self) -> InputMap<'_> { InputMap::Linear(self.map.as_ref()) }
///     fn atoms(&self) -> Atoms<'_, DenseRows> {
///         Atoms { outputs: &self.u, weights: None, gram: AtomGram::FromOutputs }
///     }
///     fn training_outputs(&self) -> &DenseRows { &self.u }
/// }
/// let xe = DenseRows::new(Mat::from_fn(3, 2, |i, j| (i + j) as f64))?;
/// let u = DenseRows::new(Mat::from_fn(2, 4, |i, j| (i * j) as f64))?;
/// let map = Mat::from_fn(3, 2, |i, j| (i as f64 - j as f64) / 2.0);
/// let model = Tiny { xe: xe.clone(), u, map: map.clone() };
/// assert_eq!(model.n_atoms(), 2);
/// // The derived SurrogateModel: C = (X X_e^T) M for the linear kernel.
/// let want = xe.as_mat() * xe.as_mat().transpose() * &map;
/// assert!((model.coefficients(&xe)? - want).norm_max() < 1e-12);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait KernelExpansion<X: Rows, Y: Rows>: Send + Sync {
    /// The input kernel type.
    type InputKernel: Kernel<X>;
    /// The output kernel type.
    type OutputKernel: Kernel<Y>;

    /// The input kernel $k_x$.
    fn input_kernel(&self) -> &Self::InputKernel;
    /// The output kernel $k_y$.
    fn output_kernel(&self) -> &Self::OutputKernel;
    /// The input rows $X_e$ of the expansion.
    fn expansion_inputs(&self) -> &X;
    /// How coefficients are computed from $K_x(x, X_e)$.
    fn input_map(&self) -> InputMap<'_>;
    /// The atoms.
    fn atoms(&self) -> Atoms<'_, Y>;
    /// The distinct training outputs in first-occurrence order (the default
    /// candidates of a decoder).
    fn training_outputs(&self) -> &Y;

    /// For [`InputMap::Coordinates`]: writes the coefficients that the inputs
    /// `x` are, `(x.n_rows(), n_atoms)`, into `dst`. The default refuses
    /// (no model but an output basis has that map).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `x` is not
    /// coordinates of this model.
    fn coordinates_into(&self, x: &X, dst: MatMut<'_, f64>) -> Result<()> {
        let _ = dst;
        Err(crate::Error::ShapeMismatch {
            what: "inputs read as coordinates by a model that has none",
            expected: 0,
            got: x.n_rows(),
        })
    }
}

impl<X, Y, M> SurrogateModel<X, Y> for M
where
    X: Rows,
    Y: Rows,
    M: KernelExpansion<X, Y> + ?Sized,
{
    fn n_atoms(&self) -> usize {
        let atoms = self.atoms();
        atoms.weights.map_or(atoms.outputs.n_rows(), |b| b.nrows())
    }

    fn check_inputs(&self, x: &X) -> Result<()> {
        check_width("input features", self.expansion_inputs(), x)
    }

    fn check_outputs(&self, y: &Y) -> Result<()> {
        check_width("output dimension", self.atoms().outputs, y)
    }

    /// $C = K_x(x, X_e)\,M$ in tiles of test rows, or IOKR's solve.
    fn coefficients_into(&self, x: &X, dst: MatMut<'_, f64>, par: Par) -> Result<()> {
        match self.input_map() {
            InputMap::Linear(map) => {
                projected_coefficients_into(self.input_kernel(), self.expansion_inputs(), x, map, dst, par)
            }
            InputMap::Ridge { factor, atom_of } => {
                self.check_inputs(x)?;
                ridge_coefficients_into(self, x, factor, atom_of, dst, par);
                Ok(())
            }
            InputMap::Coordinates => {
                self.check_inputs(x)?;
                self.coordinates_into(x, dst)
            }
        }
    }

    /// The map $M$ of [`InputMap::Linear`] with the input kernel and $X_e$,
    /// or IOKR's ridge map $(K_x + n\lambda I)^{-1} P$, applied by solves
    /// ([`LinearExpansion::ridge`]).
    fn linear_expansion<'a>(&'a self) -> Option<LinearExpansion<'a, X>>
    where
        X: 'a,
        Y: 'a,
    {
        match self.input_map() {
            InputMap::Linear(map) => LinearExpansion::new(self.input_kernel(), self.expansion_inputs(), map).ok(),
            InputMap::Ridge { factor, atom_of } => {
                LinearExpansion::ridge(self.input_kernel(), self.expansion_inputs(), factor, atom_of, self.n_atoms())
                    .ok()
            }
            // Nothing to fold: the scores are one GEMM of the coordinates and the atom products.
            InputMap::Coordinates => None,
        }
    }

    /// $B\,K_y(U, c)$ in tiles of candidates, or $K_y(U, c)$ without $B$.
    fn atom_products_into(&self, candidates: &Y, dst: MatMut<'_, f64>, par: Par) -> Result<()> {
        self.check_outputs(candidates)?;
        let atoms = self.atoms();
        match atoms.weights {
            Some(b) => projected_atom_products_into(self.output_kernel(), atoms.outputs, candidates, b, dst, par),
            None => {
                let _p = profile::phase("output kernel blocks", 0.0);
                self.output_kernel().gram_block_into(atoms.outputs, candidates, dst, par);
                Ok(())
            }
        }
    }

    fn output_sq_norms(&self, y: &Y) -> Vec<f64> {
        self.output_kernel().diag(y)
    }

    fn atom_gram(&self) -> Mat<f64> {
        let atoms = self.atoms();
        match (atoms.gram, atoms.weights) {
            (AtomGram::Identity, _) => Mat::identity(self.n_atoms(), self.n_atoms()),
            (AtomGram::Stored(g), _) => g.to_owned(),
            (AtomGram::FromOutputs, None) => self.output_kernel().gram(atoms.outputs),
            (AtomGram::FromOutputs, Some(b)) => {
                let ky = self.output_kernel().gram(atoms.outputs);
                b * &ky * b.transpose()
            }
        }
    }
}

/// IOKR's coefficients: $\alpha = (K + n\lambda I)^{-1} K_x(X, x)$, then the
/// weights of samples sharing an output summed into their atom.
fn ridge_coefficients_into<X: Rows, Y: Rows, M: KernelExpansion<X, Y> + ?Sized>(
    model: &M,
    x: &X,
    factor: &Cholesky,
    atom_of: &[usize],
    mut dst: MatMut<'_, f64>,
    par: Par,
) {
    let inputs = model.expansion_inputs();
    let (n, n_atoms) = (inputs.n_rows(), model.n_atoms());
    assert_eq!((dst.nrows(), dst.ncols()), (x.n_rows(), n_atoms), "coefficient block shape");
    let mut alpha = Mat::zeros(n, x.n_rows());
    input_kernel_block_into(model.input_kernel(), inputs, x, alpha.as_mut(), par);
    {
        // Two triangular solves with n x n factors.
        let _p = profile::phase("Cholesky solves", 2.0 * (n * n * x.n_rows()) as f64);
        factor.solve_in_place(alpha.as_mut(), par);
    }
    if n_atoms == n {
        // Every output distinct: atoms are the samples, in order.
        dst.copy_from(alpha.transpose());
        return;
    }
    // Sum into an (n_atoms, n_test) buffer so each test point's column is contiguous.
    let mut agg = Mat::<f64>::zeros(n_atoms, x.n_rows());
    for t in 0..x.n_rows() {
        let mut col = agg.col_mut(t);
        for (i, &a) in alpha.col(t).iter().enumerate() {
            col[atom_of[i]] += a;
        }
    }
    dst.copy_from(agg.transpose());
}

/// $C = K_x(x, X)\, M$ with `M` `(n, p)`, in tiles of test rows so that the
/// Gram temporary stays within 64 MiB ([`tile_rows`]) whatever the number
/// of test rows; okr-estimators' trace-norm model uses it directly.
///
/// # Errors
/// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for inputs of
/// another feature width.
///
/// # Panics
/// If `dst` is not `(x.n_rows(), predict_map.ncols())`.
#[track_caller]
pub fn projected_coefficients_into<X: Rows, KX: Kernel<X>>(
    kx: &KX,
    x_train: &X,
    x: &X,
    predict_map: MatRef<'_, f64>,
    dst: MatMut<'_, f64>,
    par: Par,
) -> Result<()> {
    check_width("input features", x_train, x)?;
    assert_eq!((dst.nrows(), dst.ncols()), (x.n_rows(), predict_map.ncols()), "coefficient block shape");
    coefficients_in_tiles(kx, x_train, x, predict_map, dst, par, tile_rows(x_train.n_rows(), x.n_rows()));
    Ok(())
}

fn coefficients_in_tiles<X: Rows, KX: Kernel<X>>(
    kx: &KX,
    x_train: &X,
    x: &X,
    predict_map: MatRef<'_, f64>,
    mut dst: MatMut<'_, f64>,
    par: Par,
    tile: usize,
) {
    let (n, n_te) = (x_train.n_rows(), x.n_rows());
    let mut k = Mat::zeros(n, tile);
    for start in (0..n_te).step_by(tile) {
        let t = tile.min(n_te - start);
        let mut kt = k.as_mut().subcols_mut(0, t);
        input_kernel_block_into(kx, x_train, &x.slice(start..start + t), kt.as_mut(), par);
        let _p = profile::phase("coefficient GEMM", 2.0 * (n * t * predict_map.ncols()) as f64);
        matmul(dst.as_mut().subrows_mut(start, t), Accum::Replace, kt.as_ref().transpose(), predict_map, 1.0, par);
    }
}

/// $G\, K_y(\text{outputs}, c)$ `(p, n_c)` with the encoder `G` `(p, n_outputs)`,
/// in tiles of candidates (bounded Gram temporary, as above);
/// okr-estimators' Nystroem reduced-rank fit uses it directly.
///
/// # Errors
/// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for candidates of
/// another dimension.
///
/// # Panics
/// If `dst` is not `(encoder.nrows(), candidates.n_rows())`.
#[track_caller]
pub fn projected_atom_products_into<Y: Rows, KY: Kernel<Y>>(
    ky: &KY,
    outputs: &Y,
    candidates: &Y,
    encoder: MatRef<'_, f64>,
    dst: MatMut<'_, f64>,
    par: Par,
) -> Result<()> {
    check_width("output dimension", outputs, candidates)?;
    assert_eq!((dst.nrows(), dst.ncols()), (encoder.nrows(), candidates.n_rows()), "atom products shape");
    let tile = tile_rows(outputs.n_rows(), candidates.n_rows());
    atom_products_in_tiles(ky, outputs, candidates, encoder, dst, par, tile);
    Ok(())
}

fn atom_products_in_tiles<Y: Rows, KY: Kernel<Y>>(
    ky: &KY,
    outputs: &Y,
    candidates: &Y,
    encoder: MatRef<'_, f64>,
    mut dst: MatMut<'_, f64>,
    par: Par,
    tile: usize,
) {
    let (n, n_c) = (outputs.n_rows(), candidates.n_rows());
    let mut k = Mat::zeros(n, tile);
    for start in (0..n_c).step_by(tile) {
        let t = tile.min(n_c - start);
        let mut kt = k.as_mut().subcols_mut(0, t);
        {
            let _p = profile::phase("output kernel blocks", 0.0);
            ky.gram_block_into(outputs, &candidates.slice(start..start + t), kt.as_mut(), par);
        }
        let _p = profile::phase("atom product GEMM", 2.0 * (encoder.nrows() * n * t) as f64);
        matmul(dst.as_mut().subcols_mut(start, t), Accum::Replace, encoder, kt.as_ref(), 1.0, par);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use okr_kernels::{DenseRows, Gaussian};

    fn rows(n: usize, d: usize, seed: usize) -> DenseRows {
        DenseRows::new(Mat::from_fn(n, d, |i, j| (((i * 7 + j * 3 + seed) % 11) as f64) / 11.0)).unwrap()
    }

    /// The linear read is $C B U$ entry by entry (and $C U$ without $B$).
    #[test]
    fn linear_read_is_c_b_u() {
        let u = rows(5, 3, 4);
        let b = Mat::from_fn(2, 5, |i, j| (i + 2 * j) as f64 / 3.0 - 1.0);
        let c = Mat::from_fn(4, 2, |i, j| (i as f64 - j as f64) / 2.0);
        let um = u.as_mat();
        let weighted = Atoms { outputs: &u, weights: Some(b.as_ref()), gram: AtomGram::FromOutputs };
        let got = weighted.linear_read(c.as_ref(), um);
        for t in 0..4 {
            for l in 0..3 {
                let want: f64 = (0..2).map(|a| c[(t, a)] * (0..5).map(|r| b[(a, r)] * um[(r, l)]).sum::<f64>()).sum();
                assert!((got[(t, l)] - want).abs() < 1e-12, "({t}, {l})");
            }
        }
        let plain = Atoms { outputs: &u, weights: None, gram: AtomGram::FromOutputs };
        let c5 = Mat::from_fn(4, 5, |i, j| (i * j) as f64 / 7.0);
        let got = plain.linear_read(c5.as_ref(), um);
        for t in 0..4 {
            for l in 0..3 {
                let want: f64 = (0..5).map(|r| c5[(t, r)] * um[(r, l)]).sum();
                assert!((got[(t, l)] - want).abs() < 1e-12, "({t}, {l})");
            }
        }
    }

    /// Every tile size, including ones that do not divide the row count,
    /// gives the one-block product.
    #[test]
    fn tiles_equal_one_block() {
        let k = Gaussian::new(0.7).unwrap();
        let (train, test) = (rows(9, 3, 1), rows(10, 3, 2));
        let map = Mat::from_fn(9, 4, |i, j| (i as f64 - 2.0 * j as f64) / 5.0);
        let enc = Mat::from_fn(4, 9, |i, j| (i * j) as f64 / 7.0 - 0.5);
        let full_c = k.gram_block(&test, &train) * &map;
        let full_g = &enc * k.gram_block(&train, &test);
        for tile in [1, 3, 4, 10] {
            let mut c = Mat::zeros(10, 4);
            coefficients_in_tiles(&k, &train, &test, map.as_ref(), c.as_mut(), Par::Seq, tile);
            assert!((&c - &full_c).norm_max() < 1e-13, "coefficients, tile {tile}");
            let mut g = Mat::zeros(4, 10);
            atom_products_in_tiles(&k, &train, &test, enc.as_ref(), g.as_mut(), Par::Seq, tile);
            assert!((&g - &full_g).norm_max() < 1e-13, "atom products, tile {tile}");
        }
    }
}
