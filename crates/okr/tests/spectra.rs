//! Spectra as a recipe input: [`okr::fit_spectra`] fits the model
//! [`okr::fit_gram`] fits on the Gram of the probability product kernel
//! computed separately (what `okr gram` writes) with the same parameters:
//! the same coefficients on a test x train block and the same decoded
//! outputs. The recipe records every kernel parameter, replays to the same
//! model, and refuses bad parameters with one line.

use okr::decode::CandidateDecoder;
use okr::estimators::SurrogateModel;
use okr::estimators::persist::Model;
use okr::kernels::{DenseRows, GramRows, Kernel, LabelSets, PeakWeights, Ppk, Rows, Spectra, Spectrum};
use okr::{Estimator, InputRecipe, OutputKind, OutputRecipe, Recipe, SpectraKernelRecipe, TrainOutputs};

const N: usize = 24;

/// `n` spectra of 2 to 5 peaks on a grid of m/z values 0.004 apart (so
/// that peaks of different spectra overlap at widths near 0.01), with
/// precursors.
fn spectra(n: usize, seed: usize) -> Spectra {
    Spectra::new(
        (0..n)
            .map(|i| {
                let k = i + seed;
                let peaks = (0..2 + k % 4)
                    .map(|p| {
                        (100.0 + (((k * 7 + p * 11) % 13) as f64) * 0.004 + p as f64 * 25.0, 1.0 + ((k + p) % 5) as f64)
                    })
                    .collect();
                Spectrum::new(peaks).unwrap().with_precursor_mz(200.0 + (k % 6) as f64 * 0.005).unwrap()
            })
            .collect(),
    )
}

fn label_sets(n: usize) -> LabelSets {
    LabelSets::new(5, (0..n).map(|i| if i % 3 == 0 { vec![i % 5] } else { vec![i % 5, (i * 3 + 1) % 5] }).collect())
        .unwrap()
}

fn vectors(n: usize) -> DenseRows {
    DenseRows::new(faer::Mat::from_fn(n, 3, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.4)).unwrap()
}

/// The kernel recipes of the test and the same kernels built directly.
fn kernels() -> Vec<(SpectraKernelRecipe, Ppk)> {
    vec![
        (SpectraKernelRecipe::default(), Ppk::params().check().unwrap()),
        (
            SpectraKernelRecipe {
                peak_width: Some(0.005),
                peak_weights: Some("sqrt-intensity".into()),
                precursor_width: Some(0.01),
                ..SpectraKernelRecipe::default()
            },
            Ppk::params()
                .peak_width(0.005)
                .weights(PeakWeights::SqrtIntensity)
                .precursor_width(Some(0.01))
                .check()
                .unwrap(),
        ),
        (
            SpectraKernelRecipe {
                peak_weights: Some("uniform".into()),
                intensity_width: Some(0.5),
                ..SpectraKernelRecipe::default()
            },
            Ppk::params().weights(PeakWeights::Uniform).intensity_width(Some(0.5)).check().unwrap(),
        ),
    ]
}

fn spectra_recipe(e: Estimator, kind: OutputKind, kernel: SpectraKernelRecipe) -> Recipe {
    let mut r = Recipe::new(e).lambda(1e-2).seed(1).output(OutputRecipe { kind, kernel: None });
    if e == Estimator::ReducedRank {
        r.estimator.rank = Some(3);
    }
    r.input(InputRecipe::Spectra { kernel })
}

/// Coefficients on the test block to 1e-10 relative, the same top-3 candidates.
fn same_model(a: &Model, b: &Model, kt: &GramRows, what: &str) {
    let dec = CandidateDecoder::new().top_k(3);
    let (ca, cb, da, db) = match (a, b) {
        (Model::Gram(a), Model::Gram(b)) => (
            a.surrogate().coefficients(kt).unwrap(),
            b.surrogate().coefficients(kt).unwrap(),
            dec.decode(a.surrogate(), kt, a.candidates()).unwrap(),
            dec.decode(b.surrogate(), kt, b.candidates()).unwrap(),
        ),
        (Model::GramVectors(a), Model::GramVectors(b)) => (
            a.surrogate().coefficients(kt).unwrap(),
            b.surrogate().coefficients(kt).unwrap(),
            dec.decode(a.surrogate(), kt, a.candidates()).unwrap(),
            dec.decode(b.surrogate(), kt, b.candidates()).unwrap(),
        ),
        (a, b) => panic!("{what}: {} and {}", a.name(), b.name()),
    };
    let rel = (&ca - &cb).norm_max() / (1.0 + ca.norm_max());
    assert!(rel < 1e-10, "{what}: coefficients differ by {rel:e}");
    for t in 0..kt.n_rows() {
        assert_eq!(da.top(t), db.top(t), "{what}: row {t}");
    }
}

