//! Command-line definitions (clap derive). Values are only parsed here;
//! `config.rs` turns them into readers, kernels and estimator parameters.

use clap::{Parser, Subcommand};

pub mod args;
pub mod data;
pub mod embed;
pub mod fit;
pub mod gen_args;
pub mod output;
pub mod outputs;
pub mod rank;
pub mod spectra_gram;
pub mod tune;

pub use args::{CsvHeaderFlag, DataArgs, DecodeArgs, EncodeArgs, EvalArgs, Format, PredictArgs};
pub use data::DataCommand;
pub use embed::{CoordDecodeArgs, EmbedArgs};
pub use fit::{EstimatorKind, FitArgs, KernelKind, MklKind};
pub use gen_args::{GenArgs, GenFormat};
pub use output::{InfoArgs, OutputFormat, RenderArgs};
pub use outputs::{FingerprintFormat, OutputFileArgs, OutputKindFlag};
pub use rank::RankArgs;
pub use spectra_gram::{SpectraGramArgs, SpectraKernelArgs};
pub use tune::TuneArgs;

/// okr: output kernel regression for structured prediction.
///
/// Learn h: X -> H_Y (the RKHS of an output kernel) by kernel ridge
/// regression (IOKR, or another --estimator), then decode each prediction to
/// the closest candidate output: y(x) = argmin_c k(c,c) - 2 <h(x), psi(c)>.
/// Typical use on a multi-label data set (defaults: features standardized when
/// dense and not binary, the input width by the median heuristic, IOKR's lambda
/// by closed-form leave-one-out F1; `okr tune` cross-validates width and lambda):
///
///   okr fit     --train train.csv --label-count 6 -m model.okr
///
///   okr predict -m model.okr -i new.csv -o predicted.txt
///
///   okr eval    -m model.okr -i test.csv
///
/// Flags mean the same in every subcommand: -m/--model is the model file (written
/// by fit and tune, read by the others), -i/--input the data file a model reads,
/// -o/--output where results go. Errors are printed on one line and exit with status 2.
#[derive(Debug, Parser)]
#[command(name = "okr", version, about, long_about, max_term_width = 100)]
pub struct Cli {
    /// Draw no progress bars.
    ///
    /// Bars (solver iterations, tuning fits, long decodes, downloads) are drawn on
    /// standard error only when it is a terminal; --quiet turns them off there too.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The okr subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fit a model on a training file and save it.
    ///
    /// The model file stores the parameters, the training data it needs for
    /// prediction and the factorized kernel system; it is written atomically.
    Fit(Box<FitArgs>),
    /// Choose the Gaussian width and the ridge of an estimator, refit and save the best model.
    ///
    /// Prints the grid (mean and standard deviation of the fold scores for every
    /// width and ridge), the fold scores and the choice; then fits the estimator on
    /// the whole training file with the choice and saves it like `okr fit`. For IOKR
    /// each width costs one eigendecomposition per fold, which serves every ridge (the
    /// regularization path); the other kernel-output estimators (reduced-rank, kde,
    /// trace-norm, siokr, isokr, sisokr, nystroem) are refitted for every fold, width
    /// and ridge, with their other flags (--rank, sketches, --anchors, --seed) fixed.
    /// Label sets and fingerprints are scored by F1 of the decoded sets, vector outputs
    /// (--output-kind vector, every estimator refitted) by the mean squared error of the
    /// decoded vectors; a fit that fails is scored NaN and never chosen.
    Tune(Box<TuneArgs>),
    /// Predict label sets for an input file with a saved model.
    ///
    /// The input file may hold the features alone (ARFF without the label
    /// attributes, CSV without the label columns, svmlight/XC rows without label
    /// lists) or features and labels (ignored). Writes one line per input: the predicted labels, comma separated
    /// (0-based), or the top-k candidates with --top-k; --output-format csv / json
    /// write label names, --scores the scores.
    ///
    /// Vector models (fit --output-kind vector) write the decoded candidate vectors
    /// (top-k `;`-separated), or with --output-format json {candidate_ids, scores, output}.
    /// Graph models write the chosen candidate's index, ranking models the decoded ranking
    /// (1-based ranks of the items); csv and json as in docs/output-kinds.md.
    Predict(PredictArgs),
    /// Evaluate a saved model on a labelled test file; prints one JSON object.
    ///
    /// Every estimator prints the same keys in the same units (null where a key
    /// does not apply):
    ///
    ///   estimator, n_test, n_labels      the model and the test file
    ///   n_candidates                     candidate outputs decoded (null for leml)
    ///   threshold                        score threshold (leml; null when decoding)
    ///   f1_samples, f1_micro, f1_macro   fractions in [0, 1] (x100 for the papers' F1)
    ///   hamming                          fraction of wrong label entries
    ///   subset_accuracy                  fraction of exactly right label sets
    ///   jaccard_samples                  mean |y & yhat| / |y | yhat| (0 when both empty)
    ///   lrap                             label ranking average precision, fraction
    ///   auc                              per-instance ranking AUC, fraction (null if undefined)
    ///   p_at_1, p_at_3, p_at_5           precision@k in PERCENT (null when k > n_labels)
    ///   mse_h                            mean ||h(x) - psi(y)||^2 (null for leml)
    ///   fit_seconds, decode_seconds      seconds
    ///
    /// and with --per-label, "per_label": one {label, precision, recall, f1,
    /// support} per label, in label order (fractions; support a count).
    /// With --outputs (fingerprint models) the true outputs come from that file, and
    /// "output_kernel_loss" (mean ||psi(yhat) - psi(y)||^2) is added. Vector models
    /// need --outputs and print estimator, output_kind, n_test, output_dim,
    /// n_candidates, output_kernel_loss (+ _se), mse_h, fit_seconds, decode_seconds.
    /// Graph models (true graphs: --outputs DIR/NAME, a TU data set) print top1_exact_match
    /// and rbf_loss (2 - 2 k(yhat, y), normalized WL); ranking models (--input a label-ranking
    /// file) print kendall_tau and pairwise_disagreement.
    ///
    /// The set metrics equal scikit-learn's f1_score (average samples / micro /
    /// macro), hamming_loss, accuracy_score, jaccard_score(average="samples") and
    /// precision_recall_fscore_support(average=None), all with zero_division=0;
    /// lrap equals label_ranking_average_precision_score.
    ///
    /// Label scores (lrap, auc, p_at_k): leml's own scores; for the decoding
    /// estimators sum_i w_i(x) y_i, with w(x) the weights h(x) puts on the
    /// distinct training outputs (IOKR: the ridge coefficients alpha(x);
    /// reduced-rank, kde and the others: C B, coefficients times the atoms'
    /// weights). They read h(x) with a linear output kernel, which is exact for
    /// IOKR (alpha does not depend on the output kernel).
    Eval(EvalArgs),
    /// Rank each query's own candidate set (retrieval) with a saved model; writes a CSV table.
    #[command(long_about = rank::RANK_HELP)]
    Rank(RankArgs),
    /// Fit an output basis on an output file and write the outputs' coordinates.
    ///
    /// Bring your own input model: any regressor (in any language) learns inputs -> these
    /// coordinates, and `okr decode` turns its predicted coordinates into outputs. The basis
    /// e_1..e_r is orthonormal in the output kernel's RKHS: the exact basis (kernel PCA of the
    /// output Gram over the distinct outputs), a sketched basis or Nystroem anchors. The
    /// coordinates of an output y are z_j = <e_j, psi(y)>.
    EmbedOutputs(Box<EmbedArgs>),
    /// Decode coordinates predicted elsewhere against candidate outputs.
    ///
    /// Scores each candidate c by k(c, c) - 2 z^T z(c) (lower is better; ties to the lower
    /// index) with the same tiles, memory budget and precision as `okr predict`, and writes the
    /// same formats. Coordinates of another width, NaN values or a file naming another basis
    /// are refused with one line.
    Decode(Box<CoordDecodeArgs>),
    /// Describe a model file: estimator, kernels, hyper-parameters, label names, versions.
    Info(InfoArgs),
    /// Encode an input file with a saved kernel autoencoder (--estimator kae or k2ae).
    ///
    /// Writes one line per input: its code, comma separated.
    Encode(EncodeArgs),
    /// Benchmark data by name: list the data sets, fetch one into OKR_DATA_DIR.
    #[command(subcommand)]
    Data(DataCommand),
    /// Generate a seeded stand-in multi-label data set in a reader format.
    ///
    /// Presets have the shape of the benchmark data sets (bibtex, corel5k,
    /// ...); results on them are stand-ins, not the real benchmarks.
    Gen(GenArgs),
    /// Write the probability product kernel of MS/MS spectra (MGF or MSP) as a Gram file.
    #[command(long_about = spectra_gram::GRAM_HELP)]
    Gram(SpectraGramArgs),
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::PathBuf;

