//! Oracle tests of decoding from coordinates: an output basis fitted from
//! the outputs alone, a kernel ridge regression of the coordinates, and
//! okr's decoder give IOKR's (exact basis at full rank) and ISOKR's
//! (sketched basis, same sketch, same input side) scores and decisions.

mod common;

use faer::linalg::solvers::Solve;
use faer::{Mat, Side};
use okr_decode::per_query::{PerQueryDecoder, Query};
use okr_decode::{CandidateDecoder, CoordinateDecoder, Decoded, Precision};
use okr_estimators::output_basis::{BasisKind, OutputBasis};
use okr_estimators::sketch::{Sketch, SketchSpec};
use okr_estimators::{
    DenseRows, Fit, Gaussian, Iokr, Kernel, LabelSets, Linear, Rows, SketchedIokr, SurrogateModel, Tanimoto,
};
use okr_surrogate::{CoordinateBasis, Coordinates};
use proptest::prelude::*;

/// Kernel ridge regression of `z` `(n, r)` on `x`, predicted at `xt`:
/// $K_x(x_t, X)(K_x + n\lambda I)^{-1} Z$ (scikit-learn's
/// `KernelRidge(alpha = n lambda)`).
fn krr(kx: &Gaussian, x: &DenseRows, z: &Mat<f64>, xt: &DenseRows, lambda: f64) -> Coordinates {
    let n = x.n_rows();
    let mut k = kx.gram(x);
    for i in 0..n {
        k[(i, i)] += n as f64 * lambda;
    }
    let alpha = k.llt(Side::Lower).unwrap().solve(z);
    Coordinates::new(kx.gram_block(xt, x) * alpha).unwrap()
}

fn label_sets(n: usize, labels: usize, seed: u64) -> LabelSets {
    let bits = common::rows(n, labels, seed, 3);
    let sets =
        (0..n).map(|i| (0..labels).filter(|&l| bits.as_mat()[(i, l)] > 0.5).collect::<Vec<_>>()).collect::<Vec<_>>();
    LabelSets::new(labels, sets).unwrap()
}

fn assert_same(a: &Decoded, b: &Decoded, tol: f64, what: &str) {
    assert_eq!(a.n_rows(), b.n_rows(), "{what}");
    for t in 0..a.n_rows() {
        assert_eq!(a.top(t), b.top(t), "{what}: decisions of row {t}");
        for (s, r) in a.top_scores(t).iter().zip(b.top_scores(t)) {
            assert!((s - r).abs() <= tol * (1.0 + r.abs()), "{what}: row {t}: {s} vs {r}");
        }
    }
}

/// Exact basis at full rank + KRR of the coordinates = IOKR, on label sets
/// with repeats (Tanimoto) and on dense outputs (Gaussian), against the
/// training outputs and against a pool.
#[test]
fn exact_basis_with_kernel_ridge_is_iokr() {
    let kx = Gaussian::new(0.7).unwrap();
    for (seed, lambda) in [(1, 1e-2), (2, 1e-3), (3, 1e-1)] {
        let x = common::rows(60, 4, seed, 50);
        let xt = common::rows(25, 4, seed + 100, 50);
        let y = label_sets(60, 6, seed + 7);
        let iokr = Iokr::params(kx.clone(), Tanimoto).lambda(lambda).fit(&x, &y).unwrap();
        let basis = OutputBasis::params(Tanimoto).fit(&y).unwrap();
        let z = basis.transform(&y).unwrap().into_values();
        let zt = krr(&kx, &x, &z, &xt, lambda);
        let pool = label_sets(40, 6, seed + 50);
        for (cands, what) in [(basis.distinct_outputs().clone(), "training outputs"), (pool, "pool")] {
            for k in [1, 4] {
                let want = CandidateDecoder::new().top_k(k).decode(&iokr, &xt, &cands).unwrap();
                let dec = CoordinateDecoder::from(CandidateDecoder::new().top_k(k));
                let got = dec.decode(&basis, &zt, &cands).unwrap();
                assert_same(&got, &want, 1e-8, what);
            }
        }
        // Dense outputs, Gaussian output kernel: K_y has full rank n.
        let yd = common::rows(60, 3, seed + 9, 1000);
        let ky = Gaussian::new(2.0).unwrap();
        let iokr = Iokr::params(kx.clone(), ky.clone()).lambda(lambda).fit(&x, &yd).unwrap();
        let basis = OutputBasis::params(ky.clone()).fit(&yd).unwrap();
        let z = basis.transform(&yd).unwrap().into_values();
        let zt = krr(&kx, &x, &z, &xt, lambda);
        let want = CandidateDecoder::new().top_k(3).decode(&iokr, &xt, &yd).unwrap();
        let got = CoordinateDecoder::from(CandidateDecoder::new().top_k(3)).decode(&basis, &zt, &yd).unwrap();
        assert_same(&got, &want, 1e-8, "dense outputs");
    }
}

