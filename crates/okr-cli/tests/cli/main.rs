//! The `okr` binary end to end: generated data through fit, predict and
//! eval, and one clear error line with a non-zero exit for each bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod data;
mod embed;
mod gram;
mod memory;
mod metrics;
mod output_paths;
mod outputs;
mod probe35;
mod progress;
mod rank;
mod recipe;
mod reliability;
mod sample_weights;
mod spectra_gram;
mod structured;
mod tune;
mod user_data;
mod vectors;

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Self(tempfile::tempdir().unwrap())
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

fn okr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_okr")).args(args).env("RAYON_NUM_THREADS", "2").output().unwrap()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The command fails with exit 2 and exactly one stderr line containing every `needle`.
fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "expected one line, got: {stderr}");
    assert!(stderr.starts_with("okr: "), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{stderr:?} should contain {n:?}");
    }
}

const ARFF: &str = "@relation toy\n\
@attribute f0 numeric\n@attribute f1 numeric\n@attribute l0 {0,1}\n@attribute l1 {0,1}\n@data\n\
0.0,1.0,1,0\n1.0,0.0,0,1\n0.9,0.1,0,1\n0.1,0.9,1,0\n0.5,0.5,1,1\n0.2,0.8,1,0";

fn fit_toy(dir: &Dir) -> PathBuf {
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("m.okr");
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--model", p(&model), "--lambda", "1e-3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    model
}

#[test]
fn gen_fit_predict_eval_round_trip() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "emotions", "--scale", "0.25", "--seed", "3", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let train = dir.path("d/emotions-standin-train.arff");
    let test = dir.path("d/emotions-standin-test.arff");
    assert!(train.exists() && test.exists());
    let model = dir.path("e.okr");
    let out =
        okr(&["fit", "--train", p(&train), "--label-count", "6", "--standardize", "--lambda", "1e-4", "-o", p(&model)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "f1_samples",
        "f1_micro",
        "f1_macro",
        "hamming",
        "p_at_1",
        "p_at_3",
        "p_at_5",
        "mse_h",
        "fit_seconds",
        "decode_seconds",
    ] {
        assert!(v[key].is_number(), "missing {key} in {v}");
    }
    let f1 = v["f1_samples"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&f1));
    let out = okr(&["predict", "-m", p(&model), "--input", p(&test), "--top-k", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let n_test = v["n_test"].as_u64().unwrap() as usize;
    assert_eq!(text.lines().count(), n_test);
    assert!(text.lines().all(|l| l.split(';').count() == 2), "{text}");
}

#[test]
fn predict_recovers_training_labels_and_reads_candidates() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let out = okr(&["predict", "-m", p(&model), "--input", p(&train)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "0\n1\n1\n0\n0,1\n0\n");
    let cands = dir.write("c.txt", "# only two candidates\n1\n\n");
    let out = okr(&["predict", "-m", p(&model), "--input", p(&train), "--candidates", p(&cands)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap().lines().all(|l| l == "1" || l == "-"));
}

#[test]
fn missing_file() {
    let dir = Dir::new();
    let out = okr(&["fit", "--train", p(&dir.path("nope.arff")), "--label-count", "2", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["nope.arff"]);
    assert!(!dir.path("m").exists(), "no model is written on error");
}

#[test]
fn malformed_arff_row() {
    let dir = Dir::new();
    let bad = dir.write("bad.arff", &ARFF.replace("0.9,0.1,0,1", "0.9,0.1,0"));
    let out = okr(&["fit", "--train", p(&bad), "--label-count", "2", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["bad.arff:9", "expected 4"]);
}

#[test]
fn nan_in_features() {
    let dir = Dir::new();
    let bad = dir.write("nan.arff", &ARFF.replace("0.5,0.5,1,1", "NaN,0.5,1,1"));
    let out = okr(&["fit", "--train", p(&bad), "--label-count", "2", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["nan.arff"]);
}

#[test]
fn label_count_larger_than_attribute_count() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    let out = okr(&["fit", "--train", p(&train), "--label-count", "9", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["t.arff", "9"]);
}

#[test]
fn lambda_must_be_positive() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    for lambda in ["0", "-1e-3"] {
        let out =
            okr(&["fit", "--train", p(&train), "--label-count", "2", "--lambda", lambda, "-o", p(&dir.path("m"))]);
        assert_one_line_error(&out, &["lambda", "> 0"]);
    }
}

#[test]
fn test_file_with_other_feature_count() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let wide = dir.write(
        "wide.arff",
        "@relation w\n@attribute a numeric\n@attribute b numeric\n@attribute c numeric\n\
         @attribute l0 {0,1}\n@attribute l1 {0,1}\n@data\n1,2,3,0,1\n",
    );
    let out = okr(&["eval", "-m", p(&model), "--test", p(&wide)]);
    assert_one_line_error(&out, &["wide.arff", "expected 2 attributes", "or 4", "found 5"]);
}

#[test]
fn empty_candidate_file() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let empty = dir.write("empty.txt", "");
    let out = okr(&["predict", "-m", p(&model), "--input", p(&dir.path("train.arff")), "--candidates", p(&empty)]);
    assert_one_line_error(&out, &["empty.txt", "empty"]);
}

#[test]
fn not_a_model_file() {
    let dir = Dir::new();
    let junk = dir.write("junk.okr", "hello");
    let out = okr(&["eval", "-m", p(&junk), "--test", p(&dir.write("t.arff", ARFF))]);
    assert_one_line_error(&out, &["junk.okr", "not an okr model"]);
}

#[test]
fn reduced_rank_and_kde_fit_and_eval() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "emotions", "--scale", "0.25", "--seed", "3", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let train = dir.path("d/emotions-standin-train.arff");
    let test = dir.path("d/emotions-standin-test.arff");
    for (estimator, extra) in [
        ("reduced-rank", &["--rank", "16", "--lambda1", "1e-3", "--lambda2", "1e-4"][..]),
        ("kde", &["--rank", "16", "--lambda", "1e-4"][..]),
        ("kde", &["--rank", "16", "--lambda", "1e-4", "--centered"][..]),
        ("trace-norm", &["--rank", "8", "--lambda", "1e-3", "--solver", "gd"][..]),
        ("trace-norm", &["--rank", "8", "--lambda", "1e-3", "--solver", "convex"][..]),
    ] {
        let model = dir.path(&format!("{estimator}{}.okr", extra.len()));
        let mut args =
            vec!["fit", "--train", p(&train), "--label-count", "6", "--standardize", "--estimator", estimator];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", p(&model)]);
        let out = okr(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(&format!("fitted {estimator}")) && stderr.contains("rank "), "{stderr}");
        let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let f1 = v["f1_samples"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f1), "{estimator}: {v}");
        for key in ["p_at_1", "p_at_3", "mse_h"] {
            assert!(v[key].is_number(), "{estimator}: missing {key} in {v}");
        }
        let out = okr(&["predict", "-m", p(&model), "--input", p(&test)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), v["n_test"].as_u64().unwrap() as usize);
    }
}

