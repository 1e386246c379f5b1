//! The recipe layer against oracles: IOKR from a recipe equals the closed
//! form, a resolved recipe refits to the same model body, a precomputed Gram
//! fits the same model as the features it was computed from (label sets and
//! fingerprints, every estimator that takes a Gram), and the defaults are
//! resolved as the table in `okr::defaults` says.

use faer::Mat;
use faer::linalg::solvers::Solve;
use okr::estimators::SurrogateModel;
use okr::estimators::persist::{Model, ModelInfo};
use okr::kernels::{DenseRows, Features, Gaussian, GramRows, Kernel, KernelSpec, LabelSets, Rows};
use okr::{Estimator, InputRecipe, KernelRecipe, OutputKind, OutputRecipe, Recipe, Standardize, TrainOutputs};

fn data(n: usize, seed: usize) -> (Features, LabelSets) {
    let x = Mat::from_fn(n, 4, |i, j| (((i + seed) * 7 + j * 13) % 11) as f64 / 5.0 - 1.0);
    let y = LabelSets::new(5, (0..n).map(|i| vec![(i + seed) % 5, (i * 3 + 1) % 5]).map(dedup).collect()).unwrap();
    (Features::from(DenseRows::new(x).unwrap()), y)
}

fn dedup(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v.dedup();
    v
}

fn features(gamma: f64) -> InputRecipe {
    InputRecipe::Features {
        kernel: KernelRecipe { gamma: Some(gamma), ..KernelRecipe::named("gaussian") },
        standardize: Standardize::No,
    }
}

fn max_rel(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let scale = 1.0 + b.norm_max();
    (a - b).norm_max() / scale
}

/// IOKR from a recipe: the scores `<h(x), psi(y_j)>` on the training
/// outputs are `K_test (K + n lambda I)^{-1} K_Y`, the closed form.
#[test]
fn iokr_from_a_recipe_equals_the_closed_form() {
    let (x, y) = data(20, 0);
    let (xt, _) = data(7, 3);
    let recipe = Recipe::new(Estimator::Iokr).lambda(0.05).input(features(0.3));
    let fitted = okr::fit(&recipe, &x, &TrainOutputs::Labels(&y)).unwrap();
    let s = fitted.model.surrogate().unwrap();
    let mut g = Mat::zeros(s.n_atoms(), y.n_rows());
    s.atom_products_into(&y, g.as_mut(), faer::Par::Seq).unwrap();
    let got = s.coefficients(&xt).unwrap() * &g;
    let k = Gaussian::new(0.3).unwrap();
    let mut a = k.gram(&x);
    for i in 0..20 {
        a[(i, i)] += 20.0 * 0.05;
    }
    let kt = k.gram_block(&xt, &x);
    let w = a.llt(faer::Side::Lower).unwrap().solve(kt.transpose()).transpose().to_owned();
    let gamma = fitted.recipe.output.kernel.as_ref().unwrap().gamma.unwrap();
    let want = &w * Gaussian::new(gamma).unwrap().gram(&y);
    assert!(max_rel(&got, &want) < 1e-10, "{}", max_rel(&got, &want));
}

/// Refitting the resolved recipe gives the same model body, for every
/// kernel-output estimator and output kind on features.
#[test]
fn the_resolved_recipe_refits_to_the_same_model() {
    let (x, y) = data(24, 1);
    let mut recipes = Vec::new();
    for e in Estimator::ALL.into_iter().filter(|e| e.family() == okr::Family::KernelOutput) {
        let mut r = Recipe::new(e).seed(5);
        if matches!(e, Estimator::Siokr | Estimator::Sisokr) {
            r.estimator.input_sketch = Some("uniform:12".into());
        }
        if matches!(e, Estimator::Isokr | Estimator::Sisokr) {
            r.estimator.output_sketch = Some("gaussian:6".into());
        }
        if matches!(e, Estimator::Nystroem | Estimator::NystroemReducedRank) {
            r.estimator.anchors = Some(okr::AnchorsRecipe::Count(10));
        }
        recipes.push(r);
    }
    for recipe in recipes {
        let first = okr::fit(&recipe, &x, &TrainOutputs::Labels(&y)).unwrap();
        let again = okr::fit(&first.recipe, &x, &TrainOutputs::Labels(&y)).unwrap();
        assert_eq!(first.recipe, again.recipe, "{}", recipe.estimator.name);
        let body = |f: okr::Fitted| {
            let mut s = f.into_saved(ModelInfo::new(4, 5)).unwrap();
            s.info.fit_seconds = 0.0;
            s.to_bytes().unwrap()
        };
        assert_eq!(body(first), body(again), "{}", recipe.estimator.name);
    }
}

