//! The Ginkgo model's rate λ fitted to a set of jets, one value for every split (the root's
//! included):
//! - **by exact evidence**: λ maximising `sum_jets log Z(jet; λ)`, `Z` summing the potentials of
//!   all `(2N-3)!!` trees over the jet's leaves, which only the full trellis gives exactly;
//! - **on given trees** (a generator's truth trees): λ maximising `sum_jets log p(tree; λ)`.
//!
//! What the fits recover depends on the split potential ([`Likelihood`]):
//! - **The paper-era potential** ([`GinkgoModel`], behind every exact result of the paper) does
//!   not recover the rate of the jets it was written for. On Ginkgo QCD jets drawn at λ = 1.5
//!   both objectives keep rising as λ → 0, so a fit returns its lower bound and says so
//!   ([`LambdaFit::at_bound`]). One term causes it: the lighter sibling of a heavy cluster is
//!   conditioned on the scale `tp2 = (sqrt(tP) - sqrt(t_heavy))^2`, and when it is a single leaf
//!   it is scored with the probability of not splitting, `(1 - e^(-λ t_cut/tp2)) / (1 - e^(-λ))`.
//!   That formula assumes `tp2 >= t_cut`; in about a third of all splits `tp2 < t_cut` (the
//!   generator then makes the child a leaf with certainty), the "probability" exceeds 1 and
//!   grows to `t_cut/tp2` (median 5.7) as λ → 0. Capping it at 1 gives a maximum, but too high
//!   (1.83 for λ = 1.5; 3.34 for λ = 3, where the uncapped potential also has a maximum, 3.25),
//!   because the potential also scores one order of the two children (the heavier first) where
//!   the generator draws either first, and scores leaves at `t = 0` instead of their masses.
//!   Fitted to other data (Pythia jets) it gives the rate that best describes them under this
//!   potential, not a parameter of their shower.
//! - **The generator's own density** ([`GinkgoGeneratorModel`]) recovers the rate: `log Z` is
//!   then the exact log-density of the leaves' four-momenta, and both fits are maximum-likelihood
//!   estimates (on showers drawn at 0.7, 1.5 and 3: 0.70, 1.50, 3.00, each to within 0.005).
//!   This holds for jets kept whatever their number of leaves `N`. Keeping only jets with `N` in
//!   a window is a selection that depends on λ, and it biases both fits. For λ = 1.5 the fits
//!   give 1.58 with 5 to 10 leaves and 1.76 with 2 to 9.
//!   (Checked independently of this code in numpy, by `scripts/ginkgo_lambda_check.py`.)
//!
//! The search is one-dimensional in `log λ`: the objective on a grid of [`GRID_POINTS`] points
//! over `[lo, hi]` (bounds included), then Brent's method (argmin's `BrentOpt`, tolerance √ε in
//! `log λ`) between the best grid point's neighbours; the better of the two is the fit. A maximum narrower than the grid's
//! step can be missed. A fit whose best value is at `lo` or `hi` returns that bound exactly and
//! says so ([`LambdaFit::at_bound`]). Jets whose objective is `-inf` at the bounds' geometric
//! middle (every tree forbidden by the cut, or a given tree with a forbidden split; for both
//! potentials that does not depend on λ) are left out and counted. The jets are evaluated in
//! parallel and summed in their order: the same bits for any thread count.

use super::{ExactError, FullTrellis};
use crate::model::{GinkgoGeneratorModel, GinkgoModel, SplitModel};
use crate::tree::Tree;
use argmin::core::{CostFunction, Executor};
use argmin::solver::brent::BrentOpt;
use rayon::prelude::*;

/// Points of `log λ` at which a fit first evaluates its objective (bounds included).
pub const GRID_POINTS: usize = 17;

/// The split potential a fit maximises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Likelihood {
    /// The paper-era potential ([`GinkgoModel`]): the paper's numbers; its fits do not recover
    /// the generator's rate (see the module's text).
    #[default]
    PaperEra,
    /// The Ginkgo generator's own density ([`GinkgoGeneratorModel`]).
    Generator,
}

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
    /// The best value is at a bound: `lambda` is `lo` or `hi` exactly, and the objective may
    /// rise beyond it. Not a maximum.
    pub at_bound: bool,
    /// `1 / sqrt(-objective''(lambda))`, the observed-information standard error of `lambda`
    /// (a statistical error when the potential is the data's own density, as
    /// [`Likelihood::Generator`] is for Ginkgo jets); NaN at a bound or where the objective is
    /// not concave.
    pub std_error: f64,
}

