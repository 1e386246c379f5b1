//! The subcommands.

mod eval;
mod fit;
mod gen_data;
mod kae;
mod predict;
mod scores;
mod tune;

use std::borrow::Cow;

use anyhow::{Result, bail};
use faer::{Mat, MatRef};
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::{Iokr, Kde, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNorm};
use okr_eval::{Dataset, Features};
use okr_kernels::{CsrRows, DenseRows, Kernel, KernelSpec, LabelSets, Rows};

use crate::cli::{Cli, Command};
use crate::config::Shape;
use crate::model::{FittedModel, ModelFile};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Fit(a) => fit::run(&a),
        Command::Tune(a) => tune::run(&a),
        Command::Predict(a) => predict::run(&a),
        Command::Eval(a) => eval::run(&a),
        Command::Encode(a) => kae::encode(&a),
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
            FittedModel::IokrDense(m) => m.training_outputs().clone(),
            FittedModel::IokrSparse(m) => m.training_outputs().clone(),
            FittedModel::ReducedRankDense(m) => m.training_outputs().clone(),
            FittedModel::ReducedRankSparse(m) => m.training_outputs().clone(),
            FittedModel::KdeDense(m) => m.training_outputs().clone(),
            FittedModel::KdeSparse(m) => m.training_outputs().clone(),
            // A score model decodes no candidates.
            FittedModel::Leml(_) => LabelSets::new(self.n_labels, Vec::new()).expect("no sets"),
            FittedModel::TraceNormDense(m) => m.training_outputs().clone(),
            FittedModel::TraceNormSparse(m) => m.training_outputs().clone(),
            // Autoencoders have no outputs; `load_for_decoding` rejects them first.
            FittedModel::KaeDense(_) | FittedModel::K2aeDense(_) | FittedModel::K2aeSparse(_) => {
                LabelSets::from_indicator(Mat::<f64>::zeros(0, self.n_labels).as_ref())
            }
            FittedModel::SketchedDense(m) => m.distinct_outputs().clone(),
            FittedModel::SketchedSparse(m) => m.distinct_outputs().clone(),
            FittedModel::NystroemDense(m) => m.distinct_outputs().clone(),
            FittedModel::NystroemSparse(m) => m.distinct_outputs().clone(),
        }
    }
}

/// What `predict` and `eval` need from a fitted estimator beyond
/// [`SurrogateModel`]: its atoms written over the distinct training outputs.
pub trait Surrogate<X: Rows>: SurrogateModel<X, LabelSets> {
    /// The distinct training label sets, in first-occurrence order.
    fn training_outputs(&self) -> &LabelSets;
    /// Weights `B` `(n_atoms, n_distinct)` of the atoms on the distinct
    /// training outputs, `a_j = sum_i B_ji psi(y_i)`; `None` for the identity.
    fn atom_weights(&self) -> Option<MatRef<'_, f64>>;
}

impl<X: Rows> Surrogate<X> for Iokr<X, LabelSets, KernelSpec, KernelSpec>
where
    KernelSpec: Kernel<X>,
{
    fn training_outputs(&self) -> &LabelSets {
        self.atoms()
    }
    fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
        None
    }
}

/// Estimators whose atoms are encoder directions over the distinct outputs.
macro_rules! projected_surrogate {
    ($($model:ident),*) => {$(
        impl<X: Rows> Surrogate<X> for $model<X, LabelSets, KernelSpec, KernelSpec>
        where
            KernelSpec: Kernel<X>,
        {
            fn training_outputs(&self) -> &LabelSets {
                self.distinct_outputs()
            }
            fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
                Some(self.encoder())
            }
        }
    )*};
}
projected_surrogate!(ReducedRankIokr, Kde, TraceNorm);

/// Sketched models: atoms over the outputs the output sketch touches (or the
/// distinct training outputs without one).
impl<X: Rows> Surrogate<X> for SketchedIokr<X, LabelSets, KernelSpec, KernelSpec>
where
    KernelSpec: Kernel<X>,
{
    fn training_outputs(&self) -> &LabelSets {
        self.atom_outputs()
    }
    fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
        SketchedIokr::atom_weights(self)
    }
}

impl<X: Rows> Surrogate<X> for Nystroem<X, LabelSets, KernelSpec, KernelSpec>
where
    KernelSpec: Kernel<X>,
{
    fn training_outputs(&self) -> &LabelSets {
        self.distinct_outputs()
    }
    fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
        None
    }
}

