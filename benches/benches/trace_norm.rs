//! Trace-norm solvers (factorized GD with Armijo, ALS, convex FISTA + SVT) on
//! Gram matrices, and the ranking decoders (exact linear-ordering DP,
//! Eades-Lin-Smyth + insertion local search).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::Mat;
use okr_decode::ranking::{exact_order, heuristic_order};
use okr_estimators::trace_norm::{SolverOptions, convex_trace_norm, factorized_als, factorized_gd, scaled_init};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn low_rank_grams(n: usize, d: usize, t: usize, seed: u64) -> (Mat<f64>, Mat<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5);
    let g = Mat::from_fn(t, d, |i, j| if (i + j) % 7 == 0 { 1.0 } else { 0.0 });
    let y = &x * g.transpose() + Mat::from_fn(n, t, |_, _| 0.1 * (rng.random::<f64>() - 0.5));
    (&x * x.transpose(), &y * y.transpose())
}

fn solvers(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-estimators/trace-norm");
    g.sample_size(10);
    for n in [500usize, 1000] {
        let (kx, ky) = low_rank_grams(n, 50, 40, 1);
        let (m0, n0) = scaled_init(kx.as_ref(), ky.as_ref(), 10, 0.05, 0);
        let opts = SolverOptions { max_iter: 200, ..Default::default() };
        g.bench_function(BenchmarkId::new("gd-200-iter-r10", n), |b| {
            b.iter(|| factorized_gd(kx.as_ref(), ky.as_ref(), 1e-3, m0.clone(), n0.clone(), &opts).unwrap())
        });
        let opts = SolverOptions { max_iter: 20, ..Default::default() };
        g.bench_function(BenchmarkId::new("als-20-sweeps-r10", n), |b| {
            b.iter(|| factorized_als(kx.as_ref(), ky.as_ref(), 1e-3, m0.clone(), n0.clone(), &opts).unwrap())
        });
        g.bench_function(BenchmarkId::new("convex-fista", n), |b| {
            b.iter(|| convex_trace_norm(kx.as_ref(), ky.as_ref(), 2e-3, 1e-8, 500).unwrap())
        });
    }
    g.finish();
}

fn decoders(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-decode/feedback-arc-set");
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for m in [8usize, 12, 16, 50, 100] {
        let mu: Vec<f64> = (0..m).map(|_| rng.random::<f64>()).collect();
        let noise: Vec<f64> = (0..m * m).map(|_| rng.random::<f64>() - 0.5).collect();
        let pref: Vec<f64> =
            (0..m * m).map(|k| mu[k % m] - mu[k / m] + 0.5 * (noise[k] - noise[(k % m) * m + k / m])).collect();
        if m <= 16 {
            g.bench_function(BenchmarkId::new("exact-dp", m), |b| b.iter(|| exact_order(&pref, m)));
        }
        g.bench_function(BenchmarkId::new("els-insertion", m), |b| b.iter(|| heuristic_order(&pref, m)));
    }
    g.finish();
}

criterion_group!(benches, solvers, decoders);
criterion_main!(benches);
