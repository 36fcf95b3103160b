//! The flat cluster trellis paper's Figures 2-5 on a pam50 subsample: exact pairwise marginals
//! of correlation clustering over all Bell(N) flat clusterings, against the pairwise affinities
//! (Figure 2) and against Perturb-and-MAP (Figure 3), as heatmaps (Figures 4 and 5), with the
//! MAP clustering.
//!
//! The paper's data (11 TCGA patients) are not public; a seeded stratified pam50 subsample of
//! 11 stands in (2 per known subtype and 1 without one). Affinities follow the paper's
//! preprocessing: `exp(-d / h)` of the Euclidean distance between expression profiles, minus
//! the mean over all pairs; `log E(C) = β Σ_{i<j in C} a_ij`.
//!
//! Outputs: `flat_pairs.parquet` (per pair: affinity, exact marginal and its log,
//! Perturb-and-MAP estimate), `flat_summary.parquet`, `map_clustering.txt`, and the charts
//! `fig2_affinity_vs_marginal`, `fig3_perturb_vs_exact`, `fig4_affinities`, `fig5_marginals`
//! (PNG + SVG).

use super::chart::{save_chart, HeatmapChart, ScatterByCategory};
use super::config::Config;
use super::table::Table;
use super::{Manifest, Staging};
use crate::data::pam50::{pearson, Pam50};
use crate::flat::enumerate::bell;
use crate::flat::{FlatTrellis, PairwiseAffinity, PerturbAndMap};
use anyhow::{bail, Result};
use std::time::Instant;

