//! LEML Hessian-vector products (Algorithms 1 and 2) on a bibtex-shaped
//! stand-in (n = 4880, d = 1836, L = 159, about 69 features and 2.4 labels
//! per point), k = 64.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::Col;
use okr_estimators::leml::{BilinearObjective, FullSquaredObjective, Loss, PartialLabels, SparseDesign};
use okr_eval::StandinPreset;
use okr_kernels::CsrRows;
use okr_linalg::TronObjective;

fn bibtex_like() -> (CsrRows, okr_kernels::LabelSets) {
    let (train, _) = StandinPreset::from_name("bibtex").expect("bibtex preset").spec().seed(0).generate().unwrap();
    let x = match &train.x {
        okr_eval::Features::Sparse(x) => x.clone(),
        okr_eval::Features::Dense(x) => CsrRows::from_dense(x.as_mat()).unwrap(),
    };
    (x, train.y)
}

fn hv(c: &mut Criterion) {
    let (x, y) = bibtex_like();
    let design = SparseDesign::new(&x);
    let k = 64;
    let l = y.n_labels();
    let h: Vec<f64> = (0..l * k).map(|p| ((p * 7919) % 1000) as f64 / 1000.0).collect();
    let d = x.n_features();
    let w = Col::from_fn(d * k, |p| ((p * 104729) % 1000) as f64 / 1e5);
    let s = Col::from_fn(d * k, |p| ((p * 31) % 17) as f64 - 8.0);
    let mut out = Col::zeros(d * k);
    let mut group = c.benchmark_group("okr-estimators/leml_hv");
    let mut alg2 = FullSquaredObjective::new(&design, &y, &h, k, 1.0, None);
    alg2.fun(w.as_ref());
    alg2.grad(w.as_ref(), out.as_mut());
    group.bench_function(BenchmarkId::new("algorithm2-sq-full", k), |b| b.iter(|| alg2.hv(s.as_ref(), out.as_mut())));
    let omega = PartialLabels::sample(&y, 0.2, -1.0, 0).unwrap();
    let mut alg1 = BilinearObjective::partial(&design, &h, k, &omega, Loss::Logistic, 1.0);
    alg1.fun(w.as_ref());
    alg1.grad(w.as_ref(), out.as_mut());
    group.bench_function(BenchmarkId::new("algorithm1-lr-20pct", k), |b| b.iter(|| alg1.hv(s.as_ref(), out.as_mut())));
    group.finish();
}

criterion_group!(benches, hv);
criterion_main!(benches);
