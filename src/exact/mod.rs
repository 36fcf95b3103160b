//! Exact inference by dynamic programming over clusters (the cluster trellis).

pub mod full;
pub mod marginals;
pub mod sample;
pub mod sparse;

pub use full::{FullTrellis, TrellisCost};
pub use marginals::{cluster_marginal, Marginals};
pub use sample::PosteriorSampler;
pub use sparse::{SparseResult, SparseTrellis};

/// Errors of the exact algorithms.
#[derive(Debug, thiserror::Error)]
pub enum ExactError {
    /// The instance is too large for the full trellis.
    #[error(
        "N = {n} leaves is above the exact-trellis limit of {limit}: the full trellis would need about {} of memory and {:.1e} split evaluations (~{}); use beam search or greedy for this instance, or raise the limit (config key `max_exact_leaves`) if the machine has the memory",
        human_bytes(.cost.bytes), .cost.splits, human_seconds(.cost.seconds)
    )]
    TooManyLeaves {
        /// Number of leaves asked for.
        n: usize,
        /// The configured limit.
        limit: usize,
        /// What the run would cost.
        cost: TrellisCost,
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
    #[error("the instance has no leaves")]
    Empty,
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
    format!("{v:.1} {}", units[u])
}

/// Formats seconds as s/min/h/days.
pub fn human_seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.0} days", s / 86_400.0)
    }
}
