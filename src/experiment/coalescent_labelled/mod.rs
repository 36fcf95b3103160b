//! `kind = "coalescent_labelled"`: Henao & Lucas's Figure 2 (USPS digits) and the same
//! comparison on any labelled point set. Random class-balanced subsets (HL: 25 subsets of 500
//! images, 50 per digit); on each, the coalescent methods with Φ learned by slice sampling in
//! outer iterations (HL: MPOST2 with 10 particles and 20 iterations, MGREEDY), average linkage on
//! Euclidean distances ("HC") and trees drawn from the coalescent prior ("PRIORITY"); every tree
//! is scored by the subtree score, the ARI curve and its area, and dendrogram purity.
//!
//! Config: `[coalescent_labelled]` ([`LabelledSection`]) with `[coalescent_labelled.data]` (USPS
//! files or a user's CSV/TSV matrix with a label column) and `[coalescent_labelled.covariance]`
//! (HL's product Matérn-3/2 over the image grid, or Φ = σ²I for features without a layout).
//! Outputs: `subsets.parquet` (which rows each subset drew), `runs.parquet` (one row per subset ×
//! method: scores, seconds on one core, learned Φ, the SMC log-evidence and its `weight_mode`,
//! the tree as Newick), `curves.parquet` (ARI against the number of clusters),
//! `learning.parquet` (Φ's parameters and the log-evidence per outer iteration; the log-evidence
//! estimates log p(X) only with `weight_mode = "exact"`, see [`crate::coalescent::variants`]),
//! `summary.parquet` (mean ± sd over subsets), and `ari_curves` and `table` charts drawn from them.

mod data;
mod figures;
mod methods;
mod run;
#[cfg(test)]
mod tests;

pub use methods::LabelledMethod;

use crate::coalescent::gig::WeightMode;
use crate::data::matrix::Column;
use crate::experiment::check::Measure;
use crate::experiment::config::{positive, resolve};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::table::{f64_column, str_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The kind.
pub struct CoalescentLabelled;

/// `kind = "coalescent_labelled"`: one section.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LabelledConfig {
    /// The experiment.
    pub coalescent_labelled: LabelledSection,
}

/// `[coalescent_labelled]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LabelledSection {
    /// Random subsets (HL: 25).
    pub subsets: usize,
    /// Points drawn from every class in each subset (HL: 50 per digit).
    pub per_class: usize,
    /// Methods in table order: coalescent methods (`mpost2`, `mgreedy`, `mpost1`, `smc1`,
    /// `post_post`, `greedy`, …), `average_linkage` and `coalescent_prior`.
    pub methods: Vec<LabelledMethod>,
    /// Particles of the SMC methods (HL: 10).
    #[serde(default = "ten")]
    pub particles: usize,
    /// Outer iterations of Φ learning around each coalescent method (HL: 20); 0 keeps Φ at its
    /// start value.
    #[serde(default = "twenty")]
    pub iterations: usize,
    /// `paper_faithful` (HL's normalisers, default) or `exact`.
    #[serde(default = "paper_faithful")]
    pub weight_mode: WeightMode,
    /// Resample when ESS < threshold · M (default 0.5).
    #[serde(default = "half")]
    pub resample_threshold: f64,
    /// The points and their labels.
    pub data: DataSection,
    /// Φ and what is learned.
    pub covariance: CovarianceSection,
}

/// Where the points come from.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// USPS in the ESL text form (`label v1 … v256` per line); several files are concatenated.
    Usps,
    /// One CSV/TSV matrix with a header, rows = points, and a label column.
    File,
}

/// `[coalescent_labelled.data]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// `usps` or `file`.
    pub source: Source,
    /// The files (relative to the config): USPS train and test files for `usps` (HL draw from
    /// the full 9,298 images), exactly one matrix for `file`.
    pub paths: Vec<PathBuf>,
    /// `file` only: the label column, by header name or 0-based position.
    #[serde(default)]
    pub label_column: Option<Column>,
}

/// Φ's family.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KernelChoice {
    /// HL §4.4: product Matérn-3/2 over the pixel grid (`width` × `height` = d) plus noise.
    Matern32Grid,
    /// Φ = σ² I (features without a spatial layout); `ell` is σ².
    Isotropic,
}

/// What the slice sampler learns.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LearnChoice {
    /// Nothing: Φ stays at its start value.
    None,
    /// ℓ (shared by both image axes; σ² of an isotropic Φ).
    Ell,
    /// ℓ and the noise σ² (Matérn grid only).
    EllAndNoise,
}

