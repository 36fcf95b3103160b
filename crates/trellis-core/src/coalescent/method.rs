//! Every coalescent tree builder behind one type — the SMC variants ([`Variant`]) and the greedy
//! rules ([`GreedyRule`]) — and the outer loop that learns Φ's parameters around any of them
//! (HL §3.2, §4.2–4.3; spec §3.4): build the tree(s) with the current Φ, draw one tree (a particle
//! in proportion to its weight), slice-sample Φ's parameters given it, repeat.

use super::covariance::{Covariance, CovarianceError};
use super::gig::WeightMode;
use super::greedy::{greedy, GreedyRule};
use super::history::{History, HistoryError};
use super::learn::{resample_covariance, LearnError, LearnSettings};
use super::variants::{run_smc, SmcRunError, SmcSettings, Variant};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// A coalescent tree builder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// SMC: Δ and pair from the prior.
    PriorPrior,
    /// SMC: Δ from the prior, pair from the local posterior.
    PriorPost,
    /// SMC: Teh et al.'s POST-POST.
    PostPost,
    /// SMC: Görür & Teh's race.
    Smc1,
    /// SMC: Henao & Lucas's MPOST1.
    Mpost1,
    /// SMC: Henao & Lucas's MPOST2.
    Mpost2,
    /// Greedy with HL's quotation of Teh et al.'s Δ (HL's GREEDY).
    Greedy,
    /// Greedy with HL's corrected Δ (MGREEDY).
    Mgreedy,
    /// Greedy with the exact mode of each pair's merge-time density.
    GreedyExact,
}

impl Method {
    /// The SMC variant, if this is one.
    pub fn variant(self) -> Option<Variant> {
        Some(match self {
            Method::PriorPrior => Variant::PriorPrior,
            Method::PriorPost => Variant::PriorPost,
            Method::PostPost => Variant::PostPost,
            Method::Smc1 => Variant::Smc1,
            Method::Mpost1 => Variant::Mpost1,
            Method::Mpost2 => Variant::Mpost2,
            _ => return None,
        })
    }

    /// The greedy rule, if this is a greedy method.
    pub fn rule(self) -> Option<GreedyRule> {
        match self {
            Method::Greedy => Some(GreedyRule::TehPrev),
            Method::Mgreedy => Some(GreedyRule::HlMgreedy),
            Method::GreedyExact => Some(GreedyRule::ExactMode),
            _ => None,
        }
    }

    /// The name in configs and tables.
    pub fn name(self) -> &'static str {
        match self.variant() {
            Some(v) => v.name(),
            None => match self {
                Method::Greedy => "greedy",
                Method::Mgreedy => "mgreedy",
                _ => "greedy_exact",
            },
        }
    }

    /// The papers' spelling.
    pub fn display(self) -> &'static str {
        match self.variant() {
            Some(v) => v.display(),
            None => match self {
                Method::Greedy => "GREEDY",
                Method::Mgreedy => "MGREEDY",
                _ => "GREEDY (exact mode)",
            },
        }
    }

    /// Every method.
    pub const ALL: [Method; 9] = [
        Method::PriorPrior,
        Method::PriorPost,
        Method::PostPost,
        Method::Smc1,
        Method::Mpost1,
        Method::Mpost2,
        Method::Greedy,
        Method::Mgreedy,
        Method::GreedyExact,
    ];
}

/// What the SMC methods need besides the data (ignored by the greedy ones).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodSettings {
    /// Particles M.
    pub particles: usize,
    /// Normalisers with or without the truncation factor.
    pub weight_mode: WeightMode,
    /// Resample when ESS < threshold · M.
    pub resample_threshold: f64,
    /// Step SMC particles in parallel (false: on the calling thread, for one-core timings).
    pub parallel: bool,
}

/// A builder's result: one tree (greedy) or a weighted particle set (SMC).
#[derive(Debug, Clone)]
pub struct Fit {
    /// The trees.
    pub histories: Vec<History>,
    /// Their normalised weights.
    pub weights: Vec<f64>,
    /// The SMC log-evidence (none for greedy): an estimate of log p(X) with exact weights only;
    /// with paper-faithful weights HL's weight total, biased upwards (see `variants`' docs).
    pub log_evidence: Option<f64>,
    /// Stages that resampled (0 for greedy).
    pub resamples: usize,
}

impl Fit {
    /// The tree of largest weight.
    pub fn best(&self) -> &History {
        let mut b = 0;
        for (i, &w) in self.weights.iter().enumerate() {
            if w > self.weights[b] {
                b = i;
            }
        }
        &self.histories[b]
    }

    /// The tree chosen in proportion to its weight by `u ∈ [0, 1)`.
    pub fn draw(&self, u: f64) -> &History {
        let mut cum = 0.0;
        for (h, &w) in self.histories.iter().zip(&self.weights) {
            cum += w;
            if u < cum {
                return h;
            }
        }
        self.best()
    }
}

