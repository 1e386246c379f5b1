//! Input and output containers: dense rows, CSR sparse rows, binary label sets.

use std::ops::Range;
use std::sync::Arc;

use faer::Mat;
use faer::sparse::{SparseRowMatRef, SymbolicSparseRowMatRef};
use serde::{Deserialize, Serialize};

use crate::{Error, Result, Rows};

/// Dense samples: an `(n_samples, n_features)` matrix, one sample per row.
///
/// The matrix is owned ([`DenseRows::new`]) or shared with memory the
/// container does not own ([`DenseRows::from_shared`], e.g. a NumPy array
/// read in place by the Python package); either way kernels read it through
/// [`as_mat`](DenseRows::as_mat), with any strides (row- or column-major).
/// Cloning a shared container clones a reference, not the data.
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, Rows};
/// let x = DenseRows::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
/// assert_eq!((x.n_rows(), x.n_features()), (2, 2));
/// assert_eq!(x.select(&[1]).as_mat()[(0, 0)], 3.0);
/// // Identical rows share a group (-0.0 equals 0.0); first-occurrence order.
/// let d = DenseRows::from_rows(&[vec![1.0, 0.0], vec![2.0, 0.0], vec![1.0, -0.0], vec![1.0, 1e-300]])?;
/// let (distinct, group) = d.group_duplicates();
/// assert_eq!((distinct.n_rows(), group), (3, vec![0, 1, 0, 2]));
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct DenseRows {
    x: DenseData,
}

/// Memory that a [`DenseRows`] reads without owning it: an
/// `(n_samples, n_features)` matrix of any strides that stays valid and
/// unchanged as long as the source lives.
///
/// # Example
/// ```
/// use std::sync::Arc;
/// use okr_kernels::{DenseRows, DenseSource, Rows};
/// #[derive(Debug)]
/// struct RowMajor { data: Vec<f64>, ncols: usize }
/// impl DenseSource for RowMajor {
///     fn view(&self) -> faer::MatRef<'_, f64> {
///         faer::MatRef::from_row_major_slice(&self.data, self.data.len() / self.ncols, self.ncols)
///     }
/// }
/// let x = DenseRows::from_shared(Arc::new(RowMajor { data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], ncols: 3 }))?;
/// assert_eq!((x.n_rows(), x.n_features(), x.as_mat()[(1, 0)]), (2, 3, 4.0));
/// assert!(x.is_shared());
/// Ok::<(), okr_kernels::Error>(())
/// ```
pub trait DenseSource: Send + Sync + std::fmt::Debug {
    /// The `(n_samples, n_features)` matrix.
    fn view(&self) -> faer::MatRef<'_, f64>;
}

#[derive(Debug, Clone)]
enum DenseData {
    Owned(Mat<f64>),
    Shared(Arc<dyn DenseSource>),
}

impl DenseRows {
    /// Wraps a matrix after checking that every entry is finite.
    ///
    /// # Errors
    /// [`Error::NonFinite`] naming the first offending row.
    pub fn new(x: Mat<f64>) -> Result<Self> {
        check_finite(x.as_ref())?;
        Ok(Self { x: DenseData::Owned(x) })
    }

    /// Reads `source` in place (no copy) after checking that every entry is
    /// finite. Kernels accept any strides; row-major (C-ordered) data is
    /// read as it lies by the GEMM-based kernels.
    ///
    /// # Errors
    /// [`Error::NonFinite`] naming an offending row.
    pub fn from_shared(source: Arc<dyn DenseSource>) -> Result<Self> {
        check_finite(source.view())?;
        Ok(Self { x: DenseData::Shared(source) })
    }

