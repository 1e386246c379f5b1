//! Issue 16's memory list under an address-space limit of 2 GB
//! (`prlimit --as=2000000000`): every input and flag that once allocated
//! without bound now ends in a one-line error with status 2, or succeeds
//! within the limit (a capped size, a bounded reader); none aborts.

use super::*;

/// Address-space limit of the runs, as in the acceptance.
const LIMIT: &str = "--as=2000000000";

/// `okr args` under [`LIMIT`]; `None` when `prlimit` is not installed.
fn okr_limited(args: &[&str]) -> Option<Output> {
    let out = Command::new("prlimit")
        .arg(LIMIT)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_okr"))
        .args(args)
        .env("RAYON_NUM_THREADS", "2")
        .output();
    match out {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("cannot run prlimit: {e}"),
    }
}

/// The run exited by itself (no signal, no abort) with 0, or with 2 and one
/// `okr: ` line on stderr.
fn assert_bounded(case: &str, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(2) => {
            let lines: Vec<&str> = stderr.trim_end().lines().filter(|l| !l.starts_with("okr: warning")).collect();
            assert_eq!(lines.len(), 1, "{case}: expected one error line, got {stderr}");
            assert!(lines[0].starts_with("okr: "), "{case}: {stderr}");
        }
        other => panic!("{case}: exit {other:?} (killed or aborted under {LIMIT}); stderr: {stderr}"),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn memory_list_under_a_2gb_address_space_limit() {
    if okr_limited(&["--version"]).is_none() {
        // util-linux is on every Linux machine okr's CI uses; say so loudly if not.
        eprintln!("prlimit not found: the memory list was not run");
        return;
    }
    let dir = Dir::new();
    let train = dir.write("train.arff", ARFF);
    let model = dir.path("m.okr");
    let t = p(&train);
    let m = p(&model);
    let fit = |extra: &[&'static str]| -> Vec<&str> {
        let mut args = vec!["fit", "--train", t, "--label-count", "2", "-m", m];
        args.extend_from_slice(extra);
        args
    };
    let wide = dir.write("wide.svm", "0 16777216:1\n1 3:1\n");
    let zero_based_wide = p(&wide);
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "svmlight naming feature 16777216",
            vec!["fit", "--train", zero_based_wide, "--format", "svmlight", "--label-count", "2", "-m", m],
        ),
        (
            "sparse-gaussian sketch of 1e8 rows",
            fit(&["--estimator", "siokr", "--input-sketch", "sparse-gaussian:100000000"]),
        ),
        ("gaussian sketch of 1e6 rows", fit(&["--estimator", "isokr", "--output-sketch", "gaussian:1000000"])),
        ("LEML rank 100000", fit(&["--estimator", "leml", "--rank", "100000"])),
        ("LEML max-iter 1e9", fit(&["--estimator", "leml", "--max-iter", "1000000000"])),
        ("trace-norm rank 100000", fit(&["--estimator", "trace-norm", "--rank", "100000"])),
        ("trace-norm gd rank 1000", fit(&["--estimator", "trace-norm", "--rank", "1000", "--solver", "gd"])),
        ("KAE with 100000 layers", fit(&["--estimator", "kae", "--layers", "100000"])),
        ("KAE code width 1e9", fit(&["--estimator", "kae", "--code-dim", "1000000000"])),
        ("Nystroem with 1e9 anchors", fit(&["--estimator", "nystroem", "--anchors", "1000000000"])),
        ("reader on /dev/zero", vec!["fit", "--train", "/dev/zero", "--format", "svmlight", "-m", m]),
        ("gen at scale 1e300", vec!["gen", "--preset", "bibtex", "--scale", "1e300", "-o", m]),
    ];
    for (case, args) in &cases {
        let out = okr_limited(args).expect("prlimit ran above");
        assert_bounded(case, &out);
    }
    // Prediction on a fitted model with an absurd budget or top-k.
    let model = fit_toy(&dir);
    let mp = p(&model);
    for (case, extra) in [
        ("predict --memory-budget 1e15 bytes", ["--memory-budget", "1000000000000000"]),
        ("predict --top-k 1e9", ["--top-k", "1000000000"]),
    ] {
        let mut args = vec!["predict", "-m", mp, "-i", t];
        args.extend_from_slice(&extra);
        let out = okr_limited(&args).expect("prlimit ran above");
        assert_bounded(case, &out);
    }
    // Inputs read whole or line by line that are not what they should be:
    // refused by their first bytes with the reason (before, a model file or a
    // Gram was read until memory ran out, and a candidate line aborted).
    let zeros_npy = dir.path("zeros.npy");
    std::os::unix::fs::symlink("/dev/zero", &zeros_npy).unwrap();
    let pool_file = dir.write("pool-mode.txt", "okr-candidates 1 pool\nquery q 0\n0\n");
    let (zeros_npy, pool_file) = (p(&zeros_npy), p(&pool_file));
    let fit_gram = ["fit", "--train", t, "--label-count", "2", "-m", m, "--input-gram"];
    let rank = ["rank", "-m", mp, "-i", t, "--label-count", "2", "--candidates-per-query"];
    for (case, args, reason) in [
        ("model file /dev/zero", vec!["predict", "-m", "/dev/zero", "-i", t], "not an okr model file"),
        ("text Gram /dev/zero", [&fit_gram[..], &["/dev/zero"]].concat(), "not a text file"),
        (".npy Gram of zeros", [&fit_gram[..], &[zeros_npy]].concat(), "not a .npy file"),
        ("candidates per query /dev/zero", [&rank[..], &["/dev/zero"]].concat(), "not a text file"),
        ("candidate pool /dev/zero", [&rank[..], &[pool_file, "--pool", "/dev/zero"]].concat(), "not a text file"),
    ] {
        let out = okr_limited(&args).expect("prlimit ran above");
        assert_bounded(case, &out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && stderr.contains(reason), "{case}: expected {reason:?}, got {stderr}");
    }
}
