//! Output paths as a shell redirect treats them, and the file findings of
//! issue 35 (D1-D4, H1, C4, C5, S7, P5's output messages): each test is
//! named after its finding.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::{Dir, assert_one_line_error, fit_toy, okr, p};

/// A 6-row test file of the toy model (2 features, 2 labels).
fn toy_test(dir: &Dir) -> std::path::PathBuf {
    dir.write("test.csv", "0.0,1.0\n1.0,0.0\n0.5,0.5\n")
}

fn predict(model: &Path, input: &Path, out: &str) -> Output {
    okr(&["predict", "-m", p(model), "-i", p(input), "--csv-header", "no", "-o", out])
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What `okr predict` writes to standard output for the toy test file.
fn expected(model: &Path, input: &Path) -> Vec<u8> {
    let out = okr(&["predict", "-m", p(model), "-i", p(input), "--csv-header", "no"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!out.stdout.is_empty());
    out.stdout
}

#[cfg(unix)]
#[test]
fn d1_symlinked_outputs_are_followed_and_dev_stdout_is_written_through() {
    use std::os::unix::fs::symlink;
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let input = toy_test(&dir);
    let want = expected(&model, &input);
    // A symlink to a file in another folder: the target is replaced there, the link stays.
    std::fs::create_dir(dir.path("real")).unwrap();
    let target = dir.write("real/p.txt", "old");
    let link = dir.path("p.txt");
    symlink(&target, &link).unwrap();
    let out = predict(&model, &input, p(&link));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&target).unwrap(), want);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_dir(dir.path("real")).unwrap().count(), 1, "no temporary file left");

    // `-o /dev/stdout` into a pipe (the harness) and into a file (`> out.txt`).
    let out = predict(&model, &input, "/dev/stdout");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, want);
    let redirected = dir.path("out.txt");
    let status = Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(["predict", "-m", p(&model), "-i", p(&input), "--csv-header", "no", "-o", "/dev/stdout"])
        .stdout(std::fs::File::create(&redirected).unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read(&redirected).unwrap(), want);
    assert!(std::fs::symlink_metadata("/dev/stdout").unwrap().file_type().is_symlink(), "/dev/stdout stays a link");
}

#[test]
fn d2_inputs_of_tu_sets_pools_and_summaries_are_never_overwritten() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let input = toy_test(&dir);
    std::fs::create_dir(dir.path("g")).unwrap();
    let tu = |name: &str| {
        for (suffix, text) in
            [("A", "1, 2\n2, 1\n"), ("graph_indicator", "1\n1\n"), ("graph_labels", "1\n"), ("node_labels", "0\n1\n")]
        {
            dir.write(&format!("g/{name}_{suffix}.txt"), text);
        }
        p(&dir.path(&format!("g/{name}"))).to_string()
    };
    let g = tu("G");
    let before = std::fs::read_to_string(dir.path("g/G_A.txt")).unwrap();
    let x = dir.write("x.csv", "0.0,1.0\n1.0,0.0\n");
    let a_file = p(&dir.path("g/G_A.txt")).to_string();
    let fit = okr(&[
        "fit",
        "--train",
        p(&x),
        "--csv-header",
        "no",
        "--output-kind",
        "graph",
        "--outputs",
        &g,
        "--output-kernel",
        "wl",
        "-m",
        &a_file,
    ]);
    assert_one_line_error(&fit, &["G_A.txt", "output file", "would be overwritten"]);
    let indicator = p(&dir.path("g/G_graph_indicator.txt")).to_string();
    let out = okr(&["predict", "-m", p(&model), "-i", p(&input), "--candidates", &g, "-o", &indicator]);
    assert_one_line_error(&out, &["G_graph_indicator.txt", "candidate file", "would be overwritten"]);

    let queries = dir.write("q.txt", "okr-candidates 1 pool\nquery a 0\n0 *1\n");
    let node_labels = p(&dir.path("g/G_node_labels.txt")).to_string();
    let rank = |extra: &[&str]| {
        let mut args = vec!["rank", "-m", p(&model), "-i", p(&input), "--candidates-per-query", p(&queries)];
        args.extend_from_slice(extra);
        okr(&args)
    };
    assert_one_line_error(&rank(&["--pool", &g, "-o", &node_labels]), &["G_node_labels.txt", "pool file"]);
    let summary = p(&dir.path("s.json")).to_string();
    assert_one_line_error(&rank(&["--summary", &summary, "-o", &summary]), &["s.json", "summary"]);
    std::fs::write(&summary, "{}").unwrap();
    let same = format!("{}/./s.json", dir.0.path().display());
    assert_one_line_error(&rank(&["--summary", &summary, "-o", &same]), &["s.json"]);
    assert_eq!(std::fs::read_to_string(dir.path("g/G_A.txt")).unwrap(), before, "nothing was written");
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), "{}");
}

