//! Arguments shared by several subcommands (data files, decoding) and the
//! predict, eval and encode arguments: the leaves of the command line that
//! `cli.rs` assembles.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::output::{OutputFormat, RenderArgs};
use super::outputs::OutputFileArgs;

/// Help shared by the Gram flags of fit, predict, eval and rank.
pub(crate) const GRAM_FILES: &str = "A file ending in .npy is a NumPy array of float64 (or float32), C or \
Fortran order; any other file is text: one matrix row per line, values separated by whitespace \
or commas, `#` comment lines and blank lines skipped (what numpy.savetxt writes). Entries must \
be finite.";

/// Parses a count that must be at least 1 (`--top-k`, `--memory-budget`).
pub(crate) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("expected at least 1, got 0".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// File formats okr reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Guess from the extension: .arff, .svm/.svmlight/.libsvm, .xc, .csv.
    Auto,
    /// Mulan ARFF (dense or sparse rows); labels are the last --label-count attributes.
    Arff,
    /// svmlight / libsvm multi-label: `l1,l2 f:v ...` (1-based features unless --zero-based).
    Svmlight,
    /// Extreme Classification format: header `n d L`, then svmlight rows (0-based features).
    Xc,
    /// CSV: features then --label-count 0/1 label columns, optional header.
    Csv,
}

/// How to read a data file.
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// File format.
    #[arg(long, value_enum, default_value_t = Format::Auto, value_name = "FORMAT")]
    pub format: Format,
    /// Number of labels (the last attributes of an ARFF file, the last columns of a CSV file;
    /// for an svmlight training file, labels that never occur in it still count).
    ///
    /// Only `okr fit` needs it. predict, eval and encode take the model's widths: a file
    /// with the model's features alone (no label columns) or followed by its labels both
    /// read; there the flag is a check (0: no label columns, the model's count: labels).
    #[arg(long, value_name = "L")]
    pub label_count: Option<usize>,
    /// svmlight feature indices start at 0 instead of 1 (svmlight files only).
    #[arg(long)]
    pub zero_based: bool,
    /// Whether a CSV file starts with a header line of names (CSV files only).
    ///
    /// auto: the first line is a header when a field is not a number or is
    /// quoted; a first line of column numbers (0,1,2,... or 1,2,3,...) is
    /// refused as ambiguous; any other line of numbers is data.
    #[arg(long, value_enum, default_value_t = CsvHeaderFlag::Auto, value_name = "WHEN")]
    pub csv_header: CsvHeaderFlag,
}

/// `--csv-header`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CsvHeaderFlag {
    /// Detect (see --help).
    Auto,
    /// The first line is a header.
    Yes,
    /// There is no header line.
    No,
}

const INPUT_GRAM_TEST_HELP: &str = "Test x train Gram K(test, train) for a model fitted with \
--input-gram: one row per test point, one column per training row (in the order of the training \
Gram). Replaces the test features: predict needs no --input, eval reads only the labels of \
--input (row i of the Gram is row i of the file).";

