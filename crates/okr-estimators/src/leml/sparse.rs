//! Sparse and dense kernels of LEML on row-major buffers.
//!
//! Every product is parallel over output rows (rayon), so `X·B` runs on the
//! CSR of `X` and `Xᵀ·C` on the CSR of `Xᵀ`: no scatter, no atomics.

use std::ops::Range;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use okr_kernels::{CsrRows, LabelSets, Rows};
use pulp::{Simd, WithSimd};
use rayon::prelude::*;

/// Rows handed to one rayon task at least (keeps tiny products sequential).
const MIN_ROWS_PER_TASK: usize = 64;

/// Columns of one block of the fused [`Csr::gram_mul`]: 16 `f64` are four
/// AVX2 registers, and a `(ncols, 16)` block of the right-hand side and of
/// the result stays in cache while the rows of `X` stream past.
const BLOCK: usize = 16;

/// A compressed sparse row matrix (row indices sorted within each row).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Csr {
    pub nrows: usize,
    pub ncols: usize,
    pub indptr: Vec<usize>,
    pub indices: Vec<usize>,
    pub values: Vec<f64>,
}

impl Csr {
    pub fn from_csr_rows(x: &CsrRows) -> Self {
        Self {
            nrows: x.n_rows(),
            ncols: x.n_features(),
            indptr: x.indptr().to_vec(),
            indices: x.indices().to_vec(),
            values: x.values().to_vec(),
        }
    }

    /// The indicator matrix of label sets, with `value` at every positive.
    pub fn from_label_sets(y: &LabelSets, value: f64) -> Self {
        let mut indptr = Vec::with_capacity(y.n_rows() + 1);
        indptr.push(0);
        let mut indices = Vec::new();
        for set in y.iter() {
            indices.extend_from_slice(set);
            indptr.push(indices.len());
        }
        let values = vec![value; indices.len()];
        Self { nrows: y.n_rows(), ncols: y.n_labels(), indptr, indices, values }
    }

    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// The transpose, by a counting sort (rows of the result stay sorted).
    pub fn transpose(&self) -> Csr {
        let mut counts = vec![0usize; self.ncols + 1];
        for &j in &self.indices {
            counts[j + 1] += 1;
        }
        for j in 0..self.ncols {
            counts[j + 1] += counts[j];
        }
        let indptr = counts.clone();
        let mut next = counts;
        let mut indices = vec![0usize; self.nnz()];
        let mut values = vec![0.0; self.nnz()];
        for i in 0..self.nrows {
            for p in self.indptr[i]..self.indptr[i + 1] {
                let j = self.indices[p];
                let q = next[j];
                indices[q] = i;
                values[q] = self.values[p];
                next[j] += 1;
            }
        }
        Csr { nrows: self.ncols, ncols: self.nrows, indptr, indices, values }
    }

    /// Row index of every stored entry.
    pub fn row_of_entries(&self) -> Vec<usize> {
        let mut rows = Vec::with_capacity(self.nnz());
        for i in 0..self.nrows {
            rows.extend(std::iter::repeat_n(i, self.indptr[i + 1] - self.indptr[i]));
        }
        rows
    }

    /// `out = self · b`, `b` `(ncols, k)` and `out` `(nrows, k)`, row-major.
    pub fn mul_dense(&self, b: &[f64], k: usize, out: &mut [f64]) {
        self.mul_dense_with_values(&self.values, b, k, out)
    }

