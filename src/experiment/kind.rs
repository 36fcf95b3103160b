//! The one trait every experiment kind implements, and its object-safe twin the registry holds.
//!
//! A kind is a unit struct in its own folder (`src/experiment/<kind>/`) implementing
//! [`Experiment`]: its config type (the TOML sections other than `[experiment]`, unknown keys
//! rejected), the checks on it, its run (data → methods → Parquet tables), its figures (drawn
//! from the tables alone, through [`Results`]), the named numbers it measures in those tables,
//! and its expected numbers (`expected.toml` beside it). Registering it is one line in
//! `src/experiment/mod.rs`.

use super::check::Measure;
use super::config::ExperimentSection;
use super::jobs::Jobs;
use super::staging::{Manifest, Staging};
use super::table::read_parquet;
use anyhow::{anyhow, Context, Result};
use polars::prelude::DataFrame;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a kind's `run` gets: the common settings, where to write, and the manifest to annotate.
pub struct RunContext<'a> {
    /// The `[experiment]` section (name, seed, threads, output folder).
    pub experiment: &'a ExperimentSection,
    /// Where outputs go while the run is in progress.
    pub staging: &'a Staging,
    /// The run's manifest: add timings and facts the figures may need.
    pub manifest: &'a mut Manifest,
    /// The scheduler for the run's jobs: journalled (a killed run resumes), shardable.
    pub jobs: &'a Jobs,
}

impl RunContext<'_> {
    /// Where to write output `name` (e.g. `"table1.parquet"`).
    pub fn path(&self, name: &str) -> PathBuf {
        self.staging.path(name)
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.experiment.seed
    }
}

/// A finished (or just-written) run, as figures and checks see it: its folder, its manifest,
/// and its tables. Nothing else: figures drawn from a `Results` can be redrawn at any time.
pub struct Results {
    dir: PathBuf,
    manifest: Value,
}

