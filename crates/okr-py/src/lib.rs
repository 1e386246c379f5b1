//! `okr._okr`: the Rust half of the okr Python package.
//!
//! The scikit-learn estimators live in `python/okr` and call this module:
//! `model::fit` returns a `model::Model` whose methods decode candidates,
//! give label scores and list the candidates. Inputs are read in place
//! where okr's containers allow (module `convert`), computations release the
//! GIL and run on `n_jobs` threads (module `threads`), and okr's errors become
//! `ValueError`s with okr's message (module `errors`). The modules are
//! private: `cargo doc --document-private-items -p okr-py` shows them.

mod codes;
mod convert;
mod errors;
mod model;
mod output_basis;
mod params;
mod progress;
mod ranking;
mod score_model;
mod stream;
mod surrogate;
mod threads;
mod tune;

use errors::guard;
use pyo3::prelude::*;

/// Reads a Mulan ARFF file whose last `n_labels` attributes are the labels:
/// `(x, y)` with `x` a float64 array (dense files) or the tuple
/// `(data, indices, indptr, shape)` of a CSR matrix (sparse files), and `y`
/// the tuple `(indices, indptr, shape)` of the CSR label indicator.
#[pyfunction]
fn read_arff<'py>(py: Python<'py>, path: std::path::PathBuf, n_labels: usize) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    guard(|| {
        use numpy::{IntoPyArray, ndarray::Array2};
        use okr_eval::Features;
        use okr_kernels::Rows;
        let data = py.detach(|| okr_eval::read_arff(&path, n_labels)).map_err(errors::to_py)?;
        let x: Py<PyAny> = match &data.x {
            Features::Dense(d) => {
                let m = d.as_mat();
                Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)]).into_pyarray(py).into_any().unbind()
            }
            Features::Sparse(s) => {
                let idx: Vec<i64> = s.indices().iter().map(|&i| i as i64).collect();
                let ptr: Vec<i64> = s.indptr().iter().map(|&i| i as i64).collect();
                let parts = (
                    s.values().to_vec().into_pyarray(py),
                    idx.into_pyarray(py),
                    ptr.into_pyarray(py),
                    (s.n_rows(), s.n_features()),
                );
                parts.into_pyobject(py)?.into_any().unbind()
            }
        };
        let mut idx = Vec::new();
        let mut ptr = vec![0i64];
        for set in data.y.iter() {
            idx.extend(set.iter().map(|&l| l as i64));
            ptr.push(idx.len() as i64);
        }
        let y = (idx.into_pyarray(py), ptr.into_pyarray(py), (data.y.n_rows(), data.y.n_labels()));
        Ok((x, y.into_pyobject(py)?.into_any().unbind()))
    })
}

/// okr's data directory: `OKR_DATA_DIR`, else `../shared/data` of a
/// checkout, else the per-user data home (`$XDG_DATA_HOME/okr` or
/// `~/.local/share/okr`; `okr_eval::locate_data_dir`).
#[pyfunction]
fn data_dir() -> PyResult<std::path::PathBuf> {
    guard(|| Ok(okr_eval::data_dir()))
}

#[pymodule]
fn _okr(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<model::Model>()?;
    m.add_function(wrap_pyfunction!(model::fit_recipe, m)?)?;
    m.add_function(wrap_pyfunction!(ranking::rank_per_query, m)?)?;
    m.add_function(wrap_pyfunction!(ranking::retrieval_metrics, m)?)?;
    m.add_class::<score_model::ScoreModel>()?;
    m.add_function(wrap_pyfunction!(score_model::fit_leml, m)?)?;
    m.add_class::<codes::CodeModel>()?;
    m.add_function(wrap_pyfunction!(codes::fit_autoencoder, m)?)?;
    m.add_function(wrap_pyfunction!(codes::fit_kpca, m)?)?;
    m.add_function(wrap_pyfunction!(stream::stream_plan_rows, m)?)?;
    m.add_function(wrap_pyfunction!(stream::stream_plan, m)?)?;
    m.add_function(wrap_pyfunction!(stream::stream_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(stream::stream_merge, m)?)?;
    m.add_function(wrap_pyfunction!(stream::stream_finalize, m)?)?;
    m.add_function(wrap_pyfunction!(stream::stream_stats_info, m)?)?;
    m.add_class::<output_basis::PyEmbedding>()?;
    m.add_function(wrap_pyfunction!(output_basis::fit_embedding, m)?)?;
    m.add_function(wrap_pyfunction!(tune::tune, m)?)?;
    m.add_function(wrap_pyfunction!(tune::cv_folds, m)?)?;
    m.add_function(wrap_pyfunction!(read_arff, m)?)?;
    m.add_function(wrap_pyfunction!(data_dir, m)?)?;
    Ok(())
}
