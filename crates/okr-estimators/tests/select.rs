//! Model selection against explicit refits: the closed-form leave-one-out
//! and GCV errors against n refits and a dense hat matrix, and the K-fold
//! path search against one dense ridge solve per fold, width and lambda.

mod common;

use common::{PairGauss, random_rows, rel_err, ridge_inverse};
use faer::{Mat, MatRef};
use okr_estimators::Error;
use okr_estimators::select::{FoldScorer, GaussianIokrSearch, LooPath};
use okr_kernels::{DenseRows, Kernel};

fn sub(m: &Mat<f64>, rows: &[usize], cols: &[usize]) -> Mat<f64> {
    Mat::from_fn(rows.len(), cols.len(), |i, j| m[(rows[i], cols[j])])
}

/// Mean squared LOO residual in H_Y from n explicit ridge refits with the
/// same `mu = n lambda`.
fn loo_by_refits(kx: &Mat<f64>, ky: &Mat<f64>, lambda: f64) -> f64 {
    let n = kx.nrows();
    let mut total = 0.0;
    for i in 0..n {
        let rest: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        let k_rest = sub(kx, &rest, &rest);
        // (K_rest + (n - 1) lambda' I) with lambda' = n lambda / (n - 1).
        let inv = ridge_inverse(&k_rest, n as f64 * lambda / (n - 1) as f64);
        let alpha = &inv * sub(kx, &rest, &[i]);
        let ky_cross = sub(ky, &rest, &[i]);
        let ky_rest = sub(ky, &rest, &rest);
        let fit_norm = (alpha.transpose() * &ky_rest * &alpha)[(0, 0)];
        let cross = (alpha.transpose() * &ky_cross)[(0, 0)];
        total += ky[(i, i)] - 2.0 * cross + fit_norm;
    }
    total / n as f64
}

/// GCV from the dense hat matrix `H = K (K + n lambda I)^-1`.
fn gcv_dense(kx: &Mat<f64>, ky: &Mat<f64>, lambda: f64) -> f64 {
    let n = kx.nrows();
    let h = kx * ridge_inverse(kx, lambda);
    let r = Mat::<f64>::identity(n, n) - &h;
    let num = &r * ky * r.transpose();
    let trace_h: f64 = (0..n).map(|i| h[(i, i)]).sum();
    let rss: f64 = (0..n).map(|i| num[(i, i)]).sum::<f64>() / n as f64;
    rss / (1.0 - trace_h / n as f64).powi(2)
}

#[test]
fn loo_and_gcv_equal_explicit_refits() {
    for (seed, n, d) in [(0u64, 12usize, 2usize), (1, 20, 3), (2, 31, 5)] {
        let x = random_rows(n, d, seed);
        let y = random_rows(n, 4, seed + 100);
        let kx = PairGauss(0.7).gram(&x);
        let ky = PairGauss(0.3).gram(&y);
        let lambdas = [1e-5, 1e-3, 1e-1, 3.0];
        let res = LooPath::new(kx.as_ref(), ky.as_ref()).unwrap().scan(&lambdas).unwrap();
        for (li, &lambda) in lambdas.iter().enumerate() {
            let want = loo_by_refits(&kx, &ky, lambda);
            assert!(
                (res.loo[li] - want).abs() <= 1e-8 * (1.0 + want.abs()),
                "loo n={n} lambda={lambda}: {} vs {want}",
                res.loo[li]
            );
            let want = gcv_dense(&kx, &ky, lambda);
            assert!(
                (res.gcv[li] - want).abs() <= 1e-8 * (1.0 + want.abs()),
                "gcv n={n} lambda={lambda}: {} vs {want}",
                res.gcv[li]
            );
        }
        let argmin = |v: &[f64]| (0..v.len()).fold(0, |b, i| if v[i] < v[b] { i } else { b });
        assert_eq!(res.best_loo, argmin(&res.loo));
        assert_eq!(res.best_gcv, argmin(&res.gcv));
    }
}

