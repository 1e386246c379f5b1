//! `okr embed-outputs` and `okr decode` (issue 36): coordinates written as
//! CSV or .npy decode back to the outputs they came from, and bad
//! coordinates are one error line with exit status 2.

use super::{Dir, Output, assert_one_line_error, okr, p};

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Label sets with repeats, one per line.
const SETS: &str = "0,2\n1\n0,2\n3\n-\n1,3\n0\n1\n";

#[test]
fn coordinates_decode_to_their_outputs() {
    let dir = Dir::new();
    let y = dir.write("y.txt", SETS);
    let basis = dir.path("b.okrb");
    let coords = dir.path("z.csv");
    for (kernel, extra) in [("tanimoto", vec![]), ("gaussian", vec!["--output-gamma", "0.5"])] {
        let mut args = vec!["embed-outputs", "--outputs", p(&y), "--label-count", "4", "--output-kernel", kernel];
        args.extend(extra);
        args.extend(["--save-basis", p(&basis), "-o", p(&coords)]);
        ok(okr(&args));
        let text = std::fs::read_to_string(&coords).unwrap();
        assert!(text.starts_with("# okr-coordinates basis="), "{text}");
        assert_eq!(text.lines().count(), 9);
        // The exact coordinates of each output decode to it.
        let out = ok(okr(&["decode", "--coordinates", p(&coords), "--basis", p(&basis)]));
        assert_eq!(out, "0,2\n1\n0,2\n3\n-\n1,3\n0\n1\n", "{kernel}");
        // The same through .npy, and against given candidates with scores.
        let npy = dir.path("z.npy");
        args_with_output(&y, &basis, &npy, kernel);
        let cands = dir.write("c.txt", "1\n0,2\n");
        let out = ok(okr(&[
            "decode",
            "--coordinates",
            p(&npy),
            "--basis",
            p(&basis),
            "--candidates",
            p(&cands),
            "--top-k",
            "2",
            "--output-format",
            "json",
        ]));
        assert_eq!(out.lines().count(), 8);
        let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!(first["label_ids"], serde_json::json!([0, 2]), "{first}");
    }
}

fn args_with_output(y: &std::path::Path, basis: &std::path::Path, out: &std::path::Path, kernel: &str) {
    let mut args = vec!["embed-outputs", "--outputs", p(y), "--label-count", "4", "--output-kernel", kernel];
    if kernel == "gaussian" {
        args.extend(["--output-gamma", "0.5"]);
    }
    args.extend(["--save-basis", p(basis), "-o", p(out)]);
    ok(okr(&args));
    let bytes = std::fs::read(out).unwrap();
    assert!(
        bytes.starts_with(b"\x93NUMPY\x01\x00")
            && (10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize).is_multiple_of(64)
    );
}

#[test]
fn sketched_vector_basis_round_trip() {
    let dir = Dir::new();
    let rows: String = (0..40).map(|i| format!("{},{}\n", (i as f64 * 0.3).sin(), (i as f64 * 0.7).cos())).collect();
    let y = dir.write("v.txt", &rows);
    let (basis, coords) = (dir.path("b"), dir.path("z.csv"));
    for b in ["sketch", "nystroem"] {
        ok(okr(&[
            "embed-outputs",
            "--outputs",
            p(&y),
            "--output-kind",
            "vector",
            "--basis",
            b,
            "--n-components",
            "40",
            "--save-basis",
            p(&basis),
            "-o",
            p(&coords),
        ]));
        let out = ok(okr(&["decode", "--coordinates", p(&coords), "--basis", p(&basis), "--output-format", "json"]));
        for (t, line) in out.lines().enumerate() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["candidate_ids"], serde_json::json!([t]), "{b}: {line}");
        }
    }
}

#[test]
fn bad_coordinates_are_one_line_errors() {
    let dir = Dir::new();
    let y = dir.write("y.txt", SETS);
    let (basis, other, coords) = (dir.path("b"), dir.path("o"), dir.path("z.csv"));
    let embed = |b: &std::path::Path, out: &std::path::Path, kernel: &str| {
        ok(okr(&[
            "embed-outputs",
            "--outputs",
            p(&y),
            "--label-count",
            "4",
            "--output-kernel",
            kernel,
            "--save-basis",
            p(b),
            "-o",
            p(out),
        ]))
    };
    embed(&basis, &coords, "tanimoto");
    embed(&other, &dir.path("other.csv"), "linear");
    let r = std::fs::read_to_string(&coords).unwrap().lines().nth(1).unwrap().split(',').count();
    let wide = dir.write("wide.csv", &format!("{}\n", vec!["0.5"; r + 1].join(",")));
    let out = okr(&["decode", "--coordinates", p(&wide), "--basis", p(&basis)]);
    assert_one_line_error(&out, &["coordinate columns vs basis components", &format!("expected {r}")]);
    let nan = dir.write("nan.csv", &format!("{}\n{}\n", vec!["0.5"; r].join(","), vec!["NaN"; r].join(",")));
    let out = okr(&["decode", "--coordinates", p(&nan), "--basis", p(&basis)]);
    assert_one_line_error(&out, &["nan.csv"]);
    let out = okr(&["decode", "--coordinates", p(&coords), "--basis", p(&other)]);
    assert_one_line_error(&out, &["another output basis"]);
    let out = okr(&["decode", "--coordinates", p(&coords), "--basis", p(&y)]);
    assert_one_line_error(&out, &["not an okr output-basis file"]);
    let out = okr(&["embed-outputs", "--outputs", p(&y), "--save-basis", p(&basis)]);
    assert_one_line_error(&out, &["--label-count"]);
}
