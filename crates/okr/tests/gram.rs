//! A precomputed input Gram through the recipe layer, for every output kind
//! (label sets, fingerprints, vectors, graphs, rankings) and every
//! kernel-output estimator. The oracle: the model fitted with
//! `kernel gaussian` on the features the Gram was computed from (scores to
//! 1e-10 relative, the same decoded outputs).

use faer::Mat;
use okr::decode::CandidateDecoder;
use okr::estimators::SurrogateModel;
use okr::estimators::persist::Model;
use okr::kernels::{
    DenseRows, Features, Gaussian, GramRows, Graph, Graphs, Kernel, KernelSpec, LabelSets, Rankings, Rows,
};
use okr::{
    AnchorsRecipe, Estimator, Family, InputRecipe, KernelRecipe, OutputKind, OutputRecipe, Recipe, Standardize,
    TrainOutputs,
};

const GAMMA: f64 = 0.4;
const N: usize = 28;

fn features(n: usize, seed: usize) -> Features {
    let x = Mat::from_fn(n, 4, |i, j| (((i + seed) * 7 + j * 13) % 11) as f64 / 5.0 - 1.0 + 0.01 * (i * j) as f64);
    Features::from(DenseRows::new(x).unwrap())
}

fn label_sets(n: usize) -> LabelSets {
    let sets = (0..n)
        .map(|i| {
            let mut v = vec![i % 5, (i * 3 + 1) % 5];
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    LabelSets::new(5, sets).unwrap()
}

fn vectors(n: usize) -> DenseRows {
    DenseRows::new(Mat::from_fn(n, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.4)).unwrap()
}

/// Paths of 2 to 5 nodes, every third one closed into a cycle.
fn graphs(n: usize) -> Graphs {
    Graphs::new(
        (0..n)
            .map(|i| {
                let m = 2 + i % 4;
                let mut edges: Vec<(usize, usize)> = (1..m).map(|v| (v - 1, v)).collect();
                if i % 3 == 0 {
                    edges.push((0, m - 1));
                }
                Graph::new((0..m).map(|v| ((i * v + v) % 3) as u32).collect(), &edges).unwrap()
            })
            .collect(),
    )
}

fn rankings(n: usize) -> Rankings {
    let perms = [[0, 1, 2, 3], [1, 0, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [0, 3, 1, 2]];
    Rankings::new(4, (0..n).map(|i| perms[(i * 7) % 5].to_vec()).collect()).unwrap()
}

/// A recipe for `e` on features with the Gaussian kernel of width `GAMMA`,
/// with the sizes its sketches and anchors need.
fn recipe(e: Estimator, kind: OutputKind, input_sketch: &str) -> Recipe {
    let kernel = match kind {
        OutputKind::Fingerprint => Some(KernelRecipe::named("tanimoto")),
        _ => None,
    };
    let mut r = Recipe::new(e).lambda(1e-2).seed(3).output(OutputRecipe { kind, kernel });
    r.input = InputRecipe::Features {
        kernel: KernelRecipe { gamma: Some(GAMMA), ..KernelRecipe::named("gaussian") },
        standardize: Standardize::No,
    };
    if matches!(e, Estimator::Siokr | Estimator::Sisokr) {
        r.estimator.input_sketch = Some(input_sketch.into());
    }
    if matches!(e, Estimator::Isokr | Estimator::Sisokr) {
        r.estimator.output_sketch = Some("gaussian:6".into());
    }
    if matches!(e, Estimator::Nystroem | Estimator::NystroemReducedRank) {
        r.estimator.anchors = Some(AnchorsRecipe::Count(12));
    }
    if matches!(e, Estimator::ReducedRank | Estimator::Kde | Estimator::NystroemReducedRank | Estimator::TraceNorm) {
        r.estimator.rank = Some(3);
    }
    if e == Estimator::TraceNorm {
        r.estimator.solver = Some("als".into());
    }
    r
}

/// The same scores `k(c, c) - 2 <h(x), psi(c)>` on every candidate (to
/// 1e-10 relative) and the same top-3 candidates.
fn same_decoding<Y, A, B>(a: &A, b: &B, xt: &Features, kt: &GramRows, candidates: &Y, what: &str)
where
    Y: Rows,
    A: SurrogateModel<Features, Y> + ?Sized,
    B: SurrogateModel<GramRows, Y> + ?Sized,
{
    let dec = CandidateDecoder::new().top_k(3);
    let (da, db) = (dec.decode(a, xt, candidates).unwrap(), dec.decode(b, kt, candidates).unwrap());
    assert_eq!(a.n_atoms(), b.n_atoms(), "{what}");
    let (ca, cb) = (a.coefficients(xt).unwrap(), b.coefficients(kt).unwrap());
    let rel = (&ca - &cb).norm_max() / (1.0 + ca.norm_max());
    assert!(rel < 1e-10, "{what}: coefficients differ by {rel:e}");
    for t in 0..xt.n_rows() {
        assert_eq!(da.top(t), db.top(t), "{what}: row {t}");
        for (sa, sb) in da.top_scores(t).iter().zip(db.top_scores(t)) {
            assert!((sa - sb).abs() <= 1e-10 * (1.0 + sa.abs()), "{what}: row {t} scores {sa} and {sb}");
        }
    }
}

/// Every kernel-output estimator and every output kind: the model fitted
/// on the Gram decodes as the model fitted on the features.
#[test]
fn a_gram_fits_the_model_of_its_kernel_for_every_estimator_and_output_kind() {
    let (x, xt) = (features(N, 0), features(9, 5));
    let k = KernelSpec::from(Gaussian::new(GAMMA).unwrap());
    let gram = GramRows::train(k.gram(&x)).unwrap();
    let kt = GramRows::test(k.gram_block(&xt, &x), None).unwrap();
    let (sets, vecs, graphs, ranks) = (label_sets(N), vectors(N), graphs(N), rankings(N));
    let kinds = [
        (OutputKind::Labels, TrainOutputs::Labels(&sets)),
        (OutputKind::Fingerprint, TrainOutputs::Fingerprints(&sets)),
        (OutputKind::Vector, TrainOutputs::Vectors(&vecs)),
        (OutputKind::Graph, TrainOutputs::Graphs(&graphs)),
        (OutputKind::Ranking, TrainOutputs::Rankings(&ranks)),
    ];
    let mut fitted = 0;
    for e in Estimator::ALL.into_iter().filter(|e| e.family() == Family::KernelOutput) {
        for (kind, y) in &kinds {
            let r = recipe(e, *kind, "uniform:14");
            let on_features = okr::fit(&r, &x, y).unwrap();
            let mut rg = r.clone();
            rg.input = InputRecipe::Gram;
            let on_gram = okr::fit_gram(&rg, &gram, y).unwrap_or_else(|err| panic!("{e} {kind:?}: {err}"));
            assert_eq!(on_features.recipe.estimator, on_gram.recipe.estimator, "{e} {kind:?}");
            assert_eq!(on_features.recipe.output, on_gram.recipe.output, "{e} {kind:?}");
            assert_eq!(on_gram.recipe.input, InputRecipe::Gram);
            assert_eq!(on_gram.model.name(), on_features.model.name(), "{e} {kind:?}");
            assert_eq!(on_gram.model.ranks(), on_features.model.ranks(), "{e} {kind:?}");
            assert_eq!(on_gram.model.gram_n_train(), Some(N));
            let what = format!("{e} {kind:?}");
            match (&on_features.model, &on_gram.model) {
                (f, Model::Gram(g)) => {
                    let s = f.surrogate().unwrap();
                    same_decoding(s, g.surrogate(), &xt, &kt, g.candidates(), &what);
                }
                (Model::Vectors(f), Model::GramVectors(g)) => {
                    same_decoding(f.surrogate(), g.surrogate(), &xt, &kt, g.candidates(), &what);
                }
                (Model::Graphs(f), Model::GramGraphs(g)) => {
                    same_decoding(f.surrogate(), g.surrogate(), &xt, &kt, g.candidates(), &what);
                }
                (Model::Rankings(f), Model::GramRankings(g)) => {
                    same_decoding(f.surrogate(), g.surrogate(), &xt, &kt, g.candidates(), &what);
                }
                (f, g) => panic!("{what}: a {} model on features, a {} model on the Gram", f.name(), g.name()),
            }
            fitted += 1;
        }
    }
    assert_eq!(fitted, 9 * 5);
}

/// Every input sketch reads kernel values only: sub-sampling sketches the
/// sampled Gram columns, dense sketches every column; each gives the model
/// of the features on a Gram.
#[test]
fn every_input_sketch_takes_a_gram() {
    let (x, xt) = (features(N, 1), features(7, 4));
    let k = KernelSpec::from(Gaussian::new(GAMMA).unwrap());
    let gram = GramRows::train(k.gram(&x)).unwrap();
    let kt = GramRows::test(k.gram_block(&xt, &x), None).unwrap();
    let vecs = vectors(N);
    let y = TrainOutputs::Vectors(&vecs);
    for sketch in ["uniform:12", "leverage:12", "gaussian:10", "rademacher:10", "sparse-gaussian:10", "sjlt:10:2"] {
        let r = recipe(Estimator::Sisokr, OutputKind::Vector, sketch);
        let on_features = okr::fit(&r, &x, &y).unwrap();
        let mut rg = r.clone();
        rg.input = InputRecipe::Gram;
        let on_gram = okr::fit_gram(&rg, &gram, &y).unwrap();
        let (Model::Vectors(f), Model::GramVectors(g)) = (&on_features.model, &on_gram.model) else {
            panic!("{sketch}: vector models")
        };
        same_decoding(f.surrogate(), g.surrogate(), &xt, &kt, g.candidates(), sketch);
    }
}

/// Only the estimators that need features refuse a Gram, with the reason.
#[test]
fn only_the_estimators_that_need_features_refuse_a_gram() {
    let x = features(12, 0);
    let gram = GramRows::train(Gaussian::new(GAMMA).unwrap().gram(&x)).unwrap();
    let sets = label_sets(12);
    for (e, why) in [
        (Estimator::Leml, "linear in the features"),
        (Estimator::Kae, "reconstructs the features"),
        (Estimator::K2ae, "reconstructs the features"),
    ] {
        let r = Recipe::new(e).input(InputRecipe::Gram);
        let err = okr::fit_gram(&r, &gram, &TrainOutputs::Labels(&sets)).unwrap_err().to_string();
        assert!(err.contains(&format!("does not apply to estimator {e}")) && err.contains(why), "{err}");
    }
}

/// `okr::tune` on a Gram scores the grid of the features with the Gaussian
/// input width fixed at the Gram's (`widths = [c]`, `gamma = c / median`):
/// every fold score to 1e-10, the same choice, with and without groups, for
/// IOKR's path and closed-form leave-one-out, refitted estimators and
/// vectors.
#[test]
fn tune_on_a_gram_scores_the_grid_of_the_features_at_its_width() {
    use okr::tune::{Cv, TuneRequest};
    let n = 42;
    let x = features(n, 2);
    let (sets, vecs) = (label_sets(n), vectors(n));
    let c = 0.7;
    let median = okr::estimators::select::search_median(&x, okr::kernels::MEDIAN_SAMPLE_ROWS).unwrap();
    let gram = GramRows::train(Gaussian::new(c / median).unwrap().gram(&x)).unwrap();
    let lambdas = vec![1e-4, 1e-2, 1e-1];
    let groups: Vec<u64> = (0..n as u64).map(|i| i / 3).collect();
    let cases = [
        (Estimator::Iokr, OutputKind::Labels, Cv::KFold(3), false),
        (Estimator::Iokr, OutputKind::Labels, Cv::KFold(4), true),
        (Estimator::Iokr, OutputKind::Fingerprint, Cv::Loo, false),
        (Estimator::Kde, OutputKind::Labels, Cv::KFold(3), false),
        (Estimator::Iokr, OutputKind::Vector, Cv::KFold(3), false),
        (Estimator::Nystroem, OutputKind::Vector, Cv::KFold(3), true),
    ];
    for (e, kind, cv, grouped) in cases {
        let y = match kind {
            OutputKind::Labels => TrainOutputs::Labels(&sets),
            OutputKind::Fingerprint => TrainOutputs::Fingerprints(&sets),
            _ => TrainOutputs::Vectors(&vecs),
        };
        let out = KernelRecipe { gamma: Some(0.3), ..KernelRecipe::named("gaussian") };
        let mut r = Recipe::new(e).seed(1).output(OutputRecipe { kind, kernel: Some(out) });
        r.input = InputRecipe::Features { kernel: KernelRecipe::named("gaussian"), standardize: Standardize::No };
        if e == Estimator::Kde {
            r.estimator.rank = Some(3);
        }
        if e == Estimator::Nystroem {
            r.estimator.anchors = Some(AnchorsRecipe::Count(10));
        }
        let request = |recipe, widths| TuneRequest {
            recipe,
            cv,
            lambdas: Some(lambdas.clone()),
            widths,
            groups: grouped.then_some(&groups[..]),
            output_gammas: None,
            scoring: okr::tune::Scoring::Decoded,
            queries: None,
        };
        let on_features = okr::tune::tune(&request(&r, Some(vec![c])), &x, &y, &mut || {}).unwrap();
        let mut rg = r.clone();
        rg.input = InputRecipe::Gram;
        let on_gram = okr::tune::tune_gram(&request(&rg, None), &gram, &y, &mut || {}).unwrap();
        let what = format!("{e} {kind:?} {cv:?} grouped {grouped}");
        let (a, b) = (&on_features.result.fold_scores[0], &on_gram.result.fold_scores[0]);
        assert_eq!(a.len(), b.len(), "{what}");
        for (ra, rb) in a.iter().zip(b) {
            assert_eq!(ra.len(), rb.len(), "{what}");
            for (sa, sb) in ra.iter().zip(rb) {
                assert!((sa - sb).abs() <= 1e-10 * (1.0 + sa.abs()), "{what}: {sa} vs {sb}");
            }
        }
        assert_eq!(on_gram.result.lambda(), on_features.result.lambda(), "{what}");
        assert_eq!(on_gram.refit.estimator.lambda, on_features.refit.estimator.lambda, "{what}");
        assert_eq!(on_gram.refit.input, InputRecipe::Gram);
        okr::fit_gram(&on_gram.refit, &gram, &y).unwrap();
    }
}

/// The output width searched on a Gram: each row of the grid is the search
/// at that output gamma alone, and the refit recipe carries the choice.
#[test]
fn tune_on_a_gram_searches_the_output_width() {
    use okr::tune::{Cv, TuneRequest};
    let n = 36;
    let x = features(n, 3);
    let sets = label_sets(n);
    let y = TrainOutputs::Labels(&sets);
    let gram = GramRows::train(Gaussian::new(GAMMA).unwrap().gram(&x)).unwrap();
    let mut r = Recipe::new(Estimator::ReducedRank).seed(2).input(InputRecipe::Gram);
    r.estimator.rank = Some(3);
    let gammas = vec![0.05, 0.5, 2.0];
    fn request(recipe: &Recipe, output_gammas: Option<Vec<f64>>) -> TuneRequest<'_> {
        TuneRequest {
            recipe,
            cv: Cv::KFold(3),
            lambdas: Some(vec![1e-3, 1e-1]),
            widths: None,
            groups: None,
            output_gammas,
            scoring: okr::tune::Scoring::Decoded,
            queries: None,
        }
    }
    let tuned = okr::tune::tune_gram(&request(&r, Some(gammas.clone())), &gram, &y, &mut || {}).unwrap();
    assert_eq!(tuned.result.widths, gammas);
    for (i, &g) in gammas.iter().enumerate() {
        let mut one = r.clone();
        one.output.kernel = Some(KernelRecipe { gamma: Some(g), ..KernelRecipe::named("gaussian") });
        let alone = okr::tune::tune_gram(&request(&one, None), &gram, &y, &mut || {}).unwrap();
        assert_eq!(alone.result.fold_scores[0], tuned.result.fold_scores[i], "gamma {g}");
    }
    let chosen = tuned.refit.output.kernel.as_ref().and_then(|k| k.gamma);
    assert_eq!(chosen, Some(tuned.result.c()));
    // What cannot be searched on a Gram is refused with the reason.
    let err =
        okr::tune::tune_gram(&TuneRequest { widths: Some(vec![1.0]), ..request(&r, None) }, &gram, &y, &mut || {})
            .unwrap_err();
    assert!(err.to_string().contains("widths do not apply to a precomputed Gram"), "{err}");
    let mut linear = r.clone();
    linear.output.kernel = Some(KernelRecipe::named("linear"));
    let err = okr::tune::tune_gram(&request(&linear, Some(vec![1.0])), &gram, &y, &mut || {}).unwrap_err();
    assert!(err.to_string().contains("output_gammas need an output kernel with a Gaussian width"), "{err}");
}
