//! The recovery of the truth's clusters by their size, per method: `recovery_by_size` over
//! every jet of the sets with truth trees, and `recovery_by_size_large` over the jets with at
//! least `large_from` leaves; drawn from `summary.parquet` alone.

use super::measures::summary;
use super::pmethod::PMethod;
use super::PythiaJetsConfig;
use crate::experiment::chart::{save_chart, DotRangeChart, DotRangeRow};
use crate::experiment::kind::{Caption, Results};
use anyhow::Result;
use std::path::Path;

/// The series: `summary.parquet`'s pooled metric and its legend name.
const SERIES: [(&str, &str); 4] = [
    ("recovered_pooled_2", "clusters of 2 partons"),
    ("recovered_pooled_3_4", "3 or 4"),
    ("recovered_pooled_5_up", "5 or more"),
    ("recovered_pooled", "all clusters"),
];

/// The rows: every method but Durham (whose trees are e+e− kt's) and the truth.
fn row_methods() -> impl Iterator<Item = PMethod> {
    PMethod::ALL.into_iter().filter(|m| {
        !matches!(
            m,
            PMethod::Durham | PMethod::DurhamVeto | PMethod::Truth
        )
    })
}

/// The upper end of the x axis: `v` rounded up to a tenth, within (0, 1].
fn x_max(v: &f64) -> f64 {
    ((v * 10.0).ceil() / 10.0).clamp(0.1, 1.0)
}

/// Draws both figures into `out` (none for a range without truth trees).
pub fn draw(results: &Results, out: &Path, cfg: &PythiaJetsConfig) -> Result<()> {
    let table = summary(results)?;
    let mut all_sets: Vec<&str> = Vec::new();
    for (set, ..) in table.keys() {
        if !all_sets.contains(&set.as_str()) {
            all_sets.push(set);
        }
    }
    let large = format!("n>={}", cfg.pythia_jets.large_from);
    for (stem, range) in [
        ("recovery_by_size", "all"),
        ("recovery_by_size_large", large.as_str()),
    ] {
        let find = |s: &str, m: PMethod, k: &str| {
            table.get(&(s.into(), range.into(), m.name().into(), k.into()))
        };
        let sets: Vec<&str> = all_sets
            .iter()
            .copied()
            .filter(|s| find(s, PMethod::Trellis, "recovered_pooled").is_some())
            .collect();
        let mut rows = Vec::new();
        for s in &sets {
            for m in row_methods() {
                let (mut points, mut errors) = (Vec::new(), Vec::new());
                for (k, (key, _)) in SERIES.iter().enumerate() {
                    if let Some(v) = find(s, m, key) {
                        points.push((k, v.mean));
                        errors.push((k, v.se));
                    }
                }
                let label = if sets.len() > 1 {
                    format!("{} ({s})", m.display())
                } else {
                    m.display().to_string()
                };
                rows.push(DotRangeRow {
                    label,
                    range: None,
                    points,
                    errors,
                });
            }
        }
        if rows.iter().all(|r| r.points.is_empty()) {
            continue;
        }
        // From 0 to the largest value plus its error, rounded up to a tenth.
        let rows_max = rows
            .iter()
            .flat_map(|r| {
                r.points
                    .iter()
                    .zip(&r.errors)
                    .map(|(p, e)| p.1 + if e.1.is_finite() { e.1 } else { 0.0 })
            })
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let jets_word = if range == "all" {
            "every jet".to_string()
        } else {
            format!("jets of N ≥ {}", cfg.pythia_jets.large_from)
        };
        let chart = DotRangeChart {
            title: format!(
                "Truth clusters recovered, by their number of partons ({}, {jets_word}; ± 1 s.e.)",
                sets.join(", ")
            ),
            rows,
            series_names: SERIES.iter().map(|s| s.1.to_string()).collect(),
            x_label: "share of the truth's clusters of that size found in the method's tree (pooled over jets)".into(),
            range_label: String::new(),
            x_range: Some((0.0, x_max(&rows_max))),
        };
        let height = 200 + 36 * chart.rows.len() as u32;
        save_chart(&out.join(stem), 1100, height.max(500), &chart)?;
    }
    Ok(())
}

/// The caption and alternative text of figure `<stem>.png`, for the figures of this file.
pub fn caption(stem: &str) -> Option<Caption> {
    let text = "Which of the shower history's clusters each method finds, by size: per method, the share of the truth trees' non-trivial clusters of 2 partons, of 3 or 4, of 5 or more and of any size that the method's tree also has, pooled over the jets (truth clusters found over truth clusters), with ± one standard error (delta method, the jet as the unit); Durham is left out (its trees are e+e− kt's, checked on every run), and a method \"+ veto\" is given the model's t_cut (it never merges a pair lighter than t_cut while another pair may merge).";
    match stem {
        "recovery_by_size" => Some(Caption::new(
            format!("{text} Every jet of the sets with truth trees."),
            "Dots with error bars, one row per method, of the share of truth clusters recovered for three cluster sizes and overall.",
        )),
        "recovery_by_size_large" => Some(Caption::new(
            format!("{text} Only the jets with at least large_from leaves."),
            "Dots with error bars, one row per method, of the share of truth clusters recovered for three cluster sizes and overall, over the larger jets.",
        )),
        _ => None,
    }
}
