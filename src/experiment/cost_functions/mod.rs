//! `kind = "cost_functions"` (Section 4.4 of the Cluster Trellis paper): how Dasgupta's cost,
//! hierarchical correlation clustering (HCC) and dendrogram purity (DP) relate, checked
//! exhaustively.
//!
//! For a planted flat clustering of at most 8 points, every weight scheme of the section
//! (1/0, +1/−1, random, and the negations of the first two) and both energies, every one of the
//! `(2N−3)!!` trees is scored: its energy and its DP. From these the five claims are checked:
//! 1. the trees with DP = 1 are exactly those in which every class forms a subtree (counted
//!    against the closed form `(2K−3)!! · Π (2k_c−3)!!`);
//! 2. with 1/0 weights the set of MAP trees of Dasgupta's cost equals the set of DP = 1 trees;
//! 3. the same for HCC with +1/−1 weights;
//! 4. with random weights the MAP trees' DP is unrelated to the planted clustering (compared
//!    with the DP of a uniformly random tree, and the correlation of energy and DP over all trees);
//! 5. with negated weights every MAP tree has the worst DP of any tree.
//!
//! The exact trellis's MAP energy and its count of MAP trees
//! ([`crate::exact::FullTrellis::n_map_trees`]) are checked against the enumeration for every
//! case; a mismatch fails the run.
//!
//! Config: `[cost_functions]` ([`CostFunctionsSection`]). Outputs: `cost_functions.parquet`
//! (one row per scheme, instance and energy, with claim 1's per-tree counts in every row),
//! `claims.parquet` and `claims.txt` (claim, verdict, evidence) and `cost_functions.png/.svg`
//! (DP of the MAP trees against the range over all trees and the uniform-tree mean).
//!
//! The verdicts are decided by one function, [`claims`], from the numbers of
//! `cost_functions.parquet` and the config: `run` calls it on the table it has just written, and
//! `check` calls it on the stored table. The `holds` column of `claims.parquet` is a readable
//! copy that `check` never reads.

mod figures;
mod run;
mod study;
#[cfg(test)]
mod tests;

pub use run::{case_rows, claims, CaseRow, Claim, RandomSummary};
pub use study::{
    all_trees_with_purity, class_node_counts, dp_one_iff_classes_are_subtrees,
    n_class_respecting_trees, study, ClassNodeCounts, Energy, Study, TIE,
};

use crate::experiment::check::Measure;
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::table::{f64_column, str_column, u64_column};
use crate::tree::n_binary_trees;
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Most points: every one of the `(2N−3)!!` trees is enumerated (135,135 at N = 8).
pub const MAX_POINTS: usize = 8;

/// Most random weight matrices (each scores every tree under both energies).
pub const MAX_RANDOM_INSTANCES: usize = 10_000;

/// The cost-functions kind.
pub struct CostFunctions;

/// `kind = "cost_functions"`: `[cost_functions]` only.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CostFunctionsConfig {
    /// The study's settings.
    pub cost_functions: CostFunctionsSection,
}

/// `[cost_functions]`: the planted clustering and the number of random weight matrices.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CostFunctionsSection {
    /// Sizes of the planted flat clusters, e.g. `[3, 3, 2]`: at least two non-empty clusters,
    /// at most 8 points in all, so that every tree can be enumerated.
    pub cluster_sizes: Vec<usize>,
    /// Random weight matrices (uniform in `[-1, 1]`, seeded from `experiment.seed`) for claim 4:
    /// from 1 to 10,000.
    pub random_instances: usize,
}

impl Experiment for CostFunctions {
    type Config = CostFunctionsConfig;

    fn name(&self) -> &'static str {
        "cost_functions"
    }

    fn about(&self) -> &'static str {
        "Dasgupta's cost, HCC and dendrogram purity over every tree: the claims of Section 4.4"
    }

    fn validate(&self, cfg: &CostFunctionsConfig) -> Result<(), String> {
        let c = &cfg.cost_functions;
        let n = c.cluster_sizes.iter().fold(0usize, |a, &b| a.saturating_add(b));
        if c.cluster_sizes.len() < 2 || c.cluster_sizes.contains(&0) || n > MAX_POINTS {
            return Err(format!(
                "cost_functions.cluster_sizes = {:?} must list at least two non-empty clusters with at most {MAX_POINTS} points in all (every tree is enumerated)",
                c.cluster_sizes
            ));
        }
        if c.random_instances == 0 {
            return Err("cost_functions.random_instances must be at least 1".into());
        }
        // Each instance scores all trees under both energies: about 0.6 µs per tree.
        crate::experiment::limits::check_size(
            "cost_functions.random_instances",
            c.random_instances,
            MAX_RANDOM_INSTANCES,
            crate::experiment::limits::UnitCost {
                unit: "instance",
                bytes: (n * n * 8) as f64,
                seconds: 0.6e-6 * n_binary_trees(n).map_or(f64::INFINITY, |t| t as f64),
            },
        )?;
        Ok(())
    }

    fn run(&self, cfg: &CostFunctionsConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(cfg, ctx)
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        let mut out = claim_measures(results)?;
        out.extend(case_measures(results)?);
        Ok(out)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        crate::experiment::properties::cost_functions(results)
    }
}

/// `claim<k>.holds`: 1 when claim `k` holds, 0 when it fails, decided afresh by [`claims`] from
/// the numbers of `cost_functions.parquet` and the config's cluster sizes (never from the stored
/// verdicts of `claims.parquet`).
fn claim_measures(results: &Results) -> Result<Vec<Measure>> {
    let cfg: CostFunctionsConfig = results.config()?;
    let rows = case_rows(&results.table("cost_functions")?)?;
    Ok(claims(&rows, &cfg.cost_functions.cluster_sizes)?
        .into_iter()
        .map(|(c, holds, _)| {
            let k = c.split(':').next().unwrap_or_default();
            Measure::new(
                format!("claim{k}.holds"),
                format!("Section 4.4 claim {c} (1 holds, 0 fails)"),
                if holds { 1.0 } else { 0.0 },
            )
        })
        .collect())
}

