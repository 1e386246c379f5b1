//! The subcommands.

mod eval;
mod fit;
mod gen_data;
mod kae;
mod predict;
mod scores;

use std::borrow::Cow;

use anyhow::{Result, bail};
use faer::{Mat, MatRef};
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::persist::{Model, SavedModel};
use okr_estimators::{
    Iokr, Kde, Nystroem, NystroemReducedRank, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNorm,
};
use okr_eval::{Dataset, Features};
use okr_kernels::{CsrRows, Kernel, KernelSpec, LabelSets, Rows};

use crate::cli::{Cli, Command};
use crate::model::{default_candidates, inputs, is_autoencoder, shape};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Fit(a) => fit::run(&a),
        Command::Predict(a) => predict::run(&a),
        Command::Eval(a) => eval::run(&a),
        Command::Encode(a) => kae::encode(&a),
        Command::Gen(a) => gen_data::run(&a),
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
projected_surrogate!(ReducedRankIokr, Kde, TraceNorm, NystroemReducedRank);

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
/// training outputs), and the decoder with the memory budget.
pub fn load_for_decoding(
    model: &std::path::Path,
    data_path: &std::path::Path,
    data_args: &crate::cli::DataArgs,
    decode: &crate::cli::DecodeArgs,
) -> Result<(SavedModel, Dataset, LabelSets, CandidateDecoder)> {
    crate::config::set_threads(decode.threads)?;
    let mf = crate::model::load(model)?;
    if is_autoencoder(&mf.model) {
        anyhow::bail!(
            "{} is a {} model (an autoencoder): use `okr encode`, not predict / eval",
            model.display(),
            mf.model.name()
        );
    }
    let data = crate::config::read_data(data_path, data_args, Some(shape(&mf)))?;
    let candidates = match &decode.candidates {
        Some(p) => crate::config::read_candidates(p, mf.info.n_labels)?,
        None => default_candidates(&mf),
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

/// Sparse inputs for the label-score models (LEML, BR, CPLST).
pub(crate) fn sparse_inputs(data: &Dataset) -> Result<Cow<'_, CsrRows>> {
    Ok(match &data.x {
        Features::Sparse(x) => Cow::Borrowed(x),
        Features::Dense(x) => Cow::Owned(CsrRows::from_dense(x.as_mat())?),
    })
}

/// Decodes `data` with the model; with `truth`, also returns label scores
/// and squared errors in the output RKHS for the metrics of `okr eval`.
pub fn predict_dataset(
    mf: &SavedModel,
    data: &Dataset,
    candidates: &LabelSets,
    decoder: CandidateDecoder,
    truth: bool,
) -> Result<Prediction> {
    let (c, d, t) = (candidates, decoder, truth);
    let x = inputs(mf, data)?;
    let x = x.as_ref();
    match &mf.model {
        Model::Iokr(m) => predict_with(m, x, data, c, d, t),
        Model::ReducedRank(m) => predict_with(m, x, data, c, d, t),
        Model::Kde(m) => predict_with(m, x, data, c, d, t),
        Model::TraceNorm(m) => predict_with(m, x, data, c, d, t),
        Model::Sketched(m) => predict_with(m, x, data, c, d, t),
        Model::Nystroem(m) => predict_with(m, x, data, c, d, t),
        Model::NystroemReducedRank(m) => predict_with(m, x, data, c, d, t),
        Model::Kae(_) | Model::K2ae(_) => bail!("{} is an autoencoder: use `okr encode`", mf.model.name()),
        m => bail!("{} is a label-score model: it does not decode candidates", m.name()),
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
