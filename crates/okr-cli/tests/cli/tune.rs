//! `okr tune` and the defaults of `okr fit`.

use super::{Dir, assert_one_line_error, okr, p};

fn gen_emotions(dir: &Dir) -> (std::path::PathBuf, std::path::PathBuf) {
    let out = okr(&["gen", "--preset", "emotions", "--scale", "0.25", "--seed", "2", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (dir.path("d/emotions-standin-train.arff"), dir.path("d/emotions-standin-test.arff"))
}

#[test]
fn tune_prints_the_grid_and_saves_the_refitted_choice() {
    let dir = Dir::new();
    let (train, test) = gen_emotions(&dir);
    for cv in ["3", "loo", "loo-rkhs", "gcv-rkhs"] {
        let model = dir.path(&format!("t{cv}.okr"));
        let args = ["tune", "--train", p(&train), "--label-count", "6", "--cv", cv, "--json", "-o", p(&model)];
        let out = okr(&[&args[..], &["--widths", "0.25,0.5,1", "--lambdas", "1e-4,1e-2"]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cv}: {stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["coarse"].is_null(), "small data: one stage");
        let grid = v["grid"]["cells"].as_array().unwrap();
        assert_eq!(grid.len(), 6, "{cv}");
        let folds = if cv == "3" { 3 } else { 1 };
        let best = grid.iter().map(|c| c["mean"].as_f64().unwrap()).fold(f64::NEG_INFINITY, f64::max);
        for cell in grid {
            let scores = cell["fold_scores"].as_array().unwrap();
            assert_eq!(scores.len(), folds, "{cv}");
            let mean = scores.iter().map(|s| s.as_f64().unwrap()).sum::<f64>() / folds as f64;
            assert!((mean - cell["mean"].as_f64().unwrap()).abs() < 1e-12);
        }
        let chosen = &v["chosen"];
        assert_eq!(chosen["mean"].as_f64().unwrap(), best, "{cv}: the choice is the best mean");
        // The refit uses the choice and says so.
        let gamma = chosen["gamma"].as_f64().unwrap();
        assert!(stderr.contains(&format!("gamma = {gamma:.6}")) && stderr.contains("chosen by okr tune"), "{stderr}");
        let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
        assert!(out.status.success(), "{cv}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn tune_refits_the_other_estimators_with_their_flags() {
    let dir = Dir::new();
    let (train, test) = gen_emotions(&dir);
    for (name, flags) in [
        ("nystroem", &["--anchors", "40"][..]),
        ("sisokr", &["--input-sketch", "uniform:60", "--output-sketch", "uniform:40"]),
        ("reduced-rank", &["--rank", "3"]),
        ("kde", &["--rank", "3"]),
    ] {
        let model = dir.path(&format!("{name}.okr"));
        let args = ["tune", "--train", p(&train), "--label-count", "6", "--estimator", name, "--json", "-o", p(&model)];
        let grid = ["--widths", "0.25,1", "--lambdas", "1e-4,1e-1", "--seed", "5"];
        let out = okr(&[&args[..], flags, &grid].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let cells = v["grid"]["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 4, "{name}");
        assert!(cells.iter().all(|c| c["fold_scores"].as_array().unwrap().len() == 3), "{name}: 3 folds");
        let means: Vec<f64> = cells.iter().map(|c| c["mean"].as_f64().unwrap()).collect();
        let best = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(v["chosen"]["mean"].as_f64().unwrap(), best, "{name}");
        assert!(means.iter().any(|m| (m - best).abs() > 1e-9), "{name}: the grid separates its cells: {means:?}");
        // The refit is the estimator asked for, at the chosen width and ridge.
        let gamma = v["chosen"]["gamma"].as_f64().unwrap();
        let lambda = v["chosen"]["lambda"].as_f64().unwrap();
        assert!(stderr.contains(&format!("fitted {name}")), "{name}: {stderr}");
        assert!(stderr.contains(&format!("gamma = {gamma:.6}")) && stderr.contains("chosen by okr tune"), "{stderr}");
        assert!(stderr.contains(&format!("lambda = {lambda:e}")), "{name}: {stderr}");
        let out = okr(&["eval", "-m", p(&model), "--test", p(&test)]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let eval: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(eval["estimator"].as_str(), Some(name), "{eval}");
    }
    // Seeded: the same search twice gives the same grid.
    let run = || {
        let args = ["tune", "--train", p(&train), "--label-count", "6", "--estimator", "nystroem", "--anchors", "30"];
        let out =
            okr(&[&args[..], &["--widths", "0.5", "--lambdas", "1e-3", "--json", "-o", p(&dir.path("s"))]].concat());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["grid"].clone()
    };
    assert_eq!(run(), run());
}

#[test]
fn tune_text_report_and_line_search() {
    let dir = Dir::new();
    let (train, _) = gen_emotions(&dir);
    let out = okr(&["tune", "--train", p(&train), "--label-count", "6", "--lambdas", "1e-3", "-o", p(&dir.path("m"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("okr tune: 3-fold cross-validated F1"), "{text}");
    assert_eq!(text.matches("<- best").count(), 1, "{text}");
    // The line search starts at the median heuristic's 0.25, 0.5, 1.
    for c in ["0.25", "0.5", "1"] {
        assert!(text.lines().any(|l| l.split_whitespace().next() == Some(c)), "{c}: {text}");
    }
    assert!(text.contains("chosen: c = "), "{text}");
}

#[test]
fn tune_bad_values_are_one_line_errors() {
    let dir = Dir::new();
    let (train, _) = gen_emotions(&dir);
    let model = dir.path("m");
    let base = ["tune", "--train", p(&train), "--label-count", "6", "-o", p(&model)];
    for (extra, needles) in [
        (&["--cv", "1"][..], &["--cv", "at least 2"][..]),
        (&["--cv", "loocv"], &["--cv", "loo-rkhs"]),
        (&["--cv", "1000"], &["--cv 1000", "more folds"]),
        (&["--widths", "0.5,0"], &["--widths", "> 0"]),
        (&["--widths", "x"], &["--widths", "a number"]),
        (&["--lambdas", "-1"], &["--lambdas", "> 0"]),
        (&["--lambdas", "inf"], &["--lambdas", "finite"]),
        (&["--lambda", "1e-3"], &["--lambda is what okr tune chooses"]),
        (&["--gamma", "1"], &["--gamma is what okr tune chooses"]),
        (&["--estimator", "leml"], &["kernel-output estimators", "not --estimator leml"]),
        (&["--estimator", "kae"], &["kernel-output estimators", "not --estimator kae"]),
        (&["--estimator", "nystroem", "--cv", "loo"], &["--cv loo is a closed form of IOKR", "nystroem", "--cv 3"]),
        (&["--estimator", "kde", "--cv", "gcv-rkhs"], &["--cv gcv-rkhs is a closed form of IOKR"]),
        (&["--lambda1", "1e-3"], &["--lambda1 is what okr tune chooses"]),
        (&["--estimator", "reduced-rank", "--lambda2", "1e-3"], &["--lambda2 is what okr tune chooses"]),
        (&["--input-kernel", "linear"], &["gaussian only"]),
    ] {
        let out = okr(&[&base[..], extra].concat());
        assert_one_line_error(&out, needles);
    }
}

#[test]
fn fit_defaults_are_reported() {
    let dir = Dir::new();
    let (train, _) = gen_emotions(&dir);
    let out = okr(&["fit", "--train", p(&train), "--label-count", "6", "-o", p(&dir.path("m"))]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for needle in ["features standardized (dense, not binary", "median heuristic", "closed-form leave-one-out F1"] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "6",
        "--no-standardize",
        "--lambda",
        "1e-3",
        "-o",
        p(&dir.path("m")),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("features used as given (no standardization)") && stderr.contains("lambda = 1e-3 (given)"),
        "{stderr}"
    );
    let out = okr(&[
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "6",
        "--standardize",
        "--no-standardize",
        "-o",
        p(&dir.path("m")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let args = ["fit", "--train", p(&train), "--label-count", "6", "--estimator", "nystroem", "--anchors", "5000"];
    let out = okr(&[&args[..], &["-o", p(&dir.path("n"))]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains("warning: anchors asks for 5000 of"), "{stderr}");
    assert!(stderr.contains("lambda = 1e-3 (default of nystroem"), "{stderr}");
}

#[test]
fn tune_on_many_rows_screens_widths_on_a_subset_then_cross_validates_the_ridge() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "emotions", "--scale", "5.5", "--seed", "1", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let train = dir.path("d/emotions-standin-train.arff");
    let model = dir.path("m.okr");
    let args = ["tune", "--train", p(&train), "--label-count", "6", "--cv", "2", "--lambdas", "1e-4,1e-2"];
    let out = okr(&[&args[..], &["--json", "-o", p(&model)]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["coarse_rows"].as_u64(), Some(2000));
    let coarse = v["coarse"]["cells"].as_array().unwrap();
    assert!(coarse.len() >= 6 && coarse.len().is_multiple_of(2), "{} coarse cells", coarse.len());
    // The fine stage: the coarse best width, every ridge, on all rows.
    let best =
        coarse.iter().max_by(|a, b| a["mean"].as_f64().unwrap().total_cmp(&b["mean"].as_f64().unwrap())).unwrap();
    let fine = v["grid"]["cells"].as_array().unwrap();
    assert_eq!(fine.len(), 2);
    assert!(fine.iter().all(|c| c["c"] == best["c"] && c["fold_scores"].as_array().unwrap().len() == 2));
    assert_eq!(v["chosen"]["c"], best["c"]);
    assert!(model.exists());
}

#[test]
fn tune_on_fingerprints_equals_tune_on_the_same_bits_as_labels() {
    // A fingerprint file is label sets whose labels are the bits: the search
    // over `--outputs fp.csv` must be the search over the same bits as label
    // columns of the training file.
    let dir = Dir::new();
    let n = 60;
    let x: Vec<[f64; 3]> =
        (0..n).map(|i| [(i as f64 * 0.37).sin(), (i as f64 * 0.91).cos(), ((i * i) % 11) as f64 / 11.0]).collect();
    let bits: Vec<Vec<u8>> =
        x.iter().map(|r| (0..6).map(|b| u8::from((r[b % 3] * (b as f64 + 1.5)).sin() > 0.1)).collect()).collect();
    let join = |v: Vec<String>| v.join(",");
    let features = |r: &[f64; 3]| join(r.iter().map(f64::to_string).collect());
    let bit_text = |b: &[u8]| join(b.iter().map(u8::to_string).collect());
    let x_file = dir.write("x.csv", &x.iter().map(|r| features(r) + "\n").collect::<String>());
    let fp_file = dir.write("fp.csv", &bits.iter().map(|b| bit_text(b) + "\n").collect::<String>());
    let both = x.iter().zip(&bits).map(|(r, b)| format!("{},{}\n", features(r), bit_text(b))).collect::<String>();
    let labels_file = dir.write("xy.csv", &both);
    for estimator in [&["--estimator", "iokr"][..], &["--estimator", "nystroem", "--anchors", "20"]] {
        let search = ["--widths", "0.5,2", "--lambdas", "1e-4,1e-1", "--output-kernel", "tanimoto", "--json"];
        let common = [&["tune", "--csv-header", "no"][..], estimator, &search].concat();
        let run = |extra: &[&str], model: &str| -> serde_json::Value {
            let out = okr(&[&common[..], extra, &["-o", p(&dir.path(model))]].concat());
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            serde_json::from_slice(&out.stdout).unwrap()
        };
        let fp = run(&["--train", p(&x_file), "--output-kind", "fingerprint", "--outputs", p(&fp_file)], "fp.okr");
        let labels = run(&["--train", p(&labels_file), "--label-count", "6"], "labels.okr");
        assert_eq!(fp["grid"], labels["grid"], "{estimator:?}");
        assert_eq!(fp["chosen"], labels["chosen"], "{estimator:?}");
        let cells = fp["grid"]["cells"].as_array().unwrap();
        let means: Vec<f64> = cells.iter().map(|c| c["mean"].as_f64().unwrap()).collect();
        assert!(means.iter().any(|m| (m - means[0]).abs() > 1e-9), "{estimator:?}: {means:?}");
        let info = okr(&["info", "--json", p(&dir.path("fp.okr"))]);
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        assert_eq!(info["n_labels"], 6);
    }
    let out = okr(&["tune", "--train", p(&x_file), "--csv-header", "no", "--output-kind", "graph", "-o", "m"]);
    assert_one_line_error(&out, &["label-set, fingerprint and vector outputs", "not --output-kind graph"]);
}

/// `--groups`: every row twice. Ungrouped folds see most validation rows'
/// twins in training (each such row decoded exactly at a tiny ridge and a
/// narrow width: F1 0.84 here); folds grouped by row keep the twins
/// together (0.57).
#[test]
fn tune_groups_keep_each_group_in_one_fold() {
    let dir = Dir::new();
    let mut csv = String::new();
    let mut groups = String::new();
    for copy in 0..2 {
        for i in 0..40usize {
            let x: Vec<String> = (0..4)
                .map(|j| format!("{}", ((i * 31 + j * 17 + i * i * 3 + j * j * i) % 101) as f64 / 10.0))
                .collect();
            let y = [(i % 3 == 0) as u8, (i % 5 < 2) as u8, ((i / 3) % 2 == 1 || i % 3 != 0) as u8];
            csv.push_str(&format!("{},{},{},{}\n", x.join(","), y[0], y[1], y[2]));
            groups.push_str(&format!("molecule-{i}\n"));
        }
        let _ = copy;
    }
    let train = dir.write("twins.csv", &csv);
    let group_file = dir.write("groups.txt", &groups);
    let base = [
        "tune",
        "--train",
        p(&train),
        "--label-count",
        "3",
        "--no-standardize",
        "--cv",
        "4",
        "--lambdas",
        "1e-8",
        "--widths",
        "8",
        "--json",
    ];
    let run = |extra: &[&str], model: &str| {
        let out = okr(&[&base[..], extra, &["-o", p(&dir.path(model))]].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v["chosen"]["mean"].as_f64().unwrap(), v["criterion"].as_str().unwrap().to_string())
    };
    let (leaky, _) = run(&[], "a.okr");
    let (grouped, criterion) = run(&["--groups", p(&group_file)], "b.okr");
    assert!(leaky > 0.75, "{leaky}");
    assert!(grouped < leaky - 0.15, "{grouped} vs {leaky}");
    assert!(criterion.contains("folds grouped"), "{criterion}");
    let short = dir.write("short.txt", "a\nb\n");
    let out = okr(&[&base[..], &["--groups", p(&short), "-o", p(&dir.path("c.okr"))]].concat());
    assert_one_line_error(&out, &["--groups", "2 groups for the 80 rows"]);
    let out = okr(&[&base[..5], &["--cv", "loo", "--groups", p(&group_file), "-o", p(&dir.path("d.okr"))]].concat());
    assert_one_line_error(&out, &["groups need K-fold"]);
}
