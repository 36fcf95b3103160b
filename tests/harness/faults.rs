//! The reliability guarantees through the release-facing command line, one test per guarantee,
//! named by what it guarantees and grouped by topic: here limits, inputs and interruptions;
//! `writes_and_bounds` (writes that never follow links, whole swaps, bounded counts, journals,
//! messages), `ownership` (what the program may replace or delete), `data_bounds` (data read
//! within bounds), `owned_outputs` (report pages, configs and copies a run must recognise).
//! `docs/reliability.md` lists each guarantee beside its test. The dangerous ones run the program
//! under a 4 GiB address-space cap and a time limit, so a regression fails the test instead of
//! exhausting the machine.

use crate::common::{bin, exe, one_line_error, root, run, run_ok, skipped, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    crate::common::scratch("faults", name)
}

/// A staging folder as a run of the program makes it (with its mark), as a killed run leaves it.
fn mark_staging(d: &Path) {
    use trellis_lab::experiment::staging::{STAGING_MARK, STAGING_MARK_TEXT};
    std::fs::create_dir_all(d).unwrap();
    write(&d.join(STAGING_MARK), STAGING_MARK_TEXT);
}

/// The program under `ulimit -v` (4 GiB) and `timeout` (120 s).
fn capped(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec timeout 120 \"$@\"")
        .arg("sh")
        .arg(exe())
        .args(args)
        .output()
        .unwrap()
}

/// A config in `dir` named `name` with `body` after its `[experiment]` header lines.
fn config(dir: &Path, name: &str, kind: &str, body: &str) -> PathBuf {
    let p = dir.join(format!("{name}.toml"));
    write(
        &p,
        &format!(
            "[experiment]\nkind = \"{kind}\"\nname = \"{name}\"\nseed = 1\noutput_dir = \"{}\"\n{body}",
            dir.join("results").display()
        ),
    );
    p
}

/// A repository config copied into `dir` with absolute data paths, its output in `dir`, and
/// `edit` applied to its text.
fn repo_config(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let file = format!("{name}.toml");
    crate::common::config_copy(dir, name, &dir.join("results"), None, &file, edit)
}

/// A size refused under the memory cap: one line naming `key` and what it would cost, and no
/// results folder.
fn refused_size(dir: &Path, cfg: &Path, key: &str) {
    let out = capped(&["run", cfg.to_str().unwrap()]);
    let err = one_line_error(&out);
    assert!(
        err.contains(key) && err.contains("would take about"),
        "{err}"
    );
    assert!(
        !dir.join("results").exists()
            || dir
                .join("results")
                .read_dir()
                .unwrap()
                .all(|e| { e.unwrap().file_name().to_string_lossy().starts_with('.') })
    );
}

#[test]
fn random_instances_of_1e12_are_refused_not_allocated() {
    let dir = scratch("f01");
    let cfg = config(
        &dir,
        "c",
        "cost_functions",
        "[cost_functions]\ncluster_sizes = [3, 2, 2]\nrandom_instances = 1000000000000\n",
    );
    refused_size(&dir, &cfg, "cost_functions.random_instances");
}

#[test]
fn planted_instances_of_1e12_are_refused_not_allocated() {
    let dir = scratch("f02");
    let cfg = config(
        &dir,
        "d",
        "dasgupta",
        "[dasgupta.planted]\ninstances = 1000000000000\ncluster_sizes = [3, 3]\np_in = 0.9\np_out = 0.1\n",
    );
    refused_size(&dir, &cfg, "dasgupta.planted.instances");
}

