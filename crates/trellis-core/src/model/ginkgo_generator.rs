//! The Ginkgo generator's own density as a split potential: `log Z` over all trees is then the
//! exact log-density of a jet's leaf four-momenta under the invariant-mass Ginkgo shower (up to
//! a constant that does not depend on the rate λ), so the rate that maximises it is a true
//! maximum-likelihood estimate.
//!
//! The generator (`crate::data::ginkgo`) splits a parent of scale `tP` into a first child of
//! scale `t1 = tP u1` and a second of scale `t2 = (sqrt(tP) - sqrt(t1))^2 u2`, with `u1`, `u2`
//! exponential of rate λ redrawn while `u >= 1 - 1e-3`, back to back along a uniform direction in
//! the parent's rest frame; a node whose scale is at most `t_cut` is a leaf and keeps it as its
//! squared mass. For sibling clusters `A`, `B` with squared masses `tA`, `tB` (a single leaf's
//! own, not 0) and parent `tP = m2(pA + pB)`:
//! - `f(t | τ) = λ e^(-λ t/τ) / (τ (1 - e^(-λ (1 - 1e-3))))` for `0 <= t/τ < 1 - 1e-3`, else 0:
//!   the density of a child's scale given its conditioning scale;
//! - the two children are unordered in a tree, so both orders count:
//!   `f(tA | tP) f(tB | (sqrt tP - sqrt tA)^2) + f(tB | tP) f(tA | (sqrt tP - sqrt tB)^2)`;
//! - times `1 / 4π` for the direction and `4 sqrt(tP) / |p*| = 8 tP / sqrt(K)`, the Jacobian from
//!   `(tA, tB, direction)` to the first child's four-momentum (two-body phase space), with
//!   `K = (tP - tA - tB)^2 - 4 tA tB` and `|p*|` the children's momentum in the parent's frame;
//! - forbidden (`-inf`) when `tP <= t_cut` (such a parent would have been a leaf) or when a child
//!   is a single leaf heavier than `t_cut` (the generator would have split it).
//!
//! `log psi = 2 log λ - 2 log(1 - e^(-λ (1 - 1e-3))) + log(2/π) - log(K)/2
//!           + log(e^(-λ (tA/tP + tB/τB)) / τB + e^(-λ (tB/tP + tA/τA)) / τA)`,
//! `τB = (sqrt tP - sqrt tA)^2`, `τA = (sqrt tP - sqrt tB)^2` (the `log tP` of the densities and
//! of the Jacobian cancel). It depends on the two child clusters only, so the trellis is exact
//! for it. One rate for every split, the root's included (the QCD setting).
//!
//! How it differs from the paper-era potential ([`super::GinkgoModel`]): that one scores a
//! single order (the heavier child first) instead of both; gives a single leaf `t = 0` and the
//! probability `P(u < t_cut/τ)` instead of its mass's density; evaluates that probability as
//! `(1 - e^(-λ t_cut/τ)) / (1 - e^(-λ))` even when `τ < t_cut`, where it exceeds 1 (the
//! generator makes such a child a leaf with certainty) and grows without bound as λ → 0; and
//! has no Jacobian (which matters for `log Z`, not for one tree's λ-dependence).

use super::error::ModelError;
use super::ginkgo::{leaf_sum, mass2, subset_table, FourVector};
use super::{log1mexp, SplitModel};
use crate::subset::Subset;

/// The generator redraws `u` while `u >= U_MAX` (`crate::data::ginkgo`'s bound).
pub const U_MAX: f64 = 1.0 - 1e-3;

/// `log(2/π)`: `log(8 / 4π)`, the Jacobian's 8 over the direction's 4π.
const LOG_2_OVER_PI: f64 = -0.451_582_705_289_454_9;

/// The Ginkgo generator's density over the leaves of one jet (see the module's text).
#[derive(Clone, Debug)]
pub struct GinkgoGeneratorModel {
    leaves: Vec<FourVector>,
    t_cut: f64,
    lambda: f64,
    /// `2 log λ - 2 log(1 - e^(-λ U_MAX)) + log(2/π)`.
    constant: f64,
}

/// Per-cluster statistics of [`GinkgoGeneratorModel`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GeneratorStat {
    /// Squared mass of the summed four-vector (a single leaf's too), negative values (rounding
    /// of massless leaves) raised to 0; NaN stays NaN.
    pub t: f64,
    /// `sqrt(t)`.
    pub sqrt_t: f64,
    /// A single leaf heavier than the cut (or with a NaN mass): no tree is possible.
    pub impossible_leaf: bool,
}