/// Arguments of `okr encode`.
#[derive(Debug, Clone, Args)]
pub struct EncodeArgs {
    /// Model file written by `okr fit --estimator kae|k2ae`.
    #[arg(long, short = 'm', value_name = "PATH")]
    pub model: PathBuf,
    /// Input file to encode (the model's features, with or without label columns).
    #[arg(long, short = 'i', value_name = "PATH")]
    pub input: PathBuf,
    /// How to read the input file.
    #[command(flatten)]
    pub data: DataArgs,
    /// Where to write the codes (default: standard output).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// Candidate options shared by `predict` and `eval`.
#[derive(Debug, Clone, Args)]
pub struct DecodeArgs {
    /// Candidate label sets, one per line as comma-separated 0-based labels (an empty line is
    /// the empty set). Default: the distinct training label sets in first-occurrence order.
    /// Graph models: a TU data set DIR/NAME; ranking models: one ranking per line, its 1-based
    /// item ranks (default: the training graphs / distinct training rankings).
    #[arg(long, value_name = "PATH")]
    pub candidates: Option<PathBuf>,
    /// Memory budget for the decoding tiles, in MiB (at least 1).
    #[arg(long, default_value_t = 1024, value_name = "MIB", value_parser = at_least_one)]
    pub memory_budget: usize,
    /// Test x train Gram (.npy or text) for a model fitted with --input-gram.
    #[arg(long, value_name = "PATH", long_help = format!("{INPUT_GRAM_TEST_HELP}\n\n{GRAM_FILES}"))]
    pub input_gram_test: Option<PathBuf>,
    /// Score precision: f64, or f32 (scores in single precision, each row's best re-scored in f64:
    /// the f64 decision except for near-ties, see okr_decode::f32_margin; faster on many candidates).
    #[arg(long, default_value = "f64", value_name = "f64|f32")]
    pub precision: okr_decode::Precision,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

impl DecodeArgs {
    /// The candidate decoder of `--memory-budget` and `--precision`.
    pub fn decoder(&self) -> okr_decode::CandidateDecoder {
        let budget = self.memory_budget.saturating_mul(1 << 20);
        okr_decode::CandidateDecoder::new().memory_budget(budget).precision(self.precision)
    }
}

/// Arguments of `okr predict`.
#[derive(Debug, Clone, Args)]
pub struct PredictArgs {
    /// Model file written by `okr fit`.
    #[arg(long, short = 'm', value_name = "PATH")]
    pub model: PathBuf,
    /// Input file: the model's features, with or without label columns (labels are ignored);
    /// not needed with --input-gram-test.
    #[arg(long, short = 'i', value_name = "PATH", required_unless_present = "input_gram_test")]
    pub input: Option<PathBuf>,
    /// How to read the input file.
    #[command(flatten)]
    pub data: DataArgs,
    /// Candidates and resources.
    #[command(flatten)]
    pub decode: DecodeArgs,
    /// Print the k best candidates per input (`;`-separated, best first; at least 1).
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = at_least_one)]
    pub top_k: usize,
    /// Output format, scores and thresholds.
    #[command(flatten)]
    pub render: RenderArgs,
    /// Output file (default: standard output).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// Arguments of `okr eval`.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// Model file written by `okr fit`.
    #[arg(long, short = 'm', value_name = "PATH")]
    pub model: PathBuf,
    /// Labelled test file (--test is an alias; or --dataset).
    #[arg(
        long = "input",
        id = "input",
        short = 'i',
        alias = "test",
        value_name = "PATH",
        required_unless_present = "dataset"
    )]
    pub input_file: Option<PathBuf>,
    /// The test file, from --input or --dataset (set before the command runs).
    #[arg(skip)]
    pub input: PathBuf,
    /// A benchmark data set by name (`okr data list`): its test file in OKR_DATA_DIR.
    #[arg(long, value_name = "NAME")]
    pub dataset: Option<String>,
    /// How to read the test file.
    #[command(flatten)]
    pub data: DataArgs,
    /// Candidates and resources.
    #[command(flatten)]
    pub decode: DecodeArgs,
    /// The true outputs of a fingerprint or vector model.
    #[command(flatten)]
    pub output_file: OutputFileArgs,
    /// Add precision, recall, F1 and support of every label ("per_label").
    #[arg(long)]
    pub per_label: bool,
    /// Evaluate this prediction file (written by `okr predict`) against the
    /// labelled file instead of predicting; label scores in it (csv / json
    /// with --scores) give lrap, auc and p_at_k, else those are null.
    #[arg(long, value_name = "PATH")]
    pub predictions: Option<PathBuf>,
    /// Format of --predictions (default: by extension, .csv csv, .json/.jsonl json, else labels).
    #[arg(long, value_enum, value_name = "FORMAT", requires = "predictions")]
    pub predictions_format: Option<OutputFormat>,
}
