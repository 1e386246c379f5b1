//! Shared tiling: split an output block into tiles and fill them in parallel.
//!
//! Every Gram computation in this crate goes through two drivers:
//!
//! - [`for_each_tile`] fills a rectangular block tile by tile;
//! - [`for_each_tile_sym`] fills a symmetric square block, computing only the
//!   tiles on and below the diagonal and mirroring each one into its transposed
//!   position while it is still in cache.
//!
//! The closure always receives a tile with row stride 1 (contiguous columns),
//! whatever the strides of the caller's `dst`: a strided tile is computed into
//! a per-worker scratch tile and copied. Memory beyond `dst` is therefore
//! bounded by a few tiles per worker, never by the block size.

use std::ops::Range;

use faer::{MatMut, MatRef, Par};
use rayon::prelude::*;

/// Default edge of a square output tile (rows and columns of the block).
///
/// 256 x 256 doubles are 512 KiB: the tile stays in L2 between the product
/// phase and the elementwise transform, and a GEMM of that shape with a few
/// hundred features already runs near peak.
pub(crate) const TILE: usize = 256;

/// Per-worker scratch memory handed to tile closures.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Free for the closure (packing, scaled copies).
    pub a: Vec<f64>,
    /// Free for the closure (packing, scaled copies).
    pub b: Vec<f64>,
}

#[derive(Default)]
struct WorkerScratch {
    tile: Vec<f64>,
    work: Scratch,
}

/// Number of workers a `Par` asks for.
fn degree(par: Par) -> usize {
    match par {
        Par::Seq => 1,
        Par::Rayon(n) => n.get(),
    }
}

