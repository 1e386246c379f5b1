use faer::Mat;
use okr_kernels::{CsrRows, LabelSets, Rows};
use serde::{Deserialize, Serialize};

use super::sparse::{Csr, FeatureMap, SparseDesign, gemm, view};
use crate::core::checks;
use crate::{Error, Fit, ParamGuard, Result, ScoreModel};

/// Validated parameters of [`Cplst`]: the only type that can fit (see
/// [`CplstParams`] for the builder).
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `rank` | `10` | `k`, rank of $Z$ | `>= 1` |
/// | `center` | `false` | fit $Y - \mathbf 1 \bar y^\top$ and add $\bar y$ back to the scores | |
/// | `bias` | `false` | append a constant feature 1 to every input | |
/// | `rtol` | `1e-10` | drop directions with $\sigma_a^2 \le$ `rtol` $\sigma_1^2$ (pseudo-inverse) | `[0, 1)` |
///
/// With the defaults this is exactly Claim 2 of Yu et al. (2014): CPLST's
/// closed form equals the unregularised rank-`k` least-squares solution
/// (Claim 1) $Z = V_X \Sigma_X^{-1} M_k$, $M = U_X^\top Y$, $X = U_X \Sigma_X V_X^\top$.
/// The SVD of `X` is taken through the eigendecomposition of $X^\top X$
/// (computed sparsely), so the cost is $O(\sum_i \mathrm{nnz}(x_i)^2 + d^3 + \mathrm{nnz}(X) L)$.
///
/// # Example
/// ```
/// use okr_estimators::ScoreModel;
/// use okr_estimators::leml::Cplst;
/// use okr_kernels::{CsrRows, LabelSets};
/// let x = CsrRows::from_rows(2, vec![vec![(0, 1.0)], vec![(1, 2.0)], vec![(0, 1.0), (1, 1.0)]])?;
/// let y = LabelSets::new(2, vec![vec![0], vec![1], vec![0, 1]])?;
/// # use okr_estimators::Fit;
/// let model = Cplst::params().rank(2).fit(&x, &y)?;
/// let s = model.scores(&x)?;
/// assert!((s[(0, 0)] - 1.0).abs() < 1e-10 && s[(1, 0)].abs() < 1e-10); // exact fit
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CplstValidParams {
    rank: usize,
    center: bool,
    bias: bool,
    rtol: f64,
}

/// CPLST hyper-parameters (builder; setters store, [`ParamGuard::check`]
/// validates; the table is on [`CplstValidParams`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CplstParams(CplstValidParams);

impl Default for CplstValidParams {
    fn default() -> Self {
        Self { rank: 10, center: false, bias: false, rtol: 1e-10 }
    }
}

impl CplstParams {
    /// Sets the rank `k`.
    pub fn rank(mut self, rank: usize) -> Self {
        self.0.rank = rank;
        self
    }
    /// Centres the labels (the original CPLST code does).
    pub fn center(mut self, center: bool) -> Self {
        self.0.center = center;
        self
    }
    /// Adds a constant feature.
    pub fn bias(mut self, bias: bool) -> Self {
        self.0.bias = bias;
        self
    }
    /// Sets the relative eigenvalue cut-off of the pseudo-inverse.
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.0.rtol = rtol;
        self
    }
}

impl CplstValidParams {
    /// The rank `k`.
    pub fn rank(&self) -> usize {
        self.rank
    }
}

impl ParamGuard for CplstParams {
    type Checked = CplstValidParams;
    type Error = Error;

    fn check_ref(&self) -> Result<&CplstValidParams> {
        checks::at_least_one("rank", self.0.rank)?;
        checks::fraction("rtol", self.0.rtol)?;
        Ok(&self.0)
    }

    fn check(self) -> Result<CplstValidParams> {
        self.check_ref()?;
        Ok(self.0)
    }
}

impl<'y> Fit<CsrRows, &'y LabelSets> for CplstValidParams {
    type Object = Cplst;

