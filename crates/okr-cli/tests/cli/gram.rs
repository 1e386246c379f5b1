//! Precomputed input Grams and combined input kernels end to end (issue 17,
//! items 3 and 5): `okr fit --input-gram` with predict / eval / rank
//! `--input-gram-test` gives the model of the kernel the Gram came from (to
//! 1e-12), in .npy (C and Fortran order) and text; `--input-kernels` with
//! uniform weights on one kernel is that kernel; ALIGNF weights shown by
//! `okr info` are the library's; every bad Gram is one error line, exit 2.
//! Every output kind (fingerprints, vectors, graphs, rankings) and every
//! kernel-output estimator fits on a Gram too (issue 34): predict, eval and
//! rank agree with the features' model (ids identical, numbers to 1e-10).

use faer::Mat;
use okr_kernels::mkl::alignf_weights;
use okr_kernels::{DenseRows, Gaussian, Kernel, LabelSets, Laplacian, Linear};
use serde_json::Value;

use super::{Dir, Output, assert_one_line_error, okr, p};

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Deterministic inputs `(n, 3)`.
fn inputs(n: usize, shift: f64) -> Mat<f64> {
    Mat::from_fn(n, 3, |i, j| ((i as f64 + shift) * 0.61 + j as f64 * 1.7).sin())
}

/// Three labels that depend on the inputs.
fn labels(x: &Mat<f64>) -> Vec<Vec<usize>> {
    (0..x.nrows()).map(|i| (0..3).filter(|&j| x[(i, j)] > -0.2 * j as f64).collect()).collect()
}

/// CSV rows: the features, then 0/1 label columns.
fn csv(x: &Mat<f64>, y: &[Vec<usize>]) -> String {
    (0..x.nrows())
        .map(|i| {
            let f = (0..x.ncols()).map(|j| format!("{:?}", x[(i, j)]));
            let l = (0..3).map(|j| if y[i].contains(&j) { "1".to_string() } else { "0".to_string() });
            f.chain(l).collect::<Vec<_>>().join(",") + "\n"
        })
        .collect()
}

/// Text Gram: whitespace-separated rows, a comment line first.
fn text(m: &Mat<f64>) -> String {
    let rows = (0..m.nrows()).map(|i| (0..m.ncols()).map(|j| format!("{:?}", m[(i, j)])).collect::<Vec<_>>().join(" "));
    std::iter::once("# Gram".to_string()).chain(rows).collect::<Vec<_>>().join("\n") + "\n"
}

/// A NumPy .npy file (format 1.0, little-endian float64).
fn npy(m: &Mat<f64>, fortran: bool) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': {order}, 'shape': ({}, {}), }}", m.nrows(), m.ncols()).into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    let idx: Vec<(usize, usize)> = if fortran {
        (0..m.ncols()).flat_map(|j| (0..m.nrows()).map(move |i| (i, j))).collect()
    } else {
        (0..m.nrows()).flat_map(|i| (0..m.ncols()).map(move |j| (i, j))).collect()
    };
    for (i, j) in idx {
        out.extend_from_slice(&m[(i, j)].to_le_bytes());
    }
    out
}

