//! What the program may replace, and what it must read back (issue 50, the command line): a
//! report without its list of pages replaces no page; a run killed between the results' swap and
//! its config's write leaves a config `cluster` knows as its own; a copy of a results folder is
//! the program's under any name while it holds exactly what its manifest lists; the largest seed
//! survives its own manifest; class labels are trimmed like numbers.

use super::ownership::{ok, paused_at, report, small_board, snapshot, stderr, COMMIT_PAUSE};
use super::scratch;
use crate::common::{bin, one_line_error, root, run_ok, write};
use std::path::Path;
use std::process::Command;

fn cluster_points(out: &Path, extra: &[&str]) -> std::process::Output {
    let file = root().join("data/examples/points_labelled.csv");
    let mut args = vec![
        "--label-column",
        "kind",
        "--output-dir",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    bin()
        .arg("cluster")
        .arg(&file)
        .args(&args)
        .output()
        .unwrap()
}

#[test]
fn a_report_without_its_list_of_pages_replaces_no_page() {
    // The issue's reproduction: the list removed, a note added to the index, report again.
    let dir = scratch("no_list");
    let out = dir.join("out");
    ok(cluster_points(&out, &["--methods", "greedy"]));
    std::fs::remove_file(out.join("report/.trellis-report.json")).unwrap();
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let edited = index.replace("</body>", "<p>MY NOTE</p></body>");
    write(&out.join("index.html"), &edited);
    let before = snapshot(&out);
    let err = one_line_error(&report(&out));
    assert!(
        err.contains(".html is not listed")
            && err.contains("is missing")
            && err.contains("move it away"),
        "{err}"
    );
    assert_eq!(snapshot(&out), before, "nothing replaced or deleted");
    // Moved away, the report writes its pages and its list again.
    std::fs::remove_file(out.join("index.html")).unwrap();
    std::fs::remove_file(out.join("report/points_labelled.html")).unwrap();
    ok(report(&out));
    assert!(out.join("report/.trellis-report.json").is_file());
}

#[test]
fn the_largest_seed_is_read_back_from_its_own_manifest() {
    let dir = scratch("largest_seed");
    ok(cluster_points(
        &dir,
        &["--methods", "greedy", "--seed", "18446744073709551615"],
    ));
    let res = dir.join("points_labelled");
    for cmd in ["check", "plot"] {
        ok(bin().args([cmd, res.to_str().unwrap()]).output().unwrap());
    }
    ok(bin()
        .args(["measures", res.to_str().unwrap()])
        .output()
        .unwrap());
}

#[test]
fn a_kill_between_the_swap_and_the_config_leaves_a_config_cluster_knows() {
    let dir = scratch("kill_after_swap");
    let file = root().join("data/examples/points_labelled.csv");
    ok(cluster_points(&dir, &["--methods", "greedy"]));
    let first = std::fs::read_to_string(dir.join("points_labelled.toml")).unwrap();
    // The second run, with other methods, killed after its results are in place.
    let mut cmd = bin();
    cmd.arg("cluster").arg(&file).args([
        "--label-column",
        "kind",
        "--output-dir",
        dir.to_str().unwrap(),
        "--methods",
        "greedy,average_linkage",
    ]);
    let (mut child, _) = paused_at(&mut cmd, COMMIT_PAUSE, "5000", "after the swap");
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap()
        .success());
    assert!(!child.wait().unwrap().success());
    assert_eq!(
        std::fs::read_to_string(dir.join("points_labelled.toml")).unwrap(),
        first,
        "the kill came before the config's write"
    );
    // The next cluster recognises the old config as its own: no NAME.1.toml, the config is
    // the one the results ran.
    let out = ok(cluster_points(
        &dir,
        &["--methods", "greedy,average_linkage"],
    ));
    assert!(!stderr(&out).contains("is kept"), "{}", stderr(&out));
    assert!(!dir.join("points_labelled.1.toml").exists());
    let now = std::fs::read_to_string(dir.join("points_labelled.toml")).unwrap();
    assert!(now.contains("\"greedy\", \"average_linkage\""), "{now}");
    // An edit of the user's is still kept.
    write(
        &dir.join("points_labelled.toml"),
        &format!("{now}\n# mine\n"),
    );
    let out = ok(cluster_points(&dir, &["--methods", "greedy"]));
    assert!(stderr(&out).contains("is kept"), "{}", stderr(&out));
}

#[test]
fn a_copy_of_a_results_folder_is_the_programs_while_it_holds_what_its_manifest_lists() {
    let dir = scratch("copied");
    let cfg = small_board(&dir, "b");
    run_ok(&cfg);
    let copy = dir.join("results/b_kept");
    let status = Command::new("cp")
        .args(["-r"])
        .arg(dir.join("results/b"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    for cmd in ["plot", "check"] {
        ok(bin().args([cmd, copy.to_str().unwrap()]).output().unwrap());
    }
    // A file of the user's in it: not the program's any more, left as it is.
    write(&copy.join("notes.txt"), "mine");
    let before = snapshot(&copy);
    let err = one_line_error(
        &bin()
            .args(["plot", copy.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("notes.txt is not an output"), "{err}");
    assert_eq!(snapshot(&copy), before);
}

#[test]
fn class_labels_are_trimmed_like_numbers() {
    let dir = scratch("trimmed");
    let file = dir.join("spaced.csv");
    write(
        &file,
        "x,y,kind\n1,2, a\n1.5,2.5,a \n1,3,a\n9,8,b\n9.5,8.5, b \n9,7,b\n",
    );
    let out = bin()
        .arg("cluster")
        .arg(&file)
        .args(["--methods", "average_linkage", "--output-dir"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = stderr(&ok(out));
    assert!(err.contains("2 classes: a 3, b 3"), "{err}");
}