#[test]
fn fitting_spectra_equals_fitting_their_gram() {
    let (train, test) = (spectra(N, 0), spectra(7, 5));
    let (sets, vecs) = (label_sets(N), vectors(N));
    let outputs =
        [(OutputKind::Labels, TrainOutputs::Labels(&sets)), (OutputKind::Vector, TrainOutputs::Vectors(&vecs))];
    for (kernel, ppk) in kernels() {
        let gram = GramRows::train(ppk.gram(&train)).unwrap();
        let kt = GramRows::test(ppk.gram_block(&test, &train), None).unwrap();
        for e in [Estimator::Iokr, Estimator::ReducedRank] {
            for (kind, y) in &outputs {
                let what = format!("{e} {kind:?} {kernel:?}");
                let r = spectra_recipe(e, *kind, kernel.clone());
                let direct = okr::fit_spectra(&r, &train, y).unwrap_or_else(|err| panic!("{what}: {err}"));
                let on_gram = okr::fit_gram(&Recipe { input: InputRecipe::Gram, ..r.clone() }, &gram, y).unwrap();
                same_model(&direct.model, &on_gram.model, &kt, &what);
                assert_eq!(direct.recipe.estimator, on_gram.recipe.estimator, "{what}");
                assert_eq!(direct.model.gram_n_train(), Some(N));
                // Every parameter recorded, and the recorded recipe replays to the same model.
                assert_eq!(direct.recipe.input, InputRecipe::Spectra { kernel: SpectraKernelRecipe::of(&ppk) });
                let replay = Recipe::from_json(&direct.recipe.to_json_line()).unwrap();
                let again = okr::fit_spectra(&replay, &train, y).unwrap();
                same_model(&direct.model, &again.model, &kt, &format!("{what} replayed"));
                assert!(direct.notes.iter().any(|n| n.starts_with("input kernel ppk on 24 spectra")), "{what}");
            }
        }
    }
    // A different kernel gives a different model (the comparison can fail).
    let (k0, p0) = &kernels()[0];
    let p1 = kernels()[1].1;
    let y = TrainOutputs::Vectors(&vecs);
    let a = okr::fit_spectra(&spectra_recipe(Estimator::Iokr, OutputKind::Vector, k0.clone()), &train, &y).unwrap();
    let other = okr::fit_gram(
        &spectra_recipe(Estimator::Iokr, OutputKind::Vector, k0.clone()).input(InputRecipe::Gram),
        &GramRows::train(p1.gram(&train)).unwrap(),
        &y,
    )
    .unwrap();
    let kt = GramRows::test(p0.gram_block(&test, &train), None).unwrap();
    let (Model::GramVectors(a), Model::GramVectors(b)) = (&a.model, &other.model) else { panic!() };
    let diff = (a.surrogate().coefficients(&kt).unwrap() - b.surrogate().coefficients(&kt).unwrap()).norm_max();
    assert!(diff > 1e-6, "another peak width changed nothing: {diff:e}");
}