/// Every number of `a` equals the one at the same place of `b` to `tol`
/// (relative to the larger of 1 and |b|); strings and the shape are equal.
fn assert_json_close_to(a: &Value, b: &Value, at: &str, tol: f64) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() <= tol * y.abs().max(1.0), "{at}: {x} vs {y}");
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (k, (u, v)) in x.iter().zip(y).enumerate() {
                assert_json_close_to(u, v, &format!("{at}[{k}]"), tol);
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys: Vec<_> = x.keys().collect();
            assert_eq!(keys, y.keys().collect::<Vec<_>>(), "{at}");
            for (k, u) in x {
                if !k.ends_with("seconds") {
                    assert_json_close_to(u, &y[k], &format!("{at}.{k}"), tol);
                }
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

/// [`assert_json_close_to`] at 1e-12.
fn assert_json_close(a: &Value, b: &Value, at: &str) {
    assert_json_close_to(a, b, at, 1e-12);
}

fn json_lines(text: &str) -> Value {
    Value::Array(text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

struct Data {
    dir: Dir,
    train: std::path::PathBuf,
    test: std::path::PathBuf,
    x: Mat<f64>,
    xt: Mat<f64>,
}

fn data() -> Data {
    let dir = Dir::new();
    let (x, xt) = (inputs(36, 0.0), inputs(9, 50.0));
    let train = dir.write("train.csv", &csv(&x, &labels(&x)));
    let test = dir.write("test.csv", &csv(&xt, &labels(&xt)));
    Data { dir, train, test, x, xt }
}

fn rows(m: &Mat<f64>) -> DenseRows {
    DenseRows::new(m.clone()).unwrap()
}

const READ: [&str; 4] = ["--label-count", "3", "--csv-header", "no"];

/// Predictions with scores (JSON lines), and the eval report without times.
fn predict_and_eval(d: &Data, model: &str, test_args: &[&str]) -> (Value, Value) {
    let mut pred = vec!["predict", "-m", model, "--top-k", "3", "--scores", "--output-format", "json"];
    pred.extend_from_slice(test_args);
    let predicted = json_lines(&ok(okr(&pred)));
    let mut eval = vec!["eval", "-m", model, "-i", p(&d.test), "--label-count", "3", "--csv-header", "no"];
    if test_args[0] != "-i" {
        eval.extend_from_slice(test_args);
    }
    let mut report: Value = serde_json::from_str(&ok(okr(&eval))).unwrap();
    report.as_object_mut().unwrap().retain(|k, _| !k.ends_with("seconds"));
    (predicted, report)
}

#[test]
fn precomputed_gram_gives_the_model_of_its_kernel() {
    let d = data();
    let k = Gaussian::new(0.4).unwrap();
    let (g, gt) = (k.gram(&rows(&d.x)), k.gram_block(&rows(&d.xt), &rows(&d.x)));
    let files = [
        ("npy-c", npy(&g, false), npy(&gt, false), "npy"),
        ("npy-f", npy(&g, true), npy(&gt, true), "npy"),
        ("text", text(&g).into_bytes(), text(&gt).into_bytes(), "txt"),
    ];
    // SISOKR at 1e-10: its feature fit computes the sub-sampled Gram columns
    // as a GEMM block of their own, which differs from the full Gram in the
    // last bits (1e-16), and the sketched system amplifies that to ~1e-11.
    let estimators: [(&[&str], f64); 4] = [
        (&["--estimator", "iokr"], 1e-12),
        (&["--estimator", "reduced-rank", "--rank", "2"], 1e-12),
        (&["--estimator", "nystroem", "--anchors", "12"], 1e-12),
        (&["--estimator", "sisokr", "--input-sketch", "uniform:15", "--output-sketch", "gaussian:6"], 1e-10),
    ];
    let estimators = estimators.into_iter().chain([
        (&["--estimator", "kde", "--rank", "2"][..], 1e-10),
        (&["--estimator", "nystroem-reduced-rank", "--anchors", "12", "--rank", "2"][..], 1e-10),
        (&["--estimator", "trace-norm", "--rank", "2", "--solver", "als"][..], 1e-10),
    ]);
    for (est, tol) in estimators {
        let features = p(&d.dir.path("features.okr")).to_string();
        let mut fit = vec!["fit", "--train", p(&d.train), "-m", &features, "--lambda", "1e-3", "--seed", "4"];
        fit.extend_from_slice(&READ);
        fit.extend_from_slice(est);
        let mut on_features = fit.clone();
        on_features.extend(["--input-gamma", "0.4", "--no-standardize"]);
        ok(okr(&on_features));
        let want = predict_and_eval(&d, &features, &["-i", p(&d.test), "--csv-header", "no"]);
        for (name, train_gram, test_gram, ext) in &files {
            let (gf, gtf) = (d.dir.path(&format!("g-{name}.{ext}")), d.dir.path(&format!("gt-{name}.{ext}")));
            std::fs::write(&gf, train_gram).unwrap();
            std::fs::write(&gtf, test_gram).unwrap();
            let model = p(&d.dir.path(&format!("gram-{name}.okr"))).to_string();
            let mut on_gram = fit.clone();
            on_gram[4] = &model;
            on_gram.extend(["--input-gram", p(&gf)]);
            ok(okr(&on_gram));
            let got = predict_and_eval(&d, &model, &["--input-gram-test", p(&gtf)]);
            assert_json_close_to(&got.0, &want.0, &format!("{est:?} {name} predict"), tol);
            assert_json_close_to(&got.1, &want.1, &format!("{est:?} {name} eval"), tol);
        }
    }
    // rank: the same table from the Gram as from the features.
    let cands = d.dir.write("q.txt", "okr-candidates 1 inline\nquery q0 0\n*0 1\n2\n-\nquery q1 3\n0\n*1 2\n");
    let rank = |model: &str, test: &[&str]| {
        let mut a = vec!["rank", "-m", model, "--candidates-per-query", p(&cands)];
        a.extend_from_slice(test);
        ok(okr(&a))
    };
    let gf = d.dir.path("g-npy-c.npy");
    let gtf = d.dir.path("gt-npy-c.npy");
    let (features, gram) = (d.dir.path("f.okr"), d.dir.path("g.okr"));
    let mut fit = vec!["fit", "--train", p(&d.train), "-m", p(&features), "--lambda", "1e-3"];
    fit.extend_from_slice(&READ);
    ok(okr(&[fit.as_slice(), &["--input-gamma", "0.4", "--no-standardize"]].concat()));
    fit[4] = p(&gram);
    ok(okr(&[fit.as_slice(), &["--input-gram", p(&gf)]].concat()));
    let want = rank(p(&features), &["-i", p(&d.test), "--label-count", "3", "--csv-header", "no"]);
    let got = rank(p(&gram), &["--input-gram-test", p(&gtf)]);
    assert_eq!(got.lines().count(), want.lines().count());
    for (g, w) in got.lines().zip(want.lines()).skip(1) {
        let (g, w): (Vec<&str>, Vec<&str>) = (g.split(',').collect(), w.split(',').collect());
        assert_eq!((g[0], g[1], g[2]), (w[0], w[1], w[2]), "{g:?} vs {w:?}");
        let (a, b): (f64, f64) = (g[3].parse().unwrap(), w[3].parse().unwrap());
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
    }
    let info: Value = serde_json::from_str(&ok(okr(&["info", p(&gram), "--json"]))).unwrap();
    assert_eq!(info["parameters"]["gram_n_train"], 36);
}

#[test]
fn uniform_mkl_on_one_kernel_is_that_kernel() {
    let d = data();
    let (plain, mkl) = (d.dir.path("plain.okr"), d.dir.path("mkl.okr"));
    let mut fit = vec!["fit", "--train", p(&d.train), "-m", p(&plain), "--lambda", "1e-3"];
    fit.extend_from_slice(&READ);
    ok(okr(&[fit.as_slice(), &["--input-kernel", "laplacian", "--input-gamma", "0.3"]].concat()));
    fit[4] = p(&mkl);
    ok(okr(&[fit.as_slice(), &["--input-kernels", "laplacian:0.3", "--mkl", "uniform"]].concat()));
    let want = predict_and_eval(&d, p(&plain), &["-i", p(&d.test), "--csv-header", "no"]);
    let got = predict_and_eval(&d, p(&mkl), &["-i", p(&d.test), "--csv-header", "no"]);
    assert_json_close(&got.0, &want.0, "predict");
    assert_json_close(&got.1, &want.1, "eval");
    let info: Value = serde_json::from_str(&ok(okr(&["info", p(&mkl), "--json"]))).unwrap();
    assert_eq!(info["parameters"]["input_kernel_weights"], serde_json::json!([1.0]));
}

#[test]
fn alignf_weights_shown_by_info_are_the_librarys() {
    let d = data();
    let model = d.dir.path("alignf.okr");
    let mut fit = vec!["fit", "--train", p(&d.train), "-m", p(&model), "--lambda", "1e-3", "--no-standardize"];
    fit.extend_from_slice(&READ);
    fit.extend(["--output-kernel", "linear", "--input-kernels", "gaussian:0.4,linear,laplacian:2", "--mkl", "alignf"]);
    ok(okr(&fit));
    let info: Value = serde_json::from_str(&ok(okr(&["info", p(&model), "--json"]))).unwrap();
    let shown: Vec<f64> = serde_json::from_value(info["parameters"]["input_kernel_weights"].clone()).unwrap();
    let x = rows(&d.x);
    let grams = [Gaussian::new(0.4).unwrap().gram(&x), Linear.gram(&x), Laplacian::new(2.0).unwrap().gram(&x)];
    let y = LabelSets::new(3, labels(&d.x)).unwrap();
    let refs: Vec<_> = grams.iter().map(|g| g.as_ref()).collect();
    let want = alignf_weights(&refs, Linear.gram(&y).as_ref()).unwrap();
    assert_eq!(shown.len(), 3);
    for (s, w) in shown.iter().zip(&want) {
        assert!((s - w).abs() <= 1e-12, "{shown:?} vs {want:?}");
    }
    assert!(want.iter().filter(|w| **w > 0.0).count() >= 1);
    // The text form lists them too, and the model predicts the test rows.
    assert!(ok(okr(&["info", p(&model)])).contains("input_kernel_weights"));
    assert_eq!(ok(okr(&["predict", "-m", p(&model), "-i", p(&d.test), "--csv-header", "no"])).lines().count(), 9);
}

#[test]
fn bad_grams_and_flags_are_one_line_errors() {
    let d = data();
    let n = 36;
    let k = Gaussian::new(0.4).unwrap();
    let g = k.gram(&rows(&d.x));
    let model = d.dir.path("m.okr");
    let fit = |gram: &std::path::Path, extra: &[&str]| {
        let mut a = vec!["fit", "--train", p(&d.train), "-m", p(&model), "--lambda", "1e-3", "--input-gram", p(gram)];
        a.extend_from_slice(&READ);
        a.extend_from_slice(extra);
        okr(&a)
    };
    let wide = d.dir.write("wide.txt", &text(&Mat::from_fn(n, n + 1, |i, j| if j < n { g[(i, j)] } else { 0.0 })));
    assert_one_line_error(&fit(&wide, &[]), &["--input-gram", "columns of the training Gram", "expected 36, got 37"]);
    let mut asym = g.clone();
    asym[(3, 1)] += 1e-3;
    let asym_file = d.dir.path("asym.npy");
    std::fs::write(&asym_file, npy(&asym, false)).unwrap();
    assert_one_line_error(&fit(&asym_file, &[]), &["not symmetric", "K[3,1]"]);
    let mut nan = g.clone();
    nan[(2, 2)] = f64::NAN;
    let nan_file = d.dir.path("nan.npy");
    std::fs::write(&nan_file, npy(&nan, true)).unwrap();
    assert_one_line_error(&fit(&nan_file, &[]), &["non-finite", "row 2"]);
    let nan_text = d.dir.write("nan.txt", &text(&nan));
    assert_one_line_error(&fit(&nan_text, &[]), &["nan.txt:4", "finite number"]);
    let small = d.dir.write("small.txt", &text(&Mat::identity(5, 5)));
    assert_one_line_error(&fit(&small, &[]), &["5 x 5 Gram for the 36 rows"]);
    let good = d.dir.write("g.txt", &text(&g));
    assert_one_line_error(
        &fit(&good, &["--estimator", "leml"]),
        &["a precomputed Gram does not apply to estimator leml", "linear in the features"],
    );
    assert_one_line_error(&fit(&good, &["--input-gamma", "1"]), &["--input-gamma does not apply with --input-gram"]);

    ok(fit(&good, &[]));
    let bad_test = d.dir.write("gt.txt", &text(&Mat::zeros(4, n - 1)));
    let out = okr(&["predict", "-m", p(&model), "--input-gram-test", p(&bad_test)]);
    assert_one_line_error(&out, &["--input-gram-test", "one per training sample", "expected 36, got 35"]);
    let out = okr(&["predict", "-m", p(&model), "-i", p(&d.test), "--label-count", "3", "--csv-header", "no"]);
    assert_one_line_error(&out, &["fitted on a precomputed Gram", "--input-gram-test"]);
    let gt = d.dir.write("gt-ok.txt", &text(&k.gram_block(&rows(&d.xt), &rows(&d.x))));
    let out = okr(&["eval", "-m", p(&model), "-i", p(&d.train), "--label-count", "3", "--input-gram-test", p(&gt)]);
    assert_one_line_error(&out, &["36 rows for the 9 rows of the --input-gram-test Gram"]);

    let features = d.dir.path("f.okr");
    let mut a = vec!["fit", "--train", p(&d.train), "-m", p(&features), "--lambda", "1e-3"];
    a.extend_from_slice(&READ);
    ok(okr(&a));
    let out = okr(&["predict", "-m", p(&features), "--input-gram-test", p(&gt)]);
    assert_one_line_error(&out, &["--input-gram-test applies to models fitted with --input-gram"]);
    let out = okr(&["fit", "--train", p(&d.train), "-m", p(&features), "--mkl", "alignf", "--label-count", "3"]);
    assert_one_line_error(&out, &["--mkl applies with --input-kernels only"]);
}

/// The estimators each output kind is checked with on a Gram.
const OUTPUT_ESTIMATORS: [&[&str]; 5] = [
    &["--estimator", "iokr"],
    &["--estimator", "kde", "--rank", "3"],
    &["--estimator", "sisokr", "--input-sketch", "uniform:14", "--output-sketch", "gaussian:5"],
    &["--estimator", "nystroem-reduced-rank", "--anchors", "12", "--rank", "3"],
    &["--estimator", "trace-norm", "--rank", "3", "--solver", "als"],
];

/// One output kind on a Gram: for each of [`OUTPUT_ESTIMATORS`], `okr fit`
/// with the `kind` flags on the features of `train` (Gaussian kernel 0.4) and
/// on their Gram; `predict` (top 2, JSON) and `eval` (with `truth`) agree,
/// and `rank` with the candidate file `cands` when given.
struct OnGram<'a> {
    dir: &'a Dir,
    train: &'a std::path::Path,
    test: &'a std::path::Path,
    read: &'a [&'a str],
    kind: &'a [&'a str],
    truth: &'a [&'a str],
    cands: Option<&'a std::path::Path>,
}

