//! Outputs beyond label sets (issue 17): `okr fit --output-kind fingerprint
//! | vector`, and `okr predict` / `okr eval` on vector-output models
//! ([`Model::Vectors`]); graphs and rankings are in `structured.rs`. Fingerprints are label sets whose labels are the
//! bits, so their models are the label-set models with a fingerprint kernel.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use faer::Mat;
use okr_decode::CandidateDecoder;
use okr_estimators::SurrogateModel;
use okr_estimators::persist::{Model, SavedModel, VectorModel};
use okr_eval::dataset::Names;
use okr_eval::{Dataset, read_vectors};
use okr_kernels::{DenseRows, LabelSets, Rows};
use serde_json::json;

use super::fit::describe_kernel;
use crate::cli::{
    DataArgs, EstimatorKind, EvalArgs, FingerprintFormat, FitArgs, OutputFileArgs, OutputFormat, OutputKindFlag,
    PredictArgs,
};
use crate::config::{KernelFlags, build_kernel, read_data, read_for_model, set_threads};
use crate::model::{input_shape, inputs};
use crate::output::write_result;

/// Checks the output-kind flags of `okr fit` before any file is read.
pub fn check_fit(a: &FitArgs) -> Result<()> {
    super::structured::check_fit(a)?;
    let f = &a.output_file;
    let kind = a.output_kind;
    if kind == OutputKindFlag::Labels {
        if f.outputs.is_some() {
            bail!(
                "--outputs applies to --output-kind fingerprint, vector or graph (label sets are columns of --train)"
            );
        }
    } else {
        let name = format!("{kind:?}").to_lowercase();
        if matches!(a.estimator, EstimatorKind::Leml | EstimatorKind::Kae | EstimatorKind::K2ae) {
            bail!("--output-kind {name} needs a kernel-output estimator, not --estimator {}", a.estimator.name());
        }
        let Some(outputs) = &f.outputs else {
            if kind == OutputKindFlag::Ranking {
                return Ok(()); // the label-ranking --train file holds the rankings
            }
            bail!("--output-kind {name} needs --outputs FILE (the training outputs)")
        };
        if let Some(l) = a.data.label_count.filter(|&l| l > 0) {
            bail!("--output-kind {name} reads its outputs from --outputs: --train holds features only, not {l} labels");
        }
        okr_eval::check_not_input(&a.model, &[("output file", outputs.as_path())])?;
    }
    let fingerprint_flags = f.fingerprint_format != FingerprintFormat::Dense || f.n_bits.is_some();
    if fingerprint_flags && kind != OutputKindFlag::Fingerprint {
        bail!("--fingerprint-format and --n-bits apply to --output-kind fingerprint only");
    }
    if kind == OutputKindFlag::Fingerprint && f.fingerprint_format == FingerprintFormat::Sparse && f.n_bits.is_none() {
        bail!("--fingerprint-format sparse needs --n-bits N (the fingerprint length)");
    }
    Ok(())
}

/// Reads a fingerprint file as label sets of `n_bits` (when known).
pub fn read_fingerprints(path: &Path, f: &OutputFileArgs, n_bits: Option<usize>) -> Result<LabelSets> {
    let fp = match f.fingerprint_format {
        FingerprintFormat::Dense => okr_eval::read_fingerprints_dense(path)?,
        FingerprintFormat::Sparse => {
            let n = n_bits.or(f.n_bits).context("--fingerprint-format sparse needs --n-bits N")?;
            okr_eval::read_fingerprints_sparse(path, n)?
        }
    };
    match n_bits {
        Some(n) if fp.n_labels() != n && fp.n_rows() > 0 => {
            bail!("{}: fingerprints of {} bits, the model has {n}", path.display(), fp.n_labels())
        }
        _ => Ok(fp),
    }
}

/// Reads vectors of width `p` (when known).
fn read_vector_file(path: &Path, p: Option<usize>) -> Result<DenseRows> {
    let y = read_vectors(path)?;
    match p {
        Some(p) if y.n_features() != p => {
            bail!("{}: vectors of {} values, the model's have {p}", path.display(), y.n_features())
        }
        _ => Ok(y),
    }
}

