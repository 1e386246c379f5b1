//! Per-query decoding against brute force: every candidate scored with dense
//! algebra from the explicit feature map of a linear output kernel
//! (`psi(y) = y`), for IOKR, reduced rank, SISOKR, Nystroem and trace norm,
//! with pooled and inline candidates, duplicates, ties and budgets that
//! force tiling.

mod common;

use common::rows;
use faer::Mat;
use faer::linalg::solvers::Solve;
use okr_decode::Error;
use okr_decode::per_query::{CandidateFileReader, CandidateList, PerQueryDecoder, Query, RankedQuery, TrueRank};
use okr_estimators::Fit;
use okr_estimators::nystroem::Anchors;
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_estimators::{Iokr, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNorm, TraceNormSolver};
use okr_kernels::{DenseRows, Gaussian, Kernel, Linear, Rows};
use proptest::prelude::*;

type Model = Box<dyn SurrogateModel<DenseRows, DenseRows>>;

/// The five kernel-output models, each with a linear output kernel.
fn models(x: &DenseRows, y: &DenseRows) -> Vec<(&'static str, Model)> {
    let kx = Gaussian::new(0.7).unwrap();
    let n = x.n_rows();
    let m = (n / 2).max(1);
    vec![
        ("iokr", Box::new(Iokr::params(kx.clone(), Linear).lambda(1e-2).fit(x, y).unwrap())),
        (
            "reduced-rank",
            Box::new(ReducedRankIokr::params(kx.clone(), Linear).rank(3).lambda1(1e-2).fit(x, y).unwrap()),
        ),
        (
            "sisokr",
            Box::new(
                SketchedIokr::params(kx.clone(), Linear)
                    .lambda(1e-2)
                    .seed(5)
                    .input_sketch(Some(SketchSpec::new(SketchKind::Uniform, m)))
                    .output_sketch(Some(SketchSpec::new(SketchKind::Gaussian, m)))
                    .fit(x, y)
                    .unwrap(),
            ),
        ),
        (
            "nystroem",
            Box::new(Nystroem::params(kx.clone(), Linear).lambda(1e-2).anchors(Anchors::Uniform(m)).fit(x, y).unwrap()),
        ),
        (
            "trace-norm",
            Box::new(
                TraceNorm::params(kx, Linear)
                    .lambda(1e-2)
                    .rank(2)
                    .solver(TraceNormSolver::Als)
                    .max_iter(20)
                    .fit(x, y)
                    .unwrap(),
            ),
        ),
    ]
}

/// `h(x)` as explicit vectors `(n_test, d)`: the coefficients of each test
/// row alone times the atoms, read off as the atom products of the unit
/// vectors (`<a_j, e_f> = a_j[f]` for the linear kernel).
fn explicit_h(model: &dyn SurrogateModel<DenseRows, DenseRows>, xt: &DenseRows, d: usize) -> Mat<f64> {
    let units = DenseRows::new(Mat::identity(d, d)).unwrap();
    let mut atoms = Mat::zeros(model.n_atoms(), d);
    model.atom_products_into(&units, atoms.as_mut(), faer::Par::Seq).unwrap();
    let mut h = Mat::zeros(xt.n_rows(), d);
    for t in 0..xt.n_rows() {
        let c = model.coefficients(&xt.select(&[t])).unwrap();
        h.as_mut().subrows_mut(t, 1).copy_from(&c * &atoms);
    }
    h
}

/// IOKR's `h(x) = K(x, X) (K + n lambda I)^{-1} Y` by a dense solve.
fn iokr_h(x: &DenseRows, y: &DenseRows, xt: &DenseRows, gamma: f64, lambda: f64) -> Mat<f64> {
    let k = Gaussian::new(gamma).unwrap();
    let n = x.n_rows();
    let mut kk = k.gram(x);
    for i in 0..n {
        kk[(i, i)] += n as f64 * lambda;
    }
    let alpha = kk.partial_piv_lu().solve(y.as_mat());
    k.gram_block(xt, x) * alpha
}

