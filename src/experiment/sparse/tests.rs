use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};

#[test]
fn figure_7_config_reproduces_the_accepted_run() {
    let dir = scratch("sparse");
    let res = run_and_replot(&config_in(&dir, "sparse.toml"));
    let df = read_parquet(&res.join("sparse.parquet")).unwrap();
    assert_eq!(df.height(), 24);
    assert!(assert_checks_pass(&res) >= 30);
}

#[test]
fn generator_order_config_reproduces_the_accepted_run() {
    let dir = scratch("sparse_generator_order");
    let res = run_and_replot(&config_in(&dir, "sparse_generator_order.toml"));
    assert!(assert_checks_pass(&res) >= 30);
}

#[test]
fn sparse_run_reaches_the_exact_trellis_with_enough_seeds() {
    // The old command-line test.
    let dir = scratch("sparse_small");
    let cfg = write_config(
        &dir,
        "sp",
        "[experiment]\nkind = \"sparse\"\nname = \"sp\"\nseed = 3\noutput_dir = \"{out}\"\n\
         [jets]\nsource = \"file\"\npath = \"{data}/ginkgo_jets/tree_100_n9.json\"\n\
         [sparse]\nbudgets = [5, 3000]\nleaf_order = \"energy\"\n",
    );
    let res = run_and_replot(&cfg);
    assert!(res.join("fig7_sparse_trellis.png").exists());
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

const HEAD: &str = "[experiment]\nkind = \"sparse\"\nname = \"s\"\nseed = 1\n";
const FILE: &str = "[jets]\nsource = \"file\"\npath = \"../data/ginkgo_jets/tree_100_n9.json\"\n";

#[test]
fn bad_sections_are_one_line_errors_naming_the_key() {
    for (body, want) in [
        (FILE.to_string(), "needs a [sparse] section"),
        (
            format!("{FILE}[sparse]\nbudgets = []\n"),
            "sparse.budgets must list",
        ),
        (
            format!("{FILE}[sparse]\nbudgets = [0, 5]\n"),
            "sparse.budgets must list",
        ),
        (
            format!("{FILE}[sparse]\nbudgets = [100000000]\n"),
            "sparse.budgets[0] = 100000000 is more than the limit of 1000000: it would take about 95.4 GiB of memory",
        ),
        (
            format!("{FILE}[sparse]\nbudgets = [5]\nseed_beam_size = 0\n"),
            "sparse.seed_beam_size",
        ),
        (
            format!("{FILE}[sparse]\nbudgets = [5]\nleaf_order = \"random\"\n"),
            "unknown variant `random`",
        ),
        (
            format!("{FILE}[sparse]\nbudgets = [5]\n[methods]\ntrellis = false\n"),
            "methods.trellis does not apply",
        ),
        (
            "[jets]\nsource = \"generate\"\nn_jets = 5\nmin_leaves = 5\nmax_leaves = 8\n[sparse]\nbudgets = [5]\n".into(),
            "jets.min_leaves = jets.max_leaves",
        ),
    ] {
        let err = config_error(&format!("{HEAD}{body}"));
        assert!(err.contains(want), "{body:?}: {err}");
    }
    // The beam-search line's parameters do apply.
    let ok = format!(
        "{HEAD}{FILE}[sparse]\nbudgets = [5]\n[methods]\nbeam_size = 10\nbeam_dedup = \"equal_total\"\nmax_exact_leaves = 12\n"
    );
    crate::experiment::config::parse_in(
        &crate::experiment::Registry::builtin(),
        &ok,
        &crate::experiment::test_support::crate_dir().join("configs"),
    )
    .map_err(|e| e.to_string())
    .unwrap();
}
