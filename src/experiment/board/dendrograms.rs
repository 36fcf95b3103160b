//! One dendrogram figure per method that built a tree, for every dataset of a single instance
//! (a user's file through `trellis-lab cluster`, or a one-off dataset) of at most
//! [`MAX_LEAVES`] points: `tree_<dataset>_<method>.png/.svg`, drawn from `trees.parquet` and
//! `leaves.parquet` alone.
//!
//! Each tree is drawn left to right, root to leaves, every node with all its children (the
//! diffusion trees' multifurcations too), at its cluster size (the number of points below it, on
//! a log scale, which spreads the many small clusters):
//! leaves carry their names from the data (a file's row, a sample, an animal, a similarity
//! matrix's header name), coloured by class with a legend when the data have labels. The
//! figure grows with the leaves (13 px a leaf: 150 points make a figure about 2,100 px tall);
//! above [`MAX_LEAVES`] no dendrogram is drawn, said on the terminal.

use crate::experiment::chart::{
    save_chart, TimeDendrogramChart, TimeTreePanel, DISTINCT_CATEGORIES,
};
use crate::experiment::kind::Results;
use crate::experiment::table::{str_column, u64_column};
use crate::hierarchy::Hierarchy;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The most leaves a dendrogram figure is drawn for.
pub const MAX_LEAVES: usize = 300;

/// Vertical pixels per leaf.
const LEAF_PX: u32 = 13;

/// Names and classes of one instance's leaves, from `leaves.parquet`.
#[derive(Default)]
struct Leaves {
    names: Vec<String>,
    /// Class of each leaf (an index into `classes`), `None` without labels.
    class: Vec<Option<usize>>,
    classes: Vec<String>,
}

/// `(dataset, instance) -> Leaves` (empty for a run without `leaves.parquet`).
fn leaves(results: &Results) -> BTreeMap<(String, String), Leaves> {
    let mut out: BTreeMap<(String, String), Leaves> = BTreeMap::new();
    let Ok(t) = results.table("leaves") else {
        return out;
    };
    let (Ok(d), Ok(i), Ok(leaf), Ok(name), Ok(class)) = (
        str_column(&t, "dataset"),
        str_column(&t, "instance"),
        u64_column(&t, "leaf"),
        str_column(&t, "name"),
        str_column(&t, "class"),
    ) else {
        return out;
    };
    // Classes are gathered as they come, then sorted (numerically when every class is a
    // number), so that the colours do not depend on which point comes first.
    for k in 0..t.height() {
        let e = out.entry((d[k].clone(), i[k].clone())).or_default();
        let p = leaf[k].unwrap_or(0) as usize;
        if e.names.len() <= p {
            e.names.resize(p + 1, String::new());
            e.class.resize(p + 1, None);
        }
        e.names[p] = name[k].clone();
        if !class[k].is_empty() {
            if !e.classes.contains(&class[k]) {
                e.classes.push(class[k].clone());
            }
            e.class[p] = e.classes.iter().position(|c| *c == class[k]);
        }
    }
    for e in out.values_mut() {
        let mut sorted = e.classes.clone();
        let number = |c: &String| c.trim().parse::<f64>().ok();
        if sorted.iter().all(|c| number(c).is_some()) {
            sorted.sort_by(|a, b| number(a).unwrap_or(0.0).total_cmp(&number(b).unwrap_or(0.0)));
        } else {
            sorted.sort();
        }
        let remap: Vec<usize> = e
            .classes
            .iter()
            .map(|c| sorted.iter().position(|s| s == c).unwrap_or(0))
            .collect();
        e.class.iter_mut().flatten().for_each(|c| *c = remap[*c]);
        e.classes = sorted;
    }
    out
}

/// The panel of `h`: parent links, each node at `t = 1 − ln(size) / ln(n)` (the chart's size
/// axis).
fn panel(title: String, h: &Hierarchy, l: Option<&Leaves>) -> TimeTreePanel {
    let n = h.n_leaves();
    let sizes = h.cluster_sizes();
    let ln_n = (n.max(2) as f64).ln();
    TimeTreePanel {
        title,
        parent: h.parents().to_vec(),
        time: sizes.iter().map(|&s| 1.0 - (s as f64).ln() / ln_n).collect(),
        leaf_labels: (0..n)
            .map(|i| {
                l.and_then(|l| l.names.get(i))
                    .filter(|s| !s.is_empty())
                    .map(|s| crate::data::clip(s, 28))
                    .unwrap_or_else(|| i.to_string())
            })
            .collect(),
        leaf_category: (0..n)
            .map(|i| l.and_then(|l| l.class.get(i).copied().flatten()))
            .collect(),
    }
}

/// Draws the dendrograms into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let t = results.table("trees")?;
    let (ds, inst, meth, newick) = (
        str_column(&t, "dataset")?,
        str_column(&t, "instance")?,
        str_column(&t, "method")?,
        str_column(&t, "newick")?,
    );
    let mut instances: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (d, i) in ds.iter().zip(&inst) {
        instances.entry(d).or_default().insert(i);
    }
    let leaves = leaves(results);
    let mut too_many: BTreeMap<&str, usize> = BTreeMap::new();
    for k in 0..t.height() {
        if instances.get(ds[k].as_str()).is_none_or(|s| s.len() != 1) || newick[k].is_empty() {
            continue;
        }
        let Ok(h) = Hierarchy::from_newick(&newick[k]) else {
            continue;
        };
        let n = h.n_leaves();
        if n < 2 {
            continue;
        }
        if n > MAX_LEAVES {
            too_many.insert(&ds[k], n);
            continue;
        }
        let l = leaves.get(&(ds[k].clone(), inst[k].clone()));
        let method = super::figures::display(&meth[k]);
        let shape = if h.is_binary() {
            String::new()
        } else {
            format!(", {} internal nodes", h.n_internal())
        };
        // More classes than marker-and-colour pairs: no colours and no legend (two classes
        // drawn alike would mislead), said in the title.
        let classes = l.map_or(0, |l| l.classes.len());
        let (l, note) = if classes > DISTINCT_CATEGORIES {
            (
                None,
                format!(", {classes} classes: too many to tell apart, not coloured"),
            )
        } else {
            (l, String::new())
        };
        let names = leaves.get(&(ds[k].clone(), inst[k].clone()));
        let mut p = panel(method.clone(), &h, l);
        if l.is_none() {
            // The names still label the leaves.
            p.leaf_labels = panel(method.clone(), &h, names).leaf_labels;
        }
        let chart = TimeDendrogramChart {
            title: format!("{}: the {method} tree ({n} points{shape}{note})", ds[k]),
            panels: vec![p],
            category_names: l.map(|l| l.classes.clone()).unwrap_or_default(),
            time_label: "cluster size: points below the node (log scale)".into(),
            log_time: false,
            size_axis: Some(n),
        };
        let height = (200 + LEAF_PX * n as u32).max(520);
        save_chart(
            &out.join(format!("tree_{}_{}", ds[k], meth[k])),
            1000,
            height,
            &chart,
        )?;
    }
    for (d, n) in too_many {
        eprintln!(
            "note: no dendrograms of {d}: its {n} points are more than the {MAX_LEAVES} a readable dendrogram holds (trees.parquet has every tree in Newick)"
        );
    }
    Ok(())
}
