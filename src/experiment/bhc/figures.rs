//! The figures, from `summary.parquet`, `coclustering.parquet`, `bhc.parquet` and the config
//! alone:
//! - `bhc_bound_gap`: `log p(D)` − BHC's bound against N, mean ± standard error over the
//!   subsets, one line per data set;
//! - `bhc_greedy_vs_best`: side by side, the best BHC tree's bound − greedy BHC's, and the best
//!   rose tree's `log p(D|T)` − greedy BRT's, against N (mean ± standard error);
//! - `bhc_coclustering`: the exact co-clustering matrix beside BHC's for one subset
//!   (`bhc.heatmap`).

use super::BhcConfig;
use crate::experiment::chart::{
    save_chart, HeatmapChart, LineChart, LineChartWith, LineOptions, LineSeries, Row,
};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// A data set's name, its `(N, mean)` points and their standard errors.
type Series = (String, Vec<(f64, f64)>, Vec<f64>);

/// One quantity of `summary.parquet` per data set: `(N, mean)` points and their standard errors.
fn per_dataset(results: &Results, quantity: &str) -> Result<Vec<Series>> {
    let t = results.table("summary")?;
    let (ds, n, q) = (
        str_column(&t, "dataset")?,
        u64_column(&t, "n")?,
        str_column(&t, "quantity")?,
    );
    let (mean, se) = (f64_column(&t, "mean")?, f64_column(&t, "se")?);
    let names: Vec<String> = results.fact("datasets")?;
    let mut out = Vec::new();
    for name in names {
        let mut pts: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        for i in 0..t.height() {
            if ds[i] == name && q[i] == quantity {
                if let (Some(n), Some(m)) = (n[i], mean[i]) {
                    pts.insert(n, (m, se[i].unwrap_or(f64::NAN)));
                }
            }
        }
        if pts.is_empty() {
            continue;
        }
        let points = pts.iter().map(|(&n, &(m, _))| (n as f64, m)).collect();
        let errors = pts.values().map(|&(_, s)| s).collect();
        out.push((name, points, errors));
    }
    Ok(out)
}

/// How the points average the subsets: "mean ± SE over k subsets", or "one subset per N".
fn over(k: usize) -> String {
    if k == 1 {
        "one subset per N".into()
    } else {
        format!("mean ± SE over {k} subsets per N")
    }
}

/// A line chart of `quantity` against N, one series per data set, with error bars.
fn chart_of(
    results: &Results,
    quantity: &str,
    title: String,
    y_label: &str,
) -> Result<(LineChart, Vec<Vec<f64>>, Vec<f64>)> {
    let data = per_dataset(results, quantity)?;
    let mut xs: Vec<f64> = data
        .iter()
        .flat_map(|d| d.1.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let (series, errors) = data
        .into_iter()
        .map(|(name, points, err)| {
            (
                LineSeries {
                    name,
                    points,
                    dashed: false,
                    markers: true,
                },
                err,
            )
        })
        .unzip();
    Ok((
        LineChart {
            series,
            title,
            x_label: "number of points N".into(),
            y_label: y_label.into(),
            log_y: false,
            integer_x: true,
        },
        errors,
        xs,
    ))
}

/// Draws `bhc_bound_gap`, `bhc_greedy_vs_best` and `bhc_coclustering` (PNG and SVG) into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: BhcConfig = results.config()?;
    let alpha = cfg.bhc.alpha;
    let k = cfg.bhc.subsets;
    let (gap, err, xs) = chart_of(
        results,
        "bound_gap",
        format!("BHC's lower bound against the exact DPM evidence (α = {alpha}; {})", over(k)),
        "log p(D) − log[Γ(α) f(T) / Γ(N+α)] (nats)",
    )?;
    let ticks = |xs: &[f64]| LineOptions {
        x_ticks: Some(xs.to_vec()),
    };
    save_chart(
        &out.join("bhc_bound_gap"),
        1000,
        650,
        &gap.with(ticks(&xs)).error_bars(err),
    )?;

    let (bhc, bhc_err, bhc_xs) = chart_of(
        results,
        "best_minus_greedy",
        format!("BHC: best binary tree − greedy tree ({})", over(k)),
        "log max_T f(T) − log f(T_greedy) (nats)",
    )?;
    let (brt, brt_err, brt_xs) = chart_of(
        results,
        "brt_gap",
        format!(
            "BRT (γ = {}): best rose tree − greedy rose tree",
            cfg.bhc.brt_gamma
        ),
        "log max_T p(D|T) − log p(D|T_greedy) (nats)",
    )?;
    let panels: Vec<LineChartWith> = vec![
        bhc.with(ticks(&bhc_xs)).error_bars(bhc_err),
        brt.with(ticks(&brt_xs)).error_bars(brt_err),
    ];
    save_chart(
        &out.join("bhc_greedy_vs_best"),
        1600,
        650,
        &Row(panels.iter().collect()),
    )?;
    coclustering(results, &cfg, out)
}