/// Runs the flat-clustering experiment of `cfg` into `staging`.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<()> {
    let sec = cfg.flat.as_ref().expect("checked by Config");
    let data = Pam50::load(&sec.path)?;
    let idx = data.stratified_subsample(sec.per_class, sec.unlabelled, cfg.experiment.seed);
    let n = idx.len();
    let limit = cfg.algorithms.max_exact_leaves;
    if n < 2 {
        bail!("the pam50 subsample has {n} sample(s); raise flat.per_class or flat.unlabelled");
    }
    if n > limit {
        bail!(
            "the pam50 subsample has {n} samples, above algorithms.max_exact_leaves = {limit}; lower flat.per_class or flat.unlabelled"
        );
    }
    let bandwidth = sec.bandwidth.resolve().map_err(|e| anyhow::anyhow!(e))?;
    let affinities = data.distance_affinities(&idx, bandwidth, sec.centre)?;
    let model = PairwiseAffinity::with_beta(affinities.clone(), sec.beta)?;

    let t0 = Instant::now();
    let trellis = FlatTrellis::build_with_limit(&model, limit)?;
    let marginals = trellis.pairwise_marginals();
    let log_marginals = trellis.pairwise_log_marginals();
    manifest.timing("exact", t0.elapsed().as_secs_f64());
    let map = trellis.map_clustering();
    let t0 = Instant::now();
    let pnm = PerturbAndMap::new(sec.perturb_draws, cfg.experiment.seed);
    let approx = pnm.pairwise_marginals(&model)?;
    // The same with the Gumbel noise's mean (0.577) removed, so that it does not raise every
    // affinity: separates the bias of the shift from that of perturbing pairs, not clusterings.
    let centred = PerturbAndMap {
        centered: true,
        ..pnm
    }
    .pairwise_marginals(&model)?;
    manifest.timing("perturb_and_map", t0.elapsed().as_secs_f64());

    // Names: subtype and a running number, e.g. "LumA 2" (sample ids go to the tables).
    let subtype: Vec<String> = idx
        .iter()
        .map(|&i| data.subtypes[i].clone().unwrap_or_else(|| "unknown".into()))
        .collect();
    let names: Vec<String> = (0..n)
        .map(|k| {
            let m = subtype[..=k].iter().filter(|s| **s == subtype[k]).count();
            format!("{} {m}", subtype[k])
        })
        .collect();

    // Per pair.
    let mut rows: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            rows.push((i, j));
        }
    }
    let same = |i: usize, j: usize| subtype[i] == subtype[j] && subtype[i] != "unknown";
    let col = |f: &dyn Fn(usize, usize) -> f64| {
        rows.iter().map(|&(i, j)| Some(f(i, j))).collect::<Vec<_>>()
    };
    Table::new()
        .u64(
            "i",
            &rows.iter().map(|r| Some(r.0 as u64)).collect::<Vec<_>>(),
        )
        .u64(
            "j",
            &rows.iter().map(|r| Some(r.1 as u64)).collect::<Vec<_>>(),
        )
        .str(
            "sample_i",
            &rows
                .iter()
                .map(|r| data.samples[idx[r.0]].clone())
                .collect::<Vec<_>>(),
        )
        .str(
            "sample_j",
            &rows
                .iter()
                .map(|r| data.samples[idx[r.1]].clone())
                .collect::<Vec<_>>(),
        )
        .str(
            "name_i",
            &rows.iter().map(|r| names[r.0].clone()).collect::<Vec<_>>(),
        )
        .str(
            "name_j",
            &rows.iter().map(|r| names[r.1].clone()).collect::<Vec<_>>(),
        )
        .str(
            "same_subtype",
            &rows
                .iter()
                .map(|&(i, j)| same(i, j).to_string())
                .collect::<Vec<_>>(),
        )
        .f64("affinity", &col(&|i, j| affinities.get(i, j)))
        .f64("pair_log_energy", &col(&|i, j| model.pair_log_energy(i, j)))
        .f64("exact_marginal", &col(&|i, j| marginals[i][j]))
        .f64("exact_log_marginal", &col(&|i, j| log_marginals[i][j]))
        .f64("perturb_and_map_marginal", &col(&|i, j| approx[i][j]))
        .f64(
            "perturb_and_map_centred_marginal",
            &col(&|i, j| centred[i][j]),
        )
        .write_parquet(&staging.path("flat_pairs.parquet"))?;

    // Summary numbers.
    let errors: Vec<f64> = rows
        .iter()
        .map(|&(i, j)| approx[i][j] - marginals[i][j])
        .collect();
    let mean_abs = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len() as f64;
    let max_abs = errors.iter().fold(0.0f64, |a, e| a.max(e.abs()));
    let over = errors.iter().filter(|&&e| e > 0.0).count();
    let centred_mean_abs = rows
        .iter()
        .map(|&(i, j)| (centred[i][j] - marginals[i][j]).abs())
        .sum::<f64>()
        / rows.len() as f64;
    let xs: Vec<f64> = rows
        .iter()
        .map(|&(i, j)| model.pair_log_energy(i, j))
        .collect();
    let ys: Vec<f64> = rows.iter().map(|&(i, j)| log_marginals[i][j]).collect();
    let corr = pearson(&xs, &ys);
    let map_text: Vec<String> = map
        .iter()
        .map(|c| {
            c.iter()
                .map(|i| names[i].clone())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    Table::new()
        .u64("n_points", &[Some(n as u64)])
        .f64("n_clusterings", &[Some(bell(n) as f64)])
        .f64("log_z", &[Some(trellis.log_partition())])
        .f64("map_log_energy", &[Some(trellis.map_log_energy())])
        .f64(
            "map_probability",
            &[Some(
                (trellis.map_log_energy() - trellis.log_partition()).exp(),
            )],
        )
        .u64("map_n_clusters", &[Some(map.len() as u64)])
        .str("map_clustering", &[map_text.join(" | ")])
        .u64("perturb_draws", &[Some(sec.perturb_draws as u64)])
        .f64("perturb_mean_abs_error", &[Some(mean_abs)])
        .f64("perturb_max_abs_error", &[Some(max_abs)])
        .u64("perturb_overestimates", &[Some(over as u64)])
        .f64("perturb_centred_mean_abs_error", &[Some(centred_mean_abs)])
        .u64("pairs", &[Some(rows.len() as u64)])
        .f64("corr_pair_energy_log_marginal", &[Some(corr)])
        .write_parquet(&staging.path("flat_summary.parquet"))?;
    let mut text = format!(
        "MAP clustering of {n} pam50 samples ({} clusters; probability {:.4} of {} clusterings)\n",
        map.len(),
        (trellis.map_log_energy() - trellis.log_partition()).exp(),
        bell(n)
    );
    for (k, c) in map.iter().enumerate() {
        let ids: Vec<String> = c.iter().map(|i| data.samples[idx[i]].clone()).collect();
        text.push_str(&format!(
            "cluster {}: {}  [{}]\n",
            k + 1,
            map_text[k],
            ids.join(", ")
        ));
    }
    staging.write_string("map_clustering.txt", &text)?;

    // Figure 2: pairwise log energy against exact log marginal.
    let category = |i: usize, j: usize| -> usize {
        if subtype[i] == "unknown" || subtype[j] == "unknown" {
            2
        } else if same(i, j) {
            0
        } else {
            1
        }
    };
    let fig2 = ScatterByCategory {
        points: rows
            .iter()
            .map(|&(i, j)| {
                (
                    model.pair_log_energy(i, j),
                    log_marginals[i][j],
                    category(i, j),
                )
            })
            .collect(),
        x_label: "pairwise log-energy β·a(i, j)".into(),
        y_label: "log P(i and j in the same cluster)".into(),
        title: format!(
            "Pairwise energies against exact pairwise marginals ({n} pam50 samples, corr {corr:.2})"
        ),
        legend_title: String::new(),
        category_names: vec![
            "same subtype".into(),
            "different subtypes".into(),
            "involves an unknown".into(),
        ],
        diagonal: false,
        x_range: None,
        y_range: None,
    };
    save_chart(&staging.path("fig2_affinity_vs_marginal"), 1000, 750, &fig2)?;

    // Figure 3: Perturb-and-MAP against exact.
    let mut points: Vec<(f64, f64, usize)> = rows
        .iter()
        .map(|&(i, j)| (marginals[i][j], approx[i][j], 0))
        .collect();
    points.extend(
        rows.iter()
            .map(|&(i, j)| (marginals[i][j], centred[i][j], 1)),
    );
    let fig3 = ScatterByCategory {
        points,
        x_label: "exact pairwise marginal (trellis)".into(),
        y_label: format!("Perturb-and-MAP estimate ({} draws)", sec.perturb_draws),
        title: format!(
            "Perturb-and-MAP against exact pairwise marginals ({} pairs of {n} samples)",
            rows.len()
        ),
        legend_title: String::new(),
        category_names: vec![
            format!("Gumbel noise, as in the paper (mean |error| {mean_abs:.3})"),
            format!("Gumbel noise minus its mean (mean |error| {centred_mean_abs:.3})"),
        ],
        diagonal: true,
        x_range: Some((0.0, 1.0)),
        y_range: Some((0.0, 1.0)),
    };
    save_chart(&staging.path("fig3_perturb_vs_exact"), 1100, 900, &fig3)?;

    // Figures 4 and 5: heatmaps, rows in the order of the MAP clustering.
    let order: Vec<usize> = map.iter().flat_map(|c| c.iter()).collect();
    let groups: Vec<Vec<usize>> = {
        let mut k = 0;
        map.iter()
            .map(|c| {
                let g: Vec<usize> = (k..k + c.len()).collect();
                k += c.len();
                g
            })
            .collect()
    };
    let labels: Vec<String> = order.iter().map(|&i| names[i].clone()).collect();
    let reorder = |m: &dyn Fn(usize, usize) -> f64| -> Vec<Vec<f64>> {
        order
            .iter()
            .map(|&i| {
                order
                    .iter()
                    .map(|&j| if i == j { f64::NAN } else { m(i, j) })
                    .collect()
            })
            .collect()
    };
    let fig4 = HeatmapChart {
        title: "Pairwise log-energies β·a(i, j) (rows and columns in MAP-cluster order)".into(),
        matrix: reorder(&|i, j| model.pair_log_energy(i, j)),
        row_labels: labels.clone(),
        col_labels: labels.clone(),
        color_label: "β·a(i, j)".into(),
        diverging: true,
        value_range: None,
        annotate: true,
        highlight: groups.clone(),
    };
    save_chart(&staging.path("fig4_affinities"), 1100, 950, &fig4)?;
    let fig5 = HeatmapChart {
        title: "Exact pairwise marginals P(i and j in the same cluster), MAP clusters outlined"
            .into(),
        matrix: reorder(&|i, j| marginals[i][j]),
        row_labels: labels.clone(),
        col_labels: labels,
        color_label: "P(i and j in the same cluster)".into(),
        diverging: false,
        value_range: Some((0.0, 1.0)),
        annotate: true,
        highlight: groups,
    };
    save_chart(&staging.path("fig5_marginals"), 1100, 950, &fig5)?;

    manifest.set(
        "samples",
        idx.iter()
            .map(|&i| data.samples[i].clone())
            .collect::<Vec<_>>(),
    );
    manifest.set("n_points", n);
    manifest.set(
        "map_clustering",
        map.iter()
            .map(|c| c.iter().collect::<Vec<_>>())
            .collect::<Vec<_>>(),
    );
    Ok(())
}
