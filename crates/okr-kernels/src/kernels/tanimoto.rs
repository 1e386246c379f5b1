//! The Tanimoto kernel and the Gaussian-Tanimoto kernel.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{DotKernel, Num, check_positive, impl_dot_kernel};
use crate::{Error, Result};

/// $T(x, y)$ from the inner product and the squared norms; 1 for two zero
/// vectors.
#[inline(always)]
fn tanimoto(dot: f64, na: f64, nb: f64) -> f64 {
    if na == 0.0 && nb == 0.0 { 1.0 } else { dot / (na + nb - dot) }
}

/// The Tanimoto (generalized Jaccard) kernel
/// $T(x, y) = \dfrac{\langle x, y \rangle}{\|x\|^2 + \|y\|^2 - \langle x, y \rangle}$.
///
/// On binary vectors and [`LabelSets`](crate::LabelSets) it is the Jaccard
/// index $|A \cap B| / |A \cup B|$. Two zero vectors (two empty sets) have
/// $T = 1$ by convention (the limit of $T(x, x)$; this keeps $T(x, x) = 1$
/// for every $x$ and the kernel positive semi-definite); a zero vector and a
/// nonzero one have $T = 0$. The denominator is at least
/// $(\|x\|^2 + \|y\|^2)/2$, so it only vanishes in that case.
///
/// # Example
/// ```
/// use okr_kernels::{Kernel, LabelSets, Tanimoto};
/// let y = LabelSets::new(4, vec![vec![0, 1, 2], vec![1, 2, 3], vec![], vec![]])?;
/// let k = Tanimoto::new().gram(&y);
/// assert_eq!(k[(0, 1)], 0.5); // |{1,2}| / |{0,1,2,3}|
/// assert_eq!(k[(2, 3)], 1.0); // two empty sets
/// assert_eq!(k[(0, 2)], 0.0);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tanimoto;

impl Tanimoto {
    /// The Tanimoto kernel (it has no parameters).
    pub fn new() -> Self {
        Self
    }
}

impl fmt::Display for Tanimoto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tanimoto")
    }
}

impl DotKernel for Tanimoto {
    #[inline(always)]
    fn transform(&self, dot: f64, na: f64, nb: f64) -> f64 {
        tanimoto(dot, na, nb)
    }

    fn self_value(&self, _: f64) -> f64 {
        1.0
    }
}

impl_dot_kernel!(Tanimoto);

/// The Gaussian-Tanimoto kernel
/// $k(x, y) = \exp\big(-2\gamma\,(1 - T(x, y))\big)$, with $T$ the
/// [`Tanimoto`] kernel.
///
/// Since $T(x, x) = 1$, the Tanimoto feature map $\phi$ has unit norm and
/// $\|\phi(x) - \phi(y)\|^2 = 2 - 2T(x, y)$: this kernel is the Gaussian
/// kernel on that feature map, $\exp(-\gamma \|\phi(x) - \phi(y)\|^2)$, with
/// the same convention $\gamma = 1/(2\sigma^2)$ as [`Gaussian`](crate::Gaussian)
/// (so it is positive semi-definite and normalized, $k(x, x) = 1$). With
/// $\sigma^2 = 1$ it is $\exp(-(1 - T))$, the output kernel of the
/// metabolite experiments of the reduced-rank paper; the first author's code
/// writes it $\exp(-g \cdot 2(1 - T))$ with $g = \gamma$.
///
/// # Example
/// ```
/// use okr_kernels::{GaussianTanimoto, Kernel, LabelSets};
/// let y = LabelSets::new(4, vec![vec![0, 1, 2], vec![1, 2, 3]])?;
/// let k = GaussianTanimoto::from_sigma2(1.0)?; // gamma = 0.5
/// assert!((k.eval(&y, 0, &y, 1) - (-0.5f64).exp()).abs() < 1e-15); // T = 0.5
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "GaussianTanimotoRepr", into = "GaussianTanimotoRepr")]
pub struct GaussianTanimoto {
    gamma: f64,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GaussianTanimotoRepr {
    #[serde(default)]
    gamma: Option<f64>,
    #[serde(default)]
    sigma2: Option<f64>,
}

impl TryFrom<GaussianTanimotoRepr> for GaussianTanimoto {
    type Error = Error;
    fn try_from(r: GaussianTanimotoRepr) -> Result<Self> {
        match (r.gamma, r.sigma2) {
            (Some(g), None) => Self::new(g),
            (None, Some(s)) => Self::from_sigma2(s),
            (g, _) => Err(Error::InvalidParameter {
                name: "gamma",
                value: g.unwrap_or(f64::NAN),
                expected: "exactly one of gamma and sigma2",
            }),
        }
    }
}

impl From<GaussianTanimoto> for GaussianTanimotoRepr {
    fn from(k: GaussianTanimoto) -> Self {
        Self { gamma: Some(k.gamma), sigma2: None }
    }
}

impl GaussianTanimoto {
    /// $k(x, y) = \exp(-2\gamma(1 - T(x, y)))$.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `gamma` is finite and `> 0`.
    pub fn new(gamma: f64) -> Result<Self> {
        Ok(Self { gamma: check_positive("gamma", gamma)? })
    }

