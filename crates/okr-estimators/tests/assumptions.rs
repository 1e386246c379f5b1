//! The exponents of the reduced-rank paper's Assumptions 2 and 4 against the
//! closed forms of its Examples 1 and 2 (in random rotations), and the
//! constant c3 against the definition c3 M^(1-gamma) <= E checked directly.

mod common;

use common::lcg;
use faer::Mat;
use okr_estimators::reduced_rank::assumptions::output_exponents;

/// A random orthogonal `d x d` matrix (QR of a uniform matrix).
fn rotation(d: usize, seed: u64) -> Mat<f64> {
    let mut r = lcg(seed);
    Mat::from_fn(d, d, |_, _| r()).qr().compute_thin_Q()
}

/// `Q diag(w) Q^T`.
fn spectral(q: &Mat<f64>, w: &[f64]) -> Mat<f64> {
    let scaled = Mat::from_fn(q.nrows(), q.ncols(), |i, j| q[(i, j)] * w[j]);
    &scaled * q.transpose()
}

fn min_eig(a: &Mat<f64>) -> f64 {
    let sym = Mat::from_fn(a.nrows(), a.ncols(), |i, j| 0.5 * (a[(i, j)] + a[(j, i)]));
    *okr_linalg::eigh(sym.as_ref()).unwrap().values().last().unwrap()
}

/// Example 2 (polynomial): mu_p(M) = p^-s, mu_p(E) = sigma^2 p^-e in one
/// rotated basis give alpha = 2/s, gamma = 1 - e/s, c1 = sum p^-2, c3 = sigma^2.
#[test]
fn polynomial_example_closed_form() {
    for (d, s, e, sigma2, seed) in
        [(60usize, 4.0, 8.0 / 7.0, 0.3, 1u64), (40, 2.5, 0.5, 1.0, 2), (30, 3.0, 0.0, 0.1, 3)]
    {
        let q = rotation(d, seed);
        let mu: Vec<f64> = (1..=d).map(|p| (p as f64).powf(-s)).collect();
        let nu: Vec<f64> = (1..=d).map(|p| sigma2 * (p as f64).powf(-e)).collect();
        let x = output_exponents(spectral(&q, &mu).as_ref(), spectral(&q, &nu).as_ref(), (2, d / 2)).unwrap();
        assert_eq!(x.rank, d);
        assert!((x.s - s).abs() < 1e-8 && (x.e - e).abs() < 1e-8, "s {} e {}", x.s, x.e);
        let alpha = (2.0 / s).min(1.0);
        assert!((x.alpha - alpha).abs() < 1e-8 && (x.gamma - (1.0 - e / s)).abs() < 1e-8);
        let c1: f64 = mu.iter().map(|m| m.powf(alpha)).sum();
        assert!((x.c1 - c1).abs() < 1e-8 * c1, "c1 {} vs {c1}", x.c1);
        assert!((x.c3 - sigma2).abs() < 1e-6 * sigma2, "c3 {} vs {sigma2}", x.c3);
        for p in 0..d {
            assert!((x.mu_m[p] - mu[p]).abs() < 1e-10 && (x.mu_e[p] - nu[p]).abs() < 1e-10);
        }
    }
}

/// Example 1 (finite rank): M = sigma_x^2 sum_{i<=r} v_i v_i^T, E = sigma_e^2 I
/// gives alpha = 0 (c1 = r) and gamma = 1 (c3 = sigma_e^2).
#[test]
fn finite_rank_example() {
    let (d, r) = (30, 5);
    let q = rotation(d, 7);
    let mu: Vec<f64> = (0..d).map(|p| if p < r { 1.0 } else { 0.0 }).collect();
    let e = Mat::from_fn(d, d, |i, j| if i == j { 0.1 } else { 0.0 });
    let x = output_exponents(spectral(&q, &mu).as_ref(), e.as_ref(), (2, 20)).unwrap();
    assert_eq!((x.rank, x.alpha, x.gamma, x.c1), (r, 0.0, 1.0, r as f64));
    assert!((x.c3 - 0.1).abs() < 1e-12 && x.s.is_infinite() && x.e.abs() < 1e-10);
}

/// Noise and signal in different bases: c3 M^(1-gamma) <= E holds at the
/// returned c3 and fails 1 % above it (brute force by eigenvalues).
#[test]
fn c3_is_the_largest_constant() {
    let d = 25;
    let (q, q2) = (rotation(d, 11), rotation(d, 12));
    let mu: Vec<f64> = (1..=d).map(|p| (p as f64).powf(-3.0)).collect();
    let nu: Vec<f64> = (1..=d).map(|p| 0.2 * (p as f64).powf(-0.7) + 1e-3).collect();
    let (m, e) = (spectral(&q, &mu), spectral(&q2, &nu));
    let x = output_exponents(m.as_ref(), e.as_ref(), (2, 15)).unwrap();
    assert!(x.c3 > 0.0 && (0.0..=1.0).contains(&x.gamma));
    let pw: Vec<f64> = mu.iter().map(|v| v.powf(1.0 - x.gamma)).collect();
    let mp = spectral(&q, &pw);
    assert!(min_eig(&(&e - &mp * faer::Scale(x.c3))) > -1e-10);
    assert!(min_eig(&(&e - &mp * faer::Scale(1.01 * x.c3))) < 0.0);
    // mu_e are the diagonal of E in M's eigenbasis.
    let v = okr_linalg::eigh(m.as_ref()).unwrap().into_parts().1;
    let ev = v.transpose() * &e * &v;
    assert!((0..d).all(|p| (ev[(p, p)] - x.mu_e[p]).abs() < 1e-12));
}

#[test]
fn bad_input_is_an_error() {
    let m = Mat::<f64>::identity(5, 5);
    assert!(output_exponents(m.as_ref(), Mat::<f64>::identity(4, 4).as_ref(), (1, 3)).is_err());
    assert!(output_exponents(m.as_ref(), m.as_ref(), (3, 3)).is_err());
    assert!(output_exponents(m.as_ref(), m.as_ref(), (0, 3)).is_err());
    assert!(output_exponents(m.as_ref(), m.as_ref(), (1, 6)).is_err());
}
