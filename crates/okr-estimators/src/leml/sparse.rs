//! Sparse and dense kernels of LEML on row-major buffers.
//!
//! Every product is parallel over output rows (rayon), so `X·B` runs on the
//! CSR of `X` and `Xᵀ·C` on the CSR of `Xᵀ`: no scatter, no atomics.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use okr_kernels::{CsrRows, LabelSets, Rows};
use rayon::prelude::*;

/// Rows handed to one rayon task at least (keeps tiny products sequential).
const MIN_ROWS_PER_TASK: usize = 64;

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
