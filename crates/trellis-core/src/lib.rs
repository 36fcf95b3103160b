//! # trellis-core
//!
//! The algorithms of trellis-lab and their data types: exact and approximate inference over
//! hierarchical clusterings, with no Parquet, charts or configs (the `trellis-lab` crate adds the
//! experiment layer, the figures and the command line on top).
//!
//! The *cluster trellis* (Greenberg, Macaluso et al., "Exact inference in hierarchical
//! clustering") is a dynamic programme over the `2^N` subsets of `N` leaves that gives, exactly,
//! the partition function over all `(2N-3)!!` binary trees, the MAP tree and the number of trees
//! with finite likelihood, in `O(3^N)` time. Beside it live the baselines the paper compares
//! against (greedy and beam search), the models (Ginkgo toy jets) and the data sources.
//!
//! ## Layout
//! - [`subset`]: `Subset`, a bitmask cluster; [`tree`]: `Tree` with Newick I/O.
//! - [`model`]: energy models behind [`model::SplitModel`] (`log psi` of a sibling pair): the
//!   Ginkgo jet likelihood, Dasgupta's cost, hierarchical correlation clustering.
//! - [`exact`]: the full trellis (log Z, MAP, counts, entropy), posterior sampling, cluster and
//!   sub-hierarchy marginals, the sparse trellis. [`search`]: greedy, beam search, average linkage.
//! - [`metrics`]: dendrogram purity.
//! - [`bhc`]: Bayesian hierarchical clustering and Bayesian rose trees with conjugate models,
//!   beside the exact DPM evidence and the best tree under BHC's objective.
//! - [`data`]: the Ginkgo generator and jet files, graphs, pam50, points and similarity tables.
//! - [`flat`]: the flat cluster trellis; [`hierarchy`]: `Hierarchy`, any tree with heights;
//!   [`coalescent`]: Kingman-coalescent SMC and greedy; [`pydt`]: Pitman-Yor diffusion trees.
//! - [`wide`]: Dasgupta's cost and correlation clustering at any N (no 64-bit masks): a tree's
//!   energy, greedy, beam search and the sparse trellis over a beam's trees.
//!
//! ## Example
//! Exact MAP tree and partition function of a small generated jet, checked against greedy:
//!
//! ```
//! use trellis_core::data::ginkgo::{generate_dataset, GinkgoParams};
//! use trellis_core::exact::FullTrellis;
//! use trellis_core::search::greedy;
//!
//! let jets = generate_dataset(&GinkgoParams::qcd(), 1, 5, 8, 42, 10_000, "demo").unwrap();
//! let model = jets.jets[0].model().unwrap();
//! let trellis = FullTrellis::build(&model).unwrap();
//! let map = trellis.map_tree();
//! assert!((map.log_likelihood(&model) - trellis.map_log_likelihood()).abs() < 1e-9);
//! // The MAP is at least as likely as anything greedy finds, and Z sums over every tree.
//! assert!(greedy(&model).unwrap().log_likelihood <= trellis.map_log_likelihood() + 1e-9);
//! assert!(trellis.log_partition() >= trellis.map_log_likelihood());
//! println!("MAP {} = {:.4}, log Z = {:.4}", map.to_newick(), trellis.map_log_likelihood(), trellis.log_partition());
//! ```

#![deny(missing_docs)]

pub mod bhc;
pub mod cancel;
pub mod coalescent;
pub mod data;
pub mod exact;
pub mod flat;
pub mod hierarchy;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod numeric;
pub mod pydt;
pub mod search;
pub mod simd;
pub mod subset;
pub mod tree;
pub mod wide;