/// An identifier for a scheme name of `cost_functions.parquet`.
fn scheme_id(name: &str) -> String {
    match name {
        "1/0" => "one_zero".into(),
        "+1/-1" => "plus_minus_one".into(),
        "-(1/0)" => "negated_one_zero".into(),
        "-(+1/-1)" => "negated_plus_minus_one".into(),
        other => other.to_lowercase(),
    }
}

/// The numbers of `cost_functions.parquet`: the all-tree DP facts (`all_trees.*`), each
/// deterministic scheme's row (`<scheme>.<energy>.<column>`; `map_set_is_dp_one_set` recomputed
/// from the three counts, not read from the stored text column) and claim 4's summary of the
/// random matrices (`random.<energy>.*`).
fn case_measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("cost_functions")?;
    let scheme = str_column(&t, "scheme")?;
    let energy = str_column(&t, "energy")?;
    let rows = case_rows(&t)?;
    let f = |c: &str| f64_column(&t, c);
    let u = |c: &str| -> Result<Vec<Option<f64>>> {
        Ok(u64_column(&t, c)?
            .into_iter()
            .map(|v| v.map(|v| v as f64))
            .collect())
    };
    let val = |v: &[Option<f64>], i: usize| v[i].unwrap_or(f64::NAN);
    let columns: Vec<(&str, &str, Vec<Option<f64>>)> = vec![
        ("n_map_trees", "number of MAP trees", u("n_map_trees")?),
        ("map_energy", "MAP energy", f("map_energy")?),
        ("map_dp_min", "lowest DP of a MAP tree", f("map_dp_min")?),
        ("map_dp_max", "highest DP of a MAP tree", f("map_dp_max")?),
        ("map_dp_mean", "mean DP of the MAP trees", f("map_dp_mean")?),
        (
            "n_map_trees_with_dp_one",
            "MAP trees with DP = 1",
            u("n_map_trees_with_dp_one")?,
        ),
        (
            "trellis_map_dp",
            "DP of the trellis's MAP tree",
            f("trellis_map_dp")?,
        ),
        (
            "energy_dp_correlation",
            "correlation of energy and DP over all trees",
            f("energy_dp_correlation")?,
        ),
    ];
    let mut out = Vec::new();
    if t.height() == 0 {
        return Err(anyhow!("cost_functions.parquet has no rows"));
    }
    for (id, what, col) in [
        ("n_dp_one_trees", "trees with DP = 1", u("n_dp_one_trees")?),
        ("dp_min", "worst DP of any tree", f("all_trees_dp_min")?),
        ("dp_max", "best DP of any tree", f("all_trees_dp_max")?),
        ("dp_mean", "mean DP over all trees", f("all_trees_dp_mean")?),
        (
            "n_class_respecting_trees",
            "trees in which every class is a node (counted tree by tree)",
            u("n_class_respecting_trees")?,
        ),
        (
            "n_dp_one_mismatches",
            "trees for which DP = 1 and every class being a node disagree",
            u("n_dp_one_mismatches")?,
        ),
    ] {
        out.push(Measure::new(
            format!("all_trees.{id}"),
            what,
            val(&col, 0),
        ));
    }
    for i in (0..t.height()).filter(|&i| scheme[i] != "random") {
        let prefix = format!("{}.{}", scheme_id(&scheme[i]), energy[i].to_lowercase());
        let case = format!("{} weights, {}", scheme[i], energy[i]);
        for (id, what, col) in &columns {
            out.push(Measure::new(
                format!("{prefix}.{id}"),
                format!("{case}: {what}"),
                val(col, i),
            ));
        }
        out.push(Measure::new(
            format!("{prefix}.map_set_is_dp_one_set"),
            format!("{case}: MAP trees = DP 1 trees (1 yes, 0 no; from the counts)"),
            if rows[i].map_set_is_dp_one_set() {
                1.0
            } else {
                0.0
            },
        ));
    }
    let (map_mean, all_mean) = (f("map_dp_mean")?, f("all_trees_dp_mean")?);
    let corr = &columns[7].2;
    for e in Energy::ALL {
        let rows: Vec<(f64, f64, f64)> = (0..t.height())
            .filter(|&i| scheme[i] == "random" && energy[i] == e.name())
            .map(|i| (val(&map_mean, i), val(&all_mean, i), val(corr, i)))
            .collect();
        let r = RandomSummary::of(&rows);
        let p = format!("random.{}", e.name().to_lowercase());
        let w = format!("random weights, {}", e.name());
        out.extend([
            Measure::new(
                format!("{p}.map_dp_minus_mean_dp.mean"),
                format!("{w}: mean DP of the MAP trees minus the mean over all trees, mean over matrices"),
                r.mean_diff,
            ),
            Measure::new(
                format!("{p}.map_dp_minus_mean_dp.sd"),
                format!("{w}: the same difference, sd over matrices"),
                r.sd,
            ),
            Measure::new(
                format!("{p}.energy_dp_correlation.mean"),
                format!("{w}: correlation of energy and DP over all trees, mean over matrices"),
                r.corr_mean,
            ),
            Measure::new(
                format!("{p}.energy_dp_correlation.negative"),
                format!("{w}: matrices with a negative correlation of energy and DP"),
                r.negative as f64,
            ),
            Measure::new(
                format!("{p}.matrices"),
                format!("{w}: matrices"),
                r.n as f64,
            ),
        ]);
    }
    Ok(out)
}