/// The defaults of the table: the ridge of IOKR by leave-one-out, the ranks,
/// the polynomial kernel's parameters, the output width.
#[test]
fn defaults_are_resolved_as_documented() {
    let (x, y) = data(30, 2);
    let iokr = okr::fit(&Recipe::new(Estimator::Iokr), &x, &TrainOutputs::Labels(&y)).unwrap();
    assert!(okr::defaults::LOO_LAMBDAS.contains(&iokr.recipe.estimator.lambda.unwrap()));
    assert!(iokr.notes.iter().any(|n| n.contains("leave-one-out")), "{:?}", iokr.notes);
    let rr = okr::fit(&Recipe::new(Estimator::ReducedRank), &x, &TrainOutputs::Labels(&y)).unwrap();
    assert_eq!((rr.recipe.estimator.rank, rr.recipe.estimator.lambda), (Some(64), Some(1e-3)));
    let tn = okr::fit(&Recipe::new(Estimator::TraceNorm), &x, &TrainOutputs::Labels(&y)).unwrap();
    assert_eq!((tn.recipe.estimator.rank, tn.recipe.estimator.solver.as_deref()), (Some(10), Some("gd")));
    let poly = Recipe::new(Estimator::Kde)
        .input(InputRecipe::Features { kernel: KernelRecipe::named("poly"), standardize: Standardize::Auto });
    let kde = okr::fit(&poly, &x, &TrainOutputs::Labels(&y)).unwrap();
    let InputRecipe::Features { kernel, .. } = &kde.recipe.input else { panic!() };
    assert_eq!((kernel.degree, kernel.gamma, kernel.coef0), (Some(3), Some(0.25), Some(1.0)));
    let out = kde.recipe.output.kernel.unwrap();
    let sigma2 = y.mean_cardinality();
    assert!((out.gamma.unwrap() - 1.0 / (2.0 * sigma2)).abs() < 1e-15, "{out:?}");
    // Sizes beyond n are capped with one warning each.
    let mut ny = Recipe::new(Estimator::Nystroem);
    ny.estimator.anchors = Some(okr::AnchorsRecipe::Count(500));
    let f = okr::fit(&ny, &x, &TrainOutputs::Labels(&y)).unwrap();
    assert_eq!(f.warnings, vec!["anchors asks for 500 of 30 training samples: capped at 30"]);
}

/// A precomputed Gram fits the model of the features it was computed from:
/// every estimator that takes a Gram, label sets and fingerprints.
#[test]
fn gram_fits_equal_feature_fits_for_every_estimator_and_kind() {
    let (x, y) = data(26, 4);
    let (xt, _) = data(9, 7);
    let kx = KernelSpec::from(Gaussian::new(0.4).unwrap());
    let gram = GramRows::train(kx.gram(&x)).unwrap();
    let test = GramRows::test(kx.gram_block(&xt, &x), None).unwrap();
    for e in Estimator::ALL.into_iter().filter(|e| e.takes_gram()) {
        for kind in [OutputKind::Labels, OutputKind::Fingerprint] {
            let mut r = Recipe::new(e).lambda(1e-2).seed(2).input(features(0.4));
            r.output = OutputRecipe {
                kind,
                kernel: Some(KernelRecipe::named(if kind == OutputKind::Labels { "gaussian" } else { "tanimoto" })),
            };
            if matches!(e, Estimator::Siokr | Estimator::Sisokr) {
                r.estimator.input_sketch = Some("uniform:13".into());
            }
            if matches!(e, Estimator::Isokr | Estimator::Sisokr) {
                r.estimator.output_sketch = Some("uniform:8".into());
            }
            if e == Estimator::Nystroem {
                r.estimator.anchors = Some(okr::AnchorsRecipe::Count(11));
            }
            let yy = if kind == OutputKind::Labels { TrainOutputs::Labels(&y) } else { TrainOutputs::Fingerprints(&y) };
            let on_features = okr::fit(&r, &x, &yy).unwrap();
            let mut rg = r.clone();
            rg.input = InputRecipe::Gram;
            let on_gram = okr::fit_gram(&rg, &gram, &yy).unwrap();
            let a = on_features.model.surrogate().unwrap().coefficients(&xt).unwrap();
            let Model::Gram(g) = &on_gram.model else { panic!("{e}: not a Gram model") };
            let b = g.surrogate().coefficients(&test).unwrap();
            assert!(max_rel(&a, &b) < 1e-10, "{e} {kind:?}: {}", max_rel(&a, &b));
            assert_eq!(on_features.recipe.estimator, on_gram.recipe.estimator, "{e}");
        }
    }
}

