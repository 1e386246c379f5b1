//! The Gaussian (RBF) kernel, optionally with per-feature weights.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{DotKernel, Num, check_positive, impl_dot_kernel};
use crate::products::VectorRows;
use crate::{Error, Result};

/// The Gaussian kernel $k(x, y) = \exp(-\gamma \|x - y\|_W^2)$ with
/// $\|x - y\|_W^2 = \sum_f w_f (x_f - y_f)^2$ ($W = I$ unless feature
/// weights are set).
///
/// $\gamma = 1 / (2\sigma^2)$: build it from either ([`Gaussian::new`],
/// [`Gaussian::from_sigma2`]). Blocks use
/// $\|x - y\|_W^2 = \|x\|_W^2 + \|y\|_W^2 - 2\langle x, Wy\rangle$ with the inner
/// products from one GEMM (dense rows) or sparse product (CSR rows, label
/// sets) per tile; negative rounding residues are clamped to 0 and the Gram
/// diagonal is exactly 1. On [`LabelSets`](crate::LabelSets) the squared
/// distance is the (weighted) size of the symmetric difference.
///
/// **Standardized sparse data.** Standardizing features, $x \mapsto (x - m)/s$,
/// densifies sparse rows. The means cancel in a difference, so the same
/// kernel is obtained on the raw sparse rows with weights $w_f = 1/s_f^2$
/// ([`Gaussian::with_feature_scales`] or
/// [`Gaussian::with_feature_weights`]):
/// $\|(x - y)/s\|^2 = x^\top W x + y^\top W y - 2 x^\top W y$.
///
/// The weights must have one entry per feature of the rows the kernel is
/// applied to; the [`Kernel`](crate::Kernel) methods panic otherwise.
///
/// Serialized as `{"gamma": g}` or `{"gamma": g, "feature_weights": [..]}`;
/// deserialization also accepts `{"sigma2": s}` instead of `gamma`, and
/// validates like the constructors.
///
/// # Example
/// ```
/// use okr_kernels::{CsrRows, DenseRows, Gaussian, Kernel};
/// let k = Gaussian::from_sigma2(0.5)?; // gamma = 1
/// let x = DenseRows::from_rows(&[vec![0.0, 0.0], vec![1.0, 1.0]])?;
/// assert!((k.gram(&x)[(0, 1)] - (-2.0f64).exp()).abs() < 1e-15);
///
/// // Standardized features on sparse rows, without densifying:
/// let s = CsrRows::from_rows(2, vec![vec![(0, 2.0)], vec![(1, 4.0)]])?;
/// let kw = Gaussian::new(1.0)?.with_feature_scales(&[2.0, 4.0])?;
/// // ((2 - 0)/2)^2 + ((0 - 4)/4)^2 = 2
/// assert!((kw.eval(&s, 0, &s, 1) - (-2.0f64).exp()).abs() < 1e-15);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "GaussianRepr", into = "GaussianRepr")]
pub struct Gaussian {
    gamma: f64,
    feature_weights: Option<Vec<f64>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GaussianRepr {
    #[serde(default)]
    gamma: Option<f64>,
    #[serde(default)]
    sigma2: Option<f64>,
    #[serde(default)]
    feature_weights: Option<Vec<f64>>,
}

impl TryFrom<GaussianRepr> for Gaussian {
    type Error = Error;
    fn try_from(r: GaussianRepr) -> Result<Self> {
        let k = match (r.gamma, r.sigma2) {
            (Some(g), None) => Self::new(g)?,
            (None, Some(s)) => Self::from_sigma2(s)?,
            (g, _) => {
                return Err(Error::InvalidParameter {
                    name: "gamma",
                    value: g.unwrap_or(f64::NAN),
                    expected: "exactly one of gamma and sigma2",
                });
            }
        };
        match r.feature_weights {
            Some(w) => k.with_feature_weights(w),
            None => Ok(k),
        }
    }
}

impl From<Gaussian> for GaussianRepr {
    fn from(k: Gaussian) -> Self {
        Self { gamma: Some(k.gamma), sigma2: None, feature_weights: k.feature_weights }
    }
}

impl Gaussian {
    /// $k(x, y) = \exp(-\gamma\|x - y\|^2)$.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `gamma` is finite and `> 0`.
    pub fn new(gamma: f64) -> Result<Self> {
        Ok(Self { gamma: check_positive("gamma", gamma)?, feature_weights: None })
    }

    /// $k(x, y) = \exp(-\|x - y\|^2 / (2\sigma^2))$, i.e. $\gamma = 1/(2\sigma^2)$.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `sigma2` is finite and `> 0` (and
    /// the resulting `gamma` finite).
    pub fn from_sigma2(sigma2: f64) -> Result<Self> {
        check_positive("sigma2", sigma2)?;
        Self::new(0.5 / sigma2)
    }

    /// Sets the feature weights $w_f$: the squared distance becomes
    /// $\sum_f w_f (x_f - y_f)^2$. A weight of 0 ignores a feature.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if a weight is negative or not finite.
    pub fn with_feature_weights(mut self, weights: Vec<f64>) -> Result<Self> {
        if let Some(&bad) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(Error::InvalidParameter { name: "feature_weights", value: bad, expected: "finite and >= 0" });
        }
        self.feature_weights = Some(weights);
        Ok(self)
    }

