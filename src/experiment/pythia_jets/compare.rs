//! A method's tree against the truth tree, as clusters and as primary Lund declusterings.
//!
//! - **Clusters**: a tree's non-trivial clusters are its internal nodes other than the root (a
//!   full binary tree over N leaves has N − 2). The *truth recovered* is the fraction of the
//!   truth's non-trivial clusters that the method's tree also has.
//! - **Robinson–Foulds distance**: the non-trivial clusters in one tree and not in the other,
//!   counted both ways; its largest value is 2(N − 2) (no cluster shared). For two full binary
//!   trees over the same leaves both have N − 2 clusters, so RF / 2(N − 2) = 1 − recovered.
//! - **Primary Lund declusterings**: from the root, follow the harder branch (the child whose
//!   leaves carry the larger summed energy; on a tie, the child holding the lowest leaf index)
//!   and list the softer branch emitted at each step, as its leaf set, until the harder branch is
//!   one leaf. *Lund fraction*: the share of the truth's primary emissions (leaf sets) that the
//!   method's primary sequence also emits, anywhere in it; *Lund agrees*: the two sequences are
//!   equal, step for step.
//! - **By cluster size**: the same count within the truth's clusters of 2 leaves, of 3 or 4, and
//!   of 5 or more ([`SIZE_CLASSES`]); pooled over jets these give the share of each size class
//!   recovered.
//! - **Energy-weighted**: each truth cluster weighted by its energy (the sum of its leaves'),
//!   the recovered weight over the whole: hard clusters count more than soft ones.
//! - **A uniformly random tree** recovers, in expectation, the mean over the truth's non-trivial
//!   clusters C of T(|C|)·T(N − |C| + 1)/T(N), with T(m) = (2m − 3)!! the number of trees over m
//!   leaves: the trees holding C are a tree over C times a tree over the rest with C as one leaf.

use crate::subset::Subset;
use crate::tree::{Node, Tree};
use std::collections::BTreeSet;

/// The size classes of truth clusters: (name, smallest, largest number of leaves).
pub const SIZE_CLASSES: [(&str, usize, usize); 3] =
    [("2", 2, 2), ("3_4", 3, 4), ("5_up", 5, usize::MAX)];

/// The index in [`SIZE_CLASSES`] of a cluster of `k` leaves (k ≥ 2).
pub fn size_class(k: usize) -> usize {
    SIZE_CLASSES
        .iter()
        .position(|&(_, lo, hi)| (lo..=hi).contains(&k))
        .unwrap_or(0)
}

/// How a tree compares with the truth tree over the same leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Non-trivial clusters of the truth tree.
    pub truth_clusters: usize,
    /// Those also in the method's tree.
    pub shared_clusters: usize,
    /// `shared / truth_clusters`; `None` when the truth has no non-trivial cluster (N ≤ 2).
    pub recovered: Option<f64>,
    /// Robinson–Foulds distance.
    pub rf: usize,
    /// Its largest possible value, 2(N − 2) (0 for N ≤ 2).
    pub rf_max: usize,
    /// Primary emissions of the truth tree.
    pub lund_truth: usize,
    /// Those the method's primary sequence also has.
    pub lund_shared: usize,
    /// Whether the two primary sequences are equal.
    pub lund_agrees: bool,
    /// Per [`SIZE_CLASSES`]: (truth clusters of that size, those the method's tree has).
    pub by_size: [(usize, usize); 3],
    /// The summed energy of the truth's non-trivial clusters.
    pub truth_energy: f64,
    /// The summed energy of those the method's tree has.
    pub shared_energy: f64,
}

impl Comparison {
    /// `rf / rf_max`, `None` when `rf_max = 0`.
    pub fn rf_normalised(&self) -> Option<f64> {
        (self.rf_max > 0).then(|| self.rf as f64 / self.rf_max as f64)
    }

    /// `lund_shared / lund_truth`, `None` for a one-leaf truth.
    pub fn lund_fraction(&self) -> Option<f64> {
        (self.lund_truth > 0).then(|| self.lund_shared as f64 / self.lund_truth as f64)
    }
}

/// The non-trivial clusters of `t` (internal nodes but the root).
pub fn inner_clusters(t: &Tree) -> BTreeSet<Subset> {
    let all = t.leaves();
    t.node_clusters()
        .into_iter()
        .filter(|c| c.len() > 1 && *c != all)
        .collect()
}

