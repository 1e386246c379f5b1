//! `cargo xtask bench --retrieval [--quick]`: issue 17's scale line. IOKR
//! with a Tanimoto output kernel on 4096-bit fingerprints (4000 training
//! outputs) ranks 10^4 queries (`--quick`: 10^3) against 10^3 candidates
//! each, drawn from a shared pool of 10^5 fingerprints, with
//! [`PerQueryDecoder`] under a 1 GiB memory budget. Measured in the same
//! run: faer's DGEMM rate and an AND+popcount throughput peak, the
//! ranking's atom products (Tanimoto kernel evaluations) against the
//! popcount peak and its score products against DGEMM, peak RSS against
//! the budget, wall and CPU seconds and the load. Writes
//! `bench-retrieval{,-quick}.{md,json}`.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use okr_decode::per_query::{PerQueryDecoder, Query, RankStats};
use okr_estimators::{Fit, Iokr, SurrogateModel};
use okr_eval::MetricRecord;
use okr_kernels::{DenseRows, Gaussian, Kernel, LabelSets, Rows, Tanimoto, median_sq_distance};
use rand::SeedableRng;
use rand::seq::index::sample;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::common::process::{MachineState, peak_rss_bytes, reset_peak_rss, rss_bytes};
use crate::common::report::write_outputs;
use crate::common::timing::timed;

/// Fingerprint width in bits.
const N_BITS: usize = 4096;
/// Latent dimension of the synthetic molecules (the inputs' dimension too).
const LATENT: usize = 64;
/// Threshold of a standard normal score for a bit to be set: 10 % of bits.
const BIT_THRESHOLD: f64 = 1.2816;
/// Training outputs.
const N_TRAIN: usize = 4000;
/// Candidates per query.
const N_CANDIDATES: usize = 1000;
/// Shared candidate pool.
const N_POOL: usize = 100_000;
/// The decoder's memory budget.
const BUDGET: usize = 1 << 30;

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// Sizes of one run.
struct Shape {
    n_queries: usize,
    name: &'static str,
}

/// Molecules: latent vectors `z` and their fingerprints, bit `f` set when
/// `z . w_f > BIT_THRESHOLD` (`w_f` random unit-variance directions).
struct Generator {
    w: Mat<f64>,
}

impl Generator {
    fn new(rng: &mut ChaCha8Rng) -> Self {
        let s = 1.0 / (LATENT as f64).sqrt();
        Self { w: Mat::from_fn(LATENT, N_BITS, |_, _| s * normal(rng)) }
    }

    fn latent(rng: &mut ChaCha8Rng, n: usize) -> Mat<f64> {
        Mat::from_fn(n, LATENT, |_, _| normal(rng))
    }

    /// Fingerprints of the rows of `z`, in chunks (the scores are dense).
    fn fingerprints(&self, z: &Mat<f64>) -> Result<LabelSets> {
        let mut sets = Vec::with_capacity(z.nrows());
        let chunk = 2048;
        for r0 in (0..z.nrows()).step_by(chunk) {
            let m = chunk.min(z.nrows() - r0);
            let mut s = Mat::<f64>::zeros(m, N_BITS);
            matmul(s.as_mut(), Accum::Replace, z.as_ref().subrows(r0, m), self.w.as_ref(), 1.0, Par::rayon(0));
            for i in 0..m {
                sets.push((0..N_BITS).filter(|&f| s[(i, f)] > BIT_THRESHOLD).collect());
            }
        }
        Ok(LabelSets::new(N_BITS, sets)?)
    }
}

/// Noisy inputs ("spectra") of latent rows.
fn inputs(rng: &mut ChaCha8Rng, z: &Mat<f64>) -> Result<DenseRows> {
    Ok(DenseRows::new(Mat::from_fn(z.nrows(), LATENT, |i, j| z[(i, j)] + 0.5 * normal(rng)))?)
}

