//! LEML oracles: Algorithms 1 and 2 against explicit Kronecker features
//! $\tilde x_{ij} = h_j \otimes x_i$, Algorithm 2 = Algorithm 1 on a full Ω,
//! monotone objective, CPLST = Claim 1, BR = per-label ridge.

mod common;

use common::lcg;
use faer::{Col, Mat};
use okr_estimators::Fit;
use okr_estimators::ScoreModel;
use okr_estimators::leml::{
    BilinearObjective, BinaryRelevance, Cplst, FeatureMap, FullSquaredObjective, IdentityMap, Leml, Loss,
    PartialLabels, SparseDesign, Targets,
};
use okr_kernels::{CsrRows, LabelSets};
use okr_linalg::TronObjective;
use proptest::prelude::*;

const LOSSES: [Loss; 3] = [Loss::Squared, Loss::Logistic, Loss::SquaredHinge];

/// Sparse features with about 60% zeros and row 1 empty.
fn features(n: usize, d: usize, seed: u64) -> CsrRows {
    let mut r = lcg(seed);
    let mut rows = vec![Vec::new(); n];
    for (i, row) in rows.iter_mut().enumerate() {
        for j in 0..d {
            let (keep, value) = (r(), r());
            if i != 1 && keep > 0.2 {
                row.push((j, value));
            }
        }
    }
    CsrRows::from_rows(d, rows).unwrap()
}

fn label_sets(n: usize, l: usize, seed: u64) -> LabelSets {
    let mut r = lcg(seed);
    LabelSets::new(l, (0..n).map(|_| (0..l).filter(|_| r() > 0.3).collect()).collect()).unwrap()
}

/// Random Ω (about half the entries) with ±1 values.
fn partial(n: usize, l: usize, seed: u64) -> PartialLabels {
    let mut r = lcg(seed);
    let mut rows = Vec::new();
    for _ in 0..n {
        let mut row = Vec::new();
        for j in 0..l {
            let (keep, sign) = (r(), r());
            if keep > 0.0 {
                row.push((j, if sign > 0.0 { 1.0 } else { -1.0 }));
            }
        }
        rows.push(row);
    }
    PartialLabels::new(l, rows).unwrap()
}

fn col(v: &[f64]) -> Col<f64> {
    Col::from_fn(v.len(), |i| v[i])
}

/// The explicit W-step problem: rows $\tilde x_{ij}$ (row-major `(d, k)`
/// layout of `W`), one per observed entry, and their labels.
struct Kronecker {
    rows: Vec<Vec<f64>>,
    y: Vec<f64>,
}

impl Kronecker {
    fn new(x: &Mat<f64>, h: &[f64], k: usize, entries: &[(usize, usize, f64)]) -> Self {
        let d = x.ncols();
        let rows =
            entries.iter().map(|&(i, j, _)| (0..d * k).map(|p| x[(i, p / k)] * h[j * k + p % k]).collect()).collect();
        Self { rows, y: entries.iter().map(|e| e.2).collect() }
    }

    fn eval(&self, loss: Loss, lambda: f64, w: &[f64], s: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
        let dim = w.len();
        let mut f = 0.5 * lambda * w.iter().map(|v| v * v).sum::<f64>();
        let mut g: Vec<f64> = w.iter().map(|v| lambda * v).collect();
        let mut hv: Vec<f64> = s.iter().map(|v| lambda * v).collect();
        for (row, &y) in self.rows.iter().zip(&self.y) {
            let z: f64 = (0..dim).map(|p| row[p] * w[p]).sum();
            let rs: f64 = (0..dim).map(|p| row[p] * s[p]).sum();
            f += loss.value(y, z);
            let (d1, d2) = (loss.derivative(y, z), loss.second_derivative(y, z));
            for p in 0..dim {
                g[p] += d1 * row[p];
                hv[p] += d2 * rs * row[p];
            }
        }
        (f, g, hv)
    }
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * scale)
}

