//! The two orders of the score chain $K_x(x, X_e)\,M\,G$ (coefficients
//! first, candidates first) against a brute-force oracle built from the
//! model's coefficients and atom products, for every model with a linear
//! input map, dense and label-set outputs, tiny and large memory budgets,
//! both precisions; the tie rule; and the `Auto` rule against its formula.

mod common;

use common::rows;
use faer::{Mat, Par};
use okr_decode::{CandidateDecoder, ChainCosts, ChainOrder, Decoded, Precision, f32_margin, kernel_entry_flops};
use okr_estimators::nystroem::Anchors;
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_estimators::trace_norm::TraceNormSolver;
use okr_estimators::{
    Fit, Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNorm,
};
use okr_kernels::{DenseRows, Gaussian, Kernel, LabelSets, Rows};
use proptest::prelude::*;

type Model<Y> = (&'static str, Box<dyn SurrogateModel<DenseRows, Y>>);

const ORDERS: [ChainOrder; 2] = [ChainOrder::CoefficientsFirst, ChainOrder::CandidatesFirst];
/// One tile of everything, a few tiles, and tiles of one row / candidate.
const BUDGETS: [usize; 3] = [1 << 30, 6000, 64];

/// Every model whose coefficients are `K_x(x, X_e) M`, fitted on `(x, y)`
/// (IOKR's `M` is the ridge map, applied by solves).
fn models<Y, K>(x: &DenseRows, y: &Y, ky: K) -> Vec<Model<Y>>
where
    Y: Rows + 'static,
    K: Kernel<Y> + Clone + std::fmt::Debug + 'static,
    Iokr<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    Nystroem<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    NystroemReducedRank<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    SketchedIokr<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    ReducedRankIokr<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    TraceNorm<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    Kde<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
{
    // Wide enough a kernel for well-conditioned maps: scores are compared to 1e-10.
    let kx = Gaussian::new(2.0).unwrap();
    let uniform = |m| Some(SketchSpec::new(SketchKind::Uniform, m));
    let sketched = |output| {
        SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(1e-2)
            .input_sketch(uniform(14))
            .output_sketch(output)
            .seed(4)
    };
    vec![
        (
            "nystroem",
            Box::new(
                Nystroem::params(kx.clone(), ky.clone())
                    .lambda(1e-2)
                    .anchors(Anchors::Uniform(12))
                    .seed(1)
                    .fit(x, y)
                    .unwrap(),
            ),
        ),
        (
            "nystroem-reduced-rank",
            Box::new(
                NystroemReducedRank::params(kx.clone(), ky.clone())
                    .anchors(Anchors::Uniform(12))
                    .subset(Anchors::Uniform(20))
                    .rank(4)
                    .seed(2)
                    .fit(x, y)
                    .unwrap(),
            ),
        ),
        ("siokr", Box::new(sketched(None).fit(x, y).unwrap())),
        ("sisokr", Box::new(sketched(Some(SketchSpec::new(SketchKind::Gaussian, 9))).fit(x, y).unwrap())),
        (
            "reduced-rank",
            Box::new(ReducedRankIokr::params(kx.clone(), ky.clone()).rank(5).lambda1(1e-2).fit(x, y).unwrap()),
        ),
        (
            "trace-norm",
            Box::new(
                TraceNorm::params(kx.clone(), ky.clone())
                    .rank(4)
                    .lambda(1e-2)
                    .solver(TraceNormSolver::Als)
                    .max_iter(20)
                    .seed(3)
                    .fit(x, y)
                    .unwrap(),
            ),
        ),
        ("kde", Box::new(Kde::params(kx.clone(), ky.clone()).rank(4).lambda(1e-2).fit(x, y).unwrap())),
        ("iokr", Box::new(Iokr::params(kx, ky).lambda(1e-2).fit(x, y).unwrap())),
    ]
}

/// The oracle: scores `k(c, c) - 2 C G` summed term by term, the
/// coefficients `C`, the atom products `G` and the candidate norms.
struct Oracle {
    s: Mat<f64>,
    coef: Mat<f64>,
    g: Mat<f64>,
    norms: Vec<f64>,
}

fn oracle<Y: Rows>(model: &dyn SurrogateModel<DenseRows, Y>, xt: &DenseRows, cands: &Y) -> Oracle {
    let coef = model.coefficients(xt).unwrap();
    let mut g = Mat::zeros(model.n_atoms(), cands.n_rows());
    model.atom_products_into(cands, g.as_mut(), Par::Seq).unwrap();
    let norms = model.output_sq_norms(cands);
    let s = Mat::from_fn(xt.n_rows(), cands.n_rows(), |t, c| {
        norms[c] - 2.0 * (0..coef.ncols()).map(|j| coef[(t, j)] * g[(j, c)]).sum::<f64>()
    });
    Oracle { s, coef, g, norms }
}

/// Row `t`'s candidates sorted by (score, index) and the row's score scale.
fn ranked(s: &Mat<f64>, t: usize) -> (Vec<usize>, f64) {
    let mut order: Vec<usize> = (0..s.ncols()).collect();
    order.sort_by(|&a, &b| s[(t, a)].total_cmp(&s[(t, b)]).then(a.cmp(&b)));
    let scale = 1.0 + (0..s.ncols()).map(|c| s[(t, c)].abs()).fold(0.0, f64::max);
    (order, scale)
}

/// Whether the oracle's first `k + 1` of row `t` contain a near-tie (a gap
/// in `(0, 1e-9 scale]`) that rounding may flip; exact ties must not flip.
fn near_tie(order: &[usize], s: &Mat<f64>, t: usize, k: usize, scale: f64) -> bool {
    order.windows(2).take(k).any(|w| {
        let gap = s[(t, w[1])] - s[(t, w[0])];
        gap > 0.0 && gap <= 1e-9 * scale
    })
}

/// The f64 decode equals the oracle: the same top-k (outside near-ties) and
/// every returned score within `1e-10` of the row's scale.
fn check_f64(what: &str, d: &Decoded, o: &Oracle, k: usize) {
    for t in 0..o.s.nrows() {
        let (order, scale) = ranked(&o.s, t);
        for (&c, &v) in d.top(t).iter().zip(d.top_scores(t)) {
            assert!((v - o.s[(t, c)]).abs() <= 1e-10 * scale, "{what} row {t} cand {c}: {v} vs {}", o.s[(t, c)]);
        }
        if !near_tie(&order, &o.s, t, k, scale) {
            assert_eq!(d.top(t), &order[..k], "{what} row {t}");
        }
    }
}

/// The f32 decode: the f64 best wherever its gap exceeds the margin of the
/// order's factors (`a` and `C`, `G`; or `e` and the kernel rows, `F = M G`),
/// and f64 scores of the returned candidates.
fn check_f32(what: &str, d: &Decoded, o: &Oracle, factors: (usize, &Mat<f64>, &Mat<f64>)) {
    let (r, left, right) = factors;
    let right_max = (0..right.ncols()).map(|c| right.col(c).norm_l2()).fold(0.0, f64::max);
    let nmax = o.norms.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for t in 0..o.s.nrows() {
        let (order, scale) = ranked(&o.s, t);
        let c = d.top(t)[0];
        assert!((d.top_scores(t)[0] - o.s[(t, c)]).abs() <= 1e-10 * scale, "{what} row {t}");
        let margin = f32_margin(r, left.col(t).norm_l2(), right_max, nmax);
        let gap = if order.len() > 1 { o.s[(t, order[1])] - o.s[(t, order[0])] } else { f64::INFINITY };
        if gap > margin {
            assert_eq!(c, order[0], "{what} row {t}: gap {gap:e} margin {margin:e}");
        }
    }
}

/// Every model, both orders, every budget and both precisions against the
/// oracle; the two orders' f64 decodes agree with each other as well.
fn check_all<Y: Rows>(kind: &str, models: &[Model<Y>], xt: &DenseRows, cands: &Y) {
    let k = 3;
    for (name, model) in models {
        let model = model.as_ref();
        let lin = model.linear_expansion().unwrap_or_else(|| panic!("{name} has a linear map"));
        let o = oracle(model, xt, cands);
        // The candidates-first factors: kernel rows (e, n_t) and F = M G (e, c).
        let e = lin.n_expansion();
        let mut kr = Mat::zeros(e, xt.n_rows());
        lin.kernel_rows_into(xt, kr.as_mut(), Par::Seq).unwrap();
        let mut f = Mat::zeros(e, cands.n_rows());
        lin.fold_into(o.g.as_ref(), f.as_mut(), Par::Seq).unwrap();
        let coef_t = o.coef.transpose().to_owned();
        for budget in BUDGETS {
            let mut f64_runs = Vec::new();
            for order in ORDERS {
                let dec = CandidateDecoder::new().memory_budget(budget).top_k(k).chain_order(order);
                assert_eq!(dec.plan(model, xt.n_rows(), cands.n_rows()).order, order, "{name}");
                let what = format!("{kind} {name} {order} budget {budget}");
                let d = dec.decode(model, xt, cands).unwrap();
                check_f64(&what, &d, &o, k);
                f64_runs.push(d);
                let d32 = dec.precision(Precision::F32).decode(model, xt, cands).unwrap();
                let factors = match order {
                    ChainOrder::CandidatesFirst => (e, &kr, &f),
                    _ => (model.n_atoms(), &coef_t, &o.g),
                };
                check_f32(&format!("{what} f32"), &d32, &o, factors);
            }
            for t in 0..xt.n_rows() {
                let (order, scale) = ranked(&o.s, t);
                if !near_tie(&order, &o.s, t, k, scale) {
                    assert_eq!(f64_runs[0].top(t), f64_runs[1].top(t), "{kind} {name} budget {budget} row {t}");
                }
            }
        }
    }
}

/// `n` random label sets over `l` labels (each label in with probability 3/8).
fn label_sets(n: usize, l: usize, seed: u64) -> LabelSets {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    LabelSets::new(l, (0..n).map(|_| (0..l).filter(|_| next() % 8 < 3).collect()).collect()).unwrap()
}

#[test]
fn both_orders_equal_the_oracle_for_dense_outputs() {
    let (x, y) = (rows(40, 3, 1, 1000), rows(40, 4, 2, 1000));
    let (xt, cands) = (rows(23, 3, 3, 1000), rows(31, 4, 4, 1000));
    check_all("dense", &models(&x, &y, Gaussian::new(0.4).unwrap()), &xt, &cands);
}

#[test]
fn both_orders_equal_the_oracle_for_label_sets() {
    let (x, y) = (rows(40, 3, 5, 1000), label_sets(40, 9, 6));
    let (cands, _) = y.unique();
    let xt = rows(23, 3, 7, 1000);
    check_all("labels", &models(&x, &y, Gaussian::new(0.3).unwrap()), &xt, &cands);
}

/// Copies of one candidate keep index order in both orders, both
/// precisions, every budget: the best is the lowest copy.
#[test]
fn ties_go_to_the_lowest_index_in_both_orders() {
    let (x, y) = (rows(30, 3, 8, 1000), rows(30, 4, 9, 1000));
    let base = rows(3, 4, 10, 1000);
    let picks = [1, 0, 2, 0, 1, 0, 2, 2, 0];
    let cands = base.select(&picks);
    let xt = rows(9, 3, 11, 1000);
    for (name, model) in models(&x, &y, Gaussian::new(0.4).unwrap()) {
        for (order, budget, precision) in ORDERS
            .iter()
            .flat_map(|&o| BUDGETS.iter().flat_map(move |&b| [Precision::F64, Precision::F32].map(|p| (o, b, p))))
        {
            let dec = CandidateDecoder::new().memory_budget(budget).top_k(picks.len()).chain_order(order);
            let d = dec.precision(precision).decode(model.as_ref(), &xt, &cands).unwrap();
            for t in 0..xt.n_rows() {
                let top = d.top(t);
                let first = picks.iter().position(|&p| p == picks[top[0]]).unwrap();
                assert_eq!(top[0], first, "{name} {order} {budget} {precision} row {t}");
                for b in 0..3 {
                    let copies: Vec<usize> = top.iter().copied().filter(|&c| picks[c] == b).collect();
                    assert!(copies.windows(2).all(|w| w[0] < w[1]), "{name} {order} {precision}: {copies:?}");
                }
            }
        }
    }
}

/// `Auto` runs the order with fewer flops by `ChainCosts`, counted with the
/// candidates-first tiles, and decodes exactly as that order forced.
#[test]
fn auto_picks_the_order_of_the_formula() {
    let y = rows(40, 4, 12, 1000);
    let mut seen = Vec::new();
    // (input width, test rows, candidates, budget): folding wins with many
    // test rows, loses with few, and loses when wide inputs make the kernel
    // rows of three candidate tiles dearer than what folding saves.
    for (d, n_t, n_c, budget) in
        [(3, 100, 37, 1 << 30), (3, 2, 37, 1 << 30), (500, 100, 37, 1 << 30), (500, 100, 37, 2000)]
    {
        let x = rows(40, d, 13, 1000);
        let model = Nystroem::params(Gaussian::new(0.05).unwrap(), Gaussian::new(0.4).unwrap())
            .lambda(1e-2)
            .anchors(Anchors::Uniform(12))
            .fit(&x, &y)
            .unwrap();
        let (xt, cands) = (rows(n_t, d, 14, 1000), rows(n_c, 4, 15, 1000));
        let dec = CandidateDecoder::new().memory_budget(budget);
        let tiles = dec.chain_order(ChainOrder::CandidatesFirst).plan(&model, n_t, n_c).candidate_tiles;
        let want = ChainCosts::new(n_t, 12, model.n_atoms(), n_c, tiles, kernel_entry_flops(Some(d)));
        let plan = dec.plan(&model, n_t, n_c);
        assert_eq!(plan.costs, Some(want), "{d} {n_t} {budget}");
        assert_eq!(plan.order, want.cheaper(), "{d} {n_t} {budget}: {want:?}");
        let auto = dec.decode(&model, &xt, &cands).unwrap();
        assert_eq!(auto, dec.chain_order(plan.order).decode(&model, &xt, &cands).unwrap());
        seen.push((plan.order, tiles));
    }
    assert_eq!(
        seen,
        vec![
            (ChainOrder::CandidatesFirst, 1),
            (ChainOrder::CoefficientsFirst, 1),
            (ChainOrder::CandidatesFirst, 1),
            (ChainOrder::CoefficientsFirst, 3)
        ]
    );
}

/// IOKR's ridge map is folded by solves: `Auto` counts its application as
/// $2e^2$ flops per column, so it solves against the candidates only when
/// the test rows outnumber them enough, and decodes as that order forced.
#[test]
fn ridge_models_fold_by_solves_when_the_formula_says() {
    let (x, y) = (rows(20, 3, 16, 1000), rows(20, 4, 17, 1000));
    let model =
        Iokr::params(Gaussian::new(0.5).unwrap(), Gaussian::new(0.4).unwrap()).lambda(1e-2).fit(&x, &y).unwrap();
    let lin = model.linear_expansion().expect("IOKR's ridge map");
    assert!(lin.map().is_none());
    assert_eq!((lin.n_expansion(), lin.n_atoms(), lin.map_flops_per_column()), (20, 20, 800.0));
    let mut seen = Vec::new();
    // With as many atoms as expansion rows (20), folding wins whenever the
    // test rows outnumber the candidates.
    for (n_t, n_c) in [(50, 6), (3, 6), (50, 40)] {
        let (xt, cands) = (rows(n_t, 3, 18, 1000), rows(n_c, 4, 19, 1000));
        let dec = CandidateDecoder::new();
        let plan = dec.plan(&model, n_t, n_c);
        let want = ChainCosts::with_map_flops(n_t, 20, 20, n_c, 1, kernel_entry_flops(Some(3)), 800.0);
        assert_eq!((plan.costs, plan.order), (Some(want), want.cheaper()), "{n_t} {n_c}");
        let auto = dec.decode(&model, &xt, &cands).unwrap();
        assert_eq!(auto, dec.chain_order(plan.order).decode(&model, &xt, &cands).unwrap());
        check_f64(&format!("iokr {n_t} {n_c}"), &auto, &oracle(&model, &xt, &cands), 1);
        seen.push(plan.order);
    }
    assert_eq!(seen, [ChainOrder::CandidatesFirst, ChainOrder::CoefficientsFirst, ChainOrder::CandidatesFirst]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Random shapes, anchors and budgets: candidates first equals the oracle
    /// (Nystroem: the model whose expansion is smallest against the test rows).
    #[test]
    fn candidates_first_equals_the_oracle_on_random_shapes(
        n in 4usize..40, m in 1usize..12, nt in 1usize..30, nc in 1usize..40,
        budget in prop_oneof![Just(64usize), 256usize..8192, Just(1usize << 30)],
        top_k in 1usize..4, seed in 0u64..10_000,
    ) {
        let (x, y) = (rows(n, 3, seed, 1000), rows(n, 4, seed + 1, 1000));
        let (xt, cands) = (rows(nt, 3, seed + 2, 1000), rows(nc, 4, seed + 3, 1000));
        let model = Nystroem::params(Gaussian::new(2.0).unwrap(), Gaussian::new(0.4).unwrap())
            .lambda(1e-2)
            .anchors(Anchors::Uniform(m.min(n)))
            .seed(seed)
            .fit(&x, &y)
            .unwrap();
        let k = top_k.min(nc);
        let o = oracle(&model, &xt, &cands);
        let dec = CandidateDecoder::new().memory_budget(budget).top_k(top_k).chain_order(ChainOrder::CandidatesFirst);
        check_f64(&format!("n {n} m {m} budget {budget}"), &dec.decode(&model, &xt, &cands).unwrap(), &o, k);
    }
}