/// Splits `m` into consecutive pieces of at most `size` columns.
fn split_cols(m: MatMut<'_, f64>, size: usize) -> Vec<MatMut<'_, f64>> {
    let mut out = Vec::with_capacity(m.ncols().div_ceil(size.max(1)));
    let mut rest = m;
    while rest.ncols() > 0 {
        let w = size.min(rest.ncols());
        let (left, right) = rest.split_at_col_mut(w);
        out.push(left);
        rest = right;
    }
    out
}

/// Splits `m` into a grid of tiles: `grid[tile_col][tile_row]`.
fn split_grid(m: MatMut<'_, f64>, tile_rows: usize, tile_cols: usize) -> Vec<Vec<MatMut<'_, f64>>> {
    split_cols(m, tile_cols)
        .into_iter()
        .map(|c| split_cols(c.transpose_mut(), tile_rows).into_iter().map(MatMut::transpose_mut).collect())
        .collect()
}

/// Runs `f` on `tile`, through a contiguous scratch tile if `tile` has a row
/// stride other than 1.
fn run_tile<F>(
    f: &F,
    rows: Range<usize>,
    cols: Range<usize>,
    mut tile: MatMut<'_, f64>,
    par: Par,
    s: &mut WorkerScratch,
) where
    F: Fn(Range<usize>, Range<usize>, MatMut<'_, f64>, Par, &mut Scratch) + Sync,
{
    if tile.row_stride() == 1 {
        f(rows, cols, tile, par, &mut s.work);
    } else {
        let (m, n) = (tile.nrows(), tile.ncols());
        s.tile.clear();
        s.tile.resize(m * n, 0.0);
        let mut tmp = MatMut::from_column_major_slice_mut(&mut s.tile[..], m, n);
        f(rows, cols, tmp.as_mut(), par, &mut s.work);
        tile.copy_from(tmp.as_ref());
    }
}

/// Fills `dst` tile by tile: `f(rows, cols, tile, par, scratch)` must write
/// every entry of `tile`, the block `dst[rows, cols]` (row stride 1).
///
/// Tiles run in parallel on the current rayon pool when `par` asks for more
/// than one thread; the `Par` passed to `f` is `Par::Seq` then, or `par` when
/// there is a single tile (so a lone big tile can still use every core).
pub(crate) fn for_each_tile<F>(dst: MatMut<'_, f64>, tile_rows: usize, tile_cols: usize, par: Par, f: F)
where
    F: Fn(Range<usize>, Range<usize>, MatMut<'_, f64>, Par, &mut Scratch) + Sync,
{
    let (tr, tc) = (tile_rows.max(1), tile_cols.max(1));
    let mut jobs = Vec::new();
    for (jt, col) in split_grid(dst, tr, tc).into_iter().enumerate() {
        for (it, tile) in col.into_iter().enumerate() {
            let rows = it * tr..it * tr + tile.nrows();
            let cols = jt * tc..jt * tc + tile.ncols();
            jobs.push((rows, cols, tile));
        }
    }
    if degree(par) <= 1 || jobs.len() <= 1 {
        let inner = if jobs.len() == 1 { par } else { Par::Seq };
        let mut s = WorkerScratch::default();
        for (rows, cols, tile) in jobs {
            run_tile(&f, rows, cols, tile, inner, &mut s);
        }
    } else {
        jobs.into_par_iter()
            .for_each_init(WorkerScratch::default, |s, (rows, cols, tile)| run_tile(&f, rows, cols, tile, Par::Seq, s));
    }
}

/// Fills the square `dst` with a symmetric block: `f(rows, cols, tile, ..)`
/// is called only for tiles on or below the diagonal (`rows.start >=
/// cols.start`); each off-diagonal tile is then copied transposed into its
/// mirror position, and the strict upper part of each diagonal tile is
/// overwritten with its lower part. The result is exactly symmetric.
///
/// # Panics
/// If `dst` is not square.
#[track_caller]
pub(crate) fn for_each_tile_sym<F>(dst: MatMut<'_, f64>, tile: usize, par: Par, f: F)
where
    F: Fn(Range<usize>, Range<usize>, MatMut<'_, f64>, Par, &mut Scratch) + Sync,
{
    assert_eq!(dst.nrows(), dst.ncols(), "symmetric block must be square");
    let t = tile.max(1);
    let mut grid: Vec<Vec<Option<MatMut<'_, f64>>>> =
        split_grid(dst, t, t).into_iter().map(|c| c.into_iter().map(Some).collect()).collect();
    let nt = grid.len();
    let mut jobs = Vec::with_capacity(nt * (nt + 1) / 2);
    // Tile (it, jt) pairs with its mirror (jt, it): index loops say that best.
    #[allow(clippy::needless_range_loop)]
    for jt in 0..nt {
        for it in jt..nt {
            let lower = grid[jt][it].take().expect("each tile is taken once");
            let mirror = if it > jt { grid[it][jt].take() } else { None };
            let rows = it * t..it * t + lower.nrows();
            let cols = jt * t..jt * t + lower.ncols();
            jobs.push((rows, cols, lower, mirror));
        }
    }
    let run =
        |(rows, cols, mut lower, mirror): (Range<usize>, Range<usize>, MatMut<'_, f64>, Option<MatMut<'_, f64>>),
         inner: Par,
         s: &mut WorkerScratch| {
            run_tile(&f, rows, cols, lower.as_mut(), inner, s);
            match mirror {
                Some(m) => transpose_into(lower.as_ref(), m),
                None => {
                    for j in 0..lower.ncols() {
                        for i in 0..j {
                            lower[(i, j)] = lower[(j, i)];
                        }
                    }
                }
            }
        };
    if degree(par) <= 1 || jobs.len() <= 1 {
        let inner = if jobs.len() == 1 { par } else { Par::Seq };
        let mut s = WorkerScratch::default();
        for job in jobs {
            run(job, inner, &mut s);
        }
    } else {
        jobs.into_par_iter().for_each_init(WorkerScratch::default, |s, job| run(job, Par::Seq, s));
    }
}

/// `dst = src^T`, in 16 x 16 blocks so that both sides stay in L1 (faer's
/// `copy_from` on a transposed view walks one side with a full-column
/// stride, which costs about as much as the sparse product of the tile).
pub(crate) fn transpose_into(src: MatRef<'_, f64>, mut dst: MatMut<'_, f64>) {
    const B: usize = 16;
    let (m, n) = (src.nrows(), src.ncols());
    assert_eq!((dst.nrows(), dst.ncols()), (n, m));
    if src.row_stride() != 1 || dst.row_stride() != 1 {
        dst.copy_from(src.transpose());
        return;
    }
    let src_cols: Vec<&[f64]> =
        (0..n).map(|j| src.col(j).try_as_col_major().expect("row stride 1").as_slice()).collect();
    let mut dst_cols: Vec<&mut [f64]> =
        dst.col_iter_mut().map(|c| c.try_as_col_major_mut().expect("row stride 1").as_slice_mut()).collect();
    for ib in (0..m).step_by(B) {
        for jb in (0..n).step_by(B) {
            let je = (jb + B).min(n);
            for (i, d) in dst_cols[ib..(ib + B).min(m)].iter_mut().enumerate() {
                for (j, s) in src_cols[jb..je].iter().enumerate() {
                    d[jb + j] = s[ib + i];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn fill(rows: Range<usize>, cols: Range<usize>, mut t: MatMut<'_, f64>, _: Par, _: &mut Scratch) {
        assert_eq!(t.row_stride(), 1);
        assert_eq!((t.nrows(), t.ncols()), (rows.len(), cols.len()));
        for (jj, j) in cols.enumerate() {
            for (ii, i) in rows.clone().enumerate() {
                t[(ii, jj)] = (i * 1000 + j) as f64;
            }
        }
    }

    #[test]
    fn tiles_cover_block_for_all_layouts() {
        for &(m, n, tr, tc) in &[(0, 0, 3, 3), (1, 7, 3, 2), (10, 7, 3, 4), (9, 9, 9, 9), (5, 13, 64, 1)] {
            for par in [Par::Seq, Par::rayon(2)] {
                let mut d = Mat::<f64>::zeros(m, n);
                for_each_tile(d.as_mut(), tr, tc, par, fill);
                let mut dt = Mat::<f64>::zeros(n, m);
                for_each_tile(dt.as_mut().transpose_mut(), tr, tc, par, fill);
                for j in 0..n {
                    for i in 0..m {
                        assert_eq!(d[(i, j)], (i * 1000 + j) as f64);
                        assert_eq!(dt[(j, i)], (i * 1000 + j) as f64);
                    }
                }
            }
        }
    }

    #[test]
    fn transpose_into_all_layouts() {
        let a = Mat::from_fn(37, 21, |i, j| (i * 100 + j) as f64);
        let mut t = Mat::<f64>::zeros(21, 37);
        transpose_into(a.as_ref(), t.as_mut());
        let mut u = Mat::<f64>::zeros(37, 21);
        transpose_into(a.as_ref(), u.as_mut().transpose_mut());
        for i in 0..37 {
            for j in 0..21 {
                assert_eq!((t[(j, i)], u[(i, j)]), (a[(i, j)], a[(i, j)]));
            }
        }
    }

    #[test]
    fn symmetric_driver_mirrors_lower_tiles() {
        for &(n, t) in &[(0, 4), (1, 4), (7, 3), (8, 4), (11, 64)] {
            for par in [Par::Seq, Par::rayon(2)] {
                let mut d = Mat::<f64>::zeros(n, n);
                for_each_tile_sym(d.as_mut(), t, par, |rows, cols, tile, p, s| {
                    assert!(rows.start >= cols.start);
                    fill(rows, cols, tile, p, s);
                });
                for j in 0..n {
                    for i in 0..n {
                        let (hi, lo) = (i.max(j), i.min(j));
                        assert_eq!(d[(i, j)], (hi * 1000 + lo) as f64);
                    }
                }
            }
        }
    }
}