/// fun, grad and hv of `obj` at `w` (grad caches curvature for hv).
fn evaluate(obj: &mut dyn TronObjective, w: &[f64], s: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
    let (w, s) = (col(w), col(s));
    let f = obj.fun(w.as_ref());
    let mut g = Col::zeros(w.nrows());
    obj.grad(w.as_ref(), g.as_mut());
    let mut hv = Col::zeros(w.nrows());
    obj.hv(s.as_ref(), hv.as_mut());
    (f, g.iter().copied().collect(), hv.iter().copied().collect())
}

fn check_algorithm1(n: usize, d: usize, l: usize, k: usize, seed: u64) {
    let x = features(n, d, seed);
    let xd = x.to_dense();
    let design = SparseDesign::new(&x);
    let mut r = lcg(seed + 100);
    let h: Vec<f64> = (0..l * k).map(|_| r()).collect();
    let w: Vec<f64> = (0..d * k).map(|_| r()).collect();
    let s: Vec<f64> = (0..d * k).map(|_| r()).collect();
    let lambda = 0.37;
    let y = partial(n, l, seed + 200);
    let entries: Vec<(usize, usize, f64)> = (0..n).flat_map(|i| y.row(i).map(move |(j, v)| (i, j, v))).collect();
    let oracle = Kronecker::new(&xd, &h, k, &entries);
    for loss in LOSSES {
        let mut obj = BilinearObjective::partial(&design, &h, k, &y, loss, lambda);
        let (f, g, hv) = evaluate(&mut obj, &w, &s);
        let (f0, g0, hv0) = oracle.eval(loss, lambda, &w, &s);
        assert!((f - f0).abs() <= 1e-10 * f0.abs().max(1.0), "{loss:?}: f {f} vs {f0}");
        assert!(close(&g, &g0, 1e-10), "{loss:?}: gradient");
        assert!(close(&hv, &hv0, 1e-10), "{loss:?}: Hv");
    }
    // Full labels (Ω = all entries): ±1 for LR/SH, {0, 1} for SQ.
    let ys = label_sets(n, l, seed + 300);
    let yd = ys.to_indicator();
    for loss in LOSSES {
        let neg = if loss == Loss::Squared { 0.0 } else { -1.0 };
        let all: Vec<(usize, usize, f64)> = (0..n)
            .flat_map(|i| (0..l).map(move |j| (i, j)))
            .map(|(i, j)| (i, j, if yd[(i, j)] > 0.0 { 1.0 } else { neg }))
            .collect();
        let oracle = Kronecker::new(&xd, &h, k, &all);
        let mut obj = BilinearObjective::full(&design, &h, k, &ys, loss, lambda);
        let (f, g, hv) = evaluate(&mut obj, &w, &s);
        let (f0, g0, hv0) = oracle.eval(loss, lambda, &w, &s);
        assert!((f - f0).abs() <= 1e-10 * f0.abs().max(1.0), "full {loss:?}: f {f} vs {f0}");
        assert!(close(&g, &g0, 1e-10), "full {loss:?}: gradient");
        assert!(close(&hv, &hv0, 1e-10), "full {loss:?}: Hv");
    }
}

