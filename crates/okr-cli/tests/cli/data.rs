//! `okr data fetch` against a local HTTP server on 127.0.0.1: a good file, a
//! corrupt one, an unreachable host and an interrupted transfer; never a
//! partial file. And `--dataset NAME`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use super::{Dir, assert_one_line_error, p};

/// The project's data directory (the files the catalog's checksums are of):
/// `OKR_DATA_DIR` when set (a worktree sits elsewhere than the main
/// checkout), else `../shared/data` beside the workspace.
fn shared_data() -> PathBuf {
    match std::env::var_os("OKR_DATA_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// Serves `GET /<mode>/<path>` from `root` for at most `max` connections:
/// `good` as is, `corrupt` with one byte changed, `cut` with the full
/// Content-Length but half the body before closing.
fn serve(root: PathBuf, max: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max) {
            let Ok(mut stream) = stream else { continue };
            stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            // Skip the headers.
            let mut h = String::new();
            while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                h.clear();
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let mut parts = path.trim_start_matches('/').splitn(2, '/');
            let (mode, rel) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let Ok(mut body) = std::fs::read(root.join(rel)) else {
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                continue;
            };
            let len = body.len();
            match mode {
                "corrupt" => body[len / 2] ^= 1,
                "cut" => body.truncate(len / 2),
                _ => {}
            }
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
            let _ = stream.flush();
        }
    });
    format!("http://{addr}")
}

fn fetch(data_dir: &Path, mirror: &str) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(["data", "fetch", "emotions", "--mirror", mirror, "--timeout", "20"])
        .env("OKR_DATA_DIR", data_dir)
        .output()
        .unwrap()
}

/// Every file under `dir`, temporary ones included.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() { out.extend(files(&path)) } else { out.push(path) }
        }
    }
    out
}

#[test]
fn fetch_verifies_checksums_and_leaves_no_partial_file() {
    let source = shared_data().join("emotions");
    assert!(source.is_dir(), "the test serves the project's data directory: {}", source.display());
    let server = serve(shared_data(), 12);
    for (mode, needles) in [
        ("corrupt", &["refused", "SHA-256 mismatch: expected", "was not written"][..]),
        ("cut", &["emotions", "was not written"][..]),
    ] {
        let dir = Dir::new();
        let out = fetch(dir.0.path(), &format!("{server}/{mode}"));
        assert_one_line_error(&out, needles);
        assert!(files(dir.0.path()).is_empty(), "{mode}: {:?}", files(dir.0.path()));
    }
    // Nothing listens on a port just released.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = Dir::new();
    let out = fetch(dir.0.path(), &format!("http://{closed}"));
    assert_one_line_error(&out, &["cannot download", "emotions"]);
    assert!(files(dir.0.path()).is_empty());
    // A good mirror: every file, byte for byte; a second fetch keeps them.
    let dir = Dir::new();
    let out = fetch(dir.0.path(), &format!("{server}/good"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for name in ["emotions-train.arff", "emotions-test.arff", "emotions.xml"] {
        let got = std::fs::read(dir.path(&format!("emotions/{name}"))).unwrap();
        assert_eq!(got, std::fs::read(source.join(name)).unwrap(), "{name}");
    }
    assert_eq!(files(dir.0.path()).len(), 3);
    let out = fetch(dir.0.path(), "http://127.0.0.1:9");
    assert!(out.status.success(), "present files are not downloaded again");
    assert!(String::from_utf8_lossy(&out.stderr).contains("already present, SHA-256 verified"));
}

#[test]
fn data_flags_bad_values_are_one_line_errors() {
    let dir = Dir::new();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_okr"))
            .args(args)
            .env("OKR_DATA_DIR", dir.0.path())
            .env_remove("OKR_DATA_MIRROR")
            .output()
            .unwrap()
    };
    assert_one_line_error(
        &run(&["data", "fetch", "mnist", "--mirror", "http://127.0.0.1:9"]),
        &["unknown data set 'mnist'", "emotions"],
    );
    assert_one_line_error(&run(&["data", "fetch", "emotions"]), &["no download source", "--mirror"]);
    assert_one_line_error(&run(&["data", "fetch", "emotions", "--mirror", "ftp://x"]), &["--mirror", "http://"]);
    assert_one_line_error(
        &run(&["data", "fetch", "emotions", "--mirror", "http://127.0.0.1:9", "--timeout", "0"]),
        &["--timeout"],
    );
    assert_one_line_error(
        &run(&["fit", "--dataset", "emotions", "-m", p(&dir.path("m"))]),
        &["--dataset emotions", "okr data fetch emotions"],
    );
    assert_one_line_error(
        &run(&["fit", "--dataset", "usps", "-m", p(&dir.path("m"))]),
        &["not a multi-label data set"],
    );
    assert_one_line_error(&run(&["fit", "-m", p(&dir.path("m"))]), &["--train"]);
    assert_one_line_error(&run(&["eval", "-m", p(&dir.path("m"))]), &["--input"]);
    let out = run(&["data", "list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("emotions") && text.contains("missing") && text.contains("6 labels"), "{text}");
}

#[test]
fn dataset_flag_resolves_files_and_label_count() {
    let data = shared_data();
    let dir = Dir::new();
    let model = dir.path("m.okr");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(["fit", "--dataset", "emotions", "--lambda", "1e-3", "-m", p(&model)])
        .env("OKR_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(["eval", "-m", p(&model), "--dataset", "emotions"])
        .env("OKR_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["n_test"].as_u64(), v["n_labels"].as_u64()), (Some(202), Some(6)));
}

/// `okr data list` names the data directory in use and the rule that chose
/// it (issue 37): `OKR_DATA_DIR` when set, else (here, a binary built in a
/// checkout that has its data) the checkout's `shared/data` or a per-user
/// data home, never silently.
#[test]
fn data_list_says_which_directory_and_why() {
    let dir = Dir::new();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(["data", "list"])
        .env("OKR_DATA_DIR", dir.path("mine"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let first = stdout.lines().next().unwrap();
    assert_eq!(first, format!("data directory: {} (set by OKR_DATA_DIR)", dir.path("mine").display()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_okr"))
        .args(["data", "list"])
        .env_remove("OKR_DATA_DIR")
        .env("XDG_DATA_HOME", dir.path("xdg"))
        .current_dir(dir.path(""))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap();
    let xdg = format!("data directory: {} (per-user data home $XDG_DATA_HOME/okr", dir.path("xdg/okr").display());
    assert!(first.contains("beside the checkout okr was built from") || first.starts_with(&xdg), "{first}");
}
