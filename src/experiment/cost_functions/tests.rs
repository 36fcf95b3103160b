//! The cost-function kind: the study on small instances (by hand), the smoke config end to end
//! (tables, claims, figures redrawn byte for byte, expected numbers), and every config error.

use super::*;
use crate::data::graphs::{planted_labels, WeightScheme};
use crate::experiment::config::parse_in;
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, verdicts_of_edited,
};
use crate::experiment::table::{
    f64_column, read_parquet, str_column, u64_column, write_parquet,
};
use crate::experiment::Registry;
use polars::prelude::{NamedFrom, Series};
use std::path::Path;

#[test]
fn closed_form_count_of_class_respecting_trees() {
    // Two classes of 2: the root splits them, each side has one tree: 1 tree.
    assert_eq!(n_class_respecting_trees(&[2, 2]), 1);
    // Classes 3 and 2: 3 trees over the first, 1 over the second, 1 way to join.
    assert_eq!(n_class_respecting_trees(&[3, 2]), 3);
    assert_eq!(n_class_respecting_trees(&[2, 2, 2]), 3);
    assert_eq!(n_class_respecting_trees(&[3, 3, 2]), 27);
}

#[test]
fn claim_two_holds_and_claim_three_fails_on_a_small_instance() {
    let labels = planted_labels(&[2, 2, 2]).unwrap();
    let (trees, dps) = all_trees_with_purity(&labels).unwrap();
    let s = study(
        &WeightScheme::WithinOne.weights(&labels).unwrap(),
        &labels,
        Energy::Dasgupta,
        &trees,
        &dps,
    )
    .unwrap();
    assert!(s.map_set_is_dp_one_set, "{s:?}");
    assert_eq!(s.n_dp_one as u128, n_class_respecting_trees(&[2, 2, 2]));
    assert!(dp_one_iff_classes_are_subtrees(&trees, &dps, &labels));
    assert_eq!(
        class_node_counts(&trees, &dps, &labels),
        ClassNodeCounts {
            class_respecting: 3,
            mismatches: 0
        }
    );
    assert!((s.trellis_energy - s.min_energy).abs() < 1e-9);
    // HCC pays each positive (within-class) pair exactly once, wherever it is split, so
    // {a1 a2 c1}{b1 b2 c2}-style trees, which split class c, tie with the best
    // class-respecting trees: the MAP set and the DP = 1 set differ.
    let s = study(
        &WeightScheme::PlusMinusOne.weights(&labels).unwrap(),
        &labels,
        Energy::Hcc,
        &trees,
        &dps,
    )
    .unwrap();
    assert!(!s.map_set_is_dp_one_set, "{s:?}");
    assert!(s.n_map_trees > s.n_map_with_dp_one && s.map_dp.1 == 1.0 && s.map_dp.0 < 1.0);
    assert_eq!(s.trellis_n_map_trees, s.n_map_trees as u128);
    // Brute force: the energy is 3 (within pairs) + 4 (two across pairs at depth 1 each side).
    assert_eq!(s.min_energy, 7.0);
}

#[test]
fn positive_weights_make_every_hcc_tree_tie() {
    // With no negative weight, every pair is paid once, at its lowest common ancestor.
    let labels = planted_labels(&[2, 3]).unwrap();
    let (trees, dps) = all_trees_with_purity(&labels).unwrap();
    let s = study(
        &WeightScheme::WithinOne.weights(&labels).unwrap(),
        &labels,
        Energy::Hcc,
        &trees,
        &dps,
    )
    .unwrap();
    assert_eq!(Some(s.n_map_trees as u128), n_binary_trees(5));
    // Every energy equal: no correlation is defined (NaN, not 0).
    assert!(s.energy_dp_correlation.is_nan());
}

#[test]
fn random_summary_of_no_rows_is_defined() {
    let r = RandomSummary::of(&[]);
    assert_eq!((r.mean_diff, r.sd, r.n, r.n_corr), (0.0, 0.0, 0, 0));
    let r = RandomSummary::of(&[(0.5, 0.4, -0.2), (0.3, 0.4, f64::NAN)]);
    assert!((r.mean_diff - 0.0).abs() < 1e-12 && (r.sd - 0.1).abs() < 1e-12);
    assert_eq!((r.negative, r.n_corr), (1, 1));
    assert!(r.unrelated());
}

