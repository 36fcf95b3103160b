//! Reading what the report shows: the results folders under RESULTS_ROOT, and for each its
//! manifest, check verdicts, figures, leaderboard and files. Nothing here panics or gives up
//! on a damaged folder: an unreadable part becomes an error message the pages show.

use crate::experiment::staging::{
    describe_changes, hash_file, list_files, output_changes, read_small,
};
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use anyhow::Result;
use serde_json::Value;
use std::path::{Component, Path};

/// The folder under RESULTS_ROOT that holds the per-folder pages.
pub const PAGES_DIR: &str = "report";

/// The largest manifest or leaderboard read (they are kilobytes).
const MAX_TEXT_BYTES: u64 = 16 << 20;

/// One subfolder of RESULTS_ROOT the index lists.
pub enum Entry {
    /// A folder with a `manifest.json` (readable or not): it gets a page.
    Results(Box<Folder>),
    /// A folder without a manifest (an unfinished or foreign folder): a row in the index only.
    Incomplete {
        /// The folder name (lossy if it is not UTF-8).
        name: String,
        /// Why it has no page.
        why: String,
    },
}

impl Entry {
    /// The folder name.
    pub fn name(&self) -> &str {
        match self {
            Entry::Results(f) => &f.name,
            Entry::Incomplete { name, .. } => name,
        }
    }
}

/// A results folder as the report sees it.
pub struct Folder {
    /// The folder name (a plain UTF-8 file name).
    pub name: String,
    /// The manifest, or why it cannot be read.
    pub manifest: std::result::Result<Value, String>,
    /// The check verdicts.
    pub checks: Checks,
    /// The figures, by file stem, sorted.
    pub figures: Vec<Figure>,
    /// Every regular file in the folder, sorted.
    pub files: Vec<String>,
    /// `leaderboard.md`, if the folder has one (or why it cannot be read).
    pub leaderboard: Option<std::result::Result<String, String>>,
    /// The config file as a path relative to RESULTS_ROOT's parent, if it exists there.
    pub config_link: Option<Vec<String>>,
    /// Whether `experiments/<kind>/README.md` exists beside RESULTS_ROOT.
    pub has_readme: bool,
}

/// The verdicts of `checks.parquet`.
pub enum Checks {
    /// No `checks.parquet`.
    NotChecked,
    /// The verdicts, failed ones first (then in file order).
    Read(Vec<Check>),
    /// `checks.parquet` exists but cannot be read.
    Error(String),
    /// The stored verdicts do not describe the folder as it is (an output changed after the
    /// run, the manifest cannot be read, or they were checked against another manifest): why.
    Stale(String),
}

impl Checks {
    /// `(passed, total)` when the verdicts were read.
    pub fn counts(&self) -> Option<(usize, usize)> {
        match self {
            Checks::Read(v) => Some((v.iter().filter(|c| c.passed).count(), v.len())),
            _ => None,
        }
    }
}

/// One row of `checks.parquet`.
pub struct Check {
    /// What the number is (its id when the table gives no description).
    pub what: String,
    /// Our value.
    pub observed: Option<f64>,
    /// The expected value.
    pub expected: Option<f64>,
    /// The tolerance.
    pub tolerance: Option<f64>,
    /// Ours minus expected.
    pub difference: Option<f64>,
    /// Where the expected number comes from (a paper table, an accepted run, ...).
    pub source: String,
    /// Whether it is within tolerance.
    pub passed: bool,
    /// False for a property checked over nothing (shown "not applicable").
    pub applicable: bool,
}

/// A figure: the SVG and/or PNG file of one stem.
pub struct Figure {
    /// The file stem, the caption.
    pub stem: String,
    /// `<stem>.svg`, if present.
    pub svg: Option<String>,
    /// `<stem>.png`, if present.
    pub png: Option<String>,
}