/// `[coalescent_labelled.covariance]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CovarianceSection {
    /// `matern32_grid` or `isotropic`.
    pub kernel: KernelChoice,
    /// Image width in pixels (Matérn grid).
    #[serde(default)]
    pub width: usize,
    /// Image height in pixels (Matérn grid).
    #[serde(default)]
    pub height: usize,
    /// Start value of ℓ in pixels (Matérn grid) or of σ² (isotropic). HL do not state it.
    pub ell: f64,
    /// Start value of the noise σ² on Φ's diagonal (Matérn grid). HL do not state it.
    #[serde(default)]
    pub noise: f64,
    /// What is learned (default `ell_and_noise`; HL learn Φ's parameters).
    #[serde(default = "ell_and_noise")]
    pub learn: LearnChoice,
}

fn ten() -> usize {
    10
}
fn twenty() -> usize {
    20
}
fn paper_faithful() -> WeightMode {
    WeightMode::PaperFaithful
}
fn half() -> f64 {
    0.5
}
fn ell_and_noise() -> LearnChoice {
    LearnChoice::EllAndNoise
}

/// The tree scores: (column in `runs.parquet`, name in tables). Higher is better for all three.
pub const SCORES: [(&str, &str); 3] = [
    ("subtree", "subtree score"),
    ("auc", "ARI AUC"),
    ("purity", "dendrogram purity"),
];

impl Experiment for CoalescentLabelled {
    type Config = LabelledConfig;

    fn name(&self) -> &'static str {
        "coalescent_labelled"
    }

    fn about(&self) -> &'static str {
        "Henao & Lucas Figure 2: coalescent methods, average linkage and the coalescent prior on labelled subsets (USPS), ARI curves and subtree scores"
    }

    fn resolve_paths(&self, cfg: &mut LabelledConfig, base: &Path) {
        for p in &mut cfg.coalescent_labelled.data.paths {
            resolve(p, base);
        }
    }

    fn validate(&self, cfg: &LabelledConfig) -> Result<(), String> {
        validate(&cfg.coalescent_labelled)
    }

    fn inputs(&self, cfg: &LabelledConfig) -> Vec<PathBuf> {
        cfg.coalescent_labelled.data.paths.clone()
    }

    fn shardable(&self) -> bool {
        true
    }

    fn run(&self, cfg: &LabelledConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(&cfg.coalescent_labelled, ctx)
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
        crate::experiment::properties::coalescent_labelled(results, &SCORES.map(|m| m.0))
    }
}

