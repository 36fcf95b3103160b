//! `leaderboard.md`, from `board.parquet` alone: per metric, a Markdown table of methods ×
//! datasets.
//!
//! - Energies (Ginkgo log-likelihood, HCC energy, Dasgupta's cost) and the log posterior are
//!   shown as each method's **gap to a per-instance reference**, averaged over the instances
//!   where both the method's value and the reference are finite: the reference is the exact MAP
//!   where the trellis ran and the metric is what it optimises (the dataset's energy, or the
//!   log posterior), else the best tree any method found on the instance. A `reference` row
//!   gives the reference's mean. Means over different subsets of instances (a method whose
//!   trees the likelihood forbids on some) are thus never compared: `(k forbidden)` counts the
//!   method's `-inf` trees, which are left out, and such a method is never bold.
//! - Posterior ranks: the median (the mean of the two middle ranks for an even count; `≥` when
//!   counting stopped at the cap).
//! - Bounded scores: the mean. Times: the mean wall seconds of the method alone, and apart
//!   from them the mean seconds of the exact scoring of the method's trees.
//! - Trees attaining the exact MAP (the trellis's row): the median count over the instances,
//!   with the largest; never bold (more ties are neither better nor worse), and the tie rule
//!   said under the table.

use super::figures::display;
use super::run::{dataset_energies, higher_is_better, Row};
use std::collections::{BTreeMap, BTreeSet};

/// The generator's tree: scored beside the methods, but never timed as one.
const TRUTH: &str = "truth";

/// The count of trees attaining the exact MAP (the trellis's rows).
const MAP_TREES: &str = "map_tree_count";

/// The exact scoring's seconds, apart from the method's (a column of every row of a job).
const SCORING: &str = super::exact_work::SECONDS_COLUMN;

/// Under the table of MAP ties: which of the tied trees the trellis returns.
pub const TIE_RULE: &str = "The trellis returns one of the tied trees: at every cluster the split of largest computed energy, and among equal ones the first in its split order (the part holding the cluster's first point keeps as many of the later points as it can), so which tied tree it returns follows the order of the points, not the energy; its purity or other scores are those of one tree among the count. Ties are counted to a relative tolerance of 1e-9 (energies summed in different orders differ in the last bits).";

/// A count as an integer, or in scientific notation above 1e6.
fn count_text(v: f64) -> String {
    if v < 1e6 {
        format!("{v:.0}")
    } else {
        format!("{v:.3e}")
    }
}

/// Metrics shown as gaps to a per-instance reference.
const GAPPED: [&str; 4] = [
    "ginkgo_log_likelihood",
    "hcc_energy",
    "dasgupta_cost",
    "log_posterior",
];

/// The median of `v` (sorted in place): the middle value, or the mean of the two middle
/// values for an even count; `NaN` for none.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// A number with 3 decimals, without "-0.000".
fn fixed3(v: f64) -> String {
    if v.abs() < 5e-4 {
        "0.000".into()
    } else {
        format!("{v:.3}")
    }
}

/// Per instance of `dataset`, the reference value of `metric` and whether it is the exact MAP.
fn references<'a>(
    rows: &'a [Row],
    dataset: &str,
    metric: &str,
    energy: Option<&str>,
) -> (BTreeMap<&'a str, f64>, bool) {
    let optimised = metric == "log_posterior" || energy == Some(metric);
    let mine = |r: &&Row| r.dataset == dataset && r.metric == metric;
    let exact: BTreeMap<&str, f64> = rows
        .iter()
        .filter(mine)
        .filter(|r| r.method == "trellis" && r.value.is_finite())
        .map(|r| (r.instance.as_str(), r.value))
        .collect();
    if optimised && !exact.is_empty() {
        return (exact, true);
    }
    let high = higher_is_better(metric);
    let mut best: BTreeMap<&str, f64> = BTreeMap::new();
    for r in rows.iter().filter(mine).filter(|r| r.method != TRUTH) {
        if r.value.is_finite() {
            let e = best.entry(&r.instance).or_insert(r.value);
            *e = if high { e.max(r.value) } else { e.min(r.value) };
        }
    }
    (best, false)
}

/// One cell: (value the column's best is chosen by, or NaN if it may not be bold; text).
type Cell = (f64, String);

