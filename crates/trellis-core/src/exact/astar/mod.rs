//! Exact MAP by A* (AO*) over the clusters of a lazily built trellis, with certificates
//! (design note `docs/design/astar.md`, §1 and §4).
//!
//! The search space is the AND/OR graph of the cluster trellis: a cluster chooses a split (OR),
//! a split needs both children solved (AND). Every cluster the search touches becomes a node with
//! an upper bound `U(C) >= V(C)` on the best log-likelihood of a tree over it, first the
//! heuristic's [`SubtreeBound::bound`]. *Expanding* a cluster scores its splits by `f(A, B) =
//! log psi(A, B) + U(A) + U(B)` (children not yet in the trellis count with
//! [`SubtreeBound::quick`]) and keeps the best `K` of them in a queue, plus a *residual*: the
//! largest `f` of those it dropped. Queue entries are refreshed lazily: when an entry reaches the
//! top its `f` is recomputed from the children's current bounds (creating their nodes), and it is
//! pushed back if it dropped. Since bounds only decrease, a stale `f` stays an upper bound, so a
//! *fresh* top (recomputed and still on top, and not below the residual) is the best split:
//! `U(C)` becomes `min(U(C), f_top)`. When the residual reaches the top, the cluster's splits are
//! enumerated again with a store four times as large. A cluster is *solved* when its fresh top split
//! has solved children; then `U(C) = V(C)`.
//!
//! Each iteration walks down from the root along fresh top splits (the best partial hierarchy),
//! expands its unexpanded frontier clusters and backs the bounds up on the way out. The search
//! stops when the root is solved, or when `U(root)` is within the tolerance of the best complete
//! tree known (the *incumbent*, seeded by beam search and greedy and improved during the search
//! by completing the best partial hierarchy), or when a budget runs out; then the incumbent is
//! returned with the certified interval `[log-likelihood, U(root)]` that holds the MAP value.
//!
//! **Optimality.** `U` stays an upper bound on `V` by induction over clusters: a leaf's is exact,
//! a stored `f` is at least the current `log psi + U(A) + U(B) >= log psi + V(A) + V(B)`, the
//! residual bounds every dropped split, and `V(C)` is the maximum over splits. Admissibility is
//! enough (values are backed up per cluster, so no path is closed early); the bounds in
//! [`super::bounds`] are also consistent. Round-off: the bounds carry a margin, sums are formed
//! in one fixed order (`log psi + U(A) + U(B)`) so that a recomputed `f` never exceeds the stored
//! one, and the certificate allows a relative tolerance ([`AstarOptions::tol`]).
//!
//! **Memory.** Nodes live in an arena indexed by a hash map on the cluster's bits; a node keeps
//! its statistics, its bound, its state and (while open) its split store of at most `K` entries
//! of 16 bytes. Solved and dead clusters drop their store. Bytes are counted from these
//! structures (arena, map, stores, the statistics table), not from the allocator, so parallel
//! jobs do not disturb the count, and [`Budget::max_bytes`] is enforced before each allocation
//! that could cross it. The search is single-threaded and deterministic: the same options give
//! the same result bits.

mod search;

use super::bounds::SubtreeBound;
use super::ExactError;
use crate::model::SplitModel;
use crate::search::{beam_search, default_beam_size, greedy, MAX_BEAM_SIZE};
use crate::subset::Subset;
use crate::tree::Tree;
use search::Search;
use std::time::Instant;

/// Limits on one search. `None` is unlimited. Expansions and split evaluations are
/// deterministic (tests use those); bytes are counted from the search's own structures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    /// Clusters expanded (first enumeration of a cluster's splits).
    pub max_expansions: Option<u64>,
    /// Splits scored (over all enumerations; checked before each enumeration).
    pub max_splits: Option<u64>,
    /// Bytes of the search's structures.
    pub max_bytes: Option<u64>,
    /// Wall-clock seconds (not deterministic).
    pub max_seconds: Option<f64>,
}

/// Options of [`astar`].
#[derive(Clone, Debug)]
pub struct AstarOptions {
    /// Limits; when one runs out the incumbent is returned with its certified gap.
    pub budget: Budget,
    /// Extra incumbent trees (each over all leaves) besides beam search and greedy.
    pub incumbents: Vec<Tree>,
    /// Beam size of the seeding beam search: `None` for `default_beam_size(N)`, `Some(0)` for no
    /// beam search.
    pub beam_size: Option<usize>,
    /// Whether greedy agglomeration seeds the incumbent too.
    pub greedy: bool,
    /// Splits kept per cluster at its first expansion (`K`; four times more at each re-enumeration).
    pub splits_kept: usize,
    /// Relative certification tolerance: certified when `U(root) - LB <= tol · max(1, |LB|)`.
    pub tol: f64,
    /// Largest `N` for which the model's statistics of all `2^N` subsets are tabulated (O(1)
    /// statistics per split instead of [`SplitModel::stat`]), when the table takes at most a
    /// quarter of [`Budget::max_bytes`].
    pub stat_table_leaves: usize,
}

