//! Ownership, continued (see `ownership.rs`): reports, locks, signals and configs the user
//! edited, through the binary, with decoy user files compared byte for byte.

use super::ownership::*;
use super::scratch;
use crate::common::{bin, one_line_error, root, run, run_ok, skipped, write};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The report under `out` left no temporary or lock file and its index links the page of
/// results folder `name`.
fn report_is_whole(out: &Path, name: &str) {
    let leftovers: Vec<String> = snapshot(out)
        .into_keys()
        .filter(|k| k.contains(".tmp") || k.ends_with(".lock"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(std::fs::read_to_string(out.join("index.html"))
        .unwrap()
        .contains(&format!("report/{name}.html")));
}

#[test]
fn two_reports_at_once_both_succeed() {
    let dir = scratch("h10");
    let out = dir.join("results");
    for n in ["a", "b", "c"] {
        run_ok(&small_board(&dir, n));
    }
    for _ in 0..5 {
        let kids: Vec<_> = (0..2)
            .map(|_| {
                bin()
                    .args(["report", out.to_str().unwrap()])
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for k in kids {
            let o = k.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
        }
    }
    report_is_whole(&out, "c");
}

#[test]
fn report_destination_problems_are_found_before_computing() {
    let dir = scratch("h11");
    user_folder(&dir);
    let new = dir.join("new");
    std::fs::create_dir_all(new.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(new.join("elsewhere"), new.join("report")).unwrap();
    let before = snapshot(&dir);
    let t0 = std::time::Instant::now();
    // --name report, a pages folder that is a link, one that is a file, a user's index.html.
    let err = one_line_error(&cluster(
        &dir,
        &["data.csv", "--name", "report", "--output-dir", "x"],
    ));
    assert!(err.contains("named \"report\""), "{err}");
    let err = one_line_error(&cluster(&dir, &["data.csv", "--output-dir", "new"]));
    assert!(err.contains("new/report is a symbolic link"), "{err}");
    std::fs::create_dir_all(dir.join("filed")).unwrap();
    write(&dir.join("filed/report"), "a file");
    let err = one_line_error(&cluster(&dir, &["data.csv", "--output-dir", "filed"]));
    assert!(err.contains("filed/report is a file"), "{err}");
    std::fs::remove_dir_all(dir.join("filed")).unwrap();
    let err = one_line_error(&cluster(
        &dir,
        &["Documents.csv", "--name", "mine", "--output-dir", "."],
    ));
    assert!(
        err.contains("./index.html is not listed as written"),
        "{err}"
    );
    assert_eq!(snapshot(&dir), before);
    // Refused before the methods ran (they take far longer than the checks).
    assert!(t0.elapsed().as_secs() < 30);
}

#[test]
fn an_output_dir_naming_a_file_says_the_path_and_the_fix() {
    let dir = scratch("h12");
    user_folder(&dir);
    let before = snapshot(&dir);
    for out in ["index.html", "index.html/sub"] {
        let err = one_line_error(&cluster(&dir, &["data.csv", "--output-dir", out]));
        assert!(
            err.contains("--output-dir") && err.contains("index.html is a file, not a folder"),
            "{err}"
        );
        assert!(!err.contains("os error"), "{err}");
    }
    assert_eq!(snapshot(&dir), before);
}

/// Runs `cfg` with each commit step pausing, sends `signal` during the pause after the swap,
/// and returns the process id.
fn signal_after_swap(cfg: &Path, signal: &str) -> u32 {
    let (mut child, _) = paused_at(
        bin().args(["run", cfg.to_str().unwrap(), "--force"]),
        COMMIT_PAUSE,
        "5000",
        "after the swap",
    );
    let pid = child.id();
    assert!(Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap()
        .success());
    assert!(!child.wait().unwrap().success());
    pid
}

#[test]
fn a_signal_right_after_the_swap_leaves_no_old_run_behind() {
    let dir = scratch("h13");
    let cfg = small_board(&dir, "b");
    run_ok(&cfg);
    for signal in ["INT", "TERM", "KILL"] {
        let pid = signal_after_swap(&cfg, signal);
        let old = dir.join(format!("results/.b.staging-{pid}"));
        if signal == "KILL" {
            // Nothing can run at a SIGKILL: the next run removes it, even when it has nothing
            // to compute.
            assert!(old.is_dir());
            assert!(skipped(run(&cfg)));
        }
        assert!(!old.exists(), "SIG{signal} left {}", old.display());
        assert!(dir.join("results/b/manifest.json").is_file());
    }
}

// The findings of an adversarial probe of the rule above, one test each.

/// A board config on the labelled points example (greedy only), named `name`, writing to
/// `dir/out`.
fn points_board(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(format!("{name}.toml"));
    write(
        &p,
        &format!(
            "[experiment]\nkind = \"board\"\nname = \"{name}\"\nseed = 1\noutput_dir = \"out\"\n[board]\nmethods = [\"greedy\"]\n[[board.datasets]]\nname = \"p\"\nsource = \"file\"\npath = \"{}\"\nlabel_column = \"kind\"\n",
            root().join("data/examples/points_labelled.csv").display()
        ),
    );
    p
}

#[test]
fn staging_and_journal_names_are_removed_only_when_provably_the_programs() {
    let dir = scratch("h14");
    let out = dir.join("out");
    std::fs::create_dir_all(out.join(".pts.staging-124")).unwrap();
    write(&out.join(".pts.staging-123"), "my draft");
    write(&out.join(".pts.staging-124/keep.txt"), "keep me");
    write(&out.join(".pts.journal"), "my notes");
    std::fs::create_dir_all(out.join("pts")).unwrap();
    write(&out.join("pts/thesis.tex"), "thesis");
    let cfg = points_board(&dir, "pts");
    let before = snapshot(&dir);
    // Refused for the folder; nothing else touched.
    one_line_error(&run(&cfg));
    assert_eq!(snapshot(&dir), before);
    // Refused for the journal once the folder is gone; the staging names stay.
    std::fs::remove_dir_all(out.join("pts")).unwrap();
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains(".pts.journal") && err.contains("not a journal"),
        "{err}"
    );
    std::fs::remove_file(out.join(".pts.journal")).unwrap();
    run_ok(&cfg);
    assert_eq!(
        std::fs::read_to_string(out.join(".pts.staging-123")).unwrap(),
        "my draft"
    );
    assert_eq!(
        std::fs::read_to_string(out.join(".pts.staging-124/keep.txt")).unwrap(),
        "keep me"
    );
    // A data file at the journal's name is not deleted as an old journal.
    let data = out.join(".x.journal");
    std::fs::copy(root().join("data/examples/similarities.csv"), &data).unwrap();
    let bytes = std::fs::read(&data).unwrap();
    let err = one_line_error(&cluster(
        &dir,
        &[
            "out/.x.journal",
            "--similarity",
            "--name",
            "x",
            "--output-dir",
            "out",
        ],
    ));
    assert!(err.contains(".x.journal"), "{err}");
    assert_eq!(std::fs::read(&data).unwrap(), bytes);
}

#[test]
fn check_neither_deletes_nor_writes_in_a_folder_not_its_own() {
    let dir = scratch("h15");
    // A user's folder with a manifest and a checks.parquet of their own.
    std::fs::create_dir_all(dir.join("Documents")).unwrap();
    write(
        &dir.join("Documents/manifest.json"),
        "{\"name\": \"my web app\"}",
    );
    write(&dir.join("Documents/checks.parquet"), "my data");
    let before = snapshot(&dir);
    let check = |d: &Path| bin().args(["check", d.to_str().unwrap()]).output().unwrap();
    one_line_error(&check(&dir.join("Documents")));
    assert_eq!(snapshot(&dir), before);
    // A copy of results under another name, with the user's verdicts in it.
    let cfg = small_board(&dir, "b");
    run_ok(&cfg);
    let copy = dir.join("backup_b");
    std::fs::create_dir_all(&copy).unwrap();
    for f in std::fs::read_dir(dir.join("results/b")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), copy.join(f.file_name())).unwrap();
    }
    write(&copy.join("checks.parquet"), "my own verdicts");
    let err = one_line_error(&check(&copy));
    assert!(err.contains("results named \"b\""), "{err}");
    assert_eq!(
        std::fs::read_to_string(copy.join("checks.parquet")).unwrap(),
        "my own verdicts"
    );
    // This program's folder with a user's file added: refused, its checks.parquet kept.
    let res = dir.join("results/b");
    ok(check(&res));
    let verdicts = std::fs::read(res.join("checks.parquet")).unwrap();
    write(&res.join("notes.txt"), "mine");
    let err = one_line_error(&check(&res));
    assert!(err.contains("notes.txt"), "{err}");
    assert_eq!(std::fs::read(res.join("checks.parquet")).unwrap(), verdicts);
}

#[test]
fn report_removes_only_what_it_listed() {
    let dir = scratch("h16");
    let out = dir.join("results");
    run_ok(&small_board(&dir, "b"));
    ok(report(&out));
    // A report of an earlier version has no list: its pages are never pruned by their line.
    std::fs::remove_file(out.join("report/.trellis-report.json")).unwrap();
    let copy = "<!DOCTYPE html><head><meta name=\"generator\" content=\"trellis-lab report\"></head><body>my annotated copy</body>\n";
    write(&out.join("report/b-annotated.html"), copy);
    // Names like the report's temporary files, the user's.
    write(&out.join("index.html.tmp-77"), "mine");
    write(&out.join("report/notes.html.tmp-78"), "mine");
    write(&out.join("report/.trellis-report.json.tmp-79"), "mine");
    // Without the list the earlier pages are not provably the report's: refused, nothing touched.
    let whole = snapshot(&out);
    let err = one_line_error(&report(&out));
    assert!(err.contains("is not listed as written"), "{err}");
    assert_eq!(snapshot(&out), whole);
    // The user moves the earlier pages away (the annotated copy stays): the report writes anew.
    std::fs::remove_file(out.join("index.html")).unwrap();
    for f in std::fs::read_dir(out.join("report")).unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains("annotated") && !name.contains(".tmp-") {
            std::fs::remove_file(&p).unwrap();
        }
    }
    let before: BTreeMap<String, Vec<u8>> = snapshot(&out)
        .into_iter()
        .filter(|(k, _)| k.contains("annotated") || k.contains(".tmp-"))
        .collect();
    ok(report(&out));
    let after: BTreeMap<String, Vec<u8>> = snapshot(&out)
        .into_iter()
        .filter(|(k, _)| k.contains("annotated") || k.contains(".tmp-"))
        .collect();
    assert_eq!(after, before);
    // A file of the user's at the list's name is refused, not overwritten.
    write(
        &out.join("report/.trellis-report.json"),
        "{\"my\": \"settings\"}",
    );
    let err = one_line_error(&report(&out));
    assert!(
        err.contains(".trellis-report.json") && err.contains("not such a list"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("report/.trellis-report.json")).unwrap(),
        "{\"my\": \"settings\"}"
    );
}

#[test]
fn force_never_replaces_user_files_at_temporary_names() {
    let dir = scratch("h17");
    let cfg = small_board(&dir, "b");
    run_ok(&cfg);
    let res = dir.join("results/b");
    write(&res.join("manifest.tmp.json"), "my edited manifest");
    write(&res.join("board.tmp.parquet"), "x");
    std::fs::create_dir_all(res.join(".figures.staging-99999")).unwrap();
    write(&res.join(".figures.staging-99999/fig.svg"), "my drawing");
    let before = snapshot(&res);
    for args in [
        vec!["run", cfg.to_str().unwrap(), "--force"],
        vec!["plot", res.to_str().unwrap()],
    ] {
        let err = one_line_error(&bin().args(&args).output().unwrap());
        assert!(err.contains(".figures.staging-99999"), "{err}");
        assert_eq!(snapshot(&res), before, "{args:?}");
    }
}

#[test]
fn a_shard_the_program_wrote_can_be_run_again() {
    let dir = scratch("h18");
    let cfg = points_board(&dir, "pts");
    let shard = |force: bool| {
        let mut c = bin();
        c.args(["run", cfg.to_str().unwrap(), "--shard", "0/2"]);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    ok(shard(false));
    let folder = dir.join("out/pts.shard-0-of-2");
    let mut files: Vec<String> = snapshot(&folder).into_keys().collect();
    files.sort();
    assert_eq!(files, ["journal.bin", "shard.json"]);
    assert!(skipped(shard(false)));
    ok(shard(true));
}

#[test]
fn sigint_leaves_no_lock_file_or_folder_it_created() {
    let dir = scratch("h19");
    let cfg = dir.join("c.toml");
    write(
        &cfg,
        "[experiment]\nkind = \"jets\"\nname = \"j\"\nseed = 1\noutput_dir = \"deep/er/out\"\n[jets]\nsource = \"generate\"\nn_jets = 2\nmax_leaves = 5\n",
    );
    let (mut child, _) = paused_at(
        bin().args(["run", cfg.to_str().unwrap()]),
        COMMIT_PAUSE,
        "20000",
        "before the swap",
    );
    assert!(dir.join("deep/er/out/.j.lock").exists());
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    assert!(!child.wait().unwrap().success());
    assert!(!dir.join("deep").exists(), "{:?}", snapshot(&dir));
}

#[test]
fn usage_errors_are_one_line() {
    for args in [
        vec!["run", "--shard", "2/2", "x.toml"],
        vec!["check", ""],
        vec!["cluster", "--name", "-x", "a.csv"],
        vec!["nonsense"],
    ] {
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains("--help"),
            "{err}"
        );
    }
}

// The findings of a second probe, one test each.

#[test]
fn cluster_never_overwrites_a_config_the_user_edited_and_ran() {
    let dir = scratch("h21");
    user_folder(&dir);
    std::fs::remove_file(dir.join("index.html")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    write(&dir.join("out/data.tmp.toml"), "MY TEMPLATE");
    let args = [
        "data.csv",
        "--label-column",
        "kind",
        "--methods",
        "greedy",
        "--output-dir",
        "out",
    ];
    ok(cluster(&dir, &args));
    // Tuned and run by hand: the manifest then records the user's file, not a generated one.
    let config = dir.join("out/data.toml");
    let mine = std::fs::read_to_string(&config)
        .unwrap()
        .replace("seed = 1", "seed = 7  # my tuned seed");
    write(&config, &mine);
    run_ok(&config);
    let out = ok(cluster(&dir, &args));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), mine);
    assert!(stderr(&out).contains("data.1.toml"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("out/data.tmp.toml")).unwrap(),
        "MY TEMPLATE"
    );
}

