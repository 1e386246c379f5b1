//! One tile of scores, $S^\top = -2\,G^\top C^\top + k(c, c)$, and its merge
//! into the running top-k, in f64 or in f32 with f64 re-scoring. The two
//! factors are whatever the chain order makes them: coefficients and atom
//! products, or kernel rows and folded candidates.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use okr_linalg::profile;
use rayon::prelude::*;

use crate::{F32_SHORTLIST_EXTRA, Precision};

/// Buffers reused across tiles: the f64 score tile, a column-major copy of
/// the coefficient tile in f64 when the tile given is not (for the f64
/// GEMM's rate, and contiguous per test row for the f32 re-scoring), in f64
/// a column-major copy of $G^\top$ when the candidate tile given is not
/// already stored that way, and under [`Precision::F32`] the f32 copy of the
/// atom products, the coefficient tile's f32 copy and the f32 score tile.
pub(crate) struct Scratch {
    precision: Precision,
    s: Mat<f64>,
    g_t: Mat<f64>,
    s32: Mat<f32>,
    g32: Mat<f32>,
    coef_t: Mat<f64>,
    coef32_t: Mat<f32>,
}

impl Scratch {
    pub(crate) fn new(precision: Precision) -> Self {
        Self {
            precision,
            s: Mat::zeros(0, 0),
            g_t: Mat::zeros(0, 0),
            s32: Mat::zeros(0, 0),
            g32: Mat::zeros(0, 0),
            coef_t: Mat::zeros(0, 0),
            coef32_t: Mat::zeros(0, 0),
        }
    }

    /// Rounds the atom products of the current candidate tile to f32 (F32 only).
    pub(crate) fn set_g32(&mut self, g: MatRef<'_, f64>) {
        if self.precision == Precision::F32 {
            round_into(&mut self.g32, g);
        }
    }
}

/// `src` itself when it is column-major, otherwise its copy in `buf`.
fn column_major<'a>(src: MatRef<'a, f64>, buf: &'a mut Mat<f64>) -> MatRef<'a, f64> {
    if src.row_stride() == 1 {
        return src;
    }
    let _p = profile::phase("column-major copy", 0.0);
    buf.resize_with(src.nrows(), src.ncols(), |_, _| 0.0);
    buf.copy_from(src);
    buf.as_ref()
}

/// `dst = src` rounded to f32 (resized to `src`'s shape).
fn round_into(dst: &mut Mat<f32>, src: MatRef<'_, f64>) {
    dst.resize_with(src.nrows(), src.ncols(), |_, _| 0.0);
    for j in 0..src.ncols() {
        for (d, &v) in dst.col_as_slice_mut(j).iter_mut().zip(src.col(j).iter()) {
            *d = v as f32;
        }
    }
}

/// $k(c,c) - 2 \langle c_t, g_c\rangle$ in f64 from the contiguous
/// coefficient row `coef_t`, summed in atom order (so equal candidates get
/// bit-equal scores).
#[inline]
fn rescore(coef_t: &[f64], g: MatRef<'_, f64>, c: usize, norm: f64) -> f64 {
    let dot: f64 = match g.col(c).try_as_col_major() {
        Some(col) => coef_t.iter().zip(col.as_slice()).map(|(&a, &b)| a * b).sum(),
        None => coef_t.iter().zip(g.col(c).iter()).map(|(&a, &b)| a * b).sum(),
    };
    norm - 2.0 * dot
}