#[test]
fn loo_rejects_bad_input() {
    let x = random_rows(6, 2, 3);
    let kx = PairGauss(1.0).gram(&x);
    let path = LooPath::new(kx.as_ref(), kx.as_ref()).unwrap();
    assert!(matches!(path.errors(0.0), Err(Error::InvalidParameter { .. })));
    assert!(matches!(path.errors(f64::NAN), Err(Error::InvalidParameter { .. })));
    assert!(matches!(path.scan(&[]), Err(Error::Empty { .. })));
    let wrong = Mat::<f64>::identity(5, 5);
    assert!(matches!(LooPath::new(kx.as_ref(), wrong.as_ref()), Err(Error::ShapeMismatch { .. })));
}

/// Output side of the oracle: atom products are `K_y(train, validation)`;
/// every prediction `C B` is kept and scored by its RKHS error.
struct Recorder {
    ky: Mat<f64>,
    predictions: Vec<Mat<f64>>,
}

struct Fold {
    validation: Vec<usize>,
    g: Mat<f64>,
}

impl FoldScorer for Recorder {
    type Error = Error;
    type Fold = Fold;

    fn prepare(&mut self, train: &[usize], validation: &[usize]) -> Result<Fold, Error> {
        Ok(Fold { validation: validation.to_vec(), g: sub(&self.ky, train, validation) })
    }

    fn atom_products<'a>(&self, fold: &'a Fold) -> MatRef<'a, f64> {
        fold.g.as_ref()
    }

    fn score(&mut self, fold: &Fold, coefficients: MatRef<'_, f64>, projected: MatRef<'_, f64>) -> Result<f64, Error> {
        let p = coefficients * projected;
        // Negative of sum_v k(y_v, y_v) - 2 <h(x_v), psi(y_v)>: the RKHS error without the ||h||^2 term.
        let score = -fold.validation.iter().enumerate().map(|(j, &v)| self.ky[(v, v)] - 2.0 * p[(j, j)]).sum::<f64>();
        self.predictions.push(p);
        Ok(score)
    }
}

fn brute_median(x: &DenseRows) -> f64 {
    let m = x.as_mat();
    let mut d = Vec::new();
    for i in 0..m.nrows() {
        for j in i + 1..m.nrows() {
            d.push((0..m.ncols()).map(|f| (m[(i, f)] - m[(j, f)]).powi(2)).sum::<f64>());
        }
    }
    d.sort_by(f64::total_cmp);
    d[d.len() / 2]
}

#[test]
fn kfold_path_equals_explicit_fits() {
    // n = 15: 105 pairs, an odd count, so the median is one distance.
    let (n, d) = (15, 3);
    let x = random_rows(n, d, 7);
    let y = random_rows(n, 3, 8);
    let ky = PairGauss(0.5).gram(&y);
    let perm = [3usize, 11, 0, 7, 14, 5, 9, 1, 12, 6, 2, 13, 8, 4, 10];
    let folds: Vec<(Vec<usize>, Vec<usize>)> = (0..3)
        .map(|f| {
            let va: Vec<usize> = perm[f * 5..(f + 1) * 5].to_vec();
            let tr: Vec<usize> = perm.iter().copied().filter(|i| !va.contains(i)).collect();
            (tr, va)
        })
        .collect();
    let widths = vec![0.5, 2.0];
    let lambdas = vec![1e-4, 1e-2, 1.0];
    let search = GaussianIokrSearch::new(widths.clone(), lambdas.clone());
    let mut rec = Recorder { ky: ky.clone(), predictions: Vec::new() };
    let mut steps = 0;
    let res = search.run(&x, &folds, &mut rec, &mut || steps += 1).unwrap();
    assert_eq!(steps, folds.len() * widths.len());
    let median = brute_median(&x);
    assert!((res.median_sq_dist - median).abs() <= 1e-12 * median);

    let mut next = 0;
    let mut fold_scores = vec![vec![Vec::new(); lambdas.len()]; widths.len()];
    for (tr, va) in &folds {
        for (wi, &c) in widths.iter().enumerate() {
            let kx = PairGauss(c / median).gram(&x);
            for (li, &lambda) in lambdas.iter().enumerate() {
                let want = sub(&kx, va, tr) * ridge_inverse(&sub(&kx, tr, tr), lambda) * sub(&ky, tr, va);
                assert!(rel_err(&rec.predictions[next], &want) < 1e-9, "fold prediction c={c} lambda={lambda}");
                next += 1;
                let score = -va.iter().enumerate().map(|(j, &v)| ky[(v, v)] - 2.0 * want[(j, j)]).sum::<f64>();
                fold_scores[wi][li].push(score);
            }
        }
    }
    let mut best = (0, 0);
    for wi in 0..widths.len() {
        for li in 0..lambdas.len() {
            let s = &fold_scores[wi][li];
            let mean = s.iter().sum::<f64>() / 3.0;
            let std = (s.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
            for (a, b) in res.fold_scores[wi][li].iter().zip(s) {
                assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()));
            }
            assert!((res.mean[wi][li] - mean).abs() < 1e-9 * (1.0 + mean.abs()));
            assert!((res.std[wi][li] - std).abs() < 1e-8 * (1.0 + std));
            let (bw, bl) = best;
            if mean > fold_scores[bw][bl].iter().sum::<f64>() / 3.0 {
                best = (wi, li);
            }
        }
    }
    assert_eq!((res.best_width, res.best_lambda), best);
    assert_eq!(res.lambda(), lambdas[best.1]);
    assert!((res.gamma() - widths[best.0] / median).abs() < 1e-12);
}

