//! IOKR against closed-form oracles: the primal ridge solution for linear
//! kernels (including `n < n_outputs` and `n < n_features`) and a dense LU solve.

use faer::Mat;
use faer::linalg::solvers::Solve;
use okr_estimators::Fit;
use okr_estimators::{Error, Iokr, ParamGuard, SurrogateModel};
use okr_kernels::{DenseRows, Kernel, Rows};
use proptest::prelude::*;

/// Linear kernel evaluated pair by pair: an oracle independent of okr-kernels' blocks.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct PairLinear;
impl Kernel<DenseRows> for PairLinear {
    fn eval(&self, a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
        (0..a.n_features()).map(|f| a.as_mat()[(i, f)] * b.as_mat()[(j, f)]).sum()
    }
}

/// Gaussian kernel evaluated pair by pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct PairGauss(f64);
impl Kernel<DenseRows> for PairGauss {
    fn eval(&self, a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
        let d: f64 = (0..a.n_features()).map(|f| (a.as_mat()[(i, f)] - b.as_mat()[(j, f)]).powi(2)).sum();
        (-self.0 * d).exp()
    }
}

fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

fn random_rows(n: usize, d: usize, seed: u64) -> DenseRows {
    let mut r = lcg(seed);
    DenseRows::new(Mat::from_fn(n, d, |_, _| r())).unwrap()
}

/// `h(x) = C Y`, the explicit prediction when outputs are vectors.
fn explicit_prediction(model: &impl SurrogateModel<DenseRows, DenseRows>, x: &DenseRows, y: &DenseRows) -> Mat<f64> {
    model.coefficients(x).unwrap() * y.as_mat()
}

fn assert_close(a: &Mat<f64>, b: &Mat<f64>, tol: f64) {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    let scale = 1.0 + b.norm_max();
    let err = (a - b).norm_max();
    assert!(err <= tol * scale, "max error {err:e} (scale {scale})");
}

#[test]
fn linear_iokr_equals_primal_ridge() {
    // (n, d, m): n < m outputs, n < d features, and n > d.
    for (k, &(n, d, m)) in [(5, 3, 12), (7, 20, 4), (40, 6, 9), (1, 3, 2)].iter().enumerate() {
        let x = random_rows(n, d, 10 + k as u64);
        let y = random_rows(n, m, 20 + k as u64);
        let xt = random_rows(4, d, 30 + k as u64);
        let lambda = 0.05;
        let model = Iokr::params(PairLinear, PairLinear).lambda(lambda).fit(&x, &y).unwrap();
        let got = explicit_prediction(&model, &xt, &y);
        // Primal: W = (X^T X + n lambda I)^{-1} X^T Y, h(x) = x^T W.
        let xm = x.as_mat();
        let mut a = xm.transpose() * xm;
        for i in 0..d {
            a[(i, i)] += n as f64 * lambda;
        }
        let w = a.partial_piv_lu().solve(xm.transpose() * y.as_mat());
        let want = xt.as_mat() * &w;
        assert_close(&got, &want, 1e-9);
    }
}

#[test]
fn gaussian_iokr_equals_dense_lu_solve() {
    let (n, d, m) = (30, 4, 50);
    let x = random_rows(n, d, 1);
    let y = random_rows(n, m, 2);
    let xt = random_rows(9, d, 3);
    let (gamma, lambda) = (0.7, 1e-4);
    let model = Iokr::params(PairGauss(gamma), PairLinear).lambda(lambda).fit(&x, &y).unwrap();
    let mut k = PairGauss(gamma).gram(&x);
    for i in 0..n {
        k[(i, i)] += n as f64 * lambda;
    }
    let kt = PairGauss(gamma).gram_block(&x, &xt);
    let alpha = k.partial_piv_lu().solve(&kt); // n x n_te
    assert_close(&model.coefficients(&xt).unwrap(), &alpha.transpose().to_owned(), 1e-8);
    // Squared RKHS errors against the explicit vectors.
    let yt = random_rows(9, m, 4);
    let h = alpha.transpose() * y.as_mat();
    let errs = model.rkhs_sq_errors(&xt, &yt).unwrap();
    for t in 0..9 {
        let e: f64 = (0..m).map(|j| (h[(t, j)] - yt.as_mat()[(t, j)]).powi(2)).sum();
        assert!((errs[t] - e).abs() <= 1e-8 * (1.0 + e), "{} vs {e}", errs[t]);
    }
    // In tiles of test rows (bounded memory): the same errors.
    for tile in [0, 1, 2, 4, 9] {
        let tiled = model.rkhs_sq_errors_tiled(&xt, &yt, tile).unwrap();
        assert_eq!(tiled.len(), 9);
        for t in 0..9 {
            assert!((tiled[t] - errs[t]).abs() <= 1e-12 * (1.0 + errs[t]), "tile {tile}, row {t}");
        }
    }
    let err = model.rkhs_sq_errors_tiled(&xt, &yt.slice(0..8), 2).unwrap_err().to_string();
    assert!(err.contains("rows of outputs vs inputs"), "{err}");
}