/// Checks that an output file has a row per input row.
fn check_rows(path: &Path, n_out: usize, input: &Path, n: usize) -> Result<()> {
    if n_out != n {
        bail!("{}: {n_out} outputs for the {n} rows of {}", path.display(), input.display());
    }
    Ok(())
}

/// The data flags with `--label-count 0`: the input file holds features only.
fn features_only(d: &DataArgs) -> DataArgs {
    DataArgs { label_count: Some(0), ..d.clone() }
}

/// `okr fit --output-kind fingerprint | vector`.
pub fn fit(a: &FitArgs) -> Result<()> {
    if matches!(a.output_kind, OutputKindFlag::Graph | OutputKindFlag::Ranking) {
        return super::structured::fit(a);
    }
    let Some(path) = a.output_file.outputs.as_deref() else { bail!("--outputs FILE is required") };
    let mut data = read_data(&a.train, &features_only(&a.data), None)?;
    match a.output_kind {
        OutputKindFlag::Fingerprint => {
            let fp = read_fingerprints(path, &a.output_file, a.output_file.n_bits)?;
            check_rows(path, fp.n_rows(), &a.train, data.n_samples())?;
            data.label_names = Names::numbered("bit_", fp.n_labels());
            data.y = fp;
            super::fit::fit_data(a, &data, None)
        }
        _ => {
            let y = read_vector_file(path, None)?;
            check_rows(path, y.n_rows(), &a.train, data.n_samples())?;
            fit_vectors(a, &data, &y)
        }
    }
}

/// Fits a kernel-output estimator on vector outputs and saves it as [`Model::Vectors`].
fn fit_vectors(a: &FitArgs, data: &Dataset, y: &DenseRows) -> Result<()> {
    let p = y.n_features();
    if p == 0 {
        bail!("{}: the output vectors are empty", a.output_file.outputs.as_deref().unwrap_or(Path::new("")).display());
    }
    let out_flags =
        KernelFlags { kind: a.output_kernel, gamma: a.output_gamma, sigma2: a.output_sigma2, degree: 2, coef0: 1.0 };
    let out_median = okr_kernels::median_sq_distance(y, 2000);
    let ky = build_kernel(&out_flags, || okr_kernels::median_heuristic_gamma(out_median), "output")?;
    let out_note = if a.output_gamma.is_some() || a.output_sigma2.is_some() {
        "given".to_string()
    } else {
        format!("median heuristic 1 / (2 * {out_median:.4})")
    };
    let text = describe_kernel(&ky, &out_note);
    let what = format!("vector outputs of {p} values");
    super::structured::fit_outputs(a, data, y, ky, p, &what, &text, Model::Vectors)
}

/// Candidates of a vector model: `--candidates` (vectors) or its distinct training outputs.
fn vector_candidates(v: &VectorModel, path: Option<&Path>) -> Result<DenseRows> {
    match path {
        Some(p) => read_vector_file(p, Some(v.output_width())),
        None => Ok(v.candidates().clone()),
    }
}

/// The test inputs of a vector model, as the model reads them.
fn vector_inputs(mf: &SavedModel, path: &Path, d: &DataArgs) -> Result<okr_eval::Features> {
    let data = read_for_model(path, d, input_shape(mf))?.data;
    Ok(inputs(mf, &data)?.into_owned())
}

