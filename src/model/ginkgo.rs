//! The Ginkgo toy-jet likelihood, in the form the Cluster Trellis paper's experiments used
//! (`../shared/specs/ginkgo.md`, "paper-era psi").
//!
//! For sibling clusters `A`, `B` with summed four-vectors `pA`, `pB`, and `t(X)` the squared mass
//! of `X`'s summed four-vector (0 for a single leaf):
//! - `tp1 = m2(pA + pB)`; a split with `tp1 < t_cut` is forbidden (`log psi = -inf`);
//! - `tmax`, `tmin` the larger and smaller of `t(A)`, `t(B)`; `tp2 = (sqrt(tp1) - sqrt(tmax))^2`;
//! - `g(tP, t) = -log(1 - e^-λ) + [log λ - log tP - λ t / tP]` if `t > 0`, else
//!   `-log(1 - e^-λ) + log(1 - exp(-λ t_cut / tP))` (the probability that a leaf did not split);
//! - `log psi(A, B) = g(tp1, tmax) + g(tp2, tmin) - log(4π)`.
//!
//! This differs from the paper's Eq. 5-6 (which conditions both children on `t_P` with a density
//! each); the form above is what produced the paper's numbers and the reference values in
//! `../shared/data/ginkgo_jets/`.

use super::{log1mexp, SplitModel};
use crate::subset::Subset;

/// A four-vector `(E, px, py, pz)`.
pub type FourVector = [f64; 4];

/// Squared mass `E^2 - |p|^2`.
#[inline]
pub fn mass2(p: &FourVector) -> f64 {
    p[0] * p[0] - p[1] * p[1] - p[2] * p[2] - p[3] * p[3]
}

/// The paper-era Ginkgo likelihood over the leaves of one jet.
#[derive(Clone, Debug)]
pub struct GinkgoModel {
    leaves: Vec<FourVector>,
    t_cut: f64,
    lambda: f64,
    lambda_root: f64,
    log_lambda: f64,
    log_lambda_root: f64,
    norm: f64,
    norm_root: f64,
}

/// Per-cluster statistics of [`GinkgoModel`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GinkgoStat {
    /// Summed four-vector.
    pub p: FourVector,
    /// `t(X)`: squared mass of `p`, or 0 for a single leaf.
    pub t: f64,
    /// `sqrt(t)` (0 when `t <= 0`).
    pub sqrt_t: f64,
}

impl GinkgoModel {
    /// A model for one jet: leaf four-vectors, the cut `t_cut` on squared mass, and the rate
    /// `lambda` (the same for every split; see [`GinkgoModel::with_root_rate`]).
    pub fn new(leaves: Vec<FourVector>, t_cut: f64, lambda: f64) -> GinkgoModel {
        assert!(
            leaves.len() <= Subset::MAX_LEAVES,
            "a jet may have at most 64 leaves"
        );
        let norm = -log1mexp(lambda);
        GinkgoModel {
            leaves,
            t_cut,
            lambda,
            lambda_root: lambda,
            log_lambda: lambda.ln(),
            log_lambda_root: lambda.ln(),
            norm,
            norm_root: norm,
        }
    }

    /// Uses rate `lambda_root` for the split of the whole jet (the reference used one rate for all
    /// splits; QCD jets have `lambda_root = lambda` anyway).
    pub fn with_root_rate(mut self, lambda_root: f64) -> GinkgoModel {
        self.lambda_root = lambda_root;
        self.log_lambda_root = lambda_root.ln();
        self.norm_root = -log1mexp(lambda_root);
        self
    }

    /// The leaf four-vectors.
    pub fn leaves(&self) -> &[FourVector] {
        &self.leaves
    }

    /// The cut on squared mass.
    pub fn t_cut(&self) -> f64 {
        self.t_cut
    }

    #[inline]
    fn stat_from(p: FourVector, singleton: bool) -> GinkgoStat {
        let t = if singleton { 0.0 } else { mass2(&p) };
        GinkgoStat {
            p,
            t,
            sqrt_t: if t > 0.0 { t.sqrt() } else { 0.0 },
        }
    }

