//! Every file the program creates goes through here, so that none is ever written through a
//! symbolic link (or into a FIFO or a device) planted at its name: a results folder, a journal,
//! a lock, a temporary file or a report page lands at its own name or not at all.
//!
//! - [`create_fresh`]: a file made anew. Whatever non-folder entry holds the name (a stale
//!   temporary file, a link, a FIFO) is removed first (a link is removed, never followed), then
//!   the file is created with `O_CREAT | O_EXCL`, which never follows a link: if anything
//!   reappears at the name in between, the creation fails instead of writing through it.
//! - [`open_own`]: a file the program keeps between runs (a journal, a lock), opened or
//!   created with `O_NOFOLLOW | O_NONBLOCK` and accepted only when it is a regular file, checked
//!   on the open handle; a link, FIFO, device or folder at its name is a one-line error that
//!   says to move it away.
//! - [`write_atomic`]: bytes to a fresh temporary file beside the target, then one rename (a
//!   rename replaces a link at the target, never its target).

use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `path` with `.tmp` inserted before the extension (`a.parquet` -> `a.tmp.parquet`), for
/// write-then-rename.
pub fn tmp_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.tmp.{}", ext.to_string_lossy()),
        None => format!("{stem}.tmp"),
    };
    path.with_file_name(name)
}

/// Removes a non-folder entry at `path` (a link itself, not its target); a folder there is an
/// error naming it.
fn clear_name(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot inspect {}", path.display())),
        Ok(m) if m.is_dir() => anyhow::bail!(
            "{} is a folder where the program writes a file; move it away",
            path.display()
        ),
        Ok(_) => match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot replace {}", path.display()))
            }
            _ => Ok(()),
        },
    }
}

/// Creates `path` as a new, empty regular file for writing, never through a link: whatever
/// non-folder entry has the name is removed first, and the creation itself refuses any entry
/// that appears there meanwhile.
pub fn create_fresh(path: &Path) -> Result<File> {
    clear_name(path)?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))
}

/// Writes `bytes` to `path` as a new file ([`create_fresh`]).
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = create_fresh(path)?;
    f.write_all(bytes)
        .and_then(|()| f.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `bytes` to `path` via a fresh temporary file beside it ([`tmp_path`]) and a rename;
/// the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    let tmp = tmp_path(path);
    with_tmp(&tmp, path, |f| {
        f.write_all(bytes.as_ref())
            .with_context(|| format!("cannot write {}", tmp.display()))
    })
}

/// What a file the program writes into a user's folder may find at its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Nothing: the file is created, never over anything that appeared meanwhile.
    Absent,
    /// A file with this content hash (as manifests record them): replaced only while it holds
    /// exactly that.
    Hash(u64),
}

/// Writes `bytes` at `path` when what is there is what `expect` says (checked at the write;
/// for [`Expect::Absent`] the file is linked into place, which fails if anything appeared);
/// otherwise an error naming the path, which is left as it is.
pub fn replace_expected(path: &Path, bytes: &[u8], expect: Expect) -> Result<()> {
    let changed = || {
        anyhow::anyhow!(
            "{} changed while the program ran (a file appeared there or was edited), so it was left as it is; run again to write the config beside it under another name",
            path.display()
        )
    };
    match expect {
        Expect::Hash(h) => {
            let now = super::staging::hash_file(path).ok();
            if now != Some(h) {
                return Err(changed());
            }
            replace_beside(path, bytes)
        }
        Expect::Absent => beside_then(path, bytes, |tmp| {
            let linked = match std::fs::hard_link(tmp, path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(changed()),
                Err(e) => Err(e).with_context(|| format!("cannot write {}", path.display())),
            };
            std::fs::remove_file(tmp).ok();
            linked
        }),
    }
}

/// Writes `bytes` to `path` through a temporary file of this process beside it
/// (`.<file>.tmp-<pid>`) and a rename, for files written into a user's folder (a `cluster`
/// config, the report's list): unlike [`write_atomic`] nothing already at the temporary name
/// is removed; it is an error naming it.
pub fn replace_beside(path: &Path, bytes: &[u8]) -> Result<()> {
    beside_then(path, bytes, |tmp| {
        std::fs::rename(tmp, path)
            .with_context(|| format!("cannot move {} into place", path.display()))
    })
}