/// The Robinson–Foulds distance of two trees: non-trivial clusters of one not in the other,
/// both ways.
pub fn robinson_foulds(a: &Tree, b: &Tree) -> usize {
    let (ca, cb) = (inner_clusters(a), inner_clusters(b));
    ca.symmetric_difference(&cb).count()
}

/// The softer branch emitted at each step of the primary declustering of `t` (see the module
/// documentation); `energy[i]` is leaf `i`'s energy.
pub fn primary_emissions(t: &Tree, energy: &[f64]) -> Vec<Subset> {
    let clusters = t.node_clusters();
    let e = |c: Subset| -> f64 { c.iter().map(|i| energy.get(i).copied().unwrap_or(0.0)).sum() };
    let mut out = Vec::new();
    let mut v = t.root();
    while let Node::Internal(l, r) = t.nodes()[v] {
        let (cl, cr) = (clusters[l], clusters[r]);
        let (el, er) = (e(cl), e(cr));
        let left_harder = el > er || (el == er && cl.lowest() < cr.lowest());
        let (hard, soft) = if left_harder { (l, cr) } else { (r, cl) };
        out.push(soft);
        v = hard;
    }
    out
}

/// `ln T(m)`, T(m) = (2m − 3)!! the number of rooted binary trees over `m` labelled leaves.
fn ln_trees(m: usize) -> f64 {
    (2..=m).map(|i| ((2 * i - 3) as f64).ln()).sum()
}

/// The expected share of `truth`'s non-trivial clusters that a uniformly random tree over the
/// same leaves has (see the module documentation); `None` for N ≤ 2.
pub fn random_tree_recovery(truth: &Tree) -> Option<f64> {
    let n = truth.n_leaves();
    let c = inner_clusters(truth);
    let p: f64 = c
        .iter()
        .map(|s| (ln_trees(s.len()) + ln_trees(n - s.len() + 1) - ln_trees(n)).exp())
        .sum();
    (!c.is_empty()).then(|| p / c.len() as f64)
}

