//! Issue 35's probe findings S2, S3, S4, P1 to P4: each a regression test
//! named after it.

use std::process::Output;

use serde_json::Value;

use super::{ARFF, Dir, assert_one_line_error, fit_toy, okr, p};

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// An ARFF file of `n` rows, 3 features (`scale` times a smooth pattern) and
/// 2 labels that follow the features.
fn arff(n: usize, scale: f64) -> String {
    let mut text = String::from(
        "@relation probe\n@attribute f0 numeric\n@attribute f1 numeric\n@attribute f2 numeric\n\
         @attribute l0 {0,1}\n@attribute l1 {0,1}\n@data\n",
    );
    for i in 0..n {
        let f: Vec<f64> = (0..3).map(|j| ((i * (j + 2)) as f64 * 0.7).sin()).collect();
        let (l0, l1) = (u8::from(f[0] > 0.0), u8::from(f[1] + f[2] > 0.0 || f[0] <= 0.0));
        let cells: Vec<String> = f.iter().map(|v| format!("{:?}", v * scale)).collect();
        text += &format!("{},{l0},{l1}\n", cells.join(","));
    }
    text
}

fn f1_samples(out: Output) -> f64 {
    let v: Value = serde_json::from_str(&ok(out)).unwrap();
    v["f1_samples"].as_f64().unwrap()
}

/// S2: a CSV predictions file is matched to the model's labels by the
/// names of its header; unknown or missing names are one error naming them.
#[test]
fn s2_csv_predictions_are_matched_by_header_name() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let eval = |name: &str, text: &str| {
        let path = dir.write(name, text);
        okr(&["eval", "-m", p(&model), "-i", p(&train), "--predictions", p(&path)])
    };
    // The true sets of ARFF, in the model's column order, then reordered.
    let in_order = "l0,l1\n1,0\n0,1\n0,1\n1,0\n1,1\n1,0\n";
    let reordered = "l1,l0\n0,1\n1,0\n1,0\n0,1\n1,1\n0,1\n";
    assert_eq!(f1_samples(eval("a.csv", in_order)), 1.0);
    assert_eq!(f1_samples(eval("b.csv", reordered)), 1.0, "reordered named columns read as the same sets");
    // Scores too, in any order.
    let scored =
        "score:l1,l1,score:l0,l0\n0.1,0,0.9,1\n0.8,1,0.2,0\n0.7,1,0.3,0\n0.2,0,0.6,1\n0.9,1,0.9,1\n0.3,0,0.8,1\n";
    assert_eq!(f1_samples(eval("s.csv", scored)), 1.0);
    assert_one_line_error(&eval("u.csv", "l0,zz\n1,0\n"), &["u.csv:1", "\"zz\"", "no label for"]);
    assert_one_line_error(&eval("m.csv", "l1\n1\n"), &["m.csv:1", "no column for the labels \"l0\""]);
    assert_one_line_error(&eval("d.csv", "l0,l1,l1\n1,0,0\n"), &["d.csv:1", "repeats", "\"l1\""]);
}

/// S3: a width given to a kernel that has none, and a `--n-bits` that is
/// not the model's, are refused rather than ignored.
#[test]
fn s3_ignored_values_are_refused() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("m.okr");
    for list in ["linear:0.5", "tanimoto:3"] {
        let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--input-kernels", list, "-m", p(&model)]);
        assert_one_line_error(&out, &["gamma does not apply"]);
    }
    assert!(!model.exists());

    let x = dir.write("x.csv", "0.0,1.0\n1.0,0.0\n0.5,0.5\n0.2,0.8\n0.9,0.1\n0.3,0.3\n");
    let fp = dir.write("fp.txt", "0,5,63\n1,2\n63\n0,1,2,3\n40,41\n7\n");
    let fp_flags = ["--outputs", p(&fp), "--fingerprint-format", "sparse"];
    let fit = ["fit", "--train", p(&x), "--csv-header", "no", "--output-kind", "fingerprint", "--lambda", "1e-3"];
    ok(okr(&[&fit[..], &fp_flags, &["--n-bits", "64", "-m", p(&model)]].concat()));
    let eval = ["eval", "-m", p(&model), "-i", p(&x), "--csv-header", "no"];
    let out = okr(&[&eval[..], &fp_flags, &["--n-bits", "32"]].concat());
    assert_one_line_error(&out, &["--n-bits 32", "64 bits"]);
    ok(okr(&[&eval[..], &fp_flags, &["--n-bits", "64"]].concat()));
}

