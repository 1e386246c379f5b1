//! `okr fit`.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::ValueEnum;
use indicatif::ProgressBar;
use okr_decode::select::loo_grid;
use okr_estimators::leml::{Leml, LemlParams, Loss, PartialLabels, Targets};
use okr_estimators::nystroem::Anchors;
use okr_estimators::persist::{EstimatorSpec, Model};
use okr_estimators::sketch::SketchSpec;
use okr_estimators::{Fit, ParamGuard, TraceNormSolver};
use okr_eval::{Dataset, Features, Standardizer};
use okr_kernels::{
    Gaussian, Kernel, KernelSpec, LabelSets, MEDIAN_SAMPLE_ROWS, Rows, median_heuristic_gamma, median_sq_distance,
};

use crate::cli::{DEFAULT_RANK, EstimatorKind, FitArgs, KernelKind, LossKind, OutputKindFlag, TraceNormSolverKind};
use crate::config::{build_kernel, index_base, read_data, set_threads};
use crate::model::{info, save_fitted};

pub fn run(a: &FitArgs) -> Result<()> {
    check(a)?;
    if let Some(gram) = &a.input_gram {
        return super::gram::fit(a, gram);
    }
    if matches!(a.estimator, EstimatorKind::Kae | EstimatorKind::K2ae) {
        return super::kae::fit(a);
    }
    if a.output_kind != OutputKindFlag::Labels {
        return super::outputs::fit(a);
    }
    let data = read_data(&a.train, &a.data, None)?;
    if a.estimator == EstimatorKind::Leml {
        return fit_leml(a, &data);
    }
    fit_data(a, &data, None)
}

/// Checks the flags and hyper-parameters, so that a bad value fails before
/// a large file is read.
pub(crate) fn check(a: &FitArgs) -> Result<()> {
    super::gram::check_flags(a)?;
    super::outputs::check_fit(a)?;
    crate::config::check_fit_flags(a)?;
    set_threads(a.threads)?;
    let lambda = a.lambda.unwrap_or(DEFAULT_LAMBDA);
    // Flags of other estimators were refused by check_fit_flags.
    match a.estimator {
        EstimatorKind::Kae | EstimatorKind::K2ae => {}
        EstimatorKind::Leml => {
            leml_params(a).check()?;
            if let Some(f) = a.observed_fraction
                && !(f > 0.0 && f <= 1.0)
            {
                bail!("invalid --observed-fraction {f}: expected a fraction in (0, 1]");
            }
        }
        _ => estimator_spec(a, lambda)?.check()?,
    }
    Ok(())
}

/// The ridge of estimators other than IOKR when `--lambda` is not given.
pub const DEFAULT_LAMBDA: f64 = 1e-3;

/// Ridges the closed-form leave-one-out choice of `--lambda` scans.
pub const LOO_LAMBDAS: [f64; 8] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1];

/// Training rows whose leave-one-out predictions score a ridge (a seeded subset beyond this).
pub const LOO_ROWS: usize = 2000;

/// Training inputs as the input kernel sees them.
pub(crate) struct Inputs {
    /// Standardization stored in the model (dense inputs).
    pub standardizer: Option<Standardizer>,
    /// Standardization of sparse inputs, as Gaussian feature weights.
    pub weights: Option<Vec<f64>>,
    /// Rows for the width heuristic and searches: standardized dense rows,
    /// or sparse rows divided by their scale (the same distances).
    pub x: Features,
    /// How the inputs were treated, for the messages.
    pub note: &'static str,
}