/// Errors of [`fit`] and [`fit_learning`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MethodError {
    /// From an SMC run.
    #[error(transparent)]
    Smc(#[from] SmcRunError),
    /// From a greedy run or a history.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// From covariance learning.
    #[error(transparent)]
    Learn(#[from] LearnError),
    /// From Φ.
    #[error(transparent)]
    Covariance(#[from] CovarianceError),
    /// The pairwise tables of the points would not fit in memory.
    #[error("{n} points need {} of pairwise tables before the first merge, more than the {} this process may use; cluster fewer points (a subset, or one per group)", crate::exact::human_bytes(*bytes), crate::exact::human_bytes(*usable as f64))]
    TooManyPoints {
        /// Points.
        n: usize,
        /// Bytes of the tables ([`pair_table_bytes`]).
        bytes: f64,
        /// Bytes this process may use ([`crate::memory::usable_bytes`]).
        usable: u64,
    },
    /// The particles at their largest would not fit in memory.
    #[error("{particles} particles over {n} points may take up to {} (each holds a pair-table row per merge until resampling shares them), more than the {} this process may use; use at most {fits} particles, or fewer points", crate::exact::human_bytes(*bytes), crate::exact::human_bytes(*usable as f64))]
    TooManyParticles {
        /// Particles asked for.
        particles: usize,
        /// Points.
        n: usize,
        /// Bytes of the run ([`run_bytes`]).
        bytes: f64,
        /// Bytes this process may use ([`crate::memory::usable_bytes`]).
        usable: u64,
        /// How many particles would fit.
        fits: u64,
    },
}

/// The bytes of the `n × n` tables of pairwise values `method` allocates before its first
/// merge (squared distances; MPOST2 also its kernel terms): a lower bound of what it needs.
pub fn pair_table_bytes(method: Method, n: usize) -> f64 {
    let tables = if method == Method::Mpost2 { 2.0 } else { 1.0 };
    tables * 8.0 * (n as f64) * (n as f64)
}

/// The most bytes one SMC particle of `method` over `n` points may hold: its slots, ids and
/// merges (`O(n)`, twice at a resampling, whose copy shares everything else) and the pair-table
/// rows it writes, one of `n` values per merge (ε, MPOST2's kernel terms and SMC1's race
/// clocks: 8, 16 or 32 bytes per pair), which resampled particles share but one particle run
/// to the end holds alone. 0 for a greedy method.
pub fn particle_bytes(method: Method, n: usize) -> f64 {
    let per_pair = match method.variant() {
        None => return 0.0,
        Some(Variant::Mpost2) => 16.0,
        Some(Variant::Smc1) => 32.0,
        Some(_) => 8.0,
    };
    let n = n as f64;
    2.0 * (256.0 + 64.0 * n) + per_pair * n * n
}

/// The most bytes `method` may take over `n` points with `particles` particles: the pairwise
/// tables ([`pair_table_bytes`]) and every particle at its largest ([`particle_bytes`]).
pub fn run_bytes(method: Method, n: usize, particles: usize) -> f64 {
    pair_table_bytes(method, n) + particles as f64 * particle_bytes(method, n)
}

/// `Err(TooManyPoints)` when `method`'s pairwise tables over `n` points
/// ([`pair_table_bytes`]) would not fit in the memory this process may use, and
/// `Err(TooManyParticles)` when they and `particles` particles at their largest
/// ([`run_bytes`]; the particles are ignored by the greedy methods) would not (nothing is
/// refused where the system tells no limit).
pub fn check_memory(method: Method, n: usize, particles: usize) -> Result<(), MethodError> {
    let Some(usable) = crate::memory::usable_bytes() else {
        return Ok(());
    };
    let bytes = pair_table_bytes(method, n);
    if bytes > usable as f64 {
        return Err(MethodError::TooManyPoints { n, bytes, usable });
    }
    let bytes = run_bytes(method, n, particles);
    if bytes > usable as f64 {
        let each = particle_bytes(method, n);
        let fits = ((usable as f64 - pair_table_bytes(method, n)) / each).floor() as u64;
        return Err(MethodError::TooManyParticles {
            particles,
            n,
            bytes,
            usable,
            fits,
        });
    }
    Ok(())
}

/// Builds trees with `method` on whitened `data`.
pub fn fit(
    method: Method,
    data: &[Vec<f64>],
    ln_det_half: f64,
    s: &MethodSettings,
    seed: u64,
) -> Result<Fit, MethodError> {
    check_memory(method, data.len(), s.particles)?;
    if let Some(v) = method.variant() {
        let mut settings = SmcSettings::new(v, s.particles, seed);
        settings.weight_mode = s.weight_mode;
        settings.resample_threshold = s.resample_threshold;
        settings.parallel = s.parallel;
        let out = run_smc(data, ln_det_half, &settings)?;
        return Ok(Fit {
            weights: out.weights(),
            histories: out.histories,
            log_evidence: Some(out.log_evidence),
            resamples: out.resamples,
        });
    }
    let rule = method.rule().expect("a method is SMC or greedy");
    let g = greedy(data, ln_det_half, rule)?;
    Ok(Fit {
        histories: vec![g.history],
        weights: vec![1.0],
        log_evidence: None,
        resamples: 0,
    })
}

/// One outer iteration of [`fit_learning`]: the trees built with Φ as it was, and Φ after the
/// slice-sampling sweep on the drawn tree.
#[derive(Debug, Clone)]
pub struct Iteration {
    /// The trees of this iteration.
    pub fit: Fit,
    /// Φ after the sweep.
    pub covariance: Covariance,
}

impl Iteration {
    /// ℓ (ℓ_x for a Matérn grid, σ² for an isotropic Φ) after the sweep.
    pub fn ell(&self) -> f64 {
        self.covariance.kernel.ell_and_noise().0
    }
}

/// Learns Φ's parameters around `method` (HL §3.2): `iterations` times, whiten the RAW data with
/// the current Φ, build trees, draw one in proportion to its weight and slice-sample Φ's
/// parameters given it. Deterministic given `seed`.
pub fn fit_learning(
    method: Method,
    raw: &[Vec<f64>],
    start: &Covariance,
    s: &MethodSettings,
    learn: &LearnSettings,
    iterations: usize,
    seed: u64,
) -> Result<Vec<Iteration>, MethodError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut cov = start.clone();
    let mut out = Vec::with_capacity(iterations);
    for it in 0..iterations {
        let w = cov.whitening()?;
        let xw = w.whiten_rows(raw)?;
        let f = fit(
            method,
            &xw,
            w.ln_det_half(),
            s,
            seed.wrapping_add(0x9E37_79B9 * (it as u64 + 1)),
        )?;
        let u: f64 = rng.random::<f64>();
        cov = resample_covariance(&cov, f.draw(u), raw, learn, &mut rng)?;
        out.push(Iteration {
            fit: f,
            covariance: cov.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coalescent::generator::{generate, hl_synthetic_covariance};

    #[test]
    fn every_method_builds_valid_trees_and_greedy_matches_its_rule() {
        let cov = hl_synthetic_covariance(6, 1e-2);
        let (_, x) = generate(10, &cov, 3).unwrap();
        let w = cov.whitening().unwrap();
        let xw = w.whiten_rows(&x).unwrap();
        let s = MethodSettings {
            particles: 6,
            weight_mode: WeightMode::Exact,
            resample_threshold: 0.5,
            parallel: true,
        };
        for m in Method::ALL {
            let f = fit(m, &xw, w.ln_det_half(), &s, 5).unwrap();
            assert_eq!(f.histories.len(), if m.rule().is_some() { 1 } else { 6 });
            assert!((f.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{m:?}");
            assert_eq!(f.log_evidence.is_some(), m.variant().is_some());
            for h in &f.histories {
                assert_eq!(h.n, 10);
            }
            let back: Method = serde_json::from_str(&format!("\"{}\"", m.name())).unwrap();
            assert_eq!(back, m);
        }
        let g = greedy(&xw, w.ln_det_half(), GreedyRule::HlMgreedy).unwrap();
        let f = fit(Method::Mgreedy, &xw, w.ln_det_half(), &s, 5).unwrap();
        assert_eq!(f.histories[0], g.history);
    }

    #[test]
    fn learning_moves_ell_towards_the_truth_and_is_deterministic() {
        let truth = hl_synthetic_covariance(16, 1e-2);
        let (_, x) = generate(24, &truth, 9).unwrap();
        let mut start = truth.clone();
        if let crate::coalescent::covariance::Kernel::SquaredExp { ell, .. } = &mut start.kernel {
            *ell = 0.2;
        }
        let s = MethodSettings {
            particles: 5,
            weight_mode: WeightMode::PaperFaithful,
            resample_threshold: 0.5,
            parallel: true,
        };
        let learn = LearnSettings::default();
        let a = fit_learning(Method::Mgreedy, &x, &start, &s, &learn, 15, 4).unwrap();
        let b = fit_learning(Method::Mgreedy, &x, &start, &s, &learn, 15, 4).unwrap();
        let ells: Vec<f64> = a.iter().map(Iteration::ell).collect();
        assert_eq!(ells, b.iter().map(Iteration::ell).collect::<Vec<_>>());
        // Started 20x too large; after 15 sweeps within a factor of 3 of the truth 0.01.
        let last = *ells.last().unwrap();
        assert!(last > 0.01 / 3.0 && last < 0.03, "{ells:?}");
        let m = fit_learning(Method::Mpost2, &x, &start, &s, &learn, 3, 4).unwrap();
        assert_eq!(m.len(), 3);
    }
}
