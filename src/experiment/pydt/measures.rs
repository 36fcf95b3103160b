//! The named numbers `check` compares, read off the tables (ids use the config's model names):
//!
//! - MAP part: `map.<model>.objective`, `.root_children`, `.internal_nodes`, `.purity`,
//!   `.subtree` (means over replicates), `.max_children` (largest over replicates: 2 for the
//!   DDT), `.not_below_start` (fraction of replicates whose final objective is not below the
//!   objective after the start: 1), `.root_is_groups` (fraction of replicates whose root's
//!   children are exactly the groups, when every point has one: Figure 5's "the four clusters are
//!   equally dependent");
//! - MCMC part: `mcmc.<model>.ln_joint_last` (mean over chains of the final log joint),
//!   `.ln_joint_second_half` and `.internal_nodes_second_half` (means over the recorded states
//!   of the second half of every chain), `.root_children_max` (largest over every state: 2 for
//!   the DDT), `mcmc.finite` (fraction of finite log joints: 1);
//! - density part: `density.<model>.ln_predictive`, `.ln_likelihood`, `.ln_joint`,
//!   `.internal_nodes` (means over splits), `density.finite` (fraction of finite values: 1)
//!   and, for every pair of models, `density.<a>_minus_<b>.ln_predictive`, `.ln_likelihood` and
//!   `.ln_joint` (mean over splits of the difference) and `.wins` (fraction of splits where a is
//!   higher).

use super::PydtConfig;
use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::BTreeMap;

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Values in first-appearance order.
pub(super) fn distinct(v: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in v {
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    out
}

/// Every measure of the parts the run had.
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let cfg: PydtConfig = results.config()?;
    let mut out = Vec::new();
    if cfg.pydt.map.is_some() {
        map_measures(results, &mut out)?;
    }
    if cfg.pydt.mcmc.is_some() {
        mcmc_measures(results, &mut out)?;
    }
    if cfg.pydt.density.is_some() {
        density_measures(results, &mut out)?;
    }
    Ok(out)
}

fn map_measures(results: &Results, out: &mut Vec<Measure>) -> Result<()> {
    let t = results.table("maps")?;
    let model = str_column(&t, "model")?;
    let rep = u64_column(&t, "replicate")?;
    let obj = f64_column(&t, "objective")?;
    let start = f64_column(&t, "start_objective")?;
    let root = u64_column(&t, "root_children")?;
    let internal = u64_column(&t, "internal_nodes")?;
    let maxc = u64_column(&t, "max_children")?;
    let purity = f64_column(&t, "purity")?;
    let subtree = f64_column(&t, "subtree")?;
    let groups = root_is_groups(results)?;
    for m in distinct(&model) {
        let rows: Vec<usize> = (0..t.height()).filter(|&i| model[i] == m).collect();
        let f = |c: &[Option<f64>]| rows.iter().filter_map(|&i| c[i]).collect::<Vec<_>>();
        let u = |c: &[Option<u64>]| {
            rows.iter()
                .filter_map(|&i| c[i].map(|v| v as f64))
                .collect::<Vec<_>>()
        };
        let mut push = |id: &str, what: &str, v: f64| {
            out.push(Measure::new(
                format!("map.{m}.{id}"),
                format!("{m}: {what}"),
                v,
            ))
        };
        push(
            "objective",
            "mean objective of the MAP tree over replicates",
            mean(&f(&obj)),
        );
        push(
            "root_children",
            "mean children of the MAP tree's root",
            mean(&u(&root)),
        );
        push(
            "internal_nodes",
            "mean internal nodes of the MAP tree",
            mean(&u(&internal)),
        );
        push(
            "max_children",
            "most children of any node of any MAP tree",
            u(&maxc).into_iter().fold(f64::NAN, f64::max),
        );
        let ok: Vec<f64> = rows
            .iter()
            .map(|&i| match (obj[i], start[i]) {
                (Some(o), Some(s)) => f64::from(u8::from(o >= s - 1e-9 * s.abs().max(1.0))),
                _ => 0.0,
            })
            .collect();
        push(
            "not_below_start",
            "fraction of replicates whose MAP objective is not below the start tree's",
            mean(&ok),
        );
        if !f(&purity).is_empty() {
            push(
                "purity",
                "mean dendrogram purity of the MAP tree",
                mean(&f(&purity)),
            );
            push(
                "subtree",
                "mean subtree score of the MAP tree",
                mean(&f(&subtree)),
            );
        }
        if let Some(g) = &groups {
            let hits: Vec<f64> = rows
                .iter()
                .filter_map(|&i| g.get(&(m.clone(), rep[i]?)).copied())
                .map(|b| f64::from(u8::from(b)))
                .collect();
            push(
                "root_is_groups",
                "fraction of replicates whose root's children are exactly the groups",
                mean(&hits),
            );
        }
    }
    Ok(())
}