impl Default for AstarOptions {
    fn default() -> Self {
        AstarOptions {
            budget: Budget::default(),
            incumbents: Vec::new(),
            beam_size: None,
            greedy: true,
            splits_kept: 64,
            tol: 1e-10,
            stat_table_leaves: 24,
        }
    }
}

/// Why a search stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The root was solved: the tree is a MAP tree.
    Solved,
    /// `U(root)` came within the tolerance of the incumbent: the incumbent is a MAP tree.
    GapClosed,
    /// [`Budget::max_expansions`] ran out.
    Expansions,
    /// [`Budget::max_splits`] ran out.
    Splits,
    /// [`Budget::max_bytes`] ran out.
    Bytes,
    /// [`Budget::max_seconds`] ran out.
    Seconds,
}

impl StopReason {
    /// A short lowercase name (`"solved"`, `"gap_closed"`, `"expansions"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Solved => "solved",
            StopReason::GapClosed => "gap_closed",
            StopReason::Expansions => "expansions",
            StopReason::Splits => "splits",
            StopReason::Bytes => "bytes",
            StopReason::Seconds => "seconds",
        }
    }
}

/// Work counters of one search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AstarStats {
    /// Walks from the root.
    pub iterations: u64,
    /// Clusters whose splits were enumerated (once each).
    pub clusters_expanded: u64,
    /// Further enumerations of an expanded cluster (its store ran dry).
    pub reenumerations: u64,
    /// Splits scored, over all enumerations.
    pub splits_evaluated: u64,
    /// Clusters in the lazily built trellis (nodes), leaves excluded.
    pub trellis_nodes: u64,
    /// Peak bytes of the search's structures.
    pub peak_bytes: u64,
    /// Wall-clock seconds, seeding included.
    pub seconds: f64,
}

/// The result of [`astar`].
#[derive(Clone, Debug)]
pub struct AstarResult {
    /// The best tree found (a MAP tree when `certified`).
    pub tree: Tree,
    /// Its log-likelihood, recomputed with [`Tree::log_likelihood`]: a lower bound on the MAP.
    pub log_likelihood: f64,
    /// An upper bound on the MAP value (`U(root)`).
    pub upper_bound: f64,
    /// Whether the tree is proved to be a MAP tree (to the tolerance).
    pub certified: bool,
    /// Why the search stopped.
    pub stop: StopReason,
    /// Work counters.
    pub stats: AstarStats,
}

impl AstarResult {
    /// `upper_bound - log_likelihood`, at least 0: how far the MAP can be above the tree.
    pub fn gap(&self) -> f64 {
        (self.upper_bound - self.log_likelihood).max(0.0)
    }
}

/// Finds a MAP tree of `model` by AO* with the admissible `bound`, within `opts.budget`.
///
/// Errors: [`ExactError::Empty`] for no leaves, [`ExactError::BadCluster`] for an incumbent
/// that is not over all leaves, [`ExactError::NoFiniteTree`] when no tree has a finite
/// log-likelihood (as the full trellis).
pub fn astar<M: SplitModel, B: SubtreeBound<M>>(
    model: &M,
    bound: &B,
    opts: &AstarOptions,
) -> Result<AstarResult, ExactError> {
    let start = Instant::now();
    let n = model.n_leaves();
    if n == 0 {
        return Err(ExactError::Empty);
    }
    let full = Subset::full(n);
    let mut best: Option<(Tree, f64)> = None;
    let offer = |t: Tree, best: &mut Option<(Tree, f64)>| {
        let ll = t.log_likelihood(model);
        if best.as_ref().is_none_or(|b| ll > b.1) {
            *best = Some((t, ll));
        }
    };
    for t in &opts.incumbents {
        if t.leaves() != full {
            return Err(ExactError::BadCluster {
                cluster: t.leaves().to_string(),
                n,
            });
        }
        offer(t.clone(), &mut best);
    }
    let beam = opts.beam_size.unwrap_or_else(|| default_beam_size(n));
    if beam > 0 {
        if let Ok(f) = beam_search(model, beam.min(MAX_BEAM_SIZE)) {
            offer(f.tree, &mut best);
        }
    }
    if opts.greedy || best.is_none() {
        if let Ok(f) = greedy(model) {
            offer(f.tree, &mut best);
        }
    }
    let (tree, ll) = best.expect("greedy always returns a tree");
    if n == 1 {
        return Ok(AstarResult {
            tree,
            log_likelihood: 0.0,
            upper_bound: 0.0,
            certified: true,
            stop: StopReason::Solved,
            stats: AstarStats {
                seconds: start.elapsed().as_secs_f64(),
                ..AstarStats::default()
            },
        });
    }
    let table_bytes = ((1u128 << n) * std::mem::size_of::<M::Stat>() as u128) as f64;
    let table_fits = opts
        .budget
        .max_bytes
        .is_none_or(|m| table_bytes <= m as f64 / 4.0);
    // Without a table (too large, or the model refuses), statistics come from `model.stat`.
    let table = if n <= opts.stat_table_leaves && table_fits {
        model.stat_table().ok().filter(|t| t.len() == 1usize << n)
    } else {
        None
    };
    Search::new(model, bound, opts, table, start, (tree, ll)).run()
}