impl OnGram<'_> {
    fn check(&self, x: &Mat<f64>, xt: &Mat<f64>) {
        let k = Gaussian::new(0.4).unwrap();
        let (g, gt) = (self.dir.path("g.npy"), self.dir.path("gt.npy"));
        std::fs::write(&g, npy(&k.gram(&rows(x)), false)).unwrap();
        std::fs::write(&gt, npy(&k.gram_block(&rows(xt), &rows(x)), false)).unwrap();
        let (f, m) = (self.dir.path("f.okr"), self.dir.path("g.okr"));
        for est in OUTPUT_ESTIMATORS {
            let fit = |model: &std::path::Path, input: &[&str]| {
                let mut a = vec!["fit", "--train", p(self.train), "-m", p(model), "--lambda", "1e-3", "--seed", "4"];
                a.extend_from_slice(self.read);
                a.extend_from_slice(self.kind);
                a.extend_from_slice(est);
                a.extend_from_slice(input);
                ok(okr(&a));
            };
            fit(&f, &["--input-gamma", "0.4", "--no-standardize"]);
            fit(&m, &["--input-gram", p(&g)]);
            let on_features = [&["-i", p(self.test)][..], self.read].concat();
            let on_gram = ["--input-gram-test", p(&gt)];
            let predict = |model: &std::path::Path, test: &[&str]| {
                let a = [&["predict", "-m", p(model), "--top-k", "2", "--output-format", "json"][..], test].concat();
                json_lines(&ok(okr(&a)))
            };
            let at = format!("{:?} {est:?}", self.kind);
            assert_json_close_to(&predict(&m, &on_gram), &predict(&f, &on_features), &format!("{at} predict"), 1e-10);
            let eval = |model: &std::path::Path, test: &[&str]| {
                let a = [&["eval", "-m", p(model)][..], &on_features[..], test, self.truth].concat();
                let mut v: Value = serde_json::from_str(&ok(okr(&a))).unwrap();
                v.as_object_mut().unwrap().retain(|k, _| !k.ends_with("seconds"));
                v
            };
            assert_json_close_to(&eval(&m, &on_gram), &eval(&f, &[]), &format!("{at} eval"), 1e-10);
            if let Some(c) = self.cands {
                let rank = |model: &std::path::Path, test: &[&str]| {
                    ok(okr(&[&["rank", "-m", p(model), "--candidates-per-query", p(c)][..], test].concat()))
                };
                let (got, want) = (rank(&m, &on_gram), rank(&f, &on_features));
                assert_eq!(got.lines().count(), want.lines().count(), "{at}");
                for (g, w) in got.lines().zip(want.lines()).skip(1) {
                    let (g, w): (Vec<&str>, Vec<&str>) = (g.split(',').collect(), w.split(',').collect());
                    assert_eq!((g[0], g[1], g[2], g[4], g[5]), (w[0], w[1], w[2], w[4], w[5]), "{at}: {g:?} vs {w:?}");
                    let (a, b): (f64, f64) = (g[3].parse().unwrap(), w[3].parse().unwrap());
                    assert!((a - b).abs() <= 1e-10 * b.abs().max(1.0), "{at}: {a} vs {b}");
                }
            }
            let info: Value = serde_json::from_str(&ok(okr(&["info", p(&m), "--json"]))).unwrap();
            assert_eq!(info["parameters"]["gram_n_train"], x.nrows(), "{at}");
        }
    }
}