    /// `out = S · b` where `S` has this matrix's pattern and the values `vals`
    /// (one per stored entry) instead of its own.
    pub fn mul_dense_with_values(&self, vals: &[f64], b: &[f64], k: usize, out: &mut [f64]) {
        debug_assert_eq!(vals.len(), self.nnz());
        debug_assert_eq!(b.len(), self.ncols * k);
        debug_assert_eq!(out.len(), self.nrows * k);
        if k == 0 {
            return;
        }
        let arch = pulp::Arch::new();
        // Blocks of rows per task; each block runs under one SIMD dispatch so
        // the axpy loops are compiled for AVX2/FMA when the CPU has them.
        out.par_chunks_mut(k * MIN_ROWS_PER_TASK).enumerate().for_each(|(block, rows)| {
            arch.dispatch(
                #[inline(always)]
                || {
                    for (r, row) in rows.chunks_exact_mut(k).enumerate() {
                        let i = block * MIN_ROWS_PER_TASK + r;
                        row.fill(0.0);
                        let range = self.indptr[i]..self.indptr[i + 1];
                        for (&j, &v) in self.indices[range.clone()].iter().zip(&vals[range]) {
                            axpy(v, &b[j * k..(j + 1) * k], row);
                        }
                    }
                },
            )
        });
    }
}

impl Csr {
    /// `out = selfᵀ (self · s)` without the `(nrows, k)` intermediate: `s` and
    /// `out` are `(ncols, k)`, row-major. For every column block of width
    /// [`BLOCK`] and every row `x_i`, the block of `t = x_iᵀ S` is gathered in
    /// registers and scattered back as `out[j, ·] += x_ij t`; blocks (and, when
    /// there are fewer blocks than threads, ranges of rows with their own
    /// accumulators) run in parallel. Cost `O(nnz · k)`, two FMAs per stored
    /// entry and column like the two unfused products.
    #[track_caller]
    pub fn gram_mul(&self, s: &[f64], k: usize, out: &mut [f64]) {
        let d = self.ncols;
        assert_eq!(s.len(), d * k, "S must be (ncols, k)");
        assert_eq!(out.len(), d * k, "the result must be (ncols, k)");
        if k == 0 {
            return;
        }
        let blocks = k.div_ceil(BLOCK);
        let threads = rayon::current_num_threads().max(1);
        let chunks = threads.div_ceil(blocks).min(self.nrows.div_ceil(MIN_ROWS_PER_TASK)).max(1);
        let row_ranges = self.nnz_balanced_ranges(chunks);
        let tasks: Vec<(usize, Range<usize>)> =
            (0..blocks).flat_map(|b| row_ranges.iter().map(move |r| (b, r.clone()))).collect();
        let arch = pulp::Arch::new();
        let parts: Vec<Vec<f64>> = tasks
            .par_iter()
            .map(|(b, rows)| {
                let (c0, w) = (b * BLOCK, BLOCK.min(k - b * BLOCK));
                let mut packed = vec![0.0; d * BLOCK];
                for (dst, src) in packed.chunks_exact_mut(BLOCK).zip(s.chunks_exact(k)) {
                    dst[..w].copy_from_slice(&src[c0..c0 + w]);
                }
                let mut acc = vec![0.0; d * BLOCK];
                arch.dispatch(GramBlock { x: self, rows: rows.clone(), s: &packed, acc: &mut acc });
                acc
            })
            .collect();
        out.par_chunks_mut(k).with_min_len(MIN_ROWS_PER_TASK).enumerate().for_each(|(j, row)| {
            row.fill(0.0);
            for ((b, _), part) in tasks.iter().zip(&parts) {
                let (c0, w) = (b * BLOCK, BLOCK.min(k - b * BLOCK));
                for (o, p) in row[c0..c0 + w].iter_mut().zip(&part[j * BLOCK..j * BLOCK + w]) {
                    *o += p;
                }
            }
        });
    }

    /// `parts` contiguous row ranges covering all rows, with about the same
    /// number of stored entries each.
    fn nnz_balanced_ranges(&self, parts: usize) -> Vec<Range<usize>> {
        let nnz = self.nnz();
        let mut bounds = vec![0];
        for c in 1..parts {
            let target = nnz * c / parts;
            let row = self.indptr.partition_point(|&p| p < target).min(self.nrows);
            bounds.push(row.max(*bounds.last().expect("non-empty")));
        }
        bounds.push(self.nrows);
        bounds.windows(2).map(|w| w[0]..w[1]).collect()
    }
}

