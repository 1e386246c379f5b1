//! Reduced-rank IOKR against oracles: the explicit finite-dimensional
//! projection of ridge fitted values (linear kernels, `lambda1 != lambda2`),
//! IOKR at full rank, and the projection identities of spec 1.3 / 7.

use faer::{Mat, Par};
use okr_estimators::Fit;
use okr_estimators::{Error, Iokr, ParamGuard, ReducedRankIokr, ReducedRankParams, SurrogateModel};
use okr_kernels::{DenseRows, LabelSets, Linear, Rows};

mod common;
use common::*;

#[test]
fn kernelized_equals_explicit_projection() {
    faer::set_global_parallelism(Par::Seq);
    // (n, d, m, p): rank(K_h) <= min(d, m).
    for (k, &(n, d, m, p)) in [(12, 4, 6, 3), (20, 8, 5, 4), (9, 6, 10, 2)].iter().enumerate() {
        let seed = 100 * k as u64;
        let (x, y) = (random_rows(n, d, seed), random_rows(n, m, seed + 1));
        let (xt, yc) = (random_rows(5, d, seed + 2), random_rows(7, m, seed + 3));
        let (lambda1, lambda2) = (0.1, 0.01);
        let model = ReducedRankIokr::params(PairLinear, PairLinear)
            .rank(p)
            .lambda1(lambda1)
            .lambda2(lambda2)
            .fit(&x, &y)
            .unwrap();
        assert_eq!(model.rank(), p);
        // Explicit: fitted values H = Y^T W1 K_x (m, n), covariance H H^T / n.
        let (xm, ym) = (x.as_mat(), y.as_mat());
        let kx = xm * xm.transpose();
        let h = ym.transpose() * ridge_inverse(&kx, lambda1) * &kx;
        let cov = (&h * h.transpose()) * (1.0 / n as f64);
        let eig = okr_linalg::eigh(cov.as_ref()).unwrap();
        let vp = eig.vectors().subcols(0, p).to_owned();
        let proj = &vp * vp.transpose();
        // P h_{lambda2}(x_t) as rows (n_test, m).
        let h2 = (ridge_inverse(&kx, lambda2) * (xm * xt.as_mat().transpose())).transpose() * ym;
        let ph2 = &h2 * &proj;
        let want = &ph2 * yc.as_mat().transpose();
        let got = scores(&model, &xt, &yc);
        let e_scores = rel_err(&got, &want);
        // ||P h||^2 = ||C_t||^2 (orthonormal atoms); squared RKHS errors to the candidates' rows.
        let c = model.coefficients(&xt).unwrap();
        let norm_got = Mat::from_fn(5, 1, |t, _| (0..p).map(|j| c[(t, j)].powi(2)).sum::<f64>());
        let norm_want = Mat::from_fn(5, 1, |t, _| (0..m).map(|j| ph2[(t, j)].powi(2)).sum::<f64>());
        let e_norms = rel_err(&norm_got, &norm_want);
        let yt = yc.slice(0..5);
        let errs = model.rkhs_sq_errors(&xt, &yt).unwrap();
        let errs_want = Mat::from_fn(5, 1, |t, _| (0..m).map(|j| (ph2[(t, j)] - yt.as_mat()[(t, j)]).powi(2)).sum());
        let e_rkhs = rel_err(&Mat::from_fn(5, 1, |t, _| errs[t]), &errs_want);
        // mu_i / n are the covariance eigenvalues (spec 7.3).
        let r = eig.values().len().min(n);
        let mu_n = Mat::from_fn(r, 1, |i, _| model.mu()[i] / n as f64);
        let cov_w = Mat::from_fn(r, 1, |i, _| eig.values()[i]);
        let e_mu = rel_err(&mu_n, &cov_w);
        eprintln!(
            "explicit (n={n}, d={d}, m={m}, p={p}): scores {e_scores:.1e}, norms {e_norms:.1e}, rkhs {e_rkhs:.1e}, mu {e_mu:.1e}"
        );
        for e in [e_scores, e_norms, e_rkhs, e_mu] {
            assert!(e < 1e-10, "relative error {e:e}");
        }
    }
}

