//! Kernel PCA's hyper-parameters (a dict of its constructor arguments) to an
//! okr kernel, and integer arguments. The estimators send okr recipes
//! instead (`_base.py`). Validation is okr's: a bad value comes back as a
//! `ValueError` with okr's message.

use okr_kernels::{Features, KernelSpec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

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
    getter!(get_u64, u64);
    getter!(get_string, String);

    /// A float.
    pub fn f64(&self, key: &str) -> PyResult<Option<f64>> {
        self.get_f64(key)
    }

    /// A string.
    pub fn string(&self, key: &str) -> PyResult<Option<String>> {
        self.get_string(key)
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

/// The input kernel of the parameters `kernel` (default gaussian), `gamma`,
/// `degree` and `coef0` on `x`: okr's recipe layer resolves every unset
/// width (the median heuristic, with its overflow check) and checks every value.
pub fn input_kernel(p: &Params<'_, '_>, x: &Features) -> PyResult<KernelSpec> {
    let name = p.string("kernel")?.unwrap_or_else(|| "gaussian".into());
    let mut k = okr::KernelRecipe::named(&name);
    k.gamma = p.f64("gamma")?;
    // Only the polynomial kernel reads degree and coef0 (scikit-learn's habit).
    if k.canonical_name() == "polynomial" {
        k.degree = p.get_u64("degree")?;
        k.coef0 = p.f64("coef0")?;
    }
    let prepared = okr::resolve::prepare_inputs(okr::Standardize::No, false, x).map_err(to_py)?;
    let (spec, _, _) = okr::resolve::input_kernel(&k, &prepared).map_err(to_py)?;
    Ok(spec)
}
