//! Section 4.4 of the Cluster Trellis paper: how Dasgupta's cost, hierarchical correlation
//! clustering (HCC) and dendrogram purity (DP) relate, checked exhaustively.
//!
//! For a planted flat clustering of at most 8 points, every weight scheme of the section
//! (1/0, +1/−1, random, and the negations of the first two) and both energies, every one of the
//! `(2N−3)!!` trees is scored: its energy and its DP. From these the five claims are checked:
//! 1. the trees with DP = 1 are exactly those in which every class forms a subtree (counted
//!    against the closed form `(2K−3)!! · Π (2k_c−3)!!`);
//! 2. with 1/0 weights the set of MAP trees of Dasgupta's cost equals the set of DP = 1 trees;
//! 3. the same for HCC with +1/−1 weights;
//! 4. with random weights the MAP trees' DP is unrelated to the planted clustering (compared
//!    with the DP of a uniformly random tree, and the correlation of energy and DP over all trees);
//! 5. with negated weights every MAP tree has the worst DP of any tree.
//!
//! The exact trellis's MAP energy and its count of MAP trees ([`FullTrellis::n_map_trees`]) are
//! checked against the enumeration for every case.
//!
//! Outputs: `cost_functions.parquet` (one row per scheme, instance and energy),
//! `claims.parquet` (claim, verdict, evidence) and `cost_functions.png/.svg` (DP of the MAP trees
//! against the range over all trees and the uniform-tree mean).

use super::chart::{save_chart, DotRangeChart, DotRangeRow};
use super::config::Config;
use super::table::Table;
use super::{Manifest, Staging};
use crate::data::graphs::{planted_labels, WeightScheme};
use crate::exact::FullTrellis;
use crate::metrics::dendrogram_purity;
use crate::model::{CorrelationModel, DasguptaModel, SplitModel, WeightMatrix};
use crate::subset::Subset;
use crate::tree::{n_binary_trees, Tree};
use anyhow::Result;
use rayon::prelude::*;

/// Energies are sums of a few weights; trees whose energies differ by less than this tie.
const TIE: f64 = 1e-9;

/// The energies of the study.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Energy {
    /// Dasgupta's cost (Eq. 4).
    Dasgupta,
    /// Hierarchical correlation clustering (Eq. 7).
    Hcc,
}

impl Energy {
    /// Short name.
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
pub fn all_trees_with_purity(labels: &[usize]) -> (Vec<Tree>, Vec<f64>) {
    let opt: Vec<Option<usize>> = labels.iter().map(|&l| Some(l)).collect();
    let trees = Tree::enumerate_all(Subset::full(labels.len()));
    let dps = trees
        .par_iter()
        .map(|t| dendrogram_purity(t, &opt).unwrap_or(f64::NAN))
        .collect();
    (trees, dps)
}

/// The energy (`-log phi / beta`) of every tree, from the model's per-subset statistics.
fn energies<M: SplitModel>(model: &M, trees: &[Tree]) -> Vec<f64> {
    let stats = model.stat_table();
    trees
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
        .collect()
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
        Energy::Dasgupta => {
            let m = DasguptaModel::new(weights.clone(), 1.0);
            let t = FullTrellis::build(&m)?;
            let map = t.map_tree();
            let e = m.tree_cost(&map);
            (energies(&m, trees), map, e, t.n_map_trees(&m, TIE))
        }
        Energy::Hcc => {
            let m = CorrelationModel::new(weights.clone(), 1.0);
            let t = FullTrellis::build(&m)?;
            let map = t.map_tree();
            let e = m.tree_energy(&map);
            (energies(&m, trees), map, e, t.n_map_trees(&m, TIE))
        }
    };
    let scores: Vec<(f64, f64)> = es.into_iter().zip(dps.iter().copied()).collect();
    let min_energy = scores.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    let is_map = |e: f64| e <= min_energy + TIE;
    let is_one = |dp: f64| dp >= 1.0 - TIE;
    let map_dps: Vec<f64> = scores.iter().filter(|s| is_map(s.0)).map(|s| s.1).collect();
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
        map_set_is_dp_one_set: scores.iter().all(|&(e, dp)| is_map(e) == is_one(dp)),
        n_map_with_dp_one: map_dps.iter().filter(|&&d| is_one(d)).count(),
        map_dp_mean: map_dps.iter().sum::<f64>() / map_dps.len().max(1) as f64,
        energy_dp_correlation: pearson(&scores),
    })
}

