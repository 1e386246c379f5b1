//! KDE against the explicit output-KPCA projection of the ridge estimator
//! (spec 1.6: uncentred KDE is exactly $P_{out}\hat h$), centred and uncentred.

use faer::{Mat, Par};
use okr_estimators::Fit;
use okr_estimators::{Error, Kde, ParamGuard, SurrogateModel};
use okr_kernels::{DenseRows, Kernel};

mod common;
use common::*;

#[test]
fn kde_equals_output_kpca_projection_of_ridge() {
    faer::set_global_parallelism(Par::Seq);
    for (k, &(n, d, m, p)) in [(15, 3, 6, 3), (10, 4, 12, 5)].iter().enumerate() {
        let seed = 50 + 10 * k as u64;
        let (x, y) = (random_rows(n, d, seed), random_rows(n, m, seed + 1));
        let (xt, yc) = (random_rows(5, d, seed + 2), random_rows(8, m, seed + 3));
        let lambda = 1e-2;
        for centered in [false, true] {
            let model =
                Kde::params(PairGauss(0.5), PairLinear).rank(p).lambda(lambda).centered(centered).fit(&x, &y).unwrap();
            assert_eq!(model.rank(), p);
            // Explicit: top-p eigenvectors of Y^T Y (or Y^T H Y), P_out = V_p V_p^T.
            let ym = y.as_mat();
            let yc_m = if centered {
                let mean = Mat::from_fn(1, m, |_, j| (0..n).map(|i| ym[(i, j)]).sum::<f64>() / n as f64);
                Mat::from_fn(n, m, |i, j| ym[(i, j)] - mean[(0, j)])
            } else {
                ym.to_owned()
            };
            let eig = okr_linalg::eigh((yc_m.transpose() * &yc_m).as_ref()).unwrap();
            let vp = eig.vectors().subcols(0, p).to_owned();
            let kx = PairGauss(0.5).gram(&x);
            let h = (ridge_inverse(&kx, lambda) * PairGauss(0.5).gram_block(&x, &xt)).transpose() * ym;
            let want = &h * &vp * vp.transpose() * yc.as_mat().transpose();
            let got = scores(&model, &xt, &yc);
            let e = rel_err(&got, &want);
            // Orthonormal atoms: G K_y G^T = I.
            let mut gk = Mat::zeros(p, n);
            model.atom_products_into(&y, gk.as_mut(), Par::Seq).unwrap();
            let e_orth = rel_err(&(&gk * model.encoder().transpose()), &Mat::identity(p, p));
            eprintln!("KDE (n={n}, m={m}, p={p}, centered={centered}): scores {e:.1e}, G K_y G^T {e_orth:.1e}");
            assert!(e < 1e-9 && e_orth < 1e-9, "{e:e} {e_orth:e}");
        }
    }
}

#[test]
fn kde_caps_rank_and_rejects_bad_params() {
    let (x, y) = (random_rows(12, 3, 1), random_rows(12, 2, 2));
    let model = Kde::params(PairGauss(0.5), PairLinear).rank(9).fit(&x, &y).unwrap();
    assert_eq!((model.rank(), model.requested_rank(), model.numerical_rank()), (2, 9, 2));
    let err = Kde::params(PairLinear, PairLinear).rank(0).fit(&x, &y).unwrap_err();
    assert!(matches!(err, Error::InvalidParameter { name: "rank", .. }), "{err}");
    for bad in [0.0, f64::NAN] {
        let err = Kde::params(PairLinear, PairLinear).lambda(bad).fit(&x, &y).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "lambda", .. }), "{err}");
    }
    let err = Kde::params(PairLinear, PairLinear).rank_tolerance(2.0).check().unwrap_err();
    assert!(matches!(err, Error::InvalidParameter { name: "rank_tolerance", .. }), "{err}");
    let zeros = DenseRows::new(Mat::zeros(12, 2)).unwrap();
    let err = Kde::params(PairLinear, PairLinear).fit(&x, &zeros).unwrap_err();
    assert!(matches!(err, Error::ZeroRank { .. }), "{err}");
    let model2 = Kde::params(PairGauss(0.5), PairLinear).rank(9).fit(&x, &y).unwrap();
    let bytes = postcard::to_stdvec(&model2).unwrap();
    let back: Kde<DenseRows, DenseRows, PairGauss, PairLinear> = postcard::from_bytes(&bytes).unwrap();
    let xt = random_rows(4, 3, 3);
    assert_eq!(model.coefficients(&xt).unwrap(), back.coefficients(&xt).unwrap());
}
