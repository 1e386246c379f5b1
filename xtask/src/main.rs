//! `cargo xtask`: okr's paper reproduction and benchmark driver.
//!
//! - `cargo xtask reproduce quick`: IOKR on six Mulan data sets with
//!   cross-validated hyper-parameters, beside the published figures
//!   (`docs/results/quick.{md,json}`).
//! - `cargo xtask reproduce rr-multilabel-small`: reduced-rank IOKR and IOKR
//!   on the first 2000 training rows of Bibtex and Corel5k (Brogat-Motte et
//!   al. 2022, Table 7; `docs/results/rr-multilabel-small.{md,json}`).
//! - `cargo xtask reproduce kae-graphs`: K2AE vs KPCA codes of the WL graph
//!   kernel on MUTAG, PTC_MR, NCI1 (`docs/results/kae-graphs.{md,json}`).
//! - `cargo xtask reproduce kae-kpca`: the KAE <-> kernel PCA link checked
//!   numerically (`docs/results/kae-kpca.{md,json}`).
//! - `cargo xtask reproduce kae-synthetic`: the KAE paper's toy experiments
//!   with plots (`docs/results/kae-synthetic.{md,json}` and PNGs).
//! - `cargo xtask reproduce kae-fingerprints`: stand-in for the KAE paper's
//!   metabolite fingerprint reconstruction (`docs/results/kae-fingerprints.{md,json}`).
//! - `cargo xtask bench`: the machine's DGEMM rate and IOKR on Bibtex by
//!   phase (`docs/results/bench.{md,json}`).

mod bench;
mod cv;
mod data;
mod kae_common;
mod kae_fingerprints;
mod kae_graphs;
mod kae_kpca;
mod kae_synthetic;
mod quick;
mod report;
mod rr_small;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// okr's experiment driver.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Reproduce a paper experiment and write docs/results/<name>.{md,json}.
    Reproduce {
        /// Experiment: `quick` (IOKR on bibtex, corel5k, yeast, scene, emotions, enron)
        /// or `rr-multilabel-small` (reduced-rank IOKR vs IOKR on 2000 rows of bibtex, corel5k).
        name: String,
        /// Restrict to these data sets (comma separated).
        #[arg(long, value_delimiter = ',')]
        datasets: Option<Vec<String>>,
        /// Seed for folds and stand-ins.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output directory (default: docs/results of the workspace).
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
    /// Measure DGEMM and time IOKR on Bibtex by phase; writes docs/results/bench.{md,json}.
    Bench {
        /// Output directory (default: docs/results of the workspace).
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
}

fn results_dir(out: Option<PathBuf>) -> PathBuf {
    out.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/results"))
}

fn run() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Reproduce { name, datasets, seed, out_dir } => match name.as_str() {
            "quick" => {
                let ds = datasets.unwrap_or_else(|| quick::DATASETS.iter().map(|s| s.to_string()).collect());
                quick::run(&ds, &results_dir(out_dir), seed)
            }
            "rr-multilabel-small" => {
                let ds = datasets.unwrap_or_else(|| rr_small::DATASETS.iter().map(|s| s.to_string()).collect());
                rr_small::run(&ds, &results_dir(out_dir), seed)
            }
            "kae-graphs" => {
                let ds = datasets.unwrap_or_else(|| kae_graphs::DATASETS.iter().map(|d| d.0.to_string()).collect());
                kae_graphs::run(&ds, &results_dir(out_dir), seed)
            }
            "kae-kpca" => kae_kpca::run(&results_dir(out_dir), seed),
            "kae-synthetic" => kae_synthetic::run(&results_dir(out_dir), seed),
            "kae-fingerprints" => kae_fingerprints::run(&results_dir(out_dir), seed),
            other => anyhow::bail!(
                "unknown experiment {other:?}; available: quick, rr-multilabel-small, kae-graphs, kae-kpca, kae-synthetic, kae-fingerprints"
            ),
        },
        Command::Bench { out_dir } => bench::run(&results_dir(out_dir)),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::from(2)
        }
    }
}