#[test]
fn devices_as_data_config_or_jet_file_are_refused_at_once() {
    let dir = scratch("f03");
    for dev in ["/dev/zero", "/dev/urandom"] {
        let cfg = config(
            &dir,
            "j",
            "jets",
            &format!("[jets]\nsource = \"file\"\npath = \"{dev}\"\n"),
        );
        let err = one_line_error(&capped(&["run", cfg.to_str().unwrap()]));
        assert!(err.contains(dev) && err.contains("regular file"), "{err}");
        let err = one_line_error(&capped(&["score", dev]));
        assert!(err.contains("regular file"), "{err}");
    }
    let err = one_line_error(&capped(&["run", "/dev/zero"]));
    assert!(err.contains("regular file"), "{err}");
    let err = one_line_error(&capped(&["check", "/dev/zero"]));
    assert!(err.contains("/dev/zero"), "{err}");
}

#[test]
fn a_crash_while_moving_results_in_never_leaves_a_folder_taken_as_complete() {
    let dir = scratch("f04");
    let cfg = repo_config(&dir, "jets_smoke", |t| t);
    run_ok(&cfg);
    let res = dir.join("results/jets_smoke");
    // The state a crash half-way through a commit leaves: the old manifest already removed
    // (commit removes it before moving anything), some files new, some old.
    let mid = dir.join("results/.jets_smoke.staging-4000001");
    mark_staging(&mid);
    std::fs::remove_file(res.join("manifest.json")).unwrap();
    write(&res.join("table1.svg"), "<svg>half of a new run</svg>");
    for cmd in ["check", "plot"] {
        let err = one_line_error(&bin().args([cmd, res.to_str().unwrap()]).output().unwrap());
        assert!(err.contains("not a complete results folder"), "{err}");
    }
    // A folder without its manifest is not provably this program's (today's commit never
    // leaves one: it exchanges whole folders): the next run refuses it, byte for byte intact,
    // and still removes the dead staging folder.
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains("without a manifest.json") && err.contains("move it away yourself"),
        "{err}"
    );
    assert!(!mid.exists());
    assert_eq!(
        std::fs::read_to_string(res.join("table1.svg")).unwrap(),
        "<svg>half of a new run</svg>"
    );
    // Removed by the user, the next run recomputes everything.
    std::fs::remove_dir_all(&res).unwrap();
    assert!(!skipped(run(&cfg)));
    assert!(std::fs::read_to_string(res.join("table1.svg"))
        .unwrap()
        .contains("Trellis"));
    assert!(skipped(run(&cfg)));
}

#[test]
fn n_jets_of_1e12_is_an_error_not_an_allocation_abort() {
    let dir = scratch("f05");
    let cfg = config(
        &dir,
        "j",
        "jets",
        "[jets]\nsource = \"generate\"\nn_jets = 1000000000000\nmax_leaves = 8\n",
    );
    refused_size(&dir, &cfg, "jets.n_jets");
}

#[test]
fn beam_size_of_1e9_is_an_error_in_configs_and_score() {
    let dir = scratch("f06");
    let cfg = config(
        &dir,
        "j",
        "jets",
        "[jets]\nsource = \"generate\"\nn_jets = 2\nmax_leaves = 8\n[methods]\nbeam_size = 1000000000\n",
    );
    refused_size(&dir, &cfg, "methods.beam_size");
    let data = root().join("data/ginkgo_jets/truth_9.json");
    let out = capped(&["score", data.to_str().unwrap(), "--beam-size", "1000000000"]);
    assert!(one_line_error(&out).contains("--beam-size"));
    assert!(out.stdout.is_empty(), "no jet printed before the error");
}

#[test]
fn a_sparse_budget_of_1e12_is_an_error() {
    let dir = scratch("f07");
    let cfg = repo_config(&dir, "sparse", |t| {
        t.replace(
            "budgets = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]",
            "budgets = [1, 1000000000000]",
        )
    });
    refused_size(&dir, &cfg, "sparse.budgets[1]");
}