/// One column block of [`Csr::gram_mul`] over a range of rows:
/// `acc += X[rows]ᵀ (X[rows] s)`, with `s` and `acc` `(ncols, BLOCK)`.
struct GramBlock<'a> {
    x: &'a Csr,
    rows: Range<usize>,
    s: &'a [f64],
    acc: &'a mut [f64],
}

impl WithSimd for GramBlock<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let x = self.x;
        let s = pulp::as_arrays::<BLOCK, f64>(self.s).0;
        let acc = pulp::as_arrays_mut::<BLOCK, f64>(self.acc).0;
        for i in self.rows {
            let range = x.indptr[i]..x.indptr[i + 1];
            let (idx, val) = (&x.indices[range.clone()], &x.values[range]);
            // Two accumulators (even and odd entries) halve the chain of
            // dependent FMAs of the gather.
            let (mut t, mut t_odd) = ([0.0; BLOCK], [0.0; BLOCK]);
            let (pairs, last) = (idx.chunks_exact(2), val.chunks_exact(2));
            let (idx_rest, val_rest) = (pairs.remainder(), last.remainder());
            for (j, v) in pairs.zip(last) {
                fma_block(simd, v[0], &s[j[0]], &mut t);
                fma_block(simd, v[1], &s[j[1]], &mut t_odd);
            }
            if let (Some(&j), Some(&v)) = (idx_rest.first(), val_rest.first()) {
                fma_block(simd, v, &s[j], &mut t);
            }
            add_block(simd, &t_odd, &mut t);
            for (&j, &v) in idx.iter().zip(val) {
                fma_block(simd, v, &t, &mut acc[j]);
            }
        }
    }
}

/// `y += alpha x` on one block row, in SIMD registers.
#[inline(always)]
fn fma_block<S: Simd>(simd: S, alpha: f64, x: &[f64; BLOCK], y: &mut [f64; BLOCK]) {
    let a = simd.splat_f64s(alpha);
    let (xv, xt) = S::as_simd_f64s(x);
    let (yv, yt) = S::as_mut_simd_f64s(y);
    for (y, x) in yv.iter_mut().zip(xv) {
        *y = simd.mul_add_e_f64s(a, *x, *y);
    }
    for (y, x) in yt.iter_mut().zip(xt) {
        *y += alpha * x;
    }
}

/// `y += x` on one block row.
#[inline(always)]
fn add_block<S: Simd>(simd: S, x: &[f64; BLOCK], y: &mut [f64; BLOCK]) {
    let (xv, xt) = S::as_simd_f64s(x);
    let (yv, yt) = S::as_mut_simd_f64s(y);
    for (y, x) in yv.iter_mut().zip(xv) {
        *y = simd.add_f64s(*x, *y);
    }
    for (y, x) in yt.iter_mut().zip(xt) {
        *y += x;
    }
}

#[inline(always)]
pub(crate) fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += alpha * x;
    }
}

#[inline(always)]
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    // Four accumulators let the compiler vectorise the reduction.
    let mut acc = [0.0f64; 4];
    let chunks = x.len() / 4;
    for c in 0..chunks {
        for t in 0..4 {
            acc[t] += x[4 * c + t] * y[4 * c + t];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for t in 4 * chunks..x.len() {
        s += x[t] * y[t];
    }
    s
}

/// Row-major view of a buffer as a faer matrix.
#[inline]
pub(crate) fn view(data: &[f64], nrows: usize, ncols: usize) -> MatRef<'_, f64> {
    MatRef::from_row_major_slice(data, nrows, ncols)
}

/// Row-major mutable view of a buffer as a faer matrix.
#[inline]
pub(crate) fn view_mut(data: &mut [f64], nrows: usize, ncols: usize) -> MatMut<'_, f64> {
    MatMut::from_row_major_slice_mut(data, nrows, ncols)
}

