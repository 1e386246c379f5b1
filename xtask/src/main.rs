//! `cargo xtask`: okr's paper reproduction and benchmark driver.
//!
//! - `cargo xtask reproduce <name>` runs one experiment and writes
//!   `docs/results/<name>.{md,json}` (and plots); `quick` is the README's main job.
//! - `cargo xtask reproduce all [--force]` runs every experiment whose
//!   records are missing or older than the code, then writes the index.
//! - `cargo xtask index` rebuilds `docs/results/index.md` from the records.
//! - `cargo xtask list` prints every experiment with a one-line description.
//! - `cargo xtask test`: the whole test suite, Rust (`cargo test --workspace`)
//!   and Python (the okr wheel built once, pytest on it installed, then the
//!   same wheel in a fresh environment without a Rust toolchain).
//! - `cargo xtask wheel`: the Python package's binary wheel (abi3,
//!   manylinux2014), for users without Rust.
//! - `cargo xtask bench`: the machine's DGEMM rate and IOKR on Bibtex by
//!   phase (`docs/results/bench.{md,json}`); `--precision`: f32 against f64
//!   decoding on Bibtex and a quarter of the Bookmarks stand-in
//!   (`docs/results/bench-f32.{md,json}`); `--scale [--quarter]`: the
//!   Bookmarks-sized fits and decodes by phase (`docs/results/bench-scale.{md,json}`);
//!   `--retrieval [--quick]`: issue 17's scale line, ranking 10^4 (10^3)
//!   queries x 10^3 fingerprint candidates against the machine's DGEMM and
//!   popcount rates (`docs/results/bench-retrieval{,-quick}.{md,json}`).
//!
//! The experiments are organised by paper (`reduced_rank/`, `sketch/`,
//! `leml/`, `trace_norm/`, `kae/`; `metabolite/` is issue 34's workflow); what they share is in `common/`. The
//! [`EXPERIMENTS`] table is the one list of names: it drives `reproduce`,
//! the help text and `list`.
// Flag doc comments are clap's --help text (plain text: `KIND[:p]`, `<name>`), not rustdoc.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod bench;
mod bench_chain;
mod bench_precision;
mod bench_retrieval;
mod bench_scale;
mod common;
mod dask_scale;
mod fuzz;
mod index;
mod input_models;
mod kae;
mod leml;
mod metabolite;
mod python_peers;
mod python_tests;
mod quick;
#[cfg(test)]
mod readme_figures;
mod reduced_rank;
mod retrieval;
mod search_speed;
mod sketch;
mod trace_norm;
mod tune;
mod wheel;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use common::RunArgs;

/// One experiment of `reproduce`.
struct Experiment {
    /// Name on the command line and in `docs/results/<name>.*`.
    name: &'static str,
    /// Other names that run it.
    aliases: &'static [&'static str],
    /// One line for `list` and `--help`.
    description: &'static str,
    /// Runs it.
    run: fn(&RunArgs) -> Result<()>,
    /// Whether `reproduce all` runs it (not for the re-renderings of records).
    in_all: bool,
}