/// Per (model, replicate): whether the root's children hold exactly the groups (`None` when a
/// point has no group).
fn root_is_groups(results: &Results) -> Result<Option<BTreeMap<(String, u64), bool>>> {
    let t = results.table("map_nodes")?;
    let (model, rep, node, parent, name, group) = (
        str_column(&t, "model")?,
        u64_column(&t, "replicate")?,
        u64_column(&t, "node")?,
        u64_column(&t, "parent")?,
        str_column(&t, "name")?,
        str_column(&t, "group")?,
    );
    // Node rows per tree.
    let mut trees: BTreeMap<(String, u64), Vec<usize>> = BTreeMap::new();
    for i in 0..t.height() {
        if let Some(r) = rep[i] {
            trees.entry((model[i].clone(), r)).or_default().push(i);
        }
    }
    let mut out = BTreeMap::new();
    for (key, rows) in trees {
        let parent_of: BTreeMap<u64, Option<u64>> = rows
            .iter()
            .filter_map(|&i| Some((node[i]?, parent[i])))
            .collect();
        let root = rows
            .iter()
            .find(|&&i| parent[i].is_none())
            .and_then(|&i| node[i]);
        let mut by_child: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for &i in rows.iter().filter(|&&i| !name[i].is_empty()) {
            if group[i].is_empty() {
                return Ok(None);
            }
            // Walk up to the child of the root (at most as many steps as rows).
            let Some(mut v) = node[i] else { continue };
            let mut steps = 0;
            while let Some(Some(p)) = parent_of.get(&v) {
                if Some(*p) == root || steps > rows.len() {
                    break;
                }
                v = *p;
                steps += 1;
            }
            by_child.entry(v).or_default().push(group[i].clone());
        }
        let mut seen: Vec<&String> = Vec::new();
        let mut pure = true;
        for gs in by_child.values() {
            let first = &gs[0];
            pure &= gs.iter().all(|g| g == first) && !seen.contains(&first);
            seen.push(first);
        }
        out.insert(key, pure && by_child.len() > 1);
    }
    Ok(Some(out))
}

