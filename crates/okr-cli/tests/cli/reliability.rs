//! Regression tests of issue 16, each named after its case: one-line errors
//! with status 2 instead of panics, no silently ignored flag, no lost data.

use std::process::Stdio;

use super::*;

const TEST_ARFF_HEAD: &str = "@relation toy\n\
@attribute f0 numeric\n@attribute f1 numeric\n@attribute l0 {0,1}\n@attribute l1 {0,1}\n@data\n";

/// `okr fit` on the toy ARFF (`train.arff`) into `m.okr` with `extra` flags.
fn fit_toy_with(dir: &Dir, extra: &[&str]) -> Output {
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("m.okr");
    let mut args = vec!["fit", "--train", p(&train), "--label-count", "2", "--model", p(&model)];
    args.extend_from_slice(extra);
    okr(&args)
}

/// [`fit_toy_with`], which must succeed; returns the model path.
fn fit_with(dir: &Dir, extra: &[&str]) -> PathBuf {
    let out = fit_toy_with(dir, extra);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.path("m.okr")
}

#[test]
fn polynomial_kernel_overflow_on_a_1e120_feature_is_a_nan_score_error() {
    let dir = Dir::new();
    let model = fit_with(&dir, &["--input-kernel", "polynomial", "--degree", "3"]);
    let test = dir.write("big.arff", &format!("{TEST_ARFF_HEAD}0.5,0.5,1,0\n1e120,0.5,0,1\n"));
    for cmd in ["predict", "eval"] {
        let flag = if cmd == "predict" { "--input" } else { "--test" };
        let out = okr(&[cmd, "-m", p(&model), flag, p(&test)]);
        assert_one_line_error(&out, &["test row 1", "non-finite", "overflowed"]);
    }
}

#[test]
fn output_gamma_1e300_is_a_nan_score_error_not_a_panic() {
    let dir = Dir::new();
    let model = fit_with(&dir, &["--output-gamma", "1e300"]);
    let test = dir.path("train.arff");
    let out = okr(&["predict", "-m", p(&model), "--input", p(&test)]);
    // Either the rows decode (all scores finite) or the error names a row; never a panic.
    if !out.status.success() {
        assert_one_line_error(&out, &["non-finite"]);
    }
    let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
    if !out.status.success() {
        assert_one_line_error(&out, &["non-finite"]);
    }
}

#[test]
fn fit_model_onto_the_training_file_is_refused() {
    let dir = Dir::new();
    let train = dir.write("data.arff", ARFF);
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--model", p(&train)]);
    assert_one_line_error(&out, &["training file", "data.arff", "overwritten"]);
    assert_eq!(std::fs::read_to_string(&train).unwrap(), ARFF);
    let via_dot = dir.0.path().join(".").join("data.arff");
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--model", p(&via_dot)]);
    assert_one_line_error(&out, &["training file"]);
}

#[test]
fn predict_output_onto_the_input_or_the_model_is_refused() {
    let dir = Dir::new();
    let model = fit_with(&dir, &[]);
    let input = dir.path("train.arff");
    let model_bytes = std::fs::read(&model).unwrap();
    for (target, what) in [(&input, "input file"), (&model, "model")] {
        let out = okr(&["predict", "-m", p(&model), "--input", p(&input), "-o", p(target)]);
        assert_one_line_error(&out, &[what, "overwritten"]);
    }
    assert_eq!(std::fs::read_to_string(&input).unwrap(), ARFF);
    assert_eq!(std::fs::read(&model).unwrap(), model_bytes);
}

