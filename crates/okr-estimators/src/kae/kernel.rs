//! Scalar kernels of the KAE layers on dense codes, with their Gram
//! matrices and the reverse-mode derivative of a Gram matrix with respect to
//! its (shared) argument (spec 1.4.2, `kernel_backward`).

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The scalar kernel $k_l$ of one KAE layer; the layer's operator-valued
/// kernel is $k_l(x, x') A_l$.
///
/// Codes are dense vectors, so Gram matrices are one GEMM $X Y^\top$ followed
/// by an elementwise transform.
///
/// | variant | $k(x, x')$ |
/// |---|---|
/// | `Linear` | $\langle x, x' \rangle$ |
/// | `Gaussian { gamma }` | $\exp(-\gamma \lVert x - x' \rVert^2)$ |
/// | `GaussianMedian` | Gaussian with $\gamma = 1 / \mathrm{median}_{i<j} \lVert x_i - x_j \rVert^2$ of the layer's inputs **at initialization**, then kept fixed (spec 5.2) |
/// | `Polynomial { degree, gamma, coef0 }` | $(\gamma \langle x, x' \rangle + c_0)^{d}$ |
///
/// A fitted model only holds resolved kernels (no `GaussianMedian`).
///
/// # Example
/// ```
/// use faer::mat;
/// use okr_estimators::kae::LayerKernel;
/// let x = mat![[0.0, 1.0], [1.0, 1.0]];
/// let k = LayerKernel::Gaussian { gamma: 0.5 }.gram(x.as_ref())?;
/// assert!((k[(0, 1)] - (-0.5f64).exp()).abs() < 1e-15);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayerKernel {
    /// $\langle x, x' \rangle$.
    Linear,
    /// $\exp(-\gamma \lVert x - x' \rVert^2)$, `gamma > 0`.
    Gaussian {
        /// Inverse squared length scale, $\gamma = 1/(2\sigma^2)$.
        gamma: f64,
    },
    /// Gaussian with the median heuristic, resolved once at initialization.
    GaussianMedian,
    /// $(\gamma \langle x, x' \rangle + c_0)^{d}$, `degree >= 1`.
    Polynomial {
        /// The exponent $d$.
        degree: u32,
        /// The scale $\gamma$ of the inner product.
        gamma: f64,
        /// The offset $c_0$.
        coef0: f64,
    },
}

