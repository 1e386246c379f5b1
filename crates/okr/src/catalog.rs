//! The catalog: every estimator okr fits, its name, aliases and the
//! hyper-parameters it takes. Names are parsed here once; every front door
//! (the CLI's `--estimator`, Python's classes, xtask's tables) names an
//! estimator through [`Estimator::from_str`](std::str::FromStr).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Error;

/// An estimator of the catalog.
///
/// | name | aliases | what it predicts |
/// |---|---|---|
/// | `iokr` | | decodes candidates (kernel output) |
/// | `reduced-rank` | `reduced_rank`, `rr` | decodes candidates |
/// | `kde` | | decodes candidates |
/// | `siokr`, `isokr`, `sisokr` | | decodes candidates (sketched input, output, both) |
/// | `nystroem` | `nystroem-krr` | decodes candidates |
/// | `nystroem-reduced-rank` | `nystroem_rr`, `nystroem-rr` | decodes candidates |
/// | `trace-norm` | `trace_norm` | decodes candidates |
/// | `leml` | | label scores |
/// | `kae`, `k2ae` | | codes (autoencoders) |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
#[non_exhaustive]
pub enum Estimator {
    /// Input Output Kernel Regression.
    Iokr,
    /// Reduced-rank IOKR.
    ReducedRank,
    /// Kernel dependency estimation.
    Kde,
    /// Sketched-input IOKR.
    Siokr,
    /// Sketched-output IOKR.
    Isokr,
    /// Sketched input and output IOKR.
    Sisokr,
    /// Nystroem kernel ridge regression.
    Nystroem,
    /// Nystroem reduced-rank IOKR.
    NystroemReducedRank,
    /// The trace-norm regularized surrogate.
    TraceNorm,
    /// LEML (label scores).
    Leml,
    /// Kernel autoencoder.
    Kae,
    /// Gram-only kernel autoencoder.
    K2ae,
}

/// What a fitted estimator produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// A surrogate in the output RKHS, decoded among candidates.
    KernelOutput,
    /// A score per label.
    LabelScores,
    /// Codes of the inputs.
    Autoencoder,
}

/// A hyper-parameter of the catalog, with the estimators that take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// `rank`.
    Rank,
    /// `centered`.
    Centered,
    /// `solver`.
    Solver,
    /// `lambda1`.
    Lambda1,
    /// `lambda2`.
    Lambda2,
    /// `input_sketch`.
    InputSketch,
    /// `output_sketch`.
    OutputSketch,
    /// `anchors`.
    Anchors,
    /// `subset`.
    Subset,
    /// `loss`.
    Loss,
    /// `observed_fraction`.
    ObservedFraction,
    /// `layers`.
    Layers,
    /// `code_dim`.
    CodeDim,
    /// `hidden_dims`.
    HiddenDims,
    /// `max_iter`.
    MaxIter,
}

impl Param {
    /// The parameter's name in a recipe (the CLI flag is `--` and the
    /// name with `-` for `_`).
    pub fn name(self) -> &'static str {
        match self {
            Param::Rank => "rank",
            Param::Centered => "centered",
            Param::Solver => "solver",
            Param::Lambda1 => "lambda1",
            Param::Lambda2 => "lambda2",
            Param::InputSketch => "input_sketch",
            Param::OutputSketch => "output_sketch",
            Param::Anchors => "anchors",
            Param::Subset => "subset",
            Param::Loss => "loss",
            Param::ObservedFraction => "observed_fraction",
            Param::Layers => "layers",
            Param::CodeDim => "code_dim",
            Param::HiddenDims => "hidden_dims",
            Param::MaxIter => "max_iter",
        }
    }

    /// The estimators that take the parameter.
    pub fn estimators(self) -> &'static [Estimator] {
        use Estimator as E;
        match self {
            Param::Rank => &[E::ReducedRank, E::Kde, E::NystroemReducedRank, E::TraceNorm, E::Leml],
            Param::Centered => &[E::Kde],
            Param::Solver => &[E::TraceNorm],
            Param::Lambda1 | Param::Lambda2 => &[E::ReducedRank, E::NystroemReducedRank],
            Param::InputSketch => &[E::Siokr, E::Sisokr],
            Param::OutputSketch => &[E::Isokr, E::Sisokr],
            Param::Anchors => &[E::Nystroem, E::NystroemReducedRank],
            Param::Subset => &[E::NystroemReducedRank],
            Param::Loss | Param::ObservedFraction => &[E::Leml],
            Param::Layers | Param::CodeDim | Param::HiddenDims => &[E::Kae, E::K2ae],
            Param::MaxIter => &[E::TraceNorm, E::Leml, E::Kae, E::K2ae],
        }
    }
}

impl Estimator {
    /// Whether the estimator fits with sample weights ([`crate::fit_weighted`]):
    /// the kernel-ridge family, IOKR, reduced rank, Nystroem, SIOKR, ISOKR
    /// and SISOKR. The others refuse weights rather than ignore them.
    pub fn takes_sample_weight(self) -> bool {
        matches!(
            self,
            Estimator::Iokr
                | Estimator::ReducedRank
                | Estimator::Nystroem
                | Estimator::Siokr
                | Estimator::Isokr
                | Estimator::Sisokr
        )
    }

