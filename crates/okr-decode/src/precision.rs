//! [`Precision`] of the decoding scores and the near-tie margin
//! [`f32_margin`] of single-precision scoring.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Arithmetic of the decoding scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Scores by an f64 GEMM (the reference).
    #[default]
    F64,
    /// Scores by an f32 GEMM, the shortlist re-scored in f64 (see
    /// [`CandidateDecoder`](crate::CandidateDecoder) and [`f32_margin`]).
    F32,
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "f64" => Ok(Self::F64),
            "f32" => Ok(Self::F32),
            _ => Err(Error::InvalidParameter { name: "precision", value: s.into(), expected: "f64 or f32" }),
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::F64 => "f64",
            Self::F32 => "f32",
        })
    }
}

/// How many candidates beyond `top_k` each row keeps, per candidate tile, by
/// its f32 scores for re-scoring in f64 under [`Precision::F32`].
pub const F32_SHORTLIST_EXTRA: usize = 7;

/// The near-tie margin of [`Precision::F32`] for one test row: if the f64
/// best candidate's score is lower than every other candidate's by more than
///
/// $$\delta_t = 4\,\gamma_{r+4}\,\|c_t\|_2\,\max_c \|g_c\|_2 + 2^{-50} \max_c |k(c,c)|,
/// \qquad \gamma_n = \frac{n u}{1 - n u},\; u = 2^{-24},$$
///
/// the f32 decision is the f64 decision. Here `coef_norm` is
/// $\|c_t\|_2$ (the row's coefficients, length $r$ = `n_atoms`),
/// `max_atom_norm` is the largest column norm of the atom products $G$ and
/// `max_norm` is $\max_c |k(c,c)|$. When the decoder multiplies the chain
/// candidates first ([`ChainOrder::CandidatesFirst`](crate::ChainOrder)),
/// the score GEMM's factors are the kernel row $k_x(x_t, X_e)$ and the
/// folded candidates $F = M G$ instead: then $r$ is the number of expansion
/// rows $e$, `coef_norm` is $\|k_x(x_t, X_e)\|_2$ and `max_atom_norm` the
/// largest column norm of $F$ ([`ChainPlan::order`](crate::ChainPlan) says
/// which order ran).
///
/// Why: each f32 score is within $2\gamma_{r+2}\sum_i |c_{ti} g_{ic}|$
/// (rounding of $c_t$ and $G$ to f32 and any-order f32 summation) plus the
/// f64 rounding of adding $k(c,c)$ of the exact score, and the f64 scores
/// (GEMM and the shortlist's dot products) are within the f64 analogue;
/// Cauchy-Schwarz bounds the sum. (Candidates first, the shortlist reads
/// $F$ as a scaled pair of f32 matrices that holds each entry to $2^{-48}$ of
/// its column's largest, adding at most $2^{-47} \sqrt{e}\, \|k_x\|\, \|F_c\|$,
/// which the factor 4 covers.) With a gap above $\delta_t$ the f64 best
/// is the strict f32 best, so it is in the shortlist and wins the re-scoring.
/// Conversely, the f64 best is missed only when `top_k + 7` candidates of
/// its candidate tile lie within $\delta_t$ of it, or when a shortlisted
/// candidate ties it to within f64 rounding. The bound is worst-case
/// (rounding errors of random sign typically grow like $\sqrt r$, not $r$);
/// `cargo xtask bench --precision` reports differing decisions against it.
/// Returns infinity when $(r+4)u \ge 1$.
///
/// # Example
/// ```
/// let m = okr_decode::f32_margin(1000, 2.0, 3.0, 1.0);
/// assert!(m > 4.0 * 1004.0 * 2f64.powi(-24) * 6.0 && m < 1.5e-3);
/// ```
pub fn f32_margin(n_atoms: usize, coef_norm: f64, max_atom_norm: f64, max_norm: f64) -> f64 {
    let nu = (n_atoms as f64 + 4.0) * f64::from(f32::EPSILON) / 2.0;
    if nu >= 1.0 {
        return f64::INFINITY;
    }
    4.0 * nu / (1.0 - nu) * coef_norm * max_atom_norm + max_norm.abs() * 2f64.powi(-50)
}
