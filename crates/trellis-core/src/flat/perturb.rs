//! Perturb-and-MAP approximate pairwise marginals, the baseline of the paper's Section 5.3.1
//! (after Kappes et al., "Probabilistic correlation clustering and image partitioning using
//! perturbed multicuts"; Papandreou and Yuille's Perturb-and-MAP).
//!
//! Each draw adds independent Gumbel noise to every *pairwise* log-potential,
//! `β a_ij  ->  β a_ij + σ (g_ij - c)`, `g_ij ~ Gumbel(0, 1)` (`σ` = [`PerturbAndMap::noise_scale`],
//! `c` = the Euler–Mascheroni constant when [`PerturbAndMap::centered`], else 0), finds the exact
//! MAP clustering of the perturbed energy with the flat trellis's Algorithm 2
//! ([`super::exact_map_clustering`]), and the pairwise marginal of `(i, j)` is estimated by the
//! fraction of draws whose MAP clustering puts `i` and `j` together.
//!
//! This is *not* a sampler of the Gibbs distribution: exact Perturb-and-MAP needs independent
//! noise on the energy of every one of the Bell(N) clusterings; noise on the `N(N-1)/2` pairs is
//! correlated across clusterings, and the estimate stays biased however many draws are taken
//! (the paper's Figure 3 shows it overestimating many marginals). Uncentered Gumbel noise, as in
//! the paper, also raises every affinity by `0.577 σ` on average, which favours merging.
//!
//! Draw `d` uses its own generator seeded from `(seed, d)`, and co-clustering counts are
//! integers, so the result is identical for any thread count.

use super::correlation::PairwiseAffinity;
use super::trellis::exact_map_clustering;
use super::FlatError;
use crate::model::weights::WeightMatrix;
use crate::subset::Subset;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

/// The Euler–Mascheroni constant, the mean of a standard Gumbel variable.
pub const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// Largest number of draws of a Perturb-and-MAP run (each keeps its MAP clustering).
pub const MAX_DRAWS: usize = 1_000_000;

/// Settings of a Perturb-and-MAP run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerturbAndMap {
    /// Number of perturbed MAP problems solved.
    pub draws: usize,
    /// Scale `σ` of the Gumbel noise on each pairwise log-potential `β a_ij` (1 in the paper).
    pub noise_scale: f64,
    /// Subtract the noise's mean (`0.577 σ`) so it does not shift the affinities (false in the
    /// paper).
    pub centered: bool,
    /// Master seed; draw `d` is seeded from `(seed, d)`.
    pub seed: u64,
}

impl PerturbAndMap {
    /// `draws` draws of standard, uncentered Gumbel noise (the paper's setting).
    pub fn new(draws: usize, seed: u64) -> PerturbAndMap {
        PerturbAndMap {
            draws,
            noise_scale: 1.0,
            centered: false,
            seed,
        }
    }