/// The exact and BHC's co-clustering matrices of the subset `bhc.heatmap` picks.
fn coclustering(results: &Results, cfg: &BhcConfig, out: &Path) -> Result<()> {
    let pick = cfg.bhc.heatmap_pick();
    let t = results.table("coclustering")?;
    let (ds, n, sub) = (
        str_column(&t, "dataset")?,
        u64_column(&t, "n")?,
        u64_column(&t, "subset")?,
    );
    let (ii, jj) = (u64_column(&t, "i")?, u64_column(&t, "j")?);
    let (ex, bh) = (f64_column(&t, "exact")?, f64_column(&t, "bhc")?);
    let size = pick.n;
    let mut exact = vec![vec![1.0; size]; size];
    let mut bhc = vec![vec![1.0; size]; size];
    let mut found = 0;
    for r in 0..t.height() {
        if ds[r] == pick.dataset && n[r] == Some(size as u64) && sub[r] == Some(pick.subset as u64)
        {
            let (Some(i), Some(j)) = (ii[r], jj[r]) else {
                continue;
            };
            let (i, j) = (i as usize, j as usize);
            for (m, v) in [(&mut exact, ex[r]), (&mut bhc, bh[r])] {
                let v = v.unwrap_or(f64::NAN);
                m[i][j] = v;
                m[j][i] = v;
            }
            found += 1;
        }
    }
    if found != size * (size - 1) / 2 {
        bail!(
            "coclustering.parquet has no complete subset {} of {:?} at N = {size}; re-run the config",
            pick.subset,
            pick.dataset
        );
    }
    // Points are labelled by their row in the data set (1-based, as in the file).
    let b = results.table("bhc")?;
    let (bds, bn, bsub, brows) = (
        str_column(&b, "dataset")?,
        u64_column(&b, "n")?,
        u64_column(&b, "subset")?,
        str_column(&b, "rows")?,
    );
    let labels: Vec<String> = (0..b.height())
        .find(|&r| {
            bds[r] == pick.dataset && bn[r] == Some(size as u64) && bsub[r] == Some(pick.subset as u64)
        })
        .map(|r| {
            brows[r]
                .split(',')
                .map(|x| x.parse::<usize>().map_or_else(|_| x.to_string(), |v| (v + 1).to_string()))
                .collect()
        })
        .unwrap_or_default();
    let panel = |title: String, matrix: Vec<Vec<f64>>| HeatmapChart {
        title,
        matrix,
        row_labels: labels.clone(),
        col_labels: labels.clone(),
        color_label: "P(i and j in one cluster)".into(),
        value_range: Some((0.0, 1.0)),
        ..HeatmapChart::default()
    };
    let name = format!("{}, N = {size}, subset {}", pick.dataset, pick.subset);
    let charts = [
        panel(format!("Exact DPM posterior ({name})"), exact),
        panel(format!("BHC's tree-consistent partitions ({name})"), bhc),
    ];
    save_chart(
        &out.join("bhc_coclustering"),
        1600,
        800,
        &Row(charts.iter().collect()),
    )?;
    Ok(())
}

/// Captions and alternative texts of the figures.
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "bhc_bound_gap" => Some(Caption::new(
            "How much of the DPM evidence BHC's lower bound misses: the exact log p(D) (the flat trellis over all partitions) minus BHC's log[Γ(α) f(T) / Γ(N+α)], in nats, mean ± standard error over random subsets of each data set.",
            "Lines of the bound's gap in nats against the number of points, one per data set, with error bars.",
        )),
        "bhc_greedy_vs_best" => Some(Caption::new(
            "Left: the best binary tree under BHC's own objective (exact, over all (2N−3)!! trees) minus the greedy BHC tree, in nats. Right: the exact best rose tree minus greedy BRT in log p(D|T). Mean ± standard error over the subsets.",
            "Two panels of gaps in nats against the number of points, one line per data set, with error bars.",
        )),
        "bhc_coclustering" => Some(Caption::new(
            "Pairwise co-clustering probabilities of one subset: left the exact DPM posterior over all partitions, right the posterior over the cuts of the greedy BHC tree. Points are labelled by their row in the data file.",
            "Two square heatmaps side by side, probabilities from 0 (dark) to 1 (bright).",
        )),
        _ => None,
    }
}
