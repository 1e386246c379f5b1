//! `cargo xtask bench --scale [--quarter]`: the fits and decodes of
//! rr-scale and sketch-scale on the Bookmarks-shaped stand-in, by phase.
//!
//! Each estimator runs once inside [`okr_linalg::profile::collect`], so the
//! phases are the ones the library marks in its real code path (kernel
//! blocks, the streamed SYRK, whitening, the system's Cholesky, solves,
//! coefficient and score GEMMs, the folded candidates, the argmax scan), not
//! a re-enactment. The Nystroem KRR decode runs twice, coefficients first
//! (the order before issue 20's chain rule) and in the order `ChainOrder::Auto`
//! picks, so their ratio is measured in one run, then once more in that order
//! with `--precision f32` (its f32 score GEMM is rated against DGEMM too). Each
//! phase gets its wall and CPU seconds, its flop count where it is GEMM-like
//! and its rate as a fraction of faer's DGEMM rate measured in the same run;
//! each run its roofline fraction (flops / DGEMM rate / wall seconds).
//! Writes `docs/results/bench-scale{,-quarter}.{md,json}`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use okr_decode::{CandidateDecoder, ChainOrder, ChainPlan, Precision};
use okr_estimators::nystroem::Anchors;
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_estimators::{Fit, Nystroem, NystroemReducedRank, ParamGuard, SketchedIokr, SurrogateModel};
use okr_eval::MetricRecord;
use okr_kernels::{Gaussian, LabelSets, Rows, median_sq_distance};
use okr_linalg::profile::{self, PhaseTime};

use crate::common::cv::decode_f1_by;
use crate::common::data::SparseSplit;
use crate::common::process::MachineState;
use crate::common::report::write_outputs;
use crate::common::timing::timed;

/// One profiled call: its phases, wall and CPU seconds.
struct Profiled {
    what: String,
    phases: Vec<PhaseTime>,
    seconds: f64,
    cpu_seconds: Option<f64>,
}

fn profiled<T>(what: impl Into<String>, f: impl FnOnce() -> Result<T>) -> Result<(T, Profiled)> {
    let what = what.into();
    eprintln!("xtask: bench --scale: {what} ...");
    let ((value, phases), t) = timed(|| profile::collect(f));
    eprintln!("xtask: bench --scale: {what}: {:.1} s", t.wall);
    Ok((value?, Profiled { what, phases, seconds: t.wall, cpu_seconds: t.cpu }))
}

/// Flops of the sparse kernel blocks, which the library cannot count (they
/// depend on the rows): `2 nnz(rows) m`, the multiply-adds of the sparse
/// inner products against `m` dense-or-sparse partners.
fn set_kernel_flops(p: &mut Profiled, phase: &str, flops: f64) {
    if let Some(ph) = p.phases.iter_mut().find(|ph| ph.name == phase) {
        ph.flops = flops;
    }
}

/// The input kernel rows are computed once per candidate tile when the
/// chain runs candidates first, once otherwise.
fn kernel_passes(plan: &ChainPlan) -> f64 {
    if plan.order == ChainOrder::CandidatesFirst { plan.candidate_tiles as f64 } else { 1.0 }
}

/// Profiles `decoder` on `model` as the run `what`: its F1, its phases with
/// the sparse kernel rows counted at `2 nnz(x) m` per pass.
fn profiled_decode<X: Rows, M: SurrogateModel<X, LabelSets>>(
    what: String,
    decoder: CandidateDecoder,
    model: &M,
    (x, nnz): (&X, f64),
    (y, cand): (&LabelSets, &LabelSets),
    m: usize,
) -> Result<(f64, Profiled)> {
    let plan = decoder.plan(model, x.n_rows(), cand.n_rows());
    let (f1, mut p) = profiled(what, || decode_f1_by(decoder, model, x, y, cand))?;
    set_kernel_flops(&mut p, "input kernel blocks", 2.0 * nnz * m as f64 * kernel_passes(&plan));
    Ok((f1, p))
}

/// The GEMM-like phases (a flop count and a rate): everything counted.
fn counted_flops(p: &Profiled) -> f64 {
    p.phases.iter().map(|ph| ph.flops).sum()
}

