use super::figures::Summary;
use super::run::chi_square_by_tree;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, read_parquet};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};
use crate::subset::Subset;
use std::collections::BTreeMap;
use std::path::Path;

/// `summary.parquet` of results folder `dir` as (quantity, value) pairs.
fn summary(dir: &Path) -> Vec<(String, f64)> {
    let s = Summary::read(&Results::open(dir).unwrap()).unwrap();
    s.rows.into_iter().map(|(q, v)| (q, v.unwrap())).collect()
}

#[test]
fn figure_6_config_reproduces_the_accepted_run() {
    let dir = scratch("posterior_sampling");
    let res = run_and_replot(&config_in(&dir, "posterior_sampling.toml"));
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
    // The old command-line test's assertions.
    let s = summary(&res);
    let get = |k: &str| s.iter().find(|(q, _)| q == k).unwrap().1;
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
    assert!(assert_checks_pass(&res) >= 20);
}

#[test]
fn reruns_are_bit_identical() {
    let dir = scratch("posterior_sampling_rerun");
    let cfg = write_config(
        &dir,
        "p",
        r#"
[experiment]
kind = "posterior_sampling"
name = "p"
seed = 1
output_dir = "{out}"
[jets]
source = "file"
path = "{data}/ginkgo_jets/truth_5.json"
[posterior_sampling]
jet_index = 2
n_samples = 3000
"#,
    );
    let first = summary(&run_and_replot(&cfg));
    let second = summary(&run_and_replot(&cfg));
    assert_eq!(first.len(), second.len());
    for ((k, a), (_, b)) in first.iter().zip(&second) {
        assert_eq!(a.to_bits(), b.to_bits(), "{k}: {a} then {b}");
    }
    // Without reference draws, no reference rows.
    assert!(first.iter().all(|(k, _)| !k.starts_with("reference")));
}

#[test]
fn chi_square_by_tree_pools_the_trees_never_drawn() {
    // Three trees of probabilities 0.5, 0.3, 0.2; the last one never drawn.
    let (a, b) = (vec![Subset(1)], vec![Subset(2)]);
    let log_z = 0.0;
    let mut per_tree = BTreeMap::new();
    per_tree.insert(a, (50.0, 0.5f64.ln()));
    per_tree.insert(b, (50.0, 0.3f64.ln()));
    let (stat, dof, _) = chi_square_by_tree(&per_tree, 3, log_z);
    // Expected 50, 30, 20 against observed 50, 50, 0.
    let want = 0.0 + 20.0f64.powi(2) / 30.0 + 20.0;
    assert!((stat - want).abs() < 1e-9, "{stat} vs {want}");
    assert_eq!(dof, 2);
    // Every tree drawn: no pooled bin.
    let (_, dof, _) = chi_square_by_tree(&per_tree, 2, log_z);
    assert_eq!(dof, 1);
}

const HEAD: &str = "[experiment]\nkind = \"posterior_sampling\"\nname = \"p\"\nseed = 1\n\
                    [jets]\nsource = \"file\"\npath = \"../data/ginkgo_jets/truth_5.json\"\n";

#[test]
fn bad_sections_are_one_line_errors_naming_the_key() {
    for (extra, want) in [
        ("", "needs a [posterior_sampling] section"),
        (
            "[posterior_sampling]\nn_samples = 0\n",
            "posterior_sampling.n_samples",
        ),
        (
            "[posterior_sampling]\nn_samples = 10\nmax_enumerate_leaves = 11\n",
            "posterior_sampling.max_enumerate_leaves",
        ),
        (
            "[posterior_sampling]\nn_samples = 10\nsamples = 3\n",
            "unknown field `samples`",
        ),
        (
            "[posterior_sampling]\nn_samples = 10\n[methods]\nbeam = false\n",
            "methods.beam does not apply",
        ),
        (
            "[posterior_sampling]\nn_samples = 10\n[sampling]\nn_samples = 10\n",
            "unknown field `sampling`",
        ),
    ] {
        let err = config_error(&format!("{HEAD}{extra}"));
        assert!(err.contains(want), "{extra:?}: {err}");
    }
}

#[test]
fn a_jet_index_past_the_dataset_is_an_error_naming_the_key() {
    let dir = scratch("posterior_sampling_index");
    let cfg = write_config(
        &dir,
        "p",
        "[experiment]\nkind = \"posterior_sampling\"\nname = \"p\"\nseed = 1\noutput_dir = \"{out}\"\n\
         [jets]\nsource = \"file\"\npath = \"{data}/ginkgo_jets/truth_5.json\"\n\
         [posterior_sampling]\nn_samples = 10\njet_index = 10\n",
    );
    let err = crate::experiment::run_config(&cfg, true).unwrap_err();
    assert!(
        format!("{err:#}").contains("posterior_sampling.jet_index = 10"),
        "{err:#}"
    );
    assert!(!dir.join("results/p").exists(), "a failed run left results");
}

#[test]
fn an_empty_or_non_numeric_reference_file_is_an_error_not_a_pass() {
    let dir = scratch("posterior_sampling_empty_reference");
    for (name, body) in [
        ("empty", r#"{"sample_loglh": []}"#),
        ("text", r#"{"sample_loglh": ["a", "b"]}"#),
    ] {
        let reference = dir.join(format!("{name}.json"));
        std::fs::write(&reference, body).unwrap();
        let cfg = write_config(
            &dir,
            name,
            &format!(
                "[experiment]\nkind = \"posterior_sampling\"\nname = \"{name}\"\nseed = 1\noutput_dir = \"{{out}}\"\n\
                 [jets]\nsource = \"file\"\npath = \"{{data}}/ginkgo_jets/truth_5.json\"\n\
                 [posterior_sampling]\nn_samples = 10\njet_index = 2\nreference_samples = \"{}\"\n",
                reference.display()
            ),
        );
        let err = crate::experiment::run_config(&cfg, true).unwrap_err();
        assert!(format!("{err:#}").contains("sample_loglh"), "{err:#}");
        assert!(!dir.join(format!("results/{name}")).exists());
    }
}
