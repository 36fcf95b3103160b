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
pub mod cluster;
pub mod config;
pub mod dropped;
pub mod exact_limit;
pub mod jobs;
pub mod kind;
pub mod limits;
pub mod list;
pub mod methods;
pub mod own_data;
pub mod ownership;
mod parquet_guard;
pub mod properties;
pub mod references;
pub mod registry;
pub mod run_times;
pub mod safe_fs;
mod signals;
pub mod staging;
pub mod stats;
pub mod table;
#[cfg(test)]
pub(crate) mod test_support;

pub use kind::{Experiment, Kind, Results, RunContext};
pub use registry::Registry;

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Registers a temporary file of this process to remove at SIGINT or SIGTERM (the report's
/// pages while they are written).
pub fn signals_register_file(path: &Path) {
    signals::register_created(signals::Created::File(path.to_path_buf()));
}

/// Forgets a file registered with [`signals_register_file`] (moved into place or removed).
pub fn signals_forget_file(path: &Path) {
    signals::unregister_created(&signals::Created::File(path.to_path_buf()));
}

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
    board => Board,
    astar => Astar,
    pythia_jets => PythiaJets,
    bhc_purity => BhcPurity,
    bhc => Bhc,
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
    run_config_with(registry, path, force, None)
}

/// Runs the config at `path`; with `shard = Some(I/N)` computes only part I of the kind's jobs
/// into the shard folder `<results>.shard-I-of-N/` (see [`jobs`]; [`merge_shards_in`] joins
/// them). A run killed part-way resumes from its journal without recomputing finished jobs.
pub fn run_config_with(
    registry: &Registry,
    path: &Path,
    force: bool,
    shard: Option<jobs::Shard>,
) -> Result<Outcome> {
    let cfg = config::load(registry, path)?;
    run_loaded(&cfg, path, None, force, shard, ownership::FIX_CONFIG)
}

/// A config text to write at the config's path once the results are in place (`cluster`): its
/// text, and what the path held when the caller decided it may be written there (checked again
/// at the write, under the results folder's lock).
#[derive(Clone, Copy)]
pub struct Companion<'a> {
    /// The config text.
    pub text: &'a str,
    /// What may be at the path when it is written.
    pub expect: safe_fs::Expect,
    /// A line for the terminal once every check has passed, just before the computing starts
    /// (the exact trellis's estimate), if any.
    pub say: Option<&'a str>,
}

/// Runs the loaded config `cfg` whose file is `path`. With a [`Companion`] the file does not
/// hold its text yet: the text is written there under the results folder's lock once the
/// results are in place, so the config beside the results is always the one they ran, and a
/// run that fails writes no config (`cluster`); the manifest says the config was generated. The results folder must be absent or this
/// program's output, and must not contain the config or an input the run reads; both are
/// checked before anything is computed or created ([`ownership`]); a refusal says `fix`.
pub fn run_loaded(
    cfg: &config::Config,
    path: &Path,
    companion: Option<Companion>,
    force: bool,
    shard: Option<jobs::Shard>,
    fix: &str,
) -> Result<Outcome> {
    let text = companion.map(|c| c.text);
    let mut dir = cfg.results_dir();
    if let Some(s) = shard {
        if !cfg.kind.shardable() {
            anyhow::bail!(
                "experiment.kind = {:?} does not divide its work into jobs, so --shard {}/{} cannot split it; run it without --shard",
                cfg.experiment.kind,
                s.index,
                s.count
            );
        }
        dir = s.folder(&dir);
    }
    let inputs = checked_inputs(cfg, path)?;
    staging::no_file_in_the_way(&dir)?;
    // What killed runs of this folder left (their staging folders) goes on every run.
    if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) {
        staging::remove_dead_staging(parent, &name.to_string_lossy());
    }
    ownership::refuse_over_inputs(&dir, Some(path), &inputs, fix)?;
    ownership::check_replaceable(&dir, fix)?;
    // One run per results folder at a time (an advisory lock, released when the run ends).
    let _lock = staging::lock_results(&dir)?;
    let hash = staging::run_hash(&cfg.value, &inputs)?;
    let config_hash = match text {
        Some(t) => staging::hash_text(t.as_bytes()),
        None => format!("{:016x}", staging::hash_file(path)?),
    };
    let up_to_date = match shard {
        None => {
            staging::is_up_to_date(&dir, &hash)
                && (text.is_none() || staging::ran_config(&dir, path, &config_hash))
        }
        Some(_) => shard_up_to_date(&dir, &hash),
    };
    let outcome = if !force && up_to_date {
        Outcome::UpToDate(dir)
    } else {
        let jobs = jobs::Jobs::journalled(&journal_path(&dir), &hash, shard)?;
        if let Some(line) = companion.and_then(|c| c.say) {
            eprintln!("{line}");
        }
        let replaces = match companion.map(|c| c.expect) {
            Some(safe_fs::Expect::Hash(h)) => Some(format!("{h:016x}")),
            _ => None,
        };
        let config = ConfigFile {
            path,
            hash: &config_hash,
            generated: text.is_some(),
            replaces: replaces.as_deref(),
        };
        execute(cfg, config, &hash, &dir, &jobs, None)?
    };
    if let Some(c) = companion {
        // Under the lock still: the results just committed (or found up to date) ran this text.
        if staging::read_small(path, config::MAX_CONFIG_BYTES)
            .ok()
            .as_deref()
            != Some(c.text)
        {
            safe_fs::replace_expected(path, c.text.as_bytes(), c.expect).with_context(|| {
                format!(
                    "the results are in {}, but their config was not written beside them",
                    cfg.results_dir().display()
                )
            })?;
        }
    }
    Ok(outcome)
}

