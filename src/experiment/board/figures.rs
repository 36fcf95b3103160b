//! The board's figures, from `board.parquet` alone: a heatmap per metric (methods × datasets,
//! best per column outlined), a quality-vs-time scatter per dataset, and `leaderboard.md`.
//!
//! Summaries per (dataset, method) over the instances where the method ran:
//! - bounded scores (dendrogram purity, subtree score, ARI AUC): the mean;
//! - energies, Dasgupta's cost, log posterior and posterior rank: the mean *place* among the
//!   methods on each instance (1 = best; ties share the better place), which compares
//!   datasets of different scales and copes with `-inf` (a tree the likelihood forbids).
//!
//! The leaderboard also gives each energy's mean (over instances where it is finite, with the
//! count of forbidden trees) and the median posterior rank (`≥` when counting hit the cap).

use super::run::{dataset_energies, higher_is_better, rows, Row};
use crate::experiment::chart::{save_chart_default, HeatmapChart, QualityTimeChart, QualityTimePoint};
use crate::experiment::kind::Results;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The generator's tree: scored beside the methods, but never timed as one.
const TRUTH: &str = "truth";

/// Metrics summarised by their mean value.
const BOUNDED: [&str; 3] = ["dendrogram_purity", "subtree_score", "ari_auc"];

/// Metrics summarised by mean place among methods.
const PLACED: [&str; 6] = [
    "ginkgo_log_likelihood",
    "hcc_energy",
    "dasgupta_cost",
    "log_posterior",
    "posterior_rank",
    "seconds",
];

