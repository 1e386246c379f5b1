//! The least-squares linear probe against its closed form, a brute-force
//! normal-equation solve, and separable / non-separable configurations.

// Index loops mirror the normal equations.
#![allow(clippy::needless_range_loop)]

use faer::Mat;
use okr_eval::probe::LinearProbe;

fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// Two classes at x = -1 and x = +1 (balanced, rho = 0): the standardized
/// code is x itself, so the weights are exactly (-1, 0) and (1, 0).
#[test]
fn closed_form_two_points() {
    let codes = Mat::from_fn(8, 1, |i, _| if i % 2 == 0 { -1.0 } else { 1.0 });
    let labels: Vec<usize> = (0..8).map(|i| i % 2).collect();
    let all: Vec<usize> = (0..8).collect();
    let p = LinearProbe::fit(codes.as_ref(), &labels, &all, 0.0).unwrap();
    let w = p.weights();
    for (got, want) in [(w[(0, 0)], -1.0), (w[(1, 0)], 0.0), (w[(0, 1)], 1.0), (w[(1, 1)], 0.0)] {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
    assert_eq!(p.accuracy(codes.as_ref(), &labels, &all).unwrap(), 1.0);
}

/// Gauss-Jordan with partial pivoting, `a x = b` for a square `a`.
fn gauss_jordan(mut a: Vec<Vec<f64>>, mut b: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    let n = a.len();
    for c in 0..n {
        let piv = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap();
        a.swap(c, piv);
        b.swap(c, piv);
        for r in 0..n {
            if r != c {
                let f = a[r][c] / a[c][c];
                for k in 0..n {
                    a[r][k] -= f * a[c][k];
                }
                for k in 0..b[r].len() {
                    b[r][k] -= f * b[c][k];
                }
            }
        }
    }
    (0..n).map(|r| b[r].iter().map(|v| v / a[r][r]).collect()).collect()
}

/// Random codes, three classes, a ridge: the weights equal the ridge normal
/// equations on the standardized codes (bias unpenalized), solved by hand.
#[test]
fn weights_equal_brute_force_normal_equations() {
    let (n, d, k, rho) = (40, 3, 3, 0.05);
    let mut r = lcg(5);
    let codes = Mat::from_fn(n, d, |_, j| 3.0 * r() + j as f64);
    let labels: Vec<usize> = (0..n).map(|i| (i * 7) % k).collect();
    let train: Vec<usize> = (0..n).filter(|i| i % 4 != 0).collect();
    let p = LinearProbe::fit(codes.as_ref(), &labels, &train, rho).unwrap();
    let m = train.len() as f64;
    let mean: Vec<f64> = (0..d).map(|j| train.iter().map(|&i| codes[(i, j)]).sum::<f64>() / m).collect();
    let sd: Vec<f64> =
        (0..d).map(|j| (train.iter().map(|&i| (codes[(i, j)] - mean[j]).powi(2)).sum::<f64>() / m).sqrt()).collect();
    let z: Vec<Vec<f64>> = train
        .iter()
        .map(|&i| (0..=d).map(|j| if j == d { 1.0 } else { (codes[(i, j)] - mean[j]) / sd[j] }).collect())
        .collect();
    let a: Vec<Vec<f64>> = (0..=d)
        .map(|p| {
            (0..=d)
                .map(|q| z.iter().map(|row| row[p] * row[q]).sum::<f64>() + if p == q && p < d { m * rho } else { 0.0 })
                .collect()
        })
        .collect();
    let b: Vec<Vec<f64>> = (0..=d)
        .map(|p| {
            (0..k)
                .map(|c| z.iter().zip(&train).map(|(row, &i)| row[p] * if labels[i] == c { 1.0 } else { -1.0 }).sum())
                .collect()
        })
        .collect();
    let want = gauss_jordan(a, b);
    for p_ in 0..=d {
        for c in 0..k {
            assert!((p.weights()[(p_, c)] - want[p_][c]).abs() < 1e-10);
        }
    }
    // Predictions are the argmax of the outputs.
    let test: Vec<usize> = (0..n).filter(|i| i % 4 == 0).collect();
    let pred = p.predict(codes.as_ref(), &test).unwrap();
    for (&i, &c) in test.iter().zip(&pred) {
        let z: Vec<f64> = (0..=d).map(|j| if j == d { 1.0 } else { (codes[(i, j)] - mean[j]) / sd[j] }).collect();
        let out: Vec<f64> = (0..k).map(|c| (0..=d).map(|j| z[j] * want[j][c]).sum()).collect();
        let best = (0..k).fold(0, |b, c| if out[c] > out[b] { c } else { b });
        assert_eq!(c, best);
    }
}

/// Two concentric circles: not linearly separable in (x, y) (held-out
/// accuracy near chance), perfectly separable once r^2 is a code coordinate.
#[test]
fn circles_separable_only_with_the_radius() {
    let n = 200;
    let mut r = lcg(9);
    let pts: Vec<(f64, f64, usize)> = (0..n)
        .map(|i| {
            let (rad, c) = if i % 2 == 0 { (1.0, 0) } else { (3.0, 1) };
            let t = std::f64::consts::PI * r();
            (rad * t.cos(), rad * t.sin(), c)
        })
        .collect();
    let labels: Vec<usize> = pts.iter().map(|p| p.2).collect();
    let (train, test): (Vec<usize>, Vec<usize>) = (0..n).partition(|i| i % 3 != 0);
    let raw = Mat::from_fn(n, 2, |i, j| if j == 0 { pts[i].0 } else { pts[i].1 });
    let acc =
        LinearProbe::fit(raw.as_ref(), &labels, &train, 1e-6).unwrap().accuracy(raw.as_ref(), &labels, &test).unwrap();
    assert!(acc < 0.75, "{acc}");
    let lifted = Mat::from_fn(n, 3, |i, j| if j < 2 { raw[(i, j)] } else { pts[i].0.powi(2) + pts[i].1.powi(2) });
    let acc = LinearProbe::fit(lifted.as_ref(), &labels, &train, 1e-6)
        .unwrap()
        .accuracy(lifted.as_ref(), &labels, &test)
        .unwrap();
    assert_eq!(acc, 1.0);
}

#[test]
fn bad_input_is_an_error() {
    let codes = Mat::from_fn(4, 2, |i, j| (i + j) as f64);
    let labels = [0, 1, 0, 1];
    assert!(LinearProbe::fit(codes.as_ref(), &labels[..3], &[0, 1], 0.0).is_err());
    assert!(LinearProbe::fit(codes.as_ref(), &labels, &[], 0.0).is_err());
    assert!(LinearProbe::fit(codes.as_ref(), &labels, &[0, 9], 0.0).is_err());
    assert!(LinearProbe::fit(codes.as_ref(), &labels, &[0, 1], -1.0).is_err());
    let p = LinearProbe::fit(codes.as_ref(), &labels, &[0, 1, 2, 3], 0.1).unwrap();
    assert!(p.accuracy(codes.as_ref(), &labels, &[]).is_err());
    assert!(p.predict(Mat::<f64>::zeros(2, 3).as_ref(), &[0]).is_err());
    let mut bad = codes.clone();
    bad[(1, 1)] = f64::NAN;
    assert!(LinearProbe::fit(bad.as_ref(), &labels, &[0, 1], 0.0).is_err());
}
