//! Figure 4 (per adversarial instance) and the cost-ratio summary, drawn from
//! `dasgupta.parquet`, `graphs.parquet` and `points.parquet` alone.

use crate::experiment::chart::{
    format_number_exact, save_chart, DendrogramPanel, DotRangeChart, DotRangeRow,
    GraphAndTreesChart, StripChart,
};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use crate::tree::Tree;
use anyhow::{anyhow, bail, Context, Result};
use polars::prelude::DataFrame;
use std::path::Path;

/// Draws `fig4_<k>.png/.svg` for every adversarial instance and `cost_ratios.png/.svg`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let t = results.table("dasgupta")?;
    let graphs = Graphs::read(results)?;
    let family = str_column(&t, "family")?;
    let instance = u64_column(&t, "instance")?;
    let n_points = u64_column(&t, "n_points")?;
    let description = str_column(&t, "description")?;
    let map_cost = f64_column(&t, "map_cost")?;
    let linkage_cost = f64_column(&t, "average_linkage_cost")?;
    let map_tree = str_column(&t, "map_newick_as_built")?;
    let linkage_tree = str_column(&t, "average_linkage_newick_as_built")?;
    let tree = |text: &str| {
        Tree::from_newick(text).with_context(|| format!("dasgupta.parquet: tree {text:?}"))
    };
    let cost = |c: Option<f64>| c.ok_or_else(|| anyhow!("dasgupta.parquet: a cost is missing"));

    // Figure 4: the graph and both trees, per adversarial instance.
    for i in (0..t.height()).filter(|&i| family[i] == "adversarial") {
        let k = instance[i].ok_or_else(|| anyhow!("dasgupta.parquet: no instance"))?;
        let n = n_points[i].unwrap_or(0) as usize;
        let g = graphs.of("adversarial", k, n)?;
        let labels: Vec<String> = (0..n).map(|i| (i + 1).to_string()).collect();
        let panel = |title: String, tree: Tree| DendrogramPanel {
            title,
            tree,
            leaf_labels: labels.clone(),
            leaf_category: g.groups.iter().map(|&x| Some(x)).collect(),
        };
        let node_positions = ladder_layout(&g.weights, &g.groups);
        let chart = GraphAndTreesChart {
            title: format!(
                "[CT] Figure 4: Dasgupta's cost, average linkage vs the exact MAP ({})",
                description[i]
            ),
            weights: g.weights,
            node_labels: labels.clone(),
            trees: vec![
                panel(
                    format!(
                        "average linkage: cost {}",
                        format_number_exact(cost(linkage_cost[i])?, 2, 4)
                    ),
                    tree(&linkage_tree[i])?,
                ),
                panel(
                    format!(
                        "exact MAP (trellis): cost {}",
                        format_number_exact(cost(map_cost[i])?, 2, 4)
                    ),
                    tree(&map_tree[i])?,
                ),
            ],
            graph_title: format!("graph ({n} points)"),
            category_names: g.group_names,
            node_order: g.circle_order,
            node_positions,
        };
        save_chart(&out.join(format!("fig4_{k}")), 1800, 800, &chart)?;
    }

    // Summary: cost ratios per family and method.
    let mut rows = Vec::new();
    for fam in ["adversarial", "planted"] {
        for (method, column) in [
            ("average linkage", "average_linkage_ratio"),
            ("local greedy", "greedy_ratio"),
        ] {
            let ratio = f64_column(&t, column)?;
            let v: Vec<f64> = (0..t.height())
                .filter(|&i| family[i] == fam)
                .filter_map(|i| ratio[i])
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
                errors: Vec::new(),
                label: format!("{fam} ({}), {method}", v.len()),
                range: Some((lo, hi)),
                points,
            });
        }
    }
    // One dot per graph, spread across the row over a quartile box, so that 50 do not overplot.
    let chart = StripChart {
        chart: DotRangeChart {
            title: "Dasgupta's cost of greedy trees relative to the exact MAP tree".into(),
            rows,
            series_names: vec!["one graph".into(), "mean".into()],
            x_label: "cost / exact MAP cost (1 = optimal; box: quartiles and median)".into(),
            range_label: "range over graphs".into(),
            x_range: None,
        },
        strip_series: 0,
    };
    save_chart(&out.join("cost_ratios"), 1400, 700, &chart)?;
    Ok(())
}

