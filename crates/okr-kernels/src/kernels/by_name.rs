//! [`KernelSpec::from_name`]: a vector kernel from its name and parameters,
//! the one constructor behind the command line's `--input-kernel` and the
//! Python estimators' `kernel=` argument.

use super::check_positive;
use super::gaussian::Gaussian;
use super::laplacian::Laplacian;
use super::linear::Linear;
use super::polynomial::Polynomial;
use super::spec::KernelSpec;
use super::tanimoto::{GaussianTanimoto, Tanimoto};
use crate::{Error, Result};

/// The parameters of a kernel chosen by name ([`KernelSpec::from_name`]);
/// each kernel reads the ones it has and ignores the others (as
/// scikit-learn's `gamma` is ignored by a linear kernel).
///
/// | Name | Read by | Meaning |
/// |---|---|---|
/// | `gamma` | gaussian, laplacian, gaussian-tanimoto, polynomial | the width $\gamma$; `None`: `sigma2`, else the caller's default |
/// | `sigma2` | gaussian, laplacian, gaussian-tanimoto | the width as $\sigma^2$, $\gamma = 1/(2\sigma^2)$, used when `gamma` is `None` |
/// | `degree` | polynomial | the exponent $d \ge 1$ |
/// | `coef0` | polynomial | the offset $c_0$ |
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelOptions {
    /// $\gamma$, if given (it takes precedence over `sigma2`).
    pub gamma: Option<f64>,
    /// $\sigma^2$, if given: $\gamma = 1/(2\sigma^2)$.
    pub sigma2: Option<f64>,
    /// Polynomial degree $d$.
    pub degree: u32,
    /// Polynomial offset $c_0$.
    pub coef0: f64,
}

