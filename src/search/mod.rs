//! Approximate MAP search: agglomerative greedy and beam search on a model's energy (the
//! paper's baselines), and average linkage on a similarity graph.

pub mod beam;
pub mod greedy;
pub mod linkage;

pub use beam::{beam_search, beam_search_all, beam_search_with, default_beam_size, Dedup};
pub use greedy::greedy;
pub use linkage::average_linkage;

use crate::tree::Tree;

/// A tree found by a search, with its log-likelihood under the model searched.
#[derive(Clone, Debug)]
pub struct Found {
    /// The tree.
    pub tree: Tree,
    /// Its log-likelihood (sum of `log psi` over its internal nodes).
    pub log_likelihood: f64,
}
