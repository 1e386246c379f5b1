//! Jittered Cholesky factorization and multi-right-hand-side solves.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::{Mat, Par};
use okr_benches::dense_rows;
use okr_kernels::{Gaussian, Kernel};
use okr_linalg::{Cholesky, JitterPolicy};

fn spd(n: usize) -> Mat<f64> {
    let x = dense_rows(n, 20, 3);
    let mut k = Gaussian::new(0.05).unwrap().gram(&x);
    for i in 0..n {
        k[(i, i)] += n as f64 * 1e-3;
    }
    k
}

fn solve(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-linalg/cholesky");
    g.sample_size(10);
    for n in [500usize, 1000, 2000] {
        let a = spd(n);
        g.bench_with_input(BenchmarkId::new("factor", n), &a, |b, a| {
            b.iter(|| Cholesky::factor_in_place(a.clone(), JitterPolicy::default(), Par::rayon(0)).unwrap())
        });
        let (chol, _) = Cholesky::factor(a.as_ref(), JitterPolicy::default()).unwrap();
        let rhs = Mat::from_fn(n, n / 2, |i, j| ((i + j) % 7) as f64);
        g.bench_with_input(BenchmarkId::new("solve-n/2-rhs", n), &rhs, |b, rhs| {
            b.iter(|| chol.solve(rhs.as_ref(), Par::rayon(0)))
        });
    }
    g.finish();
}

criterion_group!(benches, solve);
criterion_main!(benches);
