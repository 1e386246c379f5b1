//! Drawing sketches from a seeded generator.

use faer::{Mat, Par};
use okr_kernels::{Kernel, Rows};
use okr_linalg::{Cholesky, JitterPolicy};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Restriction, Sketch, SketchKind, SketchSpec};
use crate::{Error, Result};

/// A standard normal draw (Box-Muller; one of the pair is enough here).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn sign(rng: &mut ChaCha8Rng) -> f64 {
    if rng.random::<bool>() { 1.0 } else { -1.0 }
}

/// `k` distinct indices of `0..n`, uniformly (partial Fisher-Yates), in draw order.
pub(crate) fn distinct_uniform(n: usize, k: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let k = k.min(n);
    // A map of displaced entries keeps memory O(k) for large n.
    let mut moved = std::collections::HashMap::<usize, usize>::with_capacity(2 * k);
    let mut out = Vec::with_capacity(k);
    for i in 0..k {
        let j = rng.random_range(i..n);
        let vj = *moved.get(&j).unwrap_or(&j);
        let vi = *moved.get(&i).unwrap_or(&i);
        moved.insert(j, vi);
        out.push(vj);
    }
    out
}

impl Sketch {
    /// Builds a sparse sketch from entries `(row, column, value)` (any order;
    /// repeated positions are summed when applied).
    fn from_entries(m: usize, n: usize, mut entries: Vec<(usize, usize, f64)>) -> Self {
        entries.sort_by_key(|&(r, c, _)| (c, r));
        let mut support = Vec::new();
        let mut ptr = vec![0];
        let mut rows = Vec::with_capacity(entries.len());
        let mut values = Vec::with_capacity(entries.len());
        for (r, c, v) in entries {
            if support.last() != Some(&c) {
                if !support.is_empty() {
                    ptr.push(rows.len());
                }
                support.push(c);
            }
            rows.push(r);
            values.push(v);
        }
        if !support.is_empty() {
            ptr.push(rows.len());
        }
        Self { n, m, support, restriction: Restriction::Sparse { ptr, rows, values } }
    }

