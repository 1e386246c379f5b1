//! Downloads with a SHA-256 check (feature `download`): a file is written
//! (atomically, through [`write_atomic`](crate::write_atomic)) only when its
//! size and checksum are the ones in the catalog, so a corrupt, truncated or
//! interrupted download leaves nothing behind.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{DataFile, Entry, hex};
use crate::{Error, Result};

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Downloaded and verified.
    Downloaded,
    /// Already there with the right checksum.
    Present,
}

/// The longest time allowed for one file (one week): a larger timeout
/// would overflow the clock arithmetic of the HTTP client.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Downloads every file of `entry` from `base_url` (`<base_url>/<path>`)
/// into `dir`, skipping files already present with the right checksum.
///
/// A data file is a regular file (or a symlink to one): a path that is a
/// FIFO, a device or a directory, or a symlink to one (`/dev/null`), is
/// refused before it is opened, so it neither blocks (a FIFO) nor swallows
/// the download (`/dev/null`); `okr data list` calls it missing too.
///
/// # Errors
/// [`Error::InvalidArgument`] for a `timeout` above [`MAX_TIMEOUT`];
/// [`Error::Download`] for an unreachable or failing server or a transfer
/// cut short, [`Error::Refused`] for a file whose size or SHA-256 differs
/// from the catalog's (the message names the expected and the received
/// checksum); in both cases the file is not written. [`Error::Write`] when
/// the file or its folder cannot be created, or the path is not a regular file.
pub fn fetch(entry: &Entry, dir: &Path, base_url: &str, timeout: Duration) -> Result<Vec<(PathBuf, Outcome)>> {
    if timeout > MAX_TIMEOUT {
        return Err(Error::InvalidArgument {
            name: "timeout",
            value: format!("{} s", timeout.as_secs()),
            expected: format!("at most {} seconds (one week)", MAX_TIMEOUT.as_secs()),
        });
    }
    let agent: ureq::Agent =
        ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(true).build().into();
    let mut done = Vec::new();
    for file in entry.files {
        let dest = dir.join(file.path);
        check_regular(&dest)?;
        if file.is_verified_in(dir) {
            done.push((dest, Outcome::Present));
            continue;
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Write { path: parent.to_path_buf(), source })?;
        }
        let url = format!("{}/{}", base_url.trim_end_matches('/'), file.path);
        download(&agent, &url, file, &dest)?;
        done.push((dest, Outcome::Downloaded));
    }
    Ok(done)
}

/// Refuses a data file path that exists and is not a regular file (after
/// symlinks): checked on the metadata, before any open, which would block
/// on a FIFO.
fn check_regular(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else { return Ok(()) };
    if meta.is_file() {
        return Ok(());
    }
    let what = describe(&meta.file_type());
    let link =
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) { "a symlink to " } else { "" };
    Err(Error::Write {
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {link}{what}, not a regular file; remove it to download the data file"),
        ),
    })
}

/// A file type in words (`a FIFO`, `a character device`, ...).
fn describe(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() { "a directory" } else { "a special file" }
}

/// Why a download was refused, kept apart from I/O errors of the file.
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn download(agent: &ureq::Agent, url: &str, file: &DataFile, dest: &Path) -> Result<()> {
    let mut response = match agent.get(url).call() {
        Ok(r) => r,
        Err(e) => return Err(Error::Download { url: url.to_string(), msg: e.to_string() }),
    };
    // One byte more than expected, so that a longer file is noticed.
    let mut body = response.body_mut().with_config().limit(file.bytes + 1).reader();
    let written = crate::write_atomic(dest, |w| {
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        loop {
            let n = body.read(&mut buf)?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if okr_surrogate::progress::observed() {
                let total = total.min(file.bytes) as usize;
                okr_surrogate::progress::report(total, file.bytes as usize, &format!("fetch {}", file.path));
            }
            if total > file.bytes {
                return Err(io::Error::other(Refused(format!("more than the expected {} bytes", file.bytes))));
            }
            hasher.update(&buf[..n]);
            w.write_all(&buf[..n])?;
        }
        if total != file.bytes {
            return Err(io::Error::other(Refused(format!("the transfer ended after {total} of {} bytes", file.bytes))));
        }
        let got = hex(&hasher.finalize());
        if got != file.sha256 {
            return Err(io::Error::other(Refused(format!("SHA-256 mismatch: expected {}, got {got}", file.sha256))));
        }
        Ok(())
    });
    let not_written = |source: &io::Error| format!("{source}; {} was not written", dest.display());
    match written {
        Ok(()) => Ok(()),
        Err(Error::Write { source, .. }) if source.get_ref().is_some_and(|e| e.downcast_ref::<Refused>().is_some()) => {
            Err(Error::Refused { url: url.to_string(), msg: not_written(&source) })
        }
        Err(Error::Write { source, .. }) if source.kind() != io::ErrorKind::Other || !dest.exists() => {
            Err(Error::Download { url: url.to_string(), msg: not_written(&source) })
        }
        Err(e) => Err(e),
    }
}