/// Features only, no header.
fn feature_csv(m: &Mat<f64>) -> String {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| format!("{:?}", m[(i, j)])).collect::<Vec<_>>().join(",") + "\n")
        .collect()
}

const NO_HEADER: [&str; 2] = ["--csv-header", "no"];

#[test]
fn fingerprint_outputs_on_a_gram_give_the_model_of_its_kernel() {
    let dir = Dir::new();
    let (x, xt) = (inputs(30, 0.0), inputs(7, 50.0));
    let bits = |x: &Mat<f64>, i: usize| -> String {
        (0..8)
            .map(|b| if (x[(i, b % 3)] * (b as f64 + 1.0)).sin() > 0.0 { "1" } else { "0" })
            .collect::<Vec<_>>()
            .join(",")
    };
    let fp = |x: &Mat<f64>| (0..x.nrows()).map(|i| bits(x, i) + "\n").collect::<String>();
    let (train, test) = (dir.write("x.csv", &feature_csv(&x)), dir.write("xt.csv", &feature_csv(&xt)));
    let (yf, ytf) = (dir.write("fp.csv", &fp(&x)), dir.write("fpt.csv", &fp(&xt)));
    let kind = ["--output-kind", "fingerprint", "--output-kernel", "tanimoto", "--outputs", p(&yf)];
    let truth = ["--outputs", p(&ytf)];
    OnGram { dir: &dir, train: &train, test: &test, read: &NO_HEADER, kind: &kind, truth: &truth, cands: None }
        .check(&x, &xt);
}