impl GinkgoGeneratorModel {
    /// A model for one jet: leaf four-vectors, the cut `t_cut` on squared mass, and the rate
    /// `lambda` of every split. Errors as [`super::GinkgoModel::new`].
    pub fn new(
        leaves: Vec<FourVector>,
        t_cut: f64,
        lambda: f64,
    ) -> Result<GinkgoGeneratorModel, ModelError> {
        // The same checks, with the same messages, as the paper-era model's.
        let paper = super::GinkgoModel::new(leaves, t_cut, lambda)?;
        let constant = 2.0 * lambda.ln() - 2.0 * log1mexp(lambda * U_MAX) + LOG_2_OVER_PI;
        Ok(GinkgoGeneratorModel {
            t_cut: paper.t_cut(),
            lambda: paper.lambda(),
            leaves: paper.leaves().to_vec(),
            constant,
        })
    }

    /// The leaf four-vectors.
    pub fn leaves(&self) -> &[FourVector] {
        &self.leaves
    }

    /// The cut on squared mass.
    pub fn t_cut(&self) -> f64 {
        self.t_cut
    }

    /// The rate of every split.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// `2 log λ - 2 log(1 - e^(-λ U_MAX)) + log(2/π)`, the constant of every split's
    /// `log psi`.
    pub(crate) fn constant(&self) -> f64 {
        self.constant
    }

    fn stat_from(&self, p: &FourVector, singleton: bool) -> GeneratorStat {
        let m2 = mass2(p);
        let t = if m2 < 0.0 { 0.0 } else { m2 };
        GeneratorStat {
            t,
            sqrt_t: t.sqrt(),
            impossible_leaf: singleton && (t.is_nan() || t > self.t_cut),
        }
    }
}

impl SplitModel for GinkgoGeneratorModel {
    type Stat = GeneratorStat;

    fn lane_model(&self) -> Option<super::LaneModel<'_>> {
        Some(super::LaneModel::Generator(self))
    }

    fn n_leaves(&self) -> usize {
        self.leaves.len()
    }

    fn stat(&self, s: Subset) -> GeneratorStat {
        self.stat_from(&leaf_sum(&self.leaves, s), s.is_singleton())
    }

    fn stat_table(&self) -> Result<Vec<GeneratorStat>, ModelError> {
        subset_table(&self.leaves, |p, singleton| self.stat_from(p, singleton))
    }

    fn log_psi_with(
        &self,
        _a: Subset,
        sa: &GeneratorStat,
        _b: Subset,
        sb: &GeneratorStat,
        p: &GeneratorStat,
    ) -> f64 {
        if p.t.is_nan() || p.t <= self.t_cut || sa.impossible_leaf || sb.impossible_leaf {
            return f64::NEG_INFINITY;
        }
        // Order "A first": u = tA/tP, then tB over τB = (sqrt tP - sqrt tA)^2; "B first" alike.
        let (q, qa, qb) = (p.sqrt_t, sa.sqrt_t, sb.sqrt_t);
        let (tau_b, tau_a) = ((q - qa) * (q - qa), (q - qb) * (q - qb));
        let (ua, ub) = (sa.t / p.t, sb.t / p.t);
        // In the generator's support (false for NaN; a zero τ has no room for the second child).
        let a_first = ua < U_MAX && sb.t < U_MAX * tau_b;
        let b_first = ub < U_MAX && sa.t < U_MAX * tau_a;
        let x_a = ua + sb.t / tau_b;
        let x_b = ub + sa.t / tau_a;
        // log(e^(-λ x_a) / τB + e^(-λ x_b) / τA) = -λ m + log(sum), m the smaller x in support:
        // one exponential.
        let (m, sum) = match (a_first, b_first) {
            (true, true) if x_a <= x_b => (
                x_a,
                1.0 / tau_b + (-self.lambda * (x_b - x_a)).exp() / tau_a,
            ),
            (true, true) => (
                x_b,
                1.0 / tau_a + (-self.lambda * (x_a - x_b)).exp() / tau_b,
            ),
            (true, false) => (x_a, 1.0 / tau_b),
            (false, true) => (x_b, 1.0 / tau_a),
            (false, false) => return f64::NEG_INFINITY,
        };
        // K = (tP - tA - tB)^2 - 4 tA tB, factorised (no cancellation between large terms);
        // positive whenever an order is in the support.
        let k = (q - qa - qb) * (q + qa + qb) * (q - qa + qb) * (q + qa - qb);
        if k.is_nan() || k <= 0.0 {
            return f64::NEG_INFINITY;
        }
        self.constant - self.lambda * m + (sum / k.sqrt()).ln()
    }
}

#[cfg(test)]
#[path = "ginkgo_generator_tests.rs"]
mod tests;