    /// Builds from a slice of equally long rows.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for ragged rows, [`Error::NonFinite`] for NaN/inf.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self> {
        let d = rows.first().map_or(0, Vec::len);
        if let Some(r) = rows.iter().find(|r| r.len() != d) {
            return Err(Error::ShapeMismatch { what: "dense row length", expected: d, got: r.len() });
        }
        Self::new(Mat::from_fn(rows.len(), d, |i, j| rows[i][j]))
    }

    /// The underlying `(n_samples, n_features)` matrix.
    pub fn as_mat(&self) -> faer::MatRef<'_, f64> {
        match &self.x {
            DenseData::Owned(m) => m.as_ref(),
            DenseData::Shared(s) => s.view(),
        }
    }

    /// Consumes the container, returning the matrix (a copy when shared).
    pub fn into_mat(self) -> Mat<f64> {
        match self.x {
            DenseData::Owned(m) => m,
            DenseData::Shared(s) => s.view().to_owned(),
        }
    }

    /// Whether the matrix is read from a [`DenseSource`] rather than owned.
    pub fn is_shared(&self) -> bool {
        matches!(self.x, DenseData::Shared(_))
    }

    /// Number of features (columns).
    pub fn n_features(&self) -> usize {
        self.as_mat().ncols()
    }
}

/// The first non-finite entry, walked in memory order so that row-major
/// data is read sequentially.
fn check_finite(x: faer::MatRef<'_, f64>) -> Result<()> {
    let bad = |row| Err(Error::NonFinite { what: "dense features", row });
    if x.col_stride() == 1 && x.row_stride() != 1 {
        for i in 0..x.nrows() {
            if x.row(i).iter().any(|v| !v.is_finite()) {
                return bad(i);
            }
        }
    } else {
        for j in 0..x.ncols() {
            if let Some(i) = x.col(j).iter().position(|v| !v.is_finite()) {
                return bad(i);
            }
        }
    }
    Ok(())
}

impl PartialEq for DenseRows {
    fn eq(&self, other: &Self) -> bool {
        self.as_mat() == other.as_mat()
    }
}

// Serialized as `{ x: <matrix> }` (okr_linalg::serde_mat), owned or shared
// alike; always read back as an owned matrix, checked by `DenseRows::new`.
impl Serialize for DenseRows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct View<'a>(faer::MatRef<'a, f64>);
        impl Serialize for View<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                okr_linalg::serde_mat::serialize_view(self.0, s)
            }
        }
        let mut st = s.serialize_struct("DenseRows", 1)?;
        st.serialize_field("x", &View(self.as_mat()))?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for DenseRows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename = "DenseRows")]
        struct Owned {
            #[serde(with = "okr_linalg::serde_mat")]
            x: Mat<f64>,
        }
        // Checked like a constructed matrix: a model file cannot smuggle NaN in.
        Self::new(Owned::deserialize(d)?.x).map_err(serde::de::Error::custom)
    }
}

impl Rows for DenseRows {
    fn n_rows(&self) -> usize {
        self.as_mat().nrows()
    }
    fn feature_dim(&self) -> Option<usize> {
        Some(self.n_features())
    }
    fn select(&self, indices: &[usize]) -> Self {
        let x = self.as_mat();
        Self { x: DenseData::Owned(Mat::from_fn(indices.len(), x.ncols(), |i, j| x[(indices[i], j)])) }
    }
    fn slice(&self, range: Range<usize>) -> Self {
        Self { x: DenseData::Owned(self.as_mat().subrows(range.start, range.len()).to_owned()) }
    }
    /// Rows are identical when every entry is equal (`0.0 == -0.0`): the
    /// sketched fits merge such rows in sub-sampling sketches, which keeps
    /// their `R K R^T` non-singular (Corel5k's training set repeats one row).
    fn group_duplicates(&self) -> (Self, Vec<usize>) {
        let x = self.as_mat();
        // Adding +0.0 maps -0.0 to +0.0, so the bit patterns compare as values do.
        let key = |i: usize| (0..x.ncols()).map(|j| (x[(i, j)] + 0.0).to_bits()).collect::<Vec<u64>>();
        group_by_key(self.n_rows(), key, |first| self.select(first))
    }
}

