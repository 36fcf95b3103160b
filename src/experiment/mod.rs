//! The experiment layer: config -> jobs -> tables (Parquet) -> charts (PNG + SVG).
//!
//! It is the only part of the crate that touches the file system. A run writes every output into
//! a staging folder next to the results folder and moves the files into place only when all of
//! them are written, so a failed run leaves no partial results. A re-run of an unchanged config
//! whose outputs are all present is skipped (pass `force` to recompute).

pub mod chart;
pub mod config;
pub mod cost_functions;
pub mod dasgupta;
pub mod flat;
pub mod jets;
pub mod pam50;
pub mod posterior;
pub mod scaling;
pub mod sparse;
pub mod table;

use anyhow::{Context, Result};
use config::Config;
use serde_json::{json, Map, Value};
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

/// Writes `text` to `path` via a temporary file and a rename.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = tmp_path(path);
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} into place", path.display()))
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
        let mut v: Vec<String> = std::fs::read_dir(&self.dir)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        Ok(v)
    }

    /// Moves every staged file into the results folder (one rename each) and removes the
    /// staging folder.
    pub fn commit(mut self) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.final_dir)
            .with_context(|| format!("cannot create {}", self.final_dir.display()))?;
        // The manifest goes last: its presence marks a complete run.
        let mut files = self.files()?;
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

/// `manifest.json`: what ran, with which config, version, revision, threads and timings.
pub struct Manifest {
    fields: Map<String, Value>,
    timings: Map<String, Value>,
}

impl Manifest {
    /// A manifest for `cfg` run from `config_path`.
    pub fn new(cfg: &Config, config_path: &Path, threads: usize) -> Manifest {
        let mut fields = Map::new();
        fields.insert(
            "config_file".into(),
            json!(config_path.display().to_string()),
        );
        fields.insert(
            "config".into(),
            serde_json::to_value(cfg).unwrap_or(Value::Null),
        );
        fields.insert("config_hash".into(), json!(config_hash(cfg)));
        fields.insert("seed".into(), json!(cfg.experiment.seed));
        fields.insert("crate_version".into(), json!(env!("CARGO_PKG_VERSION")));
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

    /// Records any other field.
    pub fn set(&mut self, key: &str, v: impl serde::Serialize) {
        self.fields
            .insert(key.into(), serde_json::to_value(v).unwrap_or(Value::Null));
    }

    /// The manifest as pretty JSON, listing `outputs`.
    pub fn to_json(&self, outputs: &[String]) -> String {
        let mut f = self.fields.clone();
        f.insert("finished_unix_seconds".into(), json!(unix_now()));
        f.insert(
            "timings_seconds".into(),
            Value::Object(self.timings.clone()),
        );
        f.insert("outputs".into(), json!(outputs));
        serde_json::to_string_pretty(&Value::Object(f)).unwrap_or_default()
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The git revision of the working directory (with `-dirty` when tracked files have uncommitted
/// changes), or `"unknown"`.
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
        // Uncommitted changes to tracked files mean the commit alone does not reproduce the run.
        Some(rev) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("{rev}-dirty"),
            _ => rev,
        },
        None => "unknown".into(),
    }
}

/// A stable hash (FNV-1a, hex) of the parsed config and the crate version: equal hashes mean a
/// re-run would compute the same numbers.
pub fn config_hash(cfg: &Config) -> String {
    let text = format!(
        "{}|{}",
        serde_json::to_string(cfg).unwrap_or_default(),
        env!("CARGO_PKG_VERSION")
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress_bar(len: u64, unit: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "{{bar:40}} {{pos}}/{{len}} {unit} [{{elapsed_precise}} < {{eta_precise}}]"
    )) {
        pb.set_style(style);
    }
    pb
}

/// How a call to [`run_config`] ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Results were computed and written to this folder.
    Written(PathBuf),
    /// The folder already held complete results for the same config.
    UpToDate(PathBuf),
}

/// Where a config's results go.
pub fn results_dir(cfg: &Config) -> PathBuf {
    cfg.experiment.output_dir.join(&cfg.experiment.name)
}

fn is_up_to_date(cfg: &Config, dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("manifest.json")) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    if v.get("config_hash").and_then(|h| h.as_str()) != Some(config_hash(cfg).as_str()) {
        return false;
    }
    v.get("outputs")
        .and_then(|o| o.as_array())
        .map(|o| {
            o.iter()
                .all(|f| f.as_str().is_some_and(|f| dir.join(f).exists()))
        })
        .unwrap_or(false)
}

/// Runs the experiment described by the config file at `path`.
pub fn run_config(path: &Path, force: bool) -> Result<Outcome> {
    let cfg = Config::load(path)?;
    let dir = results_dir(&cfg);
    if !force && is_up_to_date(&cfg, &dir) {
        return Ok(Outcome::UpToDate(dir));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.experiment.threads)
        .build()
        .context("cannot start worker threads")?;
    let threads = pool.current_num_threads();
    pool.install(|| {
        let staging = Staging::new(&dir)?;
        let mut manifest = Manifest::new(&cfg, path, threads);
        let t0 = std::time::Instant::now();
        match cfg.experiment.kind {
            config::ExperimentKind::Jets => {
                jets::run(&cfg, &staging, &mut manifest)?;
            }
            config::ExperimentKind::PosteriorSampling => {
                posterior::run(&cfg, &staging, &mut manifest)?;
            }
            config::ExperimentKind::Scaling => scaling::run(&cfg, &staging, &mut manifest)?,
            config::ExperimentKind::Sparse => sparse::run(&cfg, &staging, &mut manifest)?,
            config::ExperimentKind::Dasgupta => dasgupta::run(&cfg, &staging, &mut manifest)?,
            config::ExperimentKind::Pam50 => pam50::run(&cfg, &staging, &mut manifest)?,
            config::ExperimentKind::CostFunctions => {
                cost_functions::run(&cfg, &staging, &mut manifest)?
            }
            config::ExperimentKind::FlatPam50 => flat::run(&cfg, &staging, &mut manifest)?,
        }
        manifest.timing("total", t0.elapsed().as_secs_f64());
        let mut outputs = staging.files()?;
        outputs.push("manifest.json".into());
        outputs.sort();
        staging.write_string("manifest.json", &manifest.to_json(&outputs))?;
        Ok(Outcome::Written(staging.commit()?))
    })
}