/// One method's gap to the reference on a dataset.
#[derive(Debug, Clone, Copy)]
pub(super) struct Gap {
    /// The mean gap (method − reference) over the instances where both are finite; NaN for
    /// none.
    pub mean: f64,
    /// How many of the method's trees the likelihood forbids (`-inf`, left out of the mean).
    pub forbidden: usize,
    /// How many trees the method has on the dataset.
    pub n: usize,
}

/// The gaps of a gapped metric on `dataset`: the reference's mean and whether it is the exact
/// MAP (`None` without one), and per method its [`Gap`].
pub(super) fn gaps<'a>(
    rows: &[Row],
    dataset: &str,
    metric: &str,
    energy: Option<&str>,
    methods: &'a [String],
) -> (Option<(f64, bool)>, BTreeMap<&'a str, Gap>) {
    let (refs, exact) = references(rows, dataset, metric, energy);
    let ref_values: Vec<f64> = refs.values().copied().collect();
    let reference = (!ref_values.is_empty()).then(|| (mean(&ref_values), exact));
    let mut out = BTreeMap::new();
    for m in methods {
        let vals: Vec<&Row> = rows
            .iter()
            .filter(|r| r.dataset == dataset && &r.method == m && r.metric == metric)
            .collect();
        if vals.is_empty() {
            continue;
        }
        let forbidden = vals.iter().filter(|r| !r.value.is_finite()).count();
        let gaps: Vec<f64> = vals
            .iter()
            .filter(|r| r.value.is_finite())
            .filter_map(|r| refs.get(r.instance.as_str()).map(|t| r.value - t))
            .collect();
        let mean = if gaps.is_empty() { f64::NAN } else { mean(&gaps) };
        out.insert(
            m.as_str(),
            Gap {
                mean,
                forbidden,
                n: vals.len(),
            },
        );
    }
    (reference, out)
}

/// The cells of a gapped metric on `dataset`, with the reference row's cell.
fn gap_cells<'a>(
    rows: &'a [Row],
    dataset: &str,
    metric: &str,
    energy: Option<&str>,
    methods: &'a [String],
) -> (Cell, BTreeMap<&'a str, Cell>) {
    let (reference, per) = gaps(rows, dataset, metric, energy, methods);
    let reference = match reference {
        None => (f64::NAN, "–".to_string()),
        Some((v, exact)) => {
            let what = if exact { "exact MAP" } else { "best found" };
            (f64::NAN, format!("{what} {}", fixed3(v)))
        }
    };
    let out = per
        .into_iter()
        .map(|(m, g)| {
            let cell = match (g.mean.is_finite(), g.forbidden) {
                (false, 0) => (f64::NAN, "–".into()),
                (false, k) => (f64::NAN, format!("−∞ ({k} of {} forbidden)", g.n)),
                (true, 0) => {
                    // Bold is chosen on the printed value, so printed ties are bold together.
                    let text = fixed3(g.mean);
                    (text.parse().unwrap_or(g.mean), text)
                }
                (true, k) => (f64::NAN, format!("{} ({k} forbidden)", fixed3(g.mean))),
            };
            (m, cell)
        })
        .collect();
    (reference, out)
}

/// One method's posterior ranks on a dataset, over the trees the likelihood allows: a
/// forbidden tree (log posterior `-inf`) ties with every other forbidden tree at the bottom,
/// so its rank would describe the data, not the method.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ranks {
    /// The median rank over the allowed trees (NaN for none).
    pub median: f64,
    /// Counting stopped at the cap at the median.
    pub capped: bool,
    /// How many of the method's trees are forbidden.
    pub forbidden: usize,
    /// How many ranked trees the method has on the dataset.
    pub n: usize,
}

impl Ranks {
    /// More than half of the method's trees are forbidden: no rank is shown.
    pub fn mostly_forbidden(&self) -> bool {
        2 * self.forbidden > self.n
    }
}

