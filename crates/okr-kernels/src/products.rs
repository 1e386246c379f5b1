//! Tile engines for inner products and L1 distances between two row sets.
//!
//! Dense rows: one GEMM per tile ($X_I W Y_J^\top$, faer `matmul`).
//!
//! CSR rows: features are split by how often they occur. A *heavy* feature
//! (present in a large fraction of both row sets) goes to a small dense
//! matrix handled by GEMM; the remaining *light* features are accumulated by
//! a Gustavson-style sparse product: for output column `j`, each light entry
//! `(f, v)` of row `b_j` scatters `u * v` into the column for every entry
//! `(i, u)` of feature `f` in a per-row-tile CSC copy of `a`. On binary text
//! data (Bibtex: 1836 features, 3.7 % density) the 51 heavy features hold
//! about 80 % of the pair work: the split computes the Gram in about 60 % of
//! the time of a pure scatter, and 4-5 times faster than a densified GEMM.
//!
//! L1 distances use the same split: heavy features through a packed dense
//! micro-kernel, light features through
//! $\|x - y\|_1 = \|x\|_1 + \|y\|_1 - \sum_{f} g(x_f, y_f)$ with
//! $g(u, v) = 2\min(|u|, |v|)$ if $uv > 0$ and $0$ otherwise, where the sum
//! runs over the common support only (a scatter like the product).

use std::ops::Range;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

use crate::block::{Scratch, TILE, transpose_into};
use crate::{CsrRows, DenseRows, LabelSets, Rows};

/// Heavy-feature threshold of the inner-product split: a feature is heavy
/// when `density_a(f) * density_b(f)` exceeds this, i.e. when its scattered
/// pair updates would outnumber about 1/30 of a dense pass (a GEMM
/// pair-feature costs a few percent of a scattered one). On Bibtex, 0.01 to
/// 0.1 measure within noise of each other.
const PRODUCT_HEAVY: f64 = 0.03;

/// Heavy-feature threshold of the L1 split: the dense L1 micro-kernel is
/// several times slower per pair-feature than GEMM, so fewer features go
/// dense (on Bibtex, 0.08 to 0.5 measure within noise of each other).
const L1_HEAVY: f64 = 0.2;

/// A source of tiles: fills `dst = F(a[rows], b[cols])` for row tiles
/// aligned to [`Products::tile_rows`].
pub(crate) trait Products: Sync {
    /// Row tiles passed to [`Products::fill`] must start at a multiple of
    /// this and not be longer.
    fn tile_rows(&self) -> usize;

    /// Writes every entry of `dst` (`rows.len() x cols.len()`, row stride 1).
    fn fill(&self, rows: Range<usize>, cols: Range<usize>, dst: MatMut<'_, f64>, par: Par, s: &mut Scratch);
}

/// Row containers that are vectors over `n_features` coordinates.
pub(crate) trait VectorRows: Rows {
    /// Number of coordinates.
    fn dim(&self) -> usize;

    /// $\sum_f w_f x_{if}^2$ for every row (all weights 1 when `w` is `None`).
    fn sq_norms(&self, w: Option<&[f64]>) -> Vec<f64>;

    /// $\sum_f w_f a_{if} b_{jf}$.
    fn pair_dot(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64;

    /// $\sum_f w_f (a_{if} - b_{jf})^2$, computed directly (no cancellation).
    fn pair_sqdist(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64;

    /// $\sum_f |a_{if} - b_{jf}|$.
    fn pair_l1(a: &Self, i: usize, b: &Self, j: usize) -> f64;

    /// Tile engine for the weighted inner products $\langle a_i, W b_j\rangle$.
    fn products<'a>(a: &'a Self, b: &'a Self, w: Option<&'a [f64]>) -> Box<dyn Products + 'a>;

    /// Tile engine for the L1 distances $\|a_i - b_j\|_1$.
    fn l1_distances<'a>(a: &'a Self, b: &'a Self) -> Box<dyn Products + 'a>;
}

#[inline]
fn weight(w: Option<&[f64]>, f: usize) -> f64 {
    w.map_or(1.0, |w| w[f])
}

// ---------------------------------------------------------------- dense ---

impl VectorRows for DenseRows {
    fn dim(&self) -> usize {
        self.n_features()
    }

