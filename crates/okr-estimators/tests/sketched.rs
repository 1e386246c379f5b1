//! SIOKR / ISOKR / SISOKR and Nystroem KRR against dense oracles: identity
//! sketches give IOKR, uniform SIOKR is Nystroem on the same anchors, every
//! sketch kind matches the poster's formulas computed with dense matrices,
//! and the sketched paths run where an n x n matrix cannot exist.

mod common;

use common::{PairGauss, random_rows, rel_err, scores};
use faer::Mat;
use okr_estimators::Fit;
use okr_estimators::nystroem::Anchors;
use okr_estimators::sketch::{Sketch, SketchKind, SketchSpec};
use okr_estimators::{Iokr, Nystroem, SketchedIokr, SurrogateModel};
use okr_kernels::{DenseRows, Gaussian, Kernel, Rows};
use okr_linalg::pinv;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn identity() -> Option<SketchSpec> {
    Some(SketchSpec::new(SketchKind::Identity, 0))
}

#[test]
fn identity_sketches_give_exact_iokr() {
    // A well-conditioned Gram (wide Gaussian bumps) so that the squared
    // system of the input side keeps every eigenvalue.
    // and the output Gram keeps every eigenvalue too.
    let (x, y, xt, cand) = (random_rows(30, 4, 1), random_rows(30, 4, 2), random_rows(7, 4, 3), random_rows(9, 4, 4));
    let (kx, ky) = (PairGauss(2.0), PairGauss(2.0));
    let lambda = 1e-2;
    let iokr = Iokr::params(kx.clone(), ky.clone()).lambda(lambda).fit(&x, &y).unwrap();
    let want = scores(&iokr, &xt, &cand);
    for (input, output) in [(identity(), identity()), (identity(), None), (None, identity())] {
        let model = SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(lambda)
            .input_sketch(input)
            .output_sketch(output)
            .fit(&x, &y)
            .unwrap();
        let err = rel_err(&scores(&model, &xt, &cand), &want);
        assert!(err < 1e-9, "{}: {err:e}", model.method());
    }
}

#[test]
fn square_gaussian_sketch_gives_exact_iokr() {
    // The estimator only depends on the row space of R: any invertible m = n
    // sketch is the identity.
    let (x, y, xt, cand) = (random_rows(25, 4, 5), random_rows(25, 2, 6), random_rows(5, 4, 7), random_rows(6, 2, 8));
    let (kx, ky) = (PairGauss(2.0), PairGauss(0.5));
    let iokr = Iokr::params(kx.clone(), ky.clone()).lambda(1e-2).fit(&x, &y).unwrap();
    let g = Some(SketchSpec::new(SketchKind::Gaussian, 25));
    let model = SketchedIokr::params(kx, ky).lambda(1e-2).input_sketch(g).output_sketch(g).fit(&x, &y).unwrap();
    let err = rel_err(&scores(&model, &xt, &cand), &scores(&iokr, &xt, &cand));
    assert!(err < 1e-7, "{err:e}");
}

#[test]
fn uniform_siokr_equals_nystroem_on_the_same_anchors() {
    let (x, y, xt, cand) =
        (random_rows(80, 3, 9), random_rows(80, 2, 10), random_rows(6, 3, 11), random_rows(7, 2, 12));
    let (kx, ky) = (PairGauss(0.8), PairGauss(0.5));
    for seed in 0..4 {
        let siokr = SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(1e-3)
            .seed(seed)
            .input_sketch(Some(SketchSpec::new(SketchKind::Uniform, 15)))
            .fit(&x, &y)
            .unwrap();
        let anchors = siokr.input_support().to_vec();
        let nys =
            Nystroem::params(kx.clone(), ky.clone()).lambda(1e-3).anchors(Anchors::Given(anchors)).fit(&x, &y).unwrap();
        let err = rel_err(&scores(&siokr, &xt, &cand), &scores(&nys, &xt, &cand));
        assert!(err < 1e-9, "seed {seed}: {err:e}");
    }
}

