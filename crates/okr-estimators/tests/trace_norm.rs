//! Trace-norm (LR-SELF) solvers against oracles (spec 1.6-1.9, E6):
//! explicit-feature gradient descent, the convex optimum under the lambda
//! mapping (11) <-> (12), balanced factors, the whitened closed form, the
//! masked multitask variant with a full mask, and the zero-filled pair Gram.

use faer::{Mat, MatRef, Par};
use okr_estimators::trace_norm::masked::{MaskedOptions, MaskedTraceNorm, TaskEntries, zero_filled_pair_gram};
use okr_estimators::trace_norm::{
    SolverOptions, StepRule, convex_trace_norm, factorized_als, factorized_gd, factorized_objective, scaled_init,
};
use okr_estimators::{Fit, FitFrom};
use okr_estimators::{SurrogateModel, TraceNorm, TraceNormSolver};
use okr_kernels::{DenseRows, Linear, Rows};

mod common;
use common::*;

/// Low-rank regression data: Y = X G^T + noise, rank(G) = k.
fn low_rank_problem(n: usize, d: usize, t: usize, k: usize, seed: u64) -> (Mat<f64>, Mat<f64>) {
    let x = random_rows(n, d, seed).into_mat();
    let u = random_rows(t, k, seed + 1).into_mat();
    let v = random_rows(d, k, seed + 2).into_mat();
    let noise = random_rows(n, t, seed + 3).into_mat();
    let y = &x * &v * u.transpose() + Mat::from_fn(n, t, |i, j| 0.1 * noise[(i, j)]);
    (x, y)
}

fn rel(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2().max(1e-300)
}

#[test]
fn kernel_iterates_equal_explicit_feature_gd() {
    faer::set_global_parallelism(Par::Seq);
    for (case, &(n, d, t, r)) in [(15, 4, 6, 3), (30, 6, 9, 6), (12, 8, 3, 2)].iter().enumerate() {
        let (x, y) = low_rank_problem(n, d, t, 2, 10 * case as u64);
        let (kx, ky) = (&x * x.transpose(), &y * y.transpose());
        let lambda = 0.05;
        let (m0, n0) = scaled_init(kx.as_ref(), ky.as_ref(), r, 0.1, case as u64);
        // Explicit factors A = Y^T N (t, r), B = X^T M (d, r).
        let mut a = y.transpose() * &n0;
        let mut b = x.transpose() * &m0;
        let eta = 0.05;
        let iters = 300;
        let nf = n as f64;
        for _ in 0..iters {
            let resid = &x * &b * a.transpose() - &y; // (n, t)
            let ga = resid.transpose() * &x * &b * (2.0 / nf) + &a * (2.0 * lambda);
            let gb = x.transpose() * &resid * &a * (2.0 / nf) + &b * (2.0 * lambda);
            a = &a - ga * eta;
            b = &b - gb * eta;
        }
        let opts = SolverOptions { max_iter: iters, rel_tol: 0.0, grad_tol: 0.0, step: StepRule::Fixed(eta) };
        let sol = factorized_gd(kx.as_ref(), ky.as_ref(), lambda, m0, n0, &opts).unwrap();
        assert_eq!(sol.n_iter, iters);
        let ak = y.transpose() * &sol.n;
        let bk = x.transpose() * &sol.m;
        assert!(rel(ak.as_ref(), a.as_ref()) < 1e-10, "A: {}", rel(ak.as_ref(), a.as_ref()));
        assert!(rel(bk.as_ref(), b.as_ref()) < 1e-10, "B: {}", rel(bk.as_ref(), b.as_ref()));
        // The objective from kernels equals the explicit one.
        let resid = &x * &b * a.transpose() - &y;
        let j_explicit = resid.squared_norm_l2() / nf + lambda * (a.squared_norm_l2() + b.squared_norm_l2());
        assert!((sol.objective - j_explicit).abs() <= 1e-10 * j_explicit);
    }
}

