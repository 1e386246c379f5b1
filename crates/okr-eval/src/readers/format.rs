//! [`DataFormat`]: the multi-label file formats, told by name or extension,
//! and [`read_data_file`] / [`read_data_file_for_model`], which read any of
//! them with the [`ReadOptions`] the formats cannot tell by themselves.

use std::path::Path;

use super::{
    CsvHeader, ModelInput, ModelShape, SvmlightOptions, read_arff, read_arff_for_model, read_csv, read_csv_for_model,
    read_svmlight, read_svmlight_for_model, read_xc, read_xc_for_model,
};
use crate::{Dataset, Error, Result};

/// A multi-label data file format.
///
/// # Example
/// ```
/// use okr_eval::readers::DataFormat;
/// assert_eq!(DataFormat::from_path("data/train.LIBSVM".as_ref()), Some(DataFormat::Svmlight));
/// assert_eq!(DataFormat::from_path("train.txt".as_ref()), None);
/// assert_eq!(DataFormat::Arff.name(), "ARFF");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    /// Mulan ARFF ([`read_arff`]).
    Arff,
    /// svmlight / libsvm multi-label ([`read_svmlight`]).
    Svmlight,
    /// Extreme Classification repository ([`read_xc`]).
    Xc,
    /// CSV, features then label columns ([`read_csv`]).
    Csv,
}

impl DataFormat {
    /// The format of a file by its extension (case-insensitive): `.arff`;
    /// `.svm`, `.svmlight`, `.libsvm`; `.xc`; `.csv`. `None` for any other.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "arff" => Self::Arff,
            "svm" | "svmlight" | "libsvm" => Self::Svmlight,
            "xc" => Self::Xc,
            "csv" => Self::Csv,
            _ => return None,
        })
    }

    /// The format's name in messages: `ARFF`, `svmlight`, `XC`, `CSV`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Arff => "ARFF",
            Self::Svmlight => "svmlight",
            Self::Xc => "XC",
            Self::Csv => "CSV",
        }
    }
}

/// What reading a file of any [`DataFormat`] needs beyond the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// Number of labels: the last columns of ARFF and CSV files (required
    /// there); the label count of svmlight files (labels absent from the
    /// file still count; default: the largest label + 1). XC files declare
    /// theirs.
    pub label_count: Option<usize>,
    /// svmlight feature indices start at 0 (`true`) or at 1 (`false`).
    pub zero_based: bool,
    /// Whether a CSV file has a header line.
    pub csv_header: CsvHeader,
}

/// Reads a data file of `format`.
///
/// # Errors
/// [`Error::InvalidArgument`] when an ARFF or CSV file is read without
/// [`ReadOptions::label_count`]; any error of the format's reader.
///
/// # Example
/// ```
/// use okr_eval::readers::{DataFormat, ReadOptions, read_data_file};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("toy.svm");
/// std::fs::write(&path, "0,2 1:0.5 3:1\n1 2:2\n")?;
/// let format = DataFormat::from_path(&path).unwrap();
/// let data = read_data_file(&path, format, &ReadOptions { label_count: Some(4), ..Default::default() })?;
/// assert_eq!((data.n_samples(), data.n_features(), data.n_labels()), (2, 3, 4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_data_file(path: &Path, format: DataFormat, opts: &ReadOptions) -> Result<Dataset> {
    let label_count = || {
        opts.label_count.ok_or_else(|| {
            Error::invalid("label_count", "none", format!("the number of label columns of the {} file", format.name()))
        })
    };
    match format {
        DataFormat::Arff => read_arff(path, label_count()?),
        DataFormat::Csv => read_csv(path, label_count()?, opts.csv_header),
        DataFormat::Xc => read_xc(path),
        DataFormat::Svmlight => {
            let mut svm = SvmlightOptions::new(opts.zero_based);
            if let Some(l) = opts.label_count {
                svm = svm.n_labels(l);
            }
            read_svmlight(path, &svm)
        }
    }
}

/// Reads a data file of `format` for a model of `shape`: its features, with
/// or without the label columns (see [`model_input`](super::model_input)).
/// [`ReadOptions::label_count`] is not used.
///
/// # Errors
/// Any error of the format's `_for_model` reader.
pub fn read_data_file_for_model(
    path: &Path,
    format: DataFormat,
    shape: ModelShape,
    opts: &ReadOptions,
) -> Result<ModelInput> {
    match format {
        DataFormat::Arff => read_arff_for_model(path, shape),
        DataFormat::Csv => read_csv_for_model(path, shape, opts.csv_header),
        DataFormat::Xc => read_xc_for_model(path, shape),
        DataFormat::Svmlight => read_svmlight_for_model(path, shape, opts.zero_based),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LabelColumns;
    use crate::readers::{write_arff, write_csv, write_svmlight, write_xc};

    #[test]
    fn extensions() {
        for (name, format) in [
            ("a.arff", Some(DataFormat::Arff)),
            ("a.Svm", Some(DataFormat::Svmlight)),
            ("a.svmlight", Some(DataFormat::Svmlight)),
            ("a.libsvm", Some(DataFormat::Svmlight)),
            ("dir.x/a.xc", Some(DataFormat::Xc)),
            ("a.CSV", Some(DataFormat::Csv)),
            ("a.txt", None),
            ("arff", None),
        ] {
            assert_eq!(DataFormat::from_path(Path::new(name)), format, "{name}");
        }
    }

    /// Each format reads back what its writer wrote, by name and for a model.
    #[test]
    fn every_format_reads_back() {
        let (data, _) = crate::StandinPreset::Emotions.spec().sizes(12, 2).generate().unwrap();
        let (d, l) = (data.n_features(), data.n_labels());
        let dir = tempfile::tempdir().unwrap();
        let opts = ReadOptions { label_count: Some(l), ..Default::default() };
        for format in [DataFormat::Arff, DataFormat::Svmlight, DataFormat::Xc, DataFormat::Csv] {
            let path = dir.path().join(format!("d.{}", format.name().to_lowercase()));
            match format {
                DataFormat::Arff => write_arff(&path, &data, "toy").unwrap(),
                DataFormat::Svmlight => write_svmlight(&path, &data, false).unwrap(),
                DataFormat::Xc => write_xc(&path, &data).unwrap(),
                DataFormat::Csv => write_csv(&path, &data).unwrap(),
            }
            assert_eq!(DataFormat::from_path(&path), Some(format));
            let back = read_data_file(&path, format, &opts).unwrap();
            assert_eq!(back.y, data.y, "{format:?}");
            assert_eq!(back.n_samples(), data.n_samples(), "{format:?}");
            let shape = ModelShape { n_features: d, n_labels: l };
            let input = read_data_file_for_model(&path, format, shape, &opts).unwrap();
            assert_eq!((input.labels, input.data.n_features()), (LabelColumns::Present, d), "{format:?}");
            if matches!(format, DataFormat::Arff | DataFormat::Csv) {
                let err = read_data_file(&path, format, &ReadOptions::default()).unwrap_err();
                assert!(err.to_string().contains("label_count"), "{err}");
            }
        }
    }
}
