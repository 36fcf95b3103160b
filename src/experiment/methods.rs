//! Every method that produces a tree, in one place: one [`Method`] arm, one display name and
//! one result shape ([`Found`]) per method, so a new baseline is one arm here.
//!
//! `[methods]` ([`MethodsSection`]) switches them on and sets their parameters in a config.

use crate::exact::{FullTrellis, MapTrellis, SparseTrellis};
use crate::model::{SplitModel, WeightMatrix};
use crate::search::{average_linkage, beam_search_scored, default_beam_size, MergeScore};
use crate::search::{greedy_scored, Dedup};
use crate::tree::Tree;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A tree-building method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The exact full trellis's MAP tree (with log Z and the count of finite trees).
    Trellis,
    /// The exact MAP tree alone, by the MAP-only trellis (the same tree as `Trellis`, several
    /// times faster, for larger N).
    MapTrellis,
    /// A sparse trellis over the clusters of a beam search's final beam.
    Sparse,
    /// Beam search.
    Beam,
    /// Greedy agglomeration on the model's `log psi`.
    Greedy,
    /// Average linkage on the similarities (graph and expression data).
    AverageLinkage,
    /// The tree the data came with (the generator's), scored.
    Truth,
}

impl Method {
    /// Every method, in the order tables and charts list them.
    pub const ALL: [Method; 7] = [
        Method::Trellis,
        Method::MapTrellis,
        Method::Sparse,
        Method::Beam,
        Method::Greedy,
        Method::AverageLinkage,
        Method::Truth,
    ];

    /// The name in tables and configs (`"trellis"`, `"average_linkage"`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Trellis => "trellis",
            Method::MapTrellis => "map_trellis",
            Method::Sparse => "sparse",
            Method::Beam => "beam",
            Method::Greedy => "greedy",
            Method::AverageLinkage => "average_linkage",
            Method::Truth => "truth",
        }
    }

    /// The name in charts.
    pub fn display(self) -> &'static str {
        match self {
            Method::Trellis => "Trellis",
            Method::MapTrellis => "MAP Trellis",
            Method::Sparse => "Sparse Trellis",
            Method::Beam => "Beam Search",
            Method::Greedy => "Greedy",
            Method::AverageLinkage => "Average Linkage",
            Method::Truth => "Truth",
        }
    }

    /// The method named `name` in tables.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Runs the method on `problem` with the parameters of `opts`; `None` when the method does
    /// not apply (no truth tree, no similarities).
    pub fn run<M: SplitModel>(
        self,
        problem: &Problem<M>,
        opts: &MethodsSection,
    ) -> Result<Option<Found>> {
        let m = problem.model;
        let n = m.n_leaves();
        let t0 = Instant::now();
        // Every tree is scored by the one canonical scorer, whatever found it (the trellis's
        // MAP tree scores its MAP value bit for bit; no other tree scores above it).
        let found = |tree: Tree| Found {
            newick: tree.to_newick(),
            log_likelihood: tree.log_likelihood(m),
            tree,
            seconds: t0.elapsed().as_secs_f64(),
            exact: None,
            sparse: None,
        };
        Ok(Some(match self {
            Method::Trellis => {
                let t = FullTrellis::build_with_limit(m, opts.max_exact_leaves)
                    .with_context(|| problem.name.to_string())?;
                let mut f = found(t.map_tree());
                debug_assert!(
                    t.map_log_likelihood() == f.log_likelihood
                        || t.map_log_likelihood() == f64::NEG_INFINITY
                );
                f.exact = Some(ExactFacts {
                    log_z: t.log_partition(),
                    n_trees_finite: t.n_trees_finite(),
                });
                f
            }
            Method::MapTrellis => {
                let t = MapTrellis::build_with_limit(m, opts.max_exact_leaves)
                    .with_context(|| problem.name.to_string())?;
                found(t.map_tree())
            }
            Method::Sparse => {
                let seeds: Vec<Tree> = beam_search_scored(
                    m,
                    opts.sparse_seed_trees,
                    Dedup::Clusters,
                    opts.merge_score,
                )
                .with_context(|| problem.name.to_string())?
                .into_iter()
                .map(|f| f.tree)
                .collect();
                let sp = SparseTrellis::from_trees(n, &seeds)?;
                let r = sp.run(m)?;
                let tree = sp.map_tree(&r)?;
                Found {
                    newick: tree.as_ref().map(|t| t.to_newick()).unwrap_or_default(),
                    log_likelihood: tree
                        .as_ref()
                        .map_or(r.map_log_likelihood(), |t| t.log_likelihood(m)),
                    // A single leaf only when no encoded tree has finite likelihood.
                    tree: tree.unwrap_or_else(|| Tree::leaf(0)),
                    seconds: t0.elapsed().as_secs_f64(),
                    exact: None,
                    sparse: Some(SparseFacts {
                        sparsity_index: sp.sparsity_index(),
                        vertices: sp.n_vertices(),
                    }),
                }
            }
            Method::Beam => {
                let size = opts.beam_size.unwrap_or_else(|| default_beam_size(n));
                let f = beam_search_scored(m, size, opts.beam_dedup, opts.merge_score)
                    .with_context(|| problem.name.to_string())?;
                found(
                    f.into_iter()
                        .next()
                        .context("beam search found no tree")?
                        .tree,
                )
            }
            Method::Greedy => {
                let f =
                    greedy_scored(m, opts.merge_score).with_context(|| problem.name.to_string())?;
                found(f.tree)
            }
            Method::AverageLinkage => {
                let Some(w) = problem.similarities else {
                    return Ok(None);
                };
                let t = average_linkage(w).with_context(|| problem.name.to_string())?;
                found(t)
            }
            Method::Truth => {
                let Some(t) = problem.truth else {
                    return Ok(None);
                };
                let mut f = found(t.clone());
                f.seconds = 0.0;
                f
            }
        }))
    }
}

