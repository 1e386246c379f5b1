//! `okr predict --output-format`, `--scores`, `--threshold(s)`,
//! `okr eval --predictions` and `okr info` (issue 15, items 2 and 5).

use super::*;

/// The toy ARFF's label names.
const NAMES: [&str; 2] = ["l0", "l1"];

fn predict_with(dir: &Dir, model: &Path, extra: &[&str]) -> Output {
    let train = dir.path("train.arff");
    let mut args = vec!["predict", "-m", p(model), "-i", p(&train)];
    args.extend_from_slice(extra);
    okr(&args)
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn csv_output_has_the_label_names_as_header_and_one_row_per_input() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let text = stdout(&predict_with(&dir, &model, &["--output-format", "csv"]));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), NAMES);
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 6, "one row per input");
    assert!(rows.iter().all(|row| row.len() == 2 && row.iter().all(|v| v == "0" || v == "1")));
    // With --scores: a score column per label, finite numbers.
    let text = stdout(&predict_with(&dir, &model, &["--output-format", "csv", "--scores"]));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), ["l0", "l1", "score:l0", "score:l1"]);
    for row in r.records() {
        let row = row.unwrap();
        assert!(row.iter().skip(2).all(|v| v.parse::<f64>().unwrap().is_finite()));
    }
}

#[test]
fn json_and_indicator_outputs_agree_with_the_labels_output() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let labels = stdout(&predict_with(&dir, &model, &[]));
    let indicator = stdout(&predict_with(&dir, &model, &["--output-format", "indicator"]));
    let json = stdout(&predict_with(&dir, &model, &["--output-format", "json", "--top-k", "2", "--scores"]));
    for ((l, ind), js) in labels.lines().zip(indicator.lines()).zip(json.lines()) {
        let set: Vec<usize> = l.split(',').filter(|t| !t.is_empty() && *t != "-").map(|t| t.parse().unwrap()).collect();
        let row: Vec<usize> = ind.split(',').enumerate().filter(|(_, v)| *v == "1").map(|(j, _)| j).collect();
        assert_eq!(set, row, "indicator row {ind} vs labels {l}");
        let v: serde_json::Value = serde_json::from_str(js).unwrap();
        let ids: Vec<usize> = v["label_ids"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
        assert_eq!(ids, set);
        let names: Vec<&str> = v["labels"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        assert_eq!(names, set.iter().map(|&j| NAMES[j]).collect::<Vec<_>>());
        let top = v["top"].as_array().unwrap();
        assert_eq!(top.len(), 2);
        // Decoding scores: lower is better, best first.
        let s: Vec<f64> = top.iter().map(|t| t["score"].as_f64().unwrap()).collect();
        assert!(s[0] <= s[1], "{s:?}");
        assert_eq!(v["label_scores"].as_array().unwrap().len(), 2);
    }
}

#[test]
fn eval_of_a_prediction_file_equals_eval_of_the_model() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let direct: serde_json::Value =
        serde_json::from_slice(&okr(&["eval", "-m", p(&model), "-i", p(&train)]).stdout).unwrap();
    for (file, format) in [("p.csv", "csv"), ("p.json", "json"), ("p.txt", "labels")] {
        let out = dir.path(file);
        let mut args = vec!["--output-format", format, "-o", p(&out)];
        if format != "labels" {
            args.push("--scores");
        }
        stdout(&predict_with(&dir, &model, &args));
        let back = okr(&["eval", "-m", p(&model), "-i", p(&train), "--predictions", p(&out)]);
        let back: serde_json::Value = serde_json::from_slice(&back.stdout).unwrap();
        for key in ["f1_samples", "f1_micro", "f1_macro", "hamming", "subset_accuracy", "jaccard_samples"] {
            assert_eq!(back[key], direct[key], "{format}: {key}");
        }
        for key in ["lrap", "p_at_1", "auc"] {
            if format == "labels" {
                assert!(back[key].is_null(), "{format}: {key} without scores is null");
            } else {
                let (a, b) = (back[key].as_f64().unwrap(), direct[key].as_f64().unwrap());
                assert!((a - b).abs() < 1e-12, "{format}: {key} {a} vs {b}");
            }
        }
    }
}

