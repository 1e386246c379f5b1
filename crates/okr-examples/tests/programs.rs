//! The user programs (`examples/sisokr.rs`, `examples/leml_missing.rs`) on
//! Bibtex-shaped stand-ins written as ARFF files.

use std::path::Path;

use okr_eval::{StandinPreset, write_arff};

fn files(name: &str) -> (String, String) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("programs-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (train, test) = StandinPreset::Bibtex.spec().sizes(400, 100).generate().unwrap();
    let (a, b) = (dir.join("train.arff"), dir.join("test.arff"));
    write_arff(&a, &train, "train").unwrap();
    write_arff(&b, &test, "test").unwrap();
    (a.to_str().unwrap().to_string(), b.to_str().unwrap().to_string())
}

#[test]
fn sisokr_program_predicts_better_than_the_empty_set() {
    let (train, test) = files("sisokr");
    let s = okr_examples::sisokr_example(&train, &test, 159, 200, 60).unwrap();
    assert_eq!(s.n_train, 400);
    // The empty set scores F1 0; the stand-in's labels follow its features.
    assert!(s.score > 0.05 && s.score <= 1.0, "F1 {}", s.score);
}

#[test]
fn leml_program_with_missing_labels_ranks_labels() {
    let (train, test) = files("leml");
    let some = okr_examples::leml_missing_labels(&train, &test, 159, 0.2).unwrap();
    let all = okr_examples::leml_missing_labels(&train, &test, 159, 1.0).unwrap();
    for s in [&some, &all] {
        assert!(s.score > 0.0 && s.score <= 100.0, "P@1 {}", s.score);
        assert!(s.more.iter().all(|p| (0.0..=100.0).contains(p)));
    }
    assert_ne!(some, all, "the observed fraction changes the model");
}
