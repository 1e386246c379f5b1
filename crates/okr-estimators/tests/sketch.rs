//! Sketches: second moments match the stated scaling E[R^T R] = I, the
//! kernel sketches equal dense products, and sparse sketches compute only
//! the Gram columns of their support.

mod common;

use std::collections::HashSet;
use std::sync::Mutex;

use common::{PairGauss, random_rows, rel_err};
use faer::{Mat, MatMut, Par};
use okr_estimators::sketch::{Sketch, SketchKind, SketchSpec, approximate_leverage_scores};
use okr_kernels::{DenseRows, Kernel, Rows};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn oblivious_kinds() -> Vec<SketchKind> {
    vec![
        SketchKind::Gaussian,
        SketchKind::Rademacher,
        SketchKind::Uniform,
        SketchKind::SparseGaussian { p: Some(0.3) },
        SketchKind::SparseRademacher { p: Some(0.3) },
        SketchKind::Sjlt { s: 3 },
    ]
}

/// Mean of R^T R over `draws` sketches, compared with the identity:
/// (max |diag - 1|, max |offdiag|).
fn second_moment_error(mut draw: impl FnMut(&mut ChaCha8Rng) -> Sketch, n: usize, draws: usize) -> (f64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut acc = Mat::<f64>::zeros(n, n);
    for _ in 0..draws {
        let r = draw(&mut rng).to_dense();
        acc += r.transpose() * &r;
    }
    acc /= draws as f64;
    let mut diag: f64 = 0.0;
    let mut off: f64 = 0.0;
    for j in 0..n {
        for i in 0..n {
            if i == j {
                diag = diag.max((acc[(i, i)] - 1.0).abs());
            } else {
                off = off.max(acc[(i, j)].abs());
            }
        }
    }
    (diag, off)
}

#[test]
fn second_moment_is_identity_for_every_kind() {
    // n = 20, m = 10, 3000 draws: the standard error of a diagonal entry is
    // at most sqrt(n / m / 3000) = 0.026 (sub-sampling), so 0.15 is > 5 sigma;
    // a missing sqrt in a scale would move the diagonal by >= 0.3.
    let (n, m, draws) = (20, 10, 3000);
    for kind in oblivious_kinds() {
        let spec = SketchSpec::new(kind, m);
        let (diag, off) = second_moment_error(|rng| Sketch::draw_with(&spec, n, rng).unwrap(), n, draws);
        assert!(diag < 0.15 && off < 0.15, "{kind:?}: |diag - 1| = {diag}, |offdiag| = {off}");
    }
    // Weighted sub-sampling with strongly non-uniform probabilities.
    let q: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
    let (diag, off) = second_moment_error(|rng| Sketch::weighted_subsampling(&q, m, rng).unwrap(), n, draws);
    assert!(diag < 0.2 && off < 1e-12, "weighted: |diag - 1| = {diag}, |offdiag| = {off}");
}

#[test]
fn entries_have_variance_one_over_m() {
    // Assumption A5 (ii): E[R_ij^2] = 1/m for the i.i.d. kinds.
    let (n, m) = (400, 50);
    for kind in [
        SketchKind::Gaussian,
        SketchKind::Rademacher,
        SketchKind::SparseGaussian { p: Some(0.1) },
        SketchKind::SparseRademacher { p: Some(0.1) },
    ] {
        let r = Sketch::draw(&SketchSpec::new(kind, m), n, 3).unwrap().to_dense();
        let mean_sq = r.squared_norm_l2() / (n * m) as f64;
        let mean: f64 =
            (0..n).flat_map(|j| (0..m).map(move |i| (i, j))).map(|(i, j)| r[(i, j)]).sum::<f64>() / (n * m) as f64;
        assert!((mean_sq * m as f64 - 1.0).abs() < 0.1, "{kind:?}: m E[R^2] = {}", mean_sq * m as f64);
        assert!(mean.abs() < 0.01, "{kind:?}: mean {mean}");
    }
}

#[test]
fn products_equal_dense_computation() {
    let kernel = PairGauss(0.7);
    let x = random_rows(37, 3, 1);
    let b = random_rows(9, 3, 2);
    let k = kernel.gram(&x);
    let kxb = kernel.gram_block(&x, &b);
    let mut kinds = oblivious_kinds();
    kinds.push(SketchKind::Identity);
    kinds.push(SketchKind::Leverage);
    let mut sketches: Vec<(String, Sketch)> = kinds
        .into_iter()
        .map(|kind| {
            let spec = SketchSpec::new(kind, 11);
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            (format!("{kind:?}"), Sketch::draw_for_kernel(&spec, &kernel, &x, 1e-2, &mut rng).unwrap())
        })
        .collect();
    // A weighted draw with repeats, merged: one non-zero per row and per
    // column with unequal values (the scaled-selection path), and the same
    // draw unmerged (a column with several non-zeros, the general path).
    let q: Vec<f64> = (0..37).map(|i| if i < 5 { 1.0 } else { 0.02 }).collect();
    let weighted = Sketch::weighted_subsampling(&q, 12, &mut ChaCha8Rng::seed_from_u64(2)).unwrap();
    assert!(weighted.support().len() < 12, "the weighted draw repeats a column");
    let merged = weighted.merge_duplicate_columns(&(0..37).collect::<Vec<_>>()).unwrap();
    sketches.push(("weighted".into(), weighted));
    sketches.push(("weighted, merged".into(), merged));
    for (kind, r) in sketches {
        let rd = r.to_dense();
        assert!(
            rel_err(&r.sketch_cross(&kernel, &x, &b, Par::rayon(2)), &(&rd * &kxb)) < 1e-13,
            "{kind}: R K(X, B), parallel"
        );
        let g = r.sketch_gram(&kernel, &x, Par::rayon(0));
        let kr = &k * rd.transpose();
        let rkr = &rd * &kr;
        assert!(rel_err(&g.kr, &kr) < 1e-13, "{kind}: K R^T");
        assert!(rel_err(&g.rkr, &rkr) < 1e-13, "{kind}: R K R^T");
        assert!(rel_err(&r.sketch_cross(&kernel, &x, &b, Par::Seq), &(&rd * &kxb)) < 1e-13, "{kind}: R K(X, B)");
        assert!(rel_err(&r.apply(kxb.as_ref()), &(&rd * &kxb)) < 1e-13, "{kind}: R B");
        let c = Mat::from_fn(r.nrows(), 4, |i, j| (i as f64 - 2.0 * j as f64).sin());
        let full = rd.transpose() * &c;
        let on_support = r.apply_support_transpose(c.as_ref());
        let gathered = Mat::from_fn(r.support().len(), 4, |s, j| full[(r.support()[s], j)]);
        assert!(rel_err(&on_support, &gathered) < 1e-13, "{kind}: R_S^T C");
        // Rows off the support of R^T C are zero.
        let sup: HashSet<usize> = r.support().iter().copied().collect();
        for i in (0..37).filter(|i| !sup.contains(i)) {
            assert!(full.row(i).norm_max() == 0.0, "{kind}: column {i} is outside the support");
        }
    }
}

