//! The second round of reliability findings (issue 27), one test each, through the binary:
//! nothing is written through a link, no commit leaves a mixed folder, `check` and `plot` take
//! the folder's lock, every size is bounded, no silent non-finite result, and one-line messages.

use super::{capped, config, repo_config, scratch};
use crate::common::{bin, one_line_error, root, run, run_ok, skipped, write};
use std::io::BufRead;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A file outside every results folder that must never change.
fn victim(dir: &Path) -> PathBuf {
    let v = dir.join("victim.txt");
    write(&v, "precious");
    v
}

fn untouched(v: &Path) {
    let meta = std::fs::symlink_metadata(v).unwrap();
    assert!(meta.is_file(), "{} was replaced", v.display());
    assert_eq!(std::fs::read_to_string(v).unwrap(), "precious");
}

/// A small jets config (generated jets, trellis switchable) in `dir`.
fn small_jets(dir: &Path, trellis: bool) -> PathBuf {
    config(
        dir,
        "small",
        "jets",
        &format!(
            "[jets]\nsource = \"generate\"\nn_jets = 20\nmin_leaves = 4\nmax_leaves = 7\n[methods]\ntrellis = {trellis}\n"
        ),
    )
}

/// A one-size A* config (a kind whose jobs are journalled) in `dir`.
fn small_astar(dir: &Path) -> PathBuf {
    repo_config(dir, "astar_smoke", |t| {
        t.replace("sizes = [8, 10, 12]", "sizes = [8]")
            .replace("jets_per_size = 2", "jets_per_size = 1")
    })
}

/// A pydt config (one Gaussian DDT, a 3-step MCMC) on the points file `file`, in `dir`.
fn pydt_on(dir: &Path, file: &Path) -> PathBuf {
    config(
        dir,
        "p",
        "pydt",
        &format!(
            "[pydt.data]\nsource = \"file\"\npath = \"{}\"\n[[pydt.models]]\nname = \"G\"\n[pydt.mcmc]\nchains = 1\niterations = 3\n",
            file.display()
        ),
    )
}

/// A coalescent_labelled config (average linkage, 2 points per class) named `name` on the
/// labelled points file `file` (label column `kind`), in `dir`.
fn coalescent_on(dir: &Path, name: &str, file: &Path) -> PathBuf {
    config(
        dir,
        name,
        "coalescent_labelled",
        &format!(
            "[coalescent_labelled]\nsubsets = 1\nper_class = 2\nmethods = [\"average_linkage\"]\n[coalescent_labelled.data]\nsource = \"file\"\npaths = [\"{}\"]\nlabel_column = \"kind\"\n[coalescent_labelled.covariance]\nkernel = \"isotropic\"\nell = 1.0\nlearn = \"ell\"\n",
            file.display()
        ),
    )
}

/// The names in folder `dir` that contain `part`.
fn names_in(dir: &Path, part: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.contains(part))
        .collect()
}

fn check(res: &Path) -> Output {
    bin()
        .args(["check", res.to_str().unwrap()])
        .output()
        .unwrap()
}

fn manifest(res: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(res.join("manifest.json")).unwrap()).unwrap()
}

