//! Arguments of `okr gen`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Output formats of `okr gen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GenFormat {
    /// Mulan ARFF (sparse rows for sparse presets).
    Arff,
    /// svmlight multi-label (1-based features).
    Svmlight,
    /// CSV with a header.
    Csv,
}

/// Arguments of `okr gen`.
#[derive(Debug, Clone, Args)]
pub struct GenArgs {
    /// Shape preset.
    #[arg(long, default_value = "bibtex", value_name = "NAME")]
    pub preset: String,
    /// Scale the numbers of training and test points by this factor.
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR", allow_hyphen_values = true)]
    pub scale: f64,
    /// Seed of the generator.
    #[arg(long, default_value_t = 0, value_name = "SEED")]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GenFormat::Arff, value_name = "FORMAT")]
    pub format: GenFormat,
    /// Output directory (created); files are <preset>-standin-{train,test}.<ext> (--out-dir is an alias).
    #[arg(long, short = 'o', alias = "out-dir", value_name = "DIR")]
    pub output: PathBuf,
}
