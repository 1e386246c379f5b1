//! The Rust example of the repository's README, as a function the tests run
//! on a dense and a sparse data set (`tests/readme.rs` also checks that the
//! README shows exactly this code), and as `cargo run -p okr-examples
//! --example readme` in a folder holding `bibtex-train.arff` and
//! `bibtex-test.arff`.
//!
//! The crate depends on okr-estimators, okr-decode and okr-eval only: the
//! kernels, rows types and matrix types come from okr-estimators'
//! re-exports.

use std::error::Error;

/// Fits IOKR on `bibtex-train.arff` in the current folder, decodes
/// `bibtex-test.arff` against the distinct training label sets and prints
/// the example-based F1.
///
/// # Errors
/// A missing or malformed file, or an estimator or decoder error.
pub fn readme_example() -> Result<(), Box<dyn Error>> {
    // README begin
    use okr_decode::CandidateDecoder;
    use okr_estimators::{Fit, Gaussian, Iokr, Rows};
    use okr_eval::{f1_samples, read_arff};

    // Dense (CSV, dense ARFF) and sparse (svmlight, sparse ARFF) files alike.
    let train = read_arff("bibtex-train.arff", 159)?;
    let test = read_arff("bibtex-test.arff", 159)?;
    let model =
        Iokr::params(Gaussian::new(4.6e-3)?, Gaussian::from_sigma2(2.4)?).lambda(1e-5).fit(&train.x, &train.y)?;
    let (candidates, _) = train.y.unique();
    let decoded = CandidateDecoder::new().decode(&model, &test.x, &candidates)?;
    let predicted = candidates.select(&decoded.best());
    println!("F1 = {:.3}", f1_samples(&test.y, &predicted)?);
    // README end
    Ok(())
}

/// What the two user programs below report, for their tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Example-based F1 (SISOKR) or precision@1 in percent (LEML).
    pub score: f64,
    /// Precision@3 and @5 in percent (LEML), empty otherwise.
    pub more: Vec<f64>,
    /// Training rows.
    pub n_train: usize,
}

/// SISOKR at scale: IOKR with a uniform input sketch of `m_in` training
/// rows and a Gaussian output sketch of `m_out` dimensions (Ahmad et al.
/// 2023), so that no `n x n` matrix is formed; the input width is the
/// median heuristic, and decoding runs in tiles under the memory budget.
/// `cargo run --release -p okr-examples --example sisokr -- TRAIN TEST N_LABELS`.
///
/// # Errors
/// A missing or malformed file, or an estimator or decoder error.
pub fn sisokr_example(
    train: &str,
    test: &str,
    n_labels: usize,
    m_in: usize,
    m_out: usize,
) -> Result<Summary, Box<dyn Error>> {
    use okr_decode::CandidateDecoder;
    use okr_estimators::kernels::median_sq_distance;
    use okr_estimators::sketch::{SketchKind, SketchSpec};
    use okr_estimators::{Fit, Gaussian, Rows, SketchedIokr};
    use okr_eval::{f1_samples, read_arff};

    let train = read_arff(train, n_labels)?;
    let test = read_arff(test, n_labels)?;
    let n = train.y.n_rows();
    let gamma = 1.0 / (2.0 * median_sq_distance(&train.x, 2000).max(f64::MIN_POSITIVE));
    let model =
        SketchedIokr::params(Gaussian::new(gamma)?, Gaussian::from_sigma2(train.y.mean_cardinality().max(1.0))?)
            .lambda(1e-5)
            .input_sketch(Some(SketchSpec::new(SketchKind::Uniform, m_in.min(n))))
            .output_sketch(Some(SketchSpec::new(SketchKind::Gaussian, m_out.min(n))))
            .seed(0)
            .fit(&train.x, &train.y)?;
    let candidates = model.distinct_outputs().clone();
    let decoded = CandidateDecoder::new().memory_budget(256 << 20).decode(&model, &test.x, &candidates)?;
    let f1 = f1_samples(&test.y, &candidates.select(&decoded.best()))?;
    println!("SISOKR ({m_in} input rows, {m_out} output dims) on {n} rows: F1 = {:.3}", f1);
    Ok(Summary { score: f1, more: Vec::new(), n_train: n })
}

/// LEML with missing labels (Yu et al. 2014): only a seeded `observed`
/// fraction of the training label matrix is seen (the rest is unknown, not
/// negative); prints precision@1/3/5 of the label scores on the test file.
/// `cargo run --release -p okr-examples --example leml_missing -- TRAIN TEST N_LABELS FRACTION`.
///
/// # Errors
/// A missing or malformed file, or an estimator error.
pub fn leml_missing_labels(train: &str, test: &str, n_labels: usize, observed: f64) -> Result<Summary, Box<dyn Error>> {
    use okr_estimators::leml::{Leml, Loss, PartialLabels, Targets};
    use okr_estimators::{Fit, Rows, ScoreModel};
    use okr_eval::{precision_at_k, read_arff};

    let train = read_arff(train, n_labels)?;
    let test = read_arff(test, n_labels)?;
    let x = train.x.to_sparse_rows()?;
    let partial = PartialLabels::sample(&train.y, observed, -1.0, 7)?;
    let model = Leml::params()
        .rank(n_labels.min(32))
        .lambda(1.0)
        .loss(Loss::Squared)
        .max_iter(10)
        .seed(0)
        .fit(&x, Targets::Partial(&partial))?;
    let scores = model.scores(&test.x.to_sparse_rows()?)?;
    let p: Vec<f64> = [1, 3, 5]
        .iter()
        .map(|&k| precision_at_k(scores.as_ref(), &test.y, k.min(n_labels)).map(|v| 100.0 * v))
        .collect::<Result<_, _>>()?;
    println!(
        "LEML, {:.0}% of the labels observed: P@1 {:.1}, P@3 {:.1}, P@5 {:.1}",
        100.0 * observed,
        p[0],
        p[1],
        p[2]
    );
    Ok(Summary { score: p[0], more: p[1..].to_vec(), n_train: train.y.n_rows() })
}