/// `dst = lhs · rhs` through faer's GEMM.
pub(crate) fn gemm(dst: MatMut<'_, f64>, lhs: MatRef<'_, f64>, rhs: MatRef<'_, f64>) {
    matmul(dst, Accum::Replace, lhs, rhs, 1.0, par());
}

pub(crate) fn par() -> Par {
    faer::get_global_parallelism()
}

/// A linear map from a `(n_features, k)` coefficient matrix to per-sample
/// features `(n_samples, k)`: `X·B`, and its adjoint `Xᵀ·C`. The W-step of
/// LEML uses the sparse design matrix; its H-step is the same problem with
/// the identity in place of `X` ([`IdentityMap`]).
pub trait FeatureMap: Sync {
    /// Rows `n` of `X`.
    fn n_samples(&self) -> usize;
    /// Columns `d` of `X`.
    fn n_features(&self) -> usize;
    /// `out = X · b` (`b`: `(d, k)`, `out`: `(n, k)`, row-major).
    fn mul(&self, b: &[f64], k: usize, out: &mut [f64]);
    /// `out = Xᵀ · c` (`c`: `(n, k)`, `out`: `(d, k)`, row-major).
    fn tmul(&self, c: &[f64], k: usize, out: &mut [f64]);
}

/// A sparse design matrix `X` `(n_samples, n_features)` kept together with
/// its transpose, so that `X·B` and `Xᵀ·C` are both row-parallel CSR products
/// costing `O(nnz(X) k)`.
///
/// # Example
/// ```
/// use okr_estimators::leml::{FeatureMap, SparseDesign};
/// use okr_kernels::CsrRows;
/// let x = CsrRows::from_rows(3, vec![vec![(0, 1.0), (2, 2.0)], vec![(1, -1.0)]])?;
/// let design = SparseDesign::new(&x);
/// let mut out = vec![0.0; 2 * 1];
/// design.mul(&[1.0, 10.0, 100.0], 1, &mut out); // k = 1
/// assert_eq!(out, vec![201.0, -10.0]);
/// let mut back = vec![0.0; 3];
/// design.tmul(&[1.0, 1.0], 1, &mut back);
/// assert_eq!(back, vec![1.0, -1.0, 2.0]);
/// # Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SparseDesign {
    pub(crate) x: Csr,
    pub(crate) xt: Csr,
}

impl SparseDesign {
    /// Copies `x` and builds its transpose (`O(nnz)`).
    pub fn new(x: &CsrRows) -> Self {
        let x = Csr::from_csr_rows(x);
        let xt = x.transpose();
        Self { x, xt }
    }

    /// Number of stored entries of `X`.
    pub fn nnz(&self) -> usize {
        self.x.nnz()
    }

    /// $X^\top X S$ for a dense `s` `(n_features, k)` into `out`
    /// `(n_features, k)`, both row-major, fused so that no `(n_samples, k)`
    /// intermediate is formed (`Csr::gram_mul`); equal to `tmul` after `mul`
    /// up to rounding.
    ///
    /// # Panics
    /// If `s.len()` or `out.len()` is not `n_features * k`.
    ///
    /// # Example
    /// ```
    /// use okr_estimators::leml::SparseDesign;
    /// use okr_kernels::CsrRows;
    /// let x = CsrRows::from_rows(2, vec![vec![(0, 1.0), (1, 2.0)], vec![(1, -1.0)]])?;
    /// let mut out = vec![0.0; 2];
    /// SparseDesign::new(&x).gram_mul(&[1.0, 1.0], 1, &mut out); // k = 1
    /// assert_eq!(out, vec![3.0, 7.0]); // XᵀX = [[1, 2], [2, 5]]
    /// # Ok::<(), okr_kernels::Error>(())
    /// ```
    #[track_caller]
    pub fn gram_mul(&self, s: &[f64], k: usize, out: &mut [f64]) {
        self.x.gram_mul(s, k, out)
    }

