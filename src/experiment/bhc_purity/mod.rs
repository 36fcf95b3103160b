//! `kind = "bhc_purity"` (Heller & Ghahramani, "Bayesian Hierarchical Clustering", ICML 2005,
//! Table 1): the dendrogram purity of single, complete and average linkage and of greedy BHC on
//! labelled data, over repetitions on random class-balanced subsets, beside the paper's values.
//!
//! Per data set (`[[bhc_purity.datasets]]`) and repetition: a subset of at most `per_class`
//! points of each class (all of a class that has fewer), drawn by a generator seeded by
//! (seed, data set, repetition); the three linkages on Euclidean distances of the points as BHC
//! sees them (binarised for the binary data sets, raw for Gaussian ones); BHC
//! ([`trellis_core::bhc::bhc_greedy`]) with the Beta–Bernoulli model for binary data and the
//! Normal–Inverse-Wishart model for real data, both with the data-centred priors of the core
//! ([`trellis_core::bhc::BetaBernoulli::from_data`], [`trellis_core::bhc::NormalInverseWishart::from_data`])
//! fitted to the subset; dendrogram purity by [`crate::hierarchy::Hierarchy::dendrogram_purity`].
//! Each repetition also scores the tree that joins each class first (purity 1 by definition: a
//! property `check` verifies on every run).
//!
//! Outputs: `purity_repetitions.parquet` (one row per data set, repetition and method),
//! `purity.parquet` (per data set and method: mean, standard error over repetitions and the
//! paper's mean ± s.e. where it has the row), `subsets.parquet` (the rows of every subset) and
//! `purity.png/.svg` (ours against the paper, ± one s.e.).

mod figures;
mod paper;
mod run;
#[cfg(test)]
mod tests;

pub use paper::{paper_value, PAPER, PAPER_ROWS};

use crate::experiment::check::Measure;
use crate::experiment::config::{one_f64, positive, resolve};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::properties::property;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The bhc_purity kind.
pub struct BhcPurity;

/// `kind = "bhc_purity"`: `[bhc_purity]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BhcPurityConfig {
    /// The data sets, repetitions and hyperparameters.
    pub bhc_purity: BhcPuritySection,
}

/// `[bhc_purity]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BhcPuritySection {
    /// Random subsets per data set (at least 2, for a standard error).
    pub repetitions: usize,
    /// The DP concentration `α` of BHC (default 1).
    #[serde(default = "one_f64")]
    pub alpha: f64,
    /// Prior strength `a_d + b_d` of the Beta–Bernoulli model, centred on the subset's feature
    /// frequencies (default 2).
    #[serde(default = "two_f64")]
    pub bernoulli_strength: f64,
    /// `κ₀` of the Normal–Inverse-Wishart model (default 0.1).
    #[serde(default = "kappa0")]
    pub niw_kappa0: f64,
    /// `S₀ = niw_scale · diag(variances of the subset)` (default 0.25).
    #[serde(default = "niw_scale")]
    pub niw_scale: f64,
    /// The data sets, in table order.
    pub datasets: Vec<DatasetSection>,
}

/// One `[[bhc_purity.datasets]]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatasetSection {
    /// Name in the tables (unique).
    pub name: String,
    /// The paper's row it stands for (one of [`PAPER_ROWS`]), if any.
    #[serde(default)]
    pub paper: Option<String>,
    /// A CSV file: a header, feature columns, and the class in column `class` (relative paths
    /// are relative to the config file).
    pub file: PathBuf,
    /// `"bernoulli"` (binary features) or `"gaussian"` (real features).
    pub model: ModelKind,
    /// With it, a feature is 1 when its value is at least this, else 0 (before anything else).
    #[serde(default)]
    pub binarise_at: Option<f64>,
    /// Only these classes (by name); default all.
    #[serde(default)]
    pub classes: Option<Vec<String>>,
    /// At most this many points of each class per subset (all of a class with fewer).
    pub per_class: usize,
}

/// The cluster model of BHC.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Beta–Bernoulli per feature; the data must be 0/1.
    Bernoulli,
    /// Full-covariance Gaussian with the Normal–Inverse-Wishart prior.
    Gaussian,
}

fn two_f64() -> f64 {
    2.0
}
fn kappa0() -> f64 {
    0.1
}
fn niw_scale() -> f64 {
    0.25
}

/// The methods, in table order.
pub const METHODS: [&str; 4] = ["single", "complete", "average", "bhc"];

impl Experiment for BhcPurity {
    type Config = BhcPurityConfig;

