//! The one atomic file writer of the workspace: model files, data files,
//! prediction files, records and reports all go through [`write_atomic`].
//!
//! # Output-path rules
//!
//! An output path behaves as a shell redirect (`> path`) would, while a
//! regular file is still replaced atomically:
//!
//! | the path is | what [`write_atomic`] does |
//! |---|---|
//! | new, or a regular file | a temporary file `.NAME.XXXXXX.tmp` in the same directory is written, synced and renamed over it |
//! | a symlink (also dangling) | followed (up to 40 links); its final target is replaced as above, in the target's directory; the link stays |
//! | a character device or a FIFO (`/dev/null`, a pipe, a terminal) | written directly |
//! | a regular file reached through `/dev` or `/proc` (`/dev/stdout` redirected to a file) | appended to directly (the shell opened and truncated it already) |
//! | a directory, or a name ending in `/` (`-o dir/`, `-o .`) | refused: "it is a directory" |
//! | a read-only regular file (no write bit, e.g. `0444`) | refused, also for root: "it is read-only" |
//! | a regular file the process may not write | refused: "permission denied" |
//!
//! A replaced file keeps its permission bits and, when the process may set
//! them (root, or the same owner), its owner and group. When the file has
//! other hard links, or its owner cannot be kept, the complete temporary
//! file is copied into the existing file instead of renamed over it: the
//! links and the owner stay, and a failing body still leaves the file
//! untouched (only the final copy is not atomic).
//!
//! Temporary files hold an advisory lock (`flock`) while they are written.
//! A process killed during a write (SIGKILL) leaves its temporary file
//! behind; the next write to the same path removes every `.NAME.XXXXXX.tmp`
//! next to it that no live process holds. Error messages name the output
//! path, never a temporary name.

use std::fs::{self, File, Metadata, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Temporary files being written, removed by [`remove_temporary_files`].
static LIVE_TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Symbolic links followed before giving up (Linux's own limit).
const MAX_SYMLINKS: usize = 40;

/// Random characters in a temporary name (`.NAME.XXXXXX.tmp`).
const RANDOM_CHARS: usize = 6;

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
/// directory, which is then synced and renamed over `path`; the rules for
/// symlinks, devices, pipes, read-only files, owners and hard links are in
/// the [module documentation](self).
///
/// The temporary file is `.<name>.<random>.tmp`, created exclusively
/// (`O_EXCL`: never through an existing file or symlink), with `0666` less
/// the umask (model files hold training data: they follow the user's umask)
/// unless it replaces a file, whose permission bits it takes. On failure the
/// temporary file is removed and `path` is untouched.
///
/// # Errors
/// Any I/O error of the body, the creation, the sync or the rename; a
/// directory, a read-only or a non-writable output. The messages never name
/// the temporary file.
///
/// # Example
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.txt");
/// okr_io::write_atomic(&path, |w| w.write_all(b"hello\n"))?;
/// assert_eq!(std::fs::read_to_string(&path)?, "hello\n");
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 1, "no temporary file left");
/// let e = okr_io::write_atomic(dir.path(), |w| w.write_all(b"x")).unwrap_err();
/// assert_eq!(e.to_string(), "it is a directory; give a file path");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_atomic(path: &Path, body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>) -> io::Result<()> {
    match resolve(path)? {
        Target::Direct { append } => {
            let file = OpenOptions::new().write(true).append(append).open(path)?;
            let mut w = BufWriter::with_capacity(1 << 16, file);
            body(&mut w).and_then(|()| w.flush())
        }
        Target::Replace { path: target, old } => replace(&target, old.as_ref(), body),
    }
}

/// Where the bytes for an output path go.
#[derive(Debug)]
enum Target {
    /// Written through the path itself (a device, a pipe, `/dev/stdout`).
    Direct {
        /// Append (a regular file behind `/dev/stdout`) rather than write from the start.
        append: bool,
    },
    /// A regular file (or a new one) at `path`, symlinks resolved, replaced atomically.
    Replace {
        /// The final target.
        path: PathBuf,
        /// Its metadata when it exists.
        old: Option<Metadata>,
    },
}

