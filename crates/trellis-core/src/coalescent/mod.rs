//! Kingman-coalescent clustering with Brownian transitions (Teh, Daumé & Roy; Görür & Teh; Henao
//! & Lucas): the prior, message passing, merge-time posteriors (truncated GIG), the SMC and
//! greedy variants, and the synthetic generator. The maths and its errata follow
//! `shared/specs/bayesian_baselines.md` §3–§7, cited by section in each file.

pub mod covariance;
pub mod generator;
pub mod gig;
pub mod greedy;
pub mod history;
pub mod learn;
pub mod linkage;
pub mod method;
pub mod metrics;
pub mod newick;
mod pairs;
pub mod smc;
pub mod variants;
