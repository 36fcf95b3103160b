//! Experiment configs: one TOML file per experiment (`configs/*.toml`).
//!
//! Every config has an `[experiment]` section (below); `kind` picks the experiment kind, and the
//! kind owns every other section: its own, named after it (`kind = "sparse"` reads `[sparse]`),
//! and the shared ones it uses, `[jets]` (where jets come from,
//! [`super::jets::JetsSection`]) and `[methods]` (which tree-building methods run,
//! [`super::methods::MethodsSection`]). Unknown keys and sections are errors. Example (the
//! paper's Table 1 setting, `configs/jets.toml`):
//!
//! ```toml
//! [experiment]
//! kind = "jets"          # default
//! name = "jets"          # results go to <output_dir>/<name>/
//! seed = 20211130        # all randomness derives from it
//!
//! [jets]
//! source = "generate"    # or "file" with `path = "jets.json"`
//! n_jets = 4430
//! min_leaves = 5
//! max_leaves = 10        # inclusive
//!
//! [methods]
//! trellis = true
//! beam = true
//! greedy = true
//! ```

use super::kind::Kind;
use super::registry::Registry;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Largest config file read (a config is a few hundred bytes).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Most worker threads a config may ask for.
pub const MAX_THREADS: usize = 256;

/// `[experiment]`: common to every kind.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSection {
    /// Name of the run; results are written to `<output_dir>/<name>/`.
    pub name: String,
    /// Master seed: every random choice derives from it. Any u64: a seed above TOML's largest
    /// integer (2^63 − 1) is written as a string, `seed = "17039259473404265729"`.
    #[serde(deserialize_with = "seed_of")]
    pub seed: u64,
    /// Folder for results (default `results`); a relative one is relative to the config file's
    /// folder, as every path in a config is.
    #[serde(default = "default_output_dir")]
    pub output_dir: PathBuf,
    /// Worker threads (0 = one per core). Results do not depend on it.
    #[serde(default)]
    pub threads: usize,
    /// The experiment kind (`trellis-lab kinds` names them); default `"jets"`.
    #[serde(default = "default_kind")]
    pub kind: String,
}

/// A seed from a TOML integer (at least 0), a JSON one (any u64, as a manifest holds it) or a
/// string of digits (any u64).
fn seed_of<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seed {
        // (A manifest's JSON holds any u64 as a number.)
        Unsigned(u64),
        Int(i64),
        Text(String),
        Other(#[allow(dead_code)] serde::de::IgnoredAny),
    }
    let bad = || {
        serde::de::Error::custom(
            "experiment.seed must be a whole number from 0 to 18446744073709551615 (as a string above 9223372036854775807)",
        )
    };
    match Seed::deserialize(d)? {
        Seed::Unsigned(u) => Ok(u),
        Seed::Int(i) => u64::try_from(i).map_err(|_| bad()),
        Seed::Text(s) => s.trim().parse().map_err(|_| bad()),
        Seed::Other(_) => Err(bad()),
    }
}

fn default_output_dir() -> PathBuf {
    PathBuf::from("results")
}

fn default_kind() -> String {
    "jets".into()
}

/// A loaded, checked config.
pub struct Config {
    /// The `[experiment]` section.
    pub experiment: ExperimentSection,
    /// The experiment kind.
    pub kind: &'static dyn Kind,
    /// The whole config in normal form (defaults filled in, paths resolved), as JSON: what the
    /// manifest records and the run hash covers.
    pub value: Value,
}

impl Config {
    /// The kind's own config (every section but `[experiment]`) as its typed struct.
    pub fn typed<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        kind_sections(&self.value)
    }

    /// Where this config's results go.
    pub fn results_dir(&self) -> PathBuf {
        self.experiment.output_dir.join(&self.experiment.name)
    }
}

/// Problems with a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// File missing or unreadable.
    #[error("cannot read config {path}: {msg} (check the path)")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        msg: String,
    },
    /// Not valid TOML or unknown/mistyped keys.
    #[error("config {path}: {msg}")]
    Parse {
        /// The file.
        path: String,
        /// What toml/serde said, in one line.
        msg: String,
    },
    /// Values that do not fit together.
    #[error("config {path}: {msg}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong and how to fix it.
        msg: String,
    },
}