#[test]
fn rank_is_capped_and_reported() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "2",
        "--estimator",
        "kde",
        "--rank",
        "50",
        "-o",
        p(&dir.path("m")),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("fitted kde") && stderr.contains("--rank 50 capped"), "{stderr}");
}

#[test]
fn centered_is_for_kde_only() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--centered", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["--centered does not apply to --estimator iokr (only to kde)"]);
}

#[test]
fn rank_zero_is_rejected() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    for estimator in ["reduced-rank", "kde"] {
        let out = okr(&[
            "fit",
            "--train",
            p(&train),
            "--label-count",
            "2",
            "--estimator",
            estimator,
            "--rank",
            "0",
            "-o",
            p(&dir.path("m")),
        ]);
        assert_one_line_error(&out, &["rank", ">= 1"]);
        assert!(!dir.path("m").exists());
    }
}

#[test]
fn lambda1_is_for_reduced_rank_only() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--lambda1", "1e-3", "-o", p(&dir.path("m"))]);
    assert_one_line_error(&out, &["--lambda1", "reduced-rank"]);
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "2",
        "--estimator",
        "reduced-rank",
        "--lambda2",
        "-1",
        "-o",
        p(&dir.path("m")),
    ]);
    assert_one_line_error(&out, &["lambda2", "> 0"]);
}

