//! A user's own data: files of features only predict in every format.

use super::{ARFF, Dir, assert_one_line_error, fit_toy, okr, p};

/// The toy training file's features (`ARFF` without its two label attributes),
/// in each format, and what the model predicts on them.
const FEATURES_ARFF: &str = "@relation toy\n@attribute f0 numeric\n@attribute f1 numeric\n@data\n\
0.0,1.0\n1.0,0.0\n0.9,0.1\n0.1,0.9\n0.5,0.5\n0.2,0.8\n";
const FEATURES_CSV: &str = "f0,f1\n0.0,1.0\n1.0,0.0\n0.9,0.1\n0.1,0.9\n0.5,0.5\n0.2,0.8\n";
const FEATURES_SVM: &str = "2:1\n1:1\n1:0.9 2:0.1\n1:0.1 2:0.9\n1:0.5 2:0.5\n1:0.2 2:0.8\n";
const FEATURES_XC: &str = "6 2\n 1:1\n 0:1\n 0:0.9 1:0.1\n 0:0.1 1:0.9\n 0:0.5 1:0.5\n 0:0.2 1:0.8\n";
const PREDICTED: &str = "0\n1\n1\n0\n0,1\n0\n";

fn predict(args: &[&str]) -> String {
    let out = okr(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn features_only_files_predict_in_every_format() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let labelled = predict(&["predict", "-m", p(&model), "--input", p(&dir.path("train.arff"))]);
    assert_eq!(labelled, PREDICTED);
    let no_header = dir.write("x_no_header.csv", &FEATURES_CSV["f0,f1\n".len()..]);
    for (name, text, extra) in [
        ("x.arff", FEATURES_ARFF, &[][..]),
        ("x.csv", FEATURES_CSV, &[][..]),
        ("x.svm", FEATURES_SVM, &[][..]),
        ("x.xc", FEATURES_XC, &[][..]),
        ("x0.arff", FEATURES_ARFF, &["--label-count", "0"][..]),
    ] {
        let input = dir.write(name, text);
        let mut args = vec!["predict", "-m", p(&model), "--input", p(&input)];
        args.extend_from_slice(extra);
        assert_eq!(predict(&args), PREDICTED, "{name}");
    }
    let args = ["predict", "-m", p(&model), "--input", p(&no_header), "--csv-header", "no"];
    assert_eq!(predict(&args), PREDICTED);
}

#[test]
fn labelled_files_still_predict_and_label_count_checks_the_file() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    assert_eq!(predict(&["predict", "-m", p(&model), "--input", p(&train), "--label-count", "2"]), PREDICTED);
    let csv = dir.write("y.csv", "f0,f1,a,b\n0,1,1,0\n1,0,0,1\n");
    assert_eq!(predict(&["predict", "-m", p(&model), "--input", p(&csv)]), "0\n1\n");
    let out = okr(&["predict", "-m", p(&model), "--input", p(&train), "--label-count", "0"]);
    assert_one_line_error(&out, &["train.arff", "--label-count 0 says the file has no labels, but it has 2"]);
    let x = dir.write("x.arff", FEATURES_ARFF);
    let out = okr(&["predict", "-m", p(&model), "--input", p(&x), "--label-count", "2"]);
    assert_one_line_error(&out, &["x.arff", "--label-count 2 says the file has labels, but it has features only"]);
}

#[test]
fn a_column_count_that_fits_neither_is_one_line() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let csv = dir.write("w.csv", "a,b,c\n1,2,3\n");
    let out = okr(&["predict", "-m", p(&model), "--input", p(&csv)]);
    assert_one_line_error(&out, &["w.csv:1:", "expected 2 columns (the model's features) or 4", "found 3"]);
    let xc = dir.write("w.xc", "1 2 5\n 0:1\n");
    let out = okr(&["predict", "-m", p(&model), "--input", p(&xc)]);
    assert_one_line_error(&out, &["w.xc:1:", "n_labels = 2 (the model's) or none"]);
}

#[test]
fn eval_needs_labels() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    for (name, text) in [("x.csv", FEATURES_CSV), ("x.arff", FEATURES_ARFF), ("x.svm", FEATURES_SVM)] {
        let input = dir.write(name, text);
        let out = okr(&["eval", "-m", p(&model), "--test", p(&input)]);
        assert_one_line_error(&out, &[name, "features only, no label columns to evaluate against"]);
    }
}

#[test]
fn score_models_predict_on_features_only() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("l.okr");
    let fit = ["fit", "--train", p(&train), "--label-count", "2", "--estimator", "leml", "--rank", "2"];
    let out = okr(&[&fit[..], &["--max-iter", "3", "-o", p(&model)]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let labelled = predict(&["predict", "-m", p(&model), "--input", p(&train)]);
    for (name, text) in [("x.csv", FEATURES_CSV), ("x.svm", FEATURES_SVM)] {
        let input = dir.write(name, text);
        assert_eq!(predict(&["predict", "-m", p(&model), "--input", p(&input)]), labelled, "{name}");
    }
}