/// Sparse samples in compressed sparse row (CSR) form: row `i` holds the
/// features `indices[indptr[i]..indptr[i+1]]` (strictly increasing) with the
/// matching `values`.
///
/// # Example
/// ```
/// use okr_kernels::{CsrRows, Rows};
/// let x = CsrRows::from_rows(4, vec![vec![(0, 1.0), (3, 2.0)], vec![], vec![(2, -1.0)]])?;
/// assert_eq!((x.n_rows(), x.n_features(), x.nnz()), (3, 4, 3));
/// assert_eq!(x.row(0), (&[0usize, 3][..], &[1.0, 2.0][..]));
/// // Identical rows share a group; the distinct rows keep first-occurrence order.
/// let d = CsrRows::from_rows(4, vec![vec![(1, 1.0)], vec![], vec![(1, 1.0)], vec![(1, 2.0)]])?;
/// let (distinct, group) = d.group_duplicates();
/// assert_eq!((distinct.n_rows(), group), (3, vec![0, 1, 0, 2]));
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "CsrRepr")]
pub struct CsrRows {
    n_features: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
}

/// The serialized fields of [`CsrRows`], checked by [`CsrRows::new`].
#[derive(Deserialize)]
struct CsrRepr {
    n_features: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
}

impl TryFrom<CsrRepr> for CsrRows {
    type Error = Error;
    fn try_from(r: CsrRepr) -> Result<Self> {
        Self::new(r.n_features, r.indptr, r.indices, r.values)
    }
}

impl CsrRows {
    /// Builds from raw CSR arrays, checking the structure, index ranges and
    /// finiteness. Indices within a row must be strictly increasing.
    ///
    /// # Errors
    /// [`Error::InvalidStructure`], [`Error::IndexOutOfRange`], [`Error::NonFinite`].
    pub fn new(n_features: usize, indptr: Vec<usize>, indices: Vec<usize>, values: Vec<f64>) -> Result<Self> {
        if indptr.first() != Some(&0) {
            return Err(Error::InvalidStructure("indptr must start with 0".into()));
        }
        if *indptr.last().unwrap() != indices.len() || indices.len() != values.len() {
            return Err(Error::InvalidStructure(format!(
                "indptr ends at {}, with {} indices and {} values",
                indptr.last().unwrap(),
                indices.len(),
                values.len()
            )));
        }
        for (row, w) in indptr.windows(2).enumerate() {
            if w[0] > w[1] || w[1] > indices.len() {
                return Err(Error::InvalidStructure(format!("indptr decreases at row {row}")));
            }
            let idx = &indices[w[0]..w[1]];
            if let Some(&bad) = idx.iter().find(|&&c| c >= n_features) {
                return Err(Error::IndexOutOfRange { what: "feature", index: bad, bound: n_features });
            }
            if idx.windows(2).any(|p| p[0] >= p[1]) {
                return Err(Error::InvalidStructure(format!(
                    "feature indices of row {row} are not strictly increasing"
                )));
            }
            if values[w[0]..w[1]].iter().any(|v| !v.is_finite()) {
                return Err(Error::NonFinite { what: "sparse features", row });
            }
        }
        Ok(Self { n_features, indptr, indices, values })
    }

    /// Builds from per-row `(feature, value)` lists; entries are sorted and
    /// duplicates summed. Explicit zeros are kept.
    ///
    /// # Errors
    /// As [`CsrRows::new`].
    pub fn from_rows(n_features: usize, rows: Vec<Vec<(usize, f64)>>) -> Result<Self> {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        indptr.push(0);
        let mut indices = Vec::new();
        let mut values = Vec::new();
        for mut r in rows {
            r.sort_by_key(|e| e.0);
            let start = indices.len();
            for (c, v) in r {
                if indices.len() > start && *indices.last().unwrap() == c {
                    *values.last_mut().unwrap() += v;
                } else {
                    indices.push(c);
                    values.push(v);
                }
            }
            indptr.push(indices.len());
        }
        Self::new(n_features, indptr, indices, values)
    }

