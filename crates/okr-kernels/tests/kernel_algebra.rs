//! Kernel algebra against explicit feature maps, ALIGNF against a
//! brute-force QP, and the Gram file readers.

use faer::Mat;
use okr_kernels::combinators::{Centered, Normalized, Product, Sum, WeightedSum, center_gram, normalize_block};
use okr_kernels::mkl::{alignf_weights, nonnegative_qp};
use okr_kernels::{DenseRows, Kernel, Linear, read_gram_npy, read_gram_text};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Uniform entries in `[-1, 1)` from a seeded generator.
fn rows(n: usize, d: usize, seed: u64) -> DenseRows {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    DenseRows::new(Mat::from_fn(n, d, |_, _| 2.0 * rng.random::<f64>() - 1.0)).unwrap()
}

/// Explicit features of `Sum(Linear, Product(Linear, Linear))`: `[x, x (x) x]`.
fn features(x: &DenseRows) -> Mat<f64> {
    let d = x.n_features();
    let x = x.as_mat();
    Mat::from_fn(x.nrows(), d + d * d, |i, f| if f < d { x[(i, f)] } else { x[(i, (f - d) / d)] * x[(i, (f - d) % d)] })
}

fn dot_rows(a: &Mat<f64>, i: usize, b: &Mat<f64>, j: usize) -> f64 {
    (0..a.ncols()).map(|f| a[(i, f)] * b[(j, f)]).sum()
}

