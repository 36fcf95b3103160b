//! Exact inference by dynamic programming over clusters (the cluster trellis).

pub mod astar;
pub mod bounds;
pub mod coclustering;
pub mod evidence;
pub mod full;
pub(crate) mod lanes;
pub mod map_ties;
pub mod map_trellis;
pub mod marginals;
pub mod rank;
pub mod sample;
pub mod sparse;
mod split_loop;

pub use astar::{astar, AstarOptions, AstarResult, AstarStats, Budget, StopReason};
pub use bounds::{DasguptaBound, GinkgoBound, SubtreeBound};
pub use coclustering::CoClustering;
pub use evidence::{
    evidence_curve, fit_lambda_by_evidence, fit_lambda_by_evidence_split_loop,
    fit_lambda_by_evidence_with, fit_lambda_on_trees, fit_lambda_on_trees_with, tree_curve,
    FitError, LambdaFit, Likelihood, ObjectiveCurve,
};
pub use full::{FullTrellis, TrellisCost};
pub use map_ties::TIE_TOLERANCE;
pub use map_trellis::MapTrellis;
pub use marginals::{cluster_marginal, Marginals};
pub use sample::PosteriorSampler;
pub use sparse::{SparseResult, SparseTrellis};

/// Errors of the exact algorithms.
#[derive(Debug, thiserror::Error)]
pub enum ExactError {
    /// The instance is too large for the full trellis.
    #[error(
        "N = {n} leaves is above the exact-trellis limit of {limit}: the full trellis would need about {} of memory and {:.1e} split evaluations, ~{} on 2 cores at the measured {:.1} ns per split and core (time grows 3x and memory 2x per leaf); use beam search, greedy or A* (`exact::astar`) for this instance, the MAP-only trellis (`exact::MapTrellis`, config key `map_trellis`) for its exact MAP alone (about 2.5 min and 1.1 GiB at N = 24), or raise the limit (config key `max_exact_leaves`) if the machine has the memory",
        human_bytes(.cost.bytes), .cost.splits, human_seconds(.cost.seconds), .cost.ns_per_split
    )]
    TooManyLeaves {
        /// Number of leaves asked for.
        n: usize,
        /// The configured limit.
        limit: usize,
        /// What the run would cost.
        cost: TrellisCost,
    },
    /// The instance would need more memory than the process may use.
    #[error(
        "N = {n} leaves would need about {} of memory for the exact trellis, more than the {} this process may use (~{} on 2 cores besides); at most {fits} leaves fit here: lower the limit (config key `max_exact_leaves`) to {fits} or less, or use beam search, greedy or A*",
        human_bytes(.cost.bytes), human_bytes(*.usable as f64), human_seconds(.cost.seconds)
    )]
    TooMuchMemory {
        /// Number of leaves asked for.
        n: usize,
        /// What the run would cost.
        cost: TrellisCost,
        /// Bytes this process may use ([`crate::memory::usable_bytes`]).
        usable: u64,
        /// The most leaves whose trellis fits.
        fits: usize,
    },
    /// A cluster that is empty or names leaves outside `0..N`.
    #[error("cluster {cluster} is not a non-empty subset of the {n} leaves 0..{n}; name leaves by their index")]
    BadCluster {
        /// The cluster asked for.
        cluster: String,
        /// Number of leaves.
        n: usize,
    },
    /// An instance with no leaves.
    #[error("the instance has no leaves; pass a model with at least one leaf")]
    Empty,
    /// More leaves than a structure supports.
    #[error("{what} over N = {n} leaves is too large: at most {limit} leaves; use fewer leaves")]
    TooLarge {
        /// What was asked for.
        what: &'static str,
        /// Number of leaves asked for.
        n: usize,
        /// The largest N allowed.
        limit: usize,
    },
    /// A model over a different number of leaves than the trellis.
    #[error("the model has {model} leaves but the trellis was built over {trellis}; pass the model the trellis was built from")]
    ModelMismatch {
        /// Leaves of the trellis.
        trellis: usize,
        /// Leaves of the model.
        model: usize,
    },
    /// A cluster reached by sampling has no split of positive weight: the model is not the one
    /// the trellis was built from (or its potentials are NaN).
    #[error("cluster {cluster} has no split of positive posterior weight under this model; pass the model the trellis was built from")]
    NotFromModel {
        /// The cluster.
        cluster: String,
    },
    /// No tree has a finite likelihood, so the posterior is undefined.
    #[error("no tree has finite likelihood, so the posterior is undefined; check the model's forbidden (-inf) splits")]
    NoFiniteTree,
    /// A [`SparseResult`] passed to a different sparse trellis than the one that ran it.
    #[error("the result ({got} vertices) is not a run of this sparse trellis ({want} vertices); pass the result of this trellis's run")]
    ForeignResult {
        /// Vertices of the result.
        got: usize,
        /// Vertices of the trellis.
        want: usize,
    },
    /// A [`crate::model::SplitModel::stat_table`] of the wrong length.
    #[error("the model's stat_table has {len} entries but N = {n} leaves need 2^{n}; fix the model's stat_table")]
    BadStatTable {
        /// Entries returned.
        len: usize,
        /// Number of leaves.
        n: usize,
    },
    /// A tree scored against a trellis over another number of leaves.
    #[error("the tree has {tree} leaves but the trellis was built over {trellis}; pass a tree over the trellis's {trellis} leaves")]
    TreeMismatch {
        /// Leaves of the tree.
        tree: usize,
        /// Leaves of the trellis.
        trellis: usize,
    },
    /// More samples asked for at once than fit in memory.
    #[error("{k} samples over {n} leaves would take about {} kept in memory, more than the {} this process may use; draw at most {fits} at a time", human_bytes(*bytes), human_bytes(*usable as f64))]
    TooManySamples {
        /// Samples asked for.
        k: usize,
        /// Leaves per tree.
        n: usize,
        /// Bytes they would take ([`sample::sample_bytes`] each).
        bytes: f64,
        /// Bytes this process may use ([`crate::memory::usable_bytes`]).
        usable: u64,
        /// How many would fit.
        fits: u64,
    },
    /// The computation was cancelled ([`crate::cancel`]) while it ran.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
    /// The model refused to build its statistics.
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
}

