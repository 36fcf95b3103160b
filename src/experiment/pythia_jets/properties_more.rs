//! More properties that hold for any data, each a count of violations that `check` requires to
//! be 0:
//! - per comparison with the truth, the truth clusters of the three size classes add up to the
//!   truth's clusters and the recovered ones to the shared ones, none class recovers more than
//!   it has, and the recovered energy is at most the truth clusters' energy;
//! - in the e+e− form, Durham's tree is e+e− kt's on every jet, with and without the veto (the
//!   same order of pairs);
//! - the summary's paired difference `map_minus_recovered` of every method is the mean over the
//!   jets of the MAP's recovery minus the method's, recomputed from the jets table;
//! - λ out of sample: where a scheme's λ is the one the run used, its trees are the run's.

use super::measures::summary;
use super::pmethod::PMethod;
use super::properties::property;
use super::summary::mean_se;
use super::{KtForm, PythiaJetsConfig};
use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::BTreeMap;

/// Every property of this file (see the module documentation).
pub fn properties(results: &Results) -> Result<Vec<Measure>> {
    let cfg: PythiaJetsConfig = results.config()?;
    let t = results.table("jets")?;
    let (set, jet, method) = (
        str_column(&t, "set")?,
        u64_column(&t, "jet_index")?,
        str_column(&t, "method")?,
    );
    let newick = str_column(&t, "tree_newick")?;
    let (shared, truth) = (
        u64_column(&t, "shared_clusters")?,
        u64_column(&t, "truth_clusters")?,
    );
    let classes = ["2", "3_4", "5_up"];
    // Per size class: (truth clusters, shared clusters) per row.
    type Column = Vec<Option<u64>>;
    let by: Vec<(Column, Column)> = classes
        .iter()
        .map(|c| {
            Ok((
                u64_column(&t, &format!("truth_clusters_{c}"))?,
                u64_column(&t, &format!("shared_clusters_{c}"))?,
            ))
        })
        .collect::<Result<_>>()?;
    let (te, se) = (
        f64_column(&t, "truth_energy")?,
        f64_column(&t, "shared_energy")?,
    );
    let (mut sizes_bad, mut n_sizes) = (0, 0);
    for i in (0..t.height()).filter(|&i| truth[i].is_some()) {
        n_sizes += 1;
        let (mut st, mut ss, mut ok) = (0, 0, true);
        for (ct, cs) in &by {
            let (a, b) = (ct[i].unwrap_or(0), cs[i].unwrap_or(u64::MAX));
            ok &= b <= a;
            st += a;
            ss += b.min(a);
        }
        let (e_t, e_s) = (te[i].unwrap_or(f64::NAN), se[i].unwrap_or(f64::NAN));
        ok &= Some(st) == truth[i] && Some(ss) == shared[i] && e_s >= 0.0 && e_s <= e_t;
        sizes_bad += usize::from(!ok);
    }

    // Per jet: each method's row.
    let mut rows_of: BTreeMap<(String, u64), BTreeMap<String, usize>> = BTreeMap::new();
    for i in 0..t.height() {
        rows_of
            .entry((set[i].clone(), jet[i].unwrap_or(u64::MAX)))
            .or_default()
            .insert(method[i].clone(), i);
    }
    let (mut durham_bad, mut n_durham) = (0, 0);
    if cfg.pythia_jets.kt == KtForm::Ee {
        for rows in rows_of.values() {
            for (a, b) in [("durham", "kt"), ("durham_veto", "kt_veto")] {
                n_durham += 1;
                let same = match (rows.get(a), rows.get(b)) {
                    (Some(&x), Some(&y)) => newick[x] == newick[y],
                    _ => false,
                };
                durham_bad += usize::from(!same);
            }
        }
    }

    // The summary's paired differences against the jets'.
    let rec = f64_column(&t, "truth_recovered")?;
    let e = results.table("exact")?;
    let (eset, ejet, en) = (
        str_column(&e, "set")?,
        u64_column(&e, "jet_index")?,
        u64_column(&e, "n_leaves")?,
    );
    let n_of: BTreeMap<(String, u64), u64> = (0..e.height())
        .filter_map(|i| Some(((eset[i].clone(), ejet[i]?), en[i]?)))
        .collect();
    let (mut paired_bad, mut n_paired) = (0, 0);
    for ((sset, leaves, smethod, metric), v) in summary(results)? {
        if metric != "map_minus_recovered" {
            continue;
        }
        let keep = match leaves.strip_prefix("n>=") {
            Some(k) => k.parse::<u64>().ok(),
            None => Some(0),
        };
        let d: Vec<f64> = rows_of
            .iter()
            .filter(|((st, j), _)| *st == sset && n_of.get(&(st.clone(), *j)).copied() >= keep)
            .filter_map(|(_, rows)| {
                let a = rec[*rows.get(PMethod::Trellis.name())?]?;
                let b = rec[*rows.get(&smethod)?]?;
                Some(a - b)
            })
            .collect();
        let (m, _, n) = mean_se(d);
        n_paired += 1;
        let ok = Some(n as u64) == v.jets && (v.mean - m).abs() <= 1e-9 * m.abs().max(1.0);
        paired_bad += usize::from(!ok);
    }

    // λ out of sample against the run.
    let h = results.table("lambda_holdout")?;
    let (mut holdout_bad, mut n_holdout) = (0, 0);
    if h.height() > 0 {
        let (hset, hjet, hmethod) = (
            str_column(&h, "set")?,
            u64_column(&h, "jet_index")?,
            str_column(&h, "method")?,
        );
        let (hlambda, hnewick) = (f64_column(&h, "lambda")?, str_column(&h, "tree_newick")?);
        let elambda = f64_column(&e, "lambda")?;
        let run_lambda: BTreeMap<(String, u64), f64> = (0..e.height())
            .filter_map(|i| Some(((eset[i].clone(), ejet[i]?), elambda[i]?)))
            .collect();
        for i in 0..h.height() {
            let key = (hset[i].clone(), hjet[i].unwrap_or(u64::MAX));
            if run_lambda.get(&key).copied() != hlambda[i] {
                continue;
            }
            n_holdout += 1;
            let same = rows_of
                .get(&key)
                .and_then(|rows| rows.get(&hmethod[i]))
                .is_some_and(|&k| newick[k] == hnewick[i]);
            holdout_bad += usize::from(!same);
        }
    }

    Ok(vec![
        property(
            "size_classes_add_up",
            "property: comparisons whose clusters by size do not add up to the truth's and the shared ones, or whose recovered energy is outside [0, the truth clusters' energy]",
            sizes_bad,
            n_sizes,
        ),
        property(
            "durham_is_ee_kt",
            "property: jets where Durham's tree (with or without the veto) is not e+e− kt's",
            durham_bad,
            n_durham,
        ),
        property(
            "paired_differences_recomputed",
            "property: summary rows whose paired difference MAP − method (per-jet recovery) is not the jets' mean difference",
            paired_bad,
            n_paired,
        ),
        property(
            "holdout_at_the_run_lambda_is_the_run",
            "property: λ out-of-sample rows at the run's own λ whose tree is not the run's",
            holdout_bad,
            n_holdout,
        ),
    ])
}
