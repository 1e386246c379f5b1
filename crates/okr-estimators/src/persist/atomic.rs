//! The one atomic file writer of the workspace: model files here, and every
//! okr-eval writer (data, records, reports) through `okr_eval::write_atomic`.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files being written, removed by [`remove_temporary_files`].
static LIVE_TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE_TEMPORARIES.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes the temporary files of [`write_atomic`] calls still in progress.
/// Meant for a SIGINT / SIGTERM handler just before the process exits
/// (destructors do not run then); a write in progress fails afterwards, it
/// does not resurrect the file.
pub fn remove_temporary_files() {
    for path in live().drain(..) {
        let _ = fs::remove_file(path);
    }
}

/// Writes `path` atomically: `body` writes a temporary file in the same
/// directory, which is then synced and renamed over `path`.
///
/// The temporary file is `.<name>.<random>.tmp`, created exclusively
/// (`O_EXCL`: never through an existing file or symlink). The result keeps
/// the permission bits of the file it replaces, or gets `0666` less the umask
/// when new (model files hold training data: they follow the user's umask).
/// On failure the temporary file is removed and `path` is untouched. A path
/// that is a device or a pipe (`/dev/null`, `/dev/full`, a FIFO) is written
/// in place: renaming over it would replace the node itself.
///
/// # Errors
/// Any I/O error of the body, the creation, the sync or the rename.
///
/// # Example
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.txt");
/// okr_estimators::persist::write_atomic(&path, |w| w.write_all(b"hello\n"))?;
/// assert_eq!(std::fs::read_to_string(&path)?, "hello\n");
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 1, "no temporary file left");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_atomic(path: &Path, body: impl FnOnce(&mut BufWriter<fs::File>) -> io::Result<()>) -> io::Result<()> {
    if let Ok(meta) = fs::metadata(path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        let file = fs::OpenOptions::new().write(true).open(path)?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        return body(&mut w).and_then(|()| w.flush());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The mode given at creation is filtered by the umask, like any new file.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let tmp = builder.tempfile_in(dir)?;
    let tmp_path = tmp.path().to_path_buf();
    live().push(tmp_path.clone());
    let result = (|| {
        let file = tmp.as_file().try_clone()?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        body(&mut w)?;
        w.flush()?;
        let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        if let Ok(old) = fs::metadata(path) {
            file.set_permissions(old.permissions())?;
        }
        file.sync_all()?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    })();
    live().retain(|p| p != &tmp_path);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_body_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.okr");
        let e = write_atomic(&path, |_| Err(io::Error::other("boom"))).unwrap_err();
        assert_eq!(e.to_string(), "boom");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn overwriting_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.okr");
        fs::write(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
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
        write_atomic(&path, |w| w.write_all(b"model bytes")).unwrap();
        // Checked before joining: a replaced pipe leaves the reader blocked.
        assert!(fs::metadata(&path).unwrap().file_type().is_fifo(), "the pipe is still a pipe");
        assert_eq!(reader.join().unwrap(), b"model bytes");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }
}
