//! `cost_functions.png/.svg`, drawn from `cost_functions.parquet` and the config alone: per
//! scheme and energy, the DP of the MAP trees against the range over all trees.

use super::study::Energy;
use super::CostFunctionsConfig;
use crate::experiment::chart::{save_chart, DotRangeChart, DotRangeRow};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use crate::tree::n_binary_trees;
use anyhow::{anyhow, Result};
use std::path::Path;

/// Random matrices shown per energy.
const RANDOM_SHOWN: usize = 3;

/// Draws `cost_functions.png/.svg` into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: CostFunctionsConfig = results.config()?;
    let t = results.table("cost_functions")?;
    let scheme = str_column(&t, "scheme")?;
    let energy = str_column(&t, "energy")?;
    let instance = u64_column(&t, "instance")?;
    let lo = f64_column(&t, "all_trees_dp_min")?;
    let hi = f64_column(&t, "all_trees_dp_max")?;
    let mean = f64_column(&t, "all_trees_dp_mean")?;
    let map_lo = f64_column(&t, "map_dp_min")?;
    let map_hi = f64_column(&t, "map_dp_max")?;
    let get = |v: &[Option<f64>], i: usize| v[i].ok_or_else(|| anyhow!("null in row {i}"));
    let row = |i: usize, label: String| -> Result<DotRangeRow> {
        Ok(DotRangeRow {
            label,
            errors: Vec::new(),
            range: Some((get(&lo, i)?, get(&hi, i)?)),
            // The mean first, so the MAP trees' dots are drawn over it where they meet.
            points: vec![
                (1, get(&mean, i)?),
                (0, get(&map_lo, i)?),
                (0, get(&map_hi, i)?),
            ],
        })
    };
    let is_random = |i: usize| scheme[i] == "random";
    let mut rows = Vec::new();
    for i in (0..t.height()).filter(|&i| !is_random(i)) {
        rows.push(row(i, format!("{} weights, {}", scheme[i], energy[i]))?);
    }
    // Random matrices in the table (the same for both energies) and those shown.
    let n_random = (0..t.height())
        .filter(|&i| is_random(i) && energy[i] == Energy::ALL[0].name())
        .count();
    let shown = n_random.min(RANDOM_SHOWN);
    for e in Energy::ALL {
        for i in (0..t.height())
            .filter(|&i| is_random(i) && energy[i] == e.name())
            .take(RANDOM_SHOWN)
        {
            let k = instance[i].ok_or_else(|| anyhow!("null instance in row {i}"))?;
            rows.push(row(i, format!("random weights #{}, {}", k + 1, e.name()))?);
        }
    }
    let sizes = &cfg.cost_functions.cluster_sizes;
    let chart = DotRangeChart {
        title: format!(
            "Dendrogram purity of the MAP trees, clusters of sizes {:?} (all {} trees scored){}",
            sizes,
            n_binary_trees(sizes.iter().sum()).unwrap_or(u128::MAX),
            if shown < n_random {
                format!("; the first {shown} of {n_random} random weight matrices shown")
            } else {
                String::new()
            }
        ),
        rows,
        series_names: vec![
            "MAP trees (lowest and highest DP)".into(),
            "mean over all trees".into(),
        ],
        x_label: "dendrogram purity".into(),
        range_label: "all trees: worst to best DP".into(),
        // Fitted to the data: every purity is at least the worst tree's.
        x_range: None,
    };
    save_chart(&out.join("cost_functions"), 1400, 900, &chart)?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "cost_functions" => Some(Caption::new(
            "Section 4.4 of the Cluster Trellis paper: Dasgupta's cost, the HCC energy and dendrogram purity of the trellis's exact trees against the range over all trees, on the run's weightings.",
            "Rows of markers over grey range bars, one row per weighting and cost.",
        )),
        _ => None,
    }
}