/// The subfolders of `root` the index lists, sorted by name: results folders, and folders
/// without a manifest as incomplete. Skipped: files, hidden and staging folders (`.name`),
/// shard folders (`name.shard-I-of-N`) and the report's own pages folder. An error only if
/// `root` cannot be listed or a results folder is named like the pages folder.
pub fn scan(root: &Path) -> Result<Vec<Entry>> {
    let base = std::path::absolute(root)
        .ok()
        .and_then(|a| a.parent().map(Path::to_path_buf));
    let kinds = crate::experiment::Registry::builtin();
    let mut entries = Vec::new();
    let listing = std::fs::read_dir(root)
        .map_err(|e| anyhow::anyhow!("cannot list {}: {e}", root.display()))?;
    for e in listing.filter_map(|e| e.ok()) {
        let path = e.path();
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Some(name) = e.file_name().to_str().map(str::to_string) else {
            entries.push(Entry::Incomplete {
                name: e.file_name().to_string_lossy().into_owned(),
                why: "the folder name is not UTF-8".into(),
            });
            continue;
        };
        if name.starts_with('.') || name.contains(".shard-") {
            continue;
        }
        let has_manifest = path.join("manifest.json").exists();
        if name == PAGES_DIR {
            if has_manifest {
                anyhow::bail!(
                    "{} is a results folder, but the report writes its pages there; rename that experiment (experiment.name) or move the folder",
                    path.display()
                );
            }
            continue;
        }
        if has_manifest {
            entries.push(Entry::Results(Box::new(load(
                &path,
                &name,
                base.as_deref(),
                &kinds,
            ))));
        } else {
            entries.push(Entry::Incomplete {
                name,
                why: "no manifest.json (an unfinished run, or not a results folder)".into(),
            });
        }
    }
    entries.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(entries)
}

/// The names of the results folders under `root` that get a page (as [`scan`] finds them,
/// without reading them).
pub fn result_names(root: &Path) -> Vec<String> {
    let Ok(listing) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut v: Vec<String> = listing
        .filter_map(|e| e.ok())
        .filter(|e| std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir()))
        .filter(|e| e.path().join("manifest.json").exists())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.') && !n.contains(".shard-") && n != PAGES_DIR)
        .collect();
    v.sort();
    v
}

/// Reads the results folder `dir` named `name`; `base` is RESULTS_ROOT's parent (where
/// config paths and `experiments/` resolve).
fn load(
    dir: &Path,
    name: &str,
    base: Option<&Path>,
    kinds: &crate::experiment::Registry,
) -> Folder {
    let manifest = read_small(&dir.join("manifest.json"), MAX_TEXT_BYTES)
        .map_err(|e| format!("{e:#}"))
        .and_then(|t| {
            serde_json::from_str::<Value>(&t)
                .map_err(|e| format!("manifest.json is not valid JSON: {e}"))
        })
        .and_then(|v| {
            if v.is_object() {
                Ok(v)
            } else {
                Err("manifest.json is not a JSON object".into())
            }
        });
    let files = list_files(dir).unwrap_or_default();
    let checks = checks_of(dir, manifest.as_ref().ok());
    let leaderboard = dir.join("leaderboard.md").exists().then(|| {
        read_small(&dir.join("leaderboard.md"), MAX_TEXT_BYTES).map_err(|e| format!("{e:#}"))
    });
    let m = manifest.as_ref().ok();
    let config_link = base.and_then(|b| {
        let file = m?.get("config_file")?.as_str()?;
        let segments = relative_segments(Path::new(file))?;
        b.join(file).is_file().then_some(segments)
    });
    let has_readme = base.is_some_and(|b| {
        m.and_then(|m| kind_of(m))
            .and_then(|k| kinds.get(k))
            .is_some_and(|k| {
                b.join("experiments")
                    .join(k.name())
                    .join("README.md")
                    .is_file()
            })
    });
    Folder {
        name: name.to_string(),
        figures: figures(&files),
        manifest,
        checks,
        files,
        leaderboard,
        config_link,
        has_readme,
    }
}

/// The experiment kind a manifest records (`config.experiment.kind`).
pub fn kind_of(manifest: &Value) -> Option<&str> {
    manifest
        .pointer("/config/experiment/kind")
        .and_then(Value::as_str)
}

/// The segments of a relative path (`..` kept, `.` dropped), or `None` for an absolute one or
/// one that is not UTF-8.
fn relative_segments(path: &Path) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(s) => out.push(s.to_str()?.to_string()),
            Component::ParentDir => out.push("..".into()),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The figures among `files`: every stem with an SVG or PNG file, sorted.