#[test]
fn smoke_config_runs_redraws_and_checks() {
    let dir = scratch("cost-smoke");
    let res = run_and_replot(&config_in(&dir, "cost_functions_smoke.toml"));
    let claims = std::fs::read_to_string(res.join("claims.txt")).unwrap();
    // The full config's verdicts: claims 1, 2, 4 hold, 3 and 5 fail.
    for (k, verdict) in [(1, "HOLDS"), (2, "HOLDS"), (3, "FAILS"), (4, "HOLDS"), (5, "FAILS")] {
        assert!(claims.contains(&format!("{verdict}  {k}:")), "{claims}");
    }
    let t = crate::experiment::table::read_parquet(&res.join("cost_functions.parquet")).unwrap();
    assert_eq!(t.height(), 2 * (2 + 10 + 2), "(1/0, +1/-1, 10 random, 2 negated) x 2");
    assert!(res.join("cost_functions.png").exists() && res.join("cost_functions.svg").exists());
    assert!(assert_checks_pass(&res) >= 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The kind's measures of results folder `dir`, as (id, value bits) so that NaN compares equal.
fn measures_of(dir: &Path) -> Vec<(String, u64)> {
    let results = crate::experiment::kind::Results::open(dir).unwrap();
    CostFunctions
        .measures(&results)
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.value.to_bits()))
        .collect()
}

/// Measure `id` of `measures`.
fn value_of(measures: &[(String, u64)], id: &str) -> f64 {
    let m = measures.iter().find(|m| m.0 == id).unwrap_or_else(|| panic!("no {id}"));
    f64::from_bits(m.1)
}

/// Replaces the column of the Parquet file `path` named like `series` with it.
fn replace_column(path: &Path, series: Series) {
    let mut t = read_parquet(path).unwrap();
    t.with_column(series.into()).unwrap();
    write_parquet(&mut t, path).unwrap();
}

