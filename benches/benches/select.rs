//! Model selection: one K-fold grid over widths and ridges, IOKR through its
//! regularization path (`GaussianIokrSearch`: one eigendecomposition per fold
//! and width) against the same grid by refitting (`RefitSearch`: one fit per
//! fold, width and ridge), and Nystroem by refitting (`okr tune --estimator
//! nystroem`).

use criterion::{Criterion, criterion_group, criterion_main};
use okr_benches::{dense_rows, label_sets};
use okr_decode::select::{DecodedScorer, RefitSearch};
use okr_estimators::nystroem::Anchors;
use okr_estimators::select::GaussianIokrSearch;
use okr_estimators::{Fit, Iokr, Nystroem};
use okr_eval::{KFold, f1_samples};
use okr_kernels::{DenseRows, Gaussian, LabelSets};

type BoxError = Box<dyn std::error::Error>;

fn select(c: &mut Criterion) {
    let n = 1200;
    let (x, y) = (dense_rows(n, 20, 1), label_sets(n, 30, 3.0, 200, 2));
    let ky = Gaussian::new(1.0 / 6.0).unwrap();
    let folds = KFold::new(3).shuffle(0).split(n).unwrap();
    let (widths, lambdas) = (vec![0.5, 1.0, 2.0], vec![1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]);
    let f1 = |t: &LabelSets, p: &LabelSets| -> Result<f64, BoxError> { Ok(f1_samples(t, p)?) };
    let search = RefitSearch::new(widths.clone(), lambdas.clone());

    let mut g = c.benchmark_group("okr-decode/select-3-folds-3-widths-8-ridges-n1200");
    g.sample_size(10);
    g.bench_function("iokr-path", |b| {
        let path = GaussianIokrSearch::new(widths.clone(), lambdas.clone());
        b.iter(|| path.run(&x, &folds, &mut DecodedScorer::new(&y, &ky, f1), &mut || {}).unwrap())
    });
    g.bench_function("iokr-refit", |b| {
        let fit = |x: &DenseRows, y: &LabelSets, gamma: f64, lambda: f64| -> Result<_, BoxError> {
            Ok(Iokr::params(Gaussian::new(gamma)?, ky.clone()).lambda(lambda).fit(x, y)?)
        };
        b.iter(|| search.run(&x, &y, &folds, fit, f1, &mut || {}).unwrap())
    });
    g.bench_function("nystroem-m200-refit", |b| {
        let fit = |x: &DenseRows, y: &LabelSets, gamma: f64, lambda: f64| -> Result<_, BoxError> {
            let params = Nystroem::params(Gaussian::new(gamma)?, ky.clone()).lambda(lambda);
            Ok(params.anchors(Anchors::Uniform(200)).fit(x, y)?)
        };
        b.iter(|| search.run(&x, &y, &folds, fit, f1, &mut || {}).unwrap())
    });
    g.finish();
}

criterion_group!(benches, select);
criterion_main!(benches);
