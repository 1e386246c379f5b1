use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{LltRegularization, cholesky_in_place, cholesky_in_place_scratch};
use faer::{Mat, MatMut, MatRef, Par};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// How [`Cholesky::factor`] retries a matrix that does not factor.
///
/// | Name | Default | Purpose |
/// |---|---|---|
/// | `lambda` | `NaN` | the caller's ridge, only used in the error message |
/// | `initial_jitter` | `1e-12` | first jitter, relative to the mean diagonal |
/// | `max_attempts` | `6` | retries after the first attempt (jitter x10 each) |
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JitterPolicy {
    /// Ridge parameter the matrix was built with (reported in errors).
    pub lambda: f64,
    /// First jitter, as a fraction of the mean diagonal entry.
    pub initial_jitter: f64,
    /// Number of jittered retries after the plain attempt.
    pub max_attempts: usize,
}

impl Default for JitterPolicy {
    fn default() -> Self {
        Self { lambda: f64::NAN, initial_jitter: 1e-12, max_attempts: 6 }
    }
}

impl JitterPolicy {
    /// The default policy, reporting `lambda` in errors.
    pub fn with_lambda(lambda: f64) -> Self {
        Self { lambda, ..Self::default() }
    }
}

/// What happened during a factorization that succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SolveInfo {
    /// Absolute jitter added to the diagonal (0 when the plain matrix factored).
    pub jitter: f64,
    /// Number of factorization attempts (1 when no retry was needed).
    pub attempts: usize,
}

/// Lower Cholesky factor $L$ of $A + \epsilon I = L L^\top$.
///
/// # Example
/// ```
/// use faer::{Mat, Par};
/// use okr_linalg::{Cholesky, JitterPolicy};
/// let a = Mat::from_fn(3, 3, |i, j| if i == j { 4.0 } else { 1.0 });
/// let (chol, info) = Cholesky::factor(a.as_ref(), JitterPolicy::default())?;
/// assert_eq!(info.attempts, 1);
/// let b = Mat::from_fn(3, 1, |i, _| i as f64);
/// let x = chol.solve(b.as_ref(), Par::Seq);
/// let r = &a * &x - &b;
/// assert!(r.norm_max() < 1e-12);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cholesky {
    #[serde(with = "packed_lower")]
    l: Mat<f64>,
    jitter: f64,
}

/// Serializes the factor as its packed lower triangle (column by column),
/// half the size of the full matrix.
mod packed_lower {
    use faer::Mat;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

    #[derive(Serialize, Deserialize)]
    struct Packed {
        n: usize,
        lower: Vec<f64>,
    }

    pub fn serialize<S: Serializer>(l: &Mat<f64>, s: S) -> Result<S::Ok, S::Error> {
        let n = l.nrows();
        let mut lower = Vec::with_capacity(n * (n + 1) / 2);
        for j in 0..n {
            lower.extend(l.col(j).iter().skip(j).copied());
        }
        Packed { n, lower }.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Mat<f64>, D::Error> {
        let p = Packed::deserialize(d)?;
        if p.n.checked_mul(p.n + 1).map(|v| v / 2) != Some(p.lower.len()) {
            return Err(D::Error::custom(format!("packed factor has {} entries, expected n = {}", p.lower.len(), p.n)));
        }
        let mut l = Mat::zeros(p.n, p.n);
        let mut it = p.lower.into_iter();
        for j in 0..p.n {
            for i in j..p.n {
                l[(i, j)] = it.next().unwrap_or(0.0);
            }
        }
        Ok(l)
    }
}

impl Cholesky {
    /// Factors a copy of the symmetric matrix `a` (only its lower triangle is read).
    ///
    /// # Errors
    /// [`Error::NonFinite`] for NaN/inf entries, [`Error::NotPsd`] when no
    /// attempt of `policy` factors.
    ///
    /// # Panics
    /// If `a` is not square.
    #[track_caller]
    pub fn factor(a: MatRef<'_, f64>, policy: JitterPolicy) -> Result<(Self, SolveInfo)> {
        assert_eq!(a.nrows(), a.ncols(), "Cholesky::factor needs a square matrix");
        Self::factor_in_place(a.to_owned(), policy, Par::rayon(0))
    }

    /// Factors `a`, reusing its storage for the factor. Only the lower
    /// triangle of `a` is read. When `policy` allows retries, a copy of `a`
    /// is kept while factoring so that a jittered retry can start from the
    /// original matrix (faer's in-place routine writes to the whole matrix);
    /// use [`Cholesky::factor_with`] to rebuild the matrix on demand instead
    /// and save that copy. With `max_attempts = 0` no copy is made.
    ///
    /// # Errors
    /// As [`Cholesky::factor`].
    ///
    /// # Panics
    /// If `a` is not square.
    #[track_caller]
    pub fn factor_in_place(a: Mat<f64>, policy: JitterPolicy, par: Par) -> Result<(Self, SolveInfo)> {
        assert_eq!(a.nrows(), a.ncols(), "Cholesky::factor_in_place needs a square matrix");
        let backup = (policy.max_attempts > 0).then(|| a.clone());
        let mut first = Some(a);
        let build = move || match first.take() {
            Some(a) => a,
            None => backup.as_ref().expect("a retry happens only when max_attempts > 0").clone(),
        };
        Self::factor_with(build, policy, par)
    }

