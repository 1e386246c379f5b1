//! Weighted fits (`FitWeighted`, scikit-learn's `sample_weight`) against
//! brute-force weighted normal equations solved densely, for IOKR, reduced
//! rank, Nystroem and the sketched estimators; integer weights against
//! repeated rows; unit weights against the unweighted fit; and the refusal
//! of zero, negative, non-finite and wrong-length weights.
//!
//! Outputs are vectors with the linear output kernel and the candidates are
//! the unit vectors, so the scores `<h(x), e_k>` are the predictions `h(x)`
//! themselves.

mod common;

use common::{PairGauss, random_rows, rel_err, scores};
use faer::linalg::solvers::Solve;
use faer::{Mat, Side};
use okr_estimators::nystroem::Anchors;
use okr_estimators::persist::EstimatorSpec;
use okr_estimators::sketch::{Sketch, SketchKind, SketchSpec};
use okr_estimators::{
    Error, Fit, FitWeighted, Iokr, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNormSolver,
    check_sample_weight,
};
use okr_kernels::{DenseRows, Kernel, KernelSpec, Linear, Rows};
use okr_linalg::pinv;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Weights in [0.2, 3.2), seeded.
fn weights(n: usize, seed: u64) -> Vec<f64> {
    let mut r = common::lcg(seed);
    (0..n).map(|_| 1.7 + 1.5 * r()).collect()
}

/// The unit vectors of R^d: scoring them reads the prediction off.
fn unit_vectors(d: usize) -> DenseRows {
    DenseRows::new(Mat::identity(d, d)).unwrap()
}

/// Integer weights and the row indices that repeat each row that often.
fn integer_weights(n: usize) -> (Vec<f64>, Vec<usize>) {
    let w: Vec<f64> = (0..n).map(|i| (1 + (i * 7) % 3) as f64).collect();
    let rows = (0..n).flat_map(|i| std::iter::repeat_n(i, w[i] as usize)).collect();
    (w, rows)
}

/// `(K + c W^{-1})^{-1}` by the non-symmetric weighted normal equations
/// `(W K + c I) A = W`, solved by a dense LU (no Cholesky, no symmetric form).
#[allow(non_snake_case)]
fn weighted_ridge_map(k: &Mat<f64>, w: &[f64], c: f64) -> Mat<f64> {
    let n = k.nrows();
    let WK = Mat::from_fn(n, n, |i, j| w[i] * k[(i, j)] + if i == j { c } else { 0.0 });
    let W = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
    WK.partial_piv_lu().solve(&W)
}

#[test]
fn weighted_iokr_equals_the_dense_weighted_normal_equations() {
    for (n, seed) in [(7, 1), (25, 2), (40, 3)] {
        let (x, y, xt) = (random_rows(n, 3, seed), random_rows(n, 3, seed + 10), random_rows(6, 3, seed + 20));
        let w = weights(n, seed + 30);
        let kx = PairGauss(0.7);
        let lambda = 1e-2;
        let model = Iokr::params(kx.clone(), Linear).lambda(lambda).fit_weighted(&x, &y, &w).unwrap();
        let total: f64 = w.iter().sum();
        let a = weighted_ridge_map(&kx.gram(&x), &w, total * lambda);
        let want = kx.gram_block(&xt, &x) * a.transpose() * y.as_mat();
        let err = rel_err(&scores(&model, &xt, &unit_vectors(3)), &want);
        assert!(err < 1e-10, "n = {n}: {err:e}");
    }
}

#[test]
fn integer_weights_equal_repeated_rows_for_iokr() {
    let n = 30;
    let (x, y, xt) = (random_rows(n, 3, 5), random_rows(n, 2, 6), random_rows(5, 3, 7));
    let (w, rows) = integer_weights(n);
    let params = Iokr::params(PairGauss(0.9), Linear).lambda(1e-3);
    let weighted = params.fit_weighted(&x, &y, &w).unwrap();
    let repeated = params.fit(&x.select(&rows), &y.select(&rows)).unwrap();
    let cand = unit_vectors(2);
    let err = rel_err(&scores(&weighted, &xt, &cand), &scores(&repeated, &xt, &cand));
    assert!(err < 1e-10, "{err:e}");
}

