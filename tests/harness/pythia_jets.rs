//! The pythia_jets kind through the binary: the smoke config runs, `check` passes and `plot`
//! redraws the same figures; any jets file with truth trees runs through it (Ginkgo's own jets,
//! with their generator's tree as the truth), every property holding; a truth fit asked of a set
//! without truth trees is a one-line error with nothing written.

use crate::common::{bin, config_copy, one_line_error, root, scratch, write};
use std::path::Path;

fn ok(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn bytes_of(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn the_smoke_config_runs_checks_and_replots_through_the_binary() {
    let dir = scratch("pythia_jets", "smoke");
    let out = dir.join("results");
    let cfg = config_copy(
        &dir,
        "pythia_jets_smoke",
        &out,
        Some(2),
        "smoke.toml",
        |t| t,
    );
    ok(&["run", cfg.to_str().unwrap()]);
    let res = out.join("pythia_jets_smoke");
    let text = ok(&["check", res.to_str().unwrap()]);
    assert!(
        text.contains(" 0 failed") && text.contains("property"),
        "{text}"
    );
    let figures = ["truth_recovery", "truth_rank", "lambda_scan", "gap_to_map"];
    let before: Vec<Vec<u8>> = figures
        .iter()
        .map(|f| bytes_of(&res, &format!("{f}.png")))
        .collect();
    ok(&["plot", res.to_str().unwrap()]);
    for (f, b) in figures.iter().zip(&before) {
        assert!(
            &bytes_of(&res, &format!("{f}.png")) == b,
            "{f} redrawn differently"
        );
    }
}

#[test]
fn any_jets_file_with_truth_trees_runs_and_every_property_holds() {
    let dir = scratch("pythia_jets", "ginkgo");
    let cfg = dir.join("ginkgo.toml");
    write(
        &cfg,
        &format!(
            r#"[experiment]
kind = "pythia_jets"
name = "ginkgo"
seed = 1
output_dir = "{out}"
[pythia_jets]
scan_points = 5
kt = "pp"
[[pythia_jets.sets]]
name = "ginkgo"
path = "{data}/ginkgo_jets/truth_9.json"
"#,
            out = dir.join("results").display(),
            data = root().join("data").display()
        ),
    );
    ok(&["run", cfg.to_str().unwrap()]);
    let res = dir.join("results/ginkgo");
    let text = ok(&["check", res.to_str().unwrap()]);
    assert!(text.contains(" 0 failed"), "{text}");
    assert!(text.matches("property").count() >= 9, "{text}");
    let t = trellis_lab::experiment::table::read_parquet(&res.join("exact.parquet")).unwrap();
    assert_eq!(t.height(), 10);
}

#[test]
fn a_truth_fit_without_truth_trees_is_a_one_line_error() {
    let dir = scratch("pythia_jets", "no_truth");
    let out = dir.join("results");
    let cfg = config_copy(&dir, "pythia_jets_smoke", &out, None, "p.toml", |t| {
        t.replace("lambda = \"evidence\"", "lambda = \"truth\"")
    });
    let run = bin().args(["run", cfg.to_str().unwrap()]).output().unwrap();
    let err = one_line_error(&run);
    assert!(
        err.contains("pythia_jets.lambda = \"truth\"") && err.contains("\"hadron\""),
        "{err}"
    );
    assert!(!out.join("pythia_jets_smoke").exists());
}
