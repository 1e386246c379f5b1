//! `okr embed-outputs` and `okr decode`: okr's output side for models
//! trained elsewhere (issue 36).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::args::at_least_one;
use super::output::OutputFormat;

/// The kind of an output file of `okr embed-outputs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EmbedKind {
    /// Label sets (or fingerprints): one per line, comma-separated 0-based labels (`-` or an
    /// empty line for the empty set); needs --label-count.
    Labels,
    /// Real vectors: one per line, numbers separated by commas or spaces.
    Vector,
}

/// The basis of `okr embed-outputs --basis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BasisFlag {
    /// Kernel PCA of the output Gram over the distinct outputs (--n-components caps the rank).
    Exact,
    /// The span of a sketch of the outputs (--n-components: its size; --sketch: its kind).
    Sketch,
    /// The span of anchor outputs drawn uniformly (--n-components: the anchors).
    Nystroem,
}

/// Arguments of `okr embed-outputs`.
#[derive(Debug, Clone, Args)]
pub struct EmbedArgs {
    /// Training outputs, one per line (see --output-kind).
    #[arg(long, value_name = "PATH")]
    pub outputs: PathBuf,
    /// What the output file holds.
    #[arg(long, value_enum, default_value_t = EmbedKind::Labels, value_name = "KIND")]
    pub output_kind: EmbedKind,
    /// Number of labels (label sets).
    #[arg(long, value_name = "L")]
    pub label_count: Option<usize>,
    /// The output basis.
    #[arg(long, value_enum, default_value_t = BasisFlag::Exact, value_name = "BASIS")]
    pub basis: BasisFlag,
    /// Rank cap (exact), sketch size (sketch) or anchors (nystroem); default: all (exact),
    /// 1000 (sketch, nystroem), capped at the outputs.
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub n_components: Option<usize>,
    /// Sketch kind of --basis sketch (uniform, gaussian, rademacher, sjlt, ... or KIND:m);
    /// default uniform.
    #[arg(long, value_name = "KIND")]
    pub sketch: Option<String>,
    /// Output kernel (gaussian, linear, tanimoto, gaussian-tanimoto, polynomial, laplacian).
    #[arg(long, default_value = "gaussian", value_name = "NAME")]
    pub output_kernel: String,
    /// Width of a Gaussian-type output kernel (default: sigma^2 = mean labels per output for
    /// label sets, the median heuristic for vectors).
    #[arg(long, value_name = "GAMMA")]
    pub output_gamma: Option<f64>,
    /// Seed of the sketch or anchor draw.
    #[arg(long, default_value_t = 0, value_name = "SEED")]
    pub seed: u64,
    /// Where to save the basis (read by `okr decode --basis`; written atomically).
    #[arg(long, value_name = "PATH")]
    pub save_basis: PathBuf,
    /// Coordinates file: `.npy` (float64, n x r), otherwise CSV text whose first line
    /// `# okr-coordinates basis=ID components=R` names the basis (default: standard output).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// Arguments of `okr decode`.
#[derive(Debug, Clone, Args)]
pub struct CoordDecodeArgs {
    /// Predicted coordinates, one row per input: `.npy` (float64) or text (numbers separated
    /// by commas or spaces; `#` lines skipped; a first line `# okr-coordinates basis=ID ...`
    /// must name --basis).
    #[arg(long, value_name = "PATH")]
    pub coordinates: PathBuf,
    /// Output basis written by `okr embed-outputs --save-basis` (or Python's
    /// OutputEmbedding.save).
    #[arg(long, value_name = "PATH")]
    pub basis: PathBuf,
    /// Candidate outputs, one per line in the syntax of the basis' outputs (default: the
    /// distinct training outputs in first-occurrence order).
    #[arg(long, value_name = "PATH")]
    pub candidates: Option<PathBuf>,
    /// Print the k best candidates per input (`;`-separated, best first).
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = at_least_one)]
    pub top_k: usize,
    /// Output format, as `okr predict` (vector outputs: labels or json).
    #[arg(long, value_enum, default_value_t = OutputFormat::Labels, value_name = "FORMAT")]
    pub output_format: OutputFormat,
    /// Also write each candidate's score k(c, c) - 2 z^T z(c) (csv or json).
    #[arg(long)]
    pub scores: bool,
    /// Memory budget for the decoding tiles, in MiB (at least 1).
    #[arg(long, default_value_t = 1024, value_name = "MIB", value_parser = at_least_one)]
    pub memory_budget: usize,
    /// Score precision: f64, or f32 (each row's best re-scored in f64).
    #[arg(long, default_value = "f64", value_name = "f64|f32")]
    pub precision: okr_decode::Precision,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Output file (default: standard output).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use crate::cli::tests::parse;
    use crate::cli::{Command, OutputFormat};

    use super::*;

    #[test]
    fn embed_flags() {
        let c = parse(&[
            "embed-outputs",
            "--outputs",
            "y.txt",
            "--label-count",
            "9",
            "--basis",
            "sketch",
            "--n-components",
            "50",
            "--sketch",
            "gaussian",
            "--save-basis",
            "b.okrb",
            "-o",
            "z.npy",
        ]);
        match c.command {
            Command::EmbedOutputs(a) => {
                assert_eq!((a.basis, a.n_components, a.label_count), (BasisFlag::Sketch, Some(50), Some(9)));
                assert_eq!((a.sketch.as_deref(), a.output_kind), (Some("gaussian"), EmbedKind::Labels));
            }
            c => panic!("{c:?}"),
        }
        let zero = ["okr", "embed-outputs", "--outputs", "y", "--save-basis", "b", "--n-components", "0"];
        assert!(<crate::cli::Cli as clap::Parser>::try_parse_from(zero).is_err());
    }

    #[test]
    fn decode_flags() {
        let c = parse(&["decode", "--coordinates", "z.csv", "--basis", "b", "--top-k", "3", "--output-format", "json"]);
        match c.command {
            Command::Decode(a) => {
                assert_eq!((a.top_k, a.output_format, a.memory_budget), (3, OutputFormat::Json, 1024));
            }
            c => panic!("{c:?}"),
        }
    }
}
