//! The `okr` command-line tool: fit, predict, eval and gen for output kernel
//! regression. A thin binary over the okr crates: `cli` parses flags,
//! `config` turns them into readers, kernels and parameters, `cmd::*` runs.
// Flag doc comments are clap's --help text (plain text: `KIND[:p]`, `<name>`), not rustdoc.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod cli;
mod cmd;
mod config;
mod model;
mod output;

use std::process::ExitCode;

use clap::Parser;

use crate::output::Stream;

fn main() -> ExitCode {
    // On SIGINT / SIGTERM, remove the temporary files of writes in progress
    // (destructors do not run when a signal ends the process).
    let _ = ctrlc::set_handler(|| {
        okr_eval::remove_temporary_files();
        eprintln!("okr: interrupted");
        std::process::exit(130);
    });
    let cli = cli::Cli::parse();
    let stream = match &cli.command {
        cli::Command::Predict(_) | cli::Command::Encode(_) => Stream::Lines,
        _ => Stream::Document,
    };
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader of lines that stops early (`okr predict ... | head`) is not an error.
        Err(err) if stream == Stream::Lines && output::is_broken_stdout(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("okr: {}", output::one_line(&err));
            ExitCode::from(2)
        }
    }
}
