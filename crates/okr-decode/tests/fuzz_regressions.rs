//! Inputs that `cargo xtask fuzz per-query` found to panic the per-query
//! candidate file reader, replayed (the folder is empty while none is known).

use std::path::Path;

#[test]
fn fuzz_regressions_replay_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions/per-query");
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| okr_decode::per_query::fuzz_candidate_file(&bytes));
        assert!(outcome.is_ok(), "{} panics again", path.display());
    }
}

/// The seeds of the fuzz target run without panicking, and a well-formed
/// file yields its queries (so the target reaches the reader's checks).
#[test]
fn fuzz_target_accepts_well_formed_files() {
    let file = "okr-candidates 1 inline\nquery q1 0\n3 1 4\n*0 2\nquery q2 1\n-\n";
    okr_decode::per_query::fuzz_candidate_file(file.as_bytes());
    okr_decode::per_query::fuzz_candidate_file(b"\x00\xff\nquery\n");
    let reader = okr_decode::per_query::CandidateFileReader::<okr_kernels::LabelSets, _>::from_reader(
        "t",
        std::io::Cursor::new(file),
        5,
    )
    .unwrap();
    let queries: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(queries.len(), 2);
    assert_eq!(queries[0].truth, Some(1));
}
