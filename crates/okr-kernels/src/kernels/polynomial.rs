//! The polynomial kernel.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{DotKernel, Num, check_positive, impl_dot_kernel};
use crate::{Error, Result};

/// The polynomial kernel $k(x, y) = (\gamma \langle x, y \rangle + c_0)^d$
/// (scikit-learn's `polynomial_kernel(X, Y, degree, gamma, coef0)`).
///
/// Parameters: `degree` $d \ge 1$, `gamma` $\gamma > 0$, `coef0`
/// $c_0 \ge 0$ (a negative offset would break positive semi-definiteness,
/// e.g. $d = 1$). Blocks raise one GEMM / sparse-product tile of inner
/// products to the power $d$ in place.
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, Kernel, Polynomial};
/// let k = Polynomial::new(2, 0.5, 1.0)?;
/// let x = DenseRows::from_rows(&[vec![1.0, 2.0], vec![2.0, 0.0]])?;
/// assert_eq!(k.gram(&x)[(0, 1)], (0.5 * 2.0 + 1.0f64).powi(2));
/// assert_eq!(k.to_string(), "polynomial(degree=2, gamma=0.5, coef0=1.0)");
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PolynomialRepr", into = "PolynomialRepr")]
pub struct Polynomial {
    degree: u32,
    gamma: f64,
    coef0: f64,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolynomialRepr {
    degree: u32,
    gamma: f64,
    coef0: f64,
}

impl TryFrom<PolynomialRepr> for Polynomial {
    type Error = Error;
    fn try_from(r: PolynomialRepr) -> Result<Self> {
        Self::new(r.degree, r.gamma, r.coef0)
    }
}

impl From<Polynomial> for PolynomialRepr {
    fn from(k: Polynomial) -> Self {
        Self { degree: k.degree, gamma: k.gamma, coef0: k.coef0 }
    }
}

impl Polynomial {
    /// $k(x, y) = (\gamma \langle x, y \rangle + c_0)^d$.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `degree >= 1` (and at most
    /// `i32::MAX`), `gamma` is finite and `> 0`, and `coef0` is finite and
    /// `>= 0`.
    pub fn new(degree: u32, gamma: f64, coef0: f64) -> Result<Self> {
        if degree == 0 || i32::try_from(degree).is_err() {
            return Err(Error::InvalidParameter {
                name: "degree",
                value: f64::from(degree),
                expected: "an integer in 1..=i32::MAX",
            });
        }
        check_positive("gamma", gamma)?;
        if !(coef0.is_finite() && coef0 >= 0.0) {
            return Err(Error::InvalidParameter { name: "coef0", value: coef0, expected: "finite and >= 0" });
        }
        Ok(Self { degree, gamma, coef0 })
    }

    /// The degree $d$.
    pub fn degree(&self) -> u32 {
        self.degree
    }

    /// The scale $\gamma$ of the inner product.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The offset $c_0$.
    pub fn coef0(&self) -> f64 {
        self.coef0
    }
}

impl fmt::Display for Polynomial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "polynomial(degree={}, gamma={}, coef0={})", self.degree, Num(self.gamma), Num(self.coef0))
    }
}

impl DotKernel for Polynomial {
    #[inline(always)]
    fn transform(&self, dot: f64, _: f64, _: f64) -> f64 {
        // `degree` fits an i32 (checked in `new`).
        (self.gamma * dot + self.coef0).powi(self.degree as i32)
    }

    fn self_value(&self, na: f64) -> f64 {
        self.transform(na, na, na)
    }
}

impl_dot_kernel!(Polynomial);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kernel, LabelSets};

    #[test]
    fn constructor_validates() {
        assert!(Polynomial::new(0, 1.0, 1.0).is_err());
        assert!(Polynomial::new(u32::MAX, 1.0, 1.0).is_err());
        assert!(Polynomial::new(2, 0.0, 1.0).is_err());
        assert!(Polynomial::new(2, 1.0, -1.0).is_err());
        assert!(Polynomial::new(2, 1.0, f64::NAN).is_err());
        let k = Polynomial::new(3, 2.0, 0.0).unwrap();
        assert_eq!((k.degree(), k.gamma(), k.coef0()), (3, 2.0, 0.0));
        assert!(serde_json::from_str::<Polynomial>(r#"{"degree":0,"gamma":1,"coef0":1}"#).is_err());
    }

    #[test]
    fn on_label_sets() {
        let y = LabelSets::new(3, vec![vec![0, 1], vec![1, 2]]).unwrap();
        let k = Polynomial::new(3, 1.0, 1.0).unwrap();
        assert_eq!(k.gram(&y)[(0, 1)], 8.0);
        assert_eq!(k.diag(&y), vec![27.0, 27.0]);
    }
}