/// Standardizes dense non-binary features unless `--no-standardize`;
/// `--standardize` forces it (sparse data: Gaussian kernel weights).
pub(crate) fn prepare_inputs(a: &FitArgs, data: &Dataset) -> Result<Inputs> {
    let binary = okr_eval::is_binary(&data.x);
    let (standardize, note) = if a.no_standardize {
        (false, "used as given (--no-standardize)")
    } else if a.standardize {
        (true, "standardized (--standardize)")
    } else if data.x.is_sparse() {
        (false, "used as given (sparse; --standardize to scale them)")
    } else if binary {
        (false, "used as given (binary)")
    } else {
        (true, "standardized (dense, not binary; --no-standardize to keep them)")
    };
    if !standardize {
        return Ok(Inputs { standardizer: None, weights: None, x: data.x.clone(), note });
    }
    let st = Standardizer::fit(&data.x)?;
    Ok(match &data.x {
        Features::Dense(x) => {
            Inputs { x: Features::Dense(st.transform(x)?), standardizer: Some(st), weights: None, note }
        }
        Features::Sparse(x) => {
            if a.input_kernel != KernelKind::Gaussian {
                bail!(
                    "--standardize on sparse data is supported with the gaussian input kernel only \
                     (it becomes per-feature weights, so the data stays sparse)"
                );
            }
            // Distances of scaled rows equal those of standardized ones.
            Inputs {
                x: Features::Sparse(st.scale_sparse(x)?),
                standardizer: None,
                weights: Some(st.feature_weights()),
                note,
            }
        }
    })
}

/// `--estimator` (a kernel-output estimator) with its flags around the
/// ridge `lambda` (`--lambda1` / `--lambda2` default to it).
pub(crate) fn estimator_spec(a: &FitArgs, lambda: f64) -> Result<EstimatorSpec> {
    let (input_sketch, output_sketch) = sketch_flags(a)?;
    let anchors = anchors_flag(a)?;
    let lambda1 = a.lambda1.unwrap_or(lambda);
    let lambda2 = a.lambda2.unwrap_or(lambda1);
    let (rank, seed) = (a.rank_or_default(), a.seed);
    Ok(match a.estimator {
        EstimatorKind::Iokr => EstimatorSpec::Iokr { lambda },
        EstimatorKind::ReducedRank => EstimatorSpec::ReducedRank { rank, lambda1, lambda2 },
        EstimatorKind::Kde => EstimatorSpec::Kde { rank, lambda, centered: a.centered },
        EstimatorKind::TraceNorm => {
            let name = a.solver.unwrap_or(TraceNormSolverKind::Gd).to_possible_value().expect("no solver is skipped");
            let solver: TraceNormSolver = name.get_name().parse()?;
            EstimatorSpec::TraceNorm { rank, lambda, solver, seed }
        }
        EstimatorKind::Siokr | EstimatorKind::Isokr | EstimatorKind::Sisokr => {
            EstimatorSpec::Sketched { lambda, input_sketch, output_sketch, seed }
        }
        EstimatorKind::Nystroem => EstimatorSpec::Nystroem { lambda, anchors, seed },
        EstimatorKind::Leml | EstimatorKind::Kae | EstimatorKind::K2ae => {
            bail!("--estimator {} is not a kernel-output estimator", a.estimator.name())
        }
    })
}

/// The input kernel of `--input-kernel` on the prepared inputs (default
/// Gaussian width: the median heuristic), with sparse standardization as
/// feature weights; and the median squared distance.
pub(crate) fn input_kernel(a: &FitArgs, x: &Features, weights: Option<&[f64]>) -> Result<(KernelSpec, f64)> {
    let median = median_sq_distance(x, MEDIAN_SAMPLE_ROWS);
    let kx = build_kernel(a.input_kernel, a.input_kernel_options(), || median_heuristic_gamma(median), "input")?;
    Ok((weighted(kx, weights)?, median))
}

/// A Gaussian kernel with the sparse standardization's feature `weights`
/// (other kernels, or no weights: `k` as it is).
pub(crate) fn weighted(k: KernelSpec, weights: Option<&[f64]>) -> Result<KernelSpec> {
    Ok(match (weights, k) {
        (Some(w), KernelSpec::Gaussian(g)) => Gaussian::new(g.gamma())?.with_feature_weights(w.to_vec())?.into(),
        (_, k) => k,
    })
}