/// The config file a run records in its manifest: its path and content hash.
#[derive(Clone, Copy)]
struct ConfigFile<'a> {
    path: &'a Path,
    hash: &'a str,
    /// Written by the program (`cluster`), not by a user.
    generated: bool,
    /// The content hash of the program's earlier config at the path, which this one replaces
    /// once the results are in place (a run killed between the two still knows it as its own).
    replaces: Option<&'a str>,
}

/// Joins the finished shard folders `dirs` (all `N` shards of one config, run by this program
/// on the same inputs) into the config's results folder: the kind runs as a single run would,
/// with every sharded job read from the shards' journals, so tables, figures and checks are the
/// single run's.
pub fn merge_shards_in(registry: &Registry, dirs: &[PathBuf]) -> Result<Outcome> {
    let infos = dirs
        .iter()
        .map(|d| jobs::ShardInfo::read(d))
        .collect::<Result<Vec<_>>>()?;
    let Some(first) = infos.first() else {
        anyhow::bail!("merge needs the shard folders to join, e.g. results/board.shard-*-of-3");
    };
    let count = first.shard.count;
    let mut seen = vec![None::<&Path>; count];
    for (info, d) in infos.iter().zip(dirs) {
        if info.run_hash != first.run_hash || info.shard.count != count {
            anyhow::bail!(
                "{} and {} are shards of different runs (config, program, inputs or N differ); merge the shards of one run",
                dirs[0].display(),
                d.display()
            );
        }
        if let Some(other) = seen[info.shard.index] {
            anyhow::bail!(
                "{} and {} are both shard {}/{count}; pass each shard once",
                other.display(),
                d.display(),
                info.shard.index
            );
        }
        seen[info.shard.index] = Some(d);
        let got = format!("{:016x}", staging::hash_file(&d.join("journal.bin"))?);
        if got != info.journal_hash {
            anyhow::bail!(
                "{}/journal.bin was changed after the shard finished; re-run shard {}/{count}",
                d.display(),
                info.shard.index
            );
        }
    }
    if let Some(i) = seen.iter().position(|s| s.is_none()) {
        anyhow::bail!(
            "shard {i}/{count} is missing: run `trellis-lab run {} --shard {i}/{count}` and pass its folder too",
            first.config_file.display()
        );
    }
    let path = &first.config_file;
    let cfg = config::load(registry, path)?;
    let mut inputs = checked_inputs(&cfg, path)?;
    let dir = cfg.results_dir();
    inputs.extend(dirs.iter().map(|d| d.join("journal.bin")));
    ownership::refuse_over_inputs(&dir, Some(path), &inputs, ownership::FIX_CONFIG)?;
    inputs.truncate(inputs.len() - dirs.len());
    ownership::check_replaceable(&dir, ownership::FIX_CONFIG)?;
    let _lock = staging::lock_results(&dir)?;
    let hash = staging::run_hash(&cfg.value, &inputs)?;
    if hash != first.run_hash {
        anyhow::bail!(
            "the config {}, its input files or this program changed since the shards ran (run hash {hash} vs {}); re-run the shards with this program",
            path.display(),
            first.run_hash
        );
    }
    let mut jobs = jobs::Jobs::journalled(&journal_path(&dir), &hash, None)?;
    let journals: Vec<PathBuf> = dirs.iter().map(|d| d.join("journal.bin")).collect();
    jobs.preload_shards(&journals, &hash)?;
    let config_hash = format!("{:016x}", staging::hash_file(path)?);
    let config = ConfigFile {
        path,
        hash: &config_hash,
        generated: false,
        replaces: None,
    };
    execute(&cfg, config, &hash, &dir, &jobs, Some(count))
}

/// [`merge_shards_in`] with the built-in kinds.
pub fn merge_shards(dirs: &[PathBuf]) -> Result<Outcome> {
    merge_shards_in(&Registry::builtin(), dirs)
}

