//! The PYDT prior over a tree's structure and divergence times (spec §2.4, paper eqs 9–14).
//!
//! For every internal node v (the zero node excluded), with K children carrying n_1..n_K leaves,
//! m = Σ n_k, and parent time t_p (0 for the root):
//! * structure factor S_v = ∏_{k=3..K}(θ+(k−1)α) · ∏_k Γ(n_k−α) / [Γ(m+θ) Γ(1−α)^{K−1}];
//! * time factor T_v = a(t_v) · exp{[A(t_p) − A(t_v)] · H_{m−1}}.
//!
//! p(T, t | θ, α, c) = ∏_v S_v T_v, and integrating the times out, P(T | θ, α) = ∏_v S_v/H_{m−1}.

use super::params::{Params, Tables};
use super::tree::PydtTree;

/// The two halves of the log prior of a tree: Σ_v log S_v and Σ_v log T_v.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorTerms {
    /// Σ_v log S_v (structure).
    pub ln_structure: f64,
    /// Σ_v log T_v (divergence times).
    pub ln_times: f64,
}

impl PriorTerms {
    /// log p(T, t | θ, α, c).
    pub fn total(&self) -> f64 {
        self.ln_structure + self.ln_times
    }
}

/// log S_v of internal node `v`.
pub fn ln_structure_factor(tree: &PydtTree, v: usize, tables: &Tables) -> f64 {
    tables.ln_s(tree.children(v).map(|c| tree.node(c).leaves))
}

/// log T_v of internal node `v` (segment form, eqs 10–11).
pub fn ln_time_factor(tree: &PydtTree, v: usize, params: &Params, tables: &Tables) -> f64 {
    // With s = −ln(1 − t): log a(t) = log c + s and A(t) = c·s.
    let (sv, sp) = (tree.s(v), tree.parent_s(v));
    let m = tree.node(v).leaves;
    params.c.ln() + sv + params.c * (sp - sv) * tables.h(m - 1)
}

/// J_v = H_{m−1} − Σ_k H_{n_k−1} (eq. 14): the exponent of (1 − t_v) in the per-node time factor
/// c·(1 − t_v)^{cJ_v − 1}.
pub fn j_value(tree: &PydtTree, v: usize, tables: &Tables) -> f64 {
    let m = tree.node(v).leaves;
    tables.h(m - 1)
        - tree
            .children(v)
            .map(|c| tables.h(tree.node(c).leaves - 1))
            .sum::<f64>()
}

/// Σ_v log S_v and Σ_v log T_v over the internal nodes of `tree`.
pub fn prior_terms(tree: &PydtTree, params: &Params, tables: &Tables) -> PriorTerms {
    let mut terms = PriorTerms {
        ln_structure: 0.0,
        ln_times: 0.0,
    };
    for v in tree.internal_nodes() {
        terms.ln_structure += ln_structure_factor(tree, v, tables);
        terms.ln_times += ln_time_factor(tree, v, params, tables);
    }
    terms
}

/// Σ_v log T_v by the per-node J form, Σ_v [log c + (cJ_v − 1)·log(1 − t_v)] (eq. 14); equal to
/// [`PriorTerms::ln_times`].
pub fn ln_times_j_form(tree: &PydtTree, params: &Params, tables: &Tables) -> f64 {
    tree.internal_nodes()
        .into_iter()
        .map(|v| params.c.ln() - (params.c * j_value(tree, v, tables) - 1.0) * tree.s(v))
        .sum()
}

/// log P(T | θ, α): the probability of the structure alone, times integrated out
/// (Σ_v log S_v − log H_{m_v − 1}; independent of c).
pub fn ln_structure_probability(tree: &PydtTree, tables: &Tables) -> f64 {
    tree.internal_nodes()
        .into_iter()
        .map(|v| ln_structure_factor(tree, v, tables) - tables.h(tree.node(v).leaves - 1).ln())
        .sum()
}
