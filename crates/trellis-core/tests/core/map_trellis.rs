//! The MAP-only trellis (`exact::MapTrellis`) against the full trellis: the same MAP value, for
//! every cluster, and the same MAP tree, bit for bit, on hundreds of seeded Ginkgo jets and
//! Dasgupta graphs; the canonical score of every tree (`Tree::log_likelihood`) gives the MAP tree
//! the MAP value bit for bit and no beam or greedy tree more; the Ginkgo bound that lets it skip
//! splits holds on every split; `-inf`, errors and thread counts.

use trellis_core::data::ginkgo::GinkgoParams;
use trellis_core::data::graphs::{planted_partition, signed_uniform_weights};
use trellis_core::exact::{ExactError, FullTrellis, MapTrellis};
use trellis_core::model::{DasguptaModel, GinkgoModel, SplitModel};
use trellis_core::subset::Subset;

fn ginkgo_instances() -> Vec<(String, GinkgoModel)> {
    let mut out = Vec::new();
    for file in ["truth_9.json", "tree_100_n9.json"] {
        for (k, m) in crate::common::reference_jets(file).into_iter().enumerate() {
            out.push((format!("{file}[{k}]"), m));
        }
    }
    let root_rate = GinkgoParams {
        root_scale: 2500.0,
        lambda_root: 2.5,
        ..GinkgoParams::qcd()
    };
    for (name, p, n_jets, min, max, seed) in [
        ("qcd", GinkgoParams::qcd(), 40, 3, 12, 11),
        ("w", GinkgoParams::w_jet(), 40, 6, 13, 12),
        ("root_rate", root_rate, 30, 5, 12, 13),
    ] {
        for (k, m) in crate::common::generated_jets(&p, n_jets, (min, max), seed, 200_000)
            .into_iter()
            .enumerate()
        {
            out.push((format!("{name}[{k}] N={}", m.n_leaves()), m));
        }
    }
    out
}

/// Asserts that the MAP-only trellis gives the full trellis's MAP value for every cluster and
/// its MAP tree, bit for bit; returns (splits visited, splits scored).
fn assert_same_map<M: SplitModel>(name: &str, m: &M) -> (u64, u64) {
    let full = FullTrellis::build(m).unwrap();
    let map = MapTrellis::build(m).unwrap();
    let n = m.n_leaves();
    for b in 1u64..(1u64 << n) {
        let s = Subset(b);
        let (want, got) = (
            full.map_log_likelihood_of(s).unwrap(),
            map.map_log_likelihood_of(s).unwrap(),
        );
        assert_eq!(want.to_bits(), got.to_bits(), "{name}: cluster {s}");
    }
    if full.map_log_likelihood() > f64::NEG_INFINITY {
        assert_eq!(
            full.map_tree().to_newick_as_built(),
            map.map_tree().to_newick_as_built(),
            "{name}"
        );
        // The one canonical scorer gives the MAP tree the trellis's MAP value bit for bit, and
        // no tree another method finds scores above it; equal trees score equal bits.
        let t = map.map_tree();
        let best = map.map_log_likelihood();
        assert_eq!(t.log_likelihood(m).to_bits(), best.to_bits(), "{name}");
        let beam = trellis_core::search::beam_search(m, 3 * n).unwrap();
        let greedy = trellis_core::search::greedy(m).unwrap();
        for (method, f) in [("beam", beam), ("greedy", greedy)] {
            assert!(f.log_likelihood <= best, "{name}: {method} above the MAP");
            assert_eq!(
                f.log_likelihood.to_bits(),
                f.tree.log_likelihood(m).to_bits(),
                "{name}: {method}"
            );
            if f.tree.clusters() == t.clusters() {
                assert_eq!(
                    f.log_likelihood.to_bits(),
                    best.to_bits(),
                    "{name}: {method}"
                );
            }
        }
    }
    let splits = 3u64.pow(n as u32).div_ceil(2) - (1 << n);
    assert_eq!(map.splits_visited(), splits, "{name}");
    assert!(map.splits_scored() <= splits, "{name}");
    (map.splits_visited(), map.splits_scored())
}

#[test]
fn equals_the_full_trellis_on_ginkgo_jets() {
    let instances = ginkgo_instances();
    assert!(instances.len() >= 200, "{}", instances.len());
    let (mut visited, mut scored) = (0, 0);
    let mut max_n = 0;
    for (name, m) in &instances {
        let (v, s) = assert_same_map(name, m);
        visited += v;
        scored += s;
        max_n = max_n.max(m.n_leaves());
    }
    assert!(max_n >= 12);
    // The bound skips most splits of these jets (about 2/3 at N = 12).
    assert!(
        (scored as f64) < 0.6 * visited as f64,
        "{scored} of {visited}"
    );
}

#[test]
fn equals_the_full_trellis_on_dasgupta_graphs() {
    // Dasgupta's cost has no cheap split bound: every split is scored, the values still match.
    for seed in 0..20u64 {
        let n = 4 + (seed as usize % 8);
        let w = if seed % 2 == 0 {
            planted_partition(&[n / 3, n / 3, n - 2 * (n / 3)], 0.8, 0.1, seed)
                .unwrap()
                .weights
        } else {
            signed_uniform_weights(n, 1.0, seed).unwrap()
        };
        let m = DasguptaModel::new(w, 1.0).unwrap();
        let (v, s) = assert_same_map(&format!("dasgupta seed {seed}"), &m);
        assert_eq!(v, s);
    }
}