/// Runs the bench and writes `bench-scale{suffix}.{md,json}` into `out_dir`.
pub fn run(out_dir: &Path, quarter: bool) -> Result<()> {
    let div = if quarter { 4 } else { 1 };
    let (n_train, n_test, m, subset, mx, my) = (60000 / div, 27856 / div, 15000 / div, 12000 / div, 2000, 100);
    let threads = rayon::current_num_threads();
    let before = MachineState::now();
    eprintln!("xtask: bench --scale: DGEMM {:.1} GFLOP/s on {threads} threads", before.dgemm_gflops);
    let data = SparseSplit::bookmarks(0, div)?;
    let (x, y, xt, yt, cand) = (&data.x, &data.y, &data.x_test, &data.y_test, &data.candidates);
    let dataset = &data.name;
    let ky = data.output_kernel()?;
    let median_sq = median_sq_distance(x, 2000);
    let (nnz, nnz_t) = (x.nnz() as f64, xt.nnz() as f64);
    let mut runs = Vec::new();
    let mut f1s = Vec::new();

    // rr-scale's Nystroem KRR (c = 0.5, lambda = 1e-4 chosen there) and its reduced-rank projection.
    let kx = Gaussian::new(0.5 / median_sq)?;
    let nys_params = Nystroem::params(kx.clone(), ky.clone()).anchors(Anchors::Uniform(m)).lambda(1e-4).seed(0);
    let (nys, mut p) = profiled(format!("Nystroem KRR fit (m = {m})"), || Ok(nys_params.fit(x, y)?))?;
    // Kernel blocks of the pass (n rows against m anchors) and K_mm (m x m).
    set_kernel_flops(&mut p, "kernel blocks", 2.0 * nnz * m as f64);
    set_kernel_flops(&mut p, "anchor Gram K_mm", 2.0 * nnz / n_train as f64 * (m * m) as f64);
    runs.push(p);
    // Decoded twice: the pre-issue-20 order and Auto's, in the same run.
    let auto = CandidateDecoder::new();
    let coef_first = auto.chain_order(ChainOrder::CoefficientsFirst);
    let what = "Nystroem KRR decode, coefficients first".to_string();
    let (f1, p) = profiled_decode(what, coef_first, &nys, (xt, nnz_t), (yt, cand), m)?;
    f1s.push((p.what.clone(), f1));
    runs.push(p);
    let nys_plan = auto.plan(&nys, xt.n_rows(), cand.n_rows());
    let nys_plan_atoms = nys.n_atoms();
    let folded = auto.chain_order(ChainOrder::CandidatesFirst).plan(&nys, xt.n_rows(), cand.n_rows());
    let (nys_cand_tiles, nys_cand_tile) = (folded.candidate_tiles, folded.candidate_tile);
    let what = format!("Nystroem KRR decode, auto ({})", nys_plan.order);
    let (f1, p) = profiled_decode(what, auto, &nys, (xt, nnz_t), (yt, cand), m)?;
    f1s.push((p.what.clone(), f1));
    runs.push(p);
    // The same decode with single-precision scores: where its time goes
    // beside the f64 run above (its score GEMM's rate reads against DGEMM).
    let single = auto.precision(Precision::F32);
    let single_plan = single.plan(&nys, xt.n_rows(), cand.n_rows());
    let what = format!(
        "Nystroem KRR decode, auto ({}, {} candidate tile(s)), --precision f32",
        single_plan.order, single_plan.candidate_tiles
    );
    let (f1, p) = profiled_decode(what, single, &nys, (xt, nnz_t), (yt, cand), m)?;
    f1s.push((p.what.clone(), f1));
    runs.push(p);
    let rr_params = NystroemReducedRank::params(kx.clone(), ky.clone())
        .rank(100)
        .lambda1(1e-4)
        .subset(Anchors::Uniform(subset))
        .seed(0)
        .check()?;
    let (rr, p) = profiled(format!("Nystroem reduced-rank projection (subset {subset}, p = 100)"), || {
        Ok(rr_params.fit_from_nystroem(&nys, x, y)?)
    })?;
    runs.push(p);
    drop(nys);
    let what = "Nystroem reduced-rank decode".to_string();
    let (f1, p) = profiled_decode(what, auto, &rr, (xt, nnz_t), (yt, cand), m)?;
    f1s.push((p.what.clone(), f1));
    runs.push(p);
    drop(rr);

    // sketch-scale's headline SISOKR (uniform 2000 / uniform 100, c = 1, lambda = 1e-6).
    let kx = Gaussian::new(1.0 / median_sq)?;
    let sk_params = SketchedIokr::params(kx, ky.clone())
        .lambda(1e-6)
        .input_sketch(Some(SketchSpec::new(SketchKind::Uniform, mx)))
        .output_sketch(Some(SketchSpec::new(SketchKind::Uniform, my)))
        .seed(0)
        .check()?;
    let (sk, mut p) = profiled(format!("SISOKR fit (m_x = {mx}, m_y = {my})"), || Ok(sk_params.fit(x, y)?))?;
    set_kernel_flops(&mut p, "kernel blocks", 2.0 * nnz * mx as f64);
    runs.push(p);
    let (f1, p) = profiled_decode("SISOKR decode".to_string(), auto, &sk, (xt, nnz_t), (yt, cand), mx)?;
    f1s.push((p.what.clone(), f1));
    runs.push(p);
    let after = MachineState::now();
    let gemm = before.dgemm_gflops.max(after.dgemm_gflops);

    let name = if quarter { "bench-scale-quarter" } else { "bench-scale" };
    let mut md = format!("# `cargo xtask bench --scale{}`\n\n", if quarter { " --quarter" } else { "" });
    writeln!(
        md,
        "{dataset}: {n_train} training / {n_test} test rows, {} features ({} nonzeros per row on average), \
         {} candidates (distinct training label sets). Nystroem KRR with m = {m} uniform anchors (Gaussian, \
         c = 0.5, lambda = 1e-4: rr-scale's choice) and its reduced-rank projection (subset {subset}, p = 100); \
         SISOKR uniform {mx} / uniform {my} (c = 1, lambda = 1e-6: sketch-scale's choice). {threads} threads.\n",
        x.n_features(),
        (nnz / n_train as f64).round(),
        cand.n_rows(),
    )?;
    writeln!(md, "Machine: {}.\n", before.describe(&after))?;
    writeln!(
        md,
        "Fractions are of the better DGEMM rate of the two ({gemm:.1} GFLOP/s). A phase's CPU / wall is its \
         parallel factor ({threads} at best). Roofline fraction of a run = its counted flops / DGEMM rate / \
         its wall seconds. Kernel blocks are counted at 2 nnz(rows) m flops (the sparse inner products; \
         the exponentials are not counted), output kernel blocks and scans not at all.\n"
    )?;
    md.push_str("| run | wall s | CPU s | CPU / wall | counted GFLOP | roofline fraction | F1 |\n|---|---|---|---|---|---|---|\n");
    let f1_of = |what: &str| f1s.iter().find(|(n, _)| n == what).map(|f| f.1);
    for r in &runs {
        let flops = counted_flops(r);
        writeln!(
            md,
            "| {} | {:.2} | {} | {} | {:.1} | {:.0}% | {} |",
            r.what,
            r.seconds,
            r.cpu_seconds.map_or("-".into(), |c| format!("{c:.2}")),
            r.cpu_seconds.map_or("-".into(), |c| format!("{:.2}", c / r.seconds)),
            flops / 1e9,
            100.0 * flops / (gemm * 1e9) / r.seconds,
            f1_of(&r.what).map_or("-".into(), |f| format!("{:.2}", 100.0 * f)),
        )?;
    }
    if let Some(w) = nys_plan.costs {
        writeln!(
            md,
            "\nNystroem KRR decode chain `K_x(x, X_e) M G` (e = {m} anchors, a = {} atoms, c = {} candidates): \
             {:.1} GFLOP coefficients first, {:.1} GFLOP candidates first with {} candidate tile(s) of {} \
             (kernel rows of every further tile counted at 2 d flops per entry, `okr_decode::ChainCosts`); \
             `ChainOrder::Auto` runs {}.",
            nys_plan_atoms,
            cand.n_rows(),
            w.coefficients_first / 1e9,
            w.candidates_first / 1e9,
            nys_cand_tiles,
            nys_cand_tile,
            nys_plan.order,
        )?;
    }
    let mut records =
        vec![MetricRecord::new("bench-scale", "machine", "dgemm", "gflops", gemm).with_setting("threads", threads)];
    for r in &runs {
        writeln!(md, "\n## {}\n", r.what)?;
        md.push_str("| phase | calls | wall s | share | CPU s | CPU / wall | GFLOP | GFLOP/s | fraction of DGEMM |\n");
        md.push_str("|---|---|---|---|---|---|---|---|---|\n");
        let mut rec = |metric: &str, value: f64, phase: &str| {
            records.push(
                MetricRecord::new("bench-scale", dataset, &r.what, metric, value)
                    .with_setting("phase", phase)
                    .with_setting("threads", threads)
                    .with_setting("dgemm_gflops", gemm)
                    .with_stand_in(true),
            );
        };
        rec("seconds", r.seconds, "total");
        if let Some(c) = r.cpu_seconds {
            rec("cpu_seconds", c, "total");
        }
        for ph in &r.phases {
            let counted = ph.flops > 0.0;
            writeln!(
                md,
                "| {} | {} | {:.3} | {:.0}% | {} | {} | {} | {} | {} |",
                ph.name,
                ph.calls,
                ph.seconds,
                100.0 * ph.seconds / r.seconds,
                ph.cpu_seconds.map_or("-".into(), |c| format!("{c:.2}")),
                ph.cpu_seconds.map_or("-".into(), |c| format!("{:.2}", c / ph.seconds.max(1e-12))),
                if counted { format!("{:.1}", ph.flops / 1e9) } else { "-".into() },
                if counted { format!("{:.1}", ph.gflops()) } else { "-".into() },
                if counted { format!("{:.0}%", 100.0 * ph.gflops() / gemm) } else { "-".into() },
            )?;
            rec("seconds", ph.seconds, ph.name);
            if counted {
                rec("fraction_of_dgemm", ph.gflops() / gemm, ph.name);
            }
        }
    }
    for (what, f1) in &f1s {
        records.push(MetricRecord::new("bench-scale", dataset, what, "f1_samples", *f1).with_stand_in(true));
    }
    md.push_str(
        "\nPhases nest (an outer decode phase contains the expansion's kernel blocks and GEMMs), so shares \
         may add up to more than 100%. Timings are one run each, wall-clock, on whatever else the machine \
         was doing (see the load above).\n",
    );
    write_outputs(out_dir, name, &records, &md)?;
    println!("{md}");
    Ok(())
}
