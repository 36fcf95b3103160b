//! Jobs: the units of an experiment's work, journalled as they finish, split into shards, and
//! merged.
//!
//! A kind hands its work to [`Jobs::run`] as a *stage*: a name and a list of job keys, unique
//! within the stage, with a function that computes job `i`. Each result is appended to a
//! **journal** the moment it is finished (MessagePack, so every `f64` keeps its bits, `-inf` and
//! NaN included), with its wall time and, when jobs run one at a time, its peak heap bytes.
//!
//! - **Resume.** A killed run leaves its journal beside the results folder
//!   (`.<name>.journal`); the next run of the same run hash (config, program, inputs) reads it
//!   and computes only the jobs it lacks. A journal of another run hash is discarded, so stale
//!   results are never served. A record torn by the kill fails its checksum and is dropped.
//! - **Shards.** `run --shard I/N` computes job `j` of the kind's first stage when
//!   `j mod N = I`, journals it, and stops ([`ShardStop`]); the shard folder
//!   `<name>.shard-I-of-N/` keeps the journal and `shard.json`. `merge` preloads every shard's
//!   journal and runs the kind as a single run would: every job of that stage is found, later
//!   stages (if any) are computed there, and the tables, figures and checks are the single run's,
//!   bit for bit (the recorded wall times and memory are the shards' own).
//!
//! Results are assembled in key order whatever the shard or thread that computed them, so a
//! kind's tables do not depend on how its jobs were scheduled.

use crate::experiment::safe_fs::{open_own, open_regular, Own};
use crate::experiment::staging::hash_bytes;
use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Largest journal record (one job's result): 256 MiB.
const MAX_RECORD: usize = 256 << 20;

/// The most shards a run may be divided into.
pub const MAX_SHARDS: usize = 100_000;

/// The `I/N` of `run --shard I/N`: this process computes part `index` of `count`. Read from a
/// `shard.json` it is checked as `--shard` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ShardFields")]
pub struct Shard {
    /// Which part, `0 <= index < count`.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

#[derive(Deserialize)]
struct ShardFields {
    index: usize,
    count: usize,
}

impl TryFrom<ShardFields> for Shard {
    type Error = String;

    fn try_from(f: ShardFields) -> Result<Shard, String> {
        Shard::new(f.index, f.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "--shard {:?} must be I/N with 0 <= I < N <= {MAX_SHARDS}, e.g. 0/3",
                crate::data::clip(s, 40)
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        Shard::new(index, count).map_err(|_| bad())
    }
}

impl Shard {
    /// Part `index` of `count`, when `0 <= index < count <= MAX_SHARDS`.
    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(format!(
                "shard {index}/{count} is not I/N with 0 <= I < N <= {MAX_SHARDS}"
            ));
        }
        Ok(Shard { index, count })
    }

    /// The shard folder of the results folder `dir`: `<dir>.shard-I-of-N`.
    pub fn folder(&self, dir: &Path) -> PathBuf {
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        dir.with_file_name(format!("{name}.shard-{}-of-{}", self.index, self.count))
    }

    /// Whether job `j` of a sharded stage is this shard's.
    pub fn owns(&self, j: usize) -> bool {
        j % self.count == self.index
    }
}

/// What a shard run returns from [`Jobs::run`] once its part of the first stage is journalled:
/// the run stops there, and the harness keeps the journal as the shard's result.
#[derive(Debug, thiserror::Error)]
#[error("this shard's jobs are done")]
pub struct ShardStop;

/// How a stage's jobs are scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// On the worker threads, several at once (no per-job memory figure).
    Parallel,
    /// One after another, each free to use every worker thread: wall times are not shared with
    /// other jobs, and the peak heap of each job is measured (when the program counts heap
    /// bytes, see [`crate::memory`]).
    OneAtATime,
}