/// The [`Ranks`] of `method` on `dataset`, `None` where it has no ranked tree.
pub(super) fn ranks(rows: &[Row], dataset: &str, method: &str) -> Option<Ranks> {
    let mine = |r: &&Row| r.dataset == dataset && r.method == method;
    let forbidden: BTreeSet<&str> = rows
        .iter()
        .filter(mine)
        .filter(|r| r.metric == "log_posterior" && r.value == f64::NEG_INFINITY)
        .map(|r| r.instance.as_str())
        .collect();
    let capped: BTreeSet<&str> = rows
        .iter()
        .filter(mine)
        .filter(|r| r.metric == "posterior_rank_capped" && r.value > 0.0)
        .map(|r| r.instance.as_str())
        .collect();
    let all: Vec<&Row> = rows
        .iter()
        .filter(mine)
        .filter(|r| r.metric == "posterior_rank")
        .collect();
    if all.is_empty() {
        return None;
    }
    let mut allowed: Vec<(f64, bool)> = all
        .iter()
        .filter(|r| !forbidden.contains(r.instance.as_str()))
        .map(|r| (r.value, capped.contains(r.instance.as_str())))
        .collect();
    allowed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut values: Vec<f64> = allowed.iter().map(|a| a.0).collect();
    Some(Ranks {
        median: median(&mut values),
        // At the cap when the upper middle rank was capped.
        capped: allowed.get(allowed.len() / 2).is_some_and(|a| a.1),
        forbidden: all.len() - allowed.len(),
        n: all.len(),
    })
}

/// A duration in seconds with 4 significant digits in a unit that keeps it between 1 and
/// 1000 (ns, µs, ms, s), never in e-notation: "299.8 µs", "1.380 ms", "4.525 s".
pub fn duration_text(secs: f64) -> String {
    // Rounded to 4 significant digits first, so that 999.96 µs reads "1.000 ms".
    let r: f64 = format!("{secs:.3e}").parse().unwrap_or(f64::NAN);
    if !r.is_finite() {
        return "–".into();
    }
    if r == 0.0 {
        return "0 s".into();
    }
    let (v, unit) = match r.abs() {
        a if a >= 1.0 => (r, "s"),
        a if a >= 1e-3 => (r * 1e3, "ms"),
        a if a >= 1e-6 => (r * 1e6, "µs"),
        _ => (r * 1e9, "ns"),
    };
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 3) as usize;
    format!("{v:.decimals$} {unit}")
}

/// The seconds a [`duration_text`] prints, for choosing bold on printed values.
fn printed_seconds(text: &str) -> f64 {
    let Some((v, unit)) = text.split_once(' ') else {
        return f64::NAN;
    };
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" => 1e-6,
        "ns" => 1e-9,
        _ => f64::NAN,
    };
    v.parse::<f64>().map_or(f64::NAN, |v| v * scale)
}

/// The cell of a non-gapped metric for `(dataset, method)`.
fn plain_cell(rows: &[Row], dataset: &str, method: &str, metric: &str) -> Option<Cell> {
    let vals: Vec<&Row> = rows
        .iter()
        .filter(|r| r.dataset == dataset && r.method == method)
        .filter(|r| metric == "seconds" || metric == SCORING || r.metric == metric)
        .filter(|r| metric != SCORING || r.scoring_seconds.is_finite())
        .collect();
    if vals.is_empty() {
        return None;
    }
    Some(match metric {
        "seconds" => {
            let mut seen = BTreeSet::new();
            let s: Vec<f64> = vals
                .iter()
                .filter(|r| seen.insert(&r.instance))
                .map(|r| r.seconds)
                .collect();
            let text = duration_text(mean(&s));
            (printed_seconds(&text), text)
        }
        MAP_TREES => {
            let mut v: Vec<f64> = vals.iter().map(|r| r.value).collect();
            let most = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let med = median(&mut v);
            let text = if v.len() > 1 && most > med {
                format!("{} (max {})", count_text(med), count_text(most))
            } else {
                count_text(med)
            };
            (f64::NAN, text)
        }
        SCORING => {
            let mut seen = BTreeSet::new();
            let v: Vec<f64> = vals
                .iter()
                .filter(|r| seen.insert(&r.instance))
                .map(|r| r.scoring_seconds)
                .collect();
            let text = duration_text(mean(&v));
            (printed_seconds(&text), text)
        }
        "posterior_rank" => {
            let r = ranks(rows, dataset, method)?;
            let k = r.forbidden;
            if r.mostly_forbidden() {
                (f64::NAN, format!("forbidden ({k} of {})", r.n))
            } else {
                let text = format!("{}{}", if r.capped { "≥" } else { "" }, r.median);
                if k > 0 {
                    // Ranked over fewer trees than the others: never bold.
                    (f64::NAN, format!("{text} ({k} forbidden)"))
                } else {
                    (r.median, text)
                }
            }
        }
        _ => {
            let v: Vec<f64> = vals.iter().map(|r| r.value).collect();
            // Bold is chosen on the printed value.
            let text = format!("{:.3}", mean(&v));
            (text.parse().unwrap_or(f64::NAN), text)
        }
    })
}

