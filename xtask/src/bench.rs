//! `cargo xtask bench`: the machine's DGEMM rate, and IOKR on Bibtex timed
//! by phase, each GEMM-shaped phase as a fraction of that rate.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use okr_decode::CandidateDecoder;
use okr_estimators::Fit;
use okr_estimators::Iokr;
use okr_eval::{Features, MetricRecord, write_records};
use okr_kernels::{Gaussian, Kernel, LabelSets, Rows};
use okr_linalg::{Cholesky, JitterPolicy};

use crate::common::cv::MEDIAN_ROWS;
use crate::common::data::load_mulan_or_standin;

/// Best-of-`reps` wall time of `f`, in seconds.
fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..reps {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.unwrap())
}

/// DGEMM rate in GFLOP/s: best over sizes and repetitions of `C = A B`.
pub fn dgemm_rate() -> f64 {
    let mut best = 0.0f64;
    for n in [2048usize, 3072] {
        let a = Mat::from_fn(n, n, |i, j| ((i * 7 + j * 13) % 17) as f64 - 8.0);
        let b = Mat::from_fn(n, n, |i, j| ((i * 5 + j * 3) % 11) as f64 - 5.0);
        let mut c = Mat::<f64>::zeros(n, n);
        let (t, _) = best_of(3, || matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, Par::rayon(0)));
        best = best.max(2.0 * (n as f64).powi(3) / t / 1e9);
    }
    best
}

struct Phase {
    name: &'static str,
    seconds: f64,
    gflop: Option<f64>,
}

