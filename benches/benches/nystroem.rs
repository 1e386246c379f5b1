//! Nystroem KRR (streamed and in-memory fits) and the Nystroem reduced-rank
//! estimator: fit, and decoding through p atoms against Nystroem's distinct
//! training outputs.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use okr_benches::dense_rows;
use okr_decode::CandidateDecoder;
use okr_estimators::Fit;
use okr_estimators::nystroem::Anchors;
use okr_estimators::{Nystroem, NystroemReducedRank, ParamGuard};
use okr_kernels::{DenseRows, Gaussian};

fn nystroem(c: &mut Criterion) {
    let kx = Gaussian::new(0.05).unwrap();
    let ky = Gaussian::new(0.1).unwrap();
    let mut g = c.benchmark_group("okr-estimators/nystroem");
    g.sample_size(10);
    for n in [2000usize, 8000] {
        let x = dense_rows(n, 20, 1);
        let y = dense_rows(n, 16, 2);
        let checked =
            Nystroem::params(kx.clone(), ky.clone()).anchors(Anchors::Uniform(500)).lambda(1e-4).check().unwrap();
        g.bench_with_input(BenchmarkId::new("fit-streamed-m500", n), &n, |b, _| {
            b.iter(|| checked.fit(&x, &y).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("fit-in-memory-m500", n), &n, |b, _| {
            b.iter(|| checked.fit_in_memory::<DenseRows, DenseRows>(&x, &y).unwrap())
        });
        let rr = NystroemReducedRank::params(kx.clone(), ky.clone())
            .anchors(Anchors::Uniform(500))
            .subset(Anchors::Uniform(1000))
            .rank(64)
            .lambda1(1e-4);
        g.bench_with_input(BenchmarkId::new("reduced-rank-fit-m500-s1000-p64", n), &n, |b, _| {
            b.iter(|| rr.fit(&x, &y).unwrap())
        });
    }
    g.finish();

    // Decoding 500 test points against 5000 candidates: p = 64 atoms vs
    // Nystroem's n = 2000 distinct training outputs.
    let (n, n_c) = (2000, 5000);
    let (x, y) = (dense_rows(n, 20, 1), dense_rows(n, 16, 2));
    let (xt, cands) = (dense_rows(500, 20, 3), dense_rows(n_c, 16, 4));
    let ny = Nystroem::params(kx.clone(), ky.clone()).anchors(Anchors::Uniform(500)).lambda(1e-4).fit(&x, &y).unwrap();
    let rr = NystroemReducedRank::params(kx, ky)
        .anchors(Anchors::Uniform(500))
        .subset(Anchors::Uniform(1000))
        .rank(64)
        .lambda1(1e-4)
        .fit(&x, &y)
        .unwrap();
    let decoder = CandidateDecoder::new();
    let mut g = c.benchmark_group("okr-decode/nystroem-reduced-rank-vs-nystroem");
    g.sample_size(10);
    g.bench_function("reduced-rank-p64", |b| b.iter(|| decoder.decode(&rr, &xt, &cands).unwrap()));
    g.bench_function("nystroem-n2000", |b| b.iter(|| decoder.decode(&ny, &xt, &cands).unwrap()));
    g.finish();
}

criterion_group!(benches, nystroem);
criterion_main!(benches);