fn figures(files: &[String]) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::new();
    for f in files {
        let (stem, svg) = if let Some(s) = f.strip_suffix(".svg") {
            (s, true)
        } else if let Some(s) = f.strip_suffix(".png") {
            (s, false)
        } else {
            continue;
        };
        let i = match out.iter().position(|g| g.stem == stem) {
            Some(i) => i,
            None => {
                out.push(Figure {
                    stem: stem.to_string(),
                    svg: None,
                    png: None,
                });
                out.len() - 1
            }
        };
        if svg {
            out[i].svg = Some(f.clone());
        } else {
            out[i].png = Some(f.clone());
        }
    }
    out.sort_by(|a, b| a.stem.cmp(&b.stem));
    out
}

/// The verdicts the report may show for the folder `dir`: only those `check` computed on this
/// very manifest while every output was as the run wrote it; otherwise why not.
fn checks_of(dir: &Path, manifest: Option<&Value>) -> Checks {
    let path = dir.join("checks.parquet");
    let stored = std::fs::symlink_metadata(&path).is_ok();
    let Some(manifest) = manifest else {
        return if stored {
            Checks::Stale("the manifest cannot be read, so no verdict can be tied to a run; re-run the config".into())
        } else {
            Checks::NotChecked
        };
    };
    let changes = output_changes(dir, manifest);
    if !changes.is_empty() {
        return Checks::Stale(format!(
            "the folder no longer holds what its run wrote ({}); re-run the config with --force",
            describe_changes(&changes)
        ));
    }
    if !stored {
        return Checks::NotChecked;
    }
    let manifest_hash = hash_file(&dir.join("manifest.json"))
        .map(|h| format!("{h:016x}"))
        .unwrap_or_default();
    match read_checks(&path, &manifest_hash) {
        Ok(Some(v)) => Checks::Read(v),
        Ok(None) => Checks::Stale(
            "checks.parquet was written for another manifest than this folder's; run check again"
                .into(),
        ),
        Err(e) => Checks::Error(format!("{e:#}")),
    }
}

/// The verdicts of a `checks.parquet`, failed ones first, or `None` when they were not checked
/// against the manifest whose content hash is `manifest_hash`.
fn read_checks(path: &Path, manifest_hash: &str) -> Result<Option<Vec<Check>>> {
    let df = read_parquet(path)?;
    let Ok(hashes) = str_column(&df, "manifest_hash") else {
        return Ok(None);
    };
    if hashes.iter().any(|h| h != manifest_hash) {
        return Ok(None);
    }
    let id = str_column(&df, "id")?;
    let what = str_column(&df, "what")?;
    let source = str_column(&df, "source")?;
    let observed = f64_column(&df, "observed")?;
    let expected = f64_column(&df, "expected")?;
    let tolerance = f64_column(&df, "tolerance")?;
    let difference = f64_column(&df, "difference")?;
    let passed = u64_column(&df, "passed")?;
    // (Checks written before the column existed were all applicable.)
    let applicable = u64_column(&df, "applicable").unwrap_or_else(|_| vec![Some(1); df.height()]);
    let mut checks: Vec<Check> = (0..df.height())
        .map(|i| Check {
            what: if what[i].is_empty() {
                id[i].clone()
            } else {
                what[i].clone()
            },
            observed: observed[i],
            expected: expected[i],
            tolerance: tolerance[i],
            difference: difference[i],
            source: source[i].clone(),
            passed: passed[i] == Some(1),
            applicable: applicable[i] != Some(0),
        })
        .collect();
    checks.sort_by_key(|c| c.passed);
    Ok(Some(checks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_svg_and_png_figures() {
        let files: Vec<String> = ["b.png", "a.svg", "a.png", "t.parquet", "c.svg"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let f = figures(&files);
        let stems: Vec<&str> = f.iter().map(|g| g.stem.as_str()).collect();
        assert_eq!(stems, ["a", "b", "c"]);
        assert!(f[0].svg.is_some() && f[0].png.is_some());
        assert!(f[1].svg.is_none() && f[2].png.is_none());
    }

    #[test]
    fn relative_config_paths_only() {
        assert_eq!(
            relative_segments(Path::new("configs/../x y.toml")),
            Some(vec!["configs".into(), "..".into(), "x y.toml".into()])
        );
        assert_eq!(relative_segments(Path::new("/etc/passwd")), None);
        assert_eq!(relative_segments(Path::new(".")), None);
    }
}