/// The config's input files, each checked to exist.
fn checked_inputs(cfg: &config::Config, path: &Path) -> Result<Vec<PathBuf>> {
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
    Ok(inputs)
}

/// The journal of the results (or shard) folder `dir`: `.<name>.journal` beside it.
pub fn journal_path(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    dir.with_file_name(format!(".{name}.journal"))
}

/// Whether the shard folder `dir` holds a finished shard of this run hash.
fn shard_up_to_date(dir: &Path, hash: &str) -> bool {
    jobs::ShardInfo::read(dir).is_ok_and(|info| {
        info.run_hash == hash
            && staging::hash_file(&dir.join("journal.bin"))
                .is_ok_and(|h| format!("{h:016x}") == info.journal_hash)
    })
}

/// Runs a loaded config into `dir` with `jobs`: the tables, figures and manifest of a results
/// folder, or, when `jobs` is a shard's, the shard folder (its journal and `shard.json`).
fn execute(
    cfg: &config::Config,
    config: ConfigFile,
    hash: &str,
    dir: &Path,
    jobs: &jobs::Jobs,
    merged_shards: Option<usize>,
) -> Result<Outcome> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.experiment.threads)
        .build()
        .context("cannot start worker threads")?;
    let threads = pool.current_num_threads();
    let outcome = pool.install(|| {
        let staging = staging::Staging::new(dir)?;
        let mut manifest = staging::Manifest::new(&cfg.value, config.path, hash, threads);
        manifest.set("config_hash", config.hash);
        if let Some(h) = config.replaces {
            manifest.set("config_replaces", h);
        }
        if config.generated {
            manifest.set("config_generated", true);
        }
        let t0 = std::time::Instant::now();
        let mut ctx = RunContext {
            experiment: &cfg.experiment,
            staging: &staging,
            manifest: &mut manifest,
            jobs,
        };
        match cfg.kind.run(&cfg.value, &mut ctx) {
            Ok(()) => {}
            Err(e) if e.is::<jobs::ShardStop>() => {
                let Some(shard) = jobs.shard() else {
                    return Err(e);
                };
                let journal = jobs.journal_file()?;
                return write_shard(staging, &journal, config.path, hash, shard, jobs);
            }
            Err(e) => return Err(e),
        }
        if let Some(s) = jobs.shard() {
            anyhow::bail!(
                "experiment.kind = {:?} finished without handing work to its jobs, so shard {}/{} has nothing to compute; run it without --shard",
                cfg.experiment.kind,
                s.index,
                s.count
            );
        }
        manifest.timing("run", t0.elapsed().as_secs_f64());
        // Only kinds that hand their work to jobs have a count (a kind that computes in one
        // piece would show a meaningless "computed 0, reused 0").
        if jobs.computed() + jobs.reused() > 0 {
            manifest.set(
                "jobs",
                serde_json::json!({"computed": jobs.computed(), "reused": jobs.reused()}),
            );
        }
        if let Some(n) = merged_shards {
            manifest.set("merged_shards", n);
        }
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
    })?;
    // Finished work is in the results folder now; the journal has served its purpose.
    if let Some(j) = jobs.journal_path() {
        std::fs::remove_file(j).ok();
    }
    Ok(outcome)
}

/// Commits a shard folder: a copy of the journal as `journal.bin`, then `shard.json`.
fn write_shard(
    staging: staging::Staging,
    journal: &Path,
    config_file: &Path,
    hash: &str,
    shard: jobs::Shard,
    jobs: &jobs::Jobs,
) -> Result<Outcome> {
    // A shard folder holds its journal and shard.json alone (what the kind wrote before it
    // stopped, such as data exports, a merge writes again).
    for f in staging.files()? {
        std::fs::remove_file(staging.path(&f))
            .with_context(|| format!("cannot remove {f} from the shard folder"))?;
    }
    let to = staging.path("journal.bin");
    std::fs::copy(journal, &to)
        .with_context(|| format!("cannot copy {} into the shard folder", journal.display()))?;
    let info = jobs::ShardInfo {
        config_file: config_file.to_path_buf(),
        run_hash: hash.to_string(),
        shard,
        jobs: jobs.computed() + jobs.reused(),
        journal_hash: format!("{:016x}", staging::hash_file(&to)?),
    };
    staging.write_string("shard.json", &serde_json::to_string_pretty(&info)?)?;
    Ok(Outcome::Written(staging.commit()?))
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
    let _lock = lock_existing(dir)?;
    let results = Results::open(dir)?;
    // Figures are moved into the folder by name: it must hold nothing but this program's files.
    ownership::refuse_foreign(
        dir,
        "plot draws its figures only into a results folder of this program's",
    )?;
    // The figures are drawn from the tables (and the manifest) alone: those must be the run's.
    let changes: Vec<_> = staging::output_changes(dir, results.manifest())
        .into_iter()
        .filter(|(f, _)| f.ends_with(".parquet") || f == "manifest.json")
        .collect();
    refuse_changed(dir, &changes)?;
    let kind = kind_of(registry, &results)?;
    // Draw into a scratch folder beside it first (`.<name>.figures.staging-PID`), so a failure
    // leaves the old figures in place and a kill leaves nothing inside the results folder.
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let scratch = staging::Staging::new(&dir.with_file_name(format!("{name}.figures")))?;
    kind.figures(&results, scratch.dir())?;
    let drawn = staging::describe_outputs(scratch.dir())?;
    let mut written = Vec::new();
    for (f, _, _) in &drawn {
        let to = dir.join(f);
        std::fs::rename(scratch.path(f), &to)
            .with_context(|| format!("cannot move {f} into {}", dir.display()))?;
        written.push(to);
    }
    // Figures drawn differently (another build's pixels) are recorded, so the folder stays
    // whole; verdicts checked against the old manifest then no longer apply.
    let mut manifest = results.manifest().clone();
    if staging::record_outputs(&mut manifest, &drawn) {
        let checks = dir.join("checks.parquet");
        if std::fs::symlink_metadata(&checks).is_ok() {
            std::fs::remove_file(&checks)
                .with_context(|| format!("cannot remove the stale {}", checks.display()))?;
        }
        staging::write_atomic(
            &dir.join("manifest.json"),
            serde_json::to_string_pretty(&manifest)?,
        )?;
    }
    Ok(written)
}