/// Every experiment `reproduce` knows, in the order `list` prints them.
const EXPERIMENTS: &[Experiment] = &[
    Experiment::new(
        "quick",
        "IOKR on six Mulan data sets, (width, lambda) by 3-fold CV, beside the published F1",
        |a| quick::run(&a.datasets_or(&quick::DATASETS), &a.out_dir, a.seed),
    ),
    Experiment::new(
        "rr-multilabel-small",
        "reduced-rank IOKR vs IOKR on the first 2000 rows of Bibtex and Corel5k (Table 7)",
        |a| reduced_rank::small::run(&a.datasets_or(&reduced_rank::small::DATASETS), &a.out_dir, a.seed),
    ),
    Experiment::new(
        "rr-multilabel-full",
        "reduced-rank IOKR vs IOKR on the full Bibtex and Corel5k splits (Tables 5 and 6)",
        |a| reduced_rank::full::run(&a.datasets_or(&reduced_rank::full::DATASETS), &a.out_dir, a.seed),
    ),
    Experiment::new("rr-synthetic", "the reduced-rank paper's synthetic least-squares study (Figures 3 and 5)", |a| {
        reduced_rank::synthetic::run(&a.out_dir, a.seed)
    }),
    Experiment::new("rr-usps", "USPS half-image completion (Table 3, Figure 4)", |a| {
        reduced_rank::usps::run(&a.out_dir, a.seed)
    }),
    Experiment::new(
        "rr-scale",
        "Nystroem KRR and Nystroem reduced rank on the Bookmarks stand-in: time, peak memory",
        |a| reduced_rank::scale::run(&a.out_dir, a.seed),
    ),
    Experiment::new("leml-full", "LEML on bibtex and delicious with full labels, beside Tables 6-11", |a| {
        let ds = a.datasets_or(&["bibtex", "delicious"]);
        let ratios = a.k_ratios.clone().unwrap_or_else(|| leml::paper::FULL_RATIOS.to_vec());
        leml::experiments::run_full(&ds, &a.out_dir, a.seed, &a.losses, &ratios, a.lambdas.as_deref())
    }),
    Experiment::new(
        "leml-full-br-sq",
        "BR with the squared loss and full labels on bibtex and delicious: Fig. 1a/1c's BR line beside leml-full (resumable)",
        |a| leml::br_full::run(&a.datasets_or(&["bibtex", "delicious"]), &a.out_dir, a.seed, a.lambdas.as_deref()),
    ),
    Experiment::new("leml-missing", "LEML with missing labels (observed fractions, draws), beside Tables 12-15", |a| {
        let ratios = a.k_ratios.clone().unwrap_or_else(|| leml::paper::MISSING_RATIOS.to_vec());
        leml::experiments::run_missing(&a.out_dir, a.seed, a.draws, &a.losses, &a.observed, &ratios, a.lambdas.as_deref())
    }),
    Experiment::new("leml-speed", "LEML's speed lines", |a| leml::speed::run_speed(&a.out_dir, a.seed)),
    Experiment::new("leml-theory", "the Rademacher-complexity checks E1-E2 of LEML's theory", |a| {
        leml::theory::run(&a.out_dir, a.seed)
    }),
    Experiment::new("leml-delicious-ablation", "LEML on delicious: the ablation behind the leml-full reading", |a| {
        leml::ablation::run_delicious_ablation(&a.out_dir, a.seed)
    }),
    Experiment::new(
        "tn-table1",
        "Table 1: trace norm vs SELF+HS on sushi, ml100k, jester3 (real) and jester1/2 (stand-ins); --datasets reruns columns",
        |a| trace_norm::table1::run(&a.out_dir, a.seed, a.datasets.as_deref()),
    )
    .aliases(&["tn-jester"]),
    Experiment::new(
        "tn-jester-standins",
        "the other Table 1 rows on seeded stand-ins of their shapes (labelled)",
        |a| trace_norm::standins::run_standins(&a.out_dir, a.seed, a.datasets.as_deref()),
    ),
    Experiment::new("tn-jester-render", "re-renders tn-jester.md from its records", |a| {
        trace_norm::jester::rerender(&a.out_dir)
    })
    .render_only(),
    Experiment::new("tn-table1-render", "re-renders tn-table1.md from its records", |a| {
        trace_norm::table1::rerender(&a.out_dir)
    })
    .render_only(),
    Experiment::new("tn-label-ranking", "trace norm on the 21 label-ranking data sets", |a| {
        let ds = a.datasets_or(&trace_norm::label_ranking::DATASETS);
        trace_norm::label_ranking::run(&ds, &a.out_dir, a.seed)
    }),
    Experiment::new("tn-label-ranking-render", "re-renders tn-label-ranking.md from its records", |a| {
        trace_norm::label_ranking::render(&a.out_dir)
    })
    .render_only(),
    Experiment::new("tn-theory", "the trace-norm spec's checks E1-E3", |a| trace_norm::theory::run(&a.out_dir, a.seed)),
    Experiment::new("kae-graphs", "K2AE vs KPCA codes of the WL graph kernel on MUTAG, PTC_MR, NCI1", |a| {
        let default: Vec<&str> = kae::graphs::DATASETS.iter().map(|d| d.0).collect();
        kae::graphs::run(&a.datasets_or(&default), &a.out_dir, a.seed)
    }),
    Experiment::new("kae-kpca", "the KAE <-> kernel PCA link checked numerically", |a| {
        kae::kpca::run(&a.out_dir, a.seed)
    }),
    Experiment::new("kae-synthetic", "the KAE paper's toy experiments, with plots", |a| {
        kae::synthetic::run(&a.out_dir, a.seed)
    }),
    Experiment::new("kae-fingerprints", "stand-in for the KAE paper's metabolite fingerprint reconstruction", |a| {
        kae::fingerprints::run(&a.out_dir, a.seed)
    }),
    Experiment::new(
        "dask-scale",
        "Nystroem KRR on a quarter of the Bookmarks stand-in: one process vs okr.dask on 2 local workers",
        |a| dask_scale::run_experiment(&a.out_dir, a.seed, 0.25, 3750),
    ),
    Experiment::new(
        "dask-scale-files",
        "dask-scale with the partitions read on the workers from .npy files, one per worker (full size)",
        |a| dask_scale::files::run("dask-scale-files", 1, &a.out_dir, a.seed),
    ),
    Experiment::new("dask-scale-files-quick", "dask-scale-files at 1/4 size", |a| {
        dask_scale::files::run("dask-scale-files-quick", 4, &a.out_dir, a.seed)
    }),
    Experiment::new(
        "input-models",
        "bring your own input model: ridge, MLP, gradient boosting on a sketched output basis beside IOKR / SISOKR (Bibtex, Corel5k, USPS), and the score GEMM rate of decoding from coordinates",
        |a| input_models::run_experiment(&a.out_dir, a.seed),
    ),
    Experiment::new(
        "search-speed",
        "okr.SearchCV against GridSearchCV refitting okr.IOKR on the same grid and folds (Bibtex): time, speed-up, score agreement",
        |a| search_speed::run(&a.datasets_or(&search_speed::DATASETS), &a.out_dir, a.seed),
    ),
    Experiment::new(
        "python-vs-peers",
        "okr's Python IOKR / SISOKR on Bibtex beside numpy and structured-predictions, and the CLI (one run)",
        |a| python_peers::run_experiment(&a.out_dir, a.seed),
    ),
    Experiment::new(
        "retrieval",
        "per-query candidate sets: top-k accuracy and mean rank against the number of distractors (label sets, fingerprint stand-in)",
        |a| retrieval::run(&a.datasets_or(&retrieval::DATASETS), &a.out_dir, a.seed),
    ),
    Experiment::new(
        "metabolite-id",
        "molecule identification from MS/MS spectra on the seeded spectra stand-in: PPK kernels by ALIGNF, IOKR, folds grouped by molecule, top-k beside library search",
        |a| metabolite::run(&a.out_dir, a.seed),
    ),
    Experiment::new(
        "sketch-multilabel",
        "SIOKR / ISOKR / SISOKR vs IOKR on bibtex, delicious, corel5k (30 sketch seeds)",
        |a| sketch::multilabel::run(&a.datasets_or(&sketch::multilabel::DATASETS), &a.out_dir, a.seed),
    ),
    Experiment::new(
        "sketch-scale",
        "SISOKR and SIOKR on the Bookmarks stand-in at growing sizes: time, peak memory",
        |a| sketch::scale::run(&a.out_dir, a.seed),
    ),
    Experiment::new(
        "sketch-scale-report",
        "re-renders sketch-scale.md from its records (after an interrupted run)",
        |a| sketch::scale::report(&a.out_dir),
    )
    .render_only(),
    Experiment::new("sketch-synthetic", "the sketching paper's synthetic study", |a| {
        sketch::synthetic::run(&a.out_dir, a.seed)
    }),
    Experiment::new(
        "tune-estimators",
        "okr tune's K-fold choice vs okr fit's defaults for Nystroem, SISOKR, reduced rank on four Mulan sets",
        |a| tune::run(&a.datasets_or(&tune::DATASETS), &a.out_dir, a.seed),
    ),
    Experiment::new("sketch-timing", "SISOKR on Bibtex, 30 seeds per configuration: fit + decode time and F1", |a| {
        sketch::timing::run(&a.out_dir, a.seed)
    }),
];