/// Loads what `predict` and `eval` share: the model, the data file read with
/// the model's widths, the candidates (a file, or the model's distinct
/// training outputs), and the decoder with the memory budget. The data file
/// may hold features only unless `need_labels` (evaluation).
pub fn load_for_decoding(
    model: &std::path::Path,
    data_path: &std::path::Path,
    data_args: &crate::cli::DataArgs,
    decode: &crate::cli::DecodeArgs,
    need_labels: bool,
) -> Result<(ModelFile, Dataset, LabelSets, CandidateDecoder)> {
    crate::config::set_threads(decode.threads)?;
    let mf = ModelFile::load(model)?;
    if mf.model.is_autoencoder() {
        anyhow::bail!(
            "{} is a {} model (an autoencoder): use `okr encode`, not predict / eval",
            model.display(),
            mf.estimator
        );
    }
    let input = crate::config::read_for_model(data_path, data_args, mf.shape())?;
    if need_labels && input.labels == okr_eval::LabelColumns::Absent {
        bail!(
            "{}: has features only, no label columns to evaluate against (the model has {} labels)",
            data_path.display(),
            mf.n_labels
        );
    }
    let data = input.data;
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
    /// Label scores `(n_test, n_labels)`, when asked for: `h(x)` read with a
    /// linear output kernel, `sum_i w_i(x) y_i` over the distinct training
    /// outputs, with `w(x) = C B` the weights `h(x)` puts on them.
    pub label_scores: Option<Mat<f64>>,
    /// `||h(x) - psi(y)||^2` per test point, when true outputs were given.
    pub rkhs_sq_errors: Option<Vec<f64>>,
    /// Wall-clock seconds of coefficients + decoding (metrics excluded).
    pub decode_seconds: f64,
}

/// Dense inputs for a dense model: densified if sparse, then standardized.
pub(crate) fn dense_inputs(mf: &ModelFile, data: &Dataset) -> Result<DenseRows> {
    let dense = match &data.x {
        Features::Dense(x) => Cow::Borrowed(x),
        Features::Sparse(x) => Cow::Owned(DenseRows::new(x.to_dense())?),
    };
    Ok(match &mf.standardizer {
        Some(st) => st.transform(&dense)?,
        None => dense.into_owned(),
    })
}

/// Sparse inputs for a sparse model (its kernel carries any standardization).
pub(crate) fn sparse_inputs(data: &Dataset) -> Result<Cow<'_, CsrRows>> {
    Ok(match &data.x {
        Features::Sparse(x) => Cow::Borrowed(x),
        Features::Dense(x) => Cow::Owned(CsrRows::from_dense(x.as_mat())?),
    })
}

/// Decodes `data` with the model; with `truth`, also returns label scores
/// and squared errors in the output RKHS for the metrics of `okr eval`.
pub fn predict_dataset(
    mf: &ModelFile,
    data: &Dataset,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    truth: bool,
) -> Result<Prediction> {
    let (c, d, t) = (candidates, decoder, truth);
    match &mf.model {
        FittedModel::IokrDense(m) => predict_with(m, &dense_inputs(mf, data)?, data, c, d, t),
        FittedModel::ReducedRankDense(m) => predict_with(m, &dense_inputs(mf, data)?, data, c, d, t),
        FittedModel::KdeDense(m) => predict_with(m, &dense_inputs(mf, data)?, data, c, d, t),
        FittedModel::IokrSparse(m) => predict_with(m, sparse_inputs(data)?.as_ref(), data, c, d, t),
        FittedModel::ReducedRankSparse(m) => predict_with(m, sparse_inputs(data)?.as_ref(), data, c, d, t),
        FittedModel::KdeSparse(m) => predict_with(m, sparse_inputs(data)?.as_ref(), data, c, d, t),
        FittedModel::Leml(_) => bail!("LEML is a label-score model: it does not decode candidates"),
        FittedModel::TraceNormDense(m) => predict_with(m, &dense_inputs(mf, data)?, data, c, d, t),
        FittedModel::TraceNormSparse(m) => predict_with(m, sparse_inputs(data)?.as_ref(), data, c, d, t),
        FittedModel::KaeDense(_) | FittedModel::K2aeDense(_) | FittedModel::K2aeSparse(_) => {
            anyhow::bail!("{} is an autoencoder: use `okr encode`", mf.estimator)
        }
        FittedModel::SketchedDense(m) => predict_with(m, &dense_inputs(mf, data)?, data, c, d, t),
        FittedModel::SketchedSparse(m) => predict_with(m, sparse_inputs(data)?.as_ref(), data, c, d, t),
        FittedModel::NystroemDense(m) => predict_with(m, &dense_inputs(mf, data)?, data, c, d, t),
        FittedModel::NystroemSparse(m) => predict_with(m, sparse_inputs(data)?.as_ref(), data, c, d, t),
    }
}

fn predict_with<X, M>(
    model: &M,
    x: &X,
    data: &Dataset,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    truth: bool,
) -> Result<Prediction>
where
    X: Rows,
    M: Surrogate<X>,
{
    let start = std::time::Instant::now();
    if !truth {
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
    let errors = model.rkhs_sq_errors_from(coef.as_ref(), &data.y)?;
    let indicator = model.training_outputs().to_indicator();
    let label_scores = match model.atom_weights() {
        None => &coef * &indicator,
        Some(b) => &coef * (b * &indicator),
    };
    Ok(Prediction { decoded, label_scores: Some(label_scores), rkhs_sq_errors: Some(errors), decode_seconds })
}
