//! `purity.png/.svg`: per data set and method, our mean dendrogram purity and the paper's,
//! each ± one standard error, drawn from `purity.parquet` alone.

use super::METHODS;
use crate::experiment::chart::{save_chart, DotRangeChart, DotRangeRow};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::path::Path;

/// Draws `purity.png/.svg`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let t = results.table("purity")?;
    let (ds, m) = (str_column(&t, "dataset")?, str_column(&t, "method")?);
    let (mean, se) = (f64_column(&t, "mean")?, f64_column(&t, "se")?);
    let (pm, pse) = (f64_column(&t, "paper_mean")?, f64_column(&t, "paper_se")?);
    let (paper_row, points) = (str_column(&t, "paper_row")?, u64_column(&t, "points")?);
    let reps = u64_column(&t, "repetitions")?;
    let mut rows = Vec::new();
    for i in 0..t.height() {
        let mut points_ = Vec::new();
        let mut errors = Vec::new();
        if let Some(v) = mean[i] {
            points_.push((0, v));
            errors.push((0, se[i].unwrap_or(f64::NAN)));
        }
        if let Some(v) = pm[i] {
            points_.push((1, v));
            errors.push((1, pse[i].unwrap_or(f64::NAN)));
        }
        let label = if METHODS.first() == Some(&m[i].as_str()) {
            let vs = if paper_row[i].is_empty() {
                ", no paper value"
            } else {
                ""
            };
            format!("{} ({} points{vs}): {}", ds[i], points[i].unwrap_or(0), m[i])
        } else {
            m[i].clone()
        };
        rows.push(DotRangeRow {
            label,
            range: None,
            points: points_,
            errors,
        });
    }
    let n_rows = rows.len() as u32;
    let chart = DotRangeChart {
        title: format!(
            "Heller & Ghahramani (2005), Table 1: dendrogram purity, mean ± 1 s.e. over {} random subsets, ours against the paper",
            reps.first().copied().flatten().unwrap_or(0)
        ),
        rows,
        series_names: vec!["ours".into(), "paper (transcribed, unchecked)".into()],
        x_label: "dendrogram purity".into(),
        range_label: String::new(),
        x_range: Some((0.0, 1.0)),
    };
    save_chart(&out.join("purity"), 1300, 200 + 34 * n_rows, &chart)?;
    Ok(())
}

/// The caption and alternative text of `purity.png`.
pub fn caption(stem: &str) -> Option<Caption> {
    (stem == "purity").then(|| {
        Caption::new(
            "Table 1 of Heller & Ghahramani (2005) as a chart: per data set and method (single, complete, average linkage, BHC), our mean dendrogram purity over random subsets and the paper's, each with a whisker of ± one standard error.",
            "Rows of data set and method; two markers per row, ours and the paper's, with error whiskers, on a purity axis from 0 to 1.",
        )
    })
}