#[test]
fn invalid_inputs_are_errors() {
    let x = random_rows(5, 3, 1);
    let y = random_rows(5, 2, 2);
    for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = Iokr::params(PairLinear, PairLinear).lambda(lambda).fit(&x, &y).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "lambda", .. }), "{err}");
    }
    let err = Iokr::params(PairLinear, PairLinear).fit(&x, &y.select(&[0, 1])).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    let err = Iokr::params(PairLinear, PairLinear).fit(&x.select(&[]), &y.select(&[])).unwrap_err();
    assert!(matches!(err, Error::Empty { .. }), "{err}");
    let model = Iokr::params(PairLinear, PairLinear).fit(&x, &y).unwrap();
    let err = model.coefficients(&random_rows(2, 4, 3)).unwrap_err();
    assert!(err.to_string().contains("expected 3, got 4"), "{err}");
}

#[test]
fn params_and_model_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<okr_estimators::IokrParams<PairLinear, PairLinear>>();
    check::<Iokr<DenseRows, DenseRows, PairLinear, PairLinear>>();
    check::<Error>();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Fitting twice gives the same model; predicting in batches equals
    /// predicting all at once; a serde round trip keeps predictions.
    #[test]
    fn fit_idempotent_batch_invariant_serde(n in 1usize..25, d in 1usize..6, nt in 1usize..8, seed in 0u64..1000, loglam in -6.0f64..0.0) {
        faer::set_global_parallelism(faer::Par::Seq);
        let x = random_rows(n, d, seed);
        let y = random_rows(n, 3, seed + 1);
        let xt = random_rows(nt, d, seed + 2);
        let params = Iokr::params(PairGauss(0.5), PairLinear).lambda(10f64.powf(loglam));
        prop_assert!(params.check_ref().is_ok());
        let m1 = params.fit(&x, &y).unwrap();
        let m2 = params.fit(&x, &y).unwrap();
        let c1 = m1.coefficients(&xt).unwrap();
        prop_assert_eq!(&c1, &m2.coefficients(&xt).unwrap());
        let split = nt / 2;
        let a = m1.coefficients(&xt.slice(0..split)).unwrap();
        let b = m1.coefficients(&xt.slice(split..nt)).unwrap();
        for t in 0..nt {
            for j in 0..n {
                let v = if t < split { a[(t, j)] } else { b[(t - split, j)] };
                prop_assert!((v - c1[(t, j)]).abs() <= 1e-10 * (1.0 + c1[(t, j)].abs()));
            }
        }
        let bytes = postcard::to_stdvec(&m1).unwrap();
        let back: Iokr<DenseRows, DenseRows, PairGauss, PairLinear> = postcard::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&c1, &back.coefficients(&xt).unwrap());
    }

    /// Permuting the training set permutes the coefficients and leaves h(x) unchanged.
    #[test]
    fn train_permutation_invariance(n in 2usize..20, seed in 0u64..1000) {
        faer::set_global_parallelism(faer::Par::Seq);
        let x = random_rows(n, 3, seed);
        let y = random_rows(n, 2, seed + 1);
        let xt = random_rows(3, 3, seed + 2);
        let perm: Vec<usize> = (0..n).rev().collect();
        let p = Iokr::params(PairGauss(1.0), PairLinear).lambda(1e-2);
        let h1 = explicit_prediction(&p.fit(&x, &y).unwrap(), &xt, &y);
        let (xp, yp) = (x.select(&perm), y.select(&perm));
        let h2 = explicit_prediction(&p.fit(&xp, &yp).unwrap(), &xt, &yp);
        assert_close(&h1, &h2, 1e-9);
    }
}

#[test]
fn lambda_path_equals_direct_fit() {
    let (n, d, m) = (25, 3, 6);
    let x = random_rows(n, d, 7);
    let y = random_rows(n, m, 8);
    let xt = random_rows(5, d, 9);
    let k = PairGauss(0.9).gram(&x);
    let path = okr_estimators::iokr::IokrPath::new(k.as_ref()).unwrap();
    let kv = path.project_inputs(PairGauss(0.9).gram_block(&xt, &x).as_ref());
    for lambda in [1e-6, 1e-3, 0.1] {
        let direct = Iokr::params(PairGauss(0.9), PairLinear).lambda(lambda).fit(&x, &y).unwrap();
        let via_path = path.scaled_coefficients(kv.as_ref(), lambda) * path.eigenvectors().transpose();
        assert_close(&via_path, &direct.coefficients(&xt).unwrap(), 1e-7);
    }
}

#[test]
fn repeated_outputs_share_one_atom() {
    use okr_kernels::{LabelSets, Linear};
    let x = random_rows(8, 3, 21);
    let y =
        LabelSets::new(4, vec![vec![0, 2], vec![1], vec![0, 2], vec![], vec![1], vec![3], vec![0, 2], vec![]]).unwrap();
    let model = Iokr::params(PairGauss(0.6), Linear).lambda(1e-2).fit(&x, &y).unwrap();
    assert_eq!(model.atoms().n_rows(), 4);
    assert_eq!(model.atom_of_sample(), &[0, 1, 0, 2, 1, 3, 0, 2]);
    assert_eq!(model.y_train(), y);
    // h(x) as label vectors: sum over atoms equals the per-sample direct solve.
    let xt = random_rows(5, 3, 22);
    let h_atoms = model.coefficients(&xt).unwrap() * model.atoms().to_indicator();
    let mut k = PairGauss(0.6).gram(&x);
    for i in 0..8 {
        k[(i, i)] += 8.0 * 1e-2;
    }
    let alpha = k.partial_piv_lu().solve(PairGauss(0.6).gram_block(&x, &xt));
    let h_direct = alpha.transpose() * y.to_indicator();
    assert_close(&h_atoms, &h_direct.to_owned(), 1e-9);
}