/// S4: features near 1e154 overflow the squared distances: the default
/// width is one error naming the cause, not gamma = 1 from a median of 0.
#[test]
fn s4_overflowing_distances_are_one_error() {
    let dir = Dir::new();
    let train = dir.write("huge.arff", &arff(12, 3e154));
    let model = dir.path("m.okr");
    let fit = ["fit", "--train", p(&train), "--label-count", "2", "--no-standardize", "--lambda", "1e-3"];
    assert_one_line_error(
        &okr(&[&fit[..], &["-m", p(&model)]].concat()),
        &["median squared distance between training inputs is inf", "scale the features or set gamma (--input-gamma)"],
    );
    assert!(!model.exists());
    // tune names the overflow, not "all identical".
    let out = okr(&[
        "tune",
        "--train",
        p(&train),
        "--label-count",
        "2",
        "--no-standardize",
        "--cv",
        "3",
        "--lambdas",
        "1e-3",
        "-o",
        p(&dir.path("t.okr")),
    ]);
    assert_one_line_error(&out, &["overflow", "scale the features"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("identical"), "{err}");

    // Vector outputs near 1e200: the output width alike.
    let x = dir.write("x.csv", "0.0,1.0\n1.0,0.0\n0.5,0.5\n0.2,0.8\n");
    let y = dir.write("y.csv", "1e200,0\n-1e200,2e200\n3e200,-1e200\n0,1e200\n");
    let out = okr(&[
        "fit",
        "--train",
        p(&x),
        "--csv-header",
        "no",
        "--output-kind",
        "vector",
        "--outputs",
        p(&y),
        "--lambda",
        "1e-3",
        "-m",
        p(&model),
    ]);
    assert_one_line_error(
        &out,
        &[
            "median squared distance between training outputs is inf",
            "scale the outputs or set output_gamma (--output-gamma)",
        ],
    );
}

/// P1: a tied ranking in a candidates file names its line and the tie.
#[test]
fn p1_tied_ranking_names_its_line() {
    let dir = Dir::new();
    let mut text = String::from("10,3,4\n");
    let perms = ["1,2,3,4", "4,3,2,1", "2,1,4,3", "3,4,1,2", "1,3,2,4"];
    for i in 0..10 {
        let f: Vec<String> = (0..3).map(|j| format!("{:?}", ((i * (j + 2)) as f64 * 0.7).sin())).collect();
        text += &format!("{},{}\n", f.join(","), perms[i % perms.len()]);
    }
    let train = dir.write("lr.csv", &text);
    let model = dir.path("r.okr");
    let fit = ["fit", "--train", p(&train), "--output-kind", "ranking", "--output-kernel", "kendall"];
    ok(okr(&[&fit[..], &["--lambda", "1e-3", "-m", p(&model)]].concat()));
    let cands = dir.write("c.txt", "1,2,3,4\n4,3,2,1\n# a comment\n2,1,4,3\n1,1,2,3\n");
    let out = okr(&["predict", "-m", p(&model), "-i", p(&train), "--candidates", p(&cands)]);
    assert_one_line_error(&out, &["c.txt:5:", "rank 1 appears twice", "no ties"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("sparse structure"), "{err}");
}

/// P2: a polynomial in `--input-kernels` takes `--degree` (and `--coef0`),
/// as docs/precomputed.md says: the same scores as the single kernel.
#[test]
fn p2_polynomial_in_input_kernels_takes_degree() {
    let dir = Dir::new();
    let train = dir.write("train.arff", &arff(16, 1.0));
    let scores = |name: &str, kernel: &[&str]| {
        let model = dir.path(name);
        let fit = ["fit", "--train", p(&train), "--label-count", "2", "--lambda", "1e-3", "--no-standardize"];
        ok(okr(&[&fit[..], kernel, &["-m", p(&model)]].concat()));
        let predict = ["predict", "-m", p(&model), "-i", p(&train), "--output-format", "json", "--scores"];
        ok(okr(&predict))
    };
    let list = scores("l.okr", &["--input-kernels", "polynomial:0.5", "--degree", "2", "--coef0", "0.5"]);
    let single =
        scores("s.okr", &["--input-kernel", "polynomial", "--gamma", "0.5", "--degree", "2", "--coef0", "0.5"]);
    let cubic = scores("c.okr", &["--input-kernels", "polynomial:0.5", "--degree", "3", "--coef0", "0.5"]);
    // Label scores per row (the weighted sum of one kernel rounds differently).
    let label_scores = |text: &str| -> Vec<f64> {
        text.lines()
            .flat_map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["label_scores"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect::<Vec<_>>()
            })
            .collect()
    };
    let close = |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
    assert!(close(&label_scores(&list), &label_scores(&single)), "{list}\n{single}");
    assert!(!close(&label_scores(&list), &label_scores(&cubic)), "--degree is used");
    // Still refused without a polynomial in the list.
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "2",
        "--input-kernels",
        "linear",
        "--degree",
        "2",
        "-m",
        p(&dir.path("x.okr")),
    ]);
    assert_one_line_error(&out, &["--degree", "polynomial"]);
}