/// Combined kernels work with every output kind (vectors here), and the
/// weights are recorded in the resolved recipe.
#[test]
fn combined_kernels_with_vector_outputs_record_their_weights() {
    let (x, _) = data(22, 5);
    let y = DenseRows::new(Mat::from_fn(22, 3, |i, j| ((i * 5 + j) % 7) as f64)).unwrap();
    let r = Recipe::new(Estimator::Iokr).lambda(1e-2).input(InputRecipe::Combined {
        kernels: vec![KernelRecipe::named("gaussian"), KernelRecipe::named("linear")],
        mkl: okr::Mkl::Alignf,
        weights: None,
        standardize: Standardize::No,
    });
    let r = r.output(OutputRecipe { kind: OutputKind::Vector, kernel: None });
    let f = okr::fit(&r, &x, &TrainOutputs::Vectors(&y)).unwrap();
    let InputRecipe::Combined { weights: Some(w), kernels, .. } = &f.recipe.input else { panic!() };
    assert_eq!(w.len(), 2);
    assert!(kernels[0].gamma.is_some());
    let again = okr::fit(&f.recipe, &x, &TrainOutputs::Vectors(&y)).unwrap();
    assert_eq!(again.recipe, f.recipe);
    assert!(matches!(f.model, Model::Vectors(_)));
    // A recipe of another output kind than the data is refused with the reason.
    let err = okr::fit(&Recipe::new(Estimator::Iokr), &x, &TrainOutputs::Vectors(&y)).unwrap_err();
    assert!(err.to_string().contains("asks for labels outputs, the training outputs are vector"), "{err}");
    assert_eq!(x.n_rows(), 22);
}

