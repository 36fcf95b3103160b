use super::methods::{features, jet_features, BoardMethod};
use super::run::{dataset_energies, rows};
use crate::experiment::kind::Results;
use crate::experiment::table::{read_parquet, str_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};

const HEAD: &str =
    "[experiment]\nkind = \"board\"\nname = \"b\"\nseed = 5\noutput_dir = \"{out}\"\n";
const JETS: &str = "[[board.datasets]]\nname = \"jets\"\nsource = \"ginkgo\"\ninstances = 3\nmin_leaves = 5\nmax_leaves = 7\n";
const GRAPH: &str =
    "[[board.datasets]]\nname = \"graph\"\nsource = \"planted_partition\"\npoints = 8\n";

#[test]
fn bad_configs_get_one_line_errors_naming_the_key() {
    for (extra, needle) in [
        (
            "[board]\nmethods = [\"trellis\", \"nj\"]\n",
            "unknown board method \"nj\"",
        ),
        ("[board]\nmethods = [\"kt\", \"kt\"]\n", "twice"),
        ("[board]\nmethods = []\n", "board.methods is empty"),
        ("[board]\nmax_exact_leaves = 30\n", "board.max_exact_leaves"),
        ("[board]\nrank_cap = 0\n", "board.rank_cap"),
        ("[board]\nkt_radius = -1.0\n", "board.kt_radius"),
        ("[board]\nbeam_size = 0\n", "board.beam_size"),
        ("[board]\nmax_search_seconds = 0.0\n", "board.max_search_seconds"),
        ("[board.pydt]\nalpha = 1.5\n", "board.pydt"),
        ("[board.bhc]\ngamma = 1.5\n", "board.bhc.gamma"),
        ("[board.bhc]\nalpha = 0.0\n", "board.bhc.alpha"),
        ("[board.bhc]\nmax_points = 0\n", "board.bhc.max_points"),
        ("[board.bhc]\nbeta = 1.0\n", "beta"),
        (
            "[board.coalescent]\nparticles = 0\n",
            "board.coalescent.particles",
        ),
    ] {
        let text = format!("{HEAD}{extra}{JETS}").replace("{out}", "/tmp/unused");
        let e = config_error(&text);
        assert!(e.contains(needle), "{needle}: {e}");
    }
    let e = config_error(&format!("{HEAD}[board]\n").replace("{out}", "/tmp/unused"));
    assert!(e.contains("datasets"), "{e}");
}