fn assert_close(a: &Mat<f64>, b: &Mat<f64>, tol: f64) {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            assert!(
                (a[(i, j)] - b[(i, j)]).abs() <= tol * (1.0 + b[(i, j)].abs()),
                "({i}, {j}): {} vs {}",
                a[(i, j)],
                b[(i, j)]
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn centred_and_normalized_match_explicit_features(n in 1usize..12, nt in 1usize..6, d in 1usize..4, seed in 0u64..1000) {
        faer::set_global_parallelism(faer::Par::Seq);
        let (x, xt) = (rows(n, d, seed), rows(nt, d, seed + 1));
        let k = Sum(Linear, Product(Linear, Linear));
        let (phi, phit) = (features(&x), features(&xt));
        // Plain kernel = explicit features.
        assert_close(&k.gram_block(&xt, &x), &Mat::from_fn(nt, n, |i, j| dot_rows(&phit, i, &phi, j)), 1e-12);

        // Centring with the training mean.
        let mean: Vec<f64> = (0..phi.ncols()).map(|f| (0..n).map(|i| phi[(i, f)]).sum::<f64>() / n as f64).collect();
        let centre = |p: &Mat<f64>| Mat::from_fn(p.nrows(), p.ncols(), |i, f| p[(i, f)] - mean[f]);
        let (cphi, cphit) = (centre(&phi), centre(&phit));
        let want_train = Mat::from_fn(n, n, |i, j| dot_rows(&cphi, i, &cphi, j));
        let want_test = Mat::from_fn(nt, n, |i, j| dot_rows(&cphit, i, &cphi, j));
        let ck = Centered::fit(k.clone(), &x);
        assert_close(&ck.gram(&x), &want_train, 1e-10);
        assert_close(&ck.gram_block(&xt, &x), &want_test, 1e-10);
        let want_diag: Vec<f64> = (0..nt).map(|i| dot_rows(&cphit, i, &cphit, i)).collect();
        for (u, v) in ck.diag(&xt).iter().zip(&want_diag) { prop_assert!((u - v).abs() < 1e-10 * (1.0 + v.abs())); }
        prop_assert!((ck.eval(&xt, 0, &x, n - 1) - want_test[(0, n - 1)]).abs() < 1e-10 * (1.0 + want_test[(0, n - 1)].abs()));
        // The same on Gram matrices.
        let (c, stats) = center_gram(k.gram(&x).as_ref());
        assert_close(&c, &want_train, 1e-10);
        assert_close(&stats.center_block(k.gram_block(&xt, &x).as_ref()), &want_test, 1e-10);
        let cd = stats.center_diag(&k.diag(&xt), k.gram_block(&xt, &x).as_ref());
        for (u, v) in cd.iter().zip(&want_diag) { prop_assert!((u - v).abs() < 1e-10 * (1.0 + v.abs())); }

        // Cosine normalization: unit feature vectors.
        let unit = |p: &Mat<f64>| Mat::from_fn(p.nrows(), p.ncols(), |i, f| {
            let nrm = dot_rows(p, i, p, i).sqrt();
            if nrm > 0.0 { p[(i, f)] / nrm } else { 0.0 }
        });
        let (uphi, uphit) = (unit(&phi), unit(&phit));
        let want = Mat::from_fn(nt, n, |i, j| dot_rows(&uphit, i, &uphi, j));
        assert_close(&Normalized(k.clone()).gram_block(&xt, &x), &want, 1e-12);
        assert_close(&normalize_block(k.gram_block(&xt, &x).as_ref(), &k.diag(&xt), &k.diag(&x)), &want, 1e-12);
        prop_assert!((Normalized(k.clone()).eval(&xt, 0, &x, 0) - want[(0, 0)]).abs() < 1e-12);

        // Weighted sum = features scaled by sqrt(w).
        let w = [0.3, 2.0];
        let ws = WeightedSum::new(w.to_vec(), vec![Normalized(k.clone()), Normalized(k)]).unwrap();
        let want_ws = Mat::from_fn(nt, n, |i, j| 2.3 * want[(i, j)]);
        assert_close(&ws.gram_block(&xt, &x), &want_ws, 1e-12);
    }
}

#[test]
fn weighted_sum_rejects_bad_weights() {
    assert!(WeightedSum::new(vec![1.0], vec![Linear, Linear]).is_err());
    assert!(WeightedSum::new(vec![-1.0], vec![Linear]).is_err());
    assert!(WeightedSum::<Linear>::new(vec![], vec![]).is_err());
}

/// The QP optimum by enumerating every support set: solve the equality
/// system on it, keep feasible points, take the lowest objective.
fn brute_force_qp(m: &Mat<f64>, a: &[f64]) -> (Vec<f64>, f64) {
    let p = a.len();
    let obj = |v: &[f64]| {
        let mut o = 0.0;
        for i in 0..p {
            o -= 2.0 * v[i] * a[i];
            for j in 0..p {
                o += v[i] * m[(i, j)] * v[j];
            }
        }
        o
    };
    let mut best = (vec![0.0; p], 0.0);
    for mask in 1u32..(1 << p) {
        let set: Vec<usize> = (0..p).filter(|&i| mask >> i & 1 == 1).collect();
        let mpp = Mat::from_fn(set.len(), set.len(), |r, c| m[(set[r], set[c])]);
        let rhs = Mat::from_fn(set.len(), 1, |r, _| a[set[r]]);
        use faer::linalg::solvers::Solve;
        let sol = mpp.full_piv_lu().solve(&rhs);
        let mut v = vec![0.0; p];
        for (r, &i) in set.iter().enumerate() {
            v[i] = sol[(r, 0)];
        }
        if v.iter().all(|x| x.is_finite() && *x >= -1e-12) {
            let o = obj(&v);
            if o < best.1 {
                best = (v, o);
            }
        }
    }
    best
}

fn frob(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (0..a.ncols()).map(|j| (0..a.nrows()).map(|i| a[(i, j)] * b[(i, j)]).sum::<f64>()).sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn alignf_weights_match_brute_force_qp(p in 2usize..5, n in 4usize..12, seed in 0u64..10_000) {
        // Gram matrices of random low-dimensional features (PSD, generic).
        let grams: Vec<Mat<f64>> = (0..p).map(|m| Linear.gram(&rows(n, 2, seed * 7 + m as u64))).collect();
        let target = Linear.gram(&rows(n, 3, seed * 7 + 6));
        let refs: Vec<_> = grams.iter().map(|g| g.as_ref()).collect();
        let centred: Vec<Mat<f64>> = grams.iter().map(|g| center_gram(g.as_ref()).0).collect();
        let ty = center_gram(target.as_ref()).0;
        let m = Mat::from_fn(p, p, |k, l| frob(&centred[k], &centred[l]));
        let a: Vec<f64> = centred.iter().map(|c| frob(c, &ty)).collect();
        let (want_v, want_obj) = brute_force_qp(&m, &a);
        let v = nonnegative_qp(m.as_ref(), &a).unwrap();
        prop_assert!(v.iter().all(|x| *x >= 0.0));
        let obj = |v: &[f64]| -> f64 { (0..p).map(|i| -2.0 * v[i] * a[i] + (0..p).map(|j| v[i] * m[(i, j)] * v[j]).sum::<f64>()).sum() };
        prop_assert!((obj(&v) - want_obj).abs() <= 1e-9 * (1.0 + want_obj.abs()), "{} vs {}", obj(&v), want_obj);
        match alignf_weights(&refs, target.as_ref()) {
            Ok(w) => {
                let nv = want_v.iter().map(|x| x * x).sum::<f64>().sqrt();
                for (u, x) in w.iter().zip(&want_v) {
                    prop_assert!((u - x / nv).abs() < 1e-6, "{:?} vs {:?}", w, want_v);
                }
                // Optimal alignment: no single kernel is better aligned.
                let combined = Mat::from_fn(n, n, |i, j| (0..p).map(|k| w[k] * centred[k][(i, j)]).sum::<f64>());
                let align = |c: &Mat<f64>| frob(c, &ty) / (frob(c, c).sqrt() * frob(&ty, &ty).sqrt());
                for c in &centred {
                    if frob(c, c) > 1e-12 {
                        prop_assert!(align(&combined) >= align(c) - 1e-9);
                    }
                }
            }
            Err(e) => prop_assert!(want_v.iter().all(|x| *x == 0.0), "{e}"),
        }
    }
}

#[test]
fn alignf_picks_the_target_and_rejects_bad_input() {
    let x = rows(10, 2, 3);
    let k1 = Linear.gram(&x);
    let k2 = Linear.gram(&rows(10, 2, 4));
    let w = alignf_weights(&[k2.as_ref(), k1.as_ref()], k1.as_ref()).unwrap();
    assert!(w[0].abs() < 1e-9 && (w[1] - 1.0).abs() < 1e-9, "{w:?}");
    assert!(alignf_weights(&[], k1.as_ref()).is_err());
    assert!(alignf_weights(&[Mat::<f64>::zeros(3, 3).as_ref()], k1.as_ref()).is_err());
    let neg = Mat::from_fn(10, 10, |i, j| -k1[(i, j)]);
    assert!(alignf_weights(&[neg.as_ref()], k1.as_ref()).unwrap_err().to_string().contains("positively aligned"));
}

/// A `.npy` file written by hand from the format specification.
fn npy_bytes(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn gram_readers_read_npy_and_text() {
    let dir = std::env::temp_dir().join(format!("okr-gram-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("k.npy");
    let want = Mat::from_fn(2, 3, |i, j| (10 * i + j) as f64 + 0.5);
    let c_order: Vec<f64> = (0..2).flat_map(|i| (0..3).map(move |j| (10 * i + j) as f64 + 0.5)).collect();
    let f_order: Vec<f64> = (0..3).flat_map(|j| (0..2).map(move |i| (10 * i + j) as f64 + 0.5)).collect();
    let le = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let be = |v: &[f64]| v.iter().flat_map(|x| x.to_be_bytes()).collect::<Vec<u8>>();
    let f32le = |v: &[f64]| v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect::<Vec<u8>>();
    for bytes in [
        npy_bytes("<f8", false, "(2, 3)", &le(&c_order)),
        npy_bytes("<f8", true, "(2, 3)", &le(&f_order)),
        npy_bytes(">f8", false, "(2, 3)", &be(&c_order)),
        npy_bytes("<f4", false, "(2, 3)", &f32le(&c_order)),
    ] {
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(read_gram_npy(&path).unwrap(), want);
    }
    for (bytes, msg) in [
        (npy_bytes("<f8", false, "(2, 3)", &le(&c_order[..5])), ""),
        (npy_bytes("<f8", false, "(6,)", &le(&c_order)), "2-dimensional"),
        (npy_bytes("<i8", false, "(2, 3)", &le(&c_order)), "float64 or float32"),
        (b"not numpy".to_vec(), ""),
    ] {
        std::fs::write(&path, bytes).unwrap();
        let err = read_gram_npy(&path).unwrap_err().to_string();
        assert!(err.contains("k.npy:0:") && err.contains(msg), "{err}");
    }
    assert!(read_gram_npy(dir.join("missing.npy")).unwrap_err().to_string().starts_with("cannot read"));

    let text = dir.join("k.txt");
    std::fs::write(&text, "# K(test, train)\n0.5 1.5, 2.5\n\n10.5\t11.5 12.5\n").unwrap();
    assert_eq!(read_gram_text(&text).unwrap(), want);
    std::fs::write(&text, "1 2\n3\n").unwrap();
    assert!(read_gram_text(&text).unwrap_err().to_string().ends_with("k.txt:2: expected 2 values, found 1"));
    std::fs::write(&text, "1 nan\n").unwrap();
    assert!(read_gram_text(&text).unwrap_err().to_string().contains("k.txt:1: expected a finite number"));
    std::fs::remove_dir_all(&dir).unwrap();
}