fn mcmc_measures(results: &Results, out: &mut Vec<Measure>) -> Result<()> {
    let t = results.table("traces")?;
    let model = str_column(&t, "model")?;
    let chain = u64_column(&t, "chain")?;
    let it = u64_column(&t, "iteration")?;
    let lj = f64_column(&t, "ln_joint")?;
    let internal = u64_column(&t, "internal_nodes")?;
    let root = u64_column(&t, "root_children")?;
    let finite = (0..t.height())
        .filter(|&i| lj[i].is_some_and(f64::is_finite))
        .count();
    out.push(Measure::new(
        "mcmc.finite",
        "fraction of recorded log joints that are finite",
        finite as f64 / t.height().max(1) as f64,
    ));
    let last_it = it.iter().flatten().max().copied().unwrap_or(0);
    for m in distinct(&model) {
        let rows: Vec<usize> = (0..t.height()).filter(|&i| model[i] == m).collect();
        let mut last: BTreeMap<u64, (u64, f64)> = BTreeMap::new();
        for &i in &rows {
            if let (Some(c), Some(k), Some(v)) = (chain[i], it[i], lj[i]) {
                let e = last.entry(c).or_insert((k, v));
                if k >= e.0 {
                    *e = (k, v);
                }
            }
        }
        let late: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&i| it[i].is_some_and(|k| 2 * k > last_it))
            .collect();
        let mut push = |id: &str, what: &str, v: f64| {
            out.push(Measure::new(
                format!("mcmc.{m}.{id}"),
                format!("{m}: {what}"),
                v,
            ))
        };
        push(
            "ln_joint_last",
            "mean over chains of the final log joint",
            mean(&last.values().map(|x| x.1).collect::<Vec<_>>()),
        );
        push(
            "ln_joint_second_half",
            "mean log joint over the second half of the chains",
            mean(&late.iter().filter_map(|&i| lj[i]).collect::<Vec<_>>()),
        );
        push(
            "internal_nodes_second_half",
            "mean internal nodes over the second half of the chains",
            mean(
                &late
                    .iter()
                    .filter_map(|&i| internal[i].map(|v| v as f64))
                    .collect::<Vec<_>>(),
            ),
        );
        push(
            "root_children_max",
            "most children of the root in any recorded state",
            rows.iter()
                .filter_map(|&i| root[i].map(|v| v as f64))
                .fold(f64::NAN, f64::max),
        );
    }
    Ok(())
}

fn density_measures(results: &Results, out: &mut Vec<Measure>) -> Result<()> {
    let t = results.table("density")?;
    let model = str_column(&t, "model")?;
    let split = u64_column(&t, "split")?;
    let cols = [
        ("ln_predictive", f64_column(&t, "ln_predictive")?),
        ("ln_likelihood", f64_column(&t, "ln_likelihood")?),
        ("ln_joint", f64_column(&t, "ln_joint")?),
        ("internal_nodes", f64_column(&t, "internal_nodes")?),
    ];
    let values = cols.iter().flat_map(|(_, c)| c.iter());
    let finite = values
        .clone()
        .filter(|v| v.is_some_and(f64::is_finite))
        .count();
    out.push(Measure::new(
        "density.finite",
        "fraction of density-table values that are finite",
        finite as f64 / values.count().max(1) as f64,
    ));
    let models = distinct(&model);
    let value = |m: &str, s: u64, c: &[Option<f64>]| {
        (0..t.height())
            .find(|&i| model[i] == m && split[i] == Some(s))
            .and_then(|i| c[i])
    };
    for m in &models {
        for (id, c) in &cols {
            let v: Vec<f64> = (0..t.height())
                .filter(|&i| model[i] == *m)
                .filter_map(|i| c[i])
                .collect();
            out.push(Measure::new(
                format!("density.{m}.{id}"),
                format!("{m}: mean over splits of {id}"),
                mean(&v),
            ));
        }
    }
    let splits: Vec<u64> = {
        let mut s: Vec<u64> = split.iter().flatten().copied().collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    for (a, ma) in models.iter().enumerate() {
        for mb in &models[a + 1..] {
            for (id, c) in cols.iter().take(3) {
                let d: Vec<f64> = splits
                    .iter()
                    .filter_map(|&s| Some(value(ma, s, c)? - value(mb, s, c)?))
                    .collect();
                out.push(Measure::new(
                    format!("density.{ma}_minus_{mb}.{id}"),
                    format!("mean over splits of {id}: {ma} minus {mb}"),
                    mean(&d),
                ));
                out.push(Measure::new(
                    format!("density.{ma}_minus_{mb}.{id}.wins"),
                    format!("fraction of splits where {ma}'s {id} is higher than {mb}'s"),
                    mean(
                        &d.iter()
                            .map(|&x| f64::from(u8::from(x > 0.0)))
                            .collect::<Vec<_>>(),
                    ),
                ));
            }
        }
    }
    Ok(())
}
