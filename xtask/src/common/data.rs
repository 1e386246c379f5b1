//! Loading the benchmark data, or a labelled stand-in when it is missing.

use anyhow::Result;
use okr_eval::{Dataset, Features, StandinPreset};
use okr_kernels::{CsrRows, Gaussian, LabelSets, Rows};

/// A train/test pair and where it came from.
pub struct LoadedData {
    /// Data set name as in the records (`bibtex`, or `bibtex-standin`).
    pub name: String,
    /// Training split.
    pub train: Dataset,
    /// Test split.
    pub test: Dataset,
    /// Whether this is a seeded stand-in rather than the real data.
    pub stand_in: bool,
}

/// Reads a Mulan data set from `OKR_DATA_DIR` (default `../shared/data`), or
/// generates a seeded stand-in of the same shape, saying so on stderr.
pub fn load_mulan_or_standin(name: &str, seed: u64) -> Result<LoadedData> {
    match okr_eval::read_mulan(name) {
        Ok((train, test)) => Ok(LoadedData { name: name.to_string(), train, test, stand_in: false }),
        Err(err) => {
            eprintln!("xtask: {err}; using a seeded stand-in of the same shape (results are labelled {name}-standin)");
            let preset = okr_eval::StandinPreset::from_name(name)
                .ok_or_else(|| anyhow::anyhow!("no stand-in generator for {name}"))?;
            let (train, test) = preset.spec().seed(seed).generate()?;
            Ok(LoadedData { name: format!("{name}-standin"), train, test, stand_in: true })
        }
    }
}

/// A train/test split with sparse features (dense ones converted), and its
/// candidate outputs (the distinct training label sets, in first-seen order).
pub struct SparseSplit {
    /// Data set name as in the records.
    pub name: String,
    /// Whether this is a seeded stand-in rather than the real data.
    pub stand_in: bool,
    /// Training inputs.
    pub x: CsrRows,
    /// Training label sets.
    pub y: LabelSets,
    /// Test inputs.
    pub x_test: CsrRows,
    /// Test label sets.
    pub y_test: LabelSets,
    /// The distinct training label sets.
    pub candidates: LabelSets,
}

impl SparseSplit {
    /// A Mulan data set, or its stand-in ([`load_mulan_or_standin`]).
    pub fn mulan(name: &str, seed: u64) -> Result<Self> {
        let d = load_mulan_or_standin(name, seed)?;
        Self::new(d.name, d.stand_in, d.train, d.test)
    }

    /// The Bookmarks-shaped stand-in at `1/div` of its size (60000 / 27856
    /// rows at `div = 1`), drawn with `seed`.
    pub fn bookmarks(seed: u64, div: usize) -> Result<Self> {
        let spec = StandinPreset::Bookmarks.spec().seed(seed);
        let (n_train, n_test) = (spec.n_train / div, spec.n_test / div);
        let spec = spec.sizes(n_train, n_test);
        eprintln!("xtask: generating {} ({} / {} rows)", spec.dataset_name(), spec.n_train, spec.n_test);
        let (train, test) = spec.generate()?;
        Self::new(spec.dataset_name(), true, train, test)
    }

    fn new(name: String, stand_in: bool, train: Dataset, test: Dataset) -> Result<Self> {
        let sparse = |f: Features| -> Result<CsrRows> {
            Ok(match f {
                Features::Sparse(x) => x,
                Features::Dense(x) => CsrRows::from_dense(x.as_mat())?,
            })
        };
        let (candidates, _) = train.y.unique();
        Ok(Self {
            name,
            stand_in,
            x: sparse(train.x)?,
            y: train.y,
            x_test: sparse(test.x)?,
            y_test: test.y,
            candidates,
        })
    }

    /// Rows `idx` of the training set.
    pub fn train_rows(&self, idx: &[usize]) -> (CsrRows, LabelSets) {
        (self.x.select(idx), self.y.select(idx))
    }

    /// Number of labels.
    pub fn n_labels(&self) -> usize {
        self.y.n_labels()
    }

    /// The Gaussian output kernel of the experiments: okr's default on label
    /// sets (`sigma^2` = the mean training label-set size, at least 1; the
    /// recipe layer's [`okr::resolve::label_output_kernel`]).
    pub fn output_kernel(&self) -> Result<Gaussian> {
        Ok(Gaussian::new(okr_kernels::label_set_gamma(&self.y))?)
    }
}