/// Scores one tile, `S^T = -2 G^T C^T + norms` (`ct x tt`, so the scores of a
/// test row are one contiguous column), and merges them into the running top-k.
/// `coef_t` is $C^\top$ `(r, tt)`, one column per test row, and `g` is $G$
/// `(r, ct)`. Under [`Precision::F32`] the GEMM is in f32 and each row's f32
/// shortlist is re-scored in f64 before the merge.
///
/// Returns `Err(t)` with the lowest row `t` of the tile that has a NaN or
/// infinite score: such a row has no meaningful argmin, and leaving it
/// undecoded would hand an out-of-range index to the caller.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_tile(
    scratch: &mut Scratch,
    coef_t: MatRef<'_, f64>,
    g: MatRef<'_, f64>,
    norms: &[f64],
    c0: usize,
    indices: &mut [usize],
    scores: &mut [f64],
    par: Par,
) -> std::result::Result<(), usize> {
    let (tt, ct) = (coef_t.ncols(), g.ncols());
    let k = indices.len() / tt.max(1);
    if scratch.precision == Precision::F32 {
        return scan_tile_f32(scratch, coef_t, g, norms, c0, indices, scores, par);
    }
    let Scratch { s, coef_t: coef_copy, g_t: g_copy, .. } = scratch;
    s.resize_with(ct, tt, |_, _| 0.0);
    if coef_t.row_stride() == 1 {
        // Kernel rows (candidates first) are column-major already.
        let _p = profile::phase("score GEMM", 2.0 * (tt * ct * coef_t.nrows()) as f64);
        matmul(s.as_mut(), Accum::Replace, g.transpose(), coef_t, -2.0, par);
    } else {
        // A transposed coefficient tile is a row-major right factor, which
        // halves faer's rate at a few thousand test rows (measured: about 50%
        // of DGEMM against 90-100% from column-major factors). Both factors
        // column-major also keep equal candidates' scores bit-equal in any
        // tile shape, which a row-major G^T beside a column-major C^T does
        // not (a one-candidate tile takes another kernel); the copies move
        // (r + ct) x tt entries for 2 r ct tt flops, and callers that keep
        // G^T column-major (the cached atom products) need none for G.
        let coef_t = column_major(coef_t, coef_copy);
        let g_t = column_major(g.transpose(), g_copy);
        let _p = profile::phase("score GEMM", 2.0 * (tt * ct * coef_t.nrows()) as f64);
        matmul(s.as_mut(), Accum::Replace, g_t, coef_t, -2.0, par);
    }
    let s = &*s;
    let _p = profile::phase("argmax scan", 0.0);
    indices
        .par_chunks_mut(k)
        .zip(scores.par_chunks_mut(k))
        .enumerate()
        .filter_map(|(t, (idx, sc))| {
            for (c, (&v, &nc)) in s.col(t).iter().zip(norms).enumerate() {
                let score = v + nc;
                if !score.is_finite() {
                    return Some(t);
                }
                insert_top_k(idx, sc, c0 + c, score);
            }
            None
        })
        .min()
        .map_or(Ok(()), Err)
}

/// [`scan_tile`] in f32 with f64 re-scoring of a `k + F32_SHORTLIST_EXTRA`
/// shortlist per row; `scratch.g32` must hold `g` rounded to f32.
#[allow(clippy::too_many_arguments)]
fn scan_tile_f32(
    scratch: &mut Scratch,
    coef_t: MatRef<'_, f64>,
    g: MatRef<'_, f64>,
    norms: &[f64],
    c0: usize,
    indices: &mut [usize],
    scores: &mut [f64],
    par: Par,
) -> std::result::Result<(), usize> {
    let Scratch { s32, g32, coef_t: copy, coef32_t, .. } = scratch;
    debug_assert_eq!((g32.nrows(), g32.ncols()), (g.nrows(), g.ncols()));
    // The re-scoring reads each test row's coefficients as one slice: copy
    // only a tile that is not already column-major (kernel rows are).
    let coef_t = if coef_t.row_stride() == 1 {
        coef_t
    } else {
        copy.resize_with(coef_t.nrows(), coef_t.ncols(), |_, _| 0.0);
        copy.copy_from(coef_t);
        copy.as_ref()
    };
    let exact = |row: &[f64], c: usize| rescore(row, g, c, norms[c]);
    scan_f32_then_rescore(s32, coef32_t, coef_t, g32.as_ref(), None, exact, norms, c0, indices, scores, par)
}

/// [`scan_tile`] for a factor kept as a scaled f32 pair: column $c$ of the
/// f64 factor is $2^{e_c}(H_c + L_c)$ with `hi` $= H$ the f32 rounding of the
/// column scaled to a largest entry in $[1, 2)$, `lo` $= L$ the f32 rounding
/// of what is left and `inv_scale[c]` $= 2^{e_c}$ (see [`split_into`]). The
/// GEMM runs in f32 with `hi`, the shortlist is re-scored in f64 with
/// `hi + lo`. The pair holds every entry to $2^{-48}$ of its column's largest
/// entry, far below the f64 rounding of the GEMM that computed the factor,
/// in the bytes of one f64 copy (the f32 path otherwise keeps the f64
/// factor and an f32 copy), and the power-of-two scale keeps any finite
/// column within f32's range. `coef_t` must be column-major (kernel rows are).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_tile_split(
    scratch: &mut Scratch,
    coef_t: MatRef<'_, f64>,
    hi: MatRef<'_, f32>,
    lo: MatRef<'_, f32>,
    inv_scale: &[f64],
    norms: &[f64],
    c0: usize,
    indices: &mut [usize],
    scores: &mut [f64],
    par: Par,
) -> std::result::Result<(), usize> {
    debug_assert_eq!(coef_t.row_stride(), 1);
    debug_assert_eq!((hi.nrows(), hi.ncols()), (lo.nrows(), lo.ncols()));
    let Scratch { s32, coef32_t, .. } = scratch;
    // Summed in expansion order, as `rescore`: equal candidates get bit-equal scores.
    let exact = |row: &[f64], c: usize| {
        let (h, l) = (split_col(hi, c), split_col(lo, c));
        let dot: f64 = row.iter().zip(h.iter().zip(l)).map(|(&a, (&h, &l))| a * (f64::from(h) + f64::from(l))).sum();
        norms[c] - 2.0 * (inv_scale[c] * dot)
    };
    scan_f32_then_rescore(s32, coef32_t, coef_t, hi, Some(inv_scale), exact, norms, c0, indices, scores, par)
}

