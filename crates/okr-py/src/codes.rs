//! The unsupervised models: kernel autoencoders (KAE, K2AE; Laforgue et
//! al. 2019) and kernel PCA, as `okr._okr.CodeModel`: `fit_autoencoder`
//! and `fit_kpca` fit, `transform` gives each row's code.
//!
//! KAE and K2AE pickle as okr's model bytes. Kernel PCA's saved model holds
//! its eigenvectors only; a new row's code needs its kernel values against
//! the training rows, so the model also keeps those rows and the kernel
//! (the Python layer pickles them beside the bytes, as scikit-learn's
//! `KernelPCA` keeps `X_fit_`).

use faer::Mat;
use okr_estimators::kae::Kpca;
use okr_estimators::persist::{Model, ModelInfo, SavedModel};
use okr_kernels::{Features, Kernel, KernelSpec, Rows};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert;
use crate::errors::{guard, to_py};
use crate::params::{Params, count, input_kernel};
use crate::threads::{self, NJobs};

/// What a code model needs to encode new rows.
enum Encoder {
    /// KAE or K2AE: the saved model holds everything.
    Autoencoder,
    /// Kernel PCA: the training rows and the kernel they were compared with.
    Kpca { x_train: Features, kernel: KernelSpec },
}

/// A fitted KAE, K2AE or kernel PCA.
#[pyclass(module = "okr._okr", name = "CodeModel", frozen)]
pub struct CodeModel {
    saved: SavedModel,
    encoder: Encoder,
}

/// Fits the KAE or K2AE `recipe` (JSON, built by the Python layer from
/// `get_params`; okr's recipe layer resolves every default and checks
/// every value) on `x`.
#[pyfunction]
/// `previous` (a model of the same estimator fitted on inputs of the same
/// shape) is continued for the recipe's `max_iter` more steps (`warm_start`).
/// `verbose` logs the steps (see `progress`).
#[pyo3(signature = (recipe, x, n_jobs=None, previous=None, verbose=0))]
pub fn fit_autoencoder(
    py: Python<'_>,
    recipe: &str,
    x: &Bound<'_, PyAny>,
    n_jobs: Option<NJobs>,
    previous: Option<PyRef<'_, CodeModel>>,
    verbose: usize,
) -> PyResult<CodeModel> {
    let previous = previous.as_deref().map(|m| &m.saved.model);
    let observer = crate::progress::logger(py, verbose)?;
    guard(|| {
        let recipe = okr::Recipe::from_json(recipe).map_err(to_py)?;
        let x = convert::inputs(x)?;
        if recipe.estimator.name == okr::Estimator::Kae {
            // The finite KAE works on dense rows (one copy of sparse input),
            // and its last layer reconstructs them: refuse a width the
            // machine cannot hold densely before allocating it.
            convert::check_dense("KAE's dense copy of X", x.n_rows(), x.n_features())?;
        }
        let fitted = threads::run(py, n_jobs, || {
            crate::progress::observe(observer, || match previous {
                Some(p) => okr::fit_codes_from(&recipe, p, &x, &mut |_, _| {}),
                None => okr::fit_codes(&recipe, &x, &mut |_, _| {}),
            })
        })?
        .map_err(to_py)?;
        let saved = fitted.into_saved(ModelInfo::new(x.n_features(), 0)).map_err(to_py)?;
        Ok(CodeModel { saved, encoder: Encoder::Autoencoder })
    })
}

/// Kernel PCA with `n_components` on `x` (`kernel`, `gamma`, `degree`,
/// `coef0` as for the other estimators): the uncentred eigenvectors of the
/// Gram matrix, codes `K V diag(1/sqrt(eigenvalue))`.
#[pyfunction]
#[pyo3(signature = (params, n_components, x, n_jobs=None))]
pub fn fit_kpca(
    py: Python<'_>,
    params: &Bound<'_, PyDict>,
    n_components: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    n_jobs: Option<NJobs>,
) -> PyResult<CodeModel> {
    guard(|| {
        let p = Params(params);
        let n_components = count("n_components", n_components, 1)?;
        let x = convert::inputs(x)?;
        let kernel = input_kernel(&p, &x)?;
        let start = std::time::Instant::now();
        let kpca = threads::run(py, n_jobs, || -> PyResult<Kpca> {
            let gram = Kernel::<Features>::gram(&kernel, &x);
            Kpca::fit(gram.as_ref(), n_components).map_err(to_py)
        })??;
        let mut info = ModelInfo::new(x.n_features(), 0);
        info.fit_seconds = start.elapsed().as_secs_f64();
        let saved = SavedModel::new(Model::Kpca(kpca), info).map_err(to_py)?;
        Ok(CodeModel { saved, encoder: Encoder::Kpca { x_train: x, kernel } })
    })
}

impl CodeModel {
    fn codes(&self, x: &Features) -> PyResult<Mat<f64>> {
        if x.n_features() != self.saved.info.n_features {
            return Err(PyValueError::new_err(format!(
                "X has {} features, the model was fitted on {}",
                x.n_features(),
                self.saved.info.n_features
            )));
        }
        match (&self.saved.model, &self.encoder) {
            (Model::Kae(m), _) => {
                convert::check_dense("KAE's dense copy of X", x.n_rows(), x.n_features())?;
                m.encode(x.to_dense().as_ref()).map_err(to_py)
            }
            (Model::K2ae(m), _) => m.encode(x).map_err(to_py),
            (Model::Kpca(m), Encoder::Kpca { x_train, kernel }) => {
                let cross = Kernel::<Features>::gram_block(kernel, x, x_train);
                m.transform(cross.as_ref()).map_err(to_py)
            }
            (other, _) => Err(PyValueError::new_err(format!("a {} model gives no codes", other.name()))),
        }
    }
}