/// LEML and the autoencoders through the recipe layer: the model equals the
/// estimator's own builder with okr's documented defaults (the oracle), and
/// the resolved recipe refits to the same model.
#[test]
fn leml_and_autoencoders_fit_from_recipes() {
    use okr::estimators::ParamGuard;
    use okr::estimators::kae::{KaeParams, LayerKernel};
    use okr::estimators::leml::{Leml, Loss, Targets};
    use okr::estimators::{Fit, ScoreModel};

    let (x, y) = data(24, 4);
    let body = |f: okr::Fitted, labels: usize| {
        let mut s = f.into_saved(ModelInfo::new(4, labels)).unwrap();
        s.info.fit_seconds = 0.0;
        s.to_bytes().unwrap()
    };

    // LEML: rank 10 capped at the 5 labels (no warning: not asked for), lambda 0.1.
    let leml = okr::fit(&Recipe::new(Estimator::Leml).seed(3), &x, &TrainOutputs::Labels(&y)).unwrap();
    assert_eq!((leml.recipe.estimator.rank, leml.recipe.estimator.lambda), (Some(5), Some(0.1)));
    assert!(leml.warnings.is_empty(), "{:?}", leml.warnings);
    let rows = x.sparse_rows().unwrap();
    let oracle = Leml::params()
        .rank(5)
        .lambda(0.1)
        .loss(Loss::Squared)
        .max_iter(10)
        .tol(okr::defaults::LEML_TOL)
        .seed(3)
        .fit(rows.as_ref(), Targets::Full(&y))
        .unwrap();
    let Model::Leml(m) = &leml.model else { panic!("a LEML model") };
    let xs = x.sparse_rows().unwrap();
    let (a, b) = (m.scores(xs.as_ref()).unwrap(), oracle.scores(xs.as_ref()).unwrap());
    assert!(max_rel(&a, &b) < 1e-12, "{}", max_rel(&a, &b));
    // The refit's scores are identical (its history records seconds per iteration).
    let again = okr::fit(&leml.recipe, &x, &TrainOutputs::Labels(&y)).unwrap();
    assert_eq!(again.recipe, leml.recipe);
    let Model::Leml(m2) = &again.model else { panic!("a LEML model") };
    assert_eq!(m2.scores(xs.as_ref()).unwrap(), a);

    // A rank asked beyond the labels is capped with a warning.
    let mut r = Recipe::new(Estimator::Leml);
    r.estimator.rank = Some(9);
    let capped = okr::fit(&r, &x, &TrainOutputs::Labels(&y)).unwrap();
    assert_eq!(capped.recipe.estimator.rank, Some(5));
    assert!(capped.warnings[0].contains("rank 9 is more than the 5 labels"), "{:?}", capped.warnings);

    // KAE: layers / code_dim spell hidden_dims; the builder with the same
    // settings fits the same codes.
    let mut r = Recipe::new(Estimator::Kae).seed(2).input(features(0.4));
    (r.estimator.layers, r.estimator.code_dim, r.estimator.max_iter) = (Some(3), Some(2), Some(30));
    let kae = okr::fit_codes(&r, &x, &mut |_, _| {}).unwrap();
    assert_eq!(kae.recipe.estimator.hidden_dims.as_deref(), Some(&[2, 2][..]));
    let oracle = KaeParams::stacked(vec![2, 2], LayerKernel::Gaussian { gamma: 0.4 }, 1e-3)
        .max_iter(30)
        .seed(2)
        .check_ref()
        .unwrap()
        .fit(x.to_dense().as_ref())
        .unwrap();
    let Model::Kae(m) = &kae.model else { panic!("a KAE model") };
    let codes = m.encode(x.to_dense().as_ref()).unwrap();
    let want = oracle.encode(x.to_dense().as_ref()).unwrap();
    assert!(max_rel(&codes, &want) < 1e-12, "{}", max_rel(&codes, &want));
    let again = okr::fit_codes(&kae.recipe, &x, &mut |_, _| {}).unwrap();
    assert_eq!(body(kae, 0), body(again, 0));

    // K2AE takes any vector kernel, its width resolved as every estimator's.
    let mut r = Recipe::new(Estimator::K2ae)
        .input(InputRecipe::Features { kernel: KernelRecipe::named("laplacian"), standardize: Standardize::No });
    r.estimator.max_iter = Some(20);
    let k2ae = okr::fit(&r, &x, &TrainOutputs::Labels(&y)).unwrap();
    let InputRecipe::Features { kernel, .. } = &k2ae.recipe.input else { panic!() };
    assert!(kernel.gamma.unwrap() > 0.0);
    let again = okr::fit_codes(&k2ae.recipe, &x, &mut |_, _| {}).unwrap();
    assert_eq!(body(k2ae, 0), body(again, 0));

    // What cannot be fitted is refused with the reason.
    let mut r = Recipe::new(Estimator::Kae).input(features(0.4));
    r.estimator.hidden_dims = Some(vec![3]);
    r.estimator.layers = Some(2);
    assert!(okr::fit_codes(&r, &x, &mut |_, _| {}).unwrap_err().to_string().contains("not both"));
    let r = Recipe::new(Estimator::Kae)
        .input(InputRecipe::Features { kernel: KernelRecipe::named("tanimoto"), standardize: Standardize::No });
    assert!(r.check().unwrap_err().to_string().contains("KAE takes gaussian, linear or polynomial"));
    let mut r = Recipe::new(Estimator::Leml);
    r.estimator.loss = Some("hinge".into());
    assert!(r.check().unwrap_err().to_string().contains("sq, lr or sh"));
    let err = Recipe::from_json(r#"{"estimator": {"name": "kae", "hidden_dims": [2, -1]}}"#).unwrap_err();
    assert!(err.to_string().contains("invalid parameter hidden_dims = [2,-1]"), "{err}");
}

/// Warm start through the recipe layer (issue 37): `okr::fit_from` (and
/// `okr::fit_codes_from`) with `max_iter = k` on a `k`-iteration model
/// equals one fit of `2k` iterations, for trace norm (gd, als; label sets and
/// vectors), LEML and KAE / K2AE; other estimators and models of another
/// estimator are refused with the reason.
#[test]
fn fit_from_continues_every_iterative_estimator() {
    let (x, y) = data(24, 5);
    let labels = TrainOutputs::Labels(&y);
    let vecs = DenseRows::new(Mat::from_fn(24, 3, |i, j| ((i * 5 + j * 7) % 9) as f64 / 4.0)).unwrap();
    let vectors = TrainOutputs::Vectors(&vecs);
    let body = |f: &okr::Fitted, width: usize| {
        let mut s = f.clone().into_saved(ModelInfo::new(4, width)).unwrap().with_recipe(None);
        s.info.fit_seconds = 0.0;
        s.to_bytes().unwrap()
    };
    let factors = |f: &okr::Fitted| match &f.model {
        Model::TraceNorm(m) => (m.m().to_owned(), m.n().to_owned(), m.n_iter(), m.objective()),
        Model::Vectors(okr::estimators::persist::OutputModel::TraceNorm(m)) => {
            (m.m().to_owned(), m.n().to_owned(), m.n_iter(), m.objective())
        }
        _ => panic!("a trace-norm model"),
    };
    let with_iter = |r: &Recipe, k: usize| {
        let mut r = r.clone();
        r.estimator.max_iter = Some(k);
        r
    };
    let k = 6;
    for solver in ["gd", "als"] {
        let mut r = Recipe::new(Estimator::TraceNorm).lambda(0.01).seed(4).input(features(0.3));
        (r.estimator.rank, r.estimator.solver) = (Some(3), Some(solver.into()));
        for y in [&labels, &vectors] {
            let mut r = r.clone();
            r.output = OutputRecipe { kind: y.kind(), kernel: None };
            let once = okr::fit(&with_iter(&r, 2 * k), &x, y).unwrap();
            let half = okr::fit(&with_iter(&r, k), &x, y).unwrap();
            let twice = okr::fit_from(&with_iter(&r, k), &half.model, &x, y).unwrap();
            // The factors and counts (the model files differ: they record max_iter).
            assert_eq!(factors(&twice), factors(&once), "trace norm {solver} {:?}", y.kind());
        }
    }
    let r = Recipe::new(Estimator::Leml).seed(3);
    let once = okr::fit(&with_iter(&r, 2 * k), &x, &labels).unwrap();
    let half = okr::fit(&with_iter(&r, k), &x, &labels).unwrap();
    let twice = okr::fit_from(&with_iter(&r, k), &half.model, &x, &labels).unwrap();
    let (Model::Leml(a), Model::Leml(b)) = (&once.model, &twice.model) else { panic!("LEML models") };
    assert_eq!((a.w(), a.h()), (b.w(), b.h()));
    for name in [Estimator::Kae, Estimator::K2ae] {
        let r = Recipe::new(name).seed(2).input(features(0.4));
        let once = okr::fit_codes(&with_iter(&r, 2 * k), &x, &mut |_, _| {}).unwrap();
        let half = okr::fit_codes(&with_iter(&r, k), &x, &mut |_, _| {}).unwrap();
        let twice = okr::fit_codes_from(&with_iter(&r, k), &half.model, &x, &mut |_, _| {}).unwrap();
        assert_eq!(body(&twice, 0), body(&once, 0), "{name}");
    }
    // Refusals: a non-iterative estimator, a model of another estimator.
    let iokr = okr::fit(&Recipe::new(Estimator::Iokr).lambda(0.1).input(features(0.3)), &x, &labels).unwrap();
    let err = okr::fit_from(&Recipe::new(Estimator::Iokr).lambda(0.1), &iokr.model, &x, &labels).unwrap_err();
    assert!(err.to_string().contains("is not iterative"), "{err}");
    let err = okr::fit_from(&with_iter(&r, k), &iokr.model, &x, &labels).unwrap_err();
    assert!(err.to_string().contains("cannot continue a iokr model"), "{err}");
}

/// Sample weights through the recipe layer: for every estimator with a
/// weighted fit, `fit_weighted` on features equals the estimator's
/// `fit_weighted` on the resolved spec, `fit_gram_weighted` on the Gram
/// equals it, integer weights equal repeated rows (IOKR), the weights stay
/// out of the resolved recipe, and the others refuse weights.
#[test]
fn sample_weights_through_the_recipe_layer() {
    let (x, y) = data(26, 4);
    let (xt, _) = data(9, 7);
    let w: Vec<f64> = (0..26).map(|i| 0.5 + (i % 3) as f64).collect();
    let kx = KernelSpec::from(Gaussian::new(0.4).unwrap());
    let gram = GramRows::train(kx.gram(&x)).unwrap();
    let test = GramRows::test(kx.gram_block(&xt, &x), None).unwrap();
    let yy = TrainOutputs::Labels(&y);
    for e in Estimator::ALL {
        let mut r = Recipe::new(e).lambda(1e-2).seed(2).input(features(0.4));
        if matches!(e, Estimator::Siokr | Estimator::Sisokr) {
            r.estimator.input_sketch = Some("uniform:13".into());
        }
        if matches!(e, Estimator::Isokr | Estimator::Sisokr) {
            r.estimator.output_sketch = Some("uniform:8".into());
        }
        if e == Estimator::Nystroem {
            r.estimator.anchors = Some(okr::AnchorsRecipe::Count(11));
        }
        if !e.takes_sample_weight() {
            // The recipe of the catalog's defaults (LEML and the autoencoders take no input kernel).
            let err = okr::fit_weighted(&Recipe::new(e), &x, &yy, &w).unwrap_err().to_string();
            assert!(err.contains("has no weighted fit"), "{e}: {err}");
            continue;
        }
        let weighted = okr::fit_weighted(&r, &x, &yy, &w).unwrap();
        let plain = okr::fit(&r, &x, &yy).unwrap();
        assert_eq!(weighted.recipe, plain.recipe, "{e}: the weights are not part of the recipe");
        let a = weighted.model.surrogate().unwrap().coefficients(&xt).unwrap();
        let b = plain.model.surrogate().unwrap().coefficients(&xt).unwrap();
        assert!(max_rel(&a, &b) > 1e-6, "{e}: weights ignored");
        let mut rg = r.clone();
        rg.input = InputRecipe::Gram;
        let on_gram = okr::fit_gram_weighted(&rg, &gram, &yy, &w).unwrap();
        let Model::Gram(g) = &on_gram.model else { panic!("{e}: not a Gram model") };
        let c = g.surrogate().coefficients(&test).unwrap();
        assert!(max_rel(&a, &c) < 1e-10, "{e}: {}", max_rel(&a, &c));
        let bad = okr::fit_weighted(&r, &x, &yy, &w[..25]).unwrap_err().to_string();
        assert!(bad.contains("number of sample weights: expected 26, got 25"), "{bad}");
    }
    // Integer weights: the repeated rows, through the recipe.
    let iw: Vec<f64> = (0..26).map(|i| (1 + i % 3) as f64).collect();
    let rows: Vec<usize> = (0..26).flat_map(|i| std::iter::repeat_n(i, 1 + i % 3)).collect();
    // Given widths: the data-dependent defaults (here the output width, the mean
    // number of labels) are computed on the rows, unweighted.
    let mut r = Recipe::new(Estimator::Iokr).lambda(1e-2).input(features(0.4));
    r.output.kernel = Some(KernelRecipe { gamma: Some(0.3), ..KernelRecipe::named("gaussian") });
    let weighted = okr::fit_weighted(&r, &x, &yy, &iw).unwrap();
    let yr = y.select(&rows);
    let repeated = okr::fit(&r, &x.select(&rows), &TrainOutputs::Labels(&yr)).unwrap();
    let (a, b) = (label_scores(&weighted.model, &xt, &y), label_scores(&repeated.model, &xt, &y));
    assert!(max_rel(&a, &b) < 1e-10, "{}", max_rel(&a, &b));
    // IOKR on label sets without lambda: the default, with a warning (its leave-one-out is unweighted).
    let fitted = okr::fit_weighted(&Recipe::new(Estimator::Iokr).input(features(0.4)), &x, &yy, &w).unwrap();
    assert_eq!(fitted.recipe.estimator.lambda, Some(okr::defaults::LAMBDA));
    assert!(fitted.warnings.iter().any(|m| m.contains("leave-one-out choice of lambda is unweighted")));
}

/// `<h(x), psi(y_j)>` of a label-set model on the test rows `xt`.
fn label_scores(model: &Model, xt: &Features, y: &LabelSets) -> Mat<f64> {
    let s = model.surrogate().unwrap();
    let mut g = Mat::zeros(s.n_atoms(), y.n_rows());
    s.atom_products_into(y, g.as_mut(), faer::Par::Seq).unwrap();
    s.coefficients(xt).unwrap() * g
}
