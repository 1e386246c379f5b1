//! Property tests of okr-linalg on random matrices with prescribed spectra.
//!
//! Matrices are built as $A = U \operatorname{diag}(s) V^\top$ with random
//! orthonormal $U, V$ and singular values $s$ log-spaced at random between 1
//! and $10^{-c}$ (exact zeros for rank-deficient cases), so the condition
//! number $\kappa = 10^c$ is known. Tolerances are $C \cdot n \cdot \epsilon$,
//! times $\kappa$ where the quantity is not backward stable.
#![allow(non_snake_case)]

use faer::{Col, Mat, MatRef, Par};
use okr_linalg::{
    CgParams, Cholesky, Jacobi, JitterPolicy, conjugate_gradient, eigh, pinv, preconditioned_conjugate_gradient,
    thin_svd,
};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const EPS: f64 = f64::EPSILON;

fn uniform(m: usize, n: usize, rng: &mut ChaCha8Rng) -> Mat<f64> {
    Mat::from_fn(m, n, |_, _| 2.0 * rng.random::<f64>() - 1.0)
}

/// `m x k` matrix with orthonormal columns (`k <= m`).
fn orthonormal(m: usize, k: usize, rng: &mut ChaCha8Rng) -> Mat<f64> {
    uniform(m, k, rng).qr().compute_thin_Q()
}

/// `k` values, descending, `s[0] = 1`, `s[k-1] = 10^-log_cond` (for `k > 1`),
/// the others log-uniform in between; then the last `k - rank` set to zero.
fn spectrum(k: usize, rank: usize, log_cond: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut t: Vec<f64> = (0..rank).map(|j| if j == 0 { 0.0 } else { rng.random::<f64>() }).collect();
    if rank > 1 {
        t[rank - 1] = 1.0;
    }
    t.sort_by(f64::total_cmp);
    let mut s: Vec<f64> = t.iter().map(|t| 10f64.powf(-log_cond * t)).collect();
    s.resize(k, 0.0);
    s
}

/// `U diag(s) V^T`.
fn usvt(U: MatRef<'_, f64>, s: &[f64], V: MatRef<'_, f64>) -> Mat<f64> {
    let us = Mat::from_fn(U.nrows(), s.len(), |i, j| U[(i, j)] * s[j]);
    &us * V.transpose()
}

/// Symmetric `Q diag(w) Q^T`, symmetrised exactly.
fn sym(w: &[f64], rng: &mut ChaCha8Rng) -> Mat<f64> {
    let n = w.len();
    let Q = orthonormal(n, n, rng);
    let A = usvt(Q.as_ref(), w, Q.as_ref());
    Mat::from_fn(n, n, |i, j| 0.5 * (A[(i, j)] + A[(j, i)]))
}

fn max_abs(a: MatRef<'_, f64>) -> f64 {
    a.norm_max()
}

