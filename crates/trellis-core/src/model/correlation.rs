//! Hierarchical correlation clustering (Cluster Trellis paper, Eq. 7) as an energy on sibling
//! pairs.
//!
//! Merging siblings `A` and `B` costs the positive weights across them plus the magnitude of the
//! negative weights inside each:
//! `E(A, B) = Σ_{i∈A, j∈B} w⁺_ij − Σ_{i<j∈A} w⁻_ij − Σ_{i<j∈B} w⁻_ij`
//! (`w⁺`, `w⁻` the positive and negative parts). The potential is `log psi = -β E`; the MAP tree
//! minimises the total energy.
//!
//! Per-cluster statistics hold the positive and the negative internal sums, so a split is O(1).
//!
//! **Revenue form** (for greedy and beam search). Over a whole tree the positive part is paid once
//! per pair, at the node joining it, so it sums to `W⁺` (all positive weight) for every tree; a
//! negative pair is paid at every node above the one joining it, so
//! `E(T) = W⁺ + Σ_{i<j} |w⁻_ij| · depth(lca(i, j))`: only the dissimilar pairs decide the MAP,
//! which separates them as near the root as it can. A merge's own energy is smallest for the
//! least similar pair, so the myopic greedy joins dissimilar points first. Two terms sum to a
//! constant over every tree: the positive cross weight `P(A, B)` (to `W⁺`) and the negative cross
//! magnitude `N(A, B)` (to `|W⁻|`). Adding `2P − N` to the energy's negation gives the revenue
//! score `−[N_in(A ∪ B) − P(A, B)]`, with `N_in(S)` the negative magnitude inside `S`: the
//! dissimilarity the new cluster holds, less the similarity its merge joins. It ranks complete
//! trees as `E` does (the MAP is unchanged); on singletons it is the pair's signed weight, so the
//! first merge joins the most similar pair; later it is the signed cross weight less the
//! dissimilarity both clusters already hold.

use super::error::{check_beta_scale, ModelError};
use super::weights::WeightMatrix;
use super::SplitModel;
use crate::subset::Subset;

/// The hierarchical correlation-clustering energy over signed affinities.
#[derive(Clone, Debug)]
pub struct CorrelationModel {
    weights: WeightMatrix,
    beta: f64,
}

/// Internal sums of one cluster.
#[derive(Clone, Copy, Debug, Default)]
pub struct CorrelationStat {
    /// Sum of the positive weights inside.
    pub positive: f64,
    /// Sum of the negative weights inside (≤ 0).
    pub negative: f64,
}

impl CorrelationModel {
    /// The model for signed `weights` at inverse temperature `beta` (a positive finite number;
    /// anything else is [`ModelError::BadBeta`]).
    pub fn new(weights: WeightMatrix, beta: f64) -> Result<CorrelationModel, ModelError> {
        let beta = check_beta_scale(beta, weights.len(), weights.abs_sum())?;
        Ok(CorrelationModel { weights, beta })
    }

    /// The inverse temperature.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// `E(A, B)` of one merge.
    pub fn merge_energy(&self, a: Subset, b: Subset) -> f64 {
        let (sa, sb, sp) = (self.stat(a), self.stat(b), self.stat(a.union(b)));
        (sp.positive - sa.positive - sb.positive) - sa.negative - sb.negative
    }

    /// The energy of a tree: `-log phi(H) / β`.
    pub fn tree_energy(&self, tree: &crate::tree::Tree) -> f64 {
        tree.splits()
            .iter()
            .map(|&(a, b)| self.merge_energy(a, b))
            .sum()
    }
}

impl SplitModel for CorrelationModel {
    type Stat = CorrelationStat;

    fn lane_model(&self) -> Option<super::LaneModel<'_>> {
        Some(super::LaneModel::Correlation(self))
    }

    fn n_leaves(&self) -> usize {
        self.weights.len()
    }

    fn stat(&self, s: Subset) -> CorrelationStat {
        CorrelationStat {
            positive: self.weights.pair_sum(s, |x| x.max(0.0)),
            negative: self.weights.pair_sum(s, |x| x.min(0.0)),
        }
    }

    fn stat_table(&self) -> Result<Vec<CorrelationStat>, ModelError> {
        let p = self.weights.pair_sums(|x| x.max(0.0))?;
        let q = self.weights.pair_sums(|x| x.min(0.0))?;
        Ok(p.into_iter()
            .zip(q)
            .map(|(positive, negative)| CorrelationStat { positive, negative })
            .collect())
    }

    #[inline]
    fn log_psi_with(
        &self,
        _a: Subset,
        sa: &CorrelationStat,
        _b: Subset,
        sb: &CorrelationStat,
        sp: &CorrelationStat,
    ) -> f64 {
        let energy = (sp.positive - sa.positive - sb.positive) - sa.negative - sb.negative;
        -self.beta * energy
    }

    /// `−β [N_in(A ∪ B) − P(A, B)]` (the module docs).
    #[inline]
    fn log_psi_revenue(
        &self,
        _a: Subset,
        sa: &CorrelationStat,
        _b: Subset,
        sb: &CorrelationStat,
        sp: &CorrelationStat,
    ) -> f64 {
        let cross_positive = sp.positive - sa.positive - sb.positive;
        // `negative` sums are ≤ 0: the magnitude inside the union is `-sp.negative`.
        -self.beta * (-sp.negative - cross_positive)
    }
}
