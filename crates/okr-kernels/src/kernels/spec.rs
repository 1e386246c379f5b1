//! [`KernelSpec`]: one serializable value for any kernel of this crate.

use std::fmt;

use faer::{MatMut, Par};
use serde::{Deserialize, Serialize};

use super::gaussian::Gaussian;
use super::laplacian::Laplacian;
use super::linear::Linear;
use super::polynomial::Polynomial;
use super::tanimoto::{GaussianTanimoto, Tanimoto};
use crate::combinators::WeightedSum;

/// Any vector kernel of this crate, as a tagged value: what fitted models
/// store and what the CLI builds.
///
/// Serialized as an externally tagged enum in kebab case, so that binary,
/// non-self-describing formats (postcard model files) read it back:
/// `{"gaussian":{"gamma":0.5,"sigma2":null,"feature_weights":null}}`,
/// `{"linear":null}`, `{"polynomial":{"degree":3,"gamma":1.0,"coef0":1.0}}`.
/// Absent fields may be omitted when writing JSON by hand. Deserialization validates the
/// parameters like the constructors do (and accepts `sigma2` instead of
/// `gamma` for the Gaussian kinds). [`Display`](fmt::Display) gives a
/// one-line description such as `gaussian(gamma=0.5)`.
///
/// It implements [`Kernel`](crate::Kernel) on every container by
/// dispatching to the wrapped kernel, once per call (blocks are not slowed
/// down by the dispatch).
///
/// # Example
/// ```
/// use okr_kernels::{Gaussian, Kernel, KernelSpec, LabelSets};
/// let spec = KernelSpec::from(Gaussian::from_sigma2(2.0)?);
/// let json = serde_json::to_string(&spec).unwrap();
/// assert_eq!(json, r#"{"gaussian":{"gamma":0.25,"sigma2":null,"feature_weights":null}}"#);
/// // Either width may be given when writing a spec by hand.
/// let by_hand: KernelSpec = serde_json::from_str(r#"{"gaussian":{"sigma2":2.0}}"#).unwrap();
/// assert_eq!(by_hand, spec);
/// let back: KernelSpec = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, spec);
/// assert_eq!(spec.to_string(), "gaussian(gamma=0.25)");
/// assert!(spec.is_normalized());
///
/// let y = LabelSets::new(3, vec![vec![0], vec![0, 2]])?;
/// assert!((spec.gram(&y)[(0, 1)] - (-0.25f64).exp()).abs() < 1e-15);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelSpec {
    /// [`Linear`]: $\langle x, y \rangle$.
    Linear(Linear),
    /// [`Gaussian`]: $\exp(-\gamma \|x - y\|_W^2)$.
    Gaussian(Gaussian),
    /// [`Laplacian`]: $\exp(-\gamma \|x - y\|_1)$.
    Laplacian(Laplacian),
    /// [`Polynomial`]: $(\gamma \langle x, y \rangle + c_0)^d$.
    Polynomial(Polynomial),
    /// [`Tanimoto`]: $\langle x, y \rangle / (\|x\|^2 + \|y\|^2 - \langle x, y \rangle)$.
    Tanimoto(Tanimoto),
    /// [`GaussianTanimoto`]: $\exp(-2\gamma(1 - T(x, y)))$.
    GaussianTanimoto(GaussianTanimoto),
    /// [`WeightedSum`] of kernels, $\sum_m w_m k_m$ (multiple kernel learning,
    /// [`crate::mkl`]): `{"weighted-sum":{"weights":[..],"kernels":[..]}}`.
    WeightedSum(WeightedSum<KernelSpec>),
}

impl KernelSpec {
    /// The kebab-case kind, as in the serialized `kind` tag (`"gaussian"`,
    /// `"gaussian-tanimoto"`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Linear(_) => "linear",
            Self::Gaussian(_) => "gaussian",
            Self::Laplacian(_) => "laplacian",
            Self::Polynomial(_) => "polynomial",
            Self::Tanimoto(_) => "tanimoto",
            Self::GaussianTanimoto(_) => "gaussian-tanimoto",
            Self::WeightedSum(_) => "weighted-sum",
        }
    }

    /// Whether $k(x, x) = 1$ for every $x$ (Gaussian, Laplacian, Tanimoto,
    /// Gaussian-Tanimoto). Decoders drop the $k(c, c)$ term for these, and
    /// the structured loss is $2 - 2k(\hat y, y)$. A weighted sum is not
    /// taken as normalized (its weights need not sum to 1).
    pub fn is_normalized(&self) -> bool {
        !matches!(self, Self::Linear(_) | Self::Polynomial(_) | Self::WeightedSum(_))
    }
}

