//! The board's figures, from `board.parquet` alone: a heatmap per metric (methods × datasets,
//! best per column outlined), a quality-vs-time scatter per dataset, and `leaderboard.md`
//! ([`super::leaderboard`]).
//!
//! Heatmap cells per (dataset, method) over the instances where the method ran:
//! - bounded scores (dendrogram purity, subtree score, ARI AUC): the mean;
//! - energies, Dasgupta's cost and wall time: the mean *place* among the methods on each
//!   instance (1 = best; ties share the better place), which compares datasets of different
//!   scales and copes with `-inf` (a tree the likelihood forbids);
//! - posterior rank: log10 of the median rank among all trees (0 = the MAP).
//!
//! Every heatmap shows better as brighter (viridis yellow; the scale is reversed where lower is
//! better) with the better end at the top of its colour bar, which says "better →". The log
//! posterior gets no heatmap: per instance it orders the trees as the energy does, so its
//! places would repeat the energy's heatmap. Every method has one colour in every time chart
//! ([`method_color`]).
use super::run::{dataset_energies, higher_is_better, rows, Row};
use crate::experiment::chart::{
    distinct_color, save_chart, save_chart_default, HeatmapChart, QualityTimeChart,
    QualityTimePoint,
};
use plotters::style::RGBColor;
use crate::experiment::kind::Results;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The generator's tree: scored beside the methods, but never timed as one.
const TRUTH: &str = "truth";

/// Metrics summarised by their mean value.
const BOUNDED: [&str; 3] = ["dendrogram_purity", "subtree_score", "ari_auc"];

/// Metrics summarised by mean place among methods.
const PLACED: [&str; 4] = ["ginkgo_log_likelihood", "hcc_energy", "dasgupta_cost", "seconds"];

/// The posterior rank's heatmap shows log10 of the median rank.
const RANK: &str = "posterior_rank";

/// Height of a heatmap; its width follows the number of datasets ([`heatmap_width`]).
const HEATMAP_HEIGHT: u32 = 750;

/// Width of a heatmap of `cols` datasets: room for the method names, the cells and the colour
/// bar, without wide empty margins when there are few columns.
fn heatmap_width(cols: usize) -> u32 {
    (440 + 62 * cols as u32).clamp(520, 1000)
}

/// The fixed colour of a method in every board chart (its place in [`BoardMethod::ALL`], in a
/// palette of 16 distinct colours).
///
/// [`BoardMethod::ALL`]: super::methods::BoardMethod::ALL
pub(super) fn method_color(name: &str) -> RGBColor {
    let k = super::methods::BoardMethod::ALL
        .iter()
        .position(|m| m.name() == name)
        .unwrap_or(super::methods::BoardMethod::ALL.len());
    distinct_color(k)
}

/// A metric's words in charts.
pub(super) fn words(metric: &str) -> &str {
    match metric {
        "ginkgo_log_likelihood" => "Ginkgo log-likelihood",
        "hcc_energy" => "HCC energy",
        "dasgupta_cost" => "Dasgupta's cost",
        "log_posterior" => "log posterior probability",
        "posterior_rank" => "posterior rank among all trees",
        "dendrogram_purity" => "dendrogram purity",
        "subtree_score" => "subtree score",
        "ari_auc" => "ARI AUC",
        "seconds" => "wall time",
        "map_tree_count" => "trees attaining the exact MAP",
        super::exact_work::SECONDS_COLUMN => "exact scoring time",
        other => other,
    }
}

/// Per instance, each method's place (1 = best) on `metric`.
fn places<'a>(rows: &'a [Row], metric: &str) -> BTreeMap<(&'a str, &'a str), Vec<f64>> {
    let mut per: BTreeMap<(&str, &str), Vec<(&str, f64)>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for r in rows {
        let v = if metric == "seconds" {
            // One time per job: its first row. The generator's tree is read, not built, so its
            // time is no method's.
            if r.method == TRUTH || !seen.insert((&r.dataset, &r.instance, &r.method)) {
                continue;
            }
            r.seconds
        } else if r.metric == metric {
            r.value
        } else {
            continue;
        };
        per.entry((&r.dataset, &r.instance))
            .or_default()
            .push((&r.method, v));
    }
    let better = higher_is_better(metric) && metric != "seconds";
    let mut out: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    for ((d, _), ms) in per {
        let key = |v: f64| {
            if v.is_nan() {
                f64::NEG_INFINITY
            } else if better {
                v
            } else {
                -v
            }
        };
        for &(m, v) in &ms {
            let tol = 1e-9 * v.abs().max(1.0);
            let place = 1 + ms
                .iter()
                .filter(|&&(_, w)| key(w) > key(v) + if key(v).is_finite() { tol } else { 0.0 })
                .count();
            out.entry((d, m)).or_default().push(place as f64);
        }
    }
    out
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Summary table of `metric`: `(dataset, method) -> value`.
fn summary<'a>(rows: &'a [Row], metric: &str) -> BTreeMap<(&'a str, &'a str), f64> {
    if metric == RANK {
        let mut per: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.metric == metric) {
            per.entry((&r.dataset, &r.method))
                .or_default()
                .push(r.value);
        }
        per.into_iter()
            .map(|(k, mut v)| (k, super::leaderboard::median(&mut v).log10()))
            .collect()
    } else if BOUNDED.contains(&metric) {
        let mut per: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.metric == metric) {
            per.entry((&r.dataset, &r.method))
                .or_default()
                .push(r.value);
        }
        per.into_iter().map(|(k, v)| (k, mean(&v))).collect()
    } else {
        places(rows, metric)
            .into_iter()
            .map(|(k, v)| (k, mean(&v)))
            .collect()
    }
}

