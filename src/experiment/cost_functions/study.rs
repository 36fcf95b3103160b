//! The exhaustive study behind Section 4.4: every tree scored under an energy, with its
//! dendrogram purity, and the exact trellis's MAP beside the enumeration. Library functions,
//! usable without the experiment harness.

use crate::data::pam50::pearson;
use crate::exact::FullTrellis;
use crate::experiment::stats::mean_std;
use crate::metrics::dendrogram_purity;
use crate::model::{CorrelationModel, DasguptaModel, SplitModel, WeightMatrix};
use crate::subset::Subset;
use crate::tree::{n_binary_trees, Tree};
use anyhow::Result;
use rayon::prelude::*;

/// Energies are sums of a few weights; trees whose energies differ by less than this tie.
pub const TIE: f64 = 1e-9;

/// The energies of the study.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Energy {
    /// Dasgupta's cost (Eq. 4).
    Dasgupta,
    /// Hierarchical correlation clustering (Eq. 7).
    Hcc,
}

impl Energy {
    /// Both energies, in the order tables list them.
    pub const ALL: [Energy; 2] = [Energy::Dasgupta, Energy::Hcc];

    /// Short name (tables and charts).
    pub fn name(self) -> &'static str {
        match self {
            Energy::Dasgupta => "Dasgupta",
            Energy::Hcc => "HCC",
        }
    }
}

/// What exhaustive scoring finds for one weight matrix and energy.
#[derive(Clone, Debug, PartialEq)]
pub struct Study {
    /// Smallest energy over all trees (enumeration).
    pub min_energy: f64,
    /// The exact trellis's MAP energy.
    pub trellis_energy: f64,
    /// Number of trees attaining the smallest energy (enumeration).
    pub n_map_trees: usize,
    /// The same count from the trellis ([`FullTrellis::n_map_trees`]).
    pub trellis_n_map_trees: u128,
    /// Smallest and largest DP among the MAP trees.
    pub map_dp: (f64, f64),
    /// DP of the trellis's MAP tree.
    pub trellis_map_dp: f64,
    /// Smallest and largest DP over all trees.
    pub dp_range: (f64, f64),
    /// Mean DP over all trees (the DP of a uniformly random tree, in expectation).
    pub mean_dp: f64,
    /// Number of trees with DP = 1.
    pub n_dp_one: usize,
    /// Whether the MAP trees are exactly the trees with DP = 1.
    pub map_set_is_dp_one_set: bool,
    /// Number of MAP trees with DP = 1.
    pub n_map_with_dp_one: usize,
    /// Mean DP over the MAP trees (all of them, not only the one the trellis returns).
    pub map_dp_mean: f64,
    /// Pearson correlation of energy and DP over all trees (NaN if either is constant).
    pub energy_dp_correlation: f64,
}

/// Every tree over `labels.len()` points with its dendrogram purity (which depends on the
/// labels only, not on the weights).
pub fn all_trees_with_purity(labels: &[usize]) -> Result<(Vec<Tree>, Vec<f64>)> {
    let opt: Vec<Option<usize>> = labels.iter().map(|&l| Some(l)).collect();
    let trees = Tree::enumerate_all(Subset::full(labels.len()))?;
    let dps = trees
        .par_iter()
        .map(|t| dendrogram_purity(t, &opt).unwrap_or(f64::NAN))
        .collect();
    Ok((trees, dps))
}

/// The energy (`-log phi / beta`) of every tree, from the model's per-subset statistics.
fn energies<M: SplitModel>(model: &M, trees: &[Tree]) -> Result<Vec<f64>> {
    let stats = model.stat_table()?;
    Ok(trees
        .par_iter()
        .map(|t| {
            -t.splits()
                .iter()
                .map(|&(a, b)| {
                    model.log_psi_with(
                        a,
                        &stats[a.index()],
                        b,
                        &stats[b.index()],
                        &stats[a.union(b).index()],
                    )
                })
                .sum::<f64>()
        })
        .collect())
}

/// Every tree's energy under `model`, and the exact trellis's MAP tree, its energy
/// (`energy_of`) and its count of MAP trees.
fn scored<M: SplitModel>(
    model: &M,
    trees: &[Tree],
    energy_of: impl Fn(&M, &Tree) -> f64,
) -> Result<(Vec<f64>, Tree, f64, u128)> {
    let t = FullTrellis::build(model)?;
    let map = t.map_tree();
    let e = energy_of(model, &map);
    Ok((energies(model, trees)?, map, e, t.n_map_trees(model, TIE)?))
}

