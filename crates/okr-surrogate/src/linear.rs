//! [`LinearExpansion`]: the pieces of $C = K_x(x, X_e)\,M$ a decoder needs to
//! multiply the score chain $K_x(x, X_e)\,M\,G$ in the cheaper order.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, profile};

use crate::{Error, Result};

/// The linear input map of a kernel-expansion model: coefficients
/// $C = K_x(x, X_e)\,M$ with the stored map $M$ `(e, a)` over the $e$
/// expansion rows $X_e$ (training rows, anchors or a sketch's support) and
/// the $a$ atoms.
///
/// A decoder's scores need $K_x(x, X_e)\,M\,G$ with the atom products $G$
/// `(a, c)` of $c$ candidates. Multiplied coefficients first this costs
/// $2 n e a + 2 n a c$ flops for $n$ test rows; with the candidates folded
/// into the map first, $F = M G$ `(e, c)` ([`fold_into`](Self::fold_into)),
/// and the scores as $K_x(x, X_e)\,F$ from the kernel rows
/// ([`kernel_rows_into`](Self::kernel_rows_into)), it costs
/// $2 e a c + 2 n e c$, less whenever $e < n$ and $a \approx c$.
/// [`SurrogateModel::linear_expansion`](crate::SurrogateModel::linear_expansion)
/// hands it out (okr-estimators' `KernelExpansion` with a linear input map).
///
/// # Example
/// ```
/// use faer::{Mat, Par};
/// use okr_kernels::{DenseRows, Gaussian, Rows};
/// use okr_surrogate::LinearExpansion;
/// // Four expansion rows, two atoms, five test rows, three candidates.
/// let xe = DenseRows::new(Mat::from_fn(4, 3, |i, j| ((i * 7 + j * 3) % 5) as f64 / 5.0))?;
/// let xt = DenseRows::new(Mat::from_fn(5, 3, |i, j| ((i + 2 * j) % 4) as f64 / 4.0))?;
/// let map = Mat::from_fn(4, 2, |i, j| (i as f64 - j as f64) / 3.0);
/// let g = Mat::from_fn(2, 3, |j, c| (j + c) as f64 / 2.0);
/// let kernel = Gaussian::new(0.5)?;
/// let lin = LinearExpansion::new(&kernel, &xe, map.as_ref())?;
/// let (mut f, mut k) = (Mat::zeros(4, 3), Mat::zeros(4, 5));
/// lin.fold_into(g.as_ref(), f.as_mut(), Par::Seq)?;
/// lin.kernel_rows_into(&xt, k.as_mut(), Par::Seq)?;
/// // Both orders of the chain: (K M) G = K (M G).
/// let (a, b) = ((k.transpose() * &map) * &g, k.transpose() * f.as_ref());
/// assert!((&a - &b).norm_max() < 1e-12 * (1.0 + a.norm_max()));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LinearExpansion<'a, X: Rows> {
    kernel: &'a dyn Kernel<X>,
    inputs: &'a X,
    map: Map<'a>,
}

/// How $M$ is held.
#[derive(Clone, Copy)]
enum Map<'a> {
    /// Stored `(e, a)`.
    Dense(MatRef<'a, f64>),
    /// IOKR's $M = (K_x + n\lambda I)^{-1} P$, with $P$ `(n, a)` the 0/1
    /// matrix sending each training sample to its atom: never formed.
    Ridge { factor: &'a Cholesky, atom_of: &'a [usize], n_atoms: usize },
}

// References only: copyable whatever `X` is (a derive would ask `X: Copy`).
impl<X: Rows> Clone for LinearExpansion<'_, X> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<X: Rows> Copy for LinearExpansion<'_, X> {}

impl<X: Rows> std::fmt::Debug for LinearExpansion<'_, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinearExpansion")
            .field("n_expansion", &self.n_expansion())
            .field("n_atoms", &self.n_atoms())
            .finish_non_exhaustive()
    }
}

