//! Runs that outgrow one process (issue 13): `run --shard I/N` in separate processes merged by
//! `merge` give the single run's tables and figures; a run killed part-way (SIGKILL) resumes
//! from its journal without recomputing finished jobs and gives the same results.

use crate::common::{bin, config_copy, one_line_error, root, scratch};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use trellis_lab::experiment::staging::list_files;
use trellis_lab::experiment::table::read_parquet;

/// Columns that hold wall times or memory (they differ between processes).
const MEASURED: [&str; 4] = [
    "seconds",
    "peak_bytes",
    "seconds_sd",
    "exact_scoring_seconds",
];

fn ok(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every Parquet table of `a` equals `b`'s bit for bit, measured columns aside; so do the
/// `figures` (drawn from quality alone).
fn same_results(a: &Path, b: &Path) {
    same_tables(
        a,
        b,
        &[
            "heatmap_dendrogram_purity.png",
            "heatmap_ginkgo_log_likelihood.svg",
        ],
    );
}

fn same_tables(a: &Path, b: &Path, figures: &[&str]) {
    let files = list_files(a).unwrap();
    let mut tables = 0;
    for f in files.iter().filter(|f| f.ends_with(".parquet")) {
        let (ta, tb) = (
            read_parquet(&a.join(f)).unwrap(),
            read_parquet(&b.join(f)).unwrap(),
        );
        assert_eq!(ta.get_column_names(), tb.get_column_names(), "{f}");
        assert_eq!(ta.height(), tb.height(), "{f}");
        for col in ta.get_column_names() {
            if MEASURED.contains(&col.as_str()) {
                continue;
            }
            let text = |t: &polars::prelude::DataFrame| {
                format!(
                    "{:?}",
                    t.column(col)
                        .unwrap()
                        .as_materialized_series()
                        .iter()
                        .collect::<Vec<_>>()
                )
            };
            assert_eq!(text(&ta), text(&tb), "{f}: column {col} differs");
        }
        tables += 1;
    }
    assert!(tables >= 2, "compared {tables} tables");
    for f in figures {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

fn smoke(dir: &Path, out: &Path, file: &str) -> PathBuf {
    config_copy(dir, "board_smoke", out, None, file, |t| t)
}

#[test]
fn three_shard_processes_merge_into_the_single_run_bit_for_bit() {
    let dir = scratch("shards", "merge");
    let single = smoke(&dir, &dir.join("single"), "single.toml");
    ok(bin().args(["run", single.to_str().unwrap()]));
    let cfg = smoke(&dir, &dir.join("sharded"), "sharded.toml");
    // Three processes at once, as a job array would run them.
    let children: Vec<_> = (0..3)
        .map(|i| {
            bin()
                .args(["run", cfg.to_str().unwrap(), "--shard", &format!("{i}/3")])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| {
            dir.join("sharded")
                .join(format!("board_smoke.shard-{i}-of-3"))
        })
        .collect();
    // Each shard computed its own part only.
    let jobs: Vec<u64> = shards
        .iter()
        .map(|s| {
            let info: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(s.join("shard.json")).unwrap())
                    .unwrap();
            info["jobs"].as_u64().unwrap()
        })
        .collect();
    let total: u64 = jobs.iter().sum();
    assert!(jobs.iter().all(|&j| j > 0 && j < total), "{jobs:?}");

    // Two shards are not enough.
    let out = bin().arg("merge").args(&shards[..2]).output().unwrap();
    let e = one_line_error(&out);
    assert!(e.contains("shard 2/3 is missing"), "{e}");

    ok(bin().arg("merge").args(&shards));
    let merged = dir.join("sharded").join("board_smoke");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["jobs"]["computed"], 0, "the merge recomputed jobs");
    assert_eq!(manifest["jobs"]["reused"].as_u64(), Some(total));
    assert_eq!(manifest["merged_shards"], 3);
    same_results(&dir.join("single").join("board_smoke"), &merged);
    ok(bin().args(["check", merged.to_str().unwrap()]));
    std::fs::remove_dir_all(&dir).ok();
}

/// Records in a journal (frames of `len u32 | checksum u64 | bytes`), header excluded.
fn journal_records(path: &Path) -> usize {
    let bytes = std::fs::read(path).unwrap_or_default();
    let (mut at, mut n) = (0usize, 0usize);
    while bytes.len() >= at + 12 {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        if at + 12 + len > bytes.len() {
            break;
        }
        at += 12 + len;
        n += 1;
    }
    n.saturating_sub(1)
}

#[test]
fn a_killed_run_resumes_without_recomputing_finished_jobs() {
    let dir = scratch("shards", "resume");
    let cfg = smoke(&dir, &dir.join("out"), "resume.toml");
    let journal = dir.join("out").join(".board_smoke.journal");
    let mut child = bin()
        .args(["run", cfg.to_str().unwrap()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut killed_at = 0;
    while t0.elapsed() < Duration::from_secs(120) {
        let n = journal_records(&journal);
        if n >= 10 {
            // SIGKILL: no destructor, no clean-up.
            child.kill().unwrap();
            killed_at = n;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.wait().unwrap();
    assert!(killed_at >= 10, "the run ended before it could be killed");
    assert!(!dir
        .join("out")
        .join("board_smoke")
        .join("manifest.json")
        .exists());
    ok(bin().args(["run", cfg.to_str().unwrap()]));
    let resumed = dir.join("out").join("board_smoke");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(resumed.join("manifest.json")).unwrap())
            .unwrap();
    let reused = manifest["jobs"]["reused"].as_u64().unwrap();
    let computed = manifest["jobs"]["computed"].as_u64().unwrap();
    assert!(
        reused >= killed_at as u64,
        "reused {reused} of {killed_at} finished jobs"
    );
    assert!(computed > 0, "nothing was left to compute");
    // The journal is gone once the results are in place.
    assert!(!journal.exists());
    // Same results as a run that was never killed.
    let fresh = smoke(&dir, &dir.join("fresh"), "fresh.toml");
    ok(bin().args(["run", fresh.to_str().unwrap()]));
    same_results(&dir.join("fresh").join("board_smoke"), &resumed);
    let _ = root();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shard_errors_are_one_line() {
    let dir = scratch("shards", "errors");
    // A kind that does not divide into jobs.
    let jets = config_copy(
        &dir,
        "jets_smoke",
        &dir.join("out"),
        None,
        "jets.toml",
        |t| t,
    );
    let out = bin()
        .args(["run", jets.to_str().unwrap(), "--shard", "0/2"])
        .output()
        .unwrap();
    let e = one_line_error(&out);
    assert!(e.contains("without --shard"), "{e}");
    // Not a shard folder.
    let out = bin()
        .args(["merge", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let e = one_line_error(&out);
    assert!(e.contains("not a finished shard folder"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_coalescent_kinds_shard_and_merge_too() {
    for name in ["usps_smoke", "coalescent_smoke"] {
        let dir = scratch("shards", name);
        let single = config_copy(&dir, name, &dir.join("single"), None, "single.toml", |t| t);
        ok(bin().args(["run", single.to_str().unwrap()]));
        let cfg = config_copy(
            &dir,
            name,
            &dir.join("sharded"),
            None,
            "sharded.toml",
            |t| t,
        );
        for i in 0..2 {
            ok(bin().args(["run", cfg.to_str().unwrap(), "--shard", &format!("{i}/2")]));
        }
        let shards: Vec<PathBuf> = (0..2)
            .map(|i| dir.join("sharded").join(format!("{name}.shard-{i}-of-2")))
            .collect();
        ok(bin().arg("merge").args(&shards));
        let merged = dir.join("sharded").join(name);
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(merged.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(
            manifest["jobs"]["computed"], 0,
            "{name}: the merge recomputed jobs"
        );
        same_tables(&dir.join("single").join(name), &merged, &[]);
        ok(bin().args(["check", merged.to_str().unwrap()]));
        std::fs::remove_dir_all(&dir).ok();
    }
}
