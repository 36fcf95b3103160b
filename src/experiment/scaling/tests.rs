use super::n_splits;
use crate::experiment::table::{f64_column, read_parquet, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};

#[test]
fn smoke_config_reproduces_the_accepted_run() {
    let dir = scratch("scaling_smoke");
    let res = run_and_replot(&config_in(&dir, "scaling_smoke.toml"));
    let df = read_parquet(&res.join("scaling.parquet")).unwrap();
    let n: Vec<u64> = u64_column(&df, "n_leaves")
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(n, [6, 7, 8, 9, 10]);
    // log Z, MAP, finite-tree count and entropy at each N, the MAP-only trellis's bits, and 2
    // properties.
    assert_eq!(assert_checks_pass(&res), 23);
    let same = u64_column(&df, "map_trellis_same_bits").unwrap();
    assert!(same.iter().all(|v| *v == Some(1)));
}

#[test]
fn scaling_run_writes_table_and_chart() {
    // The old command-line test.
    let dir = scratch("scaling");
    let cfg = write_config(
        &dir,
        "s",
        "[experiment]\nkind = \"scaling\"\nname = \"s\"\nseed = 1\noutput_dir = \"{out}\"\n\
         [jets]\nsource = \"generate\"\njet_type = \"w\"\n[scaling]\nn_min = 4\nn_max = 9\n",
    );
    let res = run_and_replot(&cfg);
    assert!(res.join("scaling.png").exists() && res.join("scaling.svg").exists());
    let df = read_parquet(&res.join("scaling.parquet")).unwrap();
    assert_eq!(df.height(), 6);
    let total = f64_column(&df, "n_trees_total").unwrap();
    assert_eq!(total[5], Some(2_027_025.0));
    let finite = f64_column(&df, "n_trees_finite").unwrap();
    assert!(finite.iter().zip(&total).all(|(f, t)| f.unwrap() <= t.unwrap()));
}

#[test]
fn split_evaluations_follow_the_3_to_the_n_law() {
    // N = 3: three splits of the root, one of each pair.
    assert_eq!(n_splits(3), 6.0);
    assert_eq!(n_splits(20), 1_742_343_625.0);
}

const HEAD: &str = "[experiment]\nkind = \"scaling\"\nname = \"s\"\nseed = 1\n";

#[test]
fn bad_sections_are_one_line_errors_naming_the_key() {
    let generate = "[jets]\nsource = \"generate\"\n";
    let sizes = "[scaling]\nn_min = 4\nn_max = 9\n";
    for (body, want) in [
        (generate.to_string(), "needs a [scaling] section".to_string()),
        (
            format!("[jets]\nsource = \"file\"\npath = \"../data/ginkgo_jets/truth_5.json\"\n{sizes}"),
            "jets.source = \"generate\"".into(),
        ),
        (
            format!("{generate}n_jets = 3\n{sizes}"),
            "jets.n_jets does not apply".into(),
        ),
        (
            format!("{generate}max_leaves = 9\n{sizes}"),
            "jets.max_leaves do not apply".into(),
        ),
        (
            format!("{generate}[scaling]\nn_min = 9\nn_max = 4\n"),
            "scaling.n_min <= scaling.n_max".into(),
        ),
        (
            format!("{generate}[scaling]\nn_min = 4\nn_max = 23\n"),
            "scaling.n_max = 23 exceeds methods.max_exact_leaves = 22".into(),
        ),
        (
            format!("{generate}[scaling]\nn_min = 4\nn_max = 1000000000000\n"),
            "scaling.n_max = 1000000000000 exceeds methods.max_exact_leaves = 22: already N = 23 would take about".into(),
        ),
        (
            format!("{generate}{sizes}[methods]\nsparse = true\n"),
            "methods.sparse does not apply".into(),
        ),
    ] {
        let err = config_error(&format!("{HEAD}{body}"));
        assert!(err.contains(&want), "{body:?}: {err}");
    }
}