#[test]
fn a_config_saved_while_cluster_computes_is_left_as_it_is() {
    let dir = scratch("h22");
    user_folder(&dir);
    let (mut child, lines) = paused_at(
        bin().current_dir(&dir).args([
            "cluster",
            "data.csv",
            "--label-column",
            "kind",
            "--methods",
            "greedy",
            "--output-dir",
            "out",
        ]),
        COMMIT_PAUSE,
        "1500",
        "before the swap",
    );
    write(&dir.join("out/data.toml"), "my own config");
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert!(!child.wait().unwrap().success());
    let err = rest.last().cloned().unwrap_or_default();
    assert!(err.contains("out/data.toml changed while"), "{rest:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("out/data.toml")).unwrap(),
        "my own config"
    );
    assert!(dir.join("out/data/manifest.json").is_file());
}

#[test]
fn a_report_killed_while_it_moves_pages_leaves_the_next_one_free() {
    let dir = scratch("h23");
    let out = dir.join("results");
    for n in ["a", "b", "c"] {
        run_ok(&small_board(&dir, n));
    }
    ok(report(&out));
    // New contents for every page (another results folder joins), killed after the first page.
    run_ok(&small_board(&dir, "d"));
    let (mut child, _) = paused_at(
        bin().args(["report", out.to_str().unwrap()]),
        "TRELLIS_LAB_TEST_REPORT_PAUSE_MS",
        "5000",
        "pausing",
    );
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    ok(report(&out));
    report_is_whole(&out, "d");
}

#[test]
fn a_lock_file_a_killed_run_left_is_removed_by_the_next_run() {
    let dir = scratch("h24");
    let cfg = small_board(&dir, "b");
    let (mut child, _) = paused_at(
        bin().args(["run", cfg.to_str().unwrap()]),
        COMMIT_PAUSE,
        "5000",
        "before the swap",
    );
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    let lock = dir.join("results/.b.lock");
    assert!(lock.exists(), "a SIGKILL leaves the lock file");
    run_ok(&cfg);
    assert!(!lock.exists());
    // A user's file at the lock's name is never removed.
    write(&lock, "mine");
    run_ok(&cfg);
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), "mine");
}
