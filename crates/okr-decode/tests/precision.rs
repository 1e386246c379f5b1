//! `Precision::F32` against the f64 decoder: the same decisions except where
//! the f64 best beats the runner-up by at most the documented margin
//! (`f32_margin`), the same tie rule, the same errors.

mod common;

use common::rows;
use faer::Mat;
use okr_decode::{CandidateDecoder, Error, F32_SHORTLIST_EXTRA, Precision, f32_margin};
use okr_estimators::Fit;
use okr_estimators::{Iokr, SurrogateModel};
use okr_kernels::{DenseRows, Gaussian, Linear, Rows};
use proptest::prelude::*;

/// The margin of every test row: coefficient row norms against the largest
/// atom-product column norm.
fn margins(coef: &Mat<f64>, g: &Mat<f64>, norms: &[f64]) -> Vec<f64> {
    let gmax = (0..g.ncols()).map(|c| g.col(c).norm_l2()).fold(0.0, f64::max);
    let nmax = norms.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    (0..coef.nrows()).map(|t| f32_margin(coef.ncols(), coef.row(t).norm_l2(), gmax, nmax)).collect()
}

/// The model's coefficients of `xt`, atom products and candidate norms
/// (atoms are the distinct training outputs).
fn matrices(
    model: &impl SurrogateModel<DenseRows, DenseRows>,
    xt: &DenseRows,
    cands: &DenseRows,
) -> (Mat<f64>, Mat<f64>, Vec<f64>) {
    let mut g = Mat::zeros(model.n_atoms(), cands.n_rows());
    model.atom_products_into(cands, g.as_mut(), faer::Par::Seq).unwrap();
    (model.coefficients(xt).unwrap(), g, model.output_sq_norms(cands))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Decisions equal the f64 decisions wherever the f64 top-2 gap exceeds
    /// the margin; returned scores are f64 scores of the chosen candidates.
    #[test]
    fn f32_decisions_equal_f64_outside_the_margin(
        n in 2usize..40, nt in 1usize..30, nc in 1usize..60, d in 1usize..12,
        levels in prop_oneof![Just(2u64), Just(5u64), Just(1000u64)],
        budget in prop_oneof![Just(64usize), 256usize..8192, Just(1usize << 30)],
        top_k in 1usize..4, seed in 0u64..10_000,
    ) {
        let x = rows(n, 3, seed, 1000);
        let y = rows(n, d, seed + 1, 1000);
        let xt = rows(nt, 3, seed + 2, 1000);
        let cands = rows(nc, d, seed + 3, levels);
        let model = Iokr::params(Gaussian::new(0.7).unwrap(), Linear).lambda(1e-3).fit(&x, &y).unwrap();
        let f64_dec = CandidateDecoder::new().memory_budget(budget).top_k(top_k.max(2));
        let want = f64_dec.decode(&model, &xt, &cands).unwrap();
        let got = f64_dec.top_k(top_k).precision(Precision::F32).decode(&model, &xt, &cands).unwrap();
        let (coef, g, norms) = matrices(&model, &xt, &cands);
        let m = margins(&coef, &g, &norms);
        prop_assert_eq!(got.n_rows(), nt);
        prop_assert_eq!(got.k(), top_k.min(nc));
        for t in 0..nt {
            let ws = want.top_scores(t);
            let gap = if ws.len() > 1 { ws[1] - ws[0] } else { f64::INFINITY };
            if gap > m[t] {
                prop_assert_eq!(got.top(t)[0], want.top(t)[0], "row {} gap {} margin {}", t, gap, m[t]);
            }
            // The reported score is the f64 score of the reported candidate.
            let c = got.top(t)[0];
            let exact = norms[c] - 2.0 * (0..coef.ncols()).map(|i| coef[(t, i)] * g[(i, c)]).sum::<f64>();
            prop_assert!((got.top_scores(t)[0] - exact).abs() <= 1e-12 * (1.0 + exact.abs()));
            // Never worse than the f64 best by more than the margin.
            prop_assert!(got.top_scores(t)[0] <= ws[0] + m[t]);
        }
    }

    /// `decode_matrices` under F32 gives the same decisions as `decode` under F32.
    #[test]
    fn f32_decode_matrices_equals_f32_decode(
        n in 2usize..20, nt in 1usize..20, nc in 1usize..40, seed in 0u64..10_000,
    ) {
        let x = rows(n, 3, seed, 1000);
        let y = rows(n, 4, seed + 1, 1000);
        let xt = rows(nt, 3, seed + 2, 1000);
        let cands = rows(nc, 4, seed + 3, 3);
        let model = Iokr::params(Gaussian::new(0.5).unwrap(), Linear).lambda(1e-2).fit(&x, &y).unwrap();
        let dec = CandidateDecoder::new().precision(Precision::F32).top_k(2);
        let a = dec.decode(&model, &xt, &cands).unwrap();
        let (coef, g, norms) = matrices(&model, &xt, &cands);
        let b = dec.decode_matrices(coef.as_ref(), g.as_ref(), &norms).unwrap();
        // The two paths' inputs may differ in the last bits: compare outside near-ties.
        let f64_top2 = CandidateDecoder::new().top_k(2).decode(&model, &xt, &cands).unwrap();
        for t in 0..nt {
            let s = f64_top2.top_scores(t);
            if s.len() < 2 || s[1] - s[0] > 1e-9 * (1.0 + s[0].abs()) {
                prop_assert_eq!(a.top(t)[0], b.top(t)[0]);
            }
        }
    }
}