    fn sq_norms(&self, w: Option<&[f64]>) -> Vec<f64> {
        let x = self.as_mat();
        if x.col_stride() == 1 && x.row_stride() != 1 {
            // Row-major: one contiguous pass per row.
            return (0..x.nrows())
                .map(|i| x.row(i).iter().enumerate().map(|(f, &v)| weight(w, f) * v * v).sum())
                .collect();
        }
        let mut out = vec![0.0; x.nrows()];
        for f in 0..x.ncols() {
            let wf = weight(w, f);
            let col = x.col(f);
            for (i, o) in out.iter_mut().enumerate() {
                let v = col[i];
                *o += wf * v * v;
            }
        }
        out
    }

    fn pair_dot(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64 {
        let (x, y) = (a.as_mat(), b.as_mat());
        (0..x.ncols()).map(|f| weight(w, f) * x[(i, f)] * y[(j, f)]).sum()
    }

    fn pair_sqdist(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64 {
        let (x, y) = (a.as_mat(), b.as_mat());
        (0..x.ncols())
            .map(|f| {
                let d = x[(i, f)] - y[(j, f)];
                weight(w, f) * d * d
            })
            .sum()
    }

    fn pair_l1(a: &Self, i: usize, b: &Self, j: usize) -> f64 {
        let (x, y) = (a.as_mat(), b.as_mat());
        (0..x.ncols()).map(|f| (x[(i, f)] - y[(j, f)]).abs()).sum()
    }

    fn products<'a>(a: &'a Self, b: &'a Self, w: Option<&'a [f64]>) -> Box<dyn Products + 'a> {
        Box::new(DenseProducts::new(a.as_mat(), b.as_mat(), w))
    }

    fn l1_distances<'a>(a: &'a Self, b: &'a Self) -> Box<dyn Products + 'a> {
        Box::new(DenseL1 { a: a.as_mat(), b: b.as_mat() })
    }
}

/// $X_I W Y_J^\top$ by one GEMM per tile. `Y^\top` (with the weights folded
/// in) is read column-major: faer's GEMM runs 20-40 % faster on a
/// column-major right-hand side than on the transposed view of `Y`. A
/// row-major `Y` without weights already is `Y^\top` column-major and is read
/// in place (so C-ordered NumPy inputs are never copied); otherwise it is
/// copied once.
struct DenseProducts<'a> {
    a: MatRef<'a, f64>,
    /// $W Y^\top$, `(n_features, n_b)`, column-major.
    bt: BT<'a>,
}

enum BT<'a> {
    InPlace(MatRef<'a, f64>),
    Copied(Mat<f64>),
}

impl<'a> DenseProducts<'a> {
    fn new(a: MatRef<'a, f64>, b: MatRef<'a, f64>, w: Option<&[f64]>) -> Self {
        if w.is_none() && b.transpose().row_stride() == 1 {
            return Self { a, bt: BT::InPlace(b.transpose()) };
        }
        let mut bt = Mat::zeros(b.ncols(), b.nrows());
        transpose_into(b, bt.as_mut());
        if let Some(w) = w {
            for j in 0..bt.ncols() {
                let col = bt.as_mut().col_mut(j).try_as_col_major_mut().expect("owned matrix").as_slice_mut();
                col.iter_mut().zip(w).for_each(|(x, &wf)| *x *= wf);
            }
        }
        Self { a, bt: BT::Copied(bt) }
    }
}

impl Products for DenseProducts<'_> {
    fn tile_rows(&self) -> usize {
        TILE
    }

    fn fill(&self, rows: Range<usize>, cols: Range<usize>, dst: MatMut<'_, f64>, par: Par, _: &mut Scratch) {
        let ai = self.a.subrows(rows.start, rows.len());
        let bt = match &self.bt {
            BT::InPlace(bt) => *bt,
            BT::Copied(bt) => bt.as_ref(),
        };
        matmul(dst, Accum::Replace, ai, bt.subcols(cols.start, cols.len()), 1.0, par);
    }
}