#[test]
fn full_rank_equals_iokr() {
    faer::set_global_parallelism(Par::Seq);
    // Gaussian input kernel: K_x invertible. Linear outputs in R^5: rank(K_h) = 5.
    let (n, d, m) = (20, 3, 5);
    let (x, y) = (random_rows(n, d, 1), random_rows(n, m, 2));
    let (xt, yc) = (random_rows(6, d, 3), random_rows(11, m, 4));
    for (lambda1, lambda2) in [(1e-3, 1e-3), (0.1, 1e-3)] {
        let rr = ReducedRankIokr::params(PairGauss(0.8), PairLinear)
            .rank(100)
            .lambda1(lambda1)
            .lambda2(lambda2)
            .fit(&x, &y)
            .unwrap();
        assert_eq!((rr.rank(), rr.requested_rank(), rr.numerical_rank()), (m, 100, m));
        let iokr = Iokr::params(PairGauss(0.8), PairLinear).lambda(lambda2).fit(&x, &y).unwrap();
        let e = rel_err(&scores(&rr, &xt, &yc), &scores(&iokr, &xt, &yc));
        eprintln!("full rank = IOKR (lambda1 {lambda1}, lambda2 {lambda2}): {e:.1e}");
        assert!(e < 1e-9, "{e:e}");
    }
    // Repeated label sets: distinct outputs merged, still IOKR at full rank.
    let x = random_rows(8, 3, 21);
    let y =
        LabelSets::new(4, vec![vec![0, 2], vec![1], vec![0, 2], vec![], vec![1], vec![3], vec![0, 2], vec![]]).unwrap();
    let rr = ReducedRankIokr::params(PairGauss(0.6), Linear).rank(8).lambda1(1e-2).fit(&x, &y).unwrap();
    assert_eq!(rr.distinct_outputs().n_rows(), 4);
    assert_eq!(rr.y_train(), y);
    assert_eq!(rr.rank(), 3); // {0,2}, {1}, {3} span 3 dimensions; {} is zero.
    let iokr = Iokr::params(PairGauss(0.6), Linear).lambda(1e-2).fit(&x, &y).unwrap();
    let cand = LabelSets::new(4, vec![vec![0], vec![1, 2], vec![3], vec![0, 1, 2, 3]]).unwrap();
    let xt = random_rows(5, 3, 22);
    let e = rel_err(&scores(&rr, &xt, &cand), &scores(&iokr, &xt, &cand));
    eprintln!("full rank = IOKR (label sets): {e:.1e}");
    assert!(e < 1e-9, "{e:e}");
}

#[test]
fn atoms_are_orthonormal_and_prefixes_equal_refits() {
    faer::set_global_parallelism(Par::Seq);
    let (n, d, m) = (30, 3, 4);
    let (x, y) = (random_rows(n, d, 5), random_rows(n, m, 6));
    let xt = random_rows(7, d, 7);
    let params = ReducedRankIokr::params(PairGauss(0.7), PairGauss(0.3)).lambda1(1e-3).lambda2(1e-2);
    let full = params.clone().rank(12).fit(&x, &y).unwrap();
    assert_eq!(full.rank(), 12);
    // G K_y G^T = I_p, with K_y over the training outputs.
    let mut gk = Mat::zeros(12, n);
    full.atom_products_into(&y, gk.as_mut(), Par::Seq).unwrap();
    let ggt = &gk * full.encoder().transpose();
    let e = rel_err(&ggt, &Mat::identity(12, 12));
    eprintln!("G K_y G^T = I: {e:.1e}");
    assert!(e < 1e-9, "{e:e}");
    let c_full = full.coefficients(&xt).unwrap();
    let mut prev = [0.0; 7];
    for q in 1..=12 {
        let refit = params.clone().rank(q).fit(&x, &y).unwrap();
        let trunc = full.truncated(q).unwrap();
        assert_eq!(trunc.requested_rank(), q);
        let e = rel_err(&scores(&trunc, &xt, &y), &scores(&refit, &xt, &y));
        assert!(e < 1e-10, "rank {q}: {e:e}");
        // ||P_q h(x)||^2 is a cumulative sum over the coordinates.
        for (t, pv) in prev.iter_mut().enumerate() {
            let norm: f64 = (0..q).map(|j| c_full[(t, j)].powi(2)).sum();
            let c = trunc.coefficients(&xt.slice(t..t + 1)).unwrap();
            let norm_q: f64 = (0..q).map(|j| c[(0, j)].powi(2)).sum();
            assert!((norm - norm_q).abs() <= 1e-10 * (1.0 + norm));
            assert!(norm_q >= *pv - 1e-12, "norm decreased at rank {q}");
            *pv = norm_q;
        }
    }
}

#[test]
fn lambda_path_equals_refits() {
    faer::set_global_parallelism(Par::Seq);
    let (x, y) = (random_rows(25, 3, 31), random_rows(25, 4, 32));
    let xt = random_rows(6, 3, 33);
    let params = ReducedRankIokr::params(PairGauss(0.6), PairGauss(0.4)).rank(7);
    let lambdas = [1e-5, 1e-3, 1e-1];
    let path = params.check_ref().unwrap().fit_lambda_path(&x, &y, &lambdas).unwrap();
    assert_eq!(path.len(), lambdas.len());
    for (model, &l) in path.iter().zip(&lambdas) {
        let refit = params.clone().lambda1(l).lambda2(l).fit(&x, &y).unwrap();
        assert_eq!(model.params_used(), refit.params_used());
        let e = rel_err(&scores(model, &xt, &y), &scores(&refit, &xt, &y));
        assert!(e < 1e-10, "lambda {l}: {e:e}");
    }
    let bad = params.check_ref().unwrap().fit_lambda_path(&x, &y, &[1e-3, 0.0]);
    assert!(matches!(bad, Err(Error::InvalidParameter { name: "lambda", .. })));
}