#[test]
fn algorithm1_matches_explicit_kronecker_features() {
    for (n, d, l, k, seed) in [(6, 4, 3, 2, 1), (9, 7, 5, 3, 2), (4, 3, 6, 4, 3)] {
        check_algorithm1(n, d, l, k, seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn algorithm1_matches_kronecker_on_random_sizes(n in 2usize..9, d in 1usize..7, l in 1usize..6, k in 1usize..4, seed in 0u64..1000) {
        check_algorithm1(n, d, l, k, seed);
    }
}

/// A random sparse `(n, d)` matrix: each entry kept with probability
/// `density`, values in (-1, 1).
fn random_sparse(n: usize, d: usize, density: f64, seed: u64) -> CsrRows {
    let mut r = lcg(seed);
    let mut rows = vec![Vec::new(); n];
    for row in &mut rows {
        for j in 0..d {
            if (r() + 1.0) / 2.0 < density {
                row.push((j, r()));
            }
        }
    }
    CsrRows::from_rows(d, rows).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// The fused `XᵀX S` equals a dense triple loop and the two unfused
    /// sparse products, across column blocks (k up to 3 blocks of 16 plus a
    /// tail) and row ranges.
    #[test]
    fn gram_mul_matches_dense_oracle(
        n in 0usize..300, d in 1usize..40, k in 1usize..50, density in 0.0f64..1.0, seed in 0u64..10_000,
    ) {
        let x = random_sparse(n, d, density, seed);
        let xd = x.to_dense();
        let design = SparseDesign::new(&x);
        let mut r = lcg(seed + 1);
        let s: Vec<f64> = (0..d * k).map(|_| r()).collect();
        let mut fused = vec![f64::NAN; d * k];
        design.gram_mul(&s, k, &mut fused);
        let mut xs = vec![0.0; n * k];
        for i in 0..n {
            for j in 0..d {
                for t in 0..k {
                    xs[i * k + t] += xd[(i, j)] * s[j * k + t];
                }
            }
        }
        let mut want = vec![0.0; d * k];
        for i in 0..n {
            for j in 0..d {
                for t in 0..k {
                    want[j * k + t] += xd[(i, j)] * xs[i * k + t];
                }
            }
        }
        prop_assert!(close(&fused, &want, 1e-12), "fused vs dense oracle");
        let mut b = vec![f64::NAN; n * k];
        design.mul(&s, k, &mut b);
        let mut unfused = vec![f64::NAN; d * k];
        design.tmul(&b, k, &mut unfused);
        prop_assert!(close(&fused, &unfused, 1e-12), "fused vs unfused");
    }
}

/// The H-step is the W-step of the transposed problem with the identity as
/// design: labels are the samples and `A = XW` the fixed factor.
#[test]
fn h_step_objective_matches_explicit_features() {
    let (n, d, l, k) = (7, 5, 4, 3);
    let x = features(n, d, 11);
    let mut r = lcg(12);
    let w: Vec<f64> = (0..d * k).map(|_| r()).collect();
    let a = x.to_dense() * Mat::from_fn(d, k, |i, t| w[i * k + t]);
    let a_rows: Vec<f64> = (0..n * k).map(|p| a[(p / k, p % k)]).collect();
    let h: Vec<f64> = (0..l * k).map(|_| r()).collect();
    let s: Vec<f64> = (0..l * k).map(|_| r()).collect();
    let y = partial(n, l, 13);
    // Transposed Ω: rows are labels.
    let yt = PartialLabels::new(
        n,
        (0..l).map(|j| (0..n).filter_map(|i| y.row(i).find(|e| e.0 == j).map(|e| (i, e.1))).collect()).collect(),
    )
    .unwrap();
    let entries: Vec<(usize, usize, f64)> = (0..l).flat_map(|j| yt.row(j).map(move |(i, v)| (j, i, v))).collect();
    let oracle = Kronecker::new(&Mat::<f64>::identity(l, l), &a_rows, k, &entries);
    let ident = IdentityMap(l);
    for loss in LOSSES {
        let mut obj = BilinearObjective::partial(&ident, &a_rows, k, &yt, loss, 0.5);
        let (f, g, hv) = evaluate(&mut obj, &h, &s);
        let (f0, g0, hv0) = oracle.eval(loss, 0.5, &h, &s);
        assert!((f - f0).abs() <= 1e-10 * f0.abs().max(1.0));
        assert!(close(&g, &g0, 1e-10) && close(&hv, &hv0, 1e-10), "{loss:?}");
    }
}

#[test]
fn algorithm2_equals_algorithm1_on_a_full_omega() {
    for (n, d, l, k, seed) in [(8, 5, 4, 2, 21), (20, 9, 7, 5, 22), (150, 12, 6, 37, 23)] {
        let x = features(n, d, seed);
        let design = SparseDesign::new(&x);
        let y = label_sets(n, l, seed + 1);
        let yd = y.to_indicator();
        let all = PartialLabels::new(l, (0..n).map(|i| (0..l).map(|j| (j, yd[(i, j)])).collect()).collect()).unwrap();
        let mut r = lcg(seed + 2);
        let h: Vec<f64> = (0..l * k).map(|_| r()).collect();
        let w: Vec<f64> = (0..d * k).map(|_| r()).collect();
        let s: Vec<f64> = (0..d * k).map(|_| r()).collect();
        let mut alg1 = BilinearObjective::partial(&design, &h, k, &all, Loss::Squared, 0.8);
        let (f1, g1, hv1) = evaluate(&mut alg1, &w, &s);
        let gram = design.gram();
        for g in [None, Some(&gram)] {
            let mut alg2 = FullSquaredObjective::new(&design, &y, &h, k, 0.8, g);
            let (f2, g2, hv2) = evaluate(&mut alg2, &w, &s);
            assert!((f1 - f2).abs() <= 1e-10 * f1.abs().max(1.0), "f {f1} vs {f2}");
            assert!(close(&g2, &g1, 1e-10) && close(&hv2, &hv1, 1e-10));
        }
    }
}

#[test]
fn objective_decreases_monotonically() {
    let (n, d, l) = (60, 12, 8);
    let x = features(n, d, 31);
    let y = label_sets(n, l, 32);
    let part = PartialLabels::sample(&y, 0.4, -1.0, 33).unwrap();
    for loss in LOSSES {
        for targets in [Targets::Full(&y), Targets::Partial(&part)] {
            let model = Leml::params()
                .rank(3)
                .lambda(0.5)
                .loss(loss)
                .max_iter(8)
                .cg_tol(1e-10)
                .max_cg_iter(500)
                .tron_eps(1e-8)
                .tron_max_iter(100)
                .fit(&x, targets)
                .unwrap();
            let j: Vec<f64> = model.history().iter().map(|h| h.objective).collect();
            assert_eq!(j.len(), 8);
            assert!(j.windows(2).all(|p| p[1] <= p[0] * (1.0 + 1e-9)), "{loss:?}: {j:?}");
            assert!(j[7] < j[0]);
        }
    }
}

/// The per-iteration Hessian-vector time is counted where products happen and
/// never exceeds the wall time of the fit; closed-form H-steps count none.
#[test]
fn hessian_vector_time_is_counted_per_step() {
    let (n, d, l) = (80, 15, 10);
    let x = features(n, d, 41);
    let y = label_sets(n, l, 42);
    let part = PartialLabels::sample(&y, 0.5, -1.0, 43).unwrap();
    for loss in LOSSES {
        for targets in [Targets::Full(&y), Targets::Partial(&part)] {
            let model = Leml::params().rank(3).lambda(0.5).loss(loss).max_iter(4).fit(&x, targets).unwrap();
            let hist = model.history();
            let hv: f64 = hist.iter().map(|h| h.w_hv_seconds + h.h_hv_seconds).sum();
            let wall = hist.last().unwrap().seconds;
            assert!(hist.iter().all(|h| h.w_hessian_products > 0 && h.w_hv_seconds > 0.0), "{loss:?}: {hist:?}");
            assert!(hv <= wall, "{loss:?}: Hv {hv} s > fit {wall} s");
            for h in hist {
                assert_eq!(h.h_hessian_products == 0, h.h_hv_seconds == 0.0, "{loss:?}: {h:?}");
            }
        }
    }
}

#[test]
fn fitting_is_deterministic_for_a_seed() {
    let x = features(30, 6, 41);
    let y = label_sets(30, 5, 42);
    let p = Leml::params().rank(2).max_iter(3).seed(5);
    let a = p.fit(&x, Targets::Full(&y)).unwrap();
    let b = p.fit(&x, Targets::Full(&y)).unwrap();
    assert!((a.scores(&x).unwrap() - b.scores(&x).unwrap()).norm_max() < 1e-12);
}

/// Claim 1: the rank-k least-squares solution is $V_X \Sigma_X^{-1} M_k$,
/// $M = U_X^\top Y$, here from a thin SVD of the dense `X` (CPLST uses the
/// eigendecomposition of $X^\top X$).
#[test]
fn cplst_equals_the_claim1_closed_form() {
    for (n, d, l, k) in [(30, 6, 8, 3), (12, 20, 6, 4)] {
        let x = features(n, d, 51 + d as u64);
        let y = label_sets(n, l, 52);
        let (xd, yd) = (x.to_dense(), y.to_indicator());
        let svd = okr_linalg::thin_svd(xd.as_ref()).unwrap();
        let r = svd.rank(Some(1e-8));
        let (u, s, v) = (svd.u().subcols(0, r), &svd.s()[..r], svd.v().subcols(0, r));
        let m = u.transpose() * &yd;
        let ms = okr_linalg::thin_svd(m.as_ref()).unwrap();
        let kk = k.min(ms.s().len());
        let mk = ms.u().subcols(0, kk)
            * Mat::from_fn(kk, kk, |a, b| if a == b { ms.s()[a] } else { 0.0 })
            * ms.v().subcols(0, kk).transpose();
        let z = v * Mat::from_fn(r, r, |a, b| if a == b { 1.0 / s[a] } else { 0.0 }) * mk;
        let model = Cplst::params().rank(k).rtol(1e-14).fit(&x, &y).unwrap();
        let err = (model.z() - &z).norm_max() / z.norm_max();
        assert!(err < 1e-7, "n={n} d={d}: {err}");
        // Centred labels: the scores on the training set are the rank-k fit of Y - 1 ybar^T, plus ybar.
        let centred = Cplst::params().rank(l).center(true).fit(&x, &y).unwrap();
        let sc = centred.scores(&x).unwrap();
        assert!(sc.nrows() == n && sc.ncols() == l);
    }
}

#[test]
fn binary_relevance_is_per_label_ridge() {
    let (n, d, l) = (25, 7, 4);
    let x = features(n, d, 61);
    let y = label_sets(n, l, 62);
    let (xd, yd) = (x.to_dense(), y.to_indicator());
    let lambda = 0.9;
    let g = xd.transpose() * &xd + Mat::<f64>::identity(d, d) * lambda;
    let ginv = faer::linalg::solvers::DenseSolveCore::inverse(&g.llt(faer::Side::Lower).unwrap());
    let want = ginv * xd.transpose() * &yd;
    let br =
        BinaryRelevance::params().lambda(lambda).cg_tol(1e-12).max_cg_iter(1000).fit(&x, Targets::Full(&y)).unwrap();
    assert!((br.w() - &want).norm_max() < 1e-8 * want.norm_max());
    assert_eq!(br.decision_threshold(), 0.5);
    // Logistic BR on ±1 partial labels: zero gradient per label.
    let part = PartialLabels::sample(&y, 0.6, -1.0, 63).unwrap();
    let lr = BinaryRelevance::params()
        .lambda(lambda)
        .loss(Loss::Logistic)
        .tron_eps(1e-9)
        .tron_max_iter(100)
        .fit(&x, Targets::Partial(&part))
        .unwrap();
    assert_eq!(lr.decision_threshold(), 0.0);
    for j in 0..l {
        let mut grad: Vec<f64> = (0..d).map(|a| lambda * lr.w()[(a, j)]).collect();
        for i in 0..n {
            if let Some((_, v)) = part.row(i).find(|e| e.0 == j) {
                let z: f64 = (0..d).map(|a| xd[(i, a)] * lr.w()[(a, j)]).sum();
                let d1 = Loss::Logistic.derivative(v, z);
                (0..d).for_each(|a| grad[a] += d1 * xd[(i, a)]);
            }
        }
        assert!(grad.iter().all(|g| g.abs() < 1e-6), "{grad:?}");
    }
}

#[test]
fn user_errors_are_reported() {
    let x = features(5, 3, 71);
    let y = label_sets(4, 2, 72);
    assert!(matches!(Leml::params().fit(&x, Targets::Full(&y)), Err(okr_estimators::Error::ShapeMismatch { .. })));
    let y5 = label_sets(5, 2, 73);
    assert!(Leml::params().rank(0).fit(&x, Targets::Full(&y5)).is_err());
    let zero_one = PartialLabels::new(2, (0..5).map(|_| vec![(0, 0.0), (1, 1.0)]).collect()).unwrap();
    assert!(matches!(
        Leml::params().loss(Loss::Logistic).fit(&x, Targets::Partial(&zero_one)),
        Err(okr_estimators::Error::InvalidParameter { .. })
    ));
    // {0, 1} partial labels are fine for the squared loss; threshold 0.5.
    let m = Leml::params().rank(1).max_iter(2).fit(&x, Targets::Partial(&zero_one)).unwrap();
    assert_eq!(m.decision_threshold(), 0.5);
    assert!(PartialLabels::new(2, vec![vec![(2, 1.0)]]).is_err());
    assert!(PartialLabels::new(2, vec![vec![(1, 1.0), (1, -1.0)]]).is_err());
    let wide = features(2, 4, 74);
    assert!(m.scores(&wide).is_err());
}

/// The loss total of the W-step objective has the same rounding for any
/// thread count (and so in every run): rayon's adaptive `sum` did not, and
/// TRON's accept/stop decisions then moved the fitted model in late digits.
#[test]
fn bilinear_objective_value_is_bitwise_independent_of_threads() {
    let (n, d, l, k) = (3000, 12, 40, 3);
    let x = features(n, d, 7);
    let design = SparseDesign::new(&x);
    let mut r = lcg(8);
    let h: Vec<f64> = (0..l * k).map(|_| r()).collect();
    let w = col(&(0..d * k).map(|_| r()).collect::<Vec<_>>());
    let partial_y = partial(n, l, 9);
    let full_y = label_sets(n, l, 10);
    for loss in LOSSES {
        let values: Vec<(u64, u64)> = [1, 2, 3, 5]
            .into_iter()
            .map(|threads| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    let mut sparse = BilinearObjective::partial(&design, &h, k, &partial_y, loss, 0.1);
                    let mut dense = BilinearObjective::full(&design, &h, k, &full_y, loss, 0.1);
                    (sparse.fun(w.as_ref()).to_bits(), dense.fun(w.as_ref()).to_bits())
                })
            })
            .collect();
        assert!(values.windows(2).all(|p| p[0] == p[1]), "{loss:?}: {values:?}");
    }
}

