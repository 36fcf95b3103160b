//! The figures, from the tables and the manifest alone:
//! - `map_trees`: the MAP trees of every model side by side on a divergence-time axis spaced by
//!   −ln(1 − t), where the detail near t = 1 is visible (Figures 5 and 7), multifurcations as
//!   such, leaves coloured by group; `map_trees_linear` the same on the linear axis t;
//! - `map_root_children`: bars of how many replicates' MAP trees have k children at the root,
//!   per model;
//! - `map_search`: the best objective after every search step;
//! - `mcmc_trace`: the sampler's log joint (probit data: EP's log-likelihood of the 0/1 data,
//!   log p(Y | tree, times, σ²), not the augmented state's log joint, which falls while the
//!   auxiliaries spread) and number of internal nodes per model and chain (Figure 7's trace);
//! - `density`: held-out log predictive density per point, the samples' log marginal likelihood
//!   and log joint, mean ± sd over splits per model (Figure 6's layout), stacked; the title
//!   names the data as a substitute for the paper's.

use super::measures::distinct;
use super::{PydtConfig, PydtSection, Source};
use crate::experiment::chart::{
    format_number, format_number_exact, save_chart, BarChart, Column, Row, BarSeries, DotRangeChart, DotRangeRow, LineChart, LineSeries,
    TimeDendrogramChart, TimeTreePanel,
};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::{bail, Result};
use std::path::Path;

/// The name of the MAP objective of `maps.parquet` row `row`: log p(X, T, t) when its
/// `time_density` is "t", else log p(X, T, s) (tables without the column: the s-density).
fn objective_name(density: &[String], row: Option<usize>) -> &'static str {
    match row.and_then(|i| density.get(i)).map(String::as_str) {
        Some("t") => "log p(X, T, t)",
        _ => "log p(X, T, s)",
    }
}

/// The `time_density` column of `maps.parquet` (empty strings for tables of older versions).
fn densities(maps: &polars::prelude::DataFrame) -> Vec<String> {
    str_column(maps, "time_density").unwrap_or_else(|_| vec![String::new(); maps.height()])
}

/// Draws every figure of the parts the run had.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: PydtConfig = results.config()?;
    let s = &cfg.pydt;
    let smoke = results.experiment()?.name.ends_with("_smoke");
    let name = paper_item(s.data.source, false, smoke);
    if s.map.is_some() {
        map_trees(results, s, &name, out)?;
        root_children(results, s, &name, out)?;
        search_trace(results, s, &name, out)?;
    }
    if s.mcmc.is_some() {
        mcmc_trace(results, s, &name, out)?;
    }
    if s.density.is_some() {
        density(results, s, &paper_item(s.data.source, true, smoke), out)?;
    }
    Ok(())
}

/// The paper item a figure reproduces, in words, for its title: Knowles & Ghahramani's Figure 5
/// (four clusters), 7 (the animals) or 6 (the held-out density); other data name the models.
/// A smoke run says so.
fn paper_item(source: Source, density: bool, smoke: bool) -> String {
    let item = match (density, source) {
        // The paper's macaque skull measurements are not available: any data are a substitute.
        (true, _) => "Knowles & Ghahramani, Figure 6 on substitute data".to_string(),
        (false, Source::FourClusters) => "Knowles & Ghahramani, Figure 5".to_string(),
        (false, Source::Animals33) => "Knowles & Ghahramani, Figure 7".to_string(),
        (false, Source::Pam50) => "DDT and PYDT on pam50".to_string(),
        (false, Source::Usps) => "DDT and PYDT on USPS digits".to_string(),
        (false, Source::File) => "DDT and PYDT on your data".to_string(),
    };
    if smoke {
        format!("{item} (smoke run)")
    } else {
        item
    }
}