#[test]
fn empty_or_zero_sparse_budgets_and_a_missing_section_are_errors() {
    let dir = scratch("f08");
    for budgets in ["[]", "[0]", "[5, 0]"] {
        let cfg = repo_config(&dir, "sparse", |t| {
            t.replace(
                "[1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]",
                budgets,
            )
        });
        let err = one_line_error(&run(&cfg));
        assert!(err.contains("sparse.budgets must list"), "{err}");
    }
    let cfg = config(
        &dir,
        "s",
        "sparse",
        "[jets]\nsource = \"generate\"\nn_jets = 1\n",
    );
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("[sparse]"), "{err}");
    assert!(!dir.join("results/sparse").exists());
}

#[test]
fn check_on_a_corrupted_or_edited_table_recomputes_and_never_panics() {
    let dir = scratch("f09");
    let cfg = repo_config(&dir, "jets_smoke", |t| t);
    run_ok(&cfg);
    let res = dir.join("results/jets_smoke");
    let check = || {
        bin()
            .args(["check", res.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = check();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() && stdout.contains(" 0 failed"),
        "{stdout}"
    );
    // One number of Table 1 edited far off: check refuses the folder, naming the edited table
    // (the stored within_tolerance flags are never trusted, and neither is an edited table).
    use polars::prelude::Column;
    use trellis_lab::experiment::table::{f64_column, read_parquet, write_parquet};
    let mut df = read_parquet(&res.join("table1.parquet")).unwrap();
    let mean: Vec<Option<f64>> = f64_column(&df, "mean")
        .unwrap()
        .into_iter()
        .map(|v| v.map(|v| v + 5.0))
        .collect();
    df.with_column(Column::new("mean".into(), mean)).unwrap();
    write_parquet(&mut df, &res.join("table1.parquet")).unwrap();
    let err = one_line_error(&check());
    assert!(
        err.contains("table1.parquet") && err.contains("--force"),
        "{err}"
    );
    // A corrupted table is a one-line error naming the file, not a panic.
    for bytes in [&b"PAR1 not really"[..], b"", b"PAR1\0\0\0\0PAR1"] {
        std::fs::write(res.join("table1.parquet"), bytes).unwrap();
        let err = one_line_error(&check());
        assert!(err.contains("table1.parquet"), "{err}");
    }
}

#[test]
fn a_thread_count_of_100000_is_refused_before_any_thread_starts() {
    let dir = scratch("f10");
    let cfg = dir.join("t.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nname = \"t\"\nseed = 1\nthreads = 100000\noutput_dir = \"{}\"\n[jets]\nsource = \"generate\"\nn_jets = 1\n",
            dir.join("results").display()
        ),
    );
    refused_size(&dir, &cfg, "experiment.threads");
}

#[test]
fn an_overflowing_flat_beta_is_an_error_not_nan() {
    let dir = scratch("f11");
    let cfg = repo_config(&dir, "flat_pam50", |t| {
        t.replace("beta = 10.0", "beta = 1e308")
    });
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains("flat_pam50.beta = 1e308 is too large"),
        "{err}"
    );
    assert!(!dir.join("results/flat_pam50").exists());
}

