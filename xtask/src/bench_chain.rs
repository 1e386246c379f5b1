//! `cargo xtask bench --chain-order`: IOKR decoding coefficients first
//! (one ridge solve per test row) against candidates first (one solve per
//! candidate, `okr_surrogate::LinearExpansion::ridge`) on Bibtex, with the
//! test rows repeated to the sizes of a large prediction job. Writes
//! `docs/results/bench-chain-order.{md,json}`.

use std::path::Path;

use anyhow::Result;
use okr_decode::{CandidateDecoder, ChainOrder};
use okr_estimators::{Fit, Iokr, SurrogateModel};
use okr_eval::MetricRecord;
use okr_kernels::{Gaussian, Rows, median_sq_distance};

use crate::common::cv::MEDIAN_ROWS;
use crate::common::data::SparseSplit;
use crate::common::process::{gemm_rate, load_average};
use crate::common::report::write_outputs;
use crate::common::timing::best_of;

/// How many times the 2515 Bibtex test rows are repeated.
const REPEATS: [usize; 4] = [1, 2, 4, 8];

/// Runs the comparison and writes `bench-chain-order.{md,json}` into `out_dir`.
pub fn run(out_dir: &Path) -> Result<()> {
    let threads = rayon::current_num_threads();
    let load0 = load_average();
    eprintln!("xtask: measuring DGEMM on {threads} threads ...");
    let dgemm = gemm_rate::<f64>();
    let data = SparseSplit::mulan("bibtex", 0)?;
    let kx = Gaussian::new(0.5 / median_sq_distance(&data.x, MEDIAN_ROWS))?;
    let model = Iokr::params(kx, data.output_kernel()?).lambda(1e-5).fit(&data.x, &data.y)?;
    let cand = &data.candidates;
    let (n_c, n_atoms, n_train) = (cand.n_rows(), model.n_atoms(), data.x.n_rows());
    let mut md = String::from("# `cargo xtask bench --chain-order`: IOKR decoding in either order\n\n");
    let mut table = String::new();
    let mut records = vec![
        MetricRecord::new("bench-chain-order", "machine", "dgemm", "gflops", dgemm).with_setting("threads", threads),
    ];
    for reps in REPEATS {
        let idx: Vec<usize> = (0..reps).flat_map(|_| 0..data.x_test.n_rows()).collect();
        let x = data.x_test.select(&idx);
        let n_t = x.n_rows();
        let dec = CandidateDecoder::new();
        let plan = dec.plan(&model, n_t, n_c);
        let costs = plan.costs.expect("IOKR has a ridge map");
        let mut wall = [0.0; 2];
        let mut cpu = [0.0; 2];
        let mut best = Vec::new();
        for (i, order) in [ChainOrder::CoefficientsFirst, ChainOrder::CandidatesFirst].into_iter().enumerate() {
            let (t, d) = best_of(2, || dec.chain_order(order).decode(&model, &x, cand));
            (wall[i], cpu[i]) = (t.wall, t.cpu.unwrap_or(f64::NAN));
            eprintln!("xtask: bibtex x{reps} ({n_t} rows) {order}: {:.2} s wall, {:.2} s CPU", wall[i], cpu[i]);
            best.push(d?.best());
        }
        let same = best[0].iter().zip(&best[1]).filter(|(a, b)| a == b).count();
        let flops = [costs.coefficients_first, costs.candidates_first];
        table.push_str(&format!(
            "| {n_t} | {:.0} | {:.0} | {} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.2} | {:.2} | {:.0} / {:.0} | {same}/{n_t} |\n",
            flops[0] / 1e9,
            flops[1] / 1e9,
            plan.order,
            wall[0],
            cpu[0],
            wall[1],
            cpu[1],
            wall[1] / wall[0],
            flops[1] / flops[0],
            flops[0] / wall[0] / 1e9,
            flops[1] / wall[1] / 1e9,
        ));
        for (i, order) in ["coefficients-first", "candidates-first"].into_iter().enumerate() {
            let rec = |metric: &str, v: f64| {
                MetricRecord::new("bench-chain-order", "bibtex", "iokr", metric, v)
                    .with_setting("chain_order", order)
                    .with_setting("n_test", n_t)
                    .with_setting("auto", plan.order.to_string())
                    .with_setting("threads", threads)
                    .with_setting("dgemm_gflops", dgemm)
            };
            records.push(rec("decode_seconds", wall[i]).with_seconds(wall[i]));
            records.push(rec("decode_cpu_seconds", cpu[i]));
            records.push(rec("chain_gflop", flops[i] / 1e9));
        }
        records.push(
            MetricRecord::new("bench-chain-order", "bibtex", "iokr", "identical_decisions", same as f64 / n_t as f64)
                .with_setting("n_test", n_t),
        );
    }
    let load1 = load_average();
    let f = |v: Option<f64>| v.map_or("?".into(), |v| format!("{v:.2}"));
    let quiet = match (load0, load1) {
        (Some(a), Some(b)) if a.max(b) <= threads as f64 + 0.5 => "**Taken on a quiet machine**",
        _ => "**Taken on a shared machine** (the times are upper bounds)",
    };
    md.push_str(&format!(
        "{quiet} (1-minute load average {} at the start, {} at the end, {threads} threads); faer DGEMM \
         **{dgemm:.1} GFLOP/s** in this run.\n\n\
         IOKR on Bibtex ({n_train} training rows, {n_atoms} atoms = distinct training label sets, \
         {n_c} candidates = the same label sets, the `cargo xtask bench` setting, lambda = 1e-5), the \
         2515 test rows repeated 1, 2, 4 and 8 times to stand for a larger prediction job. Coefficients \
         first solves the ridge system against every test row's kernel column (2 n^2 flops per row) and \
         multiplies the coefficients, summed over atoms, by the atom products (2 a c per row); candidates \
         first solves it against every candidate's atom products gathered to the training rows (2 n^2 per \
         candidate, `LinearExpansion::ridge`) and scores the kernel rows against them (2 n c per row, n \
         training rows instead of a atoms). `ChainOrder::Auto` takes the order with fewer flops \
         (`ChainCosts`, column `auto`): with as many rows to predict as here candidates first wins once the \
         test rows outnumber the candidates by enough to pay for scoring against n = {n_train} rows instead \
         of a = {n_atoms} atoms. Decode times are end to end (kernel rows, solves, atom products, scores, \
         scan), best of 2, wall (CPU) seconds; identical decisions compare the two orders' best candidate \
         per row.\n\n\
         | test rows | coef-first GFLOP | cand-first GFLOP | auto | coef-first s (CPU) | cand-first s (CPU) | \
         time ratio cand/coef | flop ratio | GFLOP/s coef / cand | identical decisions |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        f(load0),
        f(load1)
    ));
    md.push_str(&table);
    write_outputs(out_dir, "bench-chain-order", &records, &md)
}
