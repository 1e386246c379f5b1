//! Retrieval scoring for model selection (`okr::tune` with
//! [`Scoring::Top`] / [`Scoring::MeanRank`]) against a brute force: the
//! same folds refitted with `okr::fit`, every query's candidates scored
//! `k(c, c) - 2 <h(x), psi(c)>` pair by pair, the pessimistic rank of the true
//! candidate counted, top-k and mean rank averaged per fold.

use faer::Mat;
use okr::decode::per_query::Query;
use okr::estimators::SurrogateModel;
use okr::eval::KFold;
use okr::kernels::{DenseRows, Features, Gaussian, GramRows, Kernel, KernelSpec, LabelSets, Rows};
use okr::tune::{Cv, Scoring, TuneQueries, TuneRequest};
use okr::{Estimator, InputRecipe, KernelRecipe, OutputKind, OutputRecipe, Recipe, Standardize, TrainOutputs};

const N: usize = 36;
const C: f64 = 0.8;
const SEED: u64 = 4;

fn features(n: usize) -> Features {
    let x = Mat::from_fn(n, 3, |i, j| ((i as f64) * 0.61 + j as f64 * 1.7).sin());
    Features::from(DenseRows::new(x).unwrap())
}

/// The labels of subset `s` of 5 labels (bits of `s`).
fn subset(s: usize) -> Vec<usize> {
    (0..5).filter(|b| s >> b & 1 == 1).collect()
}

/// Label sets that depend on the inputs.
fn outputs(x: &Features) -> LabelSets {
    let d = x.to_dense();
    let sets = (0..x.n_rows()).map(|i| (0..5).filter(|&j| d[(i, j % 3)] * (j as f64 + 1.0) > -0.3).collect()).collect();
    LabelSets::new(5, sets).unwrap()
}

/// Per training row a query of 4 distinct candidates: its own set (at
/// position `i % 4`) and three other non-empty subsets.
fn queries(y: &LabelSets) -> Vec<Query<LabelSets>> {
    (0..y.n_rows())
        .map(|i| {
            let own = y.set(i).to_vec();
            let mut others = (1..32).map(subset).filter(|s| *s != own);
            let mut cands: Vec<Vec<usize>> = (0..3).map(|t| others.nth((i * 7 + t * 3) % 8).unwrap()).collect();
            let truth = i % 4;
            cands.insert(truth, own);
            Query::inline(format!("q{i}"), i, LabelSets::new(5, cands).unwrap(), Some(truth))
        })
        .collect()
}

fn recipe(e: Estimator) -> Recipe {
    let out = KernelRecipe { gamma: Some(0.3), ..KernelRecipe::named("gaussian") };
    let mut r = Recipe::new(e).seed(SEED).output(OutputRecipe { kind: OutputKind::Fingerprint, kernel: Some(out) });
    r.input = InputRecipe::Features { kernel: KernelRecipe::named("gaussian"), standardize: Standardize::No };
    if e == Estimator::ReducedRank {
        r.estimator.rank = Some(3);
    }
    r
}

/// The brute force: per fold and ridge, the pessimistic true ranks of the
/// fold's queries under the model `okr::fit` fits on the fold's rows.
fn brute_force_ranks(
    e: Estimator,
    x: &Features,
    y: &LabelSets,
    qs: &[Query<LabelSets>],
    gamma: f64,
    lambda: f64,
) -> Vec<Vec<usize>> {
    let folds = KFold::new(3).shuffle(SEED).split(N).unwrap();
    let mut r = recipe(e).lambda(lambda);
    r.input = InputRecipe::Features {
        kernel: KernelRecipe { gamma: Some(gamma), ..KernelRecipe::named("gaussian") },
        standardize: Standardize::No,
    };
    let ky = KernelSpec::from(Gaussian::new(0.3).unwrap());
    folds
        .iter()
        .map(|(tr, va)| {
            let fitted = okr::fit(&r, &x.select(tr), &TrainOutputs::Fingerprints(&y.select(tr))).unwrap();
            let m = fitted.model.surrogate().unwrap();
            let coef = m.coefficients(&x.select(va)).unwrap();
            let mut ranks = Vec::new();
            for (p, &row) in va.iter().enumerate() {
                let q = &qs[row];
                let okr::decode::per_query::CandidateList::Inline(cands) = &q.candidates else { panic!() };
                let mut g = Mat::zeros(m.n_atoms(), cands.n_rows());
                m.atom_products_into(cands, g.as_mut(), faer::Par::Seq).unwrap();
                let kc = ky.gram(cands);
                let scores: Vec<f64> = (0..cands.n_rows())
                    .map(|c| kc[(c, c)] - 2.0 * (0..m.n_atoms()).map(|j| coef[(p, j)] * g[(j, c)]).sum::<f64>())
                    .collect();
                let t = scores[q.truth.unwrap()];
                ranks.push(scores.iter().filter(|&&s| s <= t).count());
            }
            ranks
        })
        .collect()
}