    /// `g(tP, t)` of the module docs, without the normalisation constant.
    #[inline]
    fn g(&self, t_p: f64, t: f64, log_lambda: f64, lambda: f64) -> f64 {
        if t > 0.0 {
            if t_p <= 0.0 {
                return f64::NEG_INFINITY;
            }
            log_lambda - t_p.ln() - lambda * t / t_p
        } else {
            log1mexp(lambda * self.t_cut / t_p)
        }
    }
}

const LOG_4PI: f64 = 2.531_024_246_969_290_7; // ln(4π)

impl SplitModel for GinkgoModel {
    type Stat = GinkgoStat;

    fn n_leaves(&self) -> usize {
        self.leaves.len()
    }

    fn stat(&self, s: Subset) -> GinkgoStat {
        let mut p = [0.0; 4];
        for i in s.iter() {
            for (k, x) in p.iter_mut().enumerate() {
                *x += self.leaves[i][k];
            }
        }
        Self::stat_from(p, s.is_singleton())
    }

    fn stat_table(&self) -> Vec<GinkgoStat> {
        let n = self.leaves.len();
        let mut table = vec![GinkgoStat::default(); 1usize << n];
        for b in 1u64..(1u64 << n) {
            let low = b.trailing_zeros() as usize;
            let rest = b & (b - 1);
            let mut p = table[rest as usize].p;
            for (k, x) in p.iter_mut().enumerate() {
                *x += self.leaves[low][k];
            }
            table[b as usize] = Self::stat_from(p, rest == 0);
        }
        table
    }

    #[inline]
    fn log_psi_with(
        &self,
        a: Subset,
        sa: &GinkgoStat,
        b: Subset,
        sb: &GinkgoStat,
        parent: &GinkgoStat,
    ) -> f64 {
        let tp1 = parent.t;
        if tp1.is_nan() || tp1 < self.t_cut {
            return f64::NEG_INFINITY;
        }
        let is_root = a.union(b).len() == self.leaves.len();
        let (lambda, log_lambda, norm) = if is_root {
            (self.lambda_root, self.log_lambda_root, self.norm_root)
        } else {
            (self.lambda, self.log_lambda, self.norm)
        };
        let (hi, lo) = if sa.t >= sb.t { (sa, sb) } else { (sb, sa) };
        let d = parent.sqrt_t - hi.sqrt_t;
        let tp2 = d * d;
        2.0 * norm + self.g(tp1, hi.t, log_lambda, lambda) + self.g(tp2, lo.t, log_lambda, lambda)
            - LOG_4PI
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_4pi_constant() {
        assert!((LOG_4PI - (4.0 * std::f64::consts::PI).ln()).abs() < 1e-15);
    }

    #[test]
    fn stat_table_matches_direct_sums() {
        let leaves = vec![
            [10.0, 1.0, 2.0, 3.0],
            [20.0, -1.0, 0.5, 4.0],
            [7.0, 0.0, 0.0, 6.0],
            [30.0, 5.0, 5.0, 5.0],
        ];
        let m = GinkgoModel::new(leaves, 16.0, 1.5);
        let table = m.stat_table();
        for b in 1..16u64 {
            let d = m.stat(Subset(b));
            assert_eq!(table[b as usize].p, d.p);
            assert_eq!(table[b as usize].t, d.t);
        }
        assert_eq!(table[1].t, 0.0, "single leaves have t = 0");
    }

    #[test]
    fn forbidden_split_below_cut() {
        // Two light, collinear particles: invariant mass below the cut.
        let m = GinkgoModel::new(
            vec![[10.0, 0.0, 0.0, 9.9], [10.0, 0.0, 0.0, 9.9]],
            16.0,
            1.5,
        );
        assert_eq!(
            m.log_psi(Subset::singleton(0), Subset::singleton(1)),
            f64::NEG_INFINITY
        );
    }
}
