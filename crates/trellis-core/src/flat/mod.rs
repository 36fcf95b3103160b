//! The flat cluster trellis (Greenberg, Monath, Kobren, Flaherty, McGregor, McCallum, "Compact
//! Representation of Uncertainty in Clustering", NeurIPS 2018): exact distributions over *flat*
//! clusterings (set partitions) of `N` points.
//!
//! A clustering `{C_1, ..., C_K}` of the points `U = {0, ..., N-1}` has energy
//! `E(C_1) * ... * E(C_K)` (a sum of log-energies here, see [`ClusterEnergy`]) and probability
//! `E / Z`, with `Z` summed over all Bell(N) clusterings. Factoring out the cluster that holds
//! the lowest point of a set `S` gives the paper's recursion (Fact 1, Algorithm 1):
//!
//! `Z(S) = sum_{C ⊆ S, min(S) ∈ C} E(C) Z(S \ C)`, `Z(∅) = 1`,
//!
//! and, with `max` in place of the sum and a back-pointer per set, the MAP clustering
//! (Algorithm 2). Over all `2^N` subsets this is `O(3^N)` work. The marginal of a cluster is
//! `P(C) = E(C) Z(U \ C) / Z(U)` (Section 3.3), so once every `Z(S)` is known all cluster
//! marginals cost `O(2^N)`, and the probability that points `i` and `j` share a cluster is the
//! sum of `P(C)` over the clusters holding both.
//!
//! ## Layout
//! - [`trellis`]: [`FlatTrellis`], the full trellis (log Z, MAP, cluster and pairwise marginals).
//! - [`correlation`]: [`PairwiseAffinity`], the correlation-clustering energy
//!   `log E(C) = β Σ_{i<j ∈ C} a_ij`.
//! - [`sparse`]: [`SparseFlatTrellis`] over a vertex set closed under recursive complement
//!   (Section 4), and [`TreeFlatTrellis`], the tree-structured special case whose clusterings are
//!   the cuts of a hierarchy.
//! - [`perturb`]: [`PerturbAndMap`], the approximate pairwise marginals the paper compares with.
//! - [`enumerate`]: brute force over all set partitions (Bell(N) of them), for tests.
//! - [`convolution`]: `log Z` alone by fast subset convolution in `O(N^2 2^N)`, with an
//!   estimate of the digits its final alternating sum loses (beyond the paper).
//!
//! All values are in log space; a log-energy of `-inf` forbids a cluster and flows through every
//! algorithm (`log Z = -inf` when no clustering is allowed; the MAP clustering is then empty).
//!
//! ## Example
//! Four points where 0-1 and 2-3 attract and everything else repels:
//!
//! ```
//! use trellis_core::flat::{enumerate, FlatTrellis, PairwiseAffinity};
//! use trellis_core::model::WeightMatrix;
//! use trellis_core::subset::Subset;
//!
//! let a = vec![
//!     vec![0.0, 2.0, -1.0, -1.0],
//!     vec![2.0, 0.0, -1.0, -1.0],
//!     vec![-1.0, -1.0, 0.0, 1.5],
//!     vec![-1.0, -1.0, 1.5, 0.0],
//! ];
//! let model = PairwiseAffinity::new(WeightMatrix::new(a).unwrap());
//! let trellis = FlatTrellis::build(&model).unwrap();
//!
//! // log Z over the Bell(4) = 15 clusterings, checked against enumerating them.
//! let brute = enumerate::brute_force(&model).unwrap();
//! assert!((trellis.log_partition() - brute.log_z).abs() < 1e-12);
//!
//! // The MAP clustering is {0,1} {2,3}, with log-energy 2 + 1.5.
//! let map = trellis.map_clustering();
//! assert_eq!(map, vec![Subset::from_indices([0, 1]), Subset::from_indices([2, 3])]);
//! assert_eq!(trellis.map_log_energy(), 3.5);
//!
//! // P(i and j in the same cluster): high for 0-1, low for 0-2, 1 on the diagonal.
//! let p = trellis.pairwise_marginals();
//! assert!(p[0][1] > 0.8 && p[0][2] < 0.1 && p[3][3] == 1.0);
//! assert!((p[0][1] - brute.pairwise[0][1]).abs() < 1e-12);
//!
//! // The marginal of one cluster: E(C) Z(U \ C) / Z(U).
//! let c = Subset::from_indices([2, 3]);
//! let pc = trellis.cluster_marginal(c).unwrap();
//! assert!((pc - brute.cluster_marginals[c.index()]).abs() < 1e-12);
//! println!("log Z = {:.4}, MAP = {:?}, P(0~1) = {:.4}", trellis.log_partition(), map, p[0][1]);
//! ```