/// P3: a ridge whose `n * lambda` overflows is refused before the search;
/// a failing cell scores NaN instead of ending the search.
#[test]
fn p3_tune_grid_is_checked_first_and_failing_cells_score_nan() {
    let dir = Dir::new();
    let train = dir.write("t.arff", &arff(30, 1.0));
    let model = dir.path("t.okr");
    let tune = ["tune", "--train", p(&train), "--label-count", "2", "--widths", "1", "-o", p(&model)];
    let out = okr(&[&tune[..], &["--lambdas", "1e-3,1e308"]].concat());
    assert_one_line_error(&out, &["--lambdas", "1e308", "n * lambda"]);
    assert!(!model.exists());
    for bad in ["0", "-1", "inf", "NaN"] {
        let lambdas = format!("1e-3,{bad}");
        let out = okr(&[&tune[..], &["--lambdas", lambdas.as_str()]].concat());
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // trace-norm with a rank beyond the folds' rows: the search completes.
    let tn = ["--estimator", "trace-norm", "--rank", "25", "--cv", "3", "--lambdas", "1e-3,1e-1", "--json"];
    let v: Value = serde_json::from_str(&ok(okr(&[&tune[..], &tn].concat()))).unwrap();
    assert!(v["chosen"]["lambda"].as_f64().is_some(), "{v}");
    assert!(model.exists());
}

/// P4: a default width from overflowing distances is not blamed on the
/// user as "gamma = inf": the message names the median and the fix.
#[test]
fn p4_overflowing_default_width_is_not_blamed_on_the_user() {
    let dir = Dir::new();
    // Squared distances near 1e-320: 1 / (2 median) overflows.
    let train = dir.write("tiny.arff", &arff(12, 1e-160));
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "2",
        "--no-standardize",
        "--lambda",
        "1e-3",
        "-m",
        p(&dir.path("m.okr")),
    ]);
    assert_one_line_error(&out, &["median squared distance between training inputs is", "--input-gamma"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("gamma = inf"), "{err}");
    // And the huge case of S4 with --input-kernels.
    let huge = dir.write("huge.arff", &arff(12, 3e154));
    let out = okr(&[
        "fit",
        "--train",
        p(&huge),
        "--label-count",
        "2",
        "--no-standardize",
        "--input-kernels",
        "gaussian,linear",
        "--lambda",
        "1e-3",
        "-m",
        p(&dir.path("m.okr")),
    ]);
    assert_one_line_error(&out, &["median squared distance between training inputs is inf"]);
}