/// Fits a decoding estimator on `data` and saves it; `chosen` says where
/// tuned hyper-parameters came from (`okr tune`).
pub(crate) fn fit_data(a: &FitArgs, data: &Dataset, chosen: Option<&str>) -> Result<()> {
    let name = a.estimator.name();
    let (n, d, l) = (data.n_samples(), data.n_features(), data.n_labels());
    if l == 0 {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }
    // Printed after a successful fit, so that an error stays the only line.
    let warnings = capped_sizes(a, n);

    let mean_card = data.y.mean_cardinality();
    let ky = output_kernel(a, data)?;

    let Inputs { standardizer, weights, x, note } = prepare_inputs(a, data)?;
    let (kx, median) = input_kernel(a, &x, weights.as_deref())?;
    // Several kernels: combined on the rows the model is fitted on (raw sparse rows carry
    // their standardization in the Gaussian weights).
    let (kx, mkl_note) = match &a.input_kernels {
        Some(list) => {
            let rows = if data.x.is_sparse() { &data.x } else { &x };
            let (k, note) = super::gram::combined_kernel(a, list, rows, weights.as_deref(), &data.y, &ky)?;
            (k, Some(note))
        }
        None => (kx, None),
    };
    let (lambda, lambda_note) = match (a.lambda, a.estimator) {
        (Some(lambda), _) => (lambda, chosen.unwrap_or("--lambda").to_string()),
        (None, EstimatorKind::Iokr) => match (&data.x, &x) {
            (Features::Sparse(raw), _) => loo_lambda(a.seed, raw, &data.y, kx.clone(), &ky)?,
            (Features::Dense(_), Features::Dense(xs)) => loo_lambda(a.seed, xs, &data.y, kx.clone(), &ky)?,
            (Features::Dense(_), Features::Sparse(_)) => unreachable!("dense stays dense"),
        },
        (None, _) => (DEFAULT_LAMBDA, format!("default of --estimator {name}; --lambda to set it")),
    };
    let gamma_note = match (a.gamma, a.sigma2, chosen) {
        _ if mkl_note.is_some() => mkl_note.unwrap_or_default(),
        (Some(_), _, Some(c)) => c.to_string(),
        (Some(_), _, None) => "--gamma".into(),
        (None, Some(_), _) => "--sigma2".into(),
        (None, None, _) => format!("median heuristic 1 / (2 * {median:.4}), the median squared distance"),
    };
    let resolved = format!(
        "okr: features {note}; input kernel {}; output kernel {} ({}); lambda = {lambda:e} ({lambda_note})",
        describe_kernel(&kx, &gamma_note),
        describe_kernel(&ky, ""),
        if a.output_gamma.is_some() || a.output_sigma2.is_some() {
            "given".to_string()
        } else {
            format!("default width: sigma^2 = {:.4} mean labels per point", mean_card.max(1.0))
        },
    );

    let spec = estimator_spec(a, lambda)?;
    let spinner = ProgressBar::new_spinner().with_message(format!("fitting {name} on {n} samples"));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let t = Instant::now();
    // Sparse models keep the raw rows (any standardization is in the kernel's weights).
    let x = if data.x.is_sparse() { &data.x } else { &x };
    let model = Model::from(spec.fit(kx, ky, x, &data.y)?);
    let fit_seconds = t.elapsed().as_secs_f64();
    spinner.finish_and_clear();

    let meta = info(data, index_base(&a.train, &a.data)?, standardizer, a.seed);
    let file = save_fitted(model, meta, fit_seconds, &a.model)?;
    let rank = match file.model.ranks() {
        Some((requested, used)) if requested != used => {
            format!(", rank {used}: --rank {requested} capped at the numerical rank")
        }
        Some((_, used)) => format!(", rank {used}"),
        None => String::new(),
    };
    for w in warnings {
        eprintln!("okr: warning: {w}");
    }
    eprintln!(
        "okr: fitted {name} on {n} samples ({d} features, {l} labels{rank}) in {fit_seconds:.2} s -> {}",
        a.model.display()
    );
    eprintln!("{resolved}");
    Ok(())
}

/// The output kernel of `--output-kernel` on label sets; default width:
/// the mean number of labels per training point.
pub(crate) fn output_kernel(a: &FitArgs, data: &Dataset) -> Result<KernelSpec> {
    build_kernel(a.output_kernel, a.output_kernel_options(), || okr_kernels::label_set_gamma(&data.y), "output")
}

/// LEML's parameters; the rank is `--rank` (or the default) before the
/// label count is known, see [`leml_rank`].
/// LEML's relative convergence tolerance in the CLI.
const LEML_TOL: f64 = 1e-6;

