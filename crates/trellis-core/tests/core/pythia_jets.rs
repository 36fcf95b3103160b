//! The committed Pythia 8 jets (`data/pythia/`, written by its Python script) load with the jets
//! loader unchanged: their leaf counts are those the file's source note lists, every parton-level
//! jet (at 91.2 and at 500 GeV, up to 24 partons) carries its shower history as a full binary
//! tree over its leaves, and hadron-level jets carry none.

use crate::common::root;
use trellis_core::data::ginkgo::{Jet, JetDataset};
use trellis_core::subset::Subset;

fn load(file: &str) -> JetDataset {
    let path = root().join("data/pythia").join(file);
    JetDataset::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The "N:jets 6:72, 7:67, ..." list of the source note, as (N, jets) pairs.
fn listed_counts(source: &str) -> Vec<(usize, usize)> {
    let start = source
        .find("N:jets ")
        .expect("the source note lists the jets per N")
        + 7;
    let end = start + source[start..].find(')').expect("the list ends with ')'");
    source[start..end]
        .split(", ")
        .map(|p| {
            let (n, c) = p.split_once(':').expect("N:count");
            (n.parse().unwrap(), c.parse().unwrap())
        })
        .collect()
}

fn counts(jets: &[Jet], max: usize) -> Vec<(usize, usize)> {
    let mut hist = [0usize; 25];
    for j in jets {
        assert!(
            (6..=max).contains(&j.n_leaves),
            "{}: {} leaves",
            j.name,
            j.n_leaves
        );
        hist[j.n_leaves] += 1;
    }
    (0..=max)
        .filter(|&n| hist[n] > 0)
        .map(|n| (n, hist[n]))
        .collect()
}

fn mass2(leaves: &[[f64; 4]], s: Subset) -> f64 {
    let mut p = [0.0f64; 4];
    for i in s.iter() {
        for (k, x) in p.iter_mut().enumerate() {
            *x += leaves[i][k];
        }
    }
    p[0] * p[0] - p[1] * p[1] - p[2] * p[2] - p[3] * p[3]
}

#[test]
fn parton_jets_load_with_their_shower_history_as_full_binary_trees() {
    for (file, max) in [("pythia_parton.json", 16), ("pythia_parton_500.json", 24)] {
        parton_file_loads(file, max);
    }
    // The 500 GeV set has at least 100 jets of 17 to 24 partons.
    let large = load("pythia_parton_500.json");
    let big = large.jets.iter().filter(|j| j.n_leaves >= 17).count();
    assert!(big >= 100, "{big} jets of 17 to 24 partons");
}

fn parton_file_loads(file: &str, max: usize) {
    let ds = load(file);
    assert_eq!(counts(&ds.jets, max), listed_counts(&ds.source));
    let mut forbidden = 0;
    for j in &ds.jets {
        let n = j.n_leaves;
        let t = j
            .truth()
            .unwrap_or_else(|| panic!("{}: no truth tree", j.name));
        assert_eq!(t.n_leaves(), n, "{}: a leaf twice", j.name);
        assert_eq!(t.leaves(), Subset::full(n), "{}", j.name);
        let splits = t.splits();
        assert_eq!(splits.len(), n - 1, "{}: not a full binary tree", j.name);
        assert!(splits.iter().all(|(a, b)| a.is_disjoint(*b)));
        // The truth tree has a finite Ginkgo likelihood exactly when no cluster of it is lighter
        // than t_cut (the shower's recoils can push a cluster below the cut-off's virtuality).
        let below = splits
            .iter()
            .any(|(a, b)| mass2(&j.leaves, a.union(*b)) < j.t_cut);
        let ll = t.log_likelihood(&j.model().unwrap());
        assert_eq!(ll.is_finite(), !below, "{}: log-likelihood {ll}", j.name);
        forbidden += usize::from(below);
    }
    // Most truth trees are allowed by the model.
    assert!(
        forbidden * 10 < ds.jets.len(),
        "{forbidden} forbidden truth trees"
    );
}

#[test]
fn hadron_jets_load_without_truth_trees() {
    let ds = load("pythia_hadron.json");
    assert_eq!(counts(&ds.jets, 16), listed_counts(&ds.source));
    for j in &ds.jets {
        assert!(j.truth_tree.is_none(), "{}", j.name);
        // every pair of resolved subjets may merge: every tree has a finite likelihood
        for a in 0..j.n_leaves {
            for b in 0..a {
                let pair = Subset::singleton(a).union(Subset::singleton(b));
                assert!(mass2(&j.leaves, pair) >= j.t_cut, "{}: {a},{b}", j.name);
            }
        }
    }
}