/// Writes `bytes` to a new temporary file of this process beside `path` (`.<file>.tmp-<pid>`,
/// never over anything there), then lets `place` put it at `path`; the temporary file is
/// removed when either step fails.
fn beside_then(path: &Path, bytes: &[u8], place: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let file = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{file}.tmp-{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .with_context(|| {
            format!(
                "cannot create the temporary file {} (move away what is there)",
                tmp.display()
            )
        })?;
    let result = f
        .write_all(bytes)
        .and_then(|()| f.flush())
        .with_context(|| format!("cannot write {}", tmp.display()))
        .and_then(|()| place(&tmp));
    if result.is_err() {
        std::fs::remove_file(&tmp).ok();
    }
    result
}

/// Creates the fresh temporary file `tmp`, lets `fill` write it, then renames it to `dest`;
/// removes `tmp` when either step fails.
pub fn with_tmp(tmp: &Path, dest: &Path, fill: impl FnOnce(&mut File) -> Result<()>) -> Result<()> {
    let result = create_fresh(tmp).and_then(|mut f| {
        fill(&mut f)?;
        drop(f);
        std::fs::rename(tmp, dest)
            .with_context(|| format!("cannot move {} into place", dest.display()))
    });
    if result.is_err() {
        std::fs::remove_file(tmp).ok();
    }
    result
}

/// How [`open_own`] treats an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Own {
    /// Keep its contents (a journal to resume, a lock).
    Keep,
    /// Empty it.
    Truncate,
}

/// Opens the program's own file `path` for reading and writing, creating it if missing, never
/// through a link and only when it is a regular file (a FIFO is never waited on): anything
/// else at the name is an error naming it, with the fix (`what` says what the file is for).
pub fn open_own(path: &Path, mode: Own, what: &str) -> Result<File> {
    let not_regular = |kind: &str| {
        anyhow::anyhow!(
            "{} ({what}) is {kind}, not a regular file; the program never writes through it: move it away and run again",
            path.display()
        )
    };
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.file_type().is_symlink() {
            return Err(not_regular("a symbolic link"));
        }
        if !m.is_file() {
            return Err(not_regular(kind_of(&m)));
        }
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = match opts.open(path) {
        Ok(f) => f,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(not_regular("a symbolic link"))
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot open {} ({what})", path.display()))
        }
    };
    let m = file
        .metadata()
        .with_context(|| format!("cannot inspect {}", path.display()))?;
    if !m.is_file() {
        return Err(not_regular(kind_of(&m)));
    }
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // Blocking again for ordinary reads and writes.
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this function owns.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    if mode == Own::Truncate {
        file.set_len(0)
            .with_context(|| format!("cannot empty {}", path.display()))?;
    }
    Ok(file)
}

/// An advisory lock on a file of the program's own ([`lock_own`]); released when dropped, and
/// the file removed then when taking the lock created it.
pub struct FileLock {
    file: Option<File>,
    path: PathBuf,
    created: bool,
}

impl FileLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while still locked: a process that opened the old file finds it no longer at
        // the name once it gets the lock, and tries again or stops.
        if self.created {
            std::fs::remove_file(&self.path).ok();
            super::signals::unregister_created(&super::signals::Created::File(self.path.clone()));
        }
        self.file = None;
    }
}

/// Takes the advisory lock of the lock file `path` (created if missing, never through a link;
/// `what` says what it guards). With `wait`, waits for another holder to release it; without,
/// returns `Ok(None)` at once when another process holds it.
pub fn lock_own(path: &Path, what: &str, wait: bool) -> Result<Option<FileLock>> {
    loop {
        let existed = std::fs::symlink_metadata(path).is_ok();
        let file = open_own(path, Own::Keep, what)?;
        let locked = if wait {
            file.lock()
                .with_context(|| format!("cannot lock {}", path.display()))?;
            true
        } else {
            match file.try_lock() {
                Ok(()) => true,
                Err(std::fs::TryLockError::WouldBlock) => false,
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", path.display()))
                }
            }
        };
        // The holder before us may have removed the file it locked: a lock on a file no longer
        // at the name excludes nobody.
        let current = locked && same_file(&file, path);
        if current {
            // A lock file holding the program's mark is its own (one a killed process left is
            // removed at release too); a user's file at the name is only ever locked.
            let mut file = file;
            let ours = if existed {
                holds_lock_mark(&mut file)
            } else {
                file.write_all(LOCK_MARK.as_bytes())
                    .and_then(|()| file.flush())
                    .is_ok()
            };
            if ours {
                super::signals::register_created(super::signals::Created::File(path.to_path_buf()));
            }
            return Ok(Some(FileLock {
                file: Some(file),
                path: path.to_path_buf(),
                created: ours,
            }));
        }
        if !wait {
            return Ok(None);
        }
    }
}