    /// $k(x, y) = \exp(-(1 - T(x, y))/\sigma^2)$, i.e. $\gamma = 1/(2\sigma^2)$.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `sigma2` is finite and `> 0` (and
    /// the resulting `gamma` finite).
    pub fn from_sigma2(sigma2: f64) -> Result<Self> {
        check_positive("sigma2", sigma2)?;
        Self::new(0.5 / sigma2)
    }

    /// The bandwidth parameter $\gamma$.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The variance parameter $\sigma^2 = 1/(2\gamma)$.
    pub fn sigma2(&self) -> f64 {
        0.5 / self.gamma
    }
}

impl fmt::Display for GaussianTanimoto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gaussian-tanimoto(gamma={})", Num(self.gamma))
    }
}

impl DotKernel for GaussianTanimoto {
    #[inline(always)]
    fn transform(&self, dot: f64, na: f64, nb: f64) -> f64 {
        crate::math::exp(-2.0 * self.gamma * (1.0 - tanimoto(dot, na, nb)))
    }

    fn self_value(&self, _: f64) -> f64 {
        1.0
    }
}

impl_dot_kernel!(GaussianTanimoto);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrRows, DenseRows, Kernel};

    #[test]
    fn tanimoto_zero_vector_convention() {
        let x = DenseRows::from_rows(&[vec![0.0, 0.0], vec![0.0, 0.0], vec![1.0, 0.0]]).unwrap();
        let k = Tanimoto.gram(&x);
        assert_eq!((k[(0, 1)], k[(0, 2)], k[(2, 2)]), (1.0, 0.0, 1.0));
        assert_eq!(Tanimoto.eval(&x, 0, &x, 1), 1.0);
        assert_eq!(Tanimoto.diag(&x), vec![1.0; 3]);
    }

    #[test]
    fn gaussian_tanimoto_is_gaussian_on_unit_feature_map() {
        let x = CsrRows::from_rows(3, vec![vec![(0, 1.0), (1, 2.0)], vec![(1, 1.0), (2, 1.0)]]).unwrap();
        let k = GaussianTanimoto::new(0.7).unwrap();
        let t = Tanimoto.eval(&x, 0, &x, 1);
        assert!((t - 2.0 / (5.0 + 2.0 - 2.0)).abs() < 1e-15);
        assert!((k.eval(&x, 0, &x, 1) - (-0.7 * (2.0 - 2.0 * t)).exp()).abs() < 1e-15);
        assert_eq!(GaussianTanimoto::from_sigma2(1.0).unwrap().gamma(), 0.5);
        assert_eq!(k.sigma2(), 0.5 / 0.7);
        assert!(GaussianTanimoto::new(-1.0).is_err());
        assert!(GaussianTanimoto::from_sigma2(0.0).is_err());
        assert_eq!(k.to_string(), "gaussian-tanimoto(gamma=0.7)");
    }
}