impl fmt::Display for KernelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Linear(k) => k.fmt(f),
            Self::Gaussian(k) => k.fmt(f),
            Self::Laplacian(k) => k.fmt(f),
            Self::Polynomial(k) => k.fmt(f),
            Self::Tanimoto(k) => k.fmt(f),
            Self::GaussianTanimoto(k) => k.fmt(f),
            Self::WeightedSum(k) => {
                f.write_str("weighted-sum(")?;
                for (m, (w, k)) in k.weights().iter().zip(k.kernels()).enumerate() {
                    write!(f, "{}{w}*{k}", if m == 0 { "" } else { " + " })?;
                }
                f.write_str(")")
            }
        }
    }
}

macro_rules! spec_from {
    ($($variant:ident),*) => {$(
        impl From<$variant> for KernelSpec {
            fn from(k: $variant) -> Self {
                Self::$variant(k)
            }
        }
    )*};
}
spec_from!(Linear, Gaussian, Laplacian, Polynomial, Tanimoto, GaussianTanimoto);

impl From<WeightedSum<KernelSpec>> for KernelSpec {
    fn from(k: WeightedSum<KernelSpec>) -> Self {
        Self::WeightedSum(k)
    }
}

/// Calls `$body` with `$k` bound to the wrapped kernel.
macro_rules! dispatch {
    ($spec:expr, $k:ident => $body:expr) => {
        match $spec {
            KernelSpec::Linear($k) => $body,
            KernelSpec::Gaussian($k) => $body,
            KernelSpec::Laplacian($k) => $body,
            KernelSpec::Polynomial($k) => $body,
            KernelSpec::Tanimoto($k) => $body,
            KernelSpec::GaussianTanimoto($k) => $body,
            KernelSpec::WeightedSum($k) => $body,
        }
    };
}

macro_rules! impl_spec {
    ($($rows:ty),*) => {$(
        impl crate::Kernel<$rows> for KernelSpec {
            #[track_caller]
            fn eval(&self, a: &$rows, i: usize, b: &$rows, j: usize) -> f64 {
                dispatch!(self, k => k.eval(a, i, b, j))
            }

            #[track_caller]
            fn gram_block_into(&self, a: &$rows, b: &$rows, dst: MatMut<'_, f64>, par: Par) {
                dispatch!(self, k => k.gram_block_into(a, b, dst, par))
            }

            #[track_caller]
            fn gram_into(&self, a: &$rows, dst: MatMut<'_, f64>, par: Par) {
                dispatch!(self, k => k.gram_into(a, dst, par))
            }

            #[track_caller]
            fn diag(&self, a: &$rows) -> Vec<f64> {
                dispatch!(self, k => k.diag(a))
            }
        }
    )*};
}