    fn name(&self) -> &'static str {
        "bhc_purity"
    }

    fn about(&self) -> &'static str {
        "dendrogram purity of BHC against single, complete and average linkage (Heller & Ghahramani 2005, Table 1)"
    }

    fn resolve_paths(&self, cfg: &mut BhcPurityConfig, base: &Path) {
        for d in &mut cfg.bhc_purity.datasets {
            resolve(&mut d.file, base);
        }
    }

    fn validate(&self, cfg: &BhcPurityConfig) -> Result<(), String> {
        let s = &cfg.bhc_purity;
        if s.repetitions < 2 {
            return Err(format!(
                "bhc_purity.repetitions = {} must be at least 2 (a standard error needs two)",
                s.repetitions
            ));
        }
        positive("bhc_purity.alpha", s.alpha)?;
        positive("bhc_purity.bernoulli_strength", s.bernoulli_strength)?;
        positive("bhc_purity.niw_kappa0", s.niw_kappa0)?;
        positive("bhc_purity.niw_scale", s.niw_scale)?;
        if s.datasets.is_empty() {
            return Err("bhc_purity.datasets is empty; add a [[bhc_purity.datasets]]".into());
        }
        for (k, d) in s.datasets.iter().enumerate() {
            if d.name.is_empty() || s.datasets[..k].iter().any(|e| e.name == d.name) {
                return Err(format!(
                    "bhc_purity.datasets[{k}].name {:?} is empty or used twice; give each data set its own name",
                    d.name
                ));
            }
            if let Some(p) = &d.paper {
                if !PAPER_ROWS.contains(&p.as_str()) {
                    return Err(format!(
                        "bhc_purity.datasets[{k}].paper = {p:?} is not a row of the paper's table; use one of {PAPER_ROWS:?} or leave it out"
                    ));
                }
            }
            if d.per_class < 2 {
                return Err(format!(
                    "bhc_purity.datasets[{k}].per_class = {} must be at least 2: dendrogram purity needs two points of one class",
                    d.per_class
                ));
            }
            if let Some(t) = d.binarise_at {
                if !t.is_finite() {
                    return Err(format!(
                        "bhc_purity.datasets[{k}].binarise_at = {t} must be a finite number"
                    ));
                }
            }
            if d.classes.as_ref().is_some_and(|c| c.len() < 2) {
                return Err(format!(
                    "bhc_purity.datasets[{k}].classes lists fewer than 2 classes; list at least 2 or leave it out"
                ));
            }
        }
        Ok(())
    }

    fn inputs(&self, cfg: &BhcPurityConfig) -> Vec<PathBuf> {
        cfg.bhc_purity.datasets.iter().map(|d| d.file.clone()).collect()
    }

    fn run(&self, cfg: &BhcPurityConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(&cfg.bhc_purity, ctx)
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
        measures(results)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        properties(results)
    }
}

/// `table1.<data set>.<method>.mean` and `.se` from `purity.parquet`.
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("purity")?;
    let (ds, m) = (str_column(&t, "dataset")?, str_column(&t, "method")?);
    let (mean, se) = (f64_column(&t, "mean")?, f64_column(&t, "se")?);
    let mut out = Vec::new();
    for i in 0..t.height() {
        let what = format!("{}, {}: dendrogram purity", ds[i], m[i]);
        out.push(Measure::new(
            format!("table1.{}.{}.mean", ds[i], m[i]),
            format!("{what}, mean over repetitions"),
            mean[i].unwrap_or(f64::NAN),
        ));
        out.push(Measure::new(
            format!("table1.{}.{}.se", ds[i], m[i]),
            format!("{what}, standard error"),
            se[i].unwrap_or(f64::NAN),
        ));
    }
    Ok(out)
}

/// Counts of violations, 0 on every run: a purity outside [0, 1]; a class-first tree whose
/// purity is not 1; a summary row whose mean, standard error or count differs from its
/// repetitions' (recomputed from `purity_repetitions.parquet`).
pub fn properties(results: &Results) -> Result<Vec<Measure>> {
    let r = results.table("purity_repetitions")?;
    let (ds, m) = (str_column(&r, "dataset")?, str_column(&r, "method")?);
    let p = f64_column(&r, "purity")?;
    let pure = f64_column(&r, "class_tree_purity")?;
    let outside = p
        .iter()
        .filter(|v| !v.is_some_and(|v| (0.0..=1.0).contains(&v)))
        .count();
    let not_one = pure.iter().filter(|v| **v != Some(1.0)).count();
    let t = results.table("purity")?;
    let (tds, tm) = (str_column(&t, "dataset")?, str_column(&t, "method")?);
    let (mean, se) = (f64_column(&t, "mean")?, f64_column(&t, "se")?);
    let n = u64_column(&t, "repetitions")?;
    let mut off = 0;
    for i in 0..t.height() {
        let v: Vec<f64> = (0..r.height())
            .filter(|&k| ds[k] == tds[i] && m[k] == tm[i])
            .filter_map(|k| p[k])
            .collect();
        let (mu, s) = run::mean_se(&v);
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() <= 1e-12);
        off += usize::from(!close(mean[i], mu) || !close(se[i], s) || n[i] != Some(v.len() as u64));
    }
    Ok(vec![
        property(
            "purity_in_unit_interval",
            "property: dendrogram purities outside [0, 1]",
            outside,
        ),
        property(
            "class_tree_purity_is_one",
            "property: trees joining each class first whose purity is not 1",
            not_one,
        ),
        property(
            "summary_matches_repetitions",
            "property: summary rows whose mean, s.e. or count differ from their repetitions'",
            off,
        ),
    ])
}