#[test]
fn rank_above_numerical_rank_is_capped_and_reported() {
    let (x, y) = (random_rows(15, 4, 8), random_rows(15, 3, 9));
    let model = ReducedRankIokr::params(PairGauss(0.5), PairLinear).rank(10).fit(&x, &y).unwrap();
    assert_eq!((model.rank(), model.requested_rank(), model.numerical_rank()), (3, 10, 3));
    assert_eq!(model.mu().len(), 15);
    assert!(model.mu().windows(2).all(|w| w[0] >= w[1]));
    assert_eq!(model.truncated(7).unwrap().rank(), 3);
    // A looser tolerance drops more directions.
    let mu = model.mu();
    let tol = 0.5 * (mu[1] + mu[2]) / mu[0];
    let loose = ReducedRankIokr::params(PairGauss(0.5), PairLinear).rank(10).rank_tolerance(tol).fit(&x, &y).unwrap();
    assert_eq!(loose.rank(), 2);
}

#[test]
fn invalid_inputs_are_errors() {
    let x = random_rows(5, 3, 1);
    let y = random_rows(5, 2, 2);
    let p = || ReducedRankIokr::params(PairLinear, PairLinear);
    let err = p().rank(0).fit(&x, &y).unwrap_err();
    assert!(matches!(err, Error::InvalidParameter { name: "rank", .. }), "{err}");
    assert!(err.to_string().contains(">= 1"), "{err}");
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = p().lambda1(bad).fit(&x, &y).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "lambda1", .. }), "{err}");
        let err = p().lambda2(bad).fit(&x, &y).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "lambda2", .. }), "{err}");
    }
    for bad in [-1e-3, 1.0, f64::NAN] {
        let err = p().rank_tolerance(bad).check().unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "rank_tolerance", .. }), "{err}");
    }
    let checked = p().lambda1(0.2).check().unwrap();
    assert_eq!((checked.rank(), checked.lambda2(), checked.rank_tolerance()), (64, 0.2, 1e-10));
    let err = p().fit(&x, &y.select(&[0, 1])).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    let err = p().fit(&x.select(&[]), &y.select(&[])).unwrap_err();
    assert!(matches!(err, Error::Empty { .. }), "{err}");
    let zeros = DenseRows::new(Mat::zeros(5, 2)).unwrap();
    let err = p().fit(&x, &zeros).unwrap_err();
    assert!(matches!(err, Error::ZeroRank { .. }), "{err}");
    let model = p().fit(&x, &y).unwrap();
    let err = model.coefficients(&random_rows(2, 4, 3)).unwrap_err();
    assert!(err.to_string().contains("expected 3, got 4"), "{err}");
    let mut g = Mat::zeros(model.rank(), 2);
    let err = model.atom_products_into(&random_rows(2, 5, 3), g.as_mut(), Par::Seq).unwrap_err();
    assert!(err.to_string().contains("expected 2, got 5"), "{err}");
    assert!(model.truncated(0).is_err());
}

#[test]
fn params_and_model_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<ReducedRankParams<PairLinear, PairLinear>>();
    check::<ReducedRankIokr<DenseRows, DenseRows, PairLinear, PairLinear>>();
}

#[test]
fn fit_idempotent_and_serde_round_trip() {
    faer::set_global_parallelism(Par::Seq);
    let (x, y) = (random_rows(25, 3, 11), random_rows(25, 4, 12));
    let (xt, yc) = (random_rows(6, 3, 13), random_rows(9, 4, 14));
    let params = ReducedRankIokr::params(PairGauss(0.5), PairGauss(0.2)).rank(5).lambda1(1e-3).lambda2(3e-3);
    let m1 = params.fit(&x, &y).unwrap();
    let m2 = params.fit(&x, &y).unwrap();
    assert_eq!(m1.coefficients(&xt).unwrap(), m2.coefficients(&xt).unwrap());
    assert_eq!(m1.encoder(), m2.encoder());
    assert_eq!(m1.mu(), m2.mu());
    let bytes = postcard::to_stdvec(&m1).unwrap();
    let back: ReducedRankIokr<DenseRows, DenseRows, PairGauss, PairGauss> = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(scores(&m1, &xt, &yc), scores(&back, &xt, &yc));
    assert_eq!((back.rank(), back.requested_rank(), back.params_used()), (5, 5, m1.params_used()));
    let json = serde_json::to_string(&m1).unwrap();
    let back: ReducedRankIokr<DenseRows, DenseRows, PairGauss, PairGauss> = serde_json::from_str(&json).unwrap();
    assert_eq!(m1.coefficients(&xt).unwrap(), back.coefficients(&xt).unwrap());
}
