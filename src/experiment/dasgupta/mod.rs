//! `kind = "dasgupta"` (Cluster Trellis paper, Figure 4): Dasgupta's cost (Eq. 4) of the trees
//! built by average linkage and by the local greedy, against the exact MAP tree of the trellis,
//! on instances of the adversarial family for average linkage (ladders,
//! [`crate::data::graphs::AdversarialParams`]) and on random planted-partition graphs.
//!
//! Config: `[dasgupta]` ([`DasguptaSection`], with `[[dasgupta.adversarial]]` instances and an
//! optional `[dasgupta.planted]`) and `[methods]` (only `max_exact_leaves` matters: the trellis,
//! average linkage and the greedy always run). Outputs:
//! - `dasgupta.parquet`: per graph, the three costs, their ratios to the MAP cost, log Z and the
//!   three trees as canonical Newick, plus each tree as built (`*_newick_as_built`, children in
//!   the order the method joined them, which Figure 4 draws);
//! - `graphs.parquet`: every graph's edges; `points.parquet`: every point's group (rung or
//!   planted cluster) and its position on the circle of the graph drawing;
//! - `fig4_<k>.png/.svg`: per adversarial instance, the graph and both trees with their costs;
//!   `cost_ratios.png/.svg`: cost / MAP cost of every graph, by family and method.
//!
//! Figures are drawn from these tables alone.

mod figures;
mod run;
#[cfg(test)]
mod tests;

use crate::data::graphs::AdversarialParams;
use crate::experiment::check::Measure;
use crate::experiment::config::{one_f64, positive};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::methods::MethodsSection;
use crate::experiment::stats::mean_std;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The Dasgupta-cost kind.
pub struct Dasgupta;

/// `kind = "dasgupta"`: `[dasgupta]` and `[methods]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DasguptaConfig {
    /// The graphs and the temperature.
    pub dasgupta: DasguptaSection,
    /// Only `max_exact_leaves` is used (the largest graph the exact trellis may take); the
    /// exact trellis, average linkage and the greedy always run.
    #[serde(default)]
    pub methods: MethodsSection,
}

/// `[dasgupta]`: the graphs of the study.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DasguptaSection {
    /// Inverse temperature of `log psi = -beta * cost` (default 1; changes log Z, never the
    /// MAP tree).
    #[serde(default = "one_f64")]
    pub beta: f64,
    /// `[[dasgupta.adversarial]]`: ladders of the adversarial family for average linkage (keys
    /// `n_pairs`, `eps`, `middle_bonus`; see [`AdversarialParams`]); each gets a Figure 4 chart.
    #[serde(default)]
    pub adversarial: Vec<AdversarialParams>,
    /// `[dasgupta.planted]`: random planted-partition graphs.
    #[serde(default)]
    pub planted: Option<PlantedSection>,
}

/// `[dasgupta.planted]`: random planted-partition graphs with unit edges.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlantedSection {
    /// Number of random graphs (graph `k` is drawn with seed `experiment.seed * 7919 + k`).
    pub instances: usize,
    /// Sizes of the planted clusters (their sum is N, at most `methods.max_exact_leaves`).
    pub cluster_sizes: Vec<usize>,
    /// Probability of an edge inside a cluster.
    pub p_in: f64,
    /// Probability of an edge across clusters.
    pub p_out: f64,
}

/// Most planted-partition graphs one config may ask for.
pub const MAX_PLANTED: usize = 100_000;

impl PlantedSection {
    /// Checks the section, with `limit` the largest N the exact trellis may take.
    pub fn validate(&self, limit: usize) -> Result<(), String> {
        let n = self.cluster_sizes.iter().fold(0usize, |a, &b| a.saturating_add(b));
        if self.instances == 0 {
            return Err(
                "dasgupta.planted.instances must be at least 1 (or remove [dasgupta.planted])"
                    .into(),
            );
        }
        // Each graph is solved exactly (about 6 ms at 12 points, times 3 per extra point) and
        // kept for the chart with its weights.
        crate::experiment::limits::check_size(
            "dasgupta.planted.instances",
            self.instances,
            MAX_PLANTED,
            crate::experiment::limits::UnitCost {
                unit: "graph",
                bytes: (n as f64).powi(2) * 8.0 + 256.0,
                seconds: 6e-3 * 3f64.powi(n.min(64) as i32 - 12),
            },
        )?;
        if self.cluster_sizes.is_empty() || self.cluster_sizes.contains(&0) || n < 2 {
            return Err(format!(
                "dasgupta.planted.cluster_sizes = {:?} must list non-empty clusters with at least 2 points in all",
                self.cluster_sizes
            ));
        }
        if n > limit {
            return Err(format!(
                "dasgupta.planted: {n} points exceed methods.max_exact_leaves = {limit}; use smaller clusters or raise methods.max_exact_leaves"
            ));
        }
        for (k, v) in [("p_in", self.p_in), ("p_out", self.p_out)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "dasgupta.planted.{k} = {v} must be a probability in [0, 1]"
                ));
            }
        }
        Ok(())
    }
}

