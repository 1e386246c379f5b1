//! `CandidateDecoder::decode_tiles` / `decode_with_errors` (bounded memory)
//! against what the unbounded path computed: the whole coefficient matrix
//! `C`, the whole atom-product matrix `G`, `decode_matrices` on them and
//! `rkhs_sq_errors_from(C, truth)`; for several budgets down to one test row
//! per tile, models with and without a linear input map, dense and
//! label-set outputs, and a label-score read-out computed per tile.

mod common;

use common::rows;
use faer::{Mat, Par};
use okr_decode::{CandidateDecoder, ChainOrder, Decoded, Precision};
use okr_estimators::{Fit, Iokr, KernelExpansion, Nystroem, ReducedRankIokr, SurrogateModel, nystroem::Anchors};
use okr_kernels::{DenseRows, Gaussian, LabelSets, Rows};

/// One tile of everything, a few tiles, and one test row per tile.
const BUDGETS: [usize; 4] = [1 << 30, 20_000, 4000, 8];

/// What the unbounded `decode_with_coefficients` returned, and the errors
/// its callers computed from its coefficients.
fn unbounded<Y: Rows>(
    dec: &CandidateDecoder,
    model: &dyn SurrogateModel<DenseRows, Y>,
    x: &DenseRows,
    cands: &Y,
    truth: &Y,
) -> (Decoded, Mat<f64>, Vec<f64>) {
    let coef = model.coefficients(x).unwrap();
    let mut g = Mat::zeros(model.n_atoms(), cands.n_rows());
    model.atom_products_into(cands, g.as_mut(), Par::Seq).unwrap();
    let decoded = dec.decode_matrices(coef.as_ref(), g.as_ref(), &model.output_sq_norms(cands)).unwrap();
    let errors = model.rkhs_sq_errors_from(coef.as_ref(), truth).unwrap();
    (decoded, coef, errors)
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs())), "{what}: {a} vs {b}");
}

/// Same decisions, scores and errors as the unbounded path for every
/// budget; the tiles cover the test rows in order, each at most the plan's
/// tile, one row each under the smallest budget.
fn check<Y: Rows>(name: &str, model: &dyn SurrogateModel<DenseRows, Y>, x: &DenseRows, cands: &Y, truth: &Y) {
    let n = x.n_rows();
    for precision in [Precision::F64, Precision::F32] {
        for budget in BUDGETS {
            let dec = CandidateDecoder::new().memory_budget(budget).top_k(3).precision(precision);
            let what = format!("{name} {precision:?} budget {budget}");
            let (want, coef, want_err) = unbounded(&dec, model, x, cands, truth);
            let mut seen = Vec::new();
            let mut got_coef = Mat::zeros(n, model.n_atoms());
            let (got, err) = dec
                .decode_tiles(model, x, cands, Some(truth), |rows, c| {
                    got_coef.as_mut().subrows_mut(rows.start, rows.len()).copy_from(c);
                    seen.push(rows);
                    Ok(())
                })
                .unwrap();
            let err = err.unwrap();
            assert_eq!(seen.first().map(|r| r.start), Some(0), "{what}");
            assert!(seen.windows(2).all(|w| w[0].end == w[1].start), "{what}: {seen:?}");
            assert_eq!(seen.last().map(|r| r.end), Some(n), "{what}");
            let widest = seen.iter().map(|r| r.len()).max().unwrap();
            let coef_first = dec.chain_order(ChainOrder::CoefficientsFirst).plan(model, n, cands.n_rows());
            assert!(widest <= coef_first.test_tile, "{what}");
            if budget == 8 {
                assert_eq!(widest, 1, "{what}: one row per tile");
            }
            for t in 0..n {
                assert_eq!(got.top(t), want.top(t), "{what} row {t}");
                for (a, b) in got.top_scores(t).iter().zip(want.top_scores(t)) {
                    close(*a, *b, &format!("{what} score row {t}"));
                }
                close(err[t], want_err[t], &format!("{what} error row {t}"));
                for j in 0..coef.ncols() {
                    close(got_coef[(t, j)], coef[(t, j)], &format!("{what} coef {t},{j}"));
                }
            }
            let (alone, alone_err) = dec.decode_with_errors(model, x, cands, truth).unwrap();
            assert_eq!(alone, got, "{what}");
            assert_eq!(alone_err, err, "{what}");
            // Without true outputs: the same decision, no errors.
            let (plain, none) = dec.decode_tiles(model, x, cands, None, |_, _| Ok(())).unwrap();
            assert!(none.is_none());
            assert_eq!(plain.best(), want.best(), "{what}");
        }
    }
}

