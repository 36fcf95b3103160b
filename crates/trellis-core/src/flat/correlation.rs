//! Correlation clustering as a flat cluster energy (the paper's energy model, Section 5).
//!
//! With signed pairwise affinities `a_ij` and an inverse temperature `β`, a cluster's
//! log-energy is `log E(C) = β Σ_{i<j ∈ C} a_ij` (0 for a singleton), so the log-energy of a
//! clustering is `β` times the total affinity inside its clusters, and the MAP clustering
//! maximises within-cluster affinity. That is the correlation-clustering objective: the
//! agreements (positive affinity inside clusters plus the magnitude of negative affinity across
//! them) equal the within-cluster affinity plus a constant, the total negative magnitude.
//!
//! The table of all `2^N` cluster log-energies costs `O(N 2^N)`
//! ([`WeightMatrix::pair_sums`]: each subset adds its highest point's affinities to a smaller
//! subset's sum), the dynamic programme over cluster energies of the paper's appendix.

use super::{ClusterEnergy, FlatError};
use crate::model::weights::WeightMatrix;
use crate::subset::Subset;

/// The correlation-clustering energy `log E(C) = β Σ_{i<j ∈ C} a_ij` over signed affinities.
#[derive(Clone, Debug, PartialEq)]
pub struct PairwiseAffinity {
    affinities: WeightMatrix,
    beta: f64,
}

impl PairwiseAffinity {
    /// The energy of `affinities` at `β = 1`.
    pub fn new(affinities: WeightMatrix) -> PairwiseAffinity {
        PairwiseAffinity {
            affinities,
            beta: 1.0,
        }
    }

    /// The energy of `affinities` at inverse temperature `beta` (finite and `>= 0`; `0` gives the
    /// uniform distribution over all clusterings).
    pub fn with_beta(affinities: WeightMatrix, beta: f64) -> Result<PairwiseAffinity, FlatError> {
        if !(beta.is_finite() && beta >= 0.0) {
            return Err(FlatError::BadParameter {
                name: "beta",
                value: beta,
                expected: "the inverse temperature must be finite and >= 0",
            });
        }
        Ok(PairwiseAffinity { affinities, beta })
    }

    /// The affinity matrix.
    pub fn affinities(&self) -> &WeightMatrix {
        &self.affinities
    }

    /// The inverse temperature `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// `β a_ij`, the log-energy one pair adds to a cluster holding both (0 for `i == j`);
    /// `None` when `i` or `j` is not a point.
    pub fn pair_log_energy(&self, i: usize, j: usize) -> Option<f64> {
        Some(self.beta * self.affinities.get(i, j)?)
    }
}

impl ClusterEnergy for PairwiseAffinity {
    fn n_points(&self) -> usize {
        self.affinities.len()
    }

    fn log_energy(&self, c: Subset) -> f64 {
        // Sum first, then scale: the same operations as the table below (bit-identical).
        self.beta * self.affinities.pair_sum(c, |x| x)
    }

    fn log_energy_table(&self) -> Result<Vec<f64>, FlatError> {
        let mut t = self.affinities.pair_sums(|x| x)?;
        if self.beta != 1.0 {
            for v in &mut t {
                *v *= self.beta;
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_single_clusters_to_the_bit() {
        let rows: Vec<Vec<f64>> = (0..7)
            .map(|i| {
                (0..7)
                    .map(|j| {
                        let (a, b) = (i.min(j), i.max(j));
                        ((a * 13 + b * 7) % 11) as f64 * 0.3 - 1.4
                    })
                    .collect()
            })
            .collect();
        for beta in [1.0, 0.37] {
            let m = PairwiseAffinity::with_beta(WeightMatrix::new(rows.clone()).unwrap(), beta)
                .unwrap();
            let t = m.log_energy_table().unwrap();
            assert_eq!(t[0], 0.0);
            for b in 1..1u64 << 7 {
                assert_eq!(t[b as usize].to_bits(), m.log_energy(Subset(b)).to_bits());
            }
            // A singleton has energy 1; a pair has its own affinity.
            assert_eq!(m.log_energy(Subset::singleton(3)), 0.0);
            let pair = Subset::from_indices([2, 5]);
            assert_eq!(Some(m.log_energy(pair)), m.pair_log_energy(2, 5));
        }
        let w = WeightMatrix::new(vec![vec![0.0]]).unwrap();
        assert!(PairwiseAffinity::with_beta(w.clone(), f64::NAN).is_err());
        assert!(PairwiseAffinity::with_beta(w, -1.0).is_err());
    }
}