/// Sketched basis (the sketch ISOKR draws for the same seed) + KRR of the
/// coordinates = ISOKR with that output sketch; `fit_with_sketch` on the
/// same sketch drawn by hand gives the same basis.
#[test]
fn sketched_basis_with_kernel_ridge_is_isokr() {
    let kx = Gaussian::new(0.7).unwrap();
    let ky = Gaussian::new(1.5).unwrap();
    let x = common::rows(80, 4, 11, 50);
    let xt = common::rows(30, 4, 12, 50);
    let y = common::rows(80, 3, 13, 1000);
    for (spec, seed) in [("gaussian:20", 3), ("uniform:25", 4), ("sjlt:15:2", 5), ("sparse-rademacher:20:0.3", 6)] {
        let spec: SketchSpec = spec.parse().unwrap();
        let lambda = 1e-2;
        let isokr = SketchedIokr::params(kx.clone(), ky.clone())
            .output_sketch(Some(spec))
            .lambda(lambda)
            .seed(seed)
            .fit(&x, &y)
            .unwrap();
        assert_eq!(isokr.method(), "isokr");
        let basis = OutputBasis::params(ky.clone()).kind(BasisKind::Sketch(spec)).seed(seed).fit(&y).unwrap();
        assert_eq!(basis.n_components(), isokr.n_atoms(), "{spec}");
        let z = basis.transform(&y).unwrap().into_values();
        let zt = krr(&kx, &x, &z, &xt, lambda);
        let want = CandidateDecoder::new().top_k(3).decode(&isokr, &xt, &y).unwrap();
        let got = CoordinateDecoder::from(CandidateDecoder::new().top_k(3)).decode(&basis, &zt, &y).unwrap();
        assert_same(&got, &want, 1e-8, &spec.to_string());

        let (_, output_of) = y.group_duplicates();
        let drawn = Sketch::draw(&spec, 80, seed).unwrap();
        let drawn = drawn.merge_duplicate_columns(&output_of).unwrap_or(drawn);
        let by_hand = OutputBasis::params(ky.clone()).fit_with_sketch(&y, &drawn).unwrap();
        assert_eq!(by_hand.weights(), basis.weights(), "{spec}");
    }
}