/// The poster's estimator with dense matrices: scores
/// `K_X(te, tr) R_X^T Omega_X^T Omega_Y^T R_Y K_Y(tr, c)` (R = I when `None`).
#[allow(non_snake_case, clippy::too_many_arguments)]
fn dense_sisokr_scores(
    kx: &PairGauss,
    ky: &PairGauss,
    x: &DenseRows,
    y: &DenseRows,
    xt: &DenseRows,
    cand: &DenseRows,
    lambda: f64,
    rx: Option<Mat<f64>>,
    ry: Option<Mat<f64>>,
) -> Mat<f64> {
    let n = x.n_rows();
    let Kx = kx.gram(x);
    let Ky = ky.gram(y);
    let Rx = rx.unwrap_or_else(|| Mat::identity(n, n));
    // R_Y = I gives Omega_Y = K_Y^+ K_Y, the identity on the span of the
    // training outputs; it is taken exactly (a thresholded pinv of an
    // ill-conditioned K_Y would not be).
    let (Ry, Omega_Y) = match ry {
        Some(Ry) => {
            let o = pinv((&Ry * &Ky * Ry.transpose()).as_ref(), Some(1e-12)).unwrap() * &Ry * &Ky;
            (Ry, o)
        }
        None => (Mat::identity(n, n), Mat::identity(n, n)),
    };
    let sys = &Rx * (&Kx * &Kx + &Kx * (n as f64 * lambda)) * Rx.transpose();
    let Omega_X = &Kx * Rx.transpose() * pinv(sys.as_ref(), Some(1e-12)).unwrap();
    let alpha = Ry.transpose() * &Omega_Y * &Omega_X * &Rx * kx.gram_block(x, xt);
    alpha.transpose() * ky.gram_block(y, cand)
}

#[test]
fn every_sketch_kind_matches_the_dense_formulas() {
    // Narrow bumps keep the dense oracle's pseudo-inverse of
    // R (K^2 + n lambda K) R^T well conditioned (its rounding is the limit).
    let (x, y, xt, cand) =
        (random_rows(40, 3, 13), random_rows(40, 2, 14), random_rows(6, 3, 15), random_rows(8, 2, 16));
    let (kx, ky) = (PairGauss(5.0), PairGauss(0.5));
    let lambda = 1e-2;
    let kinds = [
        SketchKind::Gaussian,
        SketchKind::Rademacher,
        SketchKind::Uniform,
        SketchKind::Leverage,
        SketchKind::SparseGaussian { p: Some(0.2) },
        SketchKind::SparseRademacher { p: Some(0.2) },
        SketchKind::Sjlt { s: 2 },
    ];
    for kind in kinds {
        let (sx, sy) = (SketchSpec::new(kind, 12), SketchSpec::new(kind, 6));
        for (input, output) in [(Some(sx), Some(sy)), (Some(sx), None), (None, Some(sy))] {
            let model = SketchedIokr::params(kx.clone(), ky.clone())
                .lambda(lambda)
                .seed(21)
                .input_sketch(input)
                .output_sketch(output)
                .fit(&x, &y)
                .unwrap();
            // Redraw the same sketches: input first, then output, from the seed.
            let mut rng = ChaCha8Rng::seed_from_u64(21);
            let rx = input.map(|s| Sketch::draw_for_kernel(&s, &kx, &x, lambda, &mut rng).unwrap().to_dense());
            let ry = output.map(|s| Sketch::draw_for_kernel(&s, &ky, &y, lambda, &mut rng).unwrap().to_dense());
            let want = dense_sisokr_scores(&kx, &ky, &x, &y, &xt, &cand, lambda, rx, ry);
            let err = rel_err(&scores(&model, &xt, &cand), &want);
            assert!(err < 1e-8, "{kind:?} {}: {err:e}", model.method());
            // Atom Gram equals <a_i, a_j> computed from the weights.
            if let Some(w) = model.atom_weights() {
                let gram = w * ky.gram(model.atom_outputs()) * w.transpose();
                assert!(rel_err(&model.atom_gram(), &gram) < 1e-12, "{kind:?}: atom Gram");
            }
        }
    }
}

#[test]
fn fit_is_reproducible_and_serde_round_trips() {
    let (x, y, xt) = (random_rows(50, 3, 17), random_rows(50, 2, 18), random_rows(5, 3, 19));
    let params = SketchedIokr::params(PairGauss(0.5), PairGauss(0.5))
        .input_sketch(Some("sjlt:10:2".parse().unwrap()))
        .output_sketch(Some("leverage:8".parse().unwrap()))
        .seed(3);
    let a = params.fit(&x, &y).unwrap();
    let b = params.fit(&x, &y).unwrap();
    assert_eq!(a.coefficients(&xt).unwrap(), b.coefficients(&xt).unwrap());
    let json = serde_json::to_string(&a).unwrap();
    let c: SketchedIokr<DenseRows, DenseRows, PairGauss, PairGauss> = serde_json::from_str(&json).unwrap();
    assert_eq!(a.coefficients(&xt).unwrap(), c.coefficients(&xt).unwrap());
    // Another seed draws another sketch (leverage sampling with replacement
    // may also keep another number of distinct atoms).
    let other = params.clone().seed(4).fit(&x, &y).unwrap();
    let (ca, co) = (a.coefficients(&xt).unwrap(), other.coefficients(&xt).unwrap());
    assert!(ca.shape() != co.shape() || ca != co);
}