#[test]
fn spectra_recipes_parse_and_old_recipes_still_do() {
    let r = Recipe::from_json(
        r#"{"estimator": {"name": "iokr"}, "input": {"kind": "spectra", "kernel": {"peak_width": 0.02,
            "peak_weights": "uniform", "precursor_width": 0.01}}}"#,
    )
    .unwrap();
    let InputRecipe::Spectra { kernel } = &r.input else { panic!("{r:?}") };
    let ppk = kernel.ppk().unwrap();
    assert_eq!(
        (ppk.peak_width(), ppk.weights(), ppk.intensity_width(), ppk.precursor_width()),
        (0.02, PeakWeights::Uniform, None, Some(0.01))
    );
    r.check().unwrap();
    // No kernel: the kernel's defaults.
    let r = Recipe::from_json(r#"{"estimator": {"name": "iokr"}, "input": {"kind": "spectra"}}"#).unwrap();
    assert_eq!(r.input, InputRecipe::Spectra { kernel: SpectraKernelRecipe::default() });
    assert_eq!(SpectraKernelRecipe::default().ppk().unwrap(), Ppk::params().check().unwrap());
    // Recipes without spectra parse as before.
    let old = Recipe::from_json(r#"{"estimator": {"name": "kde"}, "input": {"kind": "gram"}}"#).unwrap();
    assert_eq!(old.input, InputRecipe::Gram);
    // Unknown fields are refused, in the kernel and beside it.
    for bad in [
        r#"{"estimator": {"name": "iokr"}, "input": {"kind": "spectra", "kernel": {"sigma": 0.1}}}"#,
        r#"{"estimator": {"name": "iokr"}, "input": {"kind": "spectra", "peak_width": 0.1}}"#,
    ] {
        let err = Recipe::from_json(bad).unwrap_err().to_string();
        assert!(err.contains("unknown field"), "{err}");
    }
}

#[test]
fn bad_kernel_parameters_and_estimators_are_refused_in_one_line() {
    let train = spectra(6, 0);
    let sets = label_sets(6);
    let y = TrainOutputs::Labels(&sets);
    let cases = [
        (SpectraKernelRecipe { peak_width: Some(0.0), ..Default::default() }, "peak_width"),
        (SpectraKernelRecipe { peak_width: Some(f64::NAN), ..Default::default() }, "peak_width"),
        (SpectraKernelRecipe { precursor_width: Some(-1.0), ..Default::default() }, "precursor_width"),
        (SpectraKernelRecipe { peak_weights: Some("cube".into()), ..Default::default() }, "peak_weights = cube"),
    ];
    for (kernel, want) in cases {
        let r = spectra_recipe(Estimator::Iokr, OutputKind::Labels, kernel);
        for err in [r.check().unwrap_err().to_string(), okr::fit_spectra(&r, &train, &y).unwrap_err().to_string()] {
            assert!(err.contains(want) && !err.contains('\n'), "{want}: {err}");
        }
    }
    let r = Recipe::new(Estimator::Leml).input(InputRecipe::Spectra { kernel: SpectraKernelRecipe::default() });
    let err = okr::fit_spectra(&r, &train, &y).unwrap_err().to_string();
    assert!(
        err.contains("spectra (a Gram of the probability product kernel) does not apply to estimator leml"),
        "{err}"
    );
    let r = spectra_recipe(Estimator::Iokr, OutputKind::Labels, SpectraKernelRecipe::default());
    let err = okr::fit(&r, &okr::kernels::Features::from(vectors(6)), &y).unwrap_err().to_string();
    assert!(err.contains("fit it with fit_spectra"), "{err}");
    let err = okr::fit_spectra(&Recipe::new(Estimator::Iokr), &train, &y).unwrap_err().to_string();
    assert!(err.contains("not spectra"), "{err}");
    let short = label_sets(5);
    let err = okr::fit_spectra(&r, &train, &TrainOutputs::Labels(&short)).unwrap_err().to_string();
    assert!(err.contains("training outputs"), "{err}");
}

/// Sample weights on spectra: the weighted fit of their Gram
/// (`fit_gram_weighted`), and not the unweighted one.
#[test]
fn weighted_spectra_equal_the_weighted_fit_of_their_gram() {
    let (train, test) = (spectra(N, 0), spectra(7, 5));
    let vecs = vectors(N);
    let y = TrainOutputs::Vectors(&vecs);
    let weights: Vec<f64> = (0..N).map(|i| 0.5 + (i % 4) as f64).collect();
    let (kernel, ppk) = kernels().remove(0);
    let kt = GramRows::test(ppk.gram_block(&test, &train), None).unwrap();
    let gram = GramRows::train(ppk.gram(&train)).unwrap();
    for e in [Estimator::Iokr, Estimator::ReducedRank] {
        let r = spectra_recipe(e, OutputKind::Vector, kernel.clone());
        let direct = okr::fit_spectra_weighted(&r, &train, &y, &weights).unwrap();
        let on_gram =
            okr::fit_gram_weighted(&Recipe { input: InputRecipe::Gram, ..r.clone() }, &gram, &y, &weights).unwrap();
        same_model(&direct.model, &on_gram.model, &kt, &format!("{e} weighted"));
        let unweighted = okr::fit_spectra(&r, &train, &y).unwrap();
        let (Model::GramVectors(a), Model::GramVectors(b)) = (&direct.model, &unweighted.model) else { panic!() };
        let diff = (a.surrogate().coefficients(&kt).unwrap() - b.surrogate().coefficients(&kt).unwrap()).norm_max();
        assert!(diff > 1e-6, "{e}: the weights changed nothing: {diff:e}");
    }
    let r = spectra_recipe(Estimator::Kde, OutputKind::Vector, kernel);
    let err = okr::fit_spectra_weighted(&r, &train, &y, &weights).unwrap_err().to_string();
    assert!(err.contains("no weighted fit"), "{err}");
}