#[test]
fn every_method_runs_where_it_applies_and_never_beats_the_exact_map() {
    let dir = scratch("board-small");
    let cfg = write_config(
        &dir,
        "b",
        &format!("{HEAD}[board]\nrank_cap = 100000\n[board.pydt]\niterations = 2\n{JETS}{GRAPH}"),
    );
    let out = run_and_replot(&cfg);
    let results = Results::open(&out).unwrap();
    let rows = rows(&results).unwrap();
    // Jets: every method ran on every jet (pydt may give a multifurcating tree, which the
    // binary likelihood does not score, so it is counted by its own objective).
    for m in BoardMethod::default_methods() {
        let on_jets = rows
            .iter()
            .filter(|r| r.dataset == "jets" && r.method == m.name())
            .filter(|r| r.metric == "ginkgo_log_likelihood" || r.metric == "own_objective")
            .count();
        assert!(on_jets >= 3, "{} ran on {on_jets} jets", m.name());
    }
    // The graph has no points and no jets: those methods say why they did not run.
    let trees = read_parquet(&out.join("trees.parquet")).unwrap();
    let (meth, status, ds) = (
        str_column(&trees, "method").unwrap(),
        str_column(&trees, "status").unwrap(),
        str_column(&trees, "dataset").unwrap(),
    );
    for (k, m) in meth.iter().enumerate() {
        if ds[k] == "graph" && ["kt", "mpost2", "pydt", "truth", "ward", "average_euclidean"].contains(&m.as_str()) {
            assert!(status[k].starts_with("not run: "), "{m}: {}", status[k]);
        }
    }
    let energies = dataset_energies(&rows);
    assert_eq!(energies["jets"], "ginkgo_log_likelihood");
    assert_eq!(energies["graph"], "dasgupta_cost");
    // The trellis MAP ranks first; every other tree ranks >= 1, forbidden ones after every
    // finite tree; log posteriors are <= 0.
    for r in &rows {
        match r.metric.as_str() {
            "posterior_rank" if r.method == "trellis" => assert_eq!(r.value, 1.0),
            "posterior_rank" => assert!(r.value >= 1.0),
            "log_posterior" => assert!(r.value <= 1e-9, "{}: {}", r.method, r.value),
            _ => {}
        }
    }
    let measures = super::run::measures(&results).unwrap();
    let get = |id: &str| measures.iter().find(|m| m.id == id).map(|m| m.value);
    assert_eq!(get("jets.trellis_beaten_by"), Some(0.0));
    assert_eq!(get("graph.trellis_beaten_by"), Some(0.0));
    assert_eq!(get("jets.kt_family_above_map"), Some(0.0));
    assert_eq!(get("jets.trellis_rank_max"), Some(1.0));
    let md = std::fs::read_to_string(out.join("leaderboard.md")).unwrap();
    assert!(md.contains("| Trellis (exact) |") && md.contains("## Ginkgo log-likelihood"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_smoke_config_passes_its_checks() {
    let dir = scratch("board-smoke");
    let out = run_and_replot(&config_in(&dir, "board_smoke.toml"));
    assert!(assert_checks_pass(&out) >= 10);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn jet_features_are_centred_on_the_jet_axis_and_standardised() {
    // Two leaves either side of phi = 0: the azimuth difference must not wrap to ~2 pi.
    let leaf = |pt: f64, phi: f64| [pt * 1.0, pt * phi.cos(), pt * phi.sin(), 0.0];
    let f = jet_features(&[leaf(10.0, 0.1), leaf(10.0, -0.1)]);
    assert!(
        (f[0][1] - 0.1).abs() < 1e-12 && (f[1][1] + 0.1).abs() < 1e-12,
        "{f:?}"
    );
    let mut z = vec![vec![1.0, 5.0], vec![3.0, 5.0]];
    crate::experiment::pydt::data::standardize(&mut z);
    assert_eq!(z, vec![vec![-1.0, 0.0], vec![1.0, 0.0]]);
    let _ = features;
}

/// Textbook agglomeration of `x` (every active pair scored afresh at each step, the closest
/// merged, ties to the first pair in order): `ward` scores a pair of clusters by
/// `sqrt(2 |A| |B| / (|A| + |B|)) · |mean(A) − mean(B)|` (SciPy's Ward height), otherwise by
/// the mean Euclidean distance between their points. Returns the clusters it made (sorted
/// leaf lists, sorted) and their heights (sorted).
fn textbook_linkage(x: &[Vec<f64>], ward: bool) -> (Vec<Vec<usize>>, Vec<f64>) {
    let dist = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(p, q)| (p - q) * (p - q))
            .sum::<f64>()
            .sqrt()
    };
    let mean = |c: &[usize]| -> Vec<f64> {
        (0..x[0].len())
            .map(|j| c.iter().map(|&i| x[i][j]).sum::<f64>() / c.len() as f64)
            .collect()
    };
    let score = |a: &[usize], b: &[usize]| {
        if ward {
            let (na, nb) = (a.len() as f64, b.len() as f64);
            (2.0 * na * nb / (na + nb)).sqrt() * dist(&mean(a), &mean(b))
        } else {
            let sum: f64 = a
                .iter()
                .flat_map(|&i| b.iter().map(move |&j| (i, j)))
                .map(|(i, j)| dist(&x[i], &x[j]))
                .sum();
            sum / (a.len() * b.len()) as f64
        }
    };
    let mut active: Vec<Vec<usize>> = (0..x.len()).map(|i| vec![i]).collect();
    let (mut made, mut heights) = (Vec::new(), Vec::new());
    while active.len() > 1 {
        let mut best = (f64::INFINITY, 0, 0);
        for a in 0..active.len() {
            for b in a + 1..active.len() {
                let s = score(&active[a], &active[b]);
                if s < best.0 {
                    best = (s, a, b);
                }
            }
        }
        let (h, a, b) = best;
        let mut merged = active.remove(b);
        merged.extend(active.remove(a));
        merged.sort_unstable();
        made.push(merged.clone());
        heights.push(h);
        active.push(merged);
    }
    made.sort();
    heights.sort_by(f64::total_cmp);
    (made, heights)
}

#[test]
fn average_euclidean_and_ward_are_the_textbook_linkages_of_the_raw_features() {
    use super::data::{correlation_similarities, Instance, InstanceData};
    use super::methods::build;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};
    let s: super::BoardSection =
        toml::from_str("datasets = [{ name = \"p\", source = \"file\", path = \"p.csv\" }]")
            .unwrap();
    for seed in 0..20u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = 2 + (seed as usize % 12);
        // Columns on very different scales: standardising would change the trees.
        let x: Vec<Vec<f64>> = (0..n)
            .map(|_| {
                vec![
                    rng.random_range(0.0..1.0),
                    100.0 * rng.random_range(0.0..1.0),
                    rng.random_range(-3.0..3.0),
                ]
            })
            .collect();
        let inst = Instance {
            dataset: "p".into(),
            instance: "all".into(),
            data: InstanceData::Points {
                similarities: correlation_similarities(&x),
                x: x.clone(),
            },
            labels: None,
            classes: Vec::new(),
            names: (1..=n).map(|k| format!("row {k}")).collect(),
        };
        for (method, ward) in [
            (BoardMethod::AverageEuclidean, false),
            (BoardMethod::Ward, true),
        ] {
            let tree = build(method, &inst, &s, 1).unwrap().tree;
            let (clusters, heights) = textbook_linkage(&x, ward);
            assert_eq!(tree.clusters(), clusters, "seed {seed}, {}", method.name());
            let mut got: Vec<f64> = tree.heights()[n..].to_vec();
            got.sort_by(f64::total_cmp);
            assert_eq!(got.len(), heights.len());
            for (g, w) in got.iter().zip(&heights) {
                assert!(
                    (g - w).abs() <= 1e-9 * w.max(1.0),
                    "seed {seed}, {}: height {g} against {w}",
                    method.name()
                );
            }
        }
    }
}
