use crate::experiment::table::{f64_column, read_parquet, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch,
};

#[test]
fn smoke_config_reproduces_the_accepted_run() {
    let dir = scratch("astar_smoke");
    let res = run_and_replot(&config_in(&dir, "astar_smoke.toml"));
    for f in ["astar_certified", "astar_time", "astar_gap"] {
        assert!(res.join(format!("{f}.png")).exists() && res.join(format!("{f}.svg")).exists());
    }
    let df = read_parquet(&res.join("astar.parquet")).unwrap();
    let n: Vec<u64> = u64_column(&df, "n_leaves")
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(n, [8, 8, 10, 10, 12, 12]);
    // A* equals the full trellis on every jet.
    let ll = f64_column(&df, "log_likelihood").unwrap();
    let full = f64_column(&df, "full_map").unwrap();
    for (a, f) in ll.iter().zip(&full) {
        let (a, f) = (a.unwrap(), f.unwrap());
        assert!((a - f).abs() <= 1e-9 * f.abs().max(1.0), "{a} vs {f}");
    }
    // The MAP-only trellis gives the full trellis's MAP bit for bit, and every jet's exact MAP
    // is known.
    let map = f64_column(&df, "map_trellis").unwrap();
    let exact = f64_column(&df, "exact_map").unwrap();
    for ((m, f), e) in map.iter().zip(&full).zip(&exact) {
        assert_eq!(m.unwrap().to_bits(), f.unwrap().to_bits());
        assert!(e.is_some());
    }
    assert!(assert_checks_pass(&res) >= 8);
}

const HEAD: &str = "[experiment]\nkind = \"astar\"\nname = \"a\"\nseed = 1\n";

#[test]
fn bad_sections_are_one_line_errors_naming_the_key() {
    let generate = "[jets]\nsource = \"generate\"\n";
    let sizes = "[astar]\nsizes = [8, 10]\n";
    for (body, want) in [
        (generate.to_string(), "needs a [astar] section".to_string()),
        (
            format!("[jets]\nsource = \"file\"\npath = \"../data/ginkgo_jets/truth_5.json\"\n{sizes}"),
            "jets.source = \"generate\"".into(),
        ),
        (format!("{generate}n_jets = 3\n{sizes}"), "jets.n_jets does not apply".into()),
        (format!("{generate}max_leaves = 9\n{sizes}"), "do not apply to kind = \"astar\"".into()),
        (format!("{generate}[astar]\nsizes = []\n"), "astar.sizes".into()),
        (format!("{generate}[astar]\nsizes = [8, 80]\n"), "astar.sizes".into()),
        (format!("{generate}[astar]\nsizes = [8, 8]\n"), "twice".into()),
        (format!("{generate}{sizes}max_seconds = 0\n"), "astar.max_seconds".into()),
        (format!("{generate}{sizes}max_gib = -1\n"), "astar.max_gib".into()),
        (format!("{generate}{sizes}splits_kept = 0\n"), "astar.splits_kept".into()),
        (format!("{generate}{sizes}full_trellis_max_leaves = 30\n"), "full_trellis_max_leaves".into()),
        (format!("{generate}{sizes}map_trellis_max_leaves = 27\n"), "map_trellis_max_leaves".into()),
        (format!("{generate}{sizes}budget = 3\n"), "unknown field".into()),
    ] {
        let err = config_error(&format!("{HEAD}{body}"));
        assert!(err.contains(&want), "{body:?}: {err}");
    }
}

#[test]
fn gaps_below_rounding_are_zero_and_larger_ones_kept() {
    use super::figures::{round_gap, GAP_ROUNDING};
    let map = -87.09313301961576;
    // Noise of a few ulps either side of 0 (what summing in another order gives) is 0 ...
    assert_eq!(round_gap(-1.4e-14, Some(map)), 0.0);
    assert_eq!(round_gap(2.8e-14, Some(map)), 0.0);
    // ... a gap just above the tolerance, or without a scale, is kept as it is.
    let big = 2.0 * GAP_ROUNDING * map.abs();
    assert_eq!(round_gap(big, Some(map)), big);
    assert_eq!(round_gap(-big, Some(map)), -big);
    assert_eq!(round_gap(1e-15, None), 1e-15);
    assert_eq!(round_gap(1e-15, Some(f64::NAN)), 1e-15);
}
