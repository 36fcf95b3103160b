//! One dendrogram figure per method for every dataset of a single instance of at most 64
//! points (a user's file through `trellis-lab cluster`, or a one-off dataset): `tree_<dataset>_
//! <method>.png/.svg`, drawn from `trees.parquet` alone.

use crate::experiment::chart::{save_chart, DendrogramChart, DendrogramPanel};
use crate::experiment::kind::Results;
use crate::experiment::table::str_column;
use crate::tree::Tree;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// The most leaves a dendrogram figure is drawn for.
const MAX_LEAVES: usize = 64;

/// Draws the dendrograms into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let t = results.table("trees")?;
    let (ds, inst, meth, newick) = (
        str_column(&t, "dataset")?,
        str_column(&t, "instance")?,
        str_column(&t, "method")?,
        str_column(&t, "newick")?,
    );
    let mut instances: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for (d, i) in ds.iter().zip(&inst) {
        instances.entry(d).or_default().insert(i);
    }
    for k in 0..t.height() {
        if instances.get(ds[k].as_str()).is_none_or(|s| s.len() != 1) || newick[k].is_empty() {
            continue;
        }
        let Ok(tree) = Tree::from_newick(&newick[k]) else {
            continue;
        };
        let n = tree.n_leaves();
        if !(2..=MAX_LEAVES).contains(&n) {
            continue;
        }
        let chart = DendrogramChart {
            title: format!("{}: the {} tree ({n} points)", ds[k], meth[k]),
            panels: vec![DendrogramPanel {
                title: meth[k].clone(),
                tree,
                leaf_labels: Vec::new(),
                leaf_category: Vec::new(),
            }],
            category_names: Vec::new(),
            height_label: "cluster size".into(),
        };
        let width = (300 + 18 * n as u32).min(1600);
        save_chart(
            &out.join(format!("tree_{}_{}", ds[k], meth[k])),
            width,
            600,
            &chart,
        )?;
    }
    Ok(())
}