    /// The seed of draw `d`: the master seed and `d` mixed by SplitMix64.
    pub fn draw_seed(&self, d: usize) -> u64 {
        crate::numeric::splitmix64_mix(
            self.seed
                .wrapping_add((d as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        )
    }

    /// The perturbed energy of draw `d`: pairwise log-potentials `β a_ij + σ (g_ij - c)` (at
    /// `β = 1`), the noise drawn row by row over the pairs `i < j`. Errors for a noise scale
    /// that is negative or not finite, and when a perturbed log-potential overflows.
    pub fn perturbed(
        &self,
        model: &PairwiseAffinity,
        d: usize,
    ) -> Result<PairwiseAffinity, FlatError> {
        self.check_noise()?;
        let n = crate::flat::ClusterEnergy::n_points(model);
        let (beta, a) = (model.beta(), model.affinities());
        let mut rng = StdRng::seed_from_u64(self.draw_seed(d));
        let shift = if self.centered { EULER_GAMMA } else { 0.0 };
        // The upper triangle row by row, then mirrored.
        let mut upper = Vec::with_capacity(n * n.saturating_sub(1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                // Open interval (0, 1): the noise is always finite.
                let u: f64 = rng.sample(rand::distr::Open01);
                let g = -(-u.ln()).ln();
                upper.push(beta * a.at(i, j) + self.noise_scale * (g - shift));
            }
        }
        // Row a (a < b) starts at a (2n - a - 1) / 2 in `upper`.
        let at = |a: usize, b: usize| a * (2 * n - a - 1) / 2 + (b - a - 1);
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| match i.cmp(&j) {
                        std::cmp::Ordering::Less => upper[at(i, j)],
                        std::cmp::Ordering::Greater => upper[at(j, i)],
                        std::cmp::Ordering::Equal => 0.0,
                    })
                    .collect()
            })
            .collect();
        Ok(PairwiseAffinity::new(WeightMatrix::new(rows)?))
    }

    /// The MAP clustering of every draw's perturbed energy (clusters sorted by lowest point).
    pub fn map_clusterings(&self, model: &PairwiseAffinity) -> Result<Vec<Vec<Subset>>, FlatError> {
        self.check()?;
        (0..self.draws)
            .into_par_iter()
            .map(|d| exact_map_clustering(&self.perturbed(model, d)?).map(|(_, c)| c))
            .collect()
    }

    /// The estimated `N x N` pairwise marginals: the fraction of draws whose MAP clustering puts
    /// `i` and `j` in the same cluster (1 on the diagonal). Errors for zero draws, a noise scale
    /// that is negative or not finite, and instances too large for the flat trellis.
    pub fn pairwise_marginals(&self, model: &PairwiseAffinity) -> Result<Vec<Vec<f64>>, FlatError> {
        let n = crate::flat::ClusterEnergy::n_points(model);
        let clusterings = self.map_clusterings(model)?;
        let mut counts = vec![vec![0u64; n]; n];
        for clustering in &clusterings {
            for c in clustering {
                for i in c.iter() {
                    for j in c.iter() {
                        counts[i][j] += 1;
                    }
                }
            }
        }
        let total = self.draws as f64;
        Ok(counts
            .into_iter()
            .map(|row| row.into_iter().map(|k| k as f64 / total).collect())
            .collect())
    }

    fn check(&self) -> Result<(), FlatError> {
        if self.draws == 0 || self.draws > MAX_DRAWS {
            return Err(FlatError::BadParameter {
                name: "draws",
                value: self.draws as f64,
                expected: "Perturb-and-MAP needs between 1 and 1,000,000 draws",
            });
        }
        self.check_noise()
    }

    fn check_noise(&self) -> Result<(), FlatError> {
        if !(self.noise_scale.is_finite() && self.noise_scale >= 0.0) {
            return Err(FlatError::BadParameter {
                name: "noise_scale",
                value: self.noise_scale,
                expected: "the Gumbel noise scale must be finite and >= 0",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flat::ClusterEnergy;

    fn model() -> PairwiseAffinity {
        let rows: Vec<Vec<f64>> = (0..5)
            .map(|i| {
                (0..5)
                    .map(|j: usize| if i / 2 == j / 2 { 1.5 } else { -1.0 })
                    .collect()
            })
            .collect();
        PairwiseAffinity::new(WeightMatrix::new(rows).unwrap())
    }

    #[test]
    fn zero_noise_gives_the_map_clustering() {
        let m = model();
        let mut pm = PerturbAndMap::new(3, 1);
        pm.noise_scale = 0.0;
        let p = pm.pairwise_marginals(&m).unwrap();
        let (_, map) = exact_map_clustering(&m).unwrap();
        for c in &map {
            for i in c.iter() {
                for (j, &pij) in p[i].iter().enumerate() {
                    assert_eq!(pij, if c.contains(j) { 1.0 } else { 0.0 });
                }
            }
        }
    }

    #[test]
    fn draws_are_seeded_and_noise_is_gumbel() {
        let m = model();
        let pm = PerturbAndMap::new(4, 99);
        let a = pm.perturbed(&m, 2).unwrap();
        assert_eq!(a, pm.perturbed(&m, 2).unwrap());
        assert_ne!(a, pm.perturbed(&m, 3).unwrap());
        // Mean of the noise over 10 x 2016 pairs ~ 0.577 (standard error 0.009).
        let big = PairwiseAffinity::new(WeightMatrix::new(vec![vec![0.0; 64]; 64]).unwrap());
        let (mut sum, mut count) = (0.0, 0);
        for d in 0..10 {
            let p = pm.perturbed(&big, d).unwrap();
            let n = p.n_points();
            for i in 0..n {
                for j in i + 1..n {
                    sum += p.pair_log_energy(i, j).unwrap();
                    count += 1;
                }
            }
        }
        let mean = sum / count as f64;
        assert!((mean - EULER_GAMMA).abs() < 0.04, "mean {mean}");
        assert!(PerturbAndMap::new(0, 1).pairwise_marginals(&m).is_err());
    }
}
