//! Figure 8 of the Cluster Trellis paper: the greedy tree against the exact MAP tree of
//! hierarchical correlation clustering (Eq. 7) on a stratified pam50 subsample, with raw and
//! centred ("transformed") Pearson weights.
//!
//! Outputs: `pam50_trees.parquet` (per weighting and algorithm: energy, dendrogram purity,
//! Newick with sample names; for the trellis also log Z, the posterior entropy over trees, the
//! number of trees attaining the MAP energy, and the log of the number of all trees), `pam50_samples.parquet` (the subsample), `pam50_weights.parquet` (the
//! weight matrices), `trees.nwk`, and one chart per weighting (`pam50_<weighting>.png/.svg`):
//! the local greedy, average-linkage and MAP dendrograms side by side, leaves coloured by
//! subtype.
//!
//! "Greedy" is reported two ways: the local greedy on the energy itself (merge the pair whose
//! merge has the lowest energy) and average linkage on the correlations (the usual greedy
//! agglomerative clustering of expression data).

use super::chart::{save_chart, DendrogramChart, DendrogramPanel};
use super::config::{Config, Weighting};
use super::table::Table;
use super::{Manifest, Staging};
use crate::data::pam50::Pam50;
use crate::exact::FullTrellis;
use crate::metrics::dendrogram_purity;
use crate::model::CorrelationModel;
use crate::search::{average_linkage, greedy};
use crate::tree::{n_binary_trees, Tree};
use anyhow::{bail, Context, Result};

/// One tree found for one weighting.
struct Row {
    weighting: &'static str,
    algorithm: &'static str,
    tree: Tree,
    energy: f64,
    purity: Option<f64>,
    log_z: Option<f64>,
    entropy: Option<f64>,
    n_map_trees: Option<u128>,
}

fn weighting_name(w: Weighting) -> &'static str {
    match w {
        Weighting::Raw => "raw",
        Weighting::Centred => "centred",
    }
}