impl KernelSpec {
    /// The names [`from_name`](Self::from_name) accepts, each with its
    /// aliases: the kebab-case [`kind`](Self::kind) of every vector kernel,
    /// and scikit-learn's `rbf` and `poly`.
    pub const NAMES: [(&'static str, &'static [&'static str]); 6] = [
        ("gaussian", &["rbf"]),
        ("linear", &[]),
        ("laplacian", &[]),
        ("polynomial", &["poly"]),
        ("tanimoto", &[]),
        ("gaussian-tanimoto", &[]),
    ];

    /// The kernel called `name` (see [`NAMES`](Self::NAMES)) with the
    /// parameters of `options` it reads ([`KernelOptions`]):
    ///
    /// | name | kernel |
    /// |---|---|
    /// | `gaussian`, `rbf` | $\exp(-\gamma \lVert x - y \rVert^2)$ |
    /// | `linear` | $\langle x, y \rangle$ |
    /// | `laplacian` | $\exp(-\gamma \lVert x - y \rVert_1)$ |
    /// | `polynomial`, `poly` | $(\gamma \langle x, y \rangle + c_0)^d$ |
    /// | `tanimoto` | $T(x, y) = \langle x, y \rangle / (\lVert x\rVert^2 + \lVert y\rVert^2 - \langle x, y \rangle)$ |
    /// | `gaussian-tanimoto` | $\exp(-2\gamma (1 - T(x, y)))$ |
    ///
    /// The width is `gamma`, else $1/(2\sigma^2)$ from `sigma2` (Gaussian
    /// widths only: the polynomial kernel does not read `sigma2`), else
    /// `default_gamma()` (for example the median heuristic,
    /// [`median_heuristic_gamma`](crate::median_heuristic_gamma)), which is
    /// called only when a width is needed and not given.
    ///
    /// # Errors
    /// - [`Error::UnknownKernel`] for another name (its message lists the
    ///   accepted names);
    /// - [`Error::InvalidParameter`] for `sigma2`, `gamma` (given or
    ///   default), `degree` or `coef0` outside their ranges (`sigma2`,
    ///   `gamma`: finite and > 0; `degree`: 1 or more; `coef0`: finite and
    ///   >= 0), as the kernels' constructors.
    ///
    /// # Example
    /// ```
    /// use okr_kernels::{Error, KernelOptions, KernelSpec, Polynomial};
    /// let opts = KernelOptions { gamma: None, sigma2: Some(2.0), degree: 3, coef0: 1.0 };
    /// let k = KernelSpec::from_name("rbf", &opts, || unreachable!("sigma2 is given"))?;
    /// assert_eq!(k.to_string(), "gaussian(gamma=0.25)");
    /// let p = KernelSpec::from_name("poly", &opts, || 0.5)?;
    /// assert_eq!(p, Polynomial::new(3, 0.5, 1.0)?.into());
    /// let err = KernelSpec::from_name("cosine", &opts, || 1.0).unwrap_err();
    /// assert!(matches!(err, Error::UnknownKernel { .. }));
    /// Ok::<(), Error>(())
    /// ```
    pub fn from_name(name: &str, options: &KernelOptions, default_gamma: impl FnOnce() -> f64) -> Result<Self> {
        Ok(match name {
            "gaussian" | "rbf" => Gaussian::new(gaussian_width(options, default_gamma)?)?.into(),
            "linear" => Linear.into(),
            "laplacian" => Laplacian::new(gaussian_width(options, default_gamma)?)?.into(),
            "polynomial" | "poly" => {
                let gamma = options.gamma.unwrap_or_else(default_gamma);
                Polynomial::new(options.degree, gamma, options.coef0)?.into()
            }
            "tanimoto" => Tanimoto::new().into(),
            "gaussian-tanimoto" => GaussianTanimoto::new(gaussian_width(options, default_gamma)?)?.into(),
            other => return Err(Error::UnknownKernel { name: other.to_string() }),
        })
    }
}

/// A Gaussian width: `gamma`, else $1/(2\sigma^2)$ from a valid `sigma2`, else the default.
fn gaussian_width(options: &KernelOptions, default_gamma: impl FnOnce() -> f64) -> Result<f64> {
    Ok(match (options.gamma, options.sigma2) {
        (Some(g), _) => g,
        (None, Some(s2)) => 1.0 / (2.0 * check_positive("sigma2", s2)?),
        (None, None) => default_gamma(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: KernelOptions = KernelOptions { gamma: None, sigma2: None, degree: 2, coef0: 0.5 };

    /// Every name and alias gives the kernel of its constructor, with the
    /// given width, the width from sigma2, or the default width.
    #[test]
    fn every_name_builds_its_kernel() {
        let with = |gamma, sigma2| KernelOptions { gamma, sigma2, ..OPTS };
        for (name, aliases) in KernelSpec::NAMES {
            for n in std::iter::once(name).chain(aliases.iter().copied()) {
                let given = KernelSpec::from_name(n, &with(Some(0.3), None), || panic!("gamma is given")).unwrap();
                let defaulted = KernelSpec::from_name(n, &OPTS, || 0.7).unwrap();
                let want = |g: f64| -> KernelSpec {
                    match name {
                        "gaussian" => Gaussian::new(g).unwrap().into(),
                        "linear" => Linear.into(),
                        "laplacian" => Laplacian::new(g).unwrap().into(),
                        "polynomial" => Polynomial::new(2, g, 0.5).unwrap().into(),
                        "tanimoto" => Tanimoto.into(),
                        "gaussian-tanimoto" => GaussianTanimoto::new(g).unwrap().into(),
                        _ => unreachable!("{name}"),
                    }
                };
                assert_eq!(given, want(0.3), "{n}");
                assert_eq!(defaulted, want(0.7), "{n}");
                assert_eq!(defaulted.kind(), name, "{n}");
                // sigma2 = 2 is gamma = 1/4 for the Gaussian widths; polynomial ignores it.
                let from_s2 = KernelSpec::from_name(n, &with(None, Some(2.0)), || 0.7).unwrap();
                let s2_gamma = if name == "polynomial" { 0.7 } else { 0.25 };
                assert_eq!(from_s2, want(s2_gamma), "{n}");
                // gamma takes precedence over sigma2.
                assert_eq!(KernelSpec::from_name(n, &with(Some(0.3), Some(2.0)), || 0.7).unwrap(), want(0.3), "{n}");
            }
        }
    }

    /// The default width is computed only for kernels that need one and
    /// were given none.
    #[test]
    fn default_width_only_when_needed() {
        for name in ["linear", "tanimoto"] {
            KernelSpec::from_name(name, &OPTS, || panic!("{name} has no width")).unwrap();
        }
        let s2 = KernelOptions { sigma2: Some(1.0), ..OPTS };
        KernelSpec::from_name("gaussian", &s2, || panic!("sigma2 is given")).unwrap();
    }

    /// Every bad parameter is a typed error naming it; unknown names list
    /// the accepted ones.
    #[test]
    fn bad_parameters_and_names() {
        let bad_width = [0.0, -1.0, f64::NAN, f64::INFINITY];
        for name in ["gaussian", "laplacian", "gaussian-tanimoto", "polynomial"] {
            for g in bad_width {
                let given = KernelOptions { gamma: Some(g), ..OPTS };
                let err = KernelSpec::from_name(name, &given, || 1.0).unwrap_err();
                assert!(matches!(err, Error::InvalidParameter { name: "gamma", .. }), "{name} {g}: {err}");
                let err = KernelSpec::from_name(name, &OPTS, || g).unwrap_err();
                assert!(matches!(err, Error::InvalidParameter { name: "gamma", .. }), "{name} default {g}: {err}");
            }
        }
        for name in ["gaussian", "laplacian", "gaussian-tanimoto"] {
            for s2 in bad_width {
                let opts = KernelOptions { sigma2: Some(s2), ..OPTS };
                let err = KernelSpec::from_name(name, &opts, || 1.0).unwrap_err();
                assert!(matches!(err, Error::InvalidParameter { name: "sigma2", .. }), "{name} {s2}: {err}");
            }
        }
        let degree0 = KernelOptions { degree: 0, ..OPTS };
        let err = KernelSpec::from_name("poly", &degree0, || 1.0).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "degree", .. }), "{err}");
        for c0 in [-1.0, f64::NAN] {
            let offset = KernelOptions { coef0: c0, ..OPTS };
            let err = KernelSpec::from_name("polynomial", &offset, || 1.0).unwrap_err();
            assert!(matches!(err, Error::InvalidParameter { name: "coef0", .. }), "{err}");
        }
        for name in ["cosine", "Gaussian", "", "wl", "weighted-sum"] {
            let err = KernelSpec::from_name(name, &OPTS, || 1.0).unwrap_err();
            assert_eq!(err, Error::UnknownKernel { name: name.to_string() });
            let msg = err.to_string();
            for (accepted, aliases) in KernelSpec::NAMES {
                assert!(msg.contains(accepted) && aliases.iter().all(|a| msg.contains(a)), "{msg}");
            }
        }
    }
}
