//! Safe file output and bounded file input shared by every okr writer and reader.
//!
//! - [`write_atomic`]: the workspace's atomic writer ([`okr_io::write_atomic`],
//!   which saves model files too) with okr-eval's error type. The body writes a
//!   temporary file created in the target directory with an unpredictable name
//!   (`O_EXCL`, so an existing file or symlink of that name is never followed);
//!   the file is synced and renamed over the target. An overwritten file keeps
//!   its permission bits; a new file gets `0666` less the process umask. On any
//!   error the temporary file is removed and the target is untouched. The
//!   output-path rules (symlinks, devices, read-only files, hard links, stale
//!   temporary files) are those of [`okr_io::atomic`].
//! - [`remove_temporary_files`]: what a signal handler calls, so an interrupted
//!   write leaves no temporary file behind either.
//! - [`check_not_input`]: refuses an output path that is one of the command's
//!   inputs (same device and inode, or the same canonical path), also any
//!   file of a TU data set named by its prefix; [`check_distinct_outputs`]
//!   refuses two outputs of one command that are the same file.
//! - [`MAX_INPUT_BYTES`]: the size bound of every text reader.

use std::fs;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use okr_io::bounded::ReadError;

use crate::{Error, Result};

/// The largest input file a text reader accepts (8 GiB; the bound of
/// [`okr_io::bounded`], which every okr reader shares). Larger inputs,
/// and endless ones such as `/dev/zero` or a pipe that never closes, are an
/// [`Error::InputTooLarge`] rather than an out-of-memory abort. Memory for the
/// file is also reserved fallibly, so a smaller file that does not fit is an
/// [`Error::OutOfMemory`].
pub use okr_io::bounded::MAX_INPUT_BYTES;

/// Removes the temporary files of writes still in progress. Meant for a
/// SIGINT / SIGTERM handler just before the process exits (destructors do not
/// run then); a write in progress fails afterwards, it does not resurrect the file.
/// The same registry as [`okr_io::remove_temporary_files`], so model files
/// saved by the library are covered too.
pub fn remove_temporary_files() {
    okr_io::remove_temporary_files();
}

/// Writes `path` atomically: `body` writes a temporary file in the same
/// directory, which is then synced and renamed over `path`.
///
/// The temporary file is `.<name>.<random>.tmp`, created exclusively (never
/// through an existing file or symlink). The result keeps the permission bits
/// of the file it replaces, or gets `0666` less the umask when new (so model
/// files that hold training data follow the user's umask). On failure the
/// temporary file is removed and `path` is untouched. A symlink is followed
/// and its target replaced; a device or a pipe (`/dev/null`, `/dev/stdout`,
/// a FIFO) is written in place, never replaced; a directory or a read-only
/// file is refused (all rules: [`okr_io::atomic`]).
///
/// # Errors
/// [`Error::Write`] naming `path` for any I/O error of the body, the sync or the rename.
///
/// # Example
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.txt");
/// okr_eval::write_atomic(&path, |w| w.write_all(b"hello\n"))?;
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
/// assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn write_atomic(path: &Path, body: impl FnOnce(&mut BufWriter<fs::File>) -> io::Result<()>) -> Result<()> {
    okr_io::write_atomic(path, body).map_err(|source| Error::Write { path: path.to_path_buf(), source })
}