/// What a lock file the program creates holds.
const LOCK_MARK: &str = "a lock of trellis-lab: removed when the process that holds it ends\n";

/// Whether the open lock file holds exactly [`LOCK_MARK`].
fn holds_lock_mark(file: &mut File) -> bool {
    use std::io::{Read, Seek};
    let mut text = String::new();
    file.seek(std::io::SeekFrom::Start(0)).is_ok()
        && file
            .take(LOCK_MARK.len() as u64 + 1)
            .read_to_string(&mut text)
            .is_ok()
        && text == LOCK_MARK
}

/// Whether process `pid` is running (a zombie is not); `true` where `/proc` is missing
/// (nothing can be proved dead there).
pub fn process_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        // The state follows the command name's closing parenthesis.
        Ok(stat) => !matches!(
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next()),
            Some('Z') | Some('X')
        ),
    }
}

/// Whether the open `file` is the file now at `path` (same device and inode).
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// Opens `path` for reading when it is a regular file of at most `limit` bytes (a link is
/// followed, but a FIFO is never waited on and a device never read): otherwise a one-line error
/// naming it (`what` says what the file is).
pub fn open_regular(path: &Path, limit: u64, what: &str) -> Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts
        .open(path)
        .with_context(|| format!("cannot read {} ({what})", path.display()))?;
    let m = file
        .metadata()
        .with_context(|| format!("cannot inspect {}", path.display()))?;
    if !m.is_file() {
        anyhow::bail!(
            "{} ({what}) is {}, not a regular file; give a regular file",
            path.display(),
            kind_of(&m)
        );
    }
    if m.len() > limit {
        anyhow::bail!(
            "{} ({what}) holds {} bytes, above the {} MiB read here; remove or replace it",
            path.display(),
            m.len(),
            limit >> 20
        );
    }
    Ok(file)
}

/// Words for a non-regular file type.
fn kind_of(m: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if m.is_dir() {
        "a folder"
    } else if m.file_type().is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trellis-safe-fs-{}-{name}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn links_at_written_names_are_replaced_never_followed() {
        let d = dir("links");
        let victim = d.join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        // A link at the temporary name and one at the final name.
        let out = d.join("out.parquet");
        std::os::unix::fs::symlink(&victim, tmp_path(&out)).unwrap();
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_atomic(&out, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        assert!(!tmp_path(&out).exists());
        // A dangling link is removed too, and create_fresh makes a regular file.
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
        write_new(&dangling, b"x").unwrap();
        assert!(!d.join("nowhere").exists());
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_zombie_is_not_alive() {
        assert!(process_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not waited for: once it has exited it is a zombie until reaped.
        let t0 = std::time::Instant::now();
        while process_alive(pid) && t0.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!process_alive(pid), "a zombie counts as gone");
        child.wait().unwrap();
        assert!(!process_alive(pid));
    }

    #[test]
    fn own_files_refuse_links_fifos_devices_and_folders() {
        let d = dir("own");
        let victim = d.join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let link = d.join(".x.journal");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = open_own(&link, Own::Truncate, "journal")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("symbolic link") && e.contains("move it away"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_own(&fifo, Own::Keep, "journal")
            .unwrap_err()
            .to_string();
        assert!(e.contains("FIFO"), "{e}");
        let e = open_own(Path::new("/dev/null"), Own::Keep, "lock")
            .unwrap_err()
            .to_string();
        assert!(e.contains("device"), "{e}");
        let e = open_own(&d, Own::Keep, "lock").unwrap_err().to_string();
        assert!(e.contains("folder"), "{e}");
        // A regular file is kept or emptied as asked.
        let f = d.join("own");
        std::fs::write(&f, "abc").unwrap();
        drop(open_own(&f, Own::Keep, "journal").unwrap());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "abc");
        drop(open_own(&f, Own::Truncate, "journal").unwrap());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "");
        // A folder at a name written fresh is an error, not removed.
        let e = create_fresh(&d).unwrap_err().to_string();
        assert!(e.contains("folder"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }
}
