//! SELF + HS against a brute-force per-task ridge solve, primal and dual
//! tasks, the lambda path against single fits, and bad input.

mod common;

use common::lcg;
use faer::Mat;
use faer::linalg::solvers::Solve;
use okr_estimators::trace_norm::SelfHs;
use okr_estimators::trace_norm::masked::TaskEntries;
use okr_estimators::{Error, ParamGuard};

/// Random features `(n, d)` and entries on `n_tasks` tasks: task `t` is
/// observed by about `rate(t)` of the users, the last task by nobody.
fn problem(n: usize, d: usize, n_tasks: usize, seed: u64) -> (Mat<f64>, TaskEntries) {
    let mut r = lcg(seed);
    let x = Mat::from_fn(n, d, |_, _| r());
    let users = (0..n)
        .map(|_| {
            (0..n_tasks - 1)
                .filter_map(|t| {
                    // Task 0 is dense (primal), the others sparse (dual for few users).
                    let keep = if t == 0 { 0.9 } else { 0.15 };
                    (0.5 * (r() + 1.0) < keep).then(|| (t, 3.0 * r()))
                })
                .collect()
        })
        .collect();
    (x, TaskEntries::from_users(n_tasks, users).unwrap())
}

/// `w_t = (X_U^T X_U + n_t lambda I)^-1 X_U^T y_U` by a dense LU solve.
fn brute_force(x: &Mat<f64>, entries: &TaskEntries, lambda: f64) -> Mat<f64> {
    let d = x.ncols();
    let mut w = Mat::zeros(d, entries.n_tasks());
    for t in 0..entries.n_tasks() {
        let obs: Vec<(usize, f64)> = (0..entries.n_users())
            .flat_map(|u| {
                let (ts, vs) = entries.user(u);
                ts.iter().zip(vs).filter(|(tk, _)| **tk as usize == t).map(move |(_, v)| (u, *v)).collect::<Vec<_>>()
            })
            .collect();
        if obs.is_empty() {
            continue;
        }
        let xu = Mat::from_fn(obs.len(), d, |i, f| x[(obs[i].0, f)]);
        let y = Mat::from_fn(obs.len(), 1, |i, _| obs[i].1);
        let mut a = xu.transpose() * &xu;
        for k in 0..d {
            a[(k, k)] += obs.len() as f64 * lambda;
        }
        let sol = a.partial_piv_lu().solve(xu.transpose() * &y);
        for k in 0..d {
            w[(k, t)] = sol[(k, 0)];
        }
    }
    w
}

#[test]
fn weights_equal_brute_force_ridge_per_task() {
    for (n, d, n_tasks, seed) in [(30usize, 8usize, 6usize, 0u64), (60, 12, 9, 1), (25, 4, 5, 2)] {
        let (x, entries) = problem(n, d, n_tasks, seed);
        let lambdas = [1e-3, 0.1, 10.0];
        let path = SelfHs::fit_lambda_path(x.as_ref(), &entries, &lambdas).unwrap();
        for (model, &lambda) in path.iter().zip(&lambdas) {
            let want = brute_force(&x, &entries, lambda);
            let err = (model.weights() - &want).norm_max() / (1.0 + want.norm_max());
            assert!(err < 1e-9, "n={n} d={d} lambda={lambda}: {err}");
            let single = SelfHs::params().lambda(lambda).check().unwrap().fit(x.as_ref(), &entries).unwrap();
            assert!((single.weights() - model.weights()).norm_max() < 1e-12);
            // The unobserved last task predicts 0; scores are x_u^T w_t.
            assert!((0..d).all(|k| model.weights()[(k, n_tasks - 1)] == 0.0));
            let pred = model.predict(x.as_ref()).unwrap();
            assert!((pred[(3, 0)] - model.score(x.as_ref(), 3, 0)).abs() < 1e-12);
        }
        // Both forms occur: task 0 primal (n_t >= d), sparse tasks dual.
        assert!(path[0].n_dual_tasks() > 0 && path[0].n_dual_tasks() < n_tasks, "n={n} d={d}");
    }
}

#[test]
fn bad_input_is_an_error() {
    let (x, entries) = problem(10, 3, 3, 4);
    for l in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(SelfHs::params().lambda(l).check(), Err(Error::InvalidParameter { .. })));
        assert!(matches!(
            SelfHs::fit_lambda_path(x.as_ref(), &entries, &[1.0, l]),
            Err(Error::InvalidParameter { .. })
        ));
    }
    let fewer = Mat::<f64>::zeros(9, 3);
    let params = SelfHs::params().check().unwrap();
    assert!(matches!(params.fit(fewer.as_ref(), &entries), Err(Error::ShapeMismatch { .. })));
    let model = params.fit(x.as_ref(), &entries).unwrap();
    assert!(matches!(model.predict(Mat::<f64>::zeros(2, 4).as_ref()), Err(Error::ShapeMismatch { .. })));
}

/// Chunked scoring equals the unchunked fit + score (and the brute-force
/// ridge) at every query, for chunk sizes 1, 2, 3 and all tasks at once,
/// with queries on rows of other features, repeated and unobserved tasks.
#[test]
fn chunked_scores_equal_unchunked_fit_and_score() {
    use okr_estimators::trace_norm::score_lambda_path_chunked;
    for (n, d, n_tasks, seed) in [(30usize, 8usize, 6usize, 3u64), (60, 12, 9, 4)] {
        let (x, entries) = problem(n, d, n_tasks, seed);
        let mut r = lcg(seed + 100);
        let xq = Mat::from_fn(7, d, |_, _| r());
        let queries: Vec<(usize, usize)> =
            (0..40).map(|i| ((i * 5) % 7, (i * 7 + i / 3) % n_tasks)).chain([(0, 0), (0, 0)]).collect();
        let lambdas = [1e-3, 0.1, 10.0];
        let full = SelfHs::fit_lambda_path(x.as_ref(), &entries, &lambdas).unwrap();
        for chunk in [1, 2, 3, n_tasks + 5] {
            let got = score_lambda_path_chunked(x.as_ref(), &entries, &lambdas, xq.as_ref(), &queries, chunk).unwrap();
            assert_eq!(got.len(), lambdas.len());
            for (li, model) in full.iter().enumerate() {
                let want_w = brute_force(&x, &entries, lambdas[li]);
                for (qi, &(q, t)) in queries.iter().enumerate() {
                    let unchunked = model.score(xq.as_ref(), q, t);
                    assert!((got[li][qi] - unchunked).abs() < 1e-12, "chunk {chunk} query {qi}");
                    let brute: f64 = (0..d).map(|k| xq[(q, k)] * want_w[(k, t)]).sum();
                    assert!((got[li][qi] - brute).abs() < 1e-9 * (1.0 + brute.abs()));
                }
                // The unobserved last task scores 0.
                assert!(queries.iter().zip(&got[li]).filter(|((_, t), _)| *t == n_tasks - 1).all(|(_, v)| *v == 0.0));
            }
        }
        // Bad input.
        assert!(score_lambda_path_chunked(x.as_ref(), &entries, &[0.0], xq.as_ref(), &queries, 2).is_err());
        assert!(score_lambda_path_chunked(x.as_ref(), &entries, &lambdas, xq.as_ref(), &queries, 0).is_err());
        let short = Mat::<f64>::zeros(3, d + 1);
        assert!(score_lambda_path_chunked(x.as_ref(), &entries, &lambdas, short.as_ref(), &[], 2).is_err());
    }
}
