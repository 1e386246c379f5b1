//! Fuzz targets: one function `fn(&[u8])` per reader, for `cargo xtask fuzz`
//! and for the replay of found inputs (`tests/fuzz_regressions.rs`).
//!
//! A target feeds the bytes to a reader through a scratch file (readers take
//! paths) and drops the result: any `Ok` or `Err` is a pass, a panic is a
//! crash, and an input that runs for more than 10 s is a hang. Where a reader
//! takes options, the first byte chooses them (so mutations explore them too)
//! and the rest is the file.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::readers::ranking::{read_label_ranking, read_ratings};
use crate::{CsvHeader, SvmlightOptions};

/// A fuzz target: runs one input, panics only on a bug.
pub type Target = fn(&[u8]);

/// Every reader target, by name.
pub const TARGETS: &[(&str, Target)] = &[
    ("arff", arff),
    ("svmlight", svmlight),
    ("xc", xc),
    ("csv", csv),
    ("candidates", candidates),
    ("anchors", anchors),
    ("sample-weights", sample_weights),
    ("ratings", ratings),
    ("label-ranking", label_ranking),
    ("tu", tu),
    ("usps", usps),
    ("mgf", mgf),
    ("msp", msp),
    ("npy", npy),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
}

thread_local! {
    static SCRATCH: RefCell<Option<tempfile::TempDir>> = const { RefCell::new(None) };
}

/// Path of `name` in this thread's scratch directory.
fn scratch(name: &str) -> PathBuf {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let dir = s.get_or_insert_with(|| tempfile::tempdir().expect("a scratch directory for fuzzing"));
        dir.path().join(name)
    })
}

/// Writes `bytes` to the scratch file `name` and returns its path.
fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch(name);
    std::fs::write(&path, bytes).expect("writing the scratch file");
    path
}

/// `(option byte, file bytes)`.
fn split_first(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&b, rest)) => (b, rest),
        None => (0, data),
    }
}

/// ARFF; the option byte is the label count (0-15).
pub fn arff(data: &[u8]) {
    let (opt, body) = split_first(data);
    let _ = crate::read_arff(file("f.arff", body), usize::from(opt % 16));
}

/// svmlight; option bits: 0-based, given feature count, given label count.
pub fn svmlight(data: &[u8]) {
    let (opt, body) = split_first(data);
    let mut opts = SvmlightOptions::new(opt & 1 == 1);
    if opt & 2 == 2 {
        opts = opts.n_features(usize::from(opt >> 4) + 1);
    }
    if opt & 4 == 4 {
        opts = opts.n_labels(usize::from(opt >> 4));
    }
    let _ = crate::read_svmlight(file("f.svm", body), &opts);
}

/// Extreme Classification format (no options).
pub fn xc(data: &[u8]) {
    let _ = crate::read_xc(file("f.xc", data));
}

/// CSV; option byte: label count (bits 0-3) and header mode (bits 4-5).
pub fn csv(data: &[u8]) {
    let (opt, body) = split_first(data);
    let header = match (opt >> 4) % 3 {
        0 => CsvHeader::Detect,
        1 => CsvHeader::Present,
        _ => CsvHeader::Absent,
    };
    let _ = crate::read_csv(file("f.csv", body), usize::from(opt % 16), header);
}

/// Candidate label sets; the option byte is the label count.
pub fn candidates(data: &[u8]) {
    let (opt, body) = split_first(data);
    let _ = crate::read_label_sets(file("c.txt", body), usize::from(opt));
}

/// Index lists (Nystroem anchors).
pub fn anchors(data: &[u8]) {
    let _ = crate::read_indices(file("a.txt", data));
}

/// Sample weights (`okr fit --sample-weights`).
pub fn sample_weights(data: &[u8]) {
    let _ = crate::read_sample_weights(file("w.txt", data));
}

