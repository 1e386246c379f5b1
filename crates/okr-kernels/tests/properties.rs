//! Property tests: every kernel on every container.
//!
//! - blocks equal pairwise `eval` (sizes 0 and 1 included, random sparsity),
//!   whatever the parallelism and the layout of the destination;
//! - Gram matrices are exactly symmetric, match `diag`, and are PSD to
//!   tolerance (min eigenvalue >= -1e-8 * trace);
//! - Gaussian with feature weights on CSR rows equals Gaussian on explicitly
//!   standardized dense rows;
//! - `KernelSpec` serde round trip, invalid parameters -> `Err`.

use faer::{Mat, MatRef, Par, Side};
use okr_kernels::{
    CsrRows, DenseRows, Gaussian, GaussianTanimoto, Kernel, KernelSpec, LabelSets, Laplacian, Linear, Polynomial, Rows,
    Tanimoto,
};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random sparse rows: each entry present with probability `density`,
/// values in `[-3, 3)` or `[0, 3)` when `nonneg`.
fn random_rows(rng: &mut ChaCha8Rng, n: usize, d: usize, density: f64, nonneg: bool) -> Vec<Vec<(usize, f64)>> {
    (0..n)
        .map(|_| {
            let mut row = Vec::new();
            for f in 0..d {
                if rng.random::<f64>() < density {
                    let v = rng.random::<f64>() * 3.0;
                    row.push((f, if nonneg || rng.random::<bool>() { v } else { -v }));
                }
            }
            row
        })
        .collect()
}

/// The same rows in the three containers (label sets: the support).
struct Data {
    dense: DenseRows,
    csr: CsrRows,
    sets: LabelSets,
}

fn make_data(rows: Vec<Vec<(usize, f64)>>, d: usize) -> Data {
    let sets = LabelSets::new(d, rows.iter().map(|r| r.iter().map(|e| e.0).collect()).collect()).unwrap();
    let csr = CsrRows::from_rows(d, rows).unwrap();
    let dense = DenseRows::new(csr.to_dense()).unwrap();
    Data { dense, csr, sets }
}

