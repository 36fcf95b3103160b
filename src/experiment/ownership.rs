//! The ownership rule: the program replaces or removes a folder only when it is provably its own
//! output, and never computes into a folder that holds what the run reads.
//!
//! A **results folder** `<output_dir>/<name>` is this program's when
//! - it is a real folder (not a symbolic link, not a file),
//! - its `manifest.json` parses, names this program (`"program": "trellis-lab"`, or the fields
//!   every manifest of earlier versions has: `crate_version`, `program_hash`, `run_hash`) and
//!   this results name (`config.experiment.name`; under another name, a copy or a renamed
//!   folder, only when it holds exactly the files its manifest lists, byte for byte),
//! - and it holds nothing its manifest does not list, beside `checks.parquet` (written by
//!   `check`). No name is taken on trust: a temporary file an interrupted `check` left there
//!   makes the folder foreign too (the refusal names it).
//!
//! A **shard folder** `<name>.shard-I-of-N` is this program's when its `shard.json` parses and it
//! holds only `shard.json` and `journal.bin`.
//!
//! Anything else at the name is refused before any computation starts, with one line naming the
//! folder, what makes it foreign, and the fix; the same check runs again at the moment of the
//! swap (see [`super::staging::Staging::commit`]), so no caller can bypass it. Outputs are also
//! refused a folder that contains the config being run or an input the run reads
//! ([`refuse_over_inputs`]).

use super::staging::read_small;
use anyhow::{bail, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What the manifest of this program's results names it as.
pub const PROGRAM: &str = "trellis-lab";

/// Files a results folder holds besides its manifest's outputs: the manifest and `check`'s
/// verdicts.
pub const NOT_OUTPUTS: [&str; 2] = ["manifest.json", "checks.parquet"];

/// The fix said with a refusal of `run` and `merge`.
pub const FIX_CONFIG: &str =
    "change experiment.output_dir or experiment.name in the config, or move it away yourself";

/// The fix said with a refusal of `cluster`.
pub const FIX_CLUSTER: &str = "give another --output-dir or --name, or move it away yourself";

/// `Ok` when `dir` is absent or provably this program's output (a results folder, or a shard
/// folder when its name contains `.shard-`); otherwise the one-line reason, naming the folder
/// and `fix` ([`FIX_CONFIG`] or [`FIX_CLUSTER`]). Nothing is changed either way.
pub fn check_replaceable(dir: &Path, fix: &str) -> Result<()> {
    match why_not_ours(dir) {
        None => Ok(()),
        Some(why) => bail!(
            "{} {why}, so the program will not replace it and nothing was computed; {fix}",
            dir.display()
        ),
    }
}

/// The check at the moment of the swap (the last word, after the computation): `Ok` when
/// `dir` is absent or this program's; otherwise says that it changed while the run computed.
pub fn check_at_swap(dir: &Path) -> Result<()> {
    match why_not_ours(dir) {
        None => Ok(()),
        Some(why) => bail!(
            "{} {why}: it changed while the run computed, so the new results were discarded and it was left as it is; move those files away and run again",
            dir.display()
        ),
    }
}

/// `Err` naming `dir`, what makes it foreign and `why_it_matters` when `dir` exists and is not
/// this program's output (see [`check_replaceable`] for the folder a run replaces).
pub fn refuse_foreign(dir: &Path, why_it_matters: &str) -> Result<()> {
    match why_not_ours(dir) {
        None => Ok(()),
        Some(why) => bail!(
            "{} {why}; {why_it_matters}: move those files away, or recompute it elsewhere",
            dir.display()
        ),
    }
}

/// Why `dir` is not this program's output (`None`: it is, or it does not exist).
pub fn why_not_ours(dir: &Path) -> Option<String> {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    why_not_ours_as(dir, &name)
}

/// Why `dir` is not this program's output for results (or shard) folder `name`, wherever it
/// sits (a staging folder holding an old run has another name than the run's).
pub fn why_not_ours_as(dir: &Path, name: &str) -> Option<String> {
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("cannot be inspected ({e})")),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        return Some("is a symbolic link, not a results folder this program wrote".into());
    }
    if !meta.is_dir() {
        return Some("is a file, not a results folder".into());
    }
    if name.contains(".shard-") {
        return why_not_our_shard(dir);
    }
    let manifest = match read_manifest(dir) {
        Ok(m) => m,
        Err(why) => return Some(why),
    };
    let named = manifest
        .pointer("/config/experiment/name")
        .and_then(Value::as_str);
    // Under another name (a copy, a renamed folder): the program's only when it holds exactly
    // what its manifest lists, byte for byte.
    if named != Some(name) {
        // Its `check` verdicts must be this program's too, checked against this manifest (a
        // renamed copy may hold a user's file at that name).
        if let Some(why) = foreign_checks(dir) {
            return Some(format!(
                "holds a manifest.json of results named {}, not {name:?}, and {why}",
                named.map_or("nothing".into(), |n| format!(
                    "{:?}",
                    super::config::clip(n, 60)
                ))
            ));
        }
        if let Some((_, change)) = super::staging::output_changes(dir, &manifest).first() {
            return Some(format!(
                "holds a manifest.json of results named {}, not {name:?}, and not exactly the files it lists ({change})",
                named.map_or("nothing".into(), |n| format!(
                    "{:?}",
                    super::config::clip(n, 60)
                ))
            ));
        }
    }
    let listed: Vec<&str> = manifest
        .get("outputs")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let foreign = foreign_entries(dir, |f| listed.contains(&f) || NOT_OUTPUTS.contains(&f));
    describe_foreign(&foreign, "its manifest does not list")
}

