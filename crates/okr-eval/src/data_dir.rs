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

/// The benchmark data directory: [`locate_data_dir`]'s path.
///
/// # Example
/// ```
/// let dir = okr_eval::data_dir();
/// println!("benchmark data: {}", dir.display());
/// assert!(!dir.as_os_str().is_empty());
/// ```
pub fn data_dir() -> PathBuf {
    locate_data_dir().path
}

/// Where the data directory was found, and why: what `okr data list` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    /// The directory (it may not exist yet: `okr data fetch` creates it).
    pub path: PathBuf,
    /// Which rule chose it.
    pub source: DataDirSource,
}

/// The rule of [`resolve_data_dir`] that chose the data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DataDirSource {
    /// The `OKR_DATA_DIR` environment variable.
    Env,
    /// `../shared/data` next to the current directory (running inside a checkout).
    WorkingDirectory,
    /// `shared/data` next to the source checkout okr was built from.
    Checkout,
    /// The per-user data home `$XDG_DATA_HOME/okr`.
    XdgDataHome,
    /// The per-user data home `~/.local/share/okr`.
    Home,
    /// No home directory is known: the build checkout's path, which may not
    /// exist (errors name it).
    Fallback,
}

impl std::fmt::Display for DataDirSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Env => "set by OKR_DATA_DIR",
            Self::WorkingDirectory => "../shared/data from the working directory, a checkout",
            Self::Checkout => "shared/data beside the checkout okr was built from",
            Self::XdgDataHome => "per-user data home $XDG_DATA_HOME/okr (OKR_DATA_DIR unset, no checkout data)",
            Self::Home => "per-user data home ~/.local/share/okr (OKR_DATA_DIR unset, no checkout data)",
            Self::Fallback => "no OKR_DATA_DIR, checkout data or home directory: set OKR_DATA_DIR",
        })
    }
}

/// What [`resolve_data_dir`] decides from: the environment, the working
/// directory and the build checkout, given explicitly so that the rules can
/// be tested without touching the process environment.
#[derive(Debug, Clone, Default)]
pub struct DataDirInputs {
    /// `OKR_DATA_DIR`.
    pub okr_data_dir: Option<OsString>,
    /// The current directory.
    pub cwd: Option<PathBuf>,
    /// `<checkout>/shared/data`'s candidate for the source tree okr was built
    /// from (`CARGO_MANIFEST_DIR/../../../shared/data`).
    pub checkout_data: Option<PathBuf>,
    /// `XDG_DATA_HOME`.
    pub xdg_data_home: Option<OsString>,
    /// `HOME` (`USERPROFILE` on Windows).
    pub home: Option<OsString>,
}

impl DataDirInputs {
    /// The inputs of this process.
    pub fn from_env() -> Self {
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
        Self {
            okr_data_dir: std::env::var_os("OKR_DATA_DIR"),
            cwd: std::env::current_dir().ok(),
            checkout_data: Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")),
            xdg_data_home: std::env::var_os("XDG_DATA_HOME"),
            home,
        }
    }
}

/// The data directory of this process and the rule that chose it (see
/// [`resolve_data_dir`]).
///
/// # Example
/// ```
/// let d = okr_eval::locate_data_dir();
/// println!("data directory: {} ({})", d.path.display(), d.source);
/// ```
pub fn locate_data_dir() -> DataDir {
    resolve_data_dir(&DataDirInputs::from_env())
}

