//! The exact answers beside BHC: the DPM evidence, MAP partition and co-clustering marginals
//! over all partitions (the full flat trellis with [`DpmEnergy`]), the best and average BHC
//! objective over all binary trees ([`super::trees`]), and the comparison of a greedy run with
//! them ([`compare`]).

pub use super::trees::{best_bhc_tree, ln_n_binary_trees, BestTrees, MAX_TREE_DP_POINTS};

use super::greedy::{bhc_greedy, BhcResult};
use super::{BhcError, ConjugateModel, DpmEnergy};
use crate::coalescent::metrics::adjusted_rand_index;
use crate::flat::{ClusterEnergy, FlatTrellis, TreeFlatTrellis};
use crate::subset::Subset;
use crate::tree::Tree;

/// Largest `N` for the exact answers here (the flat trellis's default limit).
pub const MAX_EXACT_POINTS: usize = crate::flat::trellis::DEFAULT_MAX_POINTS;

/// The DPM posterior over all partitions, exactly.
#[derive(Clone, Debug)]
pub struct DpmExact {
    /// `log p(D)`, the DPM evidence: `ln Γ(α) − ln Γ(N + α) + log Σ_π ∏ g(C)`.
    pub log_evidence: f64,
    /// `log Σ_π ∏ g(C)` (the flat trellis's `log Z`).
    pub log_z: f64,
    /// The MAP partition (clusters in increasing order of their lowest point).
    pub map_partition: Vec<Subset>,
    /// `log P(MAP partition | D)`.
    pub map_log_posterior: f64,
    /// `P(i and j in one cluster | D)`, `N × N`.
    pub pairwise: Vec<Vec<f64>>,
}

/// The DPM posterior of `model` under concentration `alpha`, by the full flat trellis over all
/// Bell(N) partitions. Errors above [`MAX_EXACT_POINTS`] points.
pub fn dpm_exact<M: ConjugateModel>(model: &M, alpha: f64) -> Result<DpmExact, BhcError> {
    let energy = DpmEnergy::new(model, alpha)?;
    check_exact_size(model.n_points())?;
    let trellis = FlatTrellis::build(&energy)?;
    Ok(dpm_from_trellis(&energy, &trellis))
}

fn dpm_from_trellis<M: ConjugateModel>(energy: &DpmEnergy<'_, M>, t: &FlatTrellis) -> DpmExact {
    let log_z = t.log_partition();
    DpmExact {
        log_evidence: log_z + energy.log_prior_constant(),
        log_z,
        map_partition: t.map_clustering(),
        map_log_posterior: t.map_log_energy() - log_z,
        pairwise: t.pairwise_marginals(),
    }
}

fn check_exact_size(n: usize) -> Result<(), BhcError> {
    if n == 0 {
        return Err(BhcError::Empty);
    }
    if n > MAX_EXACT_POINTS.min(MAX_TREE_DP_POINTS) {
        return Err(BhcError::TooManyPoints {
            n,
            limit: MAX_EXACT_POINTS.min(MAX_TREE_DP_POINTS),
            what: "the exact DPM evidence and best BHC tree",
        });
    }
    Ok(())
}

/// The exact DPM posterior and the best and average BHC trees of `model` under concentration
/// `alpha`, from one table of the `2^N` cluster energies (what [`compare`] compares a greedy
/// run with). Errors above `min(`[`MAX_EXACT_POINTS`]`,` [`MAX_TREE_DP_POINTS`]`)` points;
/// stops at the caller's cancellation ([`BhcError::Cancelled`]).
pub fn exact_answers<M: ConjugateModel>(
    model: &M,
    alpha: f64,
) -> Result<(DpmExact, BestTrees), BhcError> {
    let energy = DpmEnergy::new(model, alpha)?;
    let n = model.n_points();
    check_exact_size(n)?;
    let table = energy.log_energy_table().map_err(cancelled)?;
    let trellis = FlatTrellis::build(&TableEnergy { n, table: &table }).map_err(cancelled)?;
    let dpm = dpm_from_trellis(&energy, &trellis);
    let trees = best_bhc_tree(&table, n)?;
    Ok((dpm, trees))
}