#[test]
fn unit_weights_give_the_unweighted_fit_and_scaling_the_weights_changes_nothing() {
    let n = 24;
    let (x, y, xt) = (random_rows(n, 3, 8), random_rows(n, 4, 9), random_rows(5, 3, 10));
    let cand = unit_vectors(4);
    let ones = vec![1.0; n];
    let w = weights(n, 11);
    let scaled: Vec<f64> = w.iter().map(|v| v * 37.5).collect();
    let iokr = Iokr::params(PairGauss(0.9), Linear).lambda(1e-2);
    // IOKR: the same diagonal n * lambda, bit for bit.
    assert_eq!(
        iokr.fit_weighted(&x, &y, &ones).unwrap().coefficients(&xt).unwrap(),
        iokr.fit(&x, &y).unwrap().coefficients(&xt).unwrap()
    );
    let rr = ReducedRankIokr::params(PairGauss(0.9), Linear).rank(2).lambda1(1e-2).lambda2(1e-3);
    let ny = Nystroem::params(PairGauss(0.9), Linear).anchors(Anchors::Uniform(10)).lambda(1e-2).seed(4);
    let sk = SketchedIokr::params(PairGauss(0.9), Linear)
        .lambda(1e-2)
        .seed(4)
        .input_sketch(Some(SketchSpec::new(SketchKind::Gaussian, 10)))
        .output_sketch(Some(SketchSpec::new(SketchKind::Gaussian, 3)));
    // Scores of the unweighted fit, unit weights, weights w and 37.5 w.
    macro_rules! four {
        ($name:expr, $p:expr) => {
            (
                $name,
                scores(&$p.fit(&x, &y).unwrap(), &xt, &cand),
                scores(&$p.fit_weighted(&x, &y, &ones).unwrap(), &xt, &cand),
                scores(&$p.fit_weighted(&x, &y, &w).unwrap(), &xt, &cand),
                scores(&$p.fit_weighted(&x, &y, &scaled).unwrap(), &xt, &cand),
            )
        };
    }
    let pairs = [four!("iokr", iokr), four!("reduced-rank", rr), four!("nystroem", ny), four!("sisokr", sk)];
    for (name, plain, unit, weighted, rescaled) in pairs {
        assert!(rel_err(&unit, &plain) < 1e-10, "{name}: unit weights");
        assert!(rel_err(&rescaled, &weighted) < 1e-9, "{name}: scaled weights");
        // The weights do change the fit (the test above can fail).
        assert!(rel_err(&weighted, &plain) > 1e-6, "{name}: weights ignored");
    }
}

/// The weighted reduced-rank estimator from its definition: the weighted
/// ridge fitted values, the top-`p` eigenvectors of their weighted
/// covariance in R^d, and the projected weighted ridge prediction.
#[allow(non_snake_case, clippy::too_many_arguments)]
fn dense_weighted_reduced_rank(
    kx: &PairGauss,
    x: &DenseRows,
    y: &DenseRows,
    xt: &DenseRows,
    w: &[f64],
    p: usize,
    lambda1: f64,
    lambda2: f64,
) -> Mat<f64> {
    let n = x.n_rows();
    let K = kx.gram(x);
    let total: f64 = w.iter().sum();
    let Y = y.as_mat();
    let W1 = weighted_ridge_map(&K, w, total * lambda1);
    let fitted = &K * W1.transpose() * Y; // row i: h_1(x_i) in R^d
    let Wd = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
    let cov = fitted.transpose() * &Wd * &fitted;
    let cov = Mat::from_fn(cov.nrows(), cov.ncols(), |i, j| 0.5 * (cov[(i, j)] + cov[(j, i)]));
    let eig = cov.self_adjoint_eigen(Side::Lower).unwrap();
    let d = cov.nrows();
    let top = eig.U().subcols(d - p, p); // ascending eigenvalues: the last p
    let proj = top * top.transpose();
    let W2 = weighted_ridge_map(&K, w, total * lambda2);
    kx.gram_block(xt, x) * W2.transpose() * Y * proj
}

#[test]
fn weighted_reduced_rank_equals_its_definition() {
    for (n, seed) in [(12, 1), (30, 2)] {
        let (x, y, xt) = (random_rows(n, 3, seed), random_rows(n, 4, seed + 10), random_rows(6, 3, seed + 20));
        let w = weights(n, seed + 30);
        let kx = PairGauss(0.8);
        let (l1, l2) = (1e-2, 3e-3);
        let model = ReducedRankIokr::params(kx.clone(), Linear)
            .rank(2)
            .lambda1(l1)
            .lambda2(l2)
            .fit_weighted(&x, &y, &w)
            .unwrap();
        let want = dense_weighted_reduced_rank(&kx, &x, &y, &xt, &w, 2, l1, l2);
        let err = rel_err(&scores(&model, &xt, &unit_vectors(4)), &want);
        assert!(err < 1e-8, "n = {n}: {err:e}");
    }
}

