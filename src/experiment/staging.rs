//! Writing results safely: a staging folder moved into place when complete, the manifest, and
//! the "already up to date" decision (config + program identity + input contents + outputs).

use anyhow::{Context, Result};
use serde_json::{json, Map, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// Writes `bytes` to `path` via a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    let tmp = tmp_path(path);
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} into place", path.display()))
}

/// Reads a regular file of at most `limit` bytes as text (never a device or a huge file).
pub fn read_small(path: &Path, limit: u64) -> Result<String> {
    crate::data::read_text_limited(path, limit)
        .with_context(|| format!("cannot read {}", path.display()))
}

/// A folder where a run writes its outputs before they are moved into the results folder.
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
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
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

    /// Names of the staged files, sorted.
    pub fn files(&self) -> Result<Vec<String>> {
        list_files(&self.dir)
    }

    /// Moves every staged file into the results folder (one rename each, the manifest last)
    /// and removes the staging folder. A manifest already there is removed first, so a crash
    /// half-way leaves a folder without a manifest, which is never taken as complete.
    pub fn commit(mut self) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.final_dir)
            .with_context(|| format!("cannot create {}", self.final_dir.display()))?;
        let old_manifest = self.final_dir.join("manifest.json");
        let mut files = self.files()?;
        // Outputs of the previous run that this run does not write (and its checks, which
        // belong to the old numbers) go, so the folder never mixes two runs.
        let mut stale = old_outputs(&old_manifest);
        stale.push("checks.parquet".into());
        if old_manifest.exists() {
            std::fs::remove_file(&old_manifest)
                .with_context(|| format!("cannot replace {}", old_manifest.display()))?;
        }
        for f in stale.iter().filter(|f| !files.contains(f)) {
            let p = self.final_dir.join(f);
            if p.is_file() {
                std::fs::remove_file(&p)
                    .with_context(|| format!("cannot remove the stale {}", p.display()))?;
            }
        }
        files.sort_by_key(|f| f == "manifest.json");
        for f in files {
            std::fs::rename(self.dir.join(&f), self.final_dir.join(&f))
                .with_context(|| format!("cannot move {f} into {}", self.final_dir.display()))?;
        }
        std::fs::remove_dir_all(&self.dir).ok();
        self.committed = true;
        Ok(self.final_dir.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            std::fs::remove_dir_all(&self.dir).ok();
        }
    }
}

/// Takes the advisory lock of the results folder `dir` (a file `.<name>.lock` beside it), or
/// fails at once, naming the folder, when another run holds it. Dropping the file releases it.
pub fn lock_results(dir: &Path) -> Result<std::fs::File> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    no_file_in_the_way(dir)?;
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let path = parent.join(format!(".{name}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open the lock file {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another run is writing {} (it holds {}); wait for it to finish",
            dir.display(),
            path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// `Err` naming the file when `dir` or one of its ancestors exists but is not a folder (e.g. an
/// `output_dir` that names a file), so that no results folder can be made there.
fn no_file_in_the_way(dir: &Path) -> Result<()> {
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

/// Removes staging folders `.{name}.staging-PID` in `parent` left by processes that are gone
/// (killed runs); on systems without `/proc` nothing is removed.
fn remove_dead_staging(parent: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = format!(".{name}.staging-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = file
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            std::fs::remove_dir_all(e.path()).ok();
        }
    }
}

/// The outputs a manifest lists (plain file names only), or none.
fn old_outputs(manifest: &Path) -> Vec<String> {
    read_small(manifest, 16 << 20)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| {
            v.get("outputs")?.as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str())
                    .filter(|f| !f.contains('/') && !f.contains('\\') && *f != "..")
                    .map(String::from)
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// Regular files directly in `dir`, sorted by name.
pub fn list_files(dir: &Path) -> Result<Vec<String>> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.file_name().to_string_lossy().into_owned())
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

/// Hash of a file's contents, streamed (no whole-file read).
pub fn hash_file(path: &Path) -> Result<u64> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut h: u64 = 0;
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        h = (h.rotate_left(17) ^ hash_bytes(&buf[..n])).wrapping_mul(0x0000_0100_0000_01b3);
    }
    Ok(h)
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
/// with their recorded sizes and contents (an edited, truncated or replaced output is not up to
/// date).
pub fn is_up_to_date(dir: &Path, run_hash: &str) -> bool {
    let Ok(text) = read_small(&dir.join("manifest.json"), 16 << 20) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    if v.get("run_hash").and_then(|h| h.as_str()) != Some(run_hash) {
        return false;
    }
    let (Some(sizes), Some(hashes)) = (
        v.get("output_bytes").and_then(|o| o.as_object()),
        v.get("output_hashes").and_then(|o| o.as_object()),
    ) else {
        return false;
    };
    sizes.len() == hashes.len()
        && sizes.iter().all(|(f, b)| {
            let p = dir.join(f);
            std::fs::metadata(&p)
                .map(|m| m.is_file() && Some(m.len()) == b.as_u64())
                .unwrap_or(false)
                && hashes.get(f).and_then(|h| h.as_str())
                    == hash_file(&p).ok().map(|h| format!("{h:016x}")).as_deref()
        })
}
