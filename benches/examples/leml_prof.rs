//! Times the pieces of one LEML Algorithm 2 Hv on bibtex (k = 64): the two
//! unfused sparse products, the fused `gram_mul`, the `S M` GEMM. Reads the
//! Mulan files from `OKR_DATA_DIR` (else the seeded stand-in) and reports the
//! median wall and the process CPU per call (RAYON_NUM_THREADS sets threads).
//! `cargo run --release -p okr-benches --example leml_prof`
use std::time::Instant;

use faer::Col;
use okr_estimators::leml::{FeatureMap, FullSquaredObjective, SparseDesign};
use okr_kernels::{CsrRows, Rows};
use okr_linalg::TronObjective;

fn cpu_ticks() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &s[s.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) * 10.0
}

fn time(name: &str, reps: usize, mut f: impl FnMut()) {
    for _ in 0..5 {
        f();
    }
    let mut v = Vec::new();
    let c0 = cpu_ticks();
    for _ in 0..reps {
        let t = Instant::now();
        f();
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = (cpu_ticks() - c0) / reps as f64;
    v.sort_by(f64::total_cmp);
    println!("{name:40} median {:.3} ms  min {:.3} ms  cpu {cpu:.3} ms", v[reps / 2], v[0]);
}

fn main() {
    let (train, _) = okr_eval::read_mulan("bibtex")
        .unwrap_or_else(|_| okr_eval::StandinPreset::from_name("bibtex").unwrap().spec().seed(0).generate().unwrap());
    let x = match &train.x {
        okr_eval::Features::Sparse(x) => x.clone(),
        okr_eval::Features::Dense(x) => CsrRows::from_dense(x.as_mat()).unwrap(),
    };
    let y = train.y;
    let design = SparseDesign::new(&x);
    let (n, d, l, k) = (x.n_rows(), x.n_features(), y.n_labels(), 64);
    println!(
        "n {n} d {d} L {l} nnz {} threads {}",
        design.nnz(),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_default()
    );
    let h: Vec<f64> = (0..l * k).map(|p| ((p * 7919) % 1000) as f64 / 1000.0).collect();
    let w = Col::from_fn(d * k, |p| ((p * 104729) % 1000) as f64 / 1e5);
    let s = Col::from_fn(d * k, |p| ((p * 31) % 17) as f64 - 8.0);
    let mut out = Col::zeros(d * k);
    let mut alg2 = FullSquaredObjective::new(&design, &y, &h, k, 1.0, None);
    alg2.fun(w.as_ref());
    alg2.grad(w.as_ref(), out.as_mut());
    let reps = 200;
    time("hv total", reps, || alg2.hv(s.as_ref(), out.as_mut()));
    let sv: Vec<f64> = s.iter().copied().collect();
    let mut b = vec![0.0; n * k];
    let mut o = vec![0.0; d * k];
    time("X S (mul)", reps, || design.mul(&sv, k, &mut b));
    time("X^T B (tmul)", reps, || design.tmul(&b, k, &mut o));
    let mut g = vec![0.0; d * k];
    time("gram_mul (fused)", reps, || design.gram_mul(&sv, k, &mut g));
    design.mul(&sv, k, &mut b);
    design.tmul(&b, k, &mut o);
    let err = g.iter().zip(&o).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let scale = o.iter().map(|a| a.abs()).fold(0.0, f64::max);
    println!("max |fused - unfused| {err:.3e} (scale {scale:.3e})");
    let m = faer::Mat::<f64>::from_fn(k, k, |i, j| (i + j) as f64);
    let mut sm = faer::Mat::<f64>::zeros(d, k);
    let smat = faer::Mat::<f64>::from_fn(d, k, |i, j| sv[i * k + j]);
    time("S M gemm", reps, || {
        faer::linalg::matmul::matmul(
            sm.as_mut(),
            faer::Accum::Replace,
            smat.as_ref(),
            m.as_ref(),
            1.0,
            faer::get_global_parallelism(),
        )
    });
    time("alloc+zero n*k", reps, || {
        let v = vec![0.0f64; n * k];
        std::hint::black_box(&v);
    });
    time("hv total again", reps, || alg2.hv(s.as_ref(), out.as_mut()));
}
