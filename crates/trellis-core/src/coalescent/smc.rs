//! The sequential Monte Carlo machinery shared by every coalescent variant (spec §3.6): particle
//! log weights, the effective sample size, systematic resampling when it falls below a threshold,
//! and the running log marginal-likelihood estimate Σ_k log Σ_p W_p^{(k−1)} ω_p^{(k)}.
//!
//! Everything is in log space; a particle whose incremental weight is `-inf` (impossible under
//! the model) flows through and is never chosen by resampling. Results depend only on the
//! weights and the uniform draw given, never on thread count.

use crate::numeric::log_sum_exp;

/// A misuse of [`Population`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SmcError {
    /// Not one incremental weight per particle.
    #[error("{got} incremental weights for {expected} particles; give one per particle")]
    WeightCount {
        /// Particles.
        expected: usize,
        /// Weights given.
        got: usize,
    },
    /// A NaN incremental weight.
    #[error("particle {particle} has a NaN incremental weight (use -inf for an impossible state)")]
    NanWeight {
        /// The particle.
        particle: usize,
    },
}

/// The log weights of a particle population and the log evidence accumulated so far.
#[derive(Clone, Debug)]
pub struct Population {
    /// Unnormalised log weights, one per particle.
    log_w: Vec<f64>,
    /// Σ over past stages of log Σ_p W_p ω_p.
    log_evidence: f64,
    /// Stages at which the population was resampled.
    resampled: usize,
}

impl Population {
    /// `m` particles of equal weight.
    pub fn new(m: usize) -> Population {
        Population {
            log_w: vec![0.0; m],
            log_evidence: 0.0,
            resampled: 0,
        }
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.log_w.len()
    }

    /// Whether there are no particles.
    pub fn is_empty(&self) -> bool {
        self.log_w.is_empty()
    }

    /// The unnormalised log weights.
    pub fn log_weights(&self) -> &[f64] {
        &self.log_w
    }

    /// Normalised weights W_p (all zero if every particle has weight zero).
    pub fn weights(&self) -> Vec<f64> {
        let z = log_sum_exp(&self.log_w);
        if z == f64::NEG_INFINITY {
            return vec![0.0; self.log_w.len()];
        }
        self.log_w.iter().map(|&w| (w - z).exp()).collect()
    }

    /// The log of the running product of mean incremental weights: an estimate of log p(X) so
    /// far when the incremental weights are true importance weights (the variants' exact mode),
    /// not otherwise (see `variants`' module docs).
    pub fn log_evidence(&self) -> f64 {
        self.log_evidence
    }

    /// How many times the population was resampled.
    pub fn resample_count(&self) -> usize {
        self.resampled
    }

    /// Multiplies each particle's weight by its incremental weight `exp(log_omega[p])` and adds
    /// the stage's log Σ_p W_p ω_p to the evidence. `log_omega` holds one number per particle,
    /// `-inf` allowed, NaN not.
    pub fn reweight(&mut self, log_omega: &[f64]) -> Result<(), SmcError> {
        if log_omega.len() != self.log_w.len() {
            return Err(SmcError::WeightCount {
                expected: self.log_w.len(),
                got: log_omega.len(),
            });
        }
        if let Some(p) = log_omega.iter().position(|w| w.is_nan()) {
            return Err(SmcError::NanWeight { particle: p });
        }
        let before = log_sum_exp(&self.log_w);
        for (w, &o) in self.log_w.iter_mut().zip(log_omega) {
            *w += o;
        }
        let after = log_sum_exp(&self.log_w);
        self.log_evidence += if before == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else {
            after - before
        };
        Ok(())
    }

    /// The effective sample size 1 / Σ W_p² (0 when every weight is zero).
    pub fn ess(&self) -> f64 {
        let w = self.weights();
        let s: f64 = w.iter().map(|x| x * x).sum();
        if s == 0.0 {
            0.0
        } else {
            1.0 / s
        }
    }

