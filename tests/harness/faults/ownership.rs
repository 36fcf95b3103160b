//! The third round of reliability findings (issue 36), ownership first, one test each, through
//! the binary: the program never replaces or deletes a folder or file it did not write. The
//! dangerous ones run in a scratch folder holding decoy user files (a `data/` folder,
//! `Documents/`, a `.git`, an `index.html`, a `report/notes.html`, the input itself) whose bytes
//! are compared before and after.

use super::{config, scratch};
use crate::common::{bin, one_line_error, root, run, run_ok, skipped, write};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Every file under `dir` (recursively, links not followed) with its bytes; folders as empty
/// entries ending in `/`, links as `-> target`.
pub(super) fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.file_type().is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", to.display()).into_bytes());
            } else if m.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A user's folder: `data/` (with the points file the tests cluster), `Documents/`, `.git/`,
/// `index.html`, `report/notes.html`, and the inputs `data.csv` and `Documents.csv`.
pub(super) fn user_folder(dir: &Path) {
    let points = std::fs::read(root().join("data/examples/points_labelled.csv")).unwrap();
    for d in ["data", "Documents/thesis", ".git/objects", "report"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(dir.join("data/points.csv"), &points).unwrap();
    std::fs::write(dir.join("data.csv"), &points).unwrap();
    std::fs::write(dir.join("Documents.csv"), &points).unwrap();
    write(&dir.join("Documents/thesis/chapter1.tex"), "years of work");
    write(&dir.join(".git/HEAD"), "ref: refs/heads/main\n");
    write(&dir.join(".git/objects/ab"), "object");
    write(&dir.join("index.html"), "<html>my home page</html>");
    write(&dir.join("report/notes.html"), "<html>my notes</html>");
}

pub(super) fn cluster(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .arg("cluster")
        .args(args)
        .output()
        .unwrap()
}

pub(super) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(super) fn ok(out: Output) -> Output {
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

pub(super) type StderrLines = std::io::Lines<std::io::BufReader<std::process::ChildStderr>>;

/// Starts `cmd` with the test pause `env` set to `ms` milliseconds and returns it once its
/// stderr has said `marker`, with the rest of its stderr.
pub(super) fn paused_at(
    cmd: &mut Command,
    env: &str,
    ms: &str,
    marker: &str,
) -> (Child, StderrLines) {
    let mut child = cmd.env(env, ms).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains(marker) {
            break;
        }
    }
    (child, lines)
}

pub(super) const COMMIT_PAUSE: &str = "TRELLIS_LAB_TEST_COMMIT_PAUSE_MS";

#[test]
pub(super) fn cluster_never_replaces_a_folder_it_did_not_write() {
    let dir = scratch("h01");
    user_folder(&dir);
    let before = snapshot(&dir);
    // The session: `data.csv` into `.` names the results `data`, the repository's
    // folder; `Documents.csv` into the home folder names them `Documents`.
    for (file, folder) in [("data.csv", "data"), ("Documents.csv", "Documents")] {
        for force in [false, true] {
            let mut args = vec![file, "--label-column", "kind", "--output-dir", "."];
            if force {
                args.push("--force");
            }
            let err = one_line_error(&cluster(&dir, &args));
            assert!(
                err.contains(&format!("./{folder} is a folder without a manifest.json"))
                    && err.contains("nothing was computed")
                    && err.contains("move it away yourself"),
                "{err}"
            );
            assert_eq!(snapshot(&dir), before, "{file} changed the user's folder");
        }
    }
    // A folder with a manifest of another program, or another results name, is refused too.
    write(&dir.join("data/manifest.json"), "{\"tool\": \"mine\"}");
    let err = one_line_error(&cluster(&dir, &["data.csv", "--output-dir", "."]));
    assert!(err.contains("this program did not write"), "{err}");
    std::fs::remove_file(dir.join("data/manifest.json")).unwrap();
    assert_eq!(snapshot(&dir), before);
}

#[test]
pub(super) fn run_and_force_refuse_a_foreign_folder_and_one_a_user_added_to() {
    let dir = scratch("h02");
    user_folder(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    write(&dir.join("src/main.rs"), "fn main() {}");
    std::fs::create_dir_all(dir.join("configs")).unwrap();
    let body = "[jets]\nsource = \"generate\"\nn_jets = 2\nmax_leaves = 5\n";
    // A config named `src` whose output_dir is the project folder (relative "..").
    let cfg = dir.join("configs/src.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nkind = \"jets\"\nname = \"src\"\nseed = 1\noutput_dir = \"..\"\n{body}"
        ),
    );
    let before = snapshot(&dir);
    for force in [false, true] {
        let mut c = bin();
        c.args(["run", cfg.to_str().unwrap()]);
        if force {
            c.arg("--force");
        }
        let err = one_line_error(&c.output().unwrap());
        assert!(
            err.contains("src is a folder without a manifest.json"),
            "{err}"
        );
        assert_eq!(snapshot(&dir), before);
    }
    // This program's own results folder is replaced; once a user adds a file to it, it is not.
    let own = config(&dir, "own", "jets", body);
    run_ok(&own);
    let res = dir.join("results/own");
    write(&res.join("my_notes.txt"), "keep me");
    let kept = snapshot(&res);
    let out = bin()
        .args(["run", own.to_str().unwrap(), "--force"])
        .output()
        .unwrap();
    let err = one_line_error(&out);
    assert!(
        err.contains("\"my_notes.txt\"") && err.contains("its manifest does not list"),
        "{err}"
    );
    // `plot` moves figures in by name: it refuses too.
    let err = one_line_error(
        &bin()
            .args(["plot", res.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("my_notes.txt"), "{err}");
    assert_eq!(snapshot(&res), kept);
    std::fs::remove_file(res.join("my_notes.txt")).unwrap();
    assert!(!skipped(
        bin()
            .args(["run", own.to_str().unwrap(), "--force"])
            .output()
            .unwrap()
    ));
    assert_eq!(snapshot(&dir.join("src")).len(), 1);
}

#[test]
pub(super) fn a_results_folder_that_holds_the_config_or_an_input_is_refused() {
    let dir = scratch("h03");
    user_folder(&dir);
    let before = snapshot(&dir);
    // A config named after its own folder.
    let cfg = dir.join("configs.toml");
    std::fs::create_dir_all(dir.join("configs")).unwrap();
    let inner = dir.join("configs/configs.toml");
    write(
        &inner,
        "[experiment]\nkind = \"jets\"\nname = \"configs\"\nseed = 1\noutput_dir = \"..\"\n[jets]\nsource = \"generate\"\nn_jets = 2\nmax_leaves = 5\n",
    );
    let err = one_line_error(&run(&inner));
    assert!(err.contains("would contain the config being run"), "{err}");
    assert!(!cfg.exists());
    // A board run whose results folder is the data folder it reads.
    let board = dir.join("board.toml");
    write(
        &board,
        "[experiment]\nkind = \"board\"\nname = \"data\"\nseed = 1\noutput_dir = \".\"\n[board]\nmethods = [\"greedy\"]\n[[board.datasets]]\nname = \"p\"\nsource = \"file\"\npath = \"data/points.csv\"\nlabel_column = \"kind\"\n",
    );
    let err = one_line_error(&run(&board));
    assert!(
        err.contains("would contain an input the run reads") && err.contains("points.csv"),
        "{err}"
    );
    std::fs::remove_file(&board).unwrap();
    std::fs::remove_file(&inner).unwrap();
    std::fs::remove_dir(dir.join("configs")).unwrap();
    assert_eq!(snapshot(&dir), before);
}

/// A two-method board config on the bundled similarity matrix, named `name`, in `dir`.
pub(super) fn small_board(dir: &Path, name: &str) -> PathBuf {
    config(
        dir,
        name,
        "board",
        &format!(
            "[board]\nmethods = [\"greedy\", \"average_linkage\"]\n[[board.datasets]]\nname = \"s\"\nsource = \"similarity_matrix\"\npath = \"{}\"\n",
            root().join("data/examples/similarities.csv").display()
        ),
    )
}

#[test]
pub(super) fn merge_refuses_a_foreign_results_folder() {
    let dir = scratch("h04");
    let cfg = small_board(&dir, "b");
    for i in 0..2 {
        ok(bin()
            .args(["run", cfg.to_str().unwrap(), "--shard", &format!("{i}/2")])
            .output()
            .unwrap());
    }
    let shards: Vec<PathBuf> = (0..2)
        .map(|i| dir.join(format!("results/b.shard-{i}-of-2")))
        .collect();
    let res = dir.join("results/b");
    std::fs::create_dir_all(res.join("drafts")).unwrap();
    write(&res.join("drafts/paper.md"), "my paper");
    let before = snapshot(&dir);
    let err = one_line_error(&bin().arg("merge").args(&shards).output().unwrap());
    assert!(
        err.contains("results/b is a folder without a manifest.json"),
        "{err}"
    );
    assert_eq!(snapshot(&dir), before);
    // A shard folder a user added to is refused as a destination of `run --shard` too.
    write(&shards[0].join("notes.txt"), "mine");
    let err = one_line_error(
        &bin()
            .args(["run", cfg.to_str().unwrap(), "--shard", "0/2", "--force"])
            .output()
            .unwrap(),
    );
    assert!(err.contains("a shard folder never holds"), "{err}");
    std::fs::remove_file(shards[0].join("notes.txt")).unwrap();
    std::fs::remove_dir_all(&res).unwrap();
    ok(bin().arg("merge").args(&shards).output().unwrap());
    assert!(res.join("manifest.json").is_file());
}

pub(super) fn report(root: &Path) -> Output {
    bin()
        .args(["report", root.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
pub(super) fn report_never_replaces_or_deletes_a_users_page() {
    let dir = scratch("h05");
    let out = dir.join("results");
    run_ok(&small_board(&dir, "b"));
    run_ok(&small_board(&dir, "gone"));
    ok(report(&out));
    // A user's index.html: refused, byte for byte intact, no page written.
    let index = std::fs::read(out.join("index.html")).unwrap();
    write(&out.join("index.html"), "<html>my index</html>");
    std::fs::remove_file(out.join("report/b.html")).unwrap();
    let err = one_line_error(&report(&out));
    assert!(
        err.contains("index.html has changed since trellis-lab report wrote it"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "<html>my index</html>"
    );
    assert!(!out.join("report/b.html").exists());
    std::fs::write(out.join("index.html"), &index).unwrap();
    // A page the report wrote and the user edited is theirs now.
    ok(report(&out));
    let page = out.join("report/b.html");
    let edited = format!("{}<p>my notes</p>", std::fs::read_to_string(&page).unwrap());
    write(&page, &edited);
    let err = one_line_error(&report(&out));
    assert!(err.contains("b.html has changed since"), "{err}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), edited);
    std::fs::remove_file(&page).unwrap();
    // A user's page in the pages folder is kept, and a copy of a page is not pruned as the
    // report's own; the page of a results folder that is gone is.
    write(&out.join("report/notes.html"), "<html>my notes</html>");
    let gone = std::fs::read(out.join("report/gone.html")).unwrap();
    write_bytes(&out.join("report/gone-copy.html"), &gone);
    std::fs::remove_dir_all(out.join("gone")).unwrap();
    ok(report(&out));
    assert!(!out.join("report/gone.html").exists());
    assert_eq!(
        std::fs::read(out.join("report/gone-copy.html")).unwrap(),
        gone
    );
    assert_eq!(
        std::fs::read_to_string(out.join("report/notes.html")).unwrap(),
        "<html>my notes</html>"
    );
    // A results folder whose page name is a user's file: refused.
    run_ok(&small_board(&dir, "notes"));
    let err = one_line_error(&report(&out));
    assert!(err.contains("report/notes.html was not written"), "{err}");
}

pub(super) fn write_bytes(p: &Path, b: &[u8]) {
    std::fs::write(p, b).unwrap();
}

/// A similarity matrix saved under a `.toml` name (whitespace-separated).
pub(super) fn sims_toml(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("data/examples/similarities.csv")).unwrap();
    let p = dir.join("sims.toml");
    write(&p, &text.replace(',', "\t"));
    p
}

#[test]
pub(super) fn cluster_writes_its_config_only_over_its_own_unedited_one() {
    let dir = scratch("h06");
    user_folder(&dir);
    // The report goes to `.` here: no index.html of the user's in the way.
    std::fs::remove_file(dir.join("index.html")).unwrap();
    // The input has the name the config would get: it is never written.
    let sims = sims_toml(&dir);
    let input = std::fs::read(&sims).unwrap();
    let out = ok(cluster(
        &dir,
        &[
            "sims.toml",
            "--similarity",
            "--output-dir",
            ".",
            "--methods",
            "greedy",
        ],
    ));
    assert_eq!(std::fs::read(&sims).unwrap(), input);
    assert!(
        stderr(&out).contains("config ./sims.1.toml"),
        "{}",
        stderr(&out)
    );
    assert!(dir.join("sims/manifest.json").is_file());
    // A generated config nobody edited is replaced when the options change.
    let args = |seed: &'static str| {
        [
            "data/points.csv",
            "--label-column",
            "kind",
            "--output-dir",
            "out",
            "--methods",
            "greedy",
            "--seed",
            seed,
        ]
    };
    ok(cluster(&dir, &args("1")));
    let config = dir.join("out/points.toml");
    ok(cluster(&dir, &args("2")));
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains("seed = 2"));
    assert!(!dir.join("out/points.1.toml").exists());
    // An edited one is kept, and the new one goes beside it, said on the terminal.
    let edited = format!(
        "{}# my comment\n",
        std::fs::read_to_string(&config).unwrap()
    );
    write(&config, &edited);
    let out = ok(cluster(&dir, &args("3")));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), edited);
    let beside = dir.join("out/points.1.toml");
    assert!(std::fs::read_to_string(&beside)
        .unwrap()
        .contains("seed = 3"));
    assert!(
        stderr(&out).contains("out/points.toml is kept") && stderr(&out).contains("points.1.toml"),
        "{}",
        stderr(&out)
    );
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/points/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["config_file"], "out/points.1.toml");
}

#[test]
pub(super) fn a_refused_or_failed_cluster_leaves_nothing_behind() {
    let dir = scratch("h07");
    user_folder(&dir);
    let before = snapshot(&dir);
    let cases: [&[&str]; 4] = [
        // A refused option, a bad name, a label column that is not there (found while reading
        // the data, after the lock), a nested output folder.
        &[
            "data.csv",
            "--methods",
            "nonsense",
            "--output-dir",
            "new/a/b",
        ],
        &["data.csv", "--name", "../x", "--output-dir", "new"],
        &[
            "data.csv",
            "--label-column",
            "nosuch",
            "--output-dir",
            "new/a/b",
        ],
        &[
            "data.csv",
            "--label-column",
            "nosuch",
            "--output-dir",
            "Documents",
        ],
    ];
    for args in cases {
        one_line_error(&cluster(&dir, args));
        assert_eq!(snapshot(&dir), before, "{args:?} left something behind");
    }
}

#[test]
pub(super) fn the_config_beside_the_results_is_the_one_they_ran() {
    let dir = scratch("h08");
    user_folder(&dir);
    let args = |seed: &str| {
        [
            "cluster",
            "data.csv",
            "--label-column",
            "kind",
            "--output-dir",
            "out",
            "--methods",
            "greedy",
            "--seed",
            seed,
        ]
        .map(str::to_string)
    };
    // The first cluster pauses at its commit; a second one with another seed meanwhile.
    let (mut first, lines) = paused_at(
        bin().current_dir(&dir).args(args("5")),
        COMMIT_PAUSE,
        "3000",
        "before the swap",
    );
    let second = bin().current_dir(&dir).args(args("6")).output().unwrap();
    let err = one_line_error(&second);
    assert!(err.contains("another process is writing"), "{err}");
    for _ in lines {}
    assert!(first.wait().unwrap().success());
    let config = std::fs::read_to_string(dir.join("out/data.toml")).unwrap();
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/data/manifest.json")).unwrap())
            .unwrap();
    assert!(config.contains("seed = 5"), "{config}");
    assert_eq!(m["seed"], 5);
    assert_eq!(
        m["config_hash"].as_str().unwrap(),
        trellis_lab::experiment::staging::hash_text(config.as_bytes())
    );
}

#[test]
pub(super) fn init_prints_only_configs_that_run_accepts() {
    let dir = scratch("h09");
    user_folder(&dir);
    for name in ["a/b", "../../x", ""] {
        let out = bin()
            .current_dir(&dir)
            .args(["init", "board", "data.csv", "--name", name])
            .output()
            .unwrap();
        let err = one_line_error(&out);
        assert!(err.contains("experiment.name"), "{name}: {err}");
        assert!(out.stdout.is_empty());
    }
    // The largest seed is printed as a config `run` takes, and runs with it.
    let out = ok(bin()
        .current_dir(&dir)
        .args([
            "init",
            "board",
            "data.csv",
            "--label-column",
            "kind",
            "--seed",
            "18446744073709551615",
        ])
        .output()
        .unwrap());
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace("# methods = [", "methods = [\"greedy\"]\n# [");
    let cfg = dir.join("max_seed.toml");
    write(&cfg, &text);
    run_ok(&cfg);
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results/data/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["seed"].as_u64(), Some(u64::MAX));
}
