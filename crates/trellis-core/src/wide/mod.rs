//! The two pairwise energies (Dasgupta's cost, hierarchical correlation clustering) at any `N`
//! (up to a few thousand leaves), where [`crate::subset::Subset`] stops at 64: a tree's energy,
//! greedy agglomeration, beam search and the sparse trellis over a beam's trees, with trees as
//! [`Hierarchy`].
//!
//! **Clusters without masks.** Both energies' split terms depend only on the two clusters'
//! sizes, their internal sums of (transformed) weights and the sum across them ([`model`]), and
//! a cross sum is additive (`w(A ∪ B, X) = w(A, X) + w(B, X)`). So a search holds a cluster as a
//! slot with its size and internal sums and keeps cross sums, not leaf lists: greedy between
//! every pair of current clusters (an `N × N` matrix; a merge adds two rows), beam search between
//! each live cluster and every *leaf* (`arena.rs`: a new cluster's row is its parts' rows added;
//! its cross sums with all the other clusters of a state cost O(N) together). A cache per pair
//! of live clusters, tried first, took 0.6 GB at N = 500 with a beam of 1500 and its updates
//! dominated the run. Leaf sets are needed only for identity (two merge orders reaching the same
//! cluster): `Vec<u64>` bitsets (`N / 64` words) are exact and small, found by a 64-bit XOR hash
//! of random per-leaf keys and confirmed on the bits.
//!
//! - [`energy`]: `log psi(T)` of a binary hierarchy, O(N²).
//! - [`greedy`]: O(N²) memory, O(N²) to O(N³) time; ties go to the first pair, clusters in
//!   order of creation, as [`crate::search::greedy_scored`].
//! - [`beam`]: [`crate::search::beam_search_scored`] with [`crate::search::Dedup::Clusters`];
//!   [`beam::work`] says its cost before it runs.
//! - [`sparse`]: the MAP over the trees a sparse trellis of seed trees encodes, as
//!   [`crate::exact::SparseTrellis`].
//!
//! Every loop checks [`crate::cancel::Cancel`] between batches of at most a few milliseconds;
//! every allocation beyond O(N) is checked against the memory this process may use before it
//! is made ([`WideError::TooLarge`] names the cost).

mod arena;
pub mod beam;
pub mod energy;
pub mod greedy;
pub mod model;
pub mod sparse;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_large;

pub use model::{Dasgupta, Hcc, PairModel, PairWeights, Signed, Stat};

use crate::hierarchy::Hierarchy;
use crate::model::ModelError;
use crate::search::MergeScore;

/// A tree found by a search, with its energy.
#[derive(Clone, Debug)]
pub struct Found {
    /// The tree (internal node `n + k` is the `k`-th merge; heights are cluster sizes).
    pub tree: Hierarchy,
    /// Its `log psi(T)` under the model ([`energy::log_psi`]).
    pub log_psi: f64,
}

/// Why a computation over many leaves did not run (one line each, naming the fix).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WideError {
    /// A model or matrix with no leaves.
    #[error("the instance has no leaves; pass at least one")]
    Empty,
    /// A weight matrix that is not square, symmetric and finite.
    #[error("{0}")]
    Weights(String),
    /// A bad temperature.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A beam size of 0 or above [`crate::search::MAX_BEAM_SIZE`].
    #[error("beam size must be between 1 and {max}, got {beam_size}", max = crate::search::MAX_BEAM_SIZE)]
    BeamSize {
        /// The beam size passed.
        beam_size: usize,
    },
    /// Memory the computation would need and this process may not use.
    #[error("{0}")]
    TooLarge(String),
    /// A tree that does not fit the model (another number of leaves, or not binary).
    #[error("{0}")]
    Tree(String),
    /// [`crate::cancel::cancel_all`] (or the caller's token) cancelled the computation.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
}

/// `Err(TooLarge)` unless `bytes` bytes for `what` fit in the memory this process may use.
pub(crate) fn check_bytes(what: &str, bytes: f64) -> Result<(), WideError> {
    crate::memory::check_fits(what, bytes).map_err(WideError::TooLarge)
}

/// A vector of `len` copies of `value`, its size checked first ([`check_bytes`]) and its
/// allocation failure an error, not an abort.
pub(crate) fn filled<T: Clone>(what: &str, len: usize, value: T) -> Result<Vec<T>, WideError> {
    let mut v = with_capacity(what, len)?;
    v.resize(len, value);
    Ok(v)
}

/// An empty vector with room for `len` elements, checked as [`filled`].
pub(crate) fn with_capacity<T>(what: &str, len: usize) -> Result<Vec<T>, WideError> {
    let bytes = len as f64 * std::mem::size_of::<T>() as f64;
    check_bytes(what, bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        WideError::TooLarge(format!(
            "{what} would take {}, which could not be allocated",
            crate::exact::human_bytes(bytes)
        ))
    })?;
    Ok(v)
}

/// `Err(Cancelled)` when `cancel` is cancelled.
#[inline]
pub(crate) fn check_cancel(cancel: &crate::cancel::Cancel) -> Result<(), WideError> {
    if cancel.is_cancelled() {
        Err(WideError::Cancelled)
    } else {
        Ok(())
    }
}

/// The score of merging clusters `a` and `b` whose cross sum is `cross`, ranked by `score`.
#[inline]
pub(crate) fn merge_score<M: PairModel>(
    model: &M,
    score: MergeScore,
    a: &Stat<M::Sums>,
    b: &Stat<M::Sums>,
    cross: M::Sums,
) -> f64 {
    match score {
        MergeScore::Potential => model.log_psi(a, b, cross),
        MergeScore::Revenue => model.log_psi_revenue(a, b, cross),
    }
}

/// The hierarchy of `n - 1` merges `(a, b)` of node ids (leaves `0..n`, merge `k` is node
/// `n + k`), heights the cluster sizes.
pub(crate) fn from_merges(n: usize, merges: &[(usize, usize)]) -> Result<Hierarchy, WideError> {
    let mut parent = vec![None; n + merges.len()];
    for (k, &(a, b)) in merges.iter().enumerate() {
        parent[a] = Some(n + k);
        parent[b] = Some(n + k);
    }
    Hierarchy::from_topology(n, parent).map_err(|e| WideError::Tree(e.to_string()))
}

/// Per-leaf random keys: a cluster's hash is the XOR of its leaves' keys (so the hash of a
/// union of disjoint clusters is the XOR of theirs).
pub(crate) fn leaf_keys(n: usize) -> Vec<u64> {
    (0..n as u64)
        .map(|i| crate::numeric::splitmix64_mix(i ^ 0x5EED_CAFE_F00D_D00D))
        .collect()
}
