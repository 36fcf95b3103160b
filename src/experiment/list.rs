//! `trellis-lab list`: every config with the paper item it reproduces, its run time, and the
//! state of its result (none, stale, checks passed or failed), from `experiments/catalog.toml`,
//! `experiments/run_times.toml` (one measured run, generated) and the results folders. Nothing is written: verdicts are recomputed from the tables.

use super::config;
use super::kind::Results;
use super::registry::Registry;
use super::run_times::RunTimes;
use super::staging;
use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One entry of `experiments/catalog.toml`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CatalogEntry {
    /// The config's file name in `configs/`.
    pub file: String,
    /// The paper item it reproduces.
    pub reproduces: String,
    /// The key of the paper it reproduces (none for the board, which runs every paper's methods).
    #[serde(default)]
    pub paper: Option<String>,
}

/// A reproduced paper, cited once in the catalog.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// The key configs name it by.
    pub key: String,
    /// Authors, venue and year in a few words.
    pub short: String,
    /// The full citation: authors, title, venue, year.
    pub citation: String,
}

/// `experiments/catalog.toml`: every config and every reproduced paper.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// One entry per config.
    pub config: Vec<CatalogEntry>,
    /// The papers.
    #[serde(default)]
    pub paper: Vec<Paper>,
}

impl Catalog {
    /// Parses a catalog; `what` names it in errors. Every config's paper key must be a paper's.
    pub fn parse(text: &str, what: &str) -> Result<Catalog> {
        let c: Catalog = toml::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "{what} is not a valid catalog: {}",
                config::one_line(&e.to_string())
            )
        })?;
        for e in &c.config {
            if let Some(k) = &e.paper {
                if !c.paper.iter().any(|p| &p.key == k) {
                    anyhow::bail!(
                        "{what}: {} names paper {k:?}, which no [[paper]] entry has; add it or fix the key",
                        e.file
                    );
                }
            }
        }
        Ok(c)
    }

    /// The catalog built into the program.
    pub fn builtin() -> &'static Catalog {
        static CATALOG: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        CATALOG.get_or_init(|| {
            Catalog::parse(
                include_str!("../../experiments/catalog.toml"),
                "experiments/catalog.toml",
            )
            .expect("the built-in catalog is valid (tested)")
        })
    }

    /// The entry of the config whose file stem is `name` (a shipped config's experiment name),
    /// with its paper.
    pub fn entry(&self, name: &str) -> Option<(&CatalogEntry, Option<&Paper>)> {
        let e = self
            .config
            .iter()
            .find(|e| e.file.strip_suffix(".toml") == Some(name))?;
        let paper = e
            .paper
            .as_ref()
            .and_then(|k| self.paper.iter().find(|p| &p.key == k));
        Some((e, paper))
    }
}

/// Reads a catalog file's config entries.
pub fn read_catalog(path: &Path) -> Result<Vec<CatalogEntry>> {
    let text = staging::read_small(path, 1 << 20)?;
    Ok(Catalog::parse(&text, &path.display().to_string())?.config)
}

/// The state of a config's result.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// The config does not load (the one-line error).
    BadConfig(String),
    /// No complete results folder.
    None,
    /// A results folder of another config, program or input files, or with changed outputs
    /// (re-run it): why.
    Stale(String),
    /// Up to date; checks passed out of the total (the kind has no expected numbers for it when
    /// the total is 0).
    Checked {
        /// Checks that passed.
        passed: usize,
        /// All checks.
        total: usize,
    },
    /// Up to date, but the checks could not be computed (the error).
    CheckError(String),
}

impl State {
    /// The state in words.
    pub fn words(&self) -> String {
        match self {
            State::BadConfig(e) => format!("config error: {e}"),
            State::None => "no result".into(),
            State::Stale(why) => format!("stale: {why}"),
            State::Checked { passed, total } if passed == total => {
                format!("ok: {total} of {total} checks pass")
            }
            State::Checked { passed, total } => {
                format!("FAILS: {passed} of {total} checks pass")
            }
            State::CheckError(e) => format!("check error: {e}"),
        }
    }
}

