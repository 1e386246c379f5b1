//! The multi-label data set every reader returns: features, label sets and names.

use std::borrow::Cow;

pub use okr_kernels::Features;
use okr_kernels::{LabelSets, Rows};
use serde::{Deserialize, Serialize};

use crate::{Error, Result, split};

/// A multi-label data set: features `x` `(n_samples, n_features)`, label sets
/// `y` over `n_labels` labels, and the feature and label names.
///
/// Every reader returns one; estimators take it by `&`. The fields are public;
/// [`Dataset::new`] and [`Dataset::with_names`] check that they agree.
///
/// # Example
/// ```
/// use okr_eval::{Dataset, Features};
/// use okr_kernels::{DenseRows, LabelSets};
/// let x = DenseRows::from_rows(&[vec![0.0, 1.0], vec![2.0, 3.0], vec![4.0, 5.0]])?;
/// let y = LabelSets::new(3, vec![vec![0], vec![1, 2], vec![]])?;
/// let data = Dataset::new(x.into(), y)?;
/// assert_eq!((data.n_samples(), data.n_features(), data.n_labels()), (3, 2, 3));
/// assert_eq!(data.feature_names, ["f0", "f1"]);
/// let sub = data.select(&[2, 0]);
/// assert_eq!(sub.y.set(1), &[0]);
/// let (train, test) = data.train_test_split(0.34, 7)?;
/// assert_eq!((train.n_samples(), test.n_samples()), (1, 2));
/// Ok::<(), okr_eval::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// Input features, `(n_samples, n_features)`.
    pub x: Features,
    /// Label sets, one per sample.
    pub y: LabelSets,
    /// One name per feature.
    pub feature_names: Names,
    /// One name per label.
    pub label_names: Names,
}

/// The names of a data set's features or labels: either given (read from a
/// file header) or numbered `prefix0, prefix1, ...` and generated on demand.
///
/// Numbered names take constant memory whatever their count, so a file naming
/// feature 16 777 215 costs no 16 million strings. Equality compares the names
/// themselves, so numbered `f0, f1` equal given `["f0", "f1"]`.
///
/// # Example
/// ```
/// use okr_eval::dataset::Names;
/// let names = Names::numbered("f", 3);
/// assert_eq!(names.len(), 3);
/// assert_eq!(names.get(2).as_deref(), Some("f2"));
/// assert_eq!(names, ["f0", "f1", "f2"]);
/// assert_eq!(names, Names::from(vec!["f0".to_string(), "f1".into(), "f2".into()]));
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Names {
    /// `prefix0, prefix1, ..., prefix{len-1}`.
    Numbered {
        /// The text before each index.
        prefix: String,
        /// Number of names.
        len: usize,
    },
    /// Explicit names, one per column.
    Given(Vec<String>),
}

impl Names {
    /// `len` numbered names `prefix0, ...`.
    pub fn numbered(prefix: &str, len: usize) -> Self {
        Names::Numbered { prefix: prefix.to_string(), len }
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        match self {
            Names::Numbered { len, .. } => *len,
            Names::Given(v) => v.len(),
        }
    }

    /// Whether there is no name.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Name `j`, or `None` when `j >= len()`.
    pub fn get(&self, j: usize) -> Option<Cow<'_, str>> {
        match self {
            Names::Numbered { prefix, len } => (j < *len).then(|| Cow::Owned(format!("{prefix}{j}"))),
            Names::Given(v) => v.get(j).map(|s| Cow::Borrowed(s.as_str())),
        }
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = Cow<'_, str>> + '_ {
        (0..self.len()).map(|j| self.get(j).expect("j < len"))
    }

    /// The names as owned strings (allocates one string per name).
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(Cow::into_owned).collect()
    }

    /// Replaces name `j` (numbered names become given ones first).
    ///
    /// # Panics
    /// If `j >= len()`.
    #[track_caller]
    pub fn set(&mut self, j: usize, name: impl Into<String>) {
        assert!(j < self.len(), "name index {j} out of range for {} names", self.len());
        if let Names::Numbered { .. } = self {
            *self = Names::Given(self.to_vec());
        }
        let Names::Given(v) = self else { unreachable!("made given above") };
        v[j] = name.into();
    }
}

impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Names::Numbered { prefix: a, len: m }, Names::Numbered { prefix: b, len: n }) => {
                m == n && (a == b || self.iter().eq(other.iter()))
            }
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for Names {
    fn eq(&self, other: &[S; N]) -> bool {
        self.len() == N && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl From<Vec<String>> for Names {
    fn from(v: Vec<String>) -> Self {
        Names::Given(v)
    }
}

impl Dataset {
    /// Builds a data set with default names `f0, f1, ...` and `l0, l1, ...`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `x` and `y` have different numbers of rows.
    pub fn new(x: Features, y: LabelSets) -> Result<Self> {
        let feature_names = Names::numbered("f", x.n_features());
        let label_names = Names::numbered("l", y.n_labels());
        Self::with_names(x, y, feature_names, label_names)
    }

    /// Builds a data set with the given names.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `x` and `y` have different numbers of rows,
    /// or a name list has the wrong length.
    pub fn with_names(
        x: Features,
        y: LabelSets,
        feature_names: impl Into<Names>,
        label_names: impl Into<Names>,
    ) -> Result<Self> {
        let data = Self { x, y, feature_names: feature_names.into(), label_names: label_names.into() };
        data.check()?;
        Ok(data)
    }

    /// Checks that rows and names agree (the fields are public, so they can drift).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] naming the disagreeing part.
    pub fn check(&self) -> Result<()> {
        if self.x.n_rows() != self.y.n_rows() {
            return Err(Error::ShapeMismatch {
                what: "label sets (one per sample)",
                expected: self.x.n_rows(),
                got: self.y.n_rows(),
            });
        }
        if self.feature_names.len() != self.x.n_features() {
            return Err(Error::ShapeMismatch {
                what: "feature names",
                expected: self.x.n_features(),
                got: self.feature_names.len(),
            });
        }
        if self.label_names.len() != self.y.n_labels() {
            return Err(Error::ShapeMismatch {
                what: "label names",
                expected: self.y.n_labels(),
                got: self.label_names.len(),
            });
        }
        Ok(())
    }

    /// Number of samples (rows).
    pub fn n_samples(&self) -> usize {
        self.x.n_rows()
    }

    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.x.n_features()
    }

    /// Number of labels `L`.
    pub fn n_labels(&self) -> usize {
        self.y.n_labels()
    }

    /// The samples at `indices`, in that order (repeats allowed); names are kept.
    ///
    /// # Panics
    /// If an index is `>= n_samples()`.
    #[track_caller]
    pub fn select(&self, indices: &[usize]) -> Self {
        Self {
            x: self.x.select(indices),
            y: self.y.select(indices),
            feature_names: self.feature_names.clone(),
            label_names: self.label_names.clone(),
        }
    }

    /// A seeded random split into `(train, test)` with `ceil(test_fraction * n)`
    /// test samples; see [`split::train_test_split`]. Both parts keep the file order.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `test_fraction` is not in `(0, 1)` or a part would be empty.
    pub fn train_test_split(&self, test_fraction: f64, seed: u64) -> Result<(Self, Self)> {
        let (train, test) = split::train_test_split(self.n_samples(), test_fraction, seed)?;
        Ok((self.select(&train), self.select(&test)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use okr_kernels::{CsrRows, DenseRows};

    fn small() -> Dataset {
        let x = CsrRows::from_rows(4, vec![vec![(0, 1.0)], vec![(1, 2.0), (3, 1.0)], vec![], vec![(2, 5.0)]]).unwrap();
        let y = LabelSets::new(2, vec![vec![0], vec![1], vec![0, 1], vec![]]).unwrap();
        Dataset::new(x.into(), y).unwrap()
    }

    #[test]
    fn shapes_and_select() {
        let d = small();
        assert_eq!((d.n_samples(), d.n_features(), d.n_labels()), (4, 4, 2));
        assert_eq!(d.x.nnz(), 4);
        let s = d.select(&[3, 1, 1]);
        assert_eq!(s.n_samples(), 3);
        assert_eq!(s.y.set(0), &[] as &[usize]);
        assert_eq!(s.x.as_sparse().unwrap().row(1).0, &[1, 3]);
        assert_eq!(s.x.to_dense()[(0, 2)], 5.0);
        let dense = Features::Dense(DenseRows::new(d.x.to_dense()).unwrap());
        assert_eq!(dense.select(&[1]).to_dense(), s.x.select(&[1]).to_dense());
        assert!(dense.as_sparse().is_none() && dense.as_dense().is_some());
    }

    #[test]
    fn mismatches_are_errors() {
        let d = small();
        let y = LabelSets::new(2, vec![vec![0]]).unwrap();
        assert!(matches!(Dataset::new(d.x.clone(), y), Err(Error::ShapeMismatch { .. })));
        let e =
            Dataset::with_names(d.x.clone(), d.y.clone(), vec!["a".to_string()], d.label_names.clone()).unwrap_err();
        assert!(e.to_string().contains("feature names"), "{e}");
        let mut bad = d.clone();
        bad.label_names = Names::numbered("l", 1);
        assert!(bad.check().is_err());
    }

    #[test]
    fn huge_numbered_names_take_no_memory() {
        // A file naming feature 2^24 - 1 must not cost a string per feature.
        let names = Names::numbered("f", 1 << 24);
        assert_eq!(names.get((1 << 24) - 1).as_deref(), Some("f16777215"));
        assert_eq!(names.get(1 << 24), None);
        assert_eq!(names, names.clone());
        assert_ne!(names, Names::numbered("f", 3));
        let mut small = Names::numbered("l", 2);
        small.set(1, "b");
        assert_eq!(small, ["l0", "b"]);
    }

    #[test]
    fn split_is_seeded() {
        let d = small();
        let (a, b) = d.train_test_split(0.5, 3).unwrap();
        let (a2, b2) = d.train_test_split(0.5, 3).unwrap();
        assert_eq!((a.clone(), b.clone()), (a2, b2));
        assert_eq!(a.n_samples() + b.n_samples(), 4);
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<Dataset>(&json).unwrap(), d);
    }
}
