//! Figures 2–5, drawn from `flat_pairs.parquet`, `flat_summary.parquet` and the manifest's
//! `map_clustering` alone.

use crate::experiment::chart::{save_chart, ClassScatter, HeatmapChart, ScatterByCategory};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, first_value, str_column, u64_column};
use anyhow::{anyhow, ensure, Result};
use std::path::Path;

/// Draws `fig2_affinity_vs_marginal`, `fig3_perturb_vs_exact`, `fig4_affinities` and
/// `fig5_marginals` (PNG + SVG) into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let s = results.table("flat_summary")?;
    let one_f = |c: &str| first_value(&f64_column(&s, c)?, c);
    let one_u = |c: &str| first_value(&u64_column(&s, c)?, c).map(|v| v as usize);
    let n = one_u("n_points")?;
    let draws = one_u("perturb_draws")?;
    let corr = one_f("corr_pair_energy_log_marginal")?;
    let mean_abs = one_f("perturb_mean_abs_error")?;
    let centred_mean_abs = one_f("perturb_centred_mean_abs_error")?;

    let p = results.table("flat_pairs")?;
    let pairs = p.height();
    let idx = |c: &str| -> Result<Vec<usize>> {
        u64_column(&p, c)?
            .into_iter()
            .map(|v| {
                v.map(|v| v as usize)
                    .filter(|&v| v < n)
                    .ok_or_else(|| anyhow!("flat_pairs.parquet: {c} missing or >= {n}"))
            })
            .collect()
    };
    let (pi, pj) = (idx("i")?, idx("j")?);
    let vals = |c: &str| -> Result<Vec<f64>> {
        Ok(f64_column(&p, c)?
            .into_iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    };
    let energy = vals("pair_log_energy")?;
    let marginal = vals("exact_marginal")?;
    let log_marginal = vals("exact_log_marginal")?;
    let approx = vals("perturb_and_map_marginal")?;
    let centred = vals("perturb_and_map_centred_marginal")?;
    let same = str_column(&p, "same_subtype")?;
    let (sub_i, sub_j) = (str_column(&p, "subtype_i")?, str_column(&p, "subtype_j")?);
    let (name_i, name_j) = (str_column(&p, "name_i")?, str_column(&p, "name_j")?);
    let mut names = vec![String::new(); n];
    for r in 0..pairs {
        names[pi[r]] = name_i[r].clone();
        names[pj[r]] = name_j[r].clone();
    }

    // Figure 2: pairwise log energy against exact log marginal.
    let category = |r: usize| -> usize {
        if sub_i[r] == "unknown" || sub_j[r] == "unknown" {
            2
        } else if same[r] == "true" {
            0
        } else {
            1
        }
    };
    let fig2 = ScatterByCategory {
        points: (0..pairs)
            .map(|r| (energy[r], log_marginal[r], category(r)))
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
    save_chart(
        &out.join("fig2_affinity_vs_marginal"),
        1000,
        750,
        &ClassScatter { scatter: fig2 },
    )?;

    // Figure 3: Perturb-and-MAP against exact.
    let mut points: Vec<(f64, f64, usize)> =
        (0..pairs).map(|r| (marginal[r], approx[r], 0)).collect();
    points.extend((0..pairs).map(|r| (marginal[r], centred[r], 1)));
    let fig3 = ScatterByCategory {
        points,
        x_label: "exact pairwise marginal (trellis)".into(),
        y_label: format!("Perturb-and-MAP estimate ({draws} draws)"),
        title: format!(
            "Perturb-and-MAP against exact pairwise marginals ({pairs} pairs of {n} samples)"
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
    // Opaque markers of a shape and colour per estimate, as in Figure 2: the translucent
    // default points hid one estimate under the other.
    save_chart(
        &out.join("fig3_perturb_vs_exact"),
        1100,
        900,
        &ClassScatter { scatter: fig3 },
    )?;

    // Figures 4 and 5: heatmaps, rows in the order of the MAP clustering.
    let map: Vec<Vec<usize>> = results.fact("map_clustering")?;
    let order: Vec<usize> = map.iter().flatten().copied().collect();
    let mut seen = vec![false; n];
    for &i in &order {
        ensure!(
            i < n && !std::mem::replace(&mut seen[i], true),
            "manifest.json: map_clustering is not a clustering of {n} samples"
        );
    }
    ensure!(
        order.len() == n,
        "manifest.json: map_clustering is not a clustering of {n} samples"
    );
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
    // The symmetric matrix of a pair column, rows and columns in MAP-cluster order, `diagonal`
    // on the diagonal (NaN where it has no meaning) and NaN for any pair the table lacks.
    let reorder = |v: &[f64], diagonal: f64| -> Vec<Vec<f64>> {
        let mut m = vec![vec![f64::NAN; n]; n];
        for r in 0..pairs {
            m[pi[r]][pj[r]] = v[r];
            m[pj[r]][pi[r]] = v[r];
        }
        order
            .iter()
            .map(|&i| {
                order
                    .iter()
                    .map(|&j| if i == j { diagonal } else { m[i][j] })
                    .collect()
            })
            .collect()
    };
    let fig4 = HeatmapChart {
        title: "Pairwise log-energies β·a(i, j) (rows and columns in MAP-cluster order)".into(),
        // (A point's affinity with itself is no energy of the model.)
        matrix: reorder(&energy, f64::NAN),
        row_labels: labels.clone(),
        col_labels: labels.clone(),
        color_label: "β·a(i, j)".into(),
        diverging: true,
        value_range: None,
        annotate: true,
        highlight: groups.clone(),
        marked: Vec::new(),
        reversed: false,
        cell_texts: Vec::new(),
    };
    save_chart(&out.join("fig4_affinities"), 1100, 950, &fig4)?;
    let fig5 = HeatmapChart {
        title: "[FCT] Figure 5: exact P(i and j in the same cluster), MAP clusters outlined".into(),
        // A point is always in its own cluster: P(i, i) = 1.
        matrix: reorder(&marginal, 1.0),
        row_labels: labels.clone(),
        col_labels: labels,
        color_label: "P(i and j in the same cluster)".into(),
        diverging: false,
        value_range: Some((0.0, 1.0)),
        annotate: true,
        highlight: groups,
        marked: Vec::new(),
        reversed: false,
        cell_texts: Vec::new(),
    };
    save_chart(&out.join("fig5_marginals"), 1100, 950, &fig5)?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "fig2_affinity_vs_marginal" => Some(Caption::new(
            "Figure 2 of the flat cluster trellis paper: each pair's log energy against its exact log marginal probability of sharing a cluster, marked by whether the pair shares a subtype.",
            "A scatter of pairwise log energies against exact log pairwise marginals, three classes with their own colour and marker shape.",
        )),
        "fig3_perturb_vs_exact" => Some(Caption::new(
            "Figure 3 of the flat cluster trellis paper: Perturb-and-MAP estimates of the pairwise marginals against the exact ones, with the paper's Gumbel noise and with the noise minus its mean; the dashed line is y = x.",
            "A scatter of estimated against exact pairwise marginals, two estimates with their own colour and marker shape, around a dashed diagonal.",
        )),
        "fig4_affinities" => Some(Caption::new(
            "Figure 4 of the flat cluster trellis paper: the pairwise affinities, rows and columns in the order of the MAP clustering, its clusters outlined.",
            "A square heatmap of pairwise affinities with outlined blocks along the diagonal.",
        )),
        "fig5_marginals" => Some(Caption::new(
            "Figure 5 of the flat cluster trellis paper: the exact pairwise marginals in the same order, the MAP clustering's clusters outlined.",
            "A square heatmap of pairwise co-clustering probabilities with outlined blocks along the diagonal.",
        )),
        _ => None,
    }
}
