//! Files to predict on: the features a fitted model expects, with or without
//! its label columns.
//!
//! A user predicts on data without labels, so every format can be read given
//! the model's [`ModelShape`] whether or not the file holds labels:
//!
//! | format | features only | features and labels |
//! |---|---|---|
//! | ARFF | `n_features` attributes | `n_features + n_labels` attributes, labels last |
//! | CSV | `n_features` columns | `n_features + n_labels` columns, labels last |
//! | svmlight | no line starts with a label list | some line does |
//! | XC | header `n d` or `n d 0` | header `n d L` with the model's `L` |
//!
//! The returned [`ModelInput`] always has the model's widths: a file without
//! labels gets `n_labels` labels and empty label sets, and says so in
//! [`ModelInput::labels`] (so that evaluation can refuse it). ARFF and CSV
//! files are told apart by their column count, which is unambiguous because a
//! model has at least one label; a count that is neither is an error naming
//! both expected counts.

use std::path::Path;

use okr_kernels::LabelSets;

use super::arff::parse_arff_with;
use super::csv::read_csv_with;
use super::svmlight::read_svmlight_counting;
use super::xc::read_xc_with;
use super::{CsvHeader, LabelCount, SvmlightOptions, read_text};
use crate::dataset::Names;
use crate::{Dataset, Error, Result};

/// The widths of the data a fitted model was trained on.
///
/// # Example
/// ```
/// let shape = okr_eval::ModelShape { n_features: 72, n_labels: 6 };
/// assert_eq!(shape.n_features + shape.n_labels, 78);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelShape {
    /// Number of input features.
    pub n_features: usize,
    /// Number of labels.
    pub n_labels: usize,
}

/// Whether a file read for a model held label columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelColumns {
    /// The file has the model's labels; [`Dataset::y`] holds them.
    Present,
    /// The file has features only; [`Dataset::y`] is all empty sets.
    Absent,
}

/// A data set read for a fitted model: `data` has the model's feature and
/// label counts whatever the file held.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInput {
    /// Features, and the labels if the file had them.
    pub data: Dataset,
    /// Whether the file had labels.
    pub labels: LabelColumns,
}

impl ModelInput {
    /// `data` as read; with 0 labels, widened to the model's label count.
    fn new(mut data: Dataset, shape: ModelShape) -> Result<Self> {
        if data.n_features() != shape.n_features {
            return Err(Error::ShapeMismatch {
                what: "features (the model's count)",
                expected: shape.n_features,
                got: data.n_features(),
            });
        }
        let labels = if data.n_labels() == 0 && shape.n_labels > 0 {
            data.y = LabelSets::new(shape.n_labels, vec![Vec::new(); data.n_samples()])?;
            data.label_names = Names::numbered("l", shape.n_labels);
            LabelColumns::Absent
        } else if data.n_labels() == shape.n_labels {
            LabelColumns::Present
        } else {
            return Err(Error::ShapeMismatch {
                what: "labels (the model's count)",
                expected: shape.n_labels,
                got: data.n_labels(),
            });
        };
        Ok(Self { data, labels })
    }
}

/// The label-count rule of a file read for `shape`.
fn optional(shape: ModelShape) -> LabelCount {
    LabelCount::Optional { n_features: shape.n_features, n_labels: shape.n_labels }
}

/// Reads a Mulan ARFF file with the model's `n_features` attributes, or
/// those followed by its `n_labels` label attributes.
///
/// # Errors
/// As [`read_arff`](super::read_arff); [`Error::Parse`] at the `@data` line
/// when the attribute count is neither.
///
/// # Example
/// ```
/// use okr_eval::{LabelColumns, ModelShape, read_arff_for_model};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("x.arff");
/// std::fs::write(&path, "@relation x\n@attribute a numeric\n@attribute b numeric\n@data\n1,2\n")?;
/// let input = read_arff_for_model(&path, ModelShape { n_features: 2, n_labels: 3 })?;
/// assert_eq!((input.data.n_features(), input.data.n_labels()), (2, 3));
/// assert_eq!(input.labels, LabelColumns::Absent);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_arff_for_model(path: impl AsRef<Path>, shape: ModelShape) -> Result<ModelInput> {
    let path = path.as_ref();
    let text = read_text(path)?;
    ModelInput::new(parse_arff_with(&text, path, optional(shape))?, shape)
}