#[test]
fn reduced_rank_at_full_rank_matches_iokr() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    let eval = |estimator: &str| {
        let model = dir.path(&format!("{estimator}.okr"));
        let fit = okr(&[
            "fit",
            "--train",
            p(&train),
            "--label-count",
            "2",
            "--estimator",
            estimator,
            "--lambda",
            "1e-3",
            "-o",
            p(&model),
        ]
        .into_iter()
        .chain(if estimator == "iokr" { vec![] } else { vec!["--rank", "1000"] })
        .collect::<Vec<_>>());
        assert!(fit.status.success(), "{}", String::from_utf8_lossy(&fit.stderr));
        let out = okr(&["eval", "-m", p(&model), "--test", p(&train)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let (a, b) = (eval("iokr"), eval("reduced-rank"));
    for key in ["f1_samples", "p_at_1", "mse_h"] {
        let (x, y) = (a[key].as_f64().unwrap(), b[key].as_f64().unwrap());
        assert!((x - y).abs() < 1e-6, "{key}: iokr {x} vs reduced-rank {y}");
    }
    assert!(a["p_at_3"].is_null() && a["p_at_5"].is_null(), "2 labels: {a}");
}

#[test]
fn leml_fit_predict_eval_on_svmlight() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "bibtex", "--scale", "0.05", "--format", "svmlight", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let train = dir.path("d/bibtex-standin-train.svm");
    let test = dir.path("d/bibtex-standin-test.svm");
    let model = dir.path("l.okr");
    let fit = |extra: &[&str]| {
        let mut args = vec!["fit", "--train", p(&train), "--label-count", "159", "--estimator", "leml", "--rank", "8"];
        args.extend_from_slice(&["--lambda", "1"]);
        args.extend_from_slice(&["--max-iter", "3", "-o", p(&model)]);
        args.extend_from_slice(extra);
        okr(&args)
    };
    let out = fit(&["--loss", "sq"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("leml-sq"));
    let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["p_at_1", "p_at_3", "p_at_5", "hamming", "auc", "f1_samples", "fit_seconds"] {
        assert!(v[key].is_number(), "missing {key} in {v}");
    }
    assert_eq!(v["threshold"].as_f64(), Some(0.5));
    let n_test = v["n_test"].as_u64().unwrap() as usize;
    let out = okr(&["predict", "-m", p(&model), "--input", p(&test), "--top-k", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), n_test);
    assert!(text.lines().all(|l| l.split(',').count() == 3), "{text}");
    // Missing labels with the logistic loss: ±1 targets, threshold 0.
    let out = fit(&["--loss", "lr", "--observed-fraction", "0.3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("labels observed"));
    let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["threshold"].as_f64(), Some(0.0));
}

#[test]
fn leml_flags_are_checked() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("m.okr");
    let base = ["fit", "--train", p(&train), "--label-count", "2", "-o", p(&model)];
    let with = |extra: &[&str]| okr(&base.iter().copied().chain(extra.iter().copied()).collect::<Vec<_>>());
    assert_one_line_error(
        &with(&["--estimator", "leml", "--observed-fraction", "1.5"]),
        &["observed_fraction = 1.5", "(0, 1]"],
    );
    assert_one_line_error(&with(&["--loss", "lr"]), &["--loss does not apply to --estimator iokr", "leml"]);
    assert_one_line_error(&with(&["--estimator", "leml", "--rank", "0"]), &["rank"]);
    assert!(!model.exists(), "no model file after an error");
}

#[test]
fn kae_and_k2ae_fit_then_encode() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    for (est, kernel) in [("kae", "gaussian"), ("k2ae", "tanimoto")] {
        let model = dir.path(&format!("{est}.okr"));
        let out = okr(&[
            "fit",
            "--train",
            p(&train),
            "--label-count",
            "2",
            "--model",
            p(&model),
            "--estimator",
            est,
            "--input-kernel",
            kernel,
            "--layers",
            "3",
            "--code-dim",
            "2",
            "--max-iter",
            "20",
            "--lambda",
            "1e-2",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let codes = dir.path(&format!("{est}.csv"));
        let out = okr(&["encode", "--model", p(&model), "--input", p(&train), "--label-count", "2", "-o", p(&codes)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(&codes).unwrap();
        assert_eq!(text.lines().count(), 6);
        assert!(text.lines().all(|l| l.split(',').count() == 2 && l.split(',').all(|v| v.parse::<f64>().is_ok())));
        let out = okr(&["predict", "--model", p(&model), "--input", p(&train), "--label-count", "2"]);
        assert_one_line_error(&out, &["autoencoder", "okr encode"]);
    }
    let iokr = fit_toy(&dir);
    let out = okr(&["encode", "--model", p(&iokr), "--input", p(&train), "--label-count", "2"]);
    assert_one_line_error(&out, &["okr encode", "kae or k2ae"]);
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "2",
        "--model",
        p(&dir.path("x")),
        "--estimator",
        "kae",
        "--layers",
        "1",
    ]);
    assert_one_line_error(&out, &["layers = 1", "at least 2"]);
}

#[test]
fn sketched_and_nystroem_fit_eval_predict() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "emotions", "--scale", "0.25", "--seed", "3", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let train = dir.path("d/emotions-standin-train.arff");
    let test = dir.path("d/emotions-standin-test.arff");
    let anchors = dir.write("anchors.txt", "0, 3, 5\n7\n11,13\n");
    for (estimator, extra) in [
        ("siokr", &["--input-sketch", "uniform:40"][..]),
        ("isokr", &["--output-sketch", "gaussian:10"][..]),
        ("sisokr", &["--input-sketch", "sparse-rademacher:30", "--output-sketch", "uniform:10", "--seed", "4"][..]),
        ("nystroem", &["--anchors", "30"][..]),
        ("nystroem", &["--anchors", p(&anchors)][..]),
    ] {
        let model = dir.path(&format!("{estimator}.okr"));
        let mut args = vec!["fit", "--train", p(&train), "--label-count", "6", "--standardize", "--lambda", "1e-3"];
        args.extend_from_slice(&["--estimator", estimator]);
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", p(&model)]);
        let out = okr(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(&format!("fitted {estimator}")), "{stderr}");
        let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let f1 = v["f1_samples"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f1), "{estimator}: {v}");
        for key in ["p_at_1", "p_at_3", "mse_h"] {
            assert!(v[key].is_number(), "{estimator}: missing {key} in {v}");
        }
        let out = okr(&["predict", "-m", p(&model), "--input", p(&test)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), v["n_test"].as_u64().unwrap() as usize);
    }
}

#[test]
fn identity_sketches_match_iokr() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    let eval = |estimator: &str, extra: &[&str]| {
        let model = dir.path(&format!("{estimator}.okr"));
        let mut args = vec!["fit", "--train", p(&train), "--label-count", "2", "--estimator", estimator];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", p(&model)]);
        let fit = okr(&args);
        assert!(fit.status.success(), "{}", String::from_utf8_lossy(&fit.stderr));
        let out = okr(&["eval", "-m", p(&model), "--test", p(&train)]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let a = eval("iokr", &["--lambda", "1e-3"]);
    let b = eval("sisokr", &["--input-sketch", "identity", "--output-sketch", "identity", "--lambda", "1e-3"]);
    for key in ["f1_samples", "p_at_1", "mse_h"] {
        let (x, y) = (a[key].as_f64().unwrap(), b[key].as_f64().unwrap());
        assert!((x - y).abs() < 1e-6, "{key}: iokr {x} vs sisokr {y}");
    }
}

#[test]
fn sketch_flags_are_checked() {
    let dir = Dir::new();
    let train = dir.write("t.arff", ARFF);
    let model = dir.path("m.okr");
    let fit = |extra: &[&str]| {
        let mut args = vec!["fit", "--train", p(&train), "--label-count", "2", "-o", p(&model)];
        args.extend_from_slice(extra);
        okr(&args)
    };
    assert_one_line_error(&fit(&["--estimator", "sisokr", "--input-sketch", "uniform:3"]), &["needs an output sketch"]);
    assert_one_line_error(&fit(&["--estimator", "siokr"]), &["needs an input sketch"]);
    assert_one_line_error(&fit(&["--input-sketch", "uniform:3"]), &["does not apply"]);
    assert_one_line_error(&fit(&["--estimator", "iokr", "--anchors", "3"]), &["--anchors"]);
    let bad = dir.write("anchors.txt", "0,99");
    assert_one_line_error(&fit(&["--estimator", "nystroem", "--anchors", p(&bad)]), &["anchors", "99"]);
    let junk = dir.write("junk.txt", "0\nx1");
    assert_one_line_error(&fit(&["--estimator", "nystroem", "--anchors", p(&junk)]), &["junk.txt:2"]);
    assert!(!model.exists(), "no model file after an error");
}
