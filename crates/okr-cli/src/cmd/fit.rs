//! `okr fit`.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use indicatif::ProgressBar;
use okr_estimators::Fit;
use okr_estimators::leml::{Leml, LemlParams, LemlValidParams, Loss, PartialLabels, Targets};
use okr_estimators::nystroem::Anchors;
use okr_estimators::persist::Model;
use okr_estimators::sketch::SketchSpec;
use okr_estimators::{Iokr, Kde, Nystroem, ParamGuard, ReducedRankIokr, SketchedIokr, TraceNorm, TraceNormSolver};
use okr_eval::{Features, Standardizer};
use okr_kernels::{Gaussian, KernelSpec};

use crate::cli::{EstimatorKind, FitArgs, KernelKind, LossKind, TraceNormSolverKind};
use crate::config::{KernelFlags, build_kernel, index_base, median_heuristic_gamma, read_data, set_threads};
use crate::model::{info, ranks, save_fitted};

pub fn run(a: &FitArgs) -> Result<()> {
    crate::config::check_fit_flags(a)?;
    set_threads(a.threads)?;
    // Fail on bad hyper-parameters before reading a large file.
    let lambda1 = a.lambda1.unwrap_or(a.lambda);
    let lambda2 = a.lambda2.unwrap_or(lambda1);
    if a.estimator != EstimatorKind::ReducedRank && (a.lambda1.is_some() || a.lambda2.is_some()) {
        bail!("--lambda1 and --lambda2 apply to --estimator reduced-rank only (use --lambda)");
    }
    if a.centered && a.estimator != EstimatorKind::Kde {
        bail!("--centered applies to --estimator kde only");
    }
    if a.estimator != EstimatorKind::Leml && (a.loss.is_some() || a.observed_fraction.is_some()) {
        bail!("--loss and --observed-fraction apply to --estimator leml only");
    }
    let (input_sketch, output_sketch) = sketch_flags(a)?;
    let anchors = anchors_flag(a)?;
    let name = match a.estimator {
        EstimatorKind::Iokr => {
            Iokr::params(0u8, 0u8).lambda(a.lambda).check()?;
            "iokr"
        }
        EstimatorKind::ReducedRank => {
            ReducedRankIokr::params(0u8, 0u8).rank(a.rank).lambda1(lambda1).lambda2(lambda2).check()?;
            "reduced-rank"
        }
        EstimatorKind::Kde => {
            Kde::params(0u8, 0u8).rank(a.rank).lambda(a.lambda).check()?;
            "kde"
        }
        EstimatorKind::Siokr | EstimatorKind::Isokr | EstimatorKind::Sisokr => {
            let p = SketchedIokr::params(0u8, 0u8).lambda(a.lambda).input_sketch(input_sketch);
            p.output_sketch(output_sketch).check()?.method()
        }
        EstimatorKind::Nystroem => {
            Nystroem::params(0u8, 0u8).lambda(a.lambda).anchors(anchors.clone()).check()?;
            "nystroem"
        }
        EstimatorKind::Kae | EstimatorKind::K2ae => return super::kae::fit(a),
        EstimatorKind::Leml => {
            let params = leml_params(a).check()?;
            if let Some(f) = a.observed_fraction
                && !(f > 0.0 && f <= 1.0)
            {
                bail!("invalid --observed-fraction {f}: expected a fraction in (0, 1]");
            }
            if a.standardize {
                bail!("--standardize does not apply to --estimator leml (features are used as given)");
            }
            let data = read_data(&a.train, &a.data, None)?;
            return fit_leml(a, params, &data);
        }
        EstimatorKind::TraceNorm => {
            TraceNorm::params(0u8, 0u8).rank(a.rank).lambda(a.lambda).check()?;
            "trace-norm"
        }
    };
    let solver = match a.solver.unwrap_or(TraceNormSolverKind::Gd) {
        TraceNormSolverKind::Gd => TraceNormSolver::GradientDescent,
        TraceNormSolverKind::Als => TraceNormSolver::Als,
        TraceNormSolverKind::Convex => TraceNormSolver::Convex,
    };
    let data = read_data(&a.train, &a.data, None)?;
    let (n, d, l) = (data.n_samples(), data.n_features(), data.n_labels());
    if l == 0 {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }

    let mean_card = data.y.mean_cardinality();
    let out_flags =
        KernelFlags { kind: a.output_kernel, gamma: a.output_gamma, sigma2: a.output_sigma2, degree: 2, coef0: 1.0 };
    // Default output width: the mean number of labels per training point.
    let ky = build_kernel(&out_flags, || 1.0 / (2.0 * mean_card.max(1.0)), "output")?;

    let standardizer = if a.standardize { Some(Standardizer::fit(&data.x)?) } else { None };
    let x = match (&data.x, &standardizer) {
        (Features::Dense(x), Some(st)) => Features::Dense(st.transform(x)?),
        (Features::Sparse(x), Some(st)) => {
            if a.input_kernel != KernelKind::Gaussian {
                bail!(
                    "--standardize on sparse data is supported with the gaussian input kernel only \
                     (it becomes per-feature weights, so the data stays sparse)"
                );
            }
            // Only for the width heuristic: distances of scaled rows equal standardized ones.
            Features::Sparse(st.scale_sparse(x)?)
        }
        (x, None) => x.clone(),
    };
    let in_flags =
        KernelFlags { kind: a.input_kernel, gamma: a.gamma, sigma2: a.sigma2, degree: a.degree, coef0: a.coef0 };
    let mut kx = build_kernel(&in_flags, || median_heuristic_gamma(&x), "input")?;

    let spinner = ProgressBar::new_spinner().with_message(format!("fitting {name} on {n} samples"));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let t = Instant::now();
    let (kx, standardizer) = match (&data.x, standardizer) {
        (Features::Sparse(_), Some(st)) => {
            let KernelSpec::Gaussian(g) = kx else { unreachable!("checked above") };
            kx = Gaussian::new(g.gamma())?.with_feature_weights(st.feature_weights())?.into();
            (kx, None)
        }
        (_, st) => (kx, st),
    };
    let y = &data.y;
    let iokr = || Iokr::params(kx.clone(), ky.clone()).lambda(a.lambda);
    let rr = || ReducedRankIokr::params(kx.clone(), ky.clone()).rank(a.rank).lambda1(lambda1).lambda2(lambda2);
    let kde = || Kde::params(kx.clone(), ky.clone()).rank(a.rank).lambda(a.lambda).centered(a.centered);
    let tn = || TraceNorm::params(kx.clone(), ky.clone()).rank(a.rank).lambda(a.lambda).solver(solver).seed(a.seed);
    let sketched = || {
        SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(a.lambda)
            .input_sketch(input_sketch)
            .output_sketch(output_sketch)
            .seed(a.seed)
    };
    let nystroem = || Nystroem::params(kx.clone(), ky.clone()).lambda(a.lambda).anchors(anchors.clone()).seed(a.seed);
    // Sparse models keep the raw rows (any standardization is in the kernel's weights).
    let x = if data.x.is_sparse() { &data.x } else { &x };
    let model = match a.estimator {
        EstimatorKind::Iokr => Model::Iokr(iokr().fit(x, y)?),
        EstimatorKind::ReducedRank => Model::ReducedRank(rr().fit(x, y)?),
        EstimatorKind::Kde => Model::Kde(kde().fit(x, y)?),
        EstimatorKind::TraceNorm => Model::TraceNorm(tn().fit(x, y)?),
        EstimatorKind::Siokr | EstimatorKind::Isokr | EstimatorKind::Sisokr => Model::Sketched(sketched().fit(x, y)?),
        EstimatorKind::Nystroem => Model::Nystroem(nystroem().fit(x, y)?),
        EstimatorKind::Leml | EstimatorKind::Kae | EstimatorKind::K2ae => unreachable!("fitted above"),
    };
    let fit_seconds = t.elapsed().as_secs_f64();
    spinner.finish_and_clear();

    let meta = info(&data, index_base(&a.train, &a.data)?, standardizer, a.seed);
    let file = save_fitted(model, meta, fit_seconds, &a.model)?;
    let rank = match ranks(&file.model) {
        Some((requested, used)) if requested != used => {
            format!(", rank {used}: --rank {requested} capped at the numerical rank")
        }
        Some((_, used)) => format!(", rank {used}"),
        None => String::new(),
    };
    eprintln!(
        "okr: fitted {name} on {n} samples ({d} features, {l} labels{rank}) in {fit_seconds:.2} s -> {}",
        a.model.display()
    );
    Ok(())
}

