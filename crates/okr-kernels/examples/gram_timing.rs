//! Times Gram blocks on the Bibtex data (sparse binary, 1836 features) and on
//! its densified copy.
//!
//! ```text
//! cargo run --release -p okr-kernels --example gram_timing -- [DATA_DIR] [REPEATS]
//! ```
//!
//! `DATA_DIR` holds `bibtex-train.arff` and `bibtex-test.arff` (default
//! `../shared/data/bibtex`, the shared data folder seen from the project
//! root). The ARFF parser here is a throwaway: the real reader is okr-eval's.

use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use okr_kernels::{CsrRows, DenseRows, Gaussian, Kernel, KernelSpec, LabelSets, Laplacian, Linear, Rows, Tanimoto};

/// Number of labels of Bibtex (the last attributes).
const N_LABELS: usize = 159;

/// Reads a sparse Mulan ARFF file into features and label sets.
fn read_sparse_arff(path: &str) -> (CsrRows, LabelSets) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let n_attr = text.lines().filter(|l| l.trim_start().to_ascii_lowercase().starts_with("@attribute")).count();
    let n_features = n_attr - N_LABELS;
    let mut rows = Vec::new();
    let mut sets = Vec::new();
    let data = text.lines().skip_while(|l| !l.trim().eq_ignore_ascii_case("@data")).skip(1);
    for line in data.map(str::trim).filter(|l| l.starts_with('{')) {
        let mut row = Vec::new();
        let mut set = Vec::new();
        for entry in line.trim_matches(|c| c == '{' || c == '}').split(',').filter(|e| !e.trim().is_empty()) {
            let mut it = entry.split_whitespace();
            let idx: usize = it.next().unwrap().parse().unwrap();
            let val: f64 = it.next().unwrap().parse().unwrap();
            if idx < n_features {
                row.push((idx, val));
            } else if val != 0.0 {
                set.push(idx - n_features);
            }
        }
        rows.push(row);
        sets.push(set);
    }
    (CsrRows::from_rows(n_features, rows).unwrap(), LabelSets::new(N_LABELS, sets).unwrap())
}

/// CPU time of this process so far (all threads), in seconds; 0 where the
/// platform does not report it.
fn cpu_seconds() -> f64 {
    okr_linalg::profile::process_cpu_seconds().unwrap_or(0.0)
}

/// Minimum and median wall time of `f` over `reps` runs, and the minimum CPU
/// time of a run, in seconds. On a busy shared machine the CPU time divided
/// by the thread count estimates the wall time on an idle one.
fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, f64, f64) {
    let mut wall = Vec::with_capacity(reps);
    let mut cpu = f64::INFINITY;
    for _ in 0..reps {
        let (c, s) = (cpu_seconds(), Instant::now());
        std::hint::black_box(f());
        wall.push(s.elapsed().as_secs_f64());
        cpu = cpu.min(cpu_seconds() - c);
    }
    wall.sort_by(f64::total_cmp);
    (wall[0], wall[wall.len() / 2], cpu)
}

fn report(what: &str, (min, med, cpu): (f64, f64, f64)) {
    println!("{what:<50} wall min {min:>7.4} s  median {med:>7.4} s   cpu {cpu:>7.4} s");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "../shared/data/bibtex".into());
    let reps: usize = args.next().map_or(5, |r| r.parse().expect("REPEATS must be an integer"));
    let filter = args.next().unwrap_or_default();
    let run = |name: &str| name.contains(filter.as_str());
    let (xtr, ytr) = read_sparse_arff(&format!("{dir}/bibtex-train.arff"));
    let (xte, _) = read_sparse_arff(&format!("{dir}/bibtex-test.arff"));
    let (n, m, d) = (xtr.n_rows(), xte.n_rows(), xtr.n_features());
    println!(
        "bibtex: train {n} x {d} (nnz {}, density {:.4}), test {m}; rayon threads {}",
        xtr.nnz(),
        xtr.nnz() as f64 / (n * d) as f64,
        rayon::current_num_threads()
    );
    let par = Par::rayon(0);
    let gauss = Gaussian::new(1.0 / d as f64).unwrap();
    let mut k = Mat::<f64>::zeros(n, n);
    let mut kb = Mat::<f64>::zeros(m, n);

    if run("sparse gaussian gram (train x train, alloc incl.)") {
        report("sparse gaussian gram (train x train, alloc incl.)", time(reps, || gauss.gram(&xtr)));
    }
    if run("sparse gaussian gram_into (train x train)") {
        report("sparse gaussian gram_into (train x train)", time(reps, || gauss.gram_into(&xtr, k.as_mut(), par)));
    }
    if run("sparse gaussian block (test x train)") {
        report(
            "sparse gaussian block (test x train)",
            time(reps, || gauss.gram_block_into(&xte, &xtr, kb.as_mut(), par)),
        );
    }
    if run("sparse linear gram_into") {
        report("sparse linear gram_into", time(reps, || Linear.gram_into(&xtr, k.as_mut(), par)));
    }
    if run("sparse tanimoto gram_into") {
        report("sparse tanimoto gram_into", time(reps, || Tanimoto.gram_into(&xtr, k.as_mut(), par)));
    }
    let lap = Laplacian::new(1.0 / d as f64).unwrap();
    if run("sparse laplacian gram_into") {
        report("sparse laplacian gram_into", time(reps, || lap.gram_into(&xtr, k.as_mut(), par)));
    }
    let scales: Vec<f64> = (0..d).map(|f| 0.5 + (f % 7) as f64 * 0.1).collect();
    let gw = gauss.clone().with_feature_scales(&scales).unwrap();
    if run("sparse gaussian + feature weights gram_into") {
        report("sparse gaussian + feature weights gram_into", time(reps, || gw.gram_into(&xtr, k.as_mut(), par)));
    }
    let spec = KernelSpec::from(gauss.clone());
    if run("label-set gaussian gram_into (KernelSpec)") {
        report("label-set gaussian gram_into (KernelSpec)", time(reps, || spec.gram_into(&ytr, k.as_mut(), par)));
    }
    if run("sparse gaussian gram_into, Par::Seq") {
        report(
            "sparse gaussian gram_into, Par::Seq",
            time(reps.min(3), || gauss.gram_into(&xtr, k.as_mut(), Par::Seq)),
        );
    }

    let xd = DenseRows::new(xtr.to_dense()).unwrap();
    let xdte = DenseRows::new(xte.to_dense()).unwrap();
    if run("dense GEMM X X^T (reference)") {
        let gemm = time(reps, || matmul(k.as_mut(), Accum::Replace, xd.as_mat(), xd.as_mat().transpose(), 1.0, par));
        report("dense GEMM X X^T (reference)", gemm);
        println!("  GEMM rate {:.0} GFLOP/s", 2.0 * (n * n * d) as f64 / gemm.0 / 1e9);
    }
    if run("dense gaussian gram_into (train x train)") {
        report("dense gaussian gram_into (train x train)", time(reps, || gauss.gram_into(&xd, k.as_mut(), par)));
    }
    if run("dense gaussian block (test x train)") {
        report(
            "dense gaussian block (test x train)",
            time(reps, || gauss.gram_block_into(&xdte, &xd, kb.as_mut(), par)),
        );
    }
    if run("dense gaussian + feature weights gram_into") {
        report("dense gaussian + feature weights gram_into", time(reps, || gw.gram_into(&xd, k.as_mut(), par)));
    }
    if run("dense laplacian gram_into") {
        report("dense laplacian gram_into", time(reps.min(3), || lap.gram_into(&xd, k.as_mut(), par)));
    }
}
