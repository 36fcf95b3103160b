//! `kind = "coalescent_synthetic"`: Henao & Lucas's Tables 1–3. Synthetic data from the Kingman
//! coalescent with Brownian paths under a known squared-exponential covariance (spec §5); every
//! coalescent method (SMC variants and greedy rules) with Φ at its true value (Table 1) or with ℓ
//! learned by slice sampling in outer iterations (Tables 2–3, `[coalescent_synthetic.learning]`);
//! the errors of the merge times and of the tree's distance matrix in log domain, of ℓ, and the
//! runtime on one core (spec §4.1).
//!
//! Config: `[coalescent_synthetic]` ([`SyntheticSection`]). Outputs: `runs.parquet` (one row per
//! setting × replicate × method: errors, the SMC log-evidence and the `weight_mode` behind it
//! (an estimate of log p(X) only for "exact"; see [`crate::coalescent::variants`]),
//! resamplings, seconds, the highest-weight tree as Newick), `truth.parquet` (the true trees), `summary.parquet` (mean ± sd
//! per setting × method × measure, with the paper's numbers beside ours) and `table.png/.svg`
//! drawn from it in the paper's layout.

mod figures;
mod paper;
mod run;
#[cfg(test)]
mod tests;

use crate::coalescent::gig::WeightMode;
use crate::coalescent::method::Method;
use crate::experiment::check::Measure;
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::table::{f64_column, str_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The kind.
pub struct CoalescentSynthetic;

pub use paper::{paper_value, PAPER};

/// `kind = "coalescent_synthetic"`: one section.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SyntheticConfig {
    /// The experiment.
    pub coalescent_synthetic: SyntheticSection,
}

/// One data setting {n, d} (HL's D1, D2).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    /// Its name in tables (`D1`, `D2`; the paper's numbers are matched by it).
    pub name: String,
    /// Points.
    pub n: usize,
    /// Dimensions.
    pub d: usize,
}

/// `[coalescent_synthetic]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SyntheticSection {
    /// Which of HL's tables (1, 2 or 3) to set beside ours, matched by setting and method names;
    /// 0 for none.
    #[serde(default)]
    pub paper_table: u8,
    /// The data settings.
    pub settings: Vec<Setting>,
    /// Replicates per setting (HL: 50).
    pub replicates: usize,
    /// The methods in table order (SMC variants and greedy rules, e.g. post_post, mpost1, smc1,
    /// mpost2, greedy, mgreedy).
    pub methods: Vec<Method>,
    /// Particles M of the SMC methods (HL: 100 in Table 1, 50 in Table 2).
    #[serde(default = "hundred")]
    pub particles: usize,
    /// `paper_faithful` (HL's normalisers, default) or `exact` (unbiased evidence).
    #[serde(default = "paper_faithful")]
    pub weight_mode: WeightMode,
    /// Resample when ESS < threshold · M (default 0.5; spec §7 item 15).
    #[serde(default = "half")]
    pub resample_threshold: f64,
    /// True ℓ of HL eq. 12 over feature positions (j−1)/(d−1) (not stated by HL; spec §5: 0.01).
    #[serde(default = "ell")]
    pub ell: f64,
    /// True noise σ² on Φ's diagonal (not stated by HL for Table 1; spec §5: 0.01).
    #[serde(default = "noise")]
    pub noise: f64,
    /// Learn ℓ (and optionally σ²) in outer iterations (Tables 2–3); absent: Φ at its true value.
    #[serde(default)]
    pub learning: Option<LearningSection>,
}

/// `[coalescent_synthetic.learning]`: HL §3.2's outer iterations around each method.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LearningSection {
    /// Outer iterations N_iter (HL: 50).
    pub iterations: usize,
    /// Iterations dropped as burn-in (HL: 10).
    pub burn_in: usize,
    /// ℓ at the start (not stated by HL; ours: 10 times the truth by default).
    pub ell_start: f64,
    /// Also learn σ² (HL: "similar results", not shown; default false).
    #[serde(default)]
    pub learn_noise: bool,
}

fn hundred() -> usize {
    100
}
fn paper_faithful() -> WeightMode {
    WeightMode::PaperFaithful
}
fn half() -> f64 {
    0.5
}
fn ell() -> f64 {
    0.01
}
fn noise() -> f64 {
    0.01
}

/// The error measures of a run: (column, the paper's row name). The ℓ errors are NaN without
/// learning.
pub const METRICS: [(&str, &str); 9] = [
    ("mse_t", "merge time MSE"),
    ("mae_t", "merge time MAE"),
    ("mab_t", "merge time MAB"),
    ("mse_dist", "distance matrix MSE"),
    ("mae_dist", "distance matrix MAE"),
    ("mab_dist", "distance matrix MAB"),
    ("ell_mse", "ℓ MSE"),
    ("ell_mae", "ℓ MAE"),
    ("ell_mab", "ℓ MAB"),
];