    /// Number of features (columns).
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The nonzero entries of a dense `(n_samples, n_features)` matrix.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for NaN/inf entries.
    pub fn from_dense(x: faer::MatRef<'_, f64>) -> Result<Self> {
        let rows = (0..x.nrows())
            .map(|i| (0..x.ncols()).filter(|&j| x[(i, j)] != 0.0).map(|j| (j, x[(i, j)])).collect())
            .collect();
        Self::from_rows(x.ncols(), rows)
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Feature indices and values of row `i`.
    ///
    /// # Panics
    /// If `i >= n_rows()`.
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.values[r])
    }

    /// Row pointer array (`n_rows + 1` entries).
    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }

    /// Column indices of all stored entries.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// Values of all stored entries.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// A zero-copy faer view of the matrix.
    pub fn as_faer(&self) -> SparseRowMatRef<'_, usize, f64> {
        let sym =
            SymbolicSparseRowMatRef::new_checked(self.n_rows(), self.n_features, &self.indptr, None, &self.indices);
        SparseRowMatRef::new(sym, &self.values)
    }

    /// The dense `(n_samples, n_features)` matrix.
    pub fn to_dense(&self) -> Mat<f64> {
        let mut m = Mat::zeros(self.n_rows(), self.n_features);
        for i in 0..self.n_rows() {
            let (idx, val) = self.row(i);
            for (&c, &v) in idx.iter().zip(val) {
                m[(i, c)] = v;
            }
        }
        m
    }
}

impl Rows for CsrRows {
    fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }
    /// Rows are identical when their stored indices and value bits are.
    fn group_duplicates(&self) -> (Self, Vec<usize>) {
        group_by_key(
            self.n_rows(),
            |i| {
                let (idx, val) = self.row(i);
                (idx, val.iter().map(|v| v.to_bits()).collect::<Vec<u64>>())
            },
            |first| self.select(first),
        )
    }
    fn feature_dim(&self) -> Option<usize> {
        Some(self.n_features)
    }
    fn select(&self, rows: &[usize]) -> Self {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        indptr.push(0);
        let mut indices = Vec::new();
        let mut values = Vec::new();
        for &i in rows {
            let (idx, val) = self.row(i);
            indices.extend_from_slice(idx);
            values.extend_from_slice(val);
            indptr.push(indices.len());
        }
        Self { n_features: self.n_features, indptr, indices, values }
    }
}

/// Binary label sets over `n_labels` labels, one set per sample, each stored
/// as strictly increasing label indices. Kernels see a set as its 0/1 vector.
///
/// # Example
/// ```
/// use okr_kernels::{LabelSets, Rows};
/// let y = LabelSets::new(5, vec![vec![3, 0], vec![], vec![0, 3], vec![4]])?;
/// assert_eq!(y.set(0), &[0, 3]);
/// let (uniq, first) = y.unique();
/// assert_eq!(uniq.n_rows(), 3);
/// assert_eq!(first, vec![0, 1, 3]);
/// assert_eq!(y.group_duplicates().1, vec![0, 1, 0, 2]);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "LabelSetsRepr")]
pub struct LabelSets {
    n_labels: usize,
    indptr: Vec<usize>,
    labels: Vec<usize>,
}

/// The serialized fields of [`LabelSets`], checked before use: `indptr`
/// starts at 0, never decreases and ends at the number of labels stored;
/// each set is strictly increasing and below `n_labels`.
#[derive(Deserialize)]
struct LabelSetsRepr {
    n_labels: usize,
    indptr: Vec<usize>,
    labels: Vec<usize>,
}

impl TryFrom<LabelSetsRepr> for LabelSets {
    type Error = Error;
    fn try_from(r: LabelSetsRepr) -> Result<Self> {
        if r.indptr.first() != Some(&0) || r.indptr.last() != Some(&r.labels.len()) {
            return Err(Error::InvalidStructure(format!(
                "label set pointers must run from 0 to {} (the labels stored)",
                r.labels.len()
            )));
        }
        for (row, w) in r.indptr.windows(2).enumerate() {
            if w[0] > w[1] || w[1] > r.labels.len() {
                return Err(Error::InvalidStructure(format!("label set pointers decrease at row {row}")));
            }
            let set = &r.labels[w[0]..w[1]];
            if let Some(&bad) = set.iter().find(|&&l| l >= r.n_labels) {
                return Err(Error::IndexOutOfRange { what: "label", index: bad, bound: r.n_labels });
            }
            if set.windows(2).any(|p| p[0] >= p[1]) {
                return Err(Error::InvalidStructure(format!("labels of row {row} are not strictly increasing")));
            }
        }
        Ok(Self { n_labels: r.n_labels, indptr: r.indptr, labels: r.labels })
    }
}

