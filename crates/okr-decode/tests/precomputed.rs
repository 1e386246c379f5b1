//! A precomputed Gram (`GramRows` + `Precomputed`) gives the same models and
//! rankings as the kernel it came from, for IOKR, reduced rank, Nystroem and
//! SISOKR (sub-sampling sketches look Gram columns up); and MKL-combined
//! Grams equal the weighted-sum kernel.

mod common;

use faer::Mat;
use okr_decode::per_query::{PerQueryDecoder, Query};
use okr_estimators::Fit;
use okr_estimators::nystroem::Anchors;
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_estimators::{Iokr, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel};
use okr_kernels::combinators::WeightedSum;
use okr_kernels::mkl::alignf_weights;
use okr_kernels::{DenseRows, Gaussian, GramRows, Kernel, Linear, Precomputed, Rows};

fn rows(n: usize, d: usize, seed: u64) -> DenseRows {
    common::rows(n, d, seed, 1000)
}

fn max_rel(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let scale = (0..b.ncols())
        .flat_map(|j| (0..b.nrows()).map(move |i| (i, j)))
        .fold(0.0f64, |m, (i, j)| m.max(b[(i, j)].abs()));
    let mut err = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            err = err.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    err / scale.max(1e-300)
}

/// Scores `C G` of both models, compared at relative tolerance `tol`.
fn same_predictions<MA, MB>(name: &str, a: &MA, b: &MB, xt: &DenseRows, gt: &GramRows, cands: &DenseRows, tol: f64)
where
    MA: SurrogateModel<DenseRows, DenseRows>,
    MB: SurrogateModel<GramRows, DenseRows>,
{
    let (ca, cb) = (a.coefficients(xt).unwrap(), b.coefficients(gt).unwrap());
    assert_eq!(a.n_atoms(), b.n_atoms(), "{name}");
    let (mut ga, mut gb) = (Mat::zeros(a.n_atoms(), cands.n_rows()), Mat::zeros(b.n_atoms(), cands.n_rows()));
    a.atom_products_into(cands, ga.as_mut(), faer::Par::Seq).unwrap();
    b.atom_products_into(cands, gb.as_mut(), faer::Par::Seq).unwrap();
    let (sa, sb) = (&ca * &ga, &cb * &gb);
    let err = max_rel(&sb, &sa);
    assert!(err < tol, "{name}: {err:e}");
}