fn is_a_directory() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "it is a directory; give a file path")
}

/// Under `/dev` or `/proc`: nodes (and magic links such as `/dev/stdout`)
/// that must be written through, never replaced.
fn is_special(path: &Path) -> bool {
    path.starts_with("/dev") || path.starts_with("/proc")
}

fn resolve(path: &Path) -> io::Result<Target> {
    if path.file_name().is_none() || path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(is_a_directory());
    }
    let meta = match fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(m) = &meta {
        if m.is_dir() {
            return Err(is_a_directory());
        }
        if !m.is_file() {
            return Ok(Target::Direct { append: false });
        }
    }
    // Follow the links by hand: a dangling one names the file to create.
    let mut target = path.to_path_buf();
    for _ in 0..=MAX_SYMLINKS {
        if meta.is_some() && is_special(&target) {
            return Ok(Target::Direct { append: true });
        }
        match fs::symlink_metadata(&target) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = fs::read_link(&target)?;
                target = match target.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => {
                if target.file_name().is_none() {
                    return Err(is_a_directory());
                }
                return Ok(Target::Replace { path: target, old: meta });
            }
        }
    }
    Err(io::Error::other(format!("more than {MAX_SYMLINKS} levels of symbolic links")))
}

/// Refuses a read-only file (even for root, who could write it) and a file
/// the process may not write (a shell redirect would fail too).
fn check_writable(path: &Path, old: &Metadata) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = old.permissions().mode() & 0o7777;
        if mode & 0o222 == 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("it is read-only (mode {mode:04o}); make it writable or remove it first"),
            ));
        }
    }
    #[cfg(not(unix))]
    if old.permissions().readonly() {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "it is read-only"));
    }
    // Opened without truncation: nothing changes.
    match OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "permission denied (the file is not writable by this user)",
        )),
        Err(e) => Err(e),
    }
}

/// A temporary file being written: registered for the signal handler,
/// locked while it lives, removed on drop unless persisted.
struct Temporary {
    path: PathBuf,
    file: File,
    keep: bool,
}