impl Experiment for Dasgupta {
    type Config = DasguptaConfig;

    fn name(&self) -> &'static str {
        "dasgupta"
    }

    fn about(&self) -> &'static str {
        "Dasgupta's cost of average linkage and the greedy against the exact MAP tree (Figure 4)"
    }

    fn validate(&self, cfg: &DasguptaConfig) -> Result<(), String> {
        cfg.methods.validate()?;
        cfg.methods.check_only("dasgupta", &["max_exact_leaves"])?;
        let d = &cfg.dasgupta;
        positive("dasgupta.beta", d.beta)?;
        if d.adversarial.is_empty() && d.planted.is_none() {
            return Err("[dasgupta] needs graphs: add [[dasgupta.adversarial]] instances and/or a [dasgupta.planted] section".into());
        }
        let limit = cfg.methods.max_exact_leaves;
        for a in &d.adversarial {
            a.check(limit)?;
        }
        if let Some(p) = &d.planted {
            p.validate(limit)?;
        }
        Ok(())
    }

    fn run(&self, cfg: &DasguptaConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(cfg, ctx)
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        measures(results)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        crate::experiment::properties::dasgupta(results)
    }
}

/// A cost ratio at most this far above 1 counts as optimal (costs are sums of a few decimals).
const OPTIMAL: f64 = 1e-9;

/// The numbers of `dasgupta.parquet`: per adversarial instance `k`,
/// `fig4.adversarial.<k>.<map|average_linkage|greedy>_cost` and `.log_z`; over the planted
/// graphs, `fig4.planted.<average_linkage|greedy>_ratio.mean|worst|n_optimal`; and
/// `fig4.n_map_beaten`, the graphs on which a greedy tree costs less than the exact MAP tree.
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("dasgupta")?;
    let family = str_column(&t, "family")?;
    let instance = u64_column(&t, "instance")?;
    let description = str_column(&t, "description")?;
    let map = f64_column(&t, "map_cost")?;
    let linkage = f64_column(&t, "average_linkage_cost")?;
    let greedy = f64_column(&t, "greedy_cost")?;
    let log_z = f64_column(&t, "log_z")?;
    let v = |c: &[Option<f64>], i: usize| c[i].unwrap_or(f64::NAN);
    let mut out = Vec::new();
    for i in (0..t.height()).filter(|&i| family[i] == "adversarial") {
        let k = instance[i].unwrap_or(u64::MAX);
        let d = &description[i];
        for (what, col) in [
            ("map_cost", &map),
            ("average_linkage_cost", &linkage),
            ("greedy_cost", &greedy),
            ("log_z", &log_z),
        ] {
            out.push(Measure::new(
                format!("fig4.adversarial.{k}.{what}"),
                format!("Figure 4, {d}: {}", what.replace('_', " ")),
                v(col, i),
            ));
        }
    }
    let planted: Vec<usize> = (0..t.height())
        .filter(|&i| family[i] == "planted")
        .collect();
    if !planted.is_empty() {
        for (name, col) in [("average_linkage", &linkage), ("greedy", &greedy)] {
            let ratios: Vec<f64> = planted.iter().map(|&i| v(col, i) / v(&map, i)).collect();
            let id = format!("fig4.planted.{name}_ratio");
            let what = format!(
                "{} planted graphs, {} cost / MAP cost",
                planted.len(),
                name.replace('_', " ")
            );
            out.push(Measure::new(
                format!("{id}.mean"),
                format!("{what}, mean"),
                mean_std(ratios.iter().copied()).mean,
            ));
            out.push(Measure::new(
                format!("{id}.worst"),
                format!("{what}, worst"),
                ratios.iter().copied().fold(f64::NAN, f64::max),
            ));
            out.push(Measure::new(
                format!("{id}.n_optimal"),
                format!("{what}, graphs where it is optimal"),
                ratios.iter().filter(|&&r| r <= 1.0 + OPTIMAL).count() as f64,
            ));
        }
    }
    let beaten = (0..t.height())
        .filter(|&i| v(&linkage, i).min(v(&greedy, i)) < v(&map, i) * (1.0 - OPTIMAL))
        .count();
    out.push(Measure::new(
        "fig4.n_map_beaten",
        "graphs on which a greedy tree costs less than the exact MAP tree",
        beaten as f64,
    ));
    Ok(out)
}
