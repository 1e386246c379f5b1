//! Arguments of `okr predict`'s output and of `okr info`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Formats of `okr predict` (and of the files `okr eval --predictions` reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One line per input: label indices, comma separated (0-based); top-k sets `;`-separated.
    Labels,
    /// One line per input: a 0/1 value per label, comma separated, no header.
    Indicator,
    /// CSV with a header of label names, a 0/1 column per label (and `score:<name>` columns with --scores).
    Csv,
    /// JSON Lines: {labels, label_ids[, top: [{labels, label_ids, score}]][, label_scores]} per input.
    Json,
}

impl From<OutputFormat> for okr_eval::predictions::PredictionFormat {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Labels => Self::Labels,
            OutputFormat::Indicator => Self::Indicator,
            OutputFormat::Csv => Self::Csv,
            OutputFormat::Json => Self::Json,
        }
    }
}

/// How `okr predict` writes its predictions.
#[derive(Debug, Clone, Args)]
pub struct RenderArgs {
    /// Output format (label names come from the model: ARFF attribute names,
    /// a CSV header, or label_0, label_1, ...).
    #[arg(long, value_enum, default_value_t = OutputFormat::Labels, value_name = "FORMAT")]
    pub output_format: OutputFormat,
    /// Also write per-label scores (decoding models: h(x) read with a linear
    /// output kernel, as for P@k; leml: its scores) and, with --top-k, each
    /// candidate's decoding score k(c, c) - 2 <h(x), psi(c)> (lower is better).
    /// Needs --output-format csv or json.
    #[arg(long)]
    pub scores: bool,
    /// leml: predict the labels whose score exceeds T (default: the model's
    /// threshold, the midpoint of its training encoding).
    #[arg(long, value_name = "T", conflicts_with = "thresholds", allow_negative_numbers = true)]
    pub threshold: Option<f64>,
    /// leml: one threshold per label, one number per line, in label order.
    #[arg(long, value_name = "PATH")]
    pub thresholds: Option<PathBuf>,
}

/// Arguments of `okr info`.
#[derive(Debug, Clone, Args)]
pub struct InfoArgs {
    /// Model file written by `okr fit`.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