/// Rating triples (jester, movielens, sushi).
pub fn ratings(data: &[u8]) {
    let _ = read_ratings(file("r.csv", data));
}

/// Label-ranking CSV.
pub fn label_ranking(data: &[u8]) {
    let _ = read_label_ranking(file("lr.csv", data));
}

/// TU graph data set: the input holds the files `A`, `graph_indicator`,
/// `graph_labels`, `node_labels`, `edge_labels` in that order, separated by
/// lines `===`; the last two may be missing.
pub fn tu(data: &[u8]) {
    const PARTS: [&str; 5] = ["A", "graph_indicator", "graph_labels", "node_labels", "edge_labels"];
    let dir = scratch("tu");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch TU directory");
    for (name, part) in PARTS.iter().zip(split_parts(data)) {
        std::fs::write(dir.join(format!("T_{name}.txt")), part).expect("writing a TU file");
    }
    let _ = crate::read_tu(Path::new(&dir), "T");
}

/// `data` split at lines `===`.
fn split_parts(data: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(i) = rest.windows(5).position(|w| w == b"\n===\n") {
        parts.push(&rest[..i + 1]);
        rest = &rest[i + 5..];
    }
    parts.push(rest);
    parts
}

/// USPS text digits.
pub fn usps(data: &[u8]) {
    let _ = crate::read_usps(file("usps.txt", data));
}

/// MGF spectral library.
pub fn mgf(data: &[u8]) {
    let _ = crate::read_mgf(file("f.mgf", data));
}

/// MSP spectral library.
pub fn msp(data: &[u8]) {
    let _ = crate::read_msp(file("f.msp", data));
}

/// A `.npy` Gram matrix (`--input-gram`): the header's shape is checked
/// against the file's size before anything is allocated.
pub fn npy(data: &[u8]) {
    let _ = okr_kernels::read_gram_npy(file("g.npy", data));
}

/// The bytes of a `.npy` file: the magic, version 1.0, `header` padded as
/// NumPy pads it, then `data`. Seeds for the [`npy`] target.
pub fn npy_bytes(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(h.len()).unwrap_or(u16::MAX).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

/// Joins TU files into one input of the [`tu`] target.
pub fn join_tu_parts(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        if k > 0 {
            out.extend_from_slice(b"===\n");
        }
        out.extend_from_slice(p);
        if !p.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_accept_valid_and_empty_inputs() {
        for (name, t) in TARGETS {
            t(b"");
            t(b"\x02garbage\n\x1b");
            assert!(target(name).is_some());
        }
        let tu_input = join_tu_parts(&[b"1, 2\n2, 1\n", b"1\n1\n", b"1\n"]);
        assert_eq!(split_parts(&tu_input).len(), 3);
        tu(&tu_input);
    }

    /// C4: headers whose shape product wraps, or exceeds the file, are
    /// errors before any allocation; a valid file reads.
    #[test]
    fn c4_npy_shapes_that_wrap_or_exceed_the_file_are_errors() {
        let f8 = |shape: &str| format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
        for shape in [
            "(4294967296, 4294967296)",
            "(9223372036854775808, 2)",
            "(18446744073709551615, 18446744073709551615)",
            "(3, 3)",
            "(0, 5)",
            "(99999999999999999999, 1)",
        ] {
            let bytes = npy_bytes(&f8(shape), &[0u8; 16]);
            let e = okr_kernels::read_gram_npy(file("c4.npy", &bytes)).unwrap_err().to_string();
            assert!(e.contains("shape"), "{shape}: {e}");
        }
        let ones: Vec<u8> = [1.0f64, 0.5, 0.5, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let k = okr_kernels::read_gram_npy(file("ok.npy", &npy_bytes(&f8("(2, 2)"), &ones))).unwrap();
        assert_eq!((k.nrows(), k.ncols(), k[(0, 1)]), (2, 2, 0.5));
        npy(&npy_bytes(&f8("(4294967296, 4294967296)"), &[]));
    }
}