/// Scores every tree (`trees`, with purities `dps`, from [`all_trees_with_purity`]) under
/// `energy` with `weights` (at `beta = 1`), and runs the exact trellis for comparison.
pub fn study(
    weights: &WeightMatrix,
    labels: &[usize],
    energy: Energy,
    trees: &[Tree],
    dps: &[f64],
) -> Result<Study> {
    let opt_labels: Vec<Option<usize>> = labels.iter().map(|&l| Some(l)).collect();
    let (es, trellis_tree, trellis_energy, trellis_n_map_trees) = match energy {
        Energy::Dasgupta => scored(
            &DasguptaModel::new(weights.clone(), 1.0)?,
            trees,
            DasguptaModel::tree_cost,
        )?,
        Energy::Hcc => scored(
            &CorrelationModel::new(weights.clone(), 1.0)?,
            trees,
            CorrelationModel::tree_energy,
        )?,
    };
    let min_energy = es.iter().copied().fold(f64::INFINITY, f64::min);
    let is_map = |e: f64| e <= min_energy + TIE;
    let is_one = |dp: f64| dp >= 1.0 - TIE;
    let map_dps: Vec<f64> = es
        .iter()
        .zip(dps)
        .filter(|s| is_map(*s.0))
        .map(|s| *s.1)
        .collect();
    let range = |v: &[f64]| {
        (
            v.iter().cloned().fold(f64::INFINITY, f64::min),
            v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    Ok(Study {
        min_energy,
        trellis_energy,
        n_map_trees: map_dps.len(),
        trellis_n_map_trees,
        map_dp: range(&map_dps),
        trellis_map_dp: dendrogram_purity(&trellis_tree, &opt_labels).unwrap_or(f64::NAN),
        dp_range: range(dps),
        mean_dp: dps.iter().sum::<f64>() / dps.len() as f64,
        n_dp_one: dps.iter().filter(|&&d| is_one(d)).count(),
        map_set_is_dp_one_set: es.iter().zip(dps).all(|(&e, &dp)| is_map(e) == is_one(dp)),
        n_map_with_dp_one: map_dps.iter().filter(|&&d| is_one(d)).count(),
        map_dp_mean: map_dps.iter().sum::<f64>() / map_dps.len().max(1) as f64,
        energy_dp_correlation: correlation_or_nan(&es, dps),
    })
}

/// Pearson's correlation of `x` and `y`, NaN (not 0) when either is constant up to rounding
/// (variance at most 1e-12): with 1/0 weights every HCC tree ties, and "no correlation" would
/// be the wrong word for that.
fn correlation_or_nan(x: &[f64], y: &[f64]) -> f64 {
    let constant = |v: &[f64]| mean_std(v.iter().copied()).std <= 1e-6;
    if constant(x) || constant(y) {
        f64::NAN
    } else {
        pearson(x, y)
    }
}

/// Claim 1's per-tree numbers over `trees` (with purities `dps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassNodeCounts {
    /// Trees in which every class's points form a node (counted tree by tree).
    pub class_respecting: usize,
    /// Trees for which "DP = 1" and "every class is a node" disagree (0 when claim 1 holds
    /// tree by tree).
    pub mismatches: usize,
}

/// For every tree, whether every class's points form a node of it and whether its DP is 1:
/// the number of class-respecting trees and of trees where the two disagree.
pub fn class_node_counts(trees: &[Tree], dps: &[f64], labels: &[usize]) -> ClassNodeCounts {
    let n_classes = labels.iter().max().map_or(0, |m| m + 1);
    let classes: Vec<Subset> = (0..n_classes)
        .map(|c| Subset::from_indices((0..labels.len()).filter(|&i| labels[i] == c)))
        .collect();
    let (class_respecting, mismatches) = trees
        .par_iter()
        .zip(dps)
        .map(|(t, &dp)| {
            let nodes = t.node_clusters();
            let respects = classes.iter().all(|c| nodes.contains(c));
            (
                usize::from(respects),
                usize::from(respects != (dp >= 1.0 - TIE)),
            )
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    ClassNodeCounts {
        class_respecting,
        mismatches,
    }
}

/// Whether, for every tree, DP = 1 exactly when every class's points form a node of the tree
/// (claim 1, checked tree by tree): [`class_node_counts`] finds no mismatch.
pub fn dp_one_iff_classes_are_subtrees(trees: &[Tree], dps: &[f64], labels: &[usize]) -> bool {
    class_node_counts(trees, dps, labels).mismatches == 0
}

/// Number of trees in which every class forms its own subtree:
/// `(2K−3)!! · Π_c (2k_c−3)!!` for `K` classes of sizes `k_c`.
pub fn n_class_respecting_trees(cluster_sizes: &[usize]) -> u128 {
    cluster_sizes
        .iter()
        .map(|&k| n_binary_trees(k).unwrap_or(u128::MAX))
        .fold(1u128, u128::saturating_mul)
        .saturating_mul(n_binary_trees(cluster_sizes.len()).unwrap_or(u128::MAX))
}