#[cfg(unix)]
#[test]
fn d3_read_only_outputs_are_refused_and_links_and_modes_kept() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let input = toy_test(&dir);
    let want = expected(&model, &input);
    let ro = dir.write("ro.txt", "keep");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = predict(&model, &input, p(&ro));
    assert_one_line_error(&out, &["cannot write", "ro.txt", "read-only (mode 0444)"]);
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep");
    // A model file too (the library's writer is the same).
    let out = okr(&["fit", "--train", p(&dir.path("train.arff")), "--label-count", "2", "-m", p(&ro)]);
    assert_one_line_error(&out, &["ro.txt", "read-only"]);

    let out_file = dir.write("p.txt", "old");
    std::fs::set_permissions(&out_file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let other = dir.path("hard-link.txt");
    std::fs::hard_link(&out_file, &other).unwrap();
    let ino = std::fs::metadata(&out_file).unwrap().ino();
    let out = predict(&model, &input, p(&out_file));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&other).unwrap(), want, "the hard link sees the new predictions");
    let meta = std::fs::metadata(&out_file).unwrap();
    assert_eq!((meta.ino(), meta.mode() & 0o777), (ino, 0o640));
}

#[test]
fn d4_stale_temporary_files_are_removed_on_the_next_write() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let input = toy_test(&dir);
    // What a writer killed by SIGKILL leaves: a full temporary file nobody holds.
    let stale = dir.write(".p.txt.k1LLed.tmp", &"1,0\n".repeat(1000));
    let unrelated = dir.write(".p.txt.bak", "x");
    let out = predict(&model, &input, p(&dir.path("p.txt")));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stale.exists(), "the stale temporary file is removed");
    assert!(unrelated.exists());
    let model_stale = dir.write(".m.okr.AAAAAA.tmp", "partial model");
    let _ = fit_toy(&dir);
    assert!(!model_stale.exists());
}

#[test]
fn p5_directories_as_outputs_are_one_clear_error() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let input = toy_test(&dir);
    let sub = dir.path("sub");
    std::fs::create_dir(&sub).unwrap();
    for out_path in
        [format!("{}/", sub.display()), p(&sub).to_string(), ".".to_string(), format!("{}/new/", sub.display())]
    {
        let out = predict(&model, &input, &out_path);
        assert_one_line_error(&out, &["it is a directory; give a file path"]);
        // (The test's own folder is a `.tmpXXXX`: only the rest may not name a temporary file.)
        let e = stderr(&out).replace(&dir.0.path().display().to_string(), "DIR");
        assert!(!e.contains(".tmp") && !e.contains("busy") && !e.contains("Not a directory"), "{e}");
    }
    let out = okr(&["fit", "--train", p(&dir.path("train.arff")), "--label-count", "2", "-m", p(&sub)]);
    assert_one_line_error(&out, &["it is a directory"]);
    assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 0);
}

