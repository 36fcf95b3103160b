//! `kind = "pythia_jets"`: jets from a real event generator (Pythia 8, `data/pythia/`) against
//! their own shower history, under the Ginkgo likelihood with its rate λ fitted to the jets.
//!
//! For each set of jets (a file in the `data/ginkgo_jets` schema; parton-level jets carry their
//! shower history as `truth_tree`, hadron-level ones none):
//! - **λ** is fitted twice, always: by exact evidence (λ maximising Σ_jets log Z(jet; λ), the
//!   marginal likelihood over all trees, [`crate::exact::fit_lambda_by_evidence`]) and on the
//!   truth trees (Σ_jets log p(truth; λ), [`crate::exact::fit_lambda_on_trees`], sets with truth
//!   trees only), both within `lambda_range`; both objectives are scanned on a log grid of λ.
//!   The methods run at the λ `lambda` chooses: `"evidence"` (default), `"truth"` or a number.
//! - **Per jet and method** (the exact MAP of the full trellis, beam search with the paper's beam
//!   size min(3N, N(N − 1)/2), greedy, kt, Cambridge/Aachen and anti-kt, and the truth tree): the
//!   tree's Ginkgo log-likelihood, its gap to the MAP (MAP − method: 0 for the MAP, +inf for a
//!   forbidden tree, 0 when every tree of the jet is forbidden), its exact posterior probability,
//!   and against the truth tree the fraction of the truth's non-trivial clusters recovered, the
//!   Robinson–Foulds distance (also over its maximum 2(N − 2)) and the primary Lund
//!   declusterings (follow the harder branch, by summed leaf energy, from the root and list the
//!   softer branch emitted at each step as a leaf set: the share of the truth's emissions the
//!   method's sequence has, and whether the whole sequences agree; see [`compare`]).
//! - **Per jet**: log Z, the number of finite trees, the truth tree's exact posterior probability
//!   exp(log p(truth) − log Z) and its exact rank among all (2N − 3)!! trees
//!   ([`crate::exact::rank`], counted up to `rank_cap`; a capped rank is a lower bound, flagged).
//!   A truth tree with a cluster lighter than t_cut has likelihood 0 (`-inf`): its posterior
//!   probability is 0, its rank is null, `truth_forbidden` is 1, and the summaries count it.
//!
//! The kt family runs in its e+e− form by default (energies and angles,
//! [`crate::search::ee_generalised_kt`]; `kt = "pp"` for the p_T, rapidity and azimuth form with
//! R = 1): these jets come from e+e− collisions and point anywhere, close to the beam too.
//!
//! Config: `[pythia_jets]` ([`PythiaJetsSection`]) with its `[[pythia_jets.sets]]`. Outputs:
//! `lambda_fit.parquet`, `lambda_scan.parquet`, `jets.parquet` (jet × method), `exact.parquet`
//! (per jet), `summary.parquet` (per set, leaf range and method), and the figures
//! `truth_recovery`, `truth_rank`, `lambda_scan` and `gap_to_map` (PNG and SVG), drawn from the
//! tables alone.

mod compare;
mod figures;
mod figures_size;
mod holdout;
mod measures;
mod measures_best;
mod pmethod;
mod properties;
mod properties_more;
mod run;
mod score;
mod summary;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fair;

pub use compare::{compare, inner_clusters, primary_emissions, robinson_foulds, Comparison};
pub use pmethod::PMethod;
pub use score::{gap, posterior};

use crate::experiment::check::Measure;
use crate::experiment::kind::{Experiment, Results, RunContext};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The pythia_jets kind.
pub struct PythiaJets;

/// `kind = "pythia_jets"`: its one section.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PythiaJetsConfig {
    /// The sets of jets and the settings.
    pub pythia_jets: PythiaJetsSection,
}

/// The λ the methods run at.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum LambdaChoice {
    /// Each set's λ fitted by exact evidence.
    #[default]
    Evidence,
    /// Each set's λ fitted on its truth trees.
    Truth,
    /// This λ for every set.
    Value(f64),
}

impl Serialize for LambdaChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LambdaChoice::Evidence => s.serialize_str("evidence"),
            LambdaChoice::Truth => s.serialize_str("truth"),
            LambdaChoice::Value(v) => s.serialize_f64(*v),
        }
    }
}

impl<'de> Deserialize<'de> for LambdaChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        let bad = "pythia_jets.lambda must be \"evidence\", \"truth\" or a positive number";
        match Raw::deserialize(d).map_err(|_| serde::de::Error::custom(bad))? {
            Raw::Number(v) => Ok(LambdaChoice::Value(v)),
            Raw::Text(t) if t == "evidence" => Ok(LambdaChoice::Evidence),
            Raw::Text(t) if t == "truth" => Ok(LambdaChoice::Truth),
            Raw::Text(t) => Err(serde::de::Error::custom(format!("{bad}, not {t:?}"))),
        }
    }
}