    /// Fits the closed form.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] / [`Error::Empty`] for inconsistent or empty
    /// data, and eigen/SVD failures.
    fn fit(&self, x: &CsrRows, y: &'y LabelSets) -> Result<Cplst> {
        let (n, l) = (x.n_rows(), y.n_labels());
        if y.n_rows() != n {
            return Err(Error::ShapeMismatch { what: "label rows (one per sample)", expected: n, got: y.n_rows() });
        }
        if n == 0 || x.n_features() == 0 || l == 0 {
            return Err(Error::Empty { what: "training set, feature set or label set" });
        }
        let xa = if self.bias { with_bias_feature(x)? } else { x.clone() };
        let d = xa.n_features();
        let design = SparseDesign::new(&xa);
        let gram = design.gram();
        // X^T Y through the dense (n, L) indicator; then centre.
        let yc = Csr::from_label_sets(y, 1.0);
        let mut ydense = vec![0.0; n * l];
        for i in 0..n {
            for p in yc.indptr[i]..yc.indptr[i + 1] {
                ydense[i * l + yc.indices[p]] = 1.0;
            }
        }
        let mut offset = vec![0.0; l];
        if self.center {
            for i in 0..n {
                for j in 0..l {
                    offset[j] += ydense[i * l + j];
                }
            }
            offset.iter_mut().for_each(|m| *m /= n as f64);
            for i in 0..n {
                for j in 0..l {
                    ydense[i * l + j] -= offset[j];
                }
            }
        }
        let mut xty = vec![0.0; d * l];
        design.tmul(&ydense, l, &mut xty);
        let eig = okr_linalg::eigh(gram.as_ref())?;
        let top = eig.values().first().copied().unwrap_or(0.0);
        let r = eig.values().iter().take_while(|&&v| v > self.rtol * top && v > 0.0).count();
        if r == 0 {
            return Err(Error::ZeroRank { what: "X^T X", tol: self.rtol });
        }
        let v = eig.vectors().subcols(0, r);
        let inv_sigma: Vec<f64> = eig.values()[..r].iter().map(|s| 1.0 / s.sqrt()).collect();
        // M = Sigma^{-1} V^T X^T Y = U_X^T Y  (r, L)
        let mut m = Mat::zeros(r, l);
        gemm(m.as_mut(), v.transpose(), view(&xty, d, l));
        for a in 0..r {
            for j in 0..l {
                m[(a, j)] *= inv_sigma[a];
            }
        }
        let svd = okr_linalg::thin_svd(m.as_ref())?;
        let k = self.rank.min(svd.s().len());
        // Z = V Sigma^{-1} U_k S_k V_k^T
        let mut left = Mat::from_fn(r, k, |a, t| svd.u()[(a, t)] * svd.s()[t] * inv_sigma[a]);
        let mut vl = Mat::zeros(d, k);
        gemm(vl.as_mut(), v, left.as_ref());
        left = vl;
        let mut z = Mat::zeros(d, l);
        gemm(z.as_mut(), left.as_ref(), svd.v().subcols(0, k).transpose());
        let z_rows: Vec<f64> = (0..d * l).map(|p| z[(p / l, p % l)]).collect();
        Ok(Cplst { params: *self, n_features: x.n_features(), n_labels: l, rank: k, z: z_rows, offset })
    }
}

/// `x` with a constant feature 1 appended as its last column (a bias for
/// every label in a linear model), the CPLST option `bias`.
///
/// # Errors
/// None in practice (the rows stay sorted and finite); the container's
/// checks are kept.
pub fn with_bias_feature(x: &CsrRows) -> Result<CsrRows> {
    let d = x.n_features();
    let rows = (0..x.n_rows())
        .map(|i| {
            let (idx, val) = x.row(i);
            idx.iter().copied().zip(val.iter().copied()).chain(std::iter::once((d, 1.0))).collect()
        })
        .collect();
    Ok(CsrRows::from_rows(d + 1, rows)?)
}

/// Fitted CPLST: scores $x^\top Z + \bar y$ with $Z$ of rank at most `k`.
///
/// # Example
/// See [`CplstParams`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cplst {
    params: CplstValidParams,
    n_features: usize,
    n_labels: usize,
    rank: usize,
    /// `(n_features [+ 1 with bias], n_labels)` row-major.
    z: Vec<f64>,
    offset: Vec<f64>,
}

impl Cplst {
    /// Default parameters.
    pub fn params() -> CplstParams {
        CplstParams::default()
    }

    /// Number of input features `d` (without the bias feature).
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// $Z$ `(n_features, n_labels)` (without the bias row).
    pub fn z(&self) -> faer::MatRef<'_, f64> {
        view(&self.z[..self.n_features * self.n_labels], self.n_features, self.n_labels)
    }

    /// The rank actually used (`min(k, rank of U_Xᵀ Y)`).
    pub fn rank(&self) -> usize {
        self.rank
    }
}

impl ScoreModel<CsrRows> for Cplst {
    fn n_labels(&self) -> usize {
        self.n_labels
    }
    fn decision_threshold(&self) -> f64 {
        0.5
    }
    fn scores(&self, x: &CsrRows) -> Result<Mat<f64>> {
        let (d, l) = (self.n_features, self.n_labels);
        let mut s = super::low_rank_scores(x, &self.z[..d * l], None, d, l, l)?;
        let bias_row = if self.params.bias { Some(&self.z[d * l..]) } else { None };
        for i in 0..s.nrows() {
            for j in 0..l {
                s[(i, j)] += self.offset[j] + bias_row.map_or(0.0, |b| b[j]);
            }
        }
        Ok(s)
    }
}

impl crate::persist::Validate for Cplst {
    fn validate(&self) -> std::result::Result<(), crate::persist::Invalid> {
        use crate::persist::{ensure, finite_slice};
        let p = &self.params;
        ensure(p.rank >= 1 && p.rtol >= 0.0 && p.rtol < 1.0, || "CPLST parameters out of range".into())?;
        let (d, l) = (self.n_features, self.n_labels);
        ensure(d > 0 && l > 0, || "CPLST model has no features or no labels".into())?;
        ensure(self.rank >= 1 && self.rank <= p.rank, || format!("CPLST rank {} (requested {})", self.rank, p.rank))?;
        let rows = d + usize::from(p.bias);
        ensure(rows.checked_mul(l) == Some(self.z.len()), || {
            format!("CPLST Z has {} entries for {rows} x {l}", self.z.len())
        })?;
        ensure(self.offset.len() == l, || format!("CPLST offset has {} entries for {l} labels", self.offset.len()))?;
        finite_slice("CPLST Z", &self.z)?;
        finite_slice("CPLST offset", &self.offset)
    }
}
