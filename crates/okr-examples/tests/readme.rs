//! The README's Rust example: the README shows exactly the code of
//! `okr_examples::readme_example`, and that code runs on a dense and on a
//! sparse data set (Bibtex-shaped stand-ins written as ARFF files).

use std::path::Path;

use okr_estimators::{DenseRows, Features};
use okr_eval::{Dataset, StandinPreset, write_arff};

/// The lines of the README's ```rust block.
fn readme_block() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let start = readme.find("```rust\n").expect("a rust block in the README") + "```rust\n".len();
    let end = start + readme[start..].find("```").unwrap();
    readme[start..end].lines().map(str::to_string).collect()
}

/// The lines between the markers of `src/lib.rs`, unindented.
fn example_lines() -> Vec<String> {
    let lib = include_str!("../src/lib.rs");
    let start = lib.find("// README begin\n").unwrap() + "// README begin\n".len();
    let end = lib.find("    // README end").unwrap();
    lib[start..end].lines().map(|l| l.strip_prefix("    ").unwrap_or(l).to_string()).collect()
}

#[test]
fn the_readme_shows_the_tested_example() {
    assert_eq!(readme_block(), example_lines(), "README.md's rust block and okr-examples' src/lib.rs differ");
}

fn densified(d: &Dataset) -> Dataset {
    let x = Features::Dense(DenseRows::new(d.x.to_dense()).unwrap());
    Dataset::new(x, d.y.clone()).unwrap()
}

#[test]
fn the_example_runs_on_dense_and_sparse_files() {
    let (train, test) = StandinPreset::Bibtex.spec().sizes(240, 60).generate().unwrap();
    assert!(train.x.is_sparse());
    for (form, train, test) in [("sparse", train.clone(), test.clone()), ("dense", densified(&train), densified(&test))]
    {
        let dir = tempfile_dir(form);
        write_arff(dir.join("bibtex-train.arff"), &train, "train").unwrap();
        write_arff(dir.join("bibtex-test.arff"), &test, "test").unwrap();
        std::env::set_current_dir(&dir).unwrap();
        okr_examples::readme_example().unwrap_or_else(|e| panic!("{form}: {e}"));
        let read = okr_eval::read_arff("bibtex-train.arff", 159).unwrap();
        assert_eq!(read.x.is_sparse(), form == "sparse", "the {form} file reads back {form}");
    }
}

/// A fresh folder under the target directory (the test changes into it).
fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("readme-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
