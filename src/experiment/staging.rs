//! Writing results safely: a staging folder moved into place when complete, the manifest, and
//! the "already up to date" decision (config + program identity + input contents + outputs).

use super::{safe_fs, signals};
use anyhow::{Context, Result};
use serde_json::{json, Map, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use super::safe_fs::{tmp_path, write_atomic};

/// Reads a regular file of at most `limit` bytes as text (never a device or a huge file).
pub fn read_small(path: &Path, limit: u64) -> Result<String> {
    crate::data::read_text_limited(path, limit)
        .with_context(|| format!("cannot read {}", path.display()))
}

/// A folder where a run writes its outputs before they replace the results folder whole.
///
/// The staging folder `.<name>.staging-<pid>` sits beside the results folder `<name>`, so the
/// commit is one atomic exchange of the two folders (`renameat2(RENAME_EXCHANGE)` on Linux,
/// `renamex_np(RENAME_SWAP)` on macOS; where the system or file system lacks it, two renames
/// with no results folder in between). At every instant the results folder is one run's,
/// whole: a crash leaves either the old run or the new one, never a mix, and never a file the
/// committing run did not write. SIGINT and SIGTERM remove live
/// staging folders before the process ends; a SIGKILL leaves one, removed by the next run.
pub struct Staging {
    dir: PathBuf,
    final_dir: PathBuf,
    committed: bool,
}

impl Staging {
    /// A fresh staging folder for results that will go to `final_dir`.
    pub fn new(final_dir: &Path) -> Result<Staging> {
        let parent = final_dir.parent().unwrap_or(Path::new("."));
        let name = final_dir.file_name().unwrap_or_default().to_string_lossy();
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        remove_dead_staging(parent, &name);
        let dir = parent.join(format!(".{name}.staging-{}", std::process::id()));
        if std::fs::symlink_metadata(&dir).is_ok() {
            // A process of this id that is gone left it (ids are reused): removed only when it
            // is provably this program's.
            if !is_our_staging(&dir, &name) {
                anyhow::bail!(
                    "{} is in the way of this run's staging folder and is not one this program left; move it away",
                    dir.display()
                );
            }
            remove_entry(&dir)?;
        }
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        signals::register(&dir);
        safe_fs::write_new(&dir.join(STAGING_MARK), STAGING_MARK_TEXT.as_bytes())?;
        Ok(Staging {
            dir,
            final_dir: final_dir.to_path_buf(),
            committed: false,
        })
    }

    /// The staging folder itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where to write output `name` while staging.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes a text output.
    pub fn write_string(&self, name: &str, text: &str) -> Result<()> {
        write_atomic(&self.path(name), text)
    }

    /// Names of the staged files, sorted (the staging mark is not one).
    pub fn files(&self) -> Result<Vec<String>> {
        list_files(&self.dir)
    }

    /// Puts the staged folder in place of the results folder in one step and removes the old
    /// one: no file of the previous run (its outputs, its `checks.parquet`, anything else in
    /// it) survives, and no crash leaves a mix.
    pub fn commit(mut self) -> Result<PathBuf> {
        // The folder becomes the results: the mark goes (a staging folder killed from here on
        // is recognised by its manifest instead).
        std::fs::remove_file(self.dir.join(STAGING_MARK)).ok();
        test_pause("before the swap");
        let replaced = {
            // A signal's cleanup waits for the swap; the folder stays registered, since after
            // the swap it holds the old run, which the cleanup then removes.
            let _live = signals::hold();
            swap_into_place(&self.dir, &self.final_dir)?
        };
        self.committed = true;
        if replaced {
            test_pause("after the swap");
            // The old run now sits under the staging name: removed here, by the signal handler
            // if a signal comes first, or by the next run if this process is killed.
            remove_entry(&self.dir).ok();
        }
        signals::unregister(&self.dir);
        Ok(self.final_dir.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            std::fs::remove_dir_all(&self.dir).ok();
            signals::unregister(&self.dir);
        }
    }
}

/// For the interrupted-commit tests: with `TRELLIS_LAB_TEST_COMMIT_PAUSE_MS` set, waits that
/// long at each step of a commit (so a test can kill the process there) and says so on stderr.
fn test_pause(step: &str) {
    if let Some(ms) = std::env::var("TRELLIS_LAB_TEST_COMMIT_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        eprintln!("commit: pausing {ms} ms {step}");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Moves the folder `new` to `dest`. When `dest` exists the two are exchanged atomically and
/// `new` then names the old folder (returns `true`); where the exchange is not supported, the
/// old folder is renamed to `new`'s name first, then `new`'s contents moved in (between the
/// two renames there is no `dest`, which is never taken as complete).
fn swap_into_place(new: &Path, dest: &Path) -> Result<bool> {
    let into = || format!("cannot move the finished results into {}", dest.display());
    match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::rename(new, dest).with_context(into)?;
            return Ok(false);
        }
        Err(e) => return Err(e).with_context(into),
        Ok(m) if !m.is_dir() && !m.file_type().is_symlink() => anyhow::bail!(
            "{} is a file, so results cannot go there; move the file away",
            dest.display()
        ),
        Ok(_) => {}
    }
    // The last word of the ownership rule: whatever runs, only this program's output is
    // replaced (a user's folder that appeared while the run computed is refused here).
    super::ownership::check_at_swap(dest)?;
    if exchange(new, dest).with_context(into)? {
        return Ok(true);
    }
    // No atomic exchange here: the old folder moves aside under a name the next run removes.
    let aside = new.with_file_name(format!(
        "{}.old",
        new.file_name().unwrap_or_default().to_string_lossy()
    ));
    remove_entry(&aside)?;
    std::fs::rename(dest, &aside).with_context(into)?;
    std::fs::rename(new, dest).with_context(into)?;
    std::fs::rename(&aside, new).with_context(into)?;
    Ok(true)
}

/// Exchanges two paths atomically (`renameat2(RENAME_EXCHANGE)`); `Ok(false)` when the system
/// or file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    let (ca, cb) = (c_path(a)?, c_path(b)?);
    // SAFETY: two valid C strings; renameat2 only reads them.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    exchanged(r, &[libc::EINVAL, libc::ENOSYS, libc::EOPNOTSUPP])
}