#[test]
fn vector_outputs_on_a_gram_give_the_model_of_its_kernel() {
    let dir = Dir::new();
    let (x, xt) = (inputs(30, 0.0), inputs(7, 50.0));
    let y = |x: &Mat<f64>| Mat::from_fn(x.nrows(), 3, |i, j| (x[(i, 0)] * (j as f64 + 1.0)).cos() + x[(i, 1)]);
    let (train, test) = (dir.write("x.csv", &feature_csv(&x)), dir.write("xt.csv", &feature_csv(&xt)));
    let (yf, ytf) = (dir.write("y.csv", &feature_csv(&y(&x))), dir.write("yt.csv", &feature_csv(&y(&xt))));
    let yy = y(&x);
    let row = |c: usize| (0..3).map(|j| format!("{:?}", yy[(c, j)])).collect::<Vec<_>>().join(" ");
    let q = dir.write(
        "q.txt",
        &format!(
            "okr-candidates 1 inline\nquery a 0\n{}\n*{}\n{}\nquery b 3\n*{}\n{}\n",
            row(0),
            row(1),
            row(2),
            row(3),
            row(4)
        ),
    );
    let kind = ["--output-kind", "vector", "--outputs", p(&yf), "--output-gamma", "0.5"];
    let truth = ["--outputs", p(&ytf)];
    OnGram { dir: &dir, train: &train, test: &test, read: &NO_HEADER, kind: &kind, truth: &truth, cands: Some(&q) }
        .check(&x, &xt);
}