/// $\|x_i - y_j\|_1$ by the packed micro-kernel [`l1_dense_tile`].
struct DenseL1<'a> {
    a: MatRef<'a, f64>,
    b: MatRef<'a, f64>,
}

impl Products for DenseL1<'_> {
    fn tile_rows(&self) -> usize {
        TILE
    }

    fn fill(&self, rows: Range<usize>, cols: Range<usize>, dst: MatMut<'_, f64>, _: Par, s: &mut Scratch) {
        l1_dense_tile(self.a.subrows(rows.start, rows.len()), self.b.subrows(cols.start, cols.len()), dst, s);
    }
}

/// Rows of a micro-tile of the L1 kernel (with `NR`, sized so that the
/// accumulators and operands fit the 16 SSE2 registers of baseline x86-64).
const MR: usize = 4;
/// Columns of a micro-tile of the L1 kernel.
const NR: usize = 4;
/// Features per packed panel of the L1 kernel (panels stay in L1 cache).
const KC: usize = 256;

/// `dst[i, j] = sum_f |a[i, f] - b[j, f]|` for an `(m, d)` `a` and an `(n, d)`
/// `b`; `dst` is `(m, n)` with row stride 1.
///
/// Both operands are packed per panel of `KC` features into `MR`- and
/// `NR`-interleaved layouts so that the `MR x NR` accumulators live in
/// registers and the inner loop is branch-free and vectorizable.
pub(crate) fn l1_dense_tile(a: MatRef<'_, f64>, b: MatRef<'_, f64>, mut dst: MatMut<'_, f64>, s: &mut Scratch) {
    let (m, n, d) = (a.nrows(), b.nrows(), a.ncols());
    dst.fill(0.0);
    if m == 0 || n == 0 {
        return;
    }
    let (mb, nb) = (m.div_ceil(MR), n.div_ceil(NR));
    let mut k0 = 0;
    while k0 < d {
        let kc = KC.min(d - k0);
        s.a.clear();
        s.a.resize(mb * kc * MR, 0.0);
        s.b.clear();
        s.b.resize(nb * kc * NR, 0.0);
        for f in 0..kc {
            let col = a.col(k0 + f);
            for i in 0..m {
                s.a[((i / MR) * kc + f) * MR + i % MR] = col[i];
            }
            let col = b.col(k0 + f);
            for j in 0..n {
                s.b[((j / NR) * kc + f) * NR + j % NR] = col[j];
            }
        }
        for jb in 0..nb {
            let pb = &s.b[jb * kc * NR..(jb + 1) * kc * NR];
            for ib in 0..mb {
                let pa = &s.a[ib * kc * MR..(ib + 1) * kc * MR];
                let acc = l1_micro(pa, pb);
                for (q, accq) in acc.iter().enumerate() {
                    let j = jb * NR + q;
                    if j >= n {
                        break;
                    }
                    for (r, &v) in accq.iter().enumerate() {
                        let i = ib * MR + r;
                        if i >= m {
                            break;
                        }
                        dst[(i, j)] += v;
                    }
                }
            }
        }
        k0 += kc;
    }
}

#[inline(always)]
fn l1_micro(pa: &[f64], pb: &[f64]) -> [[f64; MR]; NR] {
    let mut acc = [[0.0; MR]; NR];
    for (av, bv) in pa.chunks_exact(MR).zip(pb.chunks_exact(NR)) {
        let av: &[f64; MR] = av.try_into().expect("chunk of MR");
        let bv: &[f64; NR] = bv.try_into().expect("chunk of NR");
        for q in 0..NR {
            for r in 0..MR {
                acc[q][r] += (av[r] - bv[q]).abs();
            }
        }
    }
    acc
}

// ------------------------------------------------------------------ CSR ---

