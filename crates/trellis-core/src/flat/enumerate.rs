//! Brute force over flat clusterings, for tests: every set partition of a set of points (Bell(N)
//! of them, generated as restricted growth strings), the cuts of a tree, and the exact quantities
//! of [`super::FlatTrellis`] computed by enumerating clusterings one by one.
//!
//! Everything here is exponential in the number of clusterings (Bell(9) = 21147, Bell(12) =
//! 4213597); use it to check the trellises on small instances.

use super::{is_clustering_of, ClusterEnergy, FlatError};
use crate::numeric::log_sum_exp;
use crate::subset::Subset;
use crate::tree::{Node, Tree};

/// Largest number of points [`partitions_of`], [`set_partitions`] and [`brute_force`]
/// enumerate the clusterings of (Bell(12) = 4,213,597).
pub const MAX_ENUMERATED_POINTS: usize = 12;

/// Largest number of points of [`brute_force_over`] (its cluster marginals are a table over
/// all `2^N` subsets) and of the trees [`tree_cuts`] takes.
pub const MAX_BRUTE_FORCE_POINTS: usize = 16;

/// The Bell number `B(n)`, the number of clusterings of `n` points (Bell triangle); `None` when
/// it does not fit in a u128.
pub fn bell(n: usize) -> Option<u128> {
    let mut row = vec![1u128];
    for _ in 0..n {
        let mut last = *row.last()?;
        let mut next = Vec::with_capacity(row.len() + 1);
        next.push(last);
        for &x in &row {
            last = last.checked_add(x)?;
            next.push(last);
        }
        row = next;
    }
    row.first().copied()
}

/// `Ok` when `n` points are at most `limit`.
fn check_points(n: usize, limit: usize, expected: &'static str) -> Result<(), FlatError> {
    if n > limit {
        return Err(FlatError::BadParameter {
            name: "number of points",
            value: n as f64,
            expected,
        });
    }
    Ok(())
}

const ENUMERATE_LIMIT: &str =
    "enumerating every clustering is for at most 12 points (Bell(12) = 4.2 million); use a FlatTrellis";

/// Calls `f` on every clustering of the points of `s` (each a list of clusters in increasing
/// order of their lowest point), in restricted-growth-string order: point `k` (in increasing
/// order) goes to one of the clusters opened by earlier points or opens a new one. The empty
/// set has one clustering, the empty one.
pub fn for_each_partition(s: Subset, mut f: impl FnMut(&[Subset])) {
    fn rec(points: &[usize], blocks: &mut Vec<Subset>, f: &mut dyn FnMut(&[Subset])) {
        let Some((&p, rest)) = points.split_first() else {
            f(blocks);
            return;
        };
        let bit = Subset::singleton(p);
        for b in 0..blocks.len() {
            blocks[b] = blocks[b].union(bit);
            rec(rest, blocks, f);
            blocks[b] = blocks[b].minus(bit);
        }
        blocks.push(bit);
        rec(rest, blocks, f);
        blocks.pop();
    }
    let points: Vec<usize> = s.iter().collect();
    rec(&points, &mut Vec::new(), &mut f);
}

/// Every clustering of the points of `s` ([`for_each_partition`] order); `B(|s|)` of them.
/// Errors for more than [`MAX_ENUMERATED_POINTS`] points.
pub fn partitions_of(s: Subset) -> Result<Vec<Vec<Subset>>, FlatError> {
    check_points(s.len(), MAX_ENUMERATED_POINTS, ENUMERATE_LIMIT)?;
    let mut out = Vec::new();
    for_each_partition(s, |p| out.push(p.to_vec()));
    Ok(out)
}

/// Every clustering of the points `0..n`; `B(n)` of them. Errors for more than
/// [`MAX_ENUMERATED_POINTS`] points.
pub fn set_partitions(n: usize) -> Result<Vec<Vec<Subset>>, FlatError> {
    check_points(n, MAX_ENUMERATED_POINTS, ENUMERATE_LIMIT)?;
    partitions_of(Subset::full(n))
}

/// Every cut of `tree`: the sets of nodes such that each leaf lies under exactly one of them,
/// i.e. the clusterings of the leaves whose clusters are all nodes of the tree (clusters sorted
/// by their lowest point). A tree over `n` leaves has between `n` (a caterpillar) and about
/// `1.5^n` cuts. Errors for trees of more than [`MAX_BRUTE_FORCE_POINTS`] leaves.
pub fn tree_cuts(tree: &Tree) -> Result<Vec<Vec<Subset>>, FlatError> {
    check_points(
        tree.n_leaves(),
        MAX_BRUTE_FORCE_POINTS,
        "the cuts of a tree are enumerated for at most 16 leaves; use a TreeFlatTrellis",
    )?;
    let clusters = tree.node_clusters();
    fn cuts(t: &Tree, v: usize, clusters: &[Subset]) -> Vec<Vec<Subset>> {
        let mut out = vec![vec![clusters[v]]];
        if let Node::Internal(l, r) = t.nodes()[v] {
            let (cl, cr) = (cuts(t, l, clusters), cuts(t, r, clusters));
            for a in &cl {
                for b in &cr {
                    let mut c: Vec<Subset> = a.iter().chain(b).copied().collect();
                    c.sort_by_key(|x| x.lowest());
                    out.push(c);
                }
            }
        }
        out
    }
    Ok(cuts(tree, tree.root(), &clusters))
}

