//! Sketch application: `K R^T` and `R K R^T` from the support's Gram columns
//! (sub-sampling and p-sparsified touch few columns, Gaussian and SJLT all),
//! and a whole SISOKR fit.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::Par;
use okr_benches::{label_sets, sparse_binary_rows};
use okr_estimators::Fit;
use okr_estimators::SketchedIokr;
use okr_estimators::sketch::{Sketch, SketchKind, SketchSpec};
use okr_kernels::Gaussian;

fn sketch_gram(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-estimators/sketch-gram");
    g.sample_size(10);
    let k = Gaussian::new(0.02).unwrap();
    let n = 4000;
    let x = sparse_binary_rows(n, 1836, 0.02, 2);
    for (name, kind) in [
        ("uniform", SketchKind::Uniform),
        ("sparse-rademacher", SketchKind::SparseRademacher { p: None }),
        ("sjlt-s4", SketchKind::Sjlt { s: 4 }),
        ("gaussian", SketchKind::Gaussian),
    ] {
        let r = Sketch::draw(&SketchSpec::new(kind, 500), n, 0).unwrap();
        g.bench_with_input(BenchmarkId::new(name, n), &r, |b, r| b.iter(|| r.sketch_gram(&k, &x, Par::rayon(0))));
    }
    g.finish();
}

fn sisokr_fit(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-estimators/sisokr-fit");
    g.sample_size(10);
    let (kx, ky) = (Gaussian::new(0.02).unwrap(), Gaussian::from_sigma2(2.4).unwrap());
    for n in [5000usize, 20000] {
        let x = sparse_binary_rows(n, 1836, 0.02, 3);
        let y = label_sets(n, 159, 2.4, n / 2, 4);
        let params = SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(1e-5)
            .input_sketch(Some(SketchSpec::new(SketchKind::Uniform, 1000)))
            .output_sketch(Some(SketchSpec::new(SketchKind::Uniform, 100)));
        g.bench_with_input(BenchmarkId::new("uniform-1000-uniform-100", n), &(x, y), |b, (x, y)| {
            b.iter(|| params.fit(x, y).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, sketch_gram, sisokr_fit);
criterion_main!(benches);
