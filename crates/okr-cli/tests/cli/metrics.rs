//! `okr eval`: the same keys for every estimator, and numbers that agree with
//! brute-force definitions computed on `okr predict`'s output.

use super::{Dir, okr, p};

/// Every key `okr eval` prints, for every estimator.
const KEYS: [&str; 19] = [
    "estimator",
    "n_test",
    "n_labels",
    "n_candidates",
    "threshold",
    "f1_samples",
    "f1_micro",
    "f1_macro",
    "hamming",
    "subset_accuracy",
    "jaccard_samples",
    "lrap",
    "auc",
    "p_at_1",
    "p_at_3",
    "p_at_5",
    "mse_h",
    "fit_seconds",
    "decode_seconds",
];

/// Label sets of an ARFF file whose last `l` attributes are the labels (dense rows).
fn arff_labels(text: &str, l: usize) -> Vec<Vec<bool>> {
    let data = text.split("@data").nth(1).unwrap();
    data.lines()
        .filter(|r| !r.trim().is_empty())
        .map(|r| {
            let v: Vec<&str> = r.split(',').collect();
            v[v.len() - l..].iter().map(|s| s.trim() == "1").collect()
        })
        .collect()
}

/// `okr predict` lines (comma-separated labels) as indicator rows.
fn predicted(text: &str, l: usize) -> Vec<Vec<bool>> {
    text.lines()
        .map(|line| {
            let set: Vec<usize> =
                line.split(",").filter(|s| !s.is_empty() && *s != "-").map(|s| s.parse().unwrap()).collect();
            (0..l).map(|j| set.contains(&j)).collect()
        })
        .collect()
}

/// Brute-force definitions (scikit-learn's, zero_division=0) on indicator rows.
fn brute(y: &[Vec<bool>], h: &[Vec<bool>]) -> serde_json::Value {
    let (n, l) = (y.len(), y[0].len());
    let div = |a: f64, b: f64| if b == 0.0 { 0.0 } else { a / b };
    let count = |i: usize, f: &dyn Fn(bool, bool) -> bool| (0..l).filter(|&j| f(y[i][j], h[i][j])).count() as f64;
    let mean = |f: &dyn Fn(usize) -> f64| (0..n).map(f).sum::<f64>() / n as f64;
    let f1 = mean(&|i| div(2.0 * count(i, &|a, b| a && b), count(i, &|a, _| a) + count(i, &|_, b| b)));
    let jac = mean(&|i| div(count(i, &|a, b| a && b), count(i, &|a, b| a || b)));
    let exact = mean(&|i| f64::from(u8::from(y[i] == h[i])));
    let ham = mean(&|i| count(i, &|a, b| a != b)) / l as f64;
    let per: Vec<serde_json::Value> = (0..l)
        .map(|j| {
            let c = |f: &dyn Fn(bool, bool) -> bool| (0..n).filter(|&i| f(y[i][j], h[i][j])).count() as f64;
            let (tp, fp, fn_) = (c(&|a, b| a && b), c(&|a, b| !a && b), c(&|a, b| a && !b));
            serde_json::json!({
                "precision": div(tp, tp + fp), "recall": div(tp, tp + fn_),
                "f1": div(2.0 * tp, 2.0 * tp + fp + fn_), "support": tp + fn_,
            })
        })
        .collect();
    serde_json::json!({ "f1_samples": f1, "jaccard_samples": jac, "subset_accuracy": exact, "hamming": ham, "per_label": per })
}

#[test]
fn every_estimator_prints_the_same_keys_and_brute_force_values() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "emotions", "--scale", "0.25", "--seed", "5", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let train = dir.path("d/emotions-standin-train.arff");
    let test = dir.path("d/emotions-standin-test.arff");
    let truth = arff_labels(&std::fs::read_to_string(&test).unwrap(), 6);
    for (estimator, extra) in [
        ("iokr", &["--standardize"][..]),
        ("reduced-rank", &["--standardize", "--rank", "4"][..]),
        ("nystroem", &["--standardize", "--anchors", "20"][..]),
        ("leml", &["--rank", "4", "--max-iter", "3"][..]),
    ] {
        let model = dir.path(&format!("{estimator}.okr"));
        let fit = ["fit", "--train", p(&train), "--label-count", "6", "--estimator", estimator, "-o", p(&model)];
        let out = okr(&[&fit[..], extra].concat());
        assert!(out.status.success(), "{estimator}: {}", String::from_utf8_lossy(&out.stderr));
        let out = okr(&["eval", "-m", p(&model), "--test", p(&test), "--per-label"]);
        assert!(out.status.success(), "{estimator}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let object = v.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).filter(|k| *k != "per_label").collect();
        let mut expected = KEYS.to_vec();
        keys.sort_unstable();
        expected.sort_unstable();
        assert_eq!(keys, expected, "{estimator}");
        let score_model = estimator == "leml";
        assert_eq!(v["mse_h"].is_null(), score_model, "{estimator}: {v}");
        assert_eq!(v["n_candidates"].is_null(), score_model, "{estimator}: {v}");
        assert_eq!(v["threshold"].is_null(), !score_model, "{estimator}: {v}");
        for key in ["f1_samples", "f1_micro", "f1_macro", "hamming", "subset_accuracy", "jaccard_samples", "lrap"] {
            let x = v[key].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&x), "{estimator}: {key} = {x} is not a fraction");
        }
        let p1 = v["p_at_1"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&p1) && v["auc"].is_number(), "{estimator}: {v}");
        // The metrics of the predicted sets agree with brute force on `okr predict`'s output.
        let out = okr(&["predict", "-m", p(&model), "--input", p(&test)]);
        assert!(out.status.success(), "{estimator}: {}", String::from_utf8_lossy(&out.stderr));
        let pred = predicted(&String::from_utf8(out.stdout).unwrap(), 6);
        let b = brute(&truth, &pred);
        for key in ["f1_samples", "jaccard_samples", "subset_accuracy", "hamming"] {
            let (got, want) = (v[key].as_f64().unwrap(), b[key].as_f64().unwrap());
            assert!((got - want).abs() < 1e-12, "{estimator}: {key} {got} vs brute force {want}");
        }
        let per = v["per_label"].as_array().unwrap();
        assert_eq!(per.len(), 6);
        for (j, (g, w)) in per.iter().zip(b["per_label"].as_array().unwrap()).enumerate() {
            assert_eq!(g["label"].as_str().unwrap(), format!("l{j}"), "names from the file");
            for key in ["precision", "recall", "f1", "support"] {
                let (got, want) = (g[key].as_f64().unwrap(), w[key].as_f64().unwrap());
                assert!((got - want).abs() < 1e-12, "{estimator}: label {j} {key} {got} vs {want}");
            }
        }
    }
}
