//! The shared clustering metrics on a [`Hierarchy`]: dendrogram purity, subtree score, the ARI
//! curve and its area, and Dasgupta's cost. Each agrees with the versions of
//! `pydt::metrics` (multifurcating), `coalescent::metrics` (ranked binary) and, on binary trees
//! over at most 64 leaves, `metrics::dendrogram_purity` and `model::DasguptaModel::tree_cost`.
//!
//! Labels are one arbitrary `usize` class per leaf (only equality and order matter; classes
//! are made dense internally, so large label values cost nothing). Class counts are kept
//! sparse per node, so every metric is O(n · C) or O(n²) at worst for n leaves and C classes.

use super::{Hierarchy, HierarchyError};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Sparse class counts `(class, count)`, sorted by class.
type Counts = Vec<(usize, usize)>;

fn c2(k: i64) -> i64 {
    k * (k - 1) / 2
}

/// ARI from Σ C(n_ij, 2), Σ C(a_i, 2), Σ C(b_j, 2) and C(n, 2) (shared with the coalescent).
use crate::coalescent::metrics::ari_from_sums;

/// The majority class of sparse counts (ties → the smallest class).
fn majority(counts: &[(usize, usize)]) -> usize {
    let mut best = (0, 0);
    for &(cl, k) in counts {
        if k > best.1 {
            best = (cl, k);
        }
    }
    best.0
}

/// The contingency table of true classes against majority-vote predictions, with the pair
/// sums the ARI needs kept up to date (all integers, so exact).
#[derive(Default)]
struct Contingency {
    table: HashMap<(usize, usize), i64>,
    col: HashMap<usize, i64>,
    index: i64,
    sb: i64,
}

impl Contingency {
    /// Adds (`sign = 1`) or removes (`sign = -1`) a cluster with class counts `counts`,
    /// predicted as its majority class.
    fn add(&mut self, counts: &[(usize, usize)], sign: i64) {
        let m = majority(counts);
        let mut total = 0;
        for &(cl, k) in counts {
            let e = self.table.entry((cl, m)).or_insert(0);
            self.index -= c2(*e);
            *e += sign * k as i64;
            self.index += c2(*e);
            total += k as i64;
        }
        let e = self.col.entry(m).or_insert(0);
        self.sb -= c2(*e);
        *e += sign * total;
        self.sb += c2(*e);
    }
}

/// Heap key for opening internal nodes: highest first, ties → highest id.
#[derive(PartialEq)]
struct Open(f64, usize);

impl Eq for Open {}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Open) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Open {
    fn cmp(&self, other: &Open) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

impl Hierarchy {
    /// Dense class ids `0..C` (in increasing label value) per leaf, and `C`.
    fn dense_labels(&self, labels: &[usize]) -> Result<(Vec<usize>, usize), HierarchyError> {
        if labels.len() != self.n {
            return Err(HierarchyError::Labels {
                n: self.n,
                got: labels.len(),
            });
        }
        let mut uniq = labels.to_vec();
        uniq.sort_unstable();
        uniq.dedup();
        let dense = labels
            .iter()
            .map(|l| uniq.binary_search(l).unwrap_or(0))
            .collect();
        Ok((dense, uniq.len()))
    }

    /// Class counts below every node; `visit(v, class, total, sum_sq)` is called for every
    /// internal node and class present below it, with `sum_sq` the sum over `v`'s children of
    /// their squared counts of that class.
    fn class_counts(
        &self,
        y: &[usize],
        mut visit: impl FnMut(usize, usize, usize, usize),
    ) -> Vec<Counts> {
        let mut counts: Vec<Counts> = vec![Vec::new(); self.n_nodes()];
        let mut all = Vec::new();
        for &v in &self.postorder {
            if v < self.n {
                counts[v] = vec![(y[v], 1)];
                continue;
            }
            all.clear();
            for &c in self.children(v) {
                all.extend_from_slice(&counts[c]);
            }
            all.sort_unstable_by_key(|&(cl, _)| cl);
            let mut merged: Counts = Vec::new();
            let mut i = 0;
            while i < all.len() {
                let cl = all[i].0;
                let (mut total, mut sq) = (0, 0);
                while i < all.len() && all[i].0 == cl {
                    total += all[i].1;
                    sq += all[i].1 * all[i].1;
                    i += 1;
                }
                visit(v, cl, total, sq);
                merged.push((cl, total));
            }
            counts[v] = merged;
        }
        counts
    }