#[test]
fn precomputed_gram_gives_the_same_models_as_its_kernel() {
    faer::set_global_parallelism(faer::Par::Seq);
    let (x, y, xt, cands) = (rows(40, 3, 1), rows(40, 2, 2), rows(7, 3, 3), rows(9, 2, 4));
    let kx = Gaussian::new(1.3).unwrap();
    let ky = Gaussian::new(0.8).unwrap();
    let g = GramRows::train(kx.gram(&x)).unwrap();
    let gt = GramRows::test(kx.gram_block(&xt, &x), None).unwrap();

    let a = Iokr::params(kx.clone(), ky.clone()).lambda(1e-3).fit(&x, &y).unwrap();
    let b = Iokr::params(Precomputed, ky.clone()).lambda(1e-3).fit(&g, &y).unwrap();
    same_predictions("iokr", &a, &b, &xt, &gt, &cands, 1e-12);

    let a = ReducedRankIokr::params(kx.clone(), ky.clone()).rank(5).lambda1(1e-3).fit(&x, &y).unwrap();
    let b = ReducedRankIokr::params(Precomputed, ky.clone()).rank(5).lambda1(1e-3).fit(&g, &y).unwrap();
    same_predictions("reduced-rank", &a, &b, &xt, &gt, &cands, 1e-12);

    let a = Nystroem::params(kx.clone(), ky.clone())
        .lambda(1e-3)
        .anchors(Anchors::Uniform(12))
        .seed(3)
        .fit(&x, &y)
        .unwrap();
    let b = Nystroem::params(Precomputed, ky.clone())
        .lambda(1e-3)
        .anchors(Anchors::Uniform(12))
        .seed(3)
        .fit(&g, &y)
        .unwrap();
    // The Gaussian kernel's GEMM blocks and the stored Gram differ in the last
    // bits; whitening K_mm amplifies that to about 1e-12.
    same_predictions("nystroem", &a, &b, &xt, &gt, &cands, 1e-10);

    let sk = |kind| Some(SketchSpec::new(kind, 15));
    let a = SketchedIokr::params(kx.clone(), ky.clone())
        .lambda(1e-3)
        .seed(4)
        .input_sketch(sk(SketchKind::Uniform))
        .output_sketch(sk(SketchKind::Gaussian))
        .fit(&x, &y)
        .unwrap();
    let b = SketchedIokr::params(Precomputed, ky.clone())
        .lambda(1e-3)
        .seed(4)
        .input_sketch(sk(SketchKind::Uniform))
        .output_sketch(sk(SketchKind::Gaussian))
        .fit(&g, &y)
        .unwrap();
    same_predictions("sisokr", &a, &b, &xt, &gt, &cands, 1e-10);

    // Per-query rankings agree too.
    let queries =
        |_: ()| (0..7).map(|t| Query::inline(format!("q{t}"), t, cands.clone(), Some(t % 9))).collect::<Vec<_>>();
    let a = Iokr::params(kx.clone(), ky.clone()).lambda(1e-3).fit(&x, &y).unwrap();
    let b = Iokr::params(Precomputed, ky).lambda(1e-3).fit(&g, &y).unwrap();
    let ra = PerQueryDecoder::new().rank_all(&a, &xt, None, queries(())).unwrap();
    let rb = PerQueryDecoder::new().rank_all(&b, &gt, None, queries(())).unwrap();
    for (u, v) in ra.iter().zip(&rb) {
        assert_eq!((&u.positions, u.true_rank), (&v.positions, v.true_rank));
    }
    // A test block of another width is rejected.
    let wrong = GramRows::test(Mat::zeros(2, 39), None).unwrap();
    assert!(Iokr::params(Precomputed, Linear).fit(&g, &y).unwrap().coefficients(&wrong).is_err());
}

#[test]
fn mkl_combined_gram_equals_the_weighted_sum_kernel() {
    faer::set_global_parallelism(faer::Par::Seq);
    let (x, y, xt, cands) = (rows(30, 3, 5), rows(30, 2, 6), rows(5, 3, 7), rows(6, 2, 8));
    let kernels = vec![Gaussian::new(0.3).unwrap(), Gaussian::new(3.0).unwrap()];
    let ky = Gaussian::new(0.8).unwrap();
    let grams: Vec<Mat<f64>> = kernels.iter().map(|k| k.gram(&x)).collect();
    let refs: Vec<_> = grams.iter().map(|g| g.as_ref()).collect();
    let w = alignf_weights(&refs, ky.gram(&y).as_ref()).unwrap();
    let combined = WeightedSum::new(w.clone(), kernels.clone()).unwrap();
    let sum = |blocks: Vec<Mat<f64>>| {
        Mat::from_fn(blocks[0].nrows(), blocks[0].ncols(), |i, j| {
            w.iter().zip(&blocks).map(|(w, b)| w * b[(i, j)]).sum()
        })
    };
    let g = GramRows::train(sum(grams.clone())).unwrap();
    let gt = GramRows::test(sum(kernels.iter().map(|k| k.gram_block(&xt, &x)).collect()), None).unwrap();
    let a = Iokr::params(combined, ky.clone()).lambda(1e-3).fit(&x, &y).unwrap();
    let b = Iokr::params(Precomputed, ky).lambda(1e-3).fit(&g, &y).unwrap();
    same_predictions("alignf", &a, &b, &xt, &gt, &cands, 1e-12);
}