impl Temporary {
    fn create(dir: &Path, name: &str) -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut last = None;
        for _ in 0..64 {
            let mut h = std::hash::RandomState::new().build_hasher();
            h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            h.write_u32(std::process::id());
            let mut bits = h.finish();
            let random: String = (0..RANDOM_CHARS)
                .map(|_| {
                    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
                    let c = ALPHABET[(bits % ALPHABET.len() as u64) as usize];
                    bits /= ALPHABET.len() as u64;
                    char::from(c)
                })
                .collect();
            let path = dir.join(format!(".{name}.{random}.tmp"));
            let mut options = OpenOptions::new();
            options.write(true).read(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                // Filtered by the umask, like any new file.
                options.mode(0o666);
            }
            match options.open(&path) {
                Ok(file) => {
                    // Held until the file is closed, also by a killed
                    // process: what tells a stale file from a live one.
                    let _ = file.try_lock();
                    live().push(path.clone());
                    return Ok(Self { path, file, keep: false });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(io::Error::new(e.kind(), format!("the folder {} does not exist", dir.display())));
                }
                Err(e) => {
                    return Err(io::Error::new(e.kind(), format!("cannot create a file in {}: {e}", dir.display())));
                }
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
        live().retain(|p| p != &self.path);
    }
}

/// Whether `file_name` is an okr temporary file of `name` (`.NAME.XXXXXX.tmp`).
fn is_temporary_of(file_name: &str, name: &str) -> bool {
    file_name
        .strip_prefix('.')
        .and_then(|r| r.strip_prefix(name))
        .and_then(|r| r.strip_prefix('.'))
        .and_then(|r| r.strip_suffix(".tmp"))
        .is_some_and(|mid| mid.len() == RANDOM_CHARS && mid.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Removes the temporary files of `name` in `dir` that no process holds
/// (left by a killed writer). Best effort: errors are ignored.
fn remove_stale(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        if !file_name.to_str().is_some_and(|f| is_temporary_of(f, name)) {
            continue;
        }
        // A regular file only: a planted symlink is not followed.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if live().contains(&path) {
            continue;
        }
        if let Ok(file) = File::open(&path)
            && file.try_lock().is_ok()
        {
            let _ = fs::remove_file(&path);
        }
    }
}

fn replace(
    target: &Path,
    old: Option<&Metadata>,
    body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    if let Some(old) = old {
        check_writable(target, old)?;
    }
    let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    remove_stale(dir, &name);
    let mut tmp = Temporary::create(dir, &name)?;
    let mut w = BufWriter::with_capacity(1 << 16, tmp.file.try_clone()?);
    body(&mut w)?;
    w.flush()?;
    drop(w);
    let mut in_place = false;
    if let Some(old) = old {
        in_place = keep_owner(&tmp.file, old);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            in_place |= old.nlink() > 1;
        }
        // After the owner: changing it clears set-user-id bits.
        tmp.file.set_permissions(old.permissions())?;
    }
    tmp.file.sync_all()?;
    if in_place {
        // Hard links or an owner to keep: the complete new contents are
        // copied into the existing file, which stays the same inode.
        tmp.file.rewind()?;
        let mut out = OpenOptions::new().write(true).truncate(true).open(target)?;
        io::copy(&mut tmp.file, &mut out)?;
        out.sync_all()?;
        return Ok(());
    }
    fs::rename(&tmp.path, target)?;
    tmp.keep = true;
    Ok(())
}