/// A metric's words in charts.
fn words(metric: &str) -> &str {
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
    if BOUNDED.contains(&metric) {
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
    for metric in BOUNDED.iter().chain(&PLACED) {
        if *metric != "seconds" && !present.contains(metric) {
            continue;
        }
        let table = summary(&rows, metric);
        let cols: Vec<&String> = datasets
            .iter()
            .filter(|d| table.keys().any(|(dd, _)| dd == d))
            .collect();
        let meths: Vec<&String> = methods
            .iter()
            .filter(|m| table.keys().any(|(_, mm)| mm == m))
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
        let chart = HeatmapChart {
            title: if bounded {
                format!("Board: mean {} (outlined: best per dataset)", words(metric))
            } else {
                format!(
                    "Board: {} — mean place among methods (1 = best; outlined: best)",
                    words(metric)
                )
            },
            matrix,
            row_labels: meths.iter().map(|m| display(m)).collect(),
            col_labels: cols.iter().map(|d| d.to_string()).collect(),
            color_label: if bounded {
                format!("mean {}", words(metric))
            } else {
                "mean place (1 = best)".into()
            },
            diverging: false,
            value_range: None,
            annotate: true,
            highlight: Vec::new(),
            marked,
        };
        save_chart_default(&out.join(format!("heatmap_{metric}")), &chart)?;
    }
    draw_time(&rows, &datasets, &methods, out)?;
    super::dendrograms::draw(results, out)?;
    let md = leaderboard(&rows, &datasets, &methods);
    crate::experiment::safe_fs::write_atomic(&out.join("leaderboard.md"), md)?;
    Ok(())
}

fn display(name: &str) -> String {
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

/// `leaderboard.md`: per metric, a Markdown table of datasets × methods.
fn leaderboard(rows: &[Row], datasets: &[String], methods: &[String]) -> String {
    let mut md = String::from(
        "# Leaderboard\n\nEvery method on every dataset (`trellis-lab run configs/board.toml`). Cells: mean over the instances where the method ran; **bold** = best in the column; `–` = the method does not apply. Energies: mean over instances with a finite value, and `(k forbidden)` when the likelihood forbids k of the method's trees (`-inf`). Ranks: the median posterior rank among all trees (exact; `≥` when counting stopped at the cap). Times: mean wall seconds of the method alone.\n",
    );
    let present: BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    let order = [
        "ginkgo_log_likelihood",
        "hcc_energy",
        "dasgupta_cost",
        "log_posterior",
        "posterior_rank",
        "dendrogram_purity",
        "subtree_score",
        "ari_auc",
        "seconds",
    ];
    for metric in order {
        if metric != "seconds" && !present.contains(metric) {
            continue;
        }
        let cols: Vec<&String> = datasets
            .iter()
            .filter(|d| {
                rows.iter()
                    .any(|r| &r.dataset == *d && (r.metric == metric || metric == "seconds"))
            })
            .collect();
        let better_high = higher_is_better(metric) && metric != "seconds";
        md.push_str(&format!(
            "\n## {} ({} is better)\n\n| method | {} |\n|---|{}\n",
            words(metric),
            if better_high { "higher" } else { "lower" },
            cols.iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(" | "),
            "---|".repeat(cols.len())
        ));
        // (dataset, method) -> (sort value, text)
        let mut cells: BTreeMap<(&str, &str), (f64, String)> = BTreeMap::new();
        for d in &cols {
            for m in methods.iter().filter(|m| metric != "seconds" || *m != TRUTH) {
                let vals: Vec<&Row> = rows
                    .iter()
                    .filter(|r| &r.dataset == *d && &r.method == m)
                    .filter(|r| metric == "seconds" || r.metric == metric)
                    .collect();
                if vals.is_empty() {
                    continue;
                }
                let cell = match metric {
                    "seconds" => {
                        let mut seen = BTreeSet::new();
                        let s: Vec<f64> = vals
                            .iter()
                            .filter(|r| seen.insert(&r.instance))
                            .map(|r| r.seconds)
                            .collect();
                        let v = mean(&s);
                        (v, format!("{v:.3e}"))
                    }
                    "posterior_rank" => {
                        let mut v: Vec<f64> = vals.iter().map(|r| r.value).collect();
                        v.sort_by(f64::total_cmp);
                        let med = v[v.len() / 2];
                        let capped = rows.iter().any(|r| {
                            &r.dataset == *d
                                && &r.method == m
                                && r.metric == "posterior_rank_capped"
                                && r.value > 0.0
                        }) && med >= v[v.len() - 1];
                        (med, format!("{}{}", if capped { "≥" } else { "" }, med))
                    }
                    _ => {
                        let finite: Vec<f64> = vals
                            .iter()
                            .map(|r| r.value)
                            .filter(|v| v.is_finite())
                            .collect();
                        let forbidden = vals.len() - finite.len();
                        if finite.is_empty() {
                            (f64::NAN, format!("−∞ ({forbidden} forbidden)"))
                        } else {
                            let v = mean(&finite);
                            let text = if forbidden > 0 {
                                format!("{v:.3} ({forbidden} forbidden)")
                            } else {
                                format!("{v:.3}")
                            };
                            // Forbidden trees rank below every finite mean.
                            let sort = if forbidden > 0 { f64::NAN } else { v };
                            (sort, text)
                        }
                    }
                };
                cells.insert((d.as_str(), m.as_str()), cell);
            }
        }
        for m in methods {
            if !cols
                .iter()
                .any(|d| cells.contains_key(&(d.as_str(), m.as_str())))
            {
                continue;
            }
            let mut line = format!("| {} |", display(m));
            for d in &cols {
                let best = cells
                    .iter()
                    .filter(|((dd, _), (v, _))| dd == d && v.is_finite())
                    .map(|(_, (v, _))| *v)
                    .fold(None::<f64>, |b, v| {
                        Some(match b {
                            None => v,
                            Some(b) if better_high => b.max(v),
                            Some(b) => b.min(v),
                        })
                    });
                match cells.get(&(d.as_str(), m.as_str())) {
                    Some((v, text)) if Some(*v) == best => {
                        line.push_str(&format!(" **{}** |", escape(text)))
                    }
                    Some((_, text)) => line.push_str(&format!(" {} |", escape(text))),
                    None => line.push_str(" – |"),
                }
            }
            md.push_str(&line);
            md.push('\n');
        }
    }
    md
}

/// Markdown table cell text: pipes escaped.
fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}