/// The checks of [`Experiment::validate`]; each error names the key and the fix.
fn validate(s: &LabelledSection) -> Result<(), String> {
    let key = |k: &str| format!("coalescent_labelled.{k}");
    if s.methods.is_empty() {
        return Err(format!(
            "{} is empty; list at least one method (e.g. \"mpost2\", \"average_linkage\")",
            key("methods")
        ));
    }
    for (k, m) in s.methods.iter().enumerate() {
        if s.methods[..k].contains(m) {
            return Err(format!(
                "{} lists {:?} twice; list each method once",
                key("methods"),
                m.name()
            ));
        }
    }
    if s.subsets == 0 || s.subsets > 10_000 {
        return Err(format!("{} = {} must be in 1..=10000", key("subsets"), s.subsets));
    }
    if s.per_class < 2 {
        return Err(format!(
            "{} = {} must be at least 2 (the subtree score needs more points than classes)",
            key("per_class"),
            s.per_class
        ));
    }
    if s.particles == 0 || s.particles > 10_000 {
        return Err(format!("{} = {} must be in 1..=10000", key("particles"), s.particles));
    }
    if s.iterations > 10_000 {
        return Err(format!("{} = {} must be at most 10000", key("iterations"), s.iterations));
    }
    if !(0.0..=1.0).contains(&s.resample_threshold) {
        return Err(format!(
            "{} = {} must be in [0, 1] (0.5 is usual)",
            key("resample_threshold"),
            s.resample_threshold
        ));
    }
    let d = &s.data;
    match d.source {
        Source::Usps if d.paths.is_empty() => {
            return Err(format!(
                "{} is empty; name the USPS files (e.g. [\"../data/usps/usps_train.txt\", \"../data/usps/usps_test.txt\"])",
                key("data.paths")
            ))
        }
        Source::Usps if d.label_column.is_some() => {
            return Err(format!(
                "{} applies to source = \"file\" only (USPS labels are the first column); remove it",
                key("data.label_column")
            ))
        }
        Source::File if d.paths.len() != 1 => {
            return Err(format!(
                "{} names {} files; source = \"file\" reads exactly one CSV/TSV matrix",
                key("data.paths"),
                d.paths.len()
            ))
        }
        Source::File if d.label_column.is_none() => {
            return Err(format!(
                "{} is missing; name the column holding each point's class (e.g. label_column = \"label\")",
                key("data.label_column")
            ))
        }
        _ => {}
    }
    let c = &s.covariance;
    positive(&key("covariance.ell"), c.ell)?;
    match c.kernel {
        KernelChoice::Matern32Grid => {
            if c.width == 0 || c.height == 0 || c.width * c.height > 4096 {
                return Err(format!(
                    "{} and {} must be set (the image is width x height pixels, at most 4096; USPS: 16 and 16)",
                    key("covariance.width"),
                    key("covariance.height")
                ));
            }
            if !c.noise.is_finite() || c.noise < 0.0 {
                return Err(format!(
                    "{} = {} must be a finite number >= 0",
                    key("covariance.noise"),
                    c.noise
                ));
            }
            if c.learn == LearnChoice::EllAndNoise && c.noise <= 0.0 {
                return Err(format!(
                    "{} must be > 0 to be learned on the log scale; set a positive start or learn = \"ell\"",
                    key("covariance.noise")
                ));
            }
        }
        KernelChoice::Isotropic => {
            if c.width != 0 || c.height != 0 || c.noise != 0.0 {
                return Err(format!(
                    "{}, {} and {} apply to kernel = \"matern32_grid\" only; remove them",
                    key("covariance.width"),
                    key("covariance.height"),
                    key("covariance.noise")
                ));
            }
            if c.learn == LearnChoice::EllAndNoise {
                return Err(format!(
                    "{} = \"ell_and_noise\" needs kernel = \"matern32_grid\"; an isotropic Φ learns \"ell\" (its σ²) only",
                    key("covariance.learn")
                ));
            }
        }
    }
    run::check_cost(s)
}

/// From `summary.parquet`: `labelled.<method>.<score>` (mean over subsets) for every score, and
/// from `runs.parquet` the paper's claims as numbers: `labelled.auc_gain.<method>` = mean over
/// subsets of (AUC of the method − AUC of average linkage) for every coalescent method, when
/// average linkage ran (HL: "coalescent based algorithms perform considerably better than
/// standard hierarchical clustering in terms of AUC").
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("summary")?;
    let method = str_column(&t, "method")?;
    let measure = str_column(&t, "measure")?;
    let mean = f64_column(&t, "mean")?;
    let mut out = Vec::new();
    for i in 0..t.height() {
        let v = mean[i].unwrap_or(f64::NAN);
        out.push(Measure::new(
            format!("labelled.{}.{}", method[i], measure[i]),
            format!("{}: mean {} over subsets", method[i], measure[i]),
            v,
        ));
    }
    let r = results.table("runs")?;
    let rm = str_column(&r, "method")?;
    let subset = crate::experiment::table::u64_column(&r, "subset")?;
    let auc = f64_column(&r, "auc")?;
    let hc: std::collections::HashMap<u64, f64> = (0..r.height())
        .filter(|&i| rm[i] == "average_linkage")
        .filter_map(|i| Some((subset[i]?, auc[i]?)))
        .collect();
    if !hc.is_empty() {
        let mut names: Vec<&str> = Vec::new();
        for m in &rm {
            if !names.contains(&m.as_str()) {
                names.push(m);
            }
        }
        for name in names {
            let is_coalescent = LabelledMethod::from_name(name).is_some_and(|m| m.is_fitted());
            if !is_coalescent {
                continue;
            }
            let gains: Vec<f64> = (0..r.height())
                .filter(|&i| rm[i] == name)
                .filter_map(|i| Some(auc[i]? - hc.get(&subset[i]?)?))
                .collect();
            if gains.is_empty() {
                continue;
            }
            out.push(Measure::new(
                format!("labelled.auc_gain.{name}"),
                format!("{name}: mean over subsets of AUC minus average linkage's AUC"),
                gains.iter().sum::<f64>() / gains.len() as f64,
            ));
        }
    }
    Ok(out)
}