/// Which form of the kt family runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KtForm {
    /// Energies and angles (e+e−; FastJet's `ee_genkt_algorithm`).
    #[default]
    Ee,
    /// Transverse momenta, rapidity and azimuth about the z axis, R = 1 (hadron colliders).
    Pp,
}

/// One set of jets.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JetSet {
    /// Its name in tables and measures (lower-case letters, digits and `_`).
    pub name: String,
    /// A JSON file in the `data/ginkgo_jets` schema (relative to the config file).
    pub path: PathBuf,
    /// Keep only the first this many jets (in file order, after the leaf range); default all.
    #[serde(default)]
    pub max_jets: Option<usize>,
}

/// `[pythia_jets]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PythiaJetsSection {
    /// The sets of jets.
    pub sets: Vec<JetSet>,
    /// The λ the methods run at: `"evidence"` (default), `"truth"` or a number.
    #[serde(default)]
    pub lambda: LambdaChoice,
    /// The bounds of both fits and of the scan (default [0.05, 50]).
    #[serde(default = "default_range")]
    pub lambda_range: [f64; 2],
    /// Points of the log grid of λ scanned (default 31).
    #[serde(default = "default_scan_points")]
    pub scan_points: usize,
    /// Trees counted above the truth tree before its rank is given as a lower bound (default
    /// 1,000,000).
    #[serde(default = "default_rank_cap")]
    pub rank_cap: u64,
    /// Smallest number of leaves kept (default 2).
    #[serde(default = "two")]
    pub min_leaves: usize,
    /// Largest number of leaves kept (default 16, at most [`MAX_LEAVES`]).
    #[serde(default = "sixteen")]
    pub max_leaves: usize,
    /// Largest number of leaves whose jets get the full trellis (log Z, the truth's posterior
    /// and rank) and enter the fits of λ and the scan (default: `max_leaves`, at most
    /// [`MAX_FULL_LEAVES`]: the full trellis runs once per jet for every λ scanned and every
    /// step of the evidence fit). Larger jets get the exact MAP from the MAP-only trellis, and
    /// the methods at the set's λ.
    #[serde(default)]
    pub full_max_leaves: Option<usize>,
    /// λ out of sample: the evidence fit on each half of a set's jets (first and second half in
    /// file order, over the jets of the fit), the λ-dependent methods on each half at the other
    /// half's λ, beside the in-sample fit and the jets file's placeholder `lam`
    /// (`lambda_holdout.parquet`); sets with truth trees only (default true).
    #[serde(default = "yes")]
    pub holdout: bool,
    /// The summaries are also given over the jets with at least this many leaves (default 10).
    #[serde(default = "ten")]
    pub large_from: usize,
    /// Beam size; absent = the paper's rule min(3N, N(N − 1)/2).
    #[serde(default)]
    pub beam_size: Option<usize>,
    /// `"ee"` (default) or `"pp"`: the form of kt, Cambridge/Aachen and anti-kt.
    #[serde(default)]
    pub kt: KtForm,
}

fn default_range() -> [f64; 2] {
    [0.05, 50.0]
}
fn default_scan_points() -> usize {
    31
}
fn default_rank_cap() -> u64 {
    1_000_000
}
fn two() -> usize {
    2
}
fn sixteen() -> usize {
    16
}
fn ten() -> usize {
    10
}
fn yes() -> bool {
    true
}

/// Most leaves a jet may have here (the MAP-only trellis's default limit: about 1.2 GiB of
/// tables at 24).
pub const MAX_LEAVES: usize = 24;

/// Most leaves a jet given the full trellis may have here.
pub const MAX_FULL_LEAVES: usize = 18;

/// `Err` naming `key` when the MAP-only trellis over `n` leaves would not fit in the memory this
/// process may use (its tables: 60 bytes per subset for the Ginkgo model).
fn check_map_memory(key: &str, n: usize) -> Result<(), String> {
    use crate::exact::full::{check_memory, TrellisCost};
    let stat = std::mem::size_of::<crate::model::ginkgo::GinkgoStat>();
    let per_subset = (32 + stat + 4) as f64;
    check_memory(n, &TrellisCost::of(n, stat), |k| {
        2f64.powi(k as i32) * per_subset
    })
    .map_err(|e| format!("{key} = {n} is too large for this machine's memory (MAP-only trellis): {e}"))
}

impl PythiaJetsSection {
    /// The largest number of leaves whose jets get the full trellis.
    pub fn full_max(&self) -> usize {
        self.full_max_leaves
            .unwrap_or(MAX_FULL_LEAVES)
            .min(self.max_leaves)
    }

