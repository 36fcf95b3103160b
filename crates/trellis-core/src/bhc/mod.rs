//! Bayesian hierarchical clustering (Heller & Ghahramani, ICML 2005) and Bayesian rose trees
//! (Blundell, Teh & Heller, UAI 2010), with the exact answers the trellises give beside them.
//!
//! ## The model
//! A Dirichlet-process mixture (DPM) with concentration `α` and a conjugate cluster model
//! ([`ConjugateModel`]: `p(D_C)`, the marginal likelihood of the points of `C` when they share
//! one parameter drawn from the prior). With the Chinese-restaurant prior a partition `π` of
//! `N` points has prior `Γ(α)/Γ(N+α) ∏_{C∈π} α Γ(|C|)`, so the DPM evidence is
//!
//! `p(D) = Γ(α)/Γ(N+α) · Σ_π ∏_{C∈π} g(C)`, with `g(C) = α Γ(|C|) p(D_C)`,
//!
//! a flat-trellis partition function with log-energy `log g(C)` per cluster ([`DpmEnergy`]).
//!
//! ## BHC and its bound
//! BHC builds a binary tree greedily; at a node `k = i ∪ j`:
//! `d_k = αΓ(n_k) + d_i d_j` (`d = α` at a leaf), `π_k = αΓ(n_k)/d_k`,
//! `p(D_k|T_k) = π_k p(D_k) + (1 − π_k) p(D_i|T_i) p(D_j|T_j)`, and it merges the pair with the
//! largest `r_k = π_k p(D_k) / p(D_k|T_k)`. Writing `f(T_k) = d_k p(D_k|T_k)` the recursion is
//! `f(T_k) = g(D_k) + f(T_i) f(T_j)` (since `(1 − π_k) d_k = d_i d_j`): `f(T)` is the sum of
//! `∏ g(C)` over the partitions whose clusters are all nodes of `T` (the cuts of `T`), so
//! `Γ(α)/Γ(N+α) f(T) ≤ p(D)`, the lower bound BHC reports. `p(D|T) = f(T)/d_root` is the same sum
//! renormalised over the tree's cuts. The tree-structured flat trellis
//! ([`crate::flat::TreeFlatTrellis`]) over a BHC tree's nodes with [`DpmEnergy`] computes
//! exactly `log f(T)`, and its cluster marginals are the posterior over the tree's cuts.
//!
//! ## Exact answers ([`exact`])
//! - The DPM evidence, MAP partition and pairwise co-clustering marginals by the full flat
//!   trellis ([`exact::dpm_exact`]).
//! - The best tree under BHC's own objective: since `g(S)` does not depend on the split,
//!   `F(S) = g(S) + max_{A ⊔ B = S} F(A) F(B)` is the largest `f(T)` over all binary trees on `S`;
//!   with a sum in place of the max and the tree counts `(2k−3)!!` as weights, the average of
//!   `f(T)` over all binary trees ([`exact::best_bhc_tree`], `O(3^N)`).
//! - The comparison of a greedy run with all of these ([`exact::compare`]): gaps in nats, the
//!   adjusted Rand index of BHC's `r_k < 0.5` cut against the exact MAP partition, and BHC's
//!   implied co-clustering (the posterior over the tree's cuts) against the exact marginals.
//!
//! ## Models (one file each)
//! - [`BetaBernoulli`]: binary features, independent Beta–Bernoulli per feature.
//! - [`NormalInverseWishart`]: real vectors, one full-covariance Gaussian per cluster with the
//!   conjugate Normal–Inverse-Wishart prior (not Normal–Gamma per dimension: the full covariance
//!   is what the paper's Gaussian model is, keeps the model invariant under rotations of the
//!   data, and costs `O(D³)` per cluster, nothing at the sizes BHC runs at).
//! - [`DirichletMultinomial`]: count vectors (bags of words), a Dirichlet over the categories.
//!
//! The papers' texts were not available when this was written; the hyperparameter defaults of
//! each model are stated in its docs with the reasons, and every model takes explicit values.
//!
//! ## Layout
//! - [`greedy`]: BHC as published (pair table, `O(N²)` merge evaluations).
//! - [`brt`]: greedy Bayesian rose trees (join, absorb, collapse); [`rose`]: the exact best rose
//!   tree (`O(N 3^N)`, to N = 18).
//! - [`trees`]: the best and average BHC objective over all binary trees (`O(3^N)`).
//! - [`exact`]: the exact answers and the comparison.