/// A flat-trellis error as a BHC error, its cancellation as [`BhcError::Cancelled`].
fn cancelled(e: crate::flat::FlatError) -> BhcError {
    match e {
        crate::flat::FlatError::Cancelled => BhcError::Cancelled,
        e => BhcError::Flat(e),
    }
}

/// Greedy BHC against the exact answers on the same data. Every `log` bound is on the DPM
/// evidence's scale (`ln Γ(α) − ln Γ(N+α)` added to `log f`); gaps are in nats.
#[derive(Clone, Debug)]
pub struct BhcComparison {
    /// Number of points.
    pub n: usize,
    /// The DP concentration.
    pub alpha: f64,
    /// The greedy run.
    pub greedy: BhcResult,
    /// The exact DPM posterior.
    pub dpm: DpmExact,
    /// The exact best and average trees under BHC's objective.
    pub trees: BestTrees,
    /// BHC's lower bound `log[Γ(α)/Γ(N+α) f(T_greedy)]`.
    pub greedy_log_bound: f64,
    /// The same number from the tree-structured flat trellis over the greedy tree's nodes
    /// (must equal `greedy_log_bound`: a check of the implementation).
    pub tree_trellis_log_bound: f64,
    /// The best tree's bound `log[Γ(α)/Γ(N+α) max_T f(T)]`.
    pub best_log_bound: f64,
    /// The average tree's bound `log[Γ(α)/Γ(N+α) mean_T f(T)]`.
    pub mean_log_bound: f64,
    /// `log p(D) − greedy_log_bound ≥ 0`: the evidence the greedy tree's cuts miss.
    pub gap_evidence_greedy: f64,
    /// `log p(D) − best_log_bound ≥ 0`: the evidence even the best tree misses.
    pub gap_evidence_best: f64,
    /// `best_log_bound − greedy_log_bound ≥ 0`: how far greedy is from the best tree.
    pub gap_best_greedy: f64,
    /// Whether the greedy tree is a best tree (same clusters).
    pub greedy_is_best: bool,
    /// Labels of BHC's `r_k < 0.5` cut.
    pub cut_labels: Vec<usize>,
    /// Labels of the exact MAP partition.
    pub map_labels: Vec<usize>,
    /// Adjusted Rand index of the cut against the MAP partition.
    pub ari_cut_map: f64,
    /// BHC's implied co-clustering (the posterior over the greedy tree's cuts).
    pub bhc_pairwise: Vec<Vec<f64>>,
    /// Largest `|P_BHC(i~j) − P_DPM(i~j)|` over pairs `i < j`.
    pub coclustering_max_abs_diff: f64,
    /// Mean of the same over pairs `i < j`.
    pub coclustering_mean_abs_diff: f64,
}

/// Runs greedy BHC, the flat trellis and the tree recursion on `model` with concentration
/// `alpha` and compares them. Errors above `min(`[`MAX_EXACT_POINTS`]`,`
/// [`MAX_TREE_DP_POINTS`]`)` points.
pub fn compare<M: ConjugateModel>(model: &M, alpha: f64) -> Result<BhcComparison, BhcError> {
    DpmEnergy::new(model, alpha)?;
    check_exact_size(model.n_points())?;
    compare_run(model, bhc_greedy(model, alpha)?)
}