/// A finished job: its result, its wall time and peak heap bytes, and whether it came from the
/// journal (computed by an earlier, killed run or by a shard).
#[derive(Clone, Debug)]
pub struct Done<T> {
    /// The job's result.
    pub value: T,
    /// Wall seconds when it was computed.
    pub seconds: f64,
    /// Peak heap bytes above the heap at its start ([`Mode::OneAtATime`] with heap counting).
    pub peak_bytes: Option<u64>,
    /// Read from a journal rather than computed by this process.
    pub reused: bool,
}

/// One journal record.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Record {
    stage: String,
    key: String,
    seconds: f64,
    peak_bytes: Option<u64>,
    /// The result, MessagePack-encoded.
    value: Vec<u8>,
}

/// The first record of a journal: which run it belongs to.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Header {
    journal: String,
    run_hash: String,
}

const JOURNAL_TAG: &str = "trellis-lab journal v1";

/// The largest journal read back: 1 GiB (a board run's journal is a few MiB).
pub const MAX_JOURNAL_BYTES: u64 = 1 << 30;

/// An append-only journal file: records framed as `len (u32 LE) | checksum (u64 LE) | bytes`.
/// The file is created only when the first job finishes, so a run that fails before (or a kind
/// without jobs) leaves none.
struct Journal {
    file: Option<File>,
    path: PathBuf,
    run_hash: String,
    /// Bytes in the file (kept below [`MAX_JOURNAL_BYTES`], so every journal can be read back).
    bytes: u64,
}

fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 12);
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&hash_bytes(bytes).to_le_bytes());
    out.extend_from_slice(bytes);
    out
}

/// Reads the intact frames of a journal of `len` bytes from `file`, one at a time (never the
/// whole file, never a frame longer than the file or [`MAX_RECORD`]): its header's run hash
/// and its records, with the byte length they span. A torn or corrupt tail ends the reading.
fn read_frames(file: &File, len: u64, path: &Path) -> Result<(Option<String>, Vec<Record>, u64)> {
    let what = || format!("cannot read the journal {}", path.display());
    if len > MAX_JOURNAL_BYTES {
        bail!(
            "the journal {} holds {len} bytes, above the {} MiB a journal may hold; delete it and run again (finished jobs are recomputed)",
            path.display(),
            MAX_JOURNAL_BYTES >> 20
        );
    }
    let mut r = std::io::BufReader::new(file);
    let (mut at, mut hash, mut records) = (0u64, None, Vec::new());
    while len - at >= 12 {
        let mut head = [0u8; 12];
        r.read_exact(&mut head).with_context(what)?;
        let n = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let sum = u64::from_le_bytes(head[4..12].try_into().unwrap_or([0; 8]));
        if n > MAX_RECORD as u64 || at + 12 + n > len {
            break;
        }
        let mut bytes = vec![0u8; n as usize];
        r.read_exact(&mut bytes).with_context(what)?;
        if hash_bytes(&bytes) != sum {
            break;
        }
        if hash.is_none() {
            match rmp_serde::from_slice::<Header>(&bytes) {
                Ok(h) if h.journal == JOURNAL_TAG => hash = Some(h.run_hash),
                _ => return Ok((None, Vec::new(), 0)),
            }
        } else {
            match rmp_serde::from_slice::<Record>(&bytes) {
                Ok(rec) => records.push(rec),
                Err(_) => break,
            }
        }
        at += 12 + n;
    }
    Ok((hash, records, at))
}

