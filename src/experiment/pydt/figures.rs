//! The figures, from the tables and the manifest alone:
//! - `map_trees`: the MAP trees of every model side by side on the divergence-time axis
//!   (Figures 5 and 7), multifurcations as such, leaves coloured by group; `map_trees_log` the
//!   same on an axis spaced by −ln(1 − t), where the detail near t = 1 is visible;
//! - `map_root_children`: how many replicates' MAP trees have k children at the root, per model;
//! - `map_search`: the best objective after every search step;
//! - `mcmc_trace`: the sampler's log joint and number of internal nodes per model and chain
//!   (Figure 7's trace);
//! - `density`: held-out log predictive density per point, the samples' log marginal likelihood
//!   and log joint, mean ± sd over splits per model (Figure 6's layout).

use super::measures::distinct;
use super::{PydtConfig, PydtSection, Source};
use crate::experiment::chart::{
    format_number, save_chart, Chart, DotRangeChart, DotRangeRow, LineChart, LineSeries,
    TimeDendrogramChart, TimeTreePanel,
};
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::{bail, Result};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};
use std::path::Path;

/// Charts of one type side by side, equally wide.
struct Row<'a, C: Chart>(Vec<&'a C>);

impl<C: Chart> Chart for Row<'_, C> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        let cells = area.split_evenly((1, self.0.len().max(1)));
        for (chart, cell) in self.0.iter().zip(&cells) {
            chart.draw(cell)?;
        }
        Ok(())
    }
}


/// Draws every figure of the parts the run had.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: PydtConfig = results.config()?;
    let s = &cfg.pydt;
    let name = results.experiment()?.name;
    if s.map.is_some() {
        map_trees(results, s, &name, out)?;
        root_children(results, &name, out)?;
        search_trace(results, s, &name, out)?;
    }
    if s.mcmc.is_some() {
        mcmc_trace(results, &name, out)?;
    }
    if s.density.is_some() {
        density(results, &name, out)?;
    }
    Ok(())
}

/// The replicate drawn per model: replicate 1 when each replicate has its own data (so every
/// panel shows the same points), else the replicate with the highest objective.
fn shown_replicates(results: &Results, s: &PydtSection) -> Result<Vec<(String, u64)>> {
    let t = results.table("maps")?;
    let model = str_column(&t, "model")?;
    let rep = u64_column(&t, "replicate")?;
    let obj = f64_column(&t, "objective")?;
    let mut out = Vec::new();
    for m in distinct(&model) {
        let rows = (0..t.height()).filter(|&i| model[i] == m);
        let best = if s.data.source == Source::FourClusters {
            rows.filter_map(|i| rep[i]).min()
        } else {
            rows.filter_map(|i| Some((obj[i]?, rep[i]?)))
                .fold(None, |b: Option<(f64, u64)>, (o, r)| match b {
                    Some((bo, br)) if bo > o || (bo == o && br < r) || o.is_nan() => Some((bo, br)),
                    _ => Some((o, r)),
                })
                .map(|(_, r)| r)
        };
        if let Some(r) = best {
            out.push((m, r));
        }
    }
    Ok(out)
}