/// Runs `okr` with `OKR_DATA_DIR=data`; fails the test instead of hanging.
fn okr_data(data: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(args)
        .env("OKR_DATA_DIR", data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("okr {args:?} hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn h1_a_fifo_in_place_of_a_data_file_does_not_hang() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path("emotions")).unwrap();
    let fifo = dir.path("emotions/emotions-train.arff");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo on this system
    }
    let out =
        okr_data(dir.0.path(), &["data", "fetch", "emotions", "--mirror", "http://127.0.0.1:9", "--timeout", "5"]);
    assert_one_line_error(&out, &["emotions-train.arff", "it is a FIFO, not a regular file"]);
    let list = okr_data(dir.0.path(), &["data", "list"]);
    let line = String::from_utf8_lossy(&list.stdout).lines().find(|l| l.starts_with("emotions")).unwrap().to_string();
    assert!(line.contains("missing"), "{line}");
}

#[test]
fn c5_a_huge_fetch_timeout_is_an_error_not_a_panic() {
    let dir = Dir::new();
    let out = okr_data(
        dir.0.path(),
        &["data", "fetch", "emotions", "--mirror", "http://127.0.0.1:9", "--timeout", "9223372036854775807"],
    );
    assert_one_line_error(&out, &["timeout", "9223372036854775807", "at most 604800 seconds"]);
}

#[cfg(unix)]
#[test]
fn s7_a_data_file_linked_to_dev_null_is_missing_for_fetch_and_list_alike() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path("emotions")).unwrap();
    std::os::unix::fs::symlink("/dev/null", dir.path("emotions/emotions-train.arff")).unwrap();
    let out =
        okr_data(dir.0.path(), &["data", "fetch", "emotions", "--mirror", "http://127.0.0.1:9", "--timeout", "5"]);
    assert_one_line_error(&out, &["emotions-train.arff", "a symlink to a character device, not a regular file"]);
    assert!(!stderr(&out).contains("verified"));
    let list = okr_data(dir.0.path(), &["data", "list"]);
    let line = String::from_utf8_lossy(&list.stdout).lines().find(|l| l.starts_with("emotions")).unwrap().to_string();
    assert!(line.contains("missing"), "{line}");
    assert!(std::fs::metadata("/dev/null").unwrap().len() == 0);
}

/// A `.npy` file of `header` (padded as NumPy pads it) and `data`.
fn npy(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn c4_npy_shapes_that_wrap_are_one_line_errors() {
    let dir = Dir::new();
    let _ = fit_toy(&dir);
    let train = dir.path("train.arff");
    // A valid Gram model of the 6 toy rows (the identity is PSD).
    let eye: Vec<u8> = (0..36).flat_map(|k| if k % 7 == 0 { 1.0f64 } else { 0.0 }.to_le_bytes()).collect();
    let good = dir.path("k.npy");
    std::fs::write(&good, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (6, 6), }", &eye)).unwrap();
    let gram_model = dir.path("g.okr");
    let fit = |gram: &Path, model: &Path| {
        okr(&["fit", "--train", p(&train), "--label-count", "2", "--input-gram", p(gram), "-m", p(model)])
    };
    let out = fit(&good, &gram_model);
    assert!(out.status.success(), "{}", stderr(&out));
    for shape in ["(4294967296, 4294967296)", "(9223372036854775808, 2)"] {
        let bad = dir.path("bad.npy");
        let bytes = npy(&format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}"), &[]);
        assert_eq!(bytes.len(), 128);
        std::fs::write(&bad, bytes).unwrap();
        assert_one_line_error(
            &fit(&bad, &dir.path("m2.okr")),
            &["bad.npy", "more values than the file's 0 data bytes hold"],
        );
        let out = okr(&["predict", "-m", p(&gram_model), "--input-gram-test", p(&bad)]);
        assert_one_line_error(&out, &["bad.npy", "shape"]);
    }
}