/// Reads a CSV file with the model's `n_features` columns, or those followed
/// by its `n_labels` 0/1 label columns (header rule as [`read_csv`](super::read_csv)).
///
/// # Errors
/// As [`read_csv`](super::read_csv); [`Error::Parse`] at the first line when
/// its field count is neither.
///
/// # Example
/// ```
/// use okr_eval::{CsvHeader, LabelColumns, ModelShape, read_csv_for_model};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("x.csv");
/// std::fs::write(&path, "a,b\n1,2\n3,4\n")?;
/// let input = read_csv_for_model(&path, ModelShape { n_features: 2, n_labels: 1 }, CsvHeader::Detect)?;
/// assert_eq!((input.data.n_samples(), input.data.n_labels(), input.labels), (2, 1, LabelColumns::Absent));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_csv_for_model(path: impl AsRef<Path>, shape: ModelShape, header: CsvHeader) -> Result<ModelInput> {
    ModelInput::new(read_csv_with(path.as_ref(), optional(shape), header)?, shape)
}

/// Reads an svmlight file with the model's widths; it has labels when at
/// least one line starts with a label list.
///
/// # Errors
/// As [`read_svmlight`](super::read_svmlight) with
/// [`SvmlightOptions::n_features`] and [`SvmlightOptions::n_labels`] set to
/// the model's.
///
/// # Example
/// ```
/// use okr_eval::{LabelColumns, ModelShape, read_svmlight_for_model};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("x.svm");
/// std::fs::write(&path, "1:0.5 3:1\n2:2\n")?;
/// let input = read_svmlight_for_model(&path, ModelShape { n_features: 4, n_labels: 2 }, false)?;
/// assert_eq!((input.data.n_features(), input.labels), (4, LabelColumns::Absent));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_svmlight_for_model(path: impl AsRef<Path>, shape: ModelShape, zero_based: bool) -> Result<ModelInput> {
    let opts = SvmlightOptions::new(zero_based).n_features(shape.n_features).n_labels(shape.n_labels);
    let (data, labelled_rows) = read_svmlight_counting(path.as_ref(), &opts)?;
    let labels = if labelled_rows > 0 { LabelColumns::Present } else { LabelColumns::Absent };
    Ok(ModelInput { data, labels })
}

