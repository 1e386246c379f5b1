//! Random sketches $R \in \mathbb R^{m \times n}$ applied to kernel matrices
//! without forming them: $R K$, $K R^\top$ and $R K R^\top$ (El Ahmad et al.,
//! SISOKR poster; Rudi et al. 2015 for sub-sampling).
//!
//! **Scaling.** Every kind is scaled so that $\mathbb E[R^\top R] = I_n$:
//!
//! | kind | entries | touched columns |
//! |---|---|---|
//! | [`Gaussian`](SketchKind::Gaussian) | i.i.d. $\mathcal N(0, 1/m)$ (poster A5, $\nu = 1$) | all |
//! | [`Rademacher`](SketchKind::Rademacher) | i.i.d. $\pm 1/\sqrt m$ | all |
//! | [`Uniform`](SketchKind::Uniform) | row $k$ is $\sqrt{n/m}\, e_{i_k}^\top$, $m$ distinct $i_k$ drawn uniformly (without replacement; $m \le n$, larger $m$ is capped) | $m$ |
//! | [`Leverage`](SketchKind::Leverage) | row $k$ is $e_{i_k}^\top / \sqrt{m q_{i_k}}$, $i_k \sim q$, $q \propto$ approximate ridge leverage scores | $\le m$ |
//! | [`SparseGaussian`](SketchKind::SparseGaussian) | $b_{ij} g_{ij} / \sqrt{m p}$, $b \sim \mathrm{Bernoulli}(p)$, $g \sim \mathcal N(0, 1)$ | about $n(1 - (1-p)^m)$ |
//! | [`SparseRademacher`](SketchKind::SparseRademacher) | $b_{ij} \sigma_{ij} / \sqrt{m p}$, $\sigma = \pm 1$ | as above |
//! | [`Sjlt`](SketchKind::Sjlt) | each column has `s` entries $\pm 1/\sqrt s$ in distinct random rows | all |
//! | [`Identity`](SketchKind::Identity) | $R = I_n$ (`m = n`; an exactness check, not a reduction) | all |
//!
//! The Gaussian, Rademacher and p-sparsified kinds satisfy the poster's
//! assumption A5 ($\mathbb E R_{ij} = 0$, $\mathbb E R_{ij}^2 = 1/m$);
//! sub-sampling does not (its entries are not independent) but has the same
//! second moment.
//!
//! **Cost.** A sketch keeps the list of columns it touches (its *support*
//! $S$) and its restriction $R_S$ (`m x |S|`, dense or compressed by column).
//! Since $R K = R_S K(X_S, X)$, only the Gram columns of the support are ever
//! computed: sub-sampling sketches cost $O(n m)$ kernel evaluations for
//! $K R^\top$, dense sketches $O(n^2)$ (in row tiles, memory $O(n m)$).

mod apply;
mod draw;

use faer::Mat;
use serde::{Deserialize, Serialize};

pub(crate) use apply::PreparedSketch;
pub use apply::SketchedGram;
pub use draw::approximate_leverage_scores;
pub(crate) use draw::distinct_uniform;

use crate::{Error, Result};

/// The distribution a sketch is drawn from (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SketchKind {
    /// i.i.d. $\mathcal N(0, 1/m)$ entries.
    Gaussian,
    /// i.i.d. $\pm 1/\sqrt m$ entries.
    Rademacher,
    /// Uniform sub-sampling without replacement, rows $\sqrt{n/m}\, e_i^\top$.
    Uniform,
    /// Sub-sampling with probabilities proportional to approximate ridge
    /// leverage scores $\tilde\ell_i(\lambda)$ (computed from a uniform
    /// pilot of `m` distinct points, at the estimator's $\lambda$).
    Leverage,
    /// p-sparsified Gaussian: each entry is non-zero with probability `p`.
    SparseGaussian {
        /// Density `p` in `(0, 1]`; `None` means `min(1, 8/n)`, about 8
        /// non-zeros per row.
        p: Option<f64>,
    },
    /// p-sparsified Rademacher: each entry is non-zero with probability `p`.
    SparseRademacher {
        /// Density `p` in `(0, 1]`; `None` means `min(1, 8/n)`.
        p: Option<f64>,
    },
    /// Sparse Johnson-Lindenstrauss transform: `s` non-zeros per column.
    Sjlt {
        /// Non-zeros per column, `1 <= s <= m`.
        s: usize,
    },
    /// The identity (the sketch size is ignored: `m = n`).
    Identity,
}