/// Merges two sorted sparse rows, calling `visit(f, u, v)` for every
/// feature `f` in the union of the supports (`0.0` for a missing side).
#[inline]
fn merge_rows((ia, va): (&[usize], &[f64]), (ib, vb): (&[usize], &[f64]), mut visit: impl FnMut(usize, f64, f64)) {
    let (mut p, mut q) = (0, 0);
    while p < ia.len() && q < ib.len() {
        match ia[p].cmp(&ib[q]) {
            std::cmp::Ordering::Equal => {
                visit(ia[p], va[p], vb[q]);
                p += 1;
                q += 1;
            }
            std::cmp::Ordering::Less => {
                visit(ia[p], va[p], 0.0);
                p += 1;
            }
            std::cmp::Ordering::Greater => {
                visit(ib[q], 0.0, vb[q]);
                q += 1;
            }
        }
    }
    for k in p..ia.len() {
        visit(ia[k], va[k], 0.0);
    }
    for k in q..ib.len() {
        visit(ib[k], 0.0, vb[k]);
    }
}

impl VectorRows for CsrRows {
    fn dim(&self) -> usize {
        self.n_features()
    }

    fn sq_norms(&self, w: Option<&[f64]>) -> Vec<f64> {
        (0..self.n_rows())
            .map(|i| {
                let (idx, val) = self.row(i);
                idx.iter().zip(val).map(|(&f, &v)| weight(w, f) * v * v).sum()
            })
            .collect()
    }

    fn pair_dot(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64 {
        let mut s = 0.0;
        merge_rows(a.row(i), b.row(j), |f, u, v| s += weight(w, f) * u * v);
        s
    }

    fn pair_sqdist(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64 {
        let mut s = 0.0;
        merge_rows(a.row(i), b.row(j), |f, u, v| s += weight(w, f) * (u - v) * (u - v));
        s
    }

    fn pair_l1(a: &Self, i: usize, b: &Self, j: usize) -> f64 {
        let mut s = 0.0;
        merge_rows(a.row(i), b.row(j), |_, u, v| s += (u - v).abs());
        s
    }

    fn products<'a>(a: &'a Self, b: &'a Self, w: Option<&'a [f64]>) -> Box<dyn Products + 'a> {
        Box::new(SparseProducts(SparseSplit::new(a, b, w, PRODUCT_HEAVY)))
    }

    fn l1_distances<'a>(a: &'a Self, b: &'a Self) -> Box<dyn Products + 'a> {
        Box::new(SparseL1::new(a, b))
    }
}

/// The light entries of one row tile of `a`, by feature (CSC), with row
/// indices local to the tile.
struct CscTile {
    colptr: Vec<usize>,
    rows: Vec<u32>,
    vals: Vec<f64>,
}

/// Heavy/light split of two CSR row sets (see the module docs).
struct SparseSplit {
    /// Row tile of `a` (a multiple of nothing in particular, at least [`TILE`]).
    tr: usize,
    /// Heavy columns of `a` (weights folded in), `(n_a, h)`.
    a_heavy: Mat<f64>,
    /// Heavy columns of `b`, transposed: `(h, n_b)` (a column-major GEMM
    /// right-hand side).
    b_heavy_t: Mat<f64>,
    /// Light part of `a` per row tile, weights folded in.
    a_tiles: Vec<CscTile>,
    /// Light part of `b`, CSR over column ids (see [`SparseSplit::new`]).
    b_ptr: Vec<usize>,
    b_idx: Vec<usize>,
    b_val: Vec<f64>,
}

