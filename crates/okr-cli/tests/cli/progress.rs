//! Progress bars (issue 37): drawn on standard error when it is a terminal
//! (a pseudo-terminal from `script`), never in redirected output, and not
//! with `--quiet`.

use std::process::Command;

use super::{Dir, okr, p};

/// `okr ARGS` on a pseudo-terminal (util-linux `script`): everything the
/// terminal received, stdout and stderr together. `None` without `script`.
fn on_terminal(args: &[&str]) -> Option<String> {
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_okr"))
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let out = Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .ok()?;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn bars_are_drawn_on_a_terminal_only() {
    let dir = Dir::new();
    let out = okr(&["gen", "--preset", "emotions", "--scale", "0.25", "--seed", "3", "-o", p(&dir.path("d"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let train = dir.path("d/emotions-standin-train.arff");
    let model = dir.path("m.okr");
    let fit = [
        "fit",
        "--train",
        p(&train),
        "--label-count",
        "6",
        "--estimator",
        "trace-norm",
        "--max-iter",
        "400",
        "-o",
        p(&model),
    ];
    let Some(tty) = on_terminal(&fit) else {
        eprintln!("skipped: no `script` command for a pseudo-terminal");
        return;
    };
    assert!(tty.contains("trace-norm gd"), "no bar on the terminal: {tty:?}");
    assert!(tty.contains("/400"), "the bar shows the iteration budget: {tty:?}");
    // Redirected: no bar, no escape sequence.
    let out = okr(&fit);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("trace-norm gd") && !stderr.contains('\u{1b}'), "{stderr:?}");
    // --quiet: no bar on the terminal either.
    let mut quiet = fit.to_vec();
    quiet.insert(1, "--quiet");
    let tty = on_terminal(&quiet).unwrap();
    assert!(!tty.contains("trace-norm gd"), "a bar despite --quiet: {tty:?}");
}