/// AND+popcount throughput in 64-bit words per second, all threads at
/// once: each thread sums `popcount(a[k] & b[k])` over two L1-resident
/// arrays of 2048 words, compiled under pulp's dispatch as the kernel is.
fn popcount_peak() -> f64 {
    struct Sweep<'a> {
        a: &'a [u64],
        b: &'a [u64],
        reps: usize,
    }
    impl pulp::WithSimd for Sweep<'_> {
        type Output = u64;
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _: S) -> u64 {
            let mut total = 0u64;
            for _ in 0..self.reps {
                let (a, b) = (std::hint::black_box(self.a), std::hint::black_box(self.b));
                let mut s = [0u64; 4];
                for (x, y) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
                    for ((acc, x), y) in s.iter_mut().zip(x).zip(y) {
                        *acc += u64::from((x & y).count_ones());
                    }
                }
                total += s.iter().sum::<u64>();
            }
            total
        }
    }
    const WORDS: usize = 2048;
    let reps = 40_000;
    let threads = rayon::current_num_threads();
    let mut best = 0.0f64;
    for _ in 0..5 {
        let t = Instant::now();
        let total: u64 = rayon::broadcast(|ctx| {
            let seed = ctx.index() as u64;
            let a: Vec<u64> = (0..WORDS as u64).map(|k| (k + seed).wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
            let b: Vec<u64> = (0..WORDS as u64).map(|k| (k ^ seed).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)).collect();
            pulp::Arch::new().dispatch(Sweep { a: &a, b: &b, reps })
        })
        .into_iter()
        .sum();
        std::hint::black_box(total);
        best = best.max((threads * WORDS * reps) as f64 / t.elapsed().as_secs_f64());
    }
    best
}

