//! `kind = "board"`: every tree-building method on every dataset, under the same metrics, with
//! the time and memory each took: the exact trellis (where N allows), the sparse trellis, beam
//! search, greedy, average linkage, the jet algorithms kt / Cambridge-Aachen / anti-kt, the
//! Kingman-coalescent MPOST2 and MGREEDY, and the DDT and PYDT; and, asked for by name, BHC and
//! greedy Bayesian rose trees on points ([`bayes`]).
//!
//! Config: `[board]` ([`BoardSection`]) with `[[board.datasets]]` ([`data::DatasetSpec`]).
//! Each dataset is judged by its split energy ([`energy`]): Ginkgo log-likelihood (jets), HCC
//! energy over centred correlations (points), Dasgupta's cost (graphs); [`methods`] says where
//! each method applies and what it runs on.
//!
//! Work: one job per (instance, method), run one at a time (each may use every thread) so that
//! its wall time and peak heap are its own; jobs are journalled, so a killed run resumes, and
//! `run --shard I/N` + `merge` divide them between processes or Slurm array tasks.
//!
//! Outputs:
//! - `board.parquet`: one row per (dataset, instance, method, metric): value, seconds (the
//!   method's), peak heap bytes, `exact_scoring_seconds` (the job's exact scoring, apart; null
//!   where the trellis does not run). Metrics: the instance's energy (`ginkgo_log_likelihood`, `hcc_energy` or
//!   `dasgupta_cost`), `dasgupta_cost` of points, `dendrogram_purity`, `subtree_score`,
//!   `ari_auc` (labelled data), `own_objective` (the coalescent's log joint, the diffusion
//!   trees' log p(X, T, s)), and where the exact trellis runs, `log_posterior` (the tree's
//!   probability under the energy's Gibbs posterior) and `posterior_rank` (1 + the number of
//!   trees scoring higher, exact up to `rank_cap`; `posterior_rank_capped` = 1 when the cap was
//!   hit), and on the trellis's row `map_tree_count` (how many trees attain the exact
//!   MAP; [`crate::exact::map_ties`] says which of them the trellis returns).
//! - `trees.parquet`: every (instance, method): its tree (Newick by leaf index, and
//!   `newick_names` by the points' names), or why it did not run (`status`), a `note` on how it
//!   ran (on the distinct points; a multifurcating tree the energies do not score), and the job
//!   seed it ran with.
//! - `leaves.parquet`: every instance's points by leaf index, with their names and classes.
//! - `data_<dataset>.json` (jets, the `data/ginkgo_jets` schema) or `data_<dataset>.csv`
//!   (points or similarity matrices, with labels): the data each method ran on.
//! - `heatmap_<metric>.png/.svg`: methods × datasets, best per column outlined, brighter =
//!   better in every one (mean scores; mean place on energies, Dasgupta's cost and time; log10
//!   median rank among all trees); `time_<dataset>.png/.svg`: quality against wall time, one
//!   fixed colour per method; `leaderboard.md`: gaps to the exact MAP on the same instances,
//!   true median ranks ([`leaderboard`]);
//!   `tree_<dataset>_<method>.png/.svg`: each method's tree as a dendrogram, for datasets of one
//!   instance of at most 300 points (a user's file), leaves named and coloured by class.

pub mod bayes;
pub mod data;
#[cfg(test)]
mod data_tests;
mod dendrograms;
mod export;
pub mod energy;
mod exact_work;
mod figures;
mod leaderboard;
pub mod methods;
mod run;
#[cfg(test)]
mod tests;
pub mod wide;

use crate::experiment::check::Measure;
use crate::experiment::kind::{Experiment, Results, RunContext};
use anyhow::Result;
use data::DatasetSpec;
use methods::BoardMethod;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The board kind.
pub struct Board;

/// `kind = "board"`: `[board]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BoardConfig {
    /// The datasets and methods.
    pub board: BoardSection,
}

/// `[board]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BoardSection {
    /// `[[board.datasets]]`.
    pub datasets: Vec<DatasetSpec>,
    /// Methods to run where they apply (default: all of them but `bhc` and `brt`, which are
    /// listed by name; [`BoardMethod::default_methods`]).
    #[serde(default = "all_methods")]
    pub methods: Vec<BoardMethod>,
    /// Largest N the exact trellis runs on (and posterior ranks are computed for); default 12.
    #[serde(default = "twelve")]
    pub max_exact_leaves: usize,
    /// Ranks are counted exactly up to this many trees above (default 1,000,000).
    #[serde(default = "default_rank_cap")]
    pub rank_cap: u64,
    /// Seed trees of the sparse trellis (the beam size of its seeding beam search; default 100).
    #[serde(default = "hundred")]
    pub sparse_seed_trees: usize,
    /// Beam size of beam search (default: the paper's rule, min(3N, N(N-1)/2)).
    #[serde(default)]
    pub beam_size: Option<usize>,
    /// Above 64 points, beam search and the sparse trellis run only where their cost model
    /// gives at most this many seconds of one core (default 60; [`wide`]).
    #[serde(default = "sixty")]
    pub max_search_seconds: f64,
    /// What greedy and beam search rank merges by: `"revenue"` (default: a merge is also
    /// credited with what it leaves unmerged, which keeps every complete tree's ranking and the
    /// MAP, and lifts both from chance level on points and graphs) or `"potential"` (the papers'
    /// rule, each merge's own energy). The same on jets.
    #[serde(default = "revenue")]
    pub merge_score: crate::search::MergeScore,
    /// R of the kt family (default 1; with exclusive clustering to one tree it never changes
    /// the tree).
    #[serde(default = "crate::experiment::config::one_f64")]
    pub kt_radius: f64,
    /// `[board.coalescent]`: MPOST2 / MGREEDY.
    #[serde(default)]
    pub coalescent: CoalescentPart,
    /// `[board.pydt]`: DDT / PYDT.
    #[serde(default)]
    pub pydt: PydtPart,
    /// `[board.bhc]`: BHC / BRT.
    #[serde(default)]
    pub bhc: bayes::BhcPart,
}

