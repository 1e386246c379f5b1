//! The subcommands.

mod data;
mod eval;
mod fit;
mod gen_data;
mod info;
mod kae;
mod outputs;
mod predict;
mod rank;
mod render;
mod scores;
mod tune;

use std::borrow::Cow;

use anyhow::{Result, bail};
use faer::Mat;
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::persist::SavedModel;
use okr_estimators::{KernelExpansion, SurrogateModel};
use okr_eval::{Dataset, Features};
use okr_kernels::{CsrRows, LabelSets, Rows};

use crate::cli::{Cli, Command};
use crate::model::{default_candidates, inputs, is_autoencoder, shape};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Fit(mut a) => {
            data::resolve_fit(&mut a)?;
            fit::run(&a)
        }
        Command::Tune(mut a) => {
            if a.fit.output_kind != crate::cli::OutputKindFlag::Labels || a.fit.output_file.outputs.is_some() {
                bail!("okr tune fits label sets only: use okr fit for --output-kind fingerprint or vector");
            }
            data::resolve_fit(&mut a.fit)?;
            tune::run(&a)
        }
        Command::Predict(a) => predict::run(&a),
        Command::Info(a) => info::run(&a),
        Command::Rank(a) => rank::run(&a),
        Command::Eval(mut a) => {
            data::resolve_eval(&mut a)?;
            eval::run(&a)
        }
        Command::Data(c) => data::run(&c),
        Command::Encode(a) => kae::encode(&a),
        Command::Gen(a) => gen_data::run(&a),
    }
}

/// Loads what `predict` and `eval` share, given the loaded model `mf` of
/// file `model`: the data file read with the model's widths, the candidates (a file, or the model's distinct
/// training outputs), and the decoder with the memory budget. The data file
/// may hold features only unless `need_labels` (evaluation).
pub fn load_for_decoding(
    mf: SavedModel,
    model: &std::path::Path,
    data_path: &std::path::Path,
    data_args: &crate::cli::DataArgs,
    decode: &crate::cli::DecodeArgs,
    need_labels: bool,
) -> Result<(SavedModel, Dataset, LabelSets, CandidateDecoder)> {
    crate::config::set_threads(decode.threads)?;
    if is_autoencoder(&mf.model) {
        anyhow::bail!(
            "{} is a {} model (an autoencoder): use `okr encode`, not predict / eval",
            model.display(),
            mf.model.name()
        );
    }
    let input = crate::config::read_for_model(data_path, data_args, shape(&mf))?;
    if need_labels && input.labels == okr_eval::LabelColumns::Absent {
        bail!(
            "{}: has features only, no label columns to evaluate against (the model has {} labels)",
            data_path.display(),
            mf.info.n_labels
        );
    }
    let data = input.data;
    let candidates = match &decode.candidates {
        Some(p) => crate::config::read_candidates(p, mf.info.n_labels)?,
        None => default_candidates(&mf),
    };
    let decoder =
        CandidateDecoder::new().memory_budget(decode.memory_budget.saturating_mul(1 << 20)).precision(decode.precision);
    Ok((mf, data, candidates, decoder))
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
    /// Wall-clock seconds of coefficients + decoding (metrics excluded).
    pub decode_seconds: f64,
}

/// Sparse inputs for the label-score models (LEML, BR, CPLST).
pub(crate) fn sparse_inputs(data: &Dataset) -> Result<Cow<'_, CsrRows>> {
    Ok(match &data.x {
        Features::Sparse(x) => Cow::Borrowed(x),
        Features::Dense(x) => Cow::Owned(CsrRows::from_dense(x.as_mat())?),
    })
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

/// Decodes `data` with the model, with the [`Extras`] asked for.
pub fn predict_dataset(
    mf: &SavedModel,
    data: &Dataset,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    extras: Extras,
) -> Result<Prediction> {
    let x = inputs(mf, data)?;
    match mf.model.surrogate() {
        Some(m) => predict_with(m, x.as_ref(), data, candidates, decoder, extras),
        None if is_autoencoder(&mf.model) => bail!("{} is an autoencoder: use `okr encode`", mf.model.name()),
        None => bail!("{} is a label-score model: it does not decode candidates", mf.model.name()),
    }
}

fn predict_with<M>(
    model: &M,
    x: &Features,
    data: &Dataset,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    extras: Extras,
) -> Result<Prediction>
where
    M: KernelExpansion<Features, LabelSets> + ?Sized,
{
    let start = std::time::Instant::now();
    if extras == Extras::None {
        let decoded = decoder.decode(model, x, candidates)?;
        let decode_seconds = start.elapsed().as_secs_f64();
        return Ok(Prediction { decoded, label_scores: None, rkhs_sq_errors: None, decode_seconds });
    }
    // One coefficient matrix serves decoding, label scores and RKHS errors.
    let coef = model.coefficients(x)?;
    let mut g = Mat::zeros(model.n_atoms(), candidates.n_rows());
    model.atom_products_into(candidates, g.as_mut(), faer::Par::rayon(0))?;
    let norms = model.output_sq_norms(candidates);
    let decoded = decoder.decode_matrices(coef.as_ref(), g.as_ref(), &norms)?;
    let decode_seconds = start.elapsed().as_secs_f64();
    let errors = match extras {
        Extras::ScoresAndErrors => Some(model.rkhs_sq_errors_from(coef.as_ref(), &data.y)?),
        _ => None,
    };
    let atoms = model.atoms();
    let indicator = atoms.outputs.to_indicator();
    let label_scores = match atoms.weights {
        None => &coef * &indicator,
        Some(b) => &coef * (b * &indicator),
    };
    Ok(Prediction { decoded, label_scores: Some(label_scores), rkhs_sq_errors: errors, decode_seconds })
}
