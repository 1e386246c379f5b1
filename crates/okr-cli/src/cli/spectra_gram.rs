//! Arguments of `okr gram`: the probability product kernel of MS/MS spectra
//! written as a Gram file for `okr fit --input-gram` (and other tools).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Mixture weights of the peaks (`okr_kernels::PeakWeights`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeakWeightsFlag {
    /// Equal weights (Heinonen et al.'s setting, with --intensity-sigma).
    Uniform,
    /// Proportional to the intensities.
    Intensity,
    /// Proportional to the square roots of the intensities.
    SqrtIntensity,
}

impl PeakWeightsFlag {
    /// The name the recipe and okr_kernels::PeakWeights use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Intensity => "intensity",
            Self::SqrtIntensity => "sqrt-intensity",
        }
    }
}

/// The probability product kernel's flags of `okr fit --input-spectra`
/// (`okr gram` names the same parameters --sigma, --intensity-sigma,
/// --precursor-sigma, with these names as aliases). Unset flags take the
/// kernel's defaults (okr_kernels::PpkParams).
#[derive(Debug, Clone, Default, Args)]
pub struct SpectraKernelArgs {
    /// --input-spectra: peak width sigma_m in m/z (default 0.01).
    #[arg(long, value_name = "MZ", allow_hyphen_values = true)]
    pub peak_width: Option<f64>,
    /// --input-spectra: mixture weights of the peaks (default intensity).
    #[arg(long, value_enum, value_name = "WEIGHTS")]
    pub peak_weights: Option<PeakWeightsFlag>,
    /// --input-spectra: adds the relative intensity as a second coordinate with this width.
    #[arg(long, value_name = "SIGMA", allow_hyphen_values = true)]
    pub intensity_width: Option<f64>,
    /// --input-spectra: multiplies by a Gaussian on the precursor m/z with this width.
    #[arg(long, value_name = "MZ", allow_hyphen_values = true)]
    pub precursor_width: Option<f64>,
}

/// Arguments of `okr gram`.
#[derive(Debug, Clone, Args)]
pub struct SpectraGramArgs {
    /// Spectra (MGF, or MSP; by the extension .mgf / .msp): the rows, and the
    /// columns unless --columns is given.
    #[arg(long, short = 'i', value_name = "PATH")]
    pub input: PathBuf,
    /// Second spectra file for a block K(input, columns), e.g. test spectra
    /// with -i and training spectra here, for `--input-gram-test`.
    #[arg(long, value_name = "PATH")]
    pub columns: Option<PathBuf>,
    /// Peak width sigma_m in m/z: the standard deviation of each peak's Gaussian
    /// (default 0.01, okr_kernels::PpkParams').
    #[arg(long, alias = "peak-width", value_name = "MZ", allow_hyphen_values = true)]
    pub sigma: Option<f64>,
    /// Adds the relative intensity as a second coordinate with this width.
    #[arg(long, alias = "intensity-width", value_name = "SIGMA", allow_hyphen_values = true)]
    pub intensity_sigma: Option<f64>,
    /// Multiplies by a Gaussian on the precursor m/z with this width.
    #[arg(long, alias = "precursor-width", value_name = "MZ", allow_hyphen_values = true)]
    pub precursor_sigma: Option<f64>,
    /// Mixture weights of the peaks (default intensity).
    #[arg(long, value_enum, value_name = "WEIGHTS")]
    pub peak_weights: Option<PeakWeightsFlag>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Output file: .npy (float64, C order) or text (one row per line); written
    /// atomically. Default: text on standard output.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// The long help of `okr gram`.
pub const GRAM_HELP: &str = "\
Write the probability product kernel of MS/MS spectra as a Gram file.

Reads the spectra of an MGF or MSP file (-i) and writes K(i, j) between them
(n x n, symmetric, unit diagonal), or with --columns the block K(input,
columns) (n_input x n_columns). The kernel (Heinonen et al. 2012, as
okr_kernels::Ppk documents it) is the normalized integral of the product of
the two spectra as Gaussian mixtures over m/z (peak width --sigma), optionally
with the relative intensity as a second coordinate (--intensity-sigma) and a
Gaussian on the precursor m/z (--precursor-sigma).

  okr gram -i train.mgf -o K_train.npy
  okr gram -i test.mgf --columns train.mgf -o K_test_train.npy
  okr fit --train labels.csv --label-count 1 --input-gram K_train.npy ...";

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use super::*;
    use crate::cli::Command;
    use crate::cli::tests::parse;

    fn gram(extra: &[&str]) -> SpectraGramArgs {
        let mut a = vec!["gram", "-i", "s.mgf"];
        a.extend_from_slice(extra);
        match parse(&a).command {
            Command::Gram(g) => g,
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn defaults() {
        let g = gram(&[]);
        assert_eq!(g.input, PathBuf::from("s.mgf"));
        assert_eq!((g.columns, g.sigma, g.intensity_sigma, g.precursor_sigma), (None, None, None, None));
        assert_eq!((g.peak_weights, g.threads, g.output), (None, None, None));
    }

    #[test]
    fn columns_flag() {
        assert_eq!(gram(&["--columns", "t.msp"]).columns, Some(PathBuf::from("t.msp")));
    }

    #[test]
    fn sigma_flag() {
        assert_eq!(gram(&["--sigma", "0.005"]).sigma, Some(0.005));
        assert_eq!(gram(&["--peak-width", "0.02"]).sigma, Some(0.02));
    }

    #[test]
    fn intensity_sigma_flag() {
        assert_eq!(gram(&["--intensity-sigma", "0.5"]).intensity_sigma, Some(0.5));
    }

    #[test]
    fn precursor_sigma_flag() {
        assert_eq!(gram(&["--precursor-sigma", "0.01"]).precursor_sigma, Some(0.01));
    }

    #[test]
    fn peak_weights_flag() {
        assert_eq!(gram(&["--peak-weights", "uniform"]).peak_weights, Some(PeakWeightsFlag::Uniform));
        assert_eq!(gram(&["--peak-weights", "sqrt-intensity"]).peak_weights, Some(PeakWeightsFlag::SqrtIntensity));
        assert!(crate::cli::Cli::try_parse_from(["okr", "gram", "-i", "s.mgf", "--peak-weights", "cube"]).is_err());
    }

    #[test]
    fn threads_and_output_flags() {
        let g = gram(&["--threads", "2", "-o", "k.npy"]);
        assert_eq!((g.threads, g.output), (Some(2), Some(PathBuf::from("k.npy"))));
    }

    #[test]
    fn input_is_required() {
        assert!(crate::cli::Cli::try_parse_from(["okr", "gram"]).is_err());
    }
}
