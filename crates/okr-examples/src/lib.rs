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