/// Brute-force ranking of one query's explicit candidate vectors.
fn brute_rank(h: &[f64], cands: &[Vec<f64>], truth: Option<usize>) -> (Vec<usize>, Vec<f64>, Option<TrueRank>) {
    let scores: Vec<f64> = cands
        .iter()
        .map(|c| {
            let cc: f64 = c.iter().map(|v| v * v).sum();
            let hc: f64 = c.iter().zip(h).map(|(a, b)| a * b).sum();
            cc - 2.0 * hc
        })
        .collect();
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(a.cmp(&b)));
    let rank = truth.map(|t| TrueRank {
        optimistic: 1 + scores.iter().filter(|&&s| s < scores[t]).count(),
        pessimistic: scores.iter().filter(|&&s| s <= scores[t]).count(),
    });
    let sorted = order.iter().map(|&i| scores[i]).collect();
    (order, sorted, rank)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// Compares a ranking with brute force; positions only where the brute
/// scores are separated (near-ties may round either way), true ranks only
/// when no other score is within rounding of the true one.
fn check(got: &RankedQuery, want: &(Vec<usize>, Vec<f64>, Option<TrueRank>), all: &[f64], truth: Option<usize>) {
    let (order, sorted, rank) = want;
    assert_eq!(got.positions.len(), got.scores.len());
    for (r, (&p, &s)) in got.positions.iter().zip(&got.scores).enumerate() {
        assert!(close(s, sorted[r]), "{}: score {s} vs {}", got.id, sorted[r]);
        let isolated =
            |i: usize| (0..sorted.len()).all(|j| j == i || !close(sorted[j], sorted[i]) || sorted[j] == sorted[i]);
        if isolated(r) {
            assert_eq!(
                p, order[r],
                "{}: rank {r} got {:?} {:?} want {:?} {:?}",
                got.id, got.positions, got.scores, order, sorted
            );
        }
    }
    if let (Some(t), Some(want)) = (truth, rank) {
        let st = all[t];
        if all.iter().all(|&s| s == st || !close(s, st)) {
            assert_eq!(got.true_rank, Some(*want), "{}", got.id);
        }
    }
}