/// Runs the pam50 experiment of `cfg` into `staging`.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<()> {
    let sec = cfg.pam50.as_ref().expect("checked by Config");
    let data = Pam50::load(&sec.path)?;
    let idx = data.stratified_subsample(sec.per_class, sec.unlabelled, cfg.experiment.seed);
    let n = idx.len();
    let limit = cfg.algorithms.max_exact_leaves;
    if n < 2 {
        bail!("the pam50 subsample has {n} sample(s); raise pam50.per_class or pam50.unlabelled");
    }
    if n > limit {
        bail!(
            "the pam50 subsample has {n} samples, above algorithms.max_exact_leaves = {limit}; lower pam50.per_class or pam50.unlabelled"
        );
    }
    let classes = data.classes();
    let labels: Vec<Option<usize>> = idx
        .iter()
        .map(|&i| {
            data.subtypes[i]
                .as_ref()
                .and_then(|s| classes.iter().position(|c| c == s))
        })
        .collect();
    let names: Vec<String> = idx.iter().map(|&i| data.samples[i].clone()).collect();
    Table::new()
        .u64("leaf", &(0..n).map(|k| Some(k as u64)).collect::<Vec<_>>())
        .str("sample", &names)
        .str(
            "subtype",
            &idx.iter()
                .map(|&i| data.subtypes[i].clone().unwrap_or_else(|| "unknown".into()))
                .collect::<Vec<_>>(),
        )
        .write_parquet(&staging.path("pam50_samples.parquet"))?;

    let mut rows: Vec<Row> = Vec::new();
    let mut weight_cols: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    for &w in &sec.weights {
        let name = weighting_name(w);
        let weights = data
            .correlation_weights(&idx, w == Weighting::Centred)
            .context("building the correlation weights")?;
        for i in 0..n {
            weight_cols.push((
                format!("{name}_{i}"),
                (0..n).map(|j| Some(weights.get(i, j))).collect(),
            ));
        }
        let negative = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| weights.get(i, j) < 0.0)
            .count();
        manifest.set(&format!("negative_pairs_{name}"), negative);
        let model = CorrelationModel::new(weights.clone(), sec.beta);
        let trellis = FullTrellis::build_with_limit(&model, limit)?;
        let map = trellis.map_tree();
        let n_map = trellis.n_map_trees(&model, 1e-9);
        let mut add = |algorithm, tree: Tree, log_z, entropy, n_map_trees| {
            rows.push(Row {
                n_map_trees,
                weighting: name,
                algorithm,
                energy: model.tree_energy(&tree),
                purity: dendrogram_purity(&tree, &labels),
                tree,
                log_z,
                entropy,
            })
        };
        add("greedy", greedy(&model).tree, None, None, None);
        add(
            "average_linkage",
            average_linkage(&weights),
            None,
            None,
            None,
        );
        add(
            "trellis_map",
            map,
            Some(trellis.log_partition()),
            Some(trellis.entropy()),
            Some(n_map),
        );
    }

    // Tables and Newick.
    let name_of = |i: usize| names[i].clone();
    Table::new()
        .str(
            "weighting",
            &rows.iter().map(|r| r.weighting).collect::<Vec<_>>(),
        )
        .str(
            "algorithm",
            &rows.iter().map(|r| r.algorithm).collect::<Vec<_>>(),
        )
        .f64(
            "energy",
            &rows.iter().map(|r| Some(r.energy)).collect::<Vec<_>>(),
        )
        .f64(
            "dendrogram_purity",
            &rows.iter().map(|r| r.purity).collect::<Vec<_>>(),
        )
        .f64("log_z", &rows.iter().map(|r| r.log_z).collect::<Vec<_>>())
        .f64(
            "posterior_entropy_nats",
            &rows.iter().map(|r| r.entropy).collect::<Vec<_>>(),
        )
        .f64(
            "n_map_trees",
            &rows
                .iter()
                .map(|r| r.n_map_trees.map(|c| c as f64))
                .collect::<Vec<_>>(),
        )
        .f64(
            "log_n_trees",
            &rows
                .iter()
                .map(|_| Some((n_binary_trees(n) as f64).ln()))
                .collect::<Vec<_>>(),
        )
        .str(
            "newick",
            &rows
                .iter()
                .map(|r| r.tree.to_newick_with(name_of))
                .collect::<Vec<_>>(),
        )
        .write_parquet(&staging.path("pam50_trees.parquet"))?;
    let mut wt = Table::new().str("sample", &names);
    for (col, v) in &weight_cols {
        wt = wt.f64(col, v);
    }
    wt.write_parquet(&staging.path("pam50_weights.parquet"))?;
    let mut nwk = String::new();
    for r in &rows {
        nwk.push_str(&format!(
            "# {} weights, {}: energy {:.4}\n{}\n",
            r.weighting,
            r.algorithm,
            r.energy,
            r.tree.to_newick_with(name_of)
        ));
    }
    staging.write_string("trees.nwk", &nwk)?;

    // One chart per weighting: greedy and MAP side by side.
    let leaf_labels: Vec<String> = names.clone();
    for &w in &sec.weights {
        let name = weighting_name(w);
        let panel = |algorithm: &str, title: &str| -> Option<DendrogramPanel> {
            let r = rows
                .iter()
                .find(|r| r.weighting == name && r.algorithm == algorithm)?;
            let ties = match r.n_map_trees {
                Some(k) if k > 1 => format!(", one of {} tied trees", thousands(k)),
                _ => String::new(),
            };
            Some(DendrogramPanel {
                title: format!(
                    "{title}{ties}: energy {:.3}, purity {}",
                    r.energy,
                    r.purity.map_or("n/a".into(), |p| format!("{p:.3}"))
                ),
                tree: r.tree.clone(),
                leaf_labels: leaf_labels.clone(),
                leaf_category: labels.clone(),
            })
        };
        let panels: Vec<DendrogramPanel> = [
            panel("greedy", "local greedy on the energy"),
            panel("average_linkage", "average linkage"),
            panel("trellis_map", "exact MAP (trellis)"),
        ]
        .into_iter()
        .flatten()
        .collect();
        let chart = DendrogramChart {
            title: format!(
                "pam50, {n} samples, {} correlation weights: greedy trees vs the exact MAP tree (HCC energy, Eq. 7)",
                if w == Weighting::Raw { "raw" } else { "centred" }
            ),
            panels,
            category_names: classes.clone(),
            height_label: "cluster size".into(),
        };
        save_chart(&staging.path(&format!("pam50_{name}")), 2200, 950, &chart)?;
    }
    manifest.set("samples", &names);
    manifest.set("n_leaves", n);
    Ok(())
}

/// `1016064000` as `1,016,064,000`.
fn thousands(k: u128) -> String {
    let digits = k.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(1_016_064_000), "1,016,064,000");
        assert_eq!(super::thousands(83_160), "83,160");
        assert_eq!(super::thousands(7), "7");
    }
}