/// A model in words: "DDT", or "PYDT (θ = 1, α = 0.5)" with its configured parameters (a
/// config's model name, such as "PYDT_t1_a05", is an id, not words); an unknown name as it is.
fn model_words(s: &PydtSection, model: &str) -> String {
    match s.models.iter().find(|m| m.name == model) {
        Some(m) if m.is_ddt() => "DDT".into(),
        Some(m) => format!(
            "PYDT (θ = {}, α = {})",
            format_number_exact(m.theta, 0, 3),
            format_number_exact(m.alpha, 0, 3)
        ),
        None => model.to_string(),
    }
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
    let mdensity = densities(&maps);
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
            "{}: {} {}, {} root children",
            params_text(s, m, row.and_then(|i| Some((mtheta[i]?, malpha[i]?)))),
            objective_name(&mdensity, row),
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
    // `map_trees` on an axis spaced by −ln(1 − t): the divergences crowded near t = 1 (the
    // clusters' fine detail) spread out instead of hiding under the leaf markers;
    // `map_trees_linear` the same trees on the linear time axis t.
    let mut chart = TimeDendrogramChart {
        title: format!("{name}: MAP trees by greedy Bayesian EM ({which})"),
        panels,
        category_names: groups,
        time_label: "divergence time t (axis spaced by −ln(1 − t))".into(),
        log_time: true,
        size_axis: None,
    };
    let height = (300 + 24 * most_leaves as u32).clamp(700, 2400);
    let width = (900 * chart.panels.len() as u32).clamp(900, 2400);
    save_chart(&out.join("map_trees"), width, height, &chart)?;
    chart.log_time = false;
    chart.time_label = "divergence time t (linear axis: merges near t = 1 overlap the leaves; see map_trees)".into();
    save_chart(&out.join("map_trees_linear"), width, height, &chart)?;
    Ok(())
}

/// A panel's model: "DDT", or "PYDT (θ = 1.00, α = 0.50)" with the values of its MAP tree
/// (which EM may have learned); an unknown name as it is.
fn params_text(s: &PydtSection, model: &str, fitted: Option<(f64, f64)>) -> String {
    match s.models.iter().find(|m| m.name == model) {
        Some(m) if !m.is_ddt() => {
            let (theta, alpha) = fitted.unwrap_or((m.theta, m.alpha));
            format!(
                "PYDT (θ = {}, α = {})",
                format_number(theta, 2),
                format_number(alpha, 2)
            )
        }
        _ => model_words(s, model),
    }
}

fn root_children(results: &Results, s: &PydtSection, name: &str, out: &Path) -> Result<()> {
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
        .map(|m| BarSeries {
            name: model_words(s, m),
            values: (2..=hi)
                .map(|k| {
                    (0..t.height())
                        .filter(|&i| model[i] == *m && root[i] == Some(k))
                        .count() as f64
                })
                .collect(),
        })
        .collect();
    let chart = BarChart {
        categories: (2..=hi as i64).collect(),
        series,
        title: format!(
            "{name}: children of the MAP tree's root over {reps} {}",
            if reps == 1 { "replicate" } else { "replicates" }
        ),
        x_label: "children of the root".into(),
        y_label: "replicates".into(),
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
            name: format!("{} (replicate {r})", model_words(s, m)),
            points: (0..t.height())
                .filter(|&i| model[i] == *m && rep[i] == Some(*r))
                .filter_map(|i| Some((step[i]? as f64, obj[i]?)))
                .collect(),
            dashed: false,
            markers: false,
        })
        .collect();
    let maps = results.table("maps")?;
    let (mm, mr, mdensity) = (
        str_column(&maps, "model")?,
        u64_column(&maps, "replicate")?,
        densities(&maps),
    );
    let row = shown
        .first()
        .and_then(|(m, r)| (0..maps.height()).find(|&i| mm[i] == *m && mr[i] == Some(*r)));
    let chart = LineChart {
        series,
        title: format!("{name}: best objective during the greedy search"),
        x_label: "search step (0: sequential-attachment start after EM)".into(),
        y_label: format!("{} of the best tree", objective_name(&mdensity, row)),
        log_y: false,
        integer_x: true,
    };
    save_chart(&out.join("map_search"), 1100, 650, &chart)?;
    Ok(())
}

