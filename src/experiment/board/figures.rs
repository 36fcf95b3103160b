//! The board's figures, from `board.parquet` alone: a heatmap per metric (methods × datasets,
//! best per column outlined), a quality-vs-time scatter per dataset, and `leaderboard.md`
//! ([`super::leaderboard`]).
//!
//! Heatmap cells per (dataset, method) over the instances where the method ran ([`grid`]):
//! - bounded scores (dendrogram purity, subtree score, ARI AUC): the mean;
//! - energies and Dasgupta's cost: the leaderboard's gap to the per-instance reference, written
//!   in the cell and coloured by its share of the column's widest gap (each dataset keeps its
//!   own scale; no place among a column's methods, whose number differs between columns);
//!   trees the likelihood forbids are left out and counted ("(k forb.)"; "forbidden" when all
//!   are), and such a cell is never outlined;
//! - wall time: log10 of the mean seconds, written in s, ms or µs;
//! - posterior rank: log10 of the median rank over the allowed trees (0 = the MAP), "≥ 6"
//!   where counting stopped at the cap.
//!
//! Every heatmap shows better as brighter (viridis yellow; the scale is reversed where lower is
//! better) with the better end at the top of its colour bar, which says "better →". The log
//! posterior gets no heatmap: per instance it orders the trees as the energy does, so its
//! places would repeat the energy's heatmap. Every method has one colour in every time chart
//! ([`method_color`]).
use super::run::{dataset_energies, higher_is_better, rows, Row};
use crate::experiment::chart::{
    distinct_color, format_compact, format_number, format_seconds, save_chart,
    save_chart_default, HeatmapChart, QualityTimeChart, QualityTimePoint,
};
use crate::experiment::kind::{Caption, Results};
use plotters::style::RGBColor;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The generator's tree: scored beside the methods, but never timed as one.
const TRUTH: &str = "truth";

/// Metrics summarised by their mean value.
const BOUNDED: [&str; 3] = ["dendrogram_purity", "subtree_score", "ari_auc"];

/// Metrics shown as the leaderboard's gap to a per-instance reference.
const GAPPED: [&str; 3] = ["ginkgo_log_likelihood", "hcc_energy", "dasgupta_cost"];

/// The posterior rank's heatmap shows log10 of the median rank.
const RANK: &str = "posterior_rank";

/// Height of a heatmap; its width follows the number of datasets ([`heatmap_width`]).
const HEATMAP_HEIGHT: u32 = 900;

/// Width of a heatmap of `cols` datasets: room for the method names, the cells and the colour
/// bar, without wide empty margins when there are few columns.
fn heatmap_width(cols: usize) -> u32 {
    (440 + 62 * cols as u32).clamp(520, 1000)
}

/// The fixed colour of a method in every board chart (its place in [`BoardMethod::ALL`], in a
/// palette of 18 distinct colours).
///
/// [`BoardMethod::ALL`]: super::methods::BoardMethod::ALL
pub(super) fn method_color(name: &str) -> RGBColor {
    distinct_color(method_index(name))
}

