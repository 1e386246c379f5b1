//! The subcommands.

mod eval;
mod fit;
mod gen_data;
mod predict;

use anyhow::Result;
use faer::Mat;
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::{Iokr, SurrogateModel};
use okr_eval::{Dataset, Features};
use okr_kernels::{Kernel, KernelSpec, LabelSets, Rows};

use crate::cli::{Cli, Command};
use crate::config::Shape;
use crate::model::{FittedModel, ModelFile};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Fit(a) => fit::run(&a),
        Command::Predict(a) => predict::run(&a),
        Command::Eval(a) => eval::run(&a),
        Command::Gen(a) => gen_data::run(&a),
    }
}

impl ModelFile {
    /// Shape of the data the model expects.
    pub fn shape(&self) -> Shape {
        Shape { n_features: self.n_features, n_labels: self.n_labels }
    }

    /// The distinct training label sets, in first-occurrence order.
    pub fn default_candidates(&self) -> LabelSets {
        match &self.model {
            FittedModel::IokrDense(m) => m.atoms().clone(),
            FittedModel::IokrSparse(m) => m.atoms().clone(),
        }
    }
}

/// Loads what `predict` and `eval` share: the model, the data file read with
/// the model's widths, the candidates (a file, or the model's distinct
/// training outputs), and the decoder with the memory budget.
pub fn load_for_decoding(
    model: &std::path::Path,
    data_path: &std::path::Path,
    data_args: &crate::cli::DataArgs,
    decode: &crate::cli::DecodeArgs,
) -> Result<(ModelFile, Dataset, LabelSets, CandidateDecoder)> {
    crate::config::set_threads(decode.threads)?;
    let mf = ModelFile::load(model)?;
    let data = crate::config::read_data(data_path, data_args, Some(mf.shape()))?;
    let candidates = match &decode.candidates {
        Some(p) => crate::config::read_candidates(p, mf.n_labels)?,
        None => mf.default_candidates(),
    };
    let decoder = CandidateDecoder::new().memory_budget(decode.memory_budget.saturating_mul(1 << 20));
    Ok((mf, data, candidates, decoder))
}

/// What a decoding pass produces for `predict` and `eval`.
pub struct Prediction {
    /// Ranked candidates per test point.
    pub decoded: Decoded,
    /// Coefficients over the atoms (distinct training outputs) `(n_test, n_atoms)`, when asked for.
    pub coefficients: Option<Mat<f64>>,
    /// Label indicator of the atoms `(n_atoms, n_labels)`, with the coefficients.
    pub train_indicator: Option<Mat<f64>>,
    /// `||h(x) - psi(y)||^2` per test point, when true outputs were given.
    pub rkhs_sq_errors: Option<Vec<f64>>,
    /// Wall-clock seconds of coefficients + decoding (metrics excluded).
    pub decode_seconds: f64,
}

/// Decodes `data` with the model; with `truth`, also returns coefficients
/// and squared errors in the output RKHS for the metrics of `okr eval`.
pub fn predict_dataset(
    mf: &ModelFile,
    data: &Dataset,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    truth: bool,
) -> Result<Prediction> {
    match (&mf.model, &data.x) {
        (FittedModel::IokrDense(m), Features::Dense(x)) => {
            let x = match &mf.standardizer {
                Some(st) => st.transform(x)?,
                None => x.clone(),
            };
            predict_with(m, &x, data, candidates, decoder, truth)
        }
        (FittedModel::IokrSparse(m), Features::Sparse(x)) => predict_with(m, x, data, candidates, decoder, truth),
        (FittedModel::IokrSparse(m), Features::Dense(x)) => {
            let csr = okr_kernels::CsrRows::from_dense(x.as_mat())?;
            predict_with(m, &csr, data, candidates, decoder, truth)
        }
        (FittedModel::IokrDense(m), Features::Sparse(x)) => {
            let dense = okr_kernels::DenseRows::new(x.to_dense())?;
            let dense = match &mf.standardizer {
                Some(st) => st.transform(&dense)?,
                None => dense,
            };
            predict_with(m, &dense, data, candidates, decoder, truth)
        }
    }
}

fn predict_with<X>(
    model: &Iokr<X, LabelSets, KernelSpec, KernelSpec>,
    x: &X,
    data: &Dataset,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    truth: bool,
) -> Result<Prediction>
where
    X: Rows,
    KernelSpec: Kernel<X>,
{
    let start = std::time::Instant::now();
    if !truth {
        let decoded = decoder.decode(model, x, candidates)?;
        let decode_seconds = start.elapsed().as_secs_f64();
        return Ok(Prediction {
            decoded,
            coefficients: None,
            train_indicator: None,
            rkhs_sq_errors: None,
            decode_seconds,
        });
    }
    // One coefficient matrix serves decoding, label scores and RKHS errors.
    let coef = model.coefficients(x)?;
    let mut g = Mat::zeros(model.n_atoms(), candidates.n_rows());
    model.atom_products_into(candidates, g.as_mut(), faer::Par::rayon(0))?;
    let norms = model.output_sq_norms(candidates);
    let decoded = decoder.decode_matrices(coef.as_ref(), g.as_ref(), &norms)?;
    let decode_seconds = start.elapsed().as_secs_f64();
    let errors = model.rkhs_sq_errors_from(coef.as_ref(), &data.y)?;
    Ok(Prediction {
        decoded,
        train_indicator: Some(model.atoms().to_indicator()),
        coefficients: Some(coef),
        rkhs_sq_errors: Some(errors),
        decode_seconds,
    })
}
