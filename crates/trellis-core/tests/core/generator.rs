//! Invariants of the Ginkgo generator.

use trellis_core::data::ginkgo::{
    generate_dataset, generate_jet, GinkgoParams, JetDataset, JetError,
};
use trellis_core::model::ginkgo::mass2;
use trellis_core::tree::Node;

use rand::rngs::StdRng;
use rand::SeedableRng;

fn add(acc: &mut [f64; 4], p: &[f64; 4]) {
    for (a, x) in acc.iter_mut().zip(p) {
        *a += x;
    }
}

#[test]
fn leaves_sum_to_the_jet_and_scales_respect_the_cut() {
    for params in [GinkgoParams::qcd(), GinkgoParams::w_jet()] {
        let mut rng = StdRng::seed_from_u64(7);
        let jet_p = params.jet_four_vector();
        for _ in 0..300 {
            let g = match generate_jet(&params, &mut rng) {
                Ok(g) => g,
                // The shower was drawn in full but a tree holds at most 64 leaves.
                Err(JetError::TooManyLeaves { .. }) => continue,
                Err(e) => panic!("{e}"),
            };
            let mut sum = [0.0; 4];
            for p in &g.leaves {
                add(&mut sum, p);
                // Leaves are particles whose scale fell below the cut; their mass is that scale.
                assert!(
                    mass2(p) <= params.t_cut * (1.0 + 1e-9) + 1e-9,
                    "leaf m2 {}",
                    mass2(p)
                );
                assert!(p[0] > 0.0);
            }
            for k in 0..4 {
                assert!((sum[k] - jet_p[k]).abs() < 1e-8 * jet_p[0], "component {k}");
            }
            let clusters = g.tree.node_clusters();
            for (v, node) in g.tree.nodes().iter().enumerate() {
                if let Node::Internal(..) = node {
                    assert!(g.scales[v] > params.t_cut, "internal scale {}", g.scales[v]);
                    // Invariant mass is conserved: the summed leaves of a node have mass^2 = its scale.
                    let mut p = [0.0; 4];
                    for i in clusters[v].iter() {
                        add(&mut p, &g.leaves[i]);
                    }
                    assert!((mass2(&p) - g.scales[v]).abs() < 1e-6 * g.scales[v].max(1.0));
                }
            }
            assert_eq!(g.tree.n_leaves(), g.leaves.len());
        }
    }
}

#[test]
fn same_seed_same_jets_and_range_respected() {
    let p = GinkgoParams::qcd();
    let a = generate_dataset(&p, 50, 5, 10, 3, 100_000, "x").unwrap();
    let b = generate_dataset(&p, 50, 5, 10, 3, 100_000, "x").unwrap();
    let c = generate_dataset(&p, 50, 5, 10, 4, 100_000, "x").unwrap();
    assert!(a == b, "same seed, different jets");
    assert!(a != c, "different seeds, same jets");
    assert!(a.jets.iter().all(|j| (5..=10).contains(&j.n_leaves)));
    // Round trip through the JSON schema of shared/data/ginkgo_jets.
    // Floats survive bit-exactly, so a saved dataset reproduces the run.
    let back = JetDataset::from_json(&a.to_json()).unwrap();
    assert!(a == back, "JSON round trip changed the jets");
}

#[test]
fn leaf_count_distribution_is_plausible() {
    // The spec: in 3000 QCD jets N ranged 2..16 with mode about 7; 12-leaf jets about 1.5 %.
    let p = GinkgoParams::qcd();
    let ds = generate_dataset(&p, 3000, 1, 64, 99, 3000, "x").unwrap();
    let mut hist = vec![0usize; 65];
    for j in &ds.jets {
        hist[j.n_leaves] += 1;
    }
    let mode = (0..65).max_by_key(|&n| hist[n]).unwrap();
    assert!((6..=8).contains(&mode), "mode {mode}, histogram {hist:?}");
    let frac12 = hist[12] as f64 / 3000.0;
    assert!((0.005..0.03).contains(&frac12), "12-leaf fraction {frac12}");
}

#[test]
fn too_narrow_a_range_is_a_clear_error() {
    let e = generate_dataset(&GinkgoParams::qcd(), 10, 40, 40, 1, 500, "x").unwrap_err();
    assert!(e.to_string().contains("max_tries"), "{e}");
}