fn leml_params(a: &FitArgs) -> LemlParams {
    let loss = match a.loss.unwrap_or(LossKind::Sq) {
        LossKind::Sq => Loss::Squared,
        LossKind::Lr => Loss::Logistic,
        LossKind::Sh => Loss::SquaredHinge,
    };
    Leml::params()
        .rank(a.rank_or_default())
        .lambda(a.lambda.unwrap_or(DEFAULT_LAMBDA))
        .loss(loss)
        .max_iter(a.max_iter.unwrap_or(10))
        // A large --max-iter is a budget, not a promise to run it out.
        .tol(LEML_TOL)
        .seed(a.seed)
}

/// `okr fit --estimator leml`: sparse features (dense files are converted),
/// full labels or a seeded random fraction of them.
fn fit_leml(a: &FitArgs, data: &okr_eval::Dataset) -> Result<()> {
    let (n, d, l) = (data.n_samples(), data.n_features(), data.n_labels());
    if l == 0 {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }
    let (rank, capped) = leml_rank(a.rank, l);
    let params = leml_params(a).rank(rank).check()?;
    let x = data.x.sparse_rows()?;
    let partial = match a.observed_fraction {
        Some(f) if f < 1.0 => Some(PartialLabels::sample(&data.y, f, -1.0, a.seed)?),
        _ => None,
    };
    let targets = match &partial {
        Some(p) => Targets::Partial(p),
        None => Targets::Full(&data.y),
    };
    let spinner = ProgressBar::new_spinner().with_message(format!("fitting leml on {n} samples"));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let t = Instant::now();
    let model = params.fit(x.as_ref(), targets)?;
    let fit_seconds = t.elapsed().as_secs_f64();
    spinner.finish_and_clear();
    let objective = model.history().last().map_or(f64::NAN, |h| h.objective);
    let meta = info(data, index_base(&a.train, &a.data)?, None, a.seed);
    let file = save_fitted(Model::Leml(model), meta, fit_seconds, &a.model)?;
    let observed =
        partial.as_ref().map_or(String::new(), |p| format!(", {} of {} labels observed", p.n_observed(), n * l));
    eprintln!(
        "okr: fitted {} on {n} samples ({d} features, {l} labels{observed}, rank {}) in {fit_seconds:.2} s, objective {objective:.4e} -> {}",
        file.model.name(),
        params.rank(),
        a.model.display()
    );
    if let Some(asked) = capped {
        eprintln!("okr: warning: --rank {asked} is more than the {l} labels: capped at {l}");
    }
    eprintln!(
        "okr: lambda = {:e} ({}), rank {rank} ({})",
        params.lambda(),
        if a.lambda.is_some() { "--lambda" } else { "default; --lambda to set it" },
        if a.rank.is_some() { "--rank" } else { "default: the number of labels, at most 64" }
    );
    Ok(())
}

/// LEML's rank: `--rank` or the number of labels (at most [`DEFAULT_RANK`]),
/// capped at the number of labels (a larger label-space rank adds nothing);
/// the asked rank when it was capped.
fn leml_rank(asked: Option<usize>, n_labels: usize) -> (usize, Option<usize>) {
    match asked {
        Some(r) if r > n_labels => (n_labels.max(1), Some(r)),
        Some(r) => (r, None),
        None => (n_labels.clamp(1, DEFAULT_RANK), None),
    }
}

/// The sketches of the sketched estimators: each needs its flags (that no
/// other estimator takes them is checked by `check_fit_flags`).
pub(crate) fn sketch_flags(a: &FitArgs) -> Result<(Option<SketchSpec>, Option<SketchSpec>)> {
    let (needs_in, needs_out) = match a.estimator {
        EstimatorKind::Siokr => (true, false),
        EstimatorKind::Isokr => (false, true),
        EstimatorKind::Sisokr => (true, true),
        _ => (false, false),
    };
    let name = format!("{:?}", a.estimator).to_lowercase();
    for (flag, needed, given) in [
        ("--input-sketch", needs_in, a.input_sketch.is_some()),
        ("--output-sketch", needs_out, a.output_sketch.is_some()),
    ] {
        if needed && !given {
            bail!("--estimator {name} needs {flag} KIND:m (for example uniform:1000 or gaussian:100)");
        }
    }
    Ok((a.input_sketch, a.output_sketch))
}