/// `(dataset, method) -> "ran"`, `"ran on 3 of 5 instances; not run on 2: why"` or
/// `"not run: why"`, from `trees.parquet` (its `status` column; empty for a run without one).
pub fn statuses(results: &crate::experiment::kind::Results) -> BTreeMap<(String, String), String> {
    use crate::experiment::table::str_column;
    let Ok(t) = results.table("trees") else {
        return BTreeMap::new();
    };
    let (Ok(d), Ok(m), Ok(st)) = (
        str_column(&t, "dataset"),
        str_column(&t, "method"),
        str_column(&t, "status"),
    ) else {
        return BTreeMap::new();
    };
    // A note on how a method ran (on the distinct points, a tree the energies cannot score).
    let notes = str_column(&t, "note").unwrap_or_default();
    // (dataset, method) -> (instances run, reasons not run with counts, notes).
    type Tally = (usize, Vec<(String, usize)>, Vec<String>);
    let mut per: BTreeMap<(String, String), Tally> = BTreeMap::new();
    for k in 0..t.height() {
        let e = per.entry((d[k].clone(), m[k].clone())).or_default();
        if let Some(n) = notes.get(k).filter(|n| !n.is_empty()) {
            if !e.2.contains(n) {
                e.2.push(n.clone());
            }
        }
        match st[k].strip_prefix("not run: ") {
            None => e.0 += 1,
            Some(why) => match e.1.iter_mut().find(|(w, _)| w == why) {
                Some(w) => w.1 += 1,
                None => e.1.push((why.to_string(), 1)),
            },
        }
    }
    per.into_iter()
        .map(|(k, (ran, not, notes))| {
            let skipped: usize = not.iter().map(|(_, c)| c).sum();
            let whys: Vec<String> = not.iter().map(|(w, _)| w.clone()).collect();
            let mut text = match (ran, skipped) {
                (_, 0) => "ran".to_string(),
                (0, _) => format!("not run: {}", whys.join("; ")),
                (r, s) => format!(
                    "ran on {r} of {} instances; not run on {s}: {}",
                    r + s,
                    whys.join("; ")
                ),
            };
            if !notes.is_empty() {
                let shown: Vec<&str> = notes.iter().take(2).map(String::as_str).collect();
                text.push_str(&format!(
                    " ({}{})",
                    shown.join("; "),
                    if notes.len() > 2 { "; ..." } else { "" }
                ));
            }
            (k, text)
        })
        .collect()
}