    /// Checks the values beyond their types (one-line errors naming the key).
    pub fn validate(&self) -> Result<(), String> {
        if self.sets.is_empty() {
            return Err("pythia_jets.sets is empty; add a [[pythia_jets.sets]] with name and path".into());
        }
        for (k, s) in self.sets.iter().enumerate() {
            let ok = !s.name.is_empty()
                && s.name.len() <= 32
                && s.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !ok {
                return Err(format!(
                    "pythia_jets.sets[{k}].name = {:?} must be 1 to 32 lower-case letters, digits or _ (e.g. \"parton\")",
                    s.name
                ));
            }
            if self.sets[..k].iter().any(|o| o.name == s.name) {
                return Err(format!(
                    "pythia_jets.sets names {:?} twice; give each set its own name",
                    s.name
                ));
            }
            if s.max_jets == Some(0) {
                return Err(format!(
                    "pythia_jets.sets[{k}].max_jets must be at least 1 (or absent for every jet)"
                ));
            }
        }
        // A rate in a config is held to a jets file's range (its `lam`): one rule for both.
        use crate::data::ginkgo::{MAX_VALUE, MIN_VALUE};
        let rate = MIN_VALUE..=MAX_VALUE;
        if let LambdaChoice::Value(v) = self.lambda {
            if !rate.contains(&v) {
                return Err(format!(
                    "pythia_jets.lambda = {v:e} must be between 1e-100 and 1e100, as a jets file's lam (larger rates overflow the likelihood's terms), e.g. 1.5"
                ));
            }
        }
        let [lo, hi] = self.lambda_range;
        if !(rate.contains(&lo) && rate.contains(&hi) && hi > lo) {
            return Err(format!(
                "pythia_jets.lambda_range = [{lo:e}, {hi:e}] must satisfy 1e-100 <= low < high <= 1e100 (a jets file's range for lam), e.g. [0.05, 50.0]"
            ));
        }
        if !(2..=200).contains(&self.scan_points) {
            return Err("pythia_jets.scan_points must be between 2 and 200 (e.g. 31)".into());
        }
        if self.rank_cap == 0 || self.rank_cap > 1_000_000_000 {
            return Err(
                "pythia_jets.rank_cap must be between 1 and 1,000,000,000 (e.g. 1000000)".into(),
            );
        }
        if self.min_leaves < 2 || self.min_leaves > self.max_leaves || self.max_leaves > MAX_LEAVES
        {
            return Err(format!(
                "pythia_jets.min_leaves = {} and max_leaves = {} must satisfy 2 <= min_leaves <= max_leaves <= {MAX_LEAVES}",
                self.min_leaves, self.max_leaves
            ));
        }
        if let Some(f) = self.full_max_leaves {
            if !(2..=MAX_FULL_LEAVES).contains(&f) {
                return Err(format!(
                    "pythia_jets.full_max_leaves = {f} must be between 2 and {MAX_FULL_LEAVES} (the full trellis's jets; larger ones get the MAP-only trellis up to max_leaves)"
                ));
            }
        } else if self.max_leaves > MAX_FULL_LEAVES {
            return Err(format!(
                "pythia_jets.max_leaves = {} is above {MAX_FULL_LEAVES}, the full trellis's limit here: set pythia_jets.full_max_leaves (e.g. 16) to give the larger jets the MAP-only trellis",
                self.max_leaves
            ));
        }
        crate::experiment::methods::check_exact_memory(
            "pythia_jets.full_max_leaves",
            self.full_max(),
        )?;
        if self.max_leaves > self.full_max() {
            check_map_memory("pythia_jets.max_leaves", self.max_leaves)?;
        }
        if let Some(b) = self.beam_size {
            if b == 0 {
                return Err(
                    "pythia_jets.beam_size must be at least 1 (or absent for the paper's rule)"
                        .into(),
                );
            }
            crate::experiment::limits::check_size(
                "pythia_jets.beam_size",
                b,
                crate::experiment::methods::MAX_BEAM,
                crate::experiment::methods::BEAM_COST,
            )?;
        }
        Ok(())
    }
}

impl Experiment for PythiaJets {
    type Config = PythiaJetsConfig;

    fn name(&self) -> &'static str {
        "pythia_jets"
    }

    fn about(&self) -> &'static str {
        "Pythia 8 jets against their shower history: λ fitted by exact evidence, exact MAP, beam, greedy and the kt family scored on truth recovery, the truth's exact posterior rank"
    }

    fn resolve_paths(&self, cfg: &mut PythiaJetsConfig, base: &Path) {
        for s in &mut cfg.pythia_jets.sets {
            crate::experiment::config::resolve(&mut s.path, base);
        }
    }

    fn validate(&self, cfg: &PythiaJetsConfig) -> Result<(), String> {
        cfg.pythia_jets.validate()
    }

    fn inputs(&self, cfg: &PythiaJetsConfig) -> Vec<PathBuf> {
        cfg.pythia_jets.sets.iter().map(|s| s.path.clone()).collect()
    }

    fn run(&self, cfg: &PythiaJetsConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(&cfg.pythia_jets, ctx)
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
        properties::properties(results)
    }
}