    /// Factors the matrix returned by `build`, calling `build` again (and
    /// adding jitter) only when an attempt fails. The success path makes no
    /// copy of the `n x n` matrix. Only the lower triangle is read.
    ///
    /// # Errors
    /// As [`Cholesky::factor`].
    ///
    /// # Panics
    /// If `build` returns a non-square matrix.
    ///
    /// # Example
    /// ```
    /// use faer::{Mat, Par};
    /// use okr_linalg::{Cholesky, JitterPolicy};
    /// // A rank-one Gram needs jitter; it is rebuilt for each retry.
    /// let build = || Mat::from_fn(3, 3, |_, _| 1.0);
    /// let (chol, info) = Cholesky::factor_with(build, JitterPolicy::default(), Par::Seq)?;
    /// assert!(info.attempts > 1 && chol.jitter() > 0.0);
    /// Ok::<(), okr_linalg::Error>(())
    /// ```
    #[track_caller]
    pub fn factor_with(
        mut build: impl FnMut() -> Mat<f64>,
        policy: JitterPolicy,
        par: Par,
    ) -> Result<(Self, SolveInfo)> {
        let mut a = build();
        assert_eq!(a.nrows(), a.ncols(), "Cholesky::factor_with needs a square matrix");
        let n = a.nrows();
        if !a.is_all_finite() {
            return Err(Error::NonFinite { what: "matrix to factor" });
        }
        let mean_diag = if n == 0 { 0.0 } else { (0..n).map(|i| a[(i, i)].abs()).sum::<f64>() / n as f64 };
        let scale = if mean_diag > 0.0 { mean_diag } else { 1.0 };

        let mut buf = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, Default::default()));
        let mut jitter = 0.0;
        let mut last_pivot = 0;
        for attempt in 0..=policy.max_attempts {
            if attempt > 0 {
                jitter = scale * policy.initial_jitter * 10f64.powi(attempt as i32 - 1);
                a = build();
                for i in 0..n {
                    a[(i, i)] += jitter;
                }
            }
            let res = cholesky_in_place(
                a.as_mut(),
                LltRegularization::default(),
                par,
                MemStack::new(&mut buf),
                Default::default(),
            );
            match res {
                Ok(_) => {
                    zero_upper(a.as_mut());
                    return Ok((Self { l: a, jitter }, SolveInfo { jitter, attempts: attempt + 1 }));
                }
                Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index }) => {
                    last_pivot = index;
                }
            }
        }
        Err(Error::NotPsd { lambda: policy.lambda, jitter, pivot: last_pivot })
    }

    /// Dimension `n` of the factored `n x n` matrix.
    pub fn dim(&self) -> usize {
        self.l.nrows()
    }

    /// The lower-triangular factor $L$ (upper triangle zero).
    pub fn l(&self) -> MatRef<'_, f64> {
        self.l.as_ref()
    }

    /// Jitter that was added to the diagonal before the factorization succeeded.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }
}

fn zero_upper(mut a: MatMut<'_, f64>) {
    for j in 1..a.ncols() {
        a.as_mut().col_mut(j).subrows_mut(0, j).fill(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_deficient_matrix_factors_with_jitter() {
        // Two identical rows: singular, factors only with jitter.
        let x = Mat::from_fn(4, 2, |i, j| ((i % 2) + j) as f64);
        let a = &x * x.transpose();
        let (chol, info) = Cholesky::factor(a.as_ref(), JitterPolicy::default()).unwrap();
        assert!(info.attempts > 1);
        assert!(info.jitter > 0.0);
        let rec = chol.l() * chol.l().transpose();
        let mut shifted = a.clone();
        for i in 0..4 {
            shifted[(i, i)] += info.jitter;
        }
        let err = (&rec - &shifted).norm_max();
        assert!(err < 1e-10, "{err} {info:?} {rec:?} {shifted:?}");
    }

    #[test]
    fn indefinite_matrix_names_lambda() {
        let a = Mat::from_fn(2, 2, |i, j| if i == j { -1.0 } else { 0.0 });
        let err = Cholesky::factor(a.as_ref(), JitterPolicy::with_lambda(1e-3)).unwrap_err();
        assert!(matches!(err, Error::NotPsd { lambda, .. } if lambda == 1e-3));
        assert!(err.to_string().contains("lambda = 1e-3"));
    }

    #[test]
    fn serde_round_trip_keeps_factor() {
        let a = Mat::from_fn(5, 5, |i, j| if i == j { 6.0 } else { 1.0 / (1 + i + j) as f64 });
        let (chol, _) = Cholesky::factor(a.as_ref(), JitterPolicy::default()).unwrap();
        let json = serde_json::to_string(&chol).unwrap();
        let back: Cholesky = serde_json::from_str(&json).unwrap();
        assert_eq!(back.l(), chol.l());
        assert!(serde_json::from_str::<Cholesky>(r#"{"l":{"n":3,"lower":[1.0]},"jitter":0.0}"#).is_err());
    }

    #[test]
    fn nan_is_rejected() {
        let mut a = Mat::<f64>::identity(3, 3);
        a[(2, 1)] = f64::NAN;
        assert!(matches!(Cholesky::factor(a.as_ref(), JitterPolicy::default()), Err(Error::NonFinite { .. })));
    }
}
