//! The files other tools export, through the binary (issue 49): R's `write.csv` and
//! `write.table`, pandas with its index, a spreadsheet's `;`/decimal-comma export with a byte
//! order mark and CRLF line ends, quoted cells holding the separator, a distance matrix, ragged
//! rows and missing values. Each is read right (what the terminal says, what the tables hold)
//! or refused in one line naming the line, with nothing written. Also: distances are never
//! taken as similarities, flags that do not apply are refused, `init` writes what it decided,
//! and the exact trellis's estimate is said before the job.

use crate::common::{bin, one_line_error, root, scratch, write};
use std::path::{Path, PathBuf};
use std::process::Output;

fn export(file: &str) -> PathBuf {
    root().join("data/examples/exports").join(file)
}

fn cluster(out: &Path, file: &Path, extra: &[&str]) -> Output {
    crate::common::cluster_into(out, file, extra)
}

/// stderr of a `cluster` that must succeed.
fn said(out: Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

fn column(res: &Path, table: &str, col: &str) -> Vec<String> {
    let t = trellis_lab::experiment::table::read_parquet(&res.join(format!("{table}.parquet")))
        .unwrap();
    trellis_lab::experiment::table::str_column(&t, col).unwrap()
}

#[test]
fn every_export_style_is_read_with_its_names_and_says_how() {
    let dir = scratch("exports", "styles");
    for (file, want, first_name, classes) in [
        (
            "usarrests_write_csv.csv",
            vec![
                "50 points × 4 features",
                "names from the unnamed first column",
                "no labels",
            ],
            "Alabama",
            0,
        ),
        (
            "usarrests_write_table.csv",
            vec!["50 points × 4 features", "one cell fewer than the rows"],
            "Alabama",
            0,
        ),
        (
            "usarrests_write_table.txt",
            vec!["50 points × 4 features", "read with spaces between cells"],
            "Alabama",
            0,
        ),
        (
            "mtcars_pandas.csv",
            vec![
                "32 points × 11 features",
                "names from column \"model\"",
                "left out",
            ],
            "Mazda RX4",
            0,
        ),
        (
            "penguins_semicolon.csv",
            vec![
                "30 points × 4 features (read with ';' between cells, decimal commas)",
                "labels from column \"species\", 3 classes",
            ],
            "row 1",
            3,
        ),
        (
            "cities_quoted.csv",
            vec!["10 points × 2 features", "names from column \"city\""],
            "Portland, OR",
            0,
        ),
    ] {
        let err = said(cluster(
            &dir,
            &export(file),
            &["--methods", "average_linkage"],
        ));
        for w in want {
            assert!(err.contains(w), "{file}: want {w:?} in\n{err}");
        }
        let res = dir.join(file.split('.').next().unwrap());
        let names = column(&res, "leaves", "name");
        assert_eq!(names[0], first_name, "{file}");
        let mut class = column(&res, "leaves", "class");
        class.sort();
        class.dedup();
        class.retain(|c| !c.is_empty());
        assert_eq!(class.len(), classes, "{file}: names are not classes");
        // The names label the dendrogram's leaves.
        let stem = res.file_name().unwrap().to_string_lossy().into_owned();
        let svg =
            std::fs::read_to_string(res.join(format!("tree_{stem}_average_linkage.svg"))).unwrap();
        assert!(svg.contains(&first_name.replace('"', "&quot;")), "{file}");
    }
}

#[test]
fn ragged_rows_missing_values_and_bad_encodings_are_one_line_errors_naming_the_line() {
    let dir = scratch("exports", "refused");
    let crlf = dir.join("crlf.csv");
    write(&crlf, "x,y\r\n1,2\r\n\r\n3,4\r\n5,oops\r\n");
    let latin1 = dir.join("latin1.csv");
    std::fs::write(&latin1, b"name,x,y\nCaf\xe9,1,2\nBar,3,4\n").unwrap();
    for (file, want) in [
        (
            export("ragged.csv"),
            vec!["line 2", "2 cells, but the header has 3"],
        ),
        (
            export("ragged_numbers.csv"),
            vec!["line 2", "3 cells, but the header has 2"],
        ),
        (
            export("penguins_na_write_csv.csv"),
            vec!["line 5", "\"bill_length_mm\"", "missing value"],
        ),
        (crlf, vec!["line 5", "\"y\"", "oops"]),
        (latin1, vec!["line 2", "not UTF-8"]),
    ] {
        let out = dir.join("out");
        let o = cluster(&out, &file, &["--methods", "average_linkage"]);
        assert!(!o.status.success());
        let e = one_line_error(&o);
        for w in want {
            assert!(e.contains(w), "{}: want {w:?} in {e}", file.display());
        }
        assert!(!out.exists(), "nothing written for {}", file.display());
        // init refuses it too, without a panic.
        let o = bin()
            .args(["init", "board", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", file.display());
        one_line_error(&o);
    }
}

/// Average linkage (UPGMA) of an `n×n` distance matrix, directly: merge the pair of clusters
/// with the least mean distance (ties to the first pair), as clusters of leaves.
fn upgma(d: &[Vec<f64>]) -> Vec<Vec<usize>> {
    let mut clusters: Vec<Vec<usize>> = (0..d.len()).map(|i| vec![i]).collect();
    let mut found = Vec::new();
    while clusters.len() > 1 {
        let mut best = (f64::INFINITY, 0, 1);
        for a in 0..clusters.len() {
            for b in a + 1..clusters.len() {
                let sum: f64 = clusters[a]
                    .iter()
                    .flat_map(|&i| clusters[b].iter().map(move |&j| d[i][j]))
                    .sum();
                let mean = sum / (clusters[a].len() * clusters[b].len()) as f64;
                if mean < best.0 {
                    best = (mean, a, b);
                }
            }
        }
        let b = clusters.remove(best.2);
        clusters[best.1].extend(b);
        clusters[best.1].sort();
        found.push(clusters[best.1].clone());
    }
    found.sort();
    found
}

#[test]
fn distances_are_never_taken_as_similarities() {
    let dir = scratch("exports", "distances");
    let file = export("eurodist_write_csv.csv");
    // As similarities: refused, pointing to --distance; nothing written.
    let o = cluster(&dir, &file, &["--similarity"]);
    let e = one_line_error(&o);
    assert!(
        e.contains("looks like a distance matrix") && e.contains("--distance"),
        "{e}"
    );
    assert!(!dir.join("eurodist_write_csv").exists());
    // As points, without a flag: read, with a note that it looks like a matrix.
    let err = said(cluster(
        &dir,
        &file,
        &["--methods", "average_linkage", "--name", "plain"],
    ));
    assert!(
        err.contains("looks like a square matrix") && err.contains("--distance"),
        "{err}"
    );
    // As distances: average linkage on the distances themselves, Dasgupta's cost on
    // max(D) - D, both said and kept in the manifest.
    let err = said(cluster(
        &dir,
        &file,
        &["--distance", "--methods", "average_linkage,greedy"],
    ));
    assert!(
        err.contains("21 × 21 distance matrix") && err.contains("max(D) - D"),
        "{err}"
    );
    let res = dir.join("eurodist_write_csv");
    let manifest = std::fs::read_to_string(res.join("manifest.json")).unwrap();
    assert!(manifest.contains("max(D) - D") && manifest.contains("distance_matrix"));
    let text = std::fs::read_to_string(&file).unwrap();
    let d: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').skip(1).map(|c| c.parse().unwrap()).collect())
        .collect();
    let (method, newick) = (
        column(&res, "trees", "method"),
        column(&res, "trees", "newick"),
    );
    let k = method.iter().position(|m| m == "average_linkage").unwrap();
    let h = trellis_lab::hierarchy::Hierarchy::from_newick(&newick[k]).unwrap();
    let mut got: Vec<Vec<usize>> = h.clusters().into_iter().filter(|c| c.len() > 1).collect();
    got.iter_mut().for_each(|c| c.sort());
    got.sort();
    assert_eq!(got, upgma(&d), "average linkage of the distances");
    // Athens and Rome (817 km apart) are far from the rest: they join everything else last.
    assert!(
        got.contains(&vec![0, 18]) && got.iter().any(|c| c.len() == 19),
        "{got:?}"
    );
}

#[test]
fn flags_that_do_not_apply_are_refused_in_one_line() {
    let sims = root().join("data/examples/similarities.csv");
    let jets = root().join("data/examples/jets.json");
    for (file, flags, want) in [
        (
            &sims,
            vec!["--similarity", "--label-column", "x"],
            "--label-column applies to a points table",
        ),
        (
            &sims,
            vec!["--similarity", "--names-column", "x"],
            "--names-column applies to a points table",
        ),
        (
            &sims,
            vec!["--similarity", "--distance"],
            "--similarity and --distance both given",
        ),
        (
            &jets,
            vec!["--label-column", "x"],
            "--label-column applies to a points table",
        ),
        (
            &jets,
            vec!["--standardize"],
            "--standardize applies to a points table",
        ),
    ] {
        for cmd in ["cluster", "init"] {
            let mut args = vec![cmd];
            if cmd == "init" {
                args.push("board");
            }
            args.push(file.to_str().unwrap());
            args.extend(flags.iter().copied());
            let dir = scratch("exports", "flags");
            if cmd == "cluster" {
                args.extend(["--output-dir", dir.to_str().unwrap()]);
            }
            let e = one_line_error(&bin().args(&args).output().unwrap());
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }
}

#[test]
fn init_writes_what_it_decided_with_the_reason() {
    let dir = scratch("exports", "init");
    for (file, key) in [
        ("penguins_semicolon.csv", "label_column = \"species\""),
        ("usarrests_write_csv.csv", "names_column = \"\""),
        ("usarrests_write_table.csv", "names_column = \"\""),
        ("mtcars_pandas.csv", "names_column = \"model\""),
    ] {
        let o = bin()
            .args(["init", "board", export(file).to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        let k = lines
            .iter()
            .position(|l| *l == key)
            .unwrap_or_else(|| panic!("{file}: no {key:?} in\n{text}"));
        assert!(
            lines[k - 1].starts_with("# "),
            "{file}: the reason above it\n{text}"
        );
        // The estimate goes to the terminal, the config to stdout.
        assert!(String::from_utf8_lossy(&o.stderr).contains("exact trellis: up to N ="));
        // The config runs unedited and reads the file the same way.
        let cfg = dir.join(format!("{file}.toml"));
        std::fs::write(
            &cfg,
            text.replace("# methods = [", "methods = [\"average_linkage\"]\n# ["),
        )
        .unwrap();
        let o = bin().args(["run", cfg.to_str().unwrap()]).output().unwrap();
        assert!(
            o.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn scales_ties_and_the_exact_estimate_are_said_on_the_terminal() {
    let dir = scratch("exports", "scales");
    let file = export("penguins_semicolon.csv");
    let err = said(cluster(&dir, &file, &["--methods", "average_linkage"]));
    assert!(
        err.contains("scales differ") && err.contains("--standardize"),
        "{err}"
    );
    // The estimate, before the job, for idle cores; a 50-point file's is not a 100-digit count.
    assert!(
        err.contains("exact trellis: up to N = 22") && err.contains("idle cores"),
        "{err}"
    );
    let big = said(cluster(
        &dir,
        &export("usarrests_write_csv.csv"),
        &["--methods", "greedy"],
    ));
    let line = big
        .lines()
        .find(|l| l.starts_with("exact trellis"))
        .unwrap();
    assert!(
        line.contains("far beyond any machine") && line.contains("does not run"),
        "{line}"
    );
    assert!(
        !line
            .chars()
            .collect::<Vec<_>>()
            .windows(12)
            .any(|w| w.iter().all(char::is_ascii_digit)),
        "{line}"
    );
    // Standardised: said in the data line, kept in the config; the scale note is gone.
    let err = said(cluster(
        &dir,
        &file,
        &[
            "--methods",
            "average_linkage",
            "--standardize",
            "--name",
            "std",
        ],
    ));
    assert!(
        err.contains("columns standardised") && !err.contains("scales differ"),
        "{err}"
    );
    let cfg = std::fs::read_to_string(dir.join("std.toml")).unwrap();
    assert!(cfg.lines().any(|l| l == "standardize = true"), "{cfg}");
}

#[test]
fn too_many_classes_are_not_coloured_alike() {
    let dir = scratch("exports", "classes");
    let file = dir.join("many.csv");
    let mut text = String::from("label,x,y\n");
    for i in 0..24 {
        text.push_str(&format!("c{},{}.5,{}\n", i % 20, i, (i * 7) % 11));
    }
    write(&file, &text);
    said(cluster(
        &dir.join("out"),
        &file,
        &["--methods", "average_linkage"],
    ));
    let svg = std::fs::read_to_string(dir.join("out/many/tree_many_average_linkage.svg")).unwrap();
    assert!(
        svg.contains("20 classes: too many to tell apart"),
        "title says so"
    );
    assert!(!svg.contains(">c19<"), "no legend entry");
}