fn explicit(y: &DenseRows, i: usize) -> Vec<f64> {
    (0..y.n_features()).map(|f| y.as_mat()[(i, f)]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn per_query_ranking_equals_brute_force(
        n in 6usize..16, n_test in 1usize..6, n_pool in 1usize..25, seed in 0u64..1000,
        n_queries in 1usize..8, max_cands in 1usize..12, inline in any::<bool>(),
        top_k in prop_oneof![Just(None), (1usize..4).prop_map(Some)],
        budget in prop_oneof![Just(8usize), 64usize..2048, Just(1usize << 30)],
    ) {
        faer::set_global_parallelism(faer::Par::Seq);
        let d = 3;
        let x = rows(n, 2, seed, 1000);
        let y = rows(n, d, seed + 1, 1000);
        let xt = rows(n_test, 2, seed + 2, 1000);
        // Few levels: the pool repeats vectors, so exact ties occur.
        let pool = rows(n_pool, d, seed + 3, 2);
        let mut s = seed;
        let mut next = |m: usize| { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((s >> 33) as usize) % m };
        let queries: Vec<Query<DenseRows>> = (0..n_queries).map(|q| {
            // A pooled list holds at most the pool's rows (repeats included).
            let nc = 1 + next(if inline { max_cands } else { max_cands.min(n_pool) });
            let idx: Vec<usize> = (0..nc).map(|_| next(n_pool)).collect();
            let truth = if next(3) == 0 { None } else { Some(next(nc)) };
            let id = format!("q{q}");
            if inline { Query::inline(id, next(n_test), pool.select(&idx), truth) }
            else { Query::pooled(id, next(n_test), idx, truth) }
        }).collect();
        for (name, model) in models(&x, &y) {
            let h = explicit_h(model.as_ref(), &xt, d);
            let dec = PerQueryDecoder::new().memory_budget(budget).top_k(top_k);
            let got = dec.rank_all(model.as_ref(), &xt, Some(&pool), queries.clone()).unwrap();
            prop_assert_eq!(got.len(), queries.len());
            for (q, g) in queries.iter().zip(&got) {
                let cands: Vec<Vec<f64>> = match &q.candidates {
                    CandidateList::Pool(idx) => idx.iter().map(|&i| explicit(&pool, i)).collect(),
                    CandidateList::Inline(c) => (0..c.n_rows()).map(|i| explicit(c, i)).collect(),
                };
                let hq: Vec<f64> = (0..d).map(|f| h[(q.test_row, f)]).collect();
                let want = brute_rank(&hq, &cands, q.truth);
                let mut all = vec![0.0; cands.len()];
                for (p, v) in want.0.iter().zip(&want.1) { all[*p] = *v; }
                prop_assert_eq!(&g.id, &q.id);
                prop_assert_eq!(g.n_candidates, cands.len());
                prop_assert_eq!(g.positions.len(), top_k.unwrap_or(usize::MAX).min(cands.len()), "{}", name);
                let ids: Vec<usize> = g.positions.iter().map(|&p| q.candidate_id(p)).collect();
                prop_assert_eq!(&g.ids, &ids);
                check(g, &want, &all, q.truth);
            }
        }
    }
}

#[test]
fn iokr_explicit_solve_matches_the_model_h() {
    // The oracle's h for IOKR comes from a dense solve, not from the model.
    let (x, y, xt) = (rows(12, 2, 1, 1000), rows(12, 3, 2, 1000), rows(4, 2, 3, 1000));
    let model = Iokr::params(Gaussian::new(0.7).unwrap(), Linear).lambda(1e-2).fit(&x, &y).unwrap();
    let pool = rows(9, 3, 4, 1000);
    let want_h = iokr_h(&x, &y, &xt, 0.7, 1e-2);
    let queries: Vec<Query<DenseRows>> =
        (0..4).map(|t| Query::pooled(format!("q{t}"), t, (0..9).rev().collect(), Some(t))).collect();
    let got = PerQueryDecoder::new().memory_budget(64).rank_all(&model, &xt, Some(&pool), queries.clone()).unwrap();
    for (q, g) in queries.iter().zip(&got) {
        let CandidateList::Pool(idx) = &q.candidates else { unreachable!() };
        let cands: Vec<Vec<f64>> = idx.iter().map(|&i| explicit(&pool, i)).collect();
        let hq: Vec<f64> = (0..3).map(|f| want_h[(q.test_row, f)]).collect();
        let want = brute_rank(&hq, &cands, q.truth);
        let mut all = vec![0.0; cands.len()];
        for (p, v) in want.0.iter().zip(&want.1) {
            all[*p] = *v;
        }
        check(g, &want, &all, q.truth);
        assert_eq!(g.positions, want.0, "generic pool values: no near-ties");
    }
}

#[test]
fn empty_candidate_set_is_an_error_naming_the_query() {
    let (x, y) = (rows(8, 2, 1, 100), rows(8, 3, 2, 100));
    let pool = rows(5, 3, 3, 100);
    for (name, model) in models(&x, &y) {
        let queries = vec![Query::pooled("ok", 0, vec![1, 2], None), Query::pooled("spectrum-17", 1, vec![], None)];
        let mut seen = Vec::new();
        let err = PerQueryDecoder::new()
            .rank(model.as_ref(), &x, Some(&pool), queries.into_iter().map(Ok), |r| {
                seen.push(r.id);
                Ok(())
            })
            .unwrap_err();
        assert_eq!(err, Error::EmptyQuery { query: "spectrum-17".into() }, "{name}");
        assert_eq!(err.to_string(), "query spectrum-17: the candidate set is empty");
        let inline = vec![Query::inline("q0", 0, pool.select(&[]), None)];
        let err = PerQueryDecoder::new().rank_all(model.as_ref(), &x, None, inline).unwrap_err();
        assert_eq!(err, Error::EmptyQuery { query: "q0".into() });
    }
}

#[test]
fn single_candidate_duplicates_and_ties_lowest_index_first() {
    let (x, y) = (rows(10, 2, 1, 1000), rows(10, 3, 2, 1000));
    // Five rows: a pooled list holds at most the pool's rows, repeats included.
    let pool = rows(5, 3, 5, 1000);
    for (name, model) in models(&x, &y) {
        for budget in [8, 200, 1 << 30] {
            let dec = PerQueryDecoder::new().memory_budget(budget);
            // Single candidate: rank 1 both ways.
            let single =
                dec.rank_all(model.as_ref(), &x, Some(&pool), vec![Query::pooled("s", 3, vec![2], Some(0))]).unwrap();
            assert_eq!(single[0].positions, vec![0]);
            assert_eq!(single[0].true_rank, Some(TrueRank { optimistic: 1, pessimistic: 1 }), "{name}");
            // Candidate 1 of the pool at positions 0, 2 and 4: exact ties, kept in position order;
            // the truth at position 2 ties with two others.
            let idx = vec![1, 3, 1, 0, 1];
            for inline in [false, true] {
                let q = if inline {
                    Query::inline("d", 4, pool.select(&idx), Some(2))
                } else {
                    Query::pooled("d", 4, idx.clone(), Some(2))
                };
                let got = &dec.rank_all(model.as_ref(), &x, Some(&pool), vec![q]).unwrap()[0];
                let dup: Vec<usize> = got.positions.iter().copied().filter(|p| [0, 2, 4].contains(p)).collect();
                assert_eq!(dup, vec![0, 2, 4], "{name} budget {budget} inline {inline}");
                let first = got.positions.iter().position(|&p| p == 0).unwrap();
                assert_eq!(got.scores[first], got.scores[first + 1]);
                assert_eq!(got.scores[first], got.scores[first + 2]);
                let tr = got.true_rank.unwrap();
                assert_eq!((tr.optimistic, tr.pessimistic), (first + 1, first + 3), "{name}");
            }
        }
    }
}

#[test]
fn tiny_budgets_give_the_same_rankings_as_large_ones() {
    let (x, y, xt) = (rows(14, 2, 7, 1000), rows(14, 3, 8, 1000), rows(5, 2, 9, 1000));
    let pool = rows(30, 3, 10, 1000);
    let queries: Vec<Query<DenseRows>> = (0..12)
        .map(|q| Query::pooled(format!("q{q}"), q % 5, (0..30).filter(|i| (i + q) % 3 != 0).collect(), Some(q % 7)))
        .collect();
    for (name, model) in models(&x, &y) {
        let big = PerQueryDecoder::new().rank_all(model.as_ref(), &xt, Some(&pool), queries.clone()).unwrap();
        for budget in [8, 100, 1000, 5000] {
            let small = PerQueryDecoder::new()
                .memory_budget(budget)
                .rank_all(model.as_ref(), &xt, Some(&pool), queries.clone())
                .unwrap();
            for (a, b) in big.iter().zip(&small) {
                assert_eq!(a.positions, b.positions, "{name} {budget}");
                assert_eq!(a.true_rank, b.true_rank);
                for (u, v) in a.scores.iter().zip(&b.scores) {
                    assert!(close(*u, *v));
                }
            }
        }
    }
}

#[test]
fn invalid_queries_and_parameters_are_errors() {
    let (x, y) = (rows(8, 2, 1, 100), rows(8, 3, 2, 100));
    let pool = rows(5, 3, 3, 100);
    let model = Iokr::params(Gaussian::new(0.5).unwrap(), Linear).fit(&x, &y).unwrap();
    let dec = PerQueryDecoder::new();
    let run = |q: Query<DenseRows>, pool: Option<&DenseRows>| {
        dec.rank_all(&model, &x, pool, vec![q]).unwrap_err().to_string()
    };
    assert_eq!(
        run(Query::pooled("a", 0, vec![5], None), Some(&pool)),
        "query a: pool index 5 out of range (pool of 5)"
    );
    assert_eq!(
        run(Query::pooled("b", 8, vec![0], None), Some(&pool)),
        "query b: test row 8 out of range (8 test rows)"
    );
    assert_eq!(
        run(Query::pooled("c", 0, vec![0], Some(1)), Some(&pool)),
        "query c: true candidate at position 1, but 1 candidates"
    );
    assert!(run(Query::pooled("d", 0, vec![0], None), None).starts_with("query d: pool indices given"));
    assert!(run(Query::inline("e", 0, rows(2, 4, 1, 10), None), None).contains("expected 3, got 4"));
    assert!(matches!(
        dec.top_k(Some(0)).rank_all(&model, &x, Some(&pool), Vec::new()),
        Err(Error::InvalidParameter { name: "top_k", .. })
    ));
}

#[test]
fn streamed_file_equals_in_memory_queries() {
    let (x, y) = (rows(10, 2, 1, 1000), rows(10, 3, 2, 1000));
    let pool = rows(6, 3, 5, 4);
    let model = Iokr::params(Gaussian::new(0.5).unwrap(), Linear).fit(&x, &y).unwrap();
    let fmt = |i: usize| explicit(&pool, i).iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" ");
    let inline =
        format!("okr-candidates 1 inline\nquery a 2\n{}\n*{}\n{}\nquery b 5\n{}\n", fmt(4), fmt(0), fmt(3), fmt(1));
    let pooled = "okr-candidates 1 pool\n# pool indices\nquery a 2\n4 *0\n3\nquery b 5\n1\n";
    let want = PerQueryDecoder::new()
        .rank_all(
            &model,
            &x,
            Some(&pool),
            vec![Query::pooled("a", 2, vec![4, 0, 3], Some(1)), Query::pooled("b", 5, vec![1], None)],
        )
        .unwrap();
    for (text, budget) in [(inline.as_str(), 8), (pooled, 8), (inline.as_str(), 1 << 20), (pooled, 1 << 20)] {
        let reader = CandidateFileReader::<DenseRows, _>::from_reader("mem", text.as_bytes(), 3).unwrap();
        let mut got = Vec::new();
        PerQueryDecoder::new()
            .memory_budget(budget)
            .rank(&model, &x, Some(&pool), reader, |r| {
                got.push(r);
                Ok(())
            })
            .unwrap();
        assert_eq!(got.len(), 2);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((&g.id, &g.positions, g.true_rank), (&w.id, &w.positions, w.true_rank));
            for (u, v) in g.scores.iter().zip(&w.scores) {
                assert!(close(*u, *v));
            }
        }
    }
    // A parse error in the stream stops ranking with the file and line.
    let bad = "okr-candidates 1 pool\nquery a 2\n4 x\n";
    let reader = CandidateFileReader::<DenseRows, _>::from_reader("mem", bad.as_bytes(), 3).unwrap();
    let err = PerQueryDecoder::new().rank(&model, &x, Some(&pool), reader, |_| Ok(())).unwrap_err();
    assert!(err.to_string().starts_with("mem:3: expected a pool index"), "{err}");
}

