//! Approximate MAP search: agglomerative greedy and beam search on a model's energy (the
//! paper's baselines), average linkage on a similarity graph, and the physics clusterings of
//! four-momenta (sequential recombination, each with an optional t_cut veto,
//! [`recombine::Veto`]): the generalised kt jet algorithms, Durham, invariant-mass ordering and
//! ordering by Pythia's transverse-momentum evolution variable.

pub mod beam;
pub mod durham;
pub mod greedy;
pub mod kt;
pub mod linkage;
pub mod mass_ordering;
pub mod pt_ordering;
pub mod recombine;

pub use beam::{
    beam_search, beam_search_all, beam_search_scored, beam_search_with, default_beam_size, Dedup,
    MAX_BEAM_SIZE,
};
pub use durham::durham;
pub use greedy::{greedy, greedy_scored};
pub use kt::{
    ee_generalised_kt, ee_generalised_kt_with_veto, generalised_kt, generalised_kt_with_veto,
    KtAlgorithm,
};
pub use linkage::{average_linkage, scipy_average_linkage};
pub use mass_ordering::invariant_mass_ordering;
pub use pt_ordering::{pt_evolution, pt_evolution_ordering};
pub use recombine::Veto;

use crate::subset::Subset;
use crate::tree::Tree;

/// Bad arguments to a search.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// A model or matrix with no leaves.
    #[error("the instance has no leaves; pass a model with at least one leaf")]
    Empty,
    /// More leaves than a cluster (a 64-bit mask) holds.
    #[error("{n} leaves: at most 64 are supported (clusters are 64-bit masks); use fewer leaves")]
    TooManyLeaves {
        /// Number of leaves.
        n: usize,
    },
    /// A beam size of 0 or above [`MAX_BEAM_SIZE`].
    #[error("beam size must be between 1 and {MAX_BEAM_SIZE}, got {beam_size} (pass e.g. default_beam_size(N))")]
    BeamSize {
        /// The beam size passed.
        beam_size: usize,
    },
    /// [`crate::cancel::cancel_all`] was called while the search ran.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
    /// Another bad argument (the message names it and the fix).
    #[error("{0}")]
    Invalid(String),
}

/// What greedy and beam search rank merges by. Both forms rank *complete* trees alike (they
/// differ by a constant over every tree), so the MAP is the same; they differ in the myopic
/// choice of the next merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeScore {
    /// The merge's own `log psi` (the papers' greedy and beam search).
    #[default]
    Potential,
    /// [`crate::model::SplitModel::log_psi_revenue`]: `log psi` plus a term that sums to a
    /// constant over every tree, crediting a merge with what it leaves unmerged (Moseley and
    /// Wang's revenue for Dasgupta's cost; its like for correlation clustering). The same as
    /// `Potential` for the Ginkgo likelihood.
    Revenue,
}

impl MergeScore {
    /// The score of merging `a` and `b` (statistics `sa`, `sb`, parent `sp`).
    #[inline]
    pub fn of<M: crate::model::SplitModel>(
        self,
        model: &M,
        a: Subset,
        sa: &M::Stat,
        b: Subset,
        sb: &M::Stat,
        sp: &M::Stat,
    ) -> f64 {
        match self {
            MergeScore::Potential => model.log_psi_with(a, sa, b, sb, sp),
            MergeScore::Revenue => model.log_psi_revenue(a, sa, b, sb, sp),
        }
    }
}

/// `Ok(n)` when `n` leaves can be searched (1 to 64).
fn check_leaves(n: usize) -> Result<usize, SearchError> {
    match n {
        0 => Err(SearchError::Empty),
        n if n > Subset::MAX_LEAVES => Err(SearchError::TooManyLeaves { n }),
        n => Ok(n),
    }
}

/// A tree found by a search, with its log-likelihood under the model searched.
#[derive(Clone, Debug)]
pub struct Found {
    /// The tree.
    pub tree: Tree,
    /// Its log-likelihood (sum of `log psi` over its internal nodes).
    pub log_likelihood: f64,
}