/// Runs the benchmark and writes `bench.{md,json}` into `out_dir`.
pub fn run(out_dir: &Path) -> Result<()> {
    let threads = rayon::current_num_threads();
    eprintln!("measuring DGEMM on {threads} threads ...");
    let gemm = dgemm_rate();
    let data = load_mulan_or_standin("bibtex", 0)?;
    let (Features::Sparse(x), Features::Sparse(xt)) = (&data.train.x, &data.test.x) else {
        anyhow::bail!("bibtex is expected to be a sparse ARFF file");
    };
    let y = &data.train.y;
    let (n, n_te) = (x.n_rows(), xt.n_rows());
    // Hyper-parameters: the quick run's Bibtex choice (c = 0.5, lambda = 1e-5).
    let gamma = 0.5 / okr_kernels::median_sq_distance(x, MEDIAN_ROWS);
    let lambda = 1e-5;
    let kx = Gaussian::new(gamma)?;
    let ky = Gaussian::from_sigma2(y.mean_cardinality())?;
    let (cand, _) = y.unique();
    let n_c = cand.n_rows();
    let (nf, ntf, ncf) = (n as f64, n_te as f64, n_c as f64);
    eprintln!("IOKR on {} (n = {n}, n_test = {n_te}, candidates = {n_c}) ...", data.name);

    // End to end, as a user runs it: fit, then decode the test set.
    let (t_fit, model) = best_of(3, || Iokr::params(kx.clone(), ky.clone()).lambda(lambda).fit(x, y));
    let model = model?;
    let (t_dec, decoded) = best_of(3, || CandidateDecoder::new().decode(&model, xt, &cand));
    let pred: LabelSets = cand.select(&decoded?.best());
    let f1 = okr_eval::f1_samples(&data.test.y, &pred)?;

    // By phase.
    let mut phases = Vec::new();
    let (t, k) = best_of(3, || kx.gram(x));
    phases.push(Phase { name: "Gram K_x (train x train, sparse)", seconds: t, gflop: None });
    let mut kr = k.clone();
    for i in 0..n {
        kr[(i, i)] += nf * lambda;
    }
    // Time the factorization alone: the copy it consumes is made outside the clock.
    let mut t = f64::INFINITY;
    let mut chol = None;
    for _ in 0..3 {
        let mut once = Some(kr.clone());
        let start = Instant::now();
        let (c, _) = Cholesky::factor_with(
            || once.take().unwrap_or_else(|| kr.clone()),
            JitterPolicy::with_lambda(lambda),
            Par::rayon(0),
        )?;
        t = t.min(start.elapsed().as_secs_f64());
        chol = Some(c);
    }
    let chol = chol.expect("three attempts");
    phases.push(Phase { name: "Cholesky of K_x + n lambda I", seconds: t, gflop: Some(nf.powi(3) / 3.0 / 1e9) });
    let (t, kt) = best_of(3, || kx.gram_block(x, xt));
    phases.push(Phase { name: "Gram K_x (train x test, sparse)", seconds: t, gflop: None });
    let (t, coef_t) = best_of(3, || chol.solve(kt.as_ref(), Par::rayon(0)));
    phases.push(Phase {
        name: "Cholesky solve, n_test right-hand sides",
        seconds: t,
        gflop: Some(2.0 * nf * nf * ntf / 1e9),
    });
    // Coefficients of samples with the same output are summed into one atom.
    let atoms = model.atoms();
    let n_atoms = atoms.n_rows();
    let mut coef = Mat::<f64>::zeros(n_te, n_atoms);
    for (i, &a) in model.atom_of_sample().iter().enumerate() {
        for t in 0..n_te {
            coef[(t, a)] += coef_t[(i, t)];
        }
    }
    let (t, g) = best_of(3, || ky.gram_block(atoms, &cand));
    phases.push(Phase { name: "Output Gram (atoms x candidates)", seconds: t, gflop: None });
    let norms = ky.diag(&cand);
    let (t, _) = best_of(3, || CandidateDecoder::new().decode_matrices(coef.as_ref(), g.as_ref(), &norms));
    phases.push(Phase {
        name: "Decode: scores GEMM over atoms + argmin scan",
        seconds: t,
        gflop: Some(2.0 * ntf * n_atoms as f64 * ncf / 1e9),
    });

    let mut md = String::from("# `cargo xtask bench`\n\n");
    md.push_str(&format!(
        "Machine: {threads} threads; faer DGEMM rate (best of n = 2048, 3072): **{gemm:.1} GFLOP/s**.\n\n\
         IOKR on {} (n = {n}, n_test = {n_te}, {n_c} candidates, {} atoms = distinct training label sets; \
         Gaussian kernels, gamma = {gamma:.3e}, lambda = {lambda:e}); test F1 = {:.2}.\n\n\
         **End to end after loading: fit {t_fit:.3} s + decode {t_dec:.3} s = {:.3} s** (best of 3).\n\n\
         | phase | seconds | GFLOP | GFLOP/s | fraction of DGEMM |\n|---|---|---|---|---|\n",
        data.name,
        model.atoms().n_rows(),
        f1 * 100.0,
        t_fit + t_dec
    ));
    let mut records = vec![
        MetricRecord::new("bench", "machine", "dgemm", "gflops", gemm).with_setting("threads", threads),
        MetricRecord::new("bench", &data.name, "iokr", "fit_seconds", t_fit).with_setting("threads", threads),
        MetricRecord::new("bench", &data.name, "iokr", "decode_seconds", t_dec).with_setting("threads", threads),
        MetricRecord::new("bench", &data.name, "iokr", "f1_samples", f1).with_stand_in(data.stand_in),
    ];
    for p in &phases {
        let (rate, frac) = match p.gflop {
            Some(g) => (format!("{:.1}", g / p.seconds), format!("{:.0}%", 100.0 * g / p.seconds / gemm)),
            None => ("-".into(), "-".into()),
        };
        md.push_str(&format!(
            "| {} | {:.3} | {} | {rate} | {frac} |\n",
            p.name,
            p.seconds,
            p.gflop.map_or("-".into(), |g| format!("{g:.1}"))
        ));
        let mut r = MetricRecord::new("bench", &data.name, "iokr", "phase_seconds", p.seconds)
            .with_setting("phase", p.name)
            .with_setting("threads", threads);
        if let Some(g) = p.gflop {
            r = r.with_setting("gflops", g / p.seconds).with_setting("fraction_of_dgemm", g / p.seconds / gemm);
        }
        records.push(r.with_stand_in(data.stand_in));
    }
    md.push_str(
        "\nSparse Gram phases are not GEMM-shaped (sparse products), so no rate is given for them. \
         Timings are wall-clock, best of 3, on whatever else the machine is doing.\n",
    );
    std::fs::create_dir_all(out_dir)?;
    write_records(out_dir.join("bench.json"), &records)?;
    std::fs::write(out_dir.join("bench.md"), &md)?;
    println!("{md}");
    Ok(())
}
