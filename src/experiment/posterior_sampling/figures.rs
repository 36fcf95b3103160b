//! Figure 6, drawn from `posterior_samples.parquet` and `summary.parquet` alone.

use crate::experiment::chart::{save_chart, PosteriorMassChart};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::stats::thousands;
use crate::experiment::table::{f64_column, full_f64_column, str_column};
use anyhow::{anyhow, Result};
use std::path::Path;

/// `summary.parquet`: one value per quantity, in table order (the jet's name is in its `jet`
/// column, for the tables; the figure says what the jet is, not its id).
pub struct Summary {
    /// (quantity, value) per row.
    pub rows: Vec<(String, Option<f64>)>,
}

impl Summary {
    /// Reads `summary.parquet` of `results`.
    pub fn read(results: &Results) -> Result<Summary> {
        let s = results.table("summary")?;
        if s.height() == 0 {
            return Err(anyhow!("summary.parquet is empty"));
        }
        let rows = str_column(&s, "quantity")?
            .into_iter()
            .zip(f64_column(&s, "value")?)
            .collect();
        Ok(Summary { rows })
    }

    /// The value of `quantity`, if the table has it.
    pub fn get(&self, quantity: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|(q, _)| q == quantity)
            .and_then(|(_, v)| *v)
    }

    /// The value of `quantity`, or an error naming it.
    pub fn need(&self, quantity: &str) -> Result<f64> {
        self.get(quantity)
            .ok_or_else(|| anyhow!("summary.parquet has no {quantity}"))
    }
}

/// Draws `fig6_posterior_sampling.png/.svg` into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let s = Summary::read(results)?;
    let (get, need) = (|k: &str| s.get(k), |k: &str| s.need(k));

    let p = results.table("posterior_samples")?;
    let mut samples = vec![(
        format!(
            "trellis sampler, {} draws",
            thousands(need("n_samples")? as u128)
        ),
        full_f64_column(&p, "trellis_sampler_frequency")?,
    )];
    if let Some(nref) = get("reference_n_samples") {
        samples.push((
            format!("reference sampler, {} draws", thousands(nref as u128)),
            full_f64_column(&p, "reference_sampler_frequency")?,
        ));
    }
    let chart = PosteriorMassChart {
        values: full_f64_column(&p, "log_likelihood")?,
        exact: full_f64_column(&p, "exact_probability")?,
        samples,
        truth: get("truth_log_likelihood"),
        title: format!(
            "[CT] Figure 6: posterior over the trees of a {}-leaf Ginkgo jet ({} trees, χ² p = {:.2})",
            need("n_leaves")? as usize,
            need("n_trees_finite")? as u128,
            need("chi2_by_tree_p_value")?
        ),
        x_label: "log-likelihood of the tree".into(),
        y_label: "posterior probability (log scale)".into(),
        exact_label: "exact posterior mass".into(),
        log_y: true,
        map: get("map_log_likelihood"),
    };
    save_chart(&out.join("fig6_posterior_sampling"), 1100, 750, &chart)?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "fig6_posterior_sampling" => Some(Caption::new(
            "Figure 6 of the Cluster Trellis paper: the exact posterior probability of every tree of one jet (stems) against the frequency with which exact sampling from the trellis drew it (markers); the two agree.",
            "Stems of exact posterior tree probabilities with sampled frequencies as markers on top of them.",
        )),
        _ => None,
    }
}