#[test]
fn retrieval_scores_equal_a_brute_force_over_the_folds() {
    let x = features(N);
    let y = outputs(&x);
    let qs = queries(&y);
    let median = okr::estimators::select::search_median(&x, okr::kernels::MEDIAN_SAMPLE_ROWS).unwrap();
    let lambdas = vec![1e-3, 1e-1];
    for e in [Estimator::Iokr, Estimator::ReducedRank] {
        let r = recipe(e);
        let brute: Vec<Vec<Vec<usize>>> =
            lambdas.iter().map(|&l| brute_force_ranks(e, &x, &y, &qs, C / median, l)).collect();
        for scoring in [Scoring::Top(1), Scoring::Top(2), Scoring::MeanRank] {
            let req = TuneRequest {
                recipe: &r,
                cv: Cv::KFold(3),
                lambdas: Some(lambdas.clone()),
                widths: Some(vec![C]),
                groups: None,
                output_gammas: None,
                scoring,
                queries: Some(TuneQueries { queries: &qs, pool: None }),
            };
            let tuned = okr::tune::tune(&req, &x, &TrainOutputs::Fingerprints(&y), &mut || {}).unwrap();
            for (li, folds) in brute.iter().enumerate() {
                for (f, ranks) in folds.iter().enumerate() {
                    let n = ranks.len() as f64;
                    let want = match scoring {
                        Scoring::Top(k) => ranks.iter().filter(|&&r| r <= k).count() as f64 / n,
                        _ => -(ranks.iter().sum::<usize>() as f64 / n),
                    };
                    let got = tuned.result.fold_scores[0][li][f];
                    assert!(
                        (got - want).abs() < 1e-12,
                        "{e} {scoring:?} lambda {} fold {f}: {got} vs {want}",
                        lambdas[li]
                    );
                }
            }
            assert_eq!(tuned.error, scoring == Scoring::MeanRank);
            // On the Gram of the same kernel: the same scores.
            let gram = GramRows::train(Gaussian::new(C / median).unwrap().gram(&x)).unwrap();
            let mut rg = r.clone();
            rg.input = InputRecipe::Gram;
            let on_gram = okr::tune::tune_gram(
                &TuneRequest { recipe: &rg, widths: None, ..req.clone() },
                &gram,
                &TrainOutputs::Fingerprints(&y),
                &mut || {},
            )
            .unwrap();
            for (a, b) in
                tuned.result.fold_scores[0].iter().flatten().zip(on_gram.result.fold_scores[0].iter().flatten())
            {
                assert!((a - b).abs() < 1e-12, "{e} {scoring:?} on the Gram: {a} vs {b}");
            }
        }
    }
}

#[test]
fn retrieval_scoring_is_refused_without_its_queries_and_with_what_it_cannot_rank() {
    let x = features(12);
    let y = outputs(&x);
    let qs = queries(&y);
    let r = recipe(Estimator::Iokr);
    let base = TuneRequest {
        recipe: &r,
        cv: Cv::KFold(3),
        lambdas: None,
        widths: None,
        groups: None,
        output_gammas: None,
        scoring: Scoring::Top(5),
        queries: None,
    };
    let err = okr::tune::check(&base).unwrap_err().to_string();
    assert!(err.contains("scoring top5 ranks per-query candidate sets"), "{err}");
    let with = TuneRequest { queries: Some(TuneQueries { queries: &qs, pool: None }), ..base.clone() };
    let err = okr::tune::check(&TuneRequest { cv: Cv::Loo, ..with.clone() }).unwrap_err().to_string();
    assert!(err.contains("give a fold count"), "{err}");
    let err = okr::tune::check(&TuneRequest { scoring: Scoring::Decoded, ..with.clone() }).unwrap_err().to_string();
    assert!(err.contains("queries apply to a retrieval scoring"), "{err}");
    // A query row beyond the training rows, and a fold without a true candidate.
    let far = vec![Query::inline("far", 40, LabelSets::new(5, vec![vec![0]]).unwrap(), Some(0))];
    let req = TuneRequest { queries: Some(TuneQueries { queries: &far, pool: None }), ..with.clone() };
    let err = okr::tune::tune(&req, &x, &TrainOutputs::Fingerprints(&y), &mut || {}).unwrap_err().to_string();
    assert!(err.contains("query far") && err.contains("a training row (< 12)"), "{err}");
    let one = vec![qs[0].clone()];
    let req = TuneRequest { queries: Some(TuneQueries { queries: &one, pool: None }), ..with };
    let err = okr::tune::tune(&req, &x, &TrainOutputs::Fingerprints(&y), &mut || {}).unwrap_err().to_string();
    assert!(err.contains("has no query that marks its true candidate"), "{err}");
    assert_eq!("top10".parse::<Scoring>().unwrap(), Scoring::Top(10));
    assert!("top0".parse::<Scoring>().is_err() && "f1".parse::<Scoring>().is_err());
}
