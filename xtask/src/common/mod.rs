//! What every paper's experiments share: data loading with labelled
//! stand-ins, result records and markdown tables, plots, the IOKR
//! cross-validation glue, process measurements, and the arguments of
//! `reproduce`.

pub mod cv;
pub mod data;
pub mod fingerprints;
pub mod plot;
pub mod process;
pub mod report;
pub mod rng;
pub mod stats;
pub mod timing;

use std::path::PathBuf;

use okr_estimators::leml::Loss;

/// The resolved arguments of `cargo xtask reproduce <name>`; each experiment
/// reads the ones it takes.
#[derive(Debug, Clone)]
pub struct RunArgs {
    /// `--datasets`: restrict to these data sets.
    pub datasets: Option<Vec<String>>,
    /// `--seed`: folds, stand-ins and draws.
    pub seed: u64,
    /// Where records, tables and plots go.
    pub out_dir: PathBuf,
    /// `--draws` (leml-missing).
    pub draws: usize,
    /// `--losses` (leml-full, leml-missing).
    pub losses: Vec<Loss>,
    /// `--k-ratios` in percent (leml-full, leml-missing).
    pub k_ratios: Option<Vec<usize>>,
    /// leml-full, leml-missing (lr, sh): the lambda grid, if not the default.
    pub lambdas: Option<Vec<f64>>,
    /// `--observed` fractions in percent (leml-missing).
    pub observed: Vec<usize>,
}

impl RunArgs {
    /// `--datasets`, or `default` when not given.
    pub fn datasets_or(&self, default: &[&str]) -> Vec<String> {
        self.datasets.clone().unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
    }
}
