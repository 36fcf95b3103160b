//! Your own data, end to end through the binary (issue 28): a jets JSON, a labelled CSV, an
//! unlabelled TSV and a similarity matrix each go from one command (`cluster`) or one printed
//! config (`init`, run unedited) to trees, tables, figures, a report and a passing `check` of
//! the properties that hold for any data; the templates run unedited; a dropped jet is
//! reported; `check` on a changed shipped config names the reference numbers it skipped; bad
//! files and options are one-line errors with nothing written.

use crate::common::{bin, one_line_error, root, scratch, write};
use std::path::{Path, PathBuf};
use std::process::Output;

fn example(file: &str) -> PathBuf {
    root().join("data/examples").join(file)
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn cluster(out: &Path, file: &Path, extra: &[&str]) -> Output {
    crate::common::cluster_into(out, file, extra)
}

/// `check` passes on the properties and says that reference numbers were skipped.
fn check_properties(res: &Path) -> String {
    let out = ok(bin()
        .args(["check", res.to_str().unwrap()])
        .output()
        .unwrap());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("property"), "{text}");
    assert!(text.contains(" 0 failed"), "{text}");
    assert!(text.contains("note: "), "{text}");
    text
}

fn metrics(res: &Path) -> Vec<String> {
    let t = trellis_lab::experiment::table::read_parquet(&res.join("board.parquet")).unwrap();
    trellis_lab::experiment::table::str_column(&t, "metric").unwrap()
}