    /// Every estimator of the catalog.
    pub const ALL: [Estimator; 12] = [
        Estimator::Iokr,
        Estimator::ReducedRank,
        Estimator::Kde,
        Estimator::Siokr,
        Estimator::Isokr,
        Estimator::Sisokr,
        Estimator::Nystroem,
        Estimator::NystroemReducedRank,
        Estimator::TraceNorm,
        Estimator::Leml,
        Estimator::Kae,
        Estimator::K2ae,
    ];

    /// The canonical (kebab-case) name, as in model files and result records.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Iokr => "iokr",
            Estimator::ReducedRank => "reduced-rank",
            Estimator::Kde => "kde",
            Estimator::Siokr => "siokr",
            Estimator::Isokr => "isokr",
            Estimator::Sisokr => "sisokr",
            Estimator::Nystroem => "nystroem",
            Estimator::NystroemReducedRank => "nystroem-reduced-rank",
            Estimator::TraceNorm => "trace-norm",
            Estimator::Leml => "leml",
            Estimator::Kae => "kae",
            Estimator::K2ae => "k2ae",
        }
    }

    /// The other spellings [`from_str`](std::str::FromStr::from_str) accepts.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Estimator::ReducedRank => &["reduced_rank", "rr"],
            Estimator::Nystroem => &["nystroem-krr"],
            Estimator::NystroemReducedRank => &["nystroem_rr", "nystroem-rr", "nystroem_reduced_rank"],
            Estimator::TraceNorm => &["trace_norm"],
            _ => &[],
        }
    }

    /// What the fitted estimator produces.
    pub fn family(self) -> Family {
        match self {
            Estimator::Leml => Family::LabelScores,
            Estimator::Kae | Estimator::K2ae => Family::Autoencoder,
            _ => Family::KernelOutput,
        }
    }

    /// Whether the estimator fits from kernel values on train x train and
    /// predicts from test x train values only, so that a precomputed Gram
    /// can replace its input kernel: every kernel-output estimator (the
    /// sketches and Nystroem anchors look Gram columns up). LEML is linear
    /// in the features and the autoencoders reconstruct them: they need
    /// features.
    pub fn takes_gram(self) -> bool {
        self.family() == Family::KernelOutput
    }

    /// Whether the estimator takes the hyper-parameter `p`.
    pub fn takes(self, p: Param) -> bool {
        p.estimators().contains(&self)
    }
}

impl fmt::Display for Estimator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Estimator {
    type Err = Error;

    /// The estimator of a name or alias, case-insensitively.
    ///
    /// # Errors
    /// [`Error::UnknownEstimator`] listing the names.
    fn from_str(s: &str) -> Result<Self, Error> {
        let wanted = s.trim().to_ascii_lowercase();
        Estimator::ALL
            .into_iter()
            .find(|e| e.name() == wanted || e.aliases().contains(&wanted.as_str()))
            .ok_or_else(|| Error::UnknownEstimator { name: s.to_string() })
    }
}

impl TryFrom<String> for Estimator {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        s.parse()
    }
}

impl From<Estimator> for String {
    fn from(e: Estimator) -> String {
        e.name().to_string()
    }
}

/// The names of the catalog, comma separated (for messages).
pub fn names() -> String {
    Estimator::ALL.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_alias_parses_to_its_estimator() {
        for e in Estimator::ALL {
            assert_eq!(e.name().parse::<Estimator>().unwrap(), e);
            assert_eq!(e.name().to_uppercase().parse::<Estimator>().unwrap(), e);
            for a in e.aliases() {
                assert_eq!(a.parse::<Estimator>().unwrap(), e, "{a}");
            }
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, format!("\"{}\"", e.name()));
            assert_eq!(serde_json::from_str::<Estimator>(&json).unwrap(), e);
        }
        let err = "pca".parse::<Estimator>().unwrap_err().to_string();
        assert!(err.contains("unknown estimator \"pca\"") && err.contains("nystroem-reduced-rank"), "{err}");
        assert!(serde_json::from_str::<Estimator>("\"svm\"").is_err());
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> =
            Estimator::ALL.iter().flat_map(|e| std::iter::once(e.name()).chain(e.aliases().iter().copied())).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn parameters_apply_to_their_estimators() {
        assert!(Estimator::Kde.takes(Param::Centered));
        assert!(!Estimator::Iokr.takes(Param::Rank));
        assert!(Estimator::Sisokr.takes(Param::InputSketch) && Estimator::Sisokr.takes(Param::OutputSketch));
        assert!(!Estimator::Siokr.takes(Param::OutputSketch));
        assert_eq!(Estimator::Leml.family(), Family::LabelScores);
        assert!(Estimator::Nystroem.takes_gram() && Estimator::Kde.takes_gram() && !Estimator::Leml.takes_gram());
    }
}