/// `(finite trees, the largest log-likelihood, log Z)` of `m` by enumerating every tree (the
/// tests' brute force).
#[cfg(test)]
pub(crate) fn enumerate_trees<M: crate::model::SplitModel>(m: &M) -> (u128, f64, f64) {
    let all = crate::tree::Tree::enumerate_all(crate::subset::Subset::full(m.n_leaves())).unwrap();
    let lls: Vec<f64> = all.iter().map(|t| t.log_likelihood(m)).collect();
    let finite = lls.iter().filter(|x| x.is_finite()).count() as u128;
    let max = lls.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let lz = lls
        .iter()
        .cloned()
        .fold(f64::NEG_INFINITY, crate::model::log_add_exp);
    (finite, max, lz)
}

/// Formats a byte count as KiB/MiB/GiB/TiB.
pub fn human_bytes(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if v >= 1024.0 * 1024.0 {
        // Beyond any machine's memory: the order of magnitude, not a 100-digit count.
        return format!(
            "far more than any machine holds (about 10^{:.0} bytes)",
            b.log10().floor()
        );
    }
    format!("{v:.1} {}", units[u])
}

/// Formats seconds as s/min/h/days/years; beyond a thousand years, the order of magnitude (a
/// cost model's 150-digit day count says nothing more).
pub fn human_seconds(s: f64) -> String {
    const YEAR: f64 = 365.25 * 86_400.0;
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s < 2.0 * YEAR {
        format!("{:.0} days", s / 86_400.0)
    } else if s < 1000.0 * YEAR {
        format!("{:.0} years", s / YEAR)
    } else if s.is_finite() {
        format!(
            "far beyond any machine (about 10^{:.0} years)",
            (s / YEAR).log10().floor()
        )
    } else {
        "far beyond any machine".to_string()
    }
}
