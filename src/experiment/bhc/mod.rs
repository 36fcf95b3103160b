//! `kind = "bhc"`: Bayesian hierarchical clustering (Heller & Ghahramani, ICML 2005) and greedy
//! Bayesian rose trees (Blundell, Teh & Heller, UAI 2010) against the exact answers the
//! trellises give ([`crate::bhc`]).
//!
//! For every data set and every N in `bhc.sizes`, `bhc.subsets` random subsets of N rows
//! (seeded from the master seed, the data set's place in the list, N and the subset's number,
//! so the same at any thread count). Per subset, one journalled job ([`crate::experiment::jobs`]:
//! a killed run resumes): the exact DPM evidence `log p(D)`, BHC's bound
//! `log[f(T) Γ(α)/Γ(N+α)]` and its gap, the best and the average BHC tree over all binary trees,
//! the ARI of BHC's `r_k < 0.5` cut against the exact MAP partition, BHC's implied co-clustering
//! against the exact marginals, the sparse flat trellis over the BHC tree's clusters (which must
//! give BHC's own `f`), and greedy BRT against the exact best rose tree for N up to
//! `bhc.rose_max_n`.
//!
//! Config: `[bhc]` ([`BhcSection`]) with `[[bhc.datasets]]` ([`DatasetSpec`]). Outputs:
//! `bhc.parquet` (one row per subset), `summary.parquet` (mean and standard error per data set
//! and N), `coclustering.parquet` (every pair of every subset, exact and BHC) and the figures of
//! [`figures`].

mod data;
mod figures;
mod measures;
mod run;
#[cfg(test)]
mod tests;

use crate::experiment::check::Measure;
use crate::experiment::kind::{Experiment, Results, RunContext};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use trellis_core::bhc::exact::{MAX_EXACT_POINTS, MAX_TREE_DP_POINTS};
use trellis_core::bhc::rose::MAX_ROSE_POINTS;

pub use data::{DatasetSpec, Format, ModelName};

/// The BHC kind.
pub struct Bhc;

/// `kind = "bhc"`: `[bhc]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BhcConfig {
    /// The sizes, subsets, hyperparameters and data sets.
    pub bhc: BhcSection,
}

/// `[bhc]`: which subsets, the DP concentration, BRT's `γ` and the data sets.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BhcSection {
    /// The numbers of points N (2 to 20 each).
    pub sizes: Vec<usize>,
    /// Random subsets per data set and N (default 3).
    #[serde(default = "three")]
    pub subsets: usize,
    /// The DP concentration α (default 1).
    #[serde(default = "one")]
    pub alpha: f64,
    /// BRT's γ ∈ (0, 1] (default 0.5).
    #[serde(default = "half")]
    pub brt_gamma: f64,
    /// The exact best rose tree runs for N up to this (default 14, at most 18).
    #[serde(default = "fourteen")]
    pub rose_max_n: usize,
    /// The subset whose co-clustering matrices the heatmap figure shows (default: the first
    /// data set, the largest N, subset 0).
    #[serde(default)]
    pub heatmap: Option<HeatmapPick>,
    /// The data sets.
    pub datasets: Vec<DatasetSpec>,
}

/// `[bhc.heatmap]`: one subset by data set name, N and number.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HeatmapPick {
    /// A data set's `name`.
    pub dataset: String,
    /// One of `bhc.sizes`.
    pub n: usize,
    /// Below `bhc.subsets` (default 0).
    #[serde(default)]
    pub subset: usize,
}

fn three() -> usize {
    3
}
fn one() -> f64 {
    1.0
}
fn half() -> f64 {
    0.5
}
fn fourteen() -> usize {
    14
}

/// The largest N: the exact evidence and the best-tree recursion (both `O(3^N)`) at N = 20
/// take seconds each.
pub const MAX_N: usize = 20;

impl BhcSection {
    /// The heatmap's subset: the configured one, else the first data set's largest N, subset 0.
    pub fn heatmap_pick(&self) -> HeatmapPick {
        self.heatmap.clone().unwrap_or_else(|| HeatmapPick {
            dataset: self.datasets.first().map_or_else(String::new, |d| d.name.clone()),
            n: self.sizes.iter().copied().max().unwrap_or(0),
            subset: 0,
        })
    }
}

impl Experiment for Bhc {
    type Config = BhcConfig;

    fn name(&self) -> &'static str {
        "bhc"
    }

    fn about(&self) -> &'static str {
        "BHC's bound, greedy vs best BHC tree, greedy vs best rose tree, cut and co-clustering against the exact DPM posterior on data subsets"
    }

    fn resolve_paths(&self, cfg: &mut BhcConfig, base: &Path) {
        for d in &mut cfg.bhc.datasets {
            d.path = base.join(&d.path);
        }
    }

    fn validate(&self, cfg: &BhcConfig) -> Result<(), String> {
        validate(&cfg.bhc)
    }

    fn inputs(&self, cfg: &BhcConfig) -> Vec<PathBuf> {
        cfg.bhc.datasets.iter().map(|d| d.path.clone()).collect()
    }

    fn run(&self, cfg: &BhcConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(cfg, ctx)
    }

    fn shardable(&self) -> bool {
        true
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        measures::measures(results)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        measures::properties(results)
    }
}

fn validate(s: &BhcSection) -> Result<(), String> {
    let limit = MAX_N.min(MAX_EXACT_POINTS).min(MAX_TREE_DP_POINTS);
    if s.sizes.is_empty() || s.sizes.iter().any(|&n| !(2..=limit).contains(&n)) {
        return Err(format!(
            "bhc.sizes must list numbers of points between 2 and {limit}, e.g. [8, 9, 10]"
        ));
    }
    let mut sorted = s.sizes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != s.sizes.len() {
        return Err("bhc.sizes lists a size twice; list each N once".into());
    }
    if s.subsets == 0 || s.subsets > 1000 {
        return Err("bhc.subsets must be between 1 and 1000".into());
    }
    if !(s.alpha > 0.0 && s.alpha.is_finite()) {
        return Err("bhc.alpha (the DP concentration) must be positive and finite, e.g. 1".into());
    }
    if !(s.brt_gamma > 0.0 && s.brt_gamma <= 1.0) {
        return Err("bhc.brt_gamma must be in (0, 1], e.g. 0.5".into());
    }
    if s.rose_max_n > MAX_ROSE_POINTS {
        return Err(format!(
            "bhc.rose_max_n must be at most {MAX_ROSE_POINTS} (the exact best rose tree is O(N 3^N))"
        ));
    }
    if s.datasets.is_empty() {
        return Err("bhc.datasets must list at least one data set ([[bhc.datasets]])".into());
    }
    for (i, d) in s.datasets.iter().enumerate() {
        d.validate(i)?;
        if s.datasets[..i].iter().any(|e| e.name == d.name) {
            return Err(format!(
                "bhc.datasets[{i}].name = {:?} is used twice; give each data set its own name",
                d.name
            ));
        }
    }
    if let Some(h) = &s.heatmap {
        if !s.datasets.iter().any(|d| d.name == h.dataset) {
            return Err(format!(
                "bhc.heatmap.dataset = {:?} is not the name of a data set in bhc.datasets",
                h.dataset
            ));
        }
        if !s.sizes.contains(&h.n) {
            return Err(format!("bhc.heatmap.n = {} is not one of bhc.sizes", h.n));
        }
        if h.subset >= s.subsets {
            return Err(format!(
                "bhc.heatmap.subset = {} must be below bhc.subsets = {}",
                h.subset, s.subsets
            ));
        }
    }
    Ok(())
}