/// One kernel of every kind, with parameters from `rng`; Gaussian twice
/// (without and with feature weights over `d` features).
fn kernels(rng: &mut ChaCha8Rng, d: usize) -> Vec<KernelSpec> {
    let gamma = 0.05 + rng.random::<f64>();
    let weights: Vec<f64> =
        (0..d).map(|_| if rng.random::<f64>() < 0.2 { 0.0 } else { rng.random::<f64>() * 2.0 }).collect();
    vec![
        Linear::new().into(),
        Gaussian::new(gamma).unwrap().into(),
        Gaussian::new(gamma).unwrap().with_feature_weights(weights).unwrap().into(),
        Laplacian::new(gamma).unwrap().into(),
        Polynomial::new(rng.random_range(1..5), gamma, rng.random::<f64>() * 2.0).unwrap().into(),
        Tanimoto::new().into(),
        GaussianTanimoto::new(gamma).unwrap().into(),
    ]
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// Block via `gram_block_into` with `par` into a column-major and a
/// row-major destination, checked against `eval`.
fn check_block<R: Rows, K: Kernel<R> + std::fmt::Display>(k: &K, a: &R, b: &R, par: Par) -> Result<(), TestCaseError> {
    let (m, n) = (a.n_rows(), b.n_rows());
    let mut col_major = Mat::<f64>::zeros(m, n);
    k.gram_block_into(a, b, col_major.as_mut(), par);
    let mut row_major = Mat::<f64>::zeros(n, m);
    k.gram_block_into(a, b, row_major.as_mut().transpose_mut(), par);
    for i in 0..m {
        for j in 0..n {
            let e = k.eval(a, i, b, j);
            prop_assert!(close(col_major[(i, j)], e, 1e-9), "{k}: block ({i},{j}) {} != eval {e}", col_major[(i, j)]);
            prop_assert!(close(row_major[(j, i)], e, 1e-9), "{k}: row-major block ({i},{j})");
        }
    }
    Ok(())
}

fn min_eigenvalue(k: MatRef<'_, f64>) -> f64 {
    if k.nrows() == 0 {
        return 0.0;
    }
    let eig = k.self_adjoint_eigen(Side::Lower).expect("eigen decomposition");
    eig.S().column_vector()[0]
}

/// Gram: exactly symmetric, equal to `eval` and `diag`, PSD to tolerance.
fn check_gram<R: Rows, K: Kernel<R> + std::fmt::Display>(
    k: &K,
    a: &R,
    par: Par,
    psd: bool,
) -> Result<(), TestCaseError> {
    let n = a.n_rows();
    let mut g = Mat::<f64>::zeros(n, n);
    k.gram_into(a, g.as_mut(), par);
    let diag = k.diag(a);
    prop_assert_eq!(diag.len(), n);
    for i in 0..n {
        prop_assert!(close(g[(i, i)], diag[i], 1e-12), "{k}: gram diag {} != diag() {}", g[(i, i)], diag[i]);
        for j in 0..n {
            prop_assert_eq!(g[(i, j)], g[(j, i)], "{}: not exactly symmetric", k);
            let e = k.eval(a, i, a, j);
            prop_assert!(close(g[(i, j)], e, 1e-9), "{k}: gram ({i},{j}) {} != eval {e}", g[(i, j)]);
        }
    }
    if psd {
        let trace: f64 = diag.iter().sum();
        let lmin = min_eigenvalue(g.as_ref());
        prop_assert!(lmin >= -1e-8 * trace.abs() - 1e-12, "{k}: min eigenvalue {lmin}, trace {trace}");
    }
    Ok(())
}

/// Equal JSON trees, numbers to a relative 1e-15.
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => close(x.as_f64().unwrap(), y.as_f64().unwrap(), 1e-15),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

fn par_for(seed: u64) -> Par {
    if seed.is_multiple_of(3) { Par::rayon(2) } else { Par::Seq }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn blocks_equal_pairwise_eval(
        seed in any::<u64>(), na in 0usize..10, nb in 0usize..10, d in 0usize..9, density in 0.0f64..1.0, nonneg in any::<bool>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let a = make_data(random_rows(&mut rng, na, d, density, nonneg), d);
        let b = make_data(random_rows(&mut rng, nb, d, density, nonneg), d);
        let par = par_for(seed);
        for k in kernels(&mut rng, d) {
            check_block(&k, &a.dense, &b.dense, par)?;
            check_block(&k, &a.csr, &b.csr, par)?;
            check_block(&k, &a.sets, &b.sets, par)?;
        }
    }

    #[test]
    fn grams_are_symmetric_psd_and_match_eval(
        seed in any::<u64>(), n in 0usize..14, d in 0usize..9, density in 0.0f64..1.0, nonneg in any::<bool>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Repeated rows make the Gram singular: the hardest case for PSD.
        let mut rows = random_rows(&mut rng, n, d, density, nonneg);
        if n > 2 {
            rows[n - 1] = rows[0].clone();
        }
        let a = make_data(rows, d);
        let par = par_for(seed);
        for k in kernels(&mut rng, d) {
            check_gram(&k, &a.dense, par, true)?;
            check_gram(&k, &a.csr, par, true)?;
            check_gram(&k, &a.sets, par, true)?;
        }
    }

    #[test]
    fn weighted_gaussian_on_csr_equals_standardized_dense(
        seed in any::<u64>(), n in 1usize..12, m in 0usize..6, d in 1usize..8, density in 0.05f64..1.0, gamma in 0.01f64..2.0,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let train = CsrRows::from_rows(d, random_rows(&mut rng, n, d, density, false)).unwrap();
        let test = CsrRows::from_rows(d, random_rows(&mut rng, m, d, density, false)).unwrap();
        // Column means and standard deviations of the training rows.
        let x = train.to_dense();
        let mean: Vec<f64> = (0..d).map(|f| (0..n).map(|i| x[(i, f)]).sum::<f64>() / n as f64).collect();
        let std: Vec<f64> = (0..d)
            .map(|f| ((0..n).map(|i| (x[(i, f)] - mean[f]).powi(2)).sum::<f64>() / n as f64).sqrt())
            .collect();
        // scikit-learn's StandardScaler divides constant features by 1.
        let standardize = |z: &CsrRows| {
            let z = z.to_dense();
            DenseRows::new(Mat::from_fn(z.nrows(), d, |i, f| (z[(i, f)] - mean[f]) / if std[f] > 0.0 { std[f] } else { 1.0 }))
                .unwrap()
        };
        let (train_std, test_std) = (standardize(&train), standardize(&test));
        let plain = Gaussian::new(gamma).unwrap();
        let weighted = plain.clone().with_feature_scales(&std).unwrap();
        let par = par_for(seed);
        let (g_sparse, g_dense) = (weighted.gram(&train), plain.gram(&train_std));
        let mut b_sparse = Mat::zeros(m, n);
        weighted.gram_block_into(&test, &train, b_sparse.as_mut(), par);
        let b_dense = plain.gram_block(&test_std, &train_std);
        for i in 0..n {
            for j in 0..n {
                prop_assert!(close(g_sparse[(i, j)], g_dense[(i, j)], 1e-9), "gram ({i},{j})");
            }
        }
        for i in 0..m {
            for j in 0..n {
                prop_assert!(close(b_sparse[(i, j)], b_dense[(i, j)], 1e-9), "block ({i},{j})");
                prop_assert!(close(weighted.eval(&test, i, &train, j), b_dense[(i, j)], 1e-9), "eval ({i},{j})");
            }
        }
    }

    #[test]
    fn kernel_spec_serde_round_trip(seed in any::<u64>(), d in 0usize..6) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for k in kernels(&mut rng, d) {
            let json = serde_json::to_string(&k).unwrap();
            let back: KernelSpec = serde_json::from_str(&json).unwrap();
            let (v0, v1) = (serde_json::to_value(&k).unwrap(), serde_json::to_value(&back).unwrap());
            prop_assert!(same_json(&v0, &v1), "{} != {}", v0, v1);
            prop_assert_eq!(back.kind(), k.kind());
            prop_assert!(v0.get(k.kind()).is_some(), "{} is not tagged {}", v0, k.kind());
            // The binary form (postcard, used by model files) round-trips exactly.
            let back_bin: KernelSpec = postcard::from_bytes(&postcard::to_stdvec(&k).unwrap()).unwrap();
            prop_assert_eq!(&back_bin, &k);
            // A second trip is stable.
            let again: KernelSpec = serde_json::from_str(&serde_json::to_string(&back).unwrap()).unwrap();
            prop_assert!(same_json(&v1, &serde_json::to_value(&again).unwrap()));
        }
    }

    #[test]
    fn invalid_parameters_are_errors(
        bad in prop_oneof![
            Just(0.0), Just(-0.0), Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), -1e9f64..0.0,
        ],
        good in 1e-3f64..10.0,
    ) {
        prop_assert!(Gaussian::new(bad).is_err());
        prop_assert!(Gaussian::from_sigma2(bad).is_err());
        prop_assert!(Laplacian::new(bad).is_err());
        prop_assert!(GaussianTanimoto::new(bad).is_err());
        prop_assert!(GaussianTanimoto::from_sigma2(bad).is_err());
        prop_assert!(Polynomial::new(2, bad, 1.0).is_err());
        prop_assert!(Polynomial::new(0, good, 1.0).is_err());
        if bad != 0.0 {
            prop_assert!(Polynomial::new(2, good, bad).is_err());
            prop_assert!(Gaussian::new(good).unwrap().with_feature_weights(vec![good, bad]).is_err());
            prop_assert!(Gaussian::new(good).unwrap().with_feature_scales(&[bad]).is_err());
        }
        let spec = format!(r#"{{"kind":"gaussian","gamma":{}}}"#, if bad.is_finite() { bad } else { -1.0 });
        prop_assert!(serde_json::from_str::<KernelSpec>(&spec).is_err());
        prop_assert!(Gaussian::new(good).is_ok() && Laplacian::new(good).is_ok());
        prop_assert!(Polynomial::new(1, good, 0.0).is_ok());
    }
}