/// What a method is run on.
pub struct Problem<'a, M: SplitModel> {
    /// A name for error messages (the jet's or graph's).
    pub name: &'a str,
    /// The model trees are scored under.
    pub model: &'a M,
    /// Pairwise similarities, for average linkage.
    pub similarities: Option<&'a WeightMatrix>,
    /// The data's own tree, if known.
    pub truth: Option<&'a Tree>,
}

/// What a method found.
#[derive(Clone, Debug)]
pub struct Found {
    /// The tree.
    pub tree: Tree,
    /// The tree in canonical Newick (empty if the method found no finite tree).
    pub newick: String,
    /// Its log-likelihood under the problem's model (the MAP value for the trellis).
    pub log_likelihood: f64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Exact facts (trellis only).
    pub exact: Option<ExactFacts>,
    /// The sparse trellis's size (sparse only).
    pub sparse: Option<SparseFacts>,
}

/// What the full trellis knows beyond the MAP.
#[derive(Clone, Copy, Debug)]
pub struct ExactFacts {
    /// Exact log partition function.
    pub log_z: f64,
    /// Number of trees with finite likelihood.
    pub n_trees_finite: u128,
}

/// Size of a sparse trellis.
#[derive(Clone, Copy, Debug)]
pub struct SparseFacts {
    /// Encoded trees over `(2N-3)!!`.
    pub sparsity_index: f64,
    /// Vertices.
    pub vertices: usize,
}

/// Largest beam (and sparse-trellis seed beam) a config or `score` may ask for.
pub const MAX_BEAM: usize = crate::search::MAX_BEAM_SIZE;

/// One partial tree of a beam over a 32-leaf jet: its up to N(N-1)/2 = 496 candidate merges
/// at 16 bytes each, and about 5 µs per merge step.
pub const BEAM_COST: super::limits::UnitCost = super::limits::UnitCost {
    unit: "partial tree of a 32-leaf jet",
    bytes: 496.0 * 16.0,
    seconds: 5e-6 * 31.0,
};

/// `[methods]`: which methods run, with their parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MethodsSection {
    /// Run the exact full trellis (log Z, MAP, finite-tree count).
    #[serde(default = "super::config::yes")]
    pub trellis: bool,
    /// Run the MAP-only trellis (the exact MAP tree without log Z; default off).
    #[serde(default)]
    pub map_trellis: bool,
    /// Largest N the exact trellises accept (default 22); larger inputs are an error.
    #[serde(default = "default_max_exact")]
    pub max_exact_leaves: usize,
    /// Run beam search.
    #[serde(default = "super::config::yes")]
    pub beam: bool,
    /// Beam size; absent = the paper's rule min(3N, N(N-1)/2).
    #[serde(default)]
    pub beam_size: Option<usize>,
    /// Duplicate rule: `"clusters"` (exact, default) or `"equal_total"` (the reference's).
    #[serde(default)]
    pub beam_dedup: Dedup,
    /// Run greedy agglomeration.
    #[serde(default = "super::config::yes")]
    pub greedy: bool,
    /// Run a sparse trellis seeded, per input, by the trees of the final beam of a beam search
    /// (works far beyond the exact limit).
    #[serde(default)]
    pub sparse: bool,
    /// Seed trees of that sparse trellis: the beam size of its seeding beam search (default 100).
    #[serde(default = "default_sparse_seeds")]
    pub sparse_seed_trees: usize,
    /// What greedy and beam search (and the sparse trellis's seeding beam) rank merges by:
    /// `"potential"` (each merge's own `log psi`, the papers' baselines; default) or
    /// `"revenue"` (the same complete-tree ranking, a far better myopic choice for Dasgupta's
    /// cost and correlation clustering; no change for jets). See [`MergeScore`].
    #[serde(default)]
    pub merge_score: MergeScore,
}

