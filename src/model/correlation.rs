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
}