/// An objective at several rates.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectiveCurve {
    /// The rates, as given.
    pub lambdas: Vec<f64>,
    /// The objective at each rate (summed over the jets used).
    pub objective: Vec<f64>,
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
    #[error("no jet has a finite objective (all {n} are left out: every tree, or the given tree, has a forbidden split: a cluster lighter than t_cut or, under the generator density, a leaf heavier than it); check t_cut against the jets' masses")]
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
    /// A rate of a curve that is not a positive finite number.
    #[error(
        "every λ of a curve must be a positive finite number (got {lambda}); pass e.g. 0.1 to 10"
    )]
    BadRate {
        /// The rate given.
        lambda: f64,
    },
    /// Not one tree per jet.
    #[error("{trees} trees for {jets} jets; pass one tree per jet")]
    TreeCount {
        /// Jets given.
        jets: usize,
        /// Trees given.
        trees: usize,
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

/// Jet `i`'s objective at a rate.
type Term<'a> = dyn Fn(usize, f64) -> Result<f64, FitError> + Sync + 'a;

fn model_error(i: usize) -> impl Fn(crate::model::ModelError) -> FitError {
    move |e| FitError::Model {
        i,
        message: e.to_string(),
    }
}

/// `f(model)` for jet `i`'s leaves and cut under `likelihood` at rate `lambda`.
fn under<T>(
    likelihood: Likelihood,
    jet: &GinkgoModel,
    lambda: f64,
    i: usize,
    f: impl FnOnce(&dyn ModelRef) -> Result<T, FitError>,
) -> Result<T, FitError> {
    let leaves = jet.leaves().to_vec();
    match likelihood {
        Likelihood::PaperEra => {
            f(&GinkgoModel::new(leaves, jet.t_cut(), lambda).map_err(model_error(i))?)
        }
        Likelihood::Generator => {
            f(&GinkgoGeneratorModel::new(leaves, jet.t_cut(), lambda).map_err(model_error(i))?)
        }
    }
}

/// What the fits need of a model, object-safe.
trait ModelRef {
    fn log_z(&self, max_leaves: usize) -> Result<f64, ExactError>;
    fn log_z_split_loop(&self, max_leaves: usize) -> Result<f64, ExactError>;
    fn tree_log_likelihood(&self, tree: &Tree) -> f64;
}

impl<M: SplitModel> ModelRef for M {
    fn log_z(&self, max_leaves: usize) -> Result<f64, ExactError> {
        FullTrellis::log_partition_only(self, max_leaves)
    }
    fn log_z_split_loop(&self, max_leaves: usize) -> Result<f64, ExactError> {
        Ok(FullTrellis::build_split_loop(self, max_leaves)?.log_partition())
    }
    fn tree_log_likelihood(&self, tree: &Tree) -> f64 {
        tree.log_likelihood(self)
    }
}

/// Jet `i`'s `log Z` under `likelihood` (the full trellis, refusing `N > max_leaves`).
fn evidence_term(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    max_leaves: usize,
) -> impl Fn(usize, f64) -> Result<f64, FitError> + Sync + '_ {
    evidence_term_on(likelihood, jets, max_leaves, false)
}

/// [`evidence_term`], by the split loop when `split_loop` (the path of every model before
/// the eight lanes: the baseline of `examples/evidence_speed`).
fn evidence_term_on(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    max_leaves: usize,
    split_loop: bool,
) -> impl Fn(usize, f64) -> Result<f64, FitError> + Sync + '_ {
    move |i, lambda| {
        under(likelihood, &jets[i], lambda, i, |m| {
            if split_loop {
                m.log_z_split_loop(max_leaves)
            } else {
                m.log_z(max_leaves)
            }
            .map_err(|source| FitError::Trellis { i, source })
        })
    }
}

/// Jet `i`'s `log p(trees[i])` under `likelihood`, after checking one tree per jet of its size.
fn tree_term<'a>(
    likelihood: Likelihood,
    jets: &'a [GinkgoModel],
    trees: &'a [Tree],
) -> Result<impl Fn(usize, f64) -> Result<f64, FitError> + Sync + 'a, FitError> {
    if trees.len() != jets.len() {
        return Err(FitError::TreeCount {
            jets: jets.len(),
            trees: trees.len(),
        });
    }
    for (i, (jet, tree)) in jets.iter().zip(trees).enumerate() {
        if tree.n_leaves() != jet.leaves().len() {
            return Err(FitError::TreeSize {
                i,
                got: tree.n_leaves(),
                want: jet.leaves().len(),
            });
        }
    }
    Ok(move |i: usize, lambda: f64| {
        under(likelihood, &jets[i], lambda, i, |m| {
            Ok(m.tree_log_likelihood(&trees[i]))
        })
    })
}