fn leml_params(a: &FitArgs) -> LemlParams {
    let loss = match a.loss.unwrap_or(LossKind::Sq) {
        LossKind::Sq => Loss::Squared,
        LossKind::Lr => Loss::Logistic,
        LossKind::Sh => Loss::SquaredHinge,
    };
    Leml::params().rank(a.rank).lambda(a.lambda).loss(loss).max_iter(a.max_iter.unwrap_or(10)).seed(a.seed)
}

/// `okr fit --estimator leml`: sparse features (dense files are converted),
/// full labels or a seeded random fraction of them.
fn fit_leml(a: &FitArgs, params: LemlValidParams, data: &okr_eval::Dataset) -> Result<()> {
    let (n, d, l) = (data.n_samples(), data.n_features(), data.n_labels());
    if l == 0 {
        bail!("{}: the training file has no labels, so the model would predict nothing", a.train.display());
    }
    let x = crate::cmd::sparse_inputs(data)?;
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
    Ok(())
}

/// The sketches of the sketched estimators: each needs its flags, and no
/// other estimator takes them.
fn sketch_flags(a: &FitArgs) -> Result<(Option<SketchSpec>, Option<SketchSpec>)> {
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
        if given && !needed {
            bail!("{flag} does not apply to --estimator {name}");
        }
    }
    Ok((a.input_sketch, a.output_sketch))
}

/// `--anchors`: a count (uniform anchors) or a file of training indices;
/// 1000 uniform anchors by default. Only for `nystroem`.
fn anchors_flag(a: &FitArgs) -> Result<Anchors> {
    let Some(text) = &a.anchors else { return Ok(Anchors::Uniform(1000)) };
    if a.estimator != EstimatorKind::Nystroem {
        bail!("--anchors applies to --estimator nystroem only");
    }
    if let Ok(m) = text.parse::<usize>() {
        return Ok(Anchors::Uniform(m));
    }
    let idx = okr_eval::read_indices(text)?;
    Ok(Anchors::Given(idx))
}