/// Writes graphs as the TU data set `dir/name` and returns its prefix.
fn write_tu(dir: &Dir, name: &str, graphs: &[okr_kernels::Graph]) -> String {
    let (mut a, mut ind, mut lab, mut nl) = (String::new(), String::new(), String::new(), String::new());
    let mut base = 0;
    for (g, graph) in graphs.iter().enumerate() {
        for v in 0..graph.n_nodes() {
            ind += &format!("{}\n", g + 1);
            nl += &format!("{}\n", graph.node_labels()[v]);
            for &u in graph.neighbors(v) {
                a += &format!("{}, {}\n", base + v + 1, base + u as usize + 1);
            }
        }
        lab += "1\n";
        base += graph.n_nodes();
    }
    for (suffix, text) in [("A", a), ("graph_indicator", ind), ("graph_labels", lab), ("node_labels", nl)] {
        dir.write(&format!("{name}_{suffix}.txt"), &text);
    }
    p(&dir.path(name)).to_string()
}

#[test]
fn graph_outputs_on_a_gram_give_the_model_of_its_kernel() {
    let dir = Dir::new();
    let (x, xt) = (inputs(30, 0.0), inputs(7, 50.0));
    let graph = |x: &Mat<f64>, i: usize| {
        let n = 2 + usize::from(x[(i, 0)] > 0.0) + 2 * usize::from(x[(i, 1)] > 0.3);
        let mut edges: Vec<(usize, usize)> = (1..n).map(|v| (v - 1, v)).collect();
        if x[(i, 2)] > 0.5 {
            edges.push((0, n - 1));
        }
        let labels = (0..n).map(|v| u32::from(x[(i, v % 3)] > 0.0) + (v % 2) as u32).collect();
        okr_kernels::Graph::new(labels, &edges).unwrap()
    };
    let g: Vec<_> = (0..30).map(|i| graph(&x, i)).collect();
    let gt: Vec<_> = (0..7).map(|i| graph(&xt, i)).collect();
    let (train, test) = (dir.write("x.csv", &feature_csv(&x)), dir.write("xt.csv", &feature_csv(&xt)));
    let (train_g, test_g) = (write_tu(&dir, "G", &g), write_tu(&dir, "T", &gt));
    let kind =
        ["--output-kind", "graph", "--outputs", train_g.as_str(), "--output-kernel", "wl", "--wl-iterations", "2"];
    let truth = ["--outputs", test_g.as_str()];
    OnGram { dir: &dir, train: &train, test: &test, read: &NO_HEADER, kind: &kind, truth: &truth, cands: None }
        .check(&x, &xt);
}