/// Column `c` of a column-major f32 matrix as a slice.
fn split_col(m: MatRef<'_, f32>, c: usize) -> &[f32] {
    m.col(c).try_as_col_major().expect("column-major f32 factor").as_slice()
}

/// Splits each column of `src` into the scaled f32 pair of
/// [`scan_tile_split`]: `inv_scale[j]` $= 2^{e_j}$ with $2^{e_j} \le$ the
/// column's largest magnitude $< 2^{e_j + 1}$ (1 for a zero or non-finite
/// column, $e_j$ clamped to $\pm 1000$), `hi = f32(src / 2^e)` and
/// `lo = f32(src / 2^e - hi)`. Scaling by a power of two is exact.
pub(crate) fn split_into(
    src: MatRef<'_, f64>,
    mut hi: faer::MatMut<'_, f32>,
    mut lo: faer::MatMut<'_, f32>,
    inv_scale: &mut [f64],
) {
    for (j, inv) in inv_scale.iter_mut().enumerate().take(src.ncols()) {
        let largest = src.col(j).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let exponent =
            if largest > 0.0 && largest.is_finite() { largest.log2().floor().clamp(-1000.0, 1000.0) } else { 0.0 };
        // log2 may round up just below a power of two: 2^e <= largest holds after the check.
        let exponent = if 2f64.powi(exponent as i32) > largest && largest > 0.0 { exponent - 1.0 } else { exponent };
        *inv = 2f64.powi(exponent as i32);
        let scale = 2f64.powi(-(exponent as i32));
        let h = hi.as_mut().col_mut(j).try_as_col_major_mut().expect("column-major f32 factor").as_slice_mut();
        let l = lo.as_mut().col_mut(j).try_as_col_major_mut().expect("column-major f32 factor").as_slice_mut();
        for ((h, l), &v) in h.iter_mut().zip(l.iter_mut()).zip(src.col(j).iter()) {
            let v = v * scale;
            *h = v as f32;
            *l = (v - f64::from(*h)) as f32;
        }
    }
}

/// The f32 score GEMM `-2 g32^T coef32` of a tile, each row's best
/// `k + F32_SHORTLIST_EXTRA` by those scores re-scored exactly by
/// `exact(row's coefficients, candidate)` and merged into the running top-k;
/// `inv_scale[c]` multiplies the f32 product of column `c` (a scaled pair).
#[allow(clippy::too_many_arguments)]
fn scan_f32_then_rescore(
    s32: &mut Mat<f32>,
    coef32_t: &mut Mat<f32>,
    coef_t: MatRef<'_, f64>,
    g32: MatRef<'_, f32>,
    inv_scale: Option<&[f64]>,
    exact: impl Fn(&[f64], usize) -> f64 + Sync,
    norms: &[f64],
    c0: usize,
    indices: &mut [usize],
    scores: &mut [f64],
    par: Par,
) -> std::result::Result<(), usize> {
    let (tt, ct) = (coef_t.ncols(), g32.ncols());
    let k = indices.len() / tt.max(1);
    round_into(coef32_t, coef_t);
    s32.resize_with(ct, tt, |_, _| 0.0);
    {
        let _p = profile::phase("score GEMM (f32)", 2.0 * (tt * ct * coef_t.nrows()) as f64);
        matmul(s32.as_mut(), Accum::Replace, g32.transpose(), coef32_t.as_ref(), -2.0f32, par);
    }
    let s32 = &*s32;
    let col = |t: usize| coef_t.col(t).try_as_col_major().expect("column-major coefficient tile").as_slice();
    let _p = profile::phase("argmax scan + f64 re-scoring", 0.0);
    let ks = k + F32_SHORTLIST_EXTRA;
    indices
        .par_chunks_mut(k)
        .zip(scores.par_chunks_mut(k))
        .enumerate()
        .filter_map(|(t, (idx, sc))| {
            let mut short_idx = vec![usize::MAX; ks];
            let mut short_sc = vec![f64::INFINITY; ks];
            let mut finite = true;
            for (c, (&v, &nc)) in s32.col_as_slice(t).iter().zip(norms).enumerate() {
                let product = f64::from(v);
                let score = inv_scale.map_or(product, |s| s[c] * product) + nc;
                if !score.is_finite() {
                    finite = false;
                    break;
                }
                insert_top_k(&mut short_idx, &mut short_sc, c, score);
            }
            if finite {
                // In index order, so ties in f64 keep the lowest index.
                short_idx.sort_unstable();
                for &c in short_idx.iter().take_while(|&&c| c != usize::MAX) {
                    let score = exact(col(t), c);
                    if !score.is_finite() {
                        return Some(t);
                    }
                    insert_top_k(idx, sc, c0 + c, score);
                }
            } else {
                // f32 overflow: the whole row in f64, which errs only where f64 does.
                for c in 0..ct {
                    let score = exact(col(t), c);
                    if !score.is_finite() {
                        return Some(t);
                    }
                    insert_top_k(idx, sc, c0 + c, score);
                }
            }
            None
        })
        .min()
        .map_or(Ok(()), Err)
}