impl Journal {
    /// Opens the journal at `path` for the run `run_hash`, if there is one, and returns the
    /// records an earlier process of the same run left; a journal of another run is emptied.
    /// Only a regular file is read or written (a link, FIFO or device at the name is an error
    /// saying to move it away).
    fn open(path: &Path, run_hash: &str) -> Result<(Journal, Vec<Record>)> {
        let mut journal = Journal {
            file: None,
            path: path.to_path_buf(),
            run_hash: run_hash.into(),
            bytes: 0,
        };
        if std::fs::symlink_metadata(path).is_err() {
            return Ok((journal, Vec::new()));
        }
        let file = open_own(path, Own::Keep, "the run's job journal")?;
        let len = file
            .metadata()
            .with_context(|| format!("cannot inspect the journal {}", path.display()))?
            .len();
        let (hash, records, span) = read_frames(&file, len, path)?;
        if hash.is_none() && len > 0 {
            // Not a journal this program wrote (no header of one): never emptied or removed.
            anyhow::bail!(
                "{} is where this run keeps its job journal, but it is not a journal this program wrote; move it away (or change experiment.name)",
                path.display()
            );
        }
        if hash.as_deref() != Some(run_hash) {
            // Another run's (or no) journal: gone, and a new one starts with the first job.
            drop(file);
            std::fs::remove_file(path)
                .with_context(|| format!("cannot remove the old journal {}", path.display()))?;
            return Ok((journal, Vec::new()));
        }
        // Keep the intact records of the same run, dropping a torn tail.
        file.set_len(span)
            .with_context(|| format!("cannot write the journal {}", path.display()))?;
        journal.file = Some(file);
        journal.bytes = span;
        Ok((journal, records))
    }

    fn write_header(&mut self) -> Result<()> {
        let header = rmp_serde::to_vec_named(&Header {
            journal: JOURNAL_TAG.into(),
            run_hash: self.run_hash.clone(),
        })?;
        self.append(&header)
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        let path = &self.path;
        let framed = frame(bytes);
        if self.bytes + framed.len() as u64 > MAX_JOURNAL_BYTES {
            bail!(
                "the journal {} would grow past the {} MiB a journal may hold; give the experiment fewer or smaller jobs",
                path.display(),
                MAX_JOURNAL_BYTES >> 20
            );
        }
        let file = self.file.as_mut().ok_or_else(|| anyhow!("no journal"))?;
        file.seek(SeekFrom::End(0))
            .and_then(|_| file.write_all(&framed))
            .with_context(|| format!("cannot append to the journal {}", path.display()))?;
        self.bytes += framed.len() as u64;
        Ok(())
    }

    /// Creates the file with its header when no job has written it yet.
    fn ensure_file(&mut self) -> Result<()> {
        if self.file.is_none() {
            self.file = Some(open_own(
                &self.path,
                Own::Truncate,
                "the run's job journal",
            )?);
            self.bytes = 0;
            self.write_header()?;
        }
        Ok(())
    }

    fn write_frame(&mut self, bytes: &[u8]) -> Result<()> {
        self.ensure_file()?;
        self.append(bytes)
    }

    /// The journal file, once it exists.
    fn existing_path(&self) -> Option<&Path> {
        self.file.as_ref().map(|_| self.path.as_path())
    }
}

/// Reads a finished shard's journal (`journal.bin`; a regular file, bounded).
fn read_journal(path: &Path) -> Result<(Option<String>, Vec<Record>, u64)> {
    let file = open_regular(path, MAX_JOURNAL_BYTES, "a shard's journal")?;
    let len = file.metadata()?.len();
    read_frames(&file, len, path)
}

/// The records of a finished shard's journal (`journal.bin`), checked against `run_hash`.
fn shard_records(path: &Path, run_hash: &str) -> Result<Vec<Record>> {
    let (hash, records, _) = read_journal(path)?;
    match hash {
        Some(h) if h == run_hash => Ok(records),
        Some(h) => bail!(
            "{} belongs to run {h}, not {run_hash}; re-run that shard with this program and config",
            path.display()
        ),
        None => bail!(
            "{} is not a trellis-lab journal; re-run that shard",
            path.display()
        ),
    }
}

/// The scheduler a kind's `run` hands its work to (see the module documentation).
pub struct Jobs {
    journal: Option<Mutex<Journal>>,
    known: Mutex<HashMap<(String, String), Record>>,
    shard: Option<Shard>,
    stages: Mutex<HashSet<String>>,
    computed: AtomicUsize,
    reused: AtomicUsize,
}