impl Experiment {
    const fn new(name: &'static str, description: &'static str, run: fn(&RunArgs) -> Result<()>) -> Self {
        Self { name, aliases: &[], description, run, in_all: true }
    }

    /// Other names that run it.
    const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    /// Marks a re-rendering of existing records, which `reproduce all` skips.
    const fn render_only(mut self) -> Self {
        self.in_all = false;
        self
    }
}

/// The experiment called `name` (or one of its aliases).
fn experiment(name: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name || e.aliases.contains(&name))
}

/// Experiment names with their descriptions, for clap's help and errors.
fn experiment_names() -> PossibleValuesParser {
    let all = PossibleValue::new("all").help("every experiment (resumable, see --force), then docs/results/index.md");
    PossibleValuesParser::new(
        EXPERIMENTS
            .iter()
            .map(|e| PossibleValue::new(e.name).aliases(e.aliases.iter().copied()).help(e.description))
            .chain([all]),
    )
}

/// `reproduce all`: every experiment whose records are missing or older than
/// this binary (so older than the code it was built from), or all of them
/// with `force`; then the index.
fn run_all(args: &RunArgs, force: bool) -> Result<()> {
    let built = std::env::current_exe().and_then(|p| p.metadata()).and_then(|m| m.modified()).ok();
    let todo: Vec<&Experiment> = EXPERIMENTS.iter().filter(|e| e.in_all).collect();
    let pb = ProgressBar::new(todo.len() as u64);
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")?);
    for e in todo {
        let records = args.out_dir.join(format!("{}.json", e.name));
        let written = records.metadata().and_then(|m| m.modified()).ok();
        if !force && matches!((written, built), (Some(w), Some(b)) if w > b) {
            pb.println(format!("{}: records newer than the code, skipped (--force runs it)", e.name));
        } else {
            pb.set_message(e.name);
            (e.run)(args).with_context(|| format!("experiment {}", e.name))?;
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    index::write_index(&args.out_dir)
}

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
        /// Experiment name (`cargo xtask list` describes each), or `all`.
        #[arg(value_parser = experiment_names())]
        name: String,
        /// all: also run the experiments whose records are newer than the code.
        #[arg(long)]
        force: bool,
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
        /// leml-full, leml-missing (lr, sh), leml-full-br-sq: lambda grid for
        /// validation (one value: used without validation). Default
        /// 0.3,1,3,10,30 (leml-full-br-sq: 1,3,10,30,100,300).
        #[arg(long, value_delimiter = ',')]
        lambdas: Option<Vec<f64>>,
    },
    /// List the experiments of `reproduce` with a one-line description each.
    List,
    /// Rebuild docs/results/index.md from the records docs/results/*.json (runs nothing).
    Index {
        /// Records directory (default: docs/results of the workspace).
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
    /// Measure DGEMM and time IOKR on Bibtex by phase; writes docs/results/bench.{md,json}.
    Bench {
        /// Output directory (default: docs/results of the workspace).
        #[arg(long)]
        out_dir: Option<PathBuf>,
        /// Instead: f32 against f64 decoding on Bibtex (IOKR, Nystroem) and a
        /// quarter of the Bookmarks stand-in (time, identical decisions, F1,
        /// near-ties); writes docs/results/bench-f32.{md,json}.
        #[arg(long, conflicts_with_all = ["scale", "retrieval", "chain_order"])]
        precision: bool,
        /// With --precision: the full-size stand-in (60000 / 27856 rows,
        /// 15000 anchors; about 15 min on 2 quiet cores); writes
        /// bench-f32-full.{md,json}.
        #[arg(long, requires = "precision")]
        full: bool,
        /// Instead: the Nystroem KRR / reduced-rank / SISOKR fits and decodes
        /// of rr-scale and sketch-scale on the Bookmarks-shaped stand-in, by
        /// phase (flops, GFLOP/s, fraction of DGEMM, CPU / wall); writes
        /// docs/results/bench-scale.{md,json}. Full size: an estimated 15 min
        /// on 2 quiet cores.
        #[arg(long, conflicts_with = "retrieval")]
        scale: bool,
        /// With --scale: a quarter of every size (15000 / 6964 rows, 3750
        /// anchors); writes bench-scale-quarter.{md,json}.
        #[arg(long, requires = "scale")]
        quarter: bool,
        /// Instead: issue 17's scale line, IOKR with a Tanimoto output kernel
        /// ranking 10^4 queries x 10^3 candidates of 4096-bit fingerprints
        /// (4000 training outputs, a pool of 10^5) under a 1 GiB budget,
        /// against the machine's DGEMM and popcount rates; writes
        /// docs/results/bench-retrieval.{md,json} (a few minutes).
        #[arg(long)]
        retrieval: bool,
        /// With --retrieval: 10^3 queries, bench-retrieval-quick.{md,json}.
        #[arg(long, requires = "retrieval")]
        quick: bool,
        /// Instead: IOKR on Bibtex decoded coefficients first against
        /// candidates first (the ridge solve against the candidates), the test
        /// rows repeated up to 8 times; writes
        /// docs/results/bench-chain-order.{md,json} (a few minutes).
        #[arg(long, conflicts_with_all = ["scale", "retrieval"])]
        chain_order: bool,
    },
    /// The whole test suite: `cargo test --workspace`, then the Python
    /// package built with maturin in target/py-venv and its pytest suite.
    Test {
        /// Skip `cargo test --workspace` (build the package and run pytest only).
        #[arg(long)]
        python_only: bool,
    },
    /// Build the Python package's binary wheel (abi3: CPython 3.11 and
    /// newer; manylinux2014: glibc 2.17 and newer) with maturin and zig;
    /// prints its path, size, build time and tags.
    Wheel {
        /// Directory for the wheel (default: target/wheels).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Fuzz a reader (or `all`) for a time budget; crashing inputs go to
    /// crates/okr-eval/tests/fuzz-regressions/<target>/ (see xtask/src/fuzz).
    Fuzz {
        /// Target name (arff, svmlight, xc, csv, candidates, anchors, ratings,
        /// label-ranking, tu, usps) or `all`.
        target: String,
        /// Seconds per target.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Seed of the mutation RNG.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

fn results_dir(out: Option<PathBuf>) -> PathBuf {
    out.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/results"))
}

fn run() -> Result<()> {
    match Cli::parse().command {
        Command::Reproduce { name, force, datasets, seed, out_dir, draws, losses, k_ratios, observed, lambdas } => {
            let losses = losses
                .iter()
                .map(|l| okr_estimators::leml::Loss::from_name(l).ok_or_else(|| anyhow::anyhow!("unknown loss {l:?}")))
                .collect::<Result<Vec<_>>>()?;
            let args =
                RunArgs { datasets, seed, out_dir: results_dir(out_dir), draws, losses, k_ratios, observed, lambdas };
            if name == "all" {
                return run_all(&args, force);
            }
            let exp = experiment(&name).ok_or_else(|| anyhow::anyhow!("unknown experiment {name:?}"))?;
            (exp.run)(&args)
        }
        Command::List => {
            let width = EXPERIMENTS.iter().map(|e| e.name.len()).max().unwrap_or(0);
            for e in EXPERIMENTS {
                println!("{:width$}  {}", e.name, e.description);
            }
            Ok(())
        }
        Command::Index { out_dir } => index::write_index(&results_dir(out_dir)),
        Command::Bench { out_dir, chain_order: true, .. } => bench_chain::run(&results_dir(out_dir)),
        Command::Bench { out_dir, retrieval: true, quick, .. } => bench_retrieval::run(&results_dir(out_dir), quick),
        Command::Bench { out_dir, precision: true, full, .. } => bench_precision::run(&results_dir(out_dir), full),
        Command::Bench { out_dir, scale: true, quarter, .. } => bench_scale::run(&results_dir(out_dir), quarter),
        Command::Bench { out_dir, .. } => bench::run(&results_dir(out_dir)),
        Command::Fuzz { target, seconds, seed } => fuzz::run(&target, seconds, seed),
        Command::Test { python_only } => python_tests::run_all(python_only),
        Command::Wheel { out } => wheel::run_cli(out),
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn names_are_unique_and_resolve() {
        let mut seen = std::collections::HashSet::new();
        for e in EXPERIMENTS {
            for n in std::iter::once(&e.name).chain(e.aliases) {
                assert!(seen.insert(*n), "{n} listed twice");
                assert_eq!(experiment(n).map(|x| x.name), Some(e.name));
            }
        }
        assert!(experiment("no-such-experiment").is_none());
        assert!(experiment("all").is_none(), "`all` is reserved for reproduce all");
    }

    #[test]
    fn cli_accepts_every_name_and_rejects_others() {
        Cli::command().debug_assert();
        for e in EXPERIMENTS {
            let cli = Cli::try_parse_from(["cargo xtask", "reproduce", e.name]).unwrap();
            assert!(matches!(cli.command, Command::Reproduce { ref name, .. } if name == e.name));
        }
        let err = Cli::try_parse_from(["cargo xtask", "reproduce", "quik"]).unwrap_err();
        assert!(err.to_string().contains("quick"), "{err}");
    }
}
