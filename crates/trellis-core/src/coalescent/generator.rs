//! Synthetic data from the Kingman coalescent with Brownian paths (spec §5, HL §2.1 and §4.1).
//!
//! 1. History: for k = 1..n−1 draw Δ_k ~ Exp(λ_k), λ_k = C(n−k+1, 2), t_k = t_{k−1} + Δ_k, and merge
//!    a uniformly random pair of active clusters (spec §3.2).
//! 2. Root location 0 (the model's root prior is flat, spec §5 step 2).
//! 3. Top-down: z_c = z_v + √(t_v − t_c)·L ξ, ξ ~ N(0, I_d), Φ = L Lᵀ (spec §5 step 3).
//!
//! Deterministic given a `u64` seed ([`StdRng`]); the draw order is fixed: all Δ/pair draws first,
//! then ξ for the children of clusters in decreasing id order (first child, then second).

use super::covariance::{Covariance, CovarianceError, Jitter, Kernel, Whitening};
use super::history::{History, HistoryError};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use rand_distr::{Distribution, Exp1, StandardNormal};
use thiserror::Error;

/// Errors of the generator (one-line messages).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GeneratorError {
    /// n = 0.
    #[error("the generator needs n >= 1 leaves")]
    NoLeaves,
    /// Invalid covariance.
    #[error(transparent)]
    Covariance(#[from] CovarianceError),
    /// Invalid history.
    #[error(transparent)]
    History(#[from] HistoryError),
}

/// Draw a history from the n-coalescent prior (spec §3.2). Pairs are stored (smaller, larger id).
pub fn sample_history<R: Rng + ?Sized>(n: usize, rng: &mut R) -> Result<History, GeneratorError> {
    if n == 0 {
        return Err(GeneratorError::NoLeaves);
    }
    let mut active: Vec<usize> = (0..n).collect();
    let mut merges = Vec::with_capacity(n - 1);
    let mut t = 0.0;
    for k in 0..n - 1 {
        let m = active.len();
        let lambda = (m * (m - 1)) as f64 / 2.0;
        let e: f64 = Exp1.sample(rng);
        t += e / lambda;
        let i = rng.random_range(0..m);
        let mut j = rng.random_range(0..m - 1);
        if j >= i {
            j += 1;
        }
        let (a, b) = (active[i], active[j]);
        merges.push((a.min(b), a.max(b), t));
        active.swap_remove(i.max(j));
        active.swap_remove(i.min(j));
        active.push(n + k);
    }
    Ok(History::new(n, merges)?)
}

/// Brownian paths down a history (spec §5 step 3) with root at 0: returns the n leaf locations
/// (rows, original, un-whitened coordinates). Φ enters through its Cholesky factor.
pub fn sample_leaves<R: Rng + ?Sized>(
    h: &History,
    w: &Whitening,
    rng: &mut R,
) -> Result<Vec<Vec<f64>>, GeneratorError> {
    h.validate()?;
    let (n, d) = (h.n, w.dim());
    let times = h.cluster_times();
    let mut z = vec![vec![0.0; d]; 2 * n - 1];
    for k in (0..n - 1).rev() {
        let parent = n + k;
        let (a, b, _) = h.merges[k];
        for c in [a, b] {
            let xi: Vec<f64> = (0..d).map(|_| StandardNormal.sample(rng)).collect();
            let step = w.colour(&xi)?;
            let scale = (times[parent] - times[c]).sqrt();
            z[c] = z[parent]
                .iter()
                .zip(&step)
                .map(|(p, s)| p + scale * s)
                .collect();
        }
    }
    z.truncate(n);
    Ok(z)
}

/// Seeded synthetic data set: (history, n × d data) with Φ given by `w`.
pub fn generate_with_whitening(
    n: usize,
    w: &Whitening,
    seed: u64,
) -> Result<(History, Vec<Vec<f64>>), GeneratorError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let h = sample_history(n, &mut rng)?;
    let x = sample_leaves(&h, w, &mut rng)?;
    Ok((h, x))
}

/// Seeded synthetic data set (spec §5): factorises Φ of `cov` and calls
/// [`generate_with_whitening`].
pub fn generate(
    n: usize,
    cov: &Covariance,
    seed: u64,
) -> Result<(History, Vec<Vec<f64>>), GeneratorError> {
    generate_with_whitening(n, &cov.whitening()?, seed)
}