fn pearson(xy: &[(f64, f64)]) -> f64 {
    let n = xy.len() as f64;
    let (mx, my) = (
        xy.iter().map(|p| p.0).sum::<f64>() / n,
        xy.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for &(x, y) in xy {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx <= 1e-12 * n || syy <= 1e-12 * n {
        f64::NAN
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// Whether, for every tree, DP = 1 exactly when every class's points form a node of the tree
/// (claim 1, checked tree by tree).
pub fn dp_one_iff_classes_are_subtrees(trees: &[Tree], dps: &[f64], labels: &[usize]) -> bool {
    let n_classes = labels.iter().max().map_or(0, |m| m + 1);
    let classes: Vec<Subset> = (0..n_classes)
        .map(|c| Subset::from_indices((0..labels.len()).filter(|&i| labels[i] == c)))
        .collect();
    trees.par_iter().zip(dps).all(|(t, &dp)| {
        let nodes = t.node_clusters();
        let respects = classes.iter().all(|c| nodes.contains(c));
        respects == (dp >= 1.0 - TIE)
    })
}

/// Number of trees in which every class forms its own subtree:
/// `(2K−3)!! · Π_c (2k_c−3)!!` for `K` classes of sizes `k_c`.
pub fn n_class_respecting_trees(cluster_sizes: &[usize]) -> u128 {
    cluster_sizes
        .iter()
        .map(|&k| n_binary_trees(k))
        .product::<u128>()
        * n_binary_trees(cluster_sizes.len())
}

struct Case {
    scheme: WeightScheme,
    instance: usize,
    energy: Energy,
    study: Study,
}

/// Runs the cost-function study of `cfg` into `staging`.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<()> {
    let sec = cfg.cost_functions.as_ref().expect("checked by Config");
    let labels = planted_labels(&sec.cluster_sizes);
    let n = labels.len();
    let mut schemes: Vec<(WeightScheme, usize)> = vec![
        (WeightScheme::WithinOne, 0),
        (WeightScheme::PlusMinusOne, 0),
    ];
    for k in 0..sec.random_instances {
        let seed = cfg
            .experiment
            .seed
            .wrapping_mul(1_000_003)
            .wrapping_add(k as u64);
        schemes.push((WeightScheme::Random(seed), k));
    }
    schemes.push((WeightScheme::NegatedWithinOne, 0));
    schemes.push((WeightScheme::NegatedPlusMinusOne, 0));
    let (trees, dps) = all_trees_with_purity(&labels);
    let pb = super::progress_bar((schemes.len() * 2) as u64, "cases");
    let mut cases = Vec::new();
    for &(scheme, instance) in &schemes {
        let w = scheme.weights(&labels);
        for energy in [Energy::Dasgupta, Energy::Hcc] {
            let study = study(&w, &labels, energy, &trees, &dps)?;
            anyhow::ensure!(
                study.trellis_n_map_trees == study.n_map_trees as u128,
                "the trellis counts {} MAP trees, enumeration {} ({}, {})",
                study.trellis_n_map_trees,
                study.n_map_trees,
                scheme.name(),
                energy.name()
            );
            anyhow::ensure!(
                (study.trellis_energy - study.min_energy).abs()
                    <= 1e-9 * study.min_energy.abs().max(1.0),
                "the trellis MAP energy {} differs from the enumerated minimum {} ({}, {})",
                study.trellis_energy,
                study.min_energy,
                scheme.name(),
                energy.name()
            );
            cases.push(Case {
                scheme,
                instance,
                energy,
                study,
            });
            pb.inc(1);
        }
    }
    pb.finish_and_clear();

    let f = |g: &dyn Fn(&Study) -> f64| cases.iter().map(|c| Some(g(&c.study))).collect::<Vec<_>>();
    Table::new()
        .str(
            "scheme",
            &cases.iter().map(|c| c.scheme.name()).collect::<Vec<_>>(),
        )
        .u64(
            "instance",
            &cases
                .iter()
                .map(|c| Some(c.instance as u64))
                .collect::<Vec<_>>(),
        )
        .str(
            "energy",
            &cases.iter().map(|c| c.energy.name()).collect::<Vec<_>>(),
        )
        .f64("map_energy", &f(&|s| s.min_energy))
        .f64("trellis_map_energy", &f(&|s| s.trellis_energy))
        .u64(
            "n_map_trees",
            &cases
                .iter()
                .map(|c| Some(c.study.n_map_trees as u64))
                .collect::<Vec<_>>(),
        )
        .f64("map_dp_min", &f(&|s| s.map_dp.0))
        .f64("map_dp_max", &f(&|s| s.map_dp.1))
        .f64("map_dp_mean", &f(&|s| s.map_dp_mean))
        .u64(
            "n_map_trees_with_dp_one",
            &cases
                .iter()
                .map(|c| Some(c.study.n_map_with_dp_one as u64))
                .collect::<Vec<_>>(),
        )
        .f64("trellis_map_dp", &f(&|s| s.trellis_map_dp))
        .f64("all_trees_dp_min", &f(&|s| s.dp_range.0))
        .f64("all_trees_dp_max", &f(&|s| s.dp_range.1))
        .f64("all_trees_dp_mean", &f(&|s| s.mean_dp))
        .u64(
            "n_dp_one_trees",
            &cases
                .iter()
                .map(|c| Some(c.study.n_dp_one as u64))
                .collect::<Vec<_>>(),
        )
        .str(
            "map_set_is_dp_one_set",
            &cases
                .iter()
                .map(|c| c.study.map_set_is_dp_one_set.to_string())
                .collect::<Vec<_>>(),
        )
        .f64("energy_dp_correlation", &f(&|s| s.energy_dp_correlation))
        .write_parquet(&staging.path("cost_functions.parquet"))?;

    // The five claims.
    let find = |scheme: WeightScheme, energy: Energy| {
        cases
            .iter()
            .find(|c| c.scheme == scheme && c.energy == energy)
            .map(|c| &c.study)
            .expect("every deterministic scheme is run")
    };
    let want_one = n_class_respecting_trees(&sec.cluster_sizes);
    let per_tree = dp_one_iff_classes_are_subtrees(&trees, &dps, &labels);
    let mut claims: Vec<(String, bool, String)> = Vec::new();
    let s = find(WeightScheme::WithinOne, Energy::Dasgupta);
    claims.push((
        "1: DP = 1 exactly for the trees in which every class is a subtree".into(),
        per_tree && s.dp_range.1 >= 1.0 - TIE && s.n_dp_one as u128 == want_one,
        format!(
            "checked tree by tree over all {} trees: {}; max DP = {:.6}; {} trees have DP = 1, (2K-3)!! * prod (2k-3)!! = {want_one}",
            n_binary_trees(n),
            if per_tree { "DP = 1 iff every class is a node" } else { "some tree breaks the equivalence" },
            s.dp_range.1,
            s.n_dp_one
        ),
    ));
    claims.push((
        "2: 1/0 weights: MAP trees of Dasgupta's cost = trees with DP = 1".into(),
        s.map_set_is_dp_one_set,
        format!(
            "{} MAP trees (cost {}), DP of MAP trees {:.4}..{:.4}",
            s.n_map_trees, s.min_energy, s.map_dp.0, s.map_dp.1
        ),
    ));
    let s = find(WeightScheme::PlusMinusOne, Energy::Hcc);
    claims.push((
        "3: +1/-1 weights: MAP trees of HCC = trees with DP = 1".into(),
        s.map_set_is_dp_one_set,
        format!(
            "{} MAP trees (energy {}): {} of the {} DP = 1 trees and {} others; DP of MAP trees {:.4}..{:.4}",
            s.n_map_trees,
            s.min_energy,
            s.n_map_with_dp_one,
            s.n_dp_one,
            s.n_map_trees - s.n_map_with_dp_one,
            s.map_dp.0,
            s.map_dp.1
        ),
    ));
    let randoms: Vec<&Case> = cases
        .iter()
        .filter(|c| matches!(c.scheme, WeightScheme::Random(_)))
        .collect();
    // Claim 4, per energy: the mean DP over each matrix's MAP trees against the mean DP over all
    // trees, across the random matrices; and the correlation of energy and DP over all trees.
    let mut verdict4 = true;
    let mut evidence4 = Vec::new();
    for energy in [Energy::Dasgupta, Energy::Hcc] {
        let these: Vec<&Study> = randoms
            .iter()
            .filter(|c| c.energy == energy)
            .map(|c| &c.study)
            .collect();
        let k = these.len().max(1) as f64;
        let diffs: Vec<f64> = these.iter().map(|s| s.map_dp_mean - s.mean_dp).collect();
        let mean_diff = diffs.iter().sum::<f64>() / k;
        let sd = (diffs.iter().map(|d| (d - mean_diff).powi(2)).sum::<f64>() / k).sqrt();
        let corrs: Vec<f64> = these
            .iter()
            .map(|s| s.energy_dp_correlation)
            .filter(|c| c.is_finite())
            .collect();
        let corr = corrs.iter().sum::<f64>() / corrs.len().max(1) as f64;
        let negative = corrs.iter().filter(|&&c| c < 0.0).count();
        // The claim is about the MAP trees: their DP is within two standard errors of a random
        // tree's. The correlation over all trees is reported beside it (for HCC it is weakly
        // negative: the energy depends on tree shape, and so does DP).
        let holds = mean_diff.abs() <= 2.0 * sd / k.sqrt();
        verdict4 &= holds;
        evidence4.push(format!(
            "{}: MAP trees' DP minus the mean over all trees {mean_diff:+.4} (sd {sd:.4} over {} matrices) -> {}; corr(energy, DP) over all trees {corr:+.4}, negative in {negative} of {}",
            energy.name(),
            these.len(),
            if holds { "unrelated" } else { "related" },
            corrs.len()
        ));
    }
    claims.push((
        "4: random weights: MAP trees' DP unrelated to the planted clustering".into(),
        verdict4,
        evidence4.join("; "),
    ));
    let s1 = find(WeightScheme::NegatedWithinOne, Energy::Dasgupta);
    let s2 = find(WeightScheme::NegatedPlusMinusOne, Energy::Hcc);
    claims.push((
        "5: negated weights: every MAP tree has the worst DP".into(),
        s1.map_dp.1 <= s1.dp_range.0 + TIE && s2.map_dp.1 <= s2.dp_range.0 + TIE,
        format!(
            "Dasgupta -(1/0): MAP DP {:.4}..{:.4}, worst DP {:.4}; HCC -(+1/-1): MAP DP {:.4}..{:.4}, worst DP {:.4}",
            s1.map_dp.0, s1.map_dp.1, s1.dp_range.0, s2.map_dp.0, s2.map_dp.1, s2.dp_range.0
        ),
    ));
    Table::new()
        .str(
            "claim",
            &claims.iter().map(|c| c.0.clone()).collect::<Vec<_>>(),
        )
        .str(
            "holds",
            &claims.iter().map(|c| c.1.to_string()).collect::<Vec<_>>(),
        )
        .str(
            "evidence",
            &claims.iter().map(|c| c.2.clone()).collect::<Vec<_>>(),
        )
        .write_parquet(&staging.path("claims.parquet"))?;
    let mut text = String::new();
    for (claim, holds, evidence) in &claims {
        text.push_str(&format!(
            "{} {claim}\n    {evidence}\n",
            if *holds { "HOLDS " } else { "FAILS " }
        ));
    }
    staging.write_string("claims.txt", &text)?;

    // Chart: per scheme and energy, the DP of the MAP trees against the range over all trees.
    let mut rows = Vec::new();
    for c in cases
        .iter()
        .filter(|c| !matches!(c.scheme, WeightScheme::Random(_)))
    {
        rows.push(DotRangeRow {
            label: format!("{} weights, {}", c.scheme.name(), c.energy.name()),
            range: Some(c.study.dp_range),
            points: vec![
                (0, c.study.map_dp.0),
                (0, c.study.map_dp.1),
                (1, c.study.mean_dp),
            ],
        });
    }
    for energy in [Energy::Dasgupta, Energy::Hcc] {
        for c in randoms.iter().filter(|c| c.energy == energy).take(3) {
            rows.push(DotRangeRow {
                label: format!("random weights #{}, {}", c.instance + 1, energy.name()),
                range: Some(c.study.dp_range),
                points: vec![
                    (0, c.study.map_dp.0),
                    (0, c.study.map_dp.1),
                    (1, c.study.mean_dp),
                ],
            });
        }
    }
    let chart = DotRangeChart {
        title: format!(
            "Dendrogram purity of the MAP trees, clusters of sizes {:?} (all {} trees scored)",
            sec.cluster_sizes,
            n_binary_trees(n)
        ),
        rows,
        series_names: vec![
            "MAP trees (lowest and highest DP)".into(),
            "mean over all trees".into(),
        ],
        x_label: "dendrogram purity".into(),
        range_label: "all trees: worst to best DP".into(),
        x_range: Some((0.0, 1.0)),
    };
    save_chart(&staging.path("cost_functions"), 1400, 900, &chart)?;
    manifest.set("n_leaves", n);
    manifest.set(
        "claims_hold",
        claims.iter().map(|c| c.1).collect::<Vec<_>>(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_count_of_class_respecting_trees() {
        // Two classes of 2: the root splits them, each side has one tree: 1 tree.
        assert_eq!(n_class_respecting_trees(&[2, 2]), 1);
        // Classes 3 and 2: 3 trees over the first, 1 over the second, 1 way to join.
        assert_eq!(n_class_respecting_trees(&[3, 2]), 3);
        assert_eq!(n_class_respecting_trees(&[2, 2, 2]), 3);
    }

    #[test]
    fn claim_two_holds_and_claim_three_fails_on_a_small_instance() {
        let labels = planted_labels(&[2, 2, 2]);
        let (trees, dps) = all_trees_with_purity(&labels);
        let s = study(
            &WeightScheme::WithinOne.weights(&labels),
            &labels,
            Energy::Dasgupta,
            &trees,
            &dps,
        )
        .unwrap();
        assert!(s.map_set_is_dp_one_set, "{s:?}");
        assert_eq!(s.n_dp_one as u128, n_class_respecting_trees(&[2, 2, 2]));
        assert!(dp_one_iff_classes_are_subtrees(&trees, &dps, &labels));
        assert!((s.trellis_energy - s.min_energy).abs() < 1e-9);
        // HCC pays each positive (within-class) pair exactly once, wherever it is split, so
        // {a1 a2 c1}{b1 b2 c2}-style trees, which split class c, tie with the best
        // class-respecting trees: the MAP set and the DP = 1 set differ.
        let s = study(
            &WeightScheme::PlusMinusOne.weights(&labels),
            &labels,
            Energy::Hcc,
            &trees,
            &dps,
        )
        .unwrap();
        assert!(!s.map_set_is_dp_one_set, "{s:?}");
        assert!(s.n_map_trees > s.n_map_with_dp_one && s.map_dp.1 == 1.0 && s.map_dp.0 < 1.0);
        assert_eq!(s.trellis_n_map_trees, s.n_map_trees as u128);
        // Brute force: the energy is 3 (within pairs) + 4 (two across pairs at depth 1 each side).
        assert_eq!(s.min_energy, 7.0);
    }

    #[test]
    fn positive_weights_make_every_hcc_tree_tie() {
        // With no negative weight, every pair is paid once, at its lowest common ancestor.
        let labels = planted_labels(&[2, 3]);
        let (trees, dps) = all_trees_with_purity(&labels);
        let s = study(
            &WeightScheme::WithinOne.weights(&labels),
            &labels,
            Energy::Hcc,
            &trees,
            &dps,
        )
        .unwrap();
        assert_eq!(s.n_map_trees as u128, n_binary_trees(5));
    }
}