impl LayerKernel {
    /// A short kebab-case name (`linear`, `gaussian`, `gaussian-median`, `polynomial`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Gaussian { .. } => "gaussian",
            Self::GaussianMedian => "gaussian-median",
            Self::Polynomial { .. } => "polynomial",
        }
    }

    pub(crate) fn check(&self, name: &'static str) -> Result<()> {
        let bad = |value: String, expected| Err(Error::InvalidParameter { name, value, expected });
        match *self {
            Self::Gaussian { gamma } if !(gamma > 0.0 && gamma.is_finite()) => {
                bad(format!("gaussian gamma {gamma}"), "gamma > 0 and finite")
            }
            Self::Polynomial { degree, gamma, coef0 } if degree == 0 || !gamma.is_finite() || !coef0.is_finite() => {
                bad(format!("polynomial({degree}, {gamma}, {coef0})"), "degree >= 1, finite gamma and coef0")
            }
            _ => Ok(()),
        }
    }

    /// Replaces `GaussianMedian` by a Gaussian with $\gamma = 1/\mathrm{median}$
    /// of the pairwise squared distances of the rows of `x` (at most 1000 rows
    /// are used, evenly spaced).
    pub(crate) fn resolve(&self, x: MatRef<'_, f64>) -> LayerKernel {
        match self {
            Self::GaussianMedian => {
                let med = median_sq_distance(x);
                let gamma = if med > 0.0 && med.is_finite() { 1.0 / med } else { 1.0 };
                Self::Gaussian { gamma }
            }
            other => *other,
        }
    }

    /// The symmetric Gram matrix $K_{ij} = k(x_i, x_j)$ of the rows of `x`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an unresolved `GaussianMedian`.
    pub fn gram(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut k = self.cross(x, x)?;
        // Exact symmetry (the GEMM is symmetric only up to rounding).
        let n = k.nrows();
        for j in 0..n {
            for i in j + 1..n {
                let v = 0.5 * (k[(i, j)] + k[(j, i)]);
                k[(i, j)] = v;
                k[(j, i)] = v;
            }
        }
        Ok(k)
    }

    /// The cross Gram block $K_{ij} = k(a_i, b_j)$, shape `(a.nrows(), b.nrows())`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when the widths differ;
    /// [`Error::InvalidParameter`] for an unresolved `GaussianMedian`.
    pub fn cross(&self, a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if a.ncols() != b.ncols() {
            return Err(Error::ShapeMismatch { what: "code width", expected: b.ncols(), got: a.ncols() });
        }
        let mut g = a * b.transpose();
        match *self {
            Self::Linear => {}
            Self::Gaussian { gamma } => {
                let na: Vec<f64> = (0..a.nrows()).map(|i| a.row(i).iter().map(|v| v * v).sum()).collect();
                let nb: Vec<f64> = (0..b.nrows()).map(|i| b.row(i).iter().map(|v| v * v).sum()).collect();
                for j in 0..g.ncols() {
                    for i in 0..g.nrows() {
                        let d2 = (na[i] + nb[j] - 2.0 * g[(i, j)]).max(0.0);
                        g[(i, j)] = (-gamma * d2).exp();
                    }
                }
            }
            Self::Polynomial { degree, gamma, coef0 } => {
                for j in 0..g.ncols() {
                    for i in 0..g.nrows() {
                        g[(i, j)] = (gamma * g[(i, j)] + coef0).powi(degree as i32);
                    }
                }
            }
            Self::GaussianMedian => return Err(unresolved()),
        }
        Ok(g)
    }

    /// Reverse mode through $K = k(X, X)$: given $D = \partial J / \partial K$
    /// (any `n x n` matrix), returns $\partial J / \partial X$ `(n, d)`. Both
    /// arguments of every $K_{ij}$ depend on $X$ (spec 1.4.2):
    ///
    /// - linear: $(D + D^\top) X$;
    /// - Gaussian: $S = (D + D^\top) \circ K$, then $-2\gamma(\mathrm{diag}(S\mathbf 1) X - S X)$;
    /// - polynomial: $F = D \circ c\gamma(\gamma X X^\top + c_0)^{\circ(c-1)}$, then $(F + F^\top) X$
    ///   (the power is taken directly, not as the paper's $K^{\circ (c-1)/c}$,
    ///   which fails for negative bases).
    ///
    /// `k` must be `self.gram(x)`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an unresolved `GaussianMedian`.
    pub fn backward(&self, x: MatRef<'_, f64>, k: MatRef<'_, f64>, d: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let n = x.nrows();
        match *self {
            Self::Linear => {
                let s = Mat::from_fn(n, n, |i, j| d[(i, j)] + d[(j, i)]);
                Ok(&s * x)
            }
            Self::Gaussian { gamma } => {
                let s = Mat::from_fn(n, n, |i, j| (d[(i, j)] + d[(j, i)]) * k[(i, j)]);
                let sx = &s * x;
                let row_sums: Vec<f64> = (0..n).map(|i| s.row(i).iter().sum()).collect();
                Ok(Mat::from_fn(n, x.ncols(), |i, c| -2.0 * gamma * (row_sums[i] * x[(i, c)] - sx[(i, c)])))
            }
            Self::Polynomial { degree, gamma, coef0 } => {
                let g = x * x.transpose();
                let c = degree as f64;
                let f = Mat::from_fn(n, n, |i, j| {
                    d[(i, j)] * c * gamma * (gamma * g[(i, j)] + coef0).powi(degree as i32 - 1)
                });
                let s = Mat::from_fn(n, n, |i, j| f[(i, j)] + f[(j, i)]);
                Ok(&s * x)
            }
            Self::GaussianMedian => Err(unresolved()),
        }
    }
}

fn unresolved() -> Error {
    Error::InvalidParameter {
        name: "kernel",
        value: "gaussian-median".into(),
        expected: "a resolved kernel (gaussian-median is resolved at fit)",
    }
}

