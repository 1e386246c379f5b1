//! Arguments of `okr rank`.

use std::path::PathBuf;

use clap::Args;

use super::args::{DataArgs, at_least_one};

/// Arguments of `okr rank`.
#[derive(Debug, Clone, Args)]
pub struct RankArgs {
    /// Model file written by `okr fit` (a decoding estimator).
    #[arg(long, short = 'm', value_name = "PATH")]
    pub model: PathBuf,
    /// Test inputs the queries' test rows refer to (features, with or without labels).
    #[arg(long, short = 'i', alias = "test", value_name = "PATH", required_unless_present = "input_gram_test")]
    pub input: Option<PathBuf>,
    /// Test x train Gram (.npy or text) for a model fitted with --input-gram, instead of --input.
    ///
    /// One row per test point (the queries' test rows), one column per training row. A file
    /// ending in .npy is a NumPy float64 array (C or Fortran order); any other file is text,
    /// one row per line, values separated by whitespace or commas, `#` comments skipped.
    #[arg(long, value_name = "PATH")]
    pub input_gram_test: Option<PathBuf>,
    /// How to read the test file.
    #[command(flatten)]
    pub data: DataArgs,
    /// Per-query candidate file (`okr-candidates 1`, inline or pool mode; see --help).
    #[arg(long, value_name = "PATH")]
    pub candidates_per_query: PathBuf,
    /// Candidate pool of a pool-mode candidate file: one candidate output per
    /// line (label sets and fingerprints: 0-based indices of the set bits, `-`
    /// for none; vectors: their values).
    #[arg(long, value_name = "PATH")]
    pub pool: Option<PathBuf>,
    /// Report the K best candidates of each query (default: all). True ranks
    /// and the summary always count every candidate.
    #[arg(long, value_name = "K", value_parser = at_least_one)]
    pub top_k: Option<usize>,
    /// Write the retrieval summary (top-1/5/10/20 accuracy, mean and median
    /// rank of the true candidates, optimistic and pessimistic) as one JSON
    /// object to PATH instead of a line on standard error.
    #[arg(long, value_name = "PATH")]
    pub summary: Option<PathBuf>,
    /// Memory budget for the decoding tiles, in MiB (at least 1).
    #[arg(long, default_value_t = 1024, value_name = "MIB", value_parser = at_least_one)]
    pub memory_budget: usize,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Output file (default: standard output); written atomically.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// The long help of `okr rank`.
pub const RANK_HELP: &str = "\
Rank each query's own candidate set with a saved model (retrieval).

Every query is a row of the test file with its own candidate outputs, read
from an `okr-candidates 1` file query by query and decoded in tiles under
--memory-budget (format: docs/candidates.md):

  okr-candidates 1 inline     first line: magic, version, mode (inline | pool)
  query q1 0                  `query <query_id> <test_row>` (0-based test row)
  3 17 40                     inline: one candidate output per line
  *3 17 41                    `*` marks the true candidate (at most one per query)
  -                           the empty label set

In pool mode the lines after a query header hold 0-based indices into the
--pool file (`12 40 *7`). Output: CSV with the header

  query_id,rank,candidate_id,score,true_rank_optimistic,true_rank_pessimistic

one row per reported candidate, best first (ties: earlier in the query's list
first). candidate_id is the pool index, or the position in the query's inline
list; score is the decoding score k(c, c) - 2 <h(x), psi(c)> (lower is better,
as `okr predict --top-k K --scores`); the true candidate's rank is
1 + #{better} (optimistic) and #{better or tied} (pessimistic), empty when
the query marks no true candidate.

When queries mark their true candidate, a summary goes to standard error (or
--summary FILE as JSON): top-1/5/10/20 accuracy and the mean and median rank,
ties counted optimistically and pessimistically.";

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};

    #[test]
    fn rank_flags() {
        let c = Cli::try_parse_from([
            "okr",
            "rank",
            "-m",
            "m.okr",
            "--test",
            "t.csv",
            "--candidates-per-query",
            "q.txt",
            "--top-k",
            "5",
            "--summary",
            "s.json",
        ])
        .unwrap();
        match c.command {
            Command::Rank(r) => {
                assert_eq!((r.top_k, r.memory_budget, r.pool), (Some(5), 1024, None));
                assert_eq!(r.summary.as_deref(), Some(std::path::Path::new("s.json")));
            }
            c => panic!("{c:?}"),
        }
        let r =
            Cli::try_parse_from(["okr", "rank", "-m", "m", "-i", "t", "--candidates-per-query", "q", "--top-k", "0"]);
        assert!(r.unwrap_err().to_string().contains("at least 1"));
    }
}