fn revenue() -> crate::search::MergeScore {
    crate::search::MergeScore::Revenue
}

/// `[board.coalescent]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CoalescentPart {
    /// SMC particles of MPOST2 (default 20).
    pub particles: usize,
    /// Resample when ESS < threshold · particles (default 0.5).
    pub resample_threshold: f64,
    /// Φ = σ² I over standardised features (default 1).
    pub sigma2: f64,
    /// Largest N they run on (default 200).
    pub max_points: usize,
}

impl Default for CoalescentPart {
    fn default() -> Self {
        CoalescentPart {
            particles: 20,
            resample_threshold: 0.5,
            sigma2: 1.0,
            max_points: 200,
        }
    }
}

/// `[board.pydt]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PydtPart {
    /// PYDT concentration θ (default 0.5).
    pub theta: f64,
    /// PYDT discount α (default 0.2).
    pub alpha: f64,
    /// Divergence smoothness c (default 1).
    pub c: f64,
    /// Diffusion variance σ² (default 1).
    pub sigma2: f64,
    /// Leaf noise variance (default 0.1; > 0 lets duplicate points be).
    pub noise: f64,
    /// Search steps after the sequential start (default 30).
    pub iterations: usize,
    /// Largest N they run on (default 60).
    pub max_points: usize,
}

impl Default for PydtPart {
    fn default() -> Self {
        PydtPart {
            theta: 0.5,
            alpha: 0.2,
            c: 1.0,
            sigma2: 1.0,
            noise: 0.1,
            iterations: 30,
            max_points: 60,
        }
    }
}

fn all_methods() -> Vec<BoardMethod> {
    BoardMethod::default_methods()
}

fn twelve() -> usize {
    12
}

fn hundred() -> usize {
    100
}

fn sixty() -> f64 {
    60.0
}

fn default_rank_cap() -> u64 {
    1_000_000
}

impl BoardSection {
    fn validate(&self) -> Result<(), String> {
        if self.datasets.is_empty() {
            return Err("board.datasets is empty; add at least one [[board.datasets]]".into());
        }
        data::validate(&self.datasets)?;
        if self.methods.is_empty() {
            return Err("board.methods is empty; list at least one method".into());
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(m) = self.methods.iter().find(|m| !seen.insert(**m)) {
            return Err(format!(
                "board.methods lists {:?} twice; list it once",
                m.name()
            ));
        }
        let most = crate::experiment::exact_limit::MOST;
        if self.max_exact_leaves > most {
            return Err(format!(
                "board.max_exact_leaves = {} is above {most} (the trellis of every instance, and ranks, would take many minutes each); use at most {most}",
                self.max_exact_leaves
            ));
        }
        if self.rank_cap == 0 || self.rank_cap > crate::exact::rank::MAX_CAP {
            return Err(format!(
                "board.rank_cap must be in 1..={}",
                crate::exact::rank::MAX_CAP
            ));
        }
        if self.sparse_seed_trees == 0 || self.sparse_seed_trees > 10_000 {
            return Err("board.sparse_seed_trees must be in 1..=10000".into());
        }
        if self
            .beam_size
            .is_some_and(|b| b == 0 || b > crate::search::MAX_BEAM_SIZE)
        {
            return Err(format!(
                "board.beam_size must be in 1..={} (or absent for the paper's rule)",
                crate::search::MAX_BEAM_SIZE
            ));
        }
        crate::experiment::config::positive("board.max_search_seconds", self.max_search_seconds)?;
        if !(self.kt_radius.is_finite() && self.kt_radius > 0.0) {
            return Err(format!(
                "board.kt_radius = {} must be a positive number",
                self.kt_radius
            ));
        }
        let c = &self.coalescent;
        if c.particles == 0 || c.particles > 10_000 {
            return Err("board.coalescent.particles must be in 1..=10000".into());
        }
        if !(0.0..=1.0).contains(&c.resample_threshold) {
            return Err("board.coalescent.resample_threshold must be in [0, 1]".into());
        }
        crate::experiment::config::positive("board.coalescent.sigma2", c.sigma2)?;
        let p = &self.pydt;
        crate::pydt::Params::new(p.theta, p.alpha, p.c, p.sigma2)
            .map_err(|e| format!("board.pydt: {e}"))?;
        if !(p.noise.is_finite() && p.noise >= 0.0) {
            return Err(format!("board.pydt.noise = {} must be >= 0", p.noise));
        }
        if p.iterations > 10_000 {
            return Err("board.pydt.iterations must be at most 10000".into());
        }
        self.bhc.validate()
    }
}

impl Experiment for Board {
    type Config = BoardConfig;

    fn name(&self) -> &'static str {
        "board"
    }

    fn about(&self) -> &'static str {
        "every method on every dataset: one long table, heatmaps, quality vs time, leaderboard.md"
    }

    fn resolve_paths(&self, cfg: &mut BoardConfig, base: &Path) {
        data::resolve_paths(&mut cfg.board.datasets, base);
    }

    fn validate(&self, cfg: &BoardConfig) -> Result<(), String> {
        cfg.board.validate()
    }

    fn inputs(&self, cfg: &BoardConfig) -> Vec<PathBuf> {
        data::inputs(&cfg.board.datasets)
    }

    fn shardable(&self) -> bool {
        true
    }

    fn run(&self, cfg: &BoardConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(&cfg.board, ctx)
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        run::measures(results)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        crate::experiment::properties::board(results)
    }
}