pub mod convolution;
pub mod correlation;
pub mod enumerate;
mod lanes;
pub mod perturb;
pub mod sparse;
pub mod trellis;

pub use convolution::{log_partition_by_convolution, ConvolutionLogZ};
pub use correlation::PairwiseAffinity;
pub use perturb::PerturbAndMap;
pub use sparse::{
    closure_under_recursive_complement, first_closure_violation,
    is_closed_under_recursive_complement, SparseFlatTrellis, TreeFlatTrellis,
};
pub use trellis::{exact_map_clustering, FlatCost, FlatTrellis};

use crate::subset::Subset;
use rayon::prelude::*;

/// An energy over single clusters; the energy of a clustering is the product of its clusters'
/// energies (the sum of their log-energies).
///
/// `log_energy` must return a finite value or `-inf` (a forbidden cluster); NaN and `+inf` are
/// rejected by the trellises.
pub trait ClusterEnergy: Sync {
    /// Number of points `N`; clusters are non-empty subsets of `0..N`.
    fn n_points(&self) -> usize;

    /// `log E(C)` of one non-empty cluster `c`.
    fn log_energy(&self, c: Subset) -> f64;

    /// `log E(C)` of every subset of `0..N`, indexed by bitmask (entry 0, the empty set, is 0 and
    /// never used). The default calls [`ClusterEnergy::log_energy`] for each subset (in
    /// parallel); models override it with an O(1)-per-subset recurrence. Errors for
    /// `N >` [`crate::model::MAX_TABLE_LEAVES`] (the table would not fit in memory).
    fn log_energy_table(&self) -> Result<Vec<f64>, FlatError> {
        let n = self.n_points();
        crate::model::error::check_table_size(n)?;
        Ok((0..1u64 << n)
            .into_par_iter()
            .map(|b| {
                if b == 0 {
                    0.0
                } else {
                    self.log_energy(Subset(b))
                }
            })
            .collect())
    }
}

impl<E: ClusterEnergy + ?Sized> ClusterEnergy for &E {
    fn n_points(&self) -> usize {
        (**self).n_points()
    }
    fn log_energy(&self, c: Subset) -> f64 {
        (**self).log_energy(c)
    }
    fn log_energy_table(&self) -> Result<Vec<f64>, FlatError> {
        (**self).log_energy_table()
    }
}

/// The log-energy of a clustering: the sum of its clusters' log-energies (`-inf` if any cluster
/// is forbidden). Does not check that `clustering` is a partition (see [`is_clustering_of`]).
pub fn clustering_log_energy<E: ClusterEnergy + ?Sized>(model: &E, clustering: &[Subset]) -> f64 {
    clustering.iter().map(|&c| model.log_energy(c)).sum()
}

/// True when `clustering` is a partition of `s` into non-empty, pairwise disjoint clusters.
pub fn is_clustering_of(s: Subset, clustering: &[Subset]) -> bool {
    let mut seen = Subset::EMPTY;
    for &c in clustering {
        if c.is_empty() || !c.is_disjoint(seen) {
            return false;
        }
        seen = seen.union(c);
    }
    seen == s
}