/// Placeholder Φ of spec §5 for HL Tables 1–3 (not stated by HL; record it with results):
/// positions τ_j = (j−1)/(d−1), ℓ = 0.01 in exp(−Δτ²/(2ℓ)), the given noise σ² (10⁻² for Table 1,
/// 10⁻⁹ for Tables 2–3) and Cholesky jitter 10⁻¹⁰·tr Φ/d.
pub fn hl_synthetic_covariance(d: usize, noise: f64) -> Covariance {
    Covariance::new(Kernel::squared_exp_unit_grid(d, 0.01, noise))
        .with_jitter(Jitter::RelativeTrace(1e-10))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(n: usize) -> Vec<f64> {
        (2..=n).map(|m| (m * (m - 1)) as f64 / 2.0).collect()
    }

    /// CDF of a sum of independent Exp(λ_j) with distinct rates (hypoexponential).
    fn hypoexp_cdf(l: &[f64], t: f64) -> f64 {
        let mut s = 0.0;
        for (j, &lj) in l.iter().enumerate() {
            let mut c = 1.0;
            for (i, &li) in l.iter().enumerate() {
                if i != j {
                    c *= li / (li - lj);
                }
            }
            s += c * (-lj * t).exp();
        }
        1.0 - s
    }

    #[test]
    fn root_time_mean_is_two_minus_two_over_n() {
        let n = 10;
        let reps = 20_000;
        let mut rng = StdRng::seed_from_u64(7);
        let roots: Vec<f64> = (0..reps)
            .map(|_| *sample_history(n, &mut rng).unwrap().times().last().unwrap())
            .collect();
        let mean = roots.iter().sum::<f64>() / reps as f64;
        let var_theory: f64 = rates(n).iter().map(|l| 1.0 / (l * l)).sum();
        let se = (var_theory / reps as f64).sqrt();
        let expect = 2.0 * (1.0 - 1.0 / n as f64);
        assert!(
            (mean - expect).abs() < 4.0 * se,
            "mean {mean} vs {expect} (se {se})"
        );
    }

    #[test]
    fn root_time_matches_hypoexponential() {
        let n = 6;
        let reps = 4000;
        let l = rates(n);
        let mut rng = StdRng::seed_from_u64(11);
        let mut roots: Vec<f64> = (0..reps)
            .map(|_| *sample_history(n, &mut rng).unwrap().times().last().unwrap())
            .collect();
        // Mean and variance against Σ 1/λ and Σ 1/λ².
        let mean = roots.iter().sum::<f64>() / reps as f64;
        let var = roots.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (reps - 1) as f64;
        let mu: f64 = l.iter().map(|x| 1.0 / x).sum();
        let v: f64 = l.iter().map(|x| 1.0 / (x * x)).sum();
        assert!((mean - mu).abs() < 4.0 * (v / reps as f64).sqrt());
        assert!((var / v - 1.0).abs() < 0.15, "variance {var} vs {v}");
        // One-sample Kolmogorov–Smirnov; 1.95/√N is the 0.1 % critical value.
        roots.sort_by(f64::total_cmp);
        let nf = reps as f64;
        let ks = roots
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = hypoexp_cdf(&l, x);
                (f - i as f64 / nf)
                    .abs()
                    .max(((i + 1) as f64 / nf - f).abs())
            })
            .fold(0.0, f64::max);
        assert!(ks < 1.95 / nf.sqrt(), "KS statistic {ks}");
    }

    #[test]
    fn two_leaf_differences_have_covariance_two_t_phi() {
        // x0 − x1 | t ~ N(0, 2tΦ): (x0 − x1)/√(2t) has covariance Φ exactly.
        let cov = Covariance::new(Kernel::SquaredExp {
            positions: vec![0.0, 0.5, 1.0],
            ell: 0.2,
            noise: 0.1,
        });
        let phi = cov.matrix_row_major().unwrap();
        let w = cov.whitening().unwrap();
        let reps = 20_000;
        let mut rng = StdRng::seed_from_u64(3);
        let mut acc = [0.0; 9];
        for _ in 0..reps {
            let h = sample_history(2, &mut rng).unwrap();
            let x = sample_leaves(&h, &w, &mut rng).unwrap();
            let s = (2.0 * h.merges[0].2).sqrt();
            let y: Vec<f64> = (0..3).map(|j| (x[0][j] - x[1][j]) / s).collect();
            for i in 0..3 {
                for j in 0..3 {
                    acc[i * 3 + j] += y[i] * y[j];
                }
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                let emp = acc[i * 3 + j] / reps as f64;
                let th = phi[i * 3 + j];
                let se = ((phi[i * 4] * phi[j * 4] + th * th) / reps as f64).sqrt();
                assert!((emp - th).abs() < 5.0 * se, "({i},{j}): {emp} vs {th}");
            }
        }
    }

    #[test]
    fn seeded_generation_is_deterministic_and_valid() {
        let cov = hl_synthetic_covariance(32, 1e-9);
        let (h1, x1) = generate(32, &cov, 42).unwrap();
        let (h2, x2) = generate(32, &cov, 42).unwrap();
        let (h3, _) = generate(32, &cov, 43).unwrap();
        assert_eq!(h1, h2);
        assert_eq!(x1, x2);
        assert_ne!(h1, h3);
        assert_eq!(x1.len(), 32);
        assert!(x1
            .iter()
            .all(|r| r.len() == 32 && r.iter().all(|v| v.is_finite())));
        h1.validate().unwrap();
        assert!(generate(0, &cov, 1).is_err());
        let (h, x) = generate(1, &cov, 1).unwrap();
        assert!(h.merges.is_empty() && x[0].iter().all(|&v| v == 0.0));
        assert!(hl_synthetic_covariance(128, 1e-9).whitening().is_ok());
    }
}
