//! One training epoch (objective + reverse-mode gradient, one full-batch
//! step) of the kernel autoencoders: the Gram-only K2AE (one n x n Cholesky
//! and four n x n triangular solves for N_L) and the finite KAE.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::Mat;
use okr_estimators::kae::LayerKernel;
use okr_estimators::kae::internals::{LayerSpec, finite_objective, profiled_objective};

fn data(n: usize, d: usize, seed: u64) -> Mat<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    Mat::from_fn(n, d, |_, _| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    })
}

fn epoch(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-estimators/kae-epoch");
    g.sample_size(10);
    let p = 25;
    for n in [500usize, 1000] {
        let x = data(n, 50, 1);
        let k_in = &x * x.transpose();
        let phi = data(n, p, 2) * (1.0 / n as f64);
        let spec: Vec<LayerSpec> =
            vec![(LayerKernel::Linear, None, 1e-6), (LayerKernel::Gaussian { gamma: 0.5 }, None, 1e-3)];
        g.bench_function(BenchmarkId::new("k2ae-profiled-p25", n), |b| {
            b.iter(|| profiled_objective(k_in.as_ref(), k_in.as_ref(), &spec, std::slice::from_ref(&phi)).unwrap())
        });
        let phi2 = data(n, 50, 3) * (1.0 / n as f64);
        let gauss = LayerKernel::Gaussian { gamma: 0.02 };
        let spec: Vec<LayerSpec> = vec![(gauss, None, 1e-6), (LayerKernel::Gaussian { gamma: 0.5 }, None, 1e-3)];
        g.bench_function(BenchmarkId::new("kae-finite-gradient-p25", n), |b| {
            b.iter(|| finite_objective(x.as_ref(), &spec, &[phi.clone(), phi2.clone()]).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, epoch);
criterion_main!(benches);