/// Exchanges two paths atomically (`renamex_np(RENAME_SWAP)`: macOS 10.12 and later, on APFS
/// and HFS+); `Ok(false)` when the system or file system cannot.
#[cfg(target_vendor = "apple")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    let (ca, cb) = (c_path(a)?, c_path(b)?);
    // SAFETY: two valid C strings; renamex_np only reads them.
    let r = unsafe { libc::renamex_np(ca.as_ptr(), cb.as_ptr(), libc::RENAME_SWAP) };
    let cannot = [libc::EINVAL, libc::ENOSYS, libc::ENOTSUP, libc::EOPNOTSUPP];
    exchanged(r, &cannot)
}

/// A path for a C call.
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn c_path(p: &Path) -> std::io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
}

/// The exchange's outcome from its call's return value `r`: `Ok(false)` for an error in
/// `cannot` (the system or file system has no exchange).
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn exchanged(r: libc::c_int, cannot: &[libc::c_int]) -> std::io::Result<bool> {
    if r == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(code) if cannot.contains(&code) => Ok(false),
        _ => Err(e),
    }
}

/// Other systems have no atomic exchange: the caller's two renames.
#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
fn exchange(_a: &Path, _b: &Path) -> std::io::Result<bool> {
    Ok(false)
}

/// Removes whatever is at `path`: a folder with its contents, or a file or link (never what a
/// link points to).
fn remove_entry(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path)
            .with_context(|| format!("cannot remove {}", path.display())),
        Ok(_) => {
            std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))
        }
    }
}

/// Takes the advisory lock of the results folder `dir` (a file `.<name>.lock` beside it), or
/// fails at once, naming the folder, when another process holds it. `run`, `merge`, `check` and
/// `plot` all take it, so none of them writes into a folder another is replacing. It also
/// removes what killed runs of `dir` left (their staging folders). Dropping the guard releases
/// the lock and removes what taking it created: the lock file, and the folders above `dir` that
/// are still empty (a run that failed leaves nothing behind).
pub fn lock_results(dir: &Path) -> Result<ResultsLock> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    no_file_in_the_way(dir)?;
    let mut guard = ResultsLock {
        lock: None,
        created_dirs: missing_ancestors(parent),
    };
    for d in &guard.created_dirs {
        signals::register_created(signals::Created::EmptyDir(d.clone()));
    }
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let path = parent.join(format!(".{name}.lock"));
    guard.lock = safe_fs::lock_own(&path, "the results folder's lock", false)?;
    if guard.lock.is_none() {
        anyhow::bail!(
            "another process is writing {} (it holds {}); wait for it to finish",
            dir.display(),
            path.display()
        );
    }
    remove_dead_staging(parent, &name);
    Ok(guard)
}