/// [`compare`] for a greedy run made before (`greedy`, on the points of `model`, with its own
/// `alpha`). Errors when the run's size is not the model's, or above the limit of [`compare`].
pub fn compare_run<M: ConjugateModel>(
    model: &M,
    greedy: BhcResult,
) -> Result<BhcComparison, BhcError> {
    let alpha = greedy.alpha;
    let energy = DpmEnergy::new(model, alpha)?;
    let n = model.n_points();
    if greedy.n != n || greedy.nodes.len() + 1 != 2 * n {
        return Err(BhcError::BadParameter {
            name: "greedy run's points",
            value: greedy.n as f64,
            expected: "a run on the model's own points",
        });
    }
    let (dpm, trees) = exact_answers(model, alpha)?;
    let c = energy.log_prior_constant();
    let greedy_tree = greedy.tree().expect("at most 64 points");
    let tree_trellis = TreeFlatTrellis::build(&energy, &greedy_tree)?;
    let greedy_log_bound = greedy.log_lower_bound();
    let best_log_bound = trees.log_f_max + c;
    let map_labels = labels_of_subsets(n, &dpm.map_partition);
    let cut_labels = greedy.cut_labels(0.5);
    let ari_cut_map = adjusted_rand_index(&cut_labels, &map_labels).expect("same length");
    let bhc_pairwise = greedy.coclustering();
    let (mut max_diff, mut sum_diff, mut pairs) = (0.0f64, 0.0, 0usize);
    for (i, (row_b, row_d)) in bhc_pairwise.iter().zip(&dpm.pairwise).enumerate() {
        for (b, d) in row_b.iter().zip(row_d).skip(i + 1) {
            let d = (b - d).abs();
            max_diff = max_diff.max(d);
            sum_diff += d;
            pairs += 1;
        }
    }
    Ok(BhcComparison {
        n,
        alpha,
        greedy_is_best: greedy_tree == trees.tree,
        tree_trellis_log_bound: tree_trellis.log_partition() + c,
        mean_log_bound: trees.log_f_mean + c,
        gap_evidence_greedy: dpm.log_evidence - greedy_log_bound,
        gap_evidence_best: dpm.log_evidence - best_log_bound,
        gap_best_greedy: best_log_bound - greedy_log_bound,
        greedy_log_bound,
        best_log_bound,
        cut_labels,
        map_labels,
        ari_cut_map,
        bhc_pairwise,
        coclustering_max_abs_diff: max_diff,
        coclustering_mean_abs_diff: if pairs > 0 {
            sum_diff / pairs as f64
        } else {
            0.0
        },
        greedy,
        dpm,
        trees,
    })
}

/// `log p(D | T)` and `log f(T)` of BHC's recursion over any binary tree `tree` of the model's
/// points (the greedy run's numbers for its own tree; the best tree's otherwise).
pub fn tree_log_p(energy: &DpmEnergy<'_, impl ConjugateModel>, tree: &Tree) -> (f64, f64) {
    let log_f = super::greedy::log_f_of_tree(energy, tree);
    // d over the tree: d = αΓ(n) + d_l d_r, i.e. f with every p(D_C) = 1.
    fn log_d(t: &Tree, v: usize, ln_alpha: f64) -> (f64, usize) {
        match t.nodes()[v] {
            crate::tree::Node::Leaf(_) => (ln_alpha, 1),
            crate::tree::Node::Internal(l, r) => {
                let (dl, nl) = log_d(t, l, ln_alpha);
                let (dr, nr) = log_d(t, r, ln_alpha);
                let prior = ln_alpha + statrs::function::gamma::ln_gamma((nl + nr) as f64);
                (crate::model::log_add_exp(prior, dl + dr), nl + nr)
            }
        }
    }
    let (d, _) = log_d(tree, tree.root(), energy.alpha().ln());
    (log_f - d, log_f)
}

/// Labels `0..k` of a partition given as subsets (numbered by lowest point).
pub fn labels_of_subsets(n: usize, clusters: &[Subset]) -> Vec<usize> {
    let lists: Vec<Vec<usize>> = clusters.iter().map(|c| c.iter().collect()).collect();
    super::labels_of(n, &lists)
}

/// A precomputed log-energy table as a [`ClusterEnergy`] (so that the flat trellis and the
/// tree recursion share one table).
struct TableEnergy<'a> {
    n: usize,
    table: &'a [f64],
}

impl ClusterEnergy for TableEnergy<'_> {
    fn n_points(&self) -> usize {
        self.n
    }
    fn log_energy(&self, c: Subset) -> f64 {
        self.table[c.index()]
    }
    fn log_energy_table(&self) -> Result<Vec<f64>, crate::flat::FlatError> {
        Ok(self.table.to_vec())
    }
}