impl<'a, X: Rows> LinearExpansion<'a, X> {
    /// The map `map` $M$ `(inputs.n_rows(), a)` over the expansion rows
    /// `inputs` $X_e$ under the input kernel `kernel`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `map` does not have one row per
    /// expansion row.
    pub fn new(kernel: &'a dyn Kernel<X>, inputs: &'a X, map: MatRef<'a, f64>) -> Result<Self> {
        if map.nrows() != inputs.n_rows() {
            return Err(Error::ShapeMismatch {
                what: "rows of the input map vs expansion rows",
                expected: inputs.n_rows(),
                got: map.nrows(),
            });
        }
        Ok(Self { kernel, inputs, map: Map::Dense(map) })
    }

    /// IOKR's map $M = (K_x + n\lambda I)^{-1} P$ over the $n$ training
    /// rows `inputs`, given by the Cholesky factor `factor` of
    /// $K_x + n\lambda I$ and `atom_of`, the atom of every training sample
    /// ($P_{i,a} = 1$ for $a$ = `atom_of[i]`), with `n_atoms` atoms. $M$ is never
    /// formed: [`fold_into`](Self::fold_into) gathers the rows of $G$ and
    /// solves, $F = (K_x + n\lambda I)^{-1}(P G)$ in $2 n^2 c$ flops.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when the factor or `atom_of` does not have
    /// one row per training row, or an atom index is not below `n_atoms`.
    pub fn ridge(
        kernel: &'a dyn Kernel<X>,
        inputs: &'a X,
        factor: &'a Cholesky,
        atom_of: &'a [usize],
        n_atoms: usize,
    ) -> Result<Self> {
        let n = inputs.n_rows();
        check_shape("rows of the ridge factor vs training rows", (n, 0), (factor.dim(), 0))?;
        check_shape("atoms of the training rows", (n, 0), (atom_of.len(), 0))?;
        if let Some(&a) = atom_of.iter().find(|&&a| a >= n_atoms) {
            return Err(Error::ShapeMismatch { what: "atom index vs atoms", expected: n_atoms, got: a });
        }
        Ok(Self { kernel, inputs, map: Map::Ridge { factor, atom_of, n_atoms } })
    }

    /// Number $e$ of expansion rows $X_e$.
    pub fn n_expansion(&self) -> usize {
        self.inputs.n_rows()
    }

    /// Number $a$ of atoms (columns of $M$).
    pub fn n_atoms(&self) -> usize {
        match self.map {
            Map::Dense(m) => m.ncols(),
            Map::Ridge { n_atoms, .. } => n_atoms,
        }
    }