/// M1: a pool-mode query listing more indices than the pool has rows (a
/// longer list only repeats pool entries) is refused at its line as it is
/// read, before the list is stored; an index beyond the pool likewise.
/// Within the pool's size repeats rank as before (tied exactly), and a
/// query that fails after others leaves an existing output file as it was
/// (the table is streamed through the output's temporary file).
#[test]
fn m1_pool_index_lists_are_bounded_by_the_pool() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let pool = dir.write("pool.txt", "-\n0\n0,1\n");
    let rank = |file: &std::path::Path, extra: &[&str]| {
        let args = ["rank", "-m", p(&model), "-i", p(&train), "--candidates-per-query", p(file), "--pool", p(&pool)];
        okr(&[&args[..], extra].concat())
    };
    let long = dir.write("long.txt", "okr-candidates 1 pool\nquery a 0\n0 1\n2 0\n");
    let out = rank(&long, &["--memory-budget", "1"]);
    assert_one_line_error(&out, &["long.txt:4:", "query a", "more than 3 pool indices", "the pool has 3 rows"]);
    let beyond = dir.write("beyond.txt", "okr-candidates 1 pool\nquery a 0\n0\n\n3\n");
    assert_one_line_error(&rank(&beyond, &[]), &["beyond.txt:5:", "pool index 3 out of range"]);

    let repeats = dir.write("repeats.txt", "okr-candidates 1 pool\nquery a 0\n2 *1 2\n");
    let text = ok(rank(&repeats, &["--memory-budget", "1"]));
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{text}");
    let score = |id: &str| rows.iter().filter(|r| r[2] == id).map(|r| r[3]).collect::<Vec<_>>();
    let twice = score("2");
    assert_eq!(twice.len(), 2);
    assert_eq!(twice[0], twice[1], "a repeated pool index ties exactly: {text}");

    let output = dir.write("out.csv", "old\n");
    let late = dir.write("late.txt", "okr-candidates 1 pool\nquery a 0\n0 1\nquery b 1\n0 1 2 1\n");
    let out = rank(&late, &["-o", p(&output)]);
    assert_one_line_error(&out, &["late.txt:5:", "query b", "more than 3 pool indices"]);
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "old\n");
}

/// M3: a pool of many identical rows (`-` lines) is read and ranked with
/// one index per row (its distinct rows carry the rest): under a 1 MiB
/// budget, every `-` entry scores the same as the empty set, and the other
/// rows as the global decoder scores them.
#[test]
fn m3_a_pool_of_identical_rows_ranks_like_its_distinct_rows() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let n = 20_000;
    let mut text = "-\n".repeat(n);
    text += "0\n1\n0,1\n";
    let pool = dir.write("pool.txt", &text);
    let small = dir.write("small.txt", "-\n0\n1\n0,1\n");
    let list: Vec<String> = (0..n + 3).step_by(997).chain([n, n + 1, n + 2]).map(|i| i.to_string()).collect();
    let query = |name: &str, indices: &str| {
        dir.write(name, &format!("okr-candidates 1 pool\nquery a 2\n{indices}\nquery b 5\n{indices}\n"))
    };
    let big = query("big.txt", &list.join(" "));
    let few = query("few.txt", "0 1 2 3");
    let rank = |file: &std::path::Path, pool: &std::path::Path| {
        let args = ["rank", "-m", p(&model), "-i", p(&train), "--candidates-per-query", p(file), "--pool", p(pool)];
        ok(okr(&[&args[..], &["--memory-budget", "1"]].concat()))
    };
    // Scores of the four distinct rows, per query, from the small pool.
    let scores = |text: &str| -> Vec<(String, usize, String)> {
        text.lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .map(|f| (f[0].into(), f[2].parse().unwrap(), f[3].into()))
            .collect()
    };
    let reference = scores(&rank(&few, &small));
    let got = scores(&rank(&big, &pool));
    assert_eq!(got.len(), 2 * list.len());
    for (q, id, s) in &got {
        let distinct = if *id < n { 0 } else { id - n + 1 };
        let want = reference.iter().find(|(rq, rid, _)| rq == q && *rid == distinct).unwrap();
        assert_eq!(s, &want.2, "query {q}, pool row {id}");
    }
}