/// Refuses to write `output` when it is one of `inputs`: the same file by
/// device and inode (hard links, symlinks, `./a` vs `a`), or the same path
/// once canonicalized. An input that names a TU data set (its prefix
/// `DIR/NAME` or one of its files) covers every file of the set
/// ([`tu_files`](crate::readers::tu_files): `DIR/NAME_A.txt`, ...). Inputs
/// that do not exist are ignored, and so is an output that is not a regular file.
///
/// # Errors
/// [`Error::InvalidArgument`] naming the output and the input it would overwrite.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let data = dir.path().join("data.arff");
/// std::fs::write(&data, "x").unwrap();
/// let same = dir.path().join(".").join("data.arff");
/// assert!(okr_eval::check_not_input(&same, &[("training file", &data)]).is_err());
/// assert!(okr_eval::check_not_input(&dir.path().join("m.okr"), &[("training file", &data)]).is_ok());
/// // A TU data set by its prefix: each of its files is an input.
/// std::fs::write(dir.path().join("G_A.txt"), "1, 2").unwrap();
/// let prefix = dir.path().join("G");
/// assert!(okr_eval::check_not_input(&dir.path().join("G_A.txt"), &[("output file", &prefix)]).is_err());
/// ```
pub fn check_not_input(output: &Path, inputs: &[(&str, &Path)]) -> Result<()> {
    // A device or a pipe (`/dev/stdout` and `/dev/stdin` on one terminal) is
    // written through, never replaced: only files can be lost.
    let Some(out_meta) = fs::metadata(output).ok().filter(fs::Metadata::is_file) else { return Ok(()) };
    for (what, input) in inputs {
        for file in std::iter::once(input.to_path_buf()).chain(crate::readers::tu_files(input)) {
            let Ok(in_meta) = fs::metadata(&file) else { continue };
            if same_file(output, &out_meta, &file, &in_meta) {
                return Err(Error::InvalidArgument {
                    name: "output",
                    value: output.display().to_string(),
                    expected: format!("a file other than the {what} {} (it would be overwritten)", file.display()),
                });
            }
        }
    }
    Ok(())
}

/// Refuses two outputs of one command that are the same file (the second
/// write would replace the first): the same device and inode when both
/// exist, else the same canonical folder and name.
///
/// # Errors
/// [`Error::InvalidArgument`] naming both.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let a = dir.path().join("s.json");
/// let b = dir.path().join(".").join("s.json");
/// assert!(okr_eval::output::check_distinct_outputs(&[("output", &a), ("summary", &b)]).is_err());
/// assert!(okr_eval::output::check_distinct_outputs(&[("output", &a), ("summary", &dir.path().join("t"))]).is_ok());
/// ```
pub fn check_distinct_outputs(outputs: &[(&str, &Path)]) -> Result<()> {
    for (i, (what_a, a)) in outputs.iter().enumerate() {
        for (what_b, b) in &outputs[i + 1..] {
            let same = match (fs::metadata(a), fs::metadata(b)) {
                (Ok(ma), Ok(mb)) => same_file(a, &ma, b, &mb),
                _ => normalized(a).is_some_and(|na| Some(na) == normalized(b)),
            };
            if same {
                return Err(Error::InvalidArgument {
                    name: "output",
                    value: b.display().to_string(),
                    expected: format!("a file other than the {what_a} {} (the {what_b} would replace it)", a.display()),
                });
            }
        }
    }
    Ok(())
}

/// The canonical folder of `path` joined with its name (`None` when the
/// folder does not exist).
fn normalized(path: &Path) -> Option<PathBuf> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(fs::canonicalize(dir).ok()?.join(path.file_name()?))
}

fn same_file(a: &Path, a_meta: &fs::Metadata, b: &Path, b_meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = (a, b);
        a_meta.dev() == b_meta.dev() && a_meta.ino() == b_meta.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a_meta, b_meta);
        fs::canonicalize(a).ok() == fs::canonicalize(b).ok()
    }
}

/// Reads a whole binary file (a model file) of at most `limit` bytes, with
/// fallibly reserved memory: an oversized or endless input (`/dev/zero`) is an
/// error, not an abort.
///
/// # Errors
/// [`Error::Io`], [`Error::InputTooLarge`], [`Error::OutOfMemory`].
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("m.bin");
/// std::fs::write(&path, [0u8, 1, 2])?;
/// assert_eq!(okr_eval::output::read_binary(&path, 1 << 20)?, vec![0, 1, 2]);
/// assert!(okr_eval::output::read_binary(&path, 2).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_binary(path: &Path, limit: u64) -> Result<Vec<u8>> {
    read_limited(path, limit, false)
}

/// Reads a whole file with a size bound, fallibly reserved memory and a check
/// that it is text (no NUL byte). Used by every reader.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    read_limited(path, limit, true)
}

fn read_limited(path: &Path, limit: u64, text: bool) -> Result<Vec<u8>> {
    okr_io::bounded::read_file(path, limit, text).map_err(|e| read_error(path, e))
}

