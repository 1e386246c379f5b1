//! Kernel autoencoder layers from a kernel name and its options (the names
//! of [`KernelSpec::from_name`](okr_kernels::KernelSpec::from_name)): what
//! `okr fit --estimator kae|k2ae` and the Python `KAE` / `K2AE` build.
//! Inherent methods of [`LayerKernel`] and [`KaeParams`].

use okr_kernels::KernelOptions;

use super::{Kae, KaeParams, LayerKernel};
use crate::{Error, Result};

impl LayerKernel {
    /// The first-layer kernel of a finite [`Kae`] called `name`, with the
    /// parameters of `options` it reads:
    ///
    /// | name | layer kernel |
    /// |---|---|
    /// | `gaussian`, `rbf` | `Gaussian { gamma }` with $\gamma$ = `gamma`, else $1/(2\sigma^2)$ from `sigma2`; neither: `GaussianMedian` |
    /// | `linear` | `Linear` |
    /// | `polynomial`, `poly` | `Polynomial { degree, gamma, coef0 }`, $\gamma$ = `gamma` or 1 |
    ///
    /// A `sigma2` that is read is checked here (it is not kept, so a later
    /// error could only name the $\gamma$ derived from it); the other values
    /// are checked when the [`KaeParams`] holding the kernel are.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`kernel`) for any other name: the finite
    /// KAE computes its layers on dense codes, the Gram-only K2AE takes any
    /// kernel ([`KernelSpec::from_name`](okr_kernels::KernelSpec::from_name));
    /// (`sigma2`) for a Gaussian width given as a `sigma2` that is not finite
    /// and > 0.
    ///
    /// # Example
    /// ```
    /// use okr_estimators::kae::LayerKernel;
    /// use okr_kernels::KernelOptions;
    /// let opts = KernelOptions { gamma: None, sigma2: None, degree: 2, coef0: 1.0 };
    /// assert_eq!(LayerKernel::from_name("rbf", &opts)?, LayerKernel::GaussianMedian);
    /// let poly = LayerKernel::from_name("polynomial", &opts)?;
    /// assert_eq!(poly, LayerKernel::Polynomial { degree: 2, gamma: 1.0, coef0: 1.0 });
    /// assert!(LayerKernel::from_name("laplacian", &opts).is_err());
    /// let zero_width = KernelOptions { sigma2: Some(0.0), ..opts };
    /// assert!(LayerKernel::from_name("gaussian", &zero_width).unwrap_err().to_string().contains("sigma2"));
    /// Ok::<(), okr_estimators::Error>(())
    /// ```
    pub fn from_name(name: &str, options: &KernelOptions) -> Result<Self> {
        Ok(match name {
            "gaussian" | "rbf" => match (options.gamma, options.sigma2) {
                (Some(gamma), _) => Self::Gaussian { gamma },
                (None, Some(s2)) if s2.is_finite() && s2 > 0.0 => Self::Gaussian { gamma: 1.0 / (2.0 * s2) },
                (None, Some(s2)) => {
                    return Err(Error::InvalidParameter {
                        name: "sigma2",
                        value: s2.to_string(),
                        expected: "finite and > 0",
                    });
                }
                (None, None) => Self::GaussianMedian,
            },
            "linear" => Self::Linear,
            "polynomial" | "poly" => {
                Self::Polynomial { degree: options.degree, gamma: options.gamma.unwrap_or(1.0), coef0: options.coef0 }
            }
            other => {
                return Err(Error::InvalidParameter {
                    name: "kernel",
                    value: format!("{other:?}"),
                    expected: "gaussian (rbf), linear or polynomial (poly) for a finite KAE (K2AE takes any kernel)",
                });
            }
        })
    }
}