impl LabelSets {
    /// Builds from per-sample label lists (sorted and deduplicated here).
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] if a label is `>= n_labels`.
    pub fn new(n_labels: usize, sets: Vec<Vec<usize>>) -> Result<Self> {
        let mut indptr = Vec::with_capacity(sets.len() + 1);
        indptr.push(0);
        let mut labels = Vec::new();
        for mut s in sets {
            s.sort_unstable();
            s.dedup();
            if let Some(&bad) = s.iter().find(|&&l| l >= n_labels) {
                return Err(Error::IndexOutOfRange { what: "label", index: bad, bound: n_labels });
            }
            labels.extend_from_slice(&s);
            indptr.push(labels.len());
        }
        Ok(Self { n_labels, indptr, labels })
    }

    /// Builds from compressed rows: set `i` is `labels[indptr[i]..indptr[i + 1]]`
    /// (`indptr` starts at 0, never decreases and ends at `labels.len()`;
    /// each set strictly increasing and below `n_labels`). The form a
    /// streaming reader builds without a vector per row.
    ///
    /// # Errors
    /// [`Error::InvalidStructure`] naming the row that breaks a rule.
    ///
    /// # Example
    /// ```
    /// use okr_kernels::LabelSets;
    /// let y = LabelSets::from_compressed(4, vec![0, 2, 2], vec![1, 3])?;
    /// assert_eq!(y, LabelSets::new(4, vec![vec![3, 1], vec![]])?);
    /// assert!(LabelSets::from_compressed(4, vec![0, 2], vec![3, 1]).is_err());
    /// Ok::<(), okr_kernels::Error>(())
    /// ```
    pub fn from_compressed(n_labels: usize, indptr: Vec<usize>, labels: Vec<usize>) -> Result<Self> {
        Self::try_from(LabelSetsRepr { n_labels, indptr, labels })
    }

    /// Builds from a dense 0/1 indicator matrix `(n_samples, n_labels)`;
    /// entries `> 0.5` count as present.
    pub fn from_indicator(y: faer::MatRef<'_, f64>) -> Self {
        let sets = (0..y.nrows()).map(|i| (0..y.ncols()).filter(|&j| y[(i, j)] > 0.5).collect()).collect();
        Self::new(y.ncols(), sets).expect("indices are in range by construction")
    }

    /// Number of labels `L`.
    pub fn n_labels(&self) -> usize {
        self.n_labels
    }

    /// The labels of sample `i`, strictly increasing.
    ///
    /// # Panics
    /// If `i >= n_rows()`.
    pub fn set(&self, i: usize) -> &[usize] {
        &self.labels[self.indptr[i]..self.indptr[i + 1]]
    }

    /// Iterator over the sets.
    pub fn iter(&self) -> impl Iterator<Item = &[usize]> + '_ {
        (0..self.n_rows()).map(|i| self.set(i))
    }

    /// Mean number of labels per sample (`0` when empty).
    pub fn mean_cardinality(&self) -> f64 {
        if self.n_rows() == 0 { 0.0 } else { self.labels.len() as f64 / self.n_rows() as f64 }
    }

    /// The dense `(n_samples, n_labels)` 0/1 indicator matrix.
    pub fn to_indicator(&self) -> Mat<f64> {
        let mut m = Mat::zeros(self.n_rows(), self.n_labels);
        for (i, s) in self.iter().enumerate() {
            for &l in s {
                m[(i, l)] = 1.0;
            }
        }
        m
    }

    /// The sets as CSR rows with value 1 (for sparse-product kernels).
    pub fn to_csr(&self) -> CsrRows {
        CsrRows {
            n_features: self.n_labels,
            indptr: self.indptr.clone(),
            indices: self.labels.clone(),
            values: vec![1.0; self.labels.len()],
        }
    }

    /// The distinct sets in first-occurrence order, and for each distinct set
    /// the index of its first occurrence.
    pub fn unique(&self) -> (LabelSets, Vec<usize>) {
        let (uniq, groups) = self.group_duplicates();
        let mut first = vec![usize::MAX; uniq.n_rows()];
        for (i, &g) in groups.iter().enumerate().rev() {
            first[g] = i;
        }
        (uniq, first)
    }
}

