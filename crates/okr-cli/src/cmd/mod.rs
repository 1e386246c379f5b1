//! The subcommands.

mod data;
mod decoding;
mod embed;
mod eval;
mod fit;
mod gen_data;
mod gram;
mod info;
mod kae;
mod output_models;
mod outputs;
mod predict;
mod rank;
mod scores;
mod spectra_gram;
pub(crate) mod structured;
mod tune;

use anyhow::Result;

use crate::cli::{Cli, Command};

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Fit(mut a) => {
            data::resolve_fit(&mut a)?;
            fit::run(&a)
        }
        Command::Tune(mut a) => {
            // The library refuses what the search cannot do (combined kernels), with the reason.
            data::resolve_fit(&mut a.fit)?;
            tune::run(&a)
        }
        Command::Predict(a) => predict::run(&a),
        Command::Info(a) => info::run(&a),
        Command::Rank(a) => rank::run(&a),
        Command::Eval(mut a) => {
            data::resolve_eval(&mut a)?;
            eval::run(&a)
        }
        Command::Data(c) => data::run(&c),
        Command::Encode(a) => kae::encode(&a),
        Command::Gen(a) => gen_data::run(&a),
        Command::EmbedOutputs(a) => embed::embed(&a),
        Command::Decode(a) => embed::decode(&a),
        Command::Gram(a) => spectra_gram::run(&a),
    }
}