impl Jobs {
    /// Jobs without a journal (nothing survives the process), computing everything.
    pub fn in_memory() -> Jobs {
        Jobs {
            journal: None,
            known: Mutex::new(HashMap::new()),
            shard: None,
            stages: Mutex::new(HashSet::new()),
            computed: AtomicUsize::new(0),
            reused: AtomicUsize::new(0),
        }
    }

    /// Jobs journalled to `journal_path` for the run `run_hash` (resuming what a killed run of
    /// the same hash left), computing only `shard`'s part of the first stage when given.
    pub fn journalled(journal_path: &Path, run_hash: &str, shard: Option<Shard>) -> Result<Jobs> {
        let (journal, records) = Journal::open(journal_path, run_hash)?;
        let mut jobs = Jobs::in_memory();
        jobs.journal = Some(Mutex::new(journal));
        jobs.shard = shard;
        jobs.add(records);
        Ok(jobs)
    }

    /// Adds the results of finished shards' journals (`journal.bin` files) for `run_hash`.
    pub fn preload_shards(&mut self, journals: &[PathBuf], run_hash: &str) -> Result<usize> {
        let mut n = 0;
        for p in journals {
            let r = shard_records(p, run_hash)?;
            n += r.len();
            self.add(r);
        }
        Ok(n)
    }

    fn add(&mut self, records: Vec<Record>) {
        let known = self.known.get_mut().unwrap_or_else(|e| e.into_inner());
        for r in records {
            known.insert((r.stage.clone(), r.key.clone()), r);
        }
    }

    /// The journal file, if one was written.
    pub fn journal_path(&self) -> Option<PathBuf> {
        self.journal.as_ref().and_then(|j| {
            j.lock()
                .unwrap_or_else(|e| e.into_inner())
                .existing_path()
                .map(Path::to_path_buf)
        })
    }

    /// The journal file, created (with its header alone) if no job has written it yet: a
    /// shard's result even when it owns no job.
    pub fn journal_file(&self) -> Result<PathBuf> {
        let j = self
            .journal
            .as_ref()
            .ok_or_else(|| anyhow!("these jobs keep no journal"))?;
        let mut j = j.lock().unwrap_or_else(|e| e.into_inner());
        j.ensure_file()?;
        Ok(j.path.clone())
    }

    /// Jobs this process computed.
    pub fn computed(&self) -> usize {
        self.computed.load(Ordering::Relaxed)
    }