/// λ maximising `sum_jets log Z(jet; λ)` under the paper-era potential within `[lo, hi]` (the
/// full trellis of every jet, refusing jets above `max_leaves`).
pub fn fit_lambda_by_evidence(
    jets: &[GinkgoModel],
    lo: f64,
    hi: f64,
    max_leaves: usize,
) -> Result<LambdaFit, FitError> {
    fit_lambda_by_evidence_with(Likelihood::PaperEra, jets, lo, hi, max_leaves)
}

/// λ maximising `sum_jets log p(tree; λ)` under the paper-era potential within `[lo, hi]`,
/// `trees[i]` being jet `i`'s tree.
pub fn fit_lambda_on_trees(
    jets: &[GinkgoModel],
    trees: &[Tree],
    lo: f64,
    hi: f64,
) -> Result<LambdaFit, FitError> {
    fit_lambda_on_trees_with(Likelihood::PaperEra, jets, trees, lo, hi)
}

/// [`fit_lambda_by_evidence`] under `likelihood` (the jets' leaves and cuts are read from
/// `jets`; their rates are ignored).
pub fn fit_lambda_by_evidence_with(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    lo: f64,
    hi: f64,
    max_leaves: usize,
) -> Result<LambdaFit, FitError> {
    fit_by_evidence_on(likelihood, jets, lo, hi, max_leaves, false)
}

/// [`fit_lambda_by_evidence_with`] with every `log Z` by the split loop
/// ([`FullTrellis::build_split_loop`]): the same search, the fit as it ran before the eight
/// lanes, for timing against it (the same λ to the search's tolerance).
#[doc(hidden)]
pub fn fit_lambda_by_evidence_split_loop(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    lo: f64,
    hi: f64,
    max_leaves: usize,
) -> Result<LambdaFit, FitError> {
    fit_by_evidence_on(likelihood, jets, lo, hi, max_leaves, true)
}

fn fit_by_evidence_on(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    lo: f64,
    hi: f64,
    max_leaves: usize,
    split_loop: bool,
) -> Result<LambdaFit, FitError> {
    let term = evidence_term_on(likelihood, jets, max_leaves, split_loop);
    search(jets.len(), lo, hi, &term)
}

/// [`fit_lambda_on_trees`] under `likelihood`.
pub fn fit_lambda_on_trees_with(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    trees: &[Tree],
    lo: f64,
    hi: f64,
) -> Result<LambdaFit, FitError> {
    search(jets.len(), lo, hi, &tree_term(likelihood, jets, trees)?)
}

/// `sum_jets log Z(jet; λ)` under `likelihood` at each of `lambdas` (positive finite), over
/// the jets whose `log Z` is finite at the first rate (for a figure of the evidence against λ).
pub fn evidence_curve(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    lambdas: &[f64],
    max_leaves: usize,
) -> Result<ObjectiveCurve, FitError> {
    curve(
        jets.len(),
        lambdas,
        &evidence_term(likelihood, jets, max_leaves),
    )
}

/// `sum_jets log p(trees[i]; λ)` under `likelihood` at each of `lambdas`, over the jets whose
/// tree is allowed.
pub fn tree_curve(
    likelihood: Likelihood,
    jets: &[GinkgoModel],
    trees: &[Tree],
    lambdas: &[f64],
) -> Result<ObjectiveCurve, FitError> {
    curve(jets.len(), lambdas, &tree_term(likelihood, jets, trees)?)
}

fn curve(n: usize, lambdas: &[f64], term: &Term<'_>) -> Result<ObjectiveCurve, FitError> {
    if let Some(&bad) = lambdas.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
        return Err(FitError::BadRate { lambda: bad });
    }
    let Some(&first) = lambdas.first() else {
        return Ok(ObjectiveCurve {
            lambdas: Vec::new(),
            objective: Vec::new(),
            jets_used: 0,
            jets_left_out: 0,
        });
    };
    let objective = Objective::new(n, first, term)?;
    let values = lambdas
        .iter()
        .map(|&l| objective.sum(l))
        .collect::<Result<_, _>>()?;
    Ok(ObjectiveCurve {
        lambdas: lambdas.to_vec(),
        objective: values,
        jets_used: objective.used.len(),
        jets_left_out: n - objective.used.len(),
    })
}

