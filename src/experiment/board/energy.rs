//! The split energy each instance is judged by, the energy methods that run on it, and what the
//! exact trellis says about any tree (its posterior probability and rank).
//!
//! - a jet: the Ginkgo log-likelihood (higher is better);
//! - points: the hierarchical correlation-clustering (HCC) energy over the centred Pearson
//!   correlations of the points, β = 1 (lower is better);
//! - a graph: Dasgupta's cost over its similarities, β = 1 (lower is better).
//!
//! The posterior of a tree is the Gibbs distribution of its energy, `p(T) = psi(T) / Z` with
//! `log psi(T)` the Ginkgo log-likelihood or `-E(T)`.

use super::data::{weight_matrix, Instance, InstanceData};
use super::methods::BoardMethod;
use super::BoardSection;
use crate::exact::{rank, FullTrellis};
use crate::experiment::methods::{Method, MethodsSection, Problem};
use crate::model::ginkgo::GinkgoModel;
use crate::model::{CorrelationModel, DasguptaModel};
use crate::search::Dedup;
use crate::tree::Tree;
use anyhow::{bail, Context, Result};

/// An instance's split energy.
pub enum Energy {
    /// A jet's Ginkgo likelihood.
    Ginkgo(GinkgoModel),
    /// Points' HCC energy.
    Hcc(CorrelationModel),
    /// A graph's Dasgupta cost.
    Dasgupta(DasguptaModel),
}

/// Runs `f` on the energy's model, whatever its type.
macro_rules! with_model {
    ($e:expr, $m:ident => $body:expr) => {
        match $e {
            Energy::Ginkgo($m) => $body,
            Energy::Hcc($m) => $body,
            Energy::Dasgupta($m) => $body,
        }
    };
}

impl Energy {
    /// The energy of `inst`, or `None` above 64 points (where bitset clusters end).
    pub fn of(inst: &Instance) -> Result<Option<Energy>> {
        let n = inst.n();
        if n > 64 {
            return Ok(None);
        }
        Ok(Some(match &inst.data {
            InstanceData::Jet(jet) => Energy::Ginkgo(jet.model()?),
            InstanceData::Points { .. } => {
                let w = inst
                    .centred_correlations()
                    .context("points without correlations")?;
                Energy::Hcc(CorrelationModel::new(weight_matrix(n, &w)?, 1.0)?)
            }
            InstanceData::Graph { similarities } => {
                Energy::Dasgupta(DasguptaModel::new(weight_matrix(n, similarities)?, 1.0)?)
            }
        }))
    }

    /// The metric it is reported as.
    pub fn metric(&self) -> &'static str {
        match self {
            Energy::Ginkgo(_) => "ginkgo_log_likelihood",
            Energy::Hcc(_) => "hcc_energy",
            Energy::Dasgupta(_) => "dasgupta_cost",
        }
    }

    /// `log psi(T)`: the log-likelihood, or minus the energy.
    pub fn log_potential(&self, tree: &Tree) -> f64 {
        with_model!(self, m => tree.log_likelihood(m))
    }

    /// The metric's value of `tree`: the log-likelihood, or the energy.
    pub fn value(&self, tree: &Tree) -> f64 {
        match self {
            Energy::Ginkgo(_) => self.log_potential(tree),
            _ => -self.log_potential(tree),
        }
    }

    /// The best tree an energy method finds.
    pub fn best_tree(&self, method: BoardMethod, s: &BoardSection) -> Result<Tree> {
        let m = match method {
            BoardMethod::Trellis => Method::Trellis,
            BoardMethod::Sparse => Method::Sparse,
            BoardMethod::Beam => Method::Beam,
            BoardMethod::Greedy => Method::Greedy,
            other => bail!("{} does not run on an energy", other.name()),
        };
        let opts = MethodsSection {
            max_exact_leaves: s.max_exact_leaves,
            beam_dedup: Dedup::Clusters,
            sparse_seed_trees: s.sparse_seed_trees,
            merge_score: s.merge_score,
            ..MethodsSection::default()
        };
        let found = with_model!(self, model => m.run(
            &Problem {
                name: "board instance",
                model,
                similarities: None,
                truth: None,
            },
            &opts,
        ))?
        .context("the method found no tree")?;
        Ok(found.tree)
    }

    /// The exact trellis's facts about `tree`: `(log p(T), rank, rank capped)`.
    pub fn exact_facts(
        &self,
        trellis: &FullTrellis,
        tree: &Tree,
        cap: u64,
    ) -> Result<(f64, u64, bool)> {
        let log_p = self.log_potential(tree) - trellis.log_partition();
        let r = with_model!(self, m => rank::rank(m, trellis, tree, 1e-9, cap))?;
        Ok((log_p, r.count, r.capped))
    }

    /// The full trellis of the energy.
    pub fn trellis(&self, max_leaves: usize) -> Result<FullTrellis> {
        Ok(with_model!(self, m => FullTrellis::build_with_limit(m, max_leaves))?)
    }
}

/// The best tree `method` finds on `inst`'s energy.
pub fn best_tree(method: BoardMethod, inst: &Instance, s: &BoardSection) -> Result<Tree> {
    match Energy::of(inst)? {
        Some(e) => e.best_tree(method, s),
        None => bail!(
            "{} needs at most 64 points ({}/{} has {})",
            method.name(),
            inst.dataset,
            inst.instance,
            inst.n()
        ),
    }
}
