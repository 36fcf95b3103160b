//! The Ginkgo model's rate λ fitted to a set of jets, one value for every split (the root's
//! included):
//! - **by exact evidence**: λ maximising `sum_jets log Z(jet; λ)`, the marginal likelihood of
//!   the jets' leaves over all `(2N-3)!!` trees, which only the full trellis gives exactly;
//! - **on given trees** (a generator's truth trees): λ maximising `sum_jets log p(tree; λ)`.
//!
//! Both are one-dimensional: Brent's method (argmin's `BrentOpt`) on `log λ` within the bounds
//! given. Jets whose objective is `-inf` at the bounds' geometric middle (every tree forbidden
//! by the cut, or a given tree with a forbidden split) are left out and counted. The jets are
//! evaluated in parallel and summed in their order: the same bits for any thread count.

use super::{ExactError, FullTrellis};
use crate::model::GinkgoModel;
use crate::tree::Tree;
use argmin::core::{CostFunction, Executor};
use argmin::solver::brent::BrentOpt;
use rayon::prelude::*;

/// The result of a fit.
#[derive(Clone, Debug, PartialEq)]
pub struct LambdaFit {
    /// The fitted rate.
    pub lambda: f64,
    /// The objective at `lambda` (summed over the jets used).
    pub objective: f64,
    /// Objective evaluations (each one pass over the jets).
    pub evaluations: u64,
    /// Jets in the objective.
    pub jets_used: usize,
    /// Jets left out (objective `-inf`).
    pub jets_left_out: usize,
}

/// Why a fit failed.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// The bounds are not `0 < lo < hi < inf`.
    #[error("the bounds of λ must satisfy 0 < lo < hi < inf (got lo = {lo}, hi = {hi}); pass e.g. lo = 0.05, hi = 50")]
    Bounds {
        /// The lower bound given.
        lo: f64,
        /// The upper bound given.
        hi: f64,
    },
    /// No jet has a finite objective.
    #[error("no jet has a finite objective (all {n} are left out: every tree, or the given tree, is forbidden by the cut t_cut); lower t_cut")]
    NoJets {
        /// Jets given.
        n: usize,
    },
    /// A tree does not belong to its jet.
    #[error("tree {i} has {got} leaves but its jet has {want}; pass each jet's own tree")]
    TreeSize {
        /// The jet's index.
        i: usize,
        /// The tree's leaves.
        got: usize,
        /// The jet's leaves.
        want: usize,
    },
    /// The trellis refused a jet.
    #[error("jet {i}: {source}")]
    Trellis {
        /// The jet's index.
        i: usize,
        /// What the trellis said.
        source: ExactError,
    },
    /// The model refused a rate.
    #[error("jet {i}: {message}")]
    Model {
        /// The jet's index.
        i: usize,
        /// What the model said.
        message: String,
    },
    /// The optimiser failed.
    #[error("the one-dimensional search failed: {0}")]
    Search(String),
}

/// `jet` with rate `lambda` for every split.
fn with_rate(jet: &GinkgoModel, lambda: f64, i: usize) -> Result<GinkgoModel, FitError> {
    GinkgoModel::new(jet.leaves().to_vec(), jet.t_cut(), lambda).map_err(|e| FitError::Model {
        i,
        message: e.to_string(),
    })
}

/// λ maximising `sum_jets log Z(jet; λ)` within `[lo, hi]` (the full trellis of every jet,
/// refusing jets above `max_leaves`).
pub fn fit_lambda_by_evidence(
    jets: &[GinkgoModel],
    lo: f64,
    hi: f64,
    max_leaves: usize,
) -> Result<LambdaFit, FitError> {
    let term = |i: usize, lambda: f64| -> Result<f64, FitError> {
        let m = with_rate(&jets[i], lambda, i)?;
        let t = FullTrellis::build_with_limit(&m, max_leaves)
            .map_err(|source| FitError::Trellis { i, source })?;
        Ok(t.log_partition())
    };
    fit(jets.len(), lo, hi, &term)
}

/// λ maximising `sum_jets log p(tree; λ)` within `[lo, hi]`, `trees[i]` being jet `i`'s tree.
pub fn fit_lambda_on_trees(
    jets: &[GinkgoModel],
    trees: &[Tree],
    lo: f64,
    hi: f64,
) -> Result<LambdaFit, FitError> {
    for (i, (jet, tree)) in jets.iter().zip(trees).enumerate() {
        if tree.n_leaves() != jet.leaves().len() {
            return Err(FitError::TreeSize {
                i,
                got: tree.n_leaves(),
                want: jet.leaves().len(),
            });
        }
    }
    let n = jets.len().min(trees.len());
    let term = |i: usize, lambda: f64| -> Result<f64, FitError> {
        Ok(trees[i].log_likelihood(&with_rate(&jets[i], lambda, i)?))
    };
    fit(n, lo, hi, &term)
}

/// The search shared by both fits: `term(i, λ)` is jet `i`'s objective.
fn fit(
    n: usize,
    lo: f64,
    hi: f64,
    term: &(dyn Fn(usize, f64) -> Result<f64, FitError> + Sync),
) -> Result<LambdaFit, FitError> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Err(FitError::Bounds { lo, hi });
    }
    let middle = (lo * hi).sqrt();
    let at_middle: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| term(i, middle))
        .collect::<Result<_, _>>()?;
    let used: Vec<usize> = (0..n).filter(|&i| at_middle[i].is_finite()).collect();
    if used.is_empty() {
        return Err(FitError::NoJets { n });
    }
    let evaluations = std::sync::atomic::AtomicU64::new(0);
    let objective = Objective {
        used: &used,
        term,
        evaluations: &evaluations,
    };
    let solver = BrentOpt::new(lo.ln(), hi.ln()).set_tolerance(1e-10, 1e-9);
    let res = Executor::new(objective, solver)
        .configure(|s| s.max_iters(200))
        .run()
        .map_err(|e| FitError::Search(e.to_string()))?;
    let log_lambda = res
        .state
        .best_param
        .ok_or_else(|| FitError::Search("no best point".into()))?;
    let lambda = log_lambda.exp();
    let objective = Objective {
        used: &used,
        term,
        evaluations: &evaluations,
    }
    .sum(lambda)?;
    Ok(LambdaFit {
        lambda,
        objective,
        evaluations: evaluations.load(std::sync::atomic::Ordering::Relaxed),
        jets_used: used.len(),
        jets_left_out: n - used.len(),
    })
}

/// `-sum term(i, e^x)` over the jets used (argmin minimises).
struct Objective<'a> {
    used: &'a [usize],
    term: &'a (dyn Fn(usize, f64) -> Result<f64, FitError> + Sync),
    evaluations: &'a std::sync::atomic::AtomicU64,
}

impl Objective<'_> {
    /// The objective at `lambda`, summed in the jets' order.
    fn sum(&self, lambda: f64) -> Result<f64, FitError> {
        self.evaluations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let terms: Vec<f64> = self
            .used
            .par_iter()
            .map(|&i| (self.term)(i, lambda))
            .collect::<Result<_, _>>()?;
        Ok(terms.iter().sum())
    }
}

impl CostFunction for Objective<'_> {
    type Param = f64;
    type Output = f64;

    fn cost(&self, x: &f64) -> Result<f64, argmin::core::Error> {
        let s = self.sum(x.exp()).map_err(argmin::core::Error::new)?;
        // -inf inside the bounds (a forbidden tree at some λ) is the worst value, not an error.
        Ok(if s.is_nan() { f64::INFINITY } else { -s })
    }
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