/// Gives `file` the owner and group of `old`; whether that failed (the
/// process may not: it is neither root nor the owner).
fn keep_owner(file: &File, old: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(new) = file.metadata() else { return true };
        if (new.uid(), new.gid()) == (old.uid(), old.gid()) {
            return false;
        }
        std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).is_err()
    }
    #[cfg(not(unix))]
    {
        let _ = (file, old);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(dir: &Path) -> usize {
        fs::read_dir(dir).unwrap().count()
    }

    #[test]
    fn a_failed_body_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.okr");
        let e = write_atomic(&path, |_| Err(io::Error::other("boom"))).unwrap_err();
        assert_eq!(e.to_string(), "boom");
        assert_eq!(count(dir.path()), 0);
    }

    #[test]
    fn temporary_names_are_recognized() {
        assert!(is_temporary_of(".out.txt.aZ09xY.tmp", "out.txt"));
        for other in [".out.txt.aZ09x.tmp", ".out.txt.aZ09xYz.tmp", ".out.txt.aZ-9xY.tmp", "out.txt.aZ09xY.tmp"] {
            assert!(!is_temporary_of(other, "out.txt"), "{other}");
        }
        assert!(!is_temporary_of(".out.txt.aZ09xY.tmp", "out"));
    }

    #[test]
    fn directories_are_refused_with_one_message() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        let new_dir = format!("{}/new/", dir.path().display());
        for path in [sub.clone(), PathBuf::from(format!("{}/", sub.display())), ".".into(), new_dir.into()] {
            let e = write_atomic(&path, |w| w.write_all(b"x")).unwrap_err();
            assert_eq!(e.to_string(), "it is a directory; give a file path", "{}", path.display());
        }
        assert_eq!(count(&sub), 0);
    }

    #[cfg(unix)]
    mod unix {
        use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

        use super::*;

        #[test]
        fn overwriting_keeps_permissions() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("m.okr");
            fs::write(&path, b"old").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
            write_atomic(&path, |w| w.write_all(b"new")).unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"new");
            assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(count(dir.path()), 1, "no temporary file left");
        }

        #[test]
        fn d1_a_symlink_is_followed_and_its_target_replaced() {
            let dir = tempfile::tempdir().unwrap();
            let real_dir = dir.path().join("real");
            fs::create_dir(&real_dir).unwrap();
            let target = real_dir.join("t.txt");
            fs::write(&target, "old").unwrap();
            let link = dir.path().join("link.txt");
            symlink(&target, &link).unwrap();
            // And a relative link to the link.
            let link2 = dir.path().join("link2.txt");
            symlink("link.txt", &link2).unwrap();
            let ino = fs::metadata(&target).unwrap().ino();
            write_atomic(&link2, |w| w.write_all(b"new")).unwrap();
            assert_eq!(fs::read_to_string(&target).unwrap(), "new");
            assert_ne!(fs::metadata(&target).unwrap().ino(), ino, "replaced, not written in place");
            assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the links stay");
            assert!(fs::symlink_metadata(&link2).unwrap().file_type().is_symlink());
            assert_eq!(count(&real_dir), 1, "the temporary file was in the target's directory");
            // A dangling link creates its target.
            let dangling = dir.path().join("dangling");
            symlink(real_dir.join("fresh.txt"), &dangling).unwrap();
            write_atomic(&dangling, |w| w.write_all(b"fresh")).unwrap();
            assert_eq!(fs::read_to_string(real_dir.join("fresh.txt")).unwrap(), "fresh");
            // A loop is an error, not a hang.
            let a = dir.path().join("a");
            symlink("b", &a).unwrap();
            symlink("a", dir.path().join("b")).unwrap();
            let e = write_atomic(&a, |w| w.write_all(b"x")).unwrap_err();
            assert!(e.to_string().contains("symbolic links"), "{e}");
        }

        #[test]
        fn d1_dev_stdout_and_devices_are_written_in_place() {
            use std::os::unix::fs::FileTypeExt;
            write_atomic(Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap();
            assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device(), "still the device");
            let e = write_atomic(Path::new("/dev/full"), |w| w.write_all(&[b'x'; 1 << 17])).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::StorageFull);
            // A link to /dev/null is followed to the device, not replaced.
            let dir = tempfile::tempdir().unwrap();
            let link = dir.path().join("null");
            symlink("/dev/null", &link).unwrap();
            write_atomic(&link, |w| w.write_all(b"x")).unwrap();
            assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            // /proc/self/fd/N of a regular file: appended to through the magic link.
            let file = dir.path().join("redirected.txt");
            let held = File::create(&file).unwrap();
            let fd = std::os::fd::AsRawFd::as_raw_fd(&held);
            let proc_path = PathBuf::from(format!("/proc/self/fd/{fd}"));
            if proc_path.exists() {
                write_atomic(&proc_path, |w| w.write_all(b"one\n")).unwrap();
                write_atomic(&proc_path, |w| w.write_all(b"two\n")).unwrap();
                assert_eq!(fs::read_to_string(&file).unwrap(), "one\ntwo\n");
                assert_eq!(count(dir.path()), 2, "no temporary file, no replaced link");
            }
        }

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
            assert_eq!(count(dir.path()), 1, "no temporary file left");
        }

        #[test]
        fn d3_read_only_files_are_refused_and_hard_links_kept() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("ro.txt");
            fs::write(&path, "keep").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
            let e = write_atomic(&path, |w| w.write_all(b"new")).unwrap_err();
            assert_eq!(e.to_string(), "it is read-only (mode 0444); make it writable or remove it first");
            assert_eq!(fs::read_to_string(&path).unwrap(), "keep");
            assert_eq!(count(dir.path()), 1);

            let out = dir.path().join("out.txt");
            let other = dir.path().join("other-name.txt");
            fs::write(&out, "old").unwrap();
            fs::hard_link(&out, &other).unwrap();
            let ino = fs::metadata(&out).unwrap().ino();
            write_atomic(&out, |w| w.write_all(b"new contents")).unwrap();
            assert_eq!(fs::read_to_string(&other).unwrap(), "new contents", "the other link sees the new contents");
            assert_eq!(fs::metadata(&out).unwrap().ino(), ino);
            // A failing body leaves both links untouched.
            assert!(write_atomic(&out, |w| w.write_all(b"partial").and(Err(io::Error::other("boom")))).is_err());
            assert_eq!(fs::read_to_string(&other).unwrap(), "new contents");
            assert_eq!(count(dir.path()), 3, "no temporary file left");
        }

        #[test]
        fn d3_owner_and_group_are_kept_when_the_process_may() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("owned.txt");
            fs::write(&path, "old").unwrap();
            let before = fs::metadata(&path).unwrap();
            // Our own file: the owner is ours anyway; as root, a file of
            // another owner keeps it (checked when the test runs as root).
            if std::os::unix::fs::chown(&path, Some(4242), Some(4243)).is_ok() {
                write_atomic(&path, |w| w.write_all(b"new")).unwrap();
                let after = fs::metadata(&path).unwrap();
                assert_eq!((after.uid(), after.gid()), (4242, 4243));
            } else {
                write_atomic(&path, |w| w.write_all(b"new")).unwrap();
                let after = fs::metadata(&path).unwrap();
                assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
            }
            assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        }

        #[test]
        fn d4_stale_temporary_files_are_removed_and_live_ones_kept() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("big.okr");
            let stale = dir.path().join(".big.okr.Ab12Cd.tmp");
            fs::write(&stale, vec![0u8; 1000]).unwrap();
            // Held by a live writer (a lock): kept.
            let held_path = dir.path().join(".big.okr.Zz99Yy.tmp");
            let held = File::create(&held_path).unwrap();
            held.lock().unwrap();
            // Other names: kept.
            let unrelated = dir.path().join(".big.okr.notours.tmp");
            fs::write(&unrelated, "x").unwrap();
            let victim = dir.path().join("victim");
            fs::write(&victim, "keep").unwrap();
            let planted = dir.path().join(".big.okr.Qq11Ww.tmp");
            symlink(&victim, &planted).unwrap();
            write_atomic(&path, |w| w.write_all(b"model")).unwrap();
            assert!(!stale.exists(), "the stale file is removed");
            assert!(held_path.exists() && unrelated.exists(), "others are kept");
            assert!(fs::symlink_metadata(&planted).is_ok() && victim.exists(), "a symlink is not followed");
            drop(held);
        }

        #[test]
        fn errors_never_name_the_temporary_file() {
            let dir = tempfile::tempdir().unwrap();
            let missing = dir.path().join("missing/x.txt");
            let e = write_atomic(&missing, |w| w.write_all(b"x")).unwrap_err();
            assert_eq!(e.to_string(), format!("the folder {} does not exist", dir.path().join("missing").display()));
            assert_eq!(e.kind(), io::ErrorKind::NotFound);
            // A folder this user may not write (not as root, who may).
            let locked = dir.path().join("locked");
            fs::create_dir(&locked).unwrap();
            fs::set_permissions(&locked, fs::Permissions::from_mode(0o500)).unwrap();
            if let Err(e) = write_atomic(&locked.join("x.txt"), |w| w.write_all(b"x")) {
                assert!(e.to_string().starts_with("cannot create a file in "), "{e}");
                assert!(!e.to_string().contains(".x.txt."), "{e}");
            }
            // A failing rename (the target became a directory meanwhile).
            let target = dir.path().join("y.txt");
            let e = write_atomic(&target, |w| {
                fs::create_dir(dir.path().join("y.txt"))?;
                w.write_all(b"y")
            })
            .unwrap_err();
            assert!(!e.to_string().contains(".y.txt."), "{e}");
            fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
        }
    }
}