/// The lock of a results folder ([`lock_results`]); released when dropped.
pub struct ResultsLock {
    lock: Option<safe_fs::FileLock>,
    created_dirs: Vec<PathBuf>,
}

impl Drop for ResultsLock {
    fn drop(&mut self) {
        self.lock = None;
        for d in &self.created_dirs {
            // Only an empty folder goes (remove_dir never removes contents).
            std::fs::remove_dir(d).ok();
            signals::unregister_created(&signals::Created::EmptyDir(d.clone()));
        }
    }
}

/// The folders of `dir` and its ancestors that do not exist yet, deepest first.
pub fn missing_ancestors(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .take_while(|p| std::fs::symlink_metadata(p).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// `Err` naming the file when `dir` or one of its ancestors exists but is not a folder (e.g. an
/// `output_dir` that names a file), so that no results folder can be made there.
pub fn no_file_in_the_way(dir: &Path) -> Result<()> {
    for p in dir.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => anyhow::bail!(
                "{} is a file, so results cannot go to {}; point experiment.output_dir (or experiment.name) at a folder, or move the file away",
                p.display(),
                dir.display()
            ),
            Err(_) => continue,
        }
    }
    Ok(())
}

/// Removes staging folders `.{name}.staging-PID` (and `.staging-PID.old`) in `parent` left by
/// processes that are gone (killed runs), each only when it is provably this program's
/// ([`is_our_staging`]); anything else with such a name is left alone. On systems without
/// `/proc` nothing is removed.
pub fn remove_dead_staging(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        if dead_staging_pid(&e.file_name().to_string_lossy(), name).is_some()
            && is_our_staging(&e.path(), name)
        {
            remove_entry(&e.path()).ok();
        }
    }
}

/// The file that marks a staging folder as this program's while it is being filled.
pub const STAGING_MARK: &str = ".trellis-lab-staging";

/// What the mark says.
pub const STAGING_MARK_TEXT: &str = "a staging folder of trellis-lab: removed when its run ends\n";

/// Whether `dir` is a staging folder of results `name` that this program made: a real folder
/// holding the staging mark (a run being staged), or this program's results (or shard) folder
/// for `name` (a finished run staged for the swap, or the old run swapped out).
pub fn is_our_staging(dir: &Path, name: &str) -> bool {
    let real_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    let marked = || {
        let mark = dir.join(STAGING_MARK);
        std::fs::symlink_metadata(&mark).is_ok_and(|m| m.is_file())
            && read_small(&mark, 1024).is_ok_and(|t| t == STAGING_MARK_TEXT)
    };
    real_dir && (marked() || super::ownership::why_not_ours_as(dir, name).is_none())
}

/// The process id in `file` when it names a staging folder of results `name`
/// (`.{name}.staging-PID` or `.{name}.staging-PID.old`) of a process that is gone; `None`
/// otherwise (a zombie counts as gone), and always where `/proc` is missing (nothing can be
/// proved dead there).
pub fn dead_staging_pid(file: &str, name: &str) -> Option<u32> {
    let pid = file
        .strip_prefix(&format!(".{name}.staging-"))
        .map(|p| p.strip_suffix(".old").unwrap_or(p))
        .and_then(|p| p.parse::<u32>().ok())?;
    (pid != std::process::id() && !safe_fs::process_alive(pid)).then_some(pid)
}

/// Regular files directly in `dir`, sorted by name (a staging folder's mark left out).
pub fn list_files(dir: &Path) -> Result<Vec<String>> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f != STAGING_MARK)
        .collect();
    v.sort();
    Ok(v)
}

/// `manifest.json`: what ran, with which config, program, inputs, threads and timings, and
/// the facts a run records for its figures.
pub struct Manifest {
    fields: Map<String, Value>,
    timings: Map<String, Value>,
}