impl SketchKind {
    /// Kebab-case name, as in the `KIND:m` syntax and result records.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Gaussian => "gaussian",
            Self::Rademacher => "rademacher",
            Self::Uniform => "uniform",
            Self::Leverage => "leverage",
            Self::SparseGaussian { .. } => "sparse-gaussian",
            Self::SparseRademacher { .. } => "sparse-rademacher",
            Self::Sjlt { .. } => "sjlt",
            Self::Identity => "identity",
        }
    }
}

/// A sketch kind and size `m`: what to draw at fit time.
///
/// Parsed from `KIND:m[:PARAM]`, with `KIND` one of `gaussian`,
/// `rademacher`, `uniform`, `leverage`, `sparse-gaussian[:p]`,
/// `sparse-rademacher[:p]`, `sjlt[:s]` (default `s = 4`, capped at `m`),
/// `identity` (no size).
///
/// # Example
/// ```
/// use okr_estimators::sketch::{SketchKind, SketchSpec};
/// let s: SketchSpec = "sparse-rademacher:200:0.01".parse()?;
/// assert_eq!(s.size, 200);
/// assert_eq!(s.kind, SketchKind::SparseRademacher { p: Some(0.01) });
/// assert_eq!(s.to_string(), "sparse-rademacher:200:0.01");
/// assert!("gaussian:0".parse::<SketchSpec>().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SketchSpec {
    /// Distribution.
    pub kind: SketchKind,
    /// Number of rows `m` (ignored by [`SketchKind::Identity`]).
    pub size: usize,
}

impl SketchSpec {
    /// A sketch of `size` rows of the given kind.
    pub fn new(kind: SketchKind, size: usize) -> Self {
        Self { kind, size }
    }

    /// Checks the size and the kind's parameter.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for `m = 0`, `p` outside `(0, 1]`, or
    /// `s` outside `1..=m`.
    pub fn check(&self) -> Result<()> {
        let bad = |name, value: String, expected| Err(Error::InvalidParameter { name, value, expected });
        if self.kind != SketchKind::Identity && self.size == 0 {
            return bad("sketch size", "0".into(), "an integer >= 1");
        }
        match self.kind {
            SketchKind::SparseGaussian { p: Some(p) } | SketchKind::SparseRademacher { p: Some(p) }
                if !(p > 0.0 && p <= 1.0) =>
            {
                bad("sketch density p", format!("{p}"), "a number in (0, 1]")
            }
            SketchKind::Sjlt { s } if s == 0 || s > self.size => {
                bad("sjlt non-zeros per column s", format!("{s}"), "an integer in 1..=m")
            }
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for SketchSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            SketchKind::Identity => write!(f, "identity"),
            SketchKind::SparseGaussian { p: Some(p) } | SketchKind::SparseRademacher { p: Some(p) } => {
                write!(f, "{}:{}:{p}", self.kind.name(), self.size)
            }
            SketchKind::Sjlt { s } => write!(f, "sjlt:{}:{s}", self.size),
            k => write!(f, "{}:{}", k.name(), self.size),
        }
    }
}