/// Where the nodes of a ladder go (its two rails, rung by rung: pair `k` at `x = k/(m-1)`, one
/// node of each pair on the top rail, the other below it), when the graph is one: every group a
/// pair joined by an edge (a rung), the groups joined in a path by edges between the rails. Empty
/// (the circle) for any other graph.
fn ladder_layout(weights: &[Vec<f64>], groups: &[usize]) -> Vec<(f64, f64)> {
    let n = groups.len();
    let m = groups.iter().copied().max().map_or(0, |g| g + 1);
    let members: Vec<Vec<usize>> = (0..m)
        .map(|g| (0..n).filter(|&i| groups[i] == g).collect())
        .collect();
    let edge = |i: usize, j: usize| weights[i][j] != 0.0 && weights[i][j].is_finite();
    if m < 2 || members.iter().any(|p| p.len() != 2 || !edge(p[0], p[1])) {
        return Vec::new();
    }
    let linked = |a: usize, b: usize| {
        members[a]
            .iter()
            .any(|&i| members[b].iter().any(|&j| edge(i, j)))
    };
    let neighbours = |g: usize| (0..m).filter(|&h| h != g && linked(g, h)).collect::<Vec<_>>();
    // Walk the path of pairs from an end.
    let Some(start) = (0..m).find(|&g| neighbours(g).len() == 1) else {
        return Vec::new();
    };
    let mut order = vec![start];
    while order.len() < m {
        let last = order[order.len() - 1];
        let next: Vec<usize> = neighbours(last)
            .into_iter()
            .filter(|h| !order.contains(h))
            .collect();
        match next.as_slice() {
            [h] => order.push(*h),
            _ => return Vec::new(),
        }
    }
    let mut pos = vec![(0.0, 0.0); n];
    let mut top = members[start][0];
    for (k, &g) in order.iter().enumerate() {
        let (a, b) = (members[g][0], members[g][1]);
        // The node joined to the last top node stays on the top rail.
        let (up, down) = if k == 0 || edge(top, a) { (a, b) } else { (b, a) };
        let x = k as f64 / (m - 1) as f64;
        pos[up] = (x, 0.0);
        pos[down] = (x, 1.0);
        top = up;
    }
    pos
}

/// `graphs.parquet` and `points.parquet`, read once.
struct Graphs {
    edges: DataFrame,
    points: DataFrame,
}

/// What Figure 4 draws of one graph.
struct Graph {
    /// Full symmetric weight matrix (zero where there is no edge).
    weights: Vec<Vec<f64>>,
    /// Group of each point.
    groups: Vec<usize>,
    /// Name of each group.
    group_names: Vec<String>,
    /// Points in their order around the circle (empty: index order).
    circle_order: Vec<usize>,
}

impl Graphs {
    fn read(results: &Results) -> Result<Graphs> {
        Ok(Graphs {
            edges: results.table("graphs")?,
            points: results.table("points")?,
        })
    }

    /// The graph `instance` of `family`, with `n` points.
    fn of(&self, family: &str, instance: u64, n: usize) -> Result<Graph> {
        let (e, p) = (&self.edges, &self.points);
        let mut weights = vec![vec![0.0; n]; n];
        let (fam, idx) = (str_column(e, "family")?, u64_column(e, "instance")?);
        let (ii, jj, ww) = (u64_column(e, "i")?, u64_column(e, "j")?, f64_column(e, "weight")?);
        for r in (0..e.height()).filter(|&r| fam[r] == family && idx[r] == Some(instance)) {
            let (i, j) = (ii[r].unwrap_or(u64::MAX) as usize, jj[r].unwrap_or(u64::MAX) as usize);
            if i >= n || j >= n {
                bail!("graphs.parquet: edge ({i}, {j}) of {family} graph {instance} is out of range 0..{n}");
            }
            let w = ww[r].unwrap_or(f64::NAN);
            weights[i][j] = w;
            weights[j][i] = w;
        }
        let (fam, idx) = (str_column(p, "family")?, u64_column(p, "instance")?);
        let point = u64_column(p, "point")?;
        let group = u64_column(p, "group")?;
        let group_name = str_column(p, "group_name")?;
        let position = u64_column(p, "circle_position")?;
        let mut groups = vec![0; n];
        let mut group_names: Vec<String> = Vec::new();
        let mut at: Vec<(u64, usize)> = Vec::new();
        let mut seen = 0;
        for r in (0..p.height()).filter(|&r| fam[r] == family && idx[r] == Some(instance)) {
            let (i, g) = (point[r].unwrap_or(u64::MAX) as usize, group[r].unwrap_or(0) as usize);
            if i >= n {
                bail!("points.parquet: point {i} of {family} graph {instance} is out of range 0..{n}");
            }
            groups[i] = g;
            if group_names.len() <= g {
                group_names.resize(g + 1, String::new());
            }
            group_names[g] = group_name[r].clone();
            if let Some(k) = position[r] {
                at.push((k, i));
            }
            seen += 1;
        }
        if seen != n {
            bail!("points.parquet lists {seen} points of {family} graph {instance}, not {n}");
        }
        at.sort();
        Ok(Graph {
            weights,
            groups,
            group_names,
            circle_order: at.into_iter().map(|(_, i)| i).collect(),
        })
    }
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "cost_ratios" => Some(Caption::new(
            "Dasgupta's cost of the greedy trees (average linkage, local greedy) relative to the exact MAP tree's on every graph of the run: 1 is optimal.",
            "Rows of cost ratios at or above 1, one marker per graph over a grey range bar.",
        )),
        s if s.starts_with("fig4_") => Some(Caption::new(
            "Figure 4 of the Cluster Trellis paper: a weighted graph beside the tree greedy builds on it and the exact minimiser of Dasgupta's cost the trellis finds, with both costs in the panel titles.",
            "A weighted graph on the left and two dendrograms over its nodes on the right, the greedy tree and the exact MAP tree.",
        )),
        _ => None,
    }
}