/// The lock of an existing results folder (`check` and `plot` write into it, so no run may
/// replace it meanwhile); a folder that does not exist is an error naming it.
fn lock_existing(dir: &Path) -> Result<staging::ResultsLock> {
    if !dir.is_dir() {
        // Results::open names the problem (no folder, or no manifest).
        Results::open(dir)?;
    }
    staging::lock_results(dir)
}

/// `Err` naming what changed when the folder `dir` no longer holds the outputs its run wrote.
fn refuse_changed(dir: &Path, changes: &[(String, String)]) -> Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "{} no longer holds what its run wrote ({}); re-run its config with --force to recompute it",
        dir.display(),
        staging::describe_changes(changes)
    )
}

/// [`plot_results_in`] with the built-in kinds.
pub fn plot_results(dir: &Path) -> Result<Vec<PathBuf>> {
    plot_results_in(&Registry::builtin(), dir)
}

/// The named numbers of the finished run in `dir` as `expected.toml` blocks (an accepted run):
/// each with tolerance `rel · max(|value|, 1)` and the given source, under a comment line
/// saying what the number is. Review them before adding
/// them to the kind's `expected.toml`.
pub fn accepted_run_toml(dir: &Path, rel: f64, source: &str) -> Result<String> {
    let results = Results::open(dir)?;
    refuse_changed(dir, &staging::output_changes(dir, results.manifest()))?;
    let kind = kind_of(&Registry::builtin(), &results)?;
    let name = results.experiment()?.name;
    let mut out = String::new();
    for m in kind.measures(&results)? {
        if !m.value.is_finite() {
            continue;
        }
        out.push_str(&format!(
            "# {}\n[[check]]\nconfig = {name:?}\nid = {:?}\nvalue = {:?}\ntolerance = {:e}\nsource = {source:?}\n\n",
            m.what.replace('\n', " "),
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
    Ok(check_folder(registry, dir)?.0)
}

/// [`check_results_in`] with the line saying why reference numbers were skipped, if they were.
pub fn check_folder(
    registry: &Registry,
    dir: &Path,
) -> Result<(Vec<check::Verdict>, Option<String>)> {
    let _lock = lock_existing(dir)?;
    let results = Results::open(dir)?;
    // `check` writes (and removes) checks.parquet: only in a folder of this program's.
    ownership::refuse_foreign(
        dir,
        "check writes its verdicts only into a results folder of this program's (at the name its run gave it)",
    )?;
    let checks = dir.join("checks.parquet");
    if let Err(e) = refuse_changed(dir, &staging::output_changes(dir, results.manifest())) {
        // Verdicts on the outputs as the run wrote them no longer describe this folder.
        if std::fs::symlink_metadata(&checks).is_ok() {
            std::fs::remove_file(&checks).ok();
        }
        return Err(e);
    }
    let kind = kind_of(registry, &results)?;
    let (verdicts, note) = check::check_report(kind, &results)?;
    let manifest_hash = staging::hash_file(&dir.join("manifest.json"))?;
    check::write_checks(&verdicts, &checks, manifest_hash)?;
    Ok((verdicts, note))
}

/// [`check_results_in`] with the built-in kinds.
pub fn check_results(dir: &Path) -> Result<Vec<check::Verdict>> {
    check_results_in(&Registry::builtin(), dir)
}
