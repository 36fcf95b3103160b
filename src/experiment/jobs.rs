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

/// The `I/N` of `run --shard I/N`: this process computes part `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which part, `0 <= index < count`.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s:?} must be I/N with 0 <= I < N, e.g. 0/3");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count || count > 100_000 {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
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

/// An append-only journal file: records framed as `len (u32 LE) | checksum (u64 LE) | bytes`.
struct Journal {
    file: File,
    path: PathBuf,
}

fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 12);
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&hash_bytes(bytes).to_le_bytes());
    out.extend_from_slice(bytes);
    out
}

/// The intact frames of `bytes` and the length they span (a torn or corrupt tail is left out).
fn frames(bytes: &[u8]) -> (Vec<&[u8]>, usize) {
    let mut out = Vec::new();
    let mut at = 0;
    while bytes.len() - at >= 12 {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4])) as usize;
        let sum = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap_or([0; 8]));
        let end = at + 12 + len;
        if len > MAX_RECORD || end > bytes.len() || hash_bytes(&bytes[at + 12..end]) != sum {
            break;
        }
        out.push(&bytes[at + 12..end]);
        at = end;
    }
    (out, at)
}

/// Reads the journal at `path`: its header's run hash and its intact records, with the byte
/// length they span.
fn read_journal(path: &Path) -> Result<(Option<String>, Vec<Record>, usize)> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .with_context(|| format!("cannot read the journal {}", path.display()))?;
    let (fs, good) = frames(&bytes);
    let Some((first, rest)) = fs.split_first() else {
        return Ok((None, Vec::new(), 0));
    };
    let header: Header = match rmp_serde::from_slice(first) {
        Ok(h) => h,
        Err(_) => return Ok((None, Vec::new(), 0)),
    };
    if header.journal != JOURNAL_TAG {
        return Ok((None, Vec::new(), 0));
    }
    let mut records = Vec::with_capacity(rest.len());
    let mut span = 12 + first.len();
    for f in rest {
        match rmp_serde::from_slice::<Record>(f) {
            Ok(r) => records.push(r),
            Err(_) => break,
        }
        span += 12 + f.len();
    }
    debug_assert!(span <= good);
    Ok((Some(header.run_hash), records, span))
}

impl Journal {
    /// Opens (or starts) the journal at `path` for the run `run_hash`; returns it with the
    /// records an earlier process of the same run left. A journal of another run is emptied.
    fn open(path: &Path, run_hash: &str) -> Result<(Journal, Vec<Record>)> {
        let (hash, records, span) = if path.is_file() {
            read_journal(path)?
        } else {
            (None, Vec::new(), 0)
        };
        let reuse = hash.as_deref() == Some(run_hash);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .with_context(|| format!("cannot open the journal {}", path.display()))?;
        // Keep the intact records of the same run (dropping a torn tail), else start afresh.
        file.set_len(if reuse { span as u64 } else { 0 })?;
        let mut journal = Journal {
            file,
            path: path.to_path_buf(),
        };
        journal.file.seek(SeekFrom::End(0))?;
        if !reuse {
            journal.write_frame(&rmp_serde::to_vec_named(&Header {
                journal: JOURNAL_TAG.into(),
                run_hash: run_hash.into(),
            })?)?;
        }
        let kept = if reuse { records } else { Vec::new() };
        Ok((journal, kept))
    }

    fn write_frame(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(&frame(bytes))
            .with_context(|| format!("cannot append to the journal {}", self.path.display()))
    }
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

    /// The journal file, if any.
    pub fn journal_path(&self) -> Option<PathBuf> {
        self.journal
            .as_ref()
            .map(|j| j.lock().unwrap_or_else(|e| e.into_inner()).path.clone())
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
        let text = super::staging::read_small(&p, 1 << 20).map_err(|_| {
            anyhow!(
                "{} is not a finished shard folder (no shard.json; run the config with --shard I/N first)",
                dir.display()
            )
        })?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid (re-run that shard)", p.display()))
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
