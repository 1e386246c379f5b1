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
//! - `cargo xtask reproduce rr-scale`: Nystroem KRR and Nystroem reduced-rank
//!   IOKR on the Bookmarks-shaped stand-in at full size (Tables 5-6; time and
//!   peak memory; `docs/results/rr-scale.*`).
//! - `cargo xtask reproduce leml-full | leml-missing | leml-speed | leml-theory`: LEML
//!   (Yu et al. 2014) on bibtex and delicious beside Tables 6-15, and its
//!   speed lines, and the Rademacher-complexity checks E1-E2 of its theory
//!   (`docs/results/leml-*.{md,json}`).
//! - `cargo xtask reproduce tn-jester` / `tn-label-ranking` / `tn-theory`:
//!   trace-norm surrogate prediction (Luise et al. 2019): jester3 ranking
//!   (Table 1), the 21 label-ranking data sets, and spec 4's E1-E3.
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
mod leml;
mod leml_paper;
mod leml_theory;
mod plot;
mod quick;
mod report;
mod rr_full;
mod rr_scale;
mod rr_small;
mod rr_synthetic;
mod rr_usps;
mod sketch_multilabel;
mod sketch_scale;
mod sketch_synthetic;
mod sketch_timing;
mod tn_jester;
mod tn_label_ranking;
mod tn_theory;

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
        /// Experiment name; `quick` is the README's main job. The others (one per
        /// paper table or figure, see the crate docs and docs/results/): rr-multilabel-small,
        /// rr-multilabel-full, rr-synthetic, rr-usps, rr-scale, leml-full, leml-missing, leml-speed,
        /// leml-theory, leml-delicious-ablation, tn-jester, tn-jester-standins, tn-jester-render,
        /// tn-label-ranking, tn-label-ranking-render, tn-theory, kae-graphs, kae-kpca,
        /// kae-synthetic, kae-fingerprints, sketch-multilabel, sketch-scale, sketch-scale-report, sketch-synthetic, sketch-timing.
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
        /// leml-missing: random draws of the observed set per setting.
        #[arg(long, default_value_t = 5)]
        draws: usize,
        /// leml-full, leml-missing: losses to run (comma separated: sq, lr, sh).
        #[arg(long, value_delimiter = ',', default_value = "sq,lr,sh")]
        losses: Vec<String>,
        /// leml-full, leml-missing: k/L ratios in percent (default: the paper's).
        #[arg(long, value_delimiter = ',')]
        k_ratios: Option<Vec<usize>>,
        /// leml-missing: observed fractions |Omega|/nL in percent.
        #[arg(long, value_delimiter = ',', default_value = "5,10,20,40")]
        observed: Vec<usize>,
    },
    /// Measure DGEMM and time IOKR on Bibtex by phase; writes docs/results/bench.{md,json}.
    Bench {
        /// Output directory (default: docs/results of the workspace).
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
}

/// Every experiment `reproduce` knows.
const EXPERIMENTS: &[&str] = &[
    "quick",
    "rr-multilabel-small",
    "rr-multilabel-full",
    "rr-synthetic",
    "rr-usps",
    "rr-scale",
    "leml-full",
    "leml-missing",
    "leml-speed",
    "leml-theory",
    "leml-delicious-ablation",
    "tn-jester",
    "tn-jester-standins",
    "tn-jester-render",
    "tn-label-ranking",
    "tn-label-ranking-render",
    "tn-theory",
    "kae-graphs",
    "kae-kpca",
    "kae-synthetic",
    "kae-fingerprints",
    "sketch-multilabel",
    "sketch-scale",
    "sketch-scale-report",
    "sketch-synthetic",
    "sketch-timing",
];

fn results_dir(out: Option<PathBuf>) -> PathBuf {
    out.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/results"))
}

fn run() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Reproduce { name, datasets, seed, out_dir, draws, losses, k_ratios, observed } => {
            let losses = losses
                .iter()
                .map(|l| okr_estimators::leml::Loss::from_name(l).ok_or_else(|| anyhow::anyhow!("unknown loss {l:?}")))
                .collect::<anyhow::Result<Vec<_>>>()?;
            match name.as_str() {
                "quick" => {
                    let ds = datasets.unwrap_or_else(|| quick::DATASETS.iter().map(|s| s.to_string()).collect());
                    quick::run(&ds, &results_dir(out_dir), seed)
                }
                "rr-multilabel-small" => {
                    let ds = datasets.unwrap_or_else(|| rr_small::DATASETS.iter().map(|s| s.to_string()).collect());
                    rr_small::run(&ds, &results_dir(out_dir), seed)
                }
                "leml-full" => {
                    let ds = datasets.unwrap_or_else(|| vec!["bibtex".into(), "delicious".into()]);
                    let ratios = k_ratios.unwrap_or_else(|| leml_paper::FULL_RATIOS.to_vec());
                    leml::run_full(&ds, &results_dir(out_dir), seed, &losses, &ratios)
                }
                "leml-missing" => {
                    let ratios = k_ratios.unwrap_or_else(|| leml_paper::MISSING_RATIOS.to_vec());
                    leml::run_missing(&results_dir(out_dir), seed, draws, &losses, &observed, &ratios)
                }
                "leml-speed" => leml::run_speed(&results_dir(out_dir), seed),
                "leml-theory" => leml_theory::run(&results_dir(out_dir), seed),
                "leml-delicious-ablation" => leml::run_delicious_ablation(&results_dir(out_dir), seed),
                "tn-jester" => {
                    let max_users = std::env::var("OKR_TN_MAX_USERS").ok().and_then(|v| v.parse().ok());
                    tn_jester::run(&results_dir(out_dir), seed, max_users)
                }
                "tn-theory" => tn_theory::run(&results_dir(out_dir), seed),
                "tn-label-ranking-render" => tn_label_ranking::render(&results_dir(out_dir)),
                "tn-jester-render" => tn_jester::rerender(&results_dir(out_dir)),
                "tn-jester-standins" => tn_jester::run_standins(&results_dir(out_dir), seed, datasets.as_deref()),
                "tn-label-ranking" => {
                    let ds =
                        datasets.unwrap_or_else(|| tn_label_ranking::DATASETS.iter().map(|s| s.to_string()).collect());
                    tn_label_ranking::run(&ds, &results_dir(out_dir), seed)
                }
                "kae-graphs" => {
                    let ds = datasets.unwrap_or_else(|| kae_graphs::DATASETS.iter().map(|d| d.0.to_string()).collect());
                    kae_graphs::run(&ds, &results_dir(out_dir), seed)
                }
                "kae-kpca" => kae_kpca::run(&results_dir(out_dir), seed),
                "kae-synthetic" => kae_synthetic::run(&results_dir(out_dir), seed),
                "kae-fingerprints" => kae_fingerprints::run(&results_dir(out_dir), seed),
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
                "rr-synthetic" => rr_synthetic::run(&results_dir(out_dir), seed),
                "rr-usps" => rr_usps::run(&results_dir(out_dir), seed),
                "rr-scale" => rr_scale::run(&results_dir(out_dir), seed),
                "rr-multilabel-full" => {
                    let ds = datasets.unwrap_or_else(|| rr_full::DATASETS.iter().map(|s| s.to_string()).collect());
                    rr_full::run(&ds, &results_dir(out_dir), seed)
                }
                other => anyhow::bail!("unknown experiment {other:?}; available: {}", EXPERIMENTS.join(", ")),
            }
        }
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
