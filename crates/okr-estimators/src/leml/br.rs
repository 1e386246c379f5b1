use faer::{Col, Mat};
use okr_kernels::{CsrRows, Rows};
use okr_linalg::{CgParams, TronParams};
use serde::{Deserialize, Serialize};

use super::fit::{LabelData, Problem, gram_is_cheaper};
use super::labels::Targets;
use super::loss::Loss;
use super::objective::{StepSolver, slice};
use super::params::check_solver;
use super::sparse::{SparseDesign, view};
use crate::core::checks;
use crate::{Error, Fit, ParamGuard, Result, ScoreModel};

/// Validated parameters of [`BinaryRelevance`]: the only type that can fit
/// (see [`BinaryRelevanceParams`] for the builder).
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `lambda` | `0.1` | $\lambda$ in $\sum_\Omega \ell(Y_{ij}, x_i^\top w_j) + \tfrac\lambda2 \lVert W\rVert_F^2$ | `> 0` |
/// | `loss` | `Squared` | [`Loss`] | |
/// | `cg_tol` | `1e-4` | squared loss: relative CG residual | `(0, 1)` |
/// | `max_cg_iter` | `200` | Hessian products per CG solve / Newton step | `>= 1` |
/// | `tron_eps` | `1e-3` | logistic, squared hinge: TRON gradient tolerance | `(0, 1)` |
/// | `tron_max_iter` | `20` | TRON Newton steps | `>= 1` |
///
/// Binary relevance with Frobenius regularisation: LEML's W-step with
/// $H = I_L$, i.e. one L2-regularised model per label trained on its
/// observed entries (ridge, L2 logistic regression or L2-SVM).
///
/// # Example
/// ```
/// use okr_estimators::leml::{BinaryRelevance, Targets};
/// use okr_kernels::{CsrRows, LabelSets};
/// let x = CsrRows::from_rows(2, vec![vec![(0, 1.0)], vec![(1, 1.0)]])?;
/// let y = LabelSets::new(2, vec![vec![0], vec![1]])?;
/// # use okr_estimators::Fit;
/// let br = BinaryRelevance::params().lambda(1e-3).fit(&x, Targets::Full(&y))?;
/// assert!((br.w()[(0, 0)] - 1.0).abs() < 1e-2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BinaryRelevanceValidParams {
    lambda: f64,
    loss: Loss,
    cg_tol: f64,
    max_cg_iter: usize,
    tron_eps: f64,
    tron_max_iter: usize,
}

/// Binary relevance hyper-parameters (builder; setters store,
/// [`ParamGuard::check`] validates; the table is on
/// [`BinaryRelevanceValidParams`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BinaryRelevanceParams(BinaryRelevanceValidParams);

impl Default for BinaryRelevanceValidParams {
    fn default() -> Self {
        Self { lambda: 0.1, loss: Loss::Squared, cg_tol: 1e-4, max_cg_iter: 200, tron_eps: 1e-3, tron_max_iter: 20 }
    }
}

impl BinaryRelevanceValidParams {
    /// $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// The loss.
    pub fn loss(&self) -> Loss {
        self.loss
    }
}

impl BinaryRelevanceParams {
    /// Sets $\lambda$.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.0.lambda = lambda;
        self
    }
    /// Sets the loss.
    pub fn loss(mut self, loss: Loss) -> Self {
        self.0.loss = loss;
        self
    }
    /// Sets the relative CG tolerance.
    pub fn cg_tol(mut self, cg_tol: f64) -> Self {
        self.0.cg_tol = cg_tol;
        self
    }
    /// Sets the Hessian products per CG solve or Newton step.
    pub fn max_cg_iter(mut self, max_cg_iter: usize) -> Self {
        self.0.max_cg_iter = max_cg_iter;
        self
    }
    /// Sets TRON's gradient tolerance.
    pub fn tron_eps(mut self, tron_eps: f64) -> Self {
        self.0.tron_eps = tron_eps;
        self
    }
    /// Sets TRON's Newton steps.
    pub fn tron_max_iter(mut self, tron_max_iter: usize) -> Self {
        self.0.tron_max_iter = tron_max_iter;
        self
    }
}

impl ParamGuard for BinaryRelevanceParams {
    type Checked = BinaryRelevanceValidParams;
    type Error = Error;

