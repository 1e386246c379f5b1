//! LEML: low-rank multi-label learning with missing labels (Yu, Jain, Kar and
//! Dhillon, ICML 2014), and the baselines it is compared with.
//!
//! LEML scores label `j` of input `x` by $x^\top W h_j$, with $W$ `(d, k)` and
//! $H$ `(L, k)` minimising
//! $$J_\Omega(W, H) = \sum_{(i,j) \in \Omega} \ell(Y_{ij}, x_i^\top W h_j) + \tfrac\lambda2 \big(\lVert W\rVert_F^2 + \lVert H\rVert_F^2\big)$$
//! by alternating minimisation (the penalty is the factorised trace norm of
//! $Z = WH^\top$). Inputs are sparse ([`SparseDesign`] keeps `X` and `Xᵀ`);
//! labels are full or partially observed ([`Targets`]). The W-step uses the
//! structured gradients and Hessian-vector products of Algorithms 1 and 2
//! ([`BilinearObjective`], [`FullSquaredObjective`]); the solvers are CG and
//! TRON from okr-linalg.
//!
//! Baselines: [`BinaryRelevance`] (per-label L2-regularised models, the same
//! W-step with $H = I$) and [`Cplst`] (the closed form of Claims 1-2).
//!
//! # Example
//! ```
//! use okr_estimators::{Fit, ScoreModel};
//! use okr_estimators::leml::{Leml, Loss, Targets};
//! use okr_kernels::{CsrRows, LabelSets};
//! // Label j is on when feature j is present.
//! let rows: Vec<Vec<(usize, f64)>> = (0..40).map(|i| vec![(i % 4, 1.0), (4, 1.0)]).collect();
//! let x = CsrRows::from_rows(5, rows)?;
//! let y = LabelSets::new(4, (0..40).map(|i| vec![i % 4]).collect())?;
//! let model = Leml::params().rank(4).lambda(0.01).loss(Loss::Squared).fit(&x, Targets::Full(&y))?;
//! let s = model.scores(&x)?;
//! assert!(s[(1, 1)] > model.decision_threshold() && s[(1, 2)] < model.decision_threshold());
//! let j = &model.history();
//! assert!(j.windows(2).all(|p| p[1].objective <= p[0].objective * (1.0 + 1e-12)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod br;
mod cplst;
mod fit;
mod labels;
mod loss;
mod objective;
mod params;
mod sparse;

pub use br::{BinaryRelevance, BinaryRelevanceParams, BinaryRelevanceValidParams};
pub use cplst::{Cplst, CplstParams, CplstValidParams, with_bias_feature};
pub use labels::{PartialLabels, Targets};
pub use loss::Loss;
pub use objective::{BilinearObjective, FullSquaredObjective};
pub use params::{LemlParams, LemlValidParams};
pub use sparse::{FeatureMap, IdentityMap, SparseDesign};

use faer::{Mat, MatRef};
use okr_kernels::CsrRows;
use serde::{Deserialize, Serialize};

use crate::{Error, Result, ScoreModel};
use sparse::{Csr, gemm, view};

/// One alternating iteration of [`Leml`] training.
///
/// # Example
/// ```
/// let log = okr_estimators::leml::IterationLog::default();
/// assert_eq!(log.iteration, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct IterationLog {
    /// 1-based iteration number.
    pub iteration: usize,
    /// $J_\Omega(W, H)$ after the iteration's H-step.
    pub objective: f64,
    /// Wall-clock seconds since the start of training (setup excluded).
    pub seconds: f64,
    /// Hessian-vector products of the W-step.
    pub w_hessian_products: usize,
    /// Hessian-vector products of the H-step (0 for the closed forms).
    pub h_hessian_products: usize,
    /// Wall-clock seconds inside the W-step's Hessian-vector products
    /// (timings of this run: not written to model files, 0 when loaded, so
    /// the model format is unchanged).
    #[serde(skip)]
    pub w_hv_seconds: f64,
    /// Wall-clock seconds inside the H-step's Hessian-vector products (not
    /// written to model files, as `w_hv_seconds`).
    #[serde(skip)]
    pub h_hv_seconds: f64,
}

/// A fitted LEML model: scores $x^\top W H^\top$.
///
/// # Example
/// See the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leml {
    pub(crate) params: LemlValidParams,
    pub(crate) n_features: usize,
    pub(crate) n_labels: usize,
    /// `W` `(d, k)` row-major.
    pub(crate) w: Vec<f64>,
    /// `H` `(L, k)` row-major.
    pub(crate) h: Vec<f64>,
    pub(crate) threshold: f64,
    pub(crate) history: Vec<IterationLog>,
}

impl Leml {
    /// Default parameters (see [`LemlValidParams`]).
    pub fn params() -> LemlParams {
        LemlParams::default()
    }

    /// The parameters the model was fitted with.
    pub fn fitted_params(&self) -> &LemlValidParams {
        &self.params
    }

    /// Number of input features `d`.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// `W` `(n_features, rank)`.
    pub fn w(&self) -> MatRef<'_, f64> {
        view(&self.w, self.n_features, self.params.rank)
    }

    /// `H` `(n_labels, rank)`.
    pub fn h(&self) -> MatRef<'_, f64> {
        view(&self.h, self.n_labels, self.params.rank)
    }

    /// Objective, time and solver work per alternating iteration.
    pub fn history(&self) -> &[IterationLog] {
        &self.history
    }
}

/// `X W Hᵀ` for new sparse inputs; `h = None` means `H = I`.
pub(crate) fn low_rank_scores(
    x: &CsrRows,
    w: &[f64],
    h: Option<&[f64]>,
    d: usize,
    l: usize,
    k: usize,
) -> Result<Mat<f64>> {
    if x.n_features() != d {
        return Err(Error::ShapeMismatch { what: "input features", expected: d, got: x.n_features() });
    }
    let x = Csr::from_csr_rows(x);
    let mut a = vec![0.0; x.nrows * k];
    x.mul_dense(w, k, &mut a);
    match h {
        None => Ok(view(&a, x.nrows, k).to_owned()),
        Some(h) => {
            let mut s = Mat::zeros(x.nrows, l);
            gemm(s.as_mut(), view(&a, x.nrows, k), view(h, l, k).transpose());
            Ok(s)
        }
    }
}

impl ScoreModel<CsrRows> for Leml {
    fn n_labels(&self) -> usize {
        self.n_labels
    }
    fn decision_threshold(&self) -> f64 {
        self.threshold
    }
    fn scores(&self, x: &CsrRows) -> Result<Mat<f64>> {
        low_rank_scores(x, &self.w, Some(&self.h), self.n_features, self.n_labels, self.params.rank)
    }
}

impl crate::persist::Validate for Leml {
    fn validate(&self) -> std::result::Result<(), crate::persist::Invalid> {
        use crate::persist::{check_params, ensure, finite_slice};
        check_params("LEML", &LemlParams(self.params))?;
        let (d, l, k) = (self.n_features, self.n_labels, self.params.rank);
        ensure(d > 0 && l > 0, || "LEML model has no features or no labels".into())?;
        ensure(d.checked_mul(k) == Some(self.w.len()), || {
            format!("LEML W has {} entries for {d} x {k}", self.w.len())
        })?;
        ensure(l.checked_mul(k) == Some(self.h.len()), || {
            format!("LEML H has {} entries for {l} x {k}", self.h.len())
        })?;
        finite_slice("LEML W", &self.w)?;
        finite_slice("LEML H", &self.h)?;
        finite_slice("LEML threshold", &[self.threshold])
    }
}
