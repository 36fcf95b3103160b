//! The experiment layer: config → data → methods → tables (Parquet) → figures (PNG + SVG),
//! and `check` against expected numbers.
//!
//! It is the only part of the crate that touches the file system. Its shape:
//! - one folder per experiment **kind** (`jets/`, `sparse/`, …), each implementing
//!   [`kind::Experiment`]: its config sections, their checks, its run (tables only), its figures
//!   (drawn from the tables and the manifest alone, so `plot` can redraw them), the numbers it
//!   measures and its `expected.toml`. Kind name = folder = config section.
//! - the `registry!` list below: one line per kind ([`Registry`] adds kinds at run time).
//! - [`methods`]: every tree-building method behind one type; [`chart`]: the chart toolkit;
//!   [`table`]: Parquet in and out; [`check`]: expected numbers and verdicts; [`staging`]:
//!   atomic results folders, manifests and the "up to date" decision; [`stats`]: shared
//!   statistics.
//!
//! A run writes every output into a staging folder next to the results folder and moves the
//! files into place only when all are written, so a failed run leaves no partial results. A
//! re-run is skipped only when the config, the program (a hash of its executable), the input
//! files' contents and every recorded output are unchanged (`force` recomputes).

pub mod chart;
pub mod check;
pub mod config;
pub mod kind;
pub mod limits;
pub mod methods;
mod parquet_guard;
pub mod registry;
pub mod staging;
pub mod stats;
pub mod table;
#[cfg(test)]
pub(crate) mod test_support;

