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
//!
//! The exact facts of a tree (its log posterior and rank, and for the trellis's own tree how
//! many trees tie with it at the MAP) come from the instance's full trellis, built once per
//! instance: the trellis method's own trellis is kept for the scoring of every method's tree on
//! the same instance ([`exact_scoring`]; the jobs of an instance run one after another), or the
//! first job that scores a tree builds it. The trellis is deterministic, so the numbers do not
//! depend on which job built it.

use super::data::{weight_matrix, Instance, InstanceData};
use super::methods::BoardMethod;
use super::BoardSection;
use crate::exact::{rank, FullTrellis, TIE_TOLERANCE};
use crate::experiment::methods::{Method, MethodsSection, Problem};
use crate::model::ginkgo::GinkgoModel;
use crate::model::{CorrelationModel, DasguptaModel};
use crate::search::Dedup;
use crate::tree::Tree;
use anyhow::{bail, Context, Result};
use std::sync::{Arc, Mutex};

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
    /// The energy of `inst`, or `None` above 64 points (where bitset clusters end; points and
    /// graphs take [`super::wide::WideEnergy`] there).
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
            InstanceData::Graph { similarities, .. } => {
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
            beam_size: s.beam_size,
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
        self.exact_facts_with(trellis, tree, cap, &mut |_| {})
    }

    /// [`Energy::exact_facts`], telling `progress` the trees counted above `tree` so far.
    pub fn exact_facts_with(
        &self,
        trellis: &FullTrellis,
        tree: &Tree,
        cap: u64,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(f64, u64, bool)> {
        let log_p = self.log_potential(tree) - trellis.log_partition();
        let r = with_model!(self, m => rank::rank_with(m, trellis, tree, 1e-9, cap, progress))?;
        Ok((log_p, r.count, r.capped))
    }

    /// How many trees attain the trellis's MAP value ([`crate::exact::map_ties`]).
    pub fn map_tree_count(&self, trellis: &FullTrellis) -> Result<u128> {
        Ok(with_model!(self, m => trellis.n_map_trees(m, TIE_TOLERANCE))?)
    }

    /// The full trellis of the energy.
    pub fn trellis(&self, max_leaves: usize) -> Result<FullTrellis> {
        Ok(with_model!(self, m => FullTrellis::build_with_limit(m, max_leaves))?)
    }
}

/// The best tree `method` finds on `inst`'s energy. The trellis's is its MAP tree, and its
/// trellis is kept for the exact scoring of the instance's trees ([`exact_scoring`]).
pub fn best_tree(method: BoardMethod, inst: &Instance, s: &BoardSection) -> Result<Tree> {
    match Energy::of(inst)? {
        Some(e) if method == BoardMethod::Trellis => {
            forget_other_trellis(inst);
            let t = e.trellis(s.max_exact_leaves)?;
            let tree = t.map_tree();
            *kept() = Some((inst.clone(), Arc::new(t)));
            Ok(tree)
        }
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

/// The full trellis of the last instance one was built for in this process, and that instance.
type Kept = Option<(Instance, Arc<FullTrellis>)>;

fn kept() -> std::sync::MutexGuard<'static, Kept> {
    static KEPT: Mutex<Kept> = Mutex::new(None);
    // A panic while the lock was held leaves at worst a trellis that is complete or none.
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Drops the kept trellis unless it is `inst`'s (before another is built: one at a time).
fn forget_other_trellis(inst: &Instance) {
    let mut k = kept();
    if k.as_ref().is_some_and(|(i, _)| i != inst) {
        *k = None;
    }
}

/// Drops the kept trellis (at the end of a run, to give its memory back).
pub fn forget_trellis() {
    *kept() = None;
}

/// `inst`'s full trellis: the kept one if it is `inst`'s, else built (and kept).
fn trellis_of(inst: &Instance, e: &Energy, max_leaves: usize) -> Result<Arc<FullTrellis>> {
    if let Some((i, t)) = kept().as_ref() {
        if i == inst {
            return Ok(Arc::clone(t));
        }
    }
    forget_other_trellis(inst);
    let t = Arc::new(e.trellis(max_leaves)?);
    *kept() = Some((inst.clone(), Arc::clone(&t)));
    Ok(t)
}

/// What the exact trellis says about one method's tree.
pub struct ExactScores {
    /// `log p(T)` under the energy's Gibbs posterior.
    pub log_posterior: f64,
    /// 1 + the trees scoring higher (at least, when `capped`).
    pub rank: u64,
    /// Whether counting stopped at the cap.
    pub capped: bool,
    /// For the trellis's own tree: how many trees attain the MAP value.
    pub map_tree_count: Option<u128>,
}

impl ExactScores {
    /// The rows of `board.parquet`: `log_posterior`, `posterior_rank`, `posterior_rank_capped`
    /// and, for the trellis, `map_tree_count`.
    pub fn metrics(&self) -> Vec<(String, Option<f64>)> {
        let mut m = vec![
            ("log_posterior".to_string(), Some(self.log_posterior)),
            ("posterior_rank".to_string(), Some(self.rank as f64)),
            (
                "posterior_rank_capped".to_string(),
                Some(if self.capped { 1.0 } else { 0.0 }),
            ),
        ];
        if let Some(c) = self.map_tree_count {
            m.push(("map_tree_count".to_string(), Some(c as f64)));
        }
        m
    }
}

/// The exact facts of `tree` on `inst` (energy `e`): from the instance's full trellis, kept
/// from the trellis method's job or the first scoring on the instance; with `ties`, also how
/// many trees attain the MAP. `progress(k)` is told the trees counted above `tree` so far.
pub fn exact_scoring(
    inst: &Instance,
    e: &Energy,
    tree: &Tree,
    s: &BoardSection,
    ties: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<ExactScores> {
    let trellis = trellis_of(inst, e, s.max_exact_leaves)?;
    let (log_posterior, rank, capped) = e.exact_facts_with(&trellis, tree, s.rank_cap, progress)?;
    let map_tree_count = if ties {
        Some(e.map_tree_count(&trellis)?)
    } else {
        None
    };
    Ok(ExactScores {
        log_posterior,
        rank,
        capped,
        map_tree_count,
    })
}
