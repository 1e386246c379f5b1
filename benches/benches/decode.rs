//! Candidate decoding of IOKR predictions (Gram + solve + scores GEMM + scan).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use okr_benches::{label_sets, sparse_binary_rows};
use okr_decode::CandidateDecoder;
use okr_estimators::Fit;
use okr_estimators::Iokr;
use okr_kernels::{Gaussian, Rows};

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-decode/candidates");
    g.sample_size(10);
    for n in [1000usize, 2000] {
        let x = sparse_binary_rows(n, 1836, 0.02, 4);
        let y = label_sets(n, 159, 2.4, n / 2, 5);
        let xt = sparse_binary_rows(n / 2, 1836, 0.02, 6);
        let model = Iokr::params(Gaussian::new(0.005).unwrap(), Gaussian::from_sigma2(2.4).unwrap())
            .lambda(1e-5)
            .fit(&x, &y)
            .unwrap();
        let (cand, _) = y.unique();
        g.bench_function(BenchmarkId::new(format!("iokr-{}-candidates", cand.n_rows()), n), |b| {
            b.iter(|| CandidateDecoder::new().decode(&model, &xt, &cand).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