    /// The map $M$ `(e, a)` when it is stored; `None` for IOKR's ridge map
    /// ([`ridge`](Self::ridge)), which is applied by solves.
    pub fn map(&self) -> Option<MatRef<'a, f64>> {
        match self.map {
            Map::Dense(m) => Some(m),
            Map::Ridge { .. } => None,
        }
    }

    /// Flops of applying $M$ to one column: $2 e a$ for a stored map (a
    /// column of $K_x(x, X_e)\,M$ or of $M G$), $2 e^2$ for the ridge map
    /// (two triangular solves; the gather by atom is free).
    pub fn map_flops_per_column(&self) -> f64 {
        let e = self.n_expansion() as f64;
        match self.map {
            Map::Dense(m) => 2.0 * e * m.ncols() as f64,
            Map::Ridge { .. } => 2.0 * e * e,
        }
    }

    /// The feature width of the expansion rows (`None` for containers that
    /// are not vectors), for cost estimates of the kernel rows.
    pub fn feature_dim(&self) -> Option<usize> {
        self.inputs.feature_dim()
    }

    /// Writes the kernel rows $K_x(X_e, x)$ `(e, x.n_rows())` into `dst`:
    /// column $t$ holds $k_x(x_t, X_e)$, so that $C = $ `dst`$^\top M$. The
    /// caller tiles the rows of `x` (marked as the "input kernel blocks"
    /// phase, as in the coefficients).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for inputs of another feature width, or a
    /// `dst` of another shape.
    pub fn kernel_rows_into(&self, x: &X, dst: MatMut<'_, f64>, par: Par) -> Result<()> {
        check_width("input features", self.inputs, x)?;
        check_shape("kernel rows", (self.n_expansion(), x.n_rows()), (dst.nrows(), dst.ncols()))?;
        input_kernel_block_into(self.kernel, self.inputs, x, dst, par);
        Ok(())
    }

    /// Writes the candidates folded into the map, $F = M G$ `(e, c)`, for atom
    /// products `atom_products` $G$ `(a, c)`: one GEMM of $2 e a c$ flops for
    /// a stored map; for the ridge map, the rows of $G$ of the atoms `atom_of[i]`
    /// gathered into `dst` and solved in place against
    /// $K_x + n\lambda I$ ($2 e^2 c$ flops).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when $G$ does not have one row per atom or
    /// `dst` is not `(e, c)`.
    pub fn fold_into(&self, atom_products: MatRef<'_, f64>, mut dst: MatMut<'_, f64>, par: Par) -> Result<()> {
        check_shape("rows of the atom products", (self.n_atoms(), 0), (atom_products.nrows(), 0))?;
        check_shape("folded candidates", (self.n_expansion(), atom_products.ncols()), (dst.nrows(), dst.ncols()))?;
        match self.map {
            Map::Dense(m) => matmul(dst, Accum::Replace, m, atom_products, 1.0, par),
            Map::Ridge { factor, atom_of, .. } => {
                for c in 0..dst.ncols() {
                    let g = atom_products.col(c);
                    let mut f = dst.as_mut().col_mut(c);
                    for (i, &a) in atom_of.iter().enumerate() {
                        f[i] = g[a];
                    }
                }
                let e = self.n_expansion() as f64;
                let _p = profile::phase("Cholesky solves", 2.0 * e * e * dst.ncols() as f64);
                if dst.ncols() == 1 {
                    // faer solves a single column by another kernel whose
                    // rounding differs from the multi-column one; as a
                    // two-column solve, a candidate's F column has the same
                    // bits in every fold tile, so exact copies still tie.
                    let mut pair = Mat::zeros(dst.nrows(), 2);
                    pair.col_mut(0).copy_from(dst.as_ref().col(0));
                    pair.col_mut(1).copy_from(dst.as_ref().col(0));
                    factor.solve_in_place(pair.as_mut(), par);
                    dst.col_mut(0).copy_from(pair.col(0));
                } else {
                    factor.solve_in_place(dst, par);
                }
            }
        }
        Ok(())
    }
}

/// $K_x(X_e, x)$ `(x_train.n_rows(), x.n_rows())` into `dst`, timed as the
/// "input kernel blocks" phase: the one place the expansions evaluate their
/// input kernel (coefficients in either map, and decoders multiplying the
/// chain candidates first through [`LinearExpansion`]).
pub(crate) fn input_kernel_block_into<X: Rows, KX: Kernel<X> + ?Sized>(
    kx: &KX,
    x_train: &X,
    x: &X,
    dst: MatMut<'_, f64>,
    par: Par,
) {
    let _p = profile::phase("input kernel blocks", 0.0);
    kx.gram_block_into(x_train, x, dst, par);
}

/// Rejects `other` when its width differs from the training container's
/// (as okr-estimators' parameter checks do).
pub(crate) fn check_width<R: Rows>(what: &'static str, train: &R, other: &R) -> Result<()> {
    match (train.feature_dim(), other.feature_dim()) {
        (Some(a), Some(b)) if a != b => Err(Error::ShapeMismatch { what, expected: a, got: b }),
        _ => Ok(()),
    }
}

