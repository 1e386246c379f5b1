//! `okr fit --estimator kae|k2ae` and `okr encode`.

use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use clap::ValueEnum;
use indicatif::ProgressBar;
use okr_estimators::ParamGuard;
use okr_estimators::kae::{KaeParams, LayerKernel};
use okr_estimators::persist::Model;
use okr_eval::{Features, Standardizer};
use okr_kernels::WidthSide;

use crate::cli::{EncodeArgs, EstimatorKind, FitArgs};
use crate::config::{build_kernel, index_base, read_data, set_threads};
use crate::model::{info, inputs, is_autoencoder, save_fitted, shape};

/// Autoencoder parameters from the flags; `first` is the first-layer kernel.
fn params(a: &FitArgs, first: LayerKernel) -> Result<KaeParams> {
    if a.layers() < 2 {
        bail!("invalid --layers {}: a kernel autoencoder has at least 2 layers", a.layers());
    }
    let hidden = vec![a.code_dim(); a.layers() - 1];
    let p = KaeParams::stacked(hidden, first, a.lambda.unwrap_or(okr::defaults::LAMBDA))
        .max_iter(a.max_iter.unwrap_or(500))
        .seed(a.seed);
    p.check_ref()?;
    Ok(p)
}

/// The finite KAE's first kernel from `--input-kernel`.
fn first_layer_kernel(a: &FitArgs) -> Result<LayerKernel> {
    let name = a.input_kernel.to_possible_value().expect("no kernel kind is skipped");
    LayerKernel::from_name(name.get_name(), &a.input_kernel_options()).map_err(|_| {
        anyhow!(
            "--estimator kae supports --input-kernel gaussian, linear or polynomial (got {:?}); \
             use --estimator k2ae for any kernel",
            a.input_kernel
        )
    })
}

/// `okr fit --estimator kae|k2ae`: unsupervised, the labels of the file are ignored.
pub fn fit(a: &FitArgs) -> Result<()> {
    let name = if a.estimator == EstimatorKind::Kae { "kae" } else { "k2ae" };
    let first = if a.estimator == EstimatorKind::Kae { first_layer_kernel(a)? } else { LayerKernel::Linear };
    let params = params(a, first)?;
    let data = read_data(&a.train, &a.data, None)?;
    let (n, d) = (data.n_samples(), data.n_features());
    let standardizer = if a.standardize {
        match &data.x {
            Features::Dense(_) => Some(Standardizer::fit(&data.x)?),
            Features::Sparse(_) => bail!("--standardize with --estimator {name} needs dense input"),
        }
    } else {
        None
    };
    let spinner = ProgressBar::new_spinner().with_message(format!("fitting {name} on {n} samples"));
    let t = Instant::now();
    let mut progress = |step: usize, objective: f64| {
        spinner.set_message(format!("fitting {name} on {n} samples: step {step}, objective {objective:.6}"));
        spinner.tick();
    };
    let x = match &standardizer {
        Some(st) => st.transform_features(&data.x)?,
        None => data.x.clone(),
    };
    let model = match a.estimator {
        EstimatorKind::Kae => Model::Kae(params.check_ref()?.fit_with_progress(x.to_dense().as_ref(), &mut progress)?),
        _ => {
            // The width on the rows the kernel compares (standardized when
            // asked), through okr's one check of the median heuristic.
            let mut unusable = None;
            let median = || {
                okr_kernels::checked_median_gamma(&x, WidthSide::Inputs).unwrap_or_else(|e| {
                    unusable = Some(e);
                    1.0
                })
            };
            let kx = build_kernel(a.input_kernel, a.input_kernel_options(), median, "input");
            if let Some(e) = unusable {
                return Err(e.into());
            }
            let kx = kx?;
            Model::K2ae(params.check_ref()?.fit_k2ae_rows(kx, &x)?)
        }
    };
    let fit_seconds = t.elapsed().as_secs_f64();
    spinner.finish_and_clear();
    let train = match &model {
        Model::Kae(m) => m.train_info().clone(),
        Model::K2ae(m) => m.model().train_info().clone(),
        _ => unreachable!("autoencoders only"),
    };
    let meta = info(&data, index_base(&a.train, &a.data)?, standardizer, a.seed);
    save_fitted(model, meta, fit_seconds, &a.model)?;
    eprintln!(
        "okr: fitted {name} on {n} samples ({d} features, code {}) in {fit_seconds:.2} s: {} steps, objective {:.6} -> {:.6} -> {}",
        a.code_dim(),
        train.n_iter,
        train.objective_history.first().copied().unwrap_or(f64::NAN),
        train.final_objective,
        a.model.display()
    );
    Ok(())
}

/// `okr encode`: one comma-separated code per input line.
pub fn encode(a: &EncodeArgs) -> Result<()> {
    crate::config::check_data_flags(&a.input, &a.data, None)?;
    if let Some(out) = &a.output {
        okr_eval::check_not_input(out, &[("input file", a.input.as_path()), ("model", a.model.as_path())])?;
    }
    set_threads(a.threads)?;
    let mf = crate::model::load(&a.model)?;
    if !is_autoencoder(&mf.model) {
        bail!("{} is a {} model: `okr encode` needs --estimator kae or k2ae", a.model.display(), mf.model.name());
    }
    let data = read_data(&a.input, &a.data, Some(shape(&mf)))?;
    let x = inputs(&mf, &data)?;
    let codes = match &mf.model {
        Model::Kae(m) => m.encode(x.to_dense().as_ref())?,
        Model::K2ae(m) => m.encode(x.as_ref())?,
        _ => unreachable!("checked above"),
    };
    crate::output::write_result(a.output.as_deref(), |out| {
        for i in 0..codes.nrows() {
            let row: Vec<String> = (0..codes.ncols()).map(|j| format!("{}", codes[(i, j)])).collect();
            writeln!(out, "{}", row.join(","))?;
        }
        Ok(())
    })
}
