//! Applying a sketch: $R B$, $R_S^\top C$, and the kernel sketches
//! $R K(X, B)$, $K R^\top$, $R K R^\top$ from the Gram columns of the
//! support only.

use std::borrow::Cow;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_kernels::{Kernel, Rows};
// Gram tiles `|S| x t` within 64 MiB, as the coefficients' and atom products'.
use okr_surrogate::tile_rows;
use rayon::prelude::*;

use super::{Restriction, Sketch};

/// The two sketches of a kernel matrix that the sketched estimators need.
#[derive(Debug, Clone)]
pub struct SketchedGram {
    /// $K R^\top$ `(n, m)`.
    pub kr: Mat<f64>,
    /// $R K R^\top$ `(m, m)`, exactly symmetric.
    pub rkr: Mat<f64>,
}

impl Sketch {
    /// For a sketch with exactly one non-zero in every row and in every
    /// support column (sub-sampling without repeats: uniform draws, merged
    /// weighted draws), the support position and value of each row:
    /// row $k$ of $R$ is $v_k e_{S[s_k]}^\top$.
    fn scaled_selection(&self) -> Option<Vec<(usize, f64)>> {
        let Restriction::Sparse { ptr, rows, values } = &self.restriction else {
            return None;
        };
        if self.support.len() != self.m {
            return None;
        }
        let mut of_row = vec![None; self.m];
        for s in 0..self.support.len() {
            if ptr[s + 1] != ptr[s] + 1 {
                return None;
            }
            let e = ptr[s];
            if of_row[rows[e]].replace((s, values[e])).is_some() {
                return None;
            }
        }
        of_row.into_iter().collect()
    }

