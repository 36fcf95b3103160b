//! The command line: a small end-to-end run, resume, `score`, and bad input.

use crate::common::{bin, one_line_error, run, run_ok, write};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    crate::common::scratch("cli", name)
}

fn small_config(dir: &Path, extra_data: &str) -> PathBuf {
    let cfg = format!(
        r#"
[experiment]
name = "small"
seed = 5
output_dir = "{out}"
threads = 2

[jets]
source = "generate"
n_jets = 60
min_leaves = 4
max_leaves = 8
{extra_data}

[methods]
beam_dedup = "equal_total"
"#,
        out = dir.join("results").display()
    );
    let p = dir.join("small.toml");
    std::fs::write(&p, cfg).unwrap();
    p
}

#[test]
fn run_writes_tables_charts_manifest_and_skips_rerun() {
    let dir = scratch("run");
    let cfg = small_config(&dir, "");
    let out = run(&cfg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res = dir.join("results/small");
    for f in [
        "jets.parquet",
        "table1.parquet",
        "table1.png",
        "table1.svg",
        "fig5_logz_vs_map.png",
        "fig5_logz_vs_map.svg",
        "manifest.json",
        "dataset.json",
    ] {
        let m = std::fs::metadata(res.join(f)).unwrap_or_else(|_| panic!("{f} missing"));
        assert!(m.len() > 0, "{f} empty");
    }
    let df = trellis_lab::experiment::table::read_parquet(&res.join("jets.parquet")).unwrap();
    assert_eq!(
        df.height(),
        60 * 4,
        "one row per jet x {{trellis, beam, greedy, truth}}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["seed"], 5);
    assert_eq!(manifest["threads"], 2);
    assert!(manifest["timings_seconds"]["total"].as_f64().unwrap() >= 0.0);
    // The instruction set the run used, one of those the CPU has, and the CPU's model.
    let isa = trellis_lab::simd::Isa::parse(manifest["instruction_set"].as_str().unwrap());
    assert_eq!(isa, Some(trellis_lab::simd::Isa::detect()));
    let sets = manifest["cpu_instruction_sets"].as_array().unwrap();
    assert!(sets.iter().any(|s| s == "scalar"), "{sets:?}");
    assert!(manifest["cpu_model"].is_string());
    // No staging folders left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("staging"))
        .collect();
    assert!(leftovers.is_empty());

    // A re-run of the same config is skipped; the files are untouched.
    let before = std::fs::metadata(res.join("jets.parquet"))
        .unwrap()
        .modified()
        .unwrap();
    let out = run(&cfg);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to do"));
    let after = std::fs::metadata(res.join("jets.parquet"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let dir = scratch("threads");
    let cfg = small_config(&dir, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let mut tables = Vec::new();
    for t in [1, 2] {
        let c = dir.join(format!("t{t}.toml"));
        std::fs::write(
            &c,
            text.replace("threads = 2", &format!("threads = {t}"))
                .replace("name = \"small\"", &format!("name = \"t{t}\"")),
        )
        .unwrap();
        let out = run(&c);
        assert!(out.status.success());
        let df = trellis_lab::experiment::table::read_parquet(
            &dir.join(format!("results/t{t}/jets.parquet")),
        )
        .unwrap();
        let ll = trellis_lab::experiment::table::f64_column(&df, "log_likelihood").unwrap();
        let lz = trellis_lab::experiment::table::f64_column(&df, "log_z").unwrap();
        let nw = trellis_lab::experiment::table::str_column(&df, "tree_newick").unwrap();
        tables.push((ll, lz, nw));
    }
    assert_eq!(tables[0], tables[1], "bit-identical for 1 and 2 threads");
}

#[test]
fn typo_in_config_key_is_a_one_line_error_without_output() {
    let dir = scratch("typo");
    let cfg = small_config(&dir, "lamda = 1.5");
    let out = run(&cfg);
    let err = one_line_error(&out);
    assert!(err.contains("lamda"), "{err}");
    assert!(!dir.join("results").exists());
}

#[test]
fn missing_dataset_file_is_a_one_line_error() {
    let dir = scratch("missing");
    let cfg = dir.join("m.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nname = \"m\"\nseed = 1\noutput_dir = \"{}\"\n[jets]\nsource = \"file\"\npath = \"nope.json\"\n",
            dir.join("results").display()
        ),
    );
    let out = run(&cfg);
    let err = one_line_error(&out);
    assert!(err.contains("nope.json"), "{err}");
    assert!(!dir.join("results/m").exists());
    let out = bin().args(["run", "no/such/config.toml"]).output().unwrap();
    assert!(one_line_error(&out).contains("no/such/config.toml"));
}

fn jet_file(dir: &Path, leaves: &str, n: usize) -> PathBuf {
    let p = dir.join("jets.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"source": "test", "jets": [{{"name": "j0", "n_leaves": {n}, "t_cut": 16.0, "lam": 1.5, "lam_root": 1.5, "M_hard": 30.0, "leaves": {leaves}}}]}}"#
        ),
    )
    .unwrap();
    p
}

#[test]
fn bad_jets_are_one_line_errors() {
    let dir = scratch("badjets");
    // NaN is not valid JSON; serde rejects it with a position.
    let p = jet_file(&dir, "[[NaN, 1, 1, 1], [20, 1, 2, 3]]", 2);
    let out = bin().args(["score", p.to_str().unwrap()]).output().unwrap();
    assert!(one_line_error(&out).contains("NaN"));
    let p = jet_file(&dir, "[[-5, 1, 1, 1], [20, 1, 2, 3]]", 2);
    let out = bin().args(["score", p.to_str().unwrap()]).output().unwrap();
    let err = one_line_error(&out);
    assert!(err.contains("energy"), "{err}");
}

#[test]
fn too_many_leaves_for_the_exact_trellis_is_refused_before_any_work() {
    let dir = scratch("toolarge");
    let leaves: Vec<String> = (0..25)
        .map(|i| format!("[{}, 1.0, {}, 2.0]", 30.0 + i as f64, i as f64 * 0.1))
        .collect();
    let p = jet_file(&dir, &format!("[{}]", leaves.join(",")), 25);
    let cfg = dir.join("big.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nname = \"big\"\nseed = 1\noutput_dir = \"{}\"\n[jets]\nsource = \"file\"\npath = \"{}\"\n",
            dir.join("results").display(),
            p.display()
        ),
    );
    let out = run(&cfg);
    let err = one_line_error(&out);
    assert!(err.contains("N = 25") && err.contains("GiB"), "{err}");
    assert!(!dir.join("results/big").exists());
}

#[test]
fn score_prints_one_json_object_per_jet() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/ginkgo_jets/truth_9.json");
    let out = bin()
        .args(["score", data.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 10);
    let first = &lines[0];
    for k in [
        "name",
        "n_leaves",
        "map_loglh",
        "map_tree",
        "log_z",
        "n_trees_finite",
        "greedy_loglh",
        "beam_loglh",
    ] {
        assert!(!first[k].is_null(), "{k} missing");
    }
    assert!((first["map_loglh"].as_f64().unwrap() - -54.32581855184802).abs() < 1e-6);
    assert!((first["log_z"].as_f64().unwrap() - -45.19359206941174).abs() < 1e-6);
    assert_eq!(first["n_trees_finite"], "1507275");
    let tree = trellis_lab::tree::Tree::from_newick(first["map_tree"].as_str().unwrap()).unwrap();
    assert_eq!(tree.n_leaves(), 9);
}

#[test]
fn sections_must_belong_to_the_kind() {
    let dir = scratch("kinds");
    let cfg = dir.join("k.toml");
    // A [sparse] section under kind = "jets" is an error, not silently ignored.
    write(
        &cfg,
        "[experiment]\nname = \"k\"\nseed = 1\n[jets]\nsource = \"generate\"\nn_jets = 1\n[sparse]\nbudgets = [1]\n",
    );
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("sparse") && err.contains("jets"), "{err}");
    // A kind without its section is a one-line error, not a panic.
    write(
        &cfg,
        "[experiment]\nkind = \"jets\"\nname = \"k\"\nseed = 1\n",
    );
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("[jets]"), "{err}");
    // An unknown kind names the known ones.
    write(
        &cfg,
        "[experiment]\nkind = \"nope\"\nname = \"k\"\nseed = 1\n",
    );
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("nope") && err.contains("jets"), "{err}");
    // Absurd thread counts are refused before any thread starts.
    write(
        &cfg,
        "[experiment]\nname = \"k\"\nseed = 1\nthreads = 100000\n[jets]\nsource = \"generate\"\nn_jets = 1\n",
    );
    let err = one_line_error(&run(&cfg));
    assert!(err.contains("threads"), "{err}");
}

#[test]
fn plot_redraws_identical_figures_from_the_tables_alone() {
    let dir = scratch("plot");
    let cfg = small_config(&dir, "");
    run_ok(&cfg);
    let res = dir.join("results/small");
    let figures = [
        "table1.png",
        "table1.svg",
        "fig5_logz_vs_map.png",
        "fig5_logz_vs_map.svg",
    ];
    let before: Vec<Vec<u8>> = figures
        .iter()
        .map(|f| std::fs::read(res.join(f)).unwrap())
        .collect();
    for f in figures {
        std::fs::remove_file(res.join(f)).unwrap();
    }
    // Drop the jets the run generated: plot must not need the data, only tables + manifest.
    std::fs::remove_file(res.join("dataset.json")).unwrap();
    let out = bin()
        .args(["plot", res.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (f, b) in figures.iter().zip(&before) {
        assert_eq!(&std::fs::read(res.join(f)).unwrap(), b, "{f} differs");
    }
}