mod agglomerate;
pub mod bernoulli;
pub mod brt;
pub mod exact;
pub mod gaussian;
pub mod greedy;
pub mod multinomial;
pub mod rose;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_models;
pub mod trees;

pub use bernoulli::BetaBernoulli;
pub use brt::{brt_greedy, BrtResult};
pub use gaussian::NormalInverseWishart;
pub use greedy::{bhc_greedy, BhcNode, BhcResult};
pub use multinomial::DirichletMultinomial;

use crate::flat::{ClusterEnergy, FlatError};
use crate::subset::Subset;
use statrs::function::gamma::ln_gamma;

/// A conjugate cluster model: the marginal likelihood `p(D_C)` of any group of points, from
/// sufficient statistics that add up when clusters merge.
pub trait ConjugateModel: Sync {
    /// Sufficient statistics of a non-empty group of points.
    type Stat: Clone + Send + Sync;

    /// Number of points `N`.
    fn n_points(&self) -> usize;

    /// The statistics of point `i` alone.
    fn leaf(&self, i: usize) -> Self::Stat;

    /// The statistics of the union of two disjoint groups.
    fn merge(&self, a: &Self::Stat, b: &Self::Stat) -> Self::Stat;

    /// `log p(D_C)` from `C`'s statistics.
    fn log_marginal(&self, s: &Self::Stat) -> f64;

    /// The statistics of the points `points` (non-empty).
    ///
    /// # Panics
    /// If `points` is empty.
    fn stat_of(&self, points: &[usize]) -> Self::Stat {
        let (first, rest) = points.split_first().expect("a non-empty group of points");
        rest.iter()
            .fold(self.leaf(*first), |acc, &i| self.merge(&acc, &self.leaf(i)))
    }

    /// `log p(D_C)` of the points `points` (non-empty).
    fn log_marginal_of(&self, points: &[usize]) -> f64 {
        self.log_marginal(&self.stat_of(points))
    }
}

/// Errors of the BHC models and algorithms.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BhcError {
    /// No points.
    #[error("no points: BHC needs at least one point")]
    Empty,
    /// Rows of different lengths, or no features.
    #[error("row {row} has {got} values, expected {expected} (every point needs the same number of features, at least one)")]
    Ragged {
        /// The row.
        row: usize,
        /// Its length.
        got: usize,
        /// The first row's length.
        expected: usize,
    },
    /// A data value the model cannot take.
    #[error("value {value} at row {row}, column {col} is invalid: {expected}")]
    BadValue {
        /// Row.
        row: usize,
        /// Column.
        col: usize,
        /// The value.
        value: f64,
        /// What the model takes.
        expected: &'static str,
    },
    /// A hyperparameter outside its range.
    #[error("{name} = {value} is invalid: {expected}")]
    BadParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is allowed.
        expected: &'static str,
    },
    /// An exact answer asked for beyond the subset limit.
    #[error("N = {n} points is above the limit of {limit} for {what}; run the greedy methods alone at this size")]
    TooManyPoints {
        /// Points asked for.
        n: usize,
        /// The limit.
        limit: usize,
        /// Which exact answer.
        what: &'static str,
    },
    /// [`crate::cancel::cancel_all`] was called (or the caller's token cancelled) while it ran.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
    /// The flat trellis failed.
    #[error(transparent)]
    Flat(#[from] FlatError),
}

/// Checks that `x` is a non-empty table of rows of one length (at least 1); returns the length.
pub(crate) fn check_rows(x: &[Vec<f64>]) -> Result<usize, BhcError> {
    let d = x.first().ok_or(BhcError::Empty)?.len();
    for (row, r) in x.iter().enumerate() {
        if r.len() != d || d == 0 {
            return Err(BhcError::Ragged {
                row,
                got: r.len(),
                expected: d,
            });
        }
    }
    Ok(d)
}

/// Checks that a concentration `α` is positive and finite.
pub(crate) fn check_alpha(alpha: f64) -> Result<(), BhcError> {
    if !(alpha > 0.0 && alpha.is_finite()) {
        return Err(BhcError::BadParameter {
            name: "alpha",
            value: alpha,
            expected: "the DP concentration must be positive and finite",
        });
    }
    Ok(())
}