/// Blocks larger than one tile (256 rows) and with frequent features, so that
/// tiling, the heavy/light split and the symmetric mirroring all run.
#[test]
fn multi_tile_blocks_match_eval() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let d = 60;
    let make = |rng: &mut ChaCha8Rng, n: usize| {
        let rows: Vec<Vec<(usize, f64)>> = (0..n)
            .map(|_| {
                (0..d)
                    .filter_map(|f| {
                        // Feature f present with probability decreasing in f.
                        let p = 0.9 / (1.0 + f as f64 / 4.0);
                        (rng.random::<f64>() < p).then(|| (f, rng.random::<f64>() * 2.0))
                    })
                    .collect()
            })
            .collect();
        make_data(rows, d)
    };
    let a = make(&mut rng, 530);
    let b = make(&mut rng, 300);
    for k in kernels(&mut rng, d) {
        for par in [Par::Seq, Par::rayon(2)] {
            let blocks = [
                (k.gram_block(&a.dense, &b.dense), k.gram_block(&a.csr, &b.csr), k.gram_block(&a.sets, &b.sets)),
                (k.gram(&a.dense), k.gram(&a.csr), k.gram(&a.sets)),
            ];
            let mut into = Mat::zeros(a.dense.n_rows(), b.dense.n_rows());
            k.gram_block_into(&a.csr, &b.csr, into.as_mut(), par);
            for (bi, (bd, bs, bl)) in blocks.iter().enumerate() {
                let other = if bi == 0 { (&b.dense, &b.csr, &b.sets) } else { (&a.dense, &a.csr, &a.sets) };
                // Every 7th pair keeps the test fast; the stride crosses all tiles.
                for idx in (0..bd.nrows() * bd.ncols()).step_by(7) {
                    let (i, j) = (idx % bd.nrows(), idx / bd.nrows());
                    let e = k.eval(&a.dense, i, other.0, j);
                    assert!(close(bd[(i, j)], e, 1e-9), "{k} dense ({i},{j})");
                    assert!(close(bs[(i, j)], k.eval(&a.csr, i, other.1, j), 1e-9), "{k} csr ({i},{j})");
                    assert!(close(bs[(i, j)], e, 1e-9), "{k} csr vs dense ({i},{j})");
                    assert!(close(bl[(i, j)], k.eval(&a.sets, i, other.2, j), 1e-9), "{k} sets ({i},{j})");
                    if bi == 0 {
                        assert!(close(into[(i, j)], e, 1e-9), "{k} block_into ({i},{j})");
                    }
                }
            }
        }
    }
}