/// The data directory for `inputs`, first rule that applies:
///
/// 1. `OKR_DATA_DIR`, if set and non-empty (used as given, even if it does
///    not exist);
/// 2. `../shared/data` relative to the working directory, if it is a
///    directory (running from a checkout's root);
/// 3. `shared/data` beside the checkout okr was built from, if it is a
///    directory (a binary or test of a checkout);
/// 4. the per-user data home, as scikit-learn's `get_data_home`:
///    `$XDG_DATA_HOME/okr` when `XDG_DATA_HOME` is an absolute path, else
///    `~/.local/share/okr` (an installed `okr`; `okr data fetch` fills it);
/// 5. without a home directory, the checkout's candidate of rule 3.
///
/// Only rules 2 and 3 look at the file system (whether a directory exists).
///
/// # Example
/// ```
/// use okr_eval::{DataDirInputs, DataDirSource, resolve_data_dir};
/// let inputs = DataDirInputs { home: Some("/home/ada".into()), ..Default::default() };
/// let d = resolve_data_dir(&inputs);
/// assert_eq!((d.path.as_path(), d.source), (std::path::Path::new("/home/ada/.local/share/okr"), DataDirSource::Home));
/// ```
pub fn resolve_data_dir(inputs: &DataDirInputs) -> DataDir {
    let found = |path: PathBuf, source| DataDir { path, source };
    if let Some(dir) = inputs.okr_data_dir.as_ref().filter(|d| !d.is_empty()) {
        return found(PathBuf::from(dir), DataDirSource::Env);
    }
    if let Some(cwd) = &inputs.cwd {
        let candidate = cwd.join("../shared/data");
        if candidate.is_dir() {
            return found(candidate, DataDirSource::WorkingDirectory);
        }
    }
    if let Some(checkout) = inputs.checkout_data.as_ref().filter(|c| c.is_dir()) {
        return found(checkout.clone(), DataDirSource::Checkout);
    }
    // The XDG base directory spec ignores relative paths.
    if let Some(xdg) = inputs.xdg_data_home.as_ref().map(PathBuf::from).filter(|p| p.is_absolute()) {
        return found(xdg.join("okr"), DataDirSource::XdgDataHome);
    }
    if let Some(home) = inputs.home.as_ref().filter(|h| !h.is_empty()) {
        return found(Path::new(home).join(".local/share/okr"), DataDirSource::Home);
    }
    let fallback = inputs.checkout_data.clone().unwrap_or_else(|| PathBuf::from("shared/data"));
    found(fallback, DataDirSource::Fallback)
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

    /// The resolution order of issue 37, each rule with explicit inputs
    /// (no process environment is read or changed).
    #[test]
    fn resolution_order() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let checkout = dir.path().join("checkout/shared/data");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&checkout).unwrap();
        let all = DataDirInputs {
            okr_data_dir: Some("/x/y".into()),
            cwd: Some(project.clone()),
            checkout_data: Some(checkout.clone()),
            xdg_data_home: Some("/xdg".into()),
            home: Some("/home/ada".into()),
        };
        let at = |i: &DataDirInputs| {
            let d = resolve_data_dir(i);
            (d.path, d.source)
        };
        // 1. OKR_DATA_DIR first, even when it does not exist.
        assert_eq!(at(&all), (PathBuf::from("/x/y"), DataDirSource::Env));
        // An empty OKR_DATA_DIR is unset; 3. the build checkout's data when it exists.
        let no_env = DataDirInputs { okr_data_dir: Some("".into()), ..all.clone() };
        assert_eq!(at(&no_env), (checkout.clone(), DataDirSource::Checkout));
        // 2. ../shared/data from the working directory, before the build checkout.
        std::fs::create_dir_all(dir.path().join("shared/data")).unwrap();
        assert_eq!(at(&no_env), (project.join("../shared/data"), DataDirSource::WorkingDirectory));
        // 4. Installed (no checkout data anywhere): $XDG_DATA_HOME/okr, then ~/.local/share/okr.
        let elsewhere = dir.path().join("elsewhere/cwd");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let installed = DataDirInputs {
            okr_data_dir: None,
            cwd: Some(elsewhere),
            checkout_data: Some(dir.path().join("registry/src/okr-eval/../../nowhere/data")),
            ..all.clone()
        };
        assert_eq!(at(&installed), (PathBuf::from("/xdg/okr"), DataDirSource::XdgDataHome));
        let relative_xdg = DataDirInputs { xdg_data_home: Some("rel/xdg".into()), ..installed.clone() };
        assert_eq!(at(&relative_xdg), (PathBuf::from("/home/ada/.local/share/okr"), DataDirSource::Home));
        let no_xdg = DataDirInputs { xdg_data_home: None, ..installed.clone() };
        assert_eq!(at(&no_xdg), (PathBuf::from("/home/ada/.local/share/okr"), DataDirSource::Home));
        // 5. No home: the checkout's candidate, named in errors.
        let homeless = DataDirInputs { home: None, ..no_xdg.clone() };
        assert_eq!(at(&homeless).1, DataDirSource::Fallback);
        assert_eq!(at(&homeless).0, installed.checkout_data.clone().unwrap());
        // Every rule says why in one line.
        assert!(DataDirSource::Home.to_string().contains("~/.local/share/okr"));
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