/// The search shared by both fits: `term(i, λ)` is jet `i`'s objective.
fn search(n: usize, lo: f64, hi: f64, term: &Term<'_>) -> Result<LambdaFit, FitError> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Err(FitError::Bounds { lo, hi });
    }
    let objective = Objective::new(n, (lo * hi).sqrt(), term)?;
    // The grid, bounds exact; NaN ranks below everything.
    let step = (hi / lo).ln() / (GRID_POINTS - 1) as f64;
    let grid: Vec<f64> = (0..GRID_POINTS)
        .map(|k| match k {
            0 => lo,
            k if k == GRID_POINTS - 1 => hi,
            k => (lo.ln() + step * k as f64).exp(),
        })
        .collect();
    let values: Vec<f64> = grid
        .iter()
        .map(|&l| {
            objective
                .sum(l)
                .map(|v| if v.is_nan() { f64::NEG_INFINITY } else { v })
        })
        .collect::<Result<_, _>>()?;
    let mut best = 0;
    for k in 1..GRID_POINTS {
        if values[k] > values[best] {
            best = k;
        }
    }
    // Brent between the best grid point's neighbours.
    let (a, b) = (
        grid[best.saturating_sub(1)].ln(),
        grid[(best + 1).min(GRID_POINTS - 1)].ln(),
    );
    // Brent's tolerance at the square root of the rounding unit: a smooth maximum is flat to
    // within the objective's rounding over that width, so a tighter one only adds evaluations
    // that follow the objective's last bits (on the Pythia parton set, 44 evaluations against
    // 30 for the same λ to twelve digits).
    let tol = f64::EPSILON.sqrt();
    let solver = BrentOpt::new(a, b).set_tolerance(tol, tol);
    let res = Executor::new(&objective, solver)
        .configure(|s| s.max_iters(200))
        .run()
        .map_err(|e| FitError::Search(e.to_string()))?;
    let brent = res
        .state
        .best_param
        .ok_or_else(|| FitError::Search("no best point".into()))?
        .exp();
    let at_brent = objective.sum(brent)?;
    let (lambda, value) = if at_brent > values[best] {
        (brent, at_brent)
    } else {
        (grid[best], values[best])
    };
    let at_bound = lambda == lo || lambda == hi;
    let std_error = if at_bound {
        f64::NAN
    } else {
        let d = 1e-3 * lambda;
        let second =
            (objective.sum(lambda + d)? - 2.0 * value + objective.sum(lambda - d)?) / (d * d);
        if second < 0.0 {
            1.0 / (-second).sqrt()
        } else {
            f64::NAN
        }
    };
    Ok(LambdaFit {
        lambda,
        objective: value,
        evaluations: objective
            .evaluations
            .load(std::sync::atomic::Ordering::Relaxed),
        jets_used: objective.used.len(),
        jets_left_out: n - objective.used.len(),
        at_bound,
        std_error,
    })
}

/// `sum term(i, λ)` over the jets used (argmin minimises `-sum term(i, e^x)`).
struct Objective<'a> {
    used: Vec<usize>,
    term: &'a Term<'a>,
    evaluations: std::sync::atomic::AtomicU64,
}

impl<'a> Objective<'a> {
    /// The jets of `0..n` whose objective is finite at `lambda`.
    fn new(n: usize, lambda: f64, term: &'a Term<'a>) -> Result<Objective<'a>, FitError> {
        // Collected before the first error is taken: the same error for any thread count.
        let at: Vec<Result<f64, FitError>> =
            (0..n).into_par_iter().map(|i| term(i, lambda)).collect();
        let at: Vec<f64> = at.into_iter().collect::<Result<_, _>>()?;
        let used: Vec<usize> = (0..n).filter(|&i| at[i].is_finite()).collect();
        if used.is_empty() {
            return Err(FitError::NoJets { n });
        }
        Ok(Objective {
            used,
            term,
            evaluations: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The objective at `lambda`, summed in the jets' order.
    fn sum(&self, lambda: f64) -> Result<f64, FitError> {
        self.evaluations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let terms: Vec<Result<f64, FitError>> = self
            .used
            .par_iter()
            .map(|&i| (self.term)(i, lambda))
            .collect();
        let mut sum = 0.0;
        for t in terms {
            sum += t?;
        }
        Ok(sum)
    }
}

impl CostFunction for &Objective<'_> {
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
