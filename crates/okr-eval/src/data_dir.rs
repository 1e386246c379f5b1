//! Where the benchmark data lives, and the Mulan multi-label sets in it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::{Dataset, Error, Result, read_arff};

/// The Mulan multi-label sets of the data directory: `(name, folder, file
/// prefix, number of labels)`. The files are `<folder>/<prefix>-train.arff` and
/// `<folder>/<prefix>-test.arff`.
///
/// Derived from the [`catalog`](crate::catalog): its entries with a label
/// count and a train / test pair of files, in catalog order.
///
/// # Example
/// ```
/// let names: Vec<&str> = okr_eval::MULAN_DATASETS.iter().map(|m| m.0).collect();
/// assert_eq!(names, ["emotions", "yeast", "scene", "enron", "bibtex", "corel5k", "delicious"]);
/// assert!(okr_eval::MULAN_DATASETS.contains(&("corel5k", "corel5k", "Corel5k", 374)));
/// ```
pub static MULAN_DATASETS: LazyLock<Vec<(&'static str, &'static str, &'static str, usize)>> =
    LazyLock::new(|| crate::catalog::DATASETS.iter().filter_map(mulan_set).collect());

/// `(name, folder, prefix, n_labels)` of a catalog entry whose training file
/// is `<folder>/<prefix>-train.arff`.
fn mulan_set(e: &'static crate::catalog::Entry) -> Option<(&'static str, &'static str, &'static str, usize)> {
    let (train, test) = e.train_test()?;
    let (folder, file) = train.split_once('/')?;
    let prefix = file.strip_suffix("-train.arff")?;
    (test == format!("{folder}/{prefix}-test.arff")).then_some((e.name, folder, prefix, e.n_labels?))
}

/// The benchmark data directory:
///
/// 1. the `OKR_DATA_DIR` environment variable, if set and non-empty (used as
///    given, even if it does not exist);
/// 2. else `../shared/data` relative to the current directory, if it exists
///    (the layout when running from the project root);
/// 3. else `../../../shared/data` relative to this crate's manifest directory,
///    i.e. relative to the workspace root, which is returned even if it does not
///    exist so that errors can name it.
///
/// # Example
/// ```
/// let dir = okr_eval::data_dir();
/// println!("benchmark data: {}", dir.display());
/// assert!(!dir.as_os_str().is_empty());
/// ```
pub fn data_dir() -> PathBuf {
    resolve_data_dir(std::env::var_os("OKR_DATA_DIR"), std::env::current_dir().ok().as_deref())
}

/// [`data_dir`] with the environment value and current directory given.
fn resolve_data_dir(env: Option<OsString>, cwd: Option<&Path>) -> PathBuf {
    if let Some(dir) = env.filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(cwd) = cwd {
        let candidate = cwd.join("../shared/data");
        if candidate.is_dir() {
            return candidate;
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

/// The train file, test file and number of labels of a Mulan set (case-insensitive
/// name, one of [`MULAN_DATASETS`]) in [`data_dir`].
///
/// # Errors
/// [`Error::InvalidArgument`] for an unknown name; [`Error::DatasetNotFound`]
/// ("dataset X not found in DIR (set OKR_DATA_DIR)") if a file is missing.
///
/// # Example
/// ```
/// match okr_eval::find_mulan("bibtex") {
///     Ok((train, test, n_labels)) => {
///         assert!(train.ends_with("bibtex/bibtex-train.arff") && test.exists());
///         assert_eq!(n_labels, 159);
///     }
///     Err(e) => assert!(e.to_string().contains("set OKR_DATA_DIR")),
/// }
/// assert!(okr_eval::find_mulan("mnist").is_err());
/// ```
pub fn find_mulan(name: &str) -> Result<(PathBuf, PathBuf, usize)> {
    find_mulan_in(&data_dir(), name)
}

/// [`find_mulan`] in a given directory.
///
/// # Errors
/// As [`find_mulan`].
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let e = okr_eval::find_mulan_in(dir.path(), "Yeast").unwrap_err();
/// assert_eq!(e.to_string(), format!("dataset yeast not found in {} (set OKR_DATA_DIR)", dir.path().display()));
/// ```
pub fn find_mulan_in(dir: &Path, name: &str) -> Result<(PathBuf, PathBuf, usize)> {
    let lower = name.to_ascii_lowercase();
    let Some(&(name, folder, prefix, n_labels)) = MULAN_DATASETS.iter().find(|m| m.0 == lower) else {
        let known: Vec<&str> = MULAN_DATASETS.iter().map(|m| m.0).collect();
        return Err(Error::invalid("name", name, format!("one of the Mulan sets {}", known.join(", "))));
    };
    let train = dir.join(folder).join(format!("{prefix}-train.arff"));
    let test = dir.join(folder).join(format!("{prefix}-test.arff"));
    if !train.is_file() || !test.is_file() {
        return Err(Error::DatasetNotFound { name: name.to_string(), dir: dir.to_path_buf() });
    }
    Ok((train, test, n_labels))
}

/// Reads the train and test parts of a Mulan set from [`data_dir`].
///
/// # Errors
/// As [`find_mulan`] and [`read_arff`].
///
/// # Example
/// ```no_run
/// let (train, test) = okr_eval::read_mulan("emotions")?;
/// assert_eq!((train.n_samples(), test.n_samples(), train.n_labels()), (391, 202, 6));
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn read_mulan(name: &str) -> Result<(Dataset, Dataset)> {
    let (train, test, n_labels) = find_mulan(name)?;
    Ok((read_arff(train, n_labels)?, read_arff(test, n_labels)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_order() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(resolve_data_dir(Some("/x/y".into()), Some(dir.path())), PathBuf::from("/x/y"));
        let fallback = resolve_data_dir(Some("".into()), Some(dir.path()));
        assert!(fallback.ends_with("../../../shared/data"), "{}", fallback.display());
        let project = dir.path().join("project");
        std::fs::create_dir_all(dir.path().join("shared/data")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        assert_eq!(resolve_data_dir(None, Some(&project)), project.join("../shared/data"));
    }

    #[test]
    fn finds_files_and_names_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("corel5k")).unwrap();
        std::fs::write(dir.path().join("corel5k/Corel5k-train.arff"), "").unwrap();
        let e = find_mulan_in(dir.path(), "corel5k").unwrap_err();
        assert!(matches!(e, Error::DatasetNotFound { .. }));
        std::fs::write(dir.path().join("corel5k/Corel5k-test.arff"), "").unwrap();
        let (train, test, l) = find_mulan_in(dir.path(), "COREL5K").unwrap();
        assert!(train.ends_with("corel5k/Corel5k-train.arff") && test.ends_with("corel5k/Corel5k-test.arff"));
        assert_eq!(l, 374);
        let e = find_mulan_in(dir.path(), "mnist").unwrap_err().to_string();
        assert!(e.contains("mnist") && e.contains("bibtex"), "{e}");
    }

    #[test]
    fn mulan_sets_are_the_catalogs_multi_label_sets() {
        // The hand-written list this replaced: same sets, folders, prefixes and label counts.
        let mut before = vec![
            ("bibtex", "bibtex", "bibtex", 159),
            ("corel5k", "corel5k", "Corel5k", 374),
            ("delicious", "delicious", "delicious", 983),
            ("emotions", "emotions", "emotions", 6),
            ("enron", "enron", "enron", 53),
            ("yeast", "yeast", "yeast", 14),
            ("scene", "scene", "scene", 6),
        ];
        let mut now = MULAN_DATASETS.clone();
        before.sort();
        now.sort();
        assert_eq!(now, before);
        // In catalog order, every multi-label entry, its files the catalog's.
        let multi_label: Vec<&str> =
            crate::catalog::DATASETS.iter().filter(|e| e.n_labels.is_some()).map(|e| e.name).collect();
        assert_eq!(MULAN_DATASETS.iter().map(|m| m.0).collect::<Vec<_>>(), multi_label);
        for &(name, folder, prefix, l) in MULAN_DATASETS.iter() {
            let e = crate::catalog::find(name).unwrap();
            let (train, test) = e.train_test().unwrap();
            assert_eq!(
                (train, test),
                (&*format!("{folder}/{prefix}-train.arff"), &*format!("{folder}/{prefix}-test.arff"))
            );
            assert_eq!(e.n_labels, Some(l));
        }
    }
}
