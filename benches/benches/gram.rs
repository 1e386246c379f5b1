//! Gram blocks: dense through GEMM, sparse through sparse products.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use okr_benches::{dense_rows, sparse_binary_rows};
use okr_kernels::{Gaussian, Kernel};

fn gram(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-kernels/gram");
    g.sample_size(10);
    let k = Gaussian::new(0.01).unwrap();
    for n in [500usize, 1000, 2000] {
        let x = dense_rows(n, 100, 1);
        g.bench_with_input(BenchmarkId::new("gaussian-dense-d100", n), &x, |b, x| b.iter(|| k.gram(x)));
        let s = sparse_binary_rows(n, 1836, 0.02, 2);
        g.bench_with_input(BenchmarkId::new("gaussian-csr-d1836-2pct", n), &s, |b, s| b.iter(|| k.gram(s)));
    }
    g.finish();
}

criterion_group!(benches, gram);
criterion_main!(benches);
