//! What `okr predict` and `okr eval` share on label-set models: the test
//! inputs, the candidates, the decoder, and one decoding pass with the label
//! scores and RKHS errors computed in the same tiles.

use anyhow::{Result, bail};
use faer::Mat;
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::KernelExpansion;
use okr_estimators::persist::SavedModel;
use okr_eval::Dataset;
use okr_kernels::{LabelSets, Rows};

use crate::model::{default_candidates, inputs, is_autoencoder, shape};

/// Loads what `predict` and `eval` share, given the loaded model `mf` of
/// file `model`: the test inputs, the candidates (a file, or the model's
/// distinct training outputs), and the decoder with the memory budget. The
/// test inputs are the data file read with the model's widths, or for a
/// model fitted on a Gram the `--input-gram-test` block (and the data file,
/// when given, read for its labels only). The data file may hold features
/// only unless `need_labels` (evaluation).
pub fn load_for_decoding(
    mf: SavedModel,
    model: &std::path::Path,
    data_path: Option<&std::path::Path>,
    data_args: &crate::cli::DataArgs,
    decode: &crate::cli::DecodeArgs,
    need_labels: bool,
) -> Result<(SavedModel, TestInputs, LabelSets, CandidateDecoder)> {
    crate::config::set_threads(decode.threads)?;
    if is_autoencoder(&mf.model) {
        anyhow::bail!(
            "{} is a {} model (an autoencoder): use `okr encode`, not predict / eval",
            model.display(),
            mf.model.name()
        );
    }
    super::gram::check_test_flags(&mf.model, model, decode.input_gram_test.as_deref(), data_path)?;
    let gram = match (&mf.model, &decode.input_gram_test) {
        (okr_estimators::persist::Model::Gram(g), Some(p)) => Some(super::gram::read_test(p, g.n_train())?),
        _ => None,
    };
    let data = match (data_path, &gram) {
        (None, _) => None,
        (Some(path), Some(g)) => {
            // Labels only: the features of the file are not the model's inputs
            // (nothing but its rows when the truth comes from another file).
            let labels = if need_labels { mf.info.n_labels } else { 0 };
            let args = crate::cli::DataArgs { label_count: Some(labels), ..data_args.clone() };
            let data = crate::config::read_data(path, &args, None)?;
            if data.n_samples() != g.n_rows() {
                bail!(
                    "{}: {} rows for the {} rows of the --input-gram-test Gram",
                    path.display(),
                    data.n_samples(),
                    g.n_rows()
                );
            }
            Some(data)
        }
        (Some(path), None) => {
            let input = crate::config::read_for_model(path, data_args, shape(&mf))?;
            if need_labels && input.labels == okr_eval::LabelColumns::Absent {
                bail!(
                    "{}: has features only, no label columns to evaluate against (the model has {} labels)",
                    path.display(),
                    mf.info.n_labels
                );
            }
            Some(input.data)
        }
    };
    let candidates = match &decode.candidates {
        Some(p) => okr_eval::read_label_sets(p, mf.info.n_labels)?,
        None => default_candidates(&mf),
    };
    Ok((mf, TestInputs { data, gram }, candidates, decode.decoder()))
}

/// The test inputs of `predict` and `eval`: the data file (features, or
/// only labels for a Gram model) and the test x train Gram of a Gram model.
pub struct TestInputs {
    /// The data file, when one was given.
    pub data: Option<Dataset>,
    /// The `--input-gram-test` block of a model fitted on a Gram.
    pub gram: Option<okr_kernels::GramRows>,
}

/// What a decoding pass produces for `predict` and `eval`.
pub struct Prediction {
    /// Ranked candidates per test point.
    pub decoded: Decoded,
    /// Label scores `(n_test, n_labels)`, when asked for: `h(x)` read with a
    /// linear output kernel, `sum_i w_i(x) y_i` over the distinct training
    /// outputs, with `w(x) = C B` the weights `h(x)` puts on them.
    pub label_scores: Option<Mat<f64>>,
    /// `||h(x) - psi(y)||^2` per test point, when true outputs were given.
    pub rkhs_sq_errors: Option<Vec<f64>>,
    /// Wall-clock seconds of coefficients + decoding, with the label scores
    /// and RKHS errors computed in the same tiles (other metrics excluded).
    pub decode_seconds: f64,
}

/// What a decoding pass computes besides the ranked candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extras {
    /// Nothing more (`okr predict`).
    None,
    /// Label scores (`okr predict --scores`).
    Scores,
    /// Label scores and squared RKHS errors against the file's labels (`okr eval`).
    ScoresAndErrors,
}

/// Decodes the test inputs with the model, with the [`Extras`] asked for
/// (`ScoresAndErrors` needs the data file's labels).
pub fn predict_dataset(
    mf: &SavedModel,
    test: &TestInputs,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    extras: Extras,
) -> Result<Prediction> {
    let y = test.data.as_ref().map(|d| &d.y);
    if let (Some(m), Some(g)) = (mf.model.gram_surrogate(), &test.gram) {
        return predict_with(m, g, y, candidates, decoder, extras);
    }
    let Some(data) = &test.data else { bail!("no test inputs: give --input (or --input-gram-test for a Gram model)") };
    let x = inputs(mf, data)?;
    match mf.model.surrogate() {
        Some(m) => predict_with(m, x.as_ref(), y, candidates, decoder, extras),
        None if is_autoencoder(&mf.model) => bail!("{} is an autoencoder: use `okr encode`", mf.model.name()),
        None => bail!("{} is a label-score model: it does not decode candidates", mf.model.name()),
    }
}

fn predict_with<X, M>(
    model: &M,
    x: &X,
    y: Option<&LabelSets>,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    extras: Extras,
) -> Result<Prediction>
where
    X: Rows,
    M: KernelExpansion<X, LabelSets> + ?Sized,
{
    let start = std::time::Instant::now();
    if extras == Extras::None {
        let decoded = decoder.decode(model, x, candidates)?;
        let decode_seconds = start.elapsed().as_secs_f64();
        return Ok(Prediction { decoded, label_scores: None, rkhs_sq_errors: None, decode_seconds });
    }
    // Each test tile's coefficients serve decoding, label scores and RKHS
    // errors, under the decoder's memory budget.
    let atoms = model.atoms();
    let indicator = atoms.outputs.to_indicator();
    let readout = match atoms.weights {
        None => indicator,
        Some(b) => b * &indicator,
    };
    let truth = if extras == Extras::ScoresAndErrors { y } else { None };
    let mut label_scores = Mat::zeros(x.n_rows(), readout.ncols());
    let (decoded, errors) = decoder.decode_tiles(model, x, candidates, truth, |rows, coef| {
        label_scores.as_mut().subrows_mut(rows.start, rows.len()).copy_from(coef * &readout);
        Ok(())
    })?;
    let decode_seconds = start.elapsed().as_secs_f64();
    Ok(Prediction { decoded, label_scores: Some(label_scores), rkhs_sq_errors: errors, decode_seconds })
}