    /// Sets the weights that standardize feature `f` by `scales[f]`
    /// (a standard deviation): $w_f = 1/s_f^2$, and $w_f = 1$ for $s_f = 0$
    /// (a feature constant in the training data is left unscaled, as
    /// scikit-learn's `StandardScaler` does; it can still differ on new rows).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if a scale is negative or not finite, or
    /// so small that $1/s_f^2$ overflows.
    pub fn with_feature_scales(self, scales: &[f64]) -> Result<Self> {
        let mut w = Vec::with_capacity(scales.len());
        for &s in scales {
            if !(s.is_finite() && s >= 0.0) {
                return Err(Error::InvalidParameter { name: "feature scale", value: s, expected: "finite and >= 0" });
            }
            w.push(if s == 0.0 { 1.0 } else { 1.0 / (s * s) });
        }
        self.with_feature_weights(w)
    }

    /// Removes the feature weights.
    pub fn without_feature_weights(mut self) -> Self {
        self.feature_weights = None;
        self
    }

    /// The bandwidth parameter $\gamma$.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The variance parameter $\sigma^2 = 1/(2\gamma)$.
    pub fn sigma2(&self) -> f64 {
        0.5 / self.gamma
    }

    /// The feature weights, if set.
    pub fn feature_weights(&self) -> Option<&[f64]> {
        self.feature_weights.as_deref()
    }
}

impl fmt::Display for Gaussian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gaussian(gamma={}", Num(self.gamma))?;
        if let Some(w) = &self.feature_weights {
            write!(f, ", {} feature weights", w.len())?;
        }
        f.write_str(")")
    }
}

impl DotKernel for Gaussian {
    fn weights(&self) -> Option<&[f64]> {
        self.feature_weights.as_deref()
    }

    #[inline(always)]
    fn transform(&self, dot: f64, na: f64, nb: f64) -> f64 {
        crate::math::exp(-self.gamma * (na + nb - 2.0 * dot).max(0.0))
    }

    fn self_value(&self, _: f64) -> f64 {
        1.0
    }

    fn eval_pair<R: VectorRows>(&self, a: &R, i: usize, b: &R, j: usize) -> f64 {
        (-self.gamma * R::pair_sqdist(a, i, b, j, self.weights())).exp()
    }
}

impl_dot_kernel!(Gaussian);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrRows, DenseRows, Kernel, LabelSets};

    #[test]
    fn constructors_validate() {
        assert!(Gaussian::new(0.0).is_err());
        assert!(Gaussian::new(f64::NAN).is_err());
        assert!(Gaussian::new(f64::INFINITY).is_err());
        assert!(Gaussian::from_sigma2(-1.0).is_err());
        assert!(Gaussian::from_sigma2(1e-320).is_err());
        assert_eq!(Gaussian::from_sigma2(2.0).unwrap().gamma(), 0.25);
        assert_eq!(Gaussian::new(0.25).unwrap().sigma2(), 2.0);
        let k = Gaussian::new(1.0).unwrap();
        assert!(k.clone().with_feature_weights(vec![1.0, -1.0]).is_err());
        assert!(k.clone().with_feature_weights(vec![f64::NAN]).is_err());
        assert!(k.clone().with_feature_scales(&[1.0, -2.0]).is_err());
        assert_eq!(k.clone().with_feature_scales(&[2.0, 0.0]).unwrap().feature_weights(), Some(&[0.25, 1.0][..]));
        assert!(k.with_feature_scales(&[1e-200]).is_err());
    }

    #[test]
    fn serde_accepts_sigma2_and_rejects_bad_input() {
        let k: Gaussian = serde_json::from_str(r#"{"sigma2": 0.5}"#).unwrap();
        assert_eq!(k, Gaussian::new(1.0).unwrap());
        assert_eq!(serde_json::to_string(&k).unwrap(), r#"{"gamma":1.0,"sigma2":null,"feature_weights":null}"#);
        assert!(serde_json::from_str::<Gaussian>(r#"{"gamma": -1}"#).is_err());
        assert!(serde_json::from_str::<Gaussian>(r#"{"gamma": 1, "sigma2": 1}"#).is_err());
        assert!(serde_json::from_str::<Gaussian>(r#"{}"#).is_err());
        assert!(serde_json::from_str::<Gaussian>(r#"{"gama": 1}"#).is_err());
        assert!(serde_json::from_str::<Gaussian>(r#"{"gamma": 1, "feature_weights": [1, -1]}"#).is_err());
    }

    #[test]
    fn gram_diagonal_is_exactly_one_and_sets_use_symmetric_difference() {
        let k = Gaussian::new(0.5).unwrap();
        let y = LabelSets::new(5, vec![vec![0, 1, 2], vec![2, 3], vec![]]).unwrap();
        let g = k.gram(&y);
        assert_eq!(g[(0, 0)], 1.0);
        assert!((g[(0, 1)] - (-0.5f64 * 3.0).exp()).abs() < 1e-15);
        assert!((g[(2, 0)] - (-1.5f64).exp()).abs() < 1e-15);
        let x = DenseRows::from_rows(&[vec![1e3, 1e3 + 1e-6], vec![1e3, 1e3]]).unwrap();
        let g = k.gram(&x);
        assert_eq!((g[(0, 0)], g[(1, 1)]), (1.0, 1.0));
        assert!(g[(0, 1)] <= 1.0);
    }

    #[test]
    #[should_panic(expected = "feature_weights length")]
    fn weights_of_wrong_length_panic() {
        let k = Gaussian::new(1.0).unwrap().with_feature_weights(vec![1.0]).unwrap();
        let x = CsrRows::from_rows(2, vec![vec![(0, 1.0)]]).unwrap();
        let _ = k.gram(&x);
    }

    #[test]
    fn display() {
        assert_eq!(Gaussian::new(0.5).unwrap().to_string(), "gaussian(gamma=0.5)");
        let k = Gaussian::new(2.0).unwrap().with_feature_weights(vec![1.0; 3]).unwrap();
        assert_eq!(k.to_string(), "gaussian(gamma=2.0, 3 feature weights)");
    }
}