/// Very wide sparse rows (few entries, 200k features): the sparse engine
/// switches to long row tiles so that its per-tile column pointers stay
/// small; blocks and Grams must not notice.
#[test]
fn wide_sparse_rows_match_eval() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let d = 200_000;
    let make = |rng: &mut ChaCha8Rng, n: usize| {
        let rows: Vec<Vec<(usize, f64)>> = (0..n)
            .map(|_| {
                let mut r: Vec<(usize, f64)> = (0..3).map(|_| (rng.random_range(0..50), 1.0)).collect();
                r.push((rng.random_range(0..d), rng.random::<f64>() + 0.5));
                r.sort_by_key(|e| e.0);
                r.dedup_by_key(|e| e.0);
                r
            })
            .collect();
        make_data(rows, d)
    };
    let (a, b) = (make(&mut rng, 700), make(&mut rng, 300));
    for k in kernels(&mut rng, d) {
        let (block, gram) = (k.gram_block(&a.csr, &b.csr), k.gram(&a.csr));
        let (block_sets, gram_sets) = (k.gram_block(&a.sets, &b.sets), k.gram(&a.sets));
        for idx in (0..700 * 700).step_by(5) {
            let (i, j) = (idx % 700, idx / 700);
            assert!(close(gram[(i, j)], k.eval(&a.csr, i, &a.csr, j), 1e-9), "{k} gram ({i},{j})");
            assert!(close(gram_sets[(i, j)], k.eval(&a.sets, i, &a.sets, j), 1e-9), "{k} sets gram ({i},{j})");
            if j < 300 {
                assert!(close(block[(i, j)], k.eval(&a.csr, i, &b.csr, j), 1e-9), "{k} block ({i},{j})");
                assert!(close(block_sets[(i, j)], k.eval(&a.sets, i, &b.sets, j), 1e-9), "{k} sets ({i},{j})");
            }
        }
    }
}

#[test]
fn kernels_and_errors_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<KernelSpec>();
    check::<Gaussian>();
    check::<Laplacian>();
    check::<okr_kernels::Error>();
}