    /// Dendrogram purity (Heller & Ghahramani 2005; Kobren et al. 2017): the mean, over pairs
    /// of leaves of the same class, of the fraction of the leaves under the pair's lowest
    /// common ancestor that are in that class. 1 when every class is a subtree.
    ///
    /// Errors for labels of the wrong length and when no two leaves share a class.
    pub fn dendrogram_purity(&self, labels: &[usize]) -> Result<f64, HierarchyError> {
        let (y, _) = self.dense_labels(labels)?;
        let size = self.cluster_sizes();
        let (mut total, mut pairs) = (0.0, 0u64);
        self.class_counts(&y, |v, _, k, sq| {
            // Pairs of this class whose lca is v: one leaf in each of two different children.
            let p = ((k * k - sq) / 2) as u64;
            if p > 0 {
                pairs += p;
                total += p as f64 * k as f64 / size[v] as f64;
            }
        });
        if pairs == 0 {
            return Err(HierarchyError::Undefined(
                "dendrogram purity needs two leaves of one class",
            ));
        }
        Ok(total / pairs as f64)
    }

    /// Subtree score (Teh, Daumé III & Roy 2008, as computed for Henao & Lucas's Figure 2): the
    /// number of internal nodes whose leaves all share one class, over `n − C` (the most a
    /// hierarchy can have: a binary subtree per class has `size − 1` internal nodes), with `C`
    /// the number of distinct labels. On multifurcating trees the count is of pure internal
    /// nodes as in `pydt::metrics::subtree_score`, so it can stay below 1 even when every class
    /// is a subtree.
    ///
    /// Errors for labels of the wrong length and when `n <= C`.
    pub fn subtree_score(&self, labels: &[usize]) -> Result<f64, HierarchyError> {
        let (y, c) = self.dense_labels(labels)?;
        if self.n <= c {
            return Err(HierarchyError::Undefined(
                "the subtree score needs more leaves than classes",
            ));
        }
        let counts = self.class_counts(&y, |_, _, _, _| {});
        let pure = (self.n..self.n_nodes())
            .filter(|&v| counts[v].len() == 1)
            .count();
        Ok(pure as f64 / (self.n - c) as f64)
    }

    /// The ARI curve at the achievable cluster counts: internal nodes are opened from the root
    /// down, highest first (ties → highest id; a node is never opened before its parent); after
    /// each opening the clusters are the frontier, each labelled by its majority class (ties →
    /// smallest label), and scored by the adjusted Rand index (Hubert & Arabie 1985) against
    /// `labels`. Returns `(N_c, ARI)` from `N_c = 1` to `n`, one point per opening (a node with
    /// `k` children adds `k − 1` clusters). On binary trees `N_c` runs over `1..=n` and the
    /// values are `coalescent::metrics::ari_curve`'s; on any tree they are
    /// `pydt::metrics::ari_points`' (for [`Hierarchy::from_pydt`], whose numbering makes the
    /// tie-breaks agree). O(n · C).
    pub fn ari_points(&self, labels: &[usize]) -> Result<Vec<(usize, f64)>, HierarchyError> {
        let (y, c) = self.dense_labels(labels)?;
        let counts = self.class_counts(&y, |_, _, _, _| {});
        let mut class_size = vec![0i64; c];
        y.iter().for_each(|&l| class_size[l] += 1);
        let sa = class_size.iter().map(|&k| c2(k)).sum::<i64>() as f64;
        let n2 = c2(self.n as i64) as f64;
        let mut ct = Contingency::default();
        ct.add(&counts[self.root], 1);
        let ari = |ct: &Contingency| ari_from_sums(ct.index as f64, sa, ct.sb as f64, n2);
        let mut points = vec![(1, ari(&ct))];
        let mut heap = BinaryHeap::new();
        if self.root >= self.n {
            heap.push(Open(self.height[self.root], self.root));
        }
        let mut clusters = 1;
        while let Some(Open(_, v)) = heap.pop() {
            ct.add(&counts[v], -1);
            for &ch in self.children(v) {
                ct.add(&counts[ch], 1);
                if ch >= self.n {
                    heap.push(Open(self.height[ch], ch));
                }
            }
            clusters += self.children(v).len() - 1;
            points.push((clusters, ari(&ct)));
        }
        Ok(points)
    }

