//! Arguments of `okr tune`.

use clap::Args;

use super::fit::FitArgs;

/// How `okr tune` scores a grid point (the library's [`okr::tune::Cv`]).
pub type CvKind = okr::tune::Cv;

/// Parses `--cv`: a fold count of at least 2, `loo`, `loo-rkhs` or `gcv-rkhs`.
fn parse_cv(text: &str) -> Result<CvKind, String> {
    text.parse().map_err(|e: okr::Error| e.to_string())
}

/// Parses one grid value: a finite number > 0.
fn positive(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(v) => Err(format!("expected a finite number > 0, got {v}")),
        Err(_) => Err(format!("expected a number, got '{text}'")),
    }
}

/// Arguments of `okr tune`: the flags of `okr fit` (the model it refits and
/// saves), then the search.
#[derive(Debug, Clone, Args)]
pub struct TuneArgs {
    /// The fit (every flag of `okr fit` except the tuned --lambda, --lambda1, --lambda2,
    /// --gamma, --sigma2).
    #[command(flatten)]
    pub fit: FitArgs,
    /// How a grid point is scored: K (K-fold cross-validated example-based F1 of the
    /// decoded label sets, K >= 2), loo (the same F1 of exact leave-one-out predictions,
    /// closed form, on up to 2000 rows), loo-rkhs or gcv-rkhs (closed-form leave-one-out
    /// or GCV squared error in the output RKHS; fast, not aligned with F1). loo,
    /// loo-rkhs and gcv-rkhs are closed forms of IOKR on label sets: other estimators
    /// and vector outputs (scored by the mean squared error of the decoded vectors) take K.
    #[arg(long, default_value = "3", value_name = "K|loo|loo-rkhs|gcv-rkhs", value_parser = parse_cv)]
    pub cv: CvKind,
    /// Gaussian width multipliers c, comma separated (gamma = c / median squared distance
    /// between training inputs). Default: coarse to fine, a line search from c = 0.5 (the
    /// median heuristic) by factors of 2 that stops when the best width is inside.
    #[arg(long, value_name = "C,...", value_delimiter = ',', value_parser = positive, allow_hyphen_values = true)]
    pub widths: Option<Vec<f64>>,
    /// Ridges lambda, comma separated. Default: 1e-8, 1e-7, ..., 1e-1.
    #[arg(long, value_name = "LAMBDA,...", value_delimiter = ',', value_parser = positive, allow_hyphen_values = true)]
    pub lambdas: Option<Vec<f64>>,
    /// Print the grid, the fold scores and the choice as one JSON object (stdout).
    #[arg(long)]
    pub json: bool,
    /// A group per training row, one per line (any text; rows with the same text share
    /// a group, as every spectrum of one molecule): K-fold keeps each group in one fold,
    /// so that a validation row never has its twin in training.
    #[arg(long, value_name = "PATH")]
    pub groups: Option<std::path::PathBuf>,
    /// With --input-gram: widths gamma of the output kernel (gaussian, laplacian or
    /// gaussian-tanimoto), comma separated, searched beside the ridge (the input
    /// kernel is the Gram's). Default: the output kernel of the flags alone.
    #[arg(long, value_name = "GAMMA,...", value_delimiter = ',', value_parser = positive, allow_hyphen_values = true)]
    pub output_gammas: Option<Vec<f64>>,
    /// How a grid point is scored: decoded (the F1 or squared error of the decoded outputs),
    /// or a retrieval score of the true candidate among each query's candidates (the
    /// candidate file of --candidates-per-query, a query per training row it ranks):
    /// top1, top5, top10 (any topK: the fraction of validation queries whose true
    /// candidate is in the top K) or mean-rank. Ties count against the true candidate
    /// (its pessimistic rank, as okr rank reports it).
    #[arg(long, default_value = "decoded", value_name = "decoded|top1|top5|top10|mean-rank", value_parser = parse_scoring)]
    pub scoring: okr::tune::Scoring,
    /// With --scoring top1|top5|top10|mean-rank: per-query candidate sets of the training
    /// rows in the format of okr rank (a query's row is a training row; * marks the true
    /// candidate).
    #[arg(long, value_name = "PATH")]
    pub candidates_per_query: Option<std::path::PathBuf>,
    /// The candidate pool of a pool-mode --candidates-per-query file.
    #[arg(long, value_name = "PATH")]
    pub pool: Option<std::path::PathBuf>,
}

/// A scoring as `okr::tune::Scoring` reads it.
fn parse_scoring(text: &str) -> Result<okr::tune::Scoring, String> {
    text.parse().map_err(|e: okr::Error| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cv_values() {
        assert_eq!(parse_cv("5"), Ok(CvKind::KFold(5)));
        assert_eq!(parse_cv("loo"), Ok(CvKind::Loo));
        assert_eq!(parse_cv("gcv-rkhs"), Ok(CvKind::GcvRkhs));
        for text in ["3", "loo", "loo-rkhs", "gcv-rkhs"] {
            assert_eq!(parse_cv(text).unwrap().name(), text);
        }
        assert!(parse_cv("1").unwrap_err().contains("at least 2"));
        assert!(parse_cv("x").unwrap_err().contains("loo-rkhs"));
        assert_eq!(positive("0.5"), Ok(0.5));
        use clap::Parser as _;
        let cli = crate::cli::Cli::try_parse_from([
            "okr",
            "tune",
            "--train",
            "t.csv",
            "-m",
            "m.okr",
            "--output-gammas",
            "0.1,1",
        ]);
        assert!(cli.is_ok(), "{cli:?}");
        assert_eq!(parse_scoring("top5"), Ok(okr::tune::Scoring::Top(5)));
        assert_eq!(parse_scoring("mean-rank"), Ok(okr::tune::Scoring::MeanRank));
        assert!(parse_scoring("top0").unwrap_err().contains("mean-rank"));
        for bad in ["0", "-1", "inf", "NaN", "a"] {
            assert!(positive(bad).is_err(), "{bad}");
        }
    }
}