/// Why the `checks.parquet` of `dir` is not `check`'s verdicts on this very manifest (`None`:
/// it is, or there is none).
fn foreign_checks(dir: &Path) -> Option<String> {
    let path = dir.join("checks.parquet");
    match std::fs::symlink_metadata(&path) {
        Err(_) => return None,
        Ok(m) if !m.is_file() => return Some("a checks.parquet that is not a regular file".into()),
        Ok(_) => {}
    }
    let manifest = super::staging::hash_file(&dir.join("manifest.json")).ok()?;
    let want = format!("{manifest:016x}");
    let ours = super::table::read_parquet(&path)
        .ok()
        .and_then(|t| super::table::str_column(&t, "manifest_hash").ok())
        .is_some_and(|h| !h.is_empty() && h.iter().all(|x| *x == want));
    (!ours).then(|| "a checks.parquet that is not check's verdicts on its manifest".into())
}

/// The manifest of `dir`, checked to be this program's, or why it is not.
fn read_manifest(dir: &Path) -> std::result::Result<Value, String> {
    let path = dir.join("manifest.json");
    match std::fs::symlink_metadata(&path) {
        Err(_) => {
            return Err("is a folder without a manifest.json (not results of this program)".into())
        }
        Ok(m) if !m.is_file() => {
            return Err("has a manifest.json that is not a regular file".into())
        }
        Ok(_) => {}
    }
    let text = read_small(&path, 16 << 20)
        .map_err(|e| format!("has a manifest.json that cannot be read ({e:#})"))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|_| "has a manifest.json that is not valid JSON".to_string())?;
    let ours = v.get("program").and_then(Value::as_str) == Some(PROGRAM)
        || ["crate_version", "program_hash", "run_hash"]
            .iter()
            .all(|k| v.get(*k).is_some_and(Value::is_string));
    if !ours {
        return Err("has a manifest.json that this program did not write".into());
    }
    Ok(v)
}

/// Why the shard folder `dir` is not this program's (`None`: it is).
fn why_not_our_shard(dir: &Path) -> Option<String> {
    if super::jobs::ShardInfo::read(dir).is_err() {
        return Some(
            "is a folder without a readable shard.json (not a shard this program wrote)".into(),
        );
    }
    let foreign = foreign_entries(dir, |f| f == "shard.json" || f == "journal.bin");
    describe_foreign(&foreign, "a shard folder never holds")
}

/// Entries of `dir` (files, folders, links: everything) that `allowed` does not accept by name,
/// or that are not regular files; sorted.
fn foreign_entries(dir: &Path, allowed: impl Fn(&str) -> bool) -> Vec<String> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return vec!["(its listing cannot be read)".into()];
    };
    let mut v: Vec<String> = listing
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_file = e.file_type().is_ok_and(|t| t.is_file());
            match (is_file, allowed(&name)) {
                (true, true) => None,
                // A name the program writes, but not as the regular file it writes.
                (false, true) => Some(format!("{name} (not a regular file)")),
                _ => Some(name),
            }
        })
        .collect();
    v.sort();
    v
}

/// One line naming up to three foreign entries (`None` when there are none).
fn describe_foreign(foreign: &[String], phrase: &str) -> Option<String> {
    if foreign.is_empty() {
        return None;
    }
    let shown: Vec<String> = foreign
        .iter()
        .take(3)
        .map(|f| format!("{:?}", super::config::clip(f, 60)))
        .collect();
    let more = match foreign.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    Some(format!("holds {}{more}, which {phrase}", shown.join(", ")))
}

