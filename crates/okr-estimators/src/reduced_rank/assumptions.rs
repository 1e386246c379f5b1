//! Empirical exponents of the reduced-rank paper's Assumptions 2 and 4
//! (Brogat-Motte et al., JMLR 2022, section 3 and Figure 1) for a known
//! signal covariance $M = \mathbb E[h^*(x)\otimes h^*(x)]$ and noise
//! covariance $E = \mathbb E[\varepsilon\otimes\varepsilon]$ on a
//! finite-dimensional output space.
//!
//! Figure 1 plots $p \mapsto \mu_p(M) = \langle v_p, M v_p\rangle$ and
//! $p \mapsto \mu_p(E) = \langle v_p, E v_p\rangle$ over the eigenvectors
//! $v_p$ of $M$ (descending). Under the polynomial decays of Assumption 5,
//! $\mu_p(M) \asymp p^{-s}$ and $\mu_p(E) \asymp p^{-e}$, Remark 5 gives
//! - Assumption 2 ($c_1 = \operatorname{Tr} M^\alpha < \infty$) with $\alpha = 2/s$;
//! - Assumption 4 ($c_3 M^{1-\gamma} \preceq E$) with $\gamma = 1 - e/s$.
//!
//! [`output_exponents`] fits $s$ and $e$ by least squares on log-log axes
//! over a range of $p$, clips $\alpha, \gamma$ to $[0, 1]$, and returns the
//! constants $c_1 = \sum_p \mu_p(M)^\alpha$ and the largest
//! $c_3$ with $c_3 M^{1-\gamma} \preceq E$, $c_3 = 1/\lambda_{\max}(E^{-1/2} M^{1-\gamma} E^{-1/2})$.
//! A matrix $M$ whose numerical rank $r$ is below the fit range is the
//! finite-rank case of Example 1: $\alpha = 0$ ($c_1 = r$), $\gamma = 1$ when
//! $E \succ 0$ ($c_3 = \lambda_{\min}(E)$).

use faer::{Mat, MatRef};

use crate::{Error, Result};

/// The fitted exponents and constants of Assumptions 2, 4 and 5.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputExponents {
    /// $\mu_p(M)$, descending (`d` values).
    pub mu_m: Vec<f64>,
    /// $\mu_p(E) = v_p^\top E v_p$ on $M$'s eigenvectors (`d` values).
    pub mu_e: Vec<f64>,
    /// Numerical rank of $M$ (eigenvalues above $10^{-12}\mu_1(M)$).
    pub rank: usize,
    /// Fitted decay of $\mu_p(M)$ (`inf` in the finite-rank case).
    pub s: f64,
    /// Fitted decay of $\mu_p(E)$.
    pub e: f64,
    /// Assumption 2 exponent $\alpha = \min(1, 2/s)$ (0 when finite rank).
    pub alpha: f64,
    /// Assumption 4 exponent $\gamma = 1 - e/s$ clipped to $[0, 1]$ (1 when finite rank).
    pub gamma: f64,
    /// $c_1 = \operatorname{Tr} M^\alpha$ (over the numerical rank).
    pub c1: f64,
    /// Largest $c_3$ with $c_3 M^{1-\gamma} \preceq E$ (`0` when $E$ is singular).
    pub c3: f64,
}

/// Least-squares slope of $\ln y$ against $\ln x$ over the points `(x, y)`
/// (both positive): the exponent $b$ of a power law $y \approx a x^b$. NaN
/// for fewer than two distinct `x`.
///
/// # Example
/// ```
/// use okr_estimators::reduced_rank::assumptions::log_log_slope;
/// let b = log_log_slope((1..=10).map(|p| (p as f64, 3.0 * (p as f64).powf(-1.5))));
/// assert!((b + 1.5).abs() < 1e-12);
/// ```
pub fn log_log_slope(points: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let pts: Vec<(f64, f64)> = points.into_iter().map(|(x, y)| (x.ln(), y.ln())).collect();
    let k = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    sxy / sxx
}

/// [`log_log_slope`] of `y[p - 1]` against `p` over `p` in `lo..=hi`
/// (1-based), skipping non-positive values.
fn log_slope(y: &[f64], lo: usize, hi: usize) -> f64 {
    log_log_slope((lo..=hi).filter(|&p| y[p - 1] > 0.0).map(|p| (p as f64, y[p - 1])))
}