#[test]
fn integer_weights_equal_repeated_rows_for_reduced_rank_and_nystroem() {
    let n = 26;
    let (x, y, xt) = (random_rows(n, 3, 15), random_rows(n, 4, 16), random_rows(5, 3, 17));
    let (w, rows) = integer_weights(n);
    let (xr, yr) = (x.select(&rows), y.select(&rows));
    let cand = unit_vectors(4);
    let rr = ReducedRankIokr::params(PairGauss(0.8), Linear).rank(2).lambda1(1e-2).lambda2(1e-3);
    let err = rel_err(
        &scores(&rr.fit_weighted(&x, &y, &w).unwrap(), &xt, &cand),
        &scores(&rr.fit(&xr, &yr).unwrap(), &xt, &cand),
    );
    assert!(err < 1e-8, "reduced rank: {err:e}");
    // The same anchors: rows 0, 3, ... of x, at their first copy in the repeated rows.
    let anchors: Vec<usize> = (0..n).step_by(3).collect();
    let first_copy: Vec<usize> = anchors.iter().map(|&a| rows.iter().position(|&r| r == a).unwrap()).collect();
    let ny = |a: Vec<usize>| Nystroem::params(PairGauss(0.8), Linear).anchors(Anchors::Given(a)).lambda(1e-3);
    let weighted = ny(anchors).fit_weighted(&x, &y, &w).unwrap();
    let repeated = ny(first_copy).fit(&xr, &yr).unwrap();
    let err = rel_err(&scores(&weighted, &xt, &cand), &scores(&repeated, &xt, &cand));
    assert!(err < 1e-8, "nystroem: {err:e}");
}

#[test]
#[allow(non_snake_case)]
fn weighted_nystroem_equals_the_dense_normal_equations() {
    let n = 45;
    let (x, y, xt) = (random_rows(n, 3, 21), random_rows(n, 3, 22), random_rows(6, 3, 23));
    let w = weights(n, 24);
    let kx = PairGauss(1.5);
    let lambda = 1e-3;
    let anchors: Vec<usize> = (0..n).step_by(4).collect();
    let model = Nystroem::params(kx.clone(), Linear)
        .anchors(Anchors::Given(anchors.clone()))
        .lambda(lambda)
        .fit_weighted(&x, &y, &w)
        .unwrap();
    let xa = x.select(&anchors);
    let Knm = kx.gram_block(&x, &xa);
    let Wd = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
    let total: f64 = w.iter().sum();
    let B = Knm.transpose() * &Wd * &Knm + kx.gram(&xa) * (total * lambda);
    let beta = pinv(B.as_ref(), Some(1e-13)).unwrap() * Knm.transpose() * &Wd * y.as_mat();
    let want = kx.gram_block(&xt, &xa) * beta;
    let err = rel_err(&scores(&model, &xt, &unit_vectors(3)), &want);
    assert!(err < 1e-8, "{err:e}");
}

/// Weighted SISOKR with dense matrices: `Omega_X = W K R^T (R (K W K + c K) R^T)^+`
/// (`R = I` when `None`), as `tests/sketched.rs`'s unweighted oracle.
#[allow(non_snake_case, clippy::too_many_arguments)]
fn dense_weighted_sisokr(
    kx: &PairGauss,
    x: &DenseRows,
    y: &DenseRows,
    xt: &DenseRows,
    w: &[f64],
    lambda: f64,
    rx: Option<Mat<f64>>,
    ry: Option<Mat<f64>>,
) -> Mat<f64> {
    let n = x.n_rows();
    let Kx = kx.gram(x);
    let Ky = Linear.gram(y);
    let Rx = rx.unwrap_or_else(|| Mat::identity(n, n));
    let (Ry, Omega_Y) = match ry {
        Some(Ry) => {
            let o = pinv((&Ry * &Ky * Ry.transpose()).as_ref(), Some(1e-12)).unwrap() * &Ry * &Ky;
            (Ry, o)
        }
        None => (Mat::identity(n, n), Mat::identity(n, n)),
    };
    let Wd = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
    let total: f64 = w.iter().sum();
    let sys = &Rx * (&Kx * &Wd * &Kx + &Kx * (total * lambda)) * Rx.transpose();
    let Omega_X = &Wd * &Kx * Rx.transpose() * pinv(sys.as_ref(), Some(1e-12)).unwrap();
    let alpha = Ry.transpose() * &Omega_Y * &Omega_X * &Rx * kx.gram_block(x, xt);
    alpha.transpose() * y.as_mat()
}