    /// Jobs read from a journal instead.
    pub fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }

    /// The shard this process computes, if any.
    pub fn shard(&self) -> Option<Shard> {
        self.shard
    }

    /// Runs the stage `stage`: job `i` (key `keys[i]`, unique in the stage) is `f(i)`. Jobs
    /// found in a journal are not recomputed; each computed job is journalled when it
    /// finishes. Returns every job's result in key order. In a shard run, computes only this
    /// shard's jobs and returns `Err(`[`ShardStop`]`)`; a kind propagates it with `?`.
    ///
    /// A job's error ends the stage (jobs finished before it stay journalled).
    pub fn run<T, F>(&self, stage: &str, keys: &[String], mode: Mode, f: F) -> Result<Vec<Done<T>>>
    where
        T: Serialize + DeserializeOwned + Send,
        F: Fn(usize) -> Result<T> + Sync,
    {
        {
            let mut stages = self.stages.lock().unwrap_or_else(|e| e.into_inner());
            if !stages.insert(stage.to_string()) {
                bail!("job stage {stage:?} was run twice; give each stage its own name");
            }
        }
        let mut seen = HashSet::with_capacity(keys.len());
        if let Some(k) = keys.iter().find(|k| !seen.insert(k.as_str())) {
            bail!("job key {k:?} appears twice in stage {stage:?}; job keys must be unique");
        }
        let mut out: Vec<Option<Done<T>>> = Vec::with_capacity(keys.len());
        let mut todo = Vec::new();
        let mut reused = 0;
        {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            for (i, key) in keys.iter().enumerate() {
                match known.get(&(stage.to_string(), key.clone())) {
                    Some(r) => {
                        let value = rmp_serde::from_slice(&r.value).with_context(|| {
                            format!("the journalled result of job {key:?} ({stage}) does not decode; delete the journal and re-run")
                        })?;
                        out.push(Some(Done {
                            value,
                            seconds: r.seconds,
                            peak_bytes: r.peak_bytes,
                            reused: true,
                        }));
                        reused += 1;
                    }
                    None => {
                        out.push(None);
                        if self.shard.is_none_or(|s| s.owns(i)) {
                            todo.push(i);
                        }
                    }
                }
            }
        }
        self.reused.fetch_add(reused, Ordering::Relaxed);
        let one = |i: usize| -> Result<(usize, Done<T>)> {
            let t0 = Instant::now();
            let (value, peak_bytes) = match mode {
                Mode::Parallel => (f(i)?, None),
                Mode::OneAtATime => {
                    let (v, peak) = crate::memory::measure_peak(|| f(i));
                    (v?, peak)
                }
            };
            let seconds = t0.elapsed().as_secs_f64();
            self.record(stage, &keys[i], seconds, peak_bytes, &value)?;
            self.computed.fetch_add(1, Ordering::Relaxed);
            Ok((
                i,
                Done {
                    value,
                    seconds,
                    peak_bytes,
                    reused: false,
                },
            ))
        };
        let done: Vec<(usize, Done<T>)> = match mode {
            Mode::Parallel => todo.par_iter().map(|&i| one(i)).collect::<Result<_>>()?,
            Mode::OneAtATime => todo.iter().map(|&i| one(i)).collect::<Result<_>>()?,
        };
        if self.shard.is_some() {
            return Err(ShardStop.into());
        }
        for (i, d) in done {
            out[i] = Some(d);
        }
        out.into_iter()
            .enumerate()
            .map(|(i, d)| {
                d.ok_or_else(|| anyhow!("job {:?} of stage {stage:?} has no result", keys[i]))
            })
            .collect()
    }

    fn record<T: Serialize>(
        &self,
        stage: &str,
        key: &str,
        seconds: f64,
        peak_bytes: Option<u64>,
        value: &T,
    ) -> Result<()> {
        let Some(j) = &self.journal else {
            return Ok(());
        };
        let rec = Record {
            stage: stage.into(),
            key: key.into(),
            seconds,
            peak_bytes,
            value: rmp_serde::to_vec_named(value).context("cannot encode a job's result")?,
        };
        let bytes = rmp_serde::to_vec_named(&rec)?;
        if bytes.len() > MAX_RECORD {
            bail!("job {key:?} ({stage}) returned {} bytes, above the journal's {MAX_RECORD}-byte record limit; return less", bytes.len());
        }
        j.lock()
            .unwrap_or_else(|e| e.into_inner())
            .write_frame(&bytes)
    }
}

/// `shard.json` of a finished shard folder.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardInfo {
    /// The config file the shard ran (merge loads it again).
    pub config_file: PathBuf,
    /// The run hash (config, program, inputs): every shard of one merge must share it.
    pub run_hash: String,
    /// Which part.
    pub shard: Shard,
    /// Jobs the shard journalled.
    pub jobs: usize,
    /// Content hash of `journal.bin`.
    pub journal_hash: String,
}

impl ShardInfo {
    /// Reads `dir/shard.json`.
    pub fn read(dir: &Path) -> Result<ShardInfo> {
        let p = dir.join("shard.json");
        if std::fs::symlink_metadata(&p).is_err() {
            bail!(
                "{} is not a finished shard folder (no shard.json; run the config with --shard I/N first)",
                dir.display()
            );
        }
        let text = super::staging::read_small(&p, 1 << 20)?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid (re-run that shard)", p.display()))
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
