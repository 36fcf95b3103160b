//! The dasgupta kind end to end (configs/dasgupta.toml in a scratch folder) and its config
//! errors.

use crate::experiment::table::{f64_column, read_parquet, str_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};
use crate::experiment::{run_config, Outcome};
use crate::tree::Tree;

#[test]
fn figure_4_config_reproduces_the_paper_and_redraws_identically() {
    let dir = scratch("dasgupta-full");
    let cfg = config_in(&dir, "dasgupta.toml");
    let res = run_and_replot(&cfg);
    for f in [
        "fig4_0.png",
        "fig4_0.svg",
        "fig4_1.png",
        "fig4_2.png",
        "fig4_3.svg",
        "cost_ratios.png",
        "cost_ratios.svg",
    ] {
        assert!(res.join(f).is_file(), "{f}");
    }
    let df = read_parquet(&res.join("dasgupta.parquet")).unwrap();
    assert_eq!(df.height(), 4 + 50);
    let map = f64_column(&df, "map_cost").unwrap();
    let al = f64_column(&df, "average_linkage_cost").unwrap();
    let gr = f64_column(&df, "greedy_cost").unwrap();
    assert!((map[0].unwrap() - 40.08).abs() < 1e-9 && (al[0].unwrap() - 44.08).abs() < 1e-9);
    for i in 0..df.height() {
        let m = map[i].unwrap();
        assert!(
            m <= al[i].unwrap() + 1e-9 && m <= gr[i].unwrap() + 1e-9,
            "the MAP is never beaten"
        );
    }
    // Each tree as built is the canonical tree with its children in another order.
    for method in ["map", "average_linkage", "greedy"] {
        let canonical = str_column(&df, &format!("{method}_newick")).unwrap();
        let built = str_column(&df, &format!("{method}_newick_as_built")).unwrap();
        for (c, b) in canonical.iter().zip(&built) {
            assert_eq!(&Tree::from_newick(b).unwrap().to_newick(), c);
        }
    }
    let points = read_parquet(&res.join("points.parquet")).unwrap();
    assert_eq!(points.height(), 8 + 8 + 12 + 16 + 50 * 12);
    assert!(assert_checks_pass(&res) >= 20);
    assert_eq!(run_config(&cfg, false).unwrap(), Outcome::UpToDate(res));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn small_run_writes_every_output() {
    // The old command-line test's config: one ladder and three small planted graphs.
    let dir = scratch("dasgupta-small");
    let cfg = write_config(
        &dir,
        "d",
        "[experiment]\nkind = \"dasgupta\"\nname = \"d\"\nseed = 1\noutput_dir = \"{out}\"\n[dasgupta]\n[[dasgupta.adversarial]]\nn_pairs = 4\neps = 0.01\n[dasgupta.planted]\ninstances = 3\ncluster_sizes = [3, 3]\np_in = 0.9\np_out = 0.1\n",
    );
    let res = run_and_replot(&cfg);
    for f in ["fig4_0.png", "fig4_0.svg", "cost_ratios.png", "graphs.parquet"] {
        assert!(res.join(f).exists(), "{f}");
    }
    let df = read_parquet(&res.join("dasgupta.parquet")).unwrap();
    assert_eq!(df.height(), 4);
    let map = f64_column(&df, "map_cost").unwrap();
    let al = f64_column(&df, "average_linkage_cost").unwrap();
    assert!((map[0].unwrap() - 40.08).abs() < 1e-9 && (al[0].unwrap() - 44.08).abs() < 1e-9);
    for (m, a) in map.iter().zip(&al) {
        assert!(m.unwrap() <= a.unwrap() + 1e-9, "the MAP is never beaten");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

const HEAD: &str = "[experiment]\nkind = \"dasgupta\"\nname = \"d\"\nseed = 1\n";
const LADDER: &str = "[[dasgupta.adversarial]]\nn_pairs = 4\neps = 0.01\n";
const PLANTED: &str =
    "[dasgupta.planted]\ninstances = 2\ncluster_sizes = [3, 3]\np_in = 0.9\np_out = 0.1\n";

/// The error of a dasgupta config with these sections.
fn error_of(sections: &str) -> String {
    config_error(&format!("{HEAD}{sections}"))
}

#[test]
fn config_errors_name_the_key_and_the_fix() {
    let ok = format!("[dasgupta]\n{LADDER}{PLANTED}");
    let e = error_of("[methods]\nmax_exact_leaves = 16\n");
    assert!(e.contains("[dasgupta]"), "{e}");
    assert!(error_of("[dasgupta]\n").contains("[[dasgupta.adversarial]]"));
    let e = error_of(&format!("[dasgupta]\nbeta = 0.0\n{LADDER}"));
    assert!(e.contains("dasgupta.beta"), "{e}");
    let e = error_of(&format!("[dasgupta]\nbata = 1.0\n{LADDER}"));
    assert!(e.contains("bata"), "{e}");
    let e = error_of(&format!("{ok}[jets]\nsource = \"generate\"\n"));
    assert!(e.contains("jets"), "{e}");
    let e = error_of(&format!("[methods]\nbeam = false\n{ok}"));
    assert!(e.contains("methods.beam"), "{e}");
    let e = error_of(&format!(
        "[methods]\nmax_exact_leaves = 10\n[dasgupta]\n{}",
        LADDER.replace("n_pairs = 4", "n_pairs = 6")
    ));
    assert!(e.contains("methods.max_exact_leaves = 10"), "{e}");
    let e = error_of(&format!("[dasgupta]\n{LADDER}middle_bonus = 0.5\n"));
    assert!(e.contains("middle_bonus"), "{e}");
    let e = error_of(&format!("[methods]\nmax_exact_leaves = 5\n[dasgupta]\n{PLANTED}"));
    assert!(
        e.contains("dasgupta.planted") && e.contains("methods.max_exact_leaves"),
        "{e}"
    );
    for (from, to, key) in [
        ("p_in = 0.9", "p_in = 1.5", "dasgupta.planted.p_in"),
        ("instances = 2", "instances = 0", "dasgupta.planted.instances"),
        (
            "instances = 2",
            "instances = 1000000000000",
            "dasgupta.planted.instances",
        ),
        ("[3, 3]", "[3, 0]", "dasgupta.planted.cluster_sizes"),
    ] {
        let e = error_of(&format!("[dasgupta]\n{}", PLANTED.replace(from, to)));
        assert!(e.contains(key), "{e}");
    }
}