impl Experiment for CoalescentSynthetic {
    type Config = SyntheticConfig;

    fn name(&self) -> &'static str {
        "coalescent_synthetic"
    }

    fn about(&self) -> &'static str {
        "Henao & Lucas Tables 1-3: coalescent SMC and greedy methods on synthetic data, errors and runtimes"
    }

    fn validate(&self, cfg: &SyntheticConfig) -> Result<(), String> {
        let s = &cfg.coalescent_synthetic;
        let key = |k: &str| format!("coalescent_synthetic.{k}");
        if s.settings.is_empty() || s.methods.is_empty() {
            return Err(format!(
                "{} and {} must not be empty; name at least one setting and one method",
                key("settings"),
                key("methods")
            ));
        }
        for st in &s.settings {
            if st.n < 3 || st.n > 2000 || st.d == 0 || st.d > 1024 {
                return Err(format!(
                    "{} {:?} has n = {}, d = {}: use 3 <= n <= 2000 and 1 <= d <= 1024",
                    key("settings"),
                    st.name,
                    st.n,
                    st.d
                ));
            }
        }
        if s.replicates == 0 || s.replicates > 10_000 {
            return Err(format!(
                "{} = {} must be in 1..=10000",
                key("replicates"),
                s.replicates
            ));
        }
        if s.particles == 0 || s.particles > 100_000 {
            return Err(format!(
                "{} = {} must be in 1..=100000",
                key("particles"),
                s.particles
            ));
        }
        if !(0.0..=1.0).contains(&s.resample_threshold) {
            return Err(format!(
                "{} = {} must be in [0, 1] (0.5 is usual)",
                key("resample_threshold"),
                s.resample_threshold
            ));
        }
        for (k, v) in [("ell", s.ell), ("noise", s.noise)] {
            if !v.is_finite() || v <= 0.0 {
                return Err(format!("{} = {v} must be a positive finite number", key(k)));
            }
        }
        if ![0, 1, 2, 3].contains(&s.paper_table) {
            return Err(format!(
                "{} = {} must be 1, 2 or 3 (HL's tables) or 0 (none)",
                key("paper_table"),
                s.paper_table
            ));
        }
        if let Some(l) = &s.learning {
            if l.iterations == 0 || l.iterations > 100_000 || l.burn_in >= l.iterations {
                return Err(format!(
                    "{} must be in 1..=100000 and {} below it (HL: 50 and 10)",
                    key("learning.iterations"),
                    key("learning.burn_in")
                ));
            }
            if !l.ell_start.is_finite() || l.ell_start <= 0.0 {
                return Err(format!(
                    "{} = {} must be a positive finite number",
                    key("learning.ell_start"),
                    l.ell_start
                ));
            }
        }
        run::check_cost(s)
    }

    fn shardable(&self) -> bool {
        true
    }

    fn run(&self, cfg: &SyntheticConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(&cfg.coalescent_synthetic, ctx)
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
        crate::experiment::properties::coalescent_synthetic(results, &METRICS.map(|m| m.0))
    }
}

/// From `summary.parquet`: `synthetic.<setting>.<method>.<measure>` (mean over replicates) for
/// every error measure, and `….log2_vs_paper` = log2(ours / paper) where the paper reports the
/// cell. Runtimes are not measures (they vary from run to run).
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("summary")?;
    let setting = str_column(&t, "setting")?;
    let method = str_column(&t, "method")?;
    let measure = str_column(&t, "measure")?;
    let mean = f64_column(&t, "mean")?;
    let paper = f64_column(&t, "paper_mean")?;
    let mut out = Vec::new();
    for i in 0..t.height() {
        let ours = mean[i].unwrap_or(f64::NAN);
        if measure[i] == "seconds" || ours.is_nan() {
            continue;
        }
        let id = format!("synthetic.{}.{}.{}", setting[i], method[i], measure[i]);
        out.push(Measure::new(
            id.clone(),
            format!(
                "{} {}: mean {} over replicates",
                setting[i], method[i], measure[i]
            ),
            ours,
        ));
        if let Some(p) = paper[i] {
            out.push(Measure::new(
                format!("{id}.log2_vs_paper"),
                format!(
                    "{} {}: log2(ours / paper) of {}",
                    setting[i], method[i], measure[i]
                ),
                (ours / p).log2(),
            ));
        }
    }
    Ok(out)
}
