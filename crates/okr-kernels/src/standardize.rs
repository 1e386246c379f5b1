//! Per-feature standardization fitted on training features only.

use faer::Mat;
use serde::{Deserialize, Serialize};

use crate::{CsrRows, DenseRows, Error, Features, Result, Rows};

/// Whether every stored feature value is 0 or 1 (binary features, which okr
/// leaves unstandardized by default).
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, Features, is_binary};
/// assert!(is_binary(&Features::Dense(DenseRows::from_rows(&[vec![0.0, 1.0]])?)));
/// assert!(!is_binary(&Features::Dense(DenseRows::from_rows(&[vec![0.5, 1.0]])?)));
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub fn is_binary(x: &Features) -> bool {
    match x {
        Features::Sparse(s) => s.values().iter().all(|&v| v == 0.0 || v == 1.0),
        Features::Dense(d) => {
            let m = d.as_mat();
            (0..m.ncols()).all(|j| m.col(j).iter().all(|&v| v == 0.0 || v == 1.0))
        }
    }
}

/// Per-feature mean $m_j$ and scale $s_j$ fitted on training features, for
/// $x_j \mapsto (x_j - m_j) / s_j$ (scikit-learn's `StandardScaler`).
///
/// - $m_j$ is the mean over the training rows, $s_j$ the **population** standard
///   deviation (`ddof = 0`, as `StandardScaler`): $s_j^2 = \frac1n \sum_i (x_{ij} - m_j)^2$,
///   computed in two passes. Implicit zeros of sparse rows count as values.
/// - Constant features get $s_j = 1$ (left unscaled). A feature counts as
///   constant when its variance is within rounding of zero, scikit-learn's test
///   $s_j^2 \le n\,\epsilon\,s_j^2 + (n\,m_j\,\epsilon)^2$ ($\epsilon$ the machine epsilon).
///
/// **Dense features**: [`Standardizer::transform`] centers and scales.
///
/// **Sparse features** are never densified. Centering would destroy sparsity, and
/// distance-based kernels do not need it: for the Gaussian kernel
/// $\|(x - y) / s\|^2 = x^\top W x + y^\top W y - 2 x^\top W y$ with
/// $W = \mathrm{diag}(1 / s_j^2)$, which is [`Standardizer::feature_weights`] passed to
/// the kernel, or equivalently the kernel applied to [`Standardizer::scale_sparse`]
/// (rows divided by $s$, not centered). For sparse data, standardization therefore
/// applies only to distance-based (translation-invariant) kernels such as the
/// Gaussian and Laplacian ones; a linear or polynomial kernel on scaled sparse rows
/// sees uncentered features.
///
/// Serde-serializable, so it is saved with a fitted model; deserialization
/// checks what [`fit`](Standardizer::fit) guarantees (one finite mean and one
/// finite positive scale per feature).
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, Features, Standardizer};
/// let train = DenseRows::from_rows(&[vec![1.0, 5.0], vec![3.0, 5.0]])?;
/// let s = Standardizer::fit(&Features::Dense(train.clone()))?;
/// assert_eq!(s.mean(), &[2.0, 5.0]);
/// assert_eq!(s.scale(), &[1.0, 1.0]); // population std of [1, 3] is 1; constant -> 1
/// let z = s.transform(&train)?;
/// assert_eq!(z.as_mat()[(0, 0)], -1.0);
/// assert_eq!(z.as_mat()[(1, 1)], 0.0);
/// assert_eq!(s.feature_weights(), vec![1.0, 1.0]);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "StandardizerRepr")]
pub struct Standardizer {
    mean: Vec<f64>,
    scale: Vec<f64>,
}

/// The serialized fields, checked before they become a [`Standardizer`].
#[derive(Deserialize)]
struct StandardizerRepr {
    mean: Vec<f64>,
    scale: Vec<f64>,
}

impl TryFrom<StandardizerRepr> for Standardizer {
    type Error = Error;

    fn try_from(r: StandardizerRepr) -> Result<Self> {
        if r.mean.len() != r.scale.len() {
            return Err(Error::ShapeMismatch {
                what: "standardizer scales",
                expected: r.mean.len(),
                got: r.scale.len(),
            });
        }
        if r.mean.iter().any(|m| !m.is_finite()) {
            return Err(Error::NonFinite { what: "standardizer means", row: 0 });
        }
        if let Some(&s) = r.scale.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(Error::InvalidParameter { name: "standardizer scale", value: s, expected: "finite and > 0" });
        }
        Ok(Self { mean: r.mean, scale: r.scale })
    }
}