#[test]
fn kfold_rejects_bad_input() {
    let x = random_rows(6, 2, 1);
    let ky = PairGauss(1.0).gram(&x);
    let folds = vec![(vec![0, 1, 2], vec![3, 4, 5])];
    let mut rec = Recorder { ky, predictions: Vec::new() };
    let run = |s: GaussianIokrSearch, x: &DenseRows, f: &[(Vec<usize>, Vec<usize>)], rec: &mut Recorder| {
        s.run(x, f, rec, &mut || {})
    };
    let good = || GaussianIokrSearch::new(vec![1.0], vec![1e-3]);
    assert!(matches!(
        run(GaussianIokrSearch::new(vec![1.0], vec![0.0]), &x, &folds, &mut rec),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(run(GaussianIokrSearch::new(vec![], vec![1e-3]), &x, &folds, &mut rec), Err(Error::Empty { .. })));
    assert!(matches!(run(good(), &x, &[], &mut rec), Err(Error::Empty { .. })));
    assert!(matches!(run(good(), &x, &[(vec![0, 1], vec![9])], &mut rec), Err(Error::ShapeMismatch { .. })));
    let same = DenseRows::new(Mat::from_fn(6, 2, |_, _| 1.0)).unwrap();
    assert!(matches!(run(good(), &same, &folds, &mut rec), Err(Error::InvalidParameter { .. })));
    assert!(run(good(), &x, &folds, &mut rec).is_ok());
}

#[test]
fn loo_products_equal_explicit_refits() {
    use okr_estimators::iokr::IokrPath;
    use okr_estimators::select::LooProducts;
    for (seed, n) in [(3u64, 9usize), (4, 17)] {
        let x = random_rows(n, 3, seed);
        let kx = PairGauss(0.8).gram(&x);
        // Atom products of 4 arbitrary atoms (columns), as for candidates.
        let g = Mat::from_fn(n, 4, |i, c| ((i * 7 + c * 3) % 5) as f64 - 2.0);
        let path = IokrPath::new(kx.as_ref()).unwrap();
        let rows = [0, n / 2, n - 1];
        let loo = LooProducts::new(&path, &rows, g.as_ref()).unwrap();
        for lambda in [1e-4, 1e-2, 1.0] {
            let got = loo.products(lambda).unwrap();
            for (a, &i) in rows.iter().enumerate() {
                let rest: Vec<usize> = (0..n).filter(|&j| j != i).collect();
                let inv = ridge_inverse(&sub(&kx, &rest, &rest), n as f64 * lambda / (n - 1) as f64);
                let want = sub(&kx, &[i], &rest) * inv * sub(&g, &rest, &[0, 1, 2, 3]);
                for c in 0..4 {
                    let (u, v) = (got[(a, c)], want[(0, c)]);
                    assert!(
                        (u - v).abs() < 1e-9 * (1.0 + v.abs()),
                        "n={n} lambda={lambda} row {i} atom {c}: {u} vs {v}"
                    );
                }
            }
        }
        assert!(matches!(loo.products(0.0), Err(Error::InvalidParameter { .. })));
        assert!(matches!(LooProducts::new(&path, &[n], g.as_ref()), Err(Error::ShapeMismatch { .. })));
        assert!(matches!(LooProducts::new(&path, &[], g.as_ref()), Err(Error::Empty { .. })));
    }
}

/// A grid search whose mean score is `score(c, lambda)` on every one of two folds.
fn synthetic(
    widths: &[f64],
    lambdas: &[f64],
    score: &dyn Fn(f64, f64) -> f64,
) -> okr_estimators::select::GridSearchResult {
    let scores = widths.iter().map(|&c| lambdas.iter().map(|&l| vec![score(c, l); 2]).collect()).collect();
    okr_estimators::select::GridSearchResult::from_fold_scores(1.0, widths.to_vec(), lambdas.to_vec(), scores)
}

#[test]
fn width_line_search_finds_the_grid_optimum_of_unimodal_scores() {
    use okr_estimators::select::WidthLineSearch;
    let lambdas = [1e-6, 1e-4, 1e-2];
    let grid: Vec<f64> = (-6..=6).map(|k| 2f64.powi(k)).collect();
    for peak in [-5.3f64, -1.0, 0.2, 0.9, 2.6, 5.5] {
        // Unimodal in log2(c); the best ridge moves with the width.
        let score = |c: f64, l: f64| -(c.log2() - peak).abs() - 0.1 * (l.log10() + 4.0 + c.log2() / 4.0).abs();
        let full = synthetic(&grid, &lambdas, &score);
        let mut evaluated = Vec::new();
        let found = WidthLineSearch::new(1.0)
            .max_widths(13)
            .run(|w: &[f64]| -> Result<_, Error> {
                evaluated.extend_from_slice(w);
                Ok(synthetic(w, &lambdas, &score))
            })
            .unwrap();
        assert_eq!((found.c(), found.lambda()), (full.c(), full.lambda()), "peak {peak}");
        // Only the way to the peak and one step beyond were evaluated, each once.
        let mut sorted = evaluated.clone();
        sorted.sort_by(f64::total_cmp);
        sorted.dedup();
        assert_eq!(sorted.len(), evaluated.len());
        assert_eq!(found.widths, sorted);
        // Three to start, then one per grid step to the peak and one beyond it.
        let steps = if full.c() == 1.0 { 3 } else { full.c().log2().abs() as usize + 3 };
        assert_eq!(evaluated.len(), steps, "peak {peak}: {evaluated:?}");
        for (wi, &c) in found.widths.iter().enumerate() {
            for (li, &l) in lambdas.iter().enumerate() {
                assert_eq!(found.fold_scores[wi][li], vec![score(c, l); 2], "merged scores are kept");
            }
        }
    }
    // The width budget caps the search.
    let far = |c: f64, _: f64| c.log2();
    let capped = WidthLineSearch::new(1.0)
        .max_widths(4)
        .run(|w: &[f64]| -> Result<_, Error> { Ok(synthetic(w, &lambdas, &far)) });
    assert_eq!(capped.unwrap().widths, [0.5, 1.0, 2.0, 4.0]);
    for bad in
        [WidthLineSearch::new(0.0), WidthLineSearch::new(1.0).factor(1.0), WidthLineSearch::new(1.0).max_widths(2)]
    {
        let r = bad.run(|w: &[f64]| -> Result<_, Error> { Ok(synthetic(w, &lambdas, &far)) });
        assert!(matches!(r, Err(Error::InvalidParameter { .. })));
    }
}

#[test]
fn merge_rejects_mismatched_searches() {
    let s = |w: &[f64], l: &[f64]| synthetic(w, l, &|c, _| c);
    assert!(s(&[1.0], &[1e-3]).merge(s(&[2.0], &[1e-2])).is_err());
    assert!(s(&[1.0], &[1e-3]).merge(s(&[1.0], &[1e-3])).is_err());
    let m = s(&[2.0], &[1e-3]).merge(s(&[1.0], &[1e-3])).unwrap();
    assert_eq!((m.widths.clone(), m.c()), (vec![1.0, 2.0], 2.0));
}
