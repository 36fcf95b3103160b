//! A* exact MAP (`exact::astar`) against the full trellis: equal values on hundreds of seeded
//! Ginkgo and Dasgupta instances, sound certificates under expansion and store budgets, the
//! `-inf` cases, and determinism.

use trellis_core::data::ginkgo::GinkgoParams;
use trellis_core::data::graphs::{planted_partition, signed_uniform_weights, weights_from};
use trellis_core::exact::{
    astar, AstarOptions, AstarResult, Budget, DasguptaBound, ExactError, FullTrellis, GinkgoBound,
    StopReason, SubtreeBound,
};
use trellis_core::model::{DasguptaModel, GinkgoModel, SplitModel};
use trellis_core::tree::Tree;

fn reference(file: &str) -> Vec<GinkgoModel> {
    crate::common::reference_jets(file)
}

fn generated(
    params: &GinkgoParams,
    n_jets: usize,
    min: usize,
    max: usize,
    seed: u64,
) -> Vec<GinkgoModel> {
    crate::common::generated_jets(params, n_jets, (min, max), seed, 200_000)
}

fn ginkgo_instances() -> Vec<(String, GinkgoModel)> {
    let mut out = Vec::new();
    for (k, m) in reference("truth_9.json").into_iter().enumerate() {
        out.push((format!("truth_9[{k}]"), m));
    }
    for (k, m) in reference("tree_100_n9.json").into_iter().enumerate() {
        out.push((format!("tree_100_n9[{k}]"), m));
    }
    let w = GinkgoParams::w_jet();
    let root_rate = GinkgoParams {
        root_scale: 2500.0,
        lambda_root: 2.5,
        ..GinkgoParams::qcd()
    };
    for (name, p, n_jets, min, max, seed) in [
        ("qcd", GinkgoParams::qcd(), 40, 4, 12, 1),
        ("w", w, 40, 6, 12, 2),
        ("root_rate", root_rate, 30, 5, 12, 3),
    ] {
        for (k, m) in generated(&p, n_jets, min, max, seed)
            .into_iter()
            .enumerate()
        {
            out.push((format!("{name}[{k}] N={}", m.n_leaves()), m));
        }
    }
    out
}

fn dasgupta_instances() -> Vec<(String, DasguptaModel)> {
    let mut out = Vec::new();
    for seed in 0..40u64 {
        let n = 4 + seed as usize % 9;
        let w = signed_uniform_weights(n, 1.0, 1000 + seed).unwrap();
        out.push((
            format!("signed[{seed}] N={n}"),
            DasguptaModel::new(w, 1.0).unwrap(),
        ));
        let sizes = [n / 3, n / 3, n - 2 * (n / 3)];
        let g = planted_partition(&sizes, 0.8, 0.1, 2000 + seed).unwrap();
        out.push((
            format!("planted[{seed}] N={n}"),
            DasguptaModel::new(g.weights, 1.0).unwrap(),
        ));
        let mut x = (seed + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let w = weights_from(n, |_, _| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        })
        .unwrap();
        out.push((
            format!("dense[{seed}] N={n}"),
            DasguptaModel::new(w, 1.0).unwrap(),
        ));
    }
    out
}

fn tol(v: f64) -> f64 {
    1e-9 * v.abs().max(1.0)
}

/// A* with default options equals the full trellis's MAP, re-scores, and is certified.
fn assert_exact<M: SplitModel, B: SubtreeBound<M>>(name: &str, m: &M, b: &B) -> AstarResult {
    let map = FullTrellis::build(m).unwrap().map_log_likelihood();
    let r = astar(m, b, &AstarOptions::default()).unwrap();
    assert!(r.certified, "{name}: not certified ({:?})", r.stop);
    assert!(
        (r.log_likelihood - map).abs() <= tol(map),
        "{name}: A* {} vs MAP {map}",
        r.log_likelihood
    );
    assert_eq!(
        r.tree.log_likelihood(m),
        r.log_likelihood,
        "{name}: re-scores"
    );
    assert_eq!(
        r.tree.leaves(),
        trellis_core::subset::Subset::full(m.n_leaves())
    );
    assert!(
        r.upper_bound >= map - tol(map),
        "{name}: UB {} < MAP {map}",
        r.upper_bound
    );
    r
}

#[test]
fn astar_equals_the_full_trellis_on_ginkgo_jets() {
    let inst = ginkgo_instances();
    assert!(inst.len() >= 200, "{} instances", inst.len());
    let (mut solved, mut expanded, mut clusters) = (0, 0u64, 0u64);
    for (name, m) in &inst {
        let r = assert_exact(name, m, &GinkgoBound::new(m));
        solved += (r.stop == StopReason::Solved) as usize;
        expanded += r.stats.clusters_expanded;
        clusters += (1u64 << m.n_leaves()) - 1 - m.n_leaves() as u64;
    }
    eprintln!(
        "{} Ginkgo jets: {solved} solved at the root, {:.1} % of clusters expanded",
        inst.len(),
        100.0 * expanded as f64 / clusters as f64
    );
}

