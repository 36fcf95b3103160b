//! Figure 4 of the Cluster Trellis paper: Dasgupta's cost (Eq. 4) of the trees built by average
//! linkage and by the local greedy, against the exact MAP tree of the trellis, on instances of
//! the adversarial family for average linkage and on random planted-partition graphs.
//!
//! Outputs: `dasgupta.parquet` (per instance: the three costs, their ratios, log Z and the
//! trees as Newick), `graphs.parquet` (every instance's edges), one Figure-4 chart per
//! adversarial instance (`fig4_<k>.png/.svg`: the graph and both trees with their costs) and a
//! summary chart of cost ratios (`cost_ratios.png/.svg`).

use super::chart::{
    format_number_exact, save_chart, DendrogramPanel, DotRangeChart, DotRangeRow,
    GraphAndTreesChart,
};
use super::config::Config;
use super::table::Table;
use super::{Manifest, Staging};
use crate::data::graphs::{adversarial, planted_partition};
use crate::exact::FullTrellis;
use crate::model::{DasguptaModel, WeightMatrix};
use crate::search::{average_linkage, greedy};
use crate::tree::Tree;
use anyhow::Result;

/// One graph of the study.
struct Instance {
    family: &'static str,
    index: usize,
    description: String,
    weights: WeightMatrix,
    /// A grouping of the points to colour leaves by (planted clusters, or the construction's
    /// blocks), if any.
    groups: Option<(Vec<usize>, Vec<String>)>,
    /// Order of the points around the circle of the graph drawing (empty: index order).
    drawing_order: Vec<usize>,
}

/// The three trees of one instance and their costs.
struct Scored {
    map: Tree,
    map_cost: f64,
    linkage: Tree,
    linkage_cost: f64,
    greedy: Tree,
    greedy_cost: f64,
    log_z: f64,
}

fn score(inst: &Instance, beta: f64, limit: usize) -> Result<Scored> {
    let model = DasguptaModel::new(inst.weights.clone(), beta);
    let trellis = FullTrellis::build_with_limit(&model, limit)?;
    let map = trellis.map_tree();
    let linkage = average_linkage(&inst.weights);
    let greedy = greedy(&model).tree;
    Ok(Scored {
        map_cost: model.tree_cost(&map),
        linkage_cost: model.tree_cost(&linkage),
        greedy_cost: model.tree_cost(&greedy),
        log_z: trellis.log_partition(),
        map,
        linkage,
        greedy,
    })
}