impl SparseSplit {
    fn new(a: &CsrRows, b: &CsrRows, w: Option<&[f64]>, heavy_threshold: f64) -> Self {
        // Per-column arrays are indexed by column id: the feature itself, or,
        // when the declared width dwarfs the stored entries (a CSR matrix
        // may declare 2^24 columns for 80 nonzeros), the feature's rank among
        // the features either side stores, so that memory follows the
        // entries and not the declared width. Weights stay by feature.
        let used: Option<Vec<usize>> = (a.n_features() > 2 * (a.nnz() + b.nnz()) + 64).then(|| {
            let mut u: Vec<usize> = a.indices().iter().chain(b.indices()).copied().collect();
            u.sort_unstable();
            u.dedup();
            u
        });
        let id = |f: usize| used.as_ref().map_or(f, |u| u.binary_search(&f).expect("every stored feature is listed"));
        let d = used.as_ref().map_or(a.n_features(), Vec::len);
        let (na, nb) = (a.n_rows(), b.n_rows());
        let mut ca = vec![0usize; d];
        let mut cb = vec![0usize; d];
        a.indices().iter().for_each(|&f| ca[id(f)] += 1);
        b.indices().iter().for_each(|&f| cb[id(f)] += 1);
        const LIGHT: usize = usize::MAX;
        let mut pos = vec![LIGHT; d];
        let mut h = 0;
        let budget = heavy_threshold * na as f64 * nb as f64;
        for f in 0..d {
            if ca[f] > 0 && cb[f] > 0 && ca[f] as f64 * cb[f] as f64 > budget {
                pos[f] = h;
                h += 1;
            }
        }

        let mut a_heavy = Mat::zeros(na, h);
        let mut b_heavy_t = Mat::zeros(h, nb);
        if h > 0 {
            for i in 0..na {
                let (idx, val) = a.row(i);
                for (&f, &v) in idx.iter().zip(val) {
                    if pos[id(f)] != LIGHT {
                        a_heavy[(i, pos[id(f)])] = weight(w, f) * v;
                    }
                }
            }
            for j in 0..nb {
                let (idx, val) = b.row(j);
                for (&f, &v) in idx.iter().zip(val) {
                    if pos[id(f)] != LIGHT {
                        b_heavy_t[(pos[id(f)], j)] = v;
                    }
                }
            }
        }

        // Each row tile stores a `d + 1` column pointer: cap the number of
        // tiles so that these pointers never outgrow the data itself.
        let max_tiles = (4 * (a.nnz() + na) / (d + 1)).max(1);
        let tr = TILE.max(na.div_ceil(max_tiles));
        let mut a_tiles = Vec::with_capacity(na.div_ceil(tr));
        let mut r0 = 0;
        while r0 < na {
            let r1 = (r0 + tr).min(na);
            let mut colptr = vec![0usize; d + 1];
            for i in r0..r1 {
                for &f in a.row(i).0 {
                    if pos[id(f)] == LIGHT {
                        colptr[id(f) + 1] += 1;
                    }
                }
            }
            for f in 0..d {
                colptr[f + 1] += colptr[f];
            }
            let nnz = colptr[d];
            let mut next = colptr.clone();
            let mut rows = vec![0u32; nnz];
            let mut vals = vec![0.0; nnz];
            for i in r0..r1 {
                let (idx, val) = a.row(i);
                for (&f, &v) in idx.iter().zip(val) {
                    let c = id(f);
                    if pos[c] == LIGHT {
                        let k = next[c];
                        rows[k] = u32::try_from(i - r0).expect("row tile shorter than 2^32");
                        vals[k] = weight(w, f) * v;
                        next[c] += 1;
                    }
                }
            }
            a_tiles.push(CscTile { colptr, rows, vals });
            r0 = r1;
        }

        let mut b_ptr = Vec::with_capacity(nb + 1);
        b_ptr.push(0);
        let mut b_idx = Vec::new();
        let mut b_val = Vec::new();
        for j in 0..nb {
            let (idx, val) = b.row(j);
            for (&f, &v) in idx.iter().zip(val) {
                if pos[id(f)] == LIGHT {
                    b_idx.push(id(f));
                    b_val.push(v);
                }
            }
            b_ptr.push(b_idx.len());
        }
        Self { tr, a_heavy, b_heavy_t, a_tiles, b_ptr, b_idx, b_val }
    }

    /// The CSC tile holding `rows`.
    #[track_caller]
    fn tile(&self, rows: &Range<usize>) -> &CscTile {
        let t = rows.start / self.tr;
        assert!(rows.start == t * self.tr && rows.len() <= self.tr, "row tile not aligned to the split");
        &self.a_tiles[t]
    }

