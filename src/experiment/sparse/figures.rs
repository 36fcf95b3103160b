//! Figure 7, drawn from `sparse.parquet` and the manifest alone.

use super::SparseConfig;
use crate::experiment::chart::{save_chart, LineChart, LineSeries};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, first_value, str_column, u64_column};
use anyhow::Result;
use std::path::Path;

/// One row of `sparse.parquet`.
pub struct Row {
    /// `"simulator"` or `"beam_search"`.
    pub builder: String,
    /// Seed trees the trellis was built from.
    pub seed_trees: u64,
    /// Encoded trees over `(2N-3)!!`.
    pub sparsity: f64,
    /// Mean over the test jets (with a finite MAP) of MAP − greedy.
    pub mean: f64,
    /// Test jets whose MAP in the trellis is finite.
    pub n_finite: u64,
}

/// `sparse.parquet`: its rows, and the exact-trellis and beam-search lines (mean − greedy).
pub fn read(results: &Results) -> Result<(Vec<Row>, f64, f64)> {
    let t = results.table("sparse")?;
    let builder = str_column(&t, "builder")?;
    let seeds = u64_column(&t, "seed_trees")?;
    let sparsity = f64_column(&t, "sparsity_index")?;
    let mean = f64_column(&t, "mean_map_minus_greedy")?;
    let finite = u64_column(&t, "jets_with_finite_map")?;
    let rows = (0..t.height())
        .map(|i| Row {
            builder: builder[i].clone(),
            seed_trees: seeds[i].unwrap_or(0),
            sparsity: sparsity[i].unwrap_or(f64::NAN),
            mean: mean[i].unwrap_or(f64::NAN),
            n_finite: finite[i].unwrap_or(0),
        })
        .collect();
    let first = |col: &str| first_value(&f64_column(&t, col)?, col);
    Ok((
        rows,
        first("exact_trellis_minus_greedy")?,
        first("beam_search_minus_greedy")?,
    ))
}

/// Draws `fig7_sparse_trellis.png/.svg` into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: SparseConfig = results.config()?;
    let n_jets: u64 = results.fact("n_test_jets")?;
    let n: usize = results.fact("n_leaves")?;
    let (rows, exact, beam) = read(results)?;
    // Only trellises that encode a finite-likelihood tree for every test jet.
    let complete = |r: &&Row| r.n_finite == n_jets;
    let xs: Vec<f64> = rows
        .iter()
        .filter(complete)
        .map(|r| r.sparsity.log10())
        .collect();
    let (x0, x1) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min).min(0.0),
        xs.iter()
            .cloned()
            .fold(f64::NEG_INFINITY, f64::max)
            .max(0.0),
    );
    let line = |name: &str, y: f64| LineSeries {
        name: name.into(),
        points: vec![(x0, y), (x1, y)],
        dashed: true,
        markers: false,
    };
    let curve = |builder: &str, name: &str| LineSeries {
        name: name.into(),
        points: rows
            .iter()
            .filter(complete)
            .filter(|r| r.builder == builder)
            .map(|r| (r.sparsity.log10(), r.mean))
            .collect(),
        dashed: false,
        markers: true,
    };
    let chart = LineChart {
        series: vec![
            curve("simulator", "Sim. trellis"),
            curve("beam_search", "BS trellis"),
            line("exact trellis", exact),
            line("beam search", beam),
            line("greedy", 0.0),
        ],
        title: format!(
            "[CT] Figure 7: sparse trellis MAP vs sparsity, Ginkgo jets ({n_jets} test jets, N = {n}, leaves by {})",
            cfg.sparse.leaf_order.describe()
        ),
        x_label: "sparsity index (log10 of encoded trees / (2N−3)!!)".into(),
        y_label: "mean MAP log-likelihood − greedy".into(),
        log_y: false,
        integer_x: false,
    };
    save_chart(&out.join("fig7_sparse_trellis"), 1000, 750, &chart)?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "fig7_sparse_trellis" => Some(Caption::new(
            "Figure 7 of the Cluster Trellis paper: the sparse trellis's mean MAP log-likelihood minus greedy's against its sparsity (log10 of the share of all trees it encodes), for trees seeded by the simulator and by beam search; the exact trellis, beam search and greedy as horizontal reference lines (dashes, dots, long dashes).",
            "Two rising curves with circle and square markers approach the top dashed line of the exact trellis as the sparsity index goes to 0; beam search and greedy are dotted and long-dashed horizontal lines below.",
        )),
        _ => None,
    }
}