fn map_trees(results: &Results, s: &PydtSection, name: &str, out: &Path) -> Result<()> {
    let groups: Vec<String> = results.fact("groups").unwrap_or_default();
    let shown = shown_replicates(results, s)?;
    let nodes = results.table("map_nodes")?;
    let (nm, nr, nn, np, nt, nname, ngroup) = (
        str_column(&nodes, "model")?,
        u64_column(&nodes, "replicate")?,
        u64_column(&nodes, "node")?,
        u64_column(&nodes, "parent")?,
        f64_column(&nodes, "time")?,
        str_column(&nodes, "name")?,
        str_column(&nodes, "group")?,
    );
    let maps = results.table("maps")?;
    let (mm, mr, mobj, mroot, mpur) = (
        str_column(&maps, "model")?,
        u64_column(&maps, "replicate")?,
        f64_column(&maps, "objective")?,
        u64_column(&maps, "root_children")?,
        f64_column(&maps, "purity")?,
    );
    // θ and α of each MAP tree (absent from tables of older versions).
    let (mtheta, malpha) = match (f64_column(&maps, "theta"), f64_column(&maps, "alpha")) {
        (Ok(a), Ok(b)) => (a, b),
        _ => (vec![None; maps.height()], vec![None; maps.height()]),
    };
    let mut panels = Vec::new();
    let mut most_leaves = 0;
    for (m, r) in &shown {
        let rows: Vec<usize> = (0..nodes.height())
            .filter(|&i| nm[i] == *m && nr[i] == Some(*r))
            .collect();
        let size = rows
            .iter()
            .filter_map(|&i| nn[i])
            .max()
            .map_or(0, |x| x as usize + 1);
        if size > 4 * rows.len() + 4 {
            bail!("map_nodes.parquet: node numbers of {m} run past its rows (the table is damaged; re-run with --force)");
        }
        let mut panel = TimeTreePanel {
            parent: vec![None; size],
            time: vec![1.0; size],
            leaf_labels: vec![String::new(); size],
            leaf_category: vec![None; size],
            ..Default::default()
        };
        let mut has_children = vec![false; size];
        for &i in &rows {
            let Some(v) = nn[i].map(|v| v as usize) else {
                continue;
            };
            panel.parent[v] = np[i].map(|p| p as usize);
            panel.time[v] = nt[i].unwrap_or(1.0);
            panel.leaf_labels[v] = nname[i].clone();
            panel.leaf_category[v] = groups.iter().position(|g| *g == ngroup[i]);
            if let Some(p) = np[i].map(|p| p as usize).filter(|&p| p < size) {
                has_children[p] = true;
            }
        }
        // Roots of absent rows would be taken for the tree's root: make them point nowhere.
        for (v, row) in panel.parent.iter_mut().enumerate() {
            if !rows.iter().any(|&i| nn[i] == Some(v as u64)) {
                *row = Some(v);
            }
        }
        most_leaves = most_leaves.max(has_children.iter().filter(|&&c| !c).count());
        let row = (0..maps.height()).find(|&i| mm[i] == *m && mr[i] == Some(*r));
        let stat = |c: &[Option<f64>]| row.and_then(|i| c[i]);
        let mut title = format!(
            "{m}{}: log p(X, T, s) {}, {} root children",
            params_text(s, m, row.and_then(|i| Some((mtheta[i]?, malpha[i]?)))),
            format_number(stat(&mobj).unwrap_or(f64::NAN), 1),
            row.and_then(|i| mroot[i])
                .map_or("?".into(), |k| k.to_string())
        );
        if let Some(p) = stat(&mpur) {
            title.push_str(&format!(", purity {}", format_number(p, 3)));
        }
        panel.title = title;
        panels.push(panel);
    }
    let which = if s.data.source == Source::FourClusters {
        "replicate 1".to_string()
    } else {
        "best replicate of each model".to_string()
    };
    let mut chart = TimeDendrogramChart {
        title: format!("{name}: MAP trees by greedy Bayesian EM ({which})"),
        panels,
        category_names: groups,
        time_label: "divergence time t".into(),
        log_time: false,
    };
    let height = (300 + 24 * most_leaves as u32).clamp(700, 2400);
    let width = (900 * chart.panels.len() as u32).clamp(900, 2400);
    save_chart(&out.join("map_trees"), width, height, &chart)?;
    // The same trees with the axis spaced by −ln(1 − t): the divergences crowded near t = 1
    // (the DDT's binary detail) spread out.
    chart.log_time = true;
    chart.time_label = "divergence time t (axis spaced by −ln(1 − t))".into();
    save_chart(&out.join("map_trees_log"), width, height, &chart)?;
    Ok(())
}

/// "(θ = 1, α = 0.5)" for a PYDT model (the values of its MAP tree, which EM may have learned),
/// "(DDT)" for a model named otherwise with θ = α = 0.
fn params_text(s: &PydtSection, model: &str, fitted: Option<(f64, f64)>) -> String {
    match s.models.iter().find(|m| m.name == model) {
        Some(m) if m.is_ddt() && m.name != "DDT" => " (DDT)".into(),
        Some(m) if !m.is_ddt() => {
            let (theta, alpha) = fitted.unwrap_or((m.theta, m.alpha));
            format!(
                " (θ = {}, α = {})",
                format_number(theta, 2),
                format_number(alpha, 2)
            )
        }
        _ => String::new(),
    }
}

fn root_children(results: &Results, name: &str, out: &Path) -> Result<()> {
    let t = results.table("maps")?;
    let model = str_column(&t, "model")?;
    let root = u64_column(&t, "root_children")?;
    let models = distinct(&model);
    // At most a few thousand bins, even from a damaged table.
    let hi = root
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(2)
        .clamp(2, 5000);
    let reps = models
        .first()
        .map_or(0, |m0| (0..t.height()).filter(|&i| model[i] == *m0).count());
    let series = models
        .iter()
        .map(|m| LineSeries {
            name: m.clone(),
            points: (2..=hi)
                .map(|k| {
                    let n = (0..t.height())
                        .filter(|&i| model[i] == *m && root[i] == Some(k))
                        .count();
                    (k as f64, n as f64)
                })
                .collect(),
            dashed: false,
            markers: true,
        })
        .collect();
    let chart = LineChart {
        series,
        title: format!("{name}: children of the MAP tree's root over {reps} replicates"),
        x_label: "children of the root".into(),
        y_label: "replicates".into(),
        log_y: false,
        integer_x: true,
    };
    save_chart(&out.join("map_root_children"), 1100, 650, &chart)?;
    Ok(())
}

