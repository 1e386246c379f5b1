//! `cargo xtask`: okr's paper reproduction and benchmark driver.
//!
//! - `cargo xtask reproduce quick`: IOKR on six Mulan data sets with
//!   cross-validated hyper-parameters, beside the published figures
//!   (`docs/results/quick.{md,json}`).
//! - `cargo xtask reproduce rr-multilabel-small`: reduced-rank IOKR and IOKR
//!   on the first 2000 training rows of Bibtex and Corel5k (Brogat-Motte et
//!   al. 2022, Table 7; `docs/results/rr-multilabel-small.{md,json}`).
//! - `cargo xtask reproduce rr-multilabel-full`: the same on the full
//!   training splits (Tables 5 and 6; `docs/results/rr-multilabel-full.*`).
//! - `cargo xtask reproduce rr-synthetic`: the synthetic least-squares study
//!   of the same paper (Figures 3 and 5; `docs/results/rr-synthetic.*`).
//! - `cargo xtask reproduce rr-usps`: USPS half-image completion (Table 3,
//!   Figure 4; `docs/results/rr-usps.*`).
//! - `cargo xtask bench`: the machine's DGEMM rate and IOKR on Bibtex by
//!   phase (`docs/results/bench.{md,json}`).

mod bench;
mod cv;
mod data;
mod plot;
mod quick;
mod report;
mod rr_full;
mod rr_small;
mod rr_synthetic;
mod rr_usps;

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
        /// `rr-multilabel-small` (reduced-rank IOKR vs IOKR on 2000 rows of bibtex, corel5k),
        /// `rr-multilabel-full` (the same on the full training splits, Tables 5 and 6),
        /// `rr-synthetic` (the synthetic least-squares study, Figures 3 and 5),
        /// or `rr-usps` (USPS half-image completion, Table 3 and Figure 4).
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
            "rr-synthetic" => rr_synthetic::run(&results_dir(out_dir), seed),
            "rr-usps" => rr_usps::run(&results_dir(out_dir), seed),
            "rr-multilabel-full" => {
                let ds = datasets.unwrap_or_else(|| rr_full::DATASETS.iter().map(|s| s.to_string()).collect());
                rr_full::run(&ds, &results_dir(out_dir), seed)
            }
            other => anyhow::bail!(
                "unknown experiment {other:?}; available: quick, rr-multilabel-small, rr-multilabel-full, rr-synthetic, rr-usps"
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
