//! Recipes (issue 33): `okr info --json` shows the resolved recipe a model
//! was fitted from, `okr fit --recipe` on it gives the same model body (the
//! fit time aside), and the CLI resolves the defaults of the library's table.

use serde_json::Value;

use super::{ARFF, Dir, assert_one_line_error, okr, p};

fn info(model: &std::path::Path) -> Value {
    let out = okr(&["info", "--json", p(model)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The model file's bytes with the fit time zeroed: the recipe is stored
/// after the model, the fit time sits in the metadata.
fn body(model: &std::path::Path) -> Vec<u8> {
    let saved = okr_estimators::persist::SavedModel::load(model).unwrap();
    let mut s = saved.clone();
    s.info.fit_seconds = 0.0;
    s.to_bytes().unwrap()
}

#[test]
fn fit_recipe_replays_a_model_to_the_same_body() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    for extra in [
        &[][..],
        &["--estimator", "reduced-rank", "--rank", "2"][..],
        &["--estimator", "sisokr", "--input-sketch", "uniform:4", "--output-sketch", "gaussian:3", "--seed", "4"][..],
        &["--estimator", "nystroem-reduced-rank", "--anchors", "5", "--rank", "2"][..],
        &["--input-kernels", "gaussian,linear", "--mkl", "alignf", "--lambda", "0.01"][..],
        &["--estimator", "trace-norm", "--input-kernel", "polynomial"][..],
    ] {
        let first = dir.path("first.okr");
        let mut args = vec!["fit", "--train", p(&train), "--label-count", "2", "-m", p(&first)];
        args.extend_from_slice(extra);
        let out = okr(&args);
        assert!(out.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        let described = info(&first);
        let recipe = &described["recipe"];
        assert!(recipe["estimator"]["lambda"].is_number(), "{extra:?}: {described}");
        let file = dir.write("recipe.json", &serde_json::to_string_pretty(&described).unwrap());
        let again = dir.path("again.okr");
        let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--recipe", p(&file), "-m", p(&again)]);
        assert!(out.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(body(&first), body(&again), "{extra:?}");
        assert_eq!(info(&again)["recipe"], *recipe);
    }
}

#[test]
fn defaults_are_the_librarys_and_shown_by_info() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("tn.okr");
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--estimator", "trace-norm", "-m", p(&model)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The trace-norm rank defaults to 10, capped at the 6 samples with a warning.
    assert!(stderr.contains("warning: rank asks for 10 of 6 training samples: capped at 6"), "{stderr}");
    let r = &info(&model)["recipe"];
    assert_eq!((r["estimator"]["rank"].as_u64(), r["estimator"]["solver"].as_str()), (Some(6), Some("gd")));
    assert_eq!(r["estimator"]["lambda"].as_f64(), Some(okr::defaults::LAMBDA));
    let text = String::from_utf8_lossy(&okr(&["info", p(&model)]).stdout).to_string();
    assert!(text.contains("recipe") && text.contains("\"trace-norm\""), "{text}");
}

#[test]
fn recipe_errors_are_one_line() {
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let m = dir.path("m.okr");
    let bad = dir.write("bad.json", r#"{"estimator": {"name": "iokr", "rank": 3}}"#);
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--recipe", p(&bad), "-m", p(&m)]);
    assert_one_line_error(&out, &["--recipe", "rank does not apply to estimator iokr"]);
    let typo = dir.write("typo.json", r#"{"estimator": {"name": "iokr", "lamda": 3}}"#);
    let out = okr(&["fit", "--train", p(&train), "--label-count", "2", "--recipe", p(&typo), "-m", p(&m)]);
    assert_one_line_error(&out, &["unknown field `lamda`"]);
    let good = dir.write("good.json", r#"{"estimator": {"name": "kde"}}"#);
    let out =
        okr(&["fit", "--train", p(&train), "--label-count", "2", "--recipe", p(&good), "--lambda", "1", "-m", p(&m)]);
    assert_one_line_error(&out, &["--lambda does not apply with --recipe"]);
    assert!(!m.exists());
}
