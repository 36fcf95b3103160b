//! The command line: a small end-to-end run, resume, `score`, and bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_trellis-lab"))
}

fn run(cfg: &Path) -> std::process::Output {
    bin().args(["run", cfg.to_str().unwrap()]).output().unwrap()
}

/// Runs `cfg` and fails the test with the program's stderr if the run failed.
fn run_ok(cfg: &Path) {
    let out = run(cfg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trellis-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn small_config(dir: &Path, extra_data: &str) -> PathBuf {
    let cfg = format!(
        r#"
[experiment]
name = "small"
seed = 5
output_dir = "{out}"
threads = 2

[data]
source = "generate"
n_jets = 60
min_leaves = 4
max_leaves = 8
{extra_data}

[algorithms]
beam_dedup = "equal_total"
"#,
        out = dir.join("results").display()
    );
    let p = dir.join("small.toml");
    std::fs::write(&p, cfg).unwrap();
    p
}

fn one_line_error(out: &std::process::Output) -> String {
    assert!(!out.status.success(), "expected failure");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "error should be one line: {err}"
    );
    err
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
            "[experiment]\nname = \"m\"\nseed = 1\noutput_dir = \"{}\"\n[data]\nsource = \"file\"\npath = \"nope.json\"\n",
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
            "[experiment]\nname = \"big\"\nseed = 1\noutput_dir = \"{}\"\n[data]\nsource = \"file\"\npath = \"{}\"\n",
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
fn posterior_sampling_run_writes_figure_and_tables() {
    let dir = scratch("posterior");
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/ginkgo_jets");
    let cfg = dir.join("p.toml");
    write(
        &cfg,
        &format!(
            r#"
[experiment]
kind = "posterior_sampling"
name = "p"
seed = 1
output_dir = "{out}"
[data]
source = "file"
path = "{data}/truth_5.json"
[sampling]
jet_index = 2
n_samples = 3000
reference_samples = "{data}/posterior_samples_truth5.json"
"#,
            out = dir.join("results").display(),
            data = data.display()
        ),
    );
    let out = run(&cfg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res = dir.join("results/p");
    for f in [
        "posterior_samples.parquet",
        "summary.parquet",
        "cluster_marginals.parquet",
        "fig6_posterior_sampling.png",
        "fig6_posterior_sampling.svg",
        "manifest.json",
    ] {
        assert!(res.join(f).exists(), "{f} missing");
    }
    use trellis_lab::experiment::table::{f64_column, read_parquet, str_column};
    let s = read_parquet(&res.join("summary.parquet")).unwrap();
    let keys = str_column(&s, "quantity").unwrap();
    let vals = f64_column(&s, "value").unwrap();
    let get = |k: &str| vals[keys.iter().position(|x| x == k).unwrap()].unwrap();
    assert!((get("log_z") - -26.18017755472025).abs() < 1e-6);
    assert_eq!(get("n_trees_finite"), 90.0);
    assert!(get("chi2_by_tree_p_value") > 1e-3);
    assert!(get("reference_chi2_by_value_p_value") > 1e-3);
    let p = read_parquet(&res.join("posterior_samples.parquet")).unwrap();
    let exact: f64 = f64_column(&p, "exact_probability")
        .unwrap()
        .iter()
        .map(|x| x.unwrap())
        .sum();
    assert!((exact - 1.0).abs() < 1e-9);
    let m = read_parquet(&res.join("cluster_marginals.parquet")).unwrap();
    assert_eq!(m.height(), 31);
}

#[test]
fn scaling_run_writes_table_and_chart() {
    let dir = scratch("scaling");
    let cfg = dir.join("s.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nkind = \"scaling\"\nname = \"s\"\nseed = 1\noutput_dir = \"{}\"\n[data]\nsource = \"generate\"\njet_type = \"w\"\n[scaling]\nn_min = 4\nn_max = 9\n",
            dir.join("results").display()
        ),
    );
    let out = run(&cfg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res = dir.join("results/s");
    assert!(res.join("scaling.png").exists() && res.join("scaling.svg").exists());
    let df = trellis_lab::experiment::table::read_parquet(&res.join("scaling.parquet")).unwrap();
    assert_eq!(df.height(), 6);
    let total = trellis_lab::experiment::table::f64_column(&df, "n_trees_total").unwrap();
    assert_eq!(total[5], Some(2_027_025.0));
}

#[test]
fn kind_and_sections_must_agree() {
    let dir = scratch("kinds");
    let cfg = dir.join("k.toml");
    std::fs::write(
        &cfg,
        "[experiment]\nkind = \"posterior_sampling\"\nname = \"k\"\nseed = 1\n[data]\nsource = \"generate\"\nn_jets = 1\n",
    )
    .unwrap();
    let out = run(&cfg);
    assert!(one_line_error(&out).contains("[sampling]"));
}

#[test]
fn sparse_run_reaches_the_exact_trellis_with_enough_seeds() {
    let dir = scratch("sparse");
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/ginkgo_jets");
    let cfg = dir.join("sp.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nkind = \"sparse\"\nname = \"sp\"\nseed = 3\noutput_dir = \"{}\"\n[data]\nsource = \"file\"\npath = \"{}/tree_100_n9.json\"\n[sparse]\nbudgets = [5, 3000]\nleaf_order = \"energy\"\n",
            dir.join("results").display(),
            data.display()
        ),
    );
    let out = run(&cfg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let res = dir.join("results/sp");
    assert!(res.join("fig7_sparse_trellis.png").exists());
    use trellis_lab::experiment::table::{f64_column, read_parquet, str_column, u64_column};
    let df = read_parquet(&res.join("sparse.parquet")).unwrap();
    let builder = str_column(&df, "builder").unwrap();
    let sparsity = f64_column(&df, "sparsity_index").unwrap();
    let gain = f64_column(&df, "mean_map_minus_greedy").unwrap();
    let exact = f64_column(&df, "exact_trellis_minus_greedy").unwrap();
    let finite = u64_column(&df, "jets_with_finite_map").unwrap();
    assert_eq!(builder.len(), 4);
    for i in 0..4 {
        let (s, g, e) = (sparsity[i].unwrap(), gain[i].unwrap(), exact[i].unwrap());
        assert!(s > 0.0 && s <= 1.0);
        // A sparse trellis never beats the exact MAP.
        assert!(g <= e + 1e-9, "{} {g} > {e}", builder[i]);
    }
    // 3000 simulated seed trees over 9 leaves encode (almost) every tree: the exact MAP.
    assert!(sparsity[1].unwrap() > 0.9 && finite[1] == Some(100));
    assert!((gain[1].unwrap() - exact[1].unwrap()).abs() < 0.05);
}

#[test]
fn dasgupta_run_reproduces_figure_4_and_writes_charts() {
    let dir = scratch("dasgupta");
    let cfg = dir.join("d.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nkind = \"dasgupta\"\nname = \"d\"\nseed = 1\noutput_dir = \"{}\"\n[dasgupta]\n[[dasgupta.adversarial]]\nn_pairs = 4\neps = 0.01\n[dasgupta.planted]\ninstances = 3\ncluster_sizes = [3, 3]\np_in = 0.9\np_out = 0.1\n",
            dir.join("results").display()
        ),
    );
    run_ok(&cfg);
    let res = dir.join("results/d");
    for f in [
        "fig4_0.png",
        "fig4_0.svg",
        "cost_ratios.png",
        "graphs.parquet",
    ] {
        assert!(res.join(f).exists(), "{f}");
    }
    let df = trellis_lab::experiment::table::read_parquet(&res.join("dasgupta.parquet")).unwrap();
    assert_eq!(df.height(), 4);
    let map = trellis_lab::experiment::table::f64_column(&df, "map_cost").unwrap();
    let al = trellis_lab::experiment::table::f64_column(&df, "average_linkage_cost").unwrap();
    assert!((map[0].unwrap() - 40.08).abs() < 1e-9 && (al[0].unwrap() - 44.08).abs() < 1e-9);
    for (m, a) in map.iter().zip(&al) {
        assert!(m.unwrap() <= a.unwrap() + 1e-9, "the MAP is never beaten");
    }
}

#[test]
fn pam50_and_cost_function_runs_write_their_outputs() {
    let dir = scratch("pam50");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/pam50");
    let cfg = dir.join("p.toml");
    let text = format!(
        "[experiment]\nkind = \"pam50\"\nname = \"p\"\nseed = 3\noutput_dir = \"{}\"\n[pam50]\npath = \"{}\"\nper_class = 1\nunlabelled = 2\n",
        dir.join("results").display(),
        data.display()
    );
    write(&cfg, &text);
    run_ok(&cfg);
    let res = dir.join("results/p");
    for f in [
        "pam50_raw.png",
        "pam50_centred.svg",
        "trees.nwk",
        "pam50_samples.parquet",
    ] {
        assert!(res.join(f).exists(), "{f}");
    }
    let df =
        trellis_lab::experiment::table::read_parquet(&res.join("pam50_trees.parquet")).unwrap();
    assert_eq!(df.height(), 6, "3 trees x 2 weightings");
    let e = trellis_lab::experiment::table::f64_column(&df, "energy").unwrap();
    // Per weighting: greedy, average linkage, MAP; the MAP energy is the lowest.
    for w in 0..2 {
        let (g, a, m) = (
            e[3 * w].unwrap(),
            e[3 * w + 1].unwrap(),
            e[3 * w + 2].unwrap(),
        );
        assert!(m <= g + 1e-9 && m <= a + 1e-9, "{g} {a} {m}");
    }

    // A missing data folder: one line naming the file, no output.
    let bad = dir.join("bad.toml");
    write(
        &bad,
        &text
            .replace("name = \"p\"", "name = \"q\"")
            .replace("data/pam50", "no/such/dir"),
    );
    let err = one_line_error(&run(&bad));
    assert!(err.contains("no/such/dir"), "{err}");
    assert!(!dir.join("results/q").exists());

    let cfg = dir.join("c.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nkind = \"cost_functions\"\nname = \"c\"\nseed = 1\noutput_dir = \"{}\"\n[cost_functions]\ncluster_sizes = [2, 2, 2]\nrandom_instances = 2\n",
            dir.join("results").display()
        ),
    );
    run_ok(&cfg);
    let res = dir.join("results/c");
    assert!(res.join("cost_functions.png").exists() && res.join("claims.txt").exists());
    let claims = std::fs::read_to_string(res.join("claims.txt")).unwrap();
    assert!(
        claims.contains("HOLDS  2:") && claims.contains("FAILS  3:"),
        "{claims}"
    );
}

#[test]
fn flat_pam50_run_writes_marginals_and_charts() {
    let dir = scratch("flat");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/pam50");
    let cfg = dir.join("f.toml");
    let text = format!(
        "[experiment]\nkind = \"flat_pam50\"\nname = \"f\"\nseed = 2\noutput_dir = \"{}\"\n[flat]\npath = \"{}\"\nper_class = 1\nunlabelled = 2\nperturb_draws = 40\nbeta = 5.0\n",
        dir.join("results").display(),
        data.display()
    );
    write(&cfg, &text);
    run_ok(&cfg);
    let res = dir.join("results/f");
    for f in [
        "fig2_affinity_vs_marginal.png",
        "fig3_perturb_vs_exact.svg",
        "fig4_affinities.png",
        "fig5_marginals.png",
        "map_clustering.txt",
    ] {
        assert!(res.join(f).exists(), "{f}");
    }
    let df = trellis_lab::experiment::table::read_parquet(&res.join("flat_pairs.parquet")).unwrap();
    assert_eq!(df.height(), 21, "7 samples, 21 pairs");
    let exact = trellis_lab::experiment::table::f64_column(&df, "exact_marginal").unwrap();
    let log = trellis_lab::experiment::table::f64_column(&df, "exact_log_marginal").unwrap();
    for (p, l) in exact.iter().zip(&log) {
        let (p, l) = (p.unwrap(), l.unwrap());
        assert!((0.0..=1.0).contains(&p) && (p.ln() - l).abs() < 1e-9);
    }
    // A bad bandwidth is a one-line error naming the key.
    let bad = dir.join("bad.toml");
    write(
        &bad,
        &text.replace("beta = 5.0", "beta = 5.0\nbandwidth = \"wide\""),
    );
    let err = one_line_error(&run(&bad));
    assert!(err.contains("flat.bandwidth"), "{err}");
}