/// `$body` with `$a`, `$b` bound to the training and test features
/// `$train`, `$test` when both are dense or both sparse (one generic call,
/// instantiated for both); otherwise an error naming `$name`.
macro_rules! dense_or_sparse {
    ($name:expr, ($train:expr, $test:expr), |$a:ident, $b:ident| $body:expr) => {
        match ($train, $test) {
            (okr_eval::Features::Dense($a), okr_eval::Features::Dense($b)) => $body,
            (okr_eval::Features::Sparse($a), okr_eval::Features::Sparse($b)) => $body,
            _ => anyhow::bail!("{}: train and test files store features differently (dense vs sparse)", $name),
        }
    };
}
pub(crate) use dense_or_sparse;

/// Training and test features as the estimators see them: dense non-binary
/// ones standardized with training statistics, others as read.
pub fn standardized_features(data: &LoadedData) -> Result<(Features, Features)> {
    // okr's rule (`okr fit`'s default): the recipe layer decides.
    let prepared = okr::resolve::prepare_inputs(okr::Standardize::Auto, true, &data.train.x)?;
    let test = match (&prepared.standardizer, &data.test.x) {
        (Some(st), Features::Dense(b)) => Features::Dense(st.transform(b)?),
        _ => data.test.x.clone(),
    };
    Ok((prepared.rows.into_owned(), test))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use okr_kernels::DenseRows;

    use super::*;

    #[test]
    fn dense_features_become_sparse_rows() {
        let y = LabelSets::new(3, vec![vec![0, 2], vec![1], vec![0, 2]]).unwrap();
        let dense = || Features::Dense(DenseRows::new(faer::mat![[1.5, 0.0], [0.0, -2.0], [0.0, 0.0]]).unwrap());
        let (train, test) = (Dataset::new(dense(), y.clone()).unwrap(), Dataset::new(dense(), y).unwrap());
        let d = SparseSplit::new("toy".into(), false, train, test).unwrap();
        for x in [&d.x, &d.x_test] {
            assert_eq!(
                (x.row(0), x.row(1), x.row(2)),
                ((&[0][..], &[1.5][..]), (&[1][..], &[-2.0][..]), (&[][..], &[][..]))
            );
        }
        assert_eq!((d.candidates.n_rows(), d.n_labels()), (2, 3));
        assert_eq!(d.train_rows(&[1]).1.iter().collect::<Vec<_>>(), [&[1][..]]);
    }

    #[test]
    fn bookmarks_split_has_its_sizes_and_every_training_set_once_as_candidate() {
        let d = SparseSplit::bookmarks(3, 400).unwrap();
        assert_eq!((d.x.n_rows(), d.y.n_rows(), d.x_test.n_rows(), d.y_test.n_rows()), (150, 150, 69, 69));
        assert_eq!((d.name.as_str(), d.stand_in), ("bookmarks-standin", true));
        let candidates: Vec<&[usize]> = d.candidates.iter().collect();
        let distinct: HashSet<&[usize]> = candidates.iter().copied().collect();
        assert_eq!(distinct.len(), candidates.len(), "a candidate is listed twice");
        assert_eq!(distinct, d.y.iter().collect::<HashSet<_>>());
        let sigma2 = d.y.mean_cardinality().max(f64::MIN_POSITIVE);
        assert_eq!(d.output_kernel().unwrap(), Gaussian::from_sigma2(sigma2).unwrap());
    }

    #[test]
    fn dense_or_sparse_refuses_mixed_features() {
        fn n_rows(train: &Features, test: &Features) -> Result<usize> {
            Ok(dense_or_sparse!("mixed", (train, test), |a, b| a.n_rows() + b.n_rows()))
        }
        let sparse = Features::Sparse(CsrRows::from_rows(2, vec![vec![(0, 1.0)]]).unwrap());
        let dense = Features::Dense(okr_kernels::DenseRows::new(faer::Mat::zeros(2, 2)).unwrap());
        assert_eq!(n_rows(&sparse, &sparse).unwrap(), 2);
        assert_eq!(n_rows(&dense, &dense).unwrap(), 4);
        let err = n_rows(&dense, &sparse).unwrap_err().to_string();
        assert!(err.contains("mixed") && err.contains("dense vs sparse"), "{err}");
    }
}