/// Random four-vectors, physical (`E >= |p|`) or not, and a cut that forbids many clusters.
fn random_jet(n: usize, seed: u64, physical: bool, t_cut: f64) -> GinkgoModel {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let leaves = (0..n)
        .map(|_| {
            let p = [next() * 20.0 - 10.0, next() * 20.0 - 10.0, next() * 40.0];
            let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            let e = if physical {
                norm + next() * 2.0
            } else {
                norm * (0.5 + next())
            };
            [e, p[0], p[1], p[2]]
        })
        .collect();
    GinkgoModel::new(leaves, t_cut, 1.5).unwrap()
}

#[test]
fn ginkgo_bound_holds_on_every_split() {
    let mut models: Vec<(String, GinkgoModel)> = ginkgo_instances()
        .into_iter()
        .filter(|(_, m)| m.n_leaves() <= 10)
        .collect();
    for seed in 0..30u64 {
        let physical = seed % 2 == 0;
        let t_cut = [1.0, 30.0, 400.0][seed as usize % 3];
        let n = 3 + seed as usize % 7;
        models.push((
            format!("random seed {seed}"),
            random_jet(n, seed, physical, t_cut),
        ));
    }
    let (mut checked, mut forbidden) = (0u64, 0u64);
    for (name, m) in &models {
        let n = m.n_leaves();
        let stats = m.stat_table().unwrap();
        for p in 1u64..(1u64 << n) {
            let s = Subset(p);
            if s.len() < 2 {
                continue;
            }
            let upper = m.log_psi_upper(s, &stats[s.index()]);
            for (a, b) in s.splits() {
                let (sa, sb) = (&stats[a.index()], &stats[b.index()]);
                let lp = m.log_psi_with(a, sa, b, sb, &stats[s.index()]);
                let u = upper(sa, sb);
                checked += 1;
                if u == f64::NEG_INFINITY {
                    forbidden += 1;
                    assert_eq!(lp, f64::NEG_INFINITY, "{name}: {a} | {b}");
                } else if !lp.is_nan() {
                    assert!(
                        u >= lp - 1e-12 * lp.abs().max(1.0),
                        "{name}: {a} | {b}: bound {u} < log psi {lp}"
                    );
                }
            }
        }
    }
    assert!(
        checked > 100_000 && forbidden > 1000,
        "{checked} {forbidden}"
    );
}

#[test]
fn no_finite_tree_and_bad_input() {
    // Every cluster is below the cut: no finite tree, as in the full trellis.
    let m = random_jet(6, 3, true, 1e9);
    let full = FullTrellis::build(&m).unwrap();
    let map = MapTrellis::build(&m).unwrap();
    assert_eq!(full.map_log_likelihood(), f64::NEG_INFINITY);
    assert_eq!(map.map_log_likelihood(), f64::NEG_INFINITY);
    assert!(matches!(
        map.map_log_likelihood_of(Subset(1 << 7)),
        Err(ExactError::BadCluster { .. })
    ));
    let big = random_jet(12, 1, true, 1.0);
    let err = MapTrellis::build_with_limit(&big, 10).unwrap_err();
    assert!(matches!(
        err,
        ExactError::TooLarge {
            n: 12,
            limit: 10,
            ..
        }
    ));
    assert!(err.to_string().contains("at most 10 leaves"), "{err}");
    let one = random_jet(1, 1, true, 1.0);
    let t = MapTrellis::build(&one).unwrap();
    assert_eq!(t.map_log_likelihood(), 0.0);
    assert_eq!(t.map_tree().n_leaves(), 1);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let m = crate::common::generated_jets(&GinkgoParams::w_jet(), 1, (15, 15), 5, 1_000_000)
        .pop()
        .unwrap();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| MapTrellis::build(&m).unwrap())
    };
    let (one, two) = (run(1), run(3));
    assert_eq!(
        one.map_log_likelihood().to_bits(),
        two.map_log_likelihood().to_bits()
    );
    assert_eq!(
        one.map_tree().to_newick_as_built(),
        two.map_tree().to_newick_as_built()
    );
    assert_eq!(one.splits_scored(), two.splits_scored());
    let full = FullTrellis::build(&m).unwrap();
    assert_eq!(
        full.map_log_likelihood().to_bits(),
        one.map_log_likelihood().to_bits()
    );
}

#[test]
fn the_canonical_score_settles_what_a_plain_sum_left_to_rounding() {
    // A plain sum of the MAP tree's log psi (the scorer before the canonical one) misses the
    // trellis's MAP value in the last bits on some of these jets, and a beam tree could then
    // score above the exact MAP; the canonical score never does (see `assert_same_map`).
    let mut differ = 0;
    for (_, m) in ginkgo_instances() {
        let full = FullTrellis::build(&m).unwrap();
        let t = full.map_tree();
        let plain: f64 = t.splits().iter().map(|&(a, b)| m.log_psi(a, b)).sum();
        differ += usize::from(plain.to_bits() != full.map_log_likelihood().to_bits());
        assert_eq!(
            t.log_likelihood(&m).to_bits(),
            full.map_log_likelihood().to_bits()
        );
    }
    assert!(differ > 0, "no jet where the plain sum differs");
}
