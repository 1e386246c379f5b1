//! Multiple kernel learning: weights for a [`WeightedSum`](crate::combinators::WeightedSum)
//! of input kernels.
//!
//! - [`uniform_weights`]: $w_m = 1/p$ (uniform MKL, the average kernel).
//! - [`alignf_weights`]: ALIGNF (Cortes, Mohri and Rostamizadeh 2012,
//!   "Algorithms for learning kernels based on centered alignment",
//!   Proposition 9): the non-negative combination of the centred kernels
//!   $\tilde K_m = H K_m H$ ($H = I - \frac1n 1 1^\top$) whose centred
//!   alignment with the centred target kernel $\tilde K_Y$ is maximal. With
//!   $M_{ml} = \langle \tilde K_m, \tilde K_l \rangle_F$ and
//!   $a_m = \langle \tilde K_m, \tilde K_Y \rangle_F$ it is
//!   $$v^\star = \arg\min_{v \ge 0}\; v^\top M v - 2 v^\top a,
//!   \qquad w = v^\star / \|v^\star\|_2.$$
//!
//! The quadratic program is solved exactly by the active-set method of
//! Lawson and Hanson ([`nonnegative_qp`]).
//!
//! # Example
//! ```
//! use faer::Mat;
//! use okr_kernels::mkl::{alignf_weights, uniform_weights};
//! // The target is the first kernel: all the weight goes to it.
//! let k1 = Mat::from_fn(4, 4, |i, j| if i / 2 == j / 2 { 1.0 } else { 0.0 });
//! let k2 = Mat::from_fn(4, 4, |i, j| if i % 2 == j % 2 { 1.0 } else { 0.0 });
//! let w = alignf_weights(&[k1.as_ref(), k2.as_ref()], k1.as_ref())?;
//! assert!((w[0] - 1.0).abs() < 1e-12 && w[1].abs() < 1e-12);
//! assert_eq!(uniform_weights(4), vec![0.25; 4]);
//! Ok::<(), okr_kernels::Error>(())
//! ```

use faer::linalg::solvers::Solve;
use faer::{Mat, MatRef};

use crate::combinators::center_gram;
use crate::{Error, Result};

/// Uniform MKL weights, $1/p$ each.
pub fn uniform_weights(p: usize) -> Vec<f64> {
    vec![1.0 / p.max(1) as f64; p]
}

/// ALIGNF weights (unit Euclidean norm, non-negative) of the training Grams
/// `grams` (each `(n, n)`) for the target Gram `target` `(n, n)` (for IOKR,
/// the output Gram of the training outputs).
///
/// # Errors
/// [`Error::ShapeMismatch`] for no kernel or Grams of different sizes,
/// [`Error::NonFinite`] for NaN / infinite entries, [`Error::Mkl`] when no
/// kernel is positively aligned with the target (all weights 0).
pub fn alignf_weights(grams: &[MatRef<'_, f64>], target: MatRef<'_, f64>) -> Result<Vec<f64>> {
    let n = target.nrows();
    if grams.is_empty() {
        return Err(Error::ShapeMismatch { what: "number of kernels", expected: 1, got: 0 });
    }
    for g in grams.iter().chain(std::iter::once(&target)) {
        if (g.nrows(), g.ncols()) != (n, n) {
            return Err(Error::ShapeMismatch { what: "Gram size", expected: n, got: g.nrows().max(g.ncols()) });
        }
        if let Some(row) = (0..n).find(|&i| g.row(i).iter().any(|v| !v.is_finite())) {
            return Err(Error::NonFinite { what: "Gram matrix", row });
        }
    }
    let centred: Vec<Mat<f64>> = grams.iter().map(|g| center_gram(*g).0).collect();
    let (ty, _) = center_gram(target);
    let frob = |a: MatRef<'_, f64>, b: MatRef<'_, f64>| -> f64 {
        (0..n).map(|j| a.col(j).iter().zip(b.col(j).iter()).map(|(x, y)| x * y).sum::<f64>()).sum()
    };
    let p = grams.len();
    let m = Mat::from_fn(p, p, |k, l| frob(centred[k].as_ref(), centred[l].as_ref()));
    let a: Vec<f64> = centred.iter().map(|c| frob(c.as_ref(), ty.as_ref())).collect();
    let v = nonnegative_qp(m.as_ref(), &a)?;
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm == 0.0 {
        return Err(Error::Mkl("no kernel is positively aligned with the centred target kernel".into()));
    }
    Ok(v.iter().map(|x| x / norm).collect())
}

/// Solves $\min_{v \ge 0} v^\top M v - 2 v^\top a$ for a symmetric positive
/// semi-definite `m` `(p, p)` by the Lawson-Hanson active-set method: add the
/// coordinate with the largest positive gradient component $a - M v$, solve
/// the unconstrained problem on the active set, step back to feasibility
/// when a coordinate would turn negative. Terminates in finitely many steps.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `a` and `m` disagree, [`Error::Mkl`] when the
/// iteration limit `10 p + 10` is reached (rounding on a near-singular `M`).
pub fn nonnegative_qp(m: MatRef<'_, f64>, a: &[f64]) -> Result<Vec<f64>> {
    let p = a.len();
    if (m.nrows(), m.ncols()) != (p, p) {
        return Err(Error::ShapeMismatch { what: "QP matrix size", expected: p, got: m.nrows().max(m.ncols()) });
    }
    let scale = (0..p).map(|i| m[(i, i)].abs()).fold(0.0, f64::max).max(a.iter().fold(0.0, |s, x| s.max(x.abs())));
    let tol = 1e-12 * scale.max(f64::MIN_POSITIVE);
    let mut v = vec![0.0; p];
    let mut active = vec![false; p];
    let grad =
        |v: &[f64]| -> Vec<f64> { (0..p).map(|i| a[i] - (0..p).map(|j| m[(i, j)] * v[j]).sum::<f64>()).collect() };
    for _ in 0..10 * p + 10 {
        let w = grad(&v);
        let Some(j) = (0..p).filter(|&j| !active[j] && w[j] > tol).max_by(|&x, &y| w[x].total_cmp(&w[y])) else {
            return Ok(v);
        };
        active[j] = true;
        loop {
            let set: Vec<usize> = (0..p).filter(|&i| active[i]).collect();
            let mpp = Mat::from_fn(set.len(), set.len(), |r, c| m[(set[r], set[c])]);
            let rhs = Mat::from_fn(set.len(), 1, |r, _| a[set[r]]);
            let sol = mpp.partial_piv_lu().solve(&rhs);
            let mut s = vec![0.0; p];
            for (r, &i) in set.iter().enumerate() {
                s[i] = sol[(r, 0)];
            }
            if s.iter().any(|x| !x.is_finite()) {
                return Err(Error::Mkl("singular system in the active-set QP".into()));
            }
            if set.iter().all(|&i| s[i] > 0.0) {
                v = s;
                break;
            }
            // Step from v towards s until the first active coordinate hits 0.
            let alpha =
                set.iter().filter(|&&i| s[i] <= 0.0).map(|&i| v[i] / (v[i] - s[i])).fold(f64::INFINITY, f64::min);
            for i in 0..p {
                v[i] += alpha * (s[i] - v[i]);
                if active[i] && v[i] <= tol {
                    v[i] = 0.0;
                    active[i] = false;
                }
            }
            if !active.iter().any(|&b| b) {
                break;
            }
        }
    }
    Err(Error::Mkl(format!("the active-set QP did not terminate in {} steps", 10 * p + 10)))
}