pub use kind::{Experiment, Kind, Results, RunContext};
pub use registry::Registry;

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Declares the built-in kinds: one line each, `module => UnitStruct`.
macro_rules! registry {
    ($($module:ident => $kind:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// The built-in experiment kinds, in the order `kinds` shows them.
        pub fn builtin_kinds() -> Vec<&'static dyn Kind> {
            vec![$(&$module::$kind as &'static dyn Kind),*]
        }
    };
}

registry! {
    jets => Jets,
    posterior_sampling => PosteriorSampling,
    scaling => Scaling,
    sparse => Sparse,
    dasgupta => Dasgupta,
    pam50 => Pam50,
    cost_functions => CostFunctions,
    flat_pam50 => FlatPam50,
    coalescent_synthetic => CoalescentSynthetic,
    coalescent_labelled => CoalescentLabelled,
    pydt => Pydt,
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
    /// The folder already held complete results of the same config, program and inputs.
    UpToDate(PathBuf),
}

/// Runs the experiment described by the config file at `path` (built-in kinds).
pub fn run_config(path: &Path, force: bool) -> Result<Outcome> {
    run_config_in(&Registry::builtin(), path, force)
}

/// Runs the experiment described by the config file at `path` with the kinds of `registry`.
pub fn run_config_in(registry: &Registry, path: &Path, force: bool) -> Result<Outcome> {
    let cfg = config::load(registry, path)?;
    let dir = cfg.results_dir();
    let inputs = cfg.kind.inputs(&cfg.value)?;
    for p in &inputs {
        if !p.is_file() {
            anyhow::bail!(
                "input file {} does not exist or is not a regular file (check the path in {})",
                p.display(),
                path.display()
            );
        }
    }
    // One run per results folder at a time (an advisory lock, released when the run ends).
    let _lock = staging::lock_results(&dir)?;
    let hash = staging::run_hash(&cfg.value, &inputs)?;
    if !force && staging::is_up_to_date(&dir, &hash) {
        return Ok(Outcome::UpToDate(dir));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.experiment.threads)
        .build()
        .context("cannot start worker threads")?;
    let threads = pool.current_num_threads();
    pool.install(|| {
        let staging = staging::Staging::new(&dir)?;
        let mut manifest = staging::Manifest::new(&cfg.value, path, &hash, threads);
        let t0 = std::time::Instant::now();
        let mut ctx = RunContext {
            experiment: &cfg.experiment,
            staging: &staging,
            manifest: &mut manifest,
        };
        cfg.kind.run(&cfg.value, &mut ctx)?;
        manifest.timing("run", t0.elapsed().as_secs_f64());
        // Figures are drawn from the tables just written, exactly as `plot` redraws them.
        let t1 = std::time::Instant::now();
        let results = Results::in_memory(staging.dir(), manifest.snapshot());
        cfg.kind.figures(&results, staging.dir())?;
        manifest.timing("figures", t1.elapsed().as_secs_f64());
        manifest.timing("total", t0.elapsed().as_secs_f64());
        // The manifest records every other output's size and content hash.
        let outputs = staging::describe_outputs(staging.dir())?;
        staging.write_string("manifest.json", &manifest.to_json(&outputs))?;
        Ok(Outcome::Written(staging.commit()?))
    })
}

/// The kind that wrote the results folder `results`.
pub fn kind_of(registry: &Registry, results: &Results) -> Result<&'static dyn Kind> {
    let name = results.experiment()?.kind;
    registry.get(&name).ok_or_else(|| {
        anyhow::anyhow!(
            "{} was written by kind {name:?}, which this program does not know (known: {})",
            results.dir().display(),
            registry.names().join(", ")
        )
    })
}

/// Redraws every figure of the finished run in `dir` from its tables and manifest alone;
/// returns the files written.
pub fn plot_results_in(registry: &Registry, dir: &Path) -> Result<Vec<PathBuf>> {
    let results = Results::open(dir)?;
    let kind = kind_of(registry, &results)?;
    // Draw into a scratch folder first, so a failure leaves the old figures in place.
    let scratch = staging::Staging::new(&dir.join("figures"))?;
    kind.figures(&results, scratch.dir())?;
    let mut written = Vec::new();
    for f in scratch.files()? {
        let to = dir.join(&f);
        std::fs::rename(scratch.path(&f), &to)
            .with_context(|| format!("cannot move {f} into {}", dir.display()))?;
        written.push(to);
    }
    Ok(written)
}

/// [`plot_results_in`] with the built-in kinds.
pub fn plot_results(dir: &Path) -> Result<Vec<PathBuf>> {
    plot_results_in(&Registry::builtin(), dir)
}

/// The named numbers of the finished run in `dir` as `expected.toml` blocks (an accepted run):
/// each with tolerance `rel · max(|value|, 1)` and the given source. Review them before adding
/// them to the kind's `expected.toml`.
pub fn accepted_run_toml(dir: &Path, rel: f64, source: &str) -> Result<String> {
    let results = Results::open(dir)?;
    let kind = kind_of(&Registry::builtin(), &results)?;
    let name = results.experiment()?.name;
    let mut out = String::new();
    for m in kind.measures(&results)? {
        if !m.value.is_finite() {
            continue;
        }
        out.push_str(&format!(
            "[[check]]\nconfig = {name:?}\nid = {:?}\nvalue = {:?}\ntolerance = {:e}\nsource = {source:?}\n\n",
            m.id,
            m.value,
            rel * m.value.abs().max(1.0)
        ));
    }
    Ok(out)
}

/// Checks the finished run in `dir` against its kind's expected numbers, writes
/// `checks.parquet` there and returns the verdicts.
pub fn check_results_in(registry: &Registry, dir: &Path) -> Result<Vec<check::Verdict>> {
    let results = Results::open(dir)?;
    let kind = kind_of(registry, &results)?;
    let verdicts = check::check_results(kind, &results)?;
    check::write_checks(&verdicts, &dir.join("checks.parquet"))?;
    Ok(verdicts)
}

/// [`check_results_in`] with the built-in kinds.
pub fn check_results(dir: &Path) -> Result<Vec<check::Verdict>> {
    check_results_in(&Registry::builtin(), dir)
}