/// The exponents of Assumptions 2 and 4 for the signal covariance `m` and
/// the noise covariance `e` (both symmetric `d x d`), the decays fitted over
/// `p` in `fit_range = (lo, hi)` (1-based, inclusive).
///
/// # Errors
/// [`Error::ShapeMismatch`] when the matrices are not square of one size;
/// [`Error::InvalidParameter`] unless `1 <= lo < hi <= d` (at least two
/// points); [`Error::Linalg`]
/// when an eigendecomposition fails.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::reduced_rank::assumptions::output_exponents;
/// // Figure 1 (right): mu_p(M) = p^-4, mu_p(E) = p^-8/7 in one basis.
/// let m = Mat::from_fn(50, 50, |i, j| if i == j { ((i + 1) as f64).powf(-4.0) } else { 0.0 });
/// let e = Mat::from_fn(50, 50, |i, j| if i == j { ((i + 1) as f64).powf(-8.0 / 7.0) } else { 0.0 });
/// let x = output_exponents(m.as_ref(), e.as_ref(), (1, 50))?;
/// assert!((x.alpha - 0.5).abs() < 1e-9 && (x.gamma - 5.0 / 7.0).abs() < 1e-9);
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub fn output_exponents(m: MatRef<'_, f64>, e: MatRef<'_, f64>, fit_range: (usize, usize)) -> Result<OutputExponents> {
    let d = m.nrows();
    for (what, got) in [("signal covariance columns", m.ncols()), ("noise covariance rows", e.nrows())] {
        if got != d {
            return Err(Error::ShapeMismatch { what, expected: d, got });
        }
    }
    if e.ncols() != d {
        return Err(Error::ShapeMismatch { what: "noise covariance columns", expected: d, got: e.ncols() });
    }
    let (lo, hi) = fit_range;
    if lo == 0 || lo >= hi || hi > d {
        return Err(Error::InvalidParameter {
            name: "fit_range",
            value: format!("({lo}, {hi})"),
            expected: "1 <= lo < hi <= d",
        });
    }
    let em = okr_linalg::eigh(m)?;
    let (mu_m, v) = (em.values().to_vec(), em.vectors());
    let ev = v.transpose() * e * v;
    let mu_e: Vec<f64> = (0..d).map(|p| ev[(p, p)]).collect();
    let top = mu_m[0].max(0.0);
    let rank = mu_m.iter().take_while(|&&x| x > 1e-12 * top).count();
    let ee = okr_linalg::eigh(e)?;
    let e_min = ee.values()[d - 1];
    if rank < hi {
        // Finite rank within the fit range (Example 1).
        let c3 = e_min.max(0.0);
        let e_dec = -log_slope_or_zero(&mu_e, lo, hi);
        return Ok(OutputExponents {
            mu_m,
            mu_e,
            rank,
            s: f64::INFINITY,
            e: e_dec,
            alpha: 0.0,
            gamma: 1.0,
            c1: rank as f64,
            c3,
        });
    }
    let s = -log_slope(&mu_m, lo, hi);
    let e_dec = -log_slope(&mu_e, lo, hi);
    let alpha = (2.0 / s).clamp(0.0, 1.0);
    let gamma = (1.0 - e_dec / s).clamp(0.0, 1.0);
    let c1 = mu_m[..rank].iter().map(|x| x.powf(alpha)).sum();
    let c3 = if e_min <= 0.0 {
        0.0
    } else {
        // E^{-1/2} M^{1-gamma} E^{-1/2}, both roots by eigendecomposition.
        let inv_sqrt = Mat::from_fn(d, d, |i, j| ee.vectors()[(i, j)] / ee.values()[j].sqrt());
        let inv_sqrt = &inv_sqrt * ee.vectors().transpose();
        let pw = Mat::from_fn(d, d, |i, j| v[(i, j)] * mu_m[j].max(0.0).powf(1.0 - gamma));
        let pw = &pw * v.transpose();
        let sandwich = &inv_sqrt * &pw * &inv_sqrt;
        let sym = Mat::from_fn(d, d, |i, j| 0.5 * (sandwich[(i, j)] + sandwich[(j, i)]));
        1.0 / okr_linalg::eigh(sym.as_ref())?.values()[0]
    };
    Ok(OutputExponents { mu_m, mu_e, rank, s, e: e_dec, alpha, gamma, c1, c3 })
}

/// [`log_slope`], or 0 when fewer than two positive points.
fn log_slope_or_zero(y: &[f64], lo: usize, hi: usize) -> f64 {
    if (lo..=hi).filter(|&p| y[p - 1] > 0.0).count() < 2 { 0.0 } else { log_slope(y, lo, hi) }
}
