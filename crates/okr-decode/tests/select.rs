//! Selection by decoded outputs: closed-form leave-one-out decoding against
//! n explicit refits, and the fold scorer against an explicit fit per fold.

use faer::Mat;
use okr_decode::CandidateDecoder;
use okr_decode::select::{DecodedScorer, RefitSearch, best_excluding, loo_grid};
use okr_estimators::nystroem::{Anchors, Nystroem};
use okr_estimators::select::GaussianIokrSearch;
use okr_estimators::{Fit, Iokr};
use okr_kernels::{DenseRows, Gaussian, Kernel, LabelSets, Rows};

/// Per-sample F1 of the decoded sets (the metric under test is any function of the sets).
fn f1(t: &LabelSets, p: &LabelSets) -> Result<f64, okr_decode::Error> {
    let s: f64 = t
        .iter()
        .zip(p.iter())
        .map(|(a, b)| {
            let inter = a.iter().filter(|l| b.contains(l)).count();
            if a.len() + b.len() == 0 { 0.0 } else { 2.0 * inter as f64 / (a.len() + b.len()) as f64 }
        })
        .sum();
    Ok(s / t.n_rows() as f64)
}

fn data(n: usize, seed: u64) -> (DenseRows, LabelSets) {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x = Mat::from_fn(n, 3, |_, _| next());
    // Labels follow the features, with some sets repeated and some unique.
    let sets = (0..n)
        .map(|i| (0..4).filter(|&l| x[(i, l % 3)] > 0.35 + 0.1 * l as f64 || (i % 5 == 0 && l == 3)).collect())
        .collect();
    (DenseRows::new(x).unwrap(), LabelSets::new(4, sets).unwrap())
}

#[test]
fn loo_decoding_equals_explicit_refits() {
    let (x, y) = data(14, 3);
    let ky = Gaussian::new(0.5).unwrap();
    let kernels = [(1.0, Gaussian::new(0.8).unwrap()), (2.0, Gaussian::new(3.0).unwrap())];
    let lambdas = [1e-4, 1e-2, 1e-1];
    let rows: Vec<usize> = (0..14).collect();
    let mut steps = 0;
    let res = loo_grid(&x, &y, &kernels, &ky, &lambdas, &rows, 1.0, f1, &mut || steps += 1).unwrap();
    assert_eq!((steps, res.widths.clone()), (2, vec![1.0, 2.0]));
    let n = x.n_rows();
    for (wi, (_, kx)) in kernels.iter().enumerate() {
        for (li, &lambda) in lambdas.iter().enumerate() {
            let mut predicted = Vec::new();
            for i in 0..n {
                let rest: Vec<usize> = (0..n).filter(|&j| j != i).collect();
                let (xr, yr) = (x.select(&rest), y.select(&rest));
                // The same ridge mu = n lambda without sample i.
                let model = Iokr::params(kx.clone(), ky.clone())
                    .lambda(n as f64 * lambda / (n - 1) as f64)
                    .fit(&xr, &yr)
                    .unwrap();
                let (cand, _) = yr.unique();
                let best = CandidateDecoder::new().decode(&model, &x.select(&[i]), &cand).unwrap().best()[0];
                predicted.push(cand.set(best).to_vec());
            }
            let want = f1(&y, &LabelSets::new(4, predicted).unwrap()).unwrap();
            let got = res.fold_scores[wi][li][0];
            assert!((got - want).abs() < 1e-12, "kernel {wi} lambda {lambda}: {got} vs {want}");
        }
    }
}

