//! The e+e− generalised kt family (`search::ee_generalised_kt`) against FastJet's
//! `ee_genkt_algorithm` on the committed Pythia jets: the same tree, cluster for cluster, for kt,
//! Cambridge/Aachen and anti-kt on the first 40 jets of each file (`data/pythia/
//! ee_kt_reference.json`, written by `data/pythia/ee_kt_reference.py` with the pinned FastJet).

use crate::common::root;
use std::collections::BTreeMap;
use trellis_core::data::ginkgo::JetDataset;
use trellis_core::search::{ee_generalised_kt, KtAlgorithm};

#[derive(serde::Deserialize)]
struct Reference {
    source: String,
    trees: Vec<RefTree>,
}

#[derive(serde::Deserialize)]
struct RefTree {
    file: String,
    jet: String,
    p: f64,
    clusters: Vec<u64>,
}

#[test]
fn ee_kt_trees_equal_fastjets_on_the_pythia_jets() {
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
    let mut by_p = [0usize; 3];
    for t in &reference.trees {
        let jet = files[&t.file]
            .jets
            .iter()
            .find(|j| j.name == t.jet)
            .unwrap();
        let (alg, k) = match t.p {
            1.0 => (KtAlgorithm::Kt, 0),
            0.0 => (KtAlgorithm::CambridgeAachen, 1),
            -1.0 => (KtAlgorithm::AntiKt, 2),
            p => panic!("unexpected exponent {p}"),
        };
        let tree = ee_generalised_kt(&jet.leaves, alg).unwrap();
        let mut ours: Vec<u64> = tree
            .clusters()
            .iter()
            .map(|c| c.bits())
            .filter(|b| b.count_ones() > 1)
            .collect();
        ours.sort_unstable();
        assert_eq!(ours, t.clusters, "{} {}, p = {}", t.file, t.jet, t.p);
        by_p[k] += 1;
    }
    assert_eq!(by_p, [80, 80, 80]);
}
