//! `cargo xtask`: okr's paper reproduction and benchmark driver.
//!
//! - `cargo xtask reproduce quick`: IOKR on six Mulan data sets with
//!   cross-validated hyper-parameters, beside the published figures
//!   (`docs/results/quick.{md,json}`).
//! - `cargo xtask reproduce rr-multilabel-small`: reduced-rank IOKR and IOKR
//!   on the first 2000 training rows of Bibtex and Corel5k (Brogat-Motte et
//!   al. 2022, Table 7; `docs/results/rr-multilabel-small.{md,json}`).
//! - `cargo xtask bench`: the machine's DGEMM rate and IOKR on Bibtex by
//!   phase (`docs/results/bench.{md,json}`).

mod bench;
mod cv;
mod data;
mod quick;
mod report;
mod rr_small;
mod sketch_multilabel;
mod sketch_scale;
mod sketch_synthetic;
mod sketch_timing;

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
            "sketch-multilabel" => {
                let ds =
                    datasets.unwrap_or_else(|| sketch_multilabel::DATASETS.iter().map(|s| s.to_string()).collect());
                sketch_multilabel::run(&ds, &results_dir(out_dir), seed)
            }
            "sketch-scale" => sketch_scale::run(&results_dir(out_dir), seed),
            // Renders sketch-scale.md from its records (after an interrupted run).
            "sketch-scale-report" => sketch_scale::report(&results_dir(out_dir)),
            "sketch-synthetic" => sketch_synthetic::run(&results_dir(out_dir), seed),
            "sketch-timing" => sketch_timing::run(&results_dir(out_dir), seed),
            other => anyhow::bail!(
                "unknown experiment {other:?}; available: quick, rr-multilabel-small, sketch-multilabel, sketch-scale, \
                 sketch-synthetic, sketch-timing"
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
