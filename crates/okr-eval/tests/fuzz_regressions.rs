//! Replays every input that `cargo xtask fuzz` found crashing or hanging
//! (`tests/fuzz-regressions/<target>/*`): each must now run without a panic.
//! Folders of targets outside okr-eval (such as a model loader) are replayed
//! by the crate that owns the target.

use std::path::Path;

#[test]
fn fuzz_regressions_replay_without_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Some(target) = okr_eval::fuzz::target(&name) else { continue };
        for input in std::fs::read_dir(&dir).unwrap() {
            let path = input.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&bytes));
            assert!(outcome.is_ok(), "{} panics again", path.display());
            replayed += 1;
        }
    }
    eprintln!("replayed {replayed} fuzz regression inputs");
}