/// The exact distribution over a family of clusterings, by enumeration.
#[derive(Clone, Debug)]
pub struct BruteForce {
    /// Number of clusterings enumerated.
    pub n_clusterings: usize,
    /// How many of them have finite log-energy.
    pub n_allowed: usize,
    /// `log Z` (`-inf` if none is allowed).
    pub log_z: f64,
    /// The largest log-energy (`-inf` if none is allowed).
    pub map_log_energy: f64,
    /// The first clustering (in enumeration order) with the largest log-energy; empty if none
    /// is allowed.
    pub map_clustering: Vec<Subset>,
    /// `P(C)` of every subset, indexed by bitmask (NaN everywhere if none is allowed).
    pub cluster_marginals: Vec<f64>,
    /// `P(i ~ j)`, `N x N` with 1 on the diagonal (NaN everywhere if none is allowed).
    pub pairwise: Vec<Vec<f64>>,
}

/// The distribution over all clusterings of the model's points, by enumerating them. Errors
/// for more than [`MAX_ENUMERATED_POINTS`] points (Bell(13) is 27.6 million).
pub fn brute_force<E: ClusterEnergy + ?Sized>(model: &E) -> Result<BruteForce, FlatError> {
    brute_force_over(model, &set_partitions(model.n_points())?)
}

/// The distribution restricted to `clusterings` (each a clustering of all the model's points,
/// e.g. the cuts of a tree), by enumeration. Errors for more than [`MAX_BRUTE_FORCE_POINTS`]
/// points (the cluster marginals are a table over all subsets) and for a clustering that is
/// not a partition of the points `0..N`.
pub fn brute_force_over<E: ClusterEnergy + ?Sized>(
    model: &E,
    clusterings: &[Vec<Subset>],
) -> Result<BruteForce, FlatError> {
    let n = model.n_points();
    check_points(
        n,
        MAX_BRUTE_FORCE_POINTS,
        "brute force keeps a table over all 2^N subsets: at most 16 points",
    )?;
    let full = Subset::full(n);
    if let Some(c) = clusterings.iter().find(|c| !is_clustering_of(full, c)) {
        let shown: Vec<String> = c.iter().map(|x| x.to_string()).collect();
        return Err(FlatError::BadCluster {
            cluster: format!("clustering [{}]", shown.join(" ")),
            n,
        });
    }
    let energies: Vec<f64> = clusterings
        .iter()
        .map(|c| c.iter().map(|&x| model.log_energy(x)).sum())
        .collect();
    let log_z = log_sum_exp(&energies);
    let mut map_log_energy = f64::NEG_INFINITY;
    let mut map_clustering = Vec::new();
    for (c, &e) in clusterings.iter().zip(&energies) {
        if e > map_log_energy {
            map_log_energy = e;
            map_clustering = c.clone();
        }
    }
    let mut cluster_marginals = vec![0.0; 1usize << n];
    let mut pairwise = vec![vec![0.0; n]; n];
    if log_z == f64::NEG_INFINITY {
        cluster_marginals.fill(f64::NAN);
        pairwise.iter_mut().for_each(|r| r.fill(f64::NAN));
    } else {
        for (c, &e) in clusterings.iter().zip(&energies) {
            let w = (e - log_z).exp();
            for &x in c {
                cluster_marginals[x.index()] += w;
                for i in x.iter() {
                    for j in x.iter() {
                        if i != j {
                            pairwise[i][j] += w;
                        }
                    }
                }
            }
        }
        (0..n).for_each(|i| pairwise[i][i] = 1.0);
    }
    Ok(BruteForce {
        n_clusterings: clusterings.len(),
        n_allowed: energies.iter().filter(|e| e.is_finite()).count(),
        log_z,
        map_log_energy,
        map_clustering,
        cluster_marginals,
        pairwise,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn bell_numbers_and_partitions_agree() {
        let want = [1u128, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975];
        for (n, &b) in want.iter().enumerate() {
            assert_eq!(bell(n), Some(b));
            let ps = set_partitions(n).unwrap();
            assert_eq!(ps.len() as u128, b, "n = {n}");
            let distinct: HashSet<Vec<Subset>> = ps.iter().cloned().collect();
            assert_eq!(distinct.len(), ps.len());
            assert!(ps.iter().all(|p| is_clustering_of(Subset::full(n), p)));
            assert!(ps
                .iter()
                .all(|p| p.windows(2).all(|w| w[0].lowest() < w[1].lowest())));
        }
        assert_eq!(
            partitions_of(Subset::from_indices([2, 5, 9]))
                .unwrap()
                .len(),
            5
        );
        assert!(bell(40).is_some());
        assert!(set_partitions(13).is_err());
    }

    #[test]
    fn tree_cuts_are_clusterings_into_tree_nodes() {
        let t = Tree::from_newick("(((0,1),2),(3,4));").unwrap();
        let cuts = tree_cuts(&t).unwrap();
        // c(leaf) = 1, c(v) = 1 + c(l) c(r): (0,1) 2, ((0,1),2) 3, (3,4) 2, root 1 + 6 = 7.
        assert_eq!(cuts.len(), 7);
        let nodes: HashSet<Subset> = t.clusters().into_iter().collect();
        for c in &cuts {
            assert!(is_clustering_of(Subset::full(5), c));
            assert!(c.iter().all(|x| nodes.contains(x)));
        }
    }
}
