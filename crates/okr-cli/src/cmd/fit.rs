//! `okr fit`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use okr_estimators::{Iokr, ParamGuard};
use okr_eval::{Features, Standardizer};
use okr_kernels::{Gaussian, KernelSpec};

use crate::cli::{FitArgs, KernelKind};
use crate::config::{KernelFlags, build_kernel, median_heuristic_gamma, read_data, set_threads};
use crate::model::{FittedModel, ModelFile};

pub fn run(a: &FitArgs) -> Result<()> {
    set_threads(a.threads)?;
    // Fail on bad hyper-parameters before reading a large file.
    Iokr::params(0u8, 0u8).lambda(a.lambda).check()?;
    let data = read_data(&a.train, &a.data, None)?;
    let (n, d, l) = (data.n_samples(), data.n_features(), data.n_labels());

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

    let spinner = ProgressBar::new_spinner().with_message(format!("fitting IOKR on {n} samples"));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let t = Instant::now();
    let params = |kx: KernelSpec| Iokr::params(kx, ky.clone()).lambda(a.lambda);
    let (model, standardizer) = match (&data.x, standardizer) {
        (Features::Sparse(raw), Some(st)) => {
            let KernelSpec::Gaussian(g) = kx else { unreachable!("checked above") };
            kx = Gaussian::new(g.gamma())?.with_feature_weights(st.feature_weights())?.into();
            (FittedModel::IokrSparse(params(kx).fit(raw, &data.y)?), None)
        }
        (Features::Sparse(raw), None) => (FittedModel::IokrSparse(params(kx).fit(raw, &data.y)?), None),
        (Features::Dense(_), st) => {
            let Features::Dense(xs) = &x else { unreachable!("dense stays dense") };
            (FittedModel::IokrDense(params(kx).fit(xs, &data.y)?), st)
        }
    };
    let fit_seconds = t.elapsed().as_secs_f64();
    spinner.finish_and_clear();

    let file = ModelFile {
        okr_version: env!("CARGO_PKG_VERSION").to_string(),
        estimator: "iokr".into(),
        n_features: d,
        n_labels: l,
        seed: a.seed,
        fit_seconds,
        standardizer,
        model,
    };
    file.save(&a.model).with_context(|| format!("saving the model to {}", a.model.display()))?;
    eprintln!(
        "okr: fitted iokr on {n} samples ({d} features, {l} labels) in {fit_seconds:.2} s -> {}",
        a.model.display()
    );
    Ok(())
}