/// `method` against `truth` (trees over the same leaves; `energy[i]` is leaf `i`'s energy).
pub fn compare(method: &Tree, truth: &Tree, energy: &[f64]) -> Comparison {
    let (cm, ct) = (inner_clusters(method), inner_clusters(truth));
    let shared = ct.intersection(&cm).count();
    let n = truth.n_leaves();
    let (pm, pt) = (
        primary_emissions(method, energy),
        primary_emissions(truth, energy),
    );
    let in_method: BTreeSet<Subset> = pm.iter().copied().collect();
    let e = |c: &Subset| -> f64 { c.iter().map(|i| energy.get(i).copied().unwrap_or(0.0)).sum() };
    let mut by_size = [(0, 0); 3];
    let (mut truth_energy, mut shared_energy) = (0.0, 0.0);
    for c in &ct {
        let k = size_class(c.len());
        let found = cm.contains(c);
        by_size[k].0 += 1;
        by_size[k].1 += usize::from(found);
        truth_energy += e(c);
        if found {
            shared_energy += e(c);
        }
    }
    Comparison {
        truth_clusters: ct.len(),
        shared_clusters: shared,
        recovered: (!ct.is_empty()).then(|| shared as f64 / ct.len() as f64),
        rf: ct.symmetric_difference(&cm).count(),
        rf_max: 2 * n.saturating_sub(2),
        lund_truth: pt.len(),
        lund_shared: pt.iter().filter(|s| in_method.contains(s)).count(),
        lund_agrees: pm == pt,
        by_size,
        truth_energy,
        shared_energy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(newick: &str) -> Tree {
        Tree::from_newick(newick).unwrap()
    }

    fn set(leaves: &[usize]) -> Subset {
        Subset::from_indices(leaves.iter().copied())
    }

    #[test]
    fn clusters_and_rf_on_a_hand_example() {
        // Truth ((0,1),(2,(3,4))); method (((0,1),2),(3,4)): {0,1} and {3,4} shared, {2,3,4}
        // against {0,1,2}.
        let truth = tree("((0,1),(2,(3,4)));");
        let method = tree("(((0,1),2),(3,4));");
        let c = compare(&method, &truth, &[5.0, 4.0, 3.0, 2.0, 1.0]);
        assert_eq!((c.truth_clusters, c.shared_clusters), (3, 2));
        assert_eq!(c.recovered, Some(2.0 / 3.0));
        assert_eq!((c.rf, c.rf_max), (2, 6));
        assert_eq!(robinson_foulds(&method, &truth), robinson_foulds(&truth, &method));
        // By size: {0,1} and {3,4} (2 leaves) both found, {2,3,4} (3 leaves) not; by energy
        // 9 + 3 of 9 + 3 + 6.
        assert_eq!(c.by_size, [(2, 2), (1, 0), (0, 0)]);
        assert_eq!((c.truth_energy, c.shared_energy), (18.0, 12.0));
        // The same tree: everything recovered, distance 0, the same primary sequence.
        let same = compare(&truth, &truth, &[5.0, 4.0, 3.0, 2.0, 1.0]);
        assert_eq!((same.recovered, same.rf, same.lund_agrees), (Some(1.0), 0, true));
        // Two leaves: no non-trivial cluster to recover.
        let two = compare(&tree("(0,1);"), &tree("(0,1);"), &[1.0, 1.0]);
        assert_eq!((two.recovered, two.rf_normalised(), two.lund_truth), (None, None, 1));
    }

    #[test]
    fn primary_emissions_follow_the_harder_branch() {
        // Leaf 0 is the hard one: the truth emits {4}, then {2, 3}, then {1}.
        let e = [50.0, 10.0, 8.0, 7.0, 1.0];
        let truth = tree("(((0,1),(2,3)),4);");
        assert_eq!(
            primary_emissions(&truth, &e),
            vec![set(&[4]), set(&[2, 3]), set(&[1])]
        );
        // A method with the same emissions in another order shares them all but disagrees.
        let method = tree("(((0,1),4),(2,3));");
        assert_eq!(
            primary_emissions(&method, &e),
            vec![set(&[2, 3]), set(&[4]), set(&[1])]
        );
        let c = compare(&method, &truth, &e);
        assert_eq!((c.lund_truth, c.lund_shared, c.lund_agrees), (3, 3, false));
        assert_eq!(c.lund_fraction(), Some(1.0));
        // Equal energies: the branch holding the lowest leaf is the harder one.
        let tie = tree("((2,3),(0,1));");
        assert_eq!(
            primary_emissions(&tie, &[1.0; 4]),
            vec![set(&[2, 3]), set(&[1])]
        );
    }

    /// The expected recovery of a uniformly random tree equals the mean over every tree.
    #[test]
    fn random_tree_recovery_is_the_mean_over_all_trees() {
        for n in [3, 5, 6] {
            let all = Tree::enumerate_all(Subset::full(n)).unwrap();
            let e: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
            for truth in all.iter().step_by(7) {
                let mean = all
                    .iter()
                    .map(|t| compare(t, truth, &e).recovered.unwrap())
                    .sum::<f64>()
                    / all.len() as f64;
                let got = random_tree_recovery(truth).unwrap();
                assert!((got - mean).abs() < 1e-12, "n = {n}: {got} vs {mean}");
            }
        }
        assert_eq!(random_tree_recovery(&tree("(0,1);")), None);
    }

    /// Every pair of trees over 5 leaves: RF is symmetric, within [0, 2(N − 2)], zero exactly
    /// for equal trees, a metric (triangle inequality), and 2(N − 2)(1 − recovered); the size
    /// classes split the clusters, and the recovered energy is all of it exactly when every
    /// cluster is recovered.
    #[test]
    fn rf_is_a_bounded_metric_on_every_pair_of_small_trees() {
        let all = Tree::enumerate_all(Subset::full(5)).unwrap();
        assert_eq!(all.len(), 105);
        let e = [9.0, 7.0, 5.0, 3.0, 1.0];
        for a in all.iter().step_by(3) {
            for b in &all {
                let c = compare(a, b, &e);
                assert_eq!(c.rf, robinson_foulds(b, a));
                assert!(c.rf <= c.rf_max);
                assert_eq!(c.rf == 0, a.clusters() == b.clusters());
                let r = c.recovered.unwrap();
                assert!((c.rf_normalised().unwrap() - (1.0 - r)).abs() < 1e-12);
                assert!(c.lund_shared <= c.lund_truth);
                // The size classes split the truth's clusters, and the energies are sums.
                let (t, sh): (usize, usize) =
                    c.by_size.iter().fold((0, 0), |a, x| (a.0 + x.0, a.1 + x.1));
                assert_eq!((t, sh), (c.truth_clusters, c.shared_clusters));
                assert!(c.shared_energy <= c.truth_energy);
                assert_eq!(c.shared_energy == c.truth_energy, r == 1.0);
                for m in all.iter().step_by(17) {
                    assert!(c.rf <= robinson_foulds(a, m) + robinson_foulds(m, b));
                }
            }
        }
    }
}