#[test]
fn decoded_scorer_equals_explicit_fold_fits() {
    let (x, y) = data(18, 4);
    let ky = Gaussian::new(0.5).unwrap();
    let folds: Vec<(Vec<usize>, Vec<usize>)> =
        (0..3).map(|f| ((0..18).filter(|i| i % 3 != f).collect(), (0..18).filter(|i| i % 3 == f).collect())).collect();
    let mut scorer = DecodedScorer::new(&y, &ky, f1);
    let res =
        GaussianIokrSearch::new(vec![0.5, 2.0], vec![1e-3, 1e-1]).run(&x, &folds, &mut scorer, &mut || {}).unwrap();
    for (wi, &c) in res.widths.iter().enumerate() {
        for (li, &lambda) in res.lambdas.iter().enumerate() {
            for (f, (tr, va)) in folds.iter().enumerate() {
                let kx = Gaussian::new(c / res.median_sq_dist).unwrap();
                let model = Iokr::params(kx, ky.clone()).lambda(lambda).fit(&x.select(tr), &y.select(tr)).unwrap();
                let (cand, _) = y.select(tr).unique();
                let best = CandidateDecoder::new().decode(&model, &x.select(va), &cand).unwrap().best();
                let want = f1(&y.select(va), &cand.select(&best)).unwrap();
                let got = res.fold_scores[wi][li][f];
                assert!((got - want).abs() < 1e-12, "c={c} lambda={lambda} fold {f}: {got} vs {want}");
            }
        }
    }
}

fn three_folds(n: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    (0..3).map(|f| ((0..n).filter(|i| i % 3 != f).collect(), (0..n).filter(|i| i % 3 == f).collect())).collect()
}

#[test]
fn refit_search_of_iokr_equals_the_eigendecomposition_path() {
    // Two routes to the same fold scores: one IOKR fit per cell, and
    // GaussianIokrSearch's one eigendecomposition per fold and width.
    let (x, y) = data(45, 7);
    let ky = Gaussian::new(0.5).unwrap();
    let folds = three_folds(45);
    let (widths, lambdas) = (vec![0.25, 1.0, 4.0], vec![1e-4, 1e-2, 3e-1]);
    let fit = |x: &DenseRows, y: &LabelSets, gamma: f64, lambda: f64| -> Result<_, okr_decode::Error> {
        Ok(Iokr::params(Gaussian::new(gamma).unwrap(), ky.clone()).lambda(lambda).fit(x, y)?)
    };
    let mut steps = 0;
    let refit =
        RefitSearch::new(widths.clone(), lambdas.clone()).run(&x, &y, &folds, fit, f1, &mut || steps += 1).unwrap();
    let mut scorer = DecodedScorer::new(&y, &ky, f1);
    let path = GaussianIokrSearch::new(widths, lambdas).run(&x, &folds, &mut scorer, &mut || {}).unwrap();
    assert_eq!(steps, 9, "one step per fold and width");
    assert_eq!(refit.median_sq_dist, path.median_sq_dist);
    for (wi, row) in path.fold_scores.iter().enumerate() {
        for (li, scores) in row.iter().enumerate() {
            for (f, want) in scores.iter().enumerate() {
                let got = refit.fold_scores[wi][li][f];
                assert!((got - want).abs() < 1e-12, "width {wi} lambda {li} fold {f}: {got} vs {want}");
            }
        }
    }
    assert_eq!((refit.best_width, refit.best_lambda), (path.best_width, path.best_lambda));
    // Not a constant: the grid separates its cells.
    let means: Vec<f64> = refit.mean.iter().flatten().copied().collect();
    assert!(means.iter().any(|m| (m - means[0]).abs() > 1e-3), "{means:?}");
}

#[test]
fn refit_search_of_nystroem_equals_explicit_fold_fits() {
    let (x, y) = data(36, 9);
    let ky = Gaussian::new(0.5).unwrap();
    let folds = three_folds(36);
    let params = |gamma: f64, lambda: f64| {
        Nystroem::params(Gaussian::new(gamma).unwrap(), ky.clone()).lambda(lambda).anchors(Anchors::Uniform(10)).seed(3)
    };
    let fit = |x: &DenseRows, y: &LabelSets, gamma: f64, lambda: f64| -> Result<_, okr_decode::Error> {
        Ok(params(gamma, lambda).fit(x, y)?)
    };
    let res = RefitSearch::new(vec![0.5, 2.0], vec![1e-3, 1e-1]).run(&x, &y, &folds, fit, f1, &mut || {}).unwrap();
    for (wi, &c) in res.widths.iter().enumerate() {
        for (li, &lambda) in res.lambdas.iter().enumerate() {
            for (f, (tr, va)) in folds.iter().enumerate() {
                let model = params(c / res.median_sq_dist, lambda).fit(&x.select(tr), &y.select(tr)).unwrap();
                let (cand, _) = y.select(tr).unique();
                let best = CandidateDecoder::new().decode(&model, &x.select(va), &cand).unwrap().best();
                let want = f1(&y.select(va), &cand.select(&best)).unwrap();
                assert_eq!(res.fold_scores[wi][li][f], want, "c={c} lambda={lambda} fold {f}");
            }
        }
    }
}