impl Results {
    /// The results folder `dir`, with its `manifest.json`.
    pub fn open(dir: &Path) -> Result<Results> {
        let path = dir.join("manifest.json");
        let text = super::staging::read_small(&path, 16 << 20).with_context(|| {
            format!(
                "{} is not a complete results folder (no readable manifest.json; run the config first)",
                dir.display()
            )
        })?;
        let manifest: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON (re-run the config)", path.display()))?;
        Ok(Results {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    /// A results view of a folder whose manifest is still in memory (during `run`).
    pub fn in_memory(dir: &Path, manifest: Value) -> Results {
        Results {
            dir: dir.to_path_buf(),
            manifest,
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest (config, seed, threads, facts the run recorded).
    pub fn manifest(&self) -> &Value {
        &self.manifest
    }

    /// A fact the run recorded in the manifest with [`Manifest::set`].
    pub fn fact<T: DeserializeOwned>(&self, key: &str) -> Result<T> {
        let v = self
            .manifest
            .get(key)
            .ok_or_else(|| anyhow!("manifest.json of {} has no {key:?}", self.dir.display()))?;
        serde_json::from_value(v.clone())
            .with_context(|| format!("manifest.json of {}: {key:?}", self.dir.display()))
    }

    /// The `[experiment]` section the run used.
    pub fn experiment(&self) -> Result<ExperimentSection> {
        let v = self
            .manifest
            .get("config")
            .and_then(|c| c.get("experiment"))
            .ok_or_else(|| anyhow!("manifest.json of {} has no config", self.dir.display()))?;
        serde_json::from_value(v.clone())
            .with_context(|| format!("manifest.json of {}: config.experiment", self.dir.display()))
    }

    /// The kind's own config the run used (as [`Experiment::Config`]).
    pub fn config<T: DeserializeOwned>(&self) -> Result<T> {
        let v = self
            .manifest
            .get("config")
            .ok_or_else(|| anyhow!("manifest.json of {} has no config", self.dir.display()))?;
        super::config::kind_sections(v)
            .with_context(|| format!("manifest.json of {}: config", self.dir.display()))
    }

    /// Table `name` (`"table1"` reads `table1.parquet`).
    pub fn table(&self, name: &str) -> Result<DataFrame> {
        let path = self.dir.join(format!("{name}.parquet"));
        if !path.is_file() {
            anyhow::bail!(
                "{} has no {name}.parquet (re-run the config with --force)",
                self.dir.display()
            );
        }
        read_parquet(&path)
    }

    /// Text output `name`, read whole.
    pub fn text(&self, name: &str) -> Result<String> {
        super::staging::read_small(&self.dir.join(name), 64 << 20)
    }
}

/// A figure's caption on the report page and its alternative text (what the image shows, for a
/// reader who cannot see it). Each kind writes them beside the code that draws its figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caption {
    /// The caption under the figure: what it reproduces and how to read it.
    pub text: String,
    /// The image's alternative text.
    pub alt: String,
}

impl Caption {
    /// A caption and an alternative text.
    pub fn new(text: impl Into<String>, alt: impl Into<String>) -> Caption {
        Caption {
            text: text.into(),
            alt: alt.into(),
        }
    }
}

/// An experiment kind. Implement it on a unit struct in `src/experiment/<name>/` and add one
/// line to the registry in `src/experiment/mod.rs`.
pub trait Experiment: Send + Sync + 'static {
    /// The kind's config: every TOML section but `[experiment]` (use
    /// `#[serde(deny_unknown_fields)]` so that misspelt keys and foreign sections are errors).
    type Config: Serialize + DeserializeOwned + Send + Sync;

    /// `experiment.kind`, the folder name and the kind's own section name.
    fn name(&self) -> &'static str;

    /// One line: what the kind reproduces.
    fn about(&self) -> &'static str;

    /// Makes relative paths in `cfg` relative to `base` (the config file's folder).
    fn resolve_paths(&self, _cfg: &mut Self::Config, _base: &Path) {}

    /// Checks values beyond their types; the error is one line naming the key and the fix.
    fn validate(&self, _cfg: &Self::Config) -> Result<(), String> {
        Ok(())
    }

    /// Files the results depend on (their contents go into the "up to date" decision).
    fn inputs(&self, _cfg: &Self::Config) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Data → methods → tables: writes the kind's Parquet tables (and any data files) with
    /// `ctx.path(..)`. No figures: those are drawn by [`Experiment::figures`] from the tables.
    /// Work handed to `ctx.jobs` is journalled, resumable and shardable.
    fn run(&self, cfg: &Self::Config, ctx: &mut RunContext) -> Result<()>;

    /// Whether `run` hands its work to `ctx.jobs` as its first stage, so that `run --shard I/N`
    /// can divide it (see [`super::jobs`]).
    fn shardable(&self) -> bool {
        false
    }

    /// Draws every figure into `out` from `results`' tables and manifest alone.
    fn figures(&self, results: &Results, out: &Path) -> Result<()>;

    /// The caption and alternative text of the figure `<stem>.png` that [`Experiment::figures`]
    /// draws (`None` for a stem it does not draw).
    fn caption(&self, _stem: &str) -> Option<Caption> {
        None
    }

    /// The named numbers `check` compares with the expected ones, computed from the tables.
    fn measures(&self, results: &Results) -> Result<Vec<Measure>>;

    /// The expected numbers, `include_str!("expected.toml")` (see [`super::check`]).
    fn expected(&self) -> &'static str;

    /// Properties that hold for any data (an exact MAP at least every method's value, log Z at
    /// least the MAP, probabilities in [0, 1], ...), each as a count of violations that must
    /// be 0: `check` runs them on every run, the user's own data included.
    fn properties(&self, _results: &Results) -> Result<Vec<Measure>> {
        Ok(Vec::new())
    }
}

/// The object-safe face of an [`Experiment`] (blanket-implemented), which the registry holds.
pub trait Kind: Send + Sync {
    /// See [`Experiment::name`].
    fn name(&self) -> &'static str;
    /// See [`Experiment::about`].
    fn about(&self) -> &'static str;
    /// Parses the kind's sections, resolves relative paths against `base` and validates them;
    /// returns the config in normal form (defaults filled in) as JSON.
    fn load(&self, sections: toml::Table, base: &Path) -> Result<Value, String>;
    /// The input files of a loaded config.
    fn inputs(&self, cfg: &Value) -> Result<Vec<PathBuf>>;
    /// Runs a loaded config.
    fn run(&self, cfg: &Value, ctx: &mut RunContext) -> Result<()>;
    /// See [`Experiment::shardable`].
    fn shardable(&self) -> bool;
    /// See [`Experiment::figures`].
    fn figures(&self, results: &Results, out: &Path) -> Result<()>;
    /// See [`Experiment::caption`].
    fn caption(&self, stem: &str) -> Option<Caption>;
    /// See [`Experiment::measures`].
    fn measures(&self, results: &Results) -> Result<Vec<Measure>>;
    /// See [`Experiment::expected`].
    fn expected(&self) -> &'static str;
    /// See [`Experiment::properties`].
    fn properties(&self, results: &Results) -> Result<Vec<Measure>>;
}

fn typed<E: Experiment>(cfg: &Value) -> Result<E::Config> {
    super::config::kind_sections(cfg).context("config")
}

impl<E: Experiment> Kind for E {
    fn name(&self) -> &'static str {
        Experiment::name(self)
    }

    fn about(&self) -> &'static str {
        Experiment::about(self)
    }

    fn load(&self, sections: toml::Table, base: &Path) -> Result<Value, String> {
        let name = Experiment::name(self);
        let mut cfg: E::Config = E::Config::deserialize(toml::Value::Table(sections))
            .map_err(|e| section_error(name, &e.to_string()))?;
        self.resolve_paths(&mut cfg, base);
        self.validate(&cfg)?;
        serde_json::to_value(&cfg).map_err(|e| e.to_string())
    }

    fn inputs(&self, cfg: &Value) -> Result<Vec<PathBuf>> {
        Ok(Experiment::inputs(self, &typed::<E>(cfg)?))
    }

    fn run(&self, cfg: &Value, ctx: &mut RunContext) -> Result<()> {
        Experiment::run(self, &typed::<E>(cfg)?, ctx)
    }

    fn shardable(&self) -> bool {
        Experiment::shardable(self)
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        Experiment::figures(self, results, out)
    }

    fn caption(&self, stem: &str) -> Option<Caption> {
        Experiment::caption(self, stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        Experiment::measures(self, results)
    }

    fn expected(&self) -> &'static str {
        Experiment::expected(self)
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        Experiment::properties(self, results)
    }
}

use serde::Deserialize as _;

/// serde's message about a kind's sections, in one line and in the config's own words.
fn section_error(kind: &str, msg: &str) -> String {
    let msg = super::config::one_line(msg);
    if let Some(rest) = msg.strip_prefix("missing field `") {
        if let Some(field) = rest.split('`').next() {
            // The kind's own section is named after it; `jets` is the jet-source section.
            if field == kind || field == "jets" {
                return format!(
                    "experiment.kind = {kind:?} needs a [{field}] section; see configs/ for an example"
                );
            }
            return format!(
                "experiment.kind = {kind:?}: the key {field:?} is missing from its section; add it (see configs/ for an example)"
            );
        }
    }
    if msg.starts_with("unknown field `") {
        return format!("{msg} (for experiment.kind = {kind:?}; remove or correct it)");
    }
    msg
}