#[test]
fn jet_energies_of_1e308_are_an_error_in_score() {
    let dir = scratch("f12");
    let p = dir.join("jets.json");
    write(
        &p,
        r#"{"source": "test", "jets": [{"name": "j0", "n_leaves": 2, "t_cut": 16.0, "lam": 1.5, "lam_root": 1.5, "M_hard": 30.0, "leaves": [[1e308, 1, 1, 1], [1e308, 1, 2, 3]]}]}"#,
    );
    let out = bin().args(["score", p.to_str().unwrap()]).output().unwrap();
    let err = one_line_error(&out);
    assert!(err.contains("j0") || err.contains("jet 0"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "no nonsense line printed: {:?}",
        out.stdout
    );
}

#[test]
fn negative_or_nan_tolerances_are_rejected() {
    for t in ["-0.1", "nan", "inf"] {
        let text = format!(
            "[[check]]\nconfig = \"c\"\nid = \"a\"\nvalue = 1.0\ntolerance = {t}\nsource = \"s\"\n"
        );
        let e = trellis_lab::experiment::check::parse_expected(&text).unwrap_err();
        assert!(format!("{e:#}").contains("tolerance"), "{e:#}");
    }
}

#[test]
fn results_of_another_program_are_not_up_to_date() {
    let dir = scratch("f14");
    let cfg = repo_config(&dir, "jets_smoke", |t| t);
    assert!(!skipped(run(&cfg)));
    assert!(skipped(run(&cfg)));
    // A changed program (here: the same binary with one byte appended) recomputes.
    let other = dir.join("trellis-lab-changed");
    let mut bytes = std::fs::read(exe()).unwrap();
    bytes.push(0);
    std::fs::write(&other, bytes).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(&other)
        .args(["run", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        !skipped(out),
        "a different program must not reuse the results"
    );
}

#[test]
fn a_changed_input_file_or_damaged_output_is_not_up_to_date() {
    let dir = scratch("f15");
    let data = dir.join("jets.json");
    std::fs::copy(root().join("data/ginkgo_jets/truth_9.json"), &data).unwrap();
    let cfg = config(
        &dir,
        "s",
        "jets",
        "[jets]\nsource = \"file\"\npath = \"jets.json\"\n",
    );
    assert!(!skipped(run(&cfg)));
    assert!(skipped(run(&cfg)));
    // The same config over different jets is recomputed.
    let text = std::fs::read_to_string(&data).unwrap();
    write(&data, &text.replacen("\"jets\"", "\"jets\" ", 1));
    assert!(!skipped(run(&cfg)));
    assert!(skipped(run(&cfg)));
    // An output edited in place (same size) is recomputed.
    let svg = dir.join("results/s/table1.svg");
    let text = std::fs::read_to_string(&svg).unwrap();
    write(&svg, &text.replacen("Trellis", "XXXXXXX", 1));
    assert!(!skipped(run(&cfg)));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("Trellis"));
    // A truncated output is recomputed.
    write(&dir.join("results/s/table1.parquet"), "");
    assert!(!skipped(run(&cfg)));
    // A manifest from another run hash is recomputed.
    let m = dir.join("results/s/manifest.json");
    let text = std::fs::read_to_string(&m).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let hash = v["run_hash"].as_str().unwrap().to_string();
    write(&m, &text.replace(&hash, "0000000000000000"));
    assert!(!skipped(run(&cfg)));
}

#[test]
fn a_rerun_removes_outputs_it_no_longer_writes() {
    let dir = scratch("f16");
    let cfg = config(
        &dir,
        "small",
        "jets",
        "[jets]\nsource = \"generate\"\nn_jets = 20\nmin_leaves = 4\nmax_leaves = 7\n[methods]\n",
    );
    run_ok(&cfg);
    let res = dir.join("results/small");
    assert!(res.join("fig5_logz_vs_map.png").exists());
    // Without the trellis there is no Figure 5: the old one must not stay behind.
    let text = std::fs::read_to_string(&cfg).unwrap();
    write(
        &cfg,
        &text.replace("[methods]\n", "[methods]\ntrellis = false\n"),
    );
    run_ok(&cfg);
    for f in ["fig5_logz_vs_map.png", "fig5_logz_vs_map.svg"] {
        assert!(!res.join(f).exists(), "{f} left behind");
    }
    assert!(res.join("table1.png").exists());
}

#[test]
fn staging_folders_of_killed_runs_are_removed() {
    let dir = scratch("f17");
    let cfg = config(
        &dir,
        "small",
        "jets",
        "[jets]\nsource = \"generate\"\nn_jets = 5\nmax_leaves = 6\n",
    );
    // Two killed runs' staging folders (their processes are gone) and a live one's (ours).
    let dead: Vec<PathBuf> = [4000002, 4000003]
        .iter()
        .map(|pid| dir.join(format!("results/.small.staging-{pid}")))
        .collect();
    for d in &dead {
        mark_staging(d);
        write(&d.join("jets.parquet"), "half");
    }
    // A folder of the same name without the program's mark is a user's: kept.
    let unmarked = dir.join("results/.small.staging-4000004");
    std::fs::create_dir_all(&unmarked).unwrap();
    write(&unmarked.join("mine.txt"), "mine");
    let live = dir.join(format!("results/.small.staging-{}", std::process::id()));
    mark_staging(&live);
    run_ok(&cfg);
    for d in &dead {
        assert!(!d.exists(), "{} left behind", d.display());
    }
    assert!(unmarked.join("mine.txt").exists());
    assert!(
        live.exists(),
        "a live process's staging folder is not touched"
    );
}

#[test]
fn limits_are_checked_before_any_output_in_score() {
    let data = root().join("data/ginkgo_jets/truth_9.json");
    let out = bin()
        .args([
            "score",
            data.to_str().unwrap(),
            "--max-exact-leaves",
            "1000",
        ])
        .output()
        .unwrap();
    assert!(one_line_error(&out).contains("hard limit"));
    assert!(out.stdout.is_empty(), "no jet printed before the error");
}

#[test]
fn a_closed_pipe_ends_score_quietly() {
    let data = root().join("data/ginkgo_jets/tree_100_n9.json");
    let mut child = bin()
        .args(["score", data.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line (like `| head -1`), then close the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    use std::io::Read;
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn io_errors_say_their_cause_once() {
    let out = bin().args(["score", "/dev/zero"]).output().unwrap();
    let err = one_line_error(&out);
    assert_eq!(err.matches("not a regular file").count(), 1, "{err}");
    let out = bin()
        .args(["run", "/no/such/config.toml"])
        .output()
        .unwrap();
    let err = one_line_error(&out);
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
}

#[test]
fn an_output_dir_that_is_a_file_gets_a_fix() {
    let dir = scratch("f21");
    write(
        &dir.join("results"),
        "a file where the results folder should be",
    );
    let cfg = config(
        &dir,
        "j",
        "jets",
        "[jets]\nsource = \"generate\"\nn_jets = 2\nmax_leaves = 6\n",
    );
    let err = one_line_error(&run(&cfg));
    assert!(
        err.contains("is a file") && err.contains("output_dir"),
        "{err}"
    );
}

#[test]
fn a_second_run_into_a_locked_folder_is_refused_with_the_reason() {
    let dir = scratch("f22");
    let cfg = config(
        &dir,
        "small",
        "jets",
        "[jets]\nsource = \"generate\"\nn_jets = 5\nmax_leaves = 6\n",
    );
    let held = trellis_lab::experiment::staging::lock_results(&dir.join("results/small")).unwrap();
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("another process is writing"), "{err}");
    assert!(!dir.join("results/small").exists());
    drop(held);
    run_ok(&cfg);
}

#[test]
fn sizes_without_a_bound_before_now_are_refused() {
    let dir = scratch("f23");
    let cfg = repo_config(&dir, "posterior_sampling", |t| {
        t.replace("n_samples = 100000", "n_samples = 1000000000000")
    });
    refused_size(&dir, &cfg, "posterior_sampling.n_samples");
    let cfg = repo_config(&dir, "flat_pam50", |t| {
        t.replace("perturb_draws = 1000", "perturb_draws = 1000000000000")
    });
    refused_size(&dir, &cfg, "flat_pam50.perturb_draws");
}

#[path = "faults/writes_and_bounds.rs"]
mod writes_and_bounds;

#[path = "faults/ownership.rs"]
mod ownership;

#[path = "faults/ownership_reports.rs"]
mod ownership_reports;

#[path = "faults/data_bounds.rs"]
mod data_bounds;

#[path = "faults/owned_outputs.rs"]
mod owned_outputs;