    /// `col[i] += op(u_i, v)` over the light common support of `a[rows]` and
    /// `b_j`, for every `j` in `cols`.
    #[inline(always)]
    fn scatter(&self, rows: &Range<usize>, cols: Range<usize>, mut dst: MatMut<'_, f64>, op: impl Fn(f64, f64) -> f64) {
        if rows.is_empty() {
            return;
        }
        let tile = self.tile(rows);
        // Plain slices: the loop below then keeps every base pointer in a
        // register instead of reloading it from `self`.
        let (colptr, t_rows, t_vals) = (&tile.colptr[..], &tile.rows[..], &tile.vals[..]);
        let (b_ptr, b_idx, b_val) = (&self.b_ptr[..], &self.b_idx[..], &self.b_val[..]);
        for (jj, j) in cols.enumerate() {
            let col = dst.as_mut().col_mut(jj).try_as_col_major_mut().expect("tiles have row stride 1").as_slice_mut();
            let entries = b_ptr[j]..b_ptr[j + 1];
            for (&f, &v) in b_idx[entries.clone()].iter().zip(&b_val[entries]) {
                let r = colptr[f]..colptr[f + 1];
                for (&i, &u) in t_rows[r.clone()].iter().zip(&t_vals[r]) {
                    col[i as usize] += op(u, v);
                }
            }
        }
    }
}

/// Inner products through the heavy/light split.
struct SparseProducts(SparseSplit);

impl Products for SparseProducts {
    fn tile_rows(&self) -> usize {
        self.0.tr
    }

    fn fill(&self, rows: Range<usize>, cols: Range<usize>, mut dst: MatMut<'_, f64>, par: Par, _: &mut Scratch) {
        let sp = &self.0;
        if sp.a_heavy.ncols() > 0 {
            let ai = sp.a_heavy.as_ref().subrows(rows.start, rows.len());
            let bj = sp.b_heavy_t.as_ref().subcols(cols.start, cols.len());
            matmul(dst.as_mut(), Accum::Replace, ai, bj, 1.0, par);
        } else {
            dst.fill(0.0);
        }
        sp.scatter(&rows, cols, dst, |u, v| u * v);
    }
}

/// L1 distances through the heavy/light split.
struct SparseL1 {
    split: SparseSplit,
    /// Light L1 norms of the rows of `a` and `b`.
    la: Vec<f64>,
    lb: Vec<f64>,
}

impl SparseL1 {
    fn new(a: &CsrRows, b: &CsrRows) -> Self {
        let split = SparseSplit::new(a, b, None, L1_HEAVY);
        let light_norms = |x: &CsrRows, heavy: MatRef<'_, f64>| -> Vec<f64> {
            (0..x.n_rows())
                .map(|i| {
                    let total: f64 = x.row(i).1.iter().map(|v| v.abs()).sum();
                    let dense: f64 = (0..heavy.ncols()).map(|k| heavy[(i, k)].abs()).sum();
                    total - dense
                })
                .collect()
        };
        let la = light_norms(a, split.a_heavy.as_ref());
        let lb = light_norms(b, split.b_heavy_t.as_ref().transpose());
        Self { split, la, lb }
    }
}

impl Products for SparseL1 {
    fn tile_rows(&self) -> usize {
        self.split.tr
    }

    fn fill(&self, rows: Range<usize>, cols: Range<usize>, mut dst: MatMut<'_, f64>, _: Par, s: &mut Scratch) {
        let sp = &self.split;
        let ai = sp.a_heavy.as_ref().subrows(rows.start, rows.len());
        let bj = sp.b_heavy_t.as_ref().subcols(cols.start, cols.len()).transpose();
        l1_dense_tile(ai, bj, dst.as_mut(), s);
        let la = &self.la[rows.clone()];
        for (jj, j) in cols.clone().enumerate() {
            let lbj = self.lb[j];
            let col = dst.as_mut().col_mut(jj).try_as_col_major_mut().expect("tiles have row stride 1").as_slice_mut();
            for (x, &lai) in col.iter_mut().zip(la) {
                *x += lai + lbj;
            }
        }
        sp.scatter(&rows, cols, dst.as_mut(), |u, v| if u * v > 0.0 { -2.0 * u.abs().min(v.abs()) } else { 0.0 });
        // Cancellation can leave tiny negative values for identical rows.
        for j in 0..dst.ncols() {
            let col = dst.as_mut().col_mut(j).try_as_col_major_mut().expect("tiles have row stride 1").as_slice_mut();
            col.iter_mut().for_each(|x| *x = x.max(0.0));
        }
    }
}