#[test]
fn ranking_outputs_on_a_gram_give_the_model_of_its_kernel() {
    let dir = Dir::new();
    let (x, xt) = (inputs(30, 0.0), inputs(7, 50.0));
    let file = |x: &Mat<f64>| {
        let mut text = format!("{},3,4\n", x.nrows());
        for i in 0..x.nrows() {
            let score: Vec<f64> = (0..4).map(|j| (x[(i, j % 3)] * (j as f64 + 1.0)).sin() + 0.1 * j as f64).collect();
            let mut order: Vec<usize> = (0..4).collect();
            order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
            let mut ranks = [0; 4];
            for (r, &item) in order.iter().enumerate() {
                ranks[item] = r + 1;
            }
            let feats: Vec<String> = (0..3).map(|j| format!("{:?}", x[(i, j)])).collect();
            text += &format!("{},{}\n", feats.join(","), ranks.map(|r| r.to_string()).join(","));
        }
        text
    };
    let (train, test) = (dir.write("lr.csv", &file(&x)), dir.write("lrt.csv", &file(&xt)));
    let q = dir.write("q.txt", "okr-candidates 1 inline\nquery a 0\n1 2 3 4\n*2 1 3 4\n4 3 2 1\n");
    let kind = ["--output-kind", "ranking", "--output-kernel", "mallows", "--mallows-lambda", "0.5"];
    OnGram { dir: &dir, train: &train, test: &test, read: &[], kind: &kind, truth: &[], cands: Some(&q) }
        .check(&x, &xt);
}

