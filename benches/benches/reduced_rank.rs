//! Reduced-rank IOKR and KDE: fit, the shared-eigendecomposition lambda path,
//! and decoding through p atoms against IOKR's n.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use okr_benches::dense_rows;
use okr_decode::CandidateDecoder;
use okr_estimators::Fit;
use okr_estimators::{Iokr, Kde, ParamGuard, ReducedRankIokr};
use okr_kernels::{DenseRows, Gaussian};

fn reduced_rank(c: &mut Criterion) {
    let kx = Gaussian::new(0.05).unwrap();
    let ky = Gaussian::new(0.1).unwrap();
    let mut g = c.benchmark_group("okr-estimators/reduced-rank");
    g.sample_size(10);
    for n in [500usize, 1000] {
        let x = dense_rows(n, 20, 1);
        let y = dense_rows(n, 16, 2);
        let params = ReducedRankIokr::params(kx.clone(), ky.clone()).rank(64).lambda1(1e-4);
        g.bench_with_input(BenchmarkId::new("fit-p64", n), &n, |b, _| b.iter(|| params.fit(&x, &y).unwrap()));
        let checked = params.check_ref().unwrap();
        g.bench_with_input(BenchmarkId::new("lambda-path-4", n), &n, |b, _| {
            b.iter(|| checked.fit_lambda_path::<DenseRows, DenseRows>(&x, &y, &[1e-5, 1e-4, 1e-3, 1e-2]).unwrap())
        });
        let kde = Kde::params(kx.clone(), ky.clone()).rank(64).lambda(1e-4);
        g.bench_with_input(BenchmarkId::new("kde-fit-p64", n), &n, |b, _| b.iter(|| kde.fit(&x, &y).unwrap()));
    }
    g.finish();

    // Decoding 500 test points against 5000 candidates: p = 64 atoms vs IOKR's n = 1000.
    let (n, n_c) = (1000, 5000);
    let (x, y) = (dense_rows(n, 20, 1), dense_rows(n, 16, 2));
    let (xt, cands) = (dense_rows(500, 20, 3), dense_rows(n_c, 16, 4));
    let rr = ReducedRankIokr::params(kx.clone(), ky.clone()).rank(64).lambda1(1e-4).fit(&x, &y).unwrap();
    let iokr = Iokr::params(kx, ky).lambda(1e-4).fit(&x, &y).unwrap();
    let decoder = CandidateDecoder::new();
    let mut g = c.benchmark_group("okr-decode/reduced-rank-vs-iokr");
    g.sample_size(10);
    g.bench_function("reduced-rank-p64", |b| b.iter(|| decoder.decode(&rr, &xt, &cands).unwrap()));
    g.bench_function("iokr-n1000", |b| b.iter(|| decoder.decode(&iokr, &xt, &cands).unwrap()));
    g.finish();
}

criterion_group!(benches, reduced_rank);
criterion_main!(benches);
