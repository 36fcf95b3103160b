//! `kind = "posterior_sampling"` (Cluster Trellis paper, Figure 6): exact samples from the
//! posterior over the trees of one jet, against the exact posterior mass, with the posterior's
//! entropy and every cluster marginal.
//!
//! Draws `n_samples` trees with [`crate::exact::PosteriorSampler`], enumerates all trees to get
//! the exact posterior mass at each distinct log-likelihood value, and compares the two (and, if
//! given, another sampler's draws) with chi-square goodness-of-fit tests.
//!
//! Config: `[jets]` (where the jets come from, [`JetsSection`]), `[posterior_sampling]`
//! ([`PosteriorSamplingSection`]) and optionally `[methods]`, of which only
//! `max_exact_leaves` applies. Outputs: `posterior_samples.parquet` (one row per distinct
//! log-likelihood value), `summary.parquet` (one row per quantity: log Z, MAP, entropy,
//! chi-square tests, ...), `cluster_marginals.parquet` (every cluster's marginal) and
//! `fig6_posterior_sampling.png/.svg`.

mod figures;
mod run;
#[cfg(test)]
mod tests;

use crate::experiment::check::Measure;
use crate::experiment::jets::JetsSection;
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::methods::MethodsSection;
use crate::experiment::table::{f64_column, u64_column};
use figures::Summary;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Largest `posterior_sampling.max_enumerate_leaves`: 10 leaves are 34,459,425 trees.
pub const MAX_ENUMERATE_LEAVES: usize = 10;

/// Smallest chi-square p-value counted as agreement of samples with the exact posterior.
pub const P_VALUE_FLOOR: f64 = 1e-3;

/// The posterior-sampling kind.
pub struct PosteriorSampling;

/// Most trees drawn in one run (about 17 minutes at 1 µs each).
pub const MAX_SAMPLES: usize = 1_000_000_000;

/// `kind = "posterior_sampling"`: `[jets]`, `[posterior_sampling]` and optionally `[methods]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PosteriorSamplingConfig {
    /// Where the jets come from; `posterior_sampling.jet_index` picks one of them.
    pub jets: JetsSection,
    /// Only `max_exact_leaves` applies (the exact trellis's size limit, default 22).
    #[serde(default)]
    pub methods: MethodsSection,
    /// What to sample.
    pub posterior_sampling: PosteriorSamplingSection,
}

/// `[posterior_sampling]`: Figure 6 of the paper.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PosteriorSamplingSection {
    /// Trees to draw from the exact posterior (the paper draws 100,000).
    pub n_samples: usize,
    /// Which jet of the dataset (0-based, default 0).
    #[serde(default)]
    pub jet_index: usize,
    /// Optional JSON file with another sampler's draws (`sample_loglh`: the log-likelihood of
    /// each sampled tree), tested and drawn in the same chart (relative paths: relative to the
    /// config file).
    #[serde(default)]
    pub reference_samples: Option<PathBuf>,
    /// Largest N for which all trees are enumerated to get the exact mass per log-likelihood
    /// value (default 9: 2,027,025 trees; at most 10).
    #[serde(default = "default_max_enumerate")]
    pub max_enumerate_leaves: usize,
}

fn default_max_enumerate() -> usize {
    9
}

impl Experiment for PosteriorSampling {
    type Config = PosteriorSamplingConfig;

