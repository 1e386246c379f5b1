use faer::{Mat, MatMut, MatRef, Par};
use okr_kernels::Rows;

use crate::{LinearExpansion, Result};

/// Memory for the per-tile matrices of
/// [`SurrogateModel::rkhs_sq_errors`] (256 MiB): the tile has
/// `RKHS_ERROR_TILE_BYTES / (24 n_atoms)` rows.
pub const RKHS_ERROR_TILE_BYTES: usize = 256 << 20;

/// A fitted kernel-output estimator, as decoders see it.
///
/// The prediction $h(x)$ for an input is a combination of `n_atoms` atoms,
/// $h(x_t) = \sum_j C_{tj}\, a_j$, each atom a known combination of training
/// outputs, $a_j = \sum_i B_{ji} \psi(y_i)$ (IOKR: $B = I$). A decoder scores a
/// candidate $c$ by
/// $$\|h(x_t) - \psi(c)\|^2 - \|h(x_t)\|^2 = k(c, c) - 2 \sum_j C_{tj} G_{jc},$$
/// with $G_{jc} = \langle a_j, \psi(c) \rangle$, so it only needs
/// [`coefficients_into`](SurrogateModel::coefficients_into),
/// [`atom_products_into`](SurrogateModel::atom_products_into) and
/// [`output_sq_norms`](SurrogateModel::output_sq_norms).
pub trait SurrogateModel<X: Rows, Y: Rows>: Send + Sync {
    /// Number of atoms `r` of the output basis.
    fn n_atoms(&self) -> usize;

    /// Checks that inputs `x` can be fed to the model (feature width).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for another width.
    fn check_inputs(&self, x: &X) -> Result<()>;

    /// Checks that outputs `y` live in the model's output space.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for another width.
    fn check_outputs(&self, y: &Y) -> Result<()>;

