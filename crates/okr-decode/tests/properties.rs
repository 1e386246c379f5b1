//! Decoding against a brute-force oracle: every score computed pair by pair,
//! for random sizes, budgets (forcing tiling) and top-k.

mod common;

use common::rows;
use okr_decode::{CandidateDecoder, Error};
use okr_estimators::Fit;
use okr_estimators::{Iokr, SurrogateModel};
use okr_kernels::{DenseRows, Kernel, Rows};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct PairGauss(f64);
impl Kernel<DenseRows> for PairGauss {
    fn eval(&self, a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
        let d: f64 = (0..a.n_features()).map(|f| (a.as_mat()[(i, f)] - b.as_mat()[(j, f)]).powi(2)).sum();
        (-self.0 * d).exp()
    }
}

/// Linear output kernel: non-normalized, so the `k(c, c)` term matters.
#[derive(Clone, Debug)]
struct PairLinear;
impl Kernel<DenseRows> for PairLinear {
    fn eval(&self, a: &DenseRows, i: usize, b: &DenseRows, j: usize) -> f64 {
        (0..a.n_features()).map(|f| a.as_mat()[(i, f)] * b.as_mat()[(j, f)]).sum()
    }
}

/// All scores `k(c,c) - 2 <h(x_t), psi(c)>` by explicit vectors, ranked by
/// (score, index) with a stable sort.
fn brute_force(
    model: &impl SurrogateModel<DenseRows, DenseRows>,
    x: &DenseRows,
    y: &DenseRows,
    cands: &DenseRows,
    k: usize,
) -> Vec<Vec<(usize, f64)>> {
    let h = model.coefficients(x).unwrap() * y.as_mat();
    (0..x.n_rows())
        .map(|t| {
            let mut s: Vec<(usize, f64)> = (0..cands.n_rows())
                .map(|c| {
                    let cc: f64 = (0..cands.n_features()).map(|f| cands.as_mat()[(c, f)].powi(2)).sum();
                    let hc: f64 = (0..cands.n_features()).map(|f| h[(t, f)] * cands.as_mat()[(c, f)]).sum();
                    (c, cc - 2.0 * hc)
                })
                .collect();
            s.sort_by(|a, b| a.1.total_cmp(&b.1));
            s.truncate(k);
            s
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn tiled_decoding_equals_brute_force(
        n in 1usize..20, nt in 1usize..15, nc in 1usize..40, top_k in 1usize..5,
        budget in prop_oneof![Just(8usize), 64usize..4096, Just(1usize << 30)], seed in 0u64..500,
    ) {
        faer::set_global_parallelism(faer::Par::Seq);
        let x = rows(n, 3, seed, 1000);
        let y = rows(n, 4, seed + 1, 1000);
        let xt = rows(nt, 3, seed + 2, 1000);
        // Few levels: duplicate candidates, so ties are exercised.
        let cands = rows(nc, 4, seed + 3, 2);
        let model = Iokr::params(PairGauss(0.8), PairLinear).lambda(1e-3).fit(&x, &y).unwrap();
        let got = CandidateDecoder::new().memory_budget(budget).top_k(top_k).decode(&model, &xt, &cands).unwrap();
        let want = brute_force(&model, &xt, &y, &cands, top_k);
        prop_assert_eq!(got.n_rows(), nt);
        prop_assert_eq!(got.k(), top_k.min(nc));
        for (t, want_t) in want.iter().enumerate() {
            for (r, &(c, v)) in want_t.iter().enumerate() {
                let gs = got.top_scores(t)[r];
                prop_assert!((gs - v).abs() <= 1e-9 * (1.0 + v.abs()), "score {} vs {}", gs, v);
                // Exact ties resolve to the lowest index; near-ties may differ by rounding.
                let next = want_t.get(r + 1).map_or(f64::INFINITY, |w| w.1);
                if (next - v).abs() > 1e-9 && (r == 0 || (v - want_t[r - 1].1).abs() > 1e-9) {
                    prop_assert_eq!(got.top(t)[r], c);
                }
            }
        }
    }
}

#[test]
fn exact_ties_go_to_lowest_index() {
    let x = rows(5, 2, 1, 100);
    let y = rows(5, 3, 2, 100);
    let model = Iokr::params(PairGauss(1.0), PairLinear).fit(&x, &y).unwrap();
    // Candidates 0, 2 and 3 are the same vector: always tied.
    let base = rows(2, 3, 3, 100);
    let cands = base.select(&[0, 1, 0, 0]);
    for budget in [8, 1 << 20] {
        let d = CandidateDecoder::new().memory_budget(budget).top_k(4).decode(&model, &x, &cands).unwrap();
        for t in 0..5 {
            let top = d.top(t);
            let pos: Vec<usize> = top.iter().copied().filter(|&c| c != 1).collect();
            assert_eq!(pos, vec![0, 2, 3], "tied candidates must stay in index order");
        }
    }
}

#[test]
fn empty_candidates_and_bad_params_are_errors() {
    let x = rows(4, 2, 1, 100);
    let y = rows(4, 3, 2, 100);
    let model = Iokr::params(PairGauss(1.0), PairLinear).fit(&x, &y).unwrap();
    let dec = CandidateDecoder::new();
    assert_eq!(dec.decode(&model, &x, &y.select(&[])).unwrap_err(), Error::NoCandidates);
    assert!(matches!(dec.top_k(0).decode(&model, &x, &y), Err(Error::InvalidParameter { name: "top_k", .. })));
    let wrong = rows(3, 5, 3, 100);
    assert!(dec.decode(&model, &x, &wrong).unwrap_err().to_string().contains("expected 3, got 5"));
}

#[test]
fn decode_matrices_equals_model_decoding() {
    let x = rows(12, 3, 11, 1000);
    let y = rows(12, 4, 12, 1000);
    let xt = rows(9, 3, 13, 1000);
    let cands = rows(17, 4, 14, 3);
    let model = Iokr::params(PairGauss(0.5), PairLinear).lambda(1e-2).fit(&x, &y).unwrap();
    let coef = model.coefficients(&xt).unwrap();
    let g = PairLinear.gram_block(&y, &cands);
    let norms = PairLinear.diag(&cands);
    for budget in [8, 1 << 30] {
        let dec = CandidateDecoder::new().top_k(3).memory_budget(budget);
        let a = dec.decode(&model, &xt, &cands).unwrap();
        let b = dec.decode_matrices(coef.as_ref(), g.as_ref(), &norms).unwrap();
        assert_eq!(a.best(), b.best());
        for t in 0..9 {
            for (u, v) in a.top_scores(t).iter().zip(b.top_scores(t)) {
                assert!((u - v).abs() < 1e-10 * (1.0 + u.abs()));
            }
        }
    }
    assert!(CandidateDecoder::new().decode_matrices(coef.as_ref(), g.transpose(), &norms).is_err());
}