impl Manifest {
    /// A manifest for the normalised `config` (JSON) read from `config_path`, whose run hash is
    /// `run_hash`.
    pub fn new(config: &Value, config_path: &Path, run_hash: &str, threads: usize) -> Manifest {
        let mut fields = Map::new();
        fields.insert("program".into(), json!(super::ownership::PROGRAM));
        fields.insert(
            "config_file".into(),
            json!(config_path.display().to_string()),
        );
        fields.insert("config".into(), config.clone());
        fields.insert("run_hash".into(), json!(run_hash));
        fields.insert(
            "seed".into(),
            config
                .get("experiment")
                .and_then(|e| e.get("seed"))
                .cloned()
                .unwrap_or(Value::Null),
        );
        fields.insert("crate_version".into(), json!(env!("CARGO_PKG_VERSION")));
        fields.insert("program_hash".into(), json!(program_hash()));
        fields.insert("git_revision".into(), json!(git_revision()));
        fields.insert("threads".into(), json!(threads));
        fields.insert(
            "host_cores".into(),
            json!(std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)),
        );
        fields.insert("cpu_model".into(), json!(cpu_model()));
        // The eight lanes' instruction set (after TRELLIS_LAB_SIMD), and every set the CPU has.
        let isa = crate::simd::Isa::detect();
        fields.insert("instruction_set".into(), json!(isa.name()));
        fields.insert(
            "cpu_instruction_sets".into(),
            json!(crate::simd::Isa::ALL
                .into_iter()
                .filter(|i| i.available())
                .map(|i| i.name())
                .collect::<Vec<_>>()),
        );
        fields.insert("load_average_at_start".into(), json!(load_average()));
        fields.insert("started_unix_seconds".into(), json!(unix_now()));
        Manifest {
            fields,
            timings: Map::new(),
        }
    }

    /// Worker threads of the run.
    pub fn threads(&self) -> usize {
        self.fields
            .get("threads")
            .and_then(|v| v.as_u64())
            .unwrap_or(1) as usize
    }

    /// Records a wall time in seconds.
    pub fn timing(&mut self, what: &str, seconds: f64) {
        self.timings.insert(what.into(), json!(seconds));
    }

    /// Records any other field (figures may read it back with [`super::Results::fact`]).
    pub fn set(&mut self, key: &str, v: impl serde::Serialize) {
        self.fields
            .insert(key.into(), serde_json::to_value(v).unwrap_or(Value::Null));
    }

    /// The manifest so far, as figures see it during a run.
    pub fn snapshot(&self) -> Value {
        let mut f = self.fields.clone();
        f.insert(
            "timings_seconds".into(),
            Value::Object(self.timings.clone()),
        );
        Value::Object(f)
    }

    /// The manifest as pretty JSON, listing `outputs` (name, bytes, content hash).
    pub fn to_json(&self, outputs: &[(String, u64, String)]) -> String {
        let mut f = self.snapshot();
        if let Some(o) = f.as_object_mut() {
            o.insert("finished_unix_seconds".into(), json!(unix_now()));
            o.insert(
                "outputs".into(),
                json!(outputs.iter().map(|(n, _, _)| n).collect::<Vec<_>>()),
            );
            let sizes: Map<String, Value> = outputs
                .iter()
                .map(|(n, b, _)| (n.clone(), json!(b)))
                .collect();
            o.insert("output_bytes".into(), Value::Object(sizes));
            let hashes: Map<String, Value> = outputs
                .iter()
                .map(|(n, _, h)| (n.clone(), json!(h)))
                .collect();
            o.insert("output_hashes".into(), Value::Object(hashes));
        }
        serde_json::to_string_pretty(&f).unwrap_or_default()
    }
}

/// `(name, bytes, content hash)` of every file in `dir`, for the manifest.
pub fn describe_outputs(dir: &Path) -> Result<Vec<(String, u64, String)>> {
    list_files(dir)?
        .into_iter()
        .map(|f| {
            let p = dir.join(&f);
            let bytes = std::fs::metadata(&p)?.len();
            Ok((f, bytes, format!("{:016x}", hash_file(&p)?)))
        })
        .collect()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The processor's model name (the first "model name" of /proc/cpuinfo), or `"unknown"` where
/// the file is missing (not Linux) or names none: run times are read beside it.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| cpu_model_of(&s))
        .unwrap_or_else(|| "unknown".into())
}

