//! `cargo xtask bench`: the machine's DGEMM rate, and IOKR on Bibtex timed
//! by phase, each GEMM-shaped phase as a fraction of that rate.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use faer::{Mat, Par};
use okr_decode::CandidateDecoder;
use okr_estimators::Fit;
use okr_estimators::Iokr;
use okr_eval::MetricRecord;
use okr_kernels::{Gaussian, Kernel, LabelSets, Rows};
use okr_linalg::{Cholesky, JitterPolicy};

use crate::common::cv::MEDIAN_ROWS;
use crate::common::data::SparseSplit;
use crate::common::process::gemm_rate;
use crate::common::report::write_outputs;
use crate::common::timing::{Timed, best_of};

struct Phase {
    name: &'static str,
    seconds: f64,
    gflop: Option<f64>,
}

/// Runs the benchmark and writes `bench.{md,json}` into `out_dir`.
pub fn run(out_dir: &Path) -> Result<()> {
    let threads = rayon::current_num_threads();
    eprintln!("measuring DGEMM on {threads} threads ...");
    let gemm = gemm_rate::<f64>();
    let data = SparseSplit::mulan("bibtex", 0)?;
    let (x, y, xt, cand) = (&data.x, &data.y, &data.x_test, &data.candidates);
    let (n, n_te) = (x.n_rows(), xt.n_rows());
    // Hyper-parameters: the quick run's Bibtex choice (c = 0.5, lambda = 1e-5).
    let gamma = 0.5 / okr_kernels::median_sq_distance(x, MEDIAN_ROWS);
    let lambda = 1e-5;
    let kx = Gaussian::new(gamma)?;
    let ky = data.output_kernel()?;
    let n_c = cand.n_rows();
    let (nf, ntf, ncf) = (n as f64, n_te as f64, n_c as f64);
    eprintln!("IOKR on {} (n = {n}, n_test = {n_te}, candidates = {n_c}) ...", data.name);

    // End to end, as a user runs it: fit, then decode the test set.
    let (Timed { wall: t_fit, .. }, model) =
        best_of(3, || Iokr::params(kx.clone(), ky.clone()).lambda(lambda).fit(x, y));
    let model = model?;
    let (Timed { wall: t_dec, .. }, decoded) = best_of(3, || CandidateDecoder::new().decode(&model, xt, cand));
    let pred: LabelSets = cand.select(&decoded?.best());
    let f1 = okr_eval::f1_samples(&data.y_test, &pred)?;

    // By phase.
    let mut phases = Vec::new();
    let (Timed { wall: t, .. }, k) = best_of(3, || kx.gram(x));
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
    let (Timed { wall: t, .. }, kt) = best_of(3, || kx.gram_block(x, xt));
    phases.push(Phase { name: "Gram K_x (train x test, sparse)", seconds: t, gflop: None });
    let (Timed { wall: t, .. }, coef_t) = best_of(3, || chol.solve(kt.as_ref(), Par::rayon(0)));
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
    let (Timed { wall: t, .. }, g) = best_of(3, || ky.gram_block(atoms, cand));
    phases.push(Phase { name: "Output Gram (atoms x candidates)", seconds: t, gflop: None });
    let norms = ky.diag(cand);
    let (Timed { wall: t, .. }, _) =
        best_of(3, || CandidateDecoder::new().decode_matrices(coef.as_ref(), g.as_ref(), &norms));
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
    write_outputs(out_dir, "bench", &records, &md)?;
    println!("{md}");
    Ok(())
}