    /// `dst = R_S B_S` `(m, t)`, with `block` the rows of `B` on the support
    /// `(|S|, t)`.
    ///
    /// # Panics
    /// If the shapes do not match.
    #[track_caller]
    pub fn apply_support_into(&self, block: MatRef<'_, f64>, dst: MatMut<'_, f64>, par: Par) {
        assert_eq!(block.nrows(), self.support.len(), "rows of the block vs sketch support");
        assert_eq!((dst.nrows(), dst.ncols()), (self.m, block.ncols()), "sketch product shape");
        match &self.restriction {
            Restriction::Dense(r) => matmul(dst, Accum::Replace, r.as_ref(), block, 1.0, par),
            Restriction::Sparse { ptr, rows, values } => {
                // Column c of the product scatters the support entries of
                // block column c; columns are independent, written in place.
                let column = |c: usize, mut out: faer::ColMut<'_, f64>| {
                    out.fill(0.0);
                    for s in 0..self.support.len() {
                        let b = block[(s, c)];
                        if b != 0.0 {
                            for e in ptr[s]..ptr[s + 1] {
                                out[rows[e]] += values[e] * b;
                            }
                        }
                    }
                };
                for_each_column(dst, par, column);
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
    /// only the Gram rows $K(X_S, B)$ of the support are computed, in column
    /// tiles of `B` of at most 64 MiB.
    ///
    /// # Panics
    /// If `x` does not have `n` rows.
    #[track_caller]
    pub fn sketch_cross<R: Rows, K: Kernel<R>>(&self, kernel: &K, x: &R, b: &R, par: Par) -> Mat<f64> {
        self.sketch_cross_prepared(kernel, &PreparedSketch::new(self, x), b, par)
    }

    /// [`sketch_cross`](Self::sketch_cross) from the rows on the support
    /// (`|S|` rows, support order) instead of all sketched rows.
    ///
    /// # Panics
    /// If `support_rows` does not have `|S|` rows.
    #[track_caller]
    pub fn sketch_cross_from_support<R: Rows, K: Kernel<R>>(
        &self,
        kernel: &K,
        support_rows: &R,
        b: &R,
        par: Par,
    ) -> Mat<f64> {
        self.sketch_cross_prepared(kernel, &PreparedSketch::from_support(self, support_rows), b, par)
    }

    fn sketch_cross_prepared<R: Rows, K: Kernel<R>>(
        &self,
        kernel: &K,
        prepared: &PreparedSketch<'_, R>,
        b: &R,
        par: Par,
    ) -> Mat<f64> {
        let nb = b.n_rows();
        let mut out = Mat::zeros(self.m, nb);
        let tile = prepared.max_block_cols(nb);
        for start in (0..nb).step_by(tile) {
            let t = tile.min(nb - start);
            prepared.sketch_block_into(kernel, &b.slice(start..start + t), out.as_mut().subcols_mut(start, t), par);
        }
        out
    }

    /// `dst += block R_c^\top` for `block` `(k, c)` the columns
    /// `first..first + c` of some `B` `(k, n)` and $R_c$ the same columns of
    /// $R$: summed over a partition of `0..n`, this gives $B R^\top$ `(k, m)`
    /// without holding `B` whole.
    ///
    /// # Panics
    /// If `dst` is not `(k, m)` or the columns run past `n`.
    #[track_caller]
    pub(crate) fn add_right_product_of_columns(
        &self,
        first: usize,
        block: MatRef<'_, f64>,
        mut dst: MatMut<'_, f64>,
        par: Par,
    ) {
        let c = block.ncols();
        assert!(first + c <= self.n, "columns past the sketch width");
        assert_eq!((dst.nrows(), dst.ncols()), (block.nrows(), self.m), "sketch product shape");
        // The support is increasing: its positions within the chunk are a range.
        let lo = self.support.partition_point(|&i| i < first);
        let hi = self.support.partition_point(|&i| i < first + c);
        match &self.restriction {
            Restriction::Dense(r) => {
                // Dense kinds touch every column: the chunk's columns of R_S.
                assert_eq!(hi - lo, c, "a dense sketch's support is every column");
                matmul(dst, Accum::Add, block, r.as_ref().subcols(lo, c).transpose(), 1.0, par);
            }
            Restriction::Sparse { ptr, rows, values } => {
                for s in lo..hi {
                    let col = block.col(self.support[s] - first);
                    for e in ptr[s]..ptr[s + 1] {
                        let mut out = dst.as_mut().col_mut(rows[e]);
                        out += faer::Scale(values[e]) * col;
                    }
                }
            }
        }
    }

    /// $K R^\top$ `(n, m)` and $R K R^\top$ `(m, m)` for the Gram matrix $K$ of
    /// `x`, computing only the columns $K(X, X_S)$ of the support
    /// ([`sketch_cross`](Self::sketch_cross), transposed): time
    /// $O(n |S| (d + m))$, memory $O(n m)$ plus one tile. No `n x n` matrix
    /// is formed. The sketched fits do not hold $K R^\top$: they stream it.
    ///
    /// # Panics
    /// If `x` does not have `n` rows.
    #[track_caller]
    pub fn sketch_gram<R: Rows, K: Kernel<R>>(&self, kernel: &K, x: &R, par: Par) -> SketchedGram {
        let kr = self.sketch_cross(kernel, x, x, par).transpose().to_owned();
        let kr_s = Mat::from_fn(self.support.len(), self.m, |s, j| kr[(self.support[s], j)]);
        let mut rkr = Mat::zeros(self.m, self.m);
        self.apply_support_into(kr_s.as_ref(), rkr.as_mut(), par);
        okr_linalg::products::symmetrize_in_place(rkr.as_mut());
        SketchedGram { kr, rkr }
    }
}

/// Runs `f(k, column k)` over the columns of `dst`, in parallel chunks when
/// `par` asks for more than one thread.
fn for_each_column<F>(dst: MatMut<'_, f64>, par: Par, f: F)
where
    F: Fn(usize, faer::ColMut<'_, f64>) + Sync,
{
    let ncols = dst.ncols();
    match par {
        Par::Rayon(threads) if threads.get() > 1 && ncols > 1 => {
            let chunk = ncols.div_ceil(4 * threads.get()).max(1);
            dst.par_col_chunks_mut(chunk).enumerate().for_each(|(i, mut block)| {
                for c in 0..block.ncols() {
                    f(i * chunk + c, block.as_mut().col_mut(c));
                }
            });
        }
        _ => {
            let mut dst = dst;
            for c in 0..ncols {
                f(c, dst.as_mut().col_mut(c));
            }
        }
    }
}

/// A sketch with the training rows it touches gathered once, to compute
/// blocks $R\, K(X, B)$ for many `B` (row chunks of a streamed fit).
pub(crate) struct PreparedSketch<'s, R: Clone> {
    sketch: &'s Sketch,
    /// The rows of `X` on the support: in sketch-row order for a scaled
    /// selection, in support order otherwise.
    rows: Cow<'s, R>,
    /// For a scaled selection, the value of each sketch row.
    selection: Option<Vec<f64>>,
}

impl<'s, R: Rows> PreparedSketch<'s, R> {
    /// Gathers the support rows of `x` (`n` rows).
    ///
    /// # Panics
    /// If `x` does not have `n` rows.
    #[track_caller]
    pub(crate) fn new(sketch: &'s Sketch, x: &R) -> Self {
        assert_eq!(x.n_rows(), sketch.n, "sketched rows vs sketch columns");
        match sketch.scaled_selection() {
            Some(selection) => {
                let in_row_order: Vec<usize> = selection.iter().map(|&(s, _)| sketch.support[s]).collect();
                let rows = Cow::Owned(x.select(&in_row_order));
                Self { sketch, rows, selection: Some(selection.iter().map(|e| e.1).collect()) }
            }
            None => Self { sketch, rows: Cow::Owned(x.select(&sketch.support)), selection: None },
        }
    }

    /// From the rows on the support, in support order (`|S|` rows, for
    /// example shipped to a worker in a partition plan); borrowed when the
    /// sketch is not a scaled selection.
    ///
    /// # Panics
    /// If `support_rows` does not have `|S|` rows.
    #[track_caller]
    pub(crate) fn from_support(sketch: &'s Sketch, support_rows: &'s R) -> Self {
        assert_eq!(support_rows.n_rows(), sketch.support.len(), "support rows vs sketch support");
        match sketch.scaled_selection() {
            Some(selection) => {
                let in_row_order: Vec<usize> = selection.iter().map(|&(s, _)| s).collect();
                let rows = Cow::Owned(support_rows.select(&in_row_order));
                Self { sketch, rows, selection: Some(selection.iter().map(|e| e.1).collect()) }
            }
            None => Self { sketch, rows: Cow::Borrowed(support_rows), selection: None },
        }
    }

    /// Largest number of columns of `B` per block whose Gram temporary
    /// (`|S| x cols`, general sketches only) stays within 64 MiB.
    pub(crate) fn max_block_cols(&self, total: usize) -> usize {
        match self.selection {
            Some(_) => total.max(1),
            None => tile_rows(self.rows.n_rows(), total),
        }
    }

    /// `dst = R K(X, B)` `(m, b.n_rows())`. A scaled selection writes its
    /// Gram rows straight into `dst` and scales them; other sketches compute
    /// $K(X_S, B)$ into a temporary and apply $R_S$.
    pub(crate) fn sketch_block_into<K: Kernel<R>>(&self, kernel: &K, b: &R, mut dst: MatMut<'_, f64>, par: Par) {
        match &self.selection {
            Some(scale) => {
                kernel.gram_block_into(self.rows.as_ref(), b, dst.as_mut(), par);
                for_each_column(dst, par, |_, col| {
                    for (v, &s) in col.iter_mut().zip(scale) {
                        *v *= s;
                    }
                });
            }
            None => {
                let mut g = Mat::zeros(self.rows.n_rows(), b.n_rows());
                kernel.gram_block_into(self.rows.as_ref(), b, g.as_mut(), par);
                self.sketch.apply_support_into(g.as_ref(), dst, par);
            }
        }
    }
}