    /// The Gram matrix $X^\top X$ `(d, d)`, computed sparsely in
    /// $O(\sum_i \mathrm{nnz}(x_i)^2)$, parallel over its rows.
    pub fn gram(&self) -> faer::Mat<f64> {
        let d = self.x.ncols;
        let mut g = vec![0.0; d * d];
        g.par_chunks_mut(d.max(1)).enumerate().for_each(|(a, row)| {
            for p in self.xt.indptr[a]..self.xt.indptr[a + 1] {
                let (i, v) = (self.xt.indices[p], self.xt.values[p]);
                for q in self.x.indptr[i]..self.x.indptr[i + 1] {
                    row[self.x.indices[q]] += v * self.x.values[q];
                }
            }
        });
        faer::Mat::from_fn(d, d, |a, b| g[a * d + b])
    }
}

impl FeatureMap for SparseDesign {
    fn n_samples(&self) -> usize {
        self.x.nrows
    }
    fn n_features(&self) -> usize {
        self.x.ncols
    }
    fn mul(&self, b: &[f64], k: usize, out: &mut [f64]) {
        self.x.mul_dense(b, k, out)
    }
    fn tmul(&self, c: &[f64], k: usize, out: &mut [f64]) {
        self.xt.mul_dense(c, k, out)
    }
}

/// The identity map on `R^{n x k}`: the "design" of LEML's H-step, where
/// label `j` is the sample and its coefficients are `h_j`.
///
/// # Example
/// ```
/// use okr_estimators::leml::{FeatureMap, IdentityMap};
/// let mut out = vec![0.0; 4];
/// IdentityMap(2).mul(&[1.0, 2.0, 3.0, 4.0], 2, &mut out);
/// assert_eq!(out, vec![1.0, 2.0, 3.0, 4.0]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdentityMap(pub usize);

impl FeatureMap for IdentityMap {
    fn n_samples(&self) -> usize {
        self.0
    }
    fn n_features(&self) -> usize {
        self.0
    }
    fn mul(&self, b: &[f64], _k: usize, out: &mut [f64]) {
        out.copy_from_slice(b)
    }
    fn tmul(&self, c: &[f64], _k: usize, out: &mut [f64]) {
        out.copy_from_slice(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CsrRows {
        CsrRows::from_rows(4, vec![vec![(0, 1.0), (3, -2.0)], vec![], vec![(1, 0.5), (2, 3.0), (3, 1.0)]]).unwrap()
    }

    #[test]
    fn products_match_dense() {
        let x = sample();
        let dense = x.to_dense();
        let design = SparseDesign::new(&x);
        let k = 3;
        let b: Vec<f64> = (0..4 * k).map(|t| (t as f64 * 0.37).sin()).collect();
        let mut out = vec![f64::NAN; 3 * k];
        design.mul(&b, k, &mut out);
        for i in 0..3 {
            for t in 0..k {
                let want: f64 = (0..4).map(|j| dense[(i, j)] * b[j * k + t]).sum();
                assert!((out[i * k + t] - want).abs() < 1e-14);
            }
        }
        let c: Vec<f64> = (0..3 * k).map(|t| (t as f64 * 0.91).cos()).collect();
        let mut back = vec![f64::NAN; 4 * k];
        design.tmul(&c, k, &mut back);
        for j in 0..4 {
            for t in 0..k {
                let want: f64 = (0..3).map(|i| dense[(i, j)] * c[i * k + t]).sum();
                assert!((back[j * k + t] - want).abs() < 1e-14);
            }
        }
        let g = design.gram();
        let want = dense.transpose() * &dense;
        assert!((&g - &want).norm_max() < 1e-14);
        assert_eq!(design.x.transpose(), design.xt);
        assert_eq!(design.xt.transpose(), design.x);
    }
}
