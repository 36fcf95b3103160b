//! # trellis-lab
//!
//! The experiment harness of trellis-lab: exact and approximate inference over hierarchical
//! clusterings, turned into the papers' tables and figures and into runs on a user's own data.
//!
//! The algorithms and their data types live in the `trellis-core` crate (no Parquet, charts or
//! configs), re-exported here under their old paths (`trellis_lab::exact::FullTrellis` is
//! `trellis_core::exact::FullTrellis`). This crate adds what turns them into results:
//! - [`experiment`]: one folder per experiment kind behind [`experiment::Experiment`] (config →
//!   data → methods → Parquet tables → charts drawn from the tables → `check` against expected
//!   numbers), the methods in one place ([`experiment::methods`]) and the chart toolkit.
//! - [`report`]: the static HTML report of a results folder.
//! - the `trellis-lab` command line (`run`, `check`, `plot`, `report`, `list`, `cluster`, ...).
//!
//! ## Example
//! Exact MAP tree and partition function of a small generated jet, checked against greedy:
//!
//! ```
//! use trellis_lab::data::ginkgo::{generate_dataset, GinkgoParams};
//! use trellis_lab::exact::FullTrellis;
//! use trellis_lab::search::greedy;
//!
//! let jets = generate_dataset(&GinkgoParams::qcd(), 1, 5, 8, 42, 10_000, "demo").unwrap();
//! let model = jets.jets[0].model().unwrap();
//! let trellis = FullTrellis::build(&model).unwrap();
//! assert!(greedy(&model).unwrap().log_likelihood <= trellis.map_log_likelihood() + 1e-9);
//! ```

#![deny(missing_docs)]

pub use trellis_core::{
    cancel, coalescent, data, exact, flat, hierarchy, memory, metrics, model, numeric, pydt,
    search, simd, subset, tree, wide,
};

pub mod experiment;
pub mod report;
