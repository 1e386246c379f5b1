//! `cargo xtask bench --precision`: f32 against f64 decoding
//! ([`okr_decode::Precision`]) on Bibtex (IOKR, the `bench` setting, and
//! Nystroem KRR with a quarter of the training rows as anchors) and on the
//! Bookmarks-shaped stand-in (Nystroem KRR, the rr-scale setting; a quarter
//! of every size unless `--full`): decode time (wall and CPU, best of a few), the
//! fraction of identical decisions, F1 both ways, and every differing
//! decision set beside its f64 top-2 gap and the documented margin
//! ([`okr_decode::f32_margin`]). Writes `bench-f32.{md,json}`.

use std::path::Path;

use anyhow::Result;
use faer::{Mat, Par};
use okr_decode::{CandidateDecoder, ChainOrder, Decoded, Precision, f32_margin};
use okr_estimators::nystroem::Anchors;
use okr_estimators::{Fit, Iokr, Nystroem, SurrogateModel};
use okr_eval::{MetricRecord, f1_samples};
use okr_kernels::{Gaussian, LabelSets, Rows, median_sq_distance};

use crate::common::cv::MEDIAN_ROWS;
use crate::common::data::SparseSplit;
use crate::common::process::{gemm_rate, load_average};
use crate::common::report::write_outputs;
use crate::common::timing::best_of;

/// How the loads read: above the thread count other jobs shared the cores.
fn quietness(before: Option<f64>, after: Option<f64>, threads: usize) -> &'static str {
    match (before, after) {
        (Some(a), Some(b)) if a.max(b) <= threads as f64 + 0.5 => "**Taken on a quiet machine**",
        _ => "**Taken on a shared machine** (the cores were shared with other jobs: the times are upper bounds)",
    }
}

/// The order [`ChainOrder::Auto`] runs for `model`, as printed.
fn order_of<X: Rows, M: SurrogateModel<X, LabelSets>>(model: &M, n_test: usize, n_candidates: usize) -> ChainOrder {
    CandidateDecoder::new().plan(model, n_test, n_candidates).order
}

/// One data set's comparison.
struct Row {
    dataset: String,
    method: &'static str,
    /// The order both precisions decoded in ([`ChainOrder::Auto`]'s choice).
    order: ChainOrder,
    n_test: usize,
    n_candidates: usize,
    n_atoms: usize,
    wall: [f64; 2],
    cpu: [f64; 2],
    /// Scoring alone (`decode_matrices`), f64 then f32.
    score_wall: [f64; 2],
    score_cpu: [f64; 2],
    f1: [f64; 2],
    same: usize,
    /// (test row, f64 top-2 gap, margin) of every differing decision.
    differ: Vec<(usize, f64, f64)>,
    load: Option<f64>,
}

/// Decodes with both precisions and compares.
fn compare<X: Rows, M: SurrogateModel<X, LabelSets>>(
    dataset: &str,
    method: &'static str,
    model: &M,
    x: &X,
    y: &LabelSets,
    cand: &LabelSets,
    reps: usize,
) -> Result<Row> {
    let load = load_average();
    // The order a user gets (`ChainOrder::Auto`) for the end-to-end times;
    // the scoring-only columns and the margins below use the coefficients
    // and atom products, the factors of the coefficients-first score GEMM.
    let order = order_of(model, x.n_rows(), cand.n_rows());
    let dec = CandidateDecoder::new();
    let mut wall = [0.0; 2];
    let mut cpu = [0.0; 2];
    let mut decoded: Vec<Decoded> = Vec::new();
    for (i, p) in [Precision::F64, Precision::F32].into_iter().enumerate() {
        let (t, d) = best_of(reps, || dec.precision(p).decode(model, x, cand));
        let (w, c, d) = (t.wall, t.cpu.unwrap_or(f64::NAN), d?);
        eprintln!("xtask: {dataset} {method} decode {p} ({order}): {w:.3} s wall, {c:.2} s CPU");
        (wall[i], cpu[i]) = (w, c);
        decoded.push(d);
    }
    // The scoring alone (score GEMM + scan, with the f32 conversions and
    // re-scoring) on precomputed coefficients and atom products.
    let dec = dec.chain_order(ChainOrder::CoefficientsFirst);
    let coef = model.coefficients(x)?;
    let mut g = Mat::zeros(model.n_atoms(), cand.n_rows());
    model.atom_products_into(cand, g.as_mut(), Par::rayon(0))?;
    let norms = model.output_sq_norms(cand);
    let mut score_wall = [0.0; 2];
    let mut score_cpu = [0.0; 2];
    for (i, p) in [Precision::F64, Precision::F32].into_iter().enumerate() {
        let (t, s) = best_of(reps, || dec.precision(p).decode_matrices(coef.as_ref(), g.as_ref(), &norms));
        let (w, c) = (t.wall, t.cpu.unwrap_or(f64::NAN));
        s?;
        eprintln!("xtask: {dataset} {method} scoring only {p}: {w:.3} s wall, {c:.2} s CPU");
        (score_wall[i], score_cpu[i]) = (w, c);
    }
    let (b64, b32) = (decoded[0].best(), decoded[1].best());
    let f1 = [f1_samples(y, &cand.select(&b64))?, f1_samples(y, &cand.select(&b32))?];
    let same = b64.iter().zip(&b32).filter(|(a, b)| a == b).count();
    let rows: Vec<usize> = (0..b64.len()).filter(|&t| b64[t] != b32[t]).collect();
    let mut differ = Vec::new();
    if !rows.is_empty() {
        // The f64 top-2 gap and the margin of the differing rows.
        let coef = Mat::from_fn(rows.len(), coef.ncols(), |j, a| coef[(rows[j], a)]);
        let top2 = CandidateDecoder::new().top_k(2).decode_matrices(coef.as_ref(), g.as_ref(), &norms)?;
        let gmax = (0..g.ncols()).map(|c| g.col(c).norm_l2()).fold(0.0, f64::max);
        let nmax = norms.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (j, &t) in rows.iter().enumerate() {
            let s = top2.top_scores(j);
            let gap = if s.len() > 1 { s[1] - s[0] } else { f64::INFINITY };
            differ.push((t, gap, f32_margin(coef.ncols(), coef.row(j).norm_l2(), gmax, nmax)));
        }
    }
    Ok(Row {
        dataset: dataset.into(),
        method,
        order,
        n_test: b64.len(),
        n_candidates: cand.n_rows(),
        n_atoms: model.n_atoms(),
        wall,
        cpu,
        score_wall,
        score_cpu,
        f1,
        same,
        differ,
        load,
    })
}