fn search_trace(results: &Results, s: &PydtSection, name: &str, out: &Path) -> Result<()> {
    let shown = shown_replicates(results, s)?;
    let t = results.table("map_trace")?;
    let (model, rep, step, obj) = (
        str_column(&t, "model")?,
        u64_column(&t, "replicate")?,
        u64_column(&t, "step")?,
        f64_column(&t, "objective")?,
    );
    let series = shown
        .iter()
        .map(|(m, r)| LineSeries {
            name: format!("{m} (replicate {r})"),
            points: (0..t.height())
                .filter(|&i| model[i] == *m && rep[i] == Some(*r))
                .filter_map(|i| Some((step[i]? as f64, obj[i]?)))
                .collect(),
            dashed: false,
            markers: false,
        })
        .collect();
    let chart = LineChart {
        series,
        title: format!("{name}: best objective during the greedy search"),
        x_label: "search step (0: sequential-attachment start after EM)".into(),
        y_label: "log p(X, T, s) of the best tree".into(),
        log_y: false,
        integer_x: true,
    };
    save_chart(&out.join("map_search"), 1100, 650, &chart)?;
    Ok(())
}

fn mcmc_trace(results: &Results, name: &str, out: &Path) -> Result<()> {
    let t = results.table("traces")?;
    let (model, chain, it, lj, internal) = (
        str_column(&t, "model")?,
        u64_column(&t, "chain")?,
        u64_column(&t, "iteration")?,
        f64_column(&t, "ln_joint")?,
        u64_column(&t, "internal_nodes")?,
    );
    let mut keys: Vec<(String, u64)> = Vec::new();
    for i in 0..t.height() {
        if let Some(c) = chain[i] {
            if !keys.contains(&(model[i].clone(), c)) {
                keys.push((model[i].clone(), c));
            }
        }
    }
    // The start (iteration 0, a tree from the prior) is left out: its log joint is far below.
    let series = |value: &dyn Fn(usize) -> Option<f64>| -> Vec<LineSeries> {
        keys.iter()
            .map(|(m, c)| LineSeries {
                name: format!("{m} chain {c}"),
                points: (0..t.height())
                    .filter(|&i| model[i] == *m && chain[i] == Some(*c))
                    .filter_map(|i| Some((it[i]? as f64, value(i)?)))
                    .filter(|p| p.0 >= 1.0)
                    .collect(),
                dashed: *c > 1,
                markers: false,
            })
            .collect()
    };
    let joint = LineChart {
        series: series(&|i| lj[i]),
        title: format!("{name}: log joint of the sampler"),
        x_label: "iteration".into(),
        y_label: "log p(X, tree, times)".into(),
        log_y: false,
        integer_x: true,
    };
    let nodes = LineChart {
        series: series(&|i| internal[i].map(|v| v as f64)),
        title: "internal nodes of the sampled tree".into(),
        x_label: "iteration".into(),
        y_label: "internal nodes".into(),
        log_y: false,
        integer_x: true,
    };
    save_chart(
        &out.join("mcmc_trace"),
        2000,
        700,
        &Row(vec![&joint, &nodes]),
    )?;
    Ok(())
}

fn density(results: &Results, name: &str, out: &Path) -> Result<()> {
    let t = results.table("density")?;
    let (model, lp, ll, lj) = (
        str_column(&t, "model")?,
        f64_column(&t, "ln_predictive")?,
        f64_column(&t, "ln_likelihood")?,
        f64_column(&t, "ln_joint")?,
    );
    let s = results.table("density_summary")?;
    let (sm, sw, smu, ssd) = (
        str_column(&s, "model")?,
        str_column(&s, "measure")?,
        f64_column(&s, "mean")?,
        f64_column(&s, "sd")?,
    );
    let splits = u64_column(&t, "split")?
        .iter()
        .flatten()
        .max()
        .copied()
        .unwrap_or(0);
    let models = distinct(&model);
    let chart = |measure: &str, col: &[Option<f64>], title: String, x_label: &str| {
        let rows = models
            .iter()
            .map(|m| {
                let ms = (0..s.height())
                    .find(|&i| sm[i] == *m && sw[i] == measure)
                    .and_then(|i| Some((smu[i]?, ssd[i]?)));
                let mut points: Vec<(usize, f64)> = ms.map(|(mu, _)| (0, mu)).into_iter().collect();
                points.extend(
                    (0..t.height())
                        .filter(|&i| model[i] == *m)
                        .filter_map(|i| Some((1, col[i]?))),
                );
                DotRangeRow {
                    label: m.clone(),
                    range: ms.map(|(mu, sd)| (mu - sd, mu + sd)),
                    points,
                }
            })
            .collect();
        DotRangeChart {
            title,
            rows,
            series_names: vec!["mean over splits".into(), "one split".into()],
            x_label: x_label.into(),
            range_label: "mean ± sd".into(),
            x_range: None,
        }
    };
    let left = chart(
        "ln_predictive",
        &lp,
        format!("{name}: held-out density ({splits} splits)"),
        "mean log predictive density per held-out point",
    );
    let middle = chart(
        "ln_likelihood",
        &ll,
        "marginal likelihood of the sampled trees".into(),
        "mean log p(X_train | tree, times, σ²) over samples",
    );
    let right = chart(
        "ln_joint",
        &lj,
        "log joint of the sampled trees".into(),
        "mean log p(X_train, tree, times) over samples",
    );
    let row = Row(vec![&left, &middle, &right]);
    save_chart(
        &out.join("density"),
        2400,
        300 + 90 * models.len() as u32,
        &row,
    )?;
    Ok(())
}