/// One row of `list`.
#[derive(Clone, Debug)]
pub struct Row {
    /// The config file.
    pub config: PathBuf,
    /// From the catalog (`?` when missing).
    pub reproduces: String,
    /// From the run times of one measured run (`?` when missing).
    pub time: String,
    /// Its results folder (when the config loads).
    pub results: Option<PathBuf>,
    /// Its state.
    pub state: State,
}

/// Every `*.toml` in `configs` (sorted), with the catalog's words, its measured run time and its
/// result's state.
pub fn list(
    registry: &Registry,
    configs: &Path,
    catalog: &[CatalogEntry],
    times: &RunTimes,
) -> Result<Vec<Row>> {
    let by_file: BTreeMap<&str, &CatalogEntry> =
        catalog.iter().map(|e| (e.file.as_str(), e)).collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(configs)
        .with_context(|| {
            format!(
                "cannot list {} (pass the configs folder)",
                configs.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut rows = Vec::new();
    for path in files {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let entry = by_file.get(name.as_str());
        let (results, state) = match config::load(registry, &path) {
            Err(e) => (None, State::BadConfig(config::one_line(&e.to_string()))),
            Ok(cfg) => {
                let dir = cfg.results_dir();
                (Some(dir.clone()), state_of(&cfg, &dir))
            }
        };
        rows.push(Row {
            config: path,
            reproduces: entry.map_or("?".into(), |e| e.reproduces.clone()),
            time: times.short_of(&name).unwrap_or_else(|| "?".into()),
            results,
            state,
        });
    }
    Ok(rows)
}

fn state_of(cfg: &config::Config, dir: &Path) -> State {
    if !dir.join("manifest.json").is_file() {
        return State::None;
    }
    if let Some(why) = stale_because(cfg, dir) {
        return State::Stale(why);
    }
    let verdicts = Results::open(dir).and_then(|r| super::check::check_results(cfg.kind, &r));
    match verdicts {
        Ok(v) => State::Checked {
            passed: v.iter().filter(|v| v.passed).count(),
            total: v.len(),
        },
        Err(e) if e.to_string().contains("has no expected numbers") => State::Checked {
            passed: 0,
            total: 0,
        },
        Err(e) => State::CheckError(config::one_line(&format!("{e:#}"))),
    }
}

/// Why the results folder `dir` is not an up-to-date run of `cfg`, or `None` when it is: the
/// first of an unreadable manifest, a changed config (naming the first key that differs), a
/// rebuilt program, a missing or changed input file, and a changed output.
fn stale_because(cfg: &config::Config, dir: &Path) -> Option<String> {
    let Ok(results) = Results::open(dir) else {
        return Some("manifest.json cannot be read".into());
    };
    let m = results.manifest();
    let recorded = m.get("config").unwrap_or(&Value::Null);
    if let Some(key) = super::references::differing_keys(recorded, &cfg.value, false).first() {
        let key = if key.is_empty() {
            "the whole config"
        } else {
            key
        };
        return Some(format!("config changed ({})", config::clip(key, 60)));
    }
    if m.get("program_hash").and_then(Value::as_str) != Some(staging::program_hash().as_str()) {
        return Some("program changed (rebuilt since the run)".into());
    }
    let hash = match cfg
        .kind
        .inputs(&cfg.value)
        .and_then(|inputs| staging::run_hash(&cfg.value, &inputs))
    {
        Ok(h) => h,
        Err(e) => return Some(format!("input: {}", config::one_line(&format!("{e:#}")))),
    };
    if m.get("run_hash").and_then(Value::as_str) != Some(hash.as_str()) {
        return Some("input files changed".into());
    }
    let changes = staging::output_changes(dir, m);
    (!changes.is_empty()).then(|| staging::describe_changes(&changes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn the_built_in_catalog_is_the_file_and_cites_every_paper() {
        let c = Catalog::builtin();
        let file = read_catalog(&crate_dir().join("experiments/catalog.toml")).unwrap();
        assert_eq!(c.config, file);
        assert_eq!(c.paper.len(), 5);
        let (e, p) = c.entry("jets").unwrap();
        assert!(e.reproduces.contains("Table 1"));
        assert!(p.unwrap().citation.contains("AISTATS"));
        assert!(c.entry("board").unwrap().1.is_none());
        assert!(c.entry("my_own").is_none());
        // Every paper is cited by some config, and a bad key is refused.
        for p in &c.paper {
            assert!(
                c.config.iter().any(|e| e.paper.as_deref() == Some(&p.key)),
                "{}",
                p.key
            );
        }
        let bad = "[[config]]\nfile = \"a.toml\"\nreproduces = \"x\"\npaper = \"nope\"\n";
        let e = Catalog::parse(bad, "t").unwrap_err().to_string();
        assert!(e.contains("\"nope\"") && e.contains("a.toml"), "{e}");
    }

    #[test]
    fn the_catalog_names_every_config_once_and_nothing_else() {
        let catalog = read_catalog(&crate_dir().join("experiments/catalog.toml")).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for e in &catalog {
            assert!(
                seen.insert(e.file.clone()),
                "{} twice in the catalog",
                e.file
            );
            assert!(!e.reproduces.is_empty(), "{}", e.file);
        }
        let configs: std::collections::BTreeSet<String> =
            std::fs::read_dir(crate_dir().join("configs"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .filter(|f| f.ends_with(".toml"))
                .collect();
        assert_eq!(
            seen, configs,
            "experiments/catalog.toml and configs/ differ"
        );
    }

    #[test]
    fn list_reports_none_stale_and_checked_results() {
        let dir = std::env::temp_dir().join(format!("trellis-list-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        let configs = dir.join("configs");
        std::fs::create_dir_all(&configs).unwrap();
        let text = std::fs::read_to_string(crate_dir().join("configs/jets_smoke.toml"))
            .unwrap()
            .replace(
                "output_dir = \"../results\"",
                &format!("output_dir = \"{}\"", dir.join("results").display()),
            );
        std::fs::write(configs.join("jets_smoke.toml"), &text).unwrap();
        std::fs::write(configs.join("broken.toml"), "[experiment]\nname = 3\n").unwrap();
        let catalog = vec![CatalogEntry {
            file: "jets_smoke.toml".into(),
            reproduces: "smoke".into(),
            paper: None,
        }];
        let times = RunTimes::builtin();
        let reg = Registry::builtin();
        let rows = list(&reg, &configs, &catalog, times).unwrap();
        assert_eq!(rows.len(), 2);
        assert!(
            matches!(rows[0].state, State::BadConfig(_)),
            "{:?}",
            rows[0].state
        );
        assert_eq!(rows[0].reproduces, "?");
        assert_eq!(rows[0].time, "?");
        assert_eq!(
            Some(rows[1].time.clone()),
            times.short_of("jets_smoke.toml")
        );
        assert_eq!(rows[1].state, State::None);
        super::super::run_config_in(&reg, &configs.join("jets_smoke.toml"), true).unwrap();
        let rows = list(&reg, &configs, &catalog, times).unwrap();
        match &rows[1].state {
            State::Checked { passed, total } => assert!(*total > 0 && passed == total),
            other => panic!("{other:?}"),
        }
        // A changed config makes the result stale.
        std::fs::write(
            configs.join("jets_smoke.toml"),
            text.replace("seed = ", "seed = 1"),
        )
        .unwrap();
        let rows = list(&reg, &configs, &catalog, times).unwrap();
        assert_eq!(
            rows[1].state,
            State::Stale("config changed (experiment.seed)".into())
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