// ----------------------------------------------------------- label sets ---

/// The sparse-split engine for label sets, whatever their density (the
/// reference the packed engine is tested against).
#[cfg(test)]
pub(crate) fn sparse_label_products(a: &LabelSets, b: &LabelSets) -> impl Products {
    SparseProducts(SparseSplit::new(&a.to_csr(), &b.to_csr(), None, PRODUCT_HEAVY))
}

/// Counts `(|A & B|, |A \ B|, |B \ A|)`, weighted by `w`.
fn set_overlap(a: &[usize], b: &[usize], w: Option<&[f64]>) -> (f64, f64, f64) {
    let (mut both, mut left, mut right) = (0.0, 0.0, 0.0);
    let (mut p, mut q) = (0, 0);
    while p < a.len() && q < b.len() {
        match a[p].cmp(&b[q]) {
            std::cmp::Ordering::Equal => {
                both += weight(w, a[p]);
                p += 1;
                q += 1;
            }
            std::cmp::Ordering::Less => {
                left += weight(w, a[p]);
                p += 1;
            }
            std::cmp::Ordering::Greater => {
                right += weight(w, b[q]);
                q += 1;
            }
        }
    }
    left += a[p..].iter().map(|&l| weight(w, l)).sum::<f64>();
    right += b[q..].iter().map(|&l| weight(w, l)).sum::<f64>();
    (both, left, right)
}

impl VectorRows for LabelSets {
    fn dim(&self) -> usize {
        self.n_labels()
    }

    fn sq_norms(&self, w: Option<&[f64]>) -> Vec<f64> {
        self.iter().map(|s| s.iter().map(|&l| weight(w, l)).sum()).collect()
    }