    /// Writes the coefficients `C` `(x.n_rows(), n_atoms)` of $h(x)$ into `dst`.
    ///
    /// # Errors
    /// Shape errors as [`check_inputs`](SurrogateModel::check_inputs).
    fn coefficients_into(&self, x: &X, dst: MatMut<'_, f64>, par: Par) -> Result<()>;

    /// Writes $G_{jc} = \langle a_j, \psi(c_c)\rangle$, shape `(n_atoms, candidates.n_rows())`.
    ///
    /// # Errors
    /// Shape errors as [`check_outputs`](SurrogateModel::check_outputs).
    fn atom_products_into(&self, candidates: &Y, dst: MatMut<'_, f64>, par: Par) -> Result<()>;

    /// $k(y, y)$ for each row of `y`.
    fn output_sq_norms(&self, y: &Y) -> Vec<f64>;

    /// The Gram matrix of the atoms, $\langle a_i, a_j \rangle$ `(n_atoms, n_atoms)`,
    /// needed for $\|h(x)\|^2$ and squared errors in the output RKHS.
    fn atom_gram(&self) -> Mat<f64>;

    /// The linear input map of the model when its coefficients are
    /// $C = K_x(x, X_e)\,M$ (every okr-estimators `KernelExpansion`: a
    /// stored map, or IOKR's ridge map applied by solves), so that a decoder
    /// may fold the candidates into the map first, $K_x(x, X_e)\,(M G)$, when
    /// that is cheaper. `None` (the default) when the coefficients come
    /// otherwise (wrappers that do not forward it).
    fn linear_expansion<'a>(&'a self) -> Option<LinearExpansion<'a, X>>
    where
        X: 'a,
        Y: 'a,
    {
        None
    }

    /// The coefficients `C` `(x.n_rows(), n_atoms)` of $h(x)$.
    ///
    /// # Errors
    /// As [`coefficients_into`](SurrogateModel::coefficients_into).
    fn coefficients(&self, x: &X) -> Result<Mat<f64>> {
        let mut c = Mat::zeros(x.n_rows(), self.n_atoms());
        self.coefficients_into(x, c.as_mut(), Par::rayon(0))?;
        Ok(c)
    }

    /// Squared distances in the output RKHS, $\|h(x_t) - \psi(y_t)\|^2$, for
    /// paired inputs and outputs (the `mse_h` metric is their mean).
    ///
    /// # Errors
    /// Shape errors, or [`Error::ShapeMismatch`](crate::Error::ShapeMismatch)
    /// when `x` and `y` have different numbers of rows.
    fn rkhs_sq_errors(&self, x: &X, y: &Y) -> Result<Vec<f64>> {
        // Three (tile, n_atoms) matrices live at once: C, C A and G^T.
        let per_row = 3 * 8 * self.n_atoms().max(1);
        self.rkhs_sq_errors_tiled(x, y, (RKHS_ERROR_TILE_BYTES / per_row).max(1))
    }

    /// As [`rkhs_sq_errors`](SurrogateModel::rkhs_sq_errors), going through
    /// the rows in tiles of at most `rows_per_tile` (at least 1): the
    /// coefficients and atom products of one tile at a time, so that memory
    /// beyond the atom Gram is $O(\text{rows\_per\_tile} \cdot
    /// \text{n\_atoms})$ whatever the number of rows.
    /// [`rkhs_sq_errors`](SurrogateModel::rkhs_sq_errors) uses tiles of
    /// [`RKHS_ERROR_TILE_BYTES`].
    ///
    /// # Errors
    /// As [`rkhs_sq_errors`](SurrogateModel::rkhs_sq_errors).
    fn rkhs_sq_errors_tiled(&self, x: &X, y: &Y, rows_per_tile: usize) -> Result<Vec<f64>> {
        let n = x.n_rows();
        if y.n_rows() != n {
            return Err(crate::Error::ShapeMismatch {
                what: "rows of outputs vs inputs",
                expected: n,
                got: y.n_rows(),
            });
        }
        let tile = rows_per_tile.max(1);
        if n <= tile {
            let c = self.coefficients(x)?;
            return self.rkhs_sq_errors_from(c.as_ref(), y);
        }
        self.check_inputs(x)?;
        self.check_outputs(y)?;
        let gram = self.atom_gram();
        let mut errors = Vec::with_capacity(n);
        for start in (0..n).step_by(tile) {
            let rows = start..(start + tile).min(n);
            let c = self.coefficients(&x.slice(rows.clone()))?;
            errors.extend(self.rkhs_sq_errors_with_gram(c.as_ref(), &y.slice(rows), gram.as_ref())?);
        }
        Ok(errors)
    }

    /// As [`rkhs_sq_errors`](SurrogateModel::rkhs_sq_errors), from
    /// coefficients `coef` `(n_test, n_atoms)` already computed:
    /// $\|h_t - \psi(y_t)\|^2 = c_t^\top A c_t - 2 c_t^\top G_{:,t} + k(y_t, y_t)$
    /// with $A$ the atom Gram and $G$ the atom products of `y`.
    ///
    /// # Errors
    /// Shape errors of `y`, or [`Error::ShapeMismatch`](crate::Error::ShapeMismatch)
    /// when `coef` does not have one row per output and one column per atom.
    fn rkhs_sq_errors_from(&self, coef: MatRef<'_, f64>, y: &Y) -> Result<Vec<f64>> {
        self.rkhs_sq_errors_with_gram(coef, y, self.atom_gram().as_ref())
    }

    /// As [`rkhs_sq_errors_from`](SurrogateModel::rkhs_sq_errors_from), with
    /// the atom Gram $A$ = [`atom_gram`](SurrogateModel::atom_gram) given,
    /// so that a caller going through test tiles computes it once.
    ///
    /// # Errors
    /// As [`rkhs_sq_errors_from`](SurrogateModel::rkhs_sq_errors_from), and
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) when `gram` is
    /// not `(n_atoms, n_atoms)`.
    fn rkhs_sq_errors_with_gram(&self, coef: MatRef<'_, f64>, y: &Y, gram: MatRef<'_, f64>) -> Result<Vec<f64>> {
        if coef.nrows() != y.n_rows() {
            return Err(crate::Error::ShapeMismatch {
                what: "rows of coefficients vs outputs",
                expected: coef.nrows(),
                got: y.n_rows(),
            });
        }
        if coef.ncols() != self.n_atoms() {
            return Err(crate::Error::ShapeMismatch {
                what: "columns of coefficients vs atoms",
                expected: self.n_atoms(),
                got: coef.ncols(),
            });
        }
        if gram.nrows() != self.n_atoms() || gram.ncols() != self.n_atoms() {
            return Err(crate::Error::ShapeMismatch {
                what: "rows and columns of the atom Gram vs atoms",
                expected: self.n_atoms(),
                got: if gram.nrows() != self.n_atoms() { gram.nrows() } else { gram.ncols() },
            });
        }
        self.check_outputs(y)?;
        let mut g = Mat::zeros(self.n_atoms(), y.n_rows());
        self.atom_products_into(y, g.as_mut(), Par::rayon(0))?;
        let cg = coef * gram;
        let norms = self.output_sq_norms(y);
        Ok((0..coef.nrows())
            .map(|t| {
                let mut hh = 0.0;
                let mut hy = 0.0;
                for j in 0..self.n_atoms() {
                    hh += cg[(t, j)] * coef[(t, j)];
                    hy += coef[(t, j)] * g[(j, t)];
                }
                (hh - 2.0 * hy + norms[t]).max(0.0)
            })
            .collect())
    }
}