/// Runs the comparison and writes `bench-f32.{md,json}` into `out_dir`.
/// Runs the comparison and writes `bench-f32.{md,json}` (with `full`, the
/// full-size stand-in: `bench-f32-full.{md,json}`) into `out_dir`.
pub fn run(out_dir: &Path, full: bool) -> Result<()> {
    let threads = rayon::current_num_threads();
    let load0 = load_average();
    eprintln!("xtask: measuring DGEMM and SGEMM on {threads} threads ...");
    let dgemm = gemm_rate::<f64>();
    let sgemm = gemm_rate::<f32>();
    let mut rows = Vec::new();

    // Bibtex, IOKR: the `cargo xtask bench` setting.
    let data = SparseSplit::mulan("bibtex", 0)?;
    let kx = Gaussian::new(0.5 / median_sq_distance(&data.x, MEDIAN_ROWS))?;
    let model = Iokr::params(kx.clone(), data.output_kernel()?).lambda(1e-5).fit(&data.x, &data.y)?;
    rows.push(compare(&data.name, "iokr", &model, &data.x_test, &data.y_test, &data.candidates, 5)?);
    drop(model);
    // Nystroem KRR on the same kernels, a quarter of the rows as anchors:
    // the model whose decode is a GEMM chain (no solve per test row).
    let m = data.x.n_rows() / 4;
    let anchors = crate::reduced_rank::scale::distinct_anchors(&data.x, m, 0);
    let params = Nystroem::params(kx, data.output_kernel()?).anchors(Anchors::Given(anchors)).lambda(1e-5);
    let model = params.fit(&data.x, &data.y)?;
    let name = format!("{} ({m} anchors)", data.name);
    rows.push(compare(&name, "nystroem", &model, &data.x_test, &data.y_test, &data.candidates, 5)?);
    drop(model);

    // The Bookmarks-shaped stand-in, Nystroem KRR with the rr-scale choice
    // (c = 0.5, lambda = 1e-4); without `full` a quarter of every size.
    let (div, m, size, reps) = if full { (1, 15000, "full", 1) } else { (4, 3750, "1/4", 2) };
    let data = SparseSplit::bookmarks(0, div)?;
    let kx = Gaussian::new(0.5 / median_sq_distance(&data.x, 2000))?;
    let anchors = crate::reduced_rank::scale::distinct_anchors(&data.x, m, 0);
    let params = Nystroem::params(kx, data.output_kernel()?).anchors(Anchors::Given(anchors)).lambda(1e-4);
    let model = params.fit(&data.x, &data.y)?;
    let name = format!("{} ({size}: {} / {}, {m} anchors)", data.name, data.x.n_rows(), data.x_test.n_rows());
    rows.push(compare(&name, "nystroem", &model, &data.x_test, &data.y_test, &data.candidates, reps)?);

    let load1 = load_average();
    let f = |v: Option<f64>| v.map_or("?".into(), |v| format!("{v:.2}"));
    let mut md = String::from("# `cargo xtask bench --precision`: f32 against f64 decoding\n\n");
    md.push_str(&format!(
        "{} (1-minute load average {} at the start, {} at the end, on {threads} threads). faer DGEMM **{dgemm:.1} GFLOP/s**, \
         SGEMM **{sgemm:.1} GFLOP/s** (best of n = 2048, 3072, measured in this run).\n\n\
         `--precision f32` (`CandidateDecoder::precision(Precision::F32)`): the score GEMM in single \
         precision, the best `top_k + 7` candidates of each row re-scored in double precision, the decision \
         taken on the re-scored shortlist. The decision provably equals the f64 decision when the f64 best \
         beats the runner-up by more than the margin `okr_decode::f32_margin` \
         (4 gamma_(r+4) ||c_t|| max_c ||g_c|| + 2^-50 max k(c,c), u = 2^-24, for the factors c_t, g_c of \
         the score GEMM that ran: coefficients and atom products, or kernel rows and folded candidates; \
         the margins listed below are computed with the coefficients-first factors). Both precisions decode \
         in the order `ChainOrder::Auto` picks (column `order`; candidates first \
         the f32 GEMM multiplies the kernel rows by the folded candidates F = M G, computed in f64). \
         Decode times are end to end \
         (coefficients or folded candidates, atom products, scores, scan), best of the repetitions, wall and \
         CPU seconds of the same run.\n\n\
         The scoring columns time `decode_matrices` alone (score GEMM, scan and, for f32, the conversions \
         and the re-scoring) on precomputed coefficients and atom products (coefficients first).\n\n\
         | data | model | order | test points | candidates | atoms | f64 decode s (CPU) | f32 decode s (CPU) | ratio | \
         f64 scoring s (CPU) | f32 scoring s (CPU) | ratio | identical decisions | F1 f64 | F1 f32 | load |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        quietness(load0, load1, threads),
        f(load0),
        f(load1)
    ));
    let mut records = vec![
        MetricRecord::new("bench-f32", "machine", "dgemm", "gflops", dgemm).with_setting("threads", threads),
        MetricRecord::new("bench-f32", "machine", "sgemm", "gflops", sgemm).with_setting("threads", threads),
    ];
    let mut notes = String::new();
    for r in &rows {
        let frac = r.same as f64 / r.n_test as f64;
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.3} ({:.2}) | {:.3} ({:.2}) | {:.2} | {:.3} ({:.2}) | {:.3} ({:.2}) | {:.2} \
             | {}/{} ({:.3}%) | {:.2} | {:.2} | {} |\n",
            r.dataset,
            r.method,
            r.order,
            r.n_test,
            r.n_candidates,
            r.n_atoms,
            r.wall[0],
            r.cpu[0],
            r.wall[1],
            r.cpu[1],
            r.wall[1] / r.wall[0],
            r.score_wall[0],
            r.score_cpu[0],
            r.score_wall[1],
            r.score_cpu[1],
            r.score_wall[1] / r.score_wall[0],
            r.same,
            r.n_test,
            100.0 * frac,
            100.0 * r.f1[0],
            100.0 * r.f1[1],
            f(r.load)
        ));
        let within = r.differ.iter().filter(|d| d.1 <= d.2).count();
        notes.push_str(&format!(
            "- {} ({}): {} differing decisions, {within} of them with the f64 top-2 gap within the margin",
            r.dataset,
            r.method,
            r.differ.len()
        ));
        if r.differ.is_empty() {
            notes.push_str(".\n");
        } else {
            let worst = r.differ.iter().map(|d| d.1 / d.2).fold(0.0, f64::max);
            notes.push_str(&format!("; largest gap / margin {worst:.3}. Rows (gap, margin):"));
            for (t, gap, m) in r.differ.iter().take(20) {
                notes.push_str(&format!(" {t} ({gap:.2e}, {m:.2e});"));
            }
            notes.push('\n');
        }
        let rec = |metric: &str, v: f64| {
            MetricRecord::new("bench-f32", &r.dataset, r.method, metric, v)
                .with_setting("threads", threads)
                .with_setting("n_test", r.n_test)
                .with_setting("n_candidates", r.n_candidates)
                .with_setting("chain_order", r.order.to_string())
                .with_setting("load_average", r.load)
                .with_setting("dgemm_gflops", dgemm)
        };
        for (i, p) in ["f64", "f32"].into_iter().enumerate() {
            records.push(rec("decode_seconds", r.wall[i]).with_setting("precision", p));
            records.push(rec("decode_cpu_seconds", r.cpu[i]).with_setting("precision", p));
            records.push(rec("f1_samples", r.f1[i]).with_setting("precision", p));
            records.push(rec("scoring_seconds", r.score_wall[i]).with_setting("precision", p));
            records.push(rec("scoring_cpu_seconds", r.score_cpu[i]).with_setting("precision", p));
        }
        records.push(rec("decode_time_ratio_f32_f64", r.wall[1] / r.wall[0]));
        records.push(rec("scoring_time_ratio_f32_f64", r.score_wall[1] / r.score_wall[0]));
        records.push(rec("identical_decisions", frac));
        records.push(rec("differing_within_margin", within as f64).with_setting("differing", r.differ.len()));
    }
    md.push_str("\nDiffering decisions, explained against the margin:\n\n");
    md.push_str(&notes);
    md.push_str(
        "\nAcceptance (issue 20): decode time <= 0.6x of f64, identical decisions on >= 99.9% of test \
         points, F1 unchanged to 0.05 (x100).\n",
    );
    let stem = if full { "bench-f32-full" } else { "bench-f32" };
    write_outputs(out_dir, stem, &records, &md)?;
    println!("{md}");
    Ok(())
}