impl Standardizer {
    /// Fits the mean and scale of every feature on `train` (dense or sparse).
    ///
    /// # Errors
    /// [`Error::Empty`] if `train` has no rows.
    pub fn fit(train: &Features) -> Result<Self> {
        let n = train.n_rows();
        if n == 0 {
            return Err(Error::Empty { what: "training features for the standardizer" });
        }
        let d = train.n_features();
        let nf = n as f64;
        let mut mean = vec![0.0; d];
        let mut sq = vec![0.0; d];
        match train {
            Features::Dense(x) => {
                let x = x.as_mat();
                for j in 0..d {
                    let col = x.col(j);
                    let m = col.iter().sum::<f64>() / nf;
                    mean[j] = m;
                    sq[j] = col.iter().map(|&v| (v - m) * (v - m)).sum();
                }
            }
            Features::Sparse(x) => {
                let mut count = vec![0usize; d];
                for (&j, &v) in x.indices().iter().zip(x.values()) {
                    mean[j] += v;
                    count[j] += 1;
                }
                for m in &mut mean {
                    *m /= nf;
                }
                for (&j, &v) in x.indices().iter().zip(x.values()) {
                    sq[j] += (v - mean[j]) * (v - mean[j]);
                }
                for j in 0..d {
                    // the implicit zeros each deviate by -mean
                    sq[j] += (n - count[j]) as f64 * mean[j] * mean[j];
                }
            }
        }
        let eps = f64::EPSILON;
        let scale = mean
            .iter()
            .zip(&sq)
            .map(|(&m, &s)| {
                let var = s / nf;
                let bound = nf * eps * var + (nf * m * eps).powi(2);
                if var <= bound { 1.0 } else { var.sqrt() }
            })
            .collect();
        Ok(Self { mean, scale })
    }

    /// Number of features it was fitted on.
    pub fn n_features(&self) -> usize {
        self.mean.len()
    }

    /// Per-feature means $m_j$.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Per-feature scales $s_j$ (population standard deviations, 1 for constant features).
    pub fn scale(&self) -> &[f64] {
        &self.scale
    }

    /// The Gaussian-kernel feature weights $w_j = 1 / s_j^2$, so that
    /// $\sum_j w_j (x_j - y_j)^2 = \|(x - y) / s\|^2$.
    pub fn feature_weights(&self) -> Vec<f64> {
        self.scale.iter().map(|s| 1.0 / (s * s)).collect()
    }

    fn check_width(&self, d: usize) -> Result<()> {
        if d != self.n_features() {
            return Err(Error::ShapeMismatch {
                what: "number of features (standardizer)",
                expected: self.n_features(),
                got: d,
            });
        }
        Ok(())
    }

    /// $(x_{ij} - m_j) / s_j$ for dense rows.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `x` has a different number of features.
    pub fn transform(&self, x: &DenseRows) -> Result<DenseRows> {
        self.check_width(x.n_features())?;
        let x = x.as_mat();
        DenseRows::new(Mat::from_fn(x.nrows(), x.ncols(), |i, j| (x[(i, j)] - self.mean[j]) / self.scale[j]))
    }

    /// Standardized features in dense form: [`transform`](Self::transform) of
    /// the rows, sparse rows densified first (a model fitted on standardized
    /// dense rows reads test rows of either form).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `x` has a different number of features.
    pub fn transform_features(&self, x: &Features) -> Result<Features> {
        Ok(Features::Dense(match x {
            Features::Dense(d) => self.transform(d)?,
            Features::Sparse(s) => {
                self.check_width(s.n_features())?;
                self.transform(&DenseRows::new(s.to_dense())?)?
            }
        }))
    }