impl KaeParams {
    /// The parameters of an autoencoder with inner widths `hidden_dims`
    /// ($L$ = `hidden_dims.len() + 1` layers, the code is the last inner
    /// layer): `first` is the kernel of the first layer, the $L - 1$ others
    /// are Gaussian with the median heuristic (`GaussianMedian`), and every
    /// layer has the ridge $\lambda$ = `lambda`. The other parameters are
    /// [`Kae::params`]' defaults; set them with the builder.
    ///
    /// # Example
    /// ```
    /// use okr_estimators::ParamGuard;
    /// use okr_estimators::kae::{KaeParams, LayerKernel};
    /// let p = KaeParams::stacked(vec![8, 2], LayerKernel::Linear, 1e-3).max_iter(50);
    /// let checked = p.check_ref()?;
    /// assert_eq!(checked.n_layers(), 3);
    /// assert_eq!(checked.kernel(2), LayerKernel::GaussianMedian);
    /// Ok::<(), okr_estimators::Error>(())
    /// ```
    pub fn stacked(hidden_dims: Vec<usize>, first: LayerKernel, lambda: f64) -> Self {
        let inner = hidden_dims.len();
        Kae::params()
            .hidden_dims(hidden_dims)
            .kernels(std::iter::once(first).chain(std::iter::repeat_n(LayerKernel::GaussianMedian, inner)).collect())
            .lambdas(vec![lambda])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParamGuard;

    const OPTS: KernelOptions = KernelOptions { gamma: None, sigma2: None, degree: 3, coef0: 0.5 };

    #[test]
    fn every_name_gives_its_layer_kernel() {
        let with = |gamma, sigma2| KernelOptions { gamma, sigma2, ..OPTS };
        for name in ["gaussian", "rbf"] {
            assert_eq!(LayerKernel::from_name(name, &OPTS).unwrap(), LayerKernel::GaussianMedian);
            let given = LayerKernel::from_name(name, &with(Some(0.3), Some(8.0))).unwrap();
            assert_eq!(given, LayerKernel::Gaussian { gamma: 0.3 });
            let from_s2 = LayerKernel::from_name(name, &with(None, Some(2.0))).unwrap();
            assert_eq!(from_s2, LayerKernel::Gaussian { gamma: 0.25 });
        }
        assert_eq!(LayerKernel::from_name("linear", &with(Some(0.3), None)).unwrap(), LayerKernel::Linear);
        for name in ["polynomial", "poly"] {
            let unit = LayerKernel::from_name(name, &with(None, Some(2.0))).unwrap();
            assert_eq!(unit, LayerKernel::Polynomial { degree: 3, gamma: 1.0, coef0: 0.5 });
            let given = LayerKernel::from_name(name, &with(Some(0.3), None)).unwrap();
            assert_eq!(given, LayerKernel::Polynomial { degree: 3, gamma: 0.3, coef0: 0.5 });
        }
    }

    #[test]
    fn other_kernels_and_bad_values_are_errors() {
        for name in ["laplacian", "tanimoto", "gaussian-tanimoto", "cosine", ""] {
            let err = LayerKernel::from_name(name, &OPTS).unwrap_err();
            assert!(matches!(err, Error::InvalidParameter { name: "kernel", .. }), "{name}: {err}");
            assert!(err.to_string().contains(&format!("{name:?}")), "{err}");
        }
        // Values are checked with the parameters.
        let bad = LayerKernel::from_name("gaussian", &KernelOptions { gamma: Some(-1.0), ..OPTS }).unwrap();
        assert!(KaeParams::stacked(vec![2], bad, 1e-3).check_ref().is_err());
        let degree0 = LayerKernel::from_name("poly", &KernelOptions { degree: 0, ..OPTS }).unwrap();
        assert!(KaeParams::stacked(vec![2], degree0, 1e-3).check_ref().is_err());
    }

    #[test]
    fn stacked_layers() {
        for hidden in [vec![4], vec![6, 3], vec![5, 4, 2]] {
            let first = LayerKernel::Polynomial { degree: 2, gamma: 1.0, coef0: 1.0 };
            let p = KaeParams::stacked(hidden.clone(), first, 0.01);
            let c = p.check_ref().unwrap();
            assert_eq!(c.n_layers(), hidden.len() + 1);
            // Layers are 1-based.
            assert_eq!(c.kernel(1), first);
            for l in 2..=c.n_layers() {
                assert_eq!(c.kernel(l), LayerKernel::GaussianMedian, "layer {l}");
            }
            assert!((1..=c.n_layers()).all(|l| c.lambda(l) == 0.01));
        }
        assert!(KaeParams::stacked(vec![], LayerKernel::Linear, 1e-3).check_ref().is_err());
    }
}