#[test]
fn each_kind_of_file_clusters_with_one_command() {
    let dir = scratch("own_data", "cluster");
    // Labelled points: every method that applies, purity against the labels, a dendrogram each.
    ok(cluster(
        &dir,
        &example("points_labelled.csv"),
        &["--label-column", "kind"],
    ));
    let res = dir.join("points_labelled");
    let m = metrics(&res);
    assert!(m.iter().any(|x| x == "dendrogram_purity") && m.iter().any(|x| x == "hcc_energy"));
    for f in [
        "trees.parquet",
        "tree_points_labelled_greedy.png",
        "manifest.json",
    ] {
        assert!(res.join(f).exists(), "{f}");
    }
    assert!(dir.join("points_labelled.toml").is_file());
    assert!(dir.join("index.html").is_file() && dir.join("report/points_labelled.html").is_file());
    check_properties(&res);
    // Unlabelled points (TSV), a similarity matrix, jets: the exact trellis where N allows.
    ok(cluster(&dir, &example("points.tsv"), &[]));
    assert!(dir.join("points/tree_points_trellis.png").exists());
    check_properties(&dir.join("points"));
    ok(cluster(
        &dir,
        &example("similarities.csv"),
        &["--similarity"],
    ));
    assert!(metrics(&dir.join("similarities"))
        .iter()
        .any(|x| x == "dasgupta_cost"));
    assert!(dir
        .join("similarities/tree_similarities_trellis.png")
        .exists());
    check_properties(&dir.join("similarities"));
    ok(cluster(
        &dir,
        &example("jets.json"),
        &["--methods", "trellis,beam,greedy,kt,anti_kt"],
    ));
    let m = metrics(&dir.join("jets"));
    assert!(m.iter().any(|x| x == "ginkgo_log_likelihood"));
    check_properties(&dir.join("jets"));
    // A second call with the same data is up to date.
    let out = ok(cluster(&dir, &example("points.tsv"), &[]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to do"));
}

#[test]
fn init_prints_configs_that_run_unedited() {
    let dir = scratch("own_data", "init");
    for (kind, file, extra) in [
        ("jets", "jets.json", vec![]),
        ("board", "jets.json", vec![]),
        (
            "board",
            "points_labelled.csv",
            vec!["--label-column", "kind"],
        ),
        ("board", "points.tsv", vec![]),
        ("board", "similarities.csv", vec!["--similarity"]),
    ] {
        let path = example(file);
        let name = format!("{kind}_{}", file.split('.').next().unwrap());
        let mut args = vec!["init", kind, path.to_str().unwrap(), "--name", &name];
        args.extend(extra);
        let out = ok(bin().args(&args).output().unwrap());
        let cfg = dir.join(format!("{kind}_{file}.toml"));
        std::fs::write(&cfg, &out.stdout).unwrap();
        ok(bin().args(["run", cfg.to_str().unwrap()]).output().unwrap());
    }
    // The results go beside the configs (output_dir = "results", relative to the config).
    assert!(dir.join("results/jets_jets/table1.png").exists());
    check_properties(&dir.join("results/jets_jets"));
    check_properties(&dir.join("results/board_similarities"));
    let err = one_line_error(
        &bin()
            .args(["init", "jets", example("points.tsv").to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("init board"), "{err}");
}

#[test]
fn a_dropped_jet_is_reported_and_generator_keys_are_ignored_with_a_note() {
    let dir = scratch("own_data", "dropped");
    let cfg = dir.join("mine.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nname = \"mine\"\nseed = 3\noutput_dir = \"out\"\n[jets]\nsource = \"file\"\npath = \"{}\"\nmin_leaves = 5\nn_jets = 10\nt_cut = 9.0\n[methods]\nmax_exact_leaves = 12\n",
            example("jets.json").display()
        ),
    );
    let out = ok(bin().args(["run", cfg.to_str().unwrap()]).output().unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 jet dropped") && err.contains("truth_4[0] (4 leaves)"),
        "{err}"
    );
    assert!(err.contains("jets.n_jets, jets.t_cut only apply"), "{err}");
    // output_dir is relative to the config's folder, like path.
    let res = dir.join("out/mine");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["dropped"][0]["count"], 1);
    let text = check_properties(&res);
    assert!(text.contains("no reference numbers"), "{text}");
}

#[test]
fn check_on_a_changed_shipped_config_names_the_skipped_reference_numbers() {
    let dir = scratch("own_data", "changed");
    let cfg =
        crate::common::config_copy(&dir, "jets_smoke", &dir.join("out"), None, "c.toml", |t| {
            t.replace("seed = 101", "seed = 7")
        });
    ok(bin().args(["run", cfg.to_str().unwrap()]).output().unwrap());
    let text = check_properties(&dir.join("out/jets_smoke"));
    assert!(
        text.contains("reference numbers of config \"jets_smoke\" skipped")
            && text.contains("experiment.seed"),
        "{text}"
    );
    // The shipped config itself (a copy elsewhere, same data) still checks every number.
    let same =
        crate::common::config_copy(&dir, "jets_smoke", &dir.join("same"), None, "s.toml", |t| t);
    ok(bin()
        .args(["run", same.to_str().unwrap()])
        .output()
        .unwrap());
    let out = ok(bin()
        .args(["check", dir.join("same/jets_smoke").to_str().unwrap()])
        .output()
        .unwrap());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("note:") && text.contains("accepted as its reference"),
        "{text}"
    );
}

#[test]
fn the_templates_run_unedited() {
    let dir = scratch("own_data", "templates");
    // Two folders deep, as configs/templates/ is, so that their relative paths hold.
    let deep = dir.join("configs/templates");
    std::fs::create_dir_all(&deep).unwrap();
    std::os::unix::fs::symlink(root().join("data"), dir.join("data")).unwrap();
    for e in std::fs::read_dir(root().join("configs/templates")).unwrap() {
        let p = e.unwrap().path();
        let copy = deep.join(p.file_name().unwrap());
        std::fs::copy(&p, &copy).unwrap();
        ok(bin()
            .args(["run", copy.to_str().unwrap()])
            .output()
            .unwrap());
    }
    for name in ["my_jets", "my_points", "my_unlabelled_points", "my_graph"] {
        check_properties(&dir.join("results").join(name));
    }
}

#[test]
fn bad_files_and_options_are_one_line_errors_with_nothing_written() {
    let dir = scratch("own_data", "bad");
    let out = dir.join("out");
    write(&dir.join("ragged.csv"), "a,b,c\n0,1,2\n1,0,3\n");
    let err = one_line_error(&cluster(&out, &dir.join("ragged.csv"), &["--similarity"]));
    assert!(err.contains("square"), "{err}");
    write(&dir.join("asym.csv"), "a,b\n0,1\n2,0\n");
    let err = one_line_error(&cluster(&out, &dir.join("asym.csv"), &["--similarity"]));
    assert!(err.contains("not symmetric"), "{err}");
    let err = one_line_error(&cluster(
        &out,
        &example("points.tsv"),
        &["--methods", "trellis,magic"],
    ));
    assert!(err.contains("magic"), "{err}");
    assert!(
        !out.join("points.toml").exists(),
        "a config for bad options"
    );
    let err = one_line_error(&cluster(&out, &dir.join("missing.csv"), &[]));
    assert!(err.contains("missing.csv"), "{err}");
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|f| !f.ends_with(".toml") && !f.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_same_file_and_seed_give_the_same_trees_under_any_name() {
    // Issue 37: job seeds come from the seed, the data and the method, never a name.
    let dir = scratch("own_data", "names");
    let file = example("points_labelled.csv");
    let methods = [
        "--label-column",
        "kind",
        "--methods",
        "mpost2,mgreedy,ddt,greedy",
    ];
    let trees = |name: &str| {
        let mut args = methods.to_vec();
        args.extend(["--name", name]);
        ok(cluster(&dir, &file, &args));
        let t = trellis_lab::experiment::table::read_parquet(&dir.join(name).join("trees.parquet"))
            .unwrap();
        let method = trellis_lab::experiment::table::str_column(&t, "method").unwrap();
        let newick = trellis_lab::experiment::table::str_column(&t, "newick").unwrap();
        let seed = trellis_lab::experiment::table::u64_column(&t, "seed").unwrap();
        let mut rows: Vec<(String, String, Option<u64>)> = method
            .into_iter()
            .zip(newick)
            .zip(seed)
            .map(|((m, n), s)| (m, n, s))
            .collect();
        rows.sort();
        rows
    };
    let a = trees("iris_a");
    let b = trees("another_name");
    assert_eq!(a.len(), 4, "{a:?}");
    assert_eq!(a, b);
}

/// The strings of column `col` of table `name` in results folder `res`.
fn column(res: &Path, name: &str, col: &str) -> Vec<String> {
    let t =
        trellis_lab::experiment::table::read_parquet(&res.join(format!("{name}.parquet"))).unwrap();
    trellis_lab::experiment::table::str_column(&t, col).unwrap()
}

/// What `cluster` of example `file` with `methods` into `dir` says on the terminal.
fn said(dir: &Path, file: &str, methods: &str) -> String {
    let out = ok(cluster(dir, &example(file), &["--methods", methods]));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `(method, newick, status, note)` of every row of `trees.parquet`.
fn trees(res: &Path) -> Vec<(String, String, String, String)> {
    let cols = ["method", "newick", "status", "note"].map(|c| column(res, "trees", c));
    (0..cols[0].len())
        .map(|k| {
            (
                cols[0][k].clone(),
                cols[1][k].clone(),
                cols[2][k].clone(),
                cols[3][k].clone(),
            )
        })
        .collect()
}

#[test]
fn duplicate_points_run_on_the_distinct_points_and_are_said() {
    // Rows 5 and 14 of the table repeat rows 2 and 9: the coalescent, which cannot take
    // identical points, runs on the 16 distinct ones; the others on all 18.
    let dir = scratch("own_data", "duplicates");
    let err = said(
        &dir,
        "points_duplicates.csv",
        "mpost2,mgreedy,average_linkage,greedy",
    );
    assert!(
        err.contains("row 5 = row 2, row 14 = row 9")
            && err.contains("mpost2, mgreedy ran on the 16 distinct points"),
        "{err}"
    );
    let res = dir.join("points_duplicates");
    for (m, newick, status, note) in trees(&res) {
        assert_eq!(status, "ran", "{m}");
        let h = trellis_lab::hierarchy::Hierarchy::from_newick(&newick).unwrap();
        assert_eq!(h.n_leaves(), 18, "{m}: every point is a leaf");
        if m.starts_with('m') {
            assert!(
                note.contains("ran on the 16 distinct points"),
                "{m}: {note}"
            );
            // Each copy is joined to its first before anything else.
            let clusters = h.clusters();
            assert!(clusters.contains(&vec![1, 4]) && clusters.contains(&vec![8, 13]));
        } else {
            assert!(note.is_empty(), "{m}: {note}");
        }
    }
    let manifest = std::fs::read_to_string(res.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("row 14 = row 9"),
        "the manifest records it"
    );
    let page = std::fs::read_to_string(dir.join("report/points_duplicates.html")).unwrap();
    assert!(page.contains("row 14 = row 9") && page.contains("id=\"data\""));
    // The trellis was not asked for, so the properties about its MAP tree do not apply, and
    // `check` says so rather than "passed".
    let text = check_properties(&res);
    assert!(
        text.contains(
            "n/a  property: instances whose exact MAP tree is not ranked first: not applicable"
        ) && text.contains("0 failed, 2 not applicable"),
        "{text}"
    );
}

#[test]
fn a_headerless_table_keeps_its_first_row_and_says_so() {
    let dir = scratch("own_data", "headerless");
    let err = said(&dir, "points_headerless.tsv", "average_linkage");
    assert!(
        err.contains("only numbers, so it is read as a point") && err.contains("14 points"),
        "{err}"
    );
    let res = dir.join("points_headerless");
    assert_eq!(column(&res, "leaves", "name").len(), 14);
    let page = std::fs::read_to_string(dir.join("report/points_headerless.html")).unwrap();
    assert!(
        page.contains("14 points × 3 features, no labels"),
        "the page says what was read"
    );
}

#[test]
fn a_label_column_is_found_by_itself_and_the_fix_names_the_flag() {
    let dir = scratch("own_data", "labels_found");
    let err = said(&dir, "points_label_found.csv", "average_linkage,greedy");
    assert!(
        err.contains("column \"label\" holds text") && err.contains("--label-column label"),
        "{err}"
    );
    let res = dir.join("points_label_found");
    assert!(metrics(&res).iter().any(|m| m == "dendrogram_purity"));
    assert_eq!(
        column(&res, "leaves", "class")[..6],
        ["g0", "g0", "g0", "g0", "g0", "g1"]
    );
    // `init` with a label column the file does not have: said now, not at `run`.
    let err = one_line_error(
        &bin()
            .args(["init", "board"])
            .arg(example("points_label_found.csv"))
            .args(["--label-column", "kinds"])
            .output()
            .unwrap(),
    );
    assert!(err.contains("no column named \"kinds\""), "{err}");
    // A similarity matrix in a .txt file: its delimiter from its first line.
    std::fs::copy(example("similarities.csv"), dir.join("sim.txt")).unwrap();
    ok(cluster(
        &dir,
        &dir.join("sim.txt"),
        &["--similarity", "--methods", "greedy"],
    ));
    // Three columns of text: the labels (values repeat), the names (every value differs), and
    // one too many, named with the flags.
    write(&dir.join("two.csv"), "a,kind,b,c,d\n1,x,y,2,p\n3,x,z,4,q\n");
    let err = one_line_error(&cluster(&dir, &dir.join("two.csv"), &[]));
    assert!(
        err.contains("column \"d\" holds text too")
            && err.contains("--label-column")
            && err.contains("--names-column"),
        "{err}"
    );
}

#[test]
fn every_requested_method_is_said_ran_or_not_run_by_run_leaderboard_and_report() {
    let dir = scratch("own_data", "not_run");
    let methods = "trellis,greedy,kt,pydt,truth";
    ok(cluster(
        &dir,
        &example("points_labelled.csv"),
        &[
            "--label-column",
            "kind",
            "--methods",
            methods,
            "--max-exact-leaves",
            "12",
        ],
    ));
    // `run` of the config `cluster` wrote says it too, not only `cluster`.
    let out = ok(bin()
        .args([
            "run",
            dir.join("points_labelled.toml").to_str().unwrap(),
            "--force",
        ])
        .output()
        .unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    for line in [
        "trellis not run: N = 24 is above board.max_exact_leaves = 12",
        "kt not run: jets only",
        "truth not run: no generator tree",
    ] {
        assert!(err.contains(line), "{line} in {err}");
    }
    let res = dir.join("points_labelled");
    let md = std::fs::read_to_string(res.join("leaderboard.md")).unwrap();
    let table = &md[md.find("## Methods: ran or not run").unwrap()..];
    for line in [
        "| Trellis (exact) | not run: N = 24 is above board.max_exact_leaves = 12 |",
        "| Greedy | ran |",
        "| kt | not run: jets only |",
        "| Truth | not run: no generator tree |",
    ] {
        assert!(table.contains(line), "{line} in {md}");
    }
    // The diffusion tree is multifurcating here or not; either way it is listed as run.
    assert!(table.contains("| PYDT | ran"), "{md}");
    let page = std::fs::read_to_string(dir.join("report/points_labelled.html")).unwrap();
    assert!(
        page.contains("not run: jets only"),
        "the report shows the table"
    );
}

#[test]
fn dendrograms_name_and_colour_their_leaves_for_every_tree_up_to_150_points_and_more() {
    let dir = scratch("own_data", "dendrograms");
    ok(cluster(
        &dir,
        &example("points_labelled.csv"),
        &[
            "--label-column",
            "kind",
            "--methods",
            "greedy,average_linkage,mpost2,ddt,pydt",
        ],
    ));
    let res = dir.join("points_labelled");
    let classes: Vec<String> = {
        let mut c = column(&res, "leaves", "class");
        c.sort();
        c.dedup();
        c
    };
    assert_eq!(classes.len(), 3);
    for (m, newick, status, _) in trees(&res) {
        assert_eq!(status, "ran", "{m}");
        assert!(!newick.is_empty());
        let svg = std::fs::read_to_string(res.join(format!("tree_points_labelled_{m}.svg")))
            .unwrap_or_else(|e| panic!("{m}: no dendrogram: {e}"));
        // Leaf names from the file and a legend of the classes.
        let texts = svg_texts(&svg);
        assert!(texts.contains(&"row 1") && texts.contains(&"row 24"), "{m}");
        for c in &classes {
            assert!(texts.contains(&c.as_str()), "{m}: legend entry {c}");
        }
    }
    // 150 labelled points: a readable dendrogram (one leaf name each), not none.
    let mut text = String::from("a,b,c,species\n");
    for k in 0..150 {
        let g = k / 50;
        let v = k as f64;
        text.push_str(&format!(
            "{},{},{},s{g}\n",
            g as f64 * 3.0 + (v * 1.3).sin(),
            (v * 0.7).cos(),
            g as f64 - (v * 2.1).sin(),
        ));
    }
    write(&dir.join("big.csv"), &text);
    ok(cluster(
        &dir,
        &dir.join("big.csv"),
        &["--methods", "average_linkage"],
    ));
    let svg = std::fs::read_to_string(dir.join("big/tree_big_average_linkage.svg")).unwrap();
    let texts = svg_texts(&svg);
    let leaves = texts.iter().filter(|t| t.starts_with("row ")).count();
    assert_eq!(leaves, 150, "every leaf named once");
    assert!(texts.contains(&"s0") && texts.contains(&"s2"), "the legend");
}

/// The texts of an SVG's `<text>` elements, trimmed.
fn svg_texts(svg: &str) -> Vec<&str> {
    svg.split("</text>")
        .filter_map(|chunk| chunk.rsplit_once('>').map(|(_, t)| t.trim()))
        .filter(|t| !t.is_empty())
        .collect()
}

/// A config written for a file runs unedited on it: the exact trellis's limit comes from the
/// file and the machine (13-leaf jets are within it), with the reason in a comment; and where
/// the trellis ran, the count of trees tied at the MAP is a row, told on the terminal, and the
/// exact scoring's seconds are a row of their own.
#[test]
fn the_exact_limit_comes_from_the_file_and_map_ties_are_reported() {
    let dir = scratch("own_data", "limits");
    // Two jets of 13 leaves, generated and exported by a board run.
    let gen = dir.join("gen.toml");
    write(
        &gen,
        "[experiment]\nkind = \"board\"\nname = \"gen13\"\nseed = 5\noutput_dir = \"out\"\n[board]\nmethods = [\"greedy\"]\n[[board.datasets]]\nname = \"jets13\"\nsource = \"ginkgo\"\ninstances = 2\nmin_leaves = 13\nmax_leaves = 13\n",
    );
    ok(bin().args(["run", gen.to_str().unwrap()]).output().unwrap());
    let jets = dir.join("out/gen13/data_jets13.json");
    for kind in ["jets", "board"] {
        let out = ok(bin()
            .args(["init", kind, jets.to_str().unwrap(), "--name", kind])
            .output()
            .unwrap());
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let cfg: toml::Value = toml::from_str(&text).unwrap();
        let limit = match kind {
            "jets" => &cfg["methods"]["max_exact_leaves"],
            _ => &cfg["board"]["max_exact_leaves"],
        };
        assert!(limit.as_integer().unwrap() >= 13, "{text}");
        // The reason, in comment lines.
        let flat = text.replace("\n# ", " ");
        assert!(
            flat.contains("every instance of this file (2 of up to 13 leaves)"),
            "{text}"
        );
        let path = dir.join(format!("{kind}.toml"));
        std::fs::write(&path, &text).unwrap();
        ok(bin()
            .args(["run", path.to_str().unwrap()])
            .output()
            .unwrap());
    }
    // The jets ran through the exact trellis.
    let t = trellis_lab::experiment::table::read_parquet(&dir.join("results/jets/jets.parquet"))
        .unwrap();
    let algorithm = trellis_lab::experiment::table::str_column(&t, "algorithm").unwrap();
    assert_eq!(
        algorithm.iter().filter(|m| *m == "trellis").count(),
        2,
        "{algorithm:?}"
    );

    // Points through `cluster`: the limit is chosen (and written with why), the ties are told.
    let out = ok(cluster(&dir, &example("points.tsv"), &[]));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let config = std::fs::read_to_string(dir.join("points.toml")).unwrap();
    assert!(
        config.contains("max_exact_leaves = 22")
            && config
                .replace("\n# ", " ")
                .contains("(1 of up to 12 leaves)"),
        "{config}"
    );
    let res = dir.join("points");
    let t = trellis_lab::experiment::table::read_parquet(&res.join("board.parquet")).unwrap();
    let (m, k, v, s, x) = (
        trellis_lab::experiment::table::str_column(&t, "method").unwrap(),
        trellis_lab::experiment::table::str_column(&t, "metric").unwrap(),
        trellis_lab::experiment::table::f64_column(&t, "value").unwrap(),
        trellis_lab::experiment::table::f64_column(&t, "seconds").unwrap(),
        trellis_lab::experiment::table::f64_column(&t, "exact_scoring_seconds").unwrap(),
    );
    // (value, the method's seconds, the exact scoring's seconds) of each row.
    let rows = |method: &str, metric: &str| -> Vec<(f64, f64, Option<f64>)> {
        (0..m.len())
            .filter(|&r| m[r] == method && k[r] == metric)
            .map(|r| (v[r].unwrap(), s[r].unwrap(), x[r]))
            .collect()
    };
    let ties = rows("trellis", "map_tree_count");
    assert_eq!(ties.len(), 1);
    let count = ties[0].0;
    assert!(count >= 1.0 && count.fract() == 0.0, "{count}");
    let told = if count > 1.0 {
        format!("the exact MAP is attained by {count:.0} trees")
    } else {
        "the exact MAP tree is unique".to_string()
    };
    assert!(err.contains(&told), "{err}");
    assert!(rows("beam", "map_tree_count").is_empty());
    // Every method whose tree was ranked has its scoring seconds, apart from its own seconds.
    for method in ["trellis", "beam", "greedy", "average_linkage"] {
        let energy = rows(method, "hcc_energy");
        assert_eq!(energy.len(), 1, "{method}");
        assert!(energy[0].2.is_some_and(|x| x >= 0.0), "{method}");
        assert_eq!(rows(method, "posterior_rank")[0].1, energy[0].1, "{method}");
    }
    let board = std::fs::read_to_string(res.join("leaderboard.md")).unwrap();
    assert!(
        board.contains("## trees attaining the exact MAP")
            && board.contains("## exact scoring time"),
        "{board}"
    );
    check_properties(&res);
}