    fn check_ref(&self) -> Result<&BinaryRelevanceValidParams> {
        let p = &self.0;
        checks::positive("lambda", p.lambda)?;
        check_solver(p.cg_tol, p.max_cg_iter, p.tron_eps, p.tron_max_iter)?;
        Ok(p)
    }

    fn check(self) -> Result<BinaryRelevanceValidParams> {
        self.check_ref()?;
        Ok(self.0)
    }
}

impl<'a> Fit<CsrRows, Targets<'a>> for BinaryRelevanceValidParams {
    type Object = BinaryRelevance;

    /// Fits one model per label.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for non-±1 observed values with logistic /
    /// squared hinge; [`Error::ShapeMismatch`] and [`Error::Empty`] as
    /// [`Leml`](super::Leml).
    fn fit(&self, x: &CsrRows, targets: Targets<'a>) -> Result<BinaryRelevance> {
        let (n, d, l) = (x.n_rows(), x.n_features(), targets.n_labels());
        if targets.n_samples() != n {
            return Err(Error::ShapeMismatch {
                what: "label rows (one per sample)",
                expected: n,
                got: targets.n_samples(),
            });
        }
        if n == 0 || d == 0 || l == 0 {
            return Err(Error::Empty { what: "training set, feature set or label set" });
        }
        let labels = LabelData::new(targets);
        labels.check(self.loss)?;
        let design = SparseDesign::new(x);
        let gram =
            (self.loss == Loss::Squared && matches!(labels, LabelData::Full { .. }) && gram_is_cheaper(&design, l))
                .then(|| design.gram());
        let identity = Col::from_fn(l * l, |p| if p / l == p % l { 1.0 } else { 0.0 });
        let mut w = Col::zeros(d * l);
        let solver = StepSolver {
            cg: CgParams::default().tol(self.cg_tol).max_iter(self.max_cg_iter),
            tron: TronParams::default().eps(self.tron_eps).max_iter(self.tron_max_iter).max_cg_iter(self.max_cg_iter),
        };
        let problem = Problem {
            design: &design,
            labels: &labels,
            loss: self.loss,
            lambda: self.lambda,
            k: l,
            solver,
            gram: gram.as_ref(),
        };
        problem.w_step(slice(identity.as_ref()), &mut w)?;
        Ok(BinaryRelevance {
            n_features: d,
            n_labels: l,
            w: slice(w.as_ref()).to_vec(),
            threshold: labels.threshold(self.loss),
        })
    }
}

/// Fitted binary relevance: scores $x^\top W$, `W` `(n_features, n_labels)`.
///
/// # Example
/// See [`BinaryRelevanceParams`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BinaryRelevance {
    n_features: usize,
    n_labels: usize,
    w: Vec<f64>,
    threshold: f64,
}

impl BinaryRelevance {
    /// Default parameters.
    pub fn params() -> BinaryRelevanceParams {
        BinaryRelevanceParams::default()
    }

    /// Number of input features `d`.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// `W` `(n_features, n_labels)`.
    pub fn w(&self) -> faer::MatRef<'_, f64> {
        view(&self.w, self.n_features, self.n_labels)
    }
}

impl ScoreModel<CsrRows> for BinaryRelevance {
    fn n_labels(&self) -> usize {
        self.n_labels
    }
    fn decision_threshold(&self) -> f64 {
        self.threshold
    }
    fn scores(&self, x: &CsrRows) -> Result<Mat<f64>> {
        super::low_rank_scores(x, &self.w, None, self.n_features, self.n_labels, self.n_labels)
    }
}

impl crate::persist::Validate for BinaryRelevance {
    fn validate(&self) -> std::result::Result<(), crate::persist::Invalid> {
        use crate::persist::{ensure, finite_slice};
        let (d, l) = (self.n_features, self.n_labels);
        ensure(d > 0 && l > 0, || "binary relevance model has no features or no labels".into())?;
        ensure(d.checked_mul(l) == Some(self.w.len()), || {
            format!("binary relevance W has {} entries for {d} x {l}", self.w.len())
        })?;
        finite_slice("binary relevance W", &self.w)?;
        finite_slice("binary relevance threshold", &[self.threshold])
    }
}
