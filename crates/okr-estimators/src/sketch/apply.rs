//! Applying a sketch: $R B$, $R_S^\top C$, and the kernel sketches
//! $K R^\top$, $R K R^\top$ from the Gram columns of the support only.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_kernels::{Kernel, Rows};
use rayon::prelude::*;

use super::{Restriction, Sketch};

/// Bytes of the Gram tile `|S| x t` computed at a time by the kernel sketches.
const TILE_BYTES: usize = 64 << 20;

/// Number of rows `t` of a tile against `width` columns within [`TILE_BYTES`].
pub(crate) fn tile_rows(width: usize, total: usize) -> usize {
    (TILE_BYTES / 8 / width.max(1)).clamp(1, total.max(1))
}

/// The two sketches of a kernel matrix that the sketched estimators need.
#[derive(Debug, Clone)]
pub struct SketchedGram {
    /// $K R^\top$ `(n, m)`.
    pub kr: Mat<f64>,
    /// $R K R^\top$ `(m, m)`, exactly symmetric.
    pub rkr: Mat<f64>,
}

impl Sketch {
    /// `dst = R_S B_S` `(m, t)`, with `block` the rows of `B` on the support
    /// `(|S|, t)`.
    ///
    /// # Panics
    /// If the shapes do not match.
    #[track_caller]
    pub fn apply_support_into(&self, block: MatRef<'_, f64>, mut dst: MatMut<'_, f64>, par: Par) {
        assert_eq!(block.nrows(), self.support.len(), "rows of the block vs sketch support");
        assert_eq!((dst.nrows(), dst.ncols()), (self.m, block.ncols()), "sketch product shape");
        match &self.restriction {
            Restriction::Dense(r) => matmul(dst, Accum::Replace, r.as_ref(), block, 1.0, par),
            Restriction::Sparse { ptr, rows, values } => {
                let m = self.m;
                let t = block.ncols();
                let mut buf = vec![0.0; m * t];
                let column = |(c, out): (usize, &mut [f64])| {
                    for s in 0..self.support.len() {
                        let b = block[(s, c)];
                        if b != 0.0 {
                            for e in ptr[s]..ptr[s + 1] {
                                out[rows[e]] += values[e] * b;
                            }
                        }
                    }
                };
                match par {
                    Par::Seq => buf.chunks_mut(m.max(1)).enumerate().for_each(column),
                    _ => buf.par_chunks_mut(m.max(1)).enumerate().for_each(column),
                }
                for c in 0..t {
                    dst.as_mut().col_mut(c).copy_from(faer::ColRef::from_slice(&buf[c * m..(c + 1) * m]));
                }
            }
        }
    }

    /// $R B$ `(m, t)` for `b` `(n, t)`; only the rows of the support are read.
    ///
    /// # Panics
    /// If `b` does not have `n` rows.
    #[track_caller]
    pub fn apply(&self, b: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(b.nrows(), self.n, "rows of b vs sketch columns");
        let bs = Mat::from_fn(self.support.len(), b.ncols(), |s, j| b[(self.support[s], j)]);
        let mut out = Mat::zeros(self.m, b.ncols());
        self.apply_support_into(bs.as_ref(), out.as_mut(), faer::get_global_parallelism());
        out
    }

    /// $R_S^\top C$ `(|S|, r)` for `c` `(m, r)`: the rows of $R^\top C$ on the support
    /// (the other rows are zero).
    ///
    /// # Panics
    /// If `c` does not have `m` rows.
    #[track_caller]
    pub fn apply_support_transpose(&self, c: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(c.nrows(), self.m, "rows of c vs sketch rows");
        let mut out = Mat::zeros(self.support.len(), c.ncols());
        match &self.restriction {
            Restriction::Dense(r) => {
                matmul(out.as_mut(), Accum::Replace, r.transpose(), c, 1.0, faer::get_global_parallelism())
            }
            Restriction::Sparse { ptr, rows, values } => {
                for j in 0..c.ncols() {
                    for s in 0..self.support.len() {
                        out[(s, j)] = (ptr[s]..ptr[s + 1]).map(|e| values[e] * c[(rows[e], j)]).sum();
                    }
                }
            }
        }
        out
    }

    /// $R\, K(X, B)$ `(m, b.n_rows())` for the sketched rows `x` (`n` of them):
    /// the Gram block of the support rows against `b` only, in column tiles
    /// of bounded size.
    ///
    /// # Panics
    /// If `x` does not have `n` rows.
    #[track_caller]
    pub fn sketch_cross<R: Rows, K: Kernel<R>>(&self, kernel: &K, x: &R, b: &R, par: Par) -> Mat<f64> {
        assert_eq!(x.n_rows(), self.n, "sketched rows vs sketch columns");
        support_cross(self, kernel, &x.select(&self.support), b, par)
    }

    /// $K R^\top$ `(n, m)` and $R K R^\top$ `(m, m)` for the Gram matrix $K$ of
    /// `x`, computing only the columns $K(X, X_S)$ of the support, in row
    /// tiles of at most 64 MiB: time $O(n |S| (d + m))$, memory $O(n m)$ plus
    /// one tile. No `n x n` matrix is formed.
    ///
    /// # Panics
    /// If `x` does not have `n` rows.
    #[track_caller]
    pub fn sketch_gram<R: Rows, K: Kernel<R>>(&self, kernel: &K, x: &R, par: Par) -> SketchedGram {
        assert_eq!(x.n_rows(), self.n, "sketched rows vs sketch columns");
        let rk = self.sketch_cross(kernel, x, x, par); // R K (m, n)
        let kr = rk.transpose().to_owned();
        let kr_s = Mat::from_fn(self.support.len(), self.m, |s, j| kr[(self.support[s], j)]);
        let mut rkr = Mat::zeros(self.m, self.m);
        self.apply_support_into(kr_s.as_ref(), rkr.as_mut(), par);
        for j in 0..self.m {
            for i in j + 1..self.m {
                let v = 0.5 * (rkr[(i, j)] + rkr[(j, i)]);
                rkr[(i, j)] = v;
                rkr[(j, i)] = v;
            }
        }
        SketchedGram { kr, rkr }
    }
}

/// $R_S\, K(X_S, B)$ `(m, b.n_rows())` with the support rows `x_support` given.
pub(crate) fn support_cross<R: Rows, K: Kernel<R>>(
    sketch: &Sketch,
    kernel: &K,
    x_support: &R,
    b: &R,
    par: Par,
) -> Mat<f64> {
    let (s, nb) = (x_support.n_rows(), b.n_rows());
    let mut out = Mat::zeros(sketch.m, nb);
    let tile = tile_rows(s, nb);
    let mut g = Mat::zeros(s, tile);
    for start in (0..nb).step_by(tile) {
        let t = tile.min(nb - start);
        let mut gt = g.as_mut().subcols_mut(0, t);
        kernel.gram_block_into(x_support, &b.slice(start..start + t), gt.as_mut(), par);
        sketch.apply_support_into(gt.as_ref(), out.as_mut().subcols_mut(start, t), par);
    }
    out
}
