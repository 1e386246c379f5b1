//! Sizes that come from users are checked against the data: a sketch, rank,
//! width or depth the data cannot use is a clear `InvalidParameter` error
//! naming the parameter, not an allocation abort or an hour-long run.

use faer::Mat;
use okr_estimators::kae::{K2ae, Kae, MAX_LAYERS};
use okr_estimators::leml::{Leml, Targets};
use okr_estimators::sketch::{Sketch, SketchKind, SketchSpec};
use okr_estimators::{Error, Fit, ParamGuard, SketchedIokr, TraceNorm, TraceNormSolver};
use okr_kernels::{CsrRows, DenseRows, LabelSets, Linear};

fn rows(n: usize, d: usize) -> DenseRows {
    DenseRows::new(Mat::from_fn(n, d, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.4)).unwrap()
}

fn invalid(err: Error, name: &str) {
    match err {
        Error::InvalidParameter { name: got, .. } => assert_eq!(got, name),
        other => panic!("expected an invalid {name}, got {other}"),
    }
}

#[test]
fn sketches_larger_than_the_sample_are_refused() {
    for kind in [
        SketchKind::Gaussian,
        SketchKind::Rademacher,
        SketchKind::SparseGaussian { p: None },
        SketchKind::SparseRademacher { p: Some(0.5) },
        SketchKind::Sjlt { s: 2 },
    ] {
        invalid(Sketch::draw(&SketchSpec::new(kind, 21), 20, 0).unwrap_err(), "sketch size");
        assert!(Sketch::draw(&SketchSpec::new(kind, 20), 20, 0).is_ok(), "{kind:?}");
    }
    // Sub-sampling caps itself at n: all points.
    let r = Sketch::draw(&SketchSpec::new(SketchKind::Uniform, 1_000_000), 20, 0).unwrap();
    assert_eq!(r.nrows(), 20);
    // Through the estimator, before anything of size m x n is allocated.
    let x = rows(20, 2);
    let err = SketchedIokr::params(Linear, Linear)
        .output_sketch(Some(SketchSpec::new(SketchKind::SparseGaussian { p: Some(1e-300) }, 100_000_000)))
        .fit(&x, &x)
        .unwrap_err();
    assert!(err.to_string().contains("100000000 (> 20)"), "{err}");
}

#[test]
fn trace_norm_rank_is_at_most_the_sample() {
    let x = rows(12, 3);
    let p = |solver, rank| TraceNorm::params(Linear, Linear).rank(rank).solver(solver).max_iter(5);
    for solver in [TraceNormSolver::GradientDescent, TraceNormSolver::Als] {
        invalid(p(solver, 13).fit(&x, &x).unwrap_err(), "rank");
        assert!(p(solver, 12).fit(&x, &x).is_ok());
    }
    // The convex solver has no rank.
    assert!(p(TraceNormSolver::Convex, 1000).fit(&x, &x).is_ok());
}

#[test]
fn leml_rank_is_at_most_the_label_count_and_tol_stops_early() {
    let x = CsrRows::from_dense(rows(30, 6).as_mat()).unwrap();
    let y = LabelSets::new(4, (0..30).map(|i| vec![i % 4, (i / 3) % 4]).collect()).unwrap();
    invalid(Leml::params().rank(5).fit(&x, Targets::Full(&y)).unwrap_err(), "rank");
    let full = Leml::params().rank(4).max_iter(40).fit(&x, Targets::Full(&y)).unwrap();
    assert_eq!(full.history().len(), 40, "no tol: max_iter iterations, as the paper");
    invalid(Leml::params().rank(4).max_iter(1_000_000_000).check().unwrap_err(), "max_iter");
    let early = Leml::params().rank(4).max_iter(1_000_000).tol(1e-3).fit(&x, Targets::Full(&y)).unwrap();
    let h = early.history();
    assert!(h.len() < 40, "stopped after {} iterations", h.len());
    let (prev, last) = (h[h.len() - 2].objective, h[h.len() - 1].objective);
    assert!(prev - last <= 1e-3 * prev.abs(), "stops at the first small decrease");
    assert!(h.windows(2).rev().skip(1).all(|w| w[0].objective - w[1].objective > 1e-3 * w[0].objective.abs()));
    invalid(Leml::params().tol(1.5).check().unwrap_err(), "tol");
}

#[test]
fn kae_depth_and_width_are_bounded() {
    let x = rows(10, 3);
    let deep = Kae::params().hidden_dims(vec![2; MAX_LAYERS]);
    invalid(deep.check_ref().unwrap_err(), "hidden_dims");
    assert!(Kae::params().hidden_dims(vec![2; MAX_LAYERS - 1]).check_ref().is_ok());
    let wide = Kae::params().hidden_dims(vec![11]).max_iter(2);
    let err = wide.fit(x.as_mat()).unwrap_err();
    assert!(err.to_string().contains("width 11 (> 10 = max(n_samples = 10, n_features = 3))"), "{err}");
    assert!(Kae::params().hidden_dims(vec![10]).max_iter(2).fit(x.as_mat()).is_ok());
    let gram = x.as_mat() * x.as_mat().transpose();
    invalid(K2ae::params().hidden_dims(vec![11]).max_iter(2).fit_k2ae_gram(gram.as_ref()).unwrap_err(), "hidden_dims");
}