fn cpu_model_of(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "model name" && !value.trim().is_empty())
            .then(|| value.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

/// The system's load averages over 1, 5 and 15 minutes (/proc/loadavg) when the run started, or
/// null where the file is missing: a run time measured on a busy machine says so.
fn load_average() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|w| w.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// The git revision of the working directory (with `-dirty` when tracked files have uncommitted
/// changes), or `"unknown"`. Informational: the program's identity is [`program_hash`].
pub fn git_revision() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(rev) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("{rev}-dirty"),
            _ => rev,
        },
        None => "unknown".into(),
    }
}

/// A 64-bit hash of bytes (FNV-1a over 8-byte words, then over the tail): fast, stable across
/// platforms of the same endianness, not cryptographic.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    const P: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ w).wrapping_mul(P);
        h ^= h >> 29;
    }
    for &b in chunks.remainder() {
        h = (h ^ b as u64).wrapping_mul(P);
    }
    h
}

/// Hash of a file's contents, streamed (no whole-file read): the same as [`hash_text`] of its
/// bytes, as 16 hex digits after formatting.
pub fn hash_file(path: &Path) -> Result<u64> {
    let mut f = safe_fs::open_regular(path, u64::MAX, "read for its content hash")?;
    let mut buf = vec![0u8; HASH_CHUNK];
    let mut h: u64 = 0;
    loop {
        // Whole chunks (a short read is continued), so the hash does not depend on how the
        // system splits reads.
        let mut n = 0;
        while n < buf.len() {
            match f.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
            }
        }
        if n == 0 {
            break;
        }
        h = chunk_step(h, &buf[..n]);
        if n < buf.len() {
            break;
        }
    }
    Ok(h)
}

/// Bytes hashed at a time by [`hash_file`].
const HASH_CHUNK: usize = 1 << 20;

fn chunk_step(h: u64, chunk: &[u8]) -> u64 {
    (h.rotate_left(17) ^ hash_bytes(chunk)).wrapping_mul(0x0000_0100_0000_01b3)
}

/// [`hash_file`] of a file holding `bytes`, as 16 hex digits (as manifests record hashes).
pub fn hash_text(bytes: &[u8]) -> String {
    let h = bytes.chunks(HASH_CHUNK).fold(0, chunk_step);
    format!("{h:016x}")
}

/// Whether the run in `dir` recorded `config` as its config file with content hash `hash`.
pub fn ran_config(dir: &Path, config: &Path, hash: &str) -> bool {
    read_small(&dir.join("manifest.json"), 16 << 20)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|m| {
            m.get("config_file").and_then(Value::as_str) == Some(&config.display().to_string())
                && m.get("config_hash").and_then(Value::as_str) == Some(hash)
        })
}

/// The identity of the running program: a hash of its executable (so any change of code gives
/// a new identity), with the crate version.
pub fn program_hash() -> String {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| hash_file(&p).ok())
            .map(|h| format!("{h:016x}"))
            // No readable executable: never treat results as up to date.
            .unwrap_or_else(|| format!("unknown-{}", unix_now()));
        format!("{}+{exe}", env!("CARGO_PKG_VERSION"))
    })
    .clone()
}

/// The run hash: equal hashes mean a re-run would compute the same results (same normalised
/// config, same program, same input contents).
pub fn run_hash(config: &Value, inputs: &[PathBuf]) -> Result<String> {
    let mut text = serde_json::to_string(config).unwrap_or_default();
    text.push('|');
    text.push_str(&program_hash());
    for p in inputs {
        text.push_str(&format!("|{}={:016x}", p.display(), hash_file(p)?));
    }
    Ok(format!("{:016x}", hash_bytes(text.as_bytes())))
}

/// Whether `dir` holds a complete run with this run hash whose recorded outputs are all there
/// with their recorded sizes and contents, and nothing else (an edited, truncated, replaced or
/// extra output is not up to date).
pub fn is_up_to_date(dir: &Path, run_hash: &str) -> bool {
    let Ok(text) = read_small(&dir.join("manifest.json"), 16 << 20) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    v.get("run_hash").and_then(|h| h.as_str()) == Some(run_hash)
        && output_changes(dir, &v).is_empty()
}