#[test]
fn bad_output_flags_are_one_line_errors() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    assert_one_line_error(&predict_with(&dir, &model, &["--scores"]), &["--scores", "csv or json"]);
    assert_one_line_error(
        &predict_with(&dir, &model, &["--output-format", "csv", "--top-k", "2"]),
        &["--top-k 2", "labels or json"],
    );
    assert_one_line_error(&predict_with(&dir, &model, &["--threshold", "0.5"]), &["--threshold", "leml", "iokr"]);
    assert_one_line_error(&predict_with(&dir, &model, &["--output-format", "xml"]), &["xml"]);
    let train = dir.path("train.arff");
    let short = dir.write("short.txt", "0\n1\n");
    let out = okr(&["eval", "-m", p(&model), "-i", p(&train), "--predictions", p(&short)]);
    assert_one_line_error(&out, &["2 predictions for 6 rows"]);
    let wrong = dir.write("wrong.txt", "0\n7\n0\n0\n0\n0\n");
    let out = okr(&["eval", "-m", p(&model), "-i", p(&train), "--predictions", p(&wrong)]);
    assert_one_line_error(&out, &["wrong.txt:2", "label 7 is out of range"]);
}

#[test]
fn leml_thresholds_move_the_predicted_sets() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("leml.okr");
    let fit = okr(&["fit", "--train", p(&train), "--label-count", "2", "-m", p(&model), "--estimator", "leml"]);
    assert!(fit.status.success(), "{}", String::from_utf8_lossy(&fit.stderr));
    let all = stdout(&predict_with(&dir, &model, &["--threshold", "-1e9"]));
    assert!(all.lines().all(|l| l == "0,1"), "{all}");
    let none = stdout(&predict_with(&dir, &model, &["--threshold", "1e9"]));
    assert!(none.lines().all(|l| l == "-"), "{none}");
    let per_label = dir.write("t.txt", "-1e9\n1e9\n");
    let first = stdout(&predict_with(&dir, &model, &["--thresholds", p(&per_label)]));
    assert!(first.lines().all(|l| l == "0"), "{first}");
    let bad = dir.write("bad.txt", "0.5\n");
    assert_one_line_error(&predict_with(&dir, &model, &["--thresholds", p(&bad)]), &["1 thresholds", "(2)"]);
    let text = stdout(&predict_with(&dir, &model, &["--output-format", "csv", "--scores"]));
    assert_eq!(text.lines().next().unwrap(), "l0,l1,score:l0,score:l1");
}

#[test]
fn info_describes_the_model_as_text_and_json() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let text = stdout(&okr(&["info", p(&model)]));
    for needle in ["estimator         iokr", "n_features        2", "n_labels          2", "lambda", "l0, l1"] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
    let v: serde_json::Value = serde_json::from_str(&stdout(&okr(&["info", p(&model), "--json"]))).unwrap();
    assert_eq!(v["estimator"], "iokr");
    assert_eq!(v["label_names"], serde_json::json!(["l0", "l1"]));
    assert_eq!(v["format_version"], okr_estimators_format_version());
    assert_eq!(v["parameters"]["lambda"], 1e-3);
    assert!(v["parameters"]["input_kernel"]["gaussian"]["gamma"].as_f64().unwrap() > 0.0);
    let not_a_model = dir.write("x.okr", "hello");
    assert_one_line_error(&okr(&["info", p(&not_a_model)]), &["not an okr model file"]);
}

fn okr_estimators_format_version() -> u32 {
    okr_estimators::persist::FORMAT_VERSION
}

#[test]
fn f32_precision_gives_the_f64_decisions_and_scores() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "emotions", "--scale", "0.25", "--seed", "5", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (train, test) = (dir.path("d/emotions-standin-train.arff"), dir.path("d/emotions-standin-test.arff"));
    let model = dir.path("e.okr");
    let out = okr(&["fit", "--train", p(&train), "--label-count", "6", "--lambda", "1e-4", "-m", p(&model)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = |precision: &str| {
        let args = ["predict", "-m", p(&model), "-i", p(&test), "--output-format", "json", "--top-k", "1", "--scores"];
        let text = stdout(&okr(&[&args[..], &["--precision", precision]].concat()));
        text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).collect::<Vec<_>>()
    };
    let (f64_rows, f32_rows) = (run("f64"), run("f32"));
    assert!(!f64_rows.is_empty());
    assert_eq!(f64_rows.len(), f32_rows.len());
    for (a, b) in f64_rows.iter().zip(&f32_rows) {
        assert_eq!(a["label_ids"], b["label_ids"], "decision differs: {a} vs {b}");
        // The chosen candidate is re-scored in double precision.
        let (sa, sb) = (a["top"][0]["score"].as_f64().unwrap(), b["top"][0]["score"].as_f64().unwrap());
        assert!((sa - sb).abs() <= 1e-9 * (1.0 + sa.abs()), "{sa} vs {sb}");
    }
    let out = okr(&["predict", "-m", p(&model), "-i", p(&test), "--precision", "f16"]);
    assert_one_line_error(&out, &["f16"]);
}