#[test]
fn gram_output_models_refuse_features_and_ask_for_the_gram() {
    let dir = Dir::new();
    let (x, xt) = (inputs(20, 0.0), inputs(4, 50.0));
    let y = Mat::from_fn(20, 2, |i, j| x[(i, j)] * 2.0);
    let (train, test) = (dir.write("x.csv", &feature_csv(&x)), dir.write("xt.csv", &feature_csv(&xt)));
    let yf = dir.write("y.csv", &feature_csv(&y));
    let g = dir.path("g.npy");
    std::fs::write(&g, npy(&Gaussian::new(0.4).unwrap().gram(&rows(&x)), false)).unwrap();
    let model = dir.path("m.okr");
    let fit = ["fit", "--train", p(&train), "--csv-header", "no", "--output-kind", "vector", "--outputs", p(&yf)];
    ok(okr(&[&fit[..], &["--input-gram", p(&g), "--estimator", "kde", "-m", p(&model)]].concat()));
    let out = okr(&["predict", "-m", p(&model), "-i", p(&test), "--csv-header", "no"]);
    assert_one_line_error(&out, &["fitted on a precomputed Gram", "--input-gram-test"]);
    let gt = dir.path("gt.npy");
    std::fs::write(&gt, npy(&Gaussian::new(0.4).unwrap().gram_block(&rows(&xt), &rows(&x)), false)).unwrap();
    let out = okr(&["predict", "-m", p(&model), "-i", p(&test), "--input-gram-test", p(&gt)]);
    assert_one_line_error(&out, &["does not apply", "--input-gram-test"]);
    let text = ok(okr(&["predict", "-m", p(&model), "--input-gram-test", p(&gt)]));
    assert_eq!(text.lines().count(), 4);
}

/// `okr tune --input-gram` with a retrieval `--scoring`: every grid cell
/// scores what `okr tune` on the features scores at the Gram's width
/// (`--widths c`, the Gram of the reported gamma), to 1e-10.
#[test]
fn tune_on_a_gram_with_retrieval_scoring_equals_the_features_at_their_width() {
    let d = data();
    let y = labels(&d.x);
    let text = |s: &[usize]| {
        if s.is_empty() { "-".to_string() } else { s.iter().map(usize::to_string).collect::<Vec<_>>().join(" ") }
    };
    let subsets: Vec<Vec<usize>> = (0..8).map(|b| (0..3).filter(|j| b >> j & 1 == 1).collect()).collect();
    let mut q = String::from("okr-candidates 1 inline\n");
    for (i, own) in y.iter().enumerate() {
        let mut cands: Vec<String> =
            subsets.iter().filter(|s| *s != own).skip(i % 5).take(2).map(|s| text(s)).collect();
        cands.insert(i % 3, format!("*{}", text(own)));
        q += &format!("query t{i} {i}\n{}\n", cands.join("\n"));
    }
    let q = d.dir.write("tq.txt", &q);
    let (f, m) = (d.dir.path("tf.okr"), d.dir.path("tm.okr"));
    for scoring in ["top1", "mean-rank"] {
        let base = [
            "tune",
            "--train",
            p(&d.train),
            "--label-count",
            "3",
            "--csv-header",
            "no",
            "--cv",
            "3",
            "--lambdas",
            "1e-3,1e-1",
            "--scoring",
            scoring,
            "--candidates-per-query",
            p(&q),
            "--json",
        ];
        let feat: Value =
            serde_json::from_str(&ok(
                okr(&[&base[..], &["--widths", "0.7", "--no-standardize", "-m", p(&f)]].concat()),
            ))
            .unwrap();
        let gamma = feat["grid"]["cells"][0]["gamma"].as_f64().unwrap();
        let g = d.dir.path("tg.npy");
        std::fs::write(&g, npy(&Gaussian::new(gamma).unwrap().gram(&rows(&d.x)), false)).unwrap();
        let gram: Value =
            serde_json::from_str(&ok(okr(&[&base[..], &["--input-gram", p(&g), "-m", p(&m)]].concat()))).unwrap();
        let (a, b) = (feat["grid"]["cells"].as_array().unwrap(), gram["grid"]["cells"].as_array().unwrap());
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x["lambda"], y["lambda"]);
            assert_json_close_to(&y["fold_scores"], &x["fold_scores"], scoring, 1e-10);
        }
        assert_eq!(feat["chosen"]["lambda"], gram["chosen"]["lambda"], "{scoring}");
        assert!(gram["criterion"].as_str().unwrap().contains("ties counted against it"), "{gram}");
    }
}
