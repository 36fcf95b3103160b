//! The cost-function run: every case (weight scheme × instance × energy) scored exhaustively;
//! `cost_functions.parquet`, the five claims in `claims.parquet` and `claims.txt`.
//!
//! The claims are decided by [`claims`] from the numbers of `cost_functions.parquet` alone
//! ([`case_rows`]): the run reads back the table it wrote, and `check` reads the same table, so
//! the stored verdicts of `claims.parquet` are only a readable copy, never an input.

use super::study::{
    all_trees_with_purity, class_node_counts, n_class_respecting_trees, study, ClassNodeCounts,
    Energy, Study, TIE,
};
use super::CostFunctionsConfig;
use crate::data::graphs::{planted_labels, WeightScheme};
use crate::experiment::kind::RunContext;
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column, Table};
use crate::tree::n_binary_trees;
use anyhow::{anyhow, ensure, Context, Result};
use polars::prelude::DataFrame;

struct Case {
    scheme: WeightScheme,
    instance: usize,
    energy: Energy,
    study: Study,
}

/// Claim 4's numbers for one energy, over the random weight matrices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomSummary {
    /// Mean over the matrices of (mean DP of the MAP trees − mean DP over all trees).
    pub mean_diff: f64,
    /// Population standard deviation of that difference.
    pub sd: f64,
    /// Number of matrices.
    pub n: usize,
    /// Mean correlation of energy and DP over all trees (finite ones only).
    pub corr_mean: f64,
    /// Matrices whose correlation is negative.
    pub negative: usize,
    /// Matrices with a finite correlation.
    pub n_corr: usize,
}

impl RandomSummary {
    /// From `(map_dp_mean, all_trees_dp_mean, energy_dp_correlation)` per random matrix.
    pub fn of(rows: &[(f64, f64, f64)]) -> RandomSummary {
        let k = rows.len().max(1) as f64;
        let diffs: Vec<f64> = rows.iter().map(|r| r.0 - r.1).collect();
        let mean_diff = diffs.iter().sum::<f64>() / k;
        let sd = (diffs.iter().map(|d| (d - mean_diff).powi(2)).sum::<f64>() / k).sqrt();
        let corrs: Vec<f64> = rows.iter().map(|r| r.2).filter(|c| c.is_finite()).collect();
        RandomSummary {
            mean_diff,
            sd,
            n: rows.len(),
            corr_mean: corrs.iter().sum::<f64>() / corrs.len().max(1) as f64,
            negative: corrs.iter().filter(|&&c| c < 0.0).count(),
            n_corr: corrs.len(),
        }
    }

    /// Claim 4 for this energy: the MAP trees' DP is within two standard errors of a random
    /// tree's. (The correlation over all trees is reported beside it; for HCC it is weakly
    /// negative: the energy depends on tree shape, and so does DP.)
    pub fn unrelated(&self) -> bool {
        let k = self.n.max(1) as f64;
        self.mean_diff.abs() <= 2.0 * self.sd / k.sqrt()
    }
}