    /// Trapezoidal area under [`Hierarchy::ari_points`] over `N_c ∈ [1, n]`, divided by
    /// `n − 1` (as `pydt::metrics::ari_auc` and `coalescent::metrics::ari_auc`).
    ///
    /// Errors for labels of the wrong length and for a single leaf.
    pub fn ari_auc(&self, labels: &[usize]) -> Result<f64, HierarchyError> {
        let points = self.ari_points(labels)?;
        if self.n < 2 {
            return Err(HierarchyError::Undefined(
                "the ARI area needs at least two leaves",
            ));
        }
        let area: f64 = points
            .windows(2)
            .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0) as f64)
            .sum();
        Ok(area / (self.n - 1) as f64)
    }

    /// Dasgupta's cost `Σ_{i<j} w_ij · |leaves(lca(i, j))|` for symmetric similarities
    /// `weights` (n × n, row-major; the diagonal is ignored). It is `pydt::metrics::dasgupta_cost`
    /// and, on binary trees, `model::DasguptaModel::tree_cost` (which sums
    /// `(|A| + |B|) · w(A, B)` over sibling pairs: the same sum grouped by lca). O(n²).
    ///
    /// Errors for a matrix of the wrong size, a NaN or infinite entry off the diagonal, or
    /// `w_ij` and `w_ji` differing by more than 1e-12 relative (as `model::WeightMatrix`); the
    /// upper triangle's value is used.
    pub fn dasgupta_cost(&self, weights: &[f64]) -> Result<f64, HierarchyError> {
        let n = self.n;
        if weights.len() != n * n {
            return Err(HierarchyError::Weights {
                n,
                expected: n * n,
                got: weights.len(),
            });
        }
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (weights[i * n + j], weights[j * n + i]);
                for (r, c, value) in [(i, j, a), (j, i, b)] {
                    if !value.is_finite() {
                        return Err(HierarchyError::NonFiniteWeight { i: r, j: c, value });
                    }
                }
                if (a - b).abs() > 1e-12 * a.abs().max(b.abs()).max(1.0) {
                    return Err(HierarchyError::Asymmetric { i, j, a, b });
                }
            }
        }
        let w = |i: usize, j: usize| weights[i.min(j) * n + i.max(j)];
        let mut below: Vec<Vec<usize>> = vec![Vec::new(); self.n_nodes()];
        let mut cost = 0.0;
        for &v in &self.postorder {
            if v < n {
                below[v] = vec![v];
                continue;
            }
            let mut seen: Vec<usize> = Vec::new();
            let mut cross = 0.0;
            for &c in self.children(v) {
                let mine = std::mem::take(&mut below[c]);
                cross += mine
                    .iter()
                    .map(|&i| seen.iter().map(|&j| w(i, j)).sum::<f64>())
                    .sum::<f64>();
                seen.extend(mine);
            }
            cost += seen.len() as f64 * cross;
            below[v] = seen;
        }
        Ok(cost)
    }
}
