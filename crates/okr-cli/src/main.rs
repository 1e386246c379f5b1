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
mod progress;
mod recipe;

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

use crate::output::Stream;

fn main() -> ExitCode {
    // On SIGINT / SIGTERM, remove the temporary files of writes in progress
    // (destructors do not run when a signal ends the process).
    let _ = ctrlc::set_handler(|| {
        okr_eval::remove_temporary_files();
        eprintln!("okr: interrupted");
        std::process::exit(130);
    });
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    let stream = match &cli.command {
        cli::Command::Predict(_)
        | cli::Command::Encode(_)
        | cli::Command::Rank(_)
        | cli::Command::EmbedOutputs(_)
        | cli::Command::Decode(_) => Stream::Lines,
        _ => Stream::Document,
    };
    progress::set_quiet(cli.quiet);
    match progress::observe(|| cmd::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader of lines that stops early (`okr predict ... | head`) is not an error.
        Err(err) if stream == Stream::Lines && output::is_broken_stdout(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("okr: {}", output::one_line(&err));
            ExitCode::from(2)
        }
    }
}

/// Help and version go to standard output as clap renders them; a usage
/// error is one line, `okr: <what clap says>`, with exit status 2.
fn usage_error(err: &clap::Error) -> ExitCode {
    if matches!(err.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let _ = err.print();
        return ExitCode::from(2);
    }
    // clap's first paragraph (its message and, for missing arguments, their names) on one line.
    let text = err.render().to_string();
    let paragraph: Vec<&str> =
        text.lines().skip_while(|l| l.trim().is_empty()).take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let joined = paragraph.join(" ");
    let message = joined.strip_prefix("error: ").unwrap_or(&joined);
    let message = if message.is_empty() { "invalid arguments" } else { message };
    eprintln!("okr: {} (okr --help)", okr_eval::error::escape_controls(message));
    ExitCode::from(2)
}