/// Warm start (issue 37): `k` alternating iterations continued for `k` more
/// equal `2k` iterations in one fit, bit for bit, for every loss and for
/// full and partial labels; the history continues the first fit's.
#[test]
fn warm_start_continues_exactly() {
    use okr_estimators::FitFrom;
    let (n, d, l) = (40, 10, 6);
    let x = features(n, d, 61);
    let y = label_sets(n, l, 62);
    let part = PartialLabels::sample(&y, 0.5, -1.0, 63).unwrap();
    for loss in LOSSES {
        for targets in [Targets::Full(&y), Targets::Partial(&part)] {
            let p = |k| Leml::params().rank(3).lambda(0.5).loss(loss).max_iter(k).seed(4);
            let once = p(6).fit(&x, targets).unwrap();
            let half = p(3).fit(&x, targets).unwrap();
            let twice = p(3).fit_from(&half, &x, targets).unwrap();
            assert_eq!(twice.w(), once.w(), "{loss:?}");
            assert_eq!(twice.h(), once.h(), "{loss:?}");
            let steps = |m: &Leml| m.history().iter().map(|h| (h.iteration, h.objective)).collect::<Vec<_>>();
            assert_eq!(steps(&twice), steps(&once), "{loss:?}");
        }
    }
    // Another label count or rank is refused, naming it.
    let fewer = label_sets(n, l - 1, 62);
    let half = Leml::params().rank(3).max_iter(2).fit(&x, Targets::Full(&y)).unwrap();
    let err = Leml::params().rank(3).fit_from(&half, &x, Targets::Full(&fewer)).unwrap_err().to_string();
    assert!(err.contains("labels of a continued fit"), "{err}");
    let err = Leml::params().rank(2).fit_from(&half, &x, Targets::Full(&y)).unwrap_err().to_string();
    assert!(err.contains("rank of a continued fit"), "{err}");
}
