//! Pitman–Yor diffusion trees (Knowles & Ghahramani, UAI 2011) and, as the special case
//! θ = α = 0, Neal's Dirichlet diffusion tree: the prior over multifurcating trees with
//! divergence times, the Gaussian likelihood by belief propagation, the generative process,
//! collapsed MCMC, Bayesian EM over the times, EP for probit data and the greedy EM structure
//! search that finds MAP trees. The maths, its reconstruction from the paper (whose
//! inline formulas were lost) and reference numbers follow `shared/specs/bayesian_baselines.md`
//! §2 and §6.1, cited by section in each file.
//!
//! - [`params`]: (θ, α, c, σ²) and the Γ-ratio / harmonic-number tables of the prior.
//! - [`tree`]: `PydtTree`, multifurcating with times; detach and attach.
//! - [`prior`]: structure and time factors, the J form, the structure probability.
//! - [`bp`]: belief propagation (likelihood, cavities, edge statistics, location sampling).
//! - [`generate`]: the generative process and the single-point path density.
//! - [`em`]: Bayesian EM over a tree's divergence times (L-BFGS M-step).
//! - [`ep`]: expectation propagation for the probit sites.
//! - [`search`]: the greedy Bayesian EM search over structures (MAP trees).
//! - [`mcmc`]: the collapsed sampler (detach/reattach, times, hyper-parameters, probit).
//! - [`probit`]: binary data through a probit link.
//! - [`predictive`]: the predictive density of held-out points.
//! - [`newick`]: Newick I/O with times; [`metrics`]: purity, subtree score, ARI on multifurcations.

pub mod bp;
pub mod em;
pub mod ep;
pub mod generate;
pub mod mcmc;
pub mod metrics;
pub mod newick;
pub mod params;
pub mod predictive;
pub mod prior;
pub mod probit;
pub mod search;
pub mod tree;

#[cfg(test)]
mod mcmc_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;

pub use bp::{Leaves, Messages};
pub use params::{Params, Tables};
pub use prior::PriorTerms;
pub use tree::{Position, PydtTree};

use thiserror::Error;

/// Errors of the PYDT code (one line each, naming the problem and the fix).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PydtError {
    /// A parameter outside its domain.
    #[error("PYDT parameter `{name}` = {value} is out of range: it needs {domain}")]
    Parameter {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The domain it needs.
        domain: &'static str,
    },
    /// An ill-formed tree.
    #[error("PYDT tree: {0}")]
    Tree(String),
    /// Ill-formed data.
    #[error("PYDT data: {0}")]
    Data(String),
    /// [`crate::cancel::cancel_all`] was called while the search or EM ran.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
}

/// log p(X, T, t | θ, α, c, σ²) = log p(X | T, t, σ²) + Σ_v (log S_v + log T_v) (spec §2.6).
pub fn ln_joint(
    tree: &PydtTree,
    leaves: &Leaves,
    params: &Params,
    tables: &Tables,
    msgs: &mut Messages,
) -> f64 {
    bp::ln_likelihood(tree, leaves, params.sigma2, msgs)
        + prior::prior_terms(tree, params, tables).total()
}