/// M2: the graph indicator file declares the graphs of a TU data set: a
/// graph labels file longer than that (the probe's 2 nodes and 20 million
/// label lines) is refused at its first extra line, and a graph id that
/// skips a graph (a graph without nodes, which would let 2 nodes declare
/// millions of graphs) at its line.
#[test]
fn m2_tu_files_are_checked_against_the_graph_indicator() {
    let dir = Dir::new();
    let x = dir.write("x.csv", "0.0,1.0\n1.0,0.0\n0.5,0.5\n0.2,0.8\n");
    std::fs::create_dir(dir.path("g")).unwrap();
    let tu = |name: &str, files: &[(&str, &str)]| {
        for (suffix, text) in files {
            std::fs::write(dir.path(&format!("g/{name}_{suffix}.txt")), text).unwrap();
        }
        dir.path(&format!("g/{name}"))
    };
    let train = tu(
        "T",
        &[
            ("A", "1, 2\n2, 1\n3, 4\n4, 3\n"),
            ("graph_indicator", "1\n1\n2\n2\n3\n4\n"),
            ("graph_labels", "1\n0\n1\n0\n"),
            ("node_labels", "0\n1\n1\n2\n0\n2\n"),
        ],
    );
    let model = dir.path("m.okr");
    let fit = ["fit", "--train", p(&x), "--csv-header", "no", "--output-kind", "graph", "--outputs", p(&train)];
    ok(okr(&[&fit[..], &["--lambda", "1e-3", "-m", p(&model)]].concat()));

    let predict = |candidates: &std::path::Path| {
        okr(&["predict", "-m", p(&model), "-i", p(&x), "--csv-header", "no", "--candidates", p(candidates)])
    };
    let long = tu("L", &[("A", ""), ("graph_indicator", "1\n2\n"), ("graph_labels", &"1\n".repeat(1000))]);
    assert_one_line_error(
        &predict(&long),
        &["L_graph_labels.txt:3:", "more than 2 graph labels", "L_graph_indicator.txt declares 2 graphs"],
    );
    let skip = tu("S", &[("A", ""), ("graph_indicator", "1\n2000000\n"), ("graph_labels", "1\n1\n")]);
    assert_one_line_error(&predict(&skip), &["S_graph_indicator.txt:2:", "graph id 2000000", "1 or 2"]);
    let short = tu("F", &[("A", ""), ("graph_indicator", "1\n2\n3\n"), ("graph_labels", "1\n1\n")]);
    assert_one_line_error(&predict(&short), &["F_graph_labels.txt:3:", "2 graph labels for the 3 graphs"]);
    let good = tu("C", &[("A", ""), ("graph_indicator", "1\n2\n"), ("graph_labels", "1\n1\n")]);
    assert_eq!(ok(predict(&good)).lines().count(), 4);
}

/// S3 follow-up: `eval --n-bits` (or `--fingerprint-format`) without
/// `--outputs` describes nothing: refused, not ignored; on a vector model
/// it does not apply.
#[test]
fn s3_eval_n_bits_without_outputs_is_refused() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let eval = ["eval", "-m", p(&model), "-i", p(&train)];
    assert_one_line_error(&okr(&[&eval[..], &["--n-bits", "32"]].concat()), &["--n-bits 32", "no --outputs"]);
    let fmt = ["--fingerprint-format", "sparse"];
    assert_one_line_error(&okr(&[&eval[..], &fmt].concat()), &["--fingerprint-format", "no --outputs"]);
    ok(okr(&eval));

    let x = dir.write("x.csv", "0.0,1.0\n1.0,0.0\n0.5,0.5\n0.2,0.8\n");
    let y = dir.write("y.csv", "1,0\n0,1\n0.5,0.5\n0.2,0.8\n");
    let vm = dir.path("v.okr");
    let fit = ["fit", "--train", p(&x), "--csv-header", "no", "--output-kind", "vector", "--outputs", p(&y)];
    ok(okr(&[&fit[..], &["--lambda", "1e-3", "-m", p(&vm)]].concat()));
    let eval = ["eval", "-m", p(&vm), "-i", p(&x), "--csv-header", "no", "--outputs", p(&y), "--n-bits", "2"];
    assert_one_line_error(&okr(&eval), &["--n-bits and --fingerprint-format apply to fingerprint models"]);
}

/// S4 / P4 follow-up: K2AE's default input width goes through okr's one
/// check of the median heuristic (the message `okr fit` gives, not "gamma =
/// inf"), on the rows the kernel compares: features near 1e-160, whose
/// squared distances underflow, are fine once standardized.
#[test]
fn s4_k2ae_default_width_has_the_library_message() {
    let dir = Dir::new();
    let model = dir.path("m.okr");
    for (name, scale, median) in [("huge.arff", 3e154, "is inf"), ("tiny.arff", 1e-160, "is 2.585e-320")] {
        let train = dir.write(name, &arff(12, scale));
        let fit = ["fit", "--estimator", "k2ae", "--train", p(&train), "--label-count", "2", "--max-iter", "5"];
        let out = okr(&[&fit[..], &["--no-standardize", "-m", p(&model)]].concat());
        let msg = format!(
            "the median squared distance between training inputs {median}: scale the features or set gamma (--input-gamma)"
        );
        assert_one_line_error(&out, &[&msg]);
        assert!(!model.exists());
    }
    let tiny = dir.path("tiny.arff");
    let fit = ["fit", "--estimator", "k2ae", "--train", p(&tiny), "--label-count", "2"];
    ok(okr(&[&fit[..], &["--max-iter", "5", "--standardize", "-m", p(&model)]].concat()));
    assert!(model.exists());
}
