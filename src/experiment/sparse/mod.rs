//! `kind = "sparse"` (Cluster Trellis paper, Figure 7): sparse trellises against their
//! sparsity.
//!
//! For every budget of seed trees, two sparse trellises are built once on leaf-index sets and
//! then run on every test jet (all with the same N; leaves numbered the same way in every jet,
//! `sparse.leaf_order`, so index sets carry over from one jet to another):
//! - *simulator trellis*: the generator's trees of `budget` simulated jets with N leaves;
//! - *beam-search trellis*: the trees of the final beams of beam searches on simulated jets
//!   with N leaves (training jets, not the test jets), until `budget` trees are collected.
//!
//! Reported per trellis: its sparsity index (encoded trees over `(2N-3)!!`) and the mean over
//! the test jets of its MAP log-likelihood minus greedy's, beside the exact trellis and beam
//! search ([`crate::experiment::methods::Method`]s on each test jet).
//!
//! Config: `[jets]` (the test jets, [`JetsSection`]; seed jets are simulated with the first
//! test jet's t_cut, rates and root scale unless `[jets]` sets them), `[sparse]`
//! ([`SparseSection`]) and optionally `[methods]`, of which `max_exact_leaves`, `beam_size`
//! and `beam_dedup` apply (the exact and beam-search lines). Outputs: `sparse.parquet` (one
//! row per builder and budget) and `fig7_sparse_trellis.png/.svg`.

mod figures;
mod measures;
mod run;
#[cfg(test)]
mod tests;

use crate::experiment::check::Measure;
use crate::experiment::jets::{DataSource, JetsSection, MAX_JETS};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::methods::MethodsSection;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The sparse-trellis kind.
pub struct Sparse;

/// `kind = "sparse"`: `[jets]`, `[sparse]` and optionally `[methods]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SparseConfig {
    /// The test jets (all with the same number of leaves).
    pub jets: JetsSection,
    /// `max_exact_leaves` (the exact line), `beam_size` and `beam_dedup` (the beam-search
    /// line) apply; the method switches do not.
    #[serde(default)]
    pub methods: MethodsSection,
    /// The sparse trellises.
    pub sparse: SparseSection,
}

/// `[sparse]`: Figure 7 of the paper, sparse trellises against their sparsity.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SparseSection {
    /// Numbers of seed trees to build sparse trellises from (one trellis per budget and builder).
    pub budgets: Vec<usize>,
    /// Beam size of the beam searches that seed the beam-search trellis (absent = the paper's
    /// rule for N leaves); each training jet contributes the trees of its final beam.
    #[serde(default)]
    pub seed_beam_size: Option<usize>,
    /// How leaves are numbered in seed and test jets alike (sparse trellises are built on
    /// leaf-index sets): `"generator"` (depth-first order of the shower, the data files' order;
    /// every truth cluster is then an index interval) or `"energy"` (decreasing energy).
    #[serde(default)]
    pub leaf_order: LeafOrder,
}

/// Leaf numbering convention for sparse trellises.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LeafOrder {
    /// The generator's depth-first order (as stored).
    #[default]
    Generator,
    /// Decreasing energy.
    Energy,
}

impl LeafOrder {
    /// How the chart's title says it.
    pub fn describe(self) -> &'static str {
        match self {
            LeafOrder::Generator => "generator order",
            LeafOrder::Energy => "energy",
        }
    }
}

impl Experiment for Sparse {
    type Config = SparseConfig;

    fn name(&self) -> &'static str {
        "sparse"
    }

    fn about(&self) -> &'static str {
        "sparse trellises seeded by simulator or beam-search trees against their sparsity (Figure 7)"
    }

    fn resolve_paths(&self, cfg: &mut SparseConfig, base: &Path) {
        cfg.jets.resolve_paths(base);
    }

    fn validate(&self, cfg: &SparseConfig) -> Result<(), String> {
        cfg.jets.validate(true)?;
        let (lo, hi) = cfg.jets.leaf_range();
        if cfg.jets.source == DataSource::Generate && lo != hi {
            return Err(format!(
                "kind = \"sparse\" needs test jets that all have the same number of leaves: set jets.min_leaves = jets.max_leaves (now {lo}..={hi})"
            ));
        }
        cfg.methods.validate()?;
        cfg.methods
            .check_only(self.name(), &["max_exact_leaves", "beam_size", "beam_dedup"])?;
        let s = &cfg.sparse;
        if s.budgets.is_empty() || s.budgets.contains(&0) {
            return Err(
                "sparse.budgets must list at least one number of seed trees, each at least 1"
                    .into(),
            );
        }
        for (i, &b) in s.budgets.iter().enumerate() {
            crate::experiment::limits::check_size(
                &format!("sparse.budgets[{i}]"),
                b,
                MAX_JETS,
                crate::experiment::limits::UnitCost {
                    unit: "seed tree (a simulated jet and its beam)",
                    bytes: 1024.0,
                    seconds: 35e-6,
                },
            )?;
        }
        if s.seed_beam_size == Some(0) {
            return Err(
                "sparse.seed_beam_size must be at least 1 (or absent for the paper's rule)".into(),
            );
        }
        if let Some(b) = s.seed_beam_size {
            crate::experiment::limits::check_size(
                "sparse.seed_beam_size",
                b,
                crate::experiment::methods::MAX_BEAM,
                crate::experiment::methods::BEAM_COST,
            )?;
        }
        Ok(())
    }

    fn inputs(&self, cfg: &SparseConfig) -> Vec<PathBuf> {
        cfg.jets.inputs()
    }

    fn run(&self, cfg: &SparseConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(cfg, ctx)
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
        crate::experiment::properties::sparse(results)
    }
}
