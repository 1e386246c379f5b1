//! `cargo xtask reproduce leml-speed`: Hessian-vector products and alternating
//! iterations timed on bibtex and delicious, the speed-up of whole fits over
//! 1 and 2 threads with the share of time in the Hessian-vector products, and
//! per call the speed-up of one gradient and one Hessian-vector product (the
//! two panels of the paper's Fig. 3).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use faer::{Col, ColRef};
use okr_estimators::Fit;
use okr_estimators::leml::{
    BilinearObjective, FullSquaredObjective, LemlParams, Loss, PartialLabels, SparseDesign, Targets,
};
use okr_eval::MetricRecord;
use okr_kernels::CsrRows;
use okr_linalg::TronObjective;

use super::experiments::{Data, evaluate, leml_params, load};
use crate::common::process::{MachineState, load_average, process_cpu_seconds};
use crate::common::report::write_outputs;
use crate::common::stats::median;

/// One measured speed line: what, data set, k, wall seconds, CPU seconds over
/// all threads, the target.
type SpeedLine = (String, String, usize, f64, Option<f64>, &'static str);

/// Median wall seconds of `runs` calls and CPU seconds per call (all threads).
fn time_calls(runs: usize, mut f: impl FnMut()) -> (f64, Option<f64>) {
    let cpu0 = process_cpu_seconds();
    let mut wall = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f();
        wall.push(t.elapsed().as_secs_f64());
    }
    let cpu = match (cpu0, process_cpu_seconds()) {
        (Some(a), Some(b)) => Some((b - a) / runs as f64),
        _ => None,
    };
    (median(wall), cpu)
}

/// `cargo xtask reproduce leml-speed`: the speed lines of the issue, on the
/// machine's cores (rayon and faer use all of them).
pub fn run_speed(out_dir: &Path, seed: u64) -> Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let threads = rayon::current_num_threads();
    let mut records = Vec::new();
    let mut md = format!(
        "# `cargo xtask reproduce leml-speed`\n\nWall-clock times on this machine with {threads} threads (rayon \
         and faer), release build, while other jobs may share the cores: the medians below are what one run \
         measured, not a controlled benchmark (see also `cargo bench -p okr-benches --bench leml_hv`). \
         `CPU s` is the process CPU time over all threads per call (from /proc/self/stat, 10 ms ticks): on \
         an idle machine the wall time with {threads} threads is at least CPU s / {threads}.\n\n\
         | what | data | k | wall s (median) | CPU s | target (wall) |\n|---|---|---|---|---|---|\n"
    );
    // Times read with the machine's state: DGEMM rate and load before and after.
    let before = MachineState::now();
    let bib = load("bibtex", seed)?;
    let k = 64;
    let design = SparseDesign::new(&bib.x);
    let h: Vec<f64> = (0..bib.n_labels() * k).map(|p| ((p * 7919) % 1000) as f64 / 1000.0).collect();
    let w = Col::from_fn(bib.x.n_features() * k, |p| ((p * 104729) % 1000) as f64 / 1e5);
    let s = Col::from_fn(bib.x.n_features() * k, |p| ((p * 31) % 17) as f64 - 8.0);
    let mut out = Col::zeros(w.nrows());
    let mut lines: Vec<SpeedLine> = Vec::new();
    {
        let mut alg2 = FullSquaredObjective::new(&design, &bib.y, &h, k, 1.0, None);
        alg2.fun(w.as_ref());
        alg2.grad(w.as_ref(), out.as_mut());
        let (wall, cpu) = time_calls(200, || alg2.hv(s.as_ref(), out.as_mut()));
        lines.push(("Hv, Algorithm 2 (squared loss, full labels)".into(), bib.name.clone(), k, wall, cpu, "<= 0.005"));
        let omega = PartialLabels::sample(&bib.y, 0.2, -1.0, seed)?;
        let mut alg1 = BilinearObjective::partial(&design, &h, k, &omega, Loss::Logistic, 1.0);
        alg1.fun(w.as_ref());
        alg1.grad(w.as_ref(), out.as_mut());
        let (wall, cpu) = time_calls(200, || alg1.hv(s.as_ref(), out.as_mut()));
        lines.push(("Hv, Algorithm 1 (logistic, 20 % observed)".into(), bib.name.clone(), k, wall, cpu, "-"));
    }
    let mut fitted = None;
    let (wall, cpu) =
        time_calls(1, || fitted = Some(leml_params(Loss::Squared, k, 30.0, seed).fit(&bib.x, Targets::Full(&bib.y))));
    let sc = evaluate(&fitted.take().expect("ran")?, &bib.x_test, &bib.y_test)?;
    lines.push((
        format!("10 alternating iterations, squared loss, lambda 30 (test P@1 {:.2})", sc.p1),
        bib.name.clone(),
        k,
        wall,
        cpu,
        "<= 3",
    ));
    let del = load("delicious", seed)?;
    let k_del = 393;
    let (wall, cpu) = time_calls(1, || {
        fitted = Some(leml_params(Loss::Squared, k_del, 30.0, seed).fit(&del.x, Targets::Full(&del.y)))
    });
    let sc = evaluate(&fitted.take().expect("ran")?, &del.x_test, &del.y_test)?;
    lines.push((
        format!("fit, 10 iterations, squared loss, lambda 30 (test P@1 {:.2})", sc.p1),
        del.name.clone(),
        k_del,
        wall,
        cpu,
        "<= 60",
    ));
    for (what, data, k, secs, cpu, target) in &lines {
        let cpu_txt = cpu.map_or("-".to_string(), |c| format!("{c:.4}"));
        let _ = writeln!(md, "| {what} | {data} | {k} | {secs:.4} | {cpu_txt} | {target} |");
        let stand_in = data.ends_with("-standin");
        let mut r = MetricRecord::new("leml-speed", data, "leml-sq", "fit_seconds", *secs)
            .with_setting("what", what.clone())
            .with_setting("k", *k)
            .with_setting("threads", threads)
            .with_stand_in(stand_in)
            .with_seconds(*secs);
        if let Some(c) = cpu {
            r = r.with_setting("cpu_seconds", *c);
        }
        records.push(r);
        eprintln!("xtask: {what} on {data}, k = {k}: {secs:.4} s wall, {cpu_txt} s CPU");
    }
    md.push_str(&speedup_md(&bib, &mut records, seed)?);
    md.push_str(&per_call_speedup_md(&bib, &mut records, seed)?);
    let after = MachineState::now();
    let _ = writeln!(md, "\nMachine during this run: {}.", before.describe(&after));
    for (when, state) in [("before", before), ("after", after)] {
        records.push(
            MetricRecord::new("leml-speed", &bib.name, "machine", "dgemm_gflops", state.dgemm_gflops)
                .with_setting("when", when)
                .with_stand_in(bib.stand_in),
        );
    }
    md.push_str("\nRecords: `leml-speed.json`.\n");
    write_outputs(out_dir, "leml-speed", &records, &md)
}

