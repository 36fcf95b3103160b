//! Data sources: generators and loaders. They know nothing of algorithms.

pub mod ginkgo;
pub mod graphs;
pub mod pam50;
