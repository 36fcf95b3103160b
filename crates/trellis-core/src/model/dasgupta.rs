//! Dasgupta's cost (Cluster Trellis paper, Eq. 4) as an energy on sibling pairs.
//!
//! Merging siblings `A` and `B` costs `(|A| + |B|) · w(A, B)`, with `w(A, B)` the total weight of
//! the edges between them; a tree's cost is the sum over its internal nodes (the cut form of
//! Dasgupta's cost restricted to binary trees). The potential is `log psi(A, B) = -β · cost`, so
//! the MAP tree minimises the cost whatever the temperature `β > 0`, which changes only `Z`.
//!
//! Per-cluster statistics hold the internal weight `W(S)`, so `w(A, B) = W(A ∪ B) - W(A) - W(B)`
//! costs O(1) per split.
//!
//! **Revenue form** (for greedy and beam search): every edge is cut exactly once, at the node
//! where its ends are joined, so `Σ_nodes w(A, B) = W` (all edges' weight) for every tree, and
//! Moseley and Wang's revenue `(n − |A ∪ B|) · w(A, B)` sums with the cost to the constant `n·W`.
//! Ranking merges by revenue (`log psi + β n w(A, B)`) leaves the MAP unchanged while the myopic
//! choice joins heavy edges early instead of the lightest ones (a merge's own cost is smallest
//! for the least similar pair).

use super::error::{check_beta_scale, ModelError};
use super::weights::WeightMatrix;
use super::SplitModel;
use crate::subset::Subset;

/// Dasgupta's cost over a similarity graph.
#[derive(Clone, Debug)]
pub struct DasguptaModel {
    weights: WeightMatrix,
    beta: f64,
}

impl DasguptaModel {
    /// The model for similarity `weights` at inverse temperature `beta` (Dasgupta's weights are
    /// non-negative; negative ones are allowed, e.g. for the negated weights of Section 4.4).
    /// `beta` must be a positive finite number ([`ModelError::BadBeta`] otherwise).
    pub fn new(weights: WeightMatrix, beta: f64) -> Result<DasguptaModel, ModelError> {
        let beta = check_beta_scale(beta, weights.len(), weights.abs_sum())?;
        Ok(DasguptaModel { weights, beta })
    }

    /// The cost of one merge, `(|A| + |B|) · w(A, B)`.
    pub fn merge_cost(&self, a: Subset, b: Subset) -> f64 {
        let cross = self.weights.pair_sum(a.union(b), |x| x)
            - self.weights.pair_sum(a, |x| x)
            - self.weights.pair_sum(b, |x| x);
        (a.len() + b.len()) as f64 * cross
    }

    /// Dasgupta's cost of a tree: `-log phi(H) / β`.
    pub fn tree_cost(&self, tree: &crate::tree::Tree) -> f64 {
        tree.splits()
            .iter()
            .map(|&(a, b)| self.merge_cost(a, b))
            .sum()
    }

    /// The inverse temperature.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The similarity weights.
    pub fn weights(&self) -> &WeightMatrix {
        &self.weights
    }
}

impl SplitModel for DasguptaModel {
    /// Internal weight `W(S)`.
    type Stat = f64;

    fn lane_model(&self) -> Option<super::LaneModel<'_>> {
        Some(super::LaneModel::Dasgupta(self))
    }

    fn n_leaves(&self) -> usize {
        self.weights.len()
    }

    fn stat(&self, s: Subset) -> f64 {
        self.weights.pair_sum(s, |x| x)
    }

    fn stat_table(&self) -> Result<Vec<f64>, ModelError> {
        self.weights.pair_sums(|x| x)
    }

    #[inline]
    fn log_psi_with(&self, a: Subset, wa: &f64, b: Subset, wb: &f64, wp: &f64) -> f64 {
        -self.beta * (a.len() + b.len()) as f64 * (wp - wa - wb)
    }

    /// Moseley and Wang's revenue `β (n − |A ∪ B|) w(A, B)` (the module docs).
    #[inline]
    fn log_psi_revenue(&self, a: Subset, wa: &f64, b: Subset, wb: &f64, wp: &f64) -> f64 {
        let outside = (self.weights.len() - a.len() - b.len()) as f64;
        self.beta * outside * (wp - wa - wb)
    }
}