/// Median of the pairwise squared distances between (up to 1000 evenly
/// spaced) rows of `x`; 0 for fewer than two rows.
///
/// Not `okr_kernels::median_sq_distance`, on purpose: that one forms the
/// distances from a Gram block, $\|x_i\|^2 + \|x_j\|^2 - 2\langle x_i, x_j\rangle$
/// (cancellation for features far from 0), and above 1000 rows samples rows
/// $\lfloor i n / m \rfloor$ instead of every $\lceil n / 1000 \rceil$-th; both
/// take the upper median. Switching would move fitted KAE widths.
pub(crate) fn median_sq_distance(x: MatRef<'_, f64>) -> f64 {
    let n = x.nrows();
    if n < 2 {
        return 0.0;
    }
    let step = n.div_ceil(1000);
    let idx: Vec<usize> = (0..n).step_by(step).collect();
    let mut d = Vec::with_capacity(idx.len() * (idx.len() - 1) / 2);
    for (a, &i) in idx.iter().enumerate() {
        for &j in &idx[a + 1..] {
            d.push((0..x.ncols()).map(|c| (x[(i, c)] - x[(j, c)]).powi(2)).sum::<f64>());
        }
    }
    let mid = d.len() / 2;
    let (_, m, _) = d.select_nth_unstable_by(mid, |a, b| a.total_cmp(b));
    *m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gram_matches_pointwise_definitions() {
        let x = Mat::from_fn(5, 3, |i, j| ((i * 3 + j * 7) % 5) as f64 / 3.0 - 0.6);
        let dot = |i: usize, j: usize| (0..3).map(|c| x[(i, c)] * x[(j, c)]).sum::<f64>();
        let d2 = |i: usize, j: usize| (0..3).map(|c| (x[(i, c)] - x[(j, c)]).powi(2)).sum::<f64>();
        let kernels = [
            LayerKernel::Linear,
            LayerKernel::Gaussian { gamma: 0.7 },
            LayerKernel::Polynomial { degree: 3, gamma: 0.5, coef0: -0.3 },
        ];
        for kern in kernels {
            let k = kern.gram(x.as_ref()).unwrap();
            for i in 0..5 {
                for j in 0..5 {
                    let want = match kern {
                        LayerKernel::Linear => dot(i, j),
                        LayerKernel::Gaussian { gamma } => (-gamma * d2(i, j)).exp(),
                        LayerKernel::Polynomial { degree, gamma, coef0 } => {
                            (gamma * dot(i, j) + coef0).powi(degree as i32)
                        }
                        LayerKernel::GaussianMedian => unreachable!(),
                    };
                    assert!((k[(i, j)] - want).abs() < 1e-12, "{kern:?} ({i},{j})");
                }
            }
        }
    }

    #[test]
    fn median_heuristic_on_a_line() {
        // Points 0, 1, 2: squared distances 1, 4, 1 -> median 1.
        let x = Mat::from_fn(3, 1, |i, _| i as f64);
        assert_eq!(median_sq_distance(x.as_ref()), 1.0);
        assert_eq!(LayerKernel::GaussianMedian.resolve(x.as_ref()), LayerKernel::Gaussian { gamma: 1.0 });
    }

    #[test]
    fn median_heuristic_is_exact_far_from_the_origin_and_samples_every_kth_row() {
        // Points 1e8 + (0, 1, 3): squared distances 1, 9, 4 -> median 4, exactly
        // (the Gram-block form loses these to cancellation at 1e16).
        let x = Mat::from_fn(3, 1, |i, _| 1e8 + [0.0, 1.0, 3.0][i]);
        assert_eq!(median_sq_distance(x.as_ref()), 4.0);
        // 2001 rows: every 3rd (0, 3, .., 1998, 667 rows), values i^2 / 100 here.
        let x = Mat::from_fn(2001, 1, |i, _| (i * i) as f64 / 100.0);
        let idx: Vec<usize> = (0..2001).step_by(3).collect();
        let mut d: Vec<f64> = Vec::new();
        for (a, &i) in idx.iter().enumerate() {
            for &j in &idx[a + 1..] {
                d.push((x[(i, 0)] - x[(j, 0)]).powi(2));
            }
        }
        d.sort_by(f64::total_cmp);
        assert_eq!(median_sq_distance(x.as_ref()), d[d.len() / 2]);
    }
}
