//! The Nystroem system accumulated over row chunks of $K_{nm}$, which is
//! never held whole: at `n = 60000`, `m = 15000` it would take 7.2 GB.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use okr_kernels::{Kernel, Rows};

/// Default number of training rows per streamed chunk of $K_{nm}$.
pub const DEFAULT_CHUNK_ROWS: usize = 2048;

/// What one pass over the chunks of $K_{mn}$ accumulates.
pub(crate) struct StreamedProducts {
    /// $K_{mn} K_{nm}$ `(m, m)`, symmetric.
    pub(crate) ata: Mat<f64>,
    /// $K_{mn} P$ `(m, n_groups)` with the 0/1 sample-to-group map $P$, when groups were given.
    pub(crate) at_groups: Option<Mat<f64>>,
    /// $K_{mn} T$ `(m, k)`, when `T` `(n, k)` was given.
    pub(crate) at_t: Option<Mat<f64>>,
}

/// One pass over `x` in chunks of `chunk_rows` rows: each chunk's kernel
/// block $K(\text{anchors}, x_c)$ `(m, c)` is computed GEMM-shaped by the
/// kernel, then added into the lower triangle of $K_{mn}K_{nm}$ (a SYRK,
/// [`okr_linalg::products::crossprod_lower_add_into`]), summed by group into
/// $K_{mn}P$ and multiplied into $K_{mn}T$. Peak memory: the `m x m`
/// accumulator, the right-hand sides and one `m x chunk_rows` block.
///
/// # Panics
/// If `chunk_rows == 0`, `groups` does not have `n` entries each `< n_groups`,
/// or `t` does not have `n` rows.
#[allow(non_snake_case)]
pub(crate) fn stream_products<X: Rows, KX: Kernel<X>>(
    kx: &KX,
    x: &X,
    anchors: &X,
    chunk_rows: usize,
    groups: Option<(&[usize], usize)>,
    t: Option<MatRef<'_, f64>>,
    par: Par,
) -> StreamedProducts {
    assert!(chunk_rows > 0, "chunk_rows must be >= 1");
    let (n, m) = (x.n_rows(), anchors.n_rows());
    if let Some((g, _)) = groups {
        assert_eq!(g.len(), n, "one group per training row");
    }
    if let Some(t) = t {
        assert_eq!(t.nrows(), n, "right-hand side rows");
    }
    let mut ata = Mat::zeros(m, m);
    let mut at_groups = groups.map(|(_, k)| Mat::zeros(m, k));
    let mut at_t = t.map(|t| Mat::zeros(m, t.ncols()));
    let mut buf = Mat::zeros(m, chunk_rows.min(n));
    for start in (0..n).step_by(chunk_rows) {
        let c = chunk_rows.min(n - start);
        kx.gram_block_into(anchors, &x.slice(start..start + c), buf.as_mut().subcols_mut(0, c), par);
        let B = buf.as_ref().subcols(0, c);
        okr_linalg::products::crossprod_lower_add_into(ata.as_mut(), B.transpose(), par);
        if let (Some(acc), Some((g, _))) = (at_groups.as_mut(), groups) {
            for (ii, &grp) in g[start..start + c].iter().enumerate() {
                let src = B.col(ii);
                let mut dst = acc.col_mut(grp);
                for j in 0..m {
                    dst[j] += src[j];
                }
            }
        }
        if let (Some(acc), Some(t)) = (at_t.as_mut(), t) {
            matmul(acc.as_mut(), Accum::Add, B, t.subrows(start, c), 1.0, par);
        }
    }
    okr_linalg::products::mirror_lower_in_place(ata.as_mut());
    StreamedProducts { ata, at_groups, at_t }
}
