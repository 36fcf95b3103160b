//! The fair comparison of the pythia_jets kind: the physics baselines in the tables are the core
//! crate's clusterings (with the veto exactly when the name says so) and never make a forbidden
//! tree under the veto; the summary's pooled and paired measures against a recomputation from the
//! jets table; the strongest baseline of each group; λ out of sample; and the larger jets'
//! config (the MAP-only trellis above `full_max_leaves`, its MAP equal to the full trellis's).

use super::pmethod::PMethod;
use crate::data::ginkgo::{Jet, JetDataset};
use crate::exact::FullTrellis;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_in, crate_dir, run_and_replot, scratch,
};
use crate::model::GinkgoModel;
use crate::tree::Tree;
use std::collections::BTreeMap;
use std::path::Path;

fn jets_of(file: &str) -> BTreeMap<String, Jet> {
    JetDataset::load(&crate_dir().join("data/pythia").join(file))
        .unwrap()
        .jets
        .into_iter()
        .map(|j| (j.name.clone(), j))
        .collect()
}

/// `name → value` of every measure of the run in `res`.
fn measures_of(res: &Path) -> BTreeMap<String, f64> {
    let results = Results::open(res).unwrap();
    super::measures::measures(&results)
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.value))
        .collect()
}

/// Per row of `jets.parquet`: (jet name, method, newick, truth recovered, shared, truth clusters).
type Row = (String, String, String, Option<f64>, Option<u64>, Option<u64>);

fn rows_of(res: &Path) -> Vec<Row> {
    let t = read_parquet(&res.join("jets.parquet")).unwrap();
    let (jet, method, newick) = (
        str_column(&t, "jet").unwrap(),
        str_column(&t, "method").unwrap(),
        str_column(&t, "tree_newick").unwrap(),
    );
    let rec = f64_column(&t, "truth_recovered").unwrap();
    let (shared, truth) = (
        u64_column(&t, "shared_clusters").unwrap(),
        u64_column(&t, "truth_clusters").unwrap(),
    );
    (0..t.height())
        .map(|i| {
            (
                jet[i].clone(),
                method[i].clone(),
                newick[i].clone(),
                rec[i],
                shared[i],
                truth[i],
            )
        })
        .collect()
}

/// The larger jets' smoke config: jets above `full_max_leaves` get the MAP-only trellis (no log
/// Z, no rank), whose MAP is the full trellis's bit for bit; every physics baseline's tree is the
/// core crate's (veto exactly for the `_veto` methods), no vetoed tree is forbidden; the
/// summary's pooled and paired numbers recompute from the jets table; every check passes.
#[test]
fn the_larger_jets_smoke_config_and_its_baselines() {
    let dir = scratch("pythia_jets_large_smoke");
    let res = run_and_replot(&config_in(&dir, "pythia_jets_large_smoke.toml"));
    assert!(assert_checks_pass(&res) > 100);
    let jets = jets_of("pythia_parton_500.json");

    let e = read_parquet(&res.join("exact.parquet")).unwrap();
    let (name, n) = (
        str_column(&e, "jet").unwrap(),
        u64_column(&e, "n_leaves").unwrap(),
    );
    let (lambda, log_z, map) = (
        f64_column(&e, "lambda").unwrap(),
        f64_column(&e, "log_z").unwrap(),
        f64_column(&e, "map_log_likelihood").unwrap(),
    );
    let full = u64_column(&e, "full_trellis").unwrap();
    let (mut map_only, mut full_jets) = (0, 0);
    for i in 0..e.height() {
        let large = n[i].unwrap() > 8;
        assert_eq!(full[i], Some(u64::from(!large)), "{}", name[i]);
        assert_eq!(log_z[i].is_none(), large, "{}", name[i]);
        if large {
            map_only += 1;
            // The MAP-only trellis's MAP is the full trellis's, bit for bit (N <= 17 here).
            let j = &jets[&name[i]];
            let m = GinkgoModel::new(j.leaves.clone(), j.t_cut, lambda[i].unwrap()).unwrap();
            if j.n_leaves <= 12 {
                let t = FullTrellis::build(&m).unwrap();
                assert_eq!(map[i].unwrap().to_bits(), t.map_log_likelihood().to_bits());
            }
        } else {
            full_jets += 1;
        }
    }
    assert!(map_only >= 15 && full_jets >= 5, "{map_only} {full_jets}");

    // The baselines' trees are the core's, the vetoed ones never forbidden.
    let mut physics = 0;
    for (jet, method, newick, ..) in rows_of(&res) {
        let m = PMethod::from_name(&method).unwrap();
        let j = &jets[&jet];
        if let Some(tree) = m.physics_tree(j, super::KtForm::Ee) {
            let tree = tree.unwrap();
            assert_eq!(tree.to_newick(), newick, "{jet} {method}");
            if m.vetoed() {
                let model = j.model().unwrap();
                assert!(tree.log_likelihood(&model).is_finite(), "{jet} {method}");
            }
            physics += 1;
        }
    }
    assert_eq!(physics, 30 * 12);
}

