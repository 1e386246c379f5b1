//! Structured matrix products that faer's general `matmul` does not name.

use faer::linalg::matmul::triangular::{BlockStructure, matmul};
use faer::{Accum, Mat, MatRef, Par};

/// The cross-product $A^\top A$ `(k, k)` of `a` `(n, k)`, exactly symmetric.
///
/// Only the lower triangle is computed (a SYRK-shaped product, $n k^2$
/// flops instead of $2 n k^2$), then mirrored.
///
/// # Example
/// ```
/// use faer::mat;
/// let a = mat![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
/// let g = okr_linalg::crossprod(a.as_ref(), faer::Par::Seq);
/// assert_eq!(g[(0, 0)], 35.0);
/// assert_eq!(g[(1, 0)], 44.0);
/// assert_eq!(g[(0, 1)], 44.0);
/// assert_eq!(g[(1, 1)], 56.0);
/// ```
pub fn crossprod(a: MatRef<'_, f64>, par: Par) -> Mat<f64> {
    let k = a.ncols();
    let mut g = Mat::zeros(k, k);
    matmul(
        g.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        a.transpose(),
        BlockStructure::Rectangular,
        a,
        BlockStructure::Rectangular,
        1.0,
        par,
    );
    mirror_lower(&mut g);
    g
}

/// Copies the strict lower triangle of a square matrix onto its upper triangle.
pub(crate) fn mirror_lower(g: &mut Mat<f64>) {
    for j in 0..g.ncols() {
        for i in j + 1..g.nrows() {
            g[(j, i)] = g[(i, j)];
        }
    }
}