#[test]
fn predict_output_is_not_truncated_before_the_flags_are_checked() {
    let dir = Dir::new();
    let model = fit_with(&dir, &[]);
    let input = dir.path("train.arff");
    let old = dir.write("pred.txt", "previous predictions\n");
    let bad_candidates = dir.write("c.txt", "7\n");
    for extra in [vec!["--zero-based"], vec!["--candidates", p(&bad_candidates)]] {
        let mut args = vec!["predict", "-m", p(&model), "--input", p(&input), "-o", p(&old)];
        args.extend(extra);
        let out = okr(&args);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "previous predictions\n");
    }
    let out = okr(&["predict", "-m", p(&model), "--input", p(&input), "-o", p(&old)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "0\n1\n1\n0\n0,1\n0\n");
    let names: Vec<_> = std::fs::read_dir(dir.0.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(names.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")), "{names:?}");
}

#[cfg(unix)]
#[test]
fn predict_output_keeps_the_permissions_of_the_file_it_replaces() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    let model = fit_with(&dir, &[]);
    let out_path = dir.write("pred.txt", "old\n");
    std::fs::set_permissions(&out_path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = okr(&["predict", "-m", p(&model), "--input", p(&dir.path("train.arff")), "-o", p(&out_path)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::metadata(&out_path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[cfg(unix)]
#[test]
fn eval_into_a_full_disk_is_one_line_and_exit_2() {
    let dir = Dir::new();
    let model = fit_with(&dir, &[]);
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(["eval", "-m", p(&model), "--test", p(&dir.path("train.arff"))])
        .stdout(full)
        .output()
        .unwrap();
    assert_one_line_error(&out, &["cannot write to standard output: No space left on device"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("os error"));
    let out = okr(&["predict", "-m", p(&model), "--input", p(&dir.path("train.arff")), "-o", "/dev/full"]);
    assert_one_line_error(&out, &["cannot write /dev/full: No space left on device"]);
}

/// Runs `args` with standard output a pipe whose reader is already gone.
fn with_closed_stdout_pipe(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn eval_into_a_closed_pipe_is_an_error_and_predict_into_one_is_quiet() {
    let dir = Dir::new();
    let model = fit_with(&dir, &[]);
    let data = dir.path("train.arff");
    let out = with_closed_stdout_pipe(&["eval", "-m", p(&model), "--test", p(&data)]);
    assert_one_line_error(&out, &["cannot write to standard output: Broken pipe"]);
    // `okr predict ... | head`: the reader had enough; quiet success.
    let out = with_closed_stdout_pipe(&["predict", "-m", p(&model), "--input", p(&data)]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty());
}

#[test]
fn gen_scale_1e300_is_an_error() {
    let dir = Dir::new();
    for scale in ["1e300", "1e6", "inf", "0", "-1", "NaN"] {
        let out = okr(&["gen", "--preset", "bibtex", "--scale", scale, "-o", p(&dir.path("d"))]);
        assert_one_line_error(&out, &["--scale"]);
    }
}

#[test]
fn missing_file_error_has_no_doubled_text() {
    let dir = Dir::new();
    let out = okr(&["fit", "--train", p(&dir.path("nope.arff")), "--label-count", "2", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["cannot open"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(!err.contains("os error"), "{err}");
}

#[test]
fn control_characters_from_input_files_are_escaped() {
    let dir = Dir::new();
    let bad = dir.write("esc.arff", &ARFF.replace("0.5,0.5,1,1", "\x1b]0;pwned\x07\x1b[2J,0.5,1,1"));
    let out = okr(&["fit", "--train", p(&bad), "--label-count", "2", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["esc.arff", "\\u{1b}"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.trim_end().chars().any(char::is_control), "{err:?}");
}

#[cfg(unix)]
#[test]
fn reader_on_dev_zero_is_a_clear_error() {
    let dir = Dir::new();
    let out = okr(&["fit", "--train", "/dev/zero", "--format", "svmlight", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["/dev/zero", "not a text file"]);
}

#[test]
fn csv_header_of_numbers_is_not_a_data_row() {
    let dir = Dir::new();
    let csv = dir.write("n.csv", "0,1,2,3\n0.0,1.0,1,0\n1.0,0.0,0,1\n0.9,0.1,0,1\n0.1,0.9,1,0\n");
    let model = dir.path("m.okr");
    let out = okr(&["fit", "--train", p(&csv), "--label-count", "2", "-o", p(&model)]);
    assert_one_line_error(&out, &["n.csv:1", "column numbers", "--csv-header"]);
    let out = okr(&["fit", "--train", p(&csv), "--label-count", "2", "--csv-header", "yes", "-o", p(&model)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = okr(&["eval", "-m", p(&model), "--test", p(&csv), "--csv-header", "yes"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["n_test"], 4, "the header is no test row");
}

/// Fit flags the estimator or kernel would ignore: one error naming both.
#[test]
fn ignored_fit_flags_are_errors() {
    let dir = Dir::new();
    let cases: &[(&[&str], &[&str])] = &[
        (&["--input-kernel", "linear", "--gamma", "0.5"], &["--input-gamma", "--input-kernel linear"]),
        (&["--input-kernel", "linear", "--input-gamma", "0.5"], &["--input-gamma", "--input-kernel linear"]),
        (&["--rank", "5"], &["--rank does not apply to --estimator iokr", "reduced-rank"]),
        (&["--estimator", "leml", "--input-kernel", "linear"], &["--input-kernel does not apply to --estimator leml"]),
        (&["--estimator", "kae", "--output-gamma", "1"], &["--output-gamma does not apply to --estimator kae"]),
        (&["--degree", "3"], &["--degree applies to --input-kernel polynomial"]),
        (&["--layers", "3"], &["--layers does not apply to --estimator iokr", "kae, k2ae"]),
        (&["--anchors", "5"], &["--anchors does not apply to --estimator iokr", "nystroem"]),
        (&["--input-kernel", "tanimoto", "--sigma2", "2"], &["--input-sigma2", "tanimoto"]),
        (&["--input-kernel", "polynomial", "--sigma2", "2"], &["--input-sigma2", "polynomial"]),
        (&["--output-kernel", "linear", "--output-gamma", "2"], &["--output-gamma", "--output-kernel linear"]),
        (&["--solver", "als"], &["--solver", "trace-norm", "iokr"]),
        (&["--max-iter", "5"], &["--max-iter", "iokr"]),
        (&["--estimator", "kde", "--max-iter", "5"], &["--max-iter", "kde"]),
        (&["--zero-based"], &["--zero-based", "ARFF"]),
        (&["--csv-header", "yes"], &["--csv-header", "ARFF"]),
    ];
    for (extra, needles) in cases {
        assert_one_line_error(&fit_toy_with(&dir, extra), needles);
    }
    let out = okr(&["fit", "--train", p(&dir.path("train.arff")), "--label-count", "0", "-o", p(&dir.path("m.okr"))]);
    assert_one_line_error(&out, &["--label-count 0", "iokr"]);
    assert!(!dir.path("m.okr").exists(), "no model file after an error");
}

#[test]
fn label_count_with_an_xc_file_is_an_error() {
    let dir = Dir::new();
    let xc = dir.write("d.xc", "2 2 2\n0 0:1\n1 1:1\n");
    let out = okr(&["fit", "--train", p(&xc), "--label-count", "2", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["--label-count", "XC", "header"]);
}

#[test]
fn label_count_zero_and_labelless_training_files_are_errors() {
    let dir = Dir::new();
    let svm = dir.write("nolabels.svm", " 1:1\n 2:1\n 1:0.5 2:0.5\n");
    let out = okr(&["fit", "--train", p(&svm), "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["nolabels.svm", "no labels"]);
}

#[test]
fn predict_flags_ignored_by_the_model_are_errors() {
    let dir = Dir::new();
    let model = fit_with(&dir, &[]);
    let input = dir.path("train.arff");
    // svmlight test files take the model's label count: a different flag would be ignored.
    let svm = dir.write(
        "t.svm",
        "0 1:0.5 2:0.5
1 1:1
",
    );
    let out = okr(&["predict", "-m", p(&model), "--input", p(&svm), "--label-count", "5"]);
    assert_one_line_error(&out, &["--label-count 5", "2 labels"]);
    for flag in ["--top-k", "--memory-budget"] {
        let out = okr(&["predict", "-m", p(&model), "--input", p(&input), flag, "0"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(flag));
    }
}

#[test]
fn candidates_with_a_leml_model_is_an_error() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("l.okr");
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "2",
        "--estimator",
        "leml",
        "--rank",
        "2",
        "--max-iter",
        "2",
        "-o",
        p(&model),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cands = dir.write("c.txt", "0\n1\n");
    for (cmd, flag) in [("predict", "--input"), ("eval", "--test")] {
        let out = okr(&[cmd, "-m", p(&model), flag, p(&train), "--candidates", p(&cands)]);
        assert_one_line_error(&out, &["--candidates", "LEML"]);
    }
}