/// On the main smoke config: the summary's pooled recovery and the paired differences of the
/// best baselines recompute from the jets table; `best.*` names the largest mean recovery of
/// its group; λ out of sample has both halves' fits, each half scored at the other's λ.
#[test]
fn pooled_and_paired_measures_and_lambda_out_of_sample() {
    let dir = scratch("pythia_jets_fair");
    let res = run_and_replot(&config_in(&dir, "pythia_jets_smoke.toml"));
    let m = measures_of(&res);
    let rows: Vec<Row> = rows_of(&res)
        .into_iter()
        .filter(|r| r.5.is_some())
        .collect();
    let of = |method: &str| -> BTreeMap<String, (f64, u64, u64)> {
        rows.iter()
            .filter(|r| r.1 == method)
            .map(|r| (r.0.clone(), (r.3.unwrap(), r.4.unwrap(), r.5.unwrap())))
            .collect()
    };
    let map = of("trellis");
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    let mut best_veto = (f64::NEG_INFINITY, String::new());
    for p in PMethod::ALL.into_iter().filter(|p| *p != PMethod::Truth) {
        let mine = of(p.name());
        assert_eq!(mine.len(), 24, "{}", p.name());
        let mean = mine.values().map(|v| v.0).sum::<f64>() / 24.0;
        let pooled = mine.values().map(|v| v.1).sum::<u64>() as f64
            / mine.values().map(|v| v.2).sum::<u64>() as f64;
        let id = |k: &str| format!("summary.parton.all.{}.{k}", p.name());
        assert!(close(m[&id("truth_recovered")], mean), "{}", p.name());
        assert!(close(m[&id("recovered_pooled")], pooled), "{}", p.name());
        if p != PMethod::Trellis {
            let d = mine.iter().map(|(j, v)| map[j].0 - v.0).sum::<f64>() / 24.0;
            assert!(close(m[&id("map_minus_recovered")], d), "{}", p.name());
            let better = mine.iter().filter(|(j, v)| map[*j].1 > v.1).count() as f64 / 24.0;
            assert!(close(m[&id("map_better_recovery")], better), "{}", p.name());
        }
        if p.vetoed() && mean > best_veto.0 {
            best_veto = (mean, p.name().to_string());
        }
    }
    let best = PMethod::from_name(&best_veto.1).unwrap();
    assert_eq!(m["best.parton.all.veto.method_index"], best.index() as f64);
    assert!(close(m["best.parton.all.veto.truth_recovered"], best_veto.0));
    assert_eq!(
        m["best.parton.all.veto.map_minus_recovered"],
        m[&format!("summary.parton.all.{}.map_minus_recovered", best.name())]
    );

    // λ out of sample: two half fits, each half at the other's λ, the placeholder at 1.5.
    let (l1, l2) = (
        m["lambda.parton.evidence_half_1.value"],
        m["lambda.parton.evidence_half_2.value"],
    );
    assert_eq!(m["holdout.parton.out_of_sample.lambda_half_1"], l2);
    assert_eq!(m["holdout.parton.out_of_sample.lambda_half_2"], l1);
    assert_eq!(m["holdout.parton.placeholder.lambda_half_1"], 1.5);
    assert_eq!(
        m["holdout.parton.in_sample.lambda_half_1"],
        m["lambda.parton.evidence.value"]
    );
    assert_eq!(
        m["lambda.parton.evidence_half_1.jets_used"] + m["lambda.parton.evidence_half_2.jets_used"],
        24.0
    );
    // In sample is the run itself.
    assert_eq!(
        m["holdout.parton.in_sample.trellis.truth_recovered"],
        m["summary.parton.all.trellis.truth_recovered"]
    );
    let h = read_parquet(&res.join("lambda_holdout.parquet")).unwrap();
    assert_eq!(h.height(), 3 * 24 * 3, "3 schemes, 24 jets, 3 methods");
    // The hadron set has no truth trees: no rows, no half fits.
    assert!(!m.contains_key("lambda.hadron.evidence_half_1.value"));
    assert!(str_column(&h, "set").unwrap().iter().all(|s| s == "parton"));
}

/// A tree's Newick survives the tables (the properties re-read them).
#[test]
fn newick_round_trip_of_a_vetoed_tree() {
    let jets = jets_of("pythia_parton.json");
    let j = jets.values().find(|j| j.n_leaves == 9).unwrap();
    let t = PMethod::MassOrderingVeto
        .physics_tree(j, super::KtForm::Ee)
        .unwrap()
        .unwrap();
    let back = Tree::from_newick(&t.to_newick()).unwrap();
    assert_eq!(back.clusters(), t.clusters());
}
