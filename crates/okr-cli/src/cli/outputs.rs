//! Outputs beyond label sets (`okr fit --output-kind`, `okr eval --outputs`):
//! binary fingerprints and dense vectors read from a file of their own, graphs
//! from a TU data set, rankings from a label-ranking file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `okr fit --output-kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputKindFlag {
    /// Label sets: the last --label-count columns of the training file.
    Labels,
    /// Binary fingerprints from --outputs (dense 0/1 or sparse set-bit indices); a label-set
    /// model whose labels are the bits (tanimoto, gaussian-tanimoto, linear or gaussian kernel).
    Fingerprint,
    /// Dense vectors in R^p from --outputs (numbers, comma or space separated), any vector
    /// output kernel (gaussian, linear, ...); saved as a vector-output model.
    Vector,
    /// Graphs from --outputs DIR/NAME, a TU data set (files NAME_A.txt,
    /// NAME_graph_indicator.txt, NAME_graph_labels.txt, optional NAME_node_labels.txt;
    /// graph i is the output of row i of --train), with --output-kernel wl (normalized
    /// Weisfeiler-Lehman subtree kernel, --wl-iterations H).
    Graph,
    /// Rankings: --train is a label-ranking file (header `n,d,k`, then d features and the
    /// k ranks of the items per row, 1 = first), with --output-kernel kendall or mallows
    /// (--mallows-lambda).
    Ranking,
}

/// How a fingerprint file lists its bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FingerprintFormat {
    /// One row per line, n_bits values 0 or 1 (commas or whitespace).
    Dense,
    /// One row per line, the 0-based indices of the set bits (`-` for none); needs --n-bits
    /// when fitting (predict / eval take the model's).
    Sparse,
}

/// An output file beside the input file (fit: training outputs; eval: true outputs).
#[derive(Debug, Clone, Args)]
pub struct OutputFileArgs {
    /// Outputs, one row per line, in the order of the input file's rows: fingerprints
    /// (--fingerprint-format) or vectors (numbers, comma or space separated); `#` lines
    /// and blank lines are skipped. Graphs: the TU data set DIR/NAME (its files
    /// DIR/NAME_A.txt, ...), graph i for row i.
    #[arg(long, value_name = "PATH")]
    pub outputs: Option<PathBuf>,
    /// How a fingerprint --outputs file lists its bits (--candidates files of fingerprint
    /// models always list set-bit indices, comma separated).
    #[arg(long, value_enum, default_value_t = FingerprintFormat::Dense, value_name = "FORMAT")]
    pub fingerprint_format: FingerprintFormat,
    /// Number of bits of sparse fingerprints (required by `okr fit`; eval takes the model's).
    #[arg(long, value_name = "N")]
    pub n_bits: Option<usize>,
}

/// Parameters of the graph and ranking output kernels (`okr fit`).
#[derive(Debug, Clone, Args)]
pub struct StructuredArgs {
    /// WL subtree kernel: relabelling rounds H (default 3, at most 100).
    #[arg(long, value_name = "H")]
    pub wl_iterations: Option<usize>,
    /// Mallows kernel exp(-lambda n_d), n_d the number of discordant item pairs
    /// (default 1 / (k (k - 1) / 2): exp of minus the fraction of discordant pairs).
    #[arg(long, value_name = "LAMBDA", allow_hyphen_values = true)]
    pub mallows_lambda: Option<f64>,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    #[test]
    fn output_kind_flags() {
        let c = Cli::try_parse_from([
            "okr",
            "fit",
            "--train",
            "x.csv",
            "-m",
            "m.okr",
            "--output-kind",
            "fingerprint",
            "--outputs",
            "fp.txt",
            "--fingerprint-format",
            "sparse",
            "--n-bits",
            "4096",
            "--output-kernel",
            "tanimoto",
        ])
        .unwrap();
        match c.command {
            Command::Fit(f) => {
                assert_eq!(f.output_kind, OutputKindFlag::Fingerprint);
                assert_eq!(
                    (f.output_file.fingerprint_format, f.output_file.n_bits),
                    (FingerprintFormat::Sparse, Some(4096))
                );
                assert_eq!(f.output_file.outputs.as_deref(), Some(std::path::Path::new("fp.txt")));
            }
            c => panic!("{c:?}"),
        }
        let c = Cli::try_parse_from(["okr", "fit", "--train", "x", "-m", "m"]).unwrap();
        match c.command {
            Command::Fit(f) => assert_eq!((f.output_kind, f.output_file.outputs), (OutputKindFlag::Labels, None)),
            c => panic!("{c:?}"),
        }
        assert!(Cli::try_parse_from(["okr", "fit", "--train", "x", "-m", "m", "--output-kind", "tree"]).is_err());
        let c = Cli::try_parse_from([
            "okr",
            "fit",
            "--train",
            "x",
            "-m",
            "m",
            "--output-kind",
            "ranking",
            "--output-kernel",
            "mallows",
            "--mallows-lambda",
            "0.5",
        ])
        .unwrap();
        match c.command {
            Command::Fit(f) => {
                assert_eq!((f.output_kind, f.structured.mallows_lambda), (OutputKindFlag::Ranking, Some(0.5)))
            }
            c => panic!("{c:?}"),
        }
    }
}
