//! Structured matrix products that faer's general `matmul` does not name.

use faer::linalg::matmul::triangular::{BlockStructure, matmul};
use faer::{Accum, Mat, MatMut, MatRef, Par};

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

/// Accumulates the cross-product $A^\top A$ of `a` `(n, k)` into the lower
/// triangle of `dst` `(k, k)`: $\mathrm{tril}(D) \mathrel{+}= \mathrm{tril}(A^\top A)$.
///
/// The SYRK-shaped half of [`crossprod`], for callers that sum the
/// cross-product over row tiles of a tall matrix that is never formed whole
/// (streamed Nystroem fits). The strict upper triangle of `dst` is not
/// touched; finish with [`mirror_lower_in_place`].
///
/// # Panics
/// If `dst` is not `(k, k)`.
///
/// # Example
/// ```
/// use faer::{Mat, mat};
/// let a = mat![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
/// let mut g = Mat::zeros(2, 2);
/// okr_linalg::products::crossprod_lower_add_into(g.as_mut(), a.subrows(0, 2), faer::Par::Seq);
/// okr_linalg::products::crossprod_lower_add_into(g.as_mut(), a.subrows(2, 1), faer::Par::Seq);
/// okr_linalg::products::mirror_lower_in_place(g.as_mut());
/// assert_eq!(g, okr_linalg::crossprod(a.as_ref(), faer::Par::Seq));
/// ```
#[track_caller]
pub fn crossprod_lower_add_into(dst: MatMut<'_, f64>, a: MatRef<'_, f64>, par: Par) {
    let k = a.ncols();
    assert_eq!((dst.nrows(), dst.ncols()), (k, k), "cross-product accumulator shape");
    matmul(
        dst,
        BlockStructure::TriangularLower,
        Accum::Add,
        a.transpose(),
        BlockStructure::Rectangular,
        a,
        BlockStructure::Rectangular,
        1.0,
        par,
    );
}

/// Copies the strict lower triangle of a square matrix onto its upper triangle.
///
/// # Panics
/// If `g` is not square.
#[track_caller]
pub fn mirror_lower_in_place(g: MatMut<'_, f64>) {
    assert_eq!(g.nrows(), g.ncols(), "mirror_lower_in_place needs a square matrix");
    for_each_mirror_pair(g, |lower, _| lower);
}

/// Makes a square matrix exactly symmetric by averaging each pair of
/// mirrored entries: $G \leftarrow (G + G^\top) / 2$.
///
/// # Panics
/// If `g` is not square.
///
/// # Example
/// ```
/// use faer::mat;
/// let mut g = mat![[1.0, 2.0], [4.0, 5.0]];
/// okr_linalg::products::symmetrize_in_place(g.as_mut());
/// assert_eq!(g, mat![[1.0, 3.0], [3.0, 5.0]]);
/// ```
#[track_caller]
pub fn symmetrize_in_place(g: MatMut<'_, f64>) {
    assert_eq!(g.nrows(), g.ncols(), "symmetrize_in_place needs a square matrix");
    for_each_mirror_pair(g, |lower, upper| 0.5 * (lower + upper));
}

/// Sets both `g[(i, j)]` and `g[(j, i)]` (`i > j`) to `f(g[(i, j)], g[(j, i)])`,
/// in square blocks so that the transposed accesses stay in cache.
fn for_each_mirror_pair(mut g: MatMut<'_, f64>, f: impl Fn(f64, f64) -> f64) {
    const BLOCK: usize = 64;
    let n = g.nrows();
    for jb in (0..n).step_by(BLOCK) {
        for ib in (jb..n).step_by(BLOCK) {
            for j in jb..(jb + BLOCK).min(n) {
                for i in ib.max(j + 1)..(ib + BLOCK).min(n) {
                    let v = f(g[(i, j)], g[(j, i)]);
                    g[(i, j)] = v;
                    g[(j, i)] = v;
                }
            }
        }
    }
}

/// Copies the strict lower triangle of a square matrix onto its upper triangle.
pub(crate) fn mirror_lower(g: &mut Mat<f64>) {
    mirror_lower_in_place(g.as_mut());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both blocked traversals visit every mirrored pair once, across block
    /// edges (sizes around the 64-entry block).
    #[test]
    fn mirror_and_symmetrize_cover_every_pair() {
        for n in [0, 1, 5, 63, 64, 65, 130] {
            let a = Mat::from_fn(n, n, |i, j| (i * 1000 + j) as f64);
            let mut m = a.clone();
            mirror_lower_in_place(m.as_mut());
            let mut s = a.clone();
            symmetrize_in_place(s.as_mut());
            for j in 0..n {
                for i in 0..n {
                    let lower = if i >= j { a[(i, j)] } else { a[(j, i)] };
                    assert_eq!(m[(i, j)], lower, "mirror ({i}, {j}) of {n}");
                    assert_eq!(s[(i, j)], 0.5 * (a[(i, j)] + a[(j, i)]), "symmetrize ({i}, {j}) of {n}");
                }
            }
        }
    }

    /// Summing the cross-product over row tiles of every size gives the
    /// one-shot cross-product.
    #[test]
    fn tiled_accumulation_equals_crossprod() {
        for (n, k) in [(1, 1), (7, 3), (33, 12), (100, 40)] {
            let a = Mat::from_fn(n, k, |i, j| ((i * 13 + j * 7) % 17) as f64 / 17.0 - 0.4);
            let full = crossprod(a.as_ref(), Par::Seq);
            for tile in [1, 2, 5, n] {
                let mut g = Mat::zeros(k, k);
                for start in (0..n).step_by(tile) {
                    let t = tile.min(n - start);
                    crossprod_lower_add_into(g.as_mut(), a.subrows(start, t), Par::Seq);
                }
                mirror_lower_in_place(g.as_mut());
                let tol = 1e-13 * (1.0 + full.norm_max());
                assert!((&g - &full).norm_max() <= tol, "n {n} k {k} tile {tile}");
            }
        }
    }
}