#[test]
fn invalid_inputs_are_errors() {
    let (x, y) = (random_rows(10, 2, 1), random_rows(10, 2, 2));
    let p = || SketchedIokr::params(PairGauss(1.0), PairGauss(1.0));
    assert!(p().lambda(-1.0).fit(&x, &y).is_err());
    assert!(p().fit(&x, &random_rows(9, 2, 2)).is_err());
    assert!(p().fit(&x.select(&[]), &y.select(&[])).is_err());
    assert!(p().input_sketch(Some(SketchSpec::new(SketchKind::Uniform, 0))).fit(&x, &y).is_err());
    let zero = DenseRows::new(Mat::zeros(10, 2)).unwrap();
    // A linear output kernel on zero outputs: R K R^T = 0 has rank 0.
    let lin = SketchedIokr::params(PairGauss(1.0), common::PairLinear)
        .output_sketch(Some(SketchSpec::new(SketchKind::Gaussian, 3)));
    assert!(lin.fit(&x, &zero).is_err());
    let m = p().input_sketch(Some("uniform:4".parse().unwrap())).fit(&x, &y).unwrap();
    assert!(m.coefficients(&random_rows(3, 5, 1)).is_err());
    assert!(Nystroem::params(PairGauss(1.0), PairGauss(1.0)).anchors(Anchors::Given(vec![10])).fit(&x, &y).is_err());
}

#[test]
fn params_and_models_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<SketchedIokr<DenseRows, DenseRows, Gaussian, Gaussian>>();
    check::<Nystroem<DenseRows, DenseRows, Gaussian, Gaussian>>();
    check::<okr_estimators::SketchedIokrParams<Gaussian, Gaussian>>();
    check::<Sketch>();
}

const CAP_ENV: &str = "OKR_TEST_UNDER_MEMORY_CAP";

/// Re-runs [`sketched_fit_under_memory_cap`] in a child process whose
/// address space is capped at 4 GiB (`ulimit -v`), with n = 40000: a single
/// `n x n` f64 matrix would need 11.9 GiB, so the child aborts if any code
/// path forms one.
#[test]
#[cfg(unix)]
fn no_n_by_n_matrix_is_formed() {
    let exe = std::env::current_exe().unwrap();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" --exact sketched_fit_under_memory_cap --ignored --test-threads=1 --nocapture")
        .arg(exe)
        .env(CAP_ENV, "1")
        .status()
        .unwrap();
    assert!(status.success(), "the sketched fit failed under a 4 GiB address-space cap: {status}");
}

#[test]
#[ignore = "run by no_n_by_n_matrix_is_formed under a memory cap"]
fn sketched_fit_under_memory_cap() {
    assert_eq!(std::env::var(CAP_ENV).as_deref(), Ok("1"), "run through no_n_by_n_matrix_is_formed");
    let n = 40_000;
    let x = random_rows(n, 2, 1);
    let y = random_rows(n, 2, 2);
    let (kx, ky) = (Gaussian::new(1.0).unwrap(), Gaussian::new(1.0).unwrap());
    let model = SketchedIokr::params(kx.clone(), ky.clone())
        .lambda(1e-4)
        .input_sketch(Some("sparse-rademacher:200".parse().unwrap()))
        .output_sketch(Some("uniform:50".parse().unwrap()))
        .fit(&x, &y)
        .unwrap();
    let (xt, cand) = (random_rows(300, 2, 3), random_rows(400, 2, 4));
    let s = scores(&model, &xt, &cand);
    assert!(s.is_all_finite() && s.norm_max() > 0.0);
    let siokr = SketchedIokr::params(kx.clone(), ky.clone())
        .lambda(1e-4)
        .input_sketch(Some("uniform:100".parse().unwrap()))
        .fit(&x, &y)
        .unwrap();
    assert_eq!(siokr.coefficients(&xt).unwrap().ncols(), n); // every output distinct
    let nys = Nystroem::params(kx, ky).anchors(Anchors::Uniform(100)).fit(&x, &y).unwrap();
    assert!(scores(&nys, &xt, &cand).is_all_finite());
}

