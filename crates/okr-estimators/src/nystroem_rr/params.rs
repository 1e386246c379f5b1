use serde::{Deserialize, Serialize};

use crate::core::checks;
use crate::nystroem::Anchors;
use crate::{Error, ParamGuard, Result};

/// Validated Nystroem reduced-rank hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `rank` | `64` | rank $p$ of the output projection | `>= 1` |
/// | `lambda1` | `1e-3` | ridge of Algorithm 1 on the subset, $(K_S + \lvert S\rvert\lambda_1 I)$ | `(0, inf)` |
/// | `lambda2` | `lambda1` | ridge of the Nystroem KRR, $K_{nm}^\top K_{nm} + n\lambda_2 K_{mm}$ | `(0, inf)` |
/// | `anchors` | `Uniform(1000)` | Nystroem anchors (drawn as [`Nystroem`](crate::Nystroem) does) | `m >= 1`, indices `< n` |
/// | `subset` | `Uniform(2000)` | training points on which the projection is learned | `>= 1`, indices `< n` |
/// | `seed` | `0` | anchors use `seed`, a uniform subset `seed + 1` (`ChaCha8Rng`) | any |
/// | `rank_tolerance` | `1e-10` | eigenvalues $\mu_i \le \mathrm{tol}\cdot\mu_0$ of $K_h$ dropped | `[0, 1)` |
/// | `pinv_rtol` | `1e-12` | pseudo-inverse threshold of the Nystroem system | `[0, 1)` |
/// | `chunk_rows` | `2048` | rows of $K_{nm}$ per streamed chunk | `>= 1` |
/// | `input_kernel`, `output_kernel` | (given) | $k_x$, $k_y$ | |
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NystroemReducedRankValidParams<KX, KY> {
    pub(crate) rank: usize,
    pub(crate) lambda1: f64,
    pub(crate) lambda2: Option<f64>,
    pub(crate) anchors: Anchors,
    pub(crate) subset: Anchors,
    pub(crate) seed: u64,
    pub(crate) rank_tolerance: f64,
    pub(crate) pinv_rtol: f64,
    pub(crate) chunk_rows: usize,
    pub(crate) input_kernel: KX,
    pub(crate) output_kernel: KY,
}

impl<KX, KY> NystroemReducedRankValidParams<KX, KY> {
    /// Requested rank $p$.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Ridge $\lambda_1$ of the projection (Algorithm 1 on the subset).
    pub fn lambda1(&self) -> f64 {
        self.lambda1
    }
    /// Ridge $\lambda_2$ of the Nystroem KRR (`lambda1` when unset).
    pub fn lambda2(&self) -> f64 {
        self.lambda2.unwrap_or(self.lambda1)
    }
    /// Anchor choice.
    pub fn anchors(&self) -> &Anchors {
        &self.anchors
    }
    /// Subset choice.
    pub fn subset(&self) -> &Anchors {
        &self.subset
    }
    /// Seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Input kernel.
    pub fn input_kernel(&self) -> &KX {
        &self.input_kernel
    }
    /// Output kernel.
    pub fn output_kernel(&self) -> &KY {
        &self.output_kernel
    }
}

/// Nystroem reduced-rank hyper-parameters (builder; setters store,
/// [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use okr_estimators::nystroem::Anchors;
/// use okr_estimators::{NystroemReducedRank, ParamGuard};
/// use okr_kernels::Linear;
/// let p = NystroemReducedRank::params(Linear, Linear).rank(8).subset(Anchors::Uniform(500)).lambda2(1e-4);
/// let v = p.check_ref()?;
/// assert_eq!((v.rank(), v.lambda1(), v.lambda2()), (8, 1e-3, 1e-4));
/// assert!(NystroemReducedRank::params(Linear, Linear).rank(0).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NystroemReducedRankParams<KX, KY>(pub(crate) NystroemReducedRankValidParams<KX, KY>);

impl<KX, KY> NystroemReducedRankParams<KX, KY> {
    /// Parameters with the given kernels and the defaults of the table above.
    pub fn new(input_kernel: KX, output_kernel: KY) -> Self {
        Self(NystroemReducedRankValidParams {
            rank: 64,
            lambda1: 1e-3,
            lambda2: None,
            anchors: Anchors::Uniform(1000),
            subset: Anchors::Uniform(2000),
            seed: 0,
            rank_tolerance: 1e-10,
            pinv_rtol: 1e-12,
            chunk_rows: crate::nystroem::DEFAULT_CHUNK_ROWS,
            input_kernel,
            output_kernel,
        })
    }
    /// Sets the rank $p$.
    pub fn rank(mut self, p: usize) -> Self {
        self.0.rank = p;
        self
    }
    /// Sets $\lambda_1$ (projection ridge).
    pub fn lambda1(mut self, lambda: f64) -> Self {
        self.0.lambda1 = lambda;
        self
    }
    /// Sets $\lambda_2$ (Nystroem ridge).
    pub fn lambda2(mut self, lambda: f64) -> Self {
        self.0.lambda2 = Some(lambda);
        self
    }
    /// Sets the anchors.
    pub fn anchors(mut self, anchors: Anchors) -> Self {
        self.0.anchors = anchors;
        self
    }
    /// Sets the subset on which the projection is learned.
    pub fn subset(mut self, subset: Anchors) -> Self {
        self.0.subset = subset;
        self
    }
    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
    /// Sets the relative eigenvalue tolerance of the rank cap.
    pub fn rank_tolerance(mut self, tol: f64) -> Self {
        self.0.rank_tolerance = tol;
        self
    }
    /// Sets the pseudo-inverse threshold of the Nystroem system.
    pub fn pinv_rtol(mut self, rtol: f64) -> Self {
        self.0.pinv_rtol = rtol;
        self
    }
    /// Sets the rows of $K_{nm}$ per streamed chunk.
    pub fn chunk_rows(mut self, rows: usize) -> Self {
        self.0.chunk_rows = rows;
        self
    }
}

impl<KX, KY> ParamGuard for NystroemReducedRankParams<KX, KY> {
    type Checked = NystroemReducedRankValidParams<KX, KY>;
    type Error = Error;

    fn check_ref(&self) -> Result<&Self::Checked> {
        let p = &self.0;
        checks::positive("lambda1", p.lambda1)?;
        checks::positive("lambda2", p.lambda2())?;
        checks::fraction("rank_tolerance", p.rank_tolerance)?;
        checks::fraction("pinv_rtol", p.pinv_rtol)?;
        checks::at_least_one("rank", p.rank)?;
        checks::at_least_one("anchors", p.anchors.count())?;
        checks::at_least_one("subset", p.subset.count())?;
        checks::at_least_one("chunk_rows", p.chunk_rows)?;
        Ok(&self.0)
    }

    fn check(self) -> Result<Self::Checked> {
        self.check_ref()?;
        Ok(self.0)
    }
}