#[test]
fn astar_equals_the_full_trellis_on_dasgupta_graphs() {
    let inst = dasgupta_instances();
    assert!(inst.len() >= 120);
    let (mut expanded, mut clusters) = (0u64, 0u64);
    for (name, m) in &inst {
        let r = assert_exact(name, m, &DasguptaBound::new(m));
        expanded += r.stats.clusters_expanded;
        clusters += (1u64 << m.n_leaves()) - 1 - m.n_leaves() as u64;
    }
    eprintln!(
        "{} Dasgupta graphs: {:.1} % of clusters expanded",
        inst.len(),
        100.0 * expanded as f64 / clusters as f64
    );
}

/// Dasgupta's cost against all `(2N-3)!!` trees for N <= 7.
#[test]
fn astar_matches_brute_force_on_small_dasgupta_graphs() {
    for seed in 0..12u64 {
        let n = 3 + seed as usize % 5;
        let w = signed_uniform_weights(n, 1.0, 3000 + seed).unwrap();
        let m = DasguptaModel::new(w, 1.0).unwrap();
        let best = Tree::enumerate_all(trellis_core::subset::Subset::full(n))
            .unwrap()
            .iter()
            .map(|t| t.log_likelihood(&m))
            .fold(f64::NEG_INFINITY, f64::max);
        let r = astar(&m, &DasguptaBound::new(&m), &AstarOptions::default()).unwrap();
        assert!(
            r.certified && (r.log_likelihood - best).abs() <= tol(best),
            "seed {seed}"
        );
    }
}

/// Without beam or greedy seeding, the certificate must come from solving the root.
#[test]
fn astar_without_incumbent_solves_the_root() {
    let opts = AstarOptions {
        beam_size: Some(0),
        greedy: false,
        ..AstarOptions::default()
    };
    for (name, m) in ginkgo_instances().iter().step_by(9) {
        let map = FullTrellis::build(m).unwrap().map_log_likelihood();
        let r = astar(m, &GinkgoBound::new(m), &opts).unwrap();
        assert!(r.certified, "{name}");
        assert!((r.log_likelihood - map).abs() <= tol(map), "{name}");
    }
}

/// Checks one budgeted run against the MAP: `LB <= MAP <= UB` (to the tolerance), and
/// `certified ⇒ value == MAP`.
fn assert_sound(name: &str, r: &AstarResult, map: f64) {
    let t = tol(map);
    assert!(
        r.log_likelihood <= map + t,
        "{name}: LB {} > MAP {map}",
        r.log_likelihood
    );
    assert!(
        map <= r.upper_bound + t,
        "{name}: MAP {map} > UB {}",
        r.upper_bound
    );
    assert!(r.upper_bound >= r.log_likelihood, "{name}");
    if r.certified {
        assert!(
            (r.log_likelihood - map).abs() <= t,
            "{name}: certified but {} vs {map}",
            r.log_likelihood
        );
    }
    let _ = &r.tree;
}

fn budgets_are_sound<M: SplitModel, B: SubtreeBound<M>>(name: &str, m: &M, b: &B) -> usize {
    let map = FullTrellis::build(m).unwrap().map_log_likelihood();
    let mut uncertified = 0;
    for kept in [1usize, 2, 64] {
        for seeded in [true, false] {
            let mut last_gap = f64::INFINITY;
            for e in [1u64, 2, 5, 20, 100, 1000] {
                let opts = AstarOptions {
                    budget: Budget {
                        max_expansions: Some(e),
                        ..Budget::default()
                    },
                    splits_kept: kept,
                    beam_size: if seeded { None } else { Some(0) },
                    greedy: seeded,
                    ..AstarOptions::default()
                };
                let what = format!("{name} K={kept} seeded={seeded} expansions={e}");
                let r = astar(m, b, &opts).unwrap();
                assert_sound(&what, &r, map);
                assert!(r.stats.clusters_expanded <= e, "{what}");
                assert!(
                    r.gap() <= last_gap,
                    "{what}: gap {} after {last_gap}",
                    r.gap()
                );
                last_gap = r.gap();
                uncertified += !r.certified as usize;
            }
        }
    }
    uncertified
}

#[test]
fn certificates_are_sound_under_budgets_and_tiny_stores() {
    let mut uncertified = 0;
    let g = ginkgo_instances();
    for (name, m) in g.iter().filter(|(_, m)| m.n_leaves() >= 9).step_by(7) {
        uncertified += budgets_are_sound(name, m, &GinkgoBound::new(m));
    }
    for (name, m) in dasgupta_instances()
        .iter()
        .filter(|(_, m)| m.n_leaves() >= 9)
        .step_by(5)
    {
        uncertified += budgets_are_sound(name, m, &DasguptaBound::new(m));
    }
    assert!(uncertified > 0, "small budgets leave some runs uncertified");
}