/// The poster's formulas with dense matrices, for any row types.
#[allow(clippy::too_many_arguments, non_snake_case)]
fn dense_scores_any<X: Rows, Y: Rows>(
    kx: &Gaussian,
    ky: &Gaussian,
    x: &X,
    y: &Y,
    xt: &X,
    cand: &Y,
    lambda: f64,
    Rx: &Mat<f64>,
    Ry: &Mat<f64>,
) -> Mat<f64>
where
    Gaussian: Kernel<X> + Kernel<Y>,
{
    let n = x.n_rows();
    let (Kx, Ky) = (kx.gram(x), ky.gram(y));
    let Omega_Y = pinv((Ry * &Ky * Ry.transpose()).as_ref(), Some(1e-12)).unwrap() * Ry * &Ky;
    let sys = Rx * (&Kx * &Kx + &Kx * (n as f64 * lambda)) * Rx.transpose();
    let Omega_X = &Kx * Rx.transpose() * pinv(sys.as_ref(), Some(1e-12)).unwrap();
    let alpha = Ry.transpose() * &Omega_Y * &Omega_X * Rx * kx.gram_block(x, xt);
    alpha.transpose() * ky.gram_block(y, cand)
}

#[test]
fn duplicate_samples_in_a_subsampling_sketch_are_merged_exactly() {
    use okr_kernels::{CsrRows, LabelSets};
    // 36 samples drawn from 9 distinct sparse inputs and 6 distinct label sets.
    let mut next = common::lcg(5);
    let patterns: Vec<Vec<(usize, f64)>> =
        (0..9).map(|p| vec![(p % 5, 1.0), (5 + p % 4, 0.5 + p as f64 / 9.0)]).collect();
    let sets: Vec<Vec<usize>> = (0..6).map(|s| vec![s % 4, 4 + s / 2]).collect();
    let (mut rows, mut labels) = (Vec::new(), Vec::new());
    for _ in 0..36 {
        rows.push(patterns[(next() * 9.0) as usize % 9].clone());
        labels.push(sets[(next() * 6.0) as usize % 6].clone());
    }
    let x = CsrRows::from_rows(9, rows).unwrap();
    let y = LabelSets::new(7, labels).unwrap();
    let xt = x.select(&[0, 5, 7]);
    let (cand, _) = y.unique();
    let (kx, ky) = (Gaussian::new(0.7).unwrap(), Gaussian::new(0.4).unwrap());
    let lambda = 1e-2;
    let mut merged_somewhere = false;
    for seed in 0..4 {
        let (sx, sy) = (SketchSpec::new(SketchKind::Uniform, 12), SketchSpec::new(SketchKind::Uniform, 8));
        let model = SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(lambda)
            .seed(seed)
            .input_sketch(Some(sx))
            .output_sketch(Some(sy))
            .fit(&x, &y)
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let rx = Sketch::draw_for_kernel(&sx, &kx, &x, lambda, &mut rng).unwrap().to_dense();
        let ry = Sketch::draw_for_kernel(&sy, &ky, &y, lambda, &mut rng).unwrap().to_dense();
        let want = dense_scores_any(&kx, &ky, &x, &y, &xt, &cand, lambda, &rx, &ry);
        let decoded = okr_decode_free_scores(&model, &xt, &cand);
        let err = rel_err(&decoded, &want);
        assert!(err < 1e-8, "seed {seed}: {err:e}");
        // At most one kept sample per distinct input and per distinct output.
        assert!(model.input_support().len() <= 9 && model.n_atoms() <= 6);
        merged_somewhere |= model.input_support().len() < 12;
    }
    assert!(merged_somewhere);
}

/// $C G$: coefficients times atom products, for any row types.
fn okr_decode_free_scores<X: Rows, Y: Rows>(model: &impl SurrogateModel<X, Y>, x: &X, cand: &Y) -> Mat<f64> {
    let mut g = Mat::zeros(model.n_atoms(), cand.n_rows());
    model.atom_products_into(cand, g.as_mut(), faer::Par::Seq).unwrap();
    model.coefficients(x).unwrap() * g
}