/// Keeps `idx`/`sc` sorted by (score, index); a candidate enters only when
/// strictly better than the current last, so ties keep the lowest index
/// (candidates arrive in increasing index order). NaN scores never enter.
#[inline]
pub(crate) fn insert_top_k(idx: &mut [usize], sc: &mut [f64], c: usize, v: f64) {
    let k = sc.len();
    // `!(v < last)` also rejects NaN.
    if !(v < sc[k - 1] || idx[k - 1] == usize::MAX && !v.is_nan()) {
        return;
    }
    let mut pos = k - 1;
    while pos > 0 && (v < sc[pos - 1] || idx[pos - 1] == usize::MAX) {
        sc[pos] = sc[pos - 1];
        idx[pos] = idx[pos - 1];
        pos -= 1;
    }
    sc[pos] = v;
    idx[pos] = c;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `2^e (hi + lo)` holds each f64 entry to 2^-48 of its column's largest
    /// entry, `hi` is the f32 rounding of the scaled column, and columns far
    /// outside f32's range stay finite.
    #[test]
    fn split_pair_holds_the_f64_entry() {
        let cols: [[f64; 4]; 4] = [
            [1.0 / 3.0, -std::f64::consts::PI * 1e5, 1e-30 / 7.0, 0.0],
            [1e300, -3e299 / 7.0, 1.0, 2.0f64.powi(-20) / 3.0],
            [1e-200 / 3.0, 2e-201, 0.0, -1e-210],
            [0.0; 4],
        ];
        let src = Mat::from_fn(4, 4, |i, j| cols[j][i]);
        let (mut hi, mut lo) = (Mat::<f32>::zeros(4, 4), Mat::<f32>::zeros(4, 4));
        let mut inv = vec![0.0; 4];
        split_into(src.as_ref(), hi.as_mut(), lo.as_mut(), &mut inv);
        for j in 0..4 {
            let largest = cols[j].iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(inv[j] <= largest.max(1.0) && (largest == 0.0 || largest < 2.0 * inv[j]), "column {j}: {}", inv[j]);
            for i in 0..4 {
                let v = src[(i, j)];
                assert!(hi[(i, j)].is_finite() && lo[(i, j)].is_finite());
                assert_eq!(hi[(i, j)], (v / inv[j]) as f32);
                let pair = inv[j] * (f64::from(hi[(i, j)]) + f64::from(lo[(i, j)]));
                assert!((pair - v).abs() <= largest * 2f64.powi(-48), "{v}: {pair}");
            }
        }
        assert_eq!(inv[3], 1.0);
    }

    #[test]
    fn top_k_insertion_keeps_order_and_ties_low() {
        let mut idx = vec![usize::MAX; 3];
        let mut sc = vec![f64::INFINITY; 3];
        for (c, v) in [(0, 5.0), (1, 1.0), (2, 1.0), (3, f64::NAN), (4, 0.5), (5, 5.0)] {
            insert_top_k(&mut idx, &mut sc, c, v);
        }
        assert_eq!(idx, vec![4, 1, 2]);
        assert_eq!(sc, vec![0.5, 1.0, 1.0]);
    }
}
