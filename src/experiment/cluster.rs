//! `trellis-lab cluster FILE`: a board config for a user's data file, run into
//! `OUTPUT_DIR/NAME/`, the config kept beside it as `OUTPUT_DIR/NAME.toml`, and the report of
//! `OUTPUT_DIR` written.
//!
//! Every check that can refuse runs before anything is computed or created: the options (the
//! config text is parsed in memory), `--output-dir` naming a file, the report's destination
//! ([`crate::report::check_destination`]), and the results folder's ownership and inputs
//! ([`super::run_loaded`]). The config is written under the results folder's lock once the
//! results are in place, so it is always the one they ran, and only
//! - where no file is, or
//! - over a config `cluster` generated that nobody edited since (the results manifest keeps
//!   its hash and says it was generated; a config a user edited and ran with `run` is theirs),
//!   or one with the same text;
//!
//! checked when the path is chosen and again at the write, under the lock (a file saved there
//! meanwhile is left as it is, said in one line).
//!
//! Never over the input file itself. An edited config is kept, and the new one goes beside it
//! as `NAME.1.toml` (`.2`, ...), said on the terminal. A refused or failed `cluster` leaves
//! nothing behind: no config, and no output folder it created.

use super::own_data::{self, DataKind, Options};
use super::safe_fs::Expect;
use super::{config, ownership, staging, Outcome, Registry};
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// What the command line's `--similarity` and `--distance` said of the file.
#[derive(Clone, Copy, Debug, Default)]
pub struct Matrix {
    /// `--similarity`: a square similarity matrix.
    pub similarity: bool,
    /// `--distance`: a square distance matrix.
    pub distance: bool,
}

/// What [`cluster`] did.
pub struct Clustered {
    /// The run's outcome (results written, or already up to date).
    pub outcome: Outcome,
    /// The config the results ran, beside them.
    pub config: PathBuf,
    /// The existing config kept because it was edited (or is not this program's), if any.
    pub kept: Option<PathBuf>,
    /// `(method, why)` of every method that did not run, once each.
    pub not_run: Vec<(String, String)>,
    /// How many trees attain the exact MAP, where the trellis ran, in a line.
    pub map_ties: Option<String>,
    /// The report written.
    pub report: crate::report::ReportSummary,
}

/// Most `NAME.K.toml` names tried beside an edited `NAME.toml`.
const MAX_ALTERNATIVES: usize = 100;

/// Clusters `file` (a jets JSON, a points table, or as `matrix` says a similarity or distance
/// matrix) with `opts` into `out` (see the [module docs](self)).
pub fn cluster(
    file: &Path,
    opts: &Options,
    matrix: Matrix,
    out: &Path,
    force: bool,
) -> Result<Clustered> {
    let abs = own_data::absolute(file)?;
    let data = DataKind::of_flags(&abs, matrix.similarity, matrix.distance, opts)?;
    let (limit, _) = own_data::exact_limit(data, &abs, opts, "board")?;
    let decisions = own_data::decide(data, &abs, opts);
    let text = own_data::board_config(data, &abs, opts, &limit, &decisions);
    // The options are checked in memory: a bad option leaves nothing behind.
    let cfg = config::parse_in(&Registry::builtin(), &text, out).map_err(|e| {
        anyhow::anyhow!(
            "{}",
            e.to_string()
                .replace("config <input>", "the cluster options")
        )
    })?;
    for p in out.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => bail!(
                "--output-dir {}: {} is a file, not a folder; give a folder for the results (it is created if missing)",
                out.display(),
                p.display()
            ),
            Err(_) => continue,
        }
    }
    // The results folder first (the worst outcome), then where the report goes.
    ownership::check_replaceable(&out.join(&opts.name), ownership::FIX_CLUSTER)?;
    crate::report::check_destination(out, &opts.name)?;
    let (path, kept, expect) = config_path(out, &opts.name, &text, &abs)?;
    let said = own_data::before_computing(&limit, &decisions);
    let companion = super::Companion {
        text: &text,
        expect,
        say: said.as_deref(),
    };
    let outcome = super::run_loaded(
        &cfg,
        &path,
        Some(companion),
        force,
        None,
        ownership::FIX_CLUSTER,
    )?;
    let not_run = not_run(&out.join(&opts.name).join("trees.parquet"));
    let map_ties = map_ties(&out.join(&opts.name).join("board.parquet"));
    let report = crate::report::write_report(out)?;
    Ok(Clustered {
        outcome,
        config: path,
        kept,
        not_run,
        map_ties,
        report,
    })
}

/// Where the config goes: `out/NAME.toml` when it may be written there, else the first
/// `out/NAME.K.toml` that may; with the file kept at `NAME.toml`, if it was passed by, and what
/// the chosen path holds now (checked again when the config is written).
fn config_path(
    out: &Path,
    name: &str,
    text: &str,
    input: &Path,
) -> Result<(PathBuf, Option<PathBuf>, Expect)> {
    let results = out.join(name);
    let ran = ran_config(&results);
    let input = ownership::resolved(input);
    let first = out.join(format!("{name}.toml"));
    for k in 0..=MAX_ALTERNATIVES {
        let p = match k {
            0 => first.clone(),
            k => out.join(format!("{name}.{k}.toml")),
        };
        if ownership::resolved(&p) == input {
            continue;
        }
        if let Some(expect) = may_write(&p, text, ran.as_ref()) {
            let kept = (k > 0).then_some(first);
            return Ok((p, kept, expect));
        }
    }
    bail!(
        "{} and {MAX_ALTERNATIVES} alternatives beside it are files this program did not write; choose another --output-dir or --name",
        first.display()
    )
}