/// `Err` when the results folder `dir` is, or contains, the config file `config` or one of
/// the run's `inputs`: a run must never replace what it reads. Paths are compared after
/// resolving links (the deepest existing ancestor of `dir`).
pub fn refuse_over_inputs(
    dir: &Path,
    config: Option<&Path>,
    inputs: &[PathBuf],
    fix: &str,
) -> Result<()> {
    let out = resolved(dir);
    for (what, p) in config
        .map(|c| ("the config being run", c))
        .into_iter()
        .chain(
            inputs
                .iter()
                .map(|p| ("an input the run reads", p.as_path())),
        )
    {
        if resolved(p).starts_with(&out) {
            bail!(
                "the results folder {} would contain {what}, {}, so writing it would replace that file; nothing was computed: {fix}",
                dir.display(),
                p.display()
            );
        }
    }
    Ok(())
}

/// `path` with links resolved as far as it exists, the rest appended as written.
pub fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(cur) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                cur = parent;
            }
            _ => return abs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("trellis-ownership-{}-{name}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn manifest(name: &str, outputs: &[&str]) -> String {
        serde_json::json!({
            "program": PROGRAM,
            "config": {"experiment": {"name": name}},
            "outputs": outputs,
        })
        .to_string()
    }

    #[test]
    fn only_a_folder_with_our_manifest_and_nothing_else_is_ours() {
        let d = scratch("rule");
        let res = d.join("r");
        assert!(why_not_ours(&res).is_none(), "absent is fine");
        std::fs::create_dir(&res).unwrap();
        let why = why_not_ours(&res).unwrap();
        assert!(why.contains("without a manifest"), "{why}");
        std::fs::write(res.join("manifest.json"), "{\"a\": 1}").unwrap();
        assert!(why_not_ours(&res).unwrap().contains("did not write"));
        std::fs::write(res.join("manifest.json"), manifest("other", &[])).unwrap();
        assert!(why_not_ours(&res).unwrap().contains("\"other\""));
        std::fs::write(res.join("manifest.json"), manifest("r", &["t.parquet"])).unwrap();
        std::fs::write(res.join("t.parquet"), "x").unwrap();
        std::fs::write(res.join("checks.parquet"), "x").unwrap();
        assert_eq!(why_not_ours(&res), None);
        // No name is taken on trust: a leftover temporary file is named too.
        std::fs::write(res.join("checks.tmp.parquet"), "x").unwrap();
        assert!(why_not_ours(&res).unwrap().contains("checks.tmp.parquet"));
        std::fs::remove_file(res.join("checks.tmp.parquet")).unwrap();
        // A user's file, a folder, or a link inside makes it foreign.
        std::fs::write(res.join("notes.txt"), "mine").unwrap();
        let why = why_not_ours(&res).unwrap();
        assert!(why.contains("notes.txt"), "{why}");
        std::fs::remove_file(res.join("notes.txt")).unwrap();
        std::fs::create_dir(res.join("t.parquet.d")).unwrap();
        assert!(why_not_ours(&res).unwrap().contains("t.parquet.d"));
        std::fs::remove_dir(res.join("t.parquet.d")).unwrap();
        std::os::unix::fs::symlink(&d, d.join("link")).unwrap();
        assert!(why_not_ours(&d.join("link"))
            .unwrap()
            .contains("symbolic link"));
        let e = check_replaceable(&d.join("link"), FIX_CLUSTER)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("move it away yourself") && !e.contains('\n'),
            "{e}"
        );
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_results_folder_over_an_input_is_refused() {
        let d = scratch("inputs");
        std::fs::create_dir_all(d.join("data")).unwrap();
        let input = d.join("data/x.csv");
        std::fs::write(&input, "a\n1\n").unwrap();
        let e = refuse_over_inputs(
            &d.join("data"),
            None,
            std::slice::from_ref(&input),
            FIX_CONFIG,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("an input the run reads"), "{e}");
        let e = refuse_over_inputs(&d, Some(&input), &[], FIX_CONFIG)
            .unwrap_err()
            .to_string();
        assert!(e.contains("the config being run"), "{e}");
        // Through a link to the folder, and a folder beside it, is fine.
        std::os::unix::fs::symlink(d.join("data"), d.join("alias")).unwrap();
        assert!(refuse_over_inputs(
            &d.join("alias"),
            None,
            std::slice::from_ref(&input),
            FIX_CONFIG
        )
        .is_err());
        refuse_over_inputs(&d.join("results/x"), None, &[input], FIX_CONFIG).unwrap();
        std::fs::remove_dir_all(&d).ok();
    }
}