/// `--anchors`: a count (uniform anchors) or a file of training indices;
/// 1000 uniform anchors by default (only `nystroem` takes the flag, see
/// `check_fit_flags`).
pub(crate) fn anchors_flag(a: &FitArgs) -> Result<Anchors> {
    let Some(text) = &a.anchors else { return Ok(Anchors::Uniform(1000)) };
    if let Ok(m) = text.parse::<usize>() {
        return Ok(Anchors::Uniform(m));
    }
    let idx = okr_eval::read_indices(text)?;
    Ok(Anchors::Given(idx))
}

/// Requested sizes that exceed what `n` training samples allow (the
/// estimator caps them), as warnings.
pub(crate) fn capped_sizes(a: &FitArgs, n: usize) -> Vec<String> {
    use okr_estimators::sketch::SketchKind;
    let mut out = Vec::new();
    for (flag, sketch) in [("--input-sketch", a.input_sketch), ("--output-sketch", a.output_sketch)] {
        if let Some(s) = sketch
            && matches!(s.kind, SketchKind::Uniform | SketchKind::Leverage)
            && s.size > n
        {
            out.push(format!("{flag} asks for {} sub-sampled rows of {n} training samples: capped at {n}", s.size));
        }
    }
    if a.estimator == EstimatorKind::Nystroem
        && let Some(m) = a.anchors.as_deref().and_then(|t| t.parse::<usize>().ok())
        && m > n
    {
        out.push(format!("--anchors {m} is more than the {n} training samples: capped at {n}"));
    }
    out
}

/// `gaussian, gamma = 0.0123 (note)` and the like.
pub(crate) fn describe_kernel(k: &KernelSpec, note: &str) -> String {
    let note = if note.is_empty() { String::new() } else { format!(" ({note})") };
    match k {
        KernelSpec::Gaussian(g) => format!("gaussian, gamma = {:.6}{note}", g.gamma()),
        KernelSpec::WeightedSum(_) => format!("{k}{note}"),
        other => format!("{other:?}{note}"),
    }
}

/// The training rows whose leave-one-out predictions score a ridge: all of
/// them, or a seeded subset of [`LOO_ROWS`].
pub(crate) fn loo_rows(n: usize, seed: u64) -> Result<Vec<usize>> {
    Ok(if n <= LOO_ROWS {
        (0..n).collect()
    } else {
        okr_eval::train_test_split(n, LOO_ROWS as f64 / n as f64, seed)?.1
    })
}

/// `--lambda` for IOKR when not given: the ridge of best closed-form
/// leave-one-out example-based F1 (decoded over the distinct training label
/// sets) among [`LOO_LAMBDAS`], on the rows of [`loo_rows`], with the input
/// kernel `kx` on `x` (features, or a precomputed Gram).
pub(crate) fn loo_lambda<X: Rows, K: Kernel<X>>(
    seed: u64,
    x: &X,
    y: &LabelSets,
    kx: K,
    ky: &KernelSpec,
) -> Result<(f64, String)> {
    let rows = loo_rows(y.n_rows(), seed)?;
    let msg = format!("choosing lambda by leave-one-out on {} samples", y.n_rows());
    let spinner = ProgressBar::new_spinner().with_message(msg);
    spinner.enable_steady_tick(Duration::from_millis(120));
    let f1 = |t: &LabelSets, p: &LabelSets| -> Result<f64> { Ok(okr_eval::f1_samples(t, p)?) };
    let result = loo_grid(x, y, &[(1.0, kx)], ky, &LOO_LAMBDAS, &rows, 0.0, f1, &mut || {})?;
    spinner.finish_and_clear();
    let note = format!(
        "closed-form leave-one-out F1 {:.2} on {} training rows, best of 1e-8..1e-1; --lambda to set it",
        100.0 * result.best_score(),
        rows.len()
    );
    Ok((result.lambda(), note))
}