/// A method's place in [`BoardMethod::ALL`] (past the end for an unknown name): its colour and
/// marker shape in every chart.
///
/// [`BoardMethod::ALL`]: super::methods::BoardMethod::ALL
fn method_index(name: &str) -> usize {
    super::methods::BoardMethod::ALL
        .iter()
        .position(|m| m.name() == name)
        .unwrap_or(super::methods::BoardMethod::ALL.len())
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

/// `(dataset, method) -> ` the mean wall seconds of the method alone per instance (one time
/// per job: its first row); the generator's tree is read, not built, so it has none.
fn mean_seconds(rows: &[Row]) -> BTreeMap<(&str, &str), f64> {
    let mut per: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for r in rows.iter().filter(|r| r.method != TRUTH) {
        if seen.insert((&r.dataset, &r.instance, &r.method)) {
            per.entry((&r.dataset, &r.method)).or_default().push(r.seconds);
        }
    }
    per.into_iter().map(|(k, v)| (k, mean(&v))).collect()
}

/// A heatmap's cells, `[method][dataset]`: the values the colours show, the texts written in
/// them, and which may be outlined as the column's best.
struct Grid {
    values: Vec<Vec<f64>>,
    texts: Vec<Vec<Option<String>>>,
    eligible: Vec<Vec<bool>>,
}

/// A cell's text with the count of forbidden trees left out under it.
fn with_forbidden(text: String, k: usize) -> String {
    if k > 0 {
        format!("{text}\n({k} forb.)")
    } else {
        text
    }
}

/// The cells of `metric`'s heatmap over `meths` × `cols`:
/// - bounded scores: the mean;
/// - posterior rank: log10 of the median rank over the trees the likelihood allows
///   (`≥ 6` where counting stopped at the cap; "forbidden" where most trees are);
/// - energies and Dasgupta's cost: the leaderboard's gap to the reference as text, coloured by
///   its share of the column's widest gap (a column's magnitudes are its own);
/// - wall time: log10 of the mean seconds, written in s, ms or µs.
fn grid(rows: &[Row], metric: &str, cols: &[&String], meths: &[&String]) -> Grid {
    let n = meths.len();
    let mut g = Grid {
        values: vec![vec![f64::NAN; cols.len()]; n],
        texts: vec![vec![None; cols.len()]; n],
        eligible: vec![vec![true; cols.len()]; n],
    };
    let energy = dataset_energies(rows);
    let owned: Vec<String> = meths.iter().map(|m| m.to_string()).collect();
    for (j, d) in cols.iter().enumerate() {
        if GAPPED.contains(&metric) {
            let (_, gaps) =
                super::leaderboard::gaps(rows, d, metric, energy.get(d.as_str()).copied(), &owned);
            let widest = gaps
                .values()
                .filter(|x| x.forbidden == 0)
                .map(|x| x.mean.abs())
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max);
            for (i, m) in meths.iter().enumerate() {
                let Some(x) = gaps.get(m.as_str()) else {
                    continue;
                };
                g.eligible[i][j] = x.forbidden == 0;
                if !x.mean.is_finite() {
                    g.texts[i][j] = (x.forbidden > 0).then(|| "forbidden".to_string());
                    continue;
                }
                g.values[i][j] = if widest > 0.0 {
                    (x.mean.abs() / widest).min(1.0)
                } else {
                    0.0
                };
                let gap = if x.mean.abs() < 5e-4 { 0.0 } else { x.mean };
                g.texts[i][j] = Some(with_forbidden(format_compact(gap), x.forbidden));
            }
        } else if metric == RANK {
            for (i, m) in meths.iter().enumerate() {
                let Some(r) = super::leaderboard::ranks(rows, d, m) else {
                    continue;
                };
                g.eligible[i][j] = r.forbidden == 0;
                if r.mostly_forbidden() || !r.median.is_finite() {
                    g.texts[i][j] = Some("forbidden".to_string());
                    continue;
                }
                let v = r.median.log10();
                g.values[i][j] = v;
                let text = if r.capped {
                    // A lower bound, rounded down: "≥ 6" at the cap 10⁶, "≥ 4.7" for the mean
                    // of a capped and an uncapped middle rank.
                    let t = (v * 10.0).floor() / 10.0;
                    format!("≥ {}", format_number(t, usize::from(t.fract() != 0.0)))
                } else {
                    format_number(v, 2)
                };
                g.texts[i][j] = Some(with_forbidden(text, r.forbidden));
            }
        } else if metric == "seconds" {
            let secs = mean_seconds(rows);
            for (i, m) in meths.iter().enumerate() {
                if let Some(&v) = secs.get(&(d.as_str(), m.as_str())) {
                    g.values[i][j] = v.log10();
                    g.texts[i][j] = Some(format_seconds(v));
                }
            }
        } else {
            let table = summary(rows, metric);
            for (i, m) in meths.iter().enumerate() {
                if let Some(&v) = table.get(&(d.as_str(), m.as_str())) {
                    g.values[i][j] = v;
                }
            }
        }
    }
    g
}