fn orthonormality_error(Q: MatRef<'_, f64>) -> f64 {
    max_abs((Q.transpose() * Q - Mat::<f64>::identity(Q.ncols(), Q.ncols())).as_ref())
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// Results and errors can cross threads (estimators fit in parallel).
#[test]
fn autotraits() {
    fn check<T: Send + Sync + 'static>() {}
    check::<okr_linalg::SelfAdjointEigen>();
    check::<okr_linalg::ThinSvd>();
    check::<okr_linalg::CgParams>();
    check::<okr_linalg::CgInfo>();
    check::<Jacobi>();
    check::<Cholesky>();
    check::<okr_linalg::Error>();
}

proptest! {
    #![proptest_config(config(256))]

    /// `crossprod(A)` equals the full product $A^\top A$ and is exactly symmetric,
    /// for any shape (including empty and single-row matrices).
    #[test]
    fn crossprod_equals_full_product(n in 0usize..=60, k in 0usize..=30, seed: u64, parallel: bool) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let a = uniform(n, k, &mut rng);
        let par = if parallel { Par::rayon(2) } else { Par::Seq };
        let g = okr_linalg::crossprod(a.as_ref(), par);
        let full = a.transpose() * &a;
        prop_assert_eq!((g.nrows(), g.ncols()), (k, k));
        let tol = 4.0 * (n.max(1) as f64) * EPS;
        prop_assert!(max_abs((&g - &full).as_ref()) <= tol, "error {}", max_abs((&g - &full).as_ref()));
        prop_assert!((0..k).all(|i| (0..k).all(|j| g[(i, j)] == g[(j, i)])));
    }

    /// $V \operatorname{diag}(w) V^\top = A$, $V^\top V = I$, $w$ descending and
    /// equal to the prescribed spectrum (Weyl: $|\hat w_j - w_j| \le \lVert E \rVert_2$).
    #[test]
    fn eigh_reconstructs(n in 1usize..=40, seed: u64, log_cond in 0.0f64..=8.0, indefinite: bool) {
        faer::set_global_parallelism(Par::Seq);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut w = spectrum(n, n, log_cond, &mut rng);
        if indefinite {
            w.iter_mut().for_each(|x| if rng.random::<bool>() { *x = -*x });
        }
        let A = sym(&w, &mut rng);
        let e = eigh(A.as_ref()).unwrap();
        let vals = e.values();
        prop_assert!(vals.windows(2).all(|p| p[0] >= p[1]), "not descending: {vals:?}");
        let tol = 20.0 * n as f64 * EPS;
        let mut expected = w.clone();
        expected.sort_by(|a, b| b.total_cmp(a));
        for (got, want) in vals.iter().zip(&expected) {
            prop_assert!((got - want).abs() <= tol, "eigenvalue {got} vs {want}");
        }
        let V = e.vectors();
        prop_assert!(orthonormality_error(V) <= tol);
        let rec = usvt(V, vals, V);
        prop_assert!(max_abs((&rec - &A).as_ref()) <= tol, "reconstruction {}", max_abs((&rec - &A).as_ref()));
        let rank = e.numerical_rank(n as f64 * EPS);
        if !indefinite {
            prop_assert_eq!(rank, n);
        }
    }

    /// Thin SVD of any shape and rank: $U \operatorname{diag}(s) V^\top = A$,
    /// orthonormal factors, $s$ non-increasing and equal to the prescribed values.
    #[test]
    fn svd_reconstructs(m in 1usize..=40, n in 1usize..=40, seed: u64, log_cond in 0.0f64..=8.0, rank_frac in 0.0f64..=1.0) {
        faer::set_global_parallelism(Par::Seq);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let k = m.min(n);
        let rank = ((rank_frac * k as f64).ceil() as usize).clamp(1, k);
        let s = spectrum(k, rank, log_cond, &mut rng);
        let A = usvt(orthonormal(m, k, &mut rng).as_ref(), &s, orthonormal(n, k, &mut rng).as_ref());
        let svd = thin_svd(A.as_ref()).unwrap();
        prop_assert_eq!((svd.u().shape(), svd.s().len(), svd.v().shape()), ((m, k), k, (n, k)));
        prop_assert!(svd.s().windows(2).all(|p| p[0] >= p[1]) && svd.s().iter().all(|&x| x >= 0.0));
        let tol = 20.0 * m.max(n) as f64 * EPS;
        for (got, want) in svd.s().iter().zip(&s) {
            prop_assert!((got - want).abs() <= tol, "singular value {got} vs {want}");
        }
        prop_assert!(orthonormality_error(svd.u()) <= tol);
        prop_assert!(orthonormality_error(svd.v()) <= tol);
        let rec = usvt(svd.u(), svd.s(), svd.v());
        prop_assert!(max_abs((&rec - &A).as_ref()) <= tol);
        prop_assert_eq!(svd.rank(Some(1e-10)), rank);
    }

    /// $A A^+ A = A$ and $A^+ A A^+ = A^+$ for full-rank $A$ of any shape, default `rtol`.
    /// The products amplify rounding by $\kappa$: tolerance $C (m + n) \epsilon \kappa$.
    #[test]
    fn pinv_full_rank(m in 1usize..=40, n in 1usize..=40, seed: u64, log_cond in 0.0f64..=8.0) {
        faer::set_global_parallelism(Par::Seq);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let k = m.min(n);
        let s = spectrum(k, k, log_cond, &mut rng);
        let A = usvt(orthonormal(m, k, &mut rng).as_ref(), &s, orthonormal(n, k, &mut rng).as_ref());
        let P = pinv(A.as_ref(), None).unwrap();
        prop_assert_eq!(P.shape(), (n, m));
        let cond = 1.0 / s[k - 1];
        let tol = 10.0 * (m + n) as f64 * EPS * cond;
        let apa = &A * &P * &A;
        prop_assert!(max_abs((&apa - &A).as_ref()) <= tol, "A P A - A: {} > {tol}", max_abs((&apa - &A).as_ref()));
        let pap = &P * &A * &P;
        prop_assert!(max_abs((&pap - &P).as_ref()) <= tol * cond, "P A P - P: {}", max_abs((&pap - &P).as_ref()));
    }

    /// Rank-deficient $A$ (any shape): with `rtol = 1e-12`, the rounding-level
    /// singular values are dropped, $\lVert A^+ \rVert_2 = 1 / s_{r-1}$ and $A A^+ A = A$.
    #[test]
    fn pinv_rank_deficient(m in 2usize..=40, n in 2usize..=40, seed: u64, log_cond in 0.0f64..=8.0, rank_frac in 0.0f64..1.0) {
        faer::set_global_parallelism(Par::Seq);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let k = m.min(n);
        let rank = ((rank_frac * k as f64) as usize).clamp(1, k - 1);
        let s = spectrum(k, rank, log_cond, &mut rng);
        let A = usvt(orthonormal(m, k, &mut rng).as_ref(), &s, orthonormal(n, k, &mut rng).as_ref());
        let P = pinv(A.as_ref(), Some(1e-12)).unwrap();
        let cond = 1.0 / s[rank - 1];
        let p_norm = thin_svd(P.as_ref()).unwrap().s()[0];
        prop_assert!((p_norm / cond - 1.0).abs() <= 1e-6, "||P|| = {p_norm}, 1/s_r = {cond}");
        let tol = 10.0 * (m + n) as f64 * EPS * cond;
        let apa = &A * &P * &A;
        prop_assert!(max_abs((&apa - &A).as_ref()) <= tol, "A P A - A: {} > {tol}", max_abs((&apa - &A).as_ref()));
    }

    /// Cholesky of an SPD matrix with $\kappa \le 10^8$: no jitter, and the
    /// backward error $\lVert A x - b \rVert / (\lVert A \rVert \lVert x \rVert)$ is $O(n \epsilon)$.
    #[test]
    fn cholesky_backward_stable(n in 1usize..=40, seed: u64, log_cond in 0.0f64..=8.0) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let A = sym(&spectrum(n, n, log_cond, &mut rng), &mut rng);
        let b = uniform(n, 1, &mut rng);
        let (chol, info) = Cholesky::factor_in_place(A.clone(), JitterPolicy::default(), Par::Seq).unwrap();
        prop_assert_eq!((info.attempts, info.jitter), (1, 0.0));
        let x = chol.solve(b.as_ref(), Par::Seq);
        let r = &A * &x - &b;
        let backward = r.norm_l2() / (A.norm_l2() * x.norm_l2());
        prop_assert!(backward <= 10.0 * n as f64 * EPS, "backward error {backward}");
    }

    /// Cholesky of a rank-deficient PSD matrix succeeds with a small jitter and
    /// $L L^\top = A + \epsilon I$.
    #[test]
    fn cholesky_jitter_on_rank_deficient(n in 2usize..=40, seed: u64, log_cond in 0.0f64..=8.0, rank_frac in 0.0f64..1.0) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let rank = ((rank_frac * n as f64) as usize).clamp(1, n - 1);
        let A = sym(&spectrum(n, rank, log_cond, &mut rng), &mut rng);
        let (chol, info) = Cholesky::factor_in_place(A.clone(), JitterPolicy::default(), Par::Seq).unwrap();
        let mean_diag = (0..n).map(|i| A[(i, i)]).sum::<f64>() / n as f64;
        prop_assert!(info.jitter <= 1e-7 * mean_diag);
        let mut shifted = A.clone();
        (0..n).for_each(|i| shifted[(i, i)] += info.jitter);
        let rec = chol.l() * chol.l().transpose();
        prop_assert!(max_abs((&rec - &shifted).as_ref()) <= 10.0 * n as f64 * EPS);
    }

    /// CG agrees with the Cholesky solve on SPD systems with $\kappa \le 10^4$,
    /// from zero or a random start: $\lVert x - x_* \rVert / \lVert x_* \rVert \le \kappa (\mathrm{tol} + C n \epsilon)$.
    #[test]
    fn cg_matches_cholesky(n in 1usize..=40, seed: u64, log_cond in 0.0f64..=4.0, warm: bool) {
        faer::set_global_parallelism(Par::Seq);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let A = sym(&spectrum(n, n, log_cond, &mut rng), &mut rng);
        let b = uniform(n, 1, &mut rng);
        let (chol, _) = Cholesky::factor_in_place(A.clone(), JitterPolicy::default(), Par::Seq).unwrap();
        let x_star = chol.solve(b.as_ref(), Par::Seq);
        let x0 = warm.then(|| Col::from_fn(n, |_| rng.random::<f64>()));
        let params = CgParams::default();
        let (x, info) = conjugate_gradient(&A, b.col(0), x0.as_ref().map(|x| x.as_ref()), params).unwrap();
        prop_assert!(info.relative_residual <= params.tol && info.iterations <= 10 * n);
        let cond = 10f64.powf(log_cond);
        let err = (&x - x_star.col(0)).norm_l2() / x_star.norm_l2();
        prop_assert!(err <= cond * (params.tol + 10.0 * n as f64 * EPS), "relative error {err}, cond {cond}");
    }

    /// Jacobi-preconditioned CG on a badly scaled SPD matrix $D B D$ ($D$
    /// spanning $10^{\pm 1}$, $\kappa(B) \le 10$) meets `tol` on the true residual
    /// and matches the Cholesky solve within $\kappa(A) (\mathrm{tol} + C n \epsilon)$.
    #[test]
    fn jacobi_cg_matches_cholesky(n in 1usize..=40, seed: u64, log_cond in 0.0f64..=1.0) {
        faer::set_global_parallelism(Par::Seq);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let B = sym(&spectrum(n, n, log_cond, &mut rng), &mut rng);
        let d: Vec<f64> = (0..n).map(|_| 10f64.powf(2.0 * rng.random::<f64>() - 1.0)).collect();
        let A = Mat::from_fn(n, n, |i, j| d[i] * B[(i, j)] * d[j]);
        let b = uniform(n, 1, &mut rng);
        let (chol, _) = Cholesky::factor_in_place(A.clone(), JitterPolicy::default(), Par::Seq).unwrap();
        let x_star = chol.solve(b.as_ref(), Par::Seq);
        let jacobi = Jacobi::from_matrix(A.as_ref()).unwrap();
        let params = CgParams::default().tol(1e-8);
        let (x, info) = preconditioned_conjugate_gradient(&A, &jacobi, b.col(0), None, params).unwrap();
        let res = (&A * &x - b.col(0)).norm_l2() / b.norm_l2();
        prop_assert!(info.relative_residual <= params.tol && res <= params.tol * (1.0 + 1e-6), "residual {res}");
        let w = eigh(A.as_ref()).unwrap();
        let cond = w.values()[0] / w.values()[n - 1];
        let err = (&x - x_star.col(0)).norm_l2() / x_star.norm_l2();
        prop_assert!(err <= cond * (params.tol + 10.0 * n as f64 * EPS), "relative error {err}, cond {cond}");
    }
}