/// Draws every figure and `leaderboard.md`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let rows = rows(results)?;
    let datasets: Vec<String> = results.fact("datasets")?;
    let methods: Vec<String> = results.fact("methods")?;
    let present: BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    for metric in BOUNDED.iter().chain(&PLACED).chain(&[RANK]) {
        if *metric != "seconds" && !present.contains(metric) {
            continue;
        }
        let table = summary(&rows, metric);
        let cols: Vec<&String> = datasets
            .iter()
            .filter(|d| table.keys().any(|(dd, _)| dd == d))
            .collect();
        // Every requested method has a row (n/a where it did not run; leaderboard.md says
        // why), but the generator's tree has no time.
        let meths: Vec<&String> = methods
            .iter()
            .filter(|m| *metric != "seconds" || m.as_str() != TRUTH)
            .collect();
        if cols.is_empty() || meths.is_empty() {
            continue;
        }
        let bounded = BOUNDED.contains(metric);
        let matrix: Vec<Vec<f64>> = meths
            .iter()
            .map(|m| {
                cols.iter()
                    .map(|d| *table.get(&(d.as_str(), m.as_str())).unwrap_or(&f64::NAN))
                    .collect()
            })
            .collect();
        let mut marked = Vec::new();
        for j in 0..cols.len() {
            let col: Vec<f64> = matrix
                .iter()
                .map(|r| r[j])
                .filter(|v| v.is_finite())
                .collect();
            let best = if bounded {
                col.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            } else {
                col.iter().copied().fold(f64::INFINITY, f64::min)
            };
            for (i, r) in matrix.iter().enumerate() {
                if r[j] == best {
                    marked.push((i, j));
                }
            }
        }
        let (title, color_label) = if bounded {
            (
                format!("Board: mean {} (outlined: best)", words(metric)),
                format!("mean {} (better →)", words(metric)),
            )
        } else if *metric == RANK {
            (
                "Board: median rank among all trees, log10 (0 = MAP)".to_string(),
                "log10 median rank (better →)".to_string(),
            )
        } else {
            (
                format!("Board: {}, mean place (outlined: best)", words(metric)),
                "mean place, 1 = best (better →)".to_string(),
            )
        };
        let chart = HeatmapChart {
            title,
            matrix,
            row_labels: meths.iter().map(|m| display(m)).collect(),
            col_labels: cols.iter().map(|d| d.to_string()).collect(),
            color_label,
            diverging: false,
            value_range: None,
            annotate: true,
            highlight: Vec::new(),
            marked,
            reversed: !bounded,
        };
        save_chart(
            &out.join(format!("heatmap_{metric}")),
            heatmap_width(cols.len()),
            HEATMAP_HEIGHT,
            &chart,
        )?;
    }
    draw_time(&rows, &datasets, &methods, out)?;
    super::dendrograms::draw(results, out)?;
    let config = results
        .manifest()
        .get("config_file")
        .and_then(|v| v.as_str())
        .unwrap_or("CONFIG.toml")
        .to_string();
    let status = super::leaderboard::statuses(results);
    let md = super::leaderboard::leaderboard(&rows, &datasets, &methods, &config, &status);
    crate::experiment::safe_fs::write_atomic(&out.join("leaderboard.md"), md)?;
    Ok(())
}

pub(super) fn display(name: &str) -> String {
    super::methods::BoardMethod::from_name(name)
        .map(|m| m.display().to_string())
        .unwrap_or_else(|| name.to_string())
}

/// Per dataset: each method's mean quality against its mean wall time (log scale).
fn draw_time(rows: &[Row], datasets: &[String], methods: &[String], out: &Path) -> Result<()> {
    let energy = dataset_energies(rows);
    for d in datasets {
        // Quality: the mean labelled purity where there are labels, else the mean place on
        // the energy.
        let labelled = rows
            .iter()
            .any(|r| &r.dataset == d && r.metric == "dendrogram_purity");
        let (metric, y_label) = if labelled {
            (
                "dendrogram_purity",
                "mean dendrogram purity (higher is better)".to_string(),
            )
        } else if let Some(e) = energy.get(d.as_str()) {
            (*e, format!("mean place on {} (1 = best)", words(e)))
        } else {
            continue;
        };
        let table = summary(rows, metric);
        let mut secs: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        let mut seen = BTreeSet::new();
        for r in rows.iter().filter(|r| &r.dataset == d) {
            if seen.insert((&r.instance, &r.method)) {
                secs.entry(&r.method).or_default().push(r.seconds);
            }
        }
        let mut points = Vec::new();
        for (k, m) in methods.iter().enumerate().filter(|(_, m)| *m != TRUTH) {
            if let (Some(q), Some(s)) = (table.get(&(d.as_str(), m.as_str())), secs.get(m.as_str())) {
                points.push(QualityTimePoint {
                    label: display(m),
                    seconds: mean(s),
                    quality: *q,
                    color_index: k,
                    color: Some(method_color(m)),
                });
            }
        }
        if points.is_empty() {
            continue;
        }
        let chart = QualityTimeChart {
            title: format!("Board, {d}: quality against mean wall time per instance"),
            y_label,
            points,
            higher_is_better: labelled,
        };
        save_chart_default(&out.join(format!("time_{d}")), &chart)?;
    }
    Ok(())
}


