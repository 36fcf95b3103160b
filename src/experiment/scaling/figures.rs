//! The scaling chart, drawn from `scaling.parquet`, the config and the manifest's thread count.

use super::{n_splits, ScalingConfig};
use crate::experiment::chart::{save_chart, LineChart, LineSeries};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, u64_column};
use crate::tree::n_binary_trees;
use anyhow::Result;
use std::path::Path;

/// Draws `scaling.png/.svg` into `out`: measured time (full and MAP-only trellis), the 3^N law through the largest measured
/// point, and what enumerating every tree would cost at the trellis's price per split.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: ScalingConfig = results.config()?;
    let threads: usize = results.fact("threads")?;
    let t = results.table("scaling")?;
    let rows: Vec<(usize, f64)> = u64_column(&t, "n_leaves")?
        .into_iter()
        .zip(f64_column(&t, "seconds")?)
        .filter_map(|(n, s)| Some((n? as usize, s?)))
        .collect();
    let map_rows: Vec<(f64, f64)> = u64_column(&t, "n_leaves")?
        .into_iter()
        .zip(f64_column(&t, "map_trellis_seconds")?)
        .filter_map(|(n, s)| Some((n? as f64, s?)))
        .collect();
    let (n_last, t_last) = rows.last().copied().unwrap_or((1, 1.0));
    let per_split = t_last / n_splits(n_last);
    let xs: Vec<usize> = (cfg.scaling.n_min..=cfg.scaling.n_max).collect();
    let chart = LineChart {
        series: vec![
            LineSeries {
                name: format!("full trellis, measured ({threads} threads)"),
                points: rows.iter().map(|&(n, s)| (n as f64, s)).collect(),
                dashed: false,
                markers: true,
            },
            LineSeries {
                name: format!("MAP-only trellis, same MAP tree ({threads} threads)"),
                points: map_rows,
                dashed: false,
                markers: true,
            },
            LineSeries {
                name: "~ 3ᴺ (through the full trellis's largest N)".into(),
                points: xs
                    .iter()
                    .map(|&n| (n as f64, t_last * 3f64.powi(n as i32 - n_last as i32)))
                    .collect(),
                dashed: true,
                markers: false,
            },
            LineSeries {
                name: "enumerating (2N−3)!! trees at the same cost per split".into(),
                points: xs
                    .iter()
                    .map(|&n| {
                        (
                            n as f64,
                            n_binary_trees(n).map_or(f64::INFINITY, |t| t as f64)
                                * (n - 1) as f64
                                * per_split,
                        )
                    })
                    .collect(),
                dashed: true,
                markers: false,
            },
        ],
        title: "Exact trellis: wall time against the number of leaves".into(),
        x_label: "number of leaves N".into(),
        y_label: "wall time (s), log scale".into(),
        log_y: true,
        integer_x: true,
    };
    save_chart(&out.join("scaling"), 1000, 750, &chart)?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "scaling" => Some(Caption::new(
            "The exact trellis's O(3^N) cost: wall time of the full trellis and of the MAP-only trellis against the number of leaves N (log scale, after an untimed warm-up build), beside the 3^N law through the largest N and what enumerating every (2N−3)!! tree would cost at the same price per split.",
            "Wall time against N on a log axis: two measured lines with circle and square markers, a dashed 3^N reference line and a dotted, much steeper enumeration line.",
        )),
        _ => None,
    }
}
