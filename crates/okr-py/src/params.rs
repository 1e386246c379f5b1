//! Hyper-parameters from the Python estimators (a dict of their
//! constructor arguments, stored unchanged there) to okr kernels and params.
//! Validation is okr's: a bad value reaches okr's `check()` and comes back
//! as a `ValueError` with okr's message.

use okr_kernels::{KernelOptions, KernelSpec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{Inputs, Outputs};
use crate::errors::to_py;

/// Typed look-ups in the parameter dict; a missing key or `None` is "unset".
pub struct Params<'a, 'py>(pub &'a Bound<'py, PyDict>);

macro_rules! getter {
    ($name:ident, $t:ty) => {
        fn $name(&self, key: &str) -> PyResult<Option<$t>> {
            match self.0.get_item(key)? {
                None => Ok(None),
                Some(v) if v.is_none() => Ok(None),
                Some(v) => v
                    .extract::<$t>()
                    .map(Some)
                    .map_err(|e| PyValueError::new_err(format!("invalid parameter {key} = {v}: {e}"))),
            }
        }
    };
}

impl Params<'_, '_> {
    getter!(get_f64, f64);
    getter!(get_i64, i64);
    getter!(get_u64, u64);
    getter!(get_string, String);

    /// A float.
    pub fn f64(&self, key: &str) -> PyResult<Option<f64>> {
        self.get_f64(key)
    }

    /// A float that must be given.
    pub fn f64_or(&self, key: &str, default: f64) -> PyResult<f64> {
        Ok(self.f64(key)?.unwrap_or(default))
    }

    /// A non-negative integer.
    pub fn usize_or(&self, key: &str, default: usize) -> PyResult<usize> {
        match self.get_i64(key)? {
            None => Ok(default),
            Some(v) => usize::try_from(v)
                .map_err(|_| PyValueError::new_err(format!("invalid parameter {key} = {v}: expected an integer >= 0"))),
        }
    }

    /// A string.
    pub fn string(&self, key: &str) -> PyResult<Option<String>> {
        self.get_string(key)
    }

    /// The seed (`random_state` resolved to an integer by the Python layer).
    pub fn seed(&self) -> PyResult<u64> {
        Ok(self.get_u64("seed")?.unwrap_or(0))
    }
}

/// okr's error for a polynomial degree beyond `u32` (the kernel refuses
/// anything outside `1..=i32::MAX` with this message).
pub fn degree_error(degree: usize) -> okr_kernels::Error {
    okr_kernels::Error::InvalidParameter {
        name: "degree",
        value: degree as f64,
        expected: "an integer in 1..=i32::MAX",
    }
}

/// An integer argument of at least `min`: a `ValueError` naming the
/// parameter for anything else (smaller, beyond 64 bits, not an integer).
pub fn count(key: &str, obj: &Bound<'_, PyAny>, min: usize) -> PyResult<usize> {
    match obj.extract::<usize>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(PyValueError::new_err(format!("invalid parameter {key} = {obj}: expected an integer >= {min}"))),
    }
}

/// A list of non-negative integers (`hidden_dims`): a `ValueError` naming
/// the parameter for anything else (negative, too large, not an integer).
pub fn usize_list(key: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let bad = || PyValueError::new_err(format!("invalid parameter {key} = {obj}: expected a list of integers >= 1"));
    let items: Vec<Bound<'_, PyAny>> =
        obj.try_iter().map_err(|_| bad())?.collect::<PyResult<_>>().map_err(|_| bad())?;
    items.iter().map(|v| v.extract::<usize>().map_err(|_| bad())).collect()
}

/// A kernel as the parameters name it; widths left unset are resolved
/// on the data at fit time.
pub struct KernelChoice {
    name: String,
    gamma: Option<f64>,
    degree: usize,
    coef0: f64,
}

impl KernelChoice {
    /// The input kernel: `kernel` (default gaussian), `gamma`, `degree`, `coef0`.
    pub fn input(p: &Params<'_, '_>) -> PyResult<Self> {
        Ok(Self {
            name: p.string("kernel")?.unwrap_or_else(|| "gaussian".into()),
            gamma: p.f64("gamma")?,
            degree: p.usize_or("degree", 3)?,
            coef0: p.f64_or("coef0", 1.0)?,
        })
    }

    /// The output kernel: `output_kernel` (default gaussian), `output_gamma`,
    /// `output_degree`, `output_coef0`.
    pub fn output(p: &Params<'_, '_>) -> PyResult<Self> {
        Ok(Self {
            name: p.string("output_kernel")?.unwrap_or_else(|| "gaussian".into()),
            gamma: p.f64("output_gamma")?,
            degree: p.usize_or("output_degree", 3)?,
            coef0: p.f64_or("output_coef0", 1.0)?,
        })
    }

    fn is_gaussian(&self) -> bool {
        matches!(self.name.as_str(), "gaussian" | "rbf")
    }

    /// The kernel ([`KernelSpec::from_name`]); `default_gamma` is used when
    /// `gamma` is unset.
    fn build(&self, default_gamma: impl FnOnce() -> f64) -> PyResult<KernelSpec> {
        // Only the polynomial kernel reads the degree, so only it refuses one
        // beyond u32, with okr's message for a degree out of range.
        let degree = match u32::try_from(self.degree) {
            Err(_) if matches!(self.name.as_str(), "polynomial" | "poly") => {
                return Err(to_py(degree_error(self.degree)));
            }
            d => d.unwrap_or(0),
        };
        let options = KernelOptions { gamma: self.gamma, sigma2: None, degree, coef0: self.coef0 };
        KernelSpec::from_name(&self.name, &options, default_gamma).map_err(to_py)
    }

    /// The input kernel on `x`. Unset width: the median heuristic for the
    /// Gaussian kernel, `1 / n_features` otherwise.
    pub fn build_input(&self, x: &Inputs) -> PyResult<KernelSpec> {
        let default = || match x {
            Inputs::Dense(x) if self.is_gaussian() => okr_kernels::median_gamma(x),
            Inputs::Sparse(x) if self.is_gaussian() => okr_kernels::median_gamma(x),
            _ => 1.0 / x.n_features().max(1) as f64,
        };
        self.build(default)
    }

    /// The output kernel on `y`. Unset Gaussian width on label sets:
    /// `sigma^2 =` the mean number of labels per sample (okr fit's default);
    /// on vectors the median heuristic; other kernels `1 / dim`.
    pub fn build_output(&self, y: &Outputs) -> PyResult<KernelSpec> {
        let default = || match y {
            Outputs::Labels(y) if self.is_gaussian() => okr_kernels::label_set_gamma(y),
            Outputs::Vectors(y) if self.is_gaussian() => okr_kernels::median_gamma(y),
            Outputs::Labels(y) => 1.0 / y.n_labels().max(1) as f64,
            Outputs::Vectors(y) => 1.0 / y.n_features().max(1) as f64,
        };
        self.build(default)
    }
}