/// The DPM's flat-trellis energy: `log E(C) = ln α + ln Γ(|C|) + log p(D_C)`. Its partition
/// function over all partitions, plus [`DpmEnergy::log_prior_constant`], is the DPM evidence.
#[derive(Clone, Debug)]
pub struct DpmEnergy<'a, M> {
    model: &'a M,
    ln_alpha: f64,
    alpha: f64,
}

impl<'a, M: ConjugateModel> DpmEnergy<'a, M> {
    /// The energy of `model` under a DP with concentration `alpha > 0`.
    pub fn new(model: &'a M, alpha: f64) -> Result<Self, BhcError> {
        check_alpha(alpha)?;
        Ok(DpmEnergy {
            model,
            ln_alpha: alpha.ln(),
            alpha,
        })
    }

    /// `ln Γ(α) − ln Γ(N + α)`: the log of the constant that turns `Σ_π ∏ g(C)` into the evidence.
    pub fn log_prior_constant(&self) -> f64 {
        ln_gamma(self.alpha) - ln_gamma(self.model.n_points() as f64 + self.alpha)
    }

    /// `log g(C) = ln α + ln Γ(|C|) + log p(D_C)` from `C`'s size and statistics.
    pub fn log_g(&self, size: usize, s: &M::Stat) -> f64 {
        self.ln_alpha + ln_gamma(size as f64) + self.model.log_marginal(s)
    }

    /// The concentration `α`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The model.
    pub fn model(&self) -> &'a M {
        self.model
    }
}

impl<M: ConjugateModel> ClusterEnergy for DpmEnergy<'_, M> {
    fn n_points(&self) -> usize {
        self.model.n_points()
    }

    fn log_energy(&self, c: Subset) -> f64 {
        let points: Vec<usize> = c.iter().collect();
        self.log_g(points.len(), &self.model.stat_of(&points))
    }

    /// The table of [`ClusterEnergy::log_energy`] over all `2^N` subsets (the same values), a
    /// block of [`TABLE_BLOCK`] subsets at a time in parallel, checking for cancellation between
    /// blocks (an `O(N D²)` statistic per subset: seconds at N = 22).
    fn log_energy_table(&self) -> Result<Vec<f64>, FlatError> {
        use rayon::prelude::*;
        let cancel = crate::cancel::Cancel::new();
        let n = self.model.n_points();
        crate::model::error::check_table_size(n)?;
        let size = 1u64 << n;
        let mut table = Vec::with_capacity(size as usize);
        let mut start = 0u64;
        while start < size {
            if cancel.is_cancelled() {
                return Err(FlatError::Cancelled);
            }
            let end = (start + TABLE_BLOCK).min(size);
            let block: Vec<f64> = (start..end)
                .into_par_iter()
                .map(|b| {
                    if b == 0 {
                        0.0
                    } else {
                        self.log_energy(Subset(b))
                    }
                })
                .collect();
            table.extend(block);
            start = end;
        }
        Ok(table)
    }
}

/// Subsets per block of [`DpmEnergy`]'s energy table between cancellation checks.
const TABLE_BLOCK: u64 = 1 << 14;

/// `ln Γ_d(x)`, the multivariate log-gamma function:
/// `d(d−1)/4 ln π + Σ_{j=1..d} ln Γ(x + (1 − j)/2)`.
pub fn ln_multigamma(x: f64, d: usize) -> f64 {
    let df = d as f64;
    df * (df - 1.0) / 4.0 * std::f64::consts::PI.ln()
        + (1..=d)
            .map(|j| ln_gamma(x + (1.0 - j as f64) / 2.0))
            .sum::<f64>()
}

/// `ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b)`.
#[inline]
pub fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// Labels `0..k` from a list of clusters of points `0..n` (clusters numbered by their lowest
/// point).
pub(crate) fn labels_of(n: usize, clusters: &[Vec<usize>]) -> Vec<usize> {
    let mut sorted: Vec<&Vec<usize>> = clusters.iter().collect();
    sorted.sort_by_key(|c| c.iter().min().copied());
    let mut labels = vec![usize::MAX; n];
    for (k, c) in sorted.iter().enumerate() {
        for &i in c.iter() {
            labels[i] = k;
        }
    }
    labels
}