/// One row of the results table.
struct Phase {
    name: String,
    work: String,
    seconds: f64,
    rate: String,
    fraction: Option<f64>,
    peak_rss: Option<u64>,
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

/// Runs the benchmark and writes `bench-retrieval{,-quick}.{md,json}`.
pub fn run(out_dir: &Path, quick: bool) -> Result<()> {
    let shape = if quick {
        Shape { n_queries: 1000, name: "bench-retrieval-quick" }
    } else {
        Shape { n_queries: 10_000, name: "bench-retrieval" }
    };
    let threads = rayon::current_num_threads();
    let words = N_BITS.div_ceil(64);
    let wall0 = Instant::now();
    eprintln!("measuring DGEMM and popcount throughput on {threads} threads ...");
    let before = MachineState::now();
    let popcount = popcount_peak();
    eprintln!("  DGEMM {:.1} GFLOP/s, AND+popcount {:.2e} words/s", before.dgemm_gflops, popcount);

    // The synthetic problem.
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let generator = Generator::new(&mut rng);
    let z_train = Generator::latent(&mut rng, N_TRAIN);
    let y_train = generator.fingerprints(&z_train)?;
    let x_train = inputs(&mut rng, &z_train)?;
    let z_pool = Generator::latent(&mut rng, N_POOL);
    let pool = generator.fingerprints(&z_pool)?;
    // Query q's true molecule is pool row truth[q]; its input is a noisy view of it.
    let truth: Vec<usize> = (0..shape.n_queries).map(|q| (q * 7919) % N_POOL).collect();
    let z_test = Mat::from_fn(shape.n_queries, LATENT, |q, j| z_pool[(truth[q], j)]);
    let x_test = inputs(&mut rng, &z_test)?;
    drop((z_pool, z_test));
    let density = pool.mean_cardinality() / N_BITS as f64;
    eprintln!("pool of {N_POOL} fingerprints, {:.1} % of bits set", 100.0 * density);

    // IOKR fitted on the 4000 training pairs.
    let gamma = 0.5 / median_sq_distance(&x_train, 2000);
    let lambda = 1e-3;
    let t = Instant::now();
    let model = Iokr::params(Gaussian::new(gamma)?, Tanimoto).lambda(lambda).fit(&x_train, &y_train)?;
    let fit_seconds = t.elapsed().as_secs_f64();
    let r = model.n_atoms();
    eprintln!("IOKR fitted in {fit_seconds:.1} s ({r} atoms)");

    // Query q: its truth and 999 distinct others, in a seeded order.
    let query = |q: usize| -> Result<Query<LabelSets>, okr_decode::Error> {
        let mut qrng = ChaCha8Rng::seed_from_u64(1_000_003 + q as u64);
        let mut idx: Vec<usize> =
            sample(&mut qrng, N_POOL - 1, N_CANDIDATES - 1).into_iter().map(|i| (truth[q] + 1 + i) % N_POOL).collect();
        let pos = q % N_CANDIDATES;
        idx.insert(pos, truth[q]);
        Ok(Query::pooled(format!("q{q}"), q, idx, Some(pos)))
    };

    // Operation-level comparison on one tile's shape: the atom products of
    // 2048 pool rows with both Tanimoto engines (the sparse split LabelSets
    // used before, reached through CsrRows; the packed popcount now), and a
    // tile's scores as per-query products (before) or one GEMM (now).
    eprintln!("engines on one block ...");
    let block: Vec<usize> = (0..2048).collect();
    let cand = pool.select(&block);
    let evals = (N_TRAIN * block.len()) as f64;
    let t = Instant::now();
    let k_packed = Tanimoto.gram_block(&y_train, &cand);
    let t_packed = t.elapsed().as_secs_f64();
    let (y_csr, c_csr) = (y_train.to_csr(), cand.to_csr());
    let t = Instant::now();
    let k_sparse = Tanimoto.gram_block(&y_csr, &c_csr);
    let t_sparse = t.elapsed().as_secs_f64();
    anyhow::ensure!(k_packed == k_sparse, "the packed and sparse Tanimoto engines differ");
    drop((k_sparse, y_csr, c_csr));
    let tile_q = 32;
    let mut coef = Mat::<f64>::zeros(tile_q, r);
    model.coefficients_into(&x_test.select(&(0..tile_q).collect::<Vec<_>>()), coef.as_mut(), Par::rayon(0))?;
    // Per-query products as the decoder did them: gather the query's
    // columns, then (n_c, r) x (r, 1); here each query takes 1000 of the
    // block's 2048 columns.
    let t = Instant::now();
    let mut g_q = Mat::<f64>::zeros(r, N_CANDIDATES);
    let mut s_q = Mat::<f64>::zeros(N_CANDIDATES, 1);
    for q in 0..tile_q {
        for j in 0..N_CANDIDATES {
            g_q.col_mut(j).copy_from(k_packed.col((j * 2 + q) % block.len()));
        }
        let c = coef.as_ref().subrows(q, 1).transpose();
        matmul(s_q.as_mut(), Accum::Replace, g_q.as_ref().transpose(), c, 1.0, Par::rayon(0));
    }
    let t_gemv = t.elapsed().as_secs_f64();
    let gemv_flops = 2.0 * (tile_q * N_CANDIDATES * r) as f64;
    let mut s_tile = Mat::<f64>::zeros(tile_q, block.len());
    let t = Instant::now();
    matmul(s_tile.as_mut(), Accum::Replace, coef.as_ref(), k_packed.as_ref(), 1.0, Par::rayon(0));
    let t_gemm = t.elapsed().as_secs_f64();
    let gemm_flops = 2.0 * (tile_q * block.len() * r) as f64;
    drop((k_packed, g_q, s_tile, cand));

    // The ranking, streamed query by query.
    eprintln!("ranking {} queries x {N_CANDIDATES} candidates ...", shape.n_queries);
    let rss_before = rss_bytes();
    let reset = reset_peak_rss();
    let load_start = crate::common::process::load_average();
    let (mut top1, mut top10, mut rank_sum, mut n_ranked) = (0usize, 0usize, 0usize, 0usize);
    let (stats, t) = timed(|| {
        PerQueryDecoder::new().memory_budget(BUDGET).top_k(Some(10)).rank_with_stats(
            &model,
            &x_test,
            Some(&pool),
            (0..shape.n_queries).map(query),
            |ranked| {
                let tr = ranked.true_rank.expect("every query marks its truth");
                top1 += usize::from(tr.pessimistic == 1);
                top10 += usize::from(tr.pessimistic <= 10);
                rank_sum += tr.pessimistic;
                n_ranked += 1;
                Ok(())
            },
        )
    });
    let stats: RankStats = stats?;
    let (rank_wall, rank_cpu) = (t.wall, t.cpu.unwrap_or(f64::NAN));
    let peak = if reset { peak_rss_bytes() } else { None };
    anyhow::ensure!(n_ranked == shape.n_queries, "ranked {n_ranked} of {} queries", shape.n_queries);
    eprintln!("  {rank_wall:.1} s wall, {rank_cpu:.1} s CPU");
    let after = MachineState::now();
    let total_wall = wall0.elapsed().as_secs_f64();

    // Rates.
    let product_evals = (stats.product_columns * N_TRAIN) as f64;
    let product_rate = product_evals * words as f64 / stats.product_seconds;
    let score_rate = stats.score_flops / stats.score_seconds / 1e9;
    let gemm = before.dgemm_gflops.max(after.dgemm_gflops);
    let n_pairs = shape.n_queries * N_CANDIDATES;
    let pool_bytes = (pool.n_rows() + 1 + pool.iter().map(<[usize]>::len).sum::<usize>()) * 8;
    let non_tiled_pool = (r * N_POOL * 8) as u64;
    let non_tiled_pairs = (r as u64) * (n_pairs as u64) * 8;
    let growth = match (peak, rss_before) {
        (Some(p), Some(b)) => Some(p.saturating_sub(b)),
        _ => None,
    };

    let frac_pop = |words_per_s: f64| words_per_s / popcount;
    let phases = vec![
        Phase {
            name: "atom products: Tanimoto K_y(train, candidates), packed popcount".into(),
            work: format!(
                "{} columns x {N_TRAIN} = {:.2e} evals ({:.2e} words)",
                stats.product_columns,
                product_evals,
                product_evals * words as f64
            ),
            seconds: stats.product_seconds,
            rate: format!("{product_rate:.2e} words/s"),
            fraction: Some(frac_pop(product_rate)),
            peak_rss: None,
        },
        Phase {
            name: "score products: C G (tile GEMMs)".into(),
            work: format!(
                "{:.2e} flop executed, {:.0} % for listed candidates",
                stats.score_flops,
                100.0 * stats.useful_score_flops / stats.score_flops
            ),
            seconds: stats.score_seconds,
            rate: format!("{score_rate:.1} GFLOP/s"),
            fraction: Some(score_rate / gemm),
            peak_rss: None,
        },
        Phase {
            name: "coefficients C (K_x(test, train) and the Cholesky solve)".into(),
            work: format!("{} queries", shape.n_queries),
            seconds: stats.coefficient_seconds,
            rate: "-".into(),
            fraction: None,
            peak_rss: None,
        },
        Phase {
            name: format!("ranking, end to end ({} tiles)", stats.tiles),
            work: format!("{} queries x {N_CANDIDATES} candidates", shape.n_queries),
            seconds: rank_wall,
            rate: format!("{:.0} queries/s", shape.n_queries as f64 / rank_wall),
            fraction: None,
            peak_rss: peak,
        },
        Phase {
            name: "before: Tanimoto block through the sparse split".into(),
            work: format!("{N_TRAIN} x {} = {evals:.2e} evals", block.len()),
            seconds: t_sparse,
            rate: format!("{:.2e} words/s", evals * words as f64 / t_sparse),
            fraction: Some(frac_pop(evals * words as f64 / t_sparse)),
            peak_rss: None,
        },
        Phase {
            name: "now: the same block, packed popcount".into(),
            work: format!("{N_TRAIN} x {} = {evals:.2e} evals", block.len()),
            seconds: t_packed,
            rate: format!("{:.2e} words/s", evals * words as f64 / t_packed),
            fraction: Some(frac_pop(evals * words as f64 / t_packed)),
            peak_rss: None,
        },
        Phase {
            name: format!("before: {tile_q} queries' scores, gather + (n_c, r) x (r, 1) each"),
            work: format!("{gemv_flops:.2e} flop"),
            seconds: t_gemv,
            rate: format!("{:.1} GFLOP/s", gemv_flops / t_gemv / 1e9),
            fraction: Some(gemv_flops / t_gemv / 1e9 / gemm),
            peak_rss: None,
        },
        Phase {
            name: format!("now: {tile_q} queries x {} columns, one GEMM", block.len()),
            work: format!("{gemm_flops:.2e} flop"),
            seconds: t_gemm,
            rate: format!("{:.1} GFLOP/s", gemm_flops / t_gemm / 1e9),
            fraction: Some(gemm_flops / t_gemm / 1e9 / gemm),
            peak_rss: None,
        },
    ];

    let command = if quick { "cargo xtask bench --retrieval --quick" } else { "cargo xtask bench --retrieval" };
    let mut md = format!("# `{command}`\n\n");
    md.push_str(&format!(
        "Command: `{command}` ({:.0} s on this run; {}). Issue 17's scale line: IOKR with a Tanimoto output \
         kernel ranks {} queries x {N_CANDIDATES} candidates of 4096-bit fingerprints under a {} memory budget.\n\n",
        total_wall,
        if quick {
            "the full size is `cargo xtask bench --retrieval`, 10^4 queries"
        } else {
            "`--quick` runs 10^3 queries"
        },
        shape.n_queries,
        gib(BUDGET as u64)
    ));
    md.push_str(&format!(
        "Machine: {threads} threads; {}. AND+popcount peak: **{popcount:.2e} 64-bit words/s** (all threads, \
         `popcount(a[k] & b[k])` summed over two L1-resident arrays of 2048 words, compiled under pulp's x86-64-v3 \
         dispatch like the kernel: one POPCNT per word; the CPU also has AVX-512 VPOPCNTDQ, which safe Rust with \
         the workspace's pulp features does not reach). Fractions below are of the larger DGEMM reading \
         ({gemm:.1} GFLOP/s) and of that popcount peak. The bench's own threads account for a load of about \
         {threads}; a higher load means other jobs shared the cores and the times are upper bounds.\n\n",
        before.describe(&after)
    ));
    md.push_str(&format!(
        "Problem (seed 0): {N_TRAIN} training pairs, inputs = latent vectors of dimension {LATENT} plus noise \
         (Gaussian input kernel, gamma = 1/(2 median squared distance), lambda = {lambda:e}), outputs = \
         fingerprints of {N_BITS} bits, bit f set when the latent vector's projection on a random direction w_f \
         exceeds {BIT_THRESHOLD} ({:.1} % of bits set); a pool of {N_POOL} fingerprints ({} as label sets); query \
         q's input is a noisy view of pool row 7919 q mod {N_POOL}, its candidates are that row and \
         {} others drawn without replacement (seeded per query), streamed to `PerQueryDecoder::rank_with_stats` \
         (top 10 reported). IOKR fit: {fit_seconds:.1} s. Sanity: the true candidate is first for {:.1} % of the \
         queries, in the top 10 for {:.1} %, mean rank {:.1} (ties counted pessimistically).\n\n",
        100.0 * density,
        gib(pool_bytes as u64),
        N_CANDIDATES - 1,
        100.0 * top1 as f64 / n_ranked as f64,
        100.0 * top10 as f64 / n_ranked as f64,
        rank_sum as f64 / n_ranked as f64,
    ));
    md.push_str(&format!(
        "Ranking: **{rank_wall:.1} s wall, {rank_cpu:.1} s CPU**; peak RSS (VmHWM, reset before the ranking) \
         **{}**, of which {} above the {} resident before it (the pool, the training data, the model) against a \
         budget of {}. Without tiling, the atom products of the whole pool (r x n_pool) take {} and those of every \
         query's candidates (r x 10^{} pairs) {}.\n\n",
        peak.map_or("not available".into(), gib),
        growth.map_or("?".into(), gib),
        rss_before.map_or("?".into(), gib),
        gib(BUDGET as u64),
        gib(non_tiled_pool),
        (n_pairs as f64).log10().round(),
        gib(non_tiled_pairs)
    ));
    md.push_str(
        "| phase | work | seconds | rate | fraction of peak | peak RSS | budget |\n|---|---|---|---|---|---|---|\n",
    );
    let mut records = vec![
        MetricRecord::new(shape.name, "machine", "dgemm", "gflops", gemm).with_setting("threads", threads),
        MetricRecord::new(shape.name, "machine", "and-popcount", "words_per_second", popcount)
            .with_setting("threads", threads),
    ];
    for p in &phases {
        md.push_str(&format!(
            "| {} | {} | {:.2} | {} | {} | {} | {} |\n",
            p.name,
            p.work,
            p.seconds,
            p.rate,
            p.fraction.map_or("-".into(), |f| format!("{:.0}%", 100.0 * f)),
            p.peak_rss.map_or("-".into(), gib),
            if p.peak_rss.is_some() { gib(BUDGET as u64) } else { "-".into() }
        ));
        let mut rec = MetricRecord::new(shape.name, "fingerprints-synthetic", "iokr", "phase_seconds", p.seconds)
            .with_setting("phase", p.name.clone())
            .with_setting("work", p.work.clone())
            .with_setting("rate", p.rate.clone())
            .with_setting("threads", threads)
            .with_stand_in(true);
        if let Some(f) = p.fraction {
            rec = rec.with_setting("fraction_of_peak", f);
        }
        records.push(rec);
    }
    let setting = |r: MetricRecord| {
        r.with_setting("n_queries", shape.n_queries)
            .with_setting("n_candidates", N_CANDIDATES)
            .with_setting("n_train", N_TRAIN)
            .with_setting("n_pool", N_POOL)
            .with_setting("n_bits", N_BITS)
            .with_setting("memory_budget", BUDGET)
            .with_setting("threads", threads)
            .with_stand_in(true)
    };
    let ds = "fingerprints-synthetic";
    records.push(setting(MetricRecord::new(shape.name, ds, "iokr", "decode_seconds", rank_wall)));
    records.push(setting(MetricRecord::new(shape.name, ds, "iokr", "fit_seconds", fit_seconds)));
    if let Some(p) = peak {
        records.push(setting(MetricRecord::new(shape.name, ds, "iokr", "peak_rss_bytes", p as f64)));
    }
    records.push(setting(MetricRecord::new(shape.name, ds, "iokr", "top1", top1 as f64 / n_ranked as f64)));
    records.push(setting(MetricRecord::new(shape.name, ds, "iokr", "top10", top10 as f64 / n_ranked as f64)));
    md.push_str(&format!(
        "\nThe ranking's rows come from `RankStats`: atom products are every `atom_products_into` call \
         (packing, popcounts and the Tanimoto division), at 64 words per evaluation; score products are the \
         tile GEMMs `S = C G_U` (a tile of up to 32 queries against every distinct pool row it lists, so most \
         executed flops are for other queries' candidates; per-query products would need only the listed \
         fraction but run at memory speed, see the before/after rows). The before/after rows time one block \
         of 2048 pool rows (the kernel: values identical, checked) and one 32-query tile (the scores). \
         CPU {rank_cpu:.1} s over wall {rank_wall:.1} s for the ranking; load {} at its start.\n",
        load_start.map_or("unknown".into(), |l| format!("{l:.2}"))
    ));
    write_outputs(out_dir, shape.name, &records, &md)?;
    println!("{md}");
    Ok(())
}