    /// If the ESS is below `threshold · M`, resamples systematically with the uniform draw
    /// `u ∈ [0, 1)` and returns the ancestor of each new particle (the weights become equal;
    /// the evidence is unchanged). Otherwise returns `None`.
    pub fn maybe_resample(&mut self, threshold: f64, u: f64) -> Option<Vec<usize>> {
        let m = self.log_w.len();
        if m == 0 || self.ess() >= threshold * m as f64 {
            return None;
        }
        let ancestors = systematic(&self.weights(), u);
        let z = log_sum_exp(&self.log_w);
        let equal = z - (m as f64).ln();
        self.log_w.iter_mut().for_each(|w| *w = equal);
        self.resampled += 1;
        Some(ancestors)
    }
}

/// Systematic resampling: with normalised `weights` and `u ∈ [0, 1)`, the ancestors of `M`
/// new particles (non-decreasing indices; particle p is copied ⌊M·W_p⌋ or ⌈M·W_p⌉ times).
pub fn systematic(weights: &[f64], u: f64) -> Vec<usize> {
    let m = weights.len();
    let mut out = Vec::with_capacity(m);
    if m == 0 {
        return out;
    }
    let total: f64 = weights.iter().sum();
    let mut cum = 0.0;
    let mut p = 0;
    for k in 0..m {
        let target = (k as f64 + u) / m as f64 * total;
        while p + 1 < m && cum + weights[p] <= target {
            cum += weights[p];
            p += 1;
        }
        // Never pick a particle of weight zero (possible only at the end of the cumulative sum).
        while weights[p] == 0.0 && p > 0 {
            p -= 1;
        }
        out.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systematic_copies_each_particle_floor_or_ceil_of_m_w_times() {
        let w = [0.1, 0.0, 0.45, 0.05, 0.4];
        for u in [0.01, 0.13, 0.37, 0.77, 0.999] {
            let a = systematic(&w, u);
            assert_eq!(a.len(), 5);
            assert!(a.windows(2).all(|x| x[0] <= x[1]));
            for (p, &wp) in w.iter().enumerate() {
                let c = a.iter().filter(|&&x| x == p).count() as f64;
                let expect = 5.0 * wp;
                assert!(
                    c >= expect.floor() && c <= expect.ceil(),
                    "p {p} u {u}: {c}"
                );
            }
            assert!(!a.contains(&1), "a zero-weight particle is never chosen");
        }
    }

    #[test]
    fn evidence_is_the_product_of_mean_incremental_weights() {
        let mut pop = Population::new(4);
        pop.reweight(&[0.0, 1.0_f64.ln(), 3.0_f64.ln(), f64::NEG_INFINITY])
            .unwrap();
        // Equal weights before: mean of (1, 1, 3, 0) = 1.25.
        assert!((pop.log_evidence() - 1.25_f64.ln()).abs() < 1e-12);
        let ess = pop.ess();
        assert!((ess - 25.0 / 11.0).abs() < 1e-12, "{ess}");
        let a = pop.maybe_resample(0.9, 0.5).expect("ESS 2.27 < 3.6");
        assert!(!a.contains(&3));
        assert!((pop.ess() - 4.0).abs() < 1e-12);
        // Resampling keeps the evidence; the next stage averages with equal weights.
        pop.reweight(&[2.0_f64.ln(); 4]).unwrap();
        assert!((pop.log_evidence() - 2.5_f64.ln()).abs() < 1e-12);
        assert!(pop.maybe_resample(0.5, 0.5).is_none());
    }

    #[test]
    fn all_impossible_particles_give_minus_infinity_not_nan() {
        let mut pop = Population::new(3);
        pop.reweight(&[f64::NEG_INFINITY; 3]).unwrap();
        assert!(matches!(
            pop.clone().reweight(&[0.0; 2]),
            Err(SmcError::WeightCount { .. })
        ));
        assert!(pop.clone().reweight(&[0.0, f64::NAN, 0.0]).is_err());
        assert_eq!(pop.log_evidence(), f64::NEG_INFINITY);
        assert_eq!(pop.ess(), 0.0);
        assert_eq!(pop.weights(), vec![0.0; 3]);
    }
}
