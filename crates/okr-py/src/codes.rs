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
use okr_estimators::ParamGuard;
use okr_estimators::kae::{KaeParams, Kpca, LayerKernel};
use okr_estimators::persist::{Model, ModelInfo, SavedModel};
use okr_kernels::{Features, Kernel, KernelOptions, KernelSpec, Rows, WidthSide};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert;
use crate::errors::{guard, to_py};
use crate::params::{KernelChoice, Params, count, degree_error, usize_list};
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

/// The autoencoder's hyper-parameters: `hidden_dims` (list of inner
/// widths, the code is the last unless `code_layer`), `lam`, `max_iter`,
/// `seed`; `first` is the kernel of the first layer, the others are
/// Gaussian with the median heuristic (as `okr fit --estimator kae`).
fn autoencoder_params(p: &Params<'_, '_>, hidden: Vec<usize>, first: LayerKernel) -> PyResult<KaeParams> {
    let params = KaeParams::stacked(hidden, first, p.f64_or("lam", 1e-3)?)
        .max_iter(p.usize_or("max_iter", 500)?)
        .seed(p.seed()?);
    params.check_ref().map_err(to_py)?;
    Ok(params)
}

/// KAE's first-layer kernel (finite KAE: gaussian, linear or polynomial).
fn kae_first_kernel(p: &Params<'_, '_>) -> PyResult<LayerKernel> {
    let name = p.string("kernel")?.unwrap_or_else(|| "gaussian".into());
    let gamma = p.f64("gamma")?;
    // Only the polynomial kernel reads (and so checks) degree and coef0.
    let (degree, coef0) = match name.as_str() {
        "polynomial" | "poly" => {
            let degree = p.usize_or("degree", 3)?;
            let degree = u32::try_from(degree).map_err(|_| to_py(degree_error(degree)))?;
            (degree, p.f64_or("coef0", 1.0)?)
        }
        _ => (3, 1.0),
    };
    LayerKernel::from_name(&name, &KernelOptions { gamma, sigma2: None, degree, coef0 }).map_err(|_| {
        PyValueError::new_err(format!(
            "invalid parameter kernel = {name:?}: KAE takes gaussian, linear or polynomial (K2AE takes any kernel)"
        ))
    })
}

/// `params` with the input kernel's width resolved by okr's one checked
/// median heuristic ([`okr_kernels::checked_median_gamma`], as `okr fit`
/// and `okr fit --estimator k2ae` resolve it) when the kernel is Gaussian
/// and `gamma` is unset: features whose squared distances overflow (near
/// `1e154`) are okr's message naming the median, not "gamma = 0". The copy
/// is what the kernel is built from; the estimator's parameters are not
/// touched.
fn with_checked_width<'py>(params: &Bound<'py, PyDict>, x: &Features) -> PyResult<Bound<'py, PyDict>> {
    let p = Params(params);
    let name = p.string("kernel")?.unwrap_or_else(|| "gaussian".into());
    if p.f64("gamma")?.is_some() || !matches!(name.as_str(), "gaussian" | "rbf") {
        return Ok(params.clone());
    }
    let gamma = okr_kernels::checked_median_gamma(x, WidthSide::Inputs).map_err(to_py)?;
    let resolved = params.copy()?;
    resolved.set_item("gamma", gamma)?;
    Ok(resolved)
}

/// Fits `kind` (`kae` or `k2ae`) with `params` (`hidden_dims`, `kernel`,
/// `gamma`, `degree`, `coef0`, `lam`, `max_iter`, `seed`) on `x`.
#[pyfunction]
#[pyo3(signature = (kind, params, hidden_dims, x, n_jobs=None))]
pub fn fit_autoencoder(
    py: Python<'_>,
    kind: &str,
    params: &Bound<'_, PyDict>,
    hidden_dims: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    n_jobs: Option<NJobs>,
) -> PyResult<CodeModel> {
    guard(|| {
        let p = Params(params);
        // okr caps each width at max(n_samples, n_features) before allocating.
        let hidden_dims = usize_list("hidden_dims", hidden_dims)?;
        if hidden_dims.is_empty() {
            return Err(PyValueError::new_err("invalid parameter hidden_dims = []: expected at least one inner layer"));
        }
        let x = convert::inputs(x)?;
        let mut info = ModelInfo::new(x.n_features(), 0);
        info.seed = p.seed()?;
        let start = std::time::Instant::now();
        let model = match kind {
            "kae" => {
                let params = autoencoder_params(&p, hidden_dims, kae_first_kernel(&p)?)?;
                // The finite KAE works on dense rows (one copy of sparse input),
                // and its last layer reconstructs them: refuse a width the
                // machine cannot hold densely before allocating it.
                convert::check_dense("KAE's dense copy of X", x.n_rows(), x.n_features())?;
                let fitted = threads::run(py, n_jobs, || -> PyResult<_> {
                    let dense = match &x {
                        Features::Dense(d) => d.as_mat().to_owned(),
                        Features::Sparse(_) => x.to_dense(),
                    };
                    params.check_ref().map_err(to_py)?.fit(dense.as_ref()).map_err(to_py)
                })??;
                Model::Kae(fitted)
            }
            "k2ae" => {
                let kx = KernelChoice::input(&Params(&with_checked_width(params, &x)?))?.build_input(&x)?;
                let params = autoencoder_params(&p, hidden_dims, LayerKernel::Linear)?;
                let fitted = threads::run(py, n_jobs, || -> PyResult<_> {
                    params.check_ref().map_err(to_py)?.fit_k2ae_rows(kx, &x).map_err(to_py)
                })??;
                Model::K2ae(fitted)
            }
            other => return Err(PyValueError::new_err(format!("unknown autoencoder {other:?}"))),
        };
        info.fit_seconds = start.elapsed().as_secs_f64();
        let saved = SavedModel::new(model, info).map_err(to_py)?;
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
        let n_components = count("n_components", n_components, 1)?;
        let x = convert::inputs(x)?;
        let kernel = KernelChoice::input(&Params(&with_checked_width(params, &x)?))?.build_input(&x)?;
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
            let kernel = KernelChoice::input(&Params(&with_checked_width(params, &x_train)?))?.build_input(&x_train)?;
            Ok(Self { saved, encoder: Encoder::Kpca { x_train, kernel } })
        })
    }
}