    fn name(&self) -> &'static str {
        "posterior_sampling"
    }

    fn about(&self) -> &'static str {
        "exact samples from the posterior over the trees of one jet against the exact mass (Figure 6)"
    }

    fn resolve_paths(&self, cfg: &mut PosteriorSamplingConfig, base: &Path) {
        cfg.jets.resolve_paths(base);
        if let Some(p) = cfg.posterior_sampling.reference_samples.as_mut() {
            crate::experiment::config::resolve(p, base);
        }
    }

    fn validate(&self, cfg: &PosteriorSamplingConfig) -> Result<(), String> {
        cfg.jets.validate(true)?;
        cfg.methods.validate()?;
        cfg.methods.check_only(self.name(), &["max_exact_leaves"])?;
        let s = &cfg.posterior_sampling;
        if s.n_samples == 0 {
            return Err("posterior_sampling.n_samples must be at least 1".into());
        }
        // Draws stream into counts (no memory per draw): about 1 µs each at the paper's N = 5.
        crate::experiment::limits::check_size(
            "posterior_sampling.n_samples",
            s.n_samples,
            MAX_SAMPLES,
            crate::experiment::limits::UnitCost {
                unit: "tree drawn",
                bytes: 0.0,
                seconds: 1e-6,
            },
        )?;
        if s.max_enumerate_leaves > MAX_ENUMERATE_LEAVES {
            return Err(format!(
                "posterior_sampling.max_enumerate_leaves = {} would enumerate more than 3e7 trees; use at most {MAX_ENUMERATE_LEAVES}",
                s.max_enumerate_leaves
            ));
        }
        Ok(())
    }

    fn inputs(&self, cfg: &PosteriorSamplingConfig) -> Vec<PathBuf> {
        let mut v = cfg.jets.inputs();
        v.extend(cfg.posterior_sampling.reference_samples.iter().cloned());
        v
    }

    fn run(&self, cfg: &PosteriorSamplingConfig, ctx: &mut RunContext) -> Result<()> {
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
        crate::experiment::properties::posterior_sampling(results)
    }
}

/// 1 when `p` is a p-value above [`P_VALUE_FLOOR`], else 0.
fn agrees(p: Option<f64>) -> f64 {
    p.is_some_and(|p| p > P_VALUE_FLOOR) as u8 as f64
}

/// `fig6.<quantity>` for every row of `summary.parquet`, the sum of the exact probabilities,
/// the number of cluster marginals, whether the truth tree is a MAP tree, and the chi-square
/// verdicts (`fig6.*_agrees`: 1 when the p-value is above [`P_VALUE_FLOOR`]).
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let s = Summary::read(results)?;
    let get = |k: &str| s.get(k);
    let mut out: Vec<Measure> = s
        .rows
        .iter()
        .map(|(q, v)| {
            Measure::new(
                format!("fig6.{q}"),
                format!("Figure 6: {}", q.replace('_', " ")),
                v.unwrap_or(f64::NAN),
            )
        })
        .collect();
    for (id, what, p) in [
        (
            "fig6.samples_agree_by_tree",
            "Figure 6: our samples agree with the exact posterior over trees (χ² p > 1e-3)",
            "chi2_by_tree_p_value",
        ),
        (
            "fig6.samples_agree_by_value",
            "Figure 6: our samples agree with the exact mass per log-likelihood value (χ² p > 1e-3)",
            "chi2_by_value_p_value",
        ),
        (
            "fig6.reference_agrees_by_value",
            "Figure 6: the reference sampler's draws agree with the exact mass per value (χ² p > 1e-3)",
            "reference_chi2_by_value_p_value",
        ),
    ] {
        if s.rows.iter().any(|(q, _)| q == p) {
            out.push(Measure::new(id, what, agrees(get(p))));
        }
    }
    let p = results.table("posterior_samples")?;
    let exact = f64_column(&p, "exact_probability")?;
    out.push(Measure::new(
        "fig6.exact_probability_sum",
        "Figure 6: sum of the exact posterior masses",
        exact.iter().map(|x| x.unwrap_or(f64::NAN)).sum(),
    ));
    let is_truth = u64_column(&p, "is_truth")?;
    let ll = f64_column(&p, "log_likelihood")?;
    if get("truth_log_likelihood").is_some() {
        // The truth tree's value is the highest one (the MAP value).
        let top = (0..p.height()).max_by(|&a, &b| {
            ll[a]
                .unwrap_or(f64::NEG_INFINITY)
                .total_cmp(&ll[b].unwrap_or(f64::NEG_INFINITY))
        });
        out.push(Measure::new(
            "fig6.truth_is_map",
            "Figure 6: the truth tree has the MAP log-likelihood",
            top.is_some_and(|i| is_truth[i] == Some(1)) as u8 as f64,
        ));
    }
    let m = results.table("cluster_marginals")?;
    out.push(Measure::new(
        "fig6.n_cluster_marginals",
        "Figure 6: clusters with a marginal",
        m.height() as f64,
    ));
    Ok(out)
}
