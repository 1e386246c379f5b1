//! Arguments of `okr data`.

use clap::{Args, Subcommand};

/// `okr data` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum DataCommand {
    /// List the data sets okr can fetch, with their files and whether they are in OKR_DATA_DIR.
    List,
    /// Download a data set into OKR_DATA_DIR, checking every file's size and SHA-256.
    ///
    /// Files already present with the right checksum are kept. A file is written only
    /// when its size and checksum match (atomically: an interrupted, corrupt or failed
    /// download leaves no file); a mismatch is refused.
    Fetch(FetchArgs),
}

/// Arguments of `okr data fetch`.
#[derive(Debug, Clone, Args)]
pub struct FetchArgs {
    /// Data set name (see `okr data list`).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Base URL of a server holding the files in OKR_DATA_DIR's layout
    /// (<URL>/<name>/<file>); default: the OKR_DATA_MIRROR environment variable.
    #[arg(long, value_name = "URL")]
    pub mirror: Option<String>,
    /// Seconds allowed for each file (at least 1).
    #[arg(long, default_value_t = 600, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
}