/// `leaderboard.md`: which methods ran where (`status`, [`statuses`]), then per metric a
/// Markdown table of datasets × methods; `config` is the config file the run was made from, as
/// its manifest records it.
pub fn leaderboard(
    rows: &[Row],
    datasets: &[String],
    methods: &[String],
    config: &str,
    status: &BTreeMap<(String, String), String>,
) -> String {
    let mut md = format!(
        "# Leaderboard\n\nEvery method on every dataset it applies to (`trellis-lab run {}`). **bold** = best in the column; `–` = the method did not run there (the table below says why).\n\n",
        crate::experiment::config::clip(&crate::experiment::config::one_line(config), 200)
            .replace('`', "'")
    );
    if !status.is_empty() {
        md.push_str(&format!(
            "## Methods: ran or not run\n\n| method | {} |\n|---|{}\n",
            datasets.join(" | "),
            "---|".repeat(datasets.len())
        ));
        for m in methods {
            let cells: Vec<String> = datasets
                .iter()
                .map(|d| {
                    status
                        .get(&(d.clone(), m.clone()))
                        .map_or("not run".to_string(), |s| escape(s))
                })
                .collect();
            md.push_str(&format!("| {} | {} |\n", display(m), cells.join(" | ")));
        }
        md.push('\n');
    }
    md.push_str(
        "\
         - **Energies and log posterior: the gap to a reference on the same instances** (method − reference, averaged over the instances where both are finite). The reference is the exact MAP where the trellis ran and the metric is what it optimises (the dataset's energy, or the log posterior), else the best tree any method found on the instance; the `reference` row gives its mean. `(k forbidden)`: the likelihood forbids k of the method's trees (`-inf`); they are left out of its gap, and such a method is never bold.\n\
         - **Ranks**: the median posterior rank among all trees (exact; the mean of the two middle ranks for an even count; `≥` when counting stopped at the cap), over the method's trees the likelihood allows: every forbidden tree ties at the bottom, so its rank would describe the data, not the method. `(k forbidden)`: k trees left out, and such a method is never bold; `forbidden (k of n)`: most of its trees are.\n\
         - **Scores**: the mean over the instances where the method ran. **Times**: mean wall time of the method alone (ns, µs, ms or s; bold on the printed value); the exact scoring of its trees (log posterior, rank, MAP ties) is timed apart.\n\
         - **Trees attaining the exact MAP**: how many trees tie with the trellis's MAP tree on the energy (the median over the instances).\n",
    );
    let present: BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    let energy = dataset_energies(rows);
    let order = [
        "ginkgo_log_likelihood",
        "hcc_energy",
        "dasgupta_cost",
        "log_posterior",
        "posterior_rank",
        MAP_TREES,
        "dendrogram_purity",
        "subtree_score",
        "ari_auc",
        "seconds",
        SCORING,
    ];
    for metric in order {
        let timed = metric == "seconds" || metric == SCORING;
        if metric == SCORING && !rows.iter().any(|r| r.scoring_seconds.is_finite()) {
            continue;
        }
        if !timed && !present.contains(metric) {
            continue;
        }
        let cols: Vec<&String> = datasets
            .iter()
            .filter(|d| {
                rows.iter()
                    .any(|r| {
                        &r.dataset == *d
                            && (r.metric == metric || timed)
                            && (metric != SCORING || r.scoring_seconds.is_finite())
                    })
            })
            .collect();
        let better_high = higher_is_better(metric) && !timed;
        let gapped = GAPPED.contains(&metric);
        let which = match metric {
            MAP_TREES => "median over the instances".to_string(),
            _ => format!("{} is better", if better_high { "higher" } else { "lower" }),
        };
        md.push_str(&format!(
            "\n## {}{} ({which})\n\n| method | {} |\n|---|{}\n",
            super::figures::words(metric),
            if gapped { ": gap to the reference" } else { "" },
            cols.iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(" | "),
            "---|".repeat(cols.len())
        ));
        // (dataset, method) -> cell; the reference row's cells.
        let mut cells: BTreeMap<(&str, &str), Cell> = BTreeMap::new();
        let mut reference: Vec<String> = Vec::new();
        for d in &cols {
            if gapped {
                let (r, per) = gap_cells(rows, d, metric, energy.get(d.as_str()).copied(), methods);
                reference.push(r.1);
                for (m, c) in per {
                    cells.insert((d.as_str(), m), c);
                }
            } else {
                for m in methods.iter().filter(|m| !timed || *m != TRUTH) {
                    if let Some(c) = plain_cell(rows, d, m, metric) {
                        cells.insert((d.as_str(), m.as_str()), c);
                    }
                }
            }
        }
        if gapped {
            md.push_str(&format!("| reference (mean) | {} |\n", reference.join(" | ")));
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
                    .filter(|((dd, mm), (v, _))| dd == d && v.is_finite() && *mm != TRUTH)
                    .map(|(_, (v, _))| *v)
                    .fold(None::<f64>, |b, v| {
                        Some(match b {
                            None => v,
                            Some(b) if better_high => b.max(v),
                            Some(b) => b.min(v),
                        })
                    });
                match cells.get(&(d.as_str(), m.as_str())) {
                    Some((v, text)) if Some(*v) == best && m != TRUTH => {
                        line.push_str(&format!(" **{}** |", escape(text)))
                    }
                    Some((_, text)) => line.push_str(&format!(" {} |", escape(text))),
                    None => line.push_str(" – |"),
                }
            }
            md.push_str(&line);
            md.push('\n');
        }
        if metric == MAP_TREES {
            md.push_str(&format!("\n{TIE_RULE}\n"));
        }
    }
    md
}