    fn pair_dot(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64 {
        set_overlap(a.set(i), b.set(j), w).0
    }

    fn pair_sqdist(a: &Self, i: usize, b: &Self, j: usize, w: Option<&[f64]>) -> f64 {
        let (_, l, r) = set_overlap(a.set(i), b.set(j), w);
        l + r
    }

    fn pair_l1(a: &Self, i: usize, b: &Self, j: usize) -> f64 {
        let (_, l, r) = set_overlap(a.set(i), b.set(j), None);
        l + r
    }

    /// Dense enough sets (fingerprints) as packed bits and popcounts, the
    /// others through the sparse split (same values, see `crate::bits`).
    fn products<'a>(a: &'a Self, b: &'a Self, w: Option<&'a [f64]>) -> Box<dyn Products + 'a> {
        if w.is_none() && crate::bits::packed_is_cheaper(a, b) {
            return Box::new(crate::bits::BitProducts::new(a, b));
        }
        Box::new(SparseProducts(SparseSplit::new(&a.to_csr(), &b.to_csr(), w, PRODUCT_HEAVY)))
    }

    fn l1_distances<'a>(a: &'a Self, b: &'a Self) -> Box<dyn Products + 'a> {
        Box::new(SparseL1::new(&a.to_csr(), &b.to_csr()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::for_each_tile;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_csr(rng: &mut ChaCha8Rng, n: usize, d: usize, density: f64) -> CsrRows {
        let rows = (0..n)
            .map(|_| {
                let mut row = Vec::new();
                for f in 0..d {
                    if rng.random::<f64>() < density {
                        row.push((f, (rng.random::<f64>() - 0.3) * 4.0));
                    }
                }
                row
            })
            .collect();
        CsrRows::from_rows(d, rows).unwrap()
    }

    fn check_engine<R: VectorRows>(a: &R, b: &R, w: Option<&[f64]>) {
        let prods = R::products(a, b, w);
        let l1 = R::l1_distances(a, b);
        for par in [Par::Seq, Par::rayon(2)] {
            let mut k = Mat::zeros(a.n_rows(), b.n_rows());
            let t = prods.tile_rows();
            for_each_tile(k.as_mut(), t, 7, par, |r, c, dst, p, s| prods.fill(r, c, dst, p, s));
            let mut l = Mat::zeros(a.n_rows(), b.n_rows());
            let t = l1.tile_rows();
            for_each_tile(l.as_mut(), t, 5, par, |r, c, dst, p, s| l1.fill(r, c, dst, p, s));
            for j in 0..b.n_rows() {
                for i in 0..a.n_rows() {
                    let dot = R::pair_dot(a, i, b, j, w);
                    assert!((k[(i, j)] - dot).abs() <= 1e-10 * (1.0 + dot.abs()), "dot ({i},{j})");
                    let d1 = R::pair_l1(a, i, b, j);
                    assert!((l[(i, j)] - d1).abs() <= 1e-10 * (1.0 + d1), "l1 ({i},{j}): {} vs {d1}", l[(i, j)]);
                }
            }
        }
    }

    #[test]
    fn sparse_split_matches_pairwise_for_all_densities() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        // Mixed density: the first features are dense (heavy), the rest sparse.
        for &(na, nb, d) in &[(0, 3, 5), (1, 1, 1), (300, 40, 30), (40, 300, 12), (270, 270, 50)] {
            for density in [0.02, 0.3, 0.9] {
                let a = random_csr(&mut rng, na, d, density);
                let b = random_csr(&mut rng, nb, d, density);
                let w: Vec<f64> = (0..d).map(|_| rng.random::<f64>() * 2.0).collect();
                check_engine(&a, &b, None);
                check_engine(&a, &b, Some(&w));
                let ad = DenseRows::new(a.to_dense()).unwrap();
                let bd = DenseRows::new(b.to_dense()).unwrap();
                check_engine(&ad, &bd, Some(&w));
            }
        }
    }

    #[test]
    fn heavy_features_are_split_off() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let a = random_csr(&mut rng, 50, 20, 0.9);
        let split = SparseSplit::new(&a, &a, None, PRODUCT_HEAVY);
        assert!(split.a_heavy.ncols() > 10);
        let a = random_csr(&mut rng, 50, 20, 0.01);
        let split = SparseSplit::new(&a, &a, None, PRODUCT_HEAVY);
        assert_eq!(split.a_heavy.ncols(), 0);
    }

    /// Rows spread over a declared width far beyond their entries (issue 35,
    /// C2): per-column arrays follow the stored features, products and L1
    /// distances stay exact (weights still by feature), heavy columns too.
    #[test]
    fn wide_declared_widths_use_column_ids() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let d = 1 << 24;
        for &(na, nb, density) in &[(30, 20, 0.1), (60, 60, 0.9), (1, 0, 0.5)] {
            let spread = |x: &CsrRows| {
                let rows = (0..x.n_rows())
                    .map(|i| {
                        let (idx, val) = x.row(i);
                        idx.iter().zip(val).map(|(&f, &v)| (f * 1_000_003 % d, v)).collect()
                    })
                    .collect();
                CsrRows::from_rows(d, rows).unwrap()
            };
            let (a, b) =
                (spread(&random_csr(&mut rng, na, 16, density)), spread(&random_csr(&mut rng, nb, 16, density)));
            let split = SparseSplit::new(&a, &b, None, PRODUCT_HEAVY);
            assert!(split.a_tiles.iter().all(|t| t.colptr.len() <= 33), "column ids, not features");
            let mut w = vec![0.0; d];
            for (f, x) in w.iter_mut().enumerate().filter(|(f, _)| f % 7 == 3) {
                *x = 0.5 + (f % 5) as f64;
            }
            check_engine(&a, &b, None);
            check_engine(&a, &b, Some(&w));
        }
    }

    #[test]
    fn label_sets_engines_match_csr() {
        let y = LabelSets::new(6, vec![vec![0, 2], vec![], vec![1, 2, 5], vec![2]]).unwrap();
        check_engine(&y, &y, None);
        check_engine(&y, &y, Some(&[1.0, 0.5, 2.0, 0.0, 1.0, 3.0]));
        assert_eq!(LabelSets::pair_l1(&y, 0, &y, 2), 3.0);
    }
}