    /// For a sub-sampling sketch (one non-zero per row), drops every row whose
    /// column duplicates an earlier row's: the same column, or a column in
    /// the same group of `group_of` (one group id per sample, e.g. from
    /// [`Rows::group_duplicates`]). Returns `None` when nothing is dropped or
    /// the sketch has a row with more than one non-zero.
    ///
    /// The sketched estimators depend on $R$ only through the span of
    /// $\{\sum_j R_{kj}\varphi(z_j)\}_k$ (the projector $\tilde P$), and
    /// identical samples span the same direction, so the merged sketch gives
    /// the same estimator with a non-singular $R K R^\top$ (a Cholesky
    /// factorization instead of an eigendecomposition) and fewer Gram columns.
    ///
    /// # Panics
    /// If `group_of.len()` differs from the number of columns `n`.
    ///
    /// # Example
    /// ```
    /// use okr_estimators::sketch::{Sketch, SketchKind, SketchSpec};
    /// let r = Sketch::draw(&SketchSpec::new(SketchKind::Uniform, 4), 4, 0)?;
    /// // Samples 0 and 2 are identical (group 0), as are 1 and 3 (group 1).
    /// let merged = r.merge_duplicate_columns(&[0, 1, 0, 1]).unwrap();
    /// assert_eq!(merged.nrows(), 2);
    /// assert_eq!(merged.support().len(), 2);
    /// Ok::<(), okr_estimators::Error>(())
    /// ```
    pub fn merge_duplicate_columns(&self, group_of: &[usize]) -> Option<Self> {
        assert_eq!(group_of.len(), self.n, "one group per sketched sample");
        let Restriction::Sparse { ptr, rows, values } = &self.restriction else {
            return None;
        };
        // The column and value of every row.
        let mut of_row: Vec<Option<(usize, f64)>> = vec![None; self.m];
        for (s, &col) in self.support.iter().enumerate() {
            for e in ptr[s]..ptr[s + 1] {
                if of_row[rows[e]].replace((col, values[e])).is_some() {
                    return None;
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        let mut entries = Vec::with_capacity(self.m);
        for (col, value) in of_row.into_iter().flatten() {
            if seen.insert(group_of[col]) {
                entries.push((entries.len(), col, value));
            }
        }
        if entries.len() == self.m {
            return None;
        }
        Some(Self::from_entries(entries.len(), self.n, entries))
    }

    /// Draws a data-oblivious sketch `(spec.size, n)` from `seed`.
    ///
    /// # Errors
    /// An invalid spec ([`SketchSpec::check`]), `n = 0`, or the
    /// [`Leverage`](SketchKind::Leverage) kind, which needs the data: use
    /// [`Sketch::draw_for_kernel`].
    pub fn draw(spec: &SketchSpec, n: usize, seed: u64) -> Result<Self> {
        Self::draw_with(spec, n, &mut ChaCha8Rng::seed_from_u64(seed))
    }

    /// As [`Sketch::draw`], from a generator.
    ///
    /// # Errors
    /// As [`Sketch::draw`].
    pub fn draw_with(spec: &SketchSpec, n: usize, rng: &mut ChaCha8Rng) -> Result<Self> {
        spec.check()?;
        if n == 0 {
            return Err(Error::Empty { what: "sketched sample set" });
        }
        check_size(spec, n)?;
        let m = spec.size;
        let sqrt_m = (m as f64).sqrt();
        Ok(match spec.kind {
            SketchKind::Identity => Self::from_entries(n, n, (0..n).map(|i| (i, i, 1.0)).collect()),
            SketchKind::Gaussian | SketchKind::Rademacher => {
                let gaussian = spec.kind == SketchKind::Gaussian;
                // Column by column, so the draw does not depend on the layout of m.
                let mut r = Mat::zeros(m, n);
                for j in 0..n {
                    for i in 0..m {
                        r[(i, j)] = if gaussian { normal(rng) } else { sign(rng) } / sqrt_m;
                    }
                }
                Self { n, m, support: (0..n).collect(), restriction: Restriction::Dense(r) }
            }
            SketchKind::Uniform => {
                // Without replacement: duplicate rows would add nothing to the
                // row space and make R K R^T exactly singular.
                let m = m.min(n);
                let scale = (n as f64 / m as f64).sqrt();
                let mut idx = distinct_uniform(n, m, rng);
                idx.sort_unstable();
                let entries = idx.into_iter().enumerate().map(|(k, i)| (k, i, scale)).collect();
                Self::from_entries(m, n, entries)
            }
            SketchKind::Leverage => {
                return Err(Error::InvalidParameter {
                    name: "sketch",
                    value: "leverage".into(),
                    expected: "a data-oblivious kind here (leverage scores need the kernel: draw_for_kernel)",
                });
            }
            SketchKind::SparseGaussian { p } | SketchKind::SparseRademacher { p } => {
                let gaussian = matches!(spec.kind, SketchKind::SparseGaussian { .. });
                let p = p.unwrap_or(8.0 / n as f64).min(1.0);
                let scale = 1.0 / (m as f64 * p).sqrt();
                let mut entries = Vec::new();
                // Geometric skips over the m n positions (column-major), O(nnz) draws.
                let total = m * n;
                let log_q = (1.0 - p).ln();
                let mut pos: usize = 0;
                loop {
                    let skip = if p >= 1.0 {
                        0
                    } else {
                        let u: f64 = 1.0 - rng.random::<f64>();
                        (u.ln() / log_q).floor() as usize
                    };
                    pos = match pos.checked_add(skip) {
                        Some(v) if v < total => v,
                        _ => break,
                    };
                    let v = if gaussian { normal(rng) } else { sign(rng) };
                    entries.push((pos % m, pos / m, v * scale));
                    pos += 1;
                }
                Self::from_entries(m, n, entries)
            }
            SketchKind::Sjlt { s } => {
                let scale = 1.0 / (s as f64).sqrt();
                let mut entries = Vec::with_capacity(n * s);
                for j in 0..n {
                    for r in distinct_uniform(m, s, rng) {
                        entries.push((r, j, sign(rng) * scale));
                    }
                }
                Self::from_entries(m, n, entries)
            }
        })
    }

    /// Sub-sampling with probabilities `q` (summing to 1): `m` indices
    /// $i_k \sim q$ with replacement, rows $e_{i_k}^\top / \sqrt{m q_{i_k}}$.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `q` is empty, has a negative or
    /// non-finite entry or does not sum to a positive number, or `m = 0`.
    pub fn weighted_subsampling(q: &[f64], m: usize, rng: &mut ChaCha8Rng) -> Result<Self> {
        let total: f64 = q.iter().sum();
        if q.is_empty() || m == 0 || !(total > 0.0 && total.is_finite()) || q.iter().any(|&v| !v.is_finite() || v < 0.0)
        {
            return Err(Error::InvalidParameter {
                name: "sampling probabilities",
                value: format!("{} weights summing to {total}, m = {m}", q.len()),
                expected: "non-negative finite weights with a positive sum, and m >= 1",
            });
        }
        let mut cumulative = Vec::with_capacity(q.len());
        let mut acc = 0.0;
        for &v in q {
            acc += v / total;
            cumulative.push(acc);
        }
        let entries = (0..m)
            .map(|k| {
                let u: f64 = rng.random::<f64>();
                // First index whose cumulative weight exceeds u, skipping zero weights.
                let mut i = cumulative.partition_point(|&c| c <= u).min(q.len() - 1);
                while q[i] == 0.0 && i > 0 {
                    i -= 1;
                }
                (k, i, 1.0 / (m as f64 * q[i] / total).sqrt())
            })
            .collect();
        Ok(Self::from_entries(m, q.len(), entries))
    }

    /// Draws any kind for the rows `rows` of a kernel: the
    /// [`Leverage`](SketchKind::Leverage) kind computes approximate ridge
    /// leverage scores at `lambda` ([`approximate_leverage_scores`]), the
    /// others ignore the data.
    ///
    /// # Errors
    /// As [`Sketch::draw`], and linear-algebra failures of the scores.
    pub fn draw_for_kernel<R: Rows, K: Kernel<R>>(
        spec: &SketchSpec,
        kernel: &K,
        rows: &R,
        lambda: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self> {
        if spec.kind != SketchKind::Leverage {
            return Self::draw_with(spec, rows.n_rows(), rng);
        }
        spec.check()?;
        check_size(spec, rows.n_rows())?;
        let scores = approximate_leverage_scores(kernel, rows, lambda, spec.size, rng)?;
        Self::weighted_subsampling(&scores, spec.size, rng)
    }
}

/// A sketch has at most `n` rows: more add nothing to its row space, and the
/// dense and sparse kinds would allocate `m x n`. Sub-sampling (`uniform`)
/// draws distinct points and caps `m` at `n` itself; `identity` has `m = n`.
fn check_size(spec: &SketchSpec, n: usize) -> Result<()> {
    if matches!(spec.kind, SketchKind::Uniform | SketchKind::Identity) {
        return Ok(());
    }
    crate::core::checks::at_most("sketch size", spec.size, n, "at most the number of samples it sketches")
}

/// Approximate ridge leverage scores
/// $\tilde\ell_i(\lambda) = \big(K_{ii} - K_{iS}(K_{SS} + \mu \tfrac{|S|}{n} I)^{-1} K_{Si}\big)/\mu$,
/// $\mu = n\lambda$, from a uniform pilot $S$ of `pilot` distinct points: the
/// exact scores $\ell_i = (K (K + \mu I)^{-1})_{ii}$ of the Nystroem
/// approximation $K_{nS} K_{SS}^{-1} K_{Sn}$ with a scaled ridge (Musco and
/// Musco 2017). Cost $O(n |S|^2)$, memory $O(n |S|)$.
///
/// # Errors
/// [`Error::InvalidParameter`] for a non-positive `lambda`;
/// [`Error::Linalg`] if the pilot system does not factor.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::sketch::approximate_leverage_scores;
/// use okr_kernels::{DenseRows, Gaussian};
/// use rand::SeedableRng;
/// let x = DenseRows::new(Mat::from_fn(50, 2, |i, j| ((i * 7 + j * 3) % 11) as f64))?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
/// let l = approximate_leverage_scores(&Gaussian::new(0.5)?, &x, 1e-3, 50, &mut rng)?;
/// assert!(l.iter().all(|&v| v > 0.0 && v <= 1.0 + 1e-9));
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn approximate_leverage_scores<R: Rows, K: Kernel<R>>(
    kernel: &K,
    rows: &R,
    lambda: f64,
    pilot: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<f64>> {
    if !(lambda > 0.0 && lambda.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "lambda",
            value: format!("{lambda}"),
            expected: "a finite number > 0 (leverage scores)",
        });
    }
    let n = rows.n_rows();
    let mu = n as f64 * lambda;
    let mut pilot_idx = distinct_uniform(n, pilot.max(1), rng);
    pilot_idx.sort_unstable();
    let anchors = rows.select(&pilot_idx);
    let s = pilot_idx.len();
    let par = Par::rayon(0);
    let mut kss = kernel.gram(&anchors);
    for i in 0..s {
        kss[(i, i)] += mu * s as f64 / n as f64;
    }
    let (chol, _) = Cholesky::factor_in_place(kss, JitterPolicy::with_lambda(lambda), par)?;
    let diag = kernel.diag(rows);
    let mut scores = vec![0.0; n];
    // Row tiles of K_Sn keep the temporary at s x tile.
    let tile = (1usize << 22).div_ceil(s.max(1)).clamp(1, n);
    let l = chol.l();
    for start in (0..n).step_by(tile) {
        let t = tile.min(n - start);
        let mut ksn = Mat::zeros(s, t);
        kernel.gram_block_into(&anchors, &rows.slice(start..start + t), ksn.as_mut(), par);
        // ||L^{-1} k_i||^2 = k_i^T (K_SS + c I)^{-1} k_i.
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, ksn.as_mut(), par);
        for j in 0..t {
            let q: f64 = ksn.col(j).iter().map(|v| v * v).sum();
            scores[start + j] = ((diag[start + j] - q) / mu).max(f64::EPSILON);
        }
    }
    Ok(scores)
}
