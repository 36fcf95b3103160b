//! `kind = "flat_pam50"`: the flat cluster trellis paper's Figures 2–5 on a pam50 subsample:
//! exact pairwise marginals of correlation clustering over all Bell(N) flat clusterings, against
//! the pairwise affinities (Figure 2) and against Perturb-and-MAP (Figure 3), as heatmaps
//! (Figures 4 and 5), with the MAP clustering.
//!
//! The paper's data (11 TCGA patients) are not public; a seeded stratified pam50 subsample of
//! 11 stands in (2 per known subtype and 1 without one). Affinities follow the paper's
//! preprocessing: `exp(-d / h)` of the Euclidean distance between expression profiles, minus
//! the mean over all pairs; `log E(C) = β Σ_{i<j in C} a_ij`.
//!
//! Config: `[flat_pam50]` ([`FlatPam50Section`]) and `[methods]` (only `max_exact_leaves`
//! matters). Outputs: `flat_pairs.parquet` (per pair: names and subtypes, affinity, exact
//! marginal and its log, Perturb-and-MAP estimates), `flat_summary.parquet` (log Z, MAP, errors),
//! `map_clustering.txt`, and the charts `fig2_affinity_vs_marginal`, `fig3_perturb_vs_exact`,
//! `fig4_affinities`, `fig5_marginals` (PNG + SVG), drawn from the two tables and the manifest's
//! `map_clustering`.

mod figures;
mod run;
#[cfg(test)]
mod tests;

use crate::data::pam50::{Bandwidth, Pam50};
use crate::experiment::check::Measure;
use crate::experiment::config::{one_f64, resolve, yes};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::methods::MethodsSection;
use crate::experiment::table::{f64_column, first_value, u64_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The flat-clustering kind.
pub struct FlatPam50;

/// Most Perturb-and-MAP draws in one run (about 15 minutes at the paper's 11 samples).
pub const MAX_DRAWS: usize = 10_000_000;

/// `kind = "flat_pam50"`: `[flat_pam50]` and, optionally, `[methods]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlatPam50Config {
    /// The data and the energy.
    pub flat_pam50: FlatPam50Section,
    /// Only `max_exact_leaves` applies (the largest subsample the exact flat trellis takes);
    /// any other key set is an error.
    #[serde(default)]
    pub methods: MethodsSection,
}

/// `[flat_pam50]`: which pam50 samples, how they become affinities, and Perturb-and-MAP.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlatPam50Section {
    /// Folder with `pam50_unc232_expr.tsv` and `pam50_unc232_labels.tsv` (relative paths are
    /// relative to the config file).
    pub path: PathBuf,
    /// Samples drawn from each known subtype (default 2).
    #[serde(default = "two")]
    pub per_class: usize,
    /// Samples drawn without a subtype (default 1).
    #[serde(default = "one")]
    pub unlabelled: usize,
    /// Length scale `h` of the affinities `exp(-d / h)`: a positive number, or `"median"` (the
    /// default) for the median pairwise distance (the paper's preprocessing is `h = 1`).
    #[serde(default = "median_bandwidth")]
    pub bandwidth: BandwidthSetting,
    /// Subtract the mean pairwise affinity so that both signs occur (default true, as the
    /// paper does).
    #[serde(default = "yes")]
    pub centre: bool,
    /// Inverse temperature `β` on the affinities, `log E(C) = β Σ_{i<j in C} a_ij` (default 1;
    /// finite and >= 0; a `β` so large that log Z overflows is an error of the run).
    #[serde(default = "one_f64")]
    pub beta: f64,
    /// Perturb-and-MAP draws, each an exact MAP on Gumbel-perturbed affinities (default 1000,
    /// at least 1).
    #[serde(default = "default_draws")]
    pub perturb_draws: usize,
}

/// A bandwidth in config: a number or `"median"`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum BandwidthSetting {
    /// A fixed length scale.
    Fixed(f64),
    /// `"median"`.
    Named(String),
}

impl BandwidthSetting {
    /// The bandwidth, or an error naming the accepted values.
    pub fn resolve(&self) -> Result<Bandwidth, String> {
        match self {
            BandwidthSetting::Fixed(h) if h.is_finite() && *h > 0.0 => Ok(Bandwidth::Fixed(*h)),
            BandwidthSetting::Named(s) if s == "median" => Ok(Bandwidth::Median),
            BandwidthSetting::Fixed(h) => Err(format!(
                "flat_pam50.bandwidth = {h} must be a positive number or \"median\""
            )),
            BandwidthSetting::Named(s) => Err(format!(
                "flat_pam50.bandwidth = {s:?} must be a positive number or \"median\""
            )),
        }
    }
}