#[test]
fn dense_outputs_match_the_unbounded_path() {
    let (x, y) = (rows(40, 3, 1, 97), rows(40, 2, 2, 97));
    let (xt, yt) = (rows(23, 3, 3, 97), rows(23, 2, 4, 97));
    let cands = rows(30, 2, 5, 97);
    let (kx, ky) = (Gaussian::new(2.0).unwrap(), Gaussian::new(1.0).unwrap());
    let iokr = Iokr::params(kx.clone(), ky.clone()).lambda(1e-2).fit(&x, &y).unwrap();
    check("iokr", &iokr, &xt, &cands, &yt);
    let rr = ReducedRankIokr::params(kx.clone(), ky.clone()).rank(5).lambda1(1e-2).fit(&x, &y).unwrap();
    check("reduced-rank", &rr, &xt, &cands, &yt);
    // A linear input map: `decode` may fold candidates first, `decode_tiles` never does.
    let ny = Nystroem::params(kx, ky).lambda(1e-2).anchors(Anchors::Uniform(12)).seed(1).fit(&x, &y).unwrap();
    check("nystroem", &ny, &xt, &cands, &yt);
}

fn label_sets(n: usize, l: usize, seed: u64) -> LabelSets {
    let m = rows(n, l, seed, 3);
    LabelSets::new(l, (0..n).map(|i| (0..l).filter(|&j| m.as_mat()[(i, j)] > 0.5).collect()).collect()).unwrap()
}

/// Label sets, and the label scores `C B Y` the CLI reads per tile equal
/// the whole-matrix product.
#[test]
fn label_sets_and_a_per_tile_read_out_match() {
    let (x, y) = (rows(36, 3, 6, 97), label_sets(36, 6, 7));
    let (xt, yt) = (rows(17, 3, 8, 97), label_sets(17, 6, 9));
    let cands = label_sets(25, 6, 10);
    let kx = Gaussian::new(2.0).unwrap();
    let ky = Gaussian::new(1.5).unwrap();
    let rr = ReducedRankIokr::params(kx, ky).rank(4).lambda1(1e-2).fit(&x, &y).unwrap();
    check("reduced-rank label sets", &rr, &xt, &cands, &yt);
    let atoms = rr.atoms();
    let indicator = atoms.outputs.to_indicator();
    let readout = match atoms.weights {
        None => indicator,
        Some(b) => b * &indicator,
    };
    let want = rr.coefficients(&xt).unwrap() * &readout;
    for budget in BUDGETS {
        let mut scores = Mat::zeros(xt.n_rows(), readout.ncols());
        CandidateDecoder::new()
            .memory_budget(budget)
            .decode_tiles(&rr, &xt, &cands, None, |rows, c| {
                scores.as_mut().subrows_mut(rows.start, rows.len()).copy_from(c * &readout);
                Ok(())
            })
            .unwrap();
        for t in 0..xt.n_rows() {
            for j in 0..readout.ncols() {
                close(scores[(t, j)], want[(t, j)], &format!("budget {budget} label score {t},{j}"));
            }
        }
    }
}

/// The errors' temporaries count in the budget: with true outputs the
/// tiles are never wider than without.
#[test]
fn true_outputs_narrow_the_tiles() {
    let (x, y) = (rows(30, 3, 11, 97), rows(30, 2, 12, 97));
    let model =
        Iokr::params(Gaussian::new(2.0).unwrap(), Gaussian::new(1.0).unwrap()).lambda(1e-2).fit(&x, &y).unwrap();
    let widest = |budget, truth: Option<&DenseRows>| {
        let mut w = 0;
        CandidateDecoder::new()
            .memory_budget(budget)
            .decode_tiles(&model, &x, &y, truth, |rows, _| {
                w = w.max(rows.len());
                Ok(())
            })
            .unwrap();
        w
    };
    // 30 atoms and candidates: G (900 entries) is cached, then 120 entries
    // per test row without errors (coefficients, their column-major copy,
    // the Gram temporary, scores) and 180 with them.
    let budget = 8 * (900 + 120 * 10);
    assert_eq!(widest(budget, None), 10);
    assert_eq!(widest(budget, Some(&y)), 6);
}