use super::ownership::NOT_OUTPUTS;

/// How the folder `dir` differs from what its `manifest` records, one entry per file (empty
/// when every recorded output is there with its recorded size and content hash and no other
/// file is): the file's name and a phrase, e.g. ("table1.parquet", "table1.parquet was edited
/// after the run").
pub fn output_changes(dir: &Path, manifest: &Value) -> Vec<(String, String)> {
    let (Some(sizes), Some(hashes)) = (
        manifest.get("output_bytes").and_then(|o| o.as_object()),
        manifest.get("output_hashes").and_then(|o| o.as_object()),
    ) else {
        return vec![(
            "manifest.json".into(),
            "manifest.json records no output sizes and hashes".into(),
        )];
    };
    let mut changes = Vec::new();
    if sizes.len() != hashes.len() {
        changes.push((
            "manifest.json".into(),
            "manifest.json records sizes and hashes of different files".into(),
        ));
    }
    for (f, b) in sizes {
        let shown = super::config::clip(f, 80);
        if f.contains('/') || f.contains('\\') || f == ".." || NOT_OUTPUTS.contains(&f.as_str()) {
            changes.push((
                "manifest.json".into(),
                format!("manifest.json lists {shown:?}, which cannot be an output"),
            ));
            continue;
        }
        let p = dir.join(f);
        let phrase = match std::fs::symlink_metadata(&p) {
            Err(_) => format!("{shown} is missing"),
            Ok(m) if !m.is_file() => format!("{shown} is not a regular file"),
            Ok(m) if Some(m.len()) != b.as_u64() => format!(
                "{shown} is {} bytes, the run wrote {}",
                m.len(),
                b.as_u64().map_or("another size".into(), |b| b.to_string())
            ),
            Ok(_) => {
                let h = hash_file(&p).ok().map(|h| format!("{h:016x}"));
                if hashes.get(f).and_then(|h| h.as_str()) == h.as_deref() {
                    continue;
                }
                format!("{shown} was edited after the run")
            }
        };
        changes.push((f.clone(), phrase));
    }
    for f in list_files(dir).unwrap_or_default() {
        let transient = f.starts_with('.') || f == "checks.tmp.parquet";
        if !transient && !NOT_OUTPUTS.contains(&f.as_str()) && !sizes.contains_key(&f) {
            let phrase = format!(
                "{} is not an output of the run",
                super::config::clip(&f, 80)
            );
            changes.push((f, phrase));
        }
    }
    changes
}

/// Records `outputs` (name, bytes, content hash) in `manifest`, adding names it lacks;
/// whether anything changed.
pub fn record_outputs(manifest: &mut Value, outputs: &[(String, u64, String)]) -> bool {
    let before = manifest.clone();
    if let Some(m) = manifest.as_object_mut() {
        for (name, bytes, hash) in outputs {
            if let Some(list) = m.get_mut("outputs").and_then(|o| o.as_array_mut()) {
                if !list.iter().any(|x| x.as_str() == Some(name)) {
                    list.push(json!(name));
                }
            }
            for (key, v) in [
                ("output_bytes", json!(bytes)),
                ("output_hashes", json!(hash)),
            ] {
                if let Some(o) = m.get_mut(key).and_then(|o| o.as_object_mut()) {
                    o.insert(name.clone(), v);
                }
            }
        }
    }
    *manifest != before
}

/// Up to three of `changes`' phrases, and how many more, for a one-line message.
pub fn describe_changes(changes: &[(String, String)]) -> String {
    let mut s = changes
        .iter()
        .take(3)
        .map(|(_, p)| p.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    if changes.len() > 3 {
        s.push_str(&format!("; and {} more", changes.len() - 3));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_model_is_the_first_model_name_with_spaces_collapsed() {
        let info = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\n\
                    model name\t: Intel(R) Xeon(R)  CPU @ 2.00GHz\nprocessor\t: 1\n\
                    model name\t: Other\n";
        assert_eq!(
            super::cpu_model_of(info).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.00GHz")
        );
        assert_eq!(super::cpu_model_of("processor\t: 0\nmodel\t: 85\n"), None);
        assert_eq!(super::cpu_model_of("model name\t:   \n"), None);
    }
}