#[test]
fn split_and_byte_budgets_stop_the_search_soundly() {
    let (name, m) = ginkgo_instances()
        .into_iter()
        .find(|(_, m)| m.n_leaves() == 12)
        .unwrap();
    let b = GinkgoBound::new(&m);
    let map = FullTrellis::build(&m).unwrap().map_log_likelihood();
    let mut last_gap = f64::INFINITY;
    for s in [100u64, 3000, 30_000, 300_000] {
        let opts = AstarOptions {
            budget: Budget {
                max_splits: Some(s),
                ..Budget::default()
            },
            ..AstarOptions::default()
        };
        let r = astar(&m, &b, &opts).unwrap();
        assert_sound(&name, &r, map);
        assert!(r.stats.splits_evaluated <= s);
        assert!(r.gap() <= last_gap);
        last_gap = r.gap();
        if !r.certified {
            assert_eq!(r.stop, StopReason::Splits);
        }
    }
    let full = astar(&m, &b, &AstarOptions::default()).unwrap();
    for bytes in [1u64 << 10, 64 << 10, full.stats.peak_bytes / 2] {
        let opts = AstarOptions {
            budget: Budget {
                max_bytes: Some(bytes),
                ..Budget::default()
            },
            ..AstarOptions::default()
        };
        let r = astar(&m, &b, &opts).unwrap();
        assert_sound(&name, &r, map);
        assert!(
            r.stats.peak_bytes <= bytes,
            "{} > {bytes}",
            r.stats.peak_bytes
        );
        if !r.certified {
            assert_eq!(r.stop, StopReason::Bytes);
        }
    }
}

#[test]
fn no_finite_tree_is_the_full_trellis_error() {
    // Every pair below the cut.
    let m = GinkgoModel::new(vec![[10.0, 0.0, 0.0, 9.9]; 5], 16.0, 1.5).unwrap();
    assert_eq!(
        FullTrellis::build(&m).unwrap().map_log_likelihood(),
        f64::NEG_INFINITY
    );
    let e = astar(&m, &GinkgoBound::new(&m), &AstarOptions::default()).unwrap_err();
    assert!(matches!(e, ExactError::NoFiniteTree), "{e}");
    // A dead pair next to live leaves is pruned, not an error.
    let m = GinkgoModel::new(
        vec![
            [10.0, 0.0, 0.0, 9.9],
            [10.0, 0.0, 0.0, 9.9],
            [40.0, 30.0, 0.0, 0.0],
            [50.0, 0.0, 40.0, 0.0],
        ],
        16.0,
        1.5,
    )
    .unwrap();
    assert_exact("dead pair", &m, &GinkgoBound::new(&m));
}

#[test]
fn single_leaf_and_pairs() {
    let m = GinkgoModel::new(vec![[10.0, 1.0, 2.0, 3.0]], 16.0, 1.5).unwrap();
    let r = astar(&m, &GinkgoBound::new(&m), &AstarOptions::default()).unwrap();
    assert!(r.certified && r.log_likelihood == 0.0);
    let w = signed_uniform_weights(2, 1.0, 5).unwrap();
    let m = DasguptaModel::new(w, 1.0).unwrap();
    assert_exact("pair", &m, &DasguptaBound::new(&m));
}

#[test]
fn results_are_deterministic_across_thread_counts() {
    let g = ginkgo_instances();
    let (_, m) = g.iter().find(|(_, m)| m.n_leaves() == 11).unwrap();
    let b = GinkgoBound::new(m);
    let run = |threads: usize, e: u64| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let opts = AstarOptions {
                budget: Budget {
                    max_expansions: Some(e),
                    ..Budget::default()
                },
                ..AstarOptions::default()
            };
            let r = astar(m, &b, &opts).unwrap();
            (
                r.log_likelihood.to_bits(),
                r.upper_bound.to_bits(),
                r.tree.to_newick(),
                r.certified,
                r.stats.clusters_expanded,
                r.stats.splits_evaluated,
                r.stats.trellis_nodes,
                r.stats.peak_bytes,
            )
        })
    };
    for e in [3, 50, 100_000] {
        let one = run(1, e);
        assert_eq!(one, run(1, e));
        assert_eq!(one, run(4, e));
    }
}

/// Where A* shines: Dasgupta's cost on a planted 20-leaf graph is certified after expanding a
/// fraction of a percent of the 2^20 clusters (the full trellis scores 1.7e9 splits).
#[test]
fn astar_certifies_a_planted_twenty_leaf_graph_cheaply() {
    let g = planted_partition(&[7, 7, 6], 0.8, 0.1, 2000).unwrap();
    let m = DasguptaModel::new(g.weights, 1.0).unwrap();
    let opts = AstarOptions {
        budget: Budget {
            max_splits: Some(50_000_000),
            ..Budget::default()
        },
        ..AstarOptions::default()
    };
    let r = astar(&m, &DasguptaBound::new(&m), &opts).unwrap();
    assert!(r.certified, "{:?}", r.stop);
    assert!(r.stats.clusters_expanded < 1 << 12, "{:?}", r.stats);
    assert_eq!(r.tree.log_likelihood(&m), r.log_likelihood);
    eprintln!("planted N=20: {:?}", r.stats);
}