/// A shape error naming the first differing dimension.
fn check_shape(what: &'static str, expected: (usize, usize), got: (usize, usize)) -> Result<()> {
    if expected.0 != got.0 {
        return Err(Error::ShapeMismatch { what, expected: expected.0, got: got.0 });
    }
    if expected.1 != got.1 {
        return Err(Error::ShapeMismatch { what, expected: expected.1, got: got.1 });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use okr_kernels::{DenseRows, Gaussian};

    fn rows(n: usize, d: usize, seed: usize) -> DenseRows {
        DenseRows::new(Mat::from_fn(n, d, |i, j| (((i * 5 + j * 3 + seed) % 7) as f64) / 7.0)).unwrap()
    }

    /// Both products against pair-by-pair oracles; every wrong shape is a typed error.
    #[test]
    fn kernel_rows_and_fold_equal_the_definitions_and_check_shapes() {
        let k = Gaussian::new(0.6).unwrap();
        let (xe, xt) = (rows(5, 3, 1), rows(4, 3, 2));
        let map = Mat::from_fn(5, 3, |i, j| (i as f64 - j as f64) / 4.0);
        let lin = LinearExpansion::new(&k, &xe, map.as_ref()).unwrap();
        assert_eq!((lin.n_expansion(), lin.n_atoms(), lin.feature_dim()), (5, 3, Some(3)));
        let mut kr = Mat::zeros(5, 4);
        lin.kernel_rows_into(&xt, kr.as_mut(), Par::Seq).unwrap();
        for i in 0..5 {
            for t in 0..4 {
                assert!((kr[(i, t)] - k.eval(&xe, i, &xt, t)).abs() < 1e-14);
            }
        }
        let g = Mat::from_fn(3, 2, |i, j| (i + 2 * j) as f64 / 3.0);
        let mut f = Mat::zeros(5, 2);
        lin.fold_into(g.as_ref(), f.as_mut(), Par::Seq).unwrap();
        for i in 0..5 {
            for c in 0..2 {
                let want: f64 = (0..3).map(|j| map[(i, j)] * g[(j, c)]).sum();
                assert!((f[(i, c)] - want).abs() < 1e-14);
            }
        }
        let mismatch = |r: Result<()>| matches!(r, Err(Error::ShapeMismatch { .. }));
        assert!(mismatch(lin.kernel_rows_into(&rows(4, 2, 0), Mat::zeros(5, 4).as_mut(), Par::Seq)));
        assert!(mismatch(lin.kernel_rows_into(&xt, Mat::zeros(5, 3).as_mut(), Par::Seq)));
        assert!(mismatch(lin.fold_into(Mat::zeros(2, 2).as_ref(), Mat::zeros(5, 2).as_mut(), Par::Seq)));
        assert!(mismatch(lin.fold_into(g.as_ref(), Mat::zeros(4, 2).as_mut(), Par::Seq)));
        assert!(LinearExpansion::new(&k, &xe, Mat::zeros(4, 3).as_ref()).is_err());
    }

    /// The ridge map folds as $(K + n\lambda I)^{-1} P G$ with $P$ formed
    /// explicitly, in fold tiles of every width (one column included), and
    /// refuses a factor, an atom list or an atom index of the wrong size.
    #[test]
    fn ridge_fold_equals_the_explicit_solve_and_checks_shapes() {
        use faer::linalg::solvers::Solve;
        use okr_linalg::JitterPolicy;
        let k = Gaussian::new(0.6).unwrap();
        let xe = rows(6, 3, 1);
        let mut a = k.gram(&xe);
        for i in 0..6 {
            a[(i, i)] += 0.3;
        }
        let (factor, _) = Cholesky::factor(a.as_ref(), JitterPolicy::default()).unwrap();
        let atom_of = [0, 1, 0, 2, 1, 3];
        let lin = LinearExpansion::ridge(&k, &xe, &factor, &atom_of, 4).unwrap();
        assert_eq!((lin.n_expansion(), lin.n_atoms(), lin.map(), lin.map_flops_per_column()), (6, 4, None, 72.0));
        let g = Mat::from_fn(4, 5, |i, j| ((i * 3 + j * 7) % 5) as f64 / 5.0 - 0.3);
        let p = Mat::from_fn(6, 4, |i, j| if atom_of[i] == j { 1.0 } else { 0.0 });
        let want = a.partial_piv_lu().solve(&p * &g);
        for w in [1, 2, 5] {
            let mut f = Mat::zeros(6, 5);
            for c0 in (0..5).step_by(w) {
                let c1 = (c0 + w).min(5);
                lin.fold_into(g.as_ref().subcols(c0, c1 - c0), f.as_mut().subcols_mut(c0, c1 - c0), Par::Seq).unwrap();
            }
            assert!((&f - &want).norm_max() < 1e-12 * (1.0 + want.norm_max()), "fold tiles of {w}");
        }
        let mismatch = |r: Result<LinearExpansion<'_, DenseRows>>| matches!(r, Err(Error::ShapeMismatch { .. }));
        assert!(mismatch(LinearExpansion::ridge(&k, &rows(5, 3, 1), &factor, &atom_of, 4)));
        assert!(mismatch(LinearExpansion::ridge(&k, &xe, &factor, &atom_of[..5], 4)));
        assert!(mismatch(LinearExpansion::ridge(&k, &xe, &factor, &atom_of, 3)));
    }
}