#[test]
fn weighted_sketched_estimators_equal_the_dense_formulas() {
    let (x, y, xt) = (random_rows(40, 3, 13), random_rows(40, 4, 14), random_rows(6, 3, 15));
    let w = weights(40, 16);
    let kx = PairGauss(5.0);
    let lambda = 1e-2;
    for kind in [SketchKind::Gaussian, SketchKind::Uniform, SketchKind::Sjlt { s: 2 }] {
        let (sx, sy) = (SketchSpec::new(kind, 12), SketchSpec::new(kind, 3));
        for (input, output) in [(Some(sx), Some(sy)), (Some(sx), None), (None, Some(sy)), (None, None)] {
            let model = SketchedIokr::params(kx.clone(), Linear)
                .lambda(lambda)
                .seed(21)
                .input_sketch(input)
                .output_sketch(output)
                .fit_weighted(&x, &y, &w)
                .unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(21);
            let rx = input.map(|s| Sketch::draw_for_kernel(&s, &kx, &x, lambda, &mut rng).unwrap().to_dense());
            let ry = output.map(|s| Sketch::draw_for_kernel(&s, &Linear, &y, lambda, &mut rng).unwrap().to_dense());
            let want = dense_weighted_sisokr(&kx, &x, &y, &xt, &w, lambda, rx, ry);
            let err = rel_err(&scores(&model, &xt, &unit_vectors(4)), &want);
            assert!(err < 1e-8, "{kind:?} {}: {err:e}", model.method());
        }
    }
}

#[test]
fn bad_weights_are_refused_by_every_weighted_fit() {
    let n = 10;
    let (x, y) = (random_rows(n, 3, 31), random_rows(n, 2, 32));
    let k = || KernelSpec::from(Linear);
    let specs = [
        EstimatorSpec::Iokr { lambda: 0.1 },
        EstimatorSpec::ReducedRank { rank: 1, lambda1: 0.1, lambda2: 0.1 },
        EstimatorSpec::Nystroem { lambda: 0.1, anchors: Anchors::Uniform(4), seed: 0 },
        EstimatorSpec::Sketched {
            lambda: 0.1,
            input_sketch: Some(SketchSpec::new(SketchKind::Gaussian, 4)),
            output_sketch: None,
            seed: 0,
        },
        EstimatorSpec::Sketched {
            lambda: 0.1,
            input_sketch: None,
            output_sketch: Some(SketchSpec::new(SketchKind::Gaussian, 2)),
            seed: 0,
        },
    ];
    for spec in &specs {
        assert!(spec.takes_sample_weight());
        spec.fit_weighted(k(), k(), &x, &y, &[1.5; 10]).unwrap();
        for (i, bad) in [(3, 0.0), (0, -1.0), (9, f64::NAN), (5, f64::INFINITY)] {
            let mut w = vec![1.0; n];
            w[i] = bad;
            let e = spec.fit_weighted(k(), k(), &x, &y, &w).unwrap_err();
            assert!(matches!(e, Error::InvalidSampleWeight { index, .. } if index == i), "{}: {e}", spec.name());
        }
        for len in [n - 1, n + 1] {
            let e = spec.fit_weighted(k(), k(), &x, &y, &vec![1.0; len]).unwrap_err();
            assert!(
                matches!(e, Error::ShapeMismatch { expected, got, .. } if expected == n && got == len),
                "{}: {e}",
                spec.name()
            );
        }
    }
    assert!(check_sample_weight(&[f64::MAX, f64::MAX], 2).is_err(), "a sum that overflows");
}

#[test]
fn estimators_without_a_weighted_fit_refuse_weights() {
    let n = 10;
    let (x, y) = (random_rows(n, 3, 41), random_rows(n, 2, 42));
    let k = || KernelSpec::from(Linear);
    for spec in [
        EstimatorSpec::Kde { rank: 1, lambda: 0.1, centered: false },
        EstimatorSpec::NystroemReducedRank {
            rank: 1,
            lambda1: 0.1,
            lambda2: 0.1,
            anchors: Anchors::Uniform(4),
            subset: Anchors::Uniform(6),
            seed: 0,
        },
        EstimatorSpec::TraceNorm { rank: 1, lambda: 0.1, solver: TraceNormSolver::Als, seed: 0, max_iter: 10 },
    ] {
        assert!(!spec.takes_sample_weight());
        let e = spec.fit_weighted(k(), k(), &x, &y, &[1.0; 10]).unwrap_err().to_string();
        assert!(e.contains("sample_weight") && e.contains(spec.name()), "{e}");
    }
}