/// Runs the cost-function study.
pub fn run(cfg: &CostFunctionsConfig, ctx: &mut RunContext) -> Result<()> {
    let sec = &cfg.cost_functions;
    let labels = planted_labels(&sec.cluster_sizes).context("cost_functions.cluster_sizes")?;
    let n = labels.len();
    let mut schemes: Vec<(WeightScheme, usize)> = vec![
        (WeightScheme::WithinOne, 0),
        (WeightScheme::PlusMinusOne, 0),
    ];
    for k in 0..sec.random_instances {
        let seed = ctx.seed().wrapping_mul(1_000_003).wrapping_add(k as u64);
        schemes.push((WeightScheme::Random(seed), k));
    }
    schemes.push((WeightScheme::NegatedWithinOne, 0));
    schemes.push((WeightScheme::NegatedPlusMinusOne, 0));
    let (trees, dps) = all_trees_with_purity(&labels)?;
    let pb = crate::experiment::progress_bar((schemes.len() * 2) as u64, "cases");
    let mut cases = Vec::new();
    for &(scheme, instance) in &schemes {
        let w = scheme.weights(&labels)?;
        for energy in Energy::ALL {
            let study = study(&w, &labels, energy, &trees, &dps)?;
            ensure!(
                study.trellis_n_map_trees == study.n_map_trees as u128,
                "the trellis counts {} MAP trees, enumeration {} ({}, {})",
                study.trellis_n_map_trees,
                study.n_map_trees,
                scheme.name(),
                energy.name()
            );
            ensure!(
                (study.trellis_energy - study.min_energy).abs()
                    <= 1e-9 * study.min_energy.abs().max(1.0),
                "the trellis MAP energy {} differs from the enumerated minimum {} ({}, {})",
                study.trellis_energy,
                study.min_energy,
                scheme.name(),
                energy.name()
            );
            ensure!(
                study.map_set_is_dp_one_set
                    == (study.n_map_trees == study.n_map_with_dp_one
                        && study.n_map_with_dp_one == study.n_dp_one),
                "the MAP set and the DP = 1 set disagree with their counts ({}, {})",
                scheme.name(),
                energy.name()
            );
            cases.push(Case {
                scheme,
                instance,
                energy,
                study,
            });
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let table = ctx.path("cost_functions.parquet");
    write_cases(&cases, class_node_counts(&trees, &dps, &labels), &table)?;

    // Decided from the numbers just written, exactly as `check` decides them.
    let claims = claims(&case_rows(&read_parquet(&table)?)?, &sec.cluster_sizes)?;
    Table::new()
        .str(
            "claim",
            &claims.iter().map(|c| c.0.clone()).collect::<Vec<_>>(),
        )
        .str(
            "holds",
            &claims.iter().map(|c| c.1.to_string()).collect::<Vec<_>>(),
        )
        .str(
            "evidence",
            &claims.iter().map(|c| c.2.clone()).collect::<Vec<_>>(),
        )
        .write_parquet(&ctx.path("claims.parquet"))?;
    let mut text = String::new();
    for (claim, holds, evidence) in &claims {
        text.push_str(&format!(
            "{} {claim}\n    {evidence}\n",
            if *holds { "HOLDS " } else { "FAILS " }
        ));
    }
    ctx.staging.write_string("claims.txt", &text)?;
    ctx.manifest.set("n_leaves", n);
    ctx.manifest.set(
        "claims_hold",
        claims.iter().map(|c| c.1).collect::<Vec<_>>(),
    );
    Ok(())
}

/// `cost_functions.parquet`: one row per scheme, instance and energy, in run order. The last
/// two columns are claim 1's per-tree counts (`per_tree`, the same in every row: they depend on
/// the labels only).
fn write_cases(cases: &[Case], per_tree: ClassNodeCounts, path: &std::path::Path) -> Result<()> {
    let f = |g: &dyn Fn(&Study) -> f64| cases.iter().map(|c| Some(g(&c.study))).collect::<Vec<_>>();
    let u = |g: &dyn Fn(&Case) -> usize| {
        cases
            .iter()
            .map(|c| Some(g(c) as u64))
            .collect::<Vec<_>>()
    };
    Table::new()
        .str(
            "scheme",
            &cases.iter().map(|c| c.scheme.name()).collect::<Vec<_>>(),
        )
        .u64("instance", &u(&|c| c.instance))
        .str(
            "energy",
            &cases.iter().map(|c| c.energy.name()).collect::<Vec<_>>(),
        )
        .f64("map_energy", &f(&|s| s.min_energy))
        .f64("trellis_map_energy", &f(&|s| s.trellis_energy))
        .u64("n_map_trees", &u(&|c| c.study.n_map_trees))
        .f64("map_dp_min", &f(&|s| s.map_dp.0))
        .f64("map_dp_max", &f(&|s| s.map_dp.1))
        .f64("map_dp_mean", &f(&|s| s.map_dp_mean))
        .u64("n_map_trees_with_dp_one", &u(&|c| c.study.n_map_with_dp_one))
        .f64("trellis_map_dp", &f(&|s| s.trellis_map_dp))
        .f64("all_trees_dp_min", &f(&|s| s.dp_range.0))
        .f64("all_trees_dp_max", &f(&|s| s.dp_range.1))
        .f64("all_trees_dp_mean", &f(&|s| s.mean_dp))
        .u64("n_dp_one_trees", &u(&|c| c.study.n_dp_one))
        .str(
            "map_set_is_dp_one_set",
            &cases
                .iter()
                .map(|c| c.study.map_set_is_dp_one_set.to_string())
                .collect::<Vec<_>>(),
        )
        .f64("energy_dp_correlation", &f(&|s| s.energy_dp_correlation))
        .u64(
            "n_class_respecting_trees",
            &u(&|_| per_tree.class_respecting),
        )
        .u64("n_dp_one_mismatches", &u(&|_| per_tree.mismatches))
        .write_parquet(path)
}

/// One row of `cost_functions.parquet`: the numbers the claims are decided from.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRow {
    /// Weight scheme (`WeightScheme::name`).
    pub scheme: String,
    /// Energy (`Energy::name`).
    pub energy: String,
    /// Smallest energy over all trees.
    pub map_energy: f64,
    /// Trees attaining it.
    pub n_map_trees: u64,
    /// Lowest DP of a MAP tree.
    pub map_dp_min: f64,
    /// Highest DP of a MAP tree.
    pub map_dp_max: f64,
    /// Mean DP of the MAP trees.
    pub map_dp_mean: f64,
    /// MAP trees with DP = 1.
    pub n_map_trees_with_dp_one: u64,
    /// Worst DP of any tree.
    pub all_trees_dp_min: f64,
    /// Best DP of any tree.
    pub all_trees_dp_max: f64,
    /// Mean DP over all trees.
    pub all_trees_dp_mean: f64,
    /// Trees with DP = 1.
    pub n_dp_one_trees: u64,
    /// Correlation of energy and DP over all trees (NaN if undefined).
    pub energy_dp_correlation: f64,
    /// Trees in which every class is a node (claim 1, counted tree by tree).
    pub n_class_respecting_trees: u64,
    /// Trees for which "DP = 1" and "every class is a node" disagree (claim 1).
    pub n_dp_one_mismatches: u64,
}

impl CaseRow {
    /// Whether the MAP trees are exactly the DP = 1 trees: every MAP tree has DP = 1 and every
    /// DP = 1 tree is a MAP tree, i.e. the three counts are equal.
    pub fn map_set_is_dp_one_set(&self) -> bool {
        self.n_map_trees == self.n_map_trees_with_dp_one
            && self.n_map_trees_with_dp_one == self.n_dp_one_trees
    }
}

/// The rows of `cost_functions.parquet` (a null number is an error).
pub fn case_rows(t: &DataFrame) -> Result<Vec<CaseRow>> {
    let context = || "cost_functions.parquet (re-run the config with --force)";
    let scheme = str_column(t, "scheme").with_context(context)?;
    let energy = str_column(t, "energy").with_context(context)?;
    let f = |c: &str| -> Result<Vec<f64>> {
        f64_column(t, c)
            .with_context(context)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| anyhow!("cost_functions.parquet: null {c} in row {i}")))
            .collect()
    };
    let u = |c: &str| -> Result<Vec<u64>> {
        u64_column(t, c)
            .with_context(context)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| anyhow!("cost_functions.parquet: null {c} in row {i}")))
            .collect()
    };
    let (map_energy, n_map_trees) = (f("map_energy")?, u("n_map_trees")?);
    let (map_dp_min, map_dp_max, map_dp_mean) =
        (f("map_dp_min")?, f("map_dp_max")?, f("map_dp_mean")?);
    let n_map_trees_with_dp_one = u("n_map_trees_with_dp_one")?;
    let (all_min, all_max, all_mean) = (
        f("all_trees_dp_min")?,
        f("all_trees_dp_max")?,
        f("all_trees_dp_mean")?,
    );
    let (n_dp_one_trees, corr) = (u("n_dp_one_trees")?, f("energy_dp_correlation")?);
    let (respecting, mismatches) = (u("n_class_respecting_trees")?, u("n_dp_one_mismatches")?);
    Ok((0..t.height())
        .map(|i| CaseRow {
            scheme: scheme[i].clone(),
            energy: energy[i].clone(),
            map_energy: map_energy[i],
            n_map_trees: n_map_trees[i],
            map_dp_min: map_dp_min[i],
            map_dp_max: map_dp_max[i],
            map_dp_mean: map_dp_mean[i],
            n_map_trees_with_dp_one: n_map_trees_with_dp_one[i],
            all_trees_dp_min: all_min[i],
            all_trees_dp_max: all_max[i],
            all_trees_dp_mean: all_mean[i],
            n_dp_one_trees: n_dp_one_trees[i],
            energy_dp_correlation: corr[i],
            n_class_respecting_trees: respecting[i],
            n_dp_one_mismatches: mismatches[i],
        })
        .collect())
}