#[test]
fn refit_search_of_vector_outputs_equals_explicit_fold_fits() {
    // Any output type: vectors decoded over each fold model's distinct
    // training vectors, scored by the negated mean squared error.
    let (x, _) = data(30, 11);
    // Distinct vectors, so that IOKR's atoms are the training rows in order.
    let y = DenseRows::new(Mat::from_fn(30, 2, |i, j| (0.7 * (i * (j + 1)) as f64).sin())).unwrap();
    let ky = Gaussian::new(0.5).unwrap();
    let folds = three_folds(30);
    let neg_mse = |t: &DenseRows, p: &DenseRows| -> Result<f64, okr_decode::Error> {
        Ok(-(t.as_mat() - p.as_mat()).squared_norm_l2() / t.n_rows() as f64)
    };
    let params = |gamma: f64, lambda: f64| Iokr::params(Gaussian::new(gamma).unwrap(), ky.clone()).lambda(lambda);
    let fit = |x: &DenseRows, y: &DenseRows, gamma: f64, lambda: f64| -> Result<_, okr_decode::Error> {
        Ok(params(gamma, lambda).fit(x, y)?)
    };
    let res = RefitSearch::new(vec![0.5, 4.0], vec![1e-4, 1e-1]).run(&x, &y, &folds, fit, neg_mse, &mut || {}).unwrap();
    for (wi, &c) in res.widths.iter().enumerate() {
        for (li, &lambda) in res.lambdas.iter().enumerate() {
            for (f, (tr, va)) in folds.iter().enumerate() {
                let (y_tr, y_va) = (y.select(tr), y.select(va));
                let model = params(c / res.median_sq_dist, lambda).fit(&x.select(tr), &y_tr).unwrap();
                // Brute force: every validation row against every training vector.
                let coef = okr_estimators::SurrogateModel::coefficients(&model, &x.select(va)).unwrap();
                let mut err = 0.0;
                for v in 0..va.len() {
                    let score = |cand: usize| {
                        let kc: f64 = (0..tr.len()).map(|i| coef[(v, i)] * ky.eval(&y_tr, i, &y_tr, cand)).sum();
                        ky.eval(&y_tr, cand, &y_tr, cand) - 2.0 * kc
                    };
                    let best = (0..tr.len()).min_by(|&a, &b| score(a).total_cmp(&score(b))).unwrap();
                    err += (0..2).map(|j| (y_va.as_mat()[(v, j)] - y_tr.as_mat()[(best, j)]).powi(2)).sum::<f64>();
                }
                let want = -err / va.len() as f64;
                let got = res.fold_scores[wi][li][f];
                assert!((got - want).abs() < 1e-12, "c={c} lambda={lambda} fold {f}: {got} vs {want}");
            }
        }
    }
    let means: Vec<f64> = res.mean.iter().flatten().copied().collect();
    assert!(means.iter().any(|m| (m - means[0]).abs() > 1e-6), "{means:?}");
}