/// Runs the Dasgupta-cost experiment of `cfg` into `staging`.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<()> {
    let sec = cfg.dasgupta.as_ref().expect("checked by Config");
    let limit = cfg.algorithms.max_exact_leaves;
    let mut instances = Vec::new();
    for (k, p) in sec.adversarial.iter().enumerate() {
        let g = adversarial(p);
        // Draw the path of pairs as a ladder bent into a circle: the even points along the
        // path, then the odd ones back, so that path edges run around the circle.
        let path = p.path_order();
        let mut drawing_order: Vec<usize> = path.iter().map(|&q| 2 * q).collect();
        drawing_order.extend(path.iter().rev().map(|&q| 2 * q + 1));
        instances.push(Instance {
            family: "adversarial",
            index: k,
            description: p.describe(),
            weights: g.weights,
            groups: Some((g.groups, g.group_names)),
            drawing_order,
        });
    }
    if let Some(p) = &sec.planted {
        let n_clusters = p.cluster_sizes.len();
        for k in 0..p.instances {
            let seed = cfg
                .experiment
                .seed
                .wrapping_mul(7_919)
                .wrapping_add(k as u64);
            let g = planted_partition(&p.cluster_sizes, p.p_in, p.p_out, seed);
            instances.push(Instance {
                family: "planted",
                index: k,
                description: format!(
                    "clusters {:?}, p_in {}, p_out {}, seed {seed}",
                    p.cluster_sizes, p.p_in, p.p_out
                ),
                weights: g.weights,
                groups: Some((
                    g.labels,
                    (0..n_clusters)
                        .map(|c| format!("cluster {}", c + 1))
                        .collect(),
                )),
                drawing_order: vec![],
            });
        }
    }
    let pb = super::progress_bar(instances.len() as u64, "graphs");
    let mut scored = Vec::new();
    for inst in &instances {
        scored.push(score(inst, sec.beta, limit)?);
        pb.inc(1);
    }
    pb.finish_and_clear();

    let col = |f: &dyn Fn(&Scored) -> f64| scored.iter().map(|s| Some(f(s))).collect::<Vec<_>>();
    let newick =
        |f: &dyn Fn(&Scored) -> &Tree| scored.iter().map(|s| f(s).to_newick()).collect::<Vec<_>>();
    Table::new()
        .str(
            "family",
            &instances.iter().map(|i| i.family).collect::<Vec<_>>(),
        )
        .u64(
            "instance",
            &instances
                .iter()
                .map(|i| Some(i.index as u64))
                .collect::<Vec<_>>(),
        )
        .u64(
            "n_points",
            &instances
                .iter()
                .map(|i| Some(i.weights.len() as u64))
                .collect::<Vec<_>>(),
        )
        .str(
            "description",
            &instances
                .iter()
                .map(|i| i.description.clone())
                .collect::<Vec<_>>(),
        )
        .f64("map_cost", &col(&|s| s.map_cost))
        .f64("average_linkage_cost", &col(&|s| s.linkage_cost))
        .f64("greedy_cost", &col(&|s| s.greedy_cost))
        .f64(
            "average_linkage_ratio",
            &col(&|s| s.linkage_cost / s.map_cost),
        )
        .f64("greedy_ratio", &col(&|s| s.greedy_cost / s.map_cost))
        .f64("log_z", &col(&|s| s.log_z))
        .str("map_newick", &newick(&|s| &s.map))
        .str("average_linkage_newick", &newick(&|s| &s.linkage))
        .str("greedy_newick", &newick(&|s| &s.greedy))
        .write_parquet(&staging.path("dasgupta.parquet"))?;

    // Every instance's edges, so that the graphs can be redrawn or rescored elsewhere.
    let (mut fam, mut idx, mut ii, mut jj, mut ww) = (vec![], vec![], vec![], vec![], vec![]);
    for inst in &instances {
        let n = inst.weights.len();
        for i in 0..n {
            for j in i + 1..n {
                let w = inst.weights.get(i, j);
                if w != 0.0 {
                    fam.push(inst.family);
                    idx.push(Some(inst.index as u64));
                    ii.push(Some(i as u64));
                    jj.push(Some(j as u64));
                    ww.push(Some(w));
                }
            }
        }
    }
    Table::new()
        .str("family", &fam)
        .u64("instance", &idx)
        .u64("i", &ii)
        .u64("j", &jj)
        .f64("weight", &ww)
        .write_parquet(&staging.path("graphs.parquet"))?;

    // Figure 4: the graph and both trees, per adversarial instance.
    for (inst, s) in instances
        .iter()
        .zip(&scored)
        .filter(|(i, _)| i.family == "adversarial")
    {
        let n = inst.weights.len();
        let labels: Vec<String> = (0..n).map(|i| (i + 1).to_string()).collect();
        let (cats, names) = match &inst.groups {
            Some((g, names)) => (g.iter().map(|&x| Some(x)).collect(), names.clone()),
            None => (vec![None; n], vec![]),
        };
        let panel = |title: String, tree: &Tree| DendrogramPanel {
            title,
            tree: tree.clone(),
            leaf_labels: labels.clone(),
            leaf_category: cats.clone(),
        };
        let chart = GraphAndTreesChart {
            title: format!(
                "Dasgupta's cost: average linkage vs exact MAP ({})",
                inst.description
            ),
            weights: (0..n)
                .map(|i| (0..n).map(|j| inst.weights.get(i, j)).collect())
                .collect(),
            node_labels: labels.clone(),
            trees: vec![
                panel(
                    format!(
                        "average linkage: cost {}",
                        format_number_exact(s.linkage_cost, 2, 4)
                    ),
                    &s.linkage,
                ),
                panel(
                    format!(
                        "exact MAP (trellis): cost {}",
                        format_number_exact(s.map_cost, 2, 4)
                    ),
                    &s.map,
                ),
            ],
            graph_title: format!("graph ({n} points)"),
            category_names: names,
            node_order: inst.drawing_order.clone(),
        };
        save_chart(
            &staging.path(&format!("fig4_{}", inst.index)),
            1800,
            800,
            &chart,
        )?;
    }

    // Summary: cost ratios per family and algorithm.
    let mut rows = Vec::new();
    for family in ["adversarial", "planted"] {
        for (algo, f) in [
            (
                "average linkage",
                (|s: &Scored| s.linkage_cost / s.map_cost) as fn(&Scored) -> f64,
            ),
            ("local greedy", |s: &Scored| s.greedy_cost / s.map_cost),
        ] {
            let v: Vec<f64> = instances
                .iter()
                .zip(&scored)
                .filter(|(i, _)| i.family == family)
                .map(|(_, s)| f(s))
                .filter(|x| x.is_finite())
                .collect();
            if v.is_empty() {
                continue;
            }
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let mut points: Vec<(usize, f64)> = v.iter().map(|&x| (0, x)).collect();
            points.push((1, mean));
            rows.push(DotRangeRow {
                label: format!("{family} ({}), {algo}", v.len()),
                range: Some((lo, hi)),
                points,
            });
        }
    }
    let chart = DotRangeChart {
        title: "Dasgupta's cost of greedy trees relative to the exact MAP tree".into(),
        rows,
        series_names: vec!["one graph".into(), "mean".into()],
        x_label: "cost / exact MAP cost (1 = optimal)".into(),
        range_label: "range over graphs".into(),
        x_range: None,
    };
    save_chart(&staging.path("cost_ratios"), 1400, 700, &chart)?;
    manifest.set("instances", instances.len());
    Ok(())
}