/// A Gaussian kernel on rows whose first feature is the row's index: it
/// records which training rows appear on each side of a Gram block and how
/// many entries were computed.
struct Recording {
    inner: PairGauss,
    left: Mutex<HashSet<usize>>,
    right: Mutex<HashSet<usize>>,
    entries: Mutex<usize>,
}
impl Kernel<DenseRows> for Recording {
    fn eval(&self, a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
        self.inner.eval(a, i, b, j)
    }
    fn gram_block_into(&self, a: &DenseRows, b: &DenseRows, mut dst: MatMut<'_, f64>, _par: Par) {
        let mut left = self.left.lock().unwrap();
        for i in 0..a.n_rows() {
            left.insert(a.as_mat()[(i, 0)] as usize);
        }
        let mut right = self.right.lock().unwrap();
        for j in 0..b.n_rows() {
            right.insert(b.as_mat()[(j, 0)] as usize);
        }
        *self.entries.lock().unwrap() += a.n_rows() * b.n_rows();
        for j in 0..b.n_rows() {
            for i in 0..a.n_rows() {
                dst[(i, j)] = self.inner.eval(a, i, b, j);
            }
        }
    }
}

#[test]
fn sparse_sketches_compute_only_support_columns() {
    let n = 300;
    let noise = random_rows(n, 2, 9);
    let x =
        DenseRows::new(Mat::from_fn(n, 3, |i, j| if j == 0 { i as f64 } else { noise.as_mat()[(i, j - 1)] })).unwrap();
    for kind in [SketchKind::Uniform, SketchKind::SparseRademacher { p: Some(0.002) }] {
        let r = Sketch::draw(&SketchSpec::new(kind, 20), n, 4).unwrap();
        let kernel = Recording {
            inner: PairGauss(1e-6),
            left: Mutex::default(),
            right: Mutex::default(),
            entries: Mutex::default(),
        };
        let _ = r.sketch_gram(&kernel, &x, Par::Seq);
        // R K = R_S K(X_S, X): the support on the left, every row of X on the right.
        let left = kernel.left.lock().unwrap().clone();
        let support: HashSet<usize> = r.support().iter().copied().collect();
        assert!(r.support().len() < n / 4, "{kind:?}: support {} is not sparse", r.support().len());
        assert_eq!(left, support, "{kind:?}: Gram rows computed");
        assert_eq!(kernel.right.lock().unwrap().len(), n, "{kind:?}: Gram columns computed");
        assert_eq!(*kernel.entries.lock().unwrap(), r.support().len() * n, "{kind:?}: Gram entries computed");
    }
}

#[test]
fn leverage_scores_with_full_pilot_are_exact() {
    // With the pilot = all points, the approximation is exact:
    // (K_ii - k_i^T (K + mu I)^{-1} k_i) / mu = (K (K + mu I)^{-1})_ii.
    let kernel = PairGauss(0.5);
    let x = random_rows(25, 2, 3);
    let lambda = 1e-2;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let approx = approximate_leverage_scores(&kernel, &x, lambda, 25, &mut rng).unwrap();
    let k = kernel.gram(&x);
    let exact = &k * common::ridge_inverse(&k, lambda);
    for (i, a) in approx.iter().enumerate() {
        assert!((a - exact[(i, i)]).abs() < 1e-10, "score {i}: {a} vs {}", exact[(i, i)]);
    }
}

#[test]
fn invalid_specs_are_errors() {
    for bad in
        ["gaussian", "gaussian:0", "uniform:x", "sjlt:4:9", "sparse-gaussian:5:0", "sparse-gaussian:5:1.5", "foo:3"]
    {
        assert!(bad.parse::<SketchSpec>().is_err(), "{bad} parsed");
    }
    assert!(Sketch::draw(&SketchSpec::new(SketchKind::Leverage, 3), 10, 0).is_err());
    assert!(Sketch::draw(&SketchSpec::new(SketchKind::Gaussian, 3), 0, 0).is_err());
    assert!(Sketch::weighted_subsampling(&[0.0, -1.0], 3, &mut ChaCha8Rng::seed_from_u64(0)).is_err());
}