#[test]
fn pool_file_reader_reads_rows_and_names_bad_lines() {
    let dir = std::env::temp_dir().join(format!("okr-pool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pool.txt");
    std::fs::write(&path, "# pool\n0 1\n\n-\n2,3\n").unwrap();
    let y: okr_kernels::LabelSets = okr_decode::per_query::read_candidate_pool(&path, 4).unwrap();
    assert_eq!((y.n_rows(), y.set(0), y.set(1), y.set(2)), (3, &[0, 1][..], &[][..], &[2, 3][..]));
    std::fs::write(&path, "0 1\n7\n").unwrap();
    let err = okr_decode::per_query::read_candidate_pool::<okr_kernels::LabelSets>(&path, 4).unwrap_err();
    assert!(err.to_string().ends_with(":2: index 7 out of range (width 4)"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Delegates to a model and counts the calls and columns the decoder asks for.
struct Counting<M> {
    inner: M,
    coefficient_calls: std::sync::atomic::AtomicUsize,
    product_columns: std::sync::atomic::AtomicUsize,
}

impl<M> Counting<M> {
    fn new(inner: M) -> Self {
        Self { inner, coefficient_calls: 0.into(), product_columns: 0.into() }
    }
    fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.coefficient_calls.swap(0, Relaxed), self.product_columns.swap(0, Relaxed))
    }
}

impl<M: SurrogateModel<DenseRows, DenseRows>> SurrogateModel<DenseRows, DenseRows> for Counting<M> {
    fn n_atoms(&self) -> usize {
        self.inner.n_atoms()
    }
    fn check_inputs(&self, x: &DenseRows) -> okr_estimators::Result<()> {
        self.inner.check_inputs(x)
    }
    fn check_outputs(&self, y: &DenseRows) -> okr_estimators::Result<()> {
        self.inner.check_outputs(y)
    }
    fn coefficients_into(
        &self,
        x: &DenseRows,
        dst: faer::MatMut<'_, f64>,
        par: faer::Par,
    ) -> okr_estimators::Result<()> {
        self.coefficient_calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.coefficients_into(x, dst, par)
    }
    fn atom_products_into(
        &self,
        c: &DenseRows,
        dst: faer::MatMut<'_, f64>,
        par: faer::Par,
    ) -> okr_estimators::Result<()> {
        self.product_columns.fetch_add(c.n_rows(), std::sync::atomic::Ordering::Relaxed);
        self.inner.atom_products_into(c, dst, par)
    }
    fn output_sq_norms(&self, y: &DenseRows) -> Vec<f64> {
        self.inner.output_sq_norms(y)
    }
    fn atom_gram(&self) -> Mat<f64> {
        self.inner.atom_gram()
    }
}

#[test]
fn coefficients_are_batched_and_pool_products_shared() {
    let (x, y, xt) = (rows(10, 2, 1, 1000), rows(10, 3, 2, 1000), rows(6, 2, 3, 1000));
    // 200 distinct pool rows; query q lists pool rows 4q..4q+20 and 4q again.
    let pool = rows(200, 3, 4, 1000);
    let model = Counting::new(Iokr::params(Gaussian::new(0.5).unwrap(), Linear).fit(&x, &y).unwrap());
    let r = model.n_atoms();
    let queries: Vec<Query<DenseRows>> =
        (0..6).map(|q| Query::pooled(format!("q{q}"), q, (q * 4..q * 4 + 20).chain([q * 4]).collect(), None)).collect();
    let rank = |budget: usize| {
        PerQueryDecoder::new().memory_budget(budget).rank_all(&model, &xt, Some(&pool), queries.clone()).unwrap()
    };
    // Large budget: the whole pool once, one coefficient call for all queries.
    let big = rank(1 << 30);
    assert_eq!(model.counts(), (1, 200));
    // 200 r entries: the pool does not fit half of it; a quarter (50 r = 500)
    // holds the scores of four queries' 84 listed candidates (4 x 84 = 336,
    // five would take 5 x 105), so 2 tiles, computing the 32 distinct pool
    // rows of queries 0-3 and the 24 of queries 4-5 once each.
    assert_eq!(r, 10);
    let mid = rank(8 * 200 * r);
    assert_eq!(model.counts(), (2, 32 + 24));
    // Tiny budget: one query per tile, its 20 distinct rows one by one.
    let tiny = rank(8);
    assert_eq!(model.counts(), (6, 6 * 20));
    for (a, (b, c)) in big.iter().zip(mid.iter().zip(&tiny)) {
        assert_eq!(a.positions, b.positions);
        assert_eq!(a.positions, c.positions);
    }
}