fn default_sparse_seeds() -> usize {
    100
}

fn default_max_exact() -> usize {
    crate::exact::full::DEFAULT_MAX_LEAVES
}

impl Default for MethodsSection {
    fn default() -> Self {
        MethodsSection {
            trellis: true,
            map_trellis: false,
            max_exact_leaves: default_max_exact(),
            beam: true,
            beam_size: None,
            beam_dedup: Dedup::default(),
            greedy: true,
            sparse: false,
            sparse_seed_trees: default_sparse_seeds(),
            merge_score: MergeScore::Potential,
        }
    }
}

/// `Err` naming `key` when the exact trellis over `n` leaves (the Ginkgo model's tables, the
/// largest of the energy models') would not fit in the memory this process may use: refused
/// before any output, with the most leaves that fit.
pub fn check_exact_memory(key: &str, n: usize) -> Result<(), String> {
    use crate::exact::full::{check_memory, TrellisCost};
    let stat = std::mem::size_of::<crate::model::ginkgo::GinkgoStat>();
    check_memory(n, &TrellisCost::of(n, stat), |k| {
        TrellisCost::of(k, stat).bytes
    })
    .map_err(|e| format!("{key} = {n} is too large for this machine: {e}"))
}

impl MethodsSection {
    /// Whether `m` is switched on (truth always is: it runs wherever a truth tree exists).
    pub fn enabled(&self, m: Method) -> bool {
        match m {
            Method::Trellis => self.trellis,
            Method::MapTrellis => self.map_trellis,
            Method::Sparse => self.sparse,
            Method::Beam => self.beam,
            Method::Greedy => self.greedy,
            Method::AverageLinkage => false,
            Method::Truth => true,
        }
    }

    /// Checks the parameters (one-line errors naming the key).
    pub fn validate(&self) -> Result<(), String> {
        if self.sparse && self.sparse_seed_trees == 0 {
            return Err("methods.sparse_seed_trees must be at least 1".into());
        }
        for (key, v) in [
            ("beam_size", self.beam_size.unwrap_or(1)),
            ("sparse_seed_trees", self.sparse_seed_trees),
        ] {
            super::limits::check_size(&format!("methods.{key}"), v, MAX_BEAM, BEAM_COST)?;
        }
        if self.beam_size == Some(0) {
            return Err(
                "methods.beam_size must be at least 1 (or absent for the paper's rule)".into(),
            );
        }
        if self.max_exact_leaves > crate::exact::full::MAX_LEAVES {
            return Err(format!(
                "methods.max_exact_leaves = {} is above the exact trellis's hard limit of {} leaves (2^N tables); use at most 26 on a 24 GiB machine",
                self.max_exact_leaves,
                crate::exact::full::MAX_LEAVES
            ));
        }
        check_exact_memory("methods.max_exact_leaves", self.max_exact_leaves)
    }

    /// For kinds that read only some keys of `[methods]`: an error naming the first key set to
    /// something other than its default that is not in `used`.
    pub fn check_only(&self, kind: &str, used: &[&str]) -> Result<(), String> {
        let (ours, default) = (
            serde_json::to_value(self).unwrap_or_default(),
            serde_json::to_value(MethodsSection::default()).unwrap_or_default(),
        );
        let set = ours
            .as_object()
            .into_iter()
            .flatten()
            .find(|(k, v)| !used.contains(&k.as_str()) && default.get(k.as_str()) != Some(*v));
        match set {
            Some((k, _)) => Err(format!(
                "methods.{k} does not apply to experiment.kind = {kind:?} (it reads only methods.{}); remove it",
                used.join(", methods.")
            )),
            None => Ok(()),
        }
    }
}