fn two() -> usize {
    2
}

fn one() -> usize {
    1
}

fn default_draws() -> usize {
    1000
}

fn median_bandwidth() -> BandwidthSetting {
    BandwidthSetting::Named("median".into())
}

impl Experiment for FlatPam50 {
    type Config = FlatPam50Config;

    fn name(&self) -> &'static str {
        "flat_pam50"
    }

    fn about(&self) -> &'static str {
        "exact flat-clustering marginals of pam50 samples against Perturb-and-MAP (flat trellis paper, Figures 2-5)"
    }

    fn resolve_paths(&self, cfg: &mut FlatPam50Config, base: &Path) {
        resolve(&mut cfg.flat_pam50.path, base);
    }

    fn validate(&self, cfg: &FlatPam50Config) -> Result<(), String> {
        let f = &cfg.flat_pam50;
        f.bandwidth.resolve()?;
        if !(f.beta.is_finite() && f.beta >= 0.0) {
            return Err(format!(
                "flat_pam50.beta = {} must be a finite number >= 0",
                f.beta
            ));
        }
        if f.per_class == 0 && f.unlabelled < 2 {
            return Err(
                "flat_pam50 needs at least two samples: raise flat_pam50.per_class or flat_pam50.unlabelled"
                    .into(),
            );
        }
        if f.perturb_draws == 0 {
            return Err("flat_pam50.perturb_draws must be at least 1".into());
        }
        // Each draw is an exact flat MAP under fresh Gumbel noise: about 90 µs at 11 samples,
        // times 3 per extra sample; its pair counts are all that is kept.
        let n = (5usize.saturating_mul(f.per_class)).saturating_add(f.unlabelled);
        crate::experiment::limits::check_size(
            "flat_pam50.perturb_draws",
            f.perturb_draws,
            MAX_DRAWS,
            crate::experiment::limits::UnitCost {
                unit: "draw",
                bytes: 0.0,
                seconds: 9e-5 * 3f64.powi(n.min(64) as i32 - 11),
            },
        )?;
        cfg.methods.validate()?;
        cfg.methods.check_only(self.name(), &["max_exact_leaves"])
    }

    fn inputs(&self, cfg: &FlatPam50Config) -> Vec<PathBuf> {
        Pam50::files(&cfg.flat_pam50.path).to_vec()
    }

    fn run(&self, cfg: &FlatPam50Config, ctx: &mut RunContext) -> Result<()> {
        run::run(cfg, ctx)
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        let s = results.table("flat_summary")?;
        let mut out = Vec::new();
        for (id, what) in [
            ("log_z", "log partition function over all flat clusterings"),
            ("map_log_energy", "log-energy of the MAP clustering"),
            ("map_probability", "probability of the MAP clustering"),
            ("n_clusterings", "flat clusterings, Bell(N)"),
            (
                "perturb_mean_abs_error",
                "Perturb-and-MAP (Gumbel noise as in the paper): mean |error| of the pairwise marginals",
            ),
            (
                "perturb_max_abs_error",
                "Perturb-and-MAP (as in the paper): largest |error| of a pairwise marginal",
            ),
            (
                "perturb_centred_mean_abs_error",
                "Perturb-and-MAP with the noise's mean removed: mean |error| of the pairwise marginals",
            ),
            (
                "corr_pair_energy_log_marginal",
                "correlation of pairwise energies and exact log pairwise marginals (Figure 2)",
            ),
        ] {
            out.push(Measure::new(id, what, first_value(&f64_column(&s, id)?, id)?));
        }
        for (id, what) in [
            ("n_points", "samples"),
            ("map_n_clusters", "clusters in the MAP clustering"),
            (
                "perturb_overestimates",
                "pairs whose marginal Perturb-and-MAP (as in the paper) overestimates",
            ),
            ("pairs", "pairs of samples"),
        ] {
            let v = first_value(&u64_column(&s, id)?, id)?;
            out.push(Measure::new(id, what, v as f64));
        }
        Ok(out)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        crate::experiment::properties::flat_pam50(results)
    }
}