/// One claim: its statement (`"<k>: ..."`), whether it holds, and the numbers behind it.
pub type Claim = (String, bool, String);

/// The five claims, decided from the rows of `cost_functions.parquet` and the planted cluster
/// sizes alone. `run` and `check` both call this on the same table, so they cannot disagree.
pub fn claims(rows: &[CaseRow], cluster_sizes: &[usize]) -> Result<Vec<Claim>> {
    let n: usize = cluster_sizes.iter().sum();
    let find = |scheme: WeightScheme, energy: Energy| {
        rows.iter()
            .find(|r| r.scheme == scheme.name() && r.energy == energy.name())
            .ok_or_else(|| anyhow!("no case {} / {}", scheme.name(), energy.name()))
    };
    let want_one = n_class_respecting_trees(cluster_sizes);
    let mut claims: Vec<Claim> = Vec::new();
    let s = find(WeightScheme::WithinOne, Energy::Dasgupta)?;
    let per_tree = s.n_dp_one_mismatches == 0;
    claims.push((
        "1: DP = 1 exactly for the trees in which every class is a subtree".into(),
        per_tree && s.all_trees_dp_max >= 1.0 - TIE && s.n_dp_one_trees as u128 == want_one,
        format!(
            "checked tree by tree over all {} trees: {}; max DP = {:.6}; {} trees have DP = 1, (2K-3)!! * prod (2k-3)!! = {want_one}",
            n_binary_trees(n).unwrap_or(u128::MAX),
            if per_tree { "DP = 1 iff every class is a node" } else { "some tree breaks the equivalence" },
            s.all_trees_dp_max,
            s.n_dp_one_trees
        ),
    ));
    claims.push((
        "2: 1/0 weights: MAP trees of Dasgupta's cost = trees with DP = 1".into(),
        s.map_set_is_dp_one_set(),
        format!(
            "{} MAP trees (cost {}), DP of MAP trees {:.4}..{:.4}",
            s.n_map_trees, s.map_energy, s.map_dp_min, s.map_dp_max
        ),
    ));
    let s = find(WeightScheme::PlusMinusOne, Energy::Hcc)?;
    claims.push((
        "3: +1/-1 weights: MAP trees of HCC = trees with DP = 1".into(),
        s.map_set_is_dp_one_set(),
        format!(
            "{} MAP trees (energy {}): {} of the {} DP = 1 trees and {} others; DP of MAP trees {:.4}..{:.4}",
            s.n_map_trees,
            s.map_energy,
            s.n_map_trees_with_dp_one,
            s.n_dp_one_trees,
            s.n_map_trees.saturating_sub(s.n_map_trees_with_dp_one),
            s.map_dp_min,
            s.map_dp_max
        ),
    ));
    // Claim 4, per energy: the mean DP over each matrix's MAP trees against the mean DP over all
    // trees, across the random matrices; and the correlation of energy and DP over all trees.
    let mut verdict4 = true;
    let mut evidence4 = Vec::new();
    for energy in Energy::ALL {
        let rows: Vec<(f64, f64, f64)> = rows
            .iter()
            .filter(|r| r.scheme == WeightScheme::Random(0).name() && r.energy == energy.name())
            .map(|r| (r.map_dp_mean, r.all_trees_dp_mean, r.energy_dp_correlation))
            .collect();
        let r = RandomSummary::of(&rows);
        let holds = r.unrelated();
        verdict4 &= holds;
        evidence4.push(format!(
            "{}: MAP trees' DP minus the mean over all trees {:+.4} (sd {:.4} over {} matrices) -> {}; corr(energy, DP) over all trees {:+.4}, negative in {} of {}",
            energy.name(),
            r.mean_diff,
            r.sd,
            r.n,
            if holds { "unrelated" } else { "related" },
            r.corr_mean,
            r.negative,
            r.n_corr
        ));
    }
    claims.push((
        "4: random weights: MAP trees' DP unrelated to the planted clustering".into(),
        verdict4,
        evidence4.join("; "),
    ));
    let s1 = find(WeightScheme::NegatedWithinOne, Energy::Dasgupta)?;
    let s2 = find(WeightScheme::NegatedPlusMinusOne, Energy::Hcc)?;
    claims.push((
        "5: negated weights: every MAP tree has the worst DP".into(),
        s1.map_dp_max <= s1.all_trees_dp_min + TIE && s2.map_dp_max <= s2.all_trees_dp_min + TIE,
        format!(
            "Dasgupta -(1/0): MAP DP {:.4}..{:.4}, worst DP {:.4}; HCC -(+1/-1): MAP DP {:.4}..{:.4}, worst DP {:.4}",
            s1.map_dp_min, s1.map_dp_max, s1.all_trees_dp_min, s2.map_dp_min, s2.map_dp_max, s2.all_trees_dp_min
        ),
    ));
    Ok(claims)
}
