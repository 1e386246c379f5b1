//! Arguments of `okr tune`.

use clap::Args;

use super::fit::FitArgs;

/// How `okr tune` scores a grid point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CvKind {
    /// K-fold cross-validation of example-based F1 (K >= 2).
    KFold(usize),
    /// Closed-form leave-one-out example-based F1.
    Loo,
    /// Closed-form leave-one-out squared error in the output RKHS.
    LooRkhs,
    /// Generalized cross-validation of the squared error in the output RKHS.
    GcvRkhs,
}

impl CvKind {
    /// Whether the score is an error (lower is better, printed as is) rather than an F1.
    pub fn is_error(self) -> bool {
        matches!(self, CvKind::LooRkhs | CvKind::GcvRkhs)
    }

    /// The value as given to `--cv`.
    pub fn flag(self) -> String {
        match self {
            CvKind::KFold(k) => k.to_string(),
            CvKind::Loo => "loo".into(),
            CvKind::LooRkhs => "loo-rkhs".into(),
            CvKind::GcvRkhs => "gcv-rkhs".into(),
        }
    }
}

impl std::fmt::Display for CvKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CvKind::KFold(k) => write!(f, "{k}-fold cross-validated F1"),
            CvKind::Loo => write!(f, "closed-form leave-one-out F1"),
            CvKind::LooRkhs => write!(f, "closed-form leave-one-out squared error in the output RKHS"),
            CvKind::GcvRkhs => write!(f, "GCV squared error in the output RKHS"),
        }
    }
}

/// Parses `--cv`: a fold count of at least 2, `loo`, `loo-rkhs` or `gcv-rkhs`.
fn parse_cv(text: &str) -> Result<CvKind, String> {
    match text {
        "loo" => Ok(CvKind::Loo),
        "loo-rkhs" => Ok(CvKind::LooRkhs),
        "gcv-rkhs" => Ok(CvKind::GcvRkhs),
        _ => match text.parse::<usize>() {
            Ok(k) if k >= 2 => Ok(CvKind::KFold(k)),
            Ok(k) => Err(format!("expected at least 2 folds, got {k}")),
            Err(_) => Err(format!("expected a fold count (>= 2), loo, loo-rkhs or gcv-rkhs, got '{text}'")),
        },
    }
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
            assert_eq!(parse_cv(text).unwrap().flag(), text);
        }
        assert!(parse_cv("1").unwrap_err().contains("at least 2"));
        assert!(parse_cv("x").unwrap_err().contains("loo-rkhs"));
        assert_eq!(positive("0.5"), Ok(0.5));
        for bad in ["0", "-1", "inf", "NaN", "a"] {
            assert!(positive(bad).is_err(), "{bad}");
        }
    }
}