/// Errors of the flat-clustering algorithms.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FlatError {
    /// A model with no points.
    #[error("the model has no points; a flat trellis needs at least one point")]
    Empty,
    /// Too many points for the full trellis.
    #[error(
        "N = {n} points is above the flat-trellis limit of {limit}: the full trellis would need about {} of memory and {:.1e} terms (~{}); use a SparseFlatTrellis or Perturb-and-MAP for this instance, or FlatTrellis::build_with_limit if the machine has the memory and time",
        crate::exact::human_bytes(.cost.bytes), .cost.terms, crate::exact::human_seconds(.cost.seconds)
    )]
    TooManyPoints {
        /// Number of points asked for.
        n: usize,
        /// The limit in force.
        limit: usize,
        /// What the run would cost.
        cost: FlatCost,
    },
    /// A cluster that is empty or names points outside `0..N`.
    #[error("cluster {cluster} is not a non-empty subset of the {n} points 0..{n}; name points by their index")]
    BadCluster {
        /// The cluster, printed.
        cluster: String,
        /// Number of points.
        n: usize,
    },
    /// A log-energy that is NaN or `+inf`.
    #[error("log-energy of cluster {cluster} is {value}; log-energies must be finite or -inf (a forbidden cluster)")]
    BadEnergy {
        /// The cluster, printed.
        cluster: String,
        /// The offending value.
        value: f64,
    },
    /// [`crate::cancel::cancel_all`] was called while the trellis ran.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
    /// Marginals asked for when every clustering has zero energy.
    #[error("no clustering has non-zero energy (log Z = -inf), so marginals are undefined; allow at least one clustering (e.g. finite singleton energies)")]
    NoClustering,
    /// A sparse vertex set that is not closed under recursive complement.
    #[error("vertex set is not closed under recursive complement: {x} ⊂ {y} but {missing} is not a vertex; add it (closure_under_recursive_complement adds every missing complement)")]
    NotClosed {
        /// The smaller vertex.
        x: String,
        /// The larger vertex.
        y: String,
        /// `y \ x`, absent from the set.
        missing: String,
    },
    /// A sparse vertex set without the full set of points.
    #[error("the vertex set does not contain the full set of the {n} points; add Subset::full({n}) (every clustering is read from it)")]
    MissingFullSet {
        /// Number of points.
        n: usize,
    },
    /// The closure of a vertex set grew past the limit given.
    #[error("closing the vertex set under recursive complement exceeded {limit} vertices; start from fewer clusters or raise the limit")]
    ClosureTooLarge {
        /// The limit given.
        limit: usize,
    },
    /// A tree whose leaves are not exactly the model's points.
    #[error("the tree's leaves {leaves} are not the {n} points 0..{n} of the model; build the tree over every point once")]
    TreeLeaves {
        /// The tree's leaf set, printed.
        leaves: String,
        /// Number of points of the model.
        n: usize,
    },
    /// A [`ClusterEnergy::log_energy_table`] of the wrong length.
    #[error("the model's log_energy_table has {len} entries but N = {n} points need 2^{n}; fix the model's log_energy_table")]
    BadTable {
        /// Entries returned.
        len: usize,
        /// Number of points.
        n: usize,
    },
    /// The weights or the table could not be built.
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// A parameter outside its range.
    #[error("{name} = {value} is invalid: {expected}")]
    BadParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is allowed.
        expected: &'static str,
    },
}

/// `model`'s log-energy table, checked to have `2^N` entries.
pub(crate) fn checked_table<E: ClusterEnergy + ?Sized>(model: &E) -> Result<Vec<f64>, FlatError> {
    let n = model.n_points();
    let table = model.log_energy_table()?;
    if table.len() != 1usize << n {
        return Err(FlatError::BadTable {
            len: table.len(),
            n,
        });
    }
    Ok(table)
}

/// Checks that `c` is a non-empty subset of `0..n`.
pub(crate) fn check_cluster(n: usize, c: Subset) -> Result<(), FlatError> {
    if !c.is_cluster_of(n) {
        return Err(FlatError::BadCluster {
            cluster: c.to_string(),
            n,
        });
    }
    Ok(())
}

/// Checks one log-energy (finite or `-inf`).
#[inline]
pub(crate) fn check_energy(c: Subset, value: f64) -> Result<(), FlatError> {
    if value.is_nan() || value == f64::INFINITY {
        return Err(FlatError::BadEnergy {
            cluster: c.to_string(),
            value,
        });
    }
    Ok(())
}
