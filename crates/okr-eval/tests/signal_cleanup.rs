//! `remove_temporary_files` (what okr's SIGINT / SIGTERM handler calls) removes
//! the temporary file of a write in progress. A test binary of its own: the
//! call removes every live temporary file of the process.

use std::io::Write;

#[test]
fn signal_cleanup_removes_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.out");
    let e = okr_eval::write_atomic(&path, |w| {
        w.write_all(b"partial")?;
        w.flush()?;
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the temporary file exists");
        // What the signal handler does while a write is under way.
        okr_eval::remove_temporary_files();
        Ok(())
    });
    assert!(e.is_err(), "the rename of a removed temporary file fails");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
}