/// The folder holds exactly the outputs its manifest lists (plus the manifest, and checks).
fn whole(res: &Path) {
    let m = manifest(res);
    let mut listed: Vec<String> = m["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    listed.push("manifest.json".into());
    listed.sort();
    let files: Vec<String> = trellis_lab::experiment::staging::list_files(res)
        .unwrap()
        .into_iter()
        .filter(|f| f != "checks.parquet")
        .collect();
    assert_eq!(files, listed, "{} mixes runs", res.display());
}

#[test]
fn a_link_at_the_journal_name_is_refused_never_written_through() {
    let dir = scratch("g01");
    let v = victim(&dir);
    let cfg = small_astar(&dir);
    std::fs::create_dir_all(dir.join("results")).unwrap();
    symlink(&v, dir.join("results/.astar_smoke.journal")).unwrap();
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains(".astar_smoke.journal") && err.contains("symbolic link"),
        "{err}"
    );
    untouched(&v);
    // A link to /dev/zero and a FIFO: named, with the fix, at once (a FIFO is never waited on).
    std::fs::remove_file(dir.join("results/.astar_smoke.journal")).unwrap();
    symlink("/dev/zero", dir.join("results/.astar_smoke.journal")).unwrap();
    let err = one_line_error(&capped(&["run", cfg.to_str().unwrap()]));
    assert!(
        err.contains(".astar_smoke.journal") && err.contains("move it away"),
        "{err}"
    );
    std::fs::remove_file(dir.join("results/.astar_smoke.journal")).unwrap();
    let fifo = dir.join("results/.astar_smoke.journal");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let t0 = Instant::now();
    let err = one_line_error(&capped(&["run", cfg.to_str().unwrap()]));
    assert!(
        err.contains("FIFO") && err.contains("move it away"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_link_at_the_lock_name_is_refused_and_creates_nothing() {
    let dir = scratch("g02");
    let cfg = small_jets(&dir, false);
    std::fs::create_dir_all(dir.join("results")).unwrap();
    let target = dir.join("created-through-the-link");
    symlink(&target, dir.join("results/.small.lock")).unwrap();
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains(".small.lock") && err.contains("symbolic link"),
        "{err}"
    );
    assert!(!target.exists(), "the lock was created through the link");
}

#[test]
fn check_and_report_replace_links_at_their_temporary_names() {
    let dir = scratch("g03");
    let v = victim(&dir);
    let cfg = repo_config(&dir, "jets_smoke", |t| t);
    run_ok(&cfg);
    let res = dir.join("results/jets_smoke");
    // A link inside the results folder makes it a folder the program did not write alone:
    // refused, the link's target untouched; without the link, `check` writes a regular file.
    symlink(&v, res.join("checks.tmp.parquet")).unwrap();
    let err = one_line_error(&check(&res));
    assert!(err.contains("checks.tmp.parquet"), "{err}");
    untouched(&v);
    std::fs::remove_file(res.join("checks.tmp.parquet")).unwrap();
    assert!(check(&res).status.success());
    untouched(&v);
    assert!(std::fs::symlink_metadata(res.join("checks.parquet"))
        .unwrap()
        .is_file());
    // The report's temporary index and page names.
    let root_dir = dir.join("results");
    std::fs::create_dir_all(root_dir.join("report")).unwrap();
    symlink(&v, root_dir.join("index.html.tmp")).unwrap();
    symlink(&v, root_dir.join("report/jets_smoke.html.tmp")).unwrap();
    let out = bin()
        .args(["report", root_dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    untouched(&v);
    assert!(std::fs::read_to_string(root_dir.join("index.html"))
        .unwrap()
        .contains("jets_smoke"));
    // A pages folder that is a link elsewhere is refused (the report prunes its pages).
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    write(&elsewhere.join("mine.html"), "a user's page");
    std::fs::remove_dir_all(root_dir.join("report")).unwrap();
    symlink(&elsewhere, root_dir.join("report")).unwrap();
    let err = one_line_error(
        &bin()
            .args(["report", root_dir.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("symbolic link"), "{err}");
    assert!(elsewhere.join("mine.html").exists());
}

/// Runs `cfg` with every commit pausing 5 s at each step, and SIGKILLs it during the pause
/// `step` ("before the swap" or "after the swap").
fn kill_during_commit(cfg: &Path, step: &str) {
    let mut child = bin()
        .args(["run", cfg.to_str().unwrap(), "--force"])
        .env("TRELLIS_LAB_TEST_COMMIT_PAUSE_MS", "5000")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    for line in stderr.lines() {
        if line.unwrap().contains(step) {
            child.kill().unwrap();
            break;
        }
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run ended before it could be killed");
}

#[test]
fn a_commit_killed_at_any_step_leaves_one_whole_run() {
    let dir = scratch("g04");
    let res = dir.join("results/small");
    let without = small_jets(&dir, false);
    run_ok(&without);
    whole(&res);
    // Killed before the swap: the old run stays, whole, and is still up to date.
    let with = small_jets(&dir, true);
    kill_during_commit(&with, "before the swap");
    let without = small_jets(&dir, false);
    whole(&res);
    assert!(!res.join("fig5_logz_vs_map.png").exists());
    assert!(
        skipped(run(&without)),
        "the old run is complete and current"
    );
    // Killed after the swap (the old folder not yet removed): the new run is in place, whole.
    let with = small_jets(&dir, true);
    kill_during_commit(&with, "after the swap");
    whole(&res);
    assert!(res.join("fig5_logz_vs_map.png").exists());
    assert!(skipped(run(&with)));
    // Back to the run without Figure 5: it goes, and the folder is still whole.
    let without = small_jets(&dir, false);
    run_ok(&without);
    run_ok(&without);
    whole(&res);
    assert!(!res.join("fig5_logz_vs_map.png").exists());
    // No staging folder of a killed process is left after the next run.
    let leftovers = names_in(&dir.join("results"), ".staging-");
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn check_and_plot_take_the_folders_lock() {
    let dir = scratch("g05");
    let cfg = repo_config(&dir, "jets_smoke", |t| t);
    run_ok(&cfg);
    let res = dir.join("results/jets_smoke");
    let held = trellis_lab::experiment::staging::lock_results(&res).unwrap();
    for cmd in ["check", "plot"] {
        let out = bin().args([cmd, res.to_str().unwrap()]).output().unwrap();
        let err = one_line_error(&out);
        assert!(err.contains("another process is writing"), "{cmd}: {err}");
    }
    assert!(!res.join("checks.parquet").exists());
    drop(held);
    assert!(check(&res).status.success());
    // A new run replaces the folder whole: the old verdicts go with it.
    let reseeded = repo_config(&dir, "jets_smoke", |t| {
        t.replace("seed = 101", "seed = 999")
    });
    run_ok(&reseeded);
    assert!(!res.join("checks.parquet").exists());
    // Verdicts of another run copied in are not shown by the report.
    let other = scratch("g05-other");
    let cfg2 = repo_config(&other, "jets_smoke", |t| t);
    run_ok(&cfg2);
    assert!(check(&other.join("results/jets_smoke")).status.success());
    std::fs::copy(
        other.join("results/jets_smoke/checks.parquet"),
        res.join("checks.parquet"),
    )
    .unwrap();
    let out = bin()
        .args(["report", dir.join("results").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = std::fs::read_to_string(dir.join("results/report/jets_smoke.html")).unwrap();
    assert!(
        page.contains("No verdicts shown") && page.contains("another manifest"),
        "stale verdicts shown"
    );
    std::fs::remove_dir_all(&other).ok();
}

#[test]
fn a_million_features_are_refused_at_load_with_the_memory() {
    let dir = scratch("g06");
    let d = 1_000_000;
    let mut text = (1..=d)
        .map(|j| format!("f{j}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for r in 0..3 {
        let row: Vec<String> = (0..d).map(|j| ((j + r) % 7).to_string()).collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    write(&dir.join("wide.csv"), &text);
    let cfg = pydt_on(&dir, &dir.join("wide.csv"));
    let t0 = Instant::now();
    let err = one_line_error(&capped(&["run", cfg.to_str().unwrap()]));
    assert!(
        err.contains("1000000 features") && err.contains("GiB of memory"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(60));
    assert!(!dir.join("results/p").exists());
}

#[test]
fn scaling_repeats_go_through_the_cost_model() {
    let dir = scratch("g07");
    let cfg = repo_config(&dir, "scaling_smoke", |t| {
        t.replace("repeats = 3", "repeats = 1000000000000")
    });
    let out = capped(&["run", cfg.to_str().unwrap()]);
    let err = one_line_error(&out);
    assert!(
        err.contains("scaling.repeats") && err.contains("would take about"),
        "{err}"
    );
    let cfg = repo_config(&dir, "jets_smoke", |t| {
        t.replace("n_jets = 300", "n_jets = 300\nmax_tries = 1000000000000")
    });
    let err = one_line_error(&capped(&["run", cfg.to_str().unwrap()]));
    assert!(
        err.contains("jets.max_tries") && err.contains("would take about"),
        "{err}"
    );
}

#[test]
fn exact_limits_beyond_the_machines_memory_are_refused_before_any_output() {
    let dir = scratch("g08");
    for n in [27, 32] {
        let cfg = repo_config(&dir, "jets_smoke", |t| {
            t.replace(
                "trellis = true",
                &format!("trellis = true\nmax_exact_leaves = {n}"),
            )
        });
        let err = one_line_error(&capped(&["run", cfg.to_str().unwrap()]));
        assert!(
            err.contains("methods.max_exact_leaves") && err.contains("fit here"),
            "{err}"
        );
        let data = root().join("data/ginkgo_jets/truth_9.json");
        let out = capped(&[
            "score",
            data.to_str().unwrap(),
            "--max-exact-leaves",
            &n.to_string(),
        ]);
        let err = one_line_error(&out);
        assert!(
            err.contains("--max-exact-leaves") && err.contains("fit here"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    let results = dir.join("results");
    assert!(
        !results.exists() || std::fs::read_dir(&results).unwrap().next().is_none(),
        "output or a staging folder was left"
    );
}

/// A jets file of one 3-leaf jet with `edit` applied to its text.
fn jet_file(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let text = r#"{"source": "test", "jets": [{"name": "j", "n_leaves": 3, "t_cut": 16.0, "lam": 1.5, "lam_root": 1.5, "M_hard": 30.0,
      "leaves": [[40.0, 1.0, 2.0, 30.0], [30.0, -2.0, 1.0, 20.0], [20.0, 1.0, -1.0, 10.0]]}]}"#;
    let p = dir.join(name);
    write(&p, &edit(text.to_string()));
    p
}

#[test]
fn no_silent_non_finite_result() {
    let dir = scratch("g09");
    // score: the plain jet scores; extreme parameters and odd particles are one-line errors.
    let ok = jet_file(&dir, "ok.json", |t| t);
    let out = bin()
        .args(["score", ok.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("null,"));
    for (edit, needle) in [
        (("\"lam\": 1.5", "\"lam\": 1e308"), "lam = 1e308"),
        (("\"t_cut\": 16.0", "\"t_cut\": 1e308"), "t_cut = 1e308"),
        (
            ("[20.0, 1.0, -1.0, 10.0]", "[1e-310, 0.0, 0.0, 0.0]"),
            "too small",
        ),
        (
            ("[20.0, 1.0, -1.0, 10.0]", "[20.0, 1.0, -1.0, 30.0]"),
            "space-like",
        ),
    ] {
        let f = jet_file(&dir, "bad.json", |t| t.replace(edit.0, edit.1));
        let out = bin().args(["score", f.to_str().unwrap()]).output().unwrap();
        let err = one_line_error(&out);
        assert!(err.contains(needle), "{needle}: {err}");
        assert!(out.stdout.is_empty());
    }
    // Dasgupta and pam50 at beta = 1e308; pam50 with no pair of one subtype.
    let cfg = repo_config(&dir, "dasgupta", |t| {
        t.replace("beta = 1.0", "beta = 1e308")
    });
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("too large") && err.contains("1e308"), "{err}");
    let cfg = repo_config(&dir, "pam50", |t| t.replace("beta = 1.0", "beta = 1e308"));
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("too large"), "{err}");
    let cfg = repo_config(&dir, "pam50", |t| {
        t.replace("per_class = 2", "per_class = 0")
    });
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains("pam50.per_class = 0 must be at least 2"),
        "{err}"
    );
    // pydt on values of 1e308 and 1e200.
    for v in ["1e308", "1e200"] {
        write(
            &dir.join("big.csv"),
            &format!("a,b\n1,2\n3,{v}\n5,6\n7,8\n"),
        );
        let cfg = pydt_on(&dir, &dir.join("big.csv"));
        let err = one_line_error(&run(&cfg));
        assert!(
            err.contains("1e100") && err.contains("rescale"),
            "{v}: {err}"
        );
    }
    assert!(!dir.join("results/p").exists());
}

#[test]
fn check_verifies_every_output_against_the_manifest() {
    let dir = scratch("g10");
    let cfg = repo_config(&dir, "jets_smoke", |t| t);
    run_ok(&cfg);
    let res = dir.join("results/jets_smoke");
    assert!(check(&res).status.success());
    // A 0-byte output that check does not read, and an edited table.
    for f in ["dataset.json", "jets.parquet"] {
        let keep = std::fs::read(res.join(f)).unwrap();
        write(&res.join(f), "");
        let err = one_line_error(&check(&res));
        assert!(
            err.contains(&format!("{f} is 0 bytes, the run wrote")) && err.contains("--force"),
            "{err}"
        );
        assert!(!res.join("checks.parquet").exists(), "stale verdicts kept");
        std::fs::write(res.join(f), keep).unwrap();
    }
    // The report does not show verdicts for a folder whose table was edited (the check passed
    // before), and names the file; nor for one whose manifest is unreadable.
    assert!(check(&res).status.success());
    let mut bytes = std::fs::read(res.join("table1.parquet")).unwrap();
    let last = bytes.len() - 9;
    bytes[last] ^= 1;
    std::fs::write(res.join("table1.parquet"), &bytes).unwrap();
    let report = |root: &Path| {
        let out = bin()
            .args(["report", root.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(root.join("report/jets_smoke.html")).unwrap()
    };
    let page = report(&dir.join("results"));
    assert!(
        page.contains("No verdicts shown") && page.contains("table1.parquet was edited"),
        "edited table not named"
    );
    // `list` names the cause.
    let out = bin()
        .args(["list", cfg.parent().unwrap().to_str().unwrap()])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("stale: table1.parquet was edited after the run"),
        "{listed}"
    );
    write(&res.join("manifest.json"), "{ not json");
    let page = report(&dir.join("results"));
    assert!(page.contains("No verdicts shown") && page.contains("manifest cannot be read"));
}

#[test]
fn merge_validates_a_forged_shard_json() {
    let dir = scratch("g11");
    let shard = dir.join("s.shard-0-of-2");
    std::fs::create_dir_all(&shard).unwrap();
    write(&shard.join("journal.bin"), "");
    for (index, count) in [
        ("2", "2"),
        ("0", "0"),
        ("0", "1000000000000000000"),
        ("0", "18446744073709551615"),
        ("0", "10000000000"),
    ] {
        write(
            &shard.join("shard.json"),
            &format!(
                "{{\"config_file\": \"x.toml\", \"run_hash\": \"0\", \"shard\": {{\"index\": {index}, \"count\": {count}}}, \"jobs\": 1, \"journal_hash\": \"0\"}}"
            ),
        );
        let out = capped(&["merge", shard.to_str().unwrap()]);
        let err = one_line_error(&out);
        assert!(
            err.contains("shard.json") && err.contains("0 <= I < N"),
            "{err}"
        );
    }
}

#[test]
fn journals_are_bounded_and_a_failed_run_leaves_none() {
    let dir = scratch("g12");
    let cfg = small_astar(&dir);
    std::fs::create_dir_all(dir.join("results")).unwrap();
    // A 2 GB sparse journal: refused at once by its size, with the fix, not read whole.
    let journal = dir.join("results/.astar_smoke.journal");
    let f = std::fs::File::create(&journal).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    let err = one_line_error(&capped(&["run", cfg.to_str().unwrap()]));
    assert!(
        err.contains("delete it") && err.contains("MiB a journal may hold"),
        "{err}"
    );
    std::fs::remove_file(&journal).unwrap();
    // A run that fails before its first job (here: a kind without jobs, and a bad value)
    // leaves no journal.
    let bad = repo_config(&dir, "jets_smoke", |t| {
        t.replace("n_jets = 300", "n_jets = 300\nmax_tries = 1")
    });
    assert!(!run(&bad).status.success());
    let left = names_in(&dir.join("results"), ".journal");
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn messages_say_their_cause_once_and_stay_short() {
    let dir = scratch("g13");
    // A non-UTF-8 points file in the board: its cause once.
    std::fs::write(dir.join("bad.csv"), b"a,b\n1,\xff\xfe\n").unwrap();
    let cfg = config(
        &dir,
        "b",
        "board",
        &format!(
            "[[board.datasets]]\nname = \"mine\"\nsource = \"file\"\npath = \"{}\"\n",
            dir.join("bad.csv").display()
        ),
    );
    let err = one_line_error(&run(&cfg));
    assert_eq!(err.matches("not UTF-8 text").count(), 1, "{err}");
    // A 10 MB label is not echoed whole, and 1e308 is not written with 309 digits.
    let label = "x".repeat(10 << 20);
    write(
        &dir.join("labels.csv"),
        &format!("a,b,kind\n1,2,{label}\n3,4,y\n5,6,y\n"),
    );
    let cfg = coalescent_on(&dir, "c", &dir.join("labels.csv"));
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains("class \"xxxx") && err.contains("more characters") && err.len() < 4000,
        "{} bytes of error: {}",
        err.len(),
        &err[..err.len().min(300)]
    );
    let cfg = repo_config(&dir, "jets_smoke", |t| {
        t.replace("[jets]", "[jets]\nt_cut = 1e308\nlambda = -1e308")
    });
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("1e308") && err.len() < 400, "{err}");
    // Overflowing coalescent data are named as such, not as duplicates.
    write(
        &dir.join("huge.csv"),
        "a,b,kind\n1,2,x\n3,1e308,y\n4,5,x\n6,7,y\n",
    );
    let cfg = coalescent_on(&dir, "d", &dir.join("huge.csv"));
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("1e100") && !err.contains("duplicate"), "{err}");
}

#[test]
fn sigint_and_sigterm_remove_the_staging_folder() {
    for sig in ["INT", "TERM"] {
        let dir = scratch(&format!("g14-{sig}"));
        let cfg = small_jets(&dir, true);
        let mut child = bin()
            .args(["run", cfg.to_str().unwrap()])
            .env("TRELLIS_LAB_TEST_COMMIT_PAUSE_MS", "20000")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        for line in stderr.lines() {
            if line.unwrap().contains("before the swap") {
                break;
            }
        }
        let staging = dir.join(format!("results/.small.staging-{}", child.id()));
        assert!(staging.is_dir(), "no staging folder to remove");
        assert!(Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap()
            .success());
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(!staging.exists(), "SIG{sig} left {}", staging.display());
        assert!(!dir.join("results/small").exists());
    }
}