/// Groups rows `0..n` by `key`: the distinct rows (built by `select` from
/// the first occurrences, in order) and the group of every row.
pub(crate) fn group_by_key<R, K: std::hash::Hash + Eq>(
    n: usize,
    key: impl Fn(usize) -> K,
    select: impl FnOnce(&[usize]) -> R,
) -> (R, Vec<usize>) {
    let mut seen = std::collections::HashMap::new();
    let mut first = Vec::new();
    let groups = (0..n)
        .map(|i| {
            *seen.entry(key(i)).or_insert_with(|| {
                first.push(i);
                first.len() - 1
            })
        })
        .collect();
    (select(&first), groups)
}

impl Rows for LabelSets {
    fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }
    fn group_duplicates(&self) -> (Self, Vec<usize>) {
        group_by_key(self.n_rows(), |i| self.set(i), |first| self.select(first))
    }
    fn feature_dim(&self) -> Option<usize> {
        Some(self.n_labels)
    }
    fn select(&self, rows: &[usize]) -> Self {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        indptr.push(0);
        let mut labels = Vec::new();
        for &i in rows {
            labels.extend_from_slice(self.set(i));
            indptr.push(labels.len());
        }
        Self { n_labels: self.n_labels, indptr, labels }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deserialized container is checked like a constructed one.
    #[test]
    fn deserialization_rejects_invalid_containers() {
        let csr = CsrRows::from_rows(3, vec![vec![(0, 1.0), (2, 2.0)], vec![]]).unwrap();
        let json = serde_json::to_string(&csr).unwrap();
        assert_eq!(serde_json::from_str::<CsrRows>(&json).unwrap(), csr);
        for bad in [
            r#"{"n_features":2,"indptr":[0,2],"indices":[0,2],"values":[1.0,1.0]}"#,
            r#"{"n_features":3,"indptr":[0,2],"indices":[2,0],"values":[1.0,1.0]}"#,
            r#"{"n_features":3,"indptr":[0,3],"indices":[0,1],"values":[1.0,1.0]}"#,
            r#"{"n_features":3,"indptr":[1,2],"indices":[0,1],"values":[1.0,1.0]}"#,
            r#"{"n_features":3,"indptr":[],"indices":[],"values":[]}"#,
            r#"{"n_features":3,"indptr":[0,3,1],"indices":[0],"values":[1.0]}"#,
        ] {
            assert!(serde_json::from_str::<CsrRows>(bad).is_err(), "{bad}");
        }
        let sets = LabelSets::new(4, vec![vec![3, 1], vec![]]).unwrap();
        let json = serde_json::to_string(&sets).unwrap();
        assert_eq!(serde_json::from_str::<LabelSets>(&json).unwrap(), sets);
        for bad in [
            r#"{"n_labels":3,"indptr":[0,2],"labels":[1,3]}"#,
            r#"{"n_labels":4,"indptr":[0,2],"labels":[1,1]}"#,
            r#"{"n_labels":4,"indptr":[0,2,1],"labels":[1,2]}"#,
            r#"{"n_labels":4,"indptr":[0,5],"labels":[1,2]}"#,
            r#"{"n_labels":4,"indptr":[],"labels":[]}"#,
            r#"{"n_labels":4,"indptr":[0,3,1],"labels":[1]}"#,
        ] {
            assert!(serde_json::from_str::<LabelSets>(bad).is_err(), "{bad}");
        }
        let dense = r#"{"x":{"nrows":1,"ncols":2,"data":[1.0,1e400]}}"#;
        assert!(serde_json::from_str::<DenseRows>(dense).is_err());
        let ok = r#"{"x":{"nrows":1,"ncols":2,"data":[1.0,2.0]}}"#;
        assert_eq!(serde_json::from_str::<DenseRows>(ok).unwrap().n_features(), 2);
    }
}
