//! The `okr` command-line tool: fit, predict, eval and gen for output kernel
//! regression. A thin binary over the okr crates: `cli` parses flags,
//! `config` turns them into readers, kernels and parameters, `cmd::*` runs.

mod cli;
mod cmd;
mod config;
mod model;

use std::io::ErrorKind;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`okr predict ... | head`) is not an error.
            if err
                .chain()
                .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == ErrorKind::BrokenPipe))
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("okr: {err:#}");
            ExitCode::from(2)
        }
    }
}
