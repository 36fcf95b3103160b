//! Approximate MAP search: agglomerative greedy and beam search on a model's energy (the
//! paper's baselines), average linkage on a similarity graph, and the generalised kt jet
//! algorithms on four-momenta.

pub mod beam;
pub mod greedy;
pub mod kt;
pub mod linkage;

pub use beam::{
    beam_search, beam_search_all, beam_search_with, default_beam_size, Dedup, MAX_BEAM_SIZE,
};
pub use greedy::greedy;
pub use kt::{generalised_kt, KtAlgorithm};
pub use linkage::average_linkage;

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