#[test]
fn factorized_optimum_equals_convex_optimum_and_factors_balance() {
    faer::set_global_parallelism(Par::Seq);
    for (case, &(n, d, t, lambda)) in [(40, 6, 9, 0.05), (25, 5, 7, 0.2), (30, 8, 4, 0.01)].iter().enumerate() {
        let (x, y) = low_rank_problem(n, d, t, 2, 7 + case as u64);
        let (kx, ky) = (&x * x.transpose(), &y * y.transpose());
        let conv = convex_trace_norm(kx.as_ref(), ky.as_ref(), 2.0 * lambda, 1e-15, 200_000).unwrap();
        let r = d.min(t);
        let (m0, n0) = scaled_init(kx.as_ref(), ky.as_ref(), r, 0.05, 1);
        let opts = SolverOptions { max_iter: 50_000, rel_tol: 1e-14, grad_tol: 1e-12, ..Default::default() };
        let gd = factorized_gd(kx.as_ref(), ky.as_ref(), lambda, m0.clone(), n0.clone(), &opts).unwrap();
        let als = factorized_als(kx.as_ref(), ky.as_ref(), lambda, m0, n0, &opts).unwrap();
        // The convex solution's balanced factors reach the same value of (12).
        let jc =
            factorized_objective(kx.as_ref(), ky.as_ref(), conv.factors.m.as_ref(), conv.factors.n.as_ref(), lambda);
        assert!((jc - conv.objective).abs() <= 1e-9 * conv.objective, "{jc} vs {}", conv.objective);
        for (name, j) in [("gd", gd.objective), ("als", als.objective)] {
            assert!((j - conv.objective).abs() <= 1e-7 * conv.objective, "{name}: {j} vs convex {}", conv.objective);
        }
        // Balanced at the optimum: N^T K_y N = M^T K_x M and 1/2(|A|^2 + |B|^2) = |G|_*.
        let qy = gd.n.transpose() * &ky * &gd.n;
        let qx = gd.m.transpose() * &kx * &gd.m;
        assert!((&qy - &qx).norm_l2() <= 1e-4 * qy.norm_l2().max(1e-12), "balance {}", (&qy - &qx).norm_l2());
        let half_sum =
            0.5 * (qy.as_ref().diagonal().column_vector().sum() + qx.as_ref().diagonal().column_vector().sum());
        assert!((half_sum - conv.trace_norm).abs() <= 1e-5 * conv.trace_norm, "{half_sum} vs {}", conv.trace_norm);
        // Same predictor G = Y^T N M^T X.
        let g_gd = y.transpose() * &gd.n * gd.m.transpose() * &x;
        let g_cv = y.transpose() * &conv.factors.n * conv.factors.m.transpose() * &x;
        assert!(rel(g_gd.as_ref(), g_cv.as_ref()) < 1e-4, "G {}", rel(g_gd.as_ref(), g_cv.as_ref()));
    }
}

#[test]
fn convex_solver_matches_whitened_closed_form() {
    faer::set_global_parallelism(Par::Seq);
    let (n, d, t, s) = (20, 5, 6, 3.0f64);
    // X = sqrt(s) Q with orthonormal columns Q: X^T X = s I.
    let raw = random_rows(n, d, 3).into_mat();
    let q = raw.qr().compute_thin_Q();
    let x = &q * s.sqrt();
    let y = random_rows(n, t, 4).into_mat();
    let lambda11 = 0.3;
    let conv =
        convex_trace_norm((&x * x.transpose()).as_ref(), (&y * y.transpose()).as_ref(), lambda11, 1e-15, 100_000)
            .unwrap();
    // Closed form in explicit coordinates: G* = SVT_{n lambda/(2 s)}(Y^T X / s).
    let c = y.transpose() * &x * (1.0 / s);
    let svd = c.thin_svd().unwrap();
    let thr = n as f64 * lambda11 / (2.0 * s);
    let sv = svd.S().column_vector();
    let shrunk = Mat::from_fn(sv.nrows(), sv.nrows(), |i, j| if i == j { (sv[i] - thr).max(0.0) } else { 0.0 });
    let g_star = svd.U() * shrunk * svd.V().transpose();
    let g = y.transpose() * &conv.factors.n * conv.factors.m.transpose() * &x;
    assert!(rel(g.as_ref(), g_star.as_ref()) < 1e-8, "{}", rel(g.as_ref(), g_star.as_ref()));
}