    use super::*;

    /// `okr ARGS` parsed (the submodules' tests share these helpers).
    pub(crate) fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("okr").chain(args.iter().copied())).unwrap()
    }

    /// `okr fit --train t.arff --model m.okr EXTRA` parsed.
    pub(crate) fn fit(extra: &[&str]) -> FitArgs {
        let mut a = vec!["fit", "--train", "t.arff", "--model", "m.okr"];
        a.extend_from_slice(extra);
        match parse(&a).command {
            Command::Fit(f) => *f,
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn input_gram_test_flag() {
        match parse(&["predict", "-m", "m.okr", "--input-gram-test", "kt.txt"]).command {
            Command::Predict(p) => {
                assert_eq!((p.input, p.decode.input_gram_test), (None, Some(PathBuf::from("kt.txt"))));
            }
            c => panic!("{c:?}"),
        }
        assert!(Cli::try_parse_from(["okr", "predict", "-m", "m.okr"]).is_err(), "--input or --input-gram-test");
        match parse(&["rank", "-m", "m", "--input-gram-test", "kt.npy", "--candidates-per-query", "q"]).command {
            Command::Rank(r) => assert_eq!((r.input, r.input_gram_test), (None, Some(PathBuf::from("kt.npy")))),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn predict_and_eval_flags() {
        let c = parse(&[
            "predict",
            "-m",
            "m.okr",
            "--input",
            "x.svm",
            "--top-k",
            "3",
            "--candidates",
            "c.txt",
            "-o",
            "p.txt",
        ]);
        match c.command {
            Command::Predict(p) => {
                assert_eq!((p.top_k, p.decode.memory_budget), (3, 1024));
                assert_eq!(p.decode.candidates.as_deref(), Some(std::path::Path::new("c.txt")));
                assert_eq!(p.output.as_deref(), Some(std::path::Path::new("p.txt")));
            }
            c => panic!("{c:?}"),
        }
        let c = parse(&[
            "eval",
            "-m",
            "m.okr",
            "--test",
            "t.arff",
            "--label-count",
            "6",
            "--memory-budget",
            "64",
            "--threads",
            "1",
        ]);
        match c.command {
            Command::Eval(e) => {
                assert_eq!((e.data.label_count, e.decode.memory_budget, e.decode.threads), (Some(6), 64, Some(1)));
            }
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn top_k_and_memory_budget_zero_are_rejected() {
        for flag in ["--top-k", "--memory-budget"] {
            let r = Cli::try_parse_from(["okr", "predict", "-m", "m", "--input", "x", flag, "0"]);
            let e = r.unwrap_err().to_string();
            assert!(e.contains(flag) && e.contains("at least 1"), "{e}");
        }
        let r = Cli::try_parse_from(["okr", "eval", "-m", "m", "--test", "x", "--memory-budget", "0"]);
        assert!(r.is_err());
    }

    #[test]
    fn csv_header_flag() {
        assert_eq!(fit(&[]).data.csv_header, CsvHeaderFlag::Auto);
        assert_eq!(fit(&["--csv-header", "yes"]).data.csv_header, CsvHeaderFlag::Yes);
        assert_eq!(fit(&["--csv-header", "no"]).data.csv_header, CsvHeaderFlag::No);
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "a", "--model", "b", "--csv-header", "x"]).is_err());
    }

    #[test]
    fn gen_flags() {
        match parse(&["gen", "--preset", "yeast", "--seed", "3", "--scale", "0.5", "--format", "svmlight", "-o", "d"])
            .command
        {
            Command::Gen(g) => {
                assert_eq!((g.preset.as_str(), g.seed, g.scale, g.format), ("yeast", 3, 0.5, GenFormat::Svmlight));
            }
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn help_renders() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("output kernel regression"));
    }
}