/// SISOKR (input and output sketched): its output side is the sketched
/// basis of the same output sketch (drawn after the input sketch from one
/// generator, as SISOKR draws them), and its input side is SIOKR with the
/// same input sketch regressing the coordinates (a linear output kernel):
/// decoding the SIOKR prediction of the coordinates gives SISOKR's scores
/// and decisions.
#[test]
fn sketched_basis_with_sketched_input_is_sisokr() {
    use okr_estimators::Linear;
    use rand::SeedableRng;
    let kx = Gaussian::new(0.7).unwrap();
    let ky = Tanimoto;
    let x = common::rows(90, 4, 61, 50);
    let xt = common::rows(30, 4, 62, 50);
    let y = label_sets(90, 6, 63);
    for (input, output, seed) in [("uniform:40", "gaussian:15", 1), ("gaussian:30", "uniform:20", 2)] {
        let (input, output): (SketchSpec, SketchSpec) = (input.parse().unwrap(), output.parse().unwrap());
        let lambda = 1e-3;
        let sisokr = SketchedIokr::params(kx.clone(), ky)
            .input_sketch(Some(input))
            .output_sketch(Some(output))
            .lambda(lambda)
            .seed(seed)
            .fit(&x, &y)
            .unwrap();
        assert_eq!(sisokr.method(), "sisokr");
        // The output sketch: the second draw of the generator.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let _rx = Sketch::draw_with(&input, 90, &mut rng).unwrap();
        let ry = Sketch::draw_with(&output, 90, &mut rng).unwrap();
        let (_, output_of) = y.group_duplicates();
        let ry = ry.merge_duplicate_columns(&output_of).unwrap_or(ry);
        let basis = OutputBasis::params(ky).fit_with_sketch(&y, &ry).unwrap();
        let z = DenseRows::new(basis.transform(&y).unwrap().into_values()).unwrap();
        let siokr = SketchedIokr::params(kx.clone(), Linear)
            .input_sketch(Some(input))
            .lambda(lambda)
            .seed(seed)
            .fit(&x, &z)
            .unwrap();
        assert_eq!(siokr.method(), "siokr");
        let zt = Coordinates::new(siokr.coefficients(&xt).unwrap() * siokr.distinct_outputs().as_mat()).unwrap();
        let cands = basis.distinct_outputs().clone();
        let want = CandidateDecoder::new().top_k(3).decode(&sisokr, &xt, &cands).unwrap();
        let got = CoordinateDecoder::from(CandidateDecoder::new().top_k(3)).decode(&basis, &zt, &cands).unwrap();
        assert_same(&got, &want, 1e-8, &format!("{input} / {output}"));
    }
}

/// A Nystroem basis on every distinct output spans what the exact one
/// does: the same Gram of the coordinates; on fewer anchors it is the
/// projection, below the Gram.
#[test]
fn nystroem_on_all_outputs_is_the_exact_span() {
    let y = label_sets(50, 5, 21);
    let exact = OutputBasis::params(Tanimoto).fit(&y).unwrap();
    let all = OutputBasis::params(Tanimoto).kind(BasisKind::Nystroem { anchors: 1000 }).fit(&y).unwrap();
    let (ze, za) = (exact.transform(&y).unwrap(), all.transform(&y).unwrap());
    let (ge, ga) = (ze.values() * ze.values().transpose(), za.values() * za.values().transpose());
    assert!((&ge - &ga).norm_max() < 1e-10);
    assert!((&ge - Tanimoto.gram(&y)).norm_max() < 1e-10);
    let few = OutputBasis::params(Tanimoto).kind(BasisKind::Nystroem { anchors: 4 }).fit(&y).unwrap();
    assert!(few.n_components() <= 4);
    let zf = few.transform(&y).unwrap();
    // ||P psi(y)||^2 <= k(y, y).
    for (i, k) in Tanimoto.diag(&y).iter().enumerate() {
        let sq: f64 = zf.values().row(i).iter().map(|v| v * v).sum();
        assert!(sq <= k + 1e-10, "row {i}: {sq} > {k}");
    }
}

/// Small memory budgets (tiles of one row / one candidate) and f32 scores
/// give the one-block f64 decisions.
#[test]
fn tiles_and_precision_give_the_same_decisions() {
    let y = common::rows(70, 3, 31, 1000);
    let ky = Gaussian::new(1.0).unwrap();
    let basis = OutputBasis::params(ky).kind(BasisKind::Nystroem { anchors: 30 }).fit(&y).unwrap();
    let zt =
        Coordinates::new(Mat::from_fn(20, basis.n_components(), |i, j| ((i * 7 + j * 3) % 11) as f64 / 20.0 - 0.2))
            .unwrap();
    let whole = CoordinateDecoder::from(CandidateDecoder::new().top_k(3)).decode(&basis, &zt, &y).unwrap();
    for budget in [64, 4096, 1 << 16] {
        for precision in [Precision::F64, Precision::F32] {
            let dec = CandidateDecoder::new().top_k(3).memory_budget(budget).precision(precision);
            let got = CoordinateDecoder::from(dec).decode(&basis, &zt, &y).unwrap();
            assert_same(&got, &whole, 1e-10, &format!("budget {budget}, {precision}"));
        }
    }
    // Per-query ranking of pooled queries scores each query's candidates alike.
    let queries: Vec<Query<DenseRows>> =
        (0..20).map(|t| Query::pooled(format!("q{t}"), t, (0..70).collect(), None)).collect();
    let ranked = CoordinateDecoder::new()
        .rank_all(&PerQueryDecoder::new().top_k(Some(3)), &basis, &zt, Some(&y), queries)
        .unwrap();
    for (t, q) in ranked.iter().enumerate() {
        assert_eq!(q.ids, whole.top(t), "query {t}");
    }
}