#[test]
fn refit_search_scores_failed_fits_with_the_error_score() {
    let (x, y) = data(30, 5);
    let ky = Gaussian::new(0.5).unwrap();
    let folds = three_folds(30);
    // Fits at the smallest ridge fail, as a Cholesky at too small a ridge would.
    let fit = |x: &DenseRows, y: &LabelSets, gamma: f64, lambda: f64| -> Result<_, okr_decode::Error> {
        if lambda < 1e-6 {
            return Err(okr_decode::Error::NoCandidates);
        }
        Ok(Iokr::params(Gaussian::new(gamma).unwrap(), ky.clone()).lambda(lambda).fit(x, y)?)
    };
    let search = RefitSearch::new(vec![0.5, 2.0], vec![1e-8, 1e-3, 1e-1]);
    assert!(search.clone().run(&x, &y, &folds, fit, f1, &mut || {}).is_err(), "no error score: the error ends it");
    let res = search.clone().error_score(f64::NAN).run(&x, &y, &folds, fit, f1, &mut || {}).unwrap();
    let reference =
        RefitSearch::new(vec![0.5, 2.0], vec![1e-3, 1e-1]).run(&x, &y, &folds, fit, f1, &mut || {}).unwrap();
    for wi in 0..2 {
        assert!(res.fold_scores[wi][0].iter().all(|s| s.is_nan()) && res.mean[wi][0].is_nan());
        assert_eq!(res.fold_scores[wi][1..], reference.fold_scores[wi][..], "the other cells as without the failures");
    }
    assert_eq!((res.best_width, res.best_lambda - 1), (reference.best_width, reference.best_lambda));
    // Every fit failing: the first error, not a grid of NaN.
    let all_fail = RefitSearch::new(vec![1.0], vec![1e-8]).error_score(f64::NAN);
    assert!(matches!(all_fail.run(&x, &y, &folds, fit, f1, &mut || {}), Err(okr_decode::Error::NoCandidates)));
}

#[test]
fn refit_search_refuses_bad_grids_folds_and_inputs() {
    let (x, y) = data(12, 2);
    let ky = Gaussian::new(0.5).unwrap();
    let folds = three_folds(12);
    let run = |search: RefitSearch, x: &DenseRows, y: &LabelSets, folds: &[(Vec<usize>, Vec<usize>)]| {
        let fit = |x: &DenseRows, y: &LabelSets, gamma: f64, lambda: f64| -> Result<_, okr_decode::Error> {
            Ok(Iokr::params(Gaussian::new(gamma).unwrap(), ky.clone()).lambda(lambda).fit(x, y)?)
        };
        search.run(x, y, folds, fit, f1, &mut || {}).map(|_| ()).unwrap_err().to_string()
    };
    let ok = RefitSearch::new(vec![1.0], vec![1e-3]);
    assert!(run(RefitSearch::new(vec![], vec![1e-3]), &x, &y, &folds).contains("widths is empty"));
    assert!(run(RefitSearch::new(vec![1.0], vec![f64::NAN]), &x, &y, &folds).contains("lambdas = NaN"));
    assert!(run(ok.clone().median_rows(1), &x, &y, &folds).contains("median_rows"));
    assert!(run(ok.clone(), &x, &y.select(&[0, 1]), &folds).contains("outputs, one per input row"));
    assert!(run(ok.clone(), &x, &y, &[]).contains("folds is empty"));
    assert!(run(ok.clone(), &x, &y, &[(vec![0, 1], vec![12])]).contains("fold row index"));
    assert!(run(ok.clone(), &x, &y, &[(vec![0, 1], vec![])]).contains("fold training or validation rows"));
    let same = DenseRows::new(Mat::from_fn(12, 2, |_, j| j as f64)).unwrap();
    assert!(run(ok, &same, &y, &folds).contains("all identical"));
}

#[test]
fn best_excluding_leaves_out_and_reports_errors() {
    let p = faer::mat![[3.0, 3.0, 0.0]];
    assert_eq!(best_excluding(p.as_ref(), &[1.0, 1.0, 1.0], &[None]).unwrap(), [0], "ties: lowest index");
    assert_eq!(best_excluding(p.as_ref(), &[1.0, 1.0, 1.0], &[Some(0)]).unwrap(), [1]);
    let one = faer::mat![[1.0]];
    assert!(matches!(best_excluding(one.as_ref(), &[1.0], &[Some(0)]), Err(okr_decode::Error::NoCandidates)));
    let nan = faer::mat![[f64::NAN]];
    assert!(matches!(best_excluding(nan.as_ref(), &[1.0], &[None]), Err(okr_decode::Error::NonFiniteScore { row: 0 })));
}