/// Candidates 0, 2 and 3 are the same vector: the f32 path keeps them in
/// index order, as f64 does (their f64 re-scores are bit-equal).
#[test]
fn f32_exact_ties_go_to_lowest_index() {
    let x = rows(5, 2, 1, 100);
    let y = rows(5, 3, 2, 100);
    let model = Iokr::params(Gaussian::new(1.0).unwrap(), Linear).fit(&x, &y).unwrap();
    let base = rows(2, 3, 3, 100);
    let cands = base.select(&[0, 1, 0, 0]);
    for budget in [8, 1 << 20] {
        let dec = CandidateDecoder::new().memory_budget(budget).top_k(4).precision(Precision::F32);
        let d = dec.decode(&model, &x, &cands).unwrap();
        for t in 0..5 {
            let pos: Vec<usize> = d.top(t).iter().copied().filter(|&c| c != 1).collect();
            assert_eq!(pos, vec![0, 2, 3], "tied candidates must stay in index order");
        }
    }
    // Many copies of the best candidate (more than the shortlist): still the lowest index.
    let many: Vec<usize> = std::iter::once(1).chain(std::iter::repeat_n(0, 3 * (1 + F32_SHORTLIST_EXTRA))).collect();
    let cands = base.select(&many);
    let f64_best = CandidateDecoder::new().decode(&model, &x, &cands).unwrap().best();
    let f32_best = CandidateDecoder::new().precision(Precision::F32).decode(&model, &x, &cands).unwrap().best();
    assert_eq!(f32_best, f64_best);
}

/// A test row that overflows f32 but not f64 is decoded (in f64); a row that
/// overflows f64 is the same error as under F64.
#[test]
fn f32_overflow_falls_back_to_f64_and_f64_overflow_is_an_error() {
    let g = Mat::from_fn(2, 3, |i, j| (i + j) as f64 + 1.0);
    let norms = [1.0, 2.0, 3.0];
    let big = Mat::from_fn(3, 2, |i, j| if i == 1 { 1e300 * (j as f64 + 1.0) } else { 0.5 });
    for budget in [8, 1 << 20] {
        let a = CandidateDecoder::new().memory_budget(budget);
        let want = a.decode_matrices(big.as_ref(), g.as_ref(), &norms).unwrap();
        let got = a.precision(Precision::F32).decode_matrices(big.as_ref(), g.as_ref(), &norms).unwrap();
        assert_eq!(got, want);
        for bad in [f64::NAN, f64::INFINITY, f64::MAX] {
            let coef = Mat::from_fn(4, 2, |i, _| if i == 2 { bad } else { 0.5 });
            let err = a.precision(Precision::F32).decode_matrices(coef.as_ref(), g.as_ref(), &norms).unwrap_err();
            assert_eq!(err, Error::NonFiniteScore { row: 2 }, "{bad} {budget}");
        }
    }
}

#[test]
fn precision_parses_prints_and_defaults_to_f64() {
    assert_eq!(CandidateDecoder::new().get_precision(), Precision::F64);
    assert_eq!("f32".parse::<Precision>().unwrap(), Precision::F32);
    assert_eq!(Precision::F64.to_string(), "f64");
    assert!(matches!("f16".parse::<Precision>(), Err(Error::InvalidParameter { name: "precision", .. })));
}