/// okr-eval's error for a failed bounded read of `path`.
pub(crate) fn read_error(path: &Path, e: ReadError) -> Error {
    match e {
        ReadError::Io(e) => Error::io(path, e),
        ReadError::TooLarge { limit } => Error::InputTooLarge { path: path.to_path_buf(), limit },
        ReadError::NotText { offset } => Error::NotText { path: path.to_path_buf(), offset },
        ReadError::OutOfMemory { bytes } => {
            Error::OutOfMemory { what: format!("the contents of {}", path.display()), bytes }
        }
    }
}

/// A vector of `len` f64 with capacity reserved fallibly (empty, ready to extend).
pub(crate) fn try_vec(path: &Path, len: usize) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory {
        what: format!("the values of {}", path.display()),
        bytes: (len as u64).saturating_mul(8),
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn atomic_write_failure_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let e = write_atomic(&path, |_| Err(io::Error::other("boom"))).unwrap_err();
        assert!(e.to_string().contains("out.txt") && e.to_string().contains("boom"), "{e}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomic(&path, |w| w.write_all(b"ok")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "ok");
        let e = write_atomic(&dir.path().join("missing/x.txt"), |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().starts_with("cannot write "), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn overwrite_keeps_permissions_and_new_files_follow_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("private.okr");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, |w| w.write_all(b"newer")).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        // A new file: 0666 less the umask, compared with a file created the plain way.
        let plain = dir.path().join("plain");
        fs::write(&plain, "").unwrap();
        let fresh = dir.path().join("fresh");
        write_atomic(&fresh, |w| w.write_all(b"x")).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&fresh), mode(&plain));
    }

    #[cfg(unix)]
    #[test]
    fn temporary_name_is_unpredictable_and_never_follows_a_symlink() {
        // The old scheme `.name.<pid>.tmp`: a symlink planted there must not be written through.
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let path = dir.path().join("out.arff");
        std::os::unix::fs::symlink(&victim, dir.path().join(format!(".out.arff.{}.tmp", std::process::id()))).unwrap();
        write_atomic(&path, |w| w.write_all(b"data")).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(fs::read_to_string(&path).unwrap(), "data");
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_written_in_place_and_a_full_disk_is_an_error() {
        use std::os::unix::fs::FileTypeExt;
        write_atomic(Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap();
        assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device(), "still the device");
        let e = write_atomic(Path::new("/dev/full"), |w| w.write_all(&[b'x'; 1 << 17])).unwrap_err();
        assert!(e.to_string().starts_with("cannot write /dev/full: No space left on device"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo on this system
        }
        let reader = {
            let path = path.clone();
            std::thread::spawn(move || fs::read(path).unwrap())
        };
        write_atomic(&path, |w| w.write_all(b"records")).unwrap();
        // Checked before joining: a replaced pipe leaves the reader blocked.
        assert!(fs::metadata(&path).unwrap().file_type().is_fifo(), "the pipe is still a pipe");
        assert_eq!(reader.join().unwrap(), b"records");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }

    #[test]
    fn output_equal_to_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.arff");
        fs::write(&data, "x").unwrap();
        let e = check_not_input(&data, &[("model", Path::new("nope")), ("training file", &data)]).unwrap_err();
        assert!(e.to_string().contains("training file"), "{e}");
        #[cfg(unix)]
        {
            let link = dir.path().join("link.arff");
            std::os::unix::fs::symlink(&data, &link).unwrap();
            assert!(check_not_input(&link, &[("input", &data)]).is_err());
            let hard = dir.path().join("hard.arff");
            fs::hard_link(&data, &hard).unwrap();
            assert!(check_not_input(&hard, &[("input", &data)]).is_err());
        }
        assert!(check_not_input(&dir.path().join("new"), &[("input", &data)]).is_ok());
    }

    #[test]
    fn reader_on_dev_zero_is_an_error_not_an_oom() {
        #[cfg(unix)]
        {
            let e = read_bounded(Path::new("/dev/zero"), MAX_INPUT_BYTES).unwrap_err();
            assert!(matches!(e, Error::NotText { offset: 0, .. }), "{e}");
            assert!(e.to_string().contains("/dev/zero"), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        fs::write(&path, "1 2 3\n".repeat(100)).unwrap();
        let e = read_bounded(&path, 64).unwrap_err();
        assert!(matches!(e, Error::InputTooLarge { limit: 64, .. }), "{e}");
        assert_eq!(read_bounded(&path, 600).unwrap().len(), 600);
    }
}
