//! Reductions of a tall matrix $A$ `(n, m)` accumulated over row chunks, so
//! that $A$ is never held whole: at `n = 60000`, `m = 15000` it would take
//! 7.2 GB. The Nystroem fits stream $A = K_{nm}$, the sketched fits
//! $A = K R^\top$; both only need $A^\top A$ and $A^\top$ times a few
//! right-hand sides.

use std::ops::Range;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use okr_linalg::profile;

/// Default number of rows of $A$ per streamed chunk.
pub const DEFAULT_CHUNK_ROWS: usize = 2048;

/// What one pass over the chunks of $A^\top$ accumulates.
pub(crate) struct StreamedProducts {
    /// $A^\top A$ `(m, m)`, exactly symmetric.
    pub(crate) ata: Mat<f64>,
    /// $A^\top P$ `(m, n_groups)` with the 0/1 sample-to-group map $P$, when groups were given.
    pub(crate) at_groups: Option<Mat<f64>>,
    /// $A^\top T$ `(m, k)`, when `T` `(n, k)` was given.
    pub(crate) at_t: Option<Mat<f64>>,
}

/// One pass over the rows of $A$ `(n, m)` in chunks of `chunk_rows`:
/// `fill(rows, block)` writes the chunk's block $A_c^\top$ `(m, c)` (every
/// entry), which is added into the lower triangle of $A^\top A$ (a SYRK,
/// [`okr_linalg::products::crossprod_lower_add_into`]), summed by group into
/// $A^\top P$, multiplied into $A^\top T$, and finally handed to
/// `on_chunk(first_row, block)` for any other reduction. Peak memory: the
/// `m x m` accumulator, the right-hand sides and one `m x chunk_rows` block.
///
/// With row `weights` $w$ (the weighted fits, see
/// [`FitWeighted`](crate::FitWeighted)) the reductions are $A^\top W A$,
/// $A^\top W P$ and $A^\top W T$: each block's columns are scaled by
/// $w_i^{1/2}$ into a second block for the SYRK, and `on_chunk` still
/// receives the unweighted block.
///
/// # Panics
/// If `chunk_rows == 0`, `groups` does not have `n` entries each `< n_groups`,
/// `t` does not have `n` rows, or `weights` does not have `n` entries.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stream_products(
    n: usize,
    m: usize,
    chunk_rows: usize,
    mut fill: impl FnMut(Range<usize>, MatMut<'_, f64>),
    groups: Option<(&[usize], usize)>,
    t: Option<MatRef<'_, f64>>,
    weights: Option<&[f64]>,
    mut on_chunk: impl FnMut(usize, MatRef<'_, f64>),
    par: Par,
) -> StreamedProducts {
    assert!(chunk_rows > 0, "chunk_rows must be >= 1");
    if let Some((g, _)) = groups {
        assert_eq!(g.len(), n, "one group per row");
    }
    if let Some(t) = t {
        assert_eq!(t.nrows(), n, "right-hand side rows");
    }
    let mut ata = Mat::zeros(m, m);
    let mut at_groups = groups.map(|(_, k)| Mat::zeros(m, k));
    let mut at_t = t.map(|t| Mat::zeros(m, t.ncols()));
    if let Some(w) = weights {
        assert_eq!(w.len(), n, "one weight per row");
    }
    let sqrt_w: Option<Vec<f64>> = weights.map(|w| w.iter().map(|v| v.sqrt()).collect());
    let mut buf = Mat::zeros(m, chunk_rows.min(n));
    let mut scaled_buf = Mat::zeros(m, if weights.is_some() { chunk_rows.min(n) } else { 0 });
    for start in (0..n).step_by(chunk_rows) {
        let c = chunk_rows.min(n - start);
        {
            // The kernel's flops depend on its rows (sparse or dense): the caller counts them.
            let _p = profile::phase("kernel blocks", 0.0);
            fill(start..start + c, buf.as_mut().subcols_mut(0, c));
        }
        let block = buf.as_ref().subcols(0, c);
        // The weighted block A_c^T W_c^{1/2}, or the block itself.
        let sw = sqrt_w.as_deref().map(|r| &r[start..start + c]);
        let wblock = match sw {
            None => block,
            Some(r) => {
                for (i, &ri) in r.iter().enumerate() {
                    let mut d = scaled_buf.col_mut(i);
                    d.copy_from(block.col(i));
                    d.iter_mut().for_each(|v| *v *= ri);
                }
                scaled_buf.as_ref().subcols(0, c)
            }
        };
        {
            // The lower triangle with its diagonal: m (m + 1) / 2 dot products of length c.
            let _p = profile::phase("SYRK A^T A", (m * (m + 1)) as f64 * c as f64);
            okr_linalg::products::crossprod_lower_add_into(ata.as_mut(), wblock.transpose(), par);
        }
        if let (Some(acc), Some((g, _))) = (at_groups.as_mut(), groups) {
            let _p = profile::phase("group sums A^T P", (m * c) as f64);
            for (i, &grp) in g[start..start + c].iter().enumerate() {
                let mut dst = acc.col_mut(grp);
                match sw {
                    None => dst += block.col(i),
                    // w_i a_i = w_i^{1/2} (w_i^{1/2} a_i).
                    Some(r) => dst += faer::Scale(r[i]) * wblock.col(i),
                }
            }
        }
        if let (Some(acc), Some(t)) = (at_t.as_mut(), t) {
            let _p = profile::phase("GEMM A^T T", 2.0 * (m * c * t.ncols()) as f64);
            match sw {
                None => matmul(acc.as_mut(), Accum::Add, block, t.subrows(start, c), 1.0, par),
                Some(r) => {
                    let tw = Mat::from_fn(c, t.ncols(), |i, j| t[(start + i, j)] * r[i]);
                    matmul(acc.as_mut(), Accum::Add, wblock, tw.as_ref(), 1.0, par);
                }
            }
        }
        on_chunk(start, block);
    }
    okr_linalg::products::mirror_lower_in_place(ata.as_mut());
    StreamedProducts { ata, at_groups, at_t }
}