/// Reads, parses and checks the config file at `path` against the kinds of `registry`;
/// relative data paths become relative to the file's folder.
pub fn load(registry: &Registry, path: &Path) -> Result<Config, ConfigError> {
    let shown = path.display().to_string();
    let text = super::staging::read_small(path, MAX_CONFIG_BYTES).map_err(|e| ConfigError::Io {
        path: shown.clone(),
        msg: e.chain().last().map(|c| c.to_string()).unwrap_or_default(),
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse_in(registry, &text, base).map_err(|e| match e {
        ConfigError::Parse { msg, .. } => ConfigError::Parse { path: shown, msg },
        ConfigError::Invalid { msg, .. } => ConfigError::Invalid { path: shown, msg },
        other => other,
    })
}

/// Parses and checks config text; relative paths are taken relative to `base`.
pub fn parse_in(registry: &Registry, text: &str, base: &Path) -> Result<Config, ConfigError> {
    let parse_err = |msg: String| ConfigError::Parse {
        path: "<input>".into(),
        msg,
    };
    let invalid = |msg: String| ConfigError::Invalid {
        path: "<input>".into(),
        msg,
    };
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| parse_err(one_line(&e.to_string())))?;
    let exp = table
        .remove("experiment")
        .ok_or_else(|| invalid("missing [experiment] section (name, seed, kind)".into()))?;
    let experiment = ExperimentSection::deserialize(exp)
        .map_err(|e| parse_err(format!("[experiment]: {}", one_line(&e.to_string()))))?;
    check_experiment(&experiment).map_err(invalid)?;
    let mut experiment = experiment;
    // Every path in a config is relative to the config file's folder, output_dir too.
    experiment.output_dir = resolve_lexically(&experiment.output_dir, base);
    let kind = registry.get(&experiment.kind).ok_or_else(|| {
        invalid(format!(
            "experiment.kind = {:?} is not a known kind; use one of {}",
            experiment.kind,
            registry.names().join(", ")
        ))
    })?;
    let mut value = kind.load(table, base).map_err(invalid)?;
    if let Some(o) = value.as_object_mut() {
        o.insert(
            "experiment".into(),
            serde_json::to_value(&experiment).unwrap_or(Value::Null),
        );
    }
    Ok(Config {
        experiment,
        kind,
        value,
    })
}

fn check_experiment(e: &ExperimentSection) -> Result<(), String> {
    let name = &e.name;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "experiment.name {name:?} must be a non-empty folder name of letters, digits, '_' or '-'"
        ));
    }
    // Each worker thread is an OS thread with its own stack and per-thread state.
    super::limits::check_size(
        "experiment.threads",
        e.threads,
        MAX_THREADS,
        super::limits::UnitCost {
            unit: "worker thread",
            bytes: 2.0 * 1024.0 * 1024.0,
            seconds: 0.0,
        },
    )
    .map_err(|e| e.replace("; lower it", "; use 0 (one per core) or a small number"))?;
    Ok(())
}

/// The kind's own sections of a whole config in normal form (every section but
/// `[experiment]`), as the kind's typed config.
pub fn kind_sections<T: serde::de::DeserializeOwned>(
    config: &Value,
) -> Result<T, serde_json::Error> {
    let mut v = config.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("experiment");
    }
    serde_json::from_value(v)
}

pub use crate::data::{clip, compact_numbers, one_line};

/// `path` relative to `base` when it is relative, with `.` and `name/..` taken out lexically
/// (`configs` + `../results` gives `results`; links are not followed).
pub fn resolve_lexically(path: &Path, base: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in base.join(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Makes a relative `path` relative to `base`.
pub fn resolve(path: &mut PathBuf, base: &Path) {
    if path.is_relative() {
        *path = base.join(&*path);
    }
}

/// A default of `1.0` for serde.
pub fn one_f64() -> f64 {
    1.0
}

/// A default of `true` for serde.
pub fn yes() -> bool {
    true
}

/// A positive finite number, or an error naming `key`.
pub fn positive(key: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(format!("{key} = {v:?} must be a positive number"))
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_lexically;
    use std::path::{Path, PathBuf};

    #[test]
    fn paths_resolve_against_the_config_folder_lexically() {
        let r = |p: &str, b: &str| resolve_lexically(Path::new(p), Path::new(b));
        assert_eq!(r("../results", "configs"), PathBuf::from("results"));
        assert_eq!(r("results", ""), PathBuf::from("results"));
        assert_eq!(r("results", "."), PathBuf::from("results"));
        assert_eq!(
            r("out", "/home/me/study"),
            PathBuf::from("/home/me/study/out")
        );
        assert_eq!(r("/abs/out", "configs"), PathBuf::from("/abs/out"));
        assert_eq!(r("../../x", "a"), PathBuf::from("../x"));
        assert_eq!(r("../..", "/a"), PathBuf::from("/"));
        assert_eq!(r(".", ""), PathBuf::from("."));
    }

    #[test]
    fn every_u64_seed_can_be_written_in_a_config() {
        let reg = crate::experiment::Registry::builtin();
        let cfg = |seed: &str| {
            let text = format!(
                "[experiment]\nname = \"s\"\nseed = {seed}\n[jets]\nsource = \"generate\"\nn_jets = 1\nmax_leaves = 5\n"
            );
            crate::experiment::config::parse_in(&reg, &text, Path::new("."))
        };
        assert_eq!(cfg("7").unwrap().experiment.seed, 7);
        assert_eq!(
            cfg("\"17039259473404265729\"").unwrap().experiment.seed,
            17039259473404265729
        );
        for bad in ["-1", "\"x\"", "1.5"] {
            let e = cfg(bad).err().unwrap().to_string();
            assert!(e.contains("experiment.seed"), "{bad}: {e}");
        }
    }
}