/// Markdown table cell text: pipes escaped.
fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(dataset: &str, instance: &str, method: &str, metric: &str, value: f64) -> Row {
        Row {
            dataset: dataset.into(),
            instance: instance.into(),
            method: method.into(),
            metric: metric.into(),
            value,
            seconds: 1e-3,
            scoring_seconds: f64::NAN,
        }
    }

    #[test]
    fn the_median_averages_the_two_middle_values_of_an_even_count() {
        assert_eq!(median(&mut [85.0, 1.0, 78.0, 200.0]), 81.5);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn gaps_compare_a_method_with_the_exact_map_on_the_same_instances_only() {
        // kt's finite tree is on the instance whose MAP is high: its mean (-10) is above the
        // MAP's mean (-15), but its gap on that instance is -1; its other tree is forbidden.
        let ll = "ginkgo_log_likelihood";
        let rows = vec![
            row("jets", "a", "trellis", ll, -9.0),
            row("jets", "b", "trellis", ll, -21.0),
            row("jets", "a", "beam", ll, -9.5),
            row("jets", "b", "beam", ll, -21.5),
            row("jets", "a", "kt", ll, -10.0),
            row("jets", "b", "kt", ll, f64::NEG_INFINITY),
        ];
        let methods: Vec<String> = ["trellis", "beam", "kt"].map(String::from).to_vec();
        let md = leaderboard(&rows, &["jets".into()], &methods, "configs/board.toml", &BTreeMap::new());
        assert!(md.contains("| reference (mean) | exact MAP -15.000 |"), "{md}");
        assert!(md.contains("| Trellis (exact) | **0.000** |"), "{md}");
        assert!(md.contains("| Beam search | -0.500 |"), "{md}");
        assert!(md.contains("| kt | -1.000 (1 forbidden) |"), "{md}");
        // The old mean over finite values, which put kt above the MAP, is gone.
        assert!(!md.contains("-10.000"), "{md}");
    }

    #[test]
    fn a_metric_the_trellis_does_not_optimise_is_measured_from_the_best_tree_found() {
        // Dasgupta's cost of points (second metric; the energy is HCC): average linkage beats
        // the trellis's tree, so the reference is the best tree found, and it is bold.
        let rows = vec![
            row("pts", "a", "trellis", "hcc_energy", 1.0),
            row("pts", "a", "average_linkage", "hcc_energy", 2.0),
            row("pts", "a", "trellis", "dasgupta_cost", 10.0),
            row("pts", "a", "average_linkage", "dasgupta_cost", 8.0),
        ];
        let methods: Vec<String> = ["trellis", "average_linkage"].map(String::from).to_vec();
        let md = leaderboard(&rows, &["pts".into()], &methods, "configs/board.toml", &BTreeMap::new());
        let dasgupta = &md[md.find("## Dasgupta").unwrap()..];
        assert!(dasgupta.contains("best found 8.000"), "{md}");
        assert!(dasgupta.contains("| Average linkage | **0.000** |"), "{md}");
        assert!(dasgupta.contains("| Trellis (exact) | 2.000 |"), "{md}");
        let hcc = &md[md.find("## HCC").unwrap()..md.find("## Dasgupta").unwrap()];
        assert!(hcc.contains("exact MAP 1.000"), "{md}");
        assert!(hcc.contains("| Average linkage | 1.000 |"), "{md}");
    }

    #[test]
    fn map_ties_and_scoring_time_have_their_own_tables() {
        let mut rows = vec![
            row("pts", "a", "trellis", "hcc_energy", 1.0),
            row("pts", "a", "trellis", MAP_TREES, 3.0),
            row("pts", "b", "trellis", MAP_TREES, 2.9e15),
            row("pts", "c", "trellis", MAP_TREES, 1.0),
            row("pts", "a", "beam", "hcc_energy", 1.5),
        ];
        for r in rows.iter_mut() {
            (r.seconds, r.scoring_seconds) = match r.method.as_str() {
                "trellis" => (7.0, 2.0),
                _ => (1e-3, 4.0),
            };
        }
        let methods: Vec<String> = ["trellis", "beam"].map(String::from).to_vec();
        let md = leaderboard(&rows, &["pts".into()], &methods, "c.toml", &BTreeMap::new());
        let ties = &md[md.find("## trees attaining the exact MAP").unwrap()..];
        assert!(ties.contains("| Trellis (exact) | 3 (max 2.900e15) |"), "{md}");
        assert!(ties.contains("first in its split order"), "{md}");
        let scoring = &md[md.find("## exact scoring time").unwrap()..];
        assert!(scoring.contains("| Trellis (exact) | **2.000 s** |"), "{md}");
        assert!(scoring.contains("| Beam search | 4.000 s |"), "{md}");
        // The method's own time is not the scoring's.
        let wall = &md[md.find("## wall time").unwrap()..md.find("## exact scoring").unwrap()];
        assert!(wall.contains("7.000 s"), "{md}");
        assert!(wall.contains("| Beam search | **1.000 ms** |"), "{md}");
    }

    #[test]
    fn the_leaderboard_median_rank_is_the_true_median() {
        let rows: Vec<Row> = [1.0, 78.0, 85.0, 200.0]
            .iter()
            .enumerate()
            .map(|(i, &v)| row("jets", &i.to_string(), "beam", "posterior_rank", v))
            .collect();
        let md = leaderboard(
            &rows,
            &["jets".into()],
            &["beam".into()],
            "configs/board.toml",
            &BTreeMap::new(),
        );
        assert!(md.contains("| Beam search | **81.5** |"), "{md}");
    }

    #[test]
    fn durations_print_in_units_without_e_notation() {
        assert_eq!(duration_text(2.998e-4), "299.8 µs");
        assert_eq!(duration_text(1.380e-3), "1.380 ms");
        assert_eq!(duration_text(8.211e-2), "82.11 ms");
        assert_eq!(duration_text(4.525), "4.525 s");
        assert_eq!(duration_text(1.5e-8), "15.00 ns");
        assert_eq!(duration_text(9.99996e-4), "1.000 ms");
        assert_eq!(printed_seconds("299.8 µs"), 299.8e-6);
    }

    #[test]
    fn bold_times_are_chosen_on_the_printed_values() {
        // 1.00001 ms and 1.00004 ms both print "1.000 ms": both are bold.
        let mut rows = vec![
            row("d", "a", "beam", "hcc_energy", 1.0),
            row("d", "a", "greedy", "hcc_energy", 2.0),
        ];
        rows[0].seconds = 1.00004e-3;
        rows[1].seconds = 1.00001e-3;
        let methods: Vec<String> = ["beam", "greedy"].map(String::from).to_vec();
        let md = leaderboard(&rows, &["d".into()], &methods, "c.toml", &BTreeMap::new());
        let wall = &md[md.find("## wall time").unwrap()..];
        assert!(wall.contains("| Beam search | **1.000 ms** |"), "{md}");
        assert!(wall.contains("| Greedy | **1.000 ms** |"), "{md}");
    }

    #[test]
    fn ranks_leave_forbidden_trees_out_and_say_so() {
        // kt: one allowed tree (rank 40) and two forbidden ones (ranked at the bottom, 900);
        // anti-kt: one forbidden tree of three; beam: all allowed.
        let mut rows = Vec::new();
        for (i, (kt, anti, beam)) in [(40.0, 10.0, 1.0), (900.0, 20.0, 2.0), (900.0, 900.0, 3.0)]
            .into_iter()
            .enumerate()
        {
            let inst = i.to_string();
            for (m, rank, lp) in [
                ("kt", kt, if i > 0 { f64::NEG_INFINITY } else { -5.0 }),
                ("anti_kt", anti, if i == 2 { f64::NEG_INFINITY } else { -5.0 }),
                ("beam", beam, -1.0),
            ] {
                rows.push(row("jets", &inst, m, "posterior_rank", rank));
                rows.push(row("jets", &inst, m, "log_posterior", lp));
            }
        }
        let kt = ranks(&rows, "jets", "kt").unwrap();
        assert_eq!((kt.median, kt.forbidden, kt.n), (40.0, 2, 3));
        assert!(kt.mostly_forbidden());
        let anti = ranks(&rows, "jets", "anti_kt").unwrap();
        assert_eq!((anti.median, anti.forbidden), (15.0, 1));
        assert!(!anti.mostly_forbidden());
        let methods: Vec<String> = ["beam", "kt", "anti_kt"].map(String::from).to_vec();
        let md = leaderboard(&rows, &["jets".into()], &methods, "c.toml", &BTreeMap::new());
        let rank = &md[md.find("## posterior rank").unwrap()..];
        assert!(rank.contains("| kt | forbidden (2 of 3) |"), "{md}");
        assert!(rank.contains("| anti-kt | 15 (1 forbidden) |"), "{md}");
        assert!(rank.contains("| Beam search | **2** |"), "{md}");
        assert!(!rank.contains("900"), "{md}");
    }
}