    /// $x_{ij} / s_j$ for sparse rows: scaled, **not centered** (sparsity is kept).
    /// Distances between scaled rows equal distances between standardized rows;
    /// see the type docs.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `x` has a different number of features.
    ///
    /// # Example
    /// ```
    /// use okr_kernels::{CsrRows, Features, Standardizer};
    /// let x = CsrRows::from_rows(2, vec![vec![(0, 2.0)], vec![], vec![(0, 4.0), (1, 3.0)], vec![]])?;
    /// let s = Standardizer::fit(&Features::Sparse(x.clone()))?;
    /// let z = s.scale_sparse(&x)?;
    /// assert_eq!(z.nnz(), x.nnz());
    /// assert_eq!(z.row(2).1[0], 4.0 / s.scale()[0]);
    /// Ok::<(), okr_kernels::Error>(())
    /// ```
    pub fn scale_sparse(&self, x: &CsrRows) -> Result<CsrRows> {
        self.check_width(x.n_features())?;
        let values = x.indices().iter().zip(x.values()).map(|(&j, &v)| v / self.scale[j]).collect();
        CsrRows::new(x.n_features(), x.indptr().to_vec(), x.indices().to_vec(), values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn dense_matches_population_std() {
        let rows = vec![vec![1.0, 0.1, -2.0], vec![2.0, 0.1, 0.0], vec![6.0, 0.1, 5.0], vec![-1.0, 0.1, 1.0]];
        let x = DenseRows::from_rows(&rows).unwrap();
        let s = Standardizer::fit(&Features::Dense(x.clone())).unwrap();
        for j in 0..3 {
            let col: Vec<f64> = rows.iter().map(|r| r[j]).collect();
            let m = col.iter().sum::<f64>() / 4.0;
            let v = col.iter().map(|c| (c - m).powi(2)).sum::<f64>() / 4.0;
            assert!(close(s.mean()[j], m));
            let expect = if j == 1 { 1.0 } else { v.sqrt() };
            assert!(close(s.scale()[j], expect), "{j}: {} vs {expect}", s.scale()[j]);
        }
        // 0.1 is not representable: the constant test must absorb any rounding of the mean
        assert_eq!(s.scale()[1], 1.0);
        let z = s.transform(&x).unwrap();
        for j in [0, 2] {
            let col: Vec<f64> = (0..4).map(|i| z.as_mat()[(i, j)]).collect();
            assert!(close(col.iter().sum::<f64>(), 0.0));
            assert!(close(col.iter().map(|c| c * c).sum::<f64>() / 4.0, 1.0));
        }
    }

    #[test]
    fn sparse_equals_dense_and_distances_match() {
        let x = CsrRows::from_rows(
            4,
            vec![vec![(0, 1.0), (2, 3.0)], vec![(1, -2.0)], vec![], vec![(0, 5.0), (3, 7.0)], vec![(2, 1.0)]],
        )
        .unwrap();
        let dense = DenseRows::new(x.to_dense()).unwrap();
        let s1 = Standardizer::fit(&Features::Sparse(x.clone())).unwrap();
        let s2 = Standardizer::fit(&Features::Dense(dense.clone())).unwrap();
        for j in 0..4 {
            assert!(close(s1.mean()[j], s2.mean()[j]) && close(s1.scale()[j], s2.scale()[j]));
        }
        let z = s2.transform(&dense).unwrap();
        let zs = s1.scale_sparse(&x).unwrap().to_dense();
        let w = s1.feature_weights();
        let xd = x.to_dense();
        for a in 0..5 {
            for b in 0..5 {
                let d_std: f64 = (0..4).map(|j| (z.as_mat()[(a, j)] - z.as_mat()[(b, j)]).powi(2)).sum();
                let d_scaled: f64 = (0..4).map(|j| (zs[(a, j)] - zs[(b, j)]).powi(2)).sum();
                let d_w: f64 = (0..4).map(|j| w[j] * (xd[(a, j)] - xd[(b, j)]).powi(2)).sum();
                assert!(close(d_std, d_scaled) && close(d_std, d_w), "{a} {b}");
            }
        }
    }

    #[test]
    fn errors_and_serde() {
        let empty = Features::Dense(DenseRows::new(Mat::zeros(0, 3)).unwrap());
        assert!(matches!(Standardizer::fit(&empty), Err(Error::Empty { .. })));
        let x = DenseRows::from_rows(&[vec![1.0, 2.0], vec![3.0, 5.0]]).unwrap();
        let s = Standardizer::fit(&Features::Dense(x)).unwrap();
        let wrong = DenseRows::from_rows(&[vec![1.0]]).unwrap();
        assert!(matches!(s.transform(&wrong), Err(Error::ShapeMismatch { expected: 2, got: 1, .. })));
        let back: Standardizer = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        for bad in [
            r#"{"mean":[0.0],"scale":[1.0,1.0]}"#,
            r#"{"mean":[0.0],"scale":[0.0]}"#,
            r#"{"mean":[0.0],"scale":[-1.0]}"#,
        ] {
            assert!(serde_json::from_str::<Standardizer>(bad).is_err(), "{bad}");
        }
    }
}