#[pymethods]
impl CodeModel {
    /// The code of each row of `x`, `(n, code width)`.
    #[pyo3(signature = (x, n_jobs=None))]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<NJobs>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
        guard(|| {
            let x = convert::inputs(x)?;
            let codes = threads::run(py, n_jobs, || self.codes(&x))??;
            Ok(convert::to_numpy(py, codes.as_ref()))
        })
    }

    /// The codes of the training rows.
    fn train_codes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
        guard(|| {
            let codes = match &self.saved.model {
                Model::Kae(m) => m.train_codes()[m.code_layer() - 1].clone(),
                Model::K2ae(m) => m.model().train_code().to_owned(),
                Model::Kpca(m) => m.train_codes(),
                other => return Err(PyValueError::new_err(format!("a {} model gives no codes", other.name()))),
            };
            Ok(convert::to_numpy(py, codes.as_ref()))
        })
    }

    /// Mean squared reconstruction error of `x` (KAE: in input space;
    /// K2AE: the test distortion in the input RKHS).
    #[pyo3(signature = (x, n_jobs=None))]
    fn reconstruction_error(&self, py: Python<'_>, x: &Bound<'_, PyAny>, n_jobs: Option<NJobs>) -> PyResult<f64> {
        guard(|| {
            let x = convert::inputs(x)?;
            threads::run(py, n_jobs, || -> PyResult<f64> {
                match &self.saved.model {
                    Model::Kae(m) => {
                        convert::check_dense("KAE's dense copy of X", x.n_rows(), x.n_features())?;
                        m.reconstruction_error(x.to_dense().as_ref()).map_err(to_py)
                    }
                    Model::K2ae(m) => {
                        let d = m.test_distortion(&x).map_err(to_py)?;
                        Ok(d.iter().sum::<f64>() / d.len().max(1) as f64)
                    }
                    other => Err(PyValueError::new_err(format!("a {} model reconstructs nothing", other.name()))),
                }
            })?
        })
    }

    /// Gradient steps run (autoencoders), 0 for kernel PCA.
    #[getter]
    fn n_iter(&self) -> PyResult<usize> {
        guard(|| {
            Ok(match &self.saved.model {
                Model::Kae(m) => m.train_info().n_iter,
                Model::K2ae(m) => m.model().train_info().n_iter,
                _ => 0,
            })
        })
    }

    /// Final training objective (autoencoders), `None` for kernel PCA.
    #[getter]
    fn objective(&self) -> PyResult<Option<f64>> {
        guard(|| {
            Ok(match &self.saved.model {
                Model::Kae(m) => Some(m.train_info().final_objective),
                Model::K2ae(m) => Some(m.model().train_info().final_objective),
                _ => None,
            })
        })
    }

    /// The recipe the model was fitted from (JSON), or `None` (kernel PCA,
    /// models of earlier versions).
    #[getter]
    fn recipe(&self) -> Option<String> {
        self.saved.recipe().map(str::to_string)
    }

    /// Number of input features.
    #[getter]
    fn n_features(&self) -> PyResult<usize> {
        guard(|| Ok(self.saved.info.n_features))
    }

    /// okr's model bytes (versioned, checksummed); what pickling stores.
    /// For kernel PCA the training rows travel beside them.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            let bytes = py.detach(|| self.saved.to_bytes()).map_err(to_py)?;
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// An autoencoder from okr's model bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        guard(|| {
            let saved = py.detach(|| SavedModel::from_bytes(data)).map_err(to_py)?;
            match &saved.model {
                Model::Kae(_) | Model::K2ae(_) => Ok(Self { saved, encoder: Encoder::Autoencoder }),
                Model::Kpca(_) => {
                    Err(PyValueError::new_err("a kernel PCA model needs its training rows: use from_kpca_bytes"))
                }
                other => Err(PyValueError::new_err(format!("expected an autoencoder, got a {} model", other.name()))),
            }
        })
    }

    /// A kernel PCA model from okr's model bytes, its training rows `x` and
    /// kernel parameters `params` (as given to `fit_kpca`).
    #[staticmethod]
    fn from_kpca_bytes(
        py: Python<'_>,
        data: &[u8],
        params: &Bound<'_, PyDict>,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        guard(|| {
            let saved = py.detach(|| SavedModel::from_bytes(data)).map_err(to_py)?;
            let Model::Kpca(kpca) = &saved.model else {
                return Err(PyValueError::new_err(format!(
                    "expected a kernel PCA model, got a {} model",
                    saved.model.name()
                )));
            };
            let x_train = convert::inputs(x)?;
            if x_train.n_rows() != kpca.vectors().nrows() || x_train.n_features() != saved.info.n_features {
                return Err(PyValueError::new_err(format!(
                    "the training rows ({} x {}) do not match the kernel PCA model ({} x {})",
                    x_train.n_rows(),
                    x_train.n_features(),
                    kpca.vectors().nrows(),
                    saved.info.n_features
                )));
            }
            let kernel = input_kernel(&Params(params), &x_train)?;
            Ok(Self { saved, encoder: Encoder::Kpca { x_train, kernel } })
        })
    }
}
