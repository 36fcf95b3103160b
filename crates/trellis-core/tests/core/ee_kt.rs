//! The e+e− generalised kt family (`search::ee_generalised_kt`) against FastJet's
//! `ee_genkt_algorithm`, and Durham (`search::durham`) against FastJet's `ee_kt_algorithm`, on the
//! committed Pythia jets: the same tree, cluster for cluster, for kt, Cambridge/Aachen, anti-kt
//! and Durham on the first 40 jets of each file (6 to 24 leaves; `data/pythia/
//! ee_kt_reference.json`, written by `data/pythia/ee_kt_reference.py` with the pinned FastJet).

use crate::common::root;
use std::collections::BTreeMap;
use trellis_core::data::ginkgo::JetDataset;
use trellis_core::search::{durham, ee_generalised_kt, KtAlgorithm, Veto};

#[derive(serde::Deserialize)]
struct Reference {
    source: String,
    trees: Vec<RefTree>,
}

#[derive(serde::Deserialize)]
struct RefTree {
    algorithm: String,
    file: String,
    jet: String,
    p: f64,
    clusters: Vec<u64>,
}

#[test]
fn ee_kt_and_durham_trees_equal_fastjets_on_the_pythia_jets() {
    let dir = root().join("data/pythia");
    let text = std::fs::read_to_string(dir.join("ee_kt_reference.json")).unwrap();
    let reference: Reference = serde_json::from_str(&text).unwrap();
    assert!(reference.source.contains("FastJet"));
    let mut files = BTreeMap::new();
    for t in &reference.trees {
        files
            .entry(t.file.clone())
            .or_insert_with(|| JetDataset::load(&dir.join(&t.file)).unwrap());
    }
    let mut by_p = [0usize; 4];
    for t in &reference.trees {
        let jet = files[&t.file]
            .jets
            .iter()
            .find(|j| j.name == t.jet)
            .unwrap();
        let (tree, k) = match (t.algorithm.as_str(), t.p) {
            ("ee_kt", 1.0) => (durham(&jet.leaves, Veto::None).unwrap(), 3),
            ("ee_genkt", p) => {
                let (alg, k) = match p {
                    1.0 => (KtAlgorithm::Kt, 0),
                    0.0 => (KtAlgorithm::CambridgeAachen, 1),
                    -1.0 => (KtAlgorithm::AntiKt, 2),
                    p => panic!("unexpected exponent {p}"),
                };
                (ee_generalised_kt(&jet.leaves, alg).unwrap(), k)
            }
            (a, p) => panic!("unexpected algorithm {a} with p = {p}"),
        };
        let mut ours: Vec<u64> = tree
            .clusters()
            .iter()
            .map(|c| c.bits())
            .filter(|b| b.count_ones() > 1)
            .collect();
        ours.sort_unstable();
        assert_eq!(
            ours, t.clusters,
            "{} {}, {} p = {}",
            t.file, t.jet, t.algorithm, t.p
        );
        by_p[k] += 1;
    }
    assert_eq!(by_p, [120, 120, 120, 120]);
    // The 500 GeV jets reach 24 leaves.
    let largest = reference
        .trees
        .iter()
        .map(|t| t.clusters.iter().map(|c| c.count_ones()).max().unwrap_or(0))
        .max();
    assert!(largest >= Some(20), "{largest:?}");
}