/// Bad coordinates are one clear error each, never a panic.
#[test]
fn bad_coordinates_are_clear_errors() {
    let y = label_sets(30, 4, 41);
    let basis = OutputBasis::params(Tanimoto).fit(&y).unwrap();
    let r = basis.n_components();
    let dec = CoordinateDecoder::new();
    let wide = Coordinates::new(Mat::zeros(3, r + 1)).unwrap();
    let e = dec.decode_training(&basis, &wide).unwrap_err().to_string();
    assert!(e.contains("coordinate columns vs basis components") && e.contains(&format!("expected {r}")), "{e}");
    let e = Coordinates::new(Mat::from_fn(3, r, |i, _| if i == 2 { f64::NAN } else { 0.0 })).unwrap_err().to_string();
    assert!(e.contains("non-finite") && e.contains("row 2"), "{e}");
    let other = OutputBasis::params(Tanimoto).fit(&label_sets(30, 4, 42)).unwrap();
    assert_ne!(other.id(), basis.id());
    let theirs = Coordinates::of_basis(Mat::zeros(3, r), other.id()).unwrap();
    let e = dec.decode_training(&basis, &theirs).unwrap_err().to_string();
    assert!(e.contains("another output basis"), "{e}");
    let z = basis.transform(&y).unwrap();
    assert!(dec.decode(&basis, &z, &LabelSets::new(5, vec![vec![0]]).unwrap()).is_err());
    assert!(basis.transform(&LabelSets::new(5, vec![vec![4]]).unwrap()).is_err());
    assert!(dec.decode(&basis, &z, &y.select(&[])).is_err());
    assert!(OutputBasis::params(Tanimoto).fit(&y.select(&[])).is_err());
    // Only empty sets under the linear kernel: a zero Gram, no direction.
    let e = OutputBasis::params(Linear).fit(&LabelSets::new(3, vec![vec![], vec![]]).unwrap()).unwrap_err();
    assert!(e.to_string().contains("numerical rank 0"), "{e}");
}

/// A basis survives a serde round trip: same id, same coordinates.
#[test]
fn basis_serde_round_trip() {
    let y = common::rows(40, 3, 51, 1000);
    let basis = OutputBasis::params(Gaussian::new(1.0).unwrap())
        .kind(BasisKind::Sketch("gaussian:10".parse().unwrap()))
        .fit(&y)
        .unwrap();
    let text = serde_json::to_string(&basis).unwrap();
    let back: OutputBasis<DenseRows, Gaussian> = serde_json::from_str(&text).unwrap();
    assert_eq!(back.id(), basis.id());
    assert_eq!(back.transform(&y).unwrap().values(), basis.transform(&y).unwrap().values());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// At full rank the coordinates of the training outputs reproduce the
    /// output Gram, $Z Z^\top = K_y$, and the exact coordinates of each
    /// training output decode to it.
    #[test]
    fn exact_coordinates_reproduce_the_gram(n in 1usize..40, labels in 1usize..8, seed in 0u64..1000) {
        let y = label_sets(n, labels, seed);
        let (distinct, _) = y.group_duplicates();
        // Tanimoto has k(y, y) = 1 (two empty sets included): never rank 0.
        let basis = OutputBasis::params(Tanimoto).fit(&y).unwrap();
        let z = basis.transform(&y).unwrap();
        let g = z.values() * z.values().transpose();
        prop_assert!((&g - Tanimoto.gram(&y)).norm_max() < 1e-9);
        let d = CoordinateDecoder::new().decode_training(&basis, &basis.transform(&distinct).unwrap()).unwrap();
        prop_assert_eq!(d.best(), (0..distinct.n_rows()).collect::<Vec<_>>());
    }
}