/// One timed fit of the speed-up curve: wall seconds and the seconds inside
/// the Hessian-vector products (the solver's own counters, W- and H-steps).
fn timed_fit(params: LemlParams, x: &CsrRows, targets: Targets<'_>) -> Result<(f64, f64)> {
    let t = Instant::now();
    let m = params.fit(x, targets)?;
    let wall = t.elapsed().as_secs_f64();
    let hv = m.history().iter().map(|h| h.w_hv_seconds + h.h_hv_seconds).sum();
    Ok((wall, hv))
}

/// Speed-up over 1 and 2 threads (the shape of the paper's Fig. 3: time and
/// speed-up against cores) with the fraction of the fit inside the
/// Hessian-vector products. Each fit runs in a rayon pool of that size (faer
/// takes its threads from the same pool).
fn speedup_md(bib: &Data, records: &mut Vec<MetricRecord>, seed: u64) -> Result<String> {
    let k = 64;
    let omega = PartialLabels::sample(&bib.y, 0.2, -1.0, seed)?;
    let max_threads = rayon::current_num_threads().max(1);
    let counts: Vec<usize> = [1, 2].into_iter().filter(|&t| t <= max_threads.max(2)).collect();
    let mut md = String::from(
        "\n## Speed-up over threads and the Hessian-vector share\n\nEach fit (10 alternating iterations) in a \
         rayon pool of 1 and of 2 threads; `Hv s` is the wall time inside the Hessian-vector products, summed over \
         the W- and H-steps by the solver's counters (`IterationLog::w_hv_seconds` / `h_hv_seconds`); speed-up = \
         wall(1 thread) / wall(t threads). The paper's Fig. 3 has the same shape up to 32 cores; here 2 cores \
         exist. `load` is the 1-minute load average before the fit: above the core count the times are upper \
         bounds and the speed-up is not meaningful.\n\n\
         | fit | data | k | threads | wall s | Hv s | Hv share | speed-up | load |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    type Case<'a> = (&'a str, &'a str, Loss, f64, Targets<'a>);
    let cases: [Case; 2] = [
        ("squared loss, full labels (Algorithm 2)", "leml-sq", Loss::Squared, 30.0, Targets::Full(&bib.y)),
        ("logistic, 20 % observed (Algorithm 1)", "leml-lr", Loss::Logistic, 3.0, Targets::Partial(&omega)),
    ];
    for (what, method, loss, lambda, targets) in cases {
        let mut base = None;
        for &threads in &counts {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
            let load = crate::common::process::load_average();
            let (wall, hv) = pool.install(|| timed_fit(leml_params(loss, k, lambda, seed), &bib.x, targets))?;
            let base_wall = *base.get_or_insert(wall);
            let speedup = base_wall / wall;
            let load_txt = load.map_or("-".to_string(), |l| format!("{l:.2}"));
            let _ = writeln!(
                md,
                "| {what}, lambda {lambda} | {} | {k} | {threads} | {wall:.2} | {hv:.2} | {:.0}% | {speedup:.2} | {load_txt} |",
                bib.name,
                100.0 * hv / wall
            );
            eprintln!("xtask: leml-speed {method} {threads} threads: {wall:.2} s, Hv {hv:.2} s");
            for (metric, v) in
                [("fit_seconds", wall), ("hv_seconds", hv), ("hv_share", hv / wall), ("speedup", speedup)]
            {
                let mut r = MetricRecord::new("leml-speed", &bib.name, method, metric, v)
                    .with_setting("what", format!("speed-up: {what}"))
                    .with_setting("k", k)
                    .with_setting("threads", threads)
                    .with_stand_in(bib.stand_in);
                if let Some(l) = load {
                    r = r.with_setting("load_1min", format!("{l:.2}"));
                }
                records.push(r);
            }
        }
    }
    Ok(md)
}

/// Per thread count: threads, gradient s, Hv s, 1-minute load before.
type OpTime = (usize, f64, f64, Option<f64>);

/// Calls per median in [`per_call_speedup_md`].
const CALLS: usize = 50;

/// Median wall seconds of one gradient (`fun` then `grad` at `w`, as TRON
/// calls them: the gradient needs the residuals `fun` leaves) and of one
/// Hessian-vector product, in a rayon pool of each of `counts` threads,
/// with the 1-minute load before each pool's calls.
fn time_ops<O: TronObjective + Send>(
    obj: &mut O,
    w: ColRef<'_, f64>,
    s: ColRef<'_, f64>,
    counts: &[usize],
) -> Result<Vec<OpTime>> {
    let mut g = Col::zeros(w.nrows());
    let mut out = Col::zeros(w.nrows());
    let mut rows = Vec::new();
    for &threads in counts {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
        let load = load_average();
        let (grad, hv) = pool.install(|| {
            // Warm-up; also sets the curvature the Hessian product reads.
            obj.fun(w);
            obj.grad(w, g.as_mut());
            let (grad, _) = time_calls(CALLS, || {
                obj.fun(w);
                obj.grad(w, g.as_mut());
            });
            let (hv, _) = time_calls(CALLS, || obj.hv(s, out.as_mut()));
            (grad, hv)
        });
        rows.push((threads, grad, hv, load));
    }
    Ok(rows)
}

/// The two panels of the paper's Fig. 3 (App. D.1) on 1 and 2 threads: the
/// speed-up of one gradient (3a) and of one Hessian-vector product (3b), per
/// call on bibtex at k = 64, for Algorithm 2 (squared loss, full labels) and
/// Algorithm 1 (logistic, 20 % observed).
fn per_call_speedup_md(bib: &Data, records: &mut Vec<MetricRecord>, seed: u64) -> Result<String> {
    let k = 64;
    let design = SparseDesign::new(&bib.x);
    let h: Vec<f64> = (0..bib.n_labels() * k).map(|p| ((p * 7919) % 1000) as f64 / 1000.0).collect();
    let w = Col::from_fn(bib.x.n_features() * k, |p| ((p * 104729) % 1000) as f64 / 1e5);
    let s = Col::from_fn(bib.x.n_features() * k, |p| ((p * 31) % 17) as f64 - 8.0);
    let omega = PartialLabels::sample(&bib.y, 0.2, -1.0, seed)?;
    let counts = [1, 2];
    let mut alg2 = FullSquaredObjective::new(&design, &bib.y, &h, k, 1.0, None);
    let mut alg1 = BilinearObjective::partial(&design, &h, k, &omega, Loss::Logistic, 1.0);
    let cases = [
        ("Algorithm 2 (squared loss, full labels)", "leml-sq", time_ops(&mut alg2, w.as_ref(), s.as_ref(), &counts)?),
        ("Algorithm 1 (logistic, 20 % observed)", "leml-lr", time_ops(&mut alg1, w.as_ref(), s.as_ref(), &counts)?),
    ];
    Ok(per_call_table(&bib.name, bib.stand_in, k, &cases, records))
}

/// One measured operation set: algorithm, method, [`OpTime`] per thread count.
type OpTimes<'a> = (&'a str, &'a str, Vec<OpTime>);

/// The per-call table of [`per_call_speedup_md`] and its records (seconds
/// and speed-up against the first thread count, per operation and thread
/// count).
fn per_call_table(name: &str, stand_in: bool, k: usize, cases: &[OpTimes], records: &mut Vec<MetricRecord>) -> String {
    let mut md = format!(
        "\n## Per call: gradient and Hessian-vector product over threads (Fig. 3a, 3b)\n\nThe operations the \
         paper's Fig. 3 times, each alone, median of {CALLS} calls in a rayon pool of 1 and of 2 threads, at a \
         fixed W and H (k = {k}, lambda 1). `gradient` is the function value then the gradient at W (TRON's \
         `fun` + `grad`: the gradient needs the residuals of the function value), `Hv` one Hessian-vector \
         product. speed-up = wall(1 thread) / wall(t threads); `load` is the 1-minute load average before the \
         calls of that pool (above the core count, times are upper bounds and the speed-up is not meaningful).\n\n\
         | operation | algorithm | data | k | threads | wall s (median) | speed-up | load |\n\
         |---|---|---|---|---|---|---|---|\n"
    );
    for (op, col) in [("gradient", 1), ("Hv", 2)] {
        for (alg, method, rows) in cases {
            let base = rows.first().map_or(f64::NAN, |r| if col == 1 { r.1 } else { r.2 });
            for &(threads, grad, hv, load) in rows {
                let wall = if col == 1 { grad } else { hv };
                let speedup = base / wall;
                let load_txt = load.map_or("-".to_string(), |l| format!("{l:.2}"));
                let _ = writeln!(
                    md,
                    "| {op} | {alg} | {} | {k} | {threads} | {wall:.4} | {speedup:.2} | {load_txt} |",
                    name
                );
                let metric = if col == 1 { "gradient" } else { "hv" };
                for (m, v) in [(format!("{metric}_seconds_per_call"), wall), (format!("{metric}_speedup"), speedup)] {
                    let mut r = MetricRecord::new("leml-speed", name, *method, &m, v)
                        .with_setting("what", format!("per call: {op}, {alg}"))
                        .with_setting("k", k)
                        .with_setting("threads", threads)
                        .with_setting("calls", CALLS)
                        .with_stand_in(stand_in);
                    if let Some(l) = load {
                        r = r.with_setting("load_1min", format!("{l:.2}"));
                    }
                    records.push(r);
                }
            }
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_call_table_speedups_and_records() {
        let cases: Vec<OpTimes> =
            vec![("Algorithm 2", "leml-sq", vec![(1, 0.010, 0.004, Some(1.25)), (2, 0.008, 0.0025, None)])];
        let mut recs = Vec::new();
        let md = per_call_table("bibtex", false, 64, &cases, &mut recs);
        // Speed-ups: gradient 0.010 / 0.008 = 1.25, Hv 0.004 / 0.0025 = 1.60.
        assert!(md.contains("| gradient | Algorithm 2 | bibtex | 64 | 1 | 0.0100 | 1.00 | 1.25 |"), "{md}");
        assert!(md.contains("| gradient | Algorithm 2 | bibtex | 64 | 2 | 0.0080 | 1.25 | - |"), "{md}");
        assert!(md.contains("| Hv | Algorithm 2 | bibtex | 64 | 1 | 0.0040 | 1.00 | 1.25 |"), "{md}");
        assert!(md.contains("| Hv | Algorithm 2 | bibtex | 64 | 2 | 0.0025 | 1.60 | - |"), "{md}");
        assert!(md.find("| gradient |") < md.find("| Hv |"), "Fig. 3a before 3b");
        assert_eq!(recs.len(), 8, "seconds and speed-up per operation and thread count");
        let get = |metric: &str, threads: u64| {
            recs.iter().find(|r| r.metric == metric && r.setting["threads"].as_u64() == Some(threads)).expect("record")
        };
        assert!((get("hv_speedup", 2).value - 1.6).abs() < 1e-12);
        assert!((get("gradient_speedup", 2).value - 1.25).abs() < 1e-12);
        assert_eq!(get("gradient_seconds_per_call", 1).value, 0.010);
        assert_eq!(get("hv_seconds_per_call", 1).setting["load_1min"], "1.25");
        assert!(get("hv_seconds_per_call", 2).setting.get("load_1min").is_none());
        assert_eq!(get("hv_speedup", 1).method, "leml-sq");
    }
}