impl_spec!(crate::DenseRows, crate::CsrRows, crate::LabelSets);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DenseRows, Kernel};
    use faer::Mat;

    fn all() -> Vec<KernelSpec> {
        vec![
            Linear.into(),
            Gaussian::new(0.5).unwrap().with_feature_weights(vec![1.0, 2.0]).unwrap().into(),
            Laplacian::new(0.25).unwrap().into(),
            Polynomial::new(3, 1.0, 1.0).unwrap().into(),
            Tanimoto.into(),
            GaussianTanimoto::new(0.5).unwrap().into(),
        ]
    }

    #[test]
    fn serde_round_trip_and_tags() {
        for spec in all() {
            let json = serde_json::to_string(&spec).unwrap();
            assert!(json.starts_with(&format!(r#"{{"{}""#, spec.kind())), "{json}");
            assert_eq!(serde_json::from_str::<KernelSpec>(&json).unwrap(), spec);
            // Model files use postcard, which is not self-describing.
            let bytes = postcard::to_stdvec(&spec).unwrap();
            assert_eq!(postcard::from_bytes::<KernelSpec>(&bytes).unwrap(), spec);
        }
        let weighted: KernelSpec = Gaussian::new(0.3).unwrap().with_feature_weights(vec![1.0, 0.5]).unwrap().into();
        let bytes = postcard::to_stdvec(&weighted).unwrap();
        assert_eq!(postcard::from_bytes::<KernelSpec>(&bytes).unwrap(), weighted);
        assert_eq!(serde_json::to_string(&KernelSpec::Linear(Linear)).unwrap(), r#"{"linear":null}"#);
        let t: KernelSpec = serde_json::from_str(r#"{"gaussian-tanimoto":{"sigma2":1}}"#).unwrap();
        assert_eq!(t, GaussianTanimoto::new(0.5).unwrap().into());
    }

    #[test]
    fn weighted_sums_round_trip_and_evaluate_as_their_terms() {
        let parts: Vec<KernelSpec> = vec![Gaussian::new(0.5).unwrap().into(), Linear.into()];
        let spec = KernelSpec::from(WeightedSum::new(vec![0.25, 0.75], parts.clone()).unwrap());
        assert_eq!(spec.kind(), "weighted-sum");
        assert_eq!(spec.to_string(), "weighted-sum(0.25*gaussian(gamma=0.5) + 0.75*linear)");
        assert!(!spec.is_normalized());
        let bytes = postcard::to_stdvec(&spec).unwrap();
        assert_eq!(postcard::from_bytes::<KernelSpec>(&bytes).unwrap(), spec);
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<KernelSpec>(&json).unwrap(), spec);
        let negative = json.replace("0.25", "-0.25");
        assert!(serde_json::from_str::<KernelSpec>(&negative).is_err(), "{negative}");
        let x = DenseRows::from_rows(&[vec![1.0, 0.0], vec![0.5, 2.0], vec![-1.0, 1.0]]).unwrap();
        let want = Mat::from_fn(3, 3, |i, j| 0.25 * parts[0].eval(&x, i, &x, j) + 0.75 * parts[1].eval(&x, i, &x, j));
        let got = spec.gram(&x);
        assert!((0..3).all(|i| (0..3).all(|j| (got[(i, j)] - want[(i, j)]).abs() < 1e-15)));
    }

    #[test]
    fn serde_rejects_invalid() {
        for bad in [
            r#"{"gaussian":{"gamma":0}}"#,
            r#"{"gaussian":{}}"#,
            r#"{"laplacian":{"gamma":-1}}"#,
            r#"{"polynomial":{"degree":0,"gamma":1,"coef0":0}}"#,
            r#"{"polynomial":{"degree":2,"gamma":1}}"#,
            r#"{"gaussian-tanimoto":{"gamma":1,"sigma2":1}}"#,
            r#"{"rbf":{"gamma":1}}"#,
            r#"{"gamma":1}"#,
        ] {
            assert!(serde_json::from_str::<KernelSpec>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn display_and_normalization() {
        let names: Vec<String> = all().iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "linear",
                "gaussian(gamma=0.5, 2 feature weights)",
                "laplacian(gamma=0.25)",
                "polynomial(degree=3, gamma=1.0, coef0=1.0)",
                "tanimoto",
                "gaussian-tanimoto(gamma=0.5)"
            ]
        );
        let norm: Vec<bool> = all().iter().map(KernelSpec::is_normalized).collect();
        assert_eq!(norm, [false, true, true, false, true, true]);
    }

    #[test]
    fn dispatch_matches_concrete_kernels() {
        let x = DenseRows::from_rows(&[vec![1.0, 0.5], vec![-1.0, 2.0], vec![0.0, 0.0]]).unwrap();
        for spec in all() {
            let g = spec.gram(&x);
            let d = spec.diag(&x);
            for i in 0..3 {
                assert!((g[(i, i)] - d[i]).abs() < 1e-12, "{spec}");
                for j in 0..3 {
                    assert!((g[(i, j)] - spec.eval(&x, i, &x, j)).abs() < 1e-12, "{spec}");
                }
            }
        }
    }
}
