//! `okr fit --sample-weights` (issue 37, item 2): the weighted fit equals
//! the library's weighted IOKR to 1e-10, and each bad weights file (a zero,
//! negative or NaN weight, the wrong count, a line that is not a number, an
//! estimator without a weighted fit) is one error line with exit 2.

use faer::Mat;
use okr_decode::CandidateDecoder;
use okr_estimators::{FitWeighted, Iokr};
use okr_eval::Features;
use okr_kernels::{DenseRows, Gaussian, KernelSpec};
use serde_json::Value;

use super::{Dir, Output, assert_one_line_error, okr, p};

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn csv(m: &Mat<f64>) -> String {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| format!("{:?}", m[(i, j)])).collect::<Vec<_>>().join(",") + "\n")
        .collect()
}

fn inputs(n: usize, shift: f64) -> Mat<f64> {
    Mat::from_fn(n, 4, |i, j| ((i as f64 + shift) * 0.37 + j as f64 * 1.3).sin())
}

const N: usize = 24;

/// Training files and the `okr fit` arguments for them (vector outputs).
fn setup(dir: &Dir) -> (Mat<f64>, Mat<f64>, Vec<String>) {
    let x = inputs(N, 0.0);
    let y = Mat::from_fn(N, 3, |i, j| (x[(i, 0)] * (j as f64 + 1.0)).cos() + x[(i, 1)]);
    let (xf, yf) = (dir.write("x.csv", &csv(&x)), dir.write("y.csv", &csv(&y)));
    let model = dir.path("w.okr");
    let args = [
        "fit",
        "--train",
        p(&xf),
        "--csv-header",
        "no",
        "--output-kind",
        "vector",
        "--outputs",
        p(&yf),
        "--gamma",
        "0.3",
        "--output-gamma",
        "0.5",
        "--lambda",
        "1e-3",
        "--no-standardize",
        "-m",
        p(&model),
    ];
    (x, y, args.iter().map(|s| s.to_string()).collect())
}

fn run(args: &[String], extra: &[&str]) -> Output {
    let all: Vec<&str> = args.iter().map(String::as_str).chain(extra.iter().copied()).collect();
    okr(&all)
}

#[test]
fn sample_weights_give_the_weighted_library_fit() {
    let dir = Dir::new();
    let (x, y, args) = setup(&dir);
    let w: Vec<f64> = (0..N).map(|i| 0.5 + (i % 4) as f64).collect();
    let wf = dir.write(
        "w.txt",
        &format!("# one weight per row\n{}\n", w.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join("\n")),
    );
    ok(run(&args, &["--sample-weights", p(&wf)]));
    let kx: KernelSpec = Gaussian::new(0.3).unwrap().into();
    let ky: KernelSpec = Gaussian::new(0.5).unwrap().into();
    let lib = Iokr::params(kx, ky)
        .lambda(1e-3)
        .fit_weighted(&Features::Dense(DenseRows::new(x).unwrap()), &DenseRows::new(y).unwrap(), &w)
        .unwrap();
    let xt = inputs(6, 50.0);
    let xtf = dir.write("xt.csv", &csv(&xt));
    let decoded = CandidateDecoder::new()
        .top_k(2)
        .decode(&lib, &Features::Dense(DenseRows::new(xt).unwrap()), lib.atoms())
        .unwrap();
    let model = dir.path("w.okr");
    let text = ok(okr(&[
        "predict",
        "-m",
        p(&model),
        "-i",
        p(&xtf),
        "--csv-header",
        "no",
        "--top-k",
        "2",
        "--output-format",
        "json",
    ]));
    for (t, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        for (s, want) in v["scores"].as_array().unwrap().iter().zip(decoded.top_scores(t)) {
            let s = s.as_f64().unwrap();
            assert!((s - want).abs() <= 1e-10 * (1.0 + want.abs()), "row {t}: {s} vs {want}");
        }
    }
    // The weights are data: not in the model's recipe.
    let info = ok(okr(&["info", "--json", p(&model)]));
    assert!(!info.contains("weight\":[") && !info.contains("sample_weight"), "{info}");
}

#[test]
fn bad_sample_weights_are_one_line_errors() {
    let dir = Dir::new();
    let (_, _, args) = setup(&dir);
    let ones = |k: usize| vec!["1"; k].join("\n");
    let with = |i: usize, v: &str| {
        let mut rows = vec!["1".to_string(); N];
        rows[i] = v.to_string();
        rows.join("\n")
    };
    let cases: [(&str, String, &[&str]); 6] = [
        ("zero", with(3, "0"), &["--sample-weights", "invalid sample weight 0 of sample 3", "> 0"]),
        ("negative", with(0, "-2"), &["--sample-weights", "invalid sample weight -2 of sample 0"]),
        ("nan", with(7, "NaN"), &["--sample-weights", "invalid sample weight NaN of sample 7"]),
        ("short", ones(N - 1), &["--sample-weights", "number of sample weights: expected 24, got 23"]),
        ("long", ones(N + 2), &["--sample-weights", "expected 24, got 26"]),
        ("text", with(5, "heavy"), &["--sample-weights", ":6: expected one number, got 'heavy'"]),
    ];
    for (name, text, needles) in cases {
        let wf = dir.write(&format!("{name}.txt"), &text);
        let out = run(&args, &["--sample-weights", p(&wf)]);
        assert_one_line_error(&out, needles);
        assert!(!dir.path("w.okr").exists(), "{name}: no model file is written");
    }
    let wf = dir.write("ok.txt", &ones(N));
    assert_one_line_error(
        &run(&args, &["--sample-weights", p(&wf), "--estimator", "kde"]),
        &["estimator kde has no weighted fit", "iokr, reduced-rank"],
    );
    assert_one_line_error(
        &okr(&["tune", "--sample-weights", p(&wf), "--train", "x", "-m", "m"]),
        &["okr tune", "unweighted"],
    );
}