fn mcmc_trace(results: &Results, s: &PydtSection, name: &str, out: &Path) -> Result<()> {
    let t = results.table("traces")?;
    let (model, chain, it, internal) = (
        str_column(&t, "model")?,
        u64_column(&t, "chain")?,
        u64_column(&t, "iteration")?,
        u64_column(&t, "internal_nodes")?,
    );
    let probit = f64_column(&t, "aux_mean_square")
        .map(|c| c.iter().any(Option::is_some))
        .unwrap_or(false);
    // Probit data: the 0/1 data's log-likelihood by EP where the table has it. The augmented
    // state's `ln_joint` includes the auxiliaries and falls while they spread out, and the log
    // joint's time density swings by hundreds of nats with c (small c favours times near 1).
    let (lj, observed) = match (probit, f64_column(&t, "ln_likelihood_data")) {
        (true, Ok(c)) => (c, true),
        _ => (f64_column(&t, "ln_joint")?, false),
    };
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
                name: format!("{} chain {c}", model_words(s, m)),
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
    let (title, y_label) = match (probit, observed) {
        (true, true) => (
            format!("{name}: log-likelihood of the 0/1 data (EP, auxiliaries integrated out)"),
            "log p(Y | tree, times, σ²), EP",
        ),
        (true, false) => (
            format!("{name}: log joint of the augmented state (falls while the auxiliaries spread)"),
            "log p(Z, tree, times), Z the probit auxiliaries",
        ),
        _ => (
            format!("{name}: log joint of the sampler"),
            "log p(X, tree, times)",
        ),
    };
    let joint = LineChart {
        series: series(&|i| lj[i]),
        title,
        x_label: "iteration".into(),
        y_label: y_label.into(),
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

/// What the density part's data are, for its title.
fn density_data(s: &PydtSection) -> String {
    match s.data.source {
        Source::Pam50 => "pam50 expression".to_string(),
        Source::Usps => "USPS digits".to_string(),
        other => format!("{} data", other.name()),
    }
}

fn density(results: &Results, s_cfg: &PydtSection, name: &str, out: &Path) -> Result<()> {
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
                    errors: Vec::new(),
                    label: model_words(s_cfg, m),
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
        format!(
            "{name}: held-out density, {splits} {} of {}",
            if splits == 1 { "split" } else { "splits" },
            density_data(s_cfg)
        ),
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
    // Stacked, so that the text keeps its size when the figure is shown at page width.
    let column = Column(vec![&left, &middle, &right]);
    save_chart(
        &out.join("density"),
        1300,
        3 * (230 + 80 * models.len() as u32),
        &column,
    )?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "map_trees" | "map_trees_linear" => Some(Caption::new(
            "Knowles & Ghahramani's Figures 5 and 7: the MAP trees of the DDT and the PYDT found by greedy Bayesian EM, leaves marked by group (colour and shape), divergence times on a shared axis (map_trees spaces it by −ln(1 − t), map_trees_linear is linear).",
            "Multifurcating trees side by side, one per model, leaves named and marked by group with a colour and a shape each.",
        )),
        "map_root_children" => Some(Caption::new(
            "How many children the root of each model's MAP tree has, over the replicates: the PYDT may split into more than two at once, the DDT never.",
            "Grouped bars of replicate counts per number of root children, one colour per model.",
        )),
        "map_search" => Some(Caption::new(
            "The best objective of the greedy search per step, for the replicate drawn in map_trees.",
            "Lines of the best log objective against the search step, one per model, told apart by colour and dash pattern.",
        )),
        "mcmc_trace" => Some(Caption::new(
            "The sampler's traces per model and chain: left, the quantity its axis names (for 0/1 data such as the animals, the log-likelihood log p(Y | tree, times, σ²) by EP; for continuous data, the log joint); right, the number of internal nodes of the sampled tree.",
            "Two panels of traces against the iteration, one line per model and chain, told apart by colour and dash pattern.",
        )),
        "density" => Some(Caption::new(
            "Knowles & Ghahramani's Figure 6 on substitute data: held-out log predictive density, the marginal likelihood and the log joint of the sampled trees per model, mean ± sd over splits with each split's value.",
            "Three stacked dot-range charts, one row per model: a mean marker over a grey range and one marker per split.",
        )),
        _ => None,
    }
}