#[test]
fn model_alpha_and_coefficients_agree_with_factors() {
    faer::set_global_parallelism(Par::Seq);
    let (x, y) = low_rank_problem(18, 4, 5, 2, 21);
    let (xr, yr) = (DenseRows::new(x.clone()).unwrap(), DenseRows::new(y.clone()).unwrap());
    for solver in [TraceNormSolver::GradientDescent, TraceNormSolver::Als, TraceNormSolver::Convex] {
        let model = TraceNorm::params(Linear, Linear).lambda(0.02).rank(4).solver(solver).fit(&xr, &yr).unwrap();
        let xt = random_rows(3, 4, 5);
        let alpha = model.alpha(&xt).unwrap();
        let v = &x * xt.as_mat().transpose();
        let expected = model.n() * model.m().transpose() * &v;
        assert!(rel(alpha.as_ref(), expected.as_ref()) < 1e-12);
        // h(x) through the surrogate interface = Y^T alpha.
        let c = model.coefficients(&xt).unwrap();
        let mut g = Mat::zeros(model.n_atoms(), 5);
        let basis = DenseRows::new(Mat::<f64>::identity(5, 5)).unwrap();
        model.atom_products_into(&basis, g.as_mut(), Par::Seq).unwrap();
        let h = &c * &g; // (3, 5): <h(x_t), e_j>
        let h_alpha = alpha.transpose() * &y;
        assert!(rel(h.as_ref(), h_alpha.as_ref()) < 1e-10, "{solver:?}");
        assert_eq!(xr.n_rows(), model.n().nrows());
    }
}

#[test]
fn masked_full_mask_equals_convex_optimum() {
    faer::set_global_parallelism(Par::Seq);
    let (n, d, t) = (30, 5, 6);
    let (x, y) = low_rank_problem(n, d, t, 2, 33);
    let users = (0..n).map(|u| (0..t).map(|k| (k, y[(u, k)])).collect()).collect();
    let entries = TaskEntries::from_users(t, users).unwrap();
    let lambda = 0.5;
    let opts = MaskedOptions { lambda, rank: 5, max_iter: 5000, rel_tol: 1e-15, init_scale: 0.1, seed: 0 };
    let model = MaskedTraceNorm::fit(&x, &entries, &opts, None).unwrap();
    // 1/2 |.|^2 + lambda/2 (|A|^2+|B|^2), times 2/n = (12) with lambda/n = (11) with 2 lambda/n.
    let (kx, ky) = (&x * x.transpose(), &y * y.transpose());
    let conv = convex_trace_norm(kx.as_ref(), ky.as_ref(), 2.0 * lambda / n as f64, 1e-15, 200_000).unwrap();
    let scaled = model.objective() * 2.0 / n as f64;
    assert!((scaled - conv.objective).abs() <= 1e-7 * conv.objective, "{scaled} vs {}", conv.objective);
    // Predictions agree with the convex G.
    let g_cv = y.transpose() * &conv.factors.n * conv.factors.m.transpose() * &x; // (t, d)
    for u in [0, 7, 29] {
        for k in 0..t {
            let p_cv: f64 = (0..d).map(|f| g_cv[(k, f)] * x[(u, f)]).sum();
            assert!((model.predict(x.as_ref(), u, k) - p_cv).abs() < 1e-4 * (1.0 + p_cv.abs()));
        }
    }
}

#[test]
fn zero_filled_pair_gram_equals_explicit_embedding() {
    let n_items = 6;
    let mut next = lcg(9);
    let mut ratings: Vec<Vec<(usize, f64)>> = Vec::new();
    for _ in 0..7 {
        let mut r = Vec::new();
        for i in 0..n_items {
            if next() > 0.4 {
                r.push((i, (next() * 10.0).round() - 5.0));
            }
        }
        ratings.push(r);
    }
    let g = zero_filled_pair_gram(n_items, &ratings);
    // Explicit: pair (a, b) coordinate is r_b - r_a if both rated, else 0.
    let emb: Vec<Vec<f64>> = ratings
        .iter()
        .map(|r| {
            let mut v = vec![None; n_items];
            r.iter().for_each(|&(i, x)| v[i] = Some(x));
            let mut e = Vec::new();
            for a in 0..n_items {
                for b in a + 1..n_items {
                    e.push(match (v[a], v[b]) {
                        (Some(x), Some(y)) => y - x,
                        _ => 0.0,
                    });
                }
            }
            e
        })
        .collect();
    for u in 0..7 {
        for w in 0..7 {
            let dotp: f64 = emb[u].iter().zip(&emb[w]).map(|(a, b)| a * b).sum();
            assert!((g[(u, w)] - dotp).abs() < 1e-12);
        }
    }
}

