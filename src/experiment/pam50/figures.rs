//! Figure 8, one chart per weighting, drawn from `pam50_trees.parquet`,
//! `pam50_samples.parquet` and the manifest's `subtypes` alone.

use super::{run::TRELLIS, Pam50Config};
use crate::experiment::chart::{save_chart, DendrogramChart, DendrogramPanel};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::stats::thousands;
use crate::experiment::table::{f64_column, str_column};
use crate::tree::Tree;
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// Draws `pam50_<weighting>.png/.svg` for every weighting of the run.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: Pam50Config = results.config()?;
    let classes: Vec<String> = results.fact("subtypes")?;
    let samples = results.table("pam50_samples")?;
    let names = str_column(&samples, "sample")?;
    let n = names.len();
    // Subtype of each leaf as an index into the legend; "unknown" (no subtype) is grey.
    let labels: Vec<Option<usize>> = str_column(&samples, "subtype")?
        .iter()
        .map(|s| classes.iter().position(|c| c == s))
        .collect();

    let t = results.table("pam50_trees")?;
    let weighting = str_column(&t, "weighting")?;
    let algorithm = str_column(&t, "algorithm")?;
    let energy = f64_column(&t, "energy")?;
    let purity = f64_column(&t, "dendrogram_purity")?;
    let ties = str_column(&t, "n_map_trees_exact")?;
    let built = str_column(&t, "newick_as_built")?;
    for w in &cfg.pam50.weights {
        let name = w.name();
        let panel = |algorithm_name: &str, title: &str| -> Result<Option<DendrogramPanel>> {
            let Some(i) =
                (0..t.height()).find(|&i| weighting[i] == name && algorithm[i] == algorithm_name)
            else {
                return Ok(None);
            };
            let ties = match ties[i].parse::<u128>() {
                Ok(k) if k > 1 => format!(", one of {} tied trees", thousands(k)),
                _ => String::new(),
            };
            let energy =
                energy[i].ok_or_else(|| anyhow!("pam50_trees.parquet: row {i} has no energy"))?;
            Ok(Some(DendrogramPanel {
                title: format!(
                    "{title}{ties}: energy {energy:.3}, purity {}",
                    purity[i].map_or("n/a".into(), |p| format!("{p:.3}"))
                ),
                tree: Tree::from_newick(&built[i])
                    .with_context(|| format!("pam50_trees.parquet: tree {:?}", built[i]))?,
                leaf_labels: names.clone(),
                leaf_category: labels.clone(),
            }))
        };
        let panels: Vec<DendrogramPanel> = [
            panel("greedy", "local greedy on the energy")?,
            panel("average_linkage", "average linkage")?,
            panel(TRELLIS, "exact MAP (trellis)")?,
        ]
        .into_iter()
        .flatten()
        .collect();
        let chart = DendrogramChart {
            title: format!(
                "Figure 8: {n} pam50 samples, {name} correlation weights: greedy trees vs the exact MAP tree (HCC energy, Eq. 7)"
            ),
            panels,
            category_names: classes.clone(),
            height_label: "cluster size".into(),
        };
        save_chart(&out.join(format!("pam50_{name}")), 2200, 950, &chart)?;
    }
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        s if s.starts_with("pam50_") => Some(Caption::new(
            "Figure 8 of the Cluster Trellis paper: on pam50 samples, the trees of local greedy, average linkage and the exact MAP of the HCC energy, leaves marked by subtype (colour and shape), with each tree's energy and dendrogram purity.",
            "Three dendrograms side by side over the same samples, leaves marked by subtype with a colour and a shape each.",
        )),
        _ => None,
    }
}