/// Draws every figure and `leaderboard.md`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let rows = rows(results)?;
    let datasets: Vec<String> = results.fact("datasets")?;
    let methods: Vec<String> = results.fact("methods")?;
    let present: BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    for metric in BOUNDED.iter().chain(&GAPPED).chain(&["seconds", RANK]) {
        if *metric != "seconds" && !present.contains(metric) {
            continue;
        }
        let cols: Vec<&String> = datasets
            .iter()
            .filter(|d| {
                rows.iter().any(|r| {
                    &r.dataset == *d && (*metric == "seconds" || r.metric == *metric)
                })
            })
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
        let g = grid(&rows, metric, &cols, &meths);
        // The best per column among the cells that may be compared (no forbidden trees left
        // out), never the generator's tree.
        let mut marked = Vec::new();
        for j in 0..cols.len() {
            let ok = |i: usize| g.eligible[i][j] && meths[i].as_str() != TRUTH;
            let col = (0..meths.len())
                .filter(|&i| ok(i))
                .map(|i| g.values[i][j])
                .filter(|v| v.is_finite());
            let best = if bounded {
                col.fold(f64::NEG_INFINITY, f64::max)
            } else {
                col.fold(f64::INFINITY, f64::min)
            };
            marked.extend((0..meths.len()).filter(|&i| ok(i) && g.values[i][j] == best).map(|i| (i, j)));
        }
        let (title, color_label) = if bounded {
            (
                format!("Board: mean {} (outlined: best)", words(metric)),
                format!("mean {} (better →)", words(metric)),
            )
        } else if *metric == RANK {
            (
                "Board: median posterior rank, log10 (0 = the MAP; outlined: best)"
                    .to_string(),
                "log10 median rank over allowed trees (better →)".to_string(),
            )
        } else if *metric == "seconds" {
            (
                "Board: mean wall time per instance (outlined: fastest)".to_string(),
                "log10 mean seconds (better →)".to_string(),
            )
        } else {
            (
                format!("Board: {}, gap to the reference (outlined: best)", words(metric)),
                "gap ÷ the column's widest gap (better →)".to_string(),
            )
        };
        let chart = HeatmapChart {
            title,
            matrix: g.values,
            row_labels: meths.iter().map(|m| display(m)).collect(),
            col_labels: cols.iter().map(|d| d.to_string()).collect(),
            color_label,
            diverging: false,
            value_range: None,
            annotate: true,
            highlight: Vec::new(),
            marked,
            reversed: !bounded,
            cell_texts: g.texts,
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
        let secs = mean_seconds(rows);
        let mut points = Vec::new();
        for m in methods.iter().filter(|m| *m != TRUTH) {
            let key = (d.as_str(), m.as_str());
            if let (Some(q), Some(s)) = (table.get(&key), secs.get(&key)) {
                points.push(QualityTimePoint {
                    label: display(m),
                    seconds: *s,
                    quality: *q,
                    // The method's fixed colour, and a marker shape from the same index.
                    color_index: method_index(m),
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

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    if let Some(metric) = stem.strip_prefix("heatmap_") {
        let how = if BOUNDED.contains(&metric) {
            format!("the mean {} per dataset", words(metric))
        } else if GAPPED.contains(&metric) {
            format!(
                "the mean gap of {} to the per-instance reference (the exact MAP where the trellis ran, else the best tree found), as in the leaderboard; colours compare a cell only with its column (the gap over the column's widest); \"(k forb.)\": k trees the likelihood forbids, left out",
                words(metric)
            )
        } else if metric == "seconds" {
            "the mean wall time per instance, coloured by its log10".to_string()
        } else if metric == RANK {
            "log10 of the median posterior rank over the trees the likelihood allows (0 = the MAP; \"≥ 6\" where counting stopped at the cap; \"forbidden\" where most trees are)".to_string()
        } else {
            return None;
        };
        return Some(Caption::new(
            format!("The board: methods (rows) by datasets (columns), {how}; the best of each column outlined, n/a where a method did not run."),
            format!("A heatmap of methods by datasets showing {}, the best cell of each column outlined.", words(metric)),
        ));
    }
    if let Some(dataset) = stem.strip_prefix("time_") {
        return Some(Caption::new(
            format!("The board on {dataset}: each method's quality (mean dendrogram purity where the data have labels, else its mean place on the energy) against its mean wall time per instance, on a log axis."),
            format!("A scatter of quality against wall time on {dataset}, one labelled point per method with its own colour and marker shape."),
        ));
    }
    if let Some(rest) = stem.strip_prefix("tree_") {
        let (dataset, method) = super::methods::BoardMethod::ALL
            .iter()
            .find_map(|m| Some((rest.strip_suffix(m.name())?.strip_suffix('_')?, m.display())))?;
        return Some(Caption::new(
            format!("The board: the {method} tree of {dataset}, root on the left, every node at its cluster size (log scale), leaves named and marked by class where the data have labels."),
            format!("A dendrogram of {dataset} by {method}, leaves named and marked by class with a colour and a shape each."),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(instance: &str, method: &str, metric: &str, value: f64, seconds: f64) -> Row {
        Row {
            dataset: "jets".into(),
            instance: instance.into(),
            method: method.into(),
            metric: metric.into(),
            value,
            seconds,
            scoring_seconds: f64::NAN,
        }
    }

    #[test]
    fn heatmap_cells_show_ranks_over_allowed_trees_gaps_and_log_seconds() {
        let inf = f64::NEG_INFINITY;
        let ll = "ginkgo_log_likelihood";
        let mut rows = Vec::new();
        // The trellis: the MAP (rank 1); beam: rank 3 and 5, gap -1 and -3; kt: two of three
        // trees forbidden; greedy: ranks at the cap.
        for (i, (beam, kt_lp)) in [(3.0, -5.0), (5.0, inf), (4.0, inf)].into_iter().enumerate() {
            let k = i.to_string();
            rows.push(row(&k, "trellis", "posterior_rank", 1.0, 1e-3));
            rows.push(row(&k, "trellis", "log_posterior", -1.0, 1e-3));
            rows.push(row(&k, "trellis", ll, -10.0, 1e-3));
            rows.push(row(&k, "beam", "posterior_rank", beam, 1e-5));
            rows.push(row(&k, "beam", "log_posterior", -2.0, 1e-5));
            rows.push(row(&k, "beam", ll, -10.0 - (beam - 2.0), 1e-5));
            rows.push(row(&k, "kt", "posterior_rank", if kt_lp.is_finite() { 40.0 } else { 900.0 }, 1e-5));
            rows.push(row(&k, "kt", "log_posterior", kt_lp, 1e-5));
            rows.push(row(&k, "kt", ll, if kt_lp.is_finite() { -12.0 } else { inf }, 1e-5));
            rows.push(row(&k, "greedy", "posterior_rank", 1_000_001.0, 1e-5));
            rows.push(row(&k, "greedy", "posterior_rank_capped", 1.0, 1e-5));
            rows.push(row(&k, "greedy", "log_posterior", -9.0, 1e-5));
        }
        let d = "jets".to_string();
        let names: Vec<String> = ["trellis", "beam", "kt", "greedy"].map(String::from).to_vec();
        let meths: Vec<&String> = names.iter().collect();
        let g = grid(&rows, RANK, &[&d], &meths);
        let text = |i: usize| g.texts[i][0].clone().unwrap_or_default();
        assert_eq!(text(0), "0.00");
        assert_eq!(g.values[1][0], 4f64.log10());
        assert_eq!(text(2), "forbidden", "most of kt's trees are forbidden");
        assert!(g.values[2][0].is_nan() && !g.eligible[2][0]);
        assert_eq!(text(3), "≥ 6", "capped, not 6.00");
        // Gaps: written as the leaderboard's, coloured by the share of the column's widest.
        let g = grid(&rows, ll, &[&d], &meths);
        assert_eq!(g.texts[1][0].as_deref(), Some("\u{2212}2.00"));
        assert_eq!(g.values[1][0], 1.0);
        assert_eq!(g.values[0][0], 0.0);
        assert_eq!(g.texts[2][0].as_deref(), Some("\u{2212}2.00\n(2 forb.)"));
        assert!(!g.eligible[2][0]);
        // Seconds: log10 of the mean, written in units.
        let g = grid(&rows, "seconds", &[&d], &meths);
        assert!((g.values[0][0] + 3.0).abs() < 1e-12);
        assert_eq!(g.texts[1][0].as_deref(), Some("10.0 \u{b5}s"));
    }

    #[test]
    fn every_board_figure_has_a_caption() {
        for stem in ["heatmap_seconds", "heatmap_hcc_energy", "heatmap_posterior_rank", "heatmap_ari_auc", "time_jets_6-12", "tree_animals33_average_euclidean", "tree_usps_70_mpost2"] {
            let c = caption(stem).unwrap_or_else(|| panic!("{stem}"));
            assert!(!c.text.is_empty() && !c.alt.is_empty(), "{stem}");
        }
        assert!(caption("tree_animals33_average_euclidean").unwrap().text.contains("Average (Euclidean)"));
        assert!(caption("something_else").is_none());
    }
}