/// The config file name and the content hashes the results in `results` recorded (their
/// config's, and the earlier generated config theirs replaced), when that folder is this
/// program's and its config was generated by `cluster` (not a user's config `run`).
fn ran_config(results: &Path) -> Option<(String, Vec<String>)> {
    if ownership::why_not_ours(results).is_some() {
        return None;
    }
    let text = staging::read_small(&results.join("manifest.json"), 16 << 20).ok()?;
    let m: serde_json::Value = serde_json::from_str(&text).ok()?;
    if m.get("config_generated")
        .and_then(serde_json::Value::as_bool)
        != Some(true)
    {
        return None;
    }
    let file = Path::new(m.get("config_file")?.as_str()?)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    let mut hashes = vec![m.get("config_hash")?.as_str()?.to_string()];
    // The config the run replaced once its results were in place: still at the path when the
    // run was killed between the two, and the program's own.
    hashes.extend(
        m.get("config_replaces")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string),
    );
    Some((file, hashes))
}

/// What may be replaced at `p` by the config: nothing there, a regular file with this very
/// text, or the config `cluster` generated for the results (`ran`: its file name and hash),
/// unedited. `None`: anything else (a user's file, an edited config, a link, a folder).
fn may_write(p: &Path, text: &str, ran: Option<&(String, Vec<String>)>) -> Option<Expect> {
    match std::fs::symlink_metadata(p) {
        Err(e) => (e.kind() == std::io::ErrorKind::NotFound).then_some(Expect::Absent),
        Ok(m) if !m.is_file() => None,
        Ok(_) => {
            let h = staging::hash_file(p).ok()?;
            let same = staging::read_small(p, config::MAX_CONFIG_BYTES).is_ok_and(|t| t == text);
            let generated = ran.is_some_and(|(file, hashes)| {
                p.file_name().is_some_and(|f| f.to_string_lossy() == *file)
                    && hashes.contains(&format!("{h:016x}"))
            });
            (same || generated).then_some(Expect::Hash(h))
        }
    }
}

/// `(method, why)` of the methods `trees.parquet` records as not run, once each.
fn not_run(trees: &Path) -> Vec<(String, String)> {
    let Ok(t) = super::table::read_parquet(trees) else {
        return Vec::new();
    };
    let (Ok(method), Ok(status)) = (
        super::table::str_column(&t, "method"),
        super::table::str_column(&t, "status"),
    ) else {
        return Vec::new();
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut v = Vec::new();
    for (m, s) in method.iter().zip(&status) {
        if let Some(why) = s.strip_prefix("not run: ") {
            if seen.insert((m.clone(), why.to_string())) {
                v.push((m.clone(), why.to_string()));
            }
        }
    }
    v
}

/// More trees tied at the exact MAP than this: said with the likely cause and the flag.
const MANY_TIES: f64 = 1e6;

/// A line on the trees that attain the exact MAP, from the trellis's `map_tree_count` rows of
/// `board.parquet` (`None` where the trellis did not run).
fn map_ties(board: &Path) -> Option<String> {
    let t = super::table::read_parquet(board).ok()?;
    let method = super::table::str_column(&t, "method").ok()?;
    let metric = super::table::str_column(&t, "metric").ok()?;
    let value = super::table::f64_column(&t, "value").ok()?;
    let counts: Vec<f64> = (0..method.len())
        .filter(|&r| method[r] == "trellis" && metric[r] == "map_tree_count")
        .filter_map(|r| value[r])
        .collect();
    let most = counts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let count = |v: f64| {
        if v < 1e15 {
            format!("{v:.0}")
        } else {
            format!("{v:.3e}")
        }
    };
    let flat = if most > MANY_TIES {
        "; so many ties mean the energy barely tells the trees apart (on points: columns on very different scales make every pair of points correlate alike; pass --standardize)"
    } else {
        ""
    };
    let rule = format!("the trellis returns one of them, the first in its split order at every cluster (so the order of the points decides which), and its scores (purity, ...) are that one tree's; see leaderboard.md{flat}");
    match counts.len() {
        0 => None,
        1 if most <= 1.0 => {
            Some("the exact MAP tree is unique (no other tree ties with it)".into())
        }
        1 => Some(format!(
            "the exact MAP is attained by {} trees: {rule}",
            count(most)
        )),
        k => {
            let tied = counts.iter().filter(|&&c| c > 1.0).count();
            Some(match tied {
                0 => format!("the exact MAP tree is unique on each of the {k} instances"),
                _ => format!(
                    "the exact MAP is attained by more than one tree on {tied} of {k} instances (up to {}): {rule}",
                    count(most)
                ),
            })
        }
    }
}