/// Reads an Extreme Classification file whose header declares the model's
/// features and either its labels or none (`n d` or `n d 0`).
///
/// # Errors
/// As [`read_xc`](super::read_xc); [`Error::Parse`] at the header when it
/// declares other widths.
///
/// # Example
/// ```
/// use okr_eval::{LabelColumns, ModelShape, read_xc_for_model};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("x_xc.txt");
/// std::fs::write(&path, "2 5\n 0:1 4:0.5\n 3:2\n")?;
/// let input = read_xc_for_model(&path, ModelShape { n_features: 5, n_labels: 3 })?;
/// assert_eq!((input.data.n_labels(), input.labels), (3, LabelColumns::Absent));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_xc_for_model(path: impl AsRef<Path>, shape: ModelShape) -> Result<ModelInput> {
    let data = read_xc_with(path.as_ref(), Some((shape.n_features, shape.n_labels)))?;
    ModelInput::new(data, shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_arff, read_csv, read_svmlight, read_xc};

    const SHAPE: ModelShape = ModelShape { n_features: 2, n_labels: 3 };

    fn file(dir: &tempfile::TempDir, name: &str, body: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    /// Features `[[1, 2], [0, -3]]`; labels `{0, 2}` and `{}` when labelled.
    fn check(input: &ModelInput, labels: LabelColumns) {
        let d = &input.data;
        assert_eq!((d.n_samples(), d.n_features(), d.n_labels(), input.labels), (2, 2, 3, labels));
        let x = d.x.to_dense();
        assert_eq!([x[(0, 0)], x[(0, 1)], x[(1, 0)], x[(1, 1)]], [1.0, 2.0, 0.0, -3.0]);
        d.check().unwrap();
        match labels {
            LabelColumns::Present => assert_eq!((d.y.set(0), d.y.set(1)), (&[0, 2][..], &[][..])),
            LabelColumns::Absent => assert!(d.y.iter().all(<[usize]>::is_empty)),
        }
    }

    #[test]
    fn arff_with_and_without_label_attributes() {
        let dir = tempfile::tempdir().unwrap();
        let head = "@relation t\n@attribute a numeric\n@attribute b numeric\n";
        let labels = "@attribute l0 {0,1}\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n";
        let bare = file(&dir, "x.arff", &format!("{head}@data\n1,2\n0,-3\n"));
        check(&read_arff_for_model(&bare, SHAPE).unwrap(), LabelColumns::Absent);
        let sparse = file(&dir, "s.arff", &format!("{head}@data\n{{0 1,1 2}}\n{{1 -3}}\n"));
        check(&read_arff_for_model(&sparse, SHAPE).unwrap(), LabelColumns::Absent);
        let full = file(&dir, "y.arff", &format!("{head}{labels}@data\n1,2,1,0,1\n0,-3,0,0,0\n"));
        let input = read_arff_for_model(&full, SHAPE).unwrap();
        check(&input, LabelColumns::Present);
        assert_eq!(input.data, read_arff(&full, 3).unwrap(), "the same as the plain reader");
        let odd = file(&dir, "z.arff", &format!("{head}@attribute c numeric\n@data\n1,2,3\n"));
        let e = read_arff_for_model(&odd, SHAPE).unwrap_err().to_string();
        assert!(e.contains(":5: expected 2 attributes before @data (the model's features) or 5"), "{e}");
        assert!(e.contains("found 3"), "{e}");
    }

    #[test]
    fn csv_with_and_without_label_columns() {
        let dir = tempfile::tempdir().unwrap();
        let bare = file(&dir, "x.csv", "a,b\n1,2\n0,-3\n");
        check(&read_csv_for_model(&bare, SHAPE, CsvHeader::Detect).unwrap(), LabelColumns::Absent);
        let no_header = file(&dir, "n.csv", "1,2\n0,-3\n");
        check(&read_csv_for_model(&no_header, SHAPE, CsvHeader::Absent).unwrap(), LabelColumns::Absent);
        let full = file(&dir, "y.csv", "a,b,x,y,z\n1,2,1,0,1\n0,-3,0,0,0\n");
        let input = read_csv_for_model(&full, SHAPE, CsvHeader::Detect).unwrap();
        check(&input, LabelColumns::Present);
        assert_eq!(input.data, read_csv(&full, 3, CsvHeader::Detect).unwrap());
        assert_eq!(input.data.label_names, ["x", "y", "z"]);
        // Feature values that are not 0/1 would fail as labels: a features-only file reads them as features.
        let e = read_csv_for_model(file(&dir, "w.csv", "1,2,3,4\n"), SHAPE, CsvHeader::Detect).unwrap_err();
        assert!(e.to_string().contains(":1: expected 2 columns (the model's features) or 5"), "{e}");
        let e = read_csv_for_model(file(&dir, "v.csv", "1,2\n1,2,3\n"), SHAPE, CsvHeader::Detect).unwrap_err();
        assert!(e.to_string().contains(":2: expected 2 comma-separated fields"), "{e}");
    }

    #[test]
    fn svmlight_with_and_without_label_lists() {
        let dir = tempfile::tempdir().unwrap();
        let bare = file(&dir, "x.svm", "1:1 2:2\n2:-3\n");
        check(&read_svmlight_for_model(&bare, SHAPE, false).unwrap(), LabelColumns::Absent);
        let zero = file(&dir, "z.svm", "0:1 1:2\n1:-3\n");
        check(&read_svmlight_for_model(&zero, SHAPE, true).unwrap(), LabelColumns::Absent);
        let full = file(&dir, "y.svm", "0,2 1:1 2:2\n 2:-3\n");
        let input = read_svmlight_for_model(&full, SHAPE, false).unwrap();
        check(&input, LabelColumns::Present);
        let opts = SvmlightOptions::new(false).n_features(2).n_labels(3);
        assert_eq!(input.data, read_svmlight(&full, &opts).unwrap());
        let e = read_svmlight_for_model(file(&dir, "w.svm", "3:1\n"), SHAPE, false).unwrap_err();
        assert!(e.to_string().contains("expected feature indices < 3 (n_features = 2), got 3"), "{e}");
    }

    #[test]
    fn xc_with_and_without_labels() {
        let dir = tempfile::tempdir().unwrap();
        for header in ["2 2", "2 2 0"] {
            let bare = file(&dir, "x.txt", &format!("{header}\n 0:1 1:2\n 1:-3\n"));
            check(&read_xc_for_model(&bare, SHAPE).unwrap(), LabelColumns::Absent);
        }
        let full = file(&dir, "y.txt", "# c\n2 2 3\n0,2 0:1 1:2\n 1:-3\n");
        let input = read_xc_for_model(&full, SHAPE).unwrap();
        check(&input, LabelColumns::Present);
        assert_eq!(input.data, read_xc(&full).unwrap());
        let e = read_xc_for_model(file(&dir, "w.txt", "# c\n1 2 4\n 0:1\n"), SHAPE).unwrap_err();
        assert!(e.to_string().contains(":2: expected n_labels = 3 (the model's) or none in the header, got 4"), "{e}");
        let e = read_xc_for_model(file(&dir, "v.txt", "1 7 3\n 0:1\n"), SHAPE).unwrap_err();
        assert!(e.to_string().contains(":1: expected n_features = 2 (the model's) in the header, got 7"), "{e}");
    }
}