#[test]
fn check_ignores_the_stored_verdicts() {
    let dir = scratch("cost-stored-verdicts");
    let res = run_and_replot(&config_in(&dir, "cost_functions_smoke.toml"));
    let before = measures_of(&res);
    assert!(assert_checks_pass(&res) >= 5);
    // Flip every stored verdict of claims.parquet: check decides the claims from the numbers,
    // so nothing it measures changes and every check still passes.
    let path = res.join("claims.parquet");
    let t = read_parquet(&path).unwrap();
    let holds = str_column(&t, "holds").unwrap();
    let flipped: Vec<&str> = holds
        .iter()
        .map(|h| if h == "true" { "false" } else { "true" })
        .collect();
    assert!(flipped.iter().zip(&holds).all(|(f, h)| f != h));
    replace_column(&path, Series::new("holds".into(), flipped));
    assert_eq!(str_column(&read_parquet(&path).unwrap(), "holds").unwrap()[0], "false");
    assert_eq!(measures_of(&res), before);
    let all_pass = |v: Vec<crate::experiment::check::Verdict>| v.len() >= 5 && v.iter().all(|v| v.passed);
    assert!(all_pass(verdicts_of_edited(&res)));
    // `check` itself refuses a folder whose table was edited after the run, naming it.
    let e = format!("{:#}", crate::experiment::check_results(&res).unwrap_err());
    assert!(e.contains("claims.parquet was edited after the run"), "{e}");
    // Without claims.parquet and claims.txt at all, the same.
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(res.join("claims.txt")).unwrap();
    assert_eq!(measures_of(&res), before);
    assert!(all_pass(verdicts_of_edited(&res)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_recomputes_the_claims_from_the_numbers() {
    let dir = scratch("cost-claim-numbers");
    let res = run_and_replot(&config_in(&dir, "cost_functions_smoke.toml"));
    let before = measures_of(&res);
    let claim = |m: &[(String, u64)], k: usize| value_of(m, &format!("claim{k}.holds"));
    assert_eq!(
        (1..=5).map(|k| claim(&before, k)).collect::<Vec<_>>(),
        [1.0, 1.0, 0.0, 1.0, 0.0]
    );
    let path = res.join("cost_functions.parquet");
    let t = read_parquet(&path).unwrap();
    let scheme = str_column(&t, "scheme").unwrap();
    let energy = str_column(&t, "energy").unwrap();
    let row = |s: &str, e: &str| (0..t.height()).find(|&i| scheme[i] == s && energy[i] == e);
    let (neg_one_zero, neg_pm_one) = (
        row("-(1/0)", "Dasgupta").unwrap(),
        row("-(+1/-1)", "HCC").unwrap(),
    );
    let one_zero = row("1/0", "Dasgupta").unwrap();

    // Claim 5 fails because the negated cases' MAP trees reach above the worst DP; lower their
    // highest MAP DP to the worst DP and the claim holds.
    let worst = f64_column(&t, "all_trees_dp_min").unwrap();
    let mut map_max = f64_column(&t, "map_dp_max").unwrap();
    for i in [neg_one_zero, neg_pm_one] {
        map_max[i] = worst[i];
    }
    replace_column(&path, Series::new("map_dp_max".into(), map_max));
    let after = measures_of(&res);
    assert_eq!(claim(&after, 5), 1.0);
    assert_eq!(value_of(&after, "negated_one_zero.dasgupta.map_dp_max"), worst[neg_one_zero].unwrap());

    // Claim 1 holds tree by tree; record one tree breaking the equivalence and it fails.
    let mismatches: Vec<Option<u64>> = vec![Some(1); t.height()];
    replace_column(
        &path,
        Series::new("n_dp_one_mismatches".into(), mismatches),
    );
    let after = measures_of(&res);
    assert_eq!(claim(&after, 1), 0.0);
    assert_eq!(value_of(&after, "all_trees.n_dp_one_mismatches"), 1.0);

    // Claim 2: one more MAP tree than DP = 1 trees under 1/0 weights and the sets differ; the
    // stored text column map_set_is_dp_one_set ("true") is not read.
    let mut n_map = u64_column(&t, "n_map_trees").unwrap();
    n_map[one_zero] = n_map[one_zero].map(|n| n + 1);
    replace_column(&path, Series::new("n_map_trees".into(), n_map));
    let after = measures_of(&res);
    assert_eq!(claim(&after, 2), 0.0);
    assert_eq!(value_of(&after, "one_zero.dasgupta.map_set_is_dp_one_set"), 0.0);
    assert_eq!(str_column(&read_parquet(&path).unwrap(), "map_set_is_dp_one_set").unwrap()[one_zero], "true");

    // Claims 3 and 4 are untouched; check now reports the three changed verdicts as failures.
    assert_eq!((claim(&after, 3), claim(&after, 4)), (0.0, 1.0));
    let failed: Vec<String> = verdicts_of_edited(&res)
        .into_iter()
        .filter(|v| !v.passed)
        .map(|v| v.expected.id)
        .collect();
    for id in ["claim1.holds", "claim2.holds", "claim5.holds"] {
        assert!(failed.iter().any(|f| f == id), "{id} passed: {failed:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn config_errors_are_one_line_and_name_the_key() {
    let head = "[experiment]\nkind = \"cost_functions\"\nname = \"c\"\nseed = 1\n";
    for (section, needle) in [
        (
            "[cost_functions]\ncluster_sizes = [5, 5]\nrandom_instances = 1\n",
            "at most 8",
        ),
        (
            "[cost_functions]\ncluster_sizes = [8]\nrandom_instances = 1\n",
            "cost_functions.cluster_sizes",
        ),
        (
            "[cost_functions]\ncluster_sizes = [3, 0, 2]\nrandom_instances = 1\n",
            "non-empty",
        ),
        (
            "[cost_functions]\ncluster_sizes = [3, 3, 2]\nrandom_instances = 0\n",
            "cost_functions.random_instances must be at least 1",
        ),
        (
            "[cost_functions]\ncluster_sizes = [3, 3, 2]\nrandom_instances = 10001\n",
            "cost_functions.random_instances = 10001 is more than the limit of 10000: it would take about 4.9 MiB of memory and about 13.5 min",
        ),
        ("", "needs a [cost_functions] section"),
        (
            "[cost_functions]\ncluster_sizes = [3, 3, 2]\n",
            "\"random_instances\" is missing",
        ),
        (
            "[cost_functions]\ncluster_sizes = [3, 3, 2]\nrandom_instances = 1\n[methods]\ntrellis = true\n",
            "unknown field `methods`",
        ),
        (
            "[cost_functions]\ncluster_sizes = [3, 3, 2]\nrandom_instances = 1\nseeds = 2\n",
            "unknown field `seeds`",
        ),
    ] {
        let e = config_error(&format!("{head}{section}"));
        assert!(e.contains(needle), "{needle}: {e}");
    }
    // The largest allowed number of matrices is accepted.
    let ok = format!(
        "{head}[cost_functions]\ncluster_sizes = [3, 3, 2]\nrandom_instances = {MAX_RANDOM_INSTANCES}\n"
    );
    assert!(parse_in(&Registry::builtin(), &ok, Path::new(".")).is_ok());
}
