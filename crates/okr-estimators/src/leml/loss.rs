//! The three losses of LEML (Table 1 of Yu et al. 2014, with the corrected
//! logistic derivatives of spec 1.4).

use serde::{Deserialize, Serialize};

/// A loss $\ell(y, z)$ of a label value `y` and a score `z`, with its first
/// and second derivatives in the score.
///
/// | loss | $\ell(y, z)$ | $\ell'$ | $\ell''$ |
/// |---|---|---|---|
/// | `Squared` | $\tfrac12 (y - z)^2$ | $z - y$ | $1$ |
/// | `Logistic` | $\log(1 + e^{-yz})$ | $-y\,\sigma(-yz)$ | $y^2 \sigma(yz)\sigma(-yz)$ |
/// | `SquaredHinge` | $\max(0, 1 - yz)^2$ | $-2y \max(0, 1 - yz)$ | $2 y^2\, \mathbb{1}\[yz < 1\]$ (generalised) |
///
/// The paper's Table 1 prints the logistic derivatives with wrong signs; these
/// are the correct ones. Logistic and squared hinge expect $y \in \{-1, +1\}$;
/// the squared loss takes any real target (`{0, 1}` or `±1` in LEML).
///
/// # Example
/// ```
/// use okr_estimators::leml::Loss;
/// assert_eq!(Loss::Squared.value(1.0, 0.5), 0.125);
/// assert!((Loss::Logistic.value(1.0, 0.0) - 2f64.ln()).abs() < 1e-15);
/// assert_eq!(Loss::SquaredHinge.derivative(1.0, 2.0), 0.0);
/// assert_eq!(Loss::from_name("lr"), Some(Loss::Logistic));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Loss {
    /// Squared loss (`sq`).
    Squared,
    /// Logistic loss (`lr`), computed without overflow for any margin.
    Logistic,
    /// Squared hinge / L2-SVM loss (`sh`).
    SquaredHinge,
}

impl Loss {
    /// $\ell(y, z)$.
    #[inline]
    pub fn value(self, y: f64, z: f64) -> f64 {
        match self {
            Loss::Squared => 0.5 * (y - z) * (y - z),
            Loss::Logistic => {
                // log(1 + e^{-t}) without overflow: for t < 0 factor out e^{-t}.
                let t = y * z;
                if t >= 0.0 { (-t).exp().ln_1p() } else { -t + t.exp().ln_1p() }
            }
            Loss::SquaredHinge => {
                let m = (1.0 - y * z).max(0.0);
                m * m
            }
        }
    }

    /// $\partial \ell / \partial z$.
    #[inline]
    pub fn derivative(self, y: f64, z: f64) -> f64 {
        match self {
            Loss::Squared => z - y,
            Loss::Logistic => -y * sigmoid(-y * z),
            Loss::SquaredHinge => -2.0 * y * (1.0 - y * z).max(0.0),
        }
    }

    /// $\partial^2 \ell / \partial z^2$ (for the squared hinge, the generalised
    /// Hessian used by TRON).
    #[inline]
    pub fn second_derivative(self, y: f64, z: f64) -> f64 {
        match self {
            Loss::Squared => 1.0,
            Loss::Logistic => {
                let s = sigmoid(y * z);
                y * y * s * (1.0 - s)
            }
            Loss::SquaredHinge => {
                if y * z < 1.0 {
                    2.0 * y * y
                } else {
                    0.0
                }
            }
        }
    }

    /// Short name used by the CLI and result records: `sq`, `lr`, `sh`.
    ///
    /// # Example
    /// ```
    /// assert_eq!(okr_estimators::leml::Loss::SquaredHinge.name(), "sh");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Loss::Squared => "sq",
            Loss::Logistic => "lr",
            Loss::SquaredHinge => "sh",
        }
    }

    /// Parses a short name (`sq`, `lr`, `sh`).
    ///
    /// # Example
    /// ```
    /// assert_eq!(okr_estimators::leml::Loss::from_name("sq"), Some(okr_estimators::leml::Loss::Squared));
    /// assert_eq!(okr_estimators::leml::Loss::from_name("hinge"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "sq" => Some(Loss::Squared),
            "lr" => Some(Loss::Logistic),
            "sh" => Some(Loss::SquaredHinge),
            _ => None,
        }
    }
}

/// $\sigma(t) = 1 / (1 + e^{-t})$ without overflow.
#[inline]
fn sigmoid(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOSSES: [Loss; 3] = [Loss::Squared, Loss::Logistic, Loss::SquaredHinge];

    /// Central finite differences, away from the squared-hinge kink at yz = 1.
    #[test]
    fn derivatives_match_finite_differences() {
        let h = 1e-5;
        for loss in LOSSES {
            for y in [-1.0, 1.0] {
                for z in [-3.0, -0.7, 0.0, 0.3, 0.99 * y, 1.2 * y, 2.5, 50.0 * y, -50.0 * y] {
                    let fd1 = (loss.value(y, z + h) - loss.value(y, z - h)) / (2.0 * h);
                    let d1 = loss.derivative(y, z);
                    assert!((fd1 - d1).abs() <= 1e-7 * (1.0 + d1.abs()), "{loss:?} y={y} z={z}: {fd1} vs {d1}");
                    let fd2 = (loss.derivative(y, z + h) - loss.derivative(y, z - h)) / (2.0 * h);
                    let d2 = loss.second_derivative(y, z);
                    assert!((fd2 - d2).abs() <= 1e-6 * (1.0 + d2.abs()), "{loss:?} y={y} z={z}: {fd2} vs {d2}");
                }
            }
        }
        // Squared loss with {0, 1} targets.
        for (y, z) in [(0.0, 0.3), (1.0, -2.0)] {
            let fd1 = (Loss::Squared.value(y, z + h) - Loss::Squared.value(y, z - h)) / (2.0 * h);
            assert!((fd1 - Loss::Squared.derivative(y, z)).abs() < 1e-8);
        }
    }

    #[test]
    fn logistic_is_stable_at_large_margins() {
        assert_eq!(Loss::Logistic.value(1.0, 800.0), 0.0);
        assert!((Loss::Logistic.value(1.0, -800.0) - 800.0).abs() < 1e-9);
        assert!((Loss::Logistic.value(-1.0, 50.0) - (50.0 + (-50f64).exp())).abs() < 1e-9);
        assert!((Loss::Logistic.derivative(1.0, -800.0) + 1.0).abs() < 1e-15);
        assert_eq!(Loss::Logistic.second_derivative(1.0, 800.0), 0.0);
        assert!(Loss::Logistic.second_derivative(-1.0, 0.0) == 0.25);
    }

    #[test]
    fn squared_hinge_kink_uses_the_generalised_hessian() {
        assert_eq!(Loss::SquaredHinge.value(1.0, 1.0), 0.0);
        assert_eq!(Loss::SquaredHinge.derivative(1.0, 1.0), 0.0);
        assert_eq!(Loss::SquaredHinge.second_derivative(1.0, 1.0), 0.0);
        assert_eq!(Loss::SquaredHinge.second_derivative(1.0, 1.0 - 1e-12), 2.0);
        assert_eq!(Loss::SquaredHinge.value(-1.0, 0.5), 2.25);
    }

    #[test]
    fn names_round_trip() {
        for loss in LOSSES {
            assert_eq!(Loss::from_name(loss.name()), Some(loss));
        }
    }
}