/// `okr predict` on a vector model: per input the decoded candidate vector
/// (`labels` format: its values; `--top-k K`: K vectors `;`-separated), or
/// JSON Lines `{candidate_ids, scores, output}` (`--output-format json`).
pub fn predict(a: &PredictArgs, input: &std::path::Path, mf: &SavedModel, v: &VectorModel) -> Result<()> {
    set_threads(a.decode.threads)?;
    if a.render.threshold.is_some() || a.render.thresholds.is_some() {
        bail!("--threshold and --thresholds apply to label-score models (leml), not to vector models");
    }
    if matches!(a.render.output_format, OutputFormat::Csv | OutputFormat::Indicator) {
        bail!("a vector model writes --output-format labels (the decoded vectors) or json (candidate ids and scores)");
    }
    let x = vector_inputs(mf, input, &a.data)?;
    let cands = vector_candidates(v, a.decode.candidates.as_deref())?;
    let decoder = CandidateDecoder::new()
        .memory_budget(a.decode.memory_budget.saturating_mul(1 << 20))
        .precision(a.decode.precision);
    let decoded = decoder.top_k(a.top_k).decode(v.surrogate(), &x, &cands)?;
    let c = cands.as_mat();
    let row = |j: usize| (0..c.ncols()).map(|f| format!("{:?}", c[(j, f)])).collect::<Vec<_>>().join(",");
    let mut text = Vec::new();
    for t in 0..decoded.n_rows() {
        let top = decoded.top(t);
        if a.render.output_format == OutputFormat::Json {
            let best = top.first().map(|&j| (0..c.ncols()).map(|f| c[(j, f)]).collect::<Vec<_>>());
            let doc = json!({ "candidate_ids": top, "scores": decoded.top_scores(t), "output": best });
            writeln!(text, "{doc}")?;
        } else {
            writeln!(text, "{}", top.iter().map(|&j| row(j)).collect::<Vec<_>>().join(";"))?;
        }
    }
    write_result(a.output.as_deref(), |w| w.write_all(&text))
}

/// `okr eval` on a vector model against `--outputs`: one JSON object with the
/// mean output-kernel loss `||psi(yhat) - psi(y)||^2` of the decoded
/// candidates (the RBF loss `2 - 2 k(yhat, y)` for a Gaussian output kernel)
/// and its standard error, and `mse_h`, the mean `||h(x) - psi(y)||^2`.
pub fn eval(a: &EvalArgs, mf: &SavedModel, v: &VectorModel) -> Result<()> {
    set_threads(a.decode.threads)?;
    if a.predictions.is_some() || a.per_label {
        bail!("--predictions and --per-label apply to label-set models, not to vector models");
    }
    let Some(path) = a.output_file.outputs.as_deref() else {
        bail!("{} is a vector model: give the true outputs with --outputs FILE", a.model.display())
    };
    let x = vector_inputs(mf, &a.input, &a.data)?;
    let truth = read_vector_file(path, Some(v.output_width()))?;
    check_rows(path, truth.n_rows(), &a.input, x.n_rows())?;
    let cands = vector_candidates(v, a.decode.candidates.as_deref())?;
    let model = v.surrogate();
    let start = Instant::now();
    let coef = model.coefficients(&x)?;
    let mut g = Mat::zeros(model.n_atoms(), cands.n_rows());
    model.atom_products_into(&cands, g.as_mut(), faer::Par::rayon(0))?;
    let norms = model.output_sq_norms(&cands);
    let decoder = CandidateDecoder::new()
        .memory_budget(a.decode.memory_budget.saturating_mul(1 << 20))
        .precision(a.decode.precision);
    let decoded = decoder.decode_matrices(coef.as_ref(), g.as_ref(), &norms)?;
    let decode_seconds = start.elapsed().as_secs_f64();
    let predicted = cands.select(&decoded.best());
    let losses = okr_eval::output_kernel_losses(model.output_kernel(), &predicted, &truth)?;
    let errors = model.rkhs_sq_errors_from(coef.as_ref(), &truth)?;
    let (loss, loss_se) = okr_eval::mean_and_std_err(&losses);
    let report = json!({
        "estimator": mf.model.name(),
        "output_kind": "vectors",
        "n_test": x.n_rows(),
        "output_dim": v.output_width(),
        "n_candidates": cands.n_rows(),
        "output_kernel_loss": loss,
        "output_kernel_loss_se": loss_se,
        "mse_h": okr_eval::mean_and_std_err(&errors).0,
        "fit_seconds": mf.info.fit_seconds,
        "decode_seconds": decode_seconds,
    });
    write_result(None, |w| writeln!(w, "{report}"))
}