impl std::str::FromStr for SketchSpec {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let invalid = || Error::InvalidParameter {
            name: "sketch",
            value: text.to_string(),
            expected: "KIND:m with KIND one of gaussian, rademacher, uniform, leverage, \
                       sparse-gaussian[:p], sparse-rademacher[:p], sjlt[:s], or identity",
        };
        let parts: Vec<&str> = text.trim().split(':').collect();
        if parts == ["identity"] {
            return Ok(Self::new(SketchKind::Identity, 0));
        }
        let size: usize = parts.get(1).and_then(|m| m.parse().ok()).ok_or_else(invalid)?;
        let extra = parts.get(2);
        let p = match extra {
            Some(v) => Some(v.parse::<f64>().map_err(|_| invalid())?),
            None => None,
        };
        let kind = match (parts[0], parts.len()) {
            ("gaussian", 2) => SketchKind::Gaussian,
            ("rademacher", 2) => SketchKind::Rademacher,
            ("uniform", 2) => SketchKind::Uniform,
            ("leverage", 2) => SketchKind::Leverage,
            ("sparse-gaussian", 2 | 3) => SketchKind::SparseGaussian { p },
            ("sparse-rademacher", 2 | 3) => SketchKind::SparseRademacher { p },
            ("sjlt", 2) => SketchKind::Sjlt { s: 4.min(size.max(1)) },
            ("sjlt", 3) => SketchKind::Sjlt { s: extra.and_then(|s| s.parse().ok()).ok_or_else(invalid)? },
            _ => return Err(invalid()),
        };
        let spec = Self::new(kind, size);
        spec.check()?;
        Ok(spec)
    }
}

/// How the restriction $R_S$ of a sketch to its support is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Restriction {
    /// `m x |S|` dense.
    Dense(#[serde(with = "okr_linalg::serde_mat")] Mat<f64>),
    /// Compressed columns over the support: entries of column `s` are
    /// `rows[ptr[s]..ptr[s + 1]]` with `values[..]`.
    Sparse { ptr: Vec<usize>, rows: Vec<usize>, values: Vec<f64> },
}

/// A drawn sketch $R$ `(m, n)`: its support $S$ (the columns it touches, in
/// increasing order) and its restriction $R_S$ `(m, |S|)`.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::sketch::{Sketch, SketchKind, SketchSpec};
/// let r = Sketch::draw(&SketchSpec::new(SketchKind::Uniform, 3), 10, 7)?;
/// assert_eq!((r.nrows(), r.ncols()), (3, 10));
/// assert!(r.support().len() <= 3);
/// // Applying R to a matrix only reads the rows of its support.
/// let b = Mat::from_fn(10, 2, |i, j| (i + j) as f64);
/// let dense = r.to_dense() * &b;
/// let applied = r.apply(b.as_ref());
/// assert!((dense - applied).norm_max() < 1e-12);
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sketch {
    n: usize,
    m: usize,
    support: Vec<usize>,
    restriction: Restriction,
}

impl Sketch {
    /// Number of rows `m`.
    pub fn nrows(&self) -> usize {
        self.m
    }
    /// Number of columns `n` (the sample count it sketches).
    pub fn ncols(&self) -> usize {
        self.n
    }
    /// The columns the sketch touches, increasing.
    pub fn support(&self) -> &[usize] {
        &self.support
    }
    /// Number of stored non-zeros of $R_S$ (`m |S|` when dense).
    pub fn nnz(&self) -> usize {
        match &self.restriction {
            Restriction::Dense(r) => r.nrows() * r.ncols(),
            Restriction::Sparse { values, .. } => values.len(),
        }
    }

    /// The restriction $R_S$ `(m, |S|)` as a dense matrix.
    pub fn support_matrix(&self) -> Mat<f64> {
        match &self.restriction {
            Restriction::Dense(r) => r.clone(),
            Restriction::Sparse { ptr, rows, values } => {
                let mut out = Mat::zeros(self.m, self.support.len());
                for s in 0..self.support.len() {
                    for e in ptr[s]..ptr[s + 1] {
                        out[(rows[e], s)] += values[e];
                    }
                }
                out
            }
        }
    }

    /// The whole sketch $R$ `(m, n)` as a dense matrix (tests and small `n`).
    pub fn to_dense(&self) -> Mat<f64> {
        let rs = self.support_matrix();
        let mut out = Mat::zeros(self.m, self.n);
        for (s, &col) in self.support.iter().enumerate() {
            out.col_mut(col).copy_from(rs.col(s));
        }
        out
    }
}