#[test]
fn invalid_inputs_are_errors() {
    let k = Mat::<f64>::identity(3, 3);
    let (m0, n0) = scaled_init(k.as_ref(), k.as_ref(), 2, 0.1, 0);
    assert!(factorized_gd(k.as_ref(), k.as_ref(), 0.0, m0.clone(), n0.clone(), &SolverOptions::default()).is_err());
    let k2 = Mat::<f64>::identity(4, 4);
    assert!(factorized_gd(k.as_ref(), k2.as_ref(), 0.1, m0, n0, &SolverOptions::default()).is_err());
    let x = DenseRows::new(Mat::zeros(3, 2)).unwrap();
    let y = DenseRows::new(Mat::zeros(4, 2)).unwrap();
    assert!(TraceNorm::params(Linear, Linear).fit(&x, &y).is_err());
    assert!(TraceNorm::params(Linear, Linear).lambda(f64::NAN).fit(&x, &x).is_err());
}

/// Warm start (issue 37): `k` iterations continued for `k` more equal `2k`
/// iterations in one fit, bit for bit, for gradient descent (across the
/// every-100-iterations refresh of its products) and ALS; the iteration
/// count covers both runs.
#[test]
fn warm_start_continues_gd_and_als_exactly() {
    let (x, y) = low_rank_problem(24, 5, 6, 2, 21);
    let (x, y) = (DenseRows::new(x).unwrap(), DenseRows::new(y).unwrap());
    for (solver, ks) in [(TraceNormSolver::GradientDescent, [7, 60]), (TraceNormSolver::Als, [2, 4])] {
        for k in ks {
            let params =
                |it| TraceNorm::params(Linear, Linear).lambda(1e-2).rank(3).solver(solver).max_iter(it).tol(1e-300);
            let once = params(2 * k).seed(3).fit(&x, &y).unwrap();
            let half = params(k).seed(3).fit(&x, &y).unwrap();
            let twice = params(k).fit_from(&half, &x, &y).unwrap();
            assert_eq!(once.n_iter(), 2 * k, "{solver:?} k={k}: the run stopped early");
            assert_eq!(twice.n_iter(), 2 * k, "{solver:?} k={k}");
            assert_eq!(twice.m(), once.m(), "{solver:?} k={k}");
            assert_eq!(twice.n(), once.n(), "{solver:?} k={k}");
            assert_eq!(twice.objective(), once.objective(), "{solver:?} k={k}");
            // The continued fit is a fit: its objective is not above the first half's.
            assert!(twice.objective() <= half.objective(), "{solver:?} k={k}");
        }
    }
}

/// A continued fit refuses data of another shape, another rank and the
/// convex solver, naming what differs.
#[test]
fn warm_start_refuses_other_shapes_and_the_convex_solver() {
    let (x, y) = low_rank_problem(20, 4, 5, 2, 22);
    let (x, y) = (DenseRows::new(x).unwrap(), DenseRows::new(y).unwrap());
    let params = TraceNorm::params(Linear, Linear).lambda(1e-2).rank(3).max_iter(5);
    let model = params.clone().fit(&x, &y).unwrap();
    let fewer = (x.select(&(0..15).collect::<Vec<_>>()), y.select(&(0..15).collect::<Vec<_>>()));
    let err = params.clone().fit_from(&model, &fewer.0, &fewer.1).unwrap_err().to_string();
    assert!(err.contains("training samples of a continued fit") && err.contains("20"), "{err}");
    let err = params.clone().rank(2).fit_from(&model, &x, &y).unwrap_err().to_string();
    assert!(err.contains("rank of a continued fit"), "{err}");
    let err = params.solver(TraceNormSolver::Convex).fit_from(&model, &x, &y).unwrap_err().to_string();
    assert!(err.contains("convex"), "{err}");
}
